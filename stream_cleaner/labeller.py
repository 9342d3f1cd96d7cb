"""The block labeller: content or boilerplate per block, from markup, text and perplexity.

In the spirit of Victor (Spousta et al., CleanEval 2007): every block of a page gets a vector of
markup features (tag path, containers, heading/list/link/form/table, depth, tags closed and
opened since the previous block), content features (character and token classes, sentences and
their punctuation, duplicates on the page, URL/date/copyright patterns, bullet shape), position
and document features (relative position, text and link density of the enclosing container run)
and the block's language-model statistics (mean/min/max sentence perplexity, OOV rate). The
features of the neighbouring blocks are appended, so the classifier sees the sequence around
each block, as a CRF's transition features would.

The classifier is a gradient-boosted tree ensemble trained with LightGBM
(`stream_cleaner.training`) and shipped as JSON; prediction needs numpy only and evaluates all
trees for all blocks of a page at once (one vectorised step per tree level), so it costs well
under a millisecond per page.
"""

from __future__ import annotations

import itertools
import json
import math
import operator
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._native import native_module
from .budget import check_deadline
from .document import Block
from .loaded import LoadedOnce
from .page_structure import (
    SCORE_CONTEXT_NAMES,
    STRUCTURE_FEATURE_NAMES,
    row_depths,
    score_context,
    structure_features,
)
from .parse import CLASS_GROUP_NAMES, CLASS_MAX_LEVELS
from .sites import PageEvidence

MODELS_DIR = Path(__file__).parent / "models"
LABELLER_FORMAT = 1


class BlockKind:
    """What a kept block is, as CleanEval's gold marks it (``<p>``, ``<h>``, ``<l>``)."""

    PARAGRAPH = "p"
    HEADING = "h"
    LIST = "l"


# Elements whose presence on the tag path is a feature of its own.
_PATH_TAGS = (
    "nav header footer aside article main section form table ul ol dl select a b strong em i "
    "span font center address blockquote pre code label button small"
).split()
_PATH_TAG_INDEX = {tag: i for i, tag in enumerate(_PATH_TAGS)}
_PATH_TAG_SET = frozenset(_PATH_TAGS)
# Block-level elements that delimit a "container" for the density features.
_CONTAINER_TAGS = frozenset(
    "div td th table section article main aside nav header footer form ul ol dl body "
    "blockquote center".split()
)
_BLOCK_TAG_GROUPS = (
    ("p",),
    ("div",),
    ("td", "th"),
    ("li", "dd", "dt"),
    ("h1", "h2", "h3", "h4", "h5", "h6"),
    ("pre", "blockquote"),
    ("body", "html", "center", "form", "option", "select", "button", "textarea"),
)
_TAG_GROUP_OF = {tag: i for i, group in enumerate(_BLOCK_TAG_GROUPS) for tag in group}

# ASCII character classes: 0 space, 1 lower, 2 upper, 3 digit, 4 sentence punctuation,
# 5 other punctuation; code points above 127 are class 6 (letters of other scripts mostly).
_N_CLASSES = 7
_ASCII_CLASS = np.full(128, 5, dtype=np.int64)
for _c in range(128):
    _ch = chr(_c)
    if _ch.isspace():
        _ASCII_CLASS[_c] = 0
    elif "a" <= _ch <= "z":
        _ASCII_CLASS[_c] = 1
    elif "A" <= _ch <= "Z":
        _ASCII_CLASS[_c] = 2
    elif _ch.isdigit():
        _ASCII_CLASS[_c] = 3
    elif _ch in ".,;:!?'\"()-":
        _ASCII_CLASS[_c] = 4
_CLASS_OF = np.concatenate([_ASCII_CLASS, np.full(1, 6, dtype=np.int64)])

# Page-wide patterns, searched once over the whole page's text. Literals are found with
# str.find (a fast substring search); only dates need a regex, and a case-sensitive one.
_URL_LITERALS = ("://", "www.", ".com", ".org", ".net", ".htm", ".php")
_LEGAL_LITERALS = ("©", "opyright", "OPYRIGHT", "ights reserved", "ights Reserved", "rivacy",
                   "erms of", "ookie")  # fmt: skip
_SEPARATOR_LITERALS = (" | ", " - ", " » ", " · ", " • ", " / ", " > ")
_DATE = re.compile(r"[0-9][/.:-][0-9]")  # dates and times: 12/05, 2007-01, 10:30
_PATTERN_NAMES = ("urls", "dates", "legal", "separators")
_PATTERN_GROUPS = (_URL_LITERALS, None, _LEGAL_LITERALS, _SEPARATOR_LITERALS)  # None: _DATE
_BULLET = re.compile(r"(?:[-*•·»>+o]|\d{1,3}[.)]|[a-z][.)])\s", re.IGNORECASE)
_SENTENCE_END = frozenset(".!?…。！？\"'”’)")

