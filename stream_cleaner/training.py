"""Training the block labeller (`stream-cleaner train-labeller`): pages with gold text in,
a small JSON tree ensemble out.

Each training page is cut into blocks and scored exactly as `clean_document` does; a block is
labelled content when most of its words align with the gold text (the CleanEval word
alignment of `stream_cleaner.evaluate`: longest matching blocks of the two token sequences).
LightGBM fits the trees (only here: prediction needs numpy alone); the trees are flattened
into the arrays `labeller.BlockLabeller` evaluates.

Page sets are read from directories holding ``html/NAME.html`` and ``gold/NAME.txt``
(CleanEval's ``<text ...>`` wrapper and ``URL:`` gold line are removed, as are its
``<p>``/``<h>``/``<l>`` markers for the alignment).
"""

from __future__ import annotations

import datetime as dt
import difflib
import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .decode import decode_body
from .document import Block
from .evaluate import (
    align_words,
    dragnet_split,
    gold_words,
    read_checks,
    read_gold,
    unwrap_cleaneval,
)
from .labeller import (
    BOILERPLATE_CONTAINERS,
    FEATURE_NAMES,
    LABELLER_FORMAT,
    UNSCORED_LOG_PPL,
    BlockKind,
    block_features,
    class_features,
    container_mask,
    feature_names,
    site_features,
)
from .lm import LanguageModel, load_model, normalize_many
from .page_structure import SCORE_CONTEXT_NAMES, score_context, structure_features
from .parse import parse_blocks
from .segment import split_sentences
from .sites import SiteSettings, SiteTemplates, find_page_url, site_of

_COLUMNS = {name: i for i, name in enumerate(FEATURE_NAMES)}
_GOLD_MARKER = re.compile(r"^\s*<([phl])>", re.IGNORECASE)

# LightGBM parameters, chosen by page-grouped cross-validation on CleanEval dev and the Dragnet
# train split (bench/labeller_cv.py); small trees keep the model file and prediction cheap.
TRAIN_PARAMS: dict[str, Any] = {
    "objective": "binary",
    "learning_rate": 0.08,
    "num_leaves": 15,
    "max_depth": 6,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "verbose": -1,
    "num_threads": 1,
    "seed": 1,
    "deterministic": True,
}
# Per mode, also from that cross-validation: CleanEval dev is small (58 pages, ~9,600 blocks),
# where small trees generalise better (60 of 7 leaves: 0.905; 200 of 7: 0.897; 40 of 15:
# 0.902); the Dragnet train split (968 pages, ~197,000 blocks) takes larger ones (100 of 31
# leaves: 0.915; 100 of 15: 0.903; 60 of 15: 0.897).
MODE_PARAMS: dict[str, dict[str, Any]] = {
    "corpus": {"num_leaves": 7, "max_depth": 4, "learning_rate": 0.2},
    "article": {"num_leaves": 31, "max_depth": 7, "learning_rate": 0.15},
    # bench/auto_training.py (rule 5): the article labeller's trees, on 1,536 pages of four
    # sets; with each set held out in turn, mean macro F1 0.7855 against larger trees' 0.7772
    "auto": {"num_leaves": 31, "max_depth": 7, "learning_rate": 0.15},
}
NUM_TREES: dict[str, int] = {"corpus": 60, "article": 100, "auto": 100}
# Per mode, the HTML5 containers whose blocks are boilerplate whatever the trees say (the
# model file's ``boilerplate_containers``). CleanEval's 2007 pages predate ``nav``, ``footer``
# and ``aside``, so the corpus trees cannot learn them; in the training splits that have them
# (macro word-alignment F1, corpus mode, bench/container_rule.py): Dragnet train 0.827 ->
# 0.833, MultiBoilerNet's modern GoogleTrends train and val pages 0.758 -> 0.768 and 0.742 ->
# 0.746, CleanEval dev unchanged. The article trees learnt them from Dragnet's pages: the
# rule there gives 0.943 -> 0.942 on Dragnet train, so article mode has none.
BOILERPLATE_CONTAINERS_BY_MODE: dict[str, tuple[str, ...]] = {"corpus": BOILERPLATE_CONTAINERS}
# The log10 perplexity a labeller's features get for sentences that no model scored (a page in
# a language without one), by mode; others take `labeller.UNSCORED_LOG_PPL`. Chosen by
# bench/no_model.py --oof: the labeller's fold boosters (trained with the English model) on
# their held-out pages scored with no model, at the labeller's threshold. Article, 2.0 / 2.5 /
# 3.0 / 3.5: Dragnet train 0.8963 / 0.9093 / 0.9152 / 0.9154, GoogleTrends train 0.8056 /
# 0.7976 / 0.7816 / 0.7956, and the shipped labeller on GoogleTrends val 0.6994 / 0.7083 /
# 0.7022 / 0.7001: 2.5 has the best mean of the three sets. Corpus, CleanEval dev: 0.9111 /
# 0.9094 / 0.9016 / 0.8876, so it keeps 2.0. The article labeller retrained with class and id
# words on Dragnet's article gold hardly depends on it: the means over the same three sets
# for 2.0 to 5.0 lie within 0.0054 of each other, with the comment marks too (docs/models.md, Models
# for other languages).
UNSCORED_LOG_PPL_BY_MODE: dict[str, float] = {"article": 2.5}
# How the training blocks weigh (`set_page_weights`): each block by the square root of its
# words (``blocks``), scaled so that each page set weighs the same in all (``sets``), each page
# the same (``pages``), or each page the same within its set and each set the same
# (``sets+pages``). By mode; others ``blocks``. bench/auto_training.py, rule 16: with each of
# the four training sets held out in turn, auto's mean macro F1 0.8126 with ``sets`` against
# 0.7998 with ``blocks`` (the 2026 pages in the site folds 0.7985 against 0.8002; at the
# shipped file's threshold, -1, 0.8113).
WEIGHTS = ("blocks", "sets", "pages", "sets+pages")
WEIGHTS_BY_MODE: dict[str, str] = {"auto": "sets"}
CONTENT_SHARE = 0.5  # a block is content when at least this share of its words align


