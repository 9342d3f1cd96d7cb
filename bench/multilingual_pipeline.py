"""Which labeller should decide the blocks of a page whose language has no language model:
measured through the whole pipeline (`clean_document`), not on the labellers' own features.

No labelled non-English HTML is in the data: the MultiBoilerNet sets are CSVs, one row per
text node (its tag path, text and label). Each page is rebuilt as HTML from its rows (each
row's path opened as nested elements, consecutive rows sharing their common prefix; a row with
the same path as the one before starts a new element at its deepest block tag), cleaned by
`clean_document`, and each row is predicted content when its text comes out kept (rows are
found in the kept/dropped sentence stream in order, whitespace ignored; a row that does not
come out, such as text in ``<svg>`` or ``<noscript>``, which the parser skips, is predicted
boilerplate). The metric is bench/multilingual.py's MultiBoilerNet macro F1 over rows.

Two questions, two data sets:

1. Non-Latin scripts without a model: MultiBoilerNet's Chinese (cleaneval/zh), Japanese (jp)
   and Thai (thai) sets, with the English CleanEval test rows (which have a model) beside them.
2. Latin-script languages without a model (German, French... have none by default): the
   Dragnet pages of the ``train`` split (neither labeller was trained on them; the article
   labeller was, so its figures there are in-sample), cleaned as if no model existed for
   their language, scored by word alignment as bench/quality.py does.

What it decided (``multilingual_labeller="auto"``): in corpus mode a block of a page without
a model is kept when both the corpus labeller (its perplexity features neutral) and the
multilingual labeller call it content; the pair beats either alone on the Dragnet split and on
average over Chinese, Japanese and Thai. In article mode the article labeller alone is better.

    PYTHONPATH=$PWD .venv/bin/python bench/multilingual_pipeline.py [--multilingual-labeller F]
    PYTHONPATH=$PWD .venv/bin/python bench/multilingual_pipeline.py --speed 3   # the GRUs' cost
    PYTHONPATH=$PWD .venv/bin/python bench/multilingual_pipeline.py --pseudo-words  # rules 48, 63
    .cache/bench-venv/bin/python bench/multilingual_pipeline.py --peers   # rule 63, the peers
"""

from __future__ import annotations

import argparse
import html
from collections.abc import Callable
from pathlib import Path

import numpy as np
from multilingual import PAPER, Page, load_set, scores_of

from stream_cleaner import CleanerSettings, pipeline
from stream_cleaner.document import RawDocument
from stream_cleaner.evaluate import align_characters, clean_pages, read_pages, score_outputs
from stream_cleaner.multilingual_labeller import load_multilingual
from stream_cleaner.parse import BLOCK_TAGS

ROOT = Path(__file__).resolve().parent.parent
SETS = {"en (cleaneval/test)": "cleaneval/test", "zh": "cleaneval/zh", "jp": "jp", "thai": "thai"}
# the sets of languages written without spaces, where `--peers` compares the systems (English
# CleanEval test is bench/quality.py's, on its real pages)
UNSPACED_SETS = {label: name for label, name in SETS.items() if not label.startswith("en")}
# Elements that hold no child elements (void) or only text (raw text, RCDATA)
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
_TEXT_ONLY = frozenset("title textarea script style xmp iframe noembed noframes plaintext".split())


def page_html(page: Page) -> str:
    """The page's rows as one HTML document (see the module's docstring)."""
    out: list[str] = []
    stack: list[str] = []
    previous: list[str] | None = None
    for path, text in zip(page.paths, page.texts, strict=True):
        tags = [t for t in path.split() if t not in _VOID and t.isalnum()]
        for i, tag in enumerate(tags):
            if tag in _TEXT_ONLY:
                del tags[i + 1 :]
                break
        common = 0
        for a, b in zip(stack, tags, strict=False):
            if a != b:
                break
            common += 1
        if tags == previous:  # a sibling: a new element at the deepest block tag
            blocks = [i for i, tag in enumerate(tags) if tag in BLOCK_TAGS and i >= 2]
            common = min(common, blocks[-1] if blocks else len(tags) - 1)
        while len(stack) > common:
            out.append(f"</{stack.pop()}>")
        for tag in tags[common:]:
            out.append(f"<{tag}>")
            stack.append(tag)
        out.append(html.escape(text, quote=False))
        previous = tags
    while stack:
        out.append(f"</{stack.pop()}>")
    return '<!DOCTYPE html><meta charset="utf-8">' + "".join(out)


