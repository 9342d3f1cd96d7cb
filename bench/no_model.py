"""What the block labeller keeps when no language model scores a page, and the neutral log10
perplexity its perplexity features get then (a labeller file's ``unscored_log_ppl``; without
one, `labeller.UNSCORED_LOG_PPL`; `training.UNSCORED_LOG_PPL_BY_MODE` per mode).

Pages in a language without a model have no perplexity; the labeller still needs values for
its perplexity features. By default this cleans CleanEval dev (never test) as if no model
existed for its language, for several candidate values, and prints the word-alignment F1 of
each, next to the figure with the English model. The shipped labellers were trained on dev,
so those figures are in-sample.

``--oof MODE`` measures out of fold instead: the labeller's training pages (CleanEval dev for
corpus; the Dragnet train split and GoogleTrends train for article) in five page-grouped
folds, boosters trained as the labeller was, with the English model; each fold's held-out
pages scored with no model, for each candidate, at the shipped labeller's threshold and rule.
For article, the shipped labeller also cleans GoogleTrends val with no model (after
bench/googletrends_pages.py). ``--seed N`` trains the fold boosters with LightGBM seed N
(default 1, as the shipped labellers), to see how much of a difference between candidates one
seed makes; the shipped labeller's validation figures do not depend on it.

    .venv/bin/python bench/no_model.py [--path .cache/data/cleaneval/dev]
    .venv/bin/python bench/no_model.py --oof article [--seed N]     # ~3 min
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from stream_cleaner import CleanerSettings, labeller, pipeline, training
from stream_cleaner.evaluate import clean_pages, read_pages, score_outputs

CANDIDATES = (2.0, 2.5, 3.0, 3.5, 4.0, 5.0)
DATA = Path(".cache/data")
TRAINING_SETS = {
    "corpus": [("CleanEval dev", DATA / "cleaneval" / "dev", None)],
    "article": [
        ("Dragnet train", DATA / "dragnet", "train"),
        ("GoogleTrends train", DATA / "googletrends-pages" / "train", None),
    ],
}
FOLDS = 5


def clean_without_model(pages, settings: CleanerSettings, value: float | None) -> dict[str, str]:
    """The outputs with every sentence in a language without a model, the mode's labeller
    giving them ``value`` (``None``: the English model scores them as usual)."""
    scored = pipeline._Run._score_sentences
    if value is None:
        return clean_pages(pages, settings)
    if settings.mode == "perplexity":  # no labeller: nothing takes the value
        value = labeller.UNSCORED_LOG_PPL

    def no_model(run, texts, languages):  # every sentence in a language without a model
        return scored(run, texts, ["zz"] * len(texts))

    shipped = labeller.load_labeller("corpus" if settings.mode == "perplexity" else settings.mode)
    before = shipped.unscored_log_ppl
    shipped.unscored_log_ppl = value
    pipeline._Run._score_sentences = no_model
    try:
        return clean_pages(pages, settings)
    finally:
        pipeline._Run._score_sentences = scored
        shipped.unscored_log_ppl = before


def in_sample(path: str) -> None:
    pages = [page for page in read_pages(path) if page.gold is not None]
    print(f"{path}: {len(pages)} pages; word alignment F1 (per-page average / pooled)\n")
    print("| mode | scoring | neutral log10 ppl | F1 | pooled F1 | words kept / gold |")
    print("|---|---|---:|---:|---:|---:|")
    gold_words = sum(len(page.gold.split()) for page in pages)
    for mode in ("perplexity", "corpus", "article"):
        settings = CleanerSettings(mode=mode)
        runs = [("English model", None)] + [("no model", value) for value in CANDIDATES]
        if mode == "perplexity":
            runs = runs[:2]  # the labeller is not used: one no-model row
        for scoring, value in runs:
            outputs = clean_without_model(pages, settings, value)
            summary, _ = score_outputs(pages, outputs)
            kept = sum(len(text.split()) for text in outputs.values())
            shown = "" if value is None or mode == "perplexity" else f"{value:g}"
            print(
                f"| {mode} | {scoring} | {shown} | {summary.f1:.4f} | {summary.micro_f1:.4f} "
                f"| {kept / gold_words:.2f} |"
            )


def neutral_features(page: training.TrainingPage, value: float):
    """The page's features with every sentence unscored, at ``value``; the columns after
    `labeller.FEATURE_NAMES` (class and id words), which no score enters, as they are."""
    neutral = [labeller.unscored_score(n, value) for n in page.n_tokens]
    features = labeller.block_features(
        page.blocks,
        page.sentences,
        page.block_of,
        log10_probs=[s[0] for s in neutral],
        n_tokens=page.n_tokens,
        n_oov=[s[2] for s in neutral],
    )
    return np.hstack((features, page.features[:, len(labeller.FEATURE_NAMES) :]))


def out_of_fold(mode: str, seed: int = 1) -> None:
    sets = [
        (name, training.load_training_pages(path, split=split))
        for name, path, split in TRAINING_SETS[mode]
    ]
    pages = [page for _, set_pages in sets for page in set_pages]
    spec = json.loads(labeller.labeller_path(mode).read_text(encoding="utf-8"))
    threshold, containers = spec["threshold"], spec.get("boilerplate_containers", ())
    if spec.get("class_features"):  # the boosters read what the labeller reads
        training.add_class_features(pages)
    fold_of = training.page_folds(pages, FOLDS)
    boosters = []
    for k in range(FOLDS):
        train = [p for p, fold in zip(pages, fold_of, strict=True) if fold != k]
        trees = training.fit_trees(
            train,
            num_trees=training.NUM_TREES[mode],
            params={**training.MODE_PARAMS[mode], "seed": seed},
        )
        boosters.append(labeller.BlockLabeller(training._spec(trees, threshold=0.0, mode="cv")))
    allowed = [~labeller.container_mask([b.tag_path for b in p.blocks], containers) for p in pages]
    print(
        f"{mode}: out-of-fold word alignment F1 (per-page average), threshold {threshold:g},"
        f" LightGBM seed {seed}\n"
    )
    print("| scoring | " + " | ".join(name for name, _ in sets) + " |")
    print("|---|" + "---:|" * len(sets))
    for value in (None, *CANDIDATES):
        keeps = []
        for page, fold, mask in zip(pages, fold_of, allowed, strict=True):
            features = page.features if value is None else neutral_features(page, value)
            keeps.append((boosters[fold].scores(features) > threshold) & mask)
        row, start = [], 0
        for _, set_pages in sets:
            end = start + len(set_pages)
            row.append(f"{training.macro_f1(set_pages, keeps[start:end]):.4f}")
            start = end
        label = "English model" if value is None else f"no model, {value:g}"
        print(f"| {label} | " + " | ".join(row) + " |", flush=True)
    validation = DATA / "googletrends-pages" / "val"
    if mode == "article" and validation.is_dir():
        pages = [p for p in read_pages(validation) if p.gold is not None]
        print(f"\nThe shipped labeller on GoogleTrends val ({len(pages)} pages):\n")
        for value in (None, *CANDIDATES):
            outputs = clean_without_model(pages, CleanerSettings(mode=mode), value)
            label = "English model" if value is None else f"no model, {value:g}"
            print(f"- {label}: {score_outputs(pages, outputs)[0].f1:.4f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", default=".cache/data/cleaneval/dev")
    parser.add_argument("--oof", choices=("corpus", "article"), help="out of fold, see above")
    parser.add_argument("--seed", type=int, default=1, help="the fold boosters' LightGBM seed")
    args = parser.parse_args()
    if args.oof:
        out_of_fold(args.oof, args.seed)
    else:
        in_sample(args.path)


if __name__ == "__main__":
    main()