@dataclass(slots=True)
class TrainingPage:
    """One page with gold text, cut and scored as the pipeline does, with its block labels."""

    name: str
    gold: str
    blocks: list[Block]
    sentences: list[str]
    block_of: list[int]
    log10_probs: list[float]
    n_tokens: list[int]
    n_oov: list[int]
    features: np.ndarray = field(default_factory=lambda: np.zeros((0, len(FEATURE_NAMES))))
    aligned_share: np.ndarray = field(default_factory=lambda: np.zeros(0))
    words: np.ndarray = field(default_factory=lambda: np.zeros(0))
    gold_kinds: list[str | None] = field(default_factory=list)
    site: str = ""  # the site the page declares (`sites.find_page_url`), "" when none
    url: str = ""  # where the page was fetched from, when its set says (else the one it declares)
    source: str = ""  # the page set it came from
    main_in: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    weight: float = 1.0  # a factor on its blocks' weights (`set_page_weights`)

    @property
    def labels(self) -> np.ndarray:
        return self.aligned_share >= CONTENT_SHARE

    def text(
        self, keep: Sequence[bool] | np.ndarray, *, max_sentence_perplexity: float | None = None
    ) -> str:
        """The output of the page when only blocks with ``keep`` are kept (and, with a limit,
        only their sentences at or below it), as `clean_document` would write it."""
        kept: dict[int, list[str]] = {}
        for text, b, lp, n in zip(
            self.sentences, self.block_of, self.log10_probs, self.n_tokens, strict=True
        ):
            if not keep[b] or not n or not _has_letter(text):
                continue
            if max_sentence_perplexity is not None and 10.0 ** (-lp / (n + 1)) > (
                max_sentence_perplexity
            ):
                continue
            kept.setdefault(b, []).append(text)
        return "\n".join(" ".join(v) for v in kept.values())


_LETTER = re.compile(r"[^\W\d_]")


def _has_letter(text: str) -> bool:
    return _LETTER.search(text) is not None


def page_files(directory: str | Path, *, split: str | None = None) -> list[tuple[Path, Path]]:
    """The (html, gold) file pairs of a page set directory, in name order.

    Args:
        directory: holds ``html/NAME.html`` (or ``.htm``) and ``gold/NAME.txt``.
        split: ``"train"`` or ``"test"`` keeps only the pages of that side of the fixed
            Dragnet split (`evaluate.dragnet_split`); ``None`` keeps all.
    """
    base = Path(directory)
    pairs = []
    for html in sorted((base / "html").iterdir(), key=_page_order):
        if html.suffix not in (".html", ".htm"):
            continue
        gold = base / "gold" / f"{html.stem}.txt"
        if not gold.exists():
            continue
        if split is not None and dragnet_split(html.stem) != split:
            continue
        pairs.append((html, gold))
    if not pairs:
        raise FileNotFoundError(f"no html/NAME.html + gold/NAME.txt pairs in {base}")
    return pairs


