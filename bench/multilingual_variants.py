"""What else was tried for the multilingual labeller, on English validation only (issue 8).

Reproduces `multilingual.NOT_SHIPPED`: each variant's 5-fold page-grouped CV macro F1 over
MultiBoilerNet's English cleaneval train + val (threshold chosen on it) and its macro F1 on the
English GoogleTrends train + val pages (trained on cleaneval/train, that threshold, the
nav/footer/aside rule). No Japanese, Chinese or Thai page is read here.

- ``stacking``: a second LightGBM whose extra features are out-of-fold first-stage scores of the
  block, its neighbours (+-1..3) and window means (+-2, +-5) ("auto-context", the sequence layer
  MultiBoilerNet's BiLSTM or Victor's CRF play); ``page`` adds page aggregates, ``only`` keeps
  the scores alone. Nested CV: the first stage's scores of a fold's training pages are themselves
  out of fold.
- ``viterbi``: a two-state sequence layer over the log-odds (a switch costs log((1-stay)/stay)),
  stay and threshold chosen on the mean of CV and GoogleTrends.
- ``features``: extra language-independent features (same-path aggregates, the widest block's
  path, windows, page-relative tag counts, no absolute depth).
- ``regularisation``: LightGBM settings.

    PYTHONPATH=$PWD .venv/bin/python bench/multilingual_variants.py stacking   # ~4 min
    PYTHONPATH=$PWD .venv/bin/python bench/multilingual_variants.py viterbi features regularisation
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Callable
from typing import Any

import lightgbm
import numpy as np
from multilingual import FOLDS, THRESHOLDS, VALIDATION, Page, load_set, params_of, scores_of

from stream_cleaner.block_features import FEATURE_NAMES, TOP_TAGS
from stream_cleaner.labeller import BOILERPLATE_CONTAINERS, container_mask

SEEDS = 3
FIRST_SEED = 1
PAD = -10.0
COL = {name: i for i, name in enumerate(FEATURE_NAMES)}


def fit(x: np.ndarray, y: np.ndarray, params: dict[str, Any], trees: int) -> list[Any]:
    return [
        lightgbm.train(
            {**params_of(15), **params, "seed": FIRST_SEED + k},
            lightgbm.Dataset(x, y),
            num_boost_round=trees,
        )
        for k in range(SEEDS)
    ]


def score(boosters: list[Any], x: np.ndarray, trees: int | None = None) -> np.ndarray:
    return np.mean([b.predict(x, raw_score=True, num_iteration=trees) for b in boosters], axis=0)


def folds(pages: list[Page], salt: str = "") -> list[int]:
    return [
        int(hashlib.sha256((salt + p.name).encode()).hexdigest()[:8], 16) % FOLDS for p in pages
    ]


def with_rule(pages: list[Page], preds: list[np.ndarray]) -> list[np.ndarray]:
    return [
        k & ~container_mask(p.paths, BOILERPLATE_CONTAINERS)
        for p, k in zip(pages, preds, strict=True)
    ]


def best_threshold(pages: list[Page], scores: list[np.ndarray]) -> tuple[float, float]:
    best = (0.0, -1.0)
    for t in THRESHOLDS:
        macro = scores_of(pages, [s > t for s in scores])["macro"]
        if macro > best[1] + 1e-9:
            best = (float(t), macro)
    return best


class Data:
    def __init__(self) -> None:
        train, val = load_set("cleaneval/train"), load_set("cleaneval/val")
        self.dev, self.n_train = train + val, len(train)
        self.gt = [p for name in VALIDATION for p in load_set(name)]
        self.fold = folds(self.dev)

    def oof_and_gt(
        self, featfn: Callable[[Page], np.ndarray], params: dict[str, Any], trees: int
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Out-of-fold scores of the dev pages; GoogleTrends scores of the cleaneval/train model."""
        mats = [featfn(p) for p in self.dev]
        oof: list[np.ndarray] = [np.zeros(0)] * len(self.dev)
        for k in range(FOLDS):
            tr = [i for i, f in enumerate(self.fold) if f != k]
            b = fit(
                np.vstack([mats[i] for i in tr]),
                np.concatenate([self.dev[i].labels for i in tr]),
                params,
                trees,
            )
            for i, f in enumerate(self.fold):
                if f == k:
                    oof[i] = score(b, mats[i])
        n = self.n_train
        b = fit(
            np.vstack(mats[:n]), np.concatenate([p.labels for p in self.dev[:n]]), params, trees
        )
        return oof, [score(b, featfn(p)) for p in self.gt]

    def report(self, tag: str, oof: list[np.ndarray], gt: list[np.ndarray]) -> None:
        t, cv = best_threshold(self.dev, oof)
        g = scores_of(self.gt, with_rule(self.gt, [s > t for s in gt]))["macro"]
        print(f"- {tag}: threshold {t:+.2f}, CV {cv:.4f}, GT {g:.4f}", flush=True)