def row_predictions(page: Page, settings: CleanerSettings) -> tuple[np.ndarray, int]:
    """Content (1) or not per row, from what `clean_document` keeps; and the rows not found."""
    doc = pipeline.clean_document(
        RawDocument(body=page_html(page), id=page.name), settings=settings
    )
    return rows_kept(page, doc)


def rows_kept(page: Page, doc) -> tuple[np.ndarray, int]:
    """`row_predictions` from the page's cleaned document."""
    stream: list[str] = []
    kept: list[bool] = []
    for s in doc.sentences:
        chars = "".join(s.text.split())
        stream.append(chars)
        kept.extend([s.keep] * len(chars))
    joined = "".join(stream)
    keep = np.array(kept, dtype=bool)

    preds = np.zeros(len(page.texts), dtype=np.int64)
    cursor = missing = 0
    for i, text in enumerate(page.texts):
        chars = "".join(text.split())
        if not chars:
            continue
        at = joined.find(chars, cursor)
        if at < 0:
            at = joined.find(chars)
        if at < 0:
            missing += 1
            continue
        preds[i] = keep[at : at + len(chars)].mean() > 0.5
        cursor = at + len(chars)
    return preds, missing


def character_f1(page: Page, text: str) -> float:
    """Word alignment's F1 over characters (`evaluate.align_characters`): a system's output
    text against the page's content rows (``--peers``). Characters, not white-space words,
    because Chinese, Japanese and Thai put no spaces between words; any system's text is read
    alike."""
    pairs = zip(page.texts, page.labels, strict=True)
    return align_characters(text, "".join(t for t, label in pairs if label)).f1


def _alone(run: pipeline._Run, blocks: list, content: list[bool]) -> list[bool]:
    """The multilingual labeller's verdicts alone (a variant, measured only)."""
    return load_multilingual(run.settings.multilingual_labeller_path).predict(blocks)


VARIANTS: dict[str, tuple[dict, Callable | None]] = {
    "perplexity mode": ({"mode": "perplexity"}, None),
    "mode's labeller, neutral perplexity (before)": ({"multilingual_labeller": "off"}, None),
    "multilingual labeller alone": ({"multilingual_labeller": "auto"}, _alone),
    "both must keep (auto)": ({"multilingual_labeller": "auto"}, None),
}
_ORIGINAL = pipeline._Run._multilingual_content


def run_variant(settings: CleanerSettings, patch: Callable | None, fn: Callable):
    if patch is not None:
        pipeline._Run._multilingual_content = patch
    try:
        return fn(settings)
    finally:
        pipeline._Run._multilingual_content = _ORIGINAL


def speed(passes: int) -> None:
    """CPU per page of `clean_document` (corpus mode) on the rebuilt Chinese, Japanese and
    Thai pages, with the shipped multilingual labeller and with its trees alone (the file
    without its sequence layer), passes alternating after one untimed pass of each."""
    import json
    import tempfile
    import time

    from stream_cleaner.multilingual_labeller import MULTILINGUAL_MODEL

    pages = [p for name in ("cleaneval/zh", "jp", "thai") for p in load_set(name)]
    docs = [RawDocument(body=page_html(p), id=p.name) for p in pages]
    spec = json.loads(MULTILINGUAL_MODEL.read_text(encoding="utf-8"))
    spec.pop("sequence", None)
    with tempfile.TemporaryDirectory() as tmp:
        trees_only = Path(tmp) / "trees-only.json"
        trees_only.write_text(json.dumps(spec), encoding="utf-8")
        variants = {
            "trees and networks (shipped)": CleanerSettings(),
            "trees alone": CleanerSettings(multilingual_labeller_path=str(trees_only)),
        }
        times: dict[str, list[float]] = {name: [] for name in variants}
        for i in range(passes + 1):
            for name, settings in variants.items():
                started = time.process_time()
                for doc in docs:
                    pipeline.clean_document(doc, settings=settings)
                if i:  # the first pass loads and warms up
                    times[name].append((time.process_time() - started) / len(docs) * 1000)
    blocks = sum(len(p.texts) for p in pages) / len(pages)
    print(f"## CPU ms a page, corpus mode, {len(docs)} rebuilt pages ({blocks:.0f} rows each on "
          f"average), {passes} passes\n")  # fmt: skip
    print("| labeller | " + " | ".join(f"pass {i + 1}" for i in range(passes)) + " |")
    print("|---|" + "---:|" * passes)
    for name, values in times.items():
        print(f"| {name} | " + " | ".join(f"{v:.2f}" for v in values) + " |")