def _page_order(path: Path) -> tuple[int, int, str]:
    return (0, int(path.stem), "") if path.stem.isdigit() else (1, 0, path.stem)


def prepare_page(
    name: str,
    body: bytes,
    gold: str,
    *,
    model: LanguageModel,
    parser: str = "lexbor",
    url: str = "",
) -> TrainingPage:
    """Cut, split and score a page as `clean_document` does; compute features and labels.
    ``url``: where the page was fetched from, when known."""
    text = decode_body(body).text
    blocks = parse_blocks(text, parser=parser)
    sentences: list[str] = []
    block_of: list[int] = []
    for block in blocks:
        split = split_sentences(block.text)
        sentences += split
        block_of += [block.index] * len(split)
    # normalize_many([]) gives one empty line: a page without text has no scores at all
    scores = model.score_many(normalize_many(sentences)) if sentences else []
    page = TrainingPage(
        name,
        gold,
        blocks,
        sentences,
        block_of,
        [s.log10_prob for s in scores],
        [s.n_tokens for s in scores],
        [s.n_oov for s in scores],
    )
    page.features = block_features(
        blocks,
        sentences,
        block_of,
        log10_probs=page.log10_probs,
        n_tokens=page.n_tokens,
        n_oov=page.n_oov,
    )
    page.aligned_share, page.words, page.gold_kinds = _align_blocks(blocks, gold)
    declared = find_page_url(text)
    page.site = site_of(declared)
    page.url = url or declared
    return page


def page_group(page: TrainingPage) -> str:
    """What a page's folds keep together: its site's registered domain, so that no site is
    on both sides of a fold (a site's pages share their template); the page alone when its
    URL is unknown."""
    return site_of(page.url, key="domain") or f"page:{page.source}/{page.name}"


def add_class_features(pages: Sequence[TrainingPage]) -> None:
    """Append `CLASS_FEATURE_NAMES` (what the class and id attributes say) to every page's
    features; before `add_site_features`, whose columns come last."""
    for page in pages:
        page.features = np.hstack((page.features, class_features(page.blocks)))


def add_structure_features(pages: Sequence[TrainingPage]) -> None:
    """Append `page_structure.STRUCTURE_FEATURE_NAMES` to every page's features (after the
    class features, before the site features) and keep which blocks are in its main
    element."""
    for page in pages:
        structure, page.main_in = structure_features(page.blocks, page.features, _COLUMNS)
        page.features = np.hstack((page.features, structure))


def add_score_context(pages: Sequence[TrainingPage], scores: Sequence[np.ndarray]) -> None:
    """Append `page_structure.SCORE_CONTEXT_NAMES` of first-stage ``scores`` (out of fold) to
    every page's features: the rows a stacked labeller's second stage learns from."""
    for page, page_scores in zip(pages, scores, strict=True):
        chars = np.expm1(page.features[:, _COLUMNS["log_chars"]])
        context = score_context(page.blocks, page_scores, chars, page.main_in)
        page.features = np.hstack((page.features, context))


def add_site_features(pages: Sequence[TrainingPage]) -> None:
    """Append `SITE_FEATURE_NAMES` to every page's features: what the other pages of its site
    among ``pages`` say about its blocks (each page left out of its own evidence, as a stream
    and ``clean --site-aware`` give it)."""
    sites = SiteTemplates(
        SiteSettings(window_pages=1_000_000, max_sites=1_000_000, path_entropy=True)
    )
    for page in pages:
        if page.site:
            sites.observe(page.site, page.blocks)
    for page in pages:
        evidence = sites.assess(page.site, page.blocks, evidence=True)[1] if page.site else None
        page.features = np.hstack((page.features, site_features(evidence, len(page.blocks))))