def stack_features(s: np.ndarray, paths: list[str], page: bool) -> np.ndarray:
    n = len(s)
    cols = [s]
    padded = np.concatenate([np.full(3, PAD), s, np.full(3, PAD)])
    cols += [padded[3 + o : 3 + o + n] for o in (-3, -2, -1, 1, 2, 3)]
    cum = np.concatenate([[0.0], np.cumsum(s)])
    for w in (2, 5):
        lo, hi = np.maximum(np.arange(n) - w, 0), np.minimum(np.arange(n) + w + 1, n)
        cols.append((cum[hi] - cum[lo]) / (hi - lo))
    if page:
        ids: dict[str, int] = {}
        pid = np.array([ids.setdefault(p, len(ids)) for p in paths])
        cols += [
            s - np.median(s),
            np.bincount(pid, s)[pid] / np.bincount(pid)[pid],
            np.full(n, np.mean(s > 0)),
        ]
    return np.column_stack(cols)


def stacking(data: Data) -> None:
    dev, mats = data.dev, [p.features() for p in data.dev]
    kinds = {"stacking": "nbr", "stacking with page aggregates": "page", "scores alone": "only"}
    grid = [(7, 100), (15, 200)]

    def second(pages: list[Page], xs: list[np.ndarray], s1: list[np.ndarray], kind: str):
        out = []
        for p, x, s in zip(pages, xs, s1, strict=True):
            st = stack_features(s, p.paths, kind == "page")
            out.append(st if kind == "only" else np.hstack([x, st]))
        return out

    def first_oof(idx: list[int], salt: str) -> dict[int, np.ndarray]:
        f = folds([dev[i] for i in idx], salt)
        out = {}
        for k in range(FOLDS):
            tr = [i for i, ff in zip(idx, f, strict=True) if ff != k]
            b = fit(np.vstack([mats[i] for i in tr]), np.concatenate([dev[i].labels for i in tr]),
                    {}, 200)  # fmt: skip
            out.update({i: score(b, mats[i]) for i, ff in zip(idx, f, strict=True) if ff == k})
        return out

    oof: dict[tuple[str, tuple[int, int]], list[np.ndarray]] = {
        (k, g): [np.zeros(0)] * len(dev) for k in kinds.values() for g in grid
    }
    for k in range(FOLDS):
        tr = [i for i, f in enumerate(data.fold) if f != k]
        te = [i for i, f in enumerate(data.fold) if f == k]
        b1 = fit(np.vstack([mats[i] for i in tr]), np.concatenate([dev[i].labels for i in tr]),
                 {}, 200)  # fmt: skip
        inner = first_oof(tr, f"inner{k}")
        for kind in kinds.values():
            x_tr = second([dev[i] for i in tr], [mats[i] for i in tr], [inner[i] for i in tr], kind)
            x_te = second([dev[i] for i in te], [mats[i] for i in te],
                          [score(b1, mats[i]) for i in te], kind)  # fmt: skip
            for leaves, trees in grid:
                b2 = fit(np.vstack(x_tr), np.concatenate([dev[i].labels for i in tr]),
                         {"num_leaves": leaves}, trees)  # fmt: skip
                for j, i in enumerate(te):
                    oof[kind, (leaves, trees)][i] = score(b2, x_te[j])
    n = data.n_train
    b1 = fit(np.vstack(mats[:n]), np.concatenate([p.labels for p in dev[:n]]), {}, 200)
    inner = first_oof(list(range(n)), "final")
    gt_mats = [p.features() for p in data.gt]
    gt1 = [score(b1, x) for x in gt_mats]
    for tag, kind in kinds.items():
        x_tr = second(dev[:n], mats[:n], [inner[i] for i in range(n)], kind)
        x_gt = second(data.gt, gt_mats, gt1, kind)
        for leaves, trees in grid:
            b2 = fit(np.vstack(x_tr), np.concatenate([p.labels for p in dev[:n]]),
                     {"num_leaves": leaves}, trees)  # fmt: skip
            data.report(f"{tag}, second stage {leaves} leaves {trees} trees",
                        oof[kind, (leaves, trees)], [score(b2, x) for x in x_gt])  # fmt: skip


