"""What the block labeller keeps when no language model scores a page, and the neutral log10
perplexity its perplexity features get then (`labeller.UNSCORED_LOG_PPL`).

Pages in a language without a model have no perplexity; the labeller still needs values for
its perplexity features. This cleans CleanEval dev (never test) as if no model existed for
its language, for several candidate values, and prints the word-alignment F1 of each, next to
the figure with the English model. The value that loses least is the default.

    .venv/bin/python bench/no_model.py [--path .cache/data/cleaneval/dev]
"""

from __future__ import annotations

import argparse

from stream_cleaner import CleanerSettings, labeller, pipeline
from stream_cleaner.evaluate import clean_pages, read_pages, score_outputs

CANDIDATES = (2.0, 2.5, 3.0, 3.5, 4.0, 5.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", default=".cache/data/cleaneval/dev")
    args = parser.parse_args()
    pages = [page for page in read_pages(args.path) if page.gold is not None]
    scored = pipeline._Run._score_sentences

    def no_model(run, texts, languages):  # every sentence in a language without a model
        return scored(run, texts, ["zz"] * len(texts))

    print(f"{args.path}: {len(pages)} pages; word alignment F1 (per-page average / pooled)\n")
    print("| mode | scoring | neutral log10 ppl | F1 | pooled F1 | words kept / gold |")
    print("|---|---|---:|---:|---:|---:|")
    gold_words = sum(len(page.gold.split()) for page in pages)
    for mode in ("perplexity", "corpus", "article"):
        settings = CleanerSettings(mode=mode)
        runs = [("English model", None)] + [("no model", value) for value in CANDIDATES]
        if mode == "perplexity":
            runs = runs[:2]  # the labeller is not used: one no-model row
        for scoring, value in runs:
            if value is not None:
                labeller.UNSCORED_LOG_PPL = value
                pipeline._Run._score_sentences = no_model
            try:
                outputs = clean_pages(pages, settings)
            finally:
                pipeline._Run._score_sentences = scored
            summary, _ = score_outputs(pages, outputs)
            kept = sum(len(text.split()) for text in outputs.values())
            shown = "" if value is None or mode == "perplexity" else f"{value:g}"
            print(
                f"| {mode} | {scoring} | {shown} | {summary.f1:.4f} | {summary.micro_f1:.4f} "
                f"| {kept / gold_words:.2f} |"
            )


if __name__ == "__main__":
    main()