def pseudo_words() -> None:
    """Rules 48, 49 and 63 (bench/auto_training.py): the Chinese, Japanese and Thai rows'
    macro F1 and the pages typed article, in each labeller mode with the labeller and the
    page type reading pseudo-words (`pipeline.PSEUDO_WORD_MODES`) or the page as it is. Thai
    is never cut (rule 48's variant (b), four characters a word, is not in the code). Rule
    49's page type alone reading them in `auto` is gone with rule 63."""
    shipped = pipeline.PSEUDO_WORD_MODES
    sets = {label: load_set(name) for label, name in UNSPACED_SETS.items()}
    print("| mode | read as | " + " | ".join(
        f"{label} F1 | {label} typed article" for label in sets) + " |")  # fmt: skip
    print("|---|---|" + "---:|---:|" * len(sets))
    try:
        for mode in ("auto", "corpus", "article"):
            for words in (False, True):
                pipeline.PSEUDO_WORD_MODES = frozenset({mode}) if words else frozenset()
                settings = CleanerSettings().with_options(mode=mode)
                cells = []
                for pages in sets.values():
                    docs = [
                        pipeline.clean_document(
                            RawDocument(body=page_html(p), id=p.name), settings=settings
                        )
                        for p in pages
                    ]
                    preds = [rows_kept(p, d)[0] for p, d in zip(pages, docs, strict=True)]
                    articles = sum(d.page_type == "article" for d in docs)
                    cells.append(f"{scores_of(pages, preds)['macro']:.3f} | {articles}")
                read = "pseudo-words" if words else "as it is"
                print(f"| {mode} | {read} | " + " | ".join(cells) + " |", flush=True)
    finally:
        pipeline.PSEUDO_WORD_MODES = shipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dragnet",
        default=str(ROOT / ".cache/data/dragnet"),
        help="the page set of question 2: Dragnet (its train split), or any set in the "
        "generic layout, whole (e.g. .cache/data/googletrends-pages/val, pages no labeller "
        "was trained on)",
    )
    parser.add_argument(
        "--multilingual-labeller", help="a multilingual labeller file (default: the shipped one)"
    )
    parser.add_argument("--limit", type=int, default=None, help="pages per set (quick runs)")
    parser.add_argument(
        "--mode", help="the labeller mode of the variants (default: the settings' default)"
    )
    parser.add_argument(
        "--dragnet-only", action="store_true", help="only the second question (Dragnet)"
    )
    parser.add_argument(
        "--speed", type=int, metavar="PASSES", help="only time the sequence layer's cost"
    )
    parser.add_argument(
        "--pseudo-words", action="store_true", help="only rules 48 and 49: pseudo-words read"
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help="only the MultiBoilerNet pages, stream-cleaner's modes against the peers "
        "(run with the bench venv's Python)",
    )
    args = parser.parse_args()
    if args.speed:
        speed(args.speed)
        return
    if args.pseudo_words:
        pseudo_words()
        return
    if args.peers:
        peer_rows(args)
        return

    if not args.dragnet_only:
        multiboilernet_rows(args)
    dragnet_without_model(args)