def viterbi(s: np.ndarray, threshold: float, stay: float) -> np.ndarray:
    """The most likely content/boilerplate sequence: emissions the log-odds less the threshold,
    a switch between neighbours costing log((1 - stay) / stay)."""
    e = s - threshold
    switch = np.log((1 - stay) / stay)
    v0, v1 = 0.0, float(e[0])
    back = np.zeros((len(s), 2), dtype=bool)
    for i in range(1, len(s)):
        back[i, 0] = v1 + switch > v0
        back[i, 1] = v0 + switch <= v1
        v0, v1 = max(v0, v1 + switch), max(v0 + switch, v1) + float(e[i])
    out = np.zeros(len(s), dtype=bool)
    state = v1 > v0
    for i in range(len(s) - 1, -1, -1):
        out[i] = state
        state = back[i, int(state)]
    return out


def sequence(data: Data) -> None:
    for tag, params, trees in (
        ("15 leaves, fraction 0.8, 200 trees", {}, 200),
        ("15 leaves, fraction 0.5, 100 trees", {"feature_fraction": 0.5}, 100),
    ):
        oof, gt = data.oof_and_gt(lambda p: p.features(), params, trees)
        rows = []
        for stay in (0.5, 0.55, 0.6, 0.65, 0.7, 0.8):
            for t in THRESHOLDS:
                cv = scores_of(data.dev, [viterbi(s, t, stay) for s in oof])["macro"]
                g = scores_of(data.gt, with_rule(data.gt, [viterbi(s, t, stay) for s in gt]))
                rows.append(((cv + g["macro"]) / 2, stay, t, cv, g["macro"]))
        rows.sort(reverse=True)
        for mean, stay, t, cv, g in rows[:3]:
            print(f"- viterbi over {tag}: stay {stay} threshold {t:+.2f}: CV {cv:.4f}, "
                  f"GT {g:.4f}, mean {mean:.4f}")  # fmt: skip
        cum = [np.concatenate([[0.0], np.cumsum(s)]) for s in oof + gt]

        def mean1(s: np.ndarray, c: np.ndarray) -> np.ndarray:
            n = len(s)
            lo, hi = np.maximum(np.arange(n) - 1, 0), np.minimum(np.arange(n) + 2, n)
            return 0.5 * s + 0.5 * (c[hi] - c[lo]) / (hi - lo)

        smoothed = [mean1(s, c) for s, c in zip(oof + gt, cum, strict=True)]
        data.report(f"moving mean +-1 over {tag}", smoothed[: len(oof)], smoothed[len(oof) :])