# Features of the block itself; the neighbour features repeat _CONTEXT_FEATURES of the blocks
# before and after it.
_OWN_FEATURES = (
    [f"tag_{group[0]}" for group in _BLOCK_TAG_GROUPS]
    + [f"path_{tag}" for tag in _PATH_TAGS]
    + [
        "link_only",
        "link_density",
        "depth",
        "in_link",
        "in_heading",
        "in_list",
        "in_table",
        "in_form",
        "tags_closed",
        "tags_opened",
        "log_chars",
        "log_words",
        "mean_word_length",
        "ratio_space",
        "ratio_lower",
        "ratio_upper",
        "ratio_digit",
        "ratio_sentence_punct",
        "ratio_other_punct",
        "ratio_non_ascii",
        "starts_upper",
        "ends_sentence",
        "ends_colon",
        "n_sentences",
        "words_per_sentence",
        "sentences_ended",
        "duplicates",
        "urls",
        "dates",
        "legal",
        "separators",
        "bullet",
        "position",
        "chars_before",
        "log_page_blocks",
        "log_page_chars",
        "group_log_chars",
        "group_blocks",
        "group_link_density",
        "group_share",
        "group_mean_log_ppl",
        "log_ppl",
        "min_log_ppl",
        "max_log_ppl",
        "oov_rate",
        "low_ppl_share",
        "window_log_ppl",
        "window_link_density",
        "window_ends_sentence",
    ]
)
_CONTEXT_FEATURES = (
    "log_chars",
    "link_density",
    "log_ppl",
    "ends_sentence",
    "in_list",
    "tag_p",
    "depth",
    "path_a",
    "duplicates",
    "group_log_chars",
)
_OFFSETS = (-2, -1, 1, 2)
FEATURE_NAMES: tuple[str, ...] = tuple(
    _OWN_FEATURES + [f"{name}@{offset:+d}" for offset in _OFFSETS for name in _CONTEXT_FEATURES]
)
# Site-level template evidence (Yi & Liu; `sites.BlockEvidence`), appended for labellers trained
# with it (``site_features`` in their file): the share of the site's other pages that carry the
# block, its tag path's text entropy over them, how many pages that is, and the neighbours'
# shares. A page with no site evidence reads share 0, entropy 1, no pages.
SITE_FEATURE_NAMES: tuple[str, ...] = (
    "site_share",
    "site_path_entropy",
    "site_log_pages",
    "site_share@-1",
    "site_share@+1",
)
# What the class and id attributes on a block's tag path say (`Block.class_words`), appended
# for labellers trained with them (``class_features`` in their file), before any site
# features: per group of `parse.CLASS_WORD_GROUPS` (and "any"), how many levels up the nearest
# element naming it is (16 when none: farther than any), and the share of the page's blocks
# with any class or id on their path (0 on a page written without them). Then where the block
# stands among the page's elements named for comments (`Block.comment_marks`): the share of
# them opened before it ends (0 on a page without any), their number (log) and the page's.
CLASS_FEATURE_NAMES: tuple[str, ...] = (
    *(f"class_{name}" for name in CLASS_GROUP_NAMES),
    "page_class_share",
    "comment_marks_share",
    "comment_marks",
    "page_comment_marks",
)
_INDEX = {name: i for i, name in enumerate(_OWN_FEATURES)}
_CONTEXT_INDEX = np.array([_INDEX[name] for name in _CONTEXT_FEATURES])
# perplexity below which a sentence counts as fluent (the paper's threshold)
_LOW_PPL = math.log10(3000.0)
_NO_PPL = 5.0  # log10 perplexity given to blocks without a scorable token
# Blocks in a language without a model: their sentences are given this log10 perplexity and
# no out-of-vocabulary token (`unscored_score`), so that the labeller decides from its other
# features. Chosen on CleanEval dev scored with no model at all (bench/no_model.py: word F1
# corpus 0.9567 at 2.0; 0.9323 with the unscored value 5.0). A labeller file can name its own
# (``unscored_log_ppl``, `training.UNSCORED_LOG_PPL_BY_MODE`): the article labeller's is 2.5.
UNSCORED_LOG_PPL = 2.0

_LINK_DENSITY = operator.attrgetter("link_density")
_TAG = operator.attrgetter("tag")
_path_cache: dict[str, tuple[tuple[float, ...], str, tuple[str, ...]]] = {}
_PATH_CACHE_MAX = 50_000


def _path_info(tag_path: str) -> tuple[tuple[float, ...], str, tuple[str, ...]]:
    """Features of a tag path, its container prefix and its tags, cached across pages."""
    info = _path_cache.get(tag_path)
    if info is None:
        tags = tuple(tag_path.split())
        # a page brings a dozen new paths of a dozen tags each: set operations in C, not a
        # test per tag of `_PATH_TAGS`
        flags = [0.0] * (len(_PATH_TAGS) + 1)
        for tag in _PATH_TAG_SET.intersection(tags):
            flags[_PATH_TAG_INDEX[tag]] = 1.0
        if tags and tags[-1] == "a":
            flags[-1] = 1.0
        cut = len(tags)
        while cut > 0 and tags[cut - 1] not in _CONTAINER_TAGS:
            cut -= 1
        if len(_path_cache) > _PATH_CACHE_MAX:
            _path_cache.clear()
        info = _path_cache[tag_path] = (tuple(flags), " ".join(tags[:cut]), tags)
    return info


def unscored_score(n_tokens: int, log_ppl: float | None = None) -> tuple[float, int, int]:
    """The neutral ``(log10_prob, n_tokens, n_oov)`` the labeller sees for a sentence that no
    model scored: ``log_ppl`` (default `UNSCORED_LOG_PPL`) per token, end of sentence
    included."""
    return (-(UNSCORED_LOG_PPL if log_ppl is None else log_ppl) * (n_tokens + 1), n_tokens, 0)


def block_features(
    blocks: Sequence[Block],
    sentences: Sequence[str],
    block_of: Sequence[int],
    *,
    log10_probs: Sequence[float],
    n_tokens: Sequence[int],
    n_oov: Sequence[int],
    extra_columns: int = 0,
) -> np.ndarray:
    """The feature matrix of a page: one row per block, columns as in `FEATURE_NAMES`
    (column-major when the native module builds it).

    Args:
        blocks: the page's blocks, in order (``block.index`` is the row).
        sentences: every sentence of the page, in order.
        block_of: the block index of each sentence (non-decreasing).
        log10_probs, n_tokens, n_oov: each sentence's language-model score.
        extra_columns: zero columns after `FEATURE_NAMES`, column-major too, for the
            features a labeller reads next (`page_features`, `BlockLabeller.page_scores`
            write theirs there instead of joining copies).
    """
    n = len(blocks)
    if n == 0:
        return np.zeros((0, len(FEATURE_NAMES) + extra_columns))
    fast = native_module("text_features")
    if fast is not None:
        return fast.page_features(
            list(blocks), list(sentences), block_of, log10_probs, n_tokens, n_oov, _INDEX,
            len(_OWN_FEATURES), _CONTEXT_INDEX, _OFFSETS, _TAG_GROUP_OF, _path_info, _path_cache,
            _ASCII_CLASS, _SENTENCE_END, _PATTERN_GROUPS, _BULLET.match, _LOW_PPL, _NO_PPL,
            extra_columns,
        )  # fmt: skip
    rows = _block_features(
        blocks, sentences, block_of, log10_probs=log10_probs, n_tokens=n_tokens, n_oov=n_oov
    )
    if not extra_columns:
        return rows
    return np.concatenate([rows.T, np.zeros((extra_columns, n))]).T


