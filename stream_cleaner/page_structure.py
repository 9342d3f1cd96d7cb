"""Where a block stands in the page: the elements around it, the page's main element, and how
the labeller's first scores spread over them (the `auto` labeller's features).

The elements are read off the blocks' tag paths, not the DOM: consecutive blocks whose tag
paths share their first ``d + 1`` tags are taken to sit in one element at depth ``d``. Two
sibling elements of the same tag, one after the other, are thus one element; measured against
the parser's own elements (bench/auto_training.py's research notes), the labeller scores the
same with either, and this needs nothing from the parser but the tag paths it already gives.

Per element: its characters, its prose characters (blocks of running text: `is_prose`), the
characters inside links and its blocks. The page's *main element* is the deepest element that
holds at least `MAIN_PROSE_SHARE` of the page's prose (of its characters, on a page without
prose): where the article, the thread or the documentation sits, whatever the page's markup
calls it. Readability and trafilatura look for the same element by scoring candidates; here
the labeller's trees learn what to make of it.

`structure_features` gives the trees, for each block, where it stands against the main element
and what the three elements closest around it hold. `score_context` gives the second stage of
a stacked labeller the first stage's scores of the block's page, elements and neighbours, so
that a block is judged with the blocks around it (a listing's items, a thread's posts).
``_native/page_structure.pyx`` computes both in C when built; this module is its reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._native import native_module
from .document import Block

# A block is running text when it has at least this many words (white-space separated) and
# at most this share of its characters in links; a block mostly of other scripts than Latin
# (CJK writes no spaces) counts with at least `MIN_PROSE_CHARS_CJK` characters instead.
MIN_PROSE_WORDS = 10
MAX_PROSE_LINK_DENSITY = 0.34
MIN_PROSE_CHARS_CJK = 40
# The main element holds at least this share of the page's prose.
MAIN_PROSE_SHARE = 0.5
# `best_prose_share` looks at elements of at most this many blocks: the tightest container
# of a run of prose, not the body that holds everything.
SMALL_ELEMENT_BLOCKS = 50
UP_LEVELS = 3  # the block's own element, its parent and its grandparent
# the score context reads the mean score of the block's elements this far up
SCORE_UP_LEVELS = 4
OUTSIDE_MAIN_SCORE = -5.0  # `main_mean` of a block outside the main element

STRUCTURE_FEATURE_NAMES: tuple[str, ...] = (
    "main_in",
    "main_rel",
    "main_char_share",
    "main_log_blocks",
    *(
        f"up{k}_{name}"
        for k in range(1, UP_LEVELS + 1)
        for name in ("prose_share", "char_share", "link_density", "log_blocks", "prose_density")
    ),
    "best_prose_share",
)
SCORE_CONTEXT_NAMES: tuple[str, ...] = (
    "score",
    "page_max_score",
    "score_below_max",
    "page_median_score",
    "page_q90_score",
    "page_positive_share",
    *(f"up{k}_mean_score" for k in range(1, SCORE_UP_LEVELS + 1)),
    "neighbour_score_1",
    "neighbour_score_2",
    "main_mean_score",
)


def prose_words(words: np.ndarray, chars: np.ndarray, non_ascii: np.ndarray) -> np.ndarray:
    """Each block's words as running text counts them (see `MIN_PROSE_WORDS`): white-space
    separated, or, for a block mostly of other scripts than Latin, its characters at
    `MIN_PROSE_CHARS_CJK` to `MIN_PROSE_WORDS` words when that is more (Chinese, Japanese
    and Thai write no spaces between words)."""
    if not len(non_ascii) or non_ascii.max() < 0.5:  # the common page: nothing to count again
        return words
    by_chars = chars * (MIN_PROSE_WORDS / MIN_PROSE_CHARS_CJK)
    return np.where(non_ascii >= 0.5, np.maximum(words, by_chars), words)


def is_prose(words: np.ndarray, chars: np.ndarray, link_density: np.ndarray,
             non_ascii: np.ndarray) -> np.ndarray:  # fmt: skip
    """Whether each block is running text (see `MIN_PROSE_WORDS`; ``words`` white-space
    separated or as `prose_words` counts them: the same answer)."""
    long_enough = prose_words(words, chars, non_ascii) >= MIN_PROSE_WORDS
    return long_enough & (link_density < MAX_PROSE_LINK_DENSITY)


def common_depths(blocks: Sequence[Block]) -> tuple[np.ndarray, np.ndarray]:
    """Each block's depth, and how many leading tags its tag path shares with the previous
    block's (0 for the first): the block starts a new element at every depth from there."""
    fast = native_module("page_structure")
    if fast is not None:
        return fast.common_depths(blocks if isinstance(blocks, list) else list(blocks))
    n = len(blocks)
    depths = np.zeros(n, dtype=np.int64)
    common = np.zeros(n, dtype=np.int64)
    split: dict[str, list[str]] = {}
    shared: dict[tuple[str, str], int] = {}
    previous = ""
    for i, block in enumerate(blocks):
        path = block.tag_path
        depths[i] = block.depth
        if i:
            key = (previous, path)
            c = shared.get(key)
            if c is None:
                a = split.get(previous)
                if a is None:
                    a = split[previous] = previous.split()
                b = split.get(path)
                if b is None:
                    b = split[path] = path.split()
                c = 0
                for x, y in zip(a, b, strict=False):
                    if x != y:
                        break
                    c += 1
                shared[key] = c
            common[i] = c
        previous = path
    return depths, common


