"""Rules 50 and 51 (bench/auto_training.py): figures without a letter not dropped as
`no_words` in the labeller modes (`decide.is_figure`), on and off in one process, page by
page. Rule 50 kept a table cell's figures only, rule 51 every element's: their figures were
measured at the commits that wrote them (4fc8525 for rule 50, d037851 ``--everywhere`` for
rule 51 against rule 50); this script now sets the shipped rule against none.

For each set and each labeller mode: the macro word-alignment F1 with the rule and without
it, the 2026 pages' snippet F1, the pages whose output changes, and the pages of lost main
content against trafilatura's saved output (`evaluate.lost_main_content`). The 2026 pages
are cleaned in `auto` mode out of fold (`bench/quality.py --out-of-fold`'s fold labellers
and page types); the other training sets in sample. The test sets only with ``--test``.

    .cache/bench-venv/bin/python bench/quality.py --systems trafilatura --save-outputs \\
        --datasets cleaneval-dev,cleaneval-test,dragnet,modern2026,gt-train,gt-test \\
        --dataset gt-train=googletrends-pages/train \\
        --dataset gt-test=googletrends-pages/test --out artifacts/peers
    PYTHONPATH=$PWD .venv/bin/python bench/table_figures.py [--test] [--sets modern2026]

With ``--tables``, rule 60 instead: `guard.keep_figures` (a page's table of figures kept back
where the decision keeps almost nothing) off and on.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from quality import settings_out_of_fold

from stream_cleaner import decide, guard
from stream_cleaner.document import RawDocument
from stream_cleaner.evaluate import (
    compare_lost,
    read_outputs,
    read_pages,
    score_outputs,
)
from stream_cleaner.pipeline import clean_document
from stream_cleaner.settings import CleanerSettings

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / ".cache" / "data"
FOLDS = ROOT / ".cache" / "auto-training" / "folds"
PEERS = ROOT / "artifacts" / "peers" / "outputs"
MODES = ("auto", "corpus", "article")
TRAINING = {
    "cleaneval-dev": ("cleaneval/dev", "all", "cleaneval-dev"),
    "dragnet-train": ("dragnet", "train", "dragnet"),
    "gt-train": ("googletrends-pages/train", "all", "gt-train"),
    "modern2026": ("modern2026", "all", "modern2026"),
}
TEST = {
    "cleaneval-test": ("cleaneval/test", "all", "cleaneval-test"),
    "dragnet-test": ("dragnet", "test", "dragnet"),
    "gt-test": ("googletrends-pages/test", "all", "gt-test"),
}

Patch = Callable[[], Callable[[], None]]
"""A variant: applied by calling it, undone by calling what it returns."""


def settings_by_page(mode: str, out_of_fold: bool) -> tuple[CleanerSettings, dict[str, object]]:
    """The mode's settings, and in `auto` on the 2026 pages each page's fold's."""
    base = CleanerSettings().with_options(mode=mode)
    if not (out_of_fold and mode == "auto"):
        return base, {}
    return base, settings_out_of_fold(FOLDS, base)


def outputs(pages, settings, by_page, patch: Patch) -> dict[str, str]:
    """Every page's kept text with ``patch`` applied (it returns what undoes it)."""
    undo = patch()
    try:
        return {
            p.name: clean_document(
                RawDocument(body=p.raw, id=p.name, url=p.url),
                settings=by_page.get(p.name, settings),
            ).text
            for p in pages
        }
    finally:
        undo()


def compare(sets: dict[str, tuple[str, str, str]], variants: dict[str, Patch]) -> None:
    """For each set and labeller mode, each variant's macro word F1, the 2026 pages' snippet
    F1, the pages whose output differs from the first variant's and the pages lost against
    trafilatura: a markdown table on stdout."""
    names = list(variants)
    header = f"F1 {' / '.join(names)} | snippet F1 | pages changed | lost vs trafilatura"
    print(f"| set | mode | {header} |")
    print("|---|---|---:|---:|---:|---:|")
    for label, (folder, split, peer) in sets.items():
        pages = read_pages(DATA / folder, split=split)
        trafilatura = read_outputs(PEERS / peer / "trafilatura", [p.name for p in pages])
        _, theirs = score_outputs(pages, trafilatura)
        for mode in MODES:
            settings, by_page = settings_by_page(mode, label == "modern2026")
            texts = [outputs(pages, settings, by_page, variants[n]) for n in names]
            scored = [score_outputs(pages, t) for t in texts]
            f1 = " / ".join(f"{summary.f1:.4f}" for summary, _ in scored)
            snippets = " / ".join(f"{s.snippets.f1:.4f}" for s, _ in scored if s.snippets) or "-"
            changed = " / ".join(str(sum(t[n] != texts[0][n] for n in t)) for t in texts[1:])
            lost = [compare_lost(per_page, theirs).lost for _, per_page in scored]
            moved = sorted(set().union(*lost) - set(lost[0]).intersection(*lost))
            print(
                f"| {label} | {mode} | {f1} | {snippets} | {changed} "
                f"| {' / '.join(str(len(x)) for x in lost)} {moved or ''} |",
                flush=True,
            )


def without_figures() -> Callable[[], None]:
    """`decide.is_figure` never true: no figure counts as words."""
    shipped = decide.is_figure
    decide.is_figure = lambda text: False

    def undo() -> None:
        decide.is_figure = shipped

    return undo


def guard_setting(name: str, value: object) -> Patch:
    """The variant with `guard`'s ``name`` set to ``value``."""

    def apply() -> Callable[[], None]:
        shipped = getattr(guard, name)
        setattr(guard, name, value)
        return lambda: setattr(guard, name, shipped)

    return apply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--test", action="store_true", help="the test sets, read once")
    parser.add_argument("--sets", help="only these sets, comma separated")
    parser.add_argument("--tables", action="store_true", help="rule 60: tables of figures")
    args = parser.parse_args()
    sets = TEST if args.test else TRAINING
    if args.sets:
        sets = {k: v for k, v in sets.items() if k in args.sets.split(",")}
    if args.tables:
        compare(sets, {"no": guard_setting("FIGURE_TABLE_MIN_CELLS", None),
                       "yes": lambda: lambda: None})  # fmt: skip
    else:
        compare(sets, {"without": without_figures, "with": lambda: lambda: None})


if __name__ == "__main__":
    main()
