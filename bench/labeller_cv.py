"""Choices behind the block labeller, by page-grouped cross-validation on training data only.

Corpus mode: CleanEval dev (58 pages); article mode: the Dragnet train split (968 pages).
Prints, for each candidate ensemble, the best out-of-fold macro word-alignment F1 over a grid
of decision thresholds, next to the perplexity-only filter and an oracle (the block labels
themselves), and how the sentence filter inside kept blocks changes the score.

    .venv/bin/python bench/labeller_cv.py corpus|article [--folds 5]

``--crf`` adds a linear-chain CRF (python-crfsuite) over the same features, binned.
``--final`` instead cleans the held-out sets once with the shipped labellers (CleanEval test
in corpus mode, the Dragnet test split in article mode, and both in perplexity mode): report
those figures, never tune on them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data import DATA_DIR, load_cleaneval, load_dragnet

from stream_cleaner import CleanerSettings, RawDocument, clean_document
from stream_cleaner.evaluate import align_words, dragnet_split
from stream_cleaner.labeller import _OWN_FEATURES, FEATURE_NAMES
from stream_cleaner.training import (
    MODE_PARAMS,
    NUM_TREES,
    cross_validate,
    load_training_pages,
    macro_f1,
    page_folds,
)

SMALL = {"num_leaves": 7, "max_depth": 4}
LARGE = {"num_leaves": 31, "max_depth": 7}
CANDIDATES = {
    "corpus": [
        ("200 trees, 7 leaves, lr 0.08", SMALL, 200),
        ("100 trees, 7 leaves, lr 0.12", {**SMALL, "learning_rate": 0.12}, 100),
        ("60 trees, 7 leaves, lr 0.2", {**SMALL, "learning_rate": 0.2}, 60),
        ("150 trees, 15 leaves, lr 0.08", {}, 150),
    ],
    "article": [
        ("150 trees, 15 leaves, lr 0.08", {}, 150),
        ("60 trees, 15 leaves, lr 0.2", {"learning_rate": 0.2}, 60),
        ("100 trees, 31 leaves, lr 0.15", {**LARGE, "learning_rate": 0.15}, 100),
        ("200 trees, 7 leaves, lr 0.08", SMALL, 200),
    ],
}
THRESHOLDS = (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5)


QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def cross_validation(mode: str, folds: int, *, crf: bool = False) -> None:
    if mode == "corpus":
        pages = load_training_pages(DATA_DIR / "cleaneval" / "dev")
    else:
        pages = load_training_pages(DATA_DIR / "dragnet", split="train")
    every = [np.ones(len(p.blocks), dtype=bool) for p in pages]
    print(f"{mode}: {len(pages)} pages, {sum(len(p.blocks) for p in pages)} blocks\n")
    paper = macro_f1(pages, every, max_sentence_perplexity=3000)
    print(f"- perplexity filter alone (3000): {paper:.4f}")
    print(f"- oracle block labels: {macro_f1(pages, [p.labels for p in pages]):.4f}\n")
    print("| ensemble | threshold | out-of-fold macro F1 | + sentence filter 3000 | 10000 | s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, params, trees in CANDIDATES[mode]:
        started = time.perf_counter()
        scores = cross_validate(pages, folds=folds, num_trees=trees, params=params)
        f1, threshold = max((macro_f1(pages, [s > t for s in scores]), t) for t in THRESHOLDS)
        keep = [s > threshold for s in scores]
        with_filter = [macro_f1(pages, keep, max_sentence_perplexity=m) for m in (3000, 10000)]
        print(
            f"| {name} | {threshold:g} | {f1:.4f} | {with_filter[0]:.4f} | {with_filter[1]:.4f} "
            f"| {time.perf_counter() - started:.0f} |",
            flush=True,
        )
    print(f"\nshipped: {NUM_TREES[mode]} trees, {MODE_PARAMS[mode]}")
    if crf:
        for name, columns in (
            ("own features", range(len(_OWN_FEATURES))),
            ("own + neighbours", range(len(FEATURE_NAMES))),
        ):
            keeps = crf_cross_validate(pages, list(columns), folds)
            print(f"- linear-chain CRF (python-crfsuite), {name}: {macro_f1(pages, keeps):.4f}")


def crf_cross_validate(pages: list, columns: list[int], folds: int) -> list[np.ndarray]:
    """Out-of-fold decisions of a linear-chain CRF (python-crfsuite) over the same features,
    each cut into quantile bins (a CRF's features are indicator functions)."""
    import tempfile

    import pycrfsuite

    def attributes(x: np.ndarray, edges: list[np.ndarray]) -> list[list[str]]:
        bins = np.stack([np.searchsorted(edges[j], x[:, j]) for j in columns], axis=1)
        return [
            [f"{FEATURE_NAMES[j]}={v}" for j, v in zip(columns, row, strict=True)]
            for row in bins.tolist()
        ]

    fold_of = page_folds(pages, folds)
    keeps: list[np.ndarray] = [np.zeros(0, dtype=bool)] * len(pages)
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(folds):
            train = [p for p, f in zip(pages, fold_of, strict=True) if f != k]
            x = np.vstack([p.features for p in train])
            edges = [np.unique(np.quantile(x[:, j], QUANTILES)) for j in range(x.shape[1])]
            trainer = pycrfsuite.Trainer(verbose=False)
            for p in train:
                trainer.append(attributes(p.features, edges), ["c" if y else "b" for y in p.labels])
            trainer.set_params({"c1": 0.1, "c2": 0.01, "max_iterations": 150})
            trainer.train(f"{tmp}/crf")
            tagger = pycrfsuite.Tagger()
            tagger.open(f"{tmp}/crf")
            for i, p in enumerate(pages):
                if fold_of[i] == k:
                    tags = tagger.tag(attributes(p.features, edges))
                    keeps[i] = np.array([t == "c" for t in tags])
    return keeps


def final(modes: Sequence[str]) -> None:
    sets = {
        "CleanEval test": load_cleaneval("test"),
        "Dragnet test split": [p for p in load_dragnet() if dragnet_split(p.name) == "test"],
    }
    print("| set | mode | pages | macro F1 | precision | recall | labeller ms/page |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for set_name, all_pages in sets.items():
        pages = [p for p in all_pages if p.gold is not None]
        for mode in modes:
            settings = CleanerSettings(mode=mode)
            scores = []
            label_seconds = 0.0
            for page in pages:
                doc = clean_document(RawDocument(body=page.raw, id=page.name), settings=settings)
                label_seconds += doc.seconds.get("label", 0.0)
                scores.append(align_words(doc.text, page.gold))
            f1 = np.mean([a.f1 for a in scores])
            precision = np.mean([a.precision for a in scores])
            recall = np.mean([a.recall for a in scores])
            print(
                f"| {set_name} | {mode} | {len(pages)} | {f1:.4f} | {precision:.4f} | "
                f"{recall:.4f} | {label_seconds / len(pages) * 1000:.2f} |",
                flush=True,
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", nargs="?", choices=("corpus", "article"))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--final", action="store_true", help="score the held-out sets once")
    parser.add_argument("--crf", action="store_true", help="also a CRF (needs python-crfsuite)")
    args = parser.parse_args(argv)
    if args.final:
        final(("perplexity", "corpus", "article"))
    elif args.mode:
        cross_validation(args.mode, args.folds, crf=args.crf)
    else:
        parser.error("give a mode, or --final")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