def multiboilernet_rows(args: argparse.Namespace) -> None:
    """Question 1: the MultiBoilerNet sets' rows through `clean_document`."""
    print("## 1. MultiBoilerNet rows through clean_document (macro F1 over rows)\n")
    print("| set | pages | rows not found | variant | macro F1 | pooled | content F1 | paper |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for label, name in SETS.items():
        pages = load_set(name)[: args.limit]
        for variant, (options, patch) in VARIANTS.items():
            settings = CleanerSettings(
                **options, multilingual_labeller_path=args.multilingual_labeller
            )
            if args.mode and "mode" not in options:
                settings = settings.with_options(mode=args.mode)

            def predict(s: CleanerSettings, pages: list[Page] = pages) -> list:
                return [row_predictions(p, s) for p in pages]

            found = run_variant(settings, patch, predict)
            preds = [f[0] for f in found]
            missing = sum(f[1] for f in found)
            r = scores_of(pages, preds)
            paper = PAPER.get(label, ("-",))[0]
            print(
                f"| {label} | {len(pages)} | {missing} | {variant} | {r['macro']:.3f} "
                f"| {r['pooled']:.3f} | {r['content']:.3f} | {paper} |",
                flush=True,
            )


def peer_rows(args: argparse.Namespace) -> None:
    """The MultiBoilerNet pages of Chinese, Japanese and Thai, stream-cleaner's modes against
    the peers, each system's output text scored alike (`character_f1`, macro over pages);
    beside it stream-cleaner's macro F1 over rows from its sentences' own verdicts
    (`rows_kept`, question 1's figure), which no peer's plain text can give. Rule 63
    (bench/auto_training.py). Needs the bench venv (`bench/setup-env.sh`)."""
    import peers  # the peers are bench-only dependencies

    print("## MultiBoilerNet pages: stream-cleaner against the peers\n")
    print("Character-alignment F1, macro over pages (rows F1 of stream-cleaner's sentences)\n")
    print("| system | " + " | ".join(UNSPACED_SETS) + " |")
    print("|---|" + "---:|" * len(UNSPACED_SETS))
    table: dict[str, list[str]] = {}
    for name in UNSPACED_SETS.values():
        pages = load_set(name)[: args.limit]
        documents = [page_html(p) for p in pages]
        for mode in ("auto", "corpus", "article"):
            settings = CleanerSettings(mode=mode)
            docs = [
                pipeline.clean_document(RawDocument(body=d, id=p.name), settings=settings)
                for p, d in zip(pages, documents, strict=True)
            ]
            pairs = list(zip(pages, docs, strict=True))
            rows = scores_of(pages, [rows_kept(p, d)[0] for p, d in pairs])["macro"]
            chars = np.mean([character_f1(p, d.text) for p, d in pairs])
            table.setdefault(f"stream-cleaner {mode}", []).append(f"{chars:.3f} ({rows:.3f})")
        for peer, extract in peers.PEERS.items():
            pairs = zip(pages, documents, strict=True)
            chars = np.mean([character_f1(p, extract(d)) for p, d in pairs])
            table.setdefault(peer, []).append(f"{chars:.3f}")
    for system, cells in table.items():
        print(f"| {system} | " + " | ".join(cells) + " |")
    if peers.FAILURES:
        print(f"\nPeer exceptions (pages read as empty): {dict(peers.FAILURES)}")


def dragnet_without_model(args: argparse.Namespace) -> None:
    """Question 2: the Dragnet train split cleaned as if its language had no model."""
    print("\n## 2. Dragnet train split as a language without a model (word alignment F1)\n")
    split = "train" if Path(args.dragnet).name == "dragnet" else "all"
    pages = [p for p in read_pages(args.dragnet, split=split) if p.gold is not None]
    pages = pages[: args.limit]
    scored = pipeline._Run._score_sentences
    applies = pipeline._Run._multilingual_applies

    def no_model(run, texts, languages):  # every sentence in a language without a model
        return scored(run, texts, ["zz"] * len(texts))

    def as_unmodelled(run: pipeline._Run, mode: str) -> bool:
        return run.settings.multilingual_labeller != "off"

    print(f"{len(pages)} pages\n")
    print("| mode | variant | F1 | pooled F1 |")
    print("|---|---|---:|---:|")
    for mode in (args.mode,) if args.mode else ("corpus", "article"):
        for variant, (options, patch) in VARIANTS.items():
            if variant == "perplexity mode":
                continue
            settings = CleanerSettings(
                **{**options, "mode": mode}, multilingual_labeller_path=args.multilingual_labeller
            )
            pipeline._Run._score_sentences = no_model
            pipeline._Run._multilingual_applies = as_unmodelled
            try:
                outputs = run_variant(settings, patch, lambda s: clean_pages(pages, s))
            finally:
                pipeline._Run._score_sentences = scored
                pipeline._Run._multilingual_applies = applies
            summary, _ = score_outputs(pages, outputs)
            print(f"| {mode} | {variant} | {summary.f1:.4f} | {summary.micro_f1:.4f} |", flush=True)


if __name__ == "__main__":
    main()