def row_depths(features: np.ndarray, columns: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """`common_depths` read off the page's `labeller.block_features` rows, which count the
    same leading tags (``columns``: the index of each feature's name): a block's depth is the
    number of tags on its path, and those it shares with the previous block's path are those
    it did not open (``tags_opened``; the first block opens them all)."""
    depths = features[:, columns["depth"]].astype(np.int64)
    return depths, depths - features[:, columns["tags_opened"]].astype(np.int64)


class _Elements:
    """The elements of a page as runs of blocks: ``start``/``end`` (block range, end
    exclusive), depth and sums, in the order they open; ``of[i][d]`` is block ``i``'s
    element at depth ``d``."""

    def __init__(self, depths: np.ndarray, common: np.ndarray, weights: Sequence[np.ndarray]):
        n = len(depths)
        self.depth: list[int] = []
        self.start: list[int] = []
        self.end: list[int] = []
        self.sums: list[list[float]] = []
        self.count: list[int] = []
        self.of: list[list[int]] = []
        open_: list[int] = []
        columns = [w.tolist() for w in weights]
        for i in range(n):
            depth, c = int(depths[i]), int(common[i]) if i else 0
            keep = min(c, depth, len(open_))
            for e in open_[keep:]:
                self.end[e] = i
            del open_[keep:]
            for d in range(keep, depth):
                open_.append(len(self.depth))
                self.depth.append(d)
                self.start.append(i)
                self.end.append(n)
                self.sums.append([0.0] * len(columns))
                self.count.append(0)
            values = [column[i] for column in columns]
            for e in open_:
                sums = self.sums[e]
                for k, v in enumerate(values):
                    sums[k] += v
                self.count[e] += 1
            self.of.append(list(open_))


def _main_element(elements: _Elements, totals: Sequence[float]) -> int:
    """The deepest element holding `MAIN_PROSE_SHARE` of the page's prose (column 1), or of
    its characters (column 0) on a page without prose; the first such in reading order; -1
    when the page has no element."""
    column = 1 if totals[1] > 0 else 0
    need = MAIN_PROSE_SHARE * totals[column]
    best, best_depth = -1, -1
    for e, sums in enumerate(elements.sums):
        if sums[column] >= need and elements.depth[e] > best_depth:
            best, best_depth = e, elements.depth[e]
    return best


def structure_features(
    blocks: Sequence[Block],
    features: np.ndarray,
    columns: dict[str, int],
    *,
    depths: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """`STRUCTURE_FEATURE_NAMES` of every block, and whether each is in the main element.

    Args:
        blocks: the page's blocks.
        features: the page's `labeller.block_features` rows (read: words, characters, link
            density, non-ASCII share).
        columns: the index of each of those features' names in ``features``.
        depths: `common_depths` of the blocks, when the caller has it.
    """
    n = len(blocks)
    out = np.zeros((n, len(STRUCTURE_FEATURE_NAMES)))
    if n == 0:
        return out, np.zeros(0, dtype=bool)
    depths, common = depths if depths is not None else common_depths(blocks)
    chars = np.expm1(features[:, columns["log_chars"]])
    words = np.exp(features[:, columns["log_words"]]) - 1.0
    fast = native_module("page_structure")
    if fast is not None:  # one call: the numpy calls below cost more than the features
        _, inside = fast.structure_features_of_rows(
            depths, common, chars, words, features, columns["link_density"],
            columns["ratio_non_ascii"], out, MIN_PROSE_WORDS, MIN_PROSE_CHARS_CJK,
            MAX_PROSE_LINK_DENSITY, MAIN_PROSE_SHARE, SMALL_ELEMENT_BLOCKS, UP_LEVELS,
        )  # fmt: skip
        return out, inside
    link = np.ascontiguousarray(features[:, columns["link_density"]])
    non_ascii = features[:, columns["ratio_non_ascii"]]
    prose = is_prose(words, chars, link, non_ascii).astype(np.float64)
    return _structure_features(depths, common, chars=chars, prose=prose, link=link, out=out)


def _structure_features(
    depths: np.ndarray,
    common: np.ndarray,
    *,
    chars: np.ndarray,
    prose: np.ndarray,
    link: np.ndarray,
    out: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    n = len(depths)
    elements = _Elements(depths, common, (chars, chars * prose, chars * link))
    total_t = float(chars.sum())
    total_p = float((chars * prose).sum())
    main = _main_element(elements, (total_t, total_p))
    inside = np.zeros(n, dtype=bool)
    if main < 0:
        return out, inside
    main_depth = elements.depth[main]
    first, end = elements.start[main], elements.end[main]
    inside[first:end] = depths[first:end] > main_depth
    main_t = elements.sums[main][0]
    safe_t = max(total_t, 1.0)
    ref = total_p if total_p > 0 else 0.0
    # the shallowest boundary between each block and the main element's blocks
    between = np.full(n, main_depth + 1, dtype=np.int64)
    low = main_depth + 1
    for i in range(first - 1, -1, -1):  # blocks before: boundaries at i + 1 .. first
        low = min(low, int(common[i + 1]))
        between[i] = low
    low = main_depth + 1
    for i in range(end, n):  # blocks after: boundaries at end .. i
        low = min(low, int(common[i]))
        between[i] = low
    for i in range(n):
        of = elements.of[i]
        depth = int(depths[i])
        shared = min(int(between[i]), depth, main_depth + 1)
        row = out[i]
        row[0] = inside[i]
        row[1] = 0.0 if inside[i] else shared - (main_depth + 1)
        row[2] = main_t / safe_t
        row[3] = math.log1p(elements.count[main])
        if not of:
            continue
        for k in range(1, UP_LEVELS + 1):
            e = of[max(depth - k, 0)]
            t, p, lk = elements.sums[e]
            base = 4 + (k - 1) * 5
            row[base] = p / ref if ref else 0.0
            row[base + 1] = t / safe_t
            row[base + 2] = lk / max(t, 1.0)
            row[base + 3] = math.log1p(elements.count[e])
            row[base + 4] = p / max(t, 1.0)
        if ref:
            row[-1] = max(
                (
                    elements.sums[e][1] / ref
                    for e in of
                    if elements.count[e] <= SMALL_ELEMENT_BLOCKS
                ),
                default=0.0,
            )
    return out, inside


def score_context(
    blocks: Sequence[Block],
    scores: np.ndarray,
    chars: np.ndarray,
    main_in: np.ndarray,
    *,
    depths: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """`SCORE_CONTEXT_NAMES` of every block: its first-stage score beside the page's (the
    highest, the median and 90th percentile by characters, the share of characters scored
    above 0), the mean score of its elements (by characters) and of its neighbours, and of the
    main element for a block inside it. ``depths``: `common_depths` of the blocks, when the
    caller has it."""
    n = len(blocks)
    out = np.zeros((n, len(SCORE_CONTEXT_NAMES)))
    if n == 0:
        return out
    depths, common = depths if depths is not None else common_depths(blocks)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    fast = native_module("page_structure")
    if fast is not None:
        chars = np.ascontiguousarray(chars, dtype=np.float64)
        inside = main_in.astype(np.uint8)
        page = fast.page_scores(scores, chars, inside)
        fast.score_context(depths, common, scores, chars, inside, out, page, SCORE_UP_LEVELS,
                           OUTSIDE_MAIN_SCORE)  # fmt: skip
        return out
    page = _page_scores(scores, chars, main_in)
    return _score_context(depths, common, scores, chars=chars, main_in=main_in, out=out, page=page)


def _page_scores(scores: np.ndarray, chars: np.ndarray, main_in: np.ndarray
                 ) -> tuple[float, float, float, float, float | None]:  # fmt: skip
    """The page-wide columns of `score_context`: the highest score, the median and 90th
    percentile by characters, the share of characters scored above 0, and the main element's
    mean score by characters (``None`` without a main element)."""
    n = len(scores)
    total = float(chars.sum())
    order = np.argsort(scores, kind="stable")
    ranked = scores[order]
    cumulative = np.cumsum(chars[order]) / max(total, 1e-9)
    main = main_in.astype(bool)
    mean = None
    if main.any():
        mean = float((scores * chars)[main].sum()) / max(float(chars[main].sum()), 1e-9)
    return (
        float(ranked[-1]),
        float(ranked[min(int(np.searchsorted(cumulative, 0.5)), n - 1)]),
        float(ranked[min(int(np.searchsorted(cumulative, 0.9)), n - 1)]),
        float((chars * (scores > 0)).sum()) / max(total, 1e-9),
        mean,
    )


def _score_context(
    depths: np.ndarray,
    common: np.ndarray,
    scores: np.ndarray,
    *,
    chars: np.ndarray,
    main_in: np.ndarray,
    out: np.ndarray,
    page: tuple[float, float, float, float, float | None],
) -> np.ndarray:
    n = len(scores)
    top, median, q90, share, main_mean = page
    out[:, 0] = scores
    out[:, 1] = top
    out[:, 2] = scores - top
    out[:, 3] = median
    out[:, 4] = q90
    out[:, 5] = share
    elements = _Elements(depths, common, (chars, chars * scores))
    for i in range(n):
        of = elements.of[i]
        if not of:
            continue
        depth = int(depths[i])
        for k in range(1, SCORE_UP_LEVELS + 1):
            weight, weighted = elements.sums[of[max(depth - k, 0)]]
            out[i, 5 + k] = weighted / max(weight, 1e-9)
    padded = np.concatenate((scores[:1], scores[:1], scores, scores[-1:], scores[-1:]))
    out[:, 6 + SCORE_UP_LEVELS] = (padded[1:-3] + padded[3:-1]) / 2
    out[:, 7 + SCORE_UP_LEVELS] = (padded[:-4] + padded[4:]) / 2
    if main_mean is not None:
        out[:, 8 + SCORE_UP_LEVELS] = np.where(main_in.astype(bool), main_mean, OUTSIDE_MAIN_SCORE)
    return out