def _block_features(
    blocks: Sequence[Block],
    sentences: Sequence[str],
    block_of: Sequence[int],
    *,
    log10_probs: Sequence[float],
    n_tokens: Sequence[int],
    n_oov: Sequence[int],
) -> np.ndarray:
    """`block_features` in numpy and Python: the reference of ``_native/text_features.pyx``'s
    ``page_features`` (a page with at least one block)."""
    n = len(blocks)
    own = np.zeros((n, len(_OWN_FEATURES)))
    texts = [b.text for b in blocks]
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    col = _INDEX

    # markup
    tag_codes = np.fromiter(
        map(_TAG_GROUP_OF.get, map(_TAG, blocks), itertools.repeat(-1)), np.int64, n
    )
    rows = np.arange(n)
    known = tag_codes >= 0
    own[rows[known], tag_codes[known]] = 1.0
    # a page repeats a few dozen tag paths over hundreds of blocks: features per path
    path_id: dict[str, int] = {}
    ids = np.fromiter((path_id.setdefault(b.tag_path, len(path_id)) for b in blocks), np.int64, n)
    paths = list(path_id)
    infos = [_path_info(path) for path in paths]
    first = col["path_nav"]
    own[:, first : first + len(_PATH_TAGS) + 1] = np.array([info[0] for info in infos])[ids]
    firsts = [blocks[i] for i in np.unique(ids, return_index=True)[1].tolist()]
    own[:, col["depth"] : col["in_form"] + 1] = np.array(
        [(b.depth, b.in_link, b.in_heading, b.in_list, b.in_table, b.in_form) for b in firsts]
    )[ids]
    own[:, col["link_density"]] = np.fromiter(map(_LINK_DENSITY, blocks), np.float64, n)
    own[:, col["tags_closed"] : col["tags_opened"] + 1] = _tag_changes(
        paths, [info[2] for info in infos], ids
    )

    # characters, by class, per block; end punctuation; URL, date, legal, separator patterns
    joined = "\n".join(texts)
    starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
    ends = starts + lengths
    fast = native_module("text_features")
    if fast is not None:
        class_counts, first_class, end_flags, pattern_hits = fast.text_features(
            texts, joined, ends, _ASCII_CLASS, _SENTENCE_END, _PATTERN_GROUPS
        )
        counts = class_counts.astype(np.float64)
    else:
        counts, first_class, end_flags, pattern_hits = _text_features(texts, joined, ends, rows)
    safe_len = np.maximum(lengths, 1).astype(np.float64)
    own[:, col["ratio_space"] : col["ratio_non_ascii"] + 1] = counts / safe_len[:, None]
    words = counts[:, 0] + 1.0
    own[:, col["log_chars"]] = np.log1p(lengths)
    own[:, col["log_words"]] = np.log(words)
    own[:, col["mean_word_length"]] = (lengths - counts[:, 0]) / words
    own[:, col["starts_upper"]] = (first_class == 2) | (first_class == 6)
    own[:, col["ends_sentence"]] = end_flags[:, 0]
    own[:, col["ends_colon"]] = end_flags[:, 1]
    for g, name in enumerate(_PATTERN_NAMES):
        own[:, col[name]] = pattern_hits[:, g]

    # sentences and their scores
    n_sent = len(sentences)
    owner_s = np.asarray(block_of, dtype=np.int64)
    lp = np.asarray(log10_probs, dtype=np.float64)
    tok = np.asarray(n_tokens, dtype=np.float64)
    oov = np.asarray(n_oov, dtype=np.float64)
    per_block = np.bincount(owner_s, minlength=n).astype(np.float64) if n_sent else np.zeros(n)
    own[:, col["n_sentences"]] = per_block
    own[:, col["words_per_sentence"]] = words / np.maximum(per_block, 1.0)
    if n_sent:
        ended = np.fromiter((s[-1] in _SENTENCE_END for s in sentences), np.float64, n_sent)
        own[:, col["sentences_ended"]] = np.bincount(owner_s, ended, n) / np.maximum(per_block, 1)
        scored = tok > 0
        log_ppl = np.where(scored, -lp / (tok + 1.0), _NO_PPL)
        sum_lp = np.bincount(owner_s, lp, n)
        sum_tok = np.bincount(owner_s, np.where(scored, tok + 1.0, 0.0), n)
        own[:, col["log_ppl"]] = np.where(sum_tok > 0, -sum_lp / np.maximum(sum_tok, 1), _NO_PPL)
        starts_s = np.searchsorted(owner_s, rows)
        has = per_block > 0
        idx = np.minimum(starts_s, n_sent - 1)
        own[:, col["min_log_ppl"]] = np.where(has, np.minimum.reduceat(log_ppl, idx), _NO_PPL)
        own[:, col["max_log_ppl"]] = np.where(has, np.maximum.reduceat(log_ppl, idx), _NO_PPL)
        own[:, col["oov_rate"]] = np.bincount(owner_s, oov, n) / np.maximum(
            np.bincount(owner_s, tok, n), 1.0
        )
        fluent = np.bincount(owner_s, (log_ppl <= _LOW_PPL).astype(np.float64), n)
        own[:, col["low_ppl_share"]] = fluent / np.maximum(per_block, 1.0)
    else:
        own[:, col["log_ppl"]] = own[:, col["min_log_ppl"]] = own[:, col["max_log_ppl"]] = _NO_PPL

    # page-level patterns
    seen = Counter(texts)
    own[:, col["duplicates"]] = [seen[t] - 1 for t in texts]
    own[:, col["bullet"]] = [_BULLET.match(t) is not None for t in texts]

    # position and the enclosing container run
    total = float(lengths.sum()) or 1.0
    own[:, col["position"]] = rows / max(n - 1, 1)
    own[:, col["chars_before"]] = (np.cumsum(lengths) - lengths) / total
    own[:, col["log_page_blocks"]] = math.log1p(n)
    own[:, col["log_page_chars"]] = math.log1p(total)
    container_id: dict[str, int] = {}
    containers = np.array([container_id.setdefault(info[1], len(container_id)) for info in infos])
    by_block = containers[ids]
    group = np.concatenate(([0], np.cumsum(by_block[1:] != by_block[:-1])))
    group_chars = np.bincount(group, lengths.astype(np.float64))
    group_blocks = np.bincount(group).astype(np.float64)
    group_links = np.bincount(group, own[:, col["link_density"]] * lengths)
    group_ppl = np.bincount(group, own[:, col["log_ppl"]] * lengths)
    own[:, col["group_log_chars"]] = np.log1p(group_chars[group])
    own[:, col["group_blocks"]] = group_blocks[group]
    own[:, col["group_link_density"]] = group_links[group] / np.maximum(group_chars[group], 1)
    own[:, col["group_share"]] = group_chars[group] / total
    own[:, col["group_mean_log_ppl"]] = group_ppl[group] / np.maximum(group_chars[group], 1)

    # windows of +-3 blocks, weighted by length
    for target, source in (
        ("window_log_ppl", "log_ppl"),
        ("window_link_density", "link_density"),
        ("window_ends_sentence", "ends_sentence"),
    ):
        own[:, col[target]] = _window_mean(own[:, col[source]], lengths.astype(np.float64), 3)

    # neighbours
    context = own[:, _CONTEXT_INDEX]
    parts = [own]
    fill = np.full((1, len(_CONTEXT_FEATURES)), -1.0)
    for offset in _OFFSETS:
        shifted = np.empty_like(context)
        if offset < 0:
            k = min(-offset, n)
            shifted[:k] = fill
            shifted[k:] = context[: n - k]
        else:
            k = min(offset, n)
            shifted[n - k :] = fill
            shifted[: n - k] = context[k:]
        parts.append(shifted)
    return np.hstack(parts)


