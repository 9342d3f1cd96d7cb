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
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from stream_cleaner import decide
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


def settings_by_page(mode: str, out_of_fold: bool) -> tuple[CleanerSettings, dict[str, object]]:
    """The mode's settings, and in `auto` on the 2026 pages each page's fold's."""
    base = CleanerSettings().with_options(mode=mode)
    if not (out_of_fold and mode == "auto"):
        return base, {}
    folds = json.loads((FOLDS / "folds.json").read_text())["pages"]
    by_fold = {
        k: base.with_options(
            labeller_path=str(FOLDS / f"fold-{k}.json"),
            page_type_model_path=str(FOLDS / f"page-types-fold-{k}.json"),
        )
        for k in set(folds.values())
    }
    return base, {name: by_fold[k] for name, k in folds.items()}


def outputs(pages, settings, by_page, rule: bool) -> dict[str, str]:
    """Every page's kept text, with the rule or without it (`decide.is_figure` never true)."""
    shipped = decide.is_figure
    if not rule:
        decide.is_figure = lambda text: False
    try:
        return {
            p.name: clean_document(
                RawDocument(body=p.raw, id=p.name, url=p.url),
                settings=by_page.get(p.name, settings),
            ).text
            for p in pages
        }
    finally:
        decide.is_figure = shipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--test", action="store_true", help="the test sets, read once")
    parser.add_argument("--sets", help="only these sets, comma separated")
    args = parser.parse_args()
    sets = TEST if args.test else TRAINING
    if args.sets:
        sets = {k: v for k, v in sets.items() if k in args.sets.split(",")}
    print("| set | mode | F1 without | F1 with | snippet F1 without / with | pages changed "
          "| lost vs trafilatura without / with |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|")
    for label, (folder, split, peer) in sets.items():
        pages = read_pages(DATA / folder, split=split)
        trafilatura = read_outputs(PEERS / peer / "trafilatura", [p.name for p in pages])
        _, theirs = score_outputs(pages, trafilatura)
        for mode in MODES:
            settings, by_page = settings_by_page(mode, label == "modern2026")
            off = outputs(pages, settings, by_page, rule=False)
            on = outputs(pages, settings, by_page, rule=True)
            (s_off, p_off), (s_on, p_on) = score_outputs(pages, off), score_outputs(pages, on)
            snippets = f"{s_off.snippets.f1:.4f} / {s_on.snippets.f1:.4f}" if s_on.snippets else "-"
            changed = sum(off[n] != on[n] for n in on)
            lost_off, lost_on = compare_lost(p_off, theirs), compare_lost(p_on, theirs)
            print(
                f"| {label} | {mode} | {s_off.f1:.4f} | {s_on.f1:.4f} | {snippets} | {changed} "
                f"| {len(lost_off.lost)} / {len(lost_on.lost)} "
                f"{sorted(set(lost_on.lost) ^ set(lost_off.lost)) or ''} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