def _align_blocks(
    blocks: Sequence[Block], gold: str
) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
    """Per block: the share of its words aligned with the gold, its word count, and the gold
    marker (p/h/l) most of its aligned words carry (``None`` when none align)."""
    tokens: list[str] = []
    owner: list[int] = []
    for block in blocks:
        words = block.text.split()
        tokens += words
        owner += [block.index] * len(words)
    gold_tokens, gold_kind = _gold_tokens_with_kinds(gold)
    matcher = difflib.SequenceMatcher(None, tokens, gold_tokens, autojunk=False)
    n = len(blocks)
    aligned = np.zeros(n)
    kind_votes: list[dict[str, int]] = [{} for _ in range(n)]
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            block = owner[a + k]
            aligned[block] += 1
            kind = gold_kind[b + k]
            votes = kind_votes[block]
            votes[kind] = votes.get(kind, 0) + 1
    words = np.bincount(np.asarray(owner, dtype=np.int64), minlength=n).astype(np.float64)
    share = aligned / np.maximum(words, 1.0)
    kinds = [max(v, key=v.__getitem__) if v else None for v in kind_votes]
    return share, words, kinds


def _gold_tokens_with_kinds(gold: str) -> tuple[list[str], list[str]]:
    """The gold's words (as `evaluate.gold_words`) and the marker of the line each is on."""
    tokens: list[str] = []
    kinds: list[str] = []
    kind = BlockKind.PARAGRAPH
    for line in gold.split("\n"):
        marker = _GOLD_MARKER.match(line)
        if marker:
            kind = marker.group(1).lower()
        words = gold_words(line)
        tokens += words
        kinds += [kind] * len(words)
    return tokens, kinds


def load_training_pages(
    directory: str | Path,
    *,
    split: str | None = None,
    model: LanguageModel | None = None,
    parser: str = "lexbor",
    progress: Callable[[int], None] | None = None,
) -> list[TrainingPage]:
    """Every page of a page set directory, prepared for training."""
    model = model or load_model()
    checks_file = Path(directory) / "checks.json"
    urls = {n: c.url for n, c in read_checks(checks_file).items()} if checks_file.exists() else {}
    pages = []
    for html, gold in page_files(directory, split=split):
        wrapper_url, body = unwrap_cleaneval(html.read_bytes())
        gold_text = read_gold(gold) or ""
        page = prepare_page(
            html.stem, body, gold_text, model=model, parser=parser,
            url=urls.get(html.stem) or wrapper_url,
        )  # fmt: skip
        page.source = f"{directory}:{split}" if split else str(directory)
        pages.append(page)
        if progress:
            progress(len(pages))
    return pages


# the annotation files' kinds as the gold markers name them
_ANNOTATION_KINDS = {"paragraph": BlockKind.PARAGRAPH, "heading": BlockKind.HEADING,
                     "list": BlockKind.LIST}  # fmt: skip