def _text_features(
    texts: list[str], joined: str, ends: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The reference of ``_native/text_features.pyx``: class counts (n, 7), the first
    character's class, the ends-a-sentence and ends-with-a-colon flags (n, 2), and the hits of
    each of `_PATTERN_GROUPS` (n, groups)."""
    n = len(texts)
    lengths = ends - np.concatenate(([0], ends[:-1] + 1))
    codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    classes = _CLASS_OF[np.minimum(codes, 128)]
    owner = np.repeat(rows, lengths + 1)[: len(codes)]
    counts = np.bincount(owner * _N_CLASSES + classes, minlength=n * _N_CLASSES)
    counts = counts.reshape(n, _N_CLASSES).astype(np.float64)
    counts[:-1, 0] -= 1.0  # the "\n" that joins each block to the next
    first_class = classes[ends - lengths]
    end_flags = np.array([(t[-1] in _SENTENCE_END, t[-1] == ":") for t in texts], np.float64)
    pattern_hits = np.zeros((n, len(_PATTERN_GROUPS)))
    for g, literals in enumerate(_PATTERN_GROUPS):
        if literals is None:
            hits = [m.start() for m in _DATE.finditer(joined)]
        else:
            hits = _find_all(joined, literals)
        if hits:
            where = np.searchsorted(ends, np.asarray(hits), side="left")
            pattern_hits[:, g] = np.bincount(np.minimum(where, n - 1), minlength=n)
    return counts, first_class, end_flags.reshape(n, 2), pattern_hits


def _find_all(text: str, literals: Sequence[str]) -> list[int]:
    """Start positions of every occurrence of each literal in ``text``."""
    hits: list[int] = []
    for literal in literals:
        at = text.find(literal)
        while at >= 0:
            hits.append(at)
            at = text.find(literal, at + 1)
    return hits


_change_cache: dict[tuple[str, str], tuple[int, int]] = {}


def _tag_changes(paths: list[str], tags: list[tuple[str, ...]], ids: np.ndarray) -> np.ndarray:
    """Per block: the tags of the previous block's path closed and the tags of its own opened
    (two columns), computed once per distinct pair of consecutive paths."""
    previous = np.concatenate(([-1], ids[:-1]))
    pairs, inverse = np.unique(previous * (len(paths) + 1) + ids, return_inverse=True)
    cache = _change_cache
    changes = []
    for pair in pairs.tolist():
        before, after = divmod(pair, len(paths) + 1)
        key = (paths[before] if before >= 0 else "", paths[after])
        change = cache.get(key)
        if change is None:
            a, b = tags[before] if before >= 0 else (), tags[after]
            common = 0
            for x, y in zip(a, b, strict=False):
                if x != y:
                    break
                common += 1
            if len(cache) > _PATH_CACHE_MAX:
                cache.clear()
            change = cache[key] = (len(a) - common, len(b) - common)
        changes.append(change)
    return np.array(changes, dtype=np.float64).reshape(-1, 2)[inverse.ravel()]


def _window_mean(values: np.ndarray, weights: np.ndarray, radius: int) -> np.ndarray:
    """Weighted mean of ``values`` over a window of ``radius`` blocks each side."""
    cw = np.concatenate(([0.0], np.cumsum(weights * values)))
    cs = np.concatenate(([0.0], np.cumsum(weights)))
    n = len(values)
    lo = np.maximum(np.arange(n) - radius, 0)
    hi = np.minimum(np.arange(n) + radius + 1, n)
    return (cw[hi] - cw[lo]) / np.maximum(cs[hi] - cs[lo], 1.0)


def site_features(evidence: PageEvidence | None, n: int) -> np.ndarray:
    """The `SITE_FEATURE_NAMES` columns of a page of ``n`` blocks (``None``: no evidence)."""
    out = np.zeros((n, len(SITE_FEATURE_NAMES)))
    if n == 0:
        return out
    if evidence is None:
        out[:, 1] = 1.0
        return out
    share = np.asarray(evidence.share, dtype=np.float64)
    out[:, 0] = share
    out[:, 1] = evidence.path_entropy
    out[:, 2] = math.log1p(evidence.site_pages)
    out[1:, 3] = share[:-1]
    out[:-1, 4] = share[1:]
    return out


def class_features(blocks: Sequence[Block]) -> np.ndarray:
    """The `CLASS_FEATURE_NAMES` columns of a page's blocks (natively when built: this is the
    reference)."""
    n = len(blocks)
    fast = native_module("text_features")
    if fast is not None and n:  # this function is its reference
        return fast.class_features(
            blocks if isinstance(blocks, list) else list(blocks), len(CLASS_GROUP_NAMES),
            CLASS_MAX_LEVELS,
        )  # fmt: skip
    out = np.empty((n, len(CLASS_FEATURE_NAMES)))
    if n == 0:
        return out
    codes = np.fromiter((b.class_words for b in blocks), dtype=np.uint64, count=n)
    shifts = np.arange(len(CLASS_GROUP_NAMES), dtype=np.uint64) * np.uint64(4)
    levels = ((codes[:, None] >> shifts) & np.uint64(CLASS_MAX_LEVELS)).astype(np.float64)
    groups = len(CLASS_GROUP_NAMES)
    out[:, :groups] = np.where(levels > 0, levels, CLASS_MAX_LEVELS + 1)
    out[:, groups] = (levels[:, -1] > 0).mean()
    # the marks count up in reading order: the last block has the page's
    marks = np.fromiter((b.comment_marks for b in blocks), dtype=np.float64, count=n)
    page_marks = marks[-1]
    out[:, groups + 1] = marks / page_marks if page_marks else 0.0
    out[:, groups + 2] = np.log1p(marks)
    out[:, groups + 3] = math.log1p(page_marks)
    return out


_HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
_LIST_TAGS = frozenset(("li", "dd", "dt"))
_NOT_LIST_TAGS = frozenset(("p", "div"))  # blocks of these tags in a list are paragraphs


def block_kinds(blocks: Sequence[Block]) -> list[str]:
    """CleanEval's paragraph/heading/list kind of each block, from its markup (natively when
    built: this loop is the reference)."""
    fast = native_module("text_features")
    if fast is not None:
        return fast.block_kinds(
            blocks if isinstance(blocks, list) else list(blocks), _HEADING_TAGS, _LIST_TAGS,
            _NOT_LIST_TAGS, BlockKind.PARAGRAPH, BlockKind.HEADING, BlockKind.LIST,
        )  # fmt: skip
    kinds = []
    for b in blocks:
        if b.in_heading or b.tag in _HEADING_TAGS:
            kinds.append(BlockKind.HEADING)
        elif b.tag in _LIST_TAGS or (b.in_list and b.tag not in _NOT_LIST_TAGS):
            kinds.append(BlockKind.LIST)
        else:
            kinds.append(BlockKind.PARAGRAPH)
    return kinds


# rows evaluated at once: the index arrays hold rows x trees integers (1.6 MB at 100 trees), and
# a page's deadline is looked at between them (`budget`)
_MAX_ROWS = 2_048
# Trees at most this deep are also laid out complete for the native walk (`_complete_layout`:
# 2 ** depth leaves a tree, 2 kB at depth 7); deeper ones keep the node arrays alone.
_COMPLETE_MAX_DEPTH = 8
# Fewer rows than this are walked in the trees' preorder layout (`_preorder_layout`), more in
# the complete one: eight rows walk together there, one row reads a cold ensemble faster here
# (a page's type: 350 trees, one row).
_FEW_ROWS = 8


class TreeEnsemble:
    """Gradient-boosted trees as flat arrays, evaluated with numpy.

    A leaf points to itself, so ``depth`` rounds of "go left or right" leave every
    (row, tree) pair at its leaf. With ``num_class`` > 1 (multiclass), tree ``t`` adds to
    class ``t % num_class``, as LightGBM orders them.
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        self.feature = np.asarray(spec["feature"], dtype=np.int64)
        self.split = np.asarray(spec["split"], dtype=np.float64)
        # children[2 * node] is the left child, children[2 * node + 1] the right one
        self.children = np.column_stack(
            (np.asarray(spec["left"], dtype=np.int64), np.asarray(spec["right"], dtype=np.int64))
        ).ravel()
        self.value = np.asarray(spec["value"], dtype=np.float64)
        self.roots = np.asarray(spec["roots"], dtype=np.int64)
        self.depth = int(spec["depth"])
        self.num_class = int(spec.get("num_class", 1))
        # the complete layout of the trees (`_complete_layout`), for the native walk
        self.complete = _complete_layout(self) if 1 <= self.depth <= _COMPLETE_MAX_DEPTH else None
        self._columns_read = int(self.feature.max()) + 1 if len(self.feature) else 0
        # the trees in preorder, for the native walk of a few rows (`_preorder_layout`)
        self.preorder = _preorder_layout(self) if native_module("trees") is not None else None

    def leaf_values(self, features: np.ndarray) -> np.ndarray:
        """The leaf value of every tree for every row: shape (rows, trees)."""
        fast = native_module("trees")
        if fast is not None and self.complete is not None:
            feature, split, leaf_value = self.complete
            columns = self._columns(features)
            return fast.leaf_values_complete(columns, feature, split, leaf_value, self.depth)
        if fast is not None:
            return fast.leaf_values(
                np.ascontiguousarray(features, dtype=np.float64), self.feature, self.split,
                self.children, self.value, self.roots, self.depth,
            )  # fmt: skip
        n, width = features.shape
        # flat takes on contiguous arrays: 2-D fancy indexing costs several times more
        flat = np.ascontiguousarray(features, dtype=np.float64).ravel()
        row_start = (np.arange(n) * width)[:, None]
        node = np.tile(self.roots, (n, 1))
        feature, split, children = self.feature, self.split, self.children
        for _ in range(self.depth):
            where = feature.take(node)
            where += row_start
            right = flat.take(where) > split.take(node)
            node *= 2
            node += right
            node = children.take(node)
        return self.value.take(node)

    def _columns(self, features: np.ndarray) -> np.ndarray:
        """The rows transposed for the native walk of the complete layout: the rows walked
        together read a feature from one cache line."""
        if features.shape[1] < self._columns_read:
            raise ValueError("fewer feature columns than the trees read")
        return np.ascontiguousarray(features.T, dtype=np.float64)

    def _rows(self, features: np.ndarray) -> np.ndarray:
        """The rows as the native walk of the preorder layout reads them."""
        if features.shape[1] < self._columns_read:
            raise ValueError("fewer feature columns than the trees read")
        return np.ascontiguousarray(features, dtype=np.float64)

    def raw_scores(self, features: np.ndarray, *, deadline: float | None = None) -> np.ndarray:
        """Summed leaf values: shape (rows,), or (rows, num_class) for a multiclass model.

        Rows are walked `_MAX_ROWS` at a time, and ``deadline`` (`budget`) looked at between
        them."""
        if len(features) > _MAX_ROWS:  # a page of 100,000 table cells: bounded memory
            parts = []
            for i in range(0, len(features), _MAX_ROWS):
                check_deadline(deadline, "while labelling")
                parts.append(self.raw_scores(features[i : i + _MAX_ROWS]))
            return np.concatenate(parts)
        fast = native_module("trees")
        if fast is not None and self.preorder is not None and len(features) < _FEW_ROWS:
            return fast.raw_scores_preorder(
                self._rows(features), *self.preorder, self.num_class
            )  # fmt: skip
        if fast is not None and self.complete is not None:  # walked and summed in one call
            feature, split, leaf_value = self.complete
            return fast.raw_scores_complete(
                self._columns(features), feature, split, leaf_value, self.depth,
                self.num_class,
            )  # fmt: skip
        values = self.leaf_values(features)
        if fast is not None:  # the same sums, in numpy's order (`leaf_sums`)
            return fast.leaf_sums(values, self.num_class)
        if self.num_class == 1:
            return values.sum(axis=1)
        return values.reshape(len(values), -1, self.num_class).sum(axis=1)