def extra(p: Page, x: np.ndarray, which: str) -> np.ndarray:
    n = len(p.texts)
    w = np.expm1(x[:, COL["log_width"]])
    ends = x[:, COL["ends_sentence"]]
    ids: dict[str, int] = {}
    pid = np.array([ids.setdefault(q, len(ids)) for q in p.paths])
    cnt = np.bincount(pid)
    cols = []
    if "path" in which:
        cols += [
            np.bincount(pid, w)[pid] / max(w.sum(), 1.0),
            np.bincount(pid, x[:, COL["log_width"]])[pid] / cnt[pid],
            np.bincount(pid, ends)[pid] / cnt[pid],
        ]
    if "main" in which:
        j = int(np.argmax(w))
        main = p.paths[j].split()
        common = []
        for q in p.paths:
            c = 0
            for a, b in zip(q.split(), main, strict=False):
                if a != b:
                    break
                c += 1
            common.append(c)
        common_a = np.array(common, dtype=float)
        depth = np.array([len(q.split()) for q in p.paths], dtype=float)
        cols += [common_a / max(len(main), 1), depth - common_a, (np.arange(n) - j) / max(n, 1)]
    if "window" in which:
        cw = np.concatenate([[0.0], np.cumsum(w)])
        ce = np.concatenate([[0.0], np.cumsum(ends)])
        for r in (3, 10):
            lo, hi = np.maximum(np.arange(n) - r, 0), np.minimum(np.arange(n) + r + 1, n)
            cols += [np.log1p(cw[hi] - cw[lo]), (ce[hi] - ce[lo]) / (hi - lo)]
    return np.column_stack(cols)


def features(data: Data) -> None:
    tags = [COL[f"tag_{t}"] for t in TOP_TAGS]
    depth = [i for name, i in COL.items() if name.split("@")[0] == "depth"]

    def relative(x: np.ndarray) -> np.ndarray:
        return x[:, tags] - np.median(x[:, tags], axis=0)

    def replaced(p: Page) -> np.ndarray:
        x = p.features()
        x[:, tags] = relative(x)
        return x

    variants: dict[str, Callable[[Page], np.ndarray]] = {
        "same-path aggregates": lambda p: np.hstack([x := p.features(), extra(p, x, "path")]),
        "widest block's path": lambda p: np.hstack([x := p.features(), extra(p, x, "main")]),
        "windows": lambda p: np.hstack([x := p.features(), extra(p, x, "window")]),
        "the three": lambda p: np.hstack([x := p.features(), extra(p, x, "path main window")]),
        "tag counts less page median added": lambda p: np.hstack([x := p.features(), relative(x)]),
        "tag counts replaced": replaced,
        "no absolute depth": lambda p: np.delete(p.features(), depth, axis=1),
    }
    for tag, featfn in variants.items():
        data.report(tag, *data.oof_and_gt(featfn, {}, 200))


def regularisation(data: Data) -> None:
    for tag, params, trees in (
        ("as shipped before: 15 leaves, fraction 0.8", {}, 200),
        ("feature fraction 0.5", {"feature_fraction": 0.5}, 200),
        ("feature fraction 0.3", {"feature_fraction": 0.3}, 200),
        ("min_data_in_leaf 50", {"min_data_in_leaf": 50}, 200),
        ("min_data_in_leaf 100", {"min_data_in_leaf": 100}, 200),
        ("lambda_l2 10", {"lambda_l2": 10.0}, 200),
        ("learning rate 0.05", {"learning_rate": 0.05}, 400),
        ("extra_trees", {"extra_trees": True}, 200),
    ):
        data.report(
            f"{tag}, {trees} trees", *data.oof_and_gt(lambda p: p.features(), params, trees)
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    choices = {"stacking": stacking, "viterbi": sequence, "features": features,
               "regularisation": regularisation}  # fmt: skip
    parser.add_argument("what", nargs="+", choices=choices)
    args = parser.parse_args()
    data = Data()
    for what in args.what:
        print(f"## {what}")
        choices[what](data)


if __name__ == "__main__":
    main()
