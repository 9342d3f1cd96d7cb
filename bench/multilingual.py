"""Zero-shot cross-lingual block labelling on the MultiBoilerNet data (issue 8).

Trains LightGBM on the English CleanEval training split (MultiBoilerNet's cleaneval/train,
54 pages) with the language-independent features of `stream_cleaner.block_features`, and scores
it, once, on the English test split, GoogleTrends test and zero-shot on the Chinese (cleaneval/zh),
Japanese (jp) and Thai (thai) pages. Three baselines use the same trees: the same features plus
language-dependent ones (words, case, ASCII, English stopwords); the tag-path features with
those language-dependent text features in place of the script-aware ones; and the tag-path
features alone. Boosting (gbdt, or dart at 15 leaves and a feature fraction of 0.5: `DART_GRID`),
leaves, feature fraction, tree count and threshold are chosen by 5-fold page-grouped
cross-validation over the English train and val pages (59 pages). One rule is
chosen on MultiBoilerNet's English GoogleTrends train and val pages (80 modern pages, the only
English pages with HTML5 containers; their test split stays a test set): which containers'
blocks are boilerplate whatever the trees say (`RULES`; the CleanEval pages have none of these
tags, so the cross-validation cannot see it). Nothing is chosen on a test set. What was
measured on the same English validation and not shipped (stacking, a sequence layer, more
features, other regularisation: `NOT_SHIPPED`, bench/multilingual_variants.py) goes into the
model's .meta.json.

Metrics, as MultiBoilerNet's evaluation (main.py ``test``) computes its "macro F1": per page,
the F1 of each class (boilerplate 0 and content 1, an empty class scoring 1), averaged over
pages per class, then the mean of the two classes (``macro``). Also reported: ``pooled``, the
same two-class mean over all blocks of a set at once (their ``--micro``), and ``content``, the
content class's F1 averaged over pages.

The shipped model averages three boosters trained with seeds 1, 2 and 3 (``--seeds 3``): one
seed's zero-shot figures swing by up to 0.05. ``--seed`` and ``--drop`` measure the noise and
what features bring.

    PYTHONPATH=$PWD .venv/bin/python bench/multilingual.py --seeds 3          # table
    PYTHONPATH=$PWD .venv/bin/python bench/multilingual.py --seeds 3 --save   # and ship it
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stream_cleaner.block_features import (
    BASELINE_FEATURE_NAMES,
    FEATURE_NAMES,
    LANGUAGE_FEATURES,
    TOP_TAGS,
    page_features,
    top_tags,
)
from stream_cleaner.labeller import BOILERPLATE_CONTAINERS, TreeEnsemble, container_mask
from stream_cleaner.multilingual_labeller import (
    MULTILINGUAL_FORMAT,
    MULTILINGUAL_MODEL,
    MultilingualLabeller,
)
from stream_cleaner.training import TRAIN_PARAMS, export_trees, page_folds

DATA = Path(__file__).resolve().parent.parent / ".cache" / "data" / "multiboilernet"
# MultiBoilerNet's zero-shot macro F1 (train on English CleanEval), and English-only BoilerNet's
PAPER = {"zh": (0.869, 0.404), "jp": (0.816, 0.490), "thai": (0.779, 0.688)}
TEST_SETS = {
    "en (cleaneval/test)": "cleaneval/test",
    "en (googletrends/test)": "googletrends/test",
    "zh": "cleaneval/zh",
    "jp": "jp",
    "thai": "thai",
}
VALIDATION = ("googletrends/train", "googletrends/val")
# boilerplate-container rules tried on VALIDATION, fewest tags first (ties keep the first)
RULES: dict[str, tuple[str, ...]] = {
    "none": (),
    "nav footer aside": BOILERPLATE_CONTAINERS,
    "nav footer aside header": (*BOILERPLATE_CONTAINERS, "header"),
}
# The cross-validation grid. Gradient boosting ("gbdt"): leaves, feature fraction (LightGBM
# samples this share of the features for each tree) and trees; a gbdt booster's first trees are
# the booster of fewer trees, so each (leaves, fraction) pair is trained once per fold, with the
# most trees, and truncated. Dart (trees dropped out while boosting, the kept ones rescaled)
# changes earlier trees as it adds new ones, so its first N trees are not an N-tree booster: one
# booster per tree count and fold, at the leaves and fraction the gbdt grid chose before dart was
# tried (DART_GRID; 100 and 200 trees, dart's default drop rate 0.1).
LEAVES, FEATURE_FRACTIONS, TREES = (7, 15), (0.8, 0.5), (50, 100, 200)
DART_GRID = ((15, 0.5, (100, 200)),)  # (leaves, feature fraction, tree counts)
THRESHOLDS = np.round(np.arange(-2.0, 2.01, 0.25), 2)
FOLDS = 5
# Measured on the same English validation (5-fold CV macro F1 on cleaneval train+val / macro F1 on
# GoogleTrends train+val with the nav/footer/aside rule; trees of 15 leaves, feature fraction 0.8,
# 200 trees, 3 seeds unless said; the model before these: CV 0.8131 / GT 0.7655) and not
# shipped, as none beats the chosen trees on both (bench/multilingual_variants.py reproduces
# them). No Japanese, Chinese or Thai page was scored to choose.
NOT_SHIPPED = {
    "stacking: second LightGBM on the features + out-of-fold first-stage scores of the block, "
    "its +-1..3 neighbours and +-2/+-5 window means (nested 5-fold CV)": "CV 0.8036, GT 0.7608",
    "stacking with page aggregates too (score less page median, mean score on the same tag "
    "path, page share above 0)": "CV 0.8015, GT 0.7554",
    "stacking on the scores alone": "CV 0.7956, GT 0.7575",
    "sequence layer: two-state Viterbi over the log-odds, switching probability and threshold "
    "chosen on the mean of CV and GT, over the chosen trees": "no switching penalty wins "
    "(CV 0.8194, GT 0.7709); best with one: stay 0.6, threshold 0.0, CV 0.8119, GT 0.7776",
    "moving mean of the log-odds over +-1 blocks": "CV 0.8049, GT 0.7757",
    "same-tag-path width share, mean log width, sentence-end share": "CV 0.8168, GT 0.7527",
    "common tag-path prefix with the widest block, distance to it": "CV 0.8000, GT 0.7675",
    "width and sentence-end share in +-3/+-10 block windows": "CV 0.8114, GT 0.7518",
    "the three above together": "CV 0.8030, GT 0.7614",
    "top-tag counts less the page's median added": "CV 0.8107, GT 0.7694",
    "top-tag counts replaced by counts less the page's median": "CV 0.8057, GT 0.7672",
    "absolute depth (and its neighbour copies) dropped": "CV 0.8125, GT 0.7570",
    "feature fraction 0.3": "CV 0.8157, GT 0.7655",
    "min_data_in_leaf 50 / 100": "CV 0.8106, GT 0.7662 / CV 0.8116, GT 0.7633",
    "lambda_l2 10": "CV 0.8157, GT 0.7654",
    "learning rate 0.05, 400 trees": "CV 0.8104, GT 0.7696",
    "extra_trees": "CV 0.8114, GT 0.7618",
    # bench/multilingual_article.py --seeds 5 --sets 3: means over three disjoint sets of five
    # seeds (from 1, 101, 201), the shipped trees (15 leaves, fraction 0.5, 100 trees) with the
    # shipped features giving CV 0.8128, GT 0.7679 there (one set of three seeds: CV
    # 0.8095-0.8194, GT 0.7649-0.7709, the shipped seeds 1-3 the best of three sets)
    "width less the page's widest block's, width share of the parent and grandparent (ancestors "
    "from the tag paths: a subtree is a contiguous run of blocks)": "CV 0.8148, GT 0.7669",
    "widest block: in its parent / grandparent, tree and block distance to it": "CV 0.8097, "
    "GT 0.7720",
    "readability's main node (long blocks score their parent fully, grandparent by half): "
    "inside, depth below, tags to it, block gap, its text share": "CV 0.8003, GT 0.7705",
    "the deepest node with half the text outside links: the same relations": "CV 0.8047, GT 0.7692",
    "width features + readability's main node": "CV 0.8079, GT 0.7738",
    "all the article-centric features above": "CV 0.8087, GT 0.7679",
    "is_unbalance": "CV 0.8133, GT 0.7686",
    "scale_pos_weight 0.5 / 2": "CV 0.8128, GT 0.7704 / CV 0.8124, GT 0.7688",
    "monotone constraint: link density lowers the score": "CV 0.8122, GT 0.7700",
    "dart, 100 trees": "CV 0.8044, GT 0.7696",
    "dart, 200 trees (beat the shipped trees on both means here, so it went into the grid, "
    "DART_GRID, which did not choose it: below)": "CV 0.8142, GT 0.7722",
    # the grid with dart (bench/multilingual_article.py grid): CV of three boosters from seeds
    # 1 / 101 / 201; the grid chooses the first in each set
    "dart in the cross-validation grid (15 leaves, fraction 0.5, 100 or 200 trees, one booster "
    "per tree count): not chosen": "dart 200 trees CV 0.8137 / 0.8163 / 0.8116 (mean 0.8139), "
    "dart 100 trees 0.8038 / 0.8055 / 0.8050, against gbdt 100 trees 0.8194 / 0.8095 / 0.8147 "
    "(mean 0.8145); the grid chooses gbdt 100 trees with seeds 1-3 (the shipped model) and "
    "201-203, dart 200 trees with 101-103 (gbdt's best there: 200 trees, 0.8134)",
    "5 or 10 boosters instead of 3 (three seed sets each)": "CV 0.8128 / 0.8143, GT 0.7680 / "
    "0.7685 on average (3: 0.8145, 0.7681); spread over the sets CV 0.0054 / 0.0050, GT 0.0064 "
    "/ 0.0030 (3: 0.0099, 0.0060): the same expected figures, at 1.7 / 3.3 times the trees",
}


@dataclass
class Page:
    name: str
    paths: list[str]
    texts: list[str]
    depths: list[int] | None
    labels: np.ndarray

    def features(self, language_features: bool = False) -> np.ndarray:
        return page_features(
            self.paths, self.texts, depths=self.depths, language_features=language_features
        )


def load_set(name: str) -> list[Page]:
    """The pages of a MultiBoilerNet set (``cleaneval/train``, ``jp``...), by file number."""
    folder = DATA / name
    if not folder.is_dir():
        sys.exit(f"{folder} missing: run bash bench/setup-data.sh")
    pages = []
    files = sorted(folder.glob("*.csv"), key=lambda p: (len(p.stem), p.stem))
    for path in files:
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        has_depth = bool(rows) and "depth" in rows[0]
        pages.append(
            Page(
                name=f"{name}/{path.stem}",
                paths=[r["tag"] for r in rows],
                texts=[r["content"] or "" for r in rows],
                depths=[int(r["depth"]) for r in rows] if has_depth else None,
                labels=np.array([int(r["label"]) for r in rows], dtype=np.int64),
            )
        )
    return pages


def class_f1(truth: np.ndarray, pred: np.ndarray, cls: int) -> float:
    """F1 of one class; 1 when the class is neither present nor predicted (zero_division=1)."""
    t, p = truth == cls, pred == cls
    tp = float(np.sum(t & p))
    denominator = 2 * tp + float(np.sum(p & ~t)) + float(np.sum(t & ~p))
    return 1.0 if denominator == 0 else 2 * tp / denominator


def scores_of(pages: list[Page], preds: list[np.ndarray]) -> dict[str, float]:
    """``macro`` (MultiBoilerNet's), ``pooled`` and ``content`` F1 of a set's predictions."""
    pairs = zip(pages, preds, strict=True)
    per_page = np.array([[class_f1(p.labels, k, 0), class_f1(p.labels, k, 1)] for p, k in pairs])
    truth = np.concatenate([p.labels for p in pages])
    pred = np.concatenate(preds)
    return {
        "macro": float(per_page.mean(axis=0).mean()),
        "pooled": (class_f1(truth, pred, 0) + class_f1(truth, pred, 1)) / 2,
        "content": float(per_page[:, 1].mean()),
    }


SEED = TRAIN_PARAMS["seed"]
SEEDS = 1  # boosters averaged, seeds SEED, SEED + 1...


def params_of(
    leaves: int, fraction: float = TRAIN_PARAMS["feature_fraction"], boosting: str = "gbdt"
) -> dict[str, Any]:
    return {
        **TRAIN_PARAMS, "boosting": boosting, "num_leaves": leaves, "max_depth": -1,
        "learning_rate": 0.1, "feature_fraction": fraction, "seed": SEED,
    }  # fmt: skip


def fit(
    x: np.ndarray,
    y: np.ndarray,
    leaves: int,
    fraction: float,
    trees: int,
    *,
    boosting: str = "gbdt",
) -> list[Any]:
    """`SEEDS` boosters, one per seed from `SEED`: their mean score is the model's."""
    import lightgbm

    return [
        lightgbm.train(
            {**params_of(leaves, fraction, boosting), "seed": SEED + k},
            lightgbm.Dataset(x, y),
            num_boost_round=trees,
        )
        for k in range(SEEDS)
    ]


def raw_scores(boosters: list[Any], x: np.ndarray, trees: int | None = None) -> np.ndarray:
    """The boosters' mean raw score, with their first ``trees`` trees (default all)."""
    return np.mean([b.predict(x, raw_score=True, num_iteration=trees) for b in boosters], axis=0)


def merged_trees(boosters: list[Any]) -> dict[str, Any]:
    """The trees of all ``boosters`` as one ensemble whose sum is their mean score."""
    merged: dict[str, Any] = {key: [] for key in ("feature", "split", "left", "right", "value")}
    merged["roots"], merged["depth"] = [], 0
    for booster in boosters:
        trees = export_trees(booster)
        offset = len(merged["feature"])
        merged["feature"] += trees["feature"]
        merged["split"] += trees["split"]
        merged["left"] += [i + offset for i in trees["left"]]
        merged["right"] += [i + offset for i in trees["right"]]
        # leaf values to 7 significant digits: the sum moves by far less than a threshold step
        merged["value"] += [float(f"{v / len(boosters):.7g}") for v in trees["value"]]
        merged["roots"] += [i + offset for i in trees["roots"]]
        merged["depth"] = max(merged["depth"], trees["depth"])
    return merged


GRID_CV: dict[str, tuple[float, float]] = {}  # the last `choose`: best threshold, CV macro F1
# boosting, leaves, feature fraction, trees, threshold, CV macro F1
Choice = tuple[str, int, float, int, float, float]


def grid() -> list[tuple[str, int, float, tuple[int, ...]]]:
    """(boosting, leaves, fraction, tree counts) of each booster family the grid tries."""
    gbdt = [("gbdt", n, f, TREES) for n in LEAVES for f in FEATURE_FRACTIONS]
    return gbdt + [("dart", n, f, trees) for n, f, trees in DART_GRID]


def choose(pages: list[Page], mats: list[np.ndarray]) -> Choice:
    """Boosting, leaves, feature fraction, trees and threshold with the best cross-validated
    macro F1 (page folds; ties keep the first tried: gbdt before dart, fewer leaves and trees)."""
    fold = page_folds(pages, FOLDS)
    best: Choice = ("gbdt", 0, 0.0, 0, 0.0, -1.0)
    GRID_CV.clear()
    for boosting, leaves, fraction, tree_counts in grid():
        oof = {trees: [np.zeros(0)] * len(pages) for trees in tree_counts}
        for k in range(FOLDS):
            train = [i for i, f in enumerate(fold) if f != k]
            x = np.vstack([mats[i] for i in train])
            y = np.concatenate([pages[i].labels for i in train])
            if boosting == "gbdt":  # one booster, truncated to each tree count
                boosters = fit(x, y, leaves, fraction, max(tree_counts))
                for i, f in enumerate(fold):
                    if f == k:
                        for trees in tree_counts:
                            oof[trees][i] = raw_scores(boosters, mats[i], trees)
            else:  # dart: a booster per tree count, never truncated
                for trees in tree_counts:
                    boosters = fit(x, y, leaves, fraction, trees, boosting=boosting)
                    for i, f in enumerate(fold):
                        if f == k:
                            oof[trees][i] = raw_scores(boosters, mats[i])
        for trees in tree_counts:
            key = f"{leaves} leaves, fraction {fraction}, {trees} trees"
            key = key if boosting == "gbdt" else f"dart, {key}"
            for threshold in THRESHOLDS:
                macro = scores_of(pages, [s > threshold for s in oof[trees]])["macro"]
                if macro > GRID_CV.get(key, (0.0, -1.0))[1]:
                    GRID_CV[key] = (float(threshold), round(macro, 4))
                if macro > best[5] + 1e-9:
                    best = (boosting, leaves, fraction, trees, float(threshold), macro)
    return best


@dataclass
class Scorer:
    """A variant's predictions, its raw scores computed once per set."""

    ensemble: TreeEnsemble
    threshold: float
    language: bool
    columns: list[int] | None
    scored: dict[str, list[np.ndarray]] | None = None

    def predict(self, label: str, pages: list[Page], containers: tuple[str, ...]) -> list:
        """Content per block of each page: score above the threshold, not in ``containers``."""
        if self.scored is None:
            self.scored = {}
        if label not in self.scored:
            mats = [p.features(self.language) for p in pages]
            if self.columns is not None:
                mats = [m[:, self.columns] for m in mats]
            self.scored[label] = [self.ensemble.raw_scores(m) for m in mats]
        return [
            (s > self.threshold) & ~container_mask(p.paths, containers)
            for p, s in zip(pages, self.scored[label], strict=True)
        ]


def spec_of(
    boosters: list[Any],
    names: tuple[str, ...],
    threshold: float,
    boilerplate: tuple[str, ...] = (),
    **meta: Any,
) -> dict:
    return {
        "format": MULTILINGUAL_FORMAT,
        "features": list(names),
        "top_tags": list(TOP_TAGS),
        "language_features": names == BASELINE_FEATURE_NAMES,
        "threshold": threshold,
        "boilerplate_containers": list(boilerplate),
        **merged_trees(boosters),
        **meta,
    }


def main() -> None:
    global SEED, SEEDS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--save", action="store_true", help=f"write {MULTILINGUAL_MODEL.name}")
    parser.add_argument(
        "--seed",
        type=int,
        default=TRAIN_PARAMS["seed"],
        help="LightGBM's seed (bagging, feature sampling)",
    )
    parser.add_argument(
        "--seeds", type=int, default=SEEDS, help="boosters averaged, one per seed (default 1)"
    )
    parser.add_argument(
        "--drop",
        default="",
        metavar="NAME,...",
        help="leave these features (and their neighbour copies) out of the multilingual "
        "variant, to measure what they bring",
    )
    args = parser.parse_args()
    SEED, SEEDS = args.seed, args.seeds
    drop = {name for name in args.drop.split(",") if name}
    if drop - set(FEATURE_NAMES):
        sys.exit(f"unknown features: {sorted(drop - set(FEATURE_NAMES))}")
    if drop and args.save:
        sys.exit("--save ships the model of every feature: not with --drop")
    kept = [i for i, name in enumerate(FEATURE_NAMES) if name.split("@")[0] not in drop]

    train, val = load_set("cleaneval/train"), load_set("cleaneval/val")
    derived = top_tags(path for p in train for path in p.paths)
    if derived != TOP_TAGS:
        sys.exit(f"TOP_TAGS differ from the training split's: {derived}")
    dev = train + val
    tags_only = [
        i
        for i, name in enumerate(FEATURE_NAMES)
        if name.split("@")[0].startswith(("tag_", "last_"))
        or name.split("@")[0] in ("depth", "in_link", "link_density", "tags_closed", "tags_opened")
    ]
    english_style = tags_only + [BASELINE_FEATURE_NAMES.index(n) for n in LANGUAGE_FEATURES]
    variants = {
        "multilingual": (False, kept if drop else None),
        "+ language features": (True, None),
        "tag path + words (no script-aware)": (True, english_style),
        "tag path only": (False, tags_only),
    }
    validation = [p for name in VALIDATION for p in load_set(name)]
    tests: dict[str, list[Page]] | None = None  # read once the rule is chosen
    results: dict[str, dict[str, dict[str, float]]] = {}
    chosen: dict[str, Choice] = {}
    rule_scores: dict[str, float] = {}
    rule = ()
    for variant, (language, columns) in variants.items():
        mats = [p.features(language) for p in dev]
        if columns is not None:
            mats = [m[:, columns] for m in mats]
        boosting, leaves, fraction, trees, threshold, cv = chosen[variant] = choose(dev, mats)
        grid_cv = dict(GRID_CV)
        if variant == "multilingual":
            shipped_grid = grid_cv
        n_train = len(train)
        boosters = fit(
            np.vstack(mats[:n_train]),
            np.concatenate([p.labels for p in train]),
            leaves,
            fraction,
            trees,
            boosting=boosting,
        )
        names = BASELINE_FEATURE_NAMES if language else FEATURE_NAMES
        ensemble = TreeEnsemble(spec_of(boosters, names, threshold))
        scorer = Scorer(ensemble, threshold, language, columns)
        predict = scorer.predict

        if variant == "multilingual":  # the rule, on validation pages only
            for rule_name, containers in RULES.items():
                preds = predict("validation", validation, containers)
                rule_scores[rule_name] = scores_of(validation, preds)["macro"]
            best = max(rule_scores.values())
            rule = next(RULES[k] for k, v in rule_scores.items() if v >= best - 1e-9)
            tests = {label: load_set(name) for label, name in TEST_SETS.items()}
        assert tests is not None
        spec = spec_of(boosters, names, threshold, rule)
        results[variant] = {
            "en (googletrends/train+val, validation)": scores_of(
                validation, predict("validation", validation, rule)
            )
        }
        for label, pages in tests.items():
            results[variant][label] = scores_of(pages, predict(label, pages, rule))
        if variant == "multilingual":
            shipped = spec
            if args.save:
                meta = {
                    "trained_on": "MultiBoilerNet cleaneval/train (54 English CleanEval pages, "
                    f"{sum(len(p.texts) for p in train)} blocks)",
                    "choices": "5-fold page-grouped CV over cleaneval/train + cleaneval/val: "
                    f"{boosting}, {leaves} leaves, feature fraction {fraction}, {trees} trees, "
                    f"threshold {threshold} "
                    f"(CV macro F1 {cv:.3f}); boilerplate containers "
                    f"{' '.join(rule) or 'none'} by macro F1 on GoogleTrends train + val "
                    + ", ".join(f"{k}: {v:.4f}" for k, v in rule_scores.items()),
                    "cv_grid": {
                        k: f"threshold {t}, CV macro F1 {v}" for k, (t, v) in grid_cv.items()
                    },
                    "measured_not_shipped": NOT_SHIPPED,
                    "params": {
                        **params_of(leaves, fraction, boosting),
                        "num_boost_round": trees,
                    },
                    "seeds": f"{SEEDS} boosters averaged, seeds {SEED} to {SEED + SEEDS - 1}",
                    "metric": "MultiBoilerNet macro F1: per-page per-class F1, page mean, "
                    "class mean",
                    "test": {k: round(v["macro"], 4) for k, v in results[variant].items()},
                    "command": "PYTHONPATH=$PWD .venv/bin/python bench/multilingual.py "
                    f"--seeds {SEEDS} --save",
                }
                # the GRUs of bench/multilingual_sequence.py stay: they were chosen beside
                # these trees (its `save` refuses other trees), so retrain them after a change
                before = json.loads(MULTILINGUAL_MODEL.read_text(encoding="utf-8"))
                meta_path = Path(f"{MULTILINGUAL_MODEL}.meta.json")
                if "sequence" in before:
                    spec = {**spec, "sequence": before["sequence"]}
                    meta["sequence"] = json.loads(meta_path.read_text())["sequence"]
                    print("- kept the file's sequence layer; if the trees changed, run "
                          "bench/multilingual_sequence.py save again")  # fmt: skip
                MULTILINGUAL_MODEL.write_text(
                    json.dumps(spec, separators=(",", ":")), encoding="utf-8"
                )
                meta_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    # speed of the shipped variant: features + trees, page by page, as the pipeline would
    labeller = MultilingualLabeller(shipped)
    pages = [p for label in TEST_SETS for p in tests[label]]
    page_features(["html body p"], ["warm-up"])  # builds the character tables once
    start = time.perf_counter()
    for p in pages:
        labeller.predict_features(p.features(), p.paths)
    elapsed = time.perf_counter() - start
    n_blocks = sum(len(p.texts) for p in pages)

    print("| set | pages | blocks | content share | model | macro F1 | pooled | content F1 "
          "| paper MultiBoilerNet | paper BoilerNet |")  # fmt: skip
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    sets = {"en (googletrends/train+val, validation)": validation, **tests}
    for label, pages_of_set in sets.items():
        blocks = sum(len(p.texts) for p in pages_of_set)
        share = np.concatenate([p.labels for p in pages_of_set]).mean()
        paper = PAPER.get(label)
        for variant in variants:
            r = results[variant][label]
            print(
                f"| {label} | {len(pages_of_set)} | {blocks} | {share:.3f} | {variant} "
                f"| {r['macro']:.3f} | {r['pooled']:.3f} | {r['content']:.3f} "
                f"| {paper[0] if paper else '-'} | {paper[1] if paper else '-'} |"
            )
    print()
    for variant, (boosting, leaves, fraction, trees, threshold, cv) in chosen.items():
        print(
            f"- {variant}: {boosting}, {leaves} leaves, feature fraction {fraction}, "
            f"{trees} trees, threshold {threshold:+.2f} "
            f"(5-fold CV macro F1 on EN train+val {cv:.3f})"
        )
    print(
        "- multilingual variant's CV grid (best threshold each): "
        + "; ".join(f"{k} {v:.4f}" for k, (_, v) in shipped_grid.items())
    )
    print(
        "- boilerplate containers, multilingual variant's macro F1 on GoogleTrends train + val: "
        + ", ".join(f"{k} {v:.4f}" for k, v in rule_scores.items())
        + f" -> {' '.join(rule) or 'none'}"
    )
    print(
        f"- speed (multilingual, features + trees, one page at a time, {len(pages)} pages): "
        f"{n_blocks / elapsed:,.0f} blocks/s, {1000 * elapsed / len(pages):.2f} ms/page"
    )


if __name__ == "__main__":
    main()
