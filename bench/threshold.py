"""Choose the default max_sentence_perplexity on CleanEval dev (never test).

Every dev page is cleaned once with no limit, so each sentence's perplexity is known; then
for each candidate threshold the kept text is rebuilt and scored against the gold with the
CleanEval-style word alignment (stream_cleaner.evaluate). Sentences are also labelled content
or boilerplate by whether their words appear, in order, in the gold (most of their word
bigrams do), to show how much of each a threshold keeps.

    .venv/bin/python bench/threshold.py [--model PATH] [--plot threshold.png]
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data import load_cleaneval

from stream_cleaner import CleanerSettings, RawDocument, clean_document
from stream_cleaner.evaluate import align_words, gold_words

THRESHOLDS = (100, 200, 300, 500, 750, 1000, 1500, 2000, 2500, 3000, 4000, 5000, 7500,
              10_000, 20_000, 50_000, math.inf)  # fmt: skip


TIE = 0.001


def is_content(words: list[str], gold_bigrams: set[tuple[str, str]], gold_set: set[str]) -> bool:
    """Whether most of a sentence's word bigrams (its word, for one word) are in the gold."""
    if len(words) == 1:
        return words[0] in gold_set
    pairs = list(itertools.pairwise(words))
    return sum(p in gold_bigrams for p in pairs) * 2 >= len(pairs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="KenLM model (default: the bundled one)")
    parser.add_argument("--plot", help="also write a PNG plot here (needs matplotlib)")
    args = parser.parse_args(argv)
    settings = CleanerSettings(model_path=args.model, max_sentence_perplexity=math.inf)
    pages = load_cleaneval("dev")
    scored = []  # per page: (sentences with perplexity and block, gold text, gold sets)
    for page in pages:
        doc = clean_document(RawDocument(body=page.raw, id=page.name), settings=settings)
        gold = page.gold or ""
        words = gold_words(gold)
        bigrams = set(itertools.pairwise(words))
        labelled = [(s, is_content(s.text.split(), bigrams, set(words))) for s in doc.sentences]
        scored.append((labelled, gold))
    rows = []
    for threshold in THRESHOLDS:
        kept = {True: 0, False: 0}
        total = {True: 0, False: 0}
        f1s = []
        for labelled, gold in scored:
            blocks: dict[int, list[str]] = {}
            for sentence, content in labelled:
                n = len(sentence.text.split())
                total[content] += n
                ppl = sentence.perplexity
                if ppl is not None and ppl <= threshold and sentence.reason != "no_words":
                    kept[content] += n
                    blocks.setdefault(sentence.block_index, []).append(sentence.text)
            output = "\n".join(" ".join(b) for b in blocks.values())
            f1s.append(align_words(output, gold).f1)
        rows.append(
            (threshold, kept[True] / total[True], kept[False] / total[False], sum(f1s) / len(f1s))
        )
    print(f"CleanEval dev, {len(pages)} pages; content/boilerplate labelled by gold bigrams\n")
    print("| max perplexity | content words kept | boilerplate words kept | word-alignment F1 |")
    print("|---:|---:|---:|---:|")
    for threshold, content, boiler, f1 in rows:
        print(f"| {threshold:g} | {content:.1%} | {boiler:.1%} | {f1:.4f} |")
    top = max(r[3] for r in rows)
    # F1 is flat near its top: within TIE of the best, the lowest threshold wins, since it
    # removes more boilerplate for the same score
    best = min((r for r in rows if r[3] >= top - TIE), key=lambda r: r[0])
    print(
        f"\nbest macro F1 {top:.4f}; chosen: max perplexity {best[0]:g} (F1 {best[3]:.4f}, "
        f"the lowest threshold within {TIE} of the best)"
    )
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        finite = [r for r in rows if math.isfinite(r[0])]
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.plot([r[0] for r in finite], [r[1] for r in finite], label="content words kept")
        ax.plot([r[0] for r in finite], [r[2] for r in finite], label="boilerplate words kept")
        ax.plot([r[0] for r in finite], [r[3] for r in finite], label="word-alignment F1")
        ax.axvline(best[0], color="grey", linestyle=":")
        ax.set_xscale("log")
        ax.set_xlabel("max sentence perplexity")
        ax.set_title("CleanEval dev")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(f"plot written to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