def load_annotated_pages(
    directory: str | Path,
    *,
    pages_dir: str | Path,
    model: LanguageModel | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[TrainingPage]:
    """Pages labelled block by block in the web demo's annotation view (`annotations`).

    Each annotation's page is ``pages_dir/source``; it must be the file that was labelled
    (same SHA-256), and parsing it again must give the labelled blocks. A block labelled
    content counts as fully aligned, a boilerplate one as not at all; content blocks keep the
    kind (paragraph, heading, list) the annotator gave them.

    Raises:
        ValueError: a page is missing, changed since it was labelled, or parses differently.
    """
    from .annotations import CONTENT, html_sha256, read_annotations

    model = model or load_model()
    pages = []
    for annotation in read_annotations(directory):
        path = Path(pages_dir) / annotation.source
        try:
            body = path.read_bytes()
        except OSError as exc:
            raise ValueError(f"the labelled page {path} cannot be read: {exc}") from None
        if html_sha256(body) != annotation.html_sha256:
            raise ValueError(f"{path} changed since it was labelled (SHA-256 differs)")
        page = prepare_page(annotation.source, body, "", model=model, parser=annotation.parser)
        if [b.text for b in page.blocks] != [b.text for b in annotation.blocks]:
            raise ValueError(f"{path} no longer parses into the blocks that were labelled")
        content = [b.label == CONTENT for b in annotation.blocks]
        page.aligned_share = np.asarray(content, dtype=np.float64)
        page.gold_kinds = [
            _ANNOTATION_KINDS[b.kind] if keep else None
            for b, keep in zip(annotation.blocks, content, strict=True)
        ]
        page.gold = "\n".join(b.text for b, keep in zip(page.blocks, content, strict=True) if keep)
        pages.append(page)
        if progress:
            progress(len(pages))
    if not pages:
        raise ValueError(f"no annotation files in {directory}")
    return pages


def block_weights(page: TrainingPage) -> np.ndarray:
    """A page's blocks' sample weights: as their words, damped (the score counts words, but
    one huge block should not drown a page's many small ones), times the page's factor."""
    return np.sqrt(np.maximum(page.words, 1.0)) * page.weight


def set_page_weights(pages: Sequence[TrainingPage], how: str) -> None:
    """Set each page's factor (`WEIGHTS`: ``blocks`` leaves every page at 1) so that each page
    set (``source``) weighs the same in all, each page the same, or each page the same within
    its set and each set the same; the total weight of the blocks is unchanged."""
    if how not in WEIGHTS:
        raise ValueError(f"unknown weights {how!r}: one of {', '.join(WEIGHTS)}")
    for page in pages:
        page.weight = 1.0
    if how == "blocks" or not pages:
        return
    totals = np.maximum([float(block_weights(p).sum()) for p in pages], 1e-9)
    sources = [p.source for p in pages]
    in_set: dict[str, float] = {}
    count: dict[str, int] = {}
    for source, total in zip(sources, totals, strict=True):
        in_set[source] = in_set.get(source, 0.0) + total
        count[source] = count.get(source, 0) + 1
    per_set = totals.sum() / len(in_set)
    for page, source, total in zip(pages, sources, totals, strict=True):
        if how == "sets":
            page.weight = per_set / in_set[source]
        elif how == "pages":
            page.weight = totals.mean() / total
        else:
            page.weight = per_set / count[source] / total


def stack(pages: Iterable[TrainingPage]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels and sample weights (`block_weights`) of many pages, one row per block."""
    pages = list(pages)
    x = np.vstack([p.features for p in pages])
    y = np.concatenate([p.labels for p in pages]).astype(np.float64)
    w = np.concatenate([block_weights(p) for p in pages])
    return x, y, w


def fit_trees(
    pages: Sequence[TrainingPage], *, num_trees: int = 150, params: dict | None = None
) -> Any:
    """A LightGBM booster fitted on the blocks of ``pages``."""
    import lightgbm

    x, y, w = stack(pages)
    names = column_names(x.shape[1])
    data = lightgbm.Dataset(x, y, weight=w, feature_name=list(names), free_raw_data=True)
    return lightgbm.train({**TRAIN_PARAMS, **(params or {})}, data, num_boost_round=num_trees)


def export_trees(booster: Any) -> dict[str, Any]:
    """Flatten a LightGBM booster into `labeller.BlockLabeller`'s arrays."""
    dump = booster.dump_model()
    feature: list[int] = []
    split: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []
    roots: list[int] = []
    depth = 0

    def add(node: dict[str, Any], level: int) -> int:
        nonlocal depth
        index = len(feature)
        feature.append(0)
        split.append(0.0)
        left.append(index)
        right.append(index)
        value.append(0.0)
        if "leaf_value" in node:
            value[index] = float(node["leaf_value"])
            depth = max(depth, level)
            return index
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported split {node.get('decision_type')!r}")
        feature[index] = int(node["split_feature"])
        split[index] = float(node["threshold"])
        left[index] = add(node["left_child"], level + 1)
        right[index] = add(node["right_child"], level + 1)
        return index

    for tree in dump["tree_info"]:
        roots.append(add(tree["tree_structure"], 0))
    return {
        "feature": feature,
        "split": split,
        "left": left,
        "right": right,
        "value": value,
        "roots": roots,
        "depth": depth,
    }


def macro_f1(
    pages: Sequence[TrainingPage],
    keeps: Sequence[np.ndarray],
    *,
    max_sentence_perplexity: float | None = None,
) -> float:
    """Mean per-page word-alignment F1 of the outputs the ``keeps`` decisions give."""
    f1s = [
        align_words(p.text(k, max_sentence_perplexity=max_sentence_perplexity), p.gold).f1
        for p, k in zip(pages, keeps, strict=True)
    ]
    return float(np.mean(f1s)) if f1s else 0.0


def page_folds(pages: Sequence[Any], folds: int, *, by_site: bool = False) -> list[int]:
    """Each page's fold, from a hash of its name, or with ``by_site`` of its site
    (`page_group`): the same split in every run and script."""
    keys = [page_group(p) if by_site else p.name for p in pages]
    return [int(hashlib.sha256(k.encode()).hexdigest()[:8], 16) % folds for k in keys]


def cross_validate(
    pages: Sequence[TrainingPage],
    *,
    folds: int = 5,
    num_trees: int = 150,
    params: dict | None = None,
    extra: Sequence[TrainingPage] = (),
    by_site: bool = False,
    fold_of: Sequence[int] | None = None,
) -> list[np.ndarray]:
    """Out-of-fold raw scores for every page (pages split into ``folds`` groups by a hash of
    their name, or of their site with ``by_site``, or as ``fold_of`` says: each page's fold,
    0 to ``folds`` - 1); ``extra`` pages are added to every fold's training set."""
    from .labeller import TreeEnsemble

    if fold_of is None:
        fold_of = page_folds(pages, folds, by_site=by_site)
    out: list[np.ndarray] = [np.zeros(0)] * len(pages)
    for k in range(folds):
        train = [p for p, f in zip(pages, fold_of, strict=True) if f != k] + list(extra)
        trees = TreeEnsemble(export_trees(fit_trees(train, num_trees=num_trees, params=params)))
        for i, p in enumerate(pages):
            if fold_of[i] == k:
                out[i] = trees.raw_scores(p.features) if len(p.features) else np.zeros(0)
    return out


def choose_threshold(
    pages: Sequence[TrainingPage],
    scores: Sequence[np.ndarray],
    *,
    max_sentence_perplexity: float | None = None,
    boilerplate_containers: Sequence[str] = (),
    per_source: bool = False,
) -> tuple[float, float]:
    """The score threshold with the best macro F1 on (out-of-fold) scores, and that F1; blocks
    inside ``boilerplate_containers`` are dropped whatever their score. With ``per_source``
    the F1 is the mean of each page set's macro F1, so that every set counts once whatever
    its size."""
    allowed = [
        ~container_mask([b.tag_path for b in p.blocks], boilerplate_containers) for p in pages
    ]
    sources = [p.source if per_source else "" for p in pages]
    best = (0.0, -1.0)
    for threshold in np.arange(-2.0, 2.01, 0.25):
        keeps = [(s > threshold) & a for s, a in zip(scores, allowed, strict=True)]
        f1s = []
        for source in dict.fromkeys(sources):
            chosen = [i for i, s in enumerate(sources) if s == source]
            f1s.append(
                macro_f1(
                    [pages[i] for i in chosen],
                    [keeps[i] for i in chosen],
                    max_sentence_perplexity=max_sentence_perplexity,
                )
            )
        f1 = float(np.mean(f1s))
        if f1 > best[1] + 1e-9:
            best = (float(threshold), f1)
    return best


KIND_CLASSES = (BlockKind.PARAGRAPH, BlockKind.HEADING, BlockKind.LIST)
KIND_TREES = 40
MIN_KIND_BLOCKS = 100


def fit_kinds(pages: Sequence[TrainingPage], *, num_trees: int = KIND_TREES) -> Any | None:
    """A multiclass booster for the kind (p/h/l) of content blocks, from the gold markers;
    ``None`` when the gold has too few marked blocks or a single kind (no markers)."""
    import lightgbm

    rows: list[np.ndarray] = []
    kinds: list[int] = []
    for p in pages:
        for i, (content, kind) in enumerate(zip(p.labels, p.gold_kinds, strict=True)):
            if content and kind in KIND_CLASSES:
                rows.append(p.features[i])
                kinds.append(KIND_CLASSES.index(kind))
    if len(rows) < MIN_KIND_BLOCKS or len(set(kinds)) < len(KIND_CLASSES):
        return None
    params = {**TRAIN_PARAMS, **MODE_PARAMS["corpus"], "objective": "multiclass"}
    params["num_class"] = len(KIND_CLASSES)
    data = lightgbm.Dataset(np.vstack(rows), np.asarray(kinds), free_raw_data=True)
    return lightgbm.train(params, data, num_boost_round=num_trees)


def feature_groups(width: int) -> dict[str, bool]:
    """Which optional feature groups (`feature_names`'s flags) a feature matrix of ``width``
    columns has (a stacked labeller's second stage: without its `SCORE_CONTEXT_NAMES`)."""
    for classes in (False, True):
        for structure in (False, True):
            for sites in (False, True):
                flags = {
                    "class_features": classes,
                    "structure_features": structure,
                    "site_features": sites,
                }
                if len(feature_names(**flags)) == width:
                    return flags
    raise ValueError(f"no labeller reads {width} features")


def column_names(width: int) -> tuple[str, ...]:
    """The names of a feature matrix's ``width`` columns: a labeller's (`feature_groups`), or
    a stacked labeller's second stage's (those and `SCORE_CONTEXT_NAMES`)."""
    try:
        return feature_names(**feature_groups(width))
    except ValueError:
        return feature_names(**feature_groups(width - len(SCORE_CONTEXT_NAMES))) + (
            SCORE_CONTEXT_NAMES
        )


def _spec(booster: Any, *, threshold: float, mode: str, **meta: Any) -> dict[str, Any]:
    flags = feature_groups(booster.num_feature())
    return {
        "format": LABELLER_FORMAT,
        "mode": mode,
        "features": list(feature_names(**flags)),
        **flags,
        "threshold": threshold,
        **export_trees(booster),
        **meta,
    }


def train_labeller(
    sources: Sequence[tuple[str, str | None]],
    *,
    mode: str,
    output: str | Path,
    model: LanguageModel | None = None,
    num_trees: int | None = None,
    folds: int = 5,
    max_sentence_perplexity: float | None = None,
    progress: Callable[[str, int], None] | None = None,
    pages_dir: str | Path | None = None,
    site_features: bool = False,
    class_features: bool = False,
    structure_features: bool = False,
    stacked: bool = False,
    folds_by_site: bool = False,
    boilerplate_containers: Sequence[str] | None = None,
    unscored_log_ppl: float | None = None,
    weights: str | None = None,
) -> dict[str, Any]:
    """Train a labeller on page set directories and write it with its sidecar.

    Args:
        sources: ``(directory, split)`` pairs; ``split`` is ``None`` for the whole set,
            ``"train"`` for the Dragnet-style hash split's training side, or
            ``"annotations"`` for a folder of the annotation view's files
            (`load_annotated_pages`).
        mode: the mode the labeller serves (``corpus`` or ``article``), recorded in the file.
        output: the model file (JSON); ``<output>.meta.json`` gets what it was trained on.
        num_trees: boosting rounds (default: `NUM_TREES` of the mode).
        folds: page-grouped folds used to choose the decision threshold (out-of-fold scores);
            ``0`` or ``1`` keeps the threshold at 0 (probability 0.5).
        max_sentence_perplexity: the sentence filter applied inside kept blocks when the
            threshold is chosen (``None``: no sentence filter).
        progress: called with (directory, pages read so far).
        pages_dir: where the annotated pages' files are (default: the annotation folder).
        site_features: also learn from site evidence (`add_site_features`: the other pages of
            each page's site among the training pages); the labeller then reads it when the
            pipeline has site statistics.
        class_features: also learn from the words of the class and id attributes on each
            block's tag path (`add_class_features`).
        structure_features: also learn from where each block stands in the page: the
            elements around it and the page's main element (`add_structure_features`).
        stacked: fit a second ensemble on the first one's out-of-fold scores spread over
            each page (`add_score_context`); the threshold is then the second one's.
        folds_by_site: keep each site's pages in one fold (`page_group`), so that the
            threshold is chosen on sites the trees have not seen, and choose it on the mean
            of each page set's F1 (`choose_threshold`'s ``per_source``).
        boilerplate_containers: tags whose blocks the labeller calls boilerplate whatever
            its trees say (default: `BOILERPLATE_CONTAINERS_BY_MODE` of the mode).
        unscored_log_ppl: the log10 perplexity the labeller's features get for sentences no
            model scores (default: `UNSCORED_LOG_PPL_BY_MODE` of the mode, else
            `labeller.UNSCORED_LOG_PPL`); recorded in the file, read by the pipeline.
        weights: how the training blocks weigh (`WEIGHTS`, `set_page_weights`; default:
            `WEIGHTS_BY_MODE` of the mode, else ``blocks``); each ``sources`` entry is a set.

    Returns:
        The sidecar: sources, page and block counts, threshold and its cross-validated F1.
    """
    model = model or load_model()
    num_trees = num_trees or NUM_TREES.get(mode, 150)
    params = MODE_PARAMS.get(mode, {})
    if boilerplate_containers is None:
        boilerplate_containers = BOILERPLATE_CONTAINERS_BY_MODE.get(mode, ())
    containers = tuple(sorted(set(boilerplate_containers)))
    if unscored_log_ppl is None:
        unscored_log_ppl = UNSCORED_LOG_PPL_BY_MODE.get(mode, UNSCORED_LOG_PPL)
    weights = weights or WEIGHTS_BY_MODE.get(mode, "blocks")
    if weights not in WEIGHTS:
        raise ValueError(f"unknown weights {weights!r}: one of {', '.join(WEIGHTS)}")
    pages: list[TrainingPage] = []
    for directory, split in sources:
        report = (lambda n, d=directory: progress(d, n)) if progress else None
        if split == "annotations":
            pages += load_annotated_pages(
                directory, pages_dir=pages_dir or directory, model=model, progress=report
            )
        else:
            pages += load_training_pages(directory, split=split, model=model, progress=report)
    if class_features:
        add_class_features(pages)
    if structure_features:
        add_structure_features(pages)
    if site_features:
        add_site_features(pages)
    set_page_weights(pages, weights)
    if stacked and not (folds > 1 and len(pages) >= folds):
        raise ValueError("a stacked labeller needs out-of-fold scores: folds > 1")
    threshold, cv_f1, stage2 = 0.0, None, None
    if folds > 1 and len(pages) >= folds:
        validate = functools.partial(
            cross_validate, folds=folds, num_trees=num_trees, params=params, by_site=folds_by_site
        )
        scores = validate(pages)
        if stacked:
            first = [p.features for p in pages]
            add_score_context(pages, scores)
            scores = validate(pages)
            stage2 = fit_trees(pages, num_trees=num_trees, params=params)
            for page, features in zip(pages, first, strict=True):
                page.features = features
        threshold, cv_f1 = choose_threshold(
            pages,
            scores,
            max_sentence_perplexity=max_sentence_perplexity,
            boilerplate_containers=containers,
            per_source=folds_by_site,
        )
    booster = fit_trees(pages, num_trees=num_trees, params=params)
    # the kinds come from the gold's markers: a page set without any (plain gold) would teach
    # that every block is a paragraph, so then the kinds come from the markup
    marked = {p.source for p in pages if any(k != BlockKind.PARAGRAPH for k in p.gold_kinds if k)}
    kind_booster = fit_kinds(pages) if marked == {p.source for p in pages} else None
    meta = {
        "mode": mode,
        "trained_on": [{"directory": str(d), "split": s} for d, s in sources]
        + ([{"pages_dir": str(pages_dir)}] if pages_dir else []),
        "pages": len(pages),
        "blocks": int(sum(len(p.blocks) for p in pages)),
        "content_blocks": int(sum(int(p.labels.sum()) for p in pages)),
        "num_trees": num_trees,
        "params": {**TRAIN_PARAMS, **params},
        "threshold": threshold,
        "cv_folds": folds,
        "cv_macro_f1": cv_f1,
        "max_sentence_perplexity": max_sentence_perplexity,
        "boilerplate_containers": list(containers),
        "unscored_log_ppl": unscored_log_ppl,
        "kind_model": kind_booster is not None,
        "class_features": class_features,
        "structure_features": structure_features,
        "stacked": stacked,
        "folds_by_site": folds_by_site,
        "weights": weights,
        "sources": {
            source: sum(1 for p in pages if p.source == source)
            for source in dict.fromkeys(p.source for p in pages)
        },
        "site_features": site_features,
        "site_pages": sum(1 for p in pages if p.site) if site_features else None,
        "language_model": model.id,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    spec = _spec(
        booster,
        threshold=threshold,
        mode=mode,
        max_sentence_perplexity=max_sentence_perplexity,
        unscored_log_ppl=unscored_log_ppl,
    )
    if stage2 is not None:
        spec["stage2"] = export_trees(stage2)
    if containers:
        spec["boilerplate_containers"] = list(containers)
    if kind_booster is not None:
        spec["kinds"] = {
            "classes": list(KIND_CLASSES),
            "num_class": len(KIND_CLASSES),
            **export_trees(kind_booster),
        }
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(spec, separators=(",", ":")), encoding="utf-8")
    Path(f"{output}.meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta
