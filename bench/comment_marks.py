"""Whether the article labeller should read where a block stands among the page's elements named
for comments (`Block.comment_marks`; the last three of `labeller.CLASS_FEATURE_NAMES`), on
training and validation data only.

The article labeller's set-up (`train-labeller .cache/data/dragnet:train
.cache/data/googletrends-pages/train --mode article --class-features`): five page-grouped folds
over Dragnet train and the 50 GoogleTrends train pages, the threshold chosen out of fold; each
fold's booster trained with and without the three columns, with LightGBM seeds 1, 2 and 3
(one seed moves the figures by a few thousandths). Prints per seed the cross-validated macro
F1, the pooled (micro) F1 of Dragnet's out-of-fold outputs (the comment threads a labeller
keeps are long, so they weigh in words more than in pages), and the macro F1 on the 30
GoogleTrends val pages of a booster trained on all training pages.

    PYTHONPATH=$PWD .venv/bin/python bench/googletrends_pages.py
    PYTHONPATH=$PWD .venv/bin/python bench/comment_marks.py        # ~4 min
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from stream_cleaner.evaluate import align_words, score_page, summarize
from stream_cleaner.labeller import CLASS_FEATURE_NAMES, FEATURE_NAMES
from stream_cleaner.lm import load_model
from stream_cleaner.training import (
    MODE_PARAMS,
    NUM_TREES,
    TRAIN_PARAMS,
    add_class_features,
    choose_threshold,
    load_training_pages,
    page_folds,
    stack,
)

ROOT = Path(__file__).resolve().parent.parent
MARKS = ("comment_marks_share", "comment_marks", "page_comment_marks")


def _fit(pages: list, seed: int) -> object:  # a lightgbm.Booster
    import lightgbm

    x, y, w = stack(pages)
    params = {**TRAIN_PARAMS, **MODE_PARAMS["article"], "seed": seed}
    return lightgbm.train(params, lightgbm.Dataset(x, y, weight=w), NUM_TREES["article"])


def run(pages: list, dragnet: int, val: list, seed: int) -> tuple[float, float, float, float]:
    """Threshold, cross-validated macro F1, Dragnet's out-of-fold micro F1, val macro F1."""
    fold_of = page_folds(pages, 5)
    scores: list[np.ndarray] = [np.zeros(0)] * len(pages)
    for k in range(5):
        booster = _fit([p for p, f in zip(pages, fold_of, strict=True) if f != k], seed)
        for i, p in enumerate(pages):
            if fold_of[i] == k:
                scores[i] = booster.predict(p.features, raw_score=True)
    threshold, cv = choose_threshold(pages, scores)
    oof = summarize([
        score_page(p.name, p.text(s > threshold), p.gold)
        for p, s in zip(pages[:dragnet], scores[:dragnet], strict=True)
    ])  # fmt: skip
    booster = _fit(pages, seed)
    val_f1 = float(
        np.mean([
            align_words(p.text(booster.predict(p.features, raw_score=True) > threshold), p.gold).f1
            for p in val
        ])
    )  # fmt: skip
    return threshold, cv, oof.micro_f1, val_f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT / ".cache/data"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args()
    started = time.perf_counter()
    model = load_model()
    dragnet = load_training_pages(f"{args.data}/dragnet", split="train", model=model)
    trends = load_training_pages(f"{args.data}/googletrends-pages/train", model=model)
    val = load_training_pages(f"{args.data}/googletrends-pages/val", model=model)
    pages = dragnet + trends
    add_class_features(pages)
    add_class_features(val)
    print(f"{len(dragnet)} Dragnet train + {len(trends)} GoogleTrends train pages, "
          f"{len(val)} val pages ({time.perf_counter() - started:.0f} s)\n")  # fmt: skip
    full = {id(p): p.features for p in pages + val}
    drop = [len(FEATURE_NAMES) + CLASS_FEATURE_NAMES.index(name) for name in MARKS]
    print("| comment marks | seed | threshold | CV macro F1 | Dragnet OOF micro | val macro F1 |")
    print("|---|---:|---:|---:|---:|---:|")
    means: dict[str, list[tuple[float, float, float]]] = {}
    for label, keep in (("without", False), ("with", True)):
        for p in pages + val:
            p.features = full[id(p)] if keep else np.delete(full[id(p)], drop, axis=1)
        for seed in args.seeds:
            threshold, cv, micro, val_f1 = run(pages, len(dragnet), val, seed)
            means.setdefault(label, []).append((cv, micro, val_f1))
            print(f"| {label} | {seed} | {threshold:g} | {cv:.4f} | {micro:.4f} | {val_f1:.4f} |",
                  flush=True)  # fmt: skip
    for label, rows in means.items():
        cv, micro, val_f1 = np.mean(rows, axis=0)
        print(f"\nmean {label}: CV {cv:.4f}, Dragnet OOF micro {micro:.4f}, val {val_f1:.4f}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
