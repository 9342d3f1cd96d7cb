"""What kind of page a document is: an article, a forum thread, documentation, a product, a
collection of products, a listing or a service page (`PAGE_TYPES`).

The types are those of the 2026 benchmark pages (issue 38; a blog post counts as an article).
A page is judged from what the pipeline already has once the labeller has read it: the blocks,
the labeller's feature rows (`labeller.FEATURE_NAMES` first) and the page's URL, of which only
generic path words are read (`URL_WORDS`: ``forum``, ``docs``, ``product``, ``category``...;
never a site's name). `page_features` makes one row of page-level features of them (how many
blocks, how much of the text is prose, links, lists, tables, forms, code and dates, how long
the blocks are, how repetitive their tag paths, what the class and id words name)
and a multiclass tree ensemble (LightGBM at training time, `labeller.TreeEnsemble` at run time)
gives the probability of each type.

The class and id words on the blocks' tag paths (`Block.class_words`) are part of the
evidence, but the parser finds them only for a labeller that reads them (``auto`` and
``article``; `pipeline`), and finding them for the page type alone would cost ``corpus`` mode
a tenth of its time. The model file therefore holds two ensembles, one trained with those
words and one without (`CLASS_WORD_FEATURE_NAMES` left out); a page's answer comes from the
one that matches how it was parsed.

``bench/page_types.py`` trains the model on the 2026 pages and reports its accuracy out of
fold (folds grouped by registered domain); ``docs/labeller.md`` has the figures.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import numpy as np

from ._native import native_module
from .document import Block
from .labeller import FEATURE_NAMES, MODELS_DIR, TreeEnsemble
from .loaded import LoadedOnce
from .page_structure import MAX_PROSE_LINK_DENSITY, MIN_PROSE_WORDS
from .parse import CLASS_GROUP_NAMES, CLASS_MAX_LEVELS

# The page types, in the model's class order; the one list the record's schema, the metric's
# labels and the model file are checked against.
PAGE_TYPES: Final = (
    "article",
    "forum",
    "documentation",
    "product",
    "collection",
    "listing",
    "service",
)
UNDETERMINED: Final = ""  # perplexity mode, errors, empty pages, plain text
METRIC_UNDETERMINED: Final = "none"  # its metric label (an empty label is no label)
PAGE_TYPES_FORMAT: Final = 1
MODEL_PATH: Final = MODELS_DIR / "page-types.json"

# Generic words of URL paths, per kind of page: a path segment (split at / ? = & . _ -) that
# is one of them sets the group's feature. Vocabulary, not site names.
URL_WORDS: Final = (
    ("forum", "forum forums thread threads topic topics t questions question discussion "
              "discussions community d answers viewtopic "
              # forum software's thread and board paths (rule 33 of bench/auto_training.py)
              "showthread forumdisplay viewforum viewthread showtopic board boards comments "
              "talk"),
    ("docs", "docs doc documentation reference api guide guides manual tutorial tutorials "
             "learn library help kb wiki"),
    ("product", "product products p dp item items pd pdp app buy"),
    ("collection", "collection collections category categories c shop store browse genre "
                   "department catalog"),
    ("listing", "search tag tags topic list listing archive page news blog"),
    ("article", "article articles story news blog post posts"),
)  # fmt: skip
_URL_WORD_SETS = tuple(frozenset(words.split()) for _, words in URL_WORDS)
_YEAR = re.compile(r"20\d\d")  # a year in the path: dated articles
_URL_SPLIT = re.compile(r"[/?=&._-]+")

FEATURE_NAMES_COMMON: Final = (
    "log_blocks",
    "log_chars",
    # shares of the page's characters
    "prose_char_share",
    "link_char_share",
    "list_char_share",
    "table_char_share",
    "form_char_share",
    "pre_char_share",
    "code_char_share",
    "prose_block_share",
    "headings",
    "dates_per_block",
    "median_words",
    "q90_words",
    "log_long_blocks",
    "log_max_path_blocks",
    "path_variety",
    *(f"url_{name}" for name, _ in URL_WORDS),
    "url_segments",
    "url_root",
    "url_longest_segment",
    "url_hyphens",
)
# Read only by the ensemble for pages parsed with class and id words: the page's elements
# named for comments (log), and the share of the page's characters under an element whose
# class or id names each group of `parse.CLASS_WORD_GROUPS` (and any at all).
CLASS_WORD_FEATURE_NAMES: Final = (
    "log_comment_marks",
    *(f"class_{name}_share" for name in CLASS_GROUP_NAMES),
)
FEATURE_NAMES_ALL: Final = FEATURE_NAMES_COMMON + CLASS_WORD_FEATURE_NAMES

LONG_BLOCK_WORDS = 30  # a block of this many words counts as long (`log_long_blocks`)
_COLUMNS = {name: i for i, name in enumerate(FEATURE_NAMES)}
# the labeller's columns read, in this order: characters and words (log), link density, the
# flags whose blocks' share of the characters is a feature, headings and dates
_READ = [
    _COLUMNS[name]
    for name in ("log_chars", "log_words", "link_density", "in_list", "in_table", "in_form",
                 "path_pre", "path_code", "tag_h1", "dates")
]  # fmt: skip
_READ_COLUMNS = np.asarray(_READ, dtype=np.int_)
_TAG_PATH = operator.attrgetter("tag_path")
_CLASS_WORDS = operator.attrgetter("class_words")
_GROUP_SHIFTS = np.arange(len(CLASS_GROUP_NAMES), dtype=np.uint64) * np.uint64(4)


def url_features(url: str) -> list[float]:
    """The URL columns of `FEATURE_NAMES_COMMON`: per group of `URL_WORDS` whether a path
    segment is one of its words (a year counts as an article's), the path's segments, whether
    it is the site's root, its longest segment and its hyphens."""
    if not url:  # most benchmark pages, and a page that names no URL: a tenth of its type's time
        return list(_NO_URL_FEATURES)
    path = urlsplit(url).path
    parts = [p for p in _URL_SPLIT.split(path.lower()) if p]
    found = set(parts)
    out = [float(not words.isdisjoint(found)) for words in _URL_WORD_SETS]
    if not out[-1] and any(_YEAR.fullmatch(p) for p in found):
        out[-1] = 1.0
    out += [
        float(len(parts)),
        float(path in ("", "/")),
        float(max(map(len, parts), default=0)),
        float(path.count("-")),
    ]
    return out


_NO_URL_FEATURES: Final = (*(0.0 for _ in URL_WORDS), 0.0, 1.0, 0.0, 0.0)  # `url_features("")`


def _quantiles(values: np.ndarray, qs: Sequence[float]) -> list[float]:
    """``np.quantile(values, qs)`` (linear interpolation) of a non-empty array, without its
    overhead: a page's type costs tens of microseconds."""
    ordered = np.sort(values)
    last = len(ordered) - 1
    out = []
    for q in qs:
        position = q * last
        low = math.floor(position)
        high = min(low + 1, last)
        out.append(float(ordered[low] + (ordered[high] - ordered[low]) * (position - low)))
    return out


def page_features(
    blocks: Sequence[Block], rows: np.ndarray, url: str, *, class_words: bool
) -> np.ndarray:
    """The page's row of `FEATURE_NAMES_ALL` (``class_words``) or `FEATURE_NAMES_COMMON`.

    Args:
        blocks: the page's blocks (at least one).
        rows: the labeller's rows for them, `labeller.FEATURE_NAMES` first.
        url: the page's URL (``""`` when unknown).
        class_words: whether the blocks were parsed with their class and id words.
    """
    chars = np.expm1(rows[:, _READ[0]])
    words = np.expm1(rows[:, _READ[1]])
    fast = native_module("page_structure")
    if fast is not None:  # one call: a page's type cost more in numpy's calls than in sums
        common, named = fast.page_type_features(
            rows, _READ_COLUMNS, blocks if isinstance(blocks, list) else list(blocks), chars,
            words, MIN_PROSE_WORDS, MAX_PROSE_LINK_DENSITY, LONG_BLOCK_WORDS, class_words,
            len(CLASS_GROUP_NAMES), CLASS_MAX_LEVELS,
        )  # fmt: skip
    else:
        common, named = _page_type_features(blocks, rows, chars, words, class_words=class_words)
    return np.asarray(common + url_features(url) + named, dtype=np.float64)


def _page_type_features(
    blocks: Sequence[Block],
    rows: np.ndarray,
    chars: np.ndarray,
    words: np.ndarray,
    *,
    class_words: bool,
) -> tuple[list[float], list[float]]:
    """`page_features`' columns before the URL's, and (``class_words``) those after it, from
    the blocks' characters and words (``rows``' first two `_READ` columns, ``expm1``-ed).
    Each share of the characters is one pairwise sum (numpy's, as ``_native`` sums)."""
    n = len(blocks)
    read = rows[:, _READ]
    total = float(chars.sum()) + 1.0
    prose = (words >= MIN_PROSE_WORDS) & (read[:, 2] < MAX_PROSE_LINK_DENSITY)
    weights = [prose, read[:, 2], *(read[:, 3:8] > 0).T]
    paths = Counter(map(_TAG_PATH, blocks))
    headings, dates = read[:, 8:].sum(axis=0).tolist()
    common = [
        math.log1p(n),
        math.log1p(total - 1.0),
        *(float((chars * weight).sum()) / total for weight in weights),
        float(np.count_nonzero(prose)) / n,
        headings,
        dates / n,
        *_quantiles(words, (0.5, 0.9)),
        math.log1p(np.count_nonzero(words >= LONG_BLOCK_WORDS)),
        math.log1p(max(paths.values())),
        len(paths) / n,
    ]
    if not class_words:
        return common, []
    codes = np.fromiter(map(_CLASS_WORDS, blocks), dtype=np.uint64, count=n)
    named = ((codes[:, None] >> _GROUP_SHIFTS) & np.uint64(CLASS_MAX_LEVELS)) > 0
    return common, [
        math.log1p(blocks[-1].comment_marks),  # they count up in reading order
        *(float((chars * column).sum()) / total for column in named.T),
    ]


class PageTypeModel:
    """The trained page-type model: two multiclass ensembles over `PAGE_TYPES`, for pages
    parsed with and without class and id words."""

    def __init__(self, spec: dict[str, Any]) -> None:
        if spec.get("format") != PAGE_TYPES_FORMAT:
            raise ValueError(f"unsupported page-type model format {spec.get('format')!r}")
        if tuple(spec.get("types", ())) != PAGE_TYPES:
            raise ValueError("the page-type model was trained on other types; retrain it")
        if tuple(spec.get("features", ())) != FEATURE_NAMES_ALL:
            raise ValueError("the page-type model was trained on other features; retrain it")
        self.with_class_words = TreeEnsemble(spec["with_class_words"])
        self.without_class_words = TreeEnsemble(spec["without_class_words"])
        for trees in (self.with_class_words, self.without_class_words):
            if trees.num_class != len(PAGE_TYPES):
                raise ValueError("a page-type ensemble has the wrong number of classes")

    @classmethod
    def load(cls, path: str | Path) -> PageTypeModel:
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    def probabilities(self, features: np.ndarray, *, class_words: bool) -> np.ndarray:
        """Each type's probability (`PAGE_TYPES` order) for a row of `page_features`."""
        trees = self.with_class_words if class_words else self.without_class_words
        raw = trees.raw_scores(features.reshape(1, -1))[0]
        exp = np.exp(raw - raw.max())
        return exp / exp.sum()


_models: LoadedOnce[PageTypeModel] = LoadedOnce()


def load_page_types(path: str | Path | None = None) -> PageTypeModel:
    """The process-wide page-type model (the bundled one by default), loaded once."""
    key = str(path or MODEL_PATH)
    return _models.get(key, PageTypeModel.load, key)


def type_probabilities(
    blocks: Sequence[Block],
    rows: np.ndarray,
    url: str,
    *,
    class_words: bool,
    model: PageTypeModel | None = None,
) -> np.ndarray | None:
    """Each type's probability (`PAGE_TYPES` order); ``None`` for a page without blocks.

    Args: as `page_features`; ``model`` defaults to the bundled one.
    """
    if not len(blocks):
        return None
    model = model or load_page_types()
    features = page_features(blocks, rows, url, class_words=class_words)
    return model.probabilities(features, class_words=class_words)


def most_probable(probabilities: np.ndarray | None) -> tuple[str, float]:
    """The most probable type and its probability; (`UNDETERMINED`, 0.0) for ``None``."""
    if probabilities is None:
        return UNDETERMINED, 0.0
    best = int(probabilities.argmax())
    return PAGE_TYPES[best], float(probabilities[best])


def classify_page(
    blocks: Sequence[Block],
    rows: np.ndarray,
    url: str,
    *,
    class_words: bool,
    model: PageTypeModel | None = None,
) -> tuple[str, float]:
    """The page's type and its probability; (`UNDETERMINED`, 0.0) for a page without blocks.

    Args: as `page_features`; ``model`` defaults to the bundled one.
    """
    return most_probable(
        type_probabilities(blocks, rows, url, class_words=class_words, model=model)
    )


def metric_label(page_type: str) -> str:
    """The metric label of a page type: the type, or `METRIC_UNDETERMINED`."""
    return page_type or METRIC_UNDETERMINED
