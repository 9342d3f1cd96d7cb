"""Whether the article labeller should train on the modern GoogleTrends pages beside Dragnet's
train split: cross-validated on training data only (macro word-alignment F1 of out-of-fold
scores, as `stream-cleaner train-labeller` chooses its threshold).

1. Dragnet train, five page-grouped folds, with nothing, the 50 GoogleTrends train pages, or
   those pages twice added to every fold's training side.
2. The GoogleTrends train pages themselves: out of fold (five folds, Dragnet's pages added to
   each training side) against the labeller trained on Dragnet alone, at each threshold.

The GoogleTrends val pages then validate the labeller trained both ways (`stream-cleaner
evaluate .cache/data/googletrends-pages/val --layout generic --mode article --labeller F`).

    PYTHONPATH=$PWD .venv/bin/python bench/googletrends_pages.py
    PYTHONPATH=$PWD .venv/bin/python bench/article_training.py        # ~6 min
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from stream_cleaner.labeller import BlockLabeller
from stream_cleaner.lm import load_model
from stream_cleaner.training import (
    MODE_PARAMS,
    NUM_TREES,
    _spec,
    choose_threshold,
    cross_validate,
    fit_trees,
    load_training_pages,
    macro_f1,
)

ROOT = Path(__file__).resolve().parent.parent
THRESHOLDS = np.arange(-1.0, 0.01, 0.25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT / ".cache/data"))
    args = parser.parse_args()
    model = load_model()
    dragnet = load_training_pages(f"{args.data}/dragnet", split="train", model=model)
    trends = load_training_pages(f"{args.data}/googletrends-pages/train", model=model)
    params, trees = MODE_PARAMS["article"], NUM_TREES["article"]

    print(f"## 1. Dragnet train ({len(dragnet)} pages), out of fold\n")
    print("| added to each fold | macro F1 | threshold |\n|---|---:|---:|")
    for name, extra in (("nothing", []), ("GoogleTrends train", trends),
                        ("GoogleTrends train, twice", trends + trends)):  # fmt: skip
        scores = cross_validate(dragnet, folds=5, num_trees=trees, params=params, extra=extra)
        threshold, f1 = choose_threshold(dragnet, scores)
        print(f"| {name} | {f1:.4f} | {threshold:g} |", flush=True)

    print(f"\n## 2. GoogleTrends train ({len(trends)} pages)\n")
    out_of_fold = cross_validate(trends, folds=5, num_trees=trees, params=params, extra=dragnet)
    alone = BlockLabeller(_spec(fit_trees(dragnet, num_trees=trees, params=params),
                                threshold=0.0, mode="article"))  # fmt: skip
    dragnet_only = [alone.scores(p.features) for p in trends]
    print("| threshold | out of fold, with Dragnet | trained on Dragnet alone |\n|---:|---:|---:|")
    for t in THRESHOLDS:
        with_trends = macro_f1(trends, [s > t for s in out_of_fold])
        without = macro_f1(trends, [s > t for s in dragnet_only])
        print(f"| {t:g} | {with_trends:.4f} | {without:.4f} |", flush=True)


if __name__ == "__main__":
    main()