# The HTML5 containers whose text trafilatura and readability also drop as boilerplate: the
# rule of the multilingual labeller and of the corpus labeller (a labeller file's
# ``boilerplate_containers``; `training.BOILERPLATE_CONTAINERS_BY_MODE`)
BOILERPLATE_CONTAINERS: tuple[str, ...] = ("aside", "footer", "nav")


def container_mask(tag_paths: Sequence[str], containers: Iterable[str]) -> np.ndarray:
    """Whether each tag path passes through one of ``containers`` (a bool per path)."""
    wanted = frozenset(containers)
    if not wanted:
        return np.zeros(len(tag_paths), dtype=bool)
    seen: dict[str, bool] = {}
    out = np.zeros(len(tag_paths), dtype=bool)
    for i, path in enumerate(tag_paths):
        hit = seen.get(path)
        if hit is None:
            hit = seen[path] = not wanted.isdisjoint(path.split())
        out[i] = hit
    return out


def _complete_layout(trees: TreeEnsemble) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The trees as complete binary trees of their ``depth``, for
    ``_native/trees.pyx``'s ``leaf_values_complete``: per tree, the feature (int32) and split
    of nodes ``0 .. 2 ** depth - 2`` in breadth-first order (node ``k``'s children at ``2k + 1``
    and ``2k + 2``), and the values of the ``2 ** depth`` last-level nodes.

    A leaf above the last level points to itself, so it is copied into every place under it:
    whichever way a row goes from there, it ends at that leaf's value. Every row therefore
    reaches the value the node arrays give it, whatever its features (NaN included).
    """
    children, depth = trees.children, trees.depth
    nodes = trees.roots[:, None]  # (trees, nodes of the level), spec node numbers
    features, splits = [], []
    for _ in range(depth):
        features.append(trees.feature[nodes])
        splits.append(trees.split[nodes])
        # left and right child side by side: level l + 1 in breadth-first order
        nodes = np.stack((children[2 * nodes], children[2 * nodes + 1]), axis=-1)
        nodes = nodes.reshape(len(trees.roots), -1)
    return (
        np.ascontiguousarray(np.concatenate(features, axis=1), dtype=np.intc),
        np.ascontiguousarray(np.concatenate(splits, axis=1), dtype=np.float64),
        np.ascontiguousarray(trees.value[nodes], dtype=np.float64),
    )


def _preorder_layout(trees: TreeEnsemble) -> tuple[np.ndarray, ...]:
    """The trees in preorder, for ``_native/trees.pyx``'s ``raw_scores_preorder`` (a few
    rows): per node the feature (int32; -1 at a leaf), the split (at a leaf its value) and
    the index of its right child (int32; the left one follows its parent), and each tree's
    root, the trees one after another. A leaf is a node that points to itself."""
    children = trees.children.reshape(-1, 2).tolist()
    feature, split, value = trees.feature.tolist(), trees.split.tolist(), trees.value.tolist()
    out_feature: list[int] = []
    out_split: list[float] = []
    right: list[int] = []
    roots: list[int] = []
    for root in trees.roots.tolist():
        roots.append(len(out_feature))
        stack = [(root, -1)]  # (spec node, the preorder node whose right child it is)
        while stack:
            node, parent = stack.pop()
            if parent >= 0:
                right[parent] = len(out_feature)
            left_child, right_child = children[node]
            if left_child == node and right_child == node:
                out_feature.append(-1)
                out_split.append(value[node])
                right.append(-1)
                continue
            out_feature.append(feature[node])
            out_split.append(split[node])
            right.append(-1)
            stack.append((right_child, len(out_feature) - 1))
            stack.append((left_child, -1))  # next: the node after its parent
    return (
        np.asarray(out_feature, dtype=np.intc),
        np.asarray(out_split, dtype=np.float64),
        np.asarray(right, dtype=np.intc),
        np.asarray(roots, dtype=np.intc),
    )


class BlockLabeller:
    """The trained labeller of a mode: content or boilerplate per block (a binary tree
    ensemble and its threshold), and, where the training data marked them, the kind of a
    content block (paragraph, heading, list item: a multiclass ensemble)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        if spec.get("format") != LABELLER_FORMAT:
            raise ValueError(f"unsupported labeller format {spec.get('format')!r}")
        # whether it reads the class and id words (`CLASS_FEATURE_NAMES` after
        # `FEATURE_NAMES`) and site evidence (`SITE_FEATURE_NAMES` last)
        self.class_features = bool(spec.get("class_features", False))
        self.site_features = bool(spec.get("site_features", False))
        # where each block stands in the page (`page_structure.STRUCTURE_FEATURE_NAMES`,
        # after the class and id words)
        self.structure_features = bool(spec.get("structure_features", False))
        names = feature_names(
            site_features=self.site_features,
            class_features=self.class_features,
            structure_features=self.structure_features,
        )
        if tuple(spec["features"]) != names:
            raise ValueError("the labeller was trained on other features; retrain it")
        self._main_in = names.index("main_in") if self.structure_features else None
        # a stacked labeller: a second ensemble reads the first one's features, then how the
        # first one's scores spread over the page (`page_structure.SCORE_CONTEXT_NAMES`); the
        # threshold applies to the second one's score
        stage2 = spec.get("stage2")
        self.stage2 = TreeEnsemble(stage2) if stage2 else None
        # the columns it reads after `FEATURE_NAMES`, the second stage's score context
        # included: `label_blocks` has `block_features` leave room for them
        self.extra_columns = len(names) - len(FEATURE_NAMES)
        self.extra_columns += len(SCORE_CONTEXT_NAMES) if self.stage2 is not None else 0
        self.mode = spec.get("mode", "")
        self.threshold = float(spec["threshold"])
        self.trees = TreeEnsemble(spec)
        kinds = spec.get("kinds")
        self.kind_trees = TreeEnsemble(kinds) if kinds else None
        self.kind_classes: list[str] = list(kinds["classes"]) if kinds else []
        limit = spec.get("max_sentence_perplexity")
        # the sentence filter the labeller was trained with (None: none)
        self.max_sentence_perplexity = float(limit) if limit else None
        # HTML5 containers whose blocks are boilerplate whatever the trees say: read from
        # the rows' path_TAG features, or from the blocks' tag paths for a tag without one
        self.boilerplate_containers = tuple(spec.get("boilerplate_containers", ()))
        columns = [_INDEX.get(f"path_{tag}") for tag in self.boilerplate_containers]
        self._container_columns = None if None in columns else columns  # own columns first
        self.reads_tag_paths = bool(self.boilerplate_containers) and None in columns
        # the log10 perplexity its features get for sentences no model scored
        self.unscored_log_ppl = float(spec.get("unscored_log_ppl", UNSCORED_LOG_PPL))

    @classmethod
    def load(cls, path: str | Path) -> BlockLabeller:
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    def scores(self, features: np.ndarray, *, deadline: float | None = None) -> np.ndarray:
        """The raw score (log-odds of content) of each row of ``features`` (of a stacked
        labeller: the first stage's)."""
        if features.shape[0] == 0:
            return np.zeros(0)
        return self.trees.raw_scores(features, deadline=deadline)

    def page_scores(
        self,
        blocks: Sequence[Block],
        features: np.ndarray,
        main_in: np.ndarray | None = None,
        *,
        deadline: float | None = None,
        depths: tuple[np.ndarray, np.ndarray] | None = None,
        out: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The score of each block of a page, and the rows the last stage read: for a stacked
        labeller the second stage's over the first's and its `score_context` (``main_in``:
        which blocks are in the page's main element, from `structure_features`; ``depths``:
        the blocks' `page_structure.common_depths`, when the caller has them; ``out``:
        ``features`` with room for the score context after them, `_widened`). Past
        ``deadline`` (`budget`), `budget.TimeBudgetExceeded`."""
        scores = self.scores(features, deadline=deadline)
        if self.stage2 is None or not len(scores):
            return scores, features
        chars = np.expm1(features[:, _INDEX["log_chars"]])
        inside = main_in if main_in is not None else np.zeros(len(blocks), dtype=bool)
        context = score_context(blocks, scores, chars, inside, depths=depths)
        stacked = _widened(features, context, out=out)
        return self.stage2.raw_scores(stacked, deadline=deadline), stacked

    def main_in(self, rows: np.ndarray) -> np.ndarray | None:
        """Which blocks are in the page's main element (`page_structure`), from the ``rows``
        this labeller read; ``None`` when it does not read where blocks stand."""
        return None if self._main_in is None else rows[:, self._main_in] > 0

    def predict(
        self,
        features: np.ndarray,
        tag_paths: Sequence[str] | None = None,
        *,
        scores: np.ndarray | None = None,
        deadline: float | None = None,
    ) -> np.ndarray:
        """Whether each row is content: score above the trained threshold and not inside one
        of the ``boilerplate_containers`` (read from the rows' ``path_TAG`` features, or from
        their ``tag_paths`` for a tag without one). ``scores``: the rows' scores when the
        caller has them (a stacked labeller's, from `page_scores`). Past ``deadline``
        (`budget`), `budget.TimeBudgetExceeded`."""
        if scores is None:
            scores = self.scores(features, deadline=deadline)
        content = scores > self.threshold
        if self._container_columns:
            content &= ~(features[:, self._container_columns] > 0).any(axis=1)
        elif self.reads_tag_paths and tag_paths is not None:
            content &= ~container_mask(tag_paths, self.boilerplate_containers)
        return content

    def kinds(self, features: np.ndarray, *, deadline: float | None = None) -> list[str] | None:
        """The kind (``p``, ``h``, ``l``) of each row, or ``None`` without a kind model."""
        if self.kind_trees is None:
            return None
        if features.shape[0] == 0:
            return []
        best = self.kind_trees.raw_scores(features, deadline=deadline).argmax(axis=1)
        classes = self.kind_classes
        return [classes[i] for i in best.tolist()]


def feature_names(
    *, site_features: bool = False, class_features: bool = False, structure_features: bool = False
) -> tuple[str, ...]:
    """The columns a labeller reads: `FEATURE_NAMES`, then `CLASS_FEATURE_NAMES` if it reads
    class and id words, `STRUCTURE_FEATURE_NAMES` if it reads where blocks stand in the page,
    then `SITE_FEATURE_NAMES` if it uses site evidence. A stacked labeller's second stage reads
    these and `SCORE_CONTEXT_NAMES`."""
    return (
        FEATURE_NAMES
        + (CLASS_FEATURE_NAMES if class_features else ())
        + (STRUCTURE_FEATURE_NAMES if structure_features else ())
        + (SITE_FEATURE_NAMES if site_features else ())
    )


def page_features(
    labeller: BlockLabeller,
    blocks: Sequence[Block],
    base: np.ndarray,
    site_evidence: PageEvidence | None = None,
    *,
    depths: tuple[np.ndarray, np.ndarray] | None = None,
    out: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The rows ``labeller`` reads for a page, from its `block_features` ``base``; and which
    blocks are in the page's main element when it reads `structure_features` (else ``None``).
    ``depths``: the blocks' `page_structure.common_depths`, when the caller has them.
    ``out``: ``base`` with the `BlockLabeller.extra_columns` after it (`block_features`'s
    ``extra_columns``): the rows are written there (`_widened`)."""
    extra = [class_features(blocks)] if labeller.class_features else []
    main_in = None
    if labeller.structure_features:
        structure, main_in = structure_features(blocks, base, _INDEX, depths=depths)
        extra.append(structure)
    if labeller.site_features:
        extra.append(site_features(site_evidence, len(blocks)))
    if not extra:
        return base, main_in
    return _widened(base, *extra, out=out), main_in


def _widened(rows: np.ndarray, *extra: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``rows`` with the columns of ``extra`` after them, column-major (as ``rows`` are when
    built natively: the tree walk reads the transpose of the rows without a copy). ``out``:
    an array whose first columns are ``rows`` themselves, with room after them
    (`block_features`'s ``extra_columns``): the columns are written there and the result is a
    view of it, without a copy of the page's features."""
    if out is None:
        return np.concatenate([rows.T, *(e.T for e in extra)]).T
    at = rows.shape[1]
    for e in extra:
        out[:, at : at + e.shape[1]] = e
        at += e.shape[1]
    return out[:, :at]


_labellers: LoadedOnce[BlockLabeller] = LoadedOnce()


def labeller_path(mode: str) -> Path:
    """The shipped model file of a mode."""
    return MODELS_DIR / f"labeller-{mode}.json"


def site_labeller_path(
    mode: str, *, labeller_path: str | None = None, site_labeller_path: str | None = None
) -> str | None:
    """The labeller file for pages with site evidence: ``site_labeller_path`` if given, else
    the mode's bundled ``labeller-MODE-sites.json`` unless ``labeller_path`` replaces the
    bundled labeller (then that one serves every page); ``None`` when there is none."""
    if site_labeller_path:
        return site_labeller_path
    if labeller_path or mode == "perplexity":
        return None
    bundled = MODELS_DIR / f"labeller-{mode}-sites.json"
    return str(bundled) if bundled.is_file() else None


def load_labeller(mode: str, path: str | Path | None = None) -> BlockLabeller:
    """The process-wide labeller of a mode (or of an explicit file), loaded once."""
    return _labellers.get(str(path) if path else mode, _load_labeller, mode, path)


def _load_labeller(mode: str, path: str | Path | None) -> BlockLabeller:
    return BlockLabeller.load(path or labeller_path(mode))


def label_blocks(
    blocks: Sequence[Block],
    sentences: Sequence[str],
    block_of: Sequence[int],
    scores: tuple[Sequence[float], Sequence[int], Sequence[int]],
    *,
    mode: str,
    labeller_path: str | None = None,
    site_evidence: PageEvidence | None = None,
    deadline: float | None = None,
) -> tuple[list[bool], list[str], BlockLabeller, np.ndarray]:
    """Keep (content) or drop (boilerplate) each block of a page, and name the kind of the
    kept ones.

    Args:
        blocks, sentences, block_of: the page as the pipeline cut it.
        scores: the sentences' log10 probabilities, tokens and OOVs, as three columns
            (`lm.ScoreColumns`).
        mode: the settings' mode, which names the bundled labeller.
        labeller_path: a labeller file to use instead.
        site_evidence: what the site's other pages say of each block (`sites.SiteTemplates.assess`);
            read only by a labeller trained with site features.
        deadline: past it (`budget`), `budget.TimeBudgetExceeded`.

    Returns:
        Per block whether it is content; per block its kind, from the labeller's kind model
        for kept blocks when it has one, else from markup (`block_kinds`); the labeller; and
        the rows it read (`block_features` first).
    """
    labeller = load_labeller(mode, labeller_path)
    log10_probs, n_tokens, n_oov = scores
    check_deadline(deadline, "while labelling")
    # the page's features, then the columns the labeller reads after them (written in place)
    out = block_features(
        blocks, sentences, block_of, log10_probs=log10_probs, n_tokens=n_tokens, n_oov=n_oov,
        extra_columns=labeller.extra_columns,
    )  # fmt: skip
    features = out[:, : len(FEATURE_NAMES)]
    check_deadline(deadline, "while labelling")  # 30 ms for 20,000 blocks
    # the elements the structure features and the score context both read: found once, from
    # the tag path prefixes the rows already count
    depths = row_depths(features, _INDEX) if labeller.structure_features else None
    features, main_in = page_features(
        labeller, blocks, features, site_evidence, depths=depths, out=out
    )
    check_deadline(deadline, "while labelling")
    scores, features = labeller.page_scores(
        blocks, features, main_in, deadline=deadline, depths=depths, out=out
    )
    keep = labeller.predict(
        features, [b.tag_path for b in blocks] if labeller.reads_tag_paths else None,
        scores=scores,
    )  # fmt: skip
    kinds = block_kinds(blocks)
    if labeller.kind_trees is not None and keep.any():
        kept = np.flatnonzero(keep)
        # the kept rows, gathered column by column: column-major as ``features`` is when
        # built natively, so that the tree walk reads their transpose without a copy
        kept_features = features.T.take(kept, axis=1).T
        found = labeller.kinds(kept_features, deadline=deadline) or ()
        for i, kind in zip(kept.tolist(), found, strict=True):
            kinds[i] = kind
    return keep.tolist(), kinds, labeller, features
