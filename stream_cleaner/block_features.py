"""Language-independent block features: what the multilingual labeller reads of a block.

MultiBoilerNet (a block labeller trained on English that works zero-shot on Chinese, Japanese
and Thai) rests on one idea: describe a block by what does not depend on its language. The
features here need a block's tag path, depth and text only (and its link density when the
parser knows it):

- markup: counts of the `TOP_TAGS` (the 40 most frequent tags in the tag paths of the English
  CleanEval training split, MultiBoilerNet's top-k tag vector) in the block's path, the depth
  and the depth less the page's median (Japanese pages nest far deeper than 2007 English ones),
  the share of the page's blocks on the same tag path (menus and footers repeat one path), the
  last tag, tags closed and opened since the previous block, link density;
- text, by Unicode character class rather than by word: characters and display width (a CJK
  character is two columns wide, as in a terminal), the share of letters (marks included, so
  Thai vowel signs count as letters), digits, sentence-ending punctuation (``.!?`` and the CJK
  ``。！？``), other punctuation (CJK and Thai included), symbols; whitespace only relative to
  the page's median (Chinese and Japanese have none, English a sixth of its characters);
  lengths also relative to the page's median block;
- page: relative position, share of the page's characters before and in the block, duplicates
  of the text on the page, the enclosing container run's length, size and link density;
- neighbours: a few of these for the two blocks before and after.

No stopword, word list, case or language model: `LANGUAGE_FEATURES` are such features, kept
apart only to measure (bench/multilingual.py) what they cost a model that must transfer.

The labeller that reads them is `multilingual_labeller.MultilingualLabeller`.
"""

from __future__ import annotations

import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np

from .budget import check_deadline

# The 40 most frequent tags in the tag paths of MultiBoilerNet's English CleanEval training
# split (cleaneval/train, 54 pages), most frequent first, ties by name (`top_tags`).
TOP_TAGS: tuple[str, ...] = tuple(
    "div span body html text table tr tbody td a p font ul center li b form blockquote option "
    "select strong i h3 h2 nobr small em marquee big sup fieldset dl h4 dd title h5 label h1 "
    "optgroup ol".split()
)
_TAG_INDEX = {tag: i for i, tag in enumerate(TOP_TAGS)}
_CONTAINER_TAGS = frozenset(
    "div td th table section article main aside nav header footer form ul ol dl body "
    "blockquote center".split()
)

# Unicode classes: 0 whitespace, 1 letter or mark, 2 digit or other number, 3 sentence-ending
# punctuation, 4 other punctuation, 5 symbol, 6 control/unassigned/other.
_N_CLASSES = 7
_SENTENCE_END = frozenset(".!?。！？｡…؟।")
_TABLE_SIZE = 0x30000  # code points above: class 1 (letters of supplementary planes), width 1
_tables: tuple[np.ndarray, np.ndarray] | None = None
_tables_lock = threading.Lock()


def _char_tables() -> tuple[np.ndarray, np.ndarray]:
    """Class and display width of every code point below `_TABLE_SIZE` (built once, ~0.2 s)."""
    global _tables
    if _tables is None:
        with _tables_lock:
            if _tables is None:
                classes = np.full(_TABLE_SIZE + 1, 1, dtype=np.int64)
                widths = np.ones(_TABLE_SIZE + 1, dtype=np.float64)
                for code in range(_TABLE_SIZE):
                    ch = chr(code)
                    cat = unicodedata.category(ch)
                    if ch.isspace() or cat[0] == "Z":
                        cls = 0
                    elif cat[0] in "LM":
                        cls = 1
                    elif cat[0] == "N":
                        cls = 2
                    elif ch in _SENTENCE_END:
                        cls = 3
                    elif cat[0] == "P":
                        cls = 4
                    elif cat[0] == "S":
                        cls = 5
                    else:
                        cls = 6
                    classes[code] = cls
                    if unicodedata.east_asian_width(ch) in "WF":
                        widths[code] = 2.0
                    elif cat in ("Mn", "Me"):  # combining marks take no column
                        widths[code] = 0.0
                _tables = (classes, widths)
    return _tables


class BlockLike(Protocol):
    """What the features need of a block (`document.Block` has it)."""

    tag_path: str
    depth: int
    text: str
    link_density: float


_OWN = (
    [f"tag_{tag}" for tag in TOP_TAGS]
    + [f"last_{tag}" for tag in ("a", "span", "td", "li", "p", "div", "option", "font", "b")]
    + [
        "depth",
        "depth_rel",
        "path_share",
        "in_link",
        "link_density",
        "tags_closed",
        "tags_opened",
        "log_chars",
        "log_width",
        "log_chars_rel",
        "log_width_rel",
        "ratio_letter",
        "ratio_digit",
        "ratio_sentence_punct",
        "ratio_other_punct",
        "ratio_symbol",
        "ratio_space_rel",
        "ends_sentence",
        "sentence_marks",
        "duplicates",
        "position",
        "chars_before",
        "chars_share",
        "log_page_blocks",
        "group_log_width",
        "group_blocks",
        "group_link_density",
        "group_share",
    ]
)
# Language-dependent features, for the baseline only: words split on spaces, Latin case,
# ASCII, English function words.
LANGUAGE_FEATURES = (
    "log_words",
    "mean_word_length",
    "ratio_space",
    "ratio_upper",
    "ratio_ascii",
    "stopword_share",
)
_CONTEXT = (
    "log_width",
    "log_width_rel",
    "link_density",
    "ends_sentence",
    "ratio_other_punct",
    "depth",
    "duplicates",
    "group_log_width",
)
_OFFSETS = (-2, -1, 1, 2)
FEATURE_NAMES: tuple[str, ...] = tuple(
    _OWN + [f"{name}@{offset:+d}" for offset in _OFFSETS for name in _CONTEXT]
)
BASELINE_FEATURE_NAMES: tuple[str, ...] = FEATURE_NAMES + LANGUAGE_FEATURES
_COL = {name: i for i, name in enumerate(_OWN)}
_CONTEXT_INDEX = np.array([_COL[name] for name in _CONTEXT])
_LAST_TAGS = {name[5:]: _COL[name] for name in _OWN if name.startswith("last_")}
_STOPWORDS = frozenset(
    "the of and to a in is that for it as was with be by on not he this are or his from at "
    "which but have an they you were their has its one all we can there been".split()
)

_path_cache: dict[str, tuple[np.ndarray, str, tuple[str, ...]]] = {}
_PATH_CACHE_MAX = 50_000


def _path_info(tag_path: str) -> tuple[np.ndarray, str, tuple[str, ...]]:
    """Tag counts and last-tag flags of a path, its container prefix and its tags (cached)."""
    info = _path_cache.get(tag_path)
    if info is None:
        tags = tuple(tag_path.split())
        vector = np.zeros(len(TOP_TAGS) + len(_LAST_TAGS))
        for tag in tags:
            i = _TAG_INDEX.get(tag)
            if i is not None:
                vector[i] += 1.0
        if tags and tags[-1] in _LAST_TAGS:
            vector[_LAST_TAGS[tags[-1]]] = 1.0
        cut = len(tags)
        while cut > 0 and tags[cut - 1] not in _CONTAINER_TAGS:
            cut -= 1
        if len(_path_cache) > _PATH_CACHE_MAX:
            _path_cache.clear()
        info = _path_cache[tag_path] = (vector, " ".join(tags[:cut]), tags)
    return info


def page_features(
    tag_paths: Sequence[str],
    texts: Sequence[str],
    *,
    depths: Sequence[int] | None = None,
    link_densities: Sequence[float] | None = None,
    language_features: bool = False,
    deadline: float | None = None,
) -> np.ndarray:
    """The feature matrix of a page: one row per block, columns as in `FEATURE_NAMES`.

    Args:
        tag_paths: each block's tag path (``html body div ul li a``), in reading order.
        texts: each block's text.
        depths: each block's depth (default: the number of tags in its path).
        link_densities: each block's share of characters inside links (default: 1 when its
            path passes through ``a``, else 0, as the MultiBoilerNet CSVs allow).
        language_features: append `LANGUAGE_FEATURES` (`BASELINE_FEATURE_NAMES`): for the
            baseline that shows what language-dependent features cost; never for the model.
        deadline: looked at between the steps (`budget`): 0.4 s for 100,000 blocks in all.
    """
    n = len(texts)
    width = len(BASELINE_FEATURE_NAMES if language_features else FEATURE_NAMES)
    if n == 0:
        return np.zeros((0, width))
    own = np.zeros((n, len(_OWN)))
    col = _COL
    rows = np.arange(n)

    # markup, once per distinct path
    path_id: dict[str, int] = {}
    ids = np.fromiter((path_id.setdefault(p, len(path_id)) for p in tag_paths), np.int64, n)
    infos = [_path_info(p) for p in path_id]
    n_tag = len(TOP_TAGS) + len(_LAST_TAGS)
    own[:, :n_tag] = np.array([info[0] for info in infos])[ids]
    path_tags = [info[2] for info in infos]
    in_link = np.array([1.0 if "a" in tags else 0.0 for tags in path_tags])[ids]
    own[:, col["in_link"]] = in_link
    own[:, col["depth"]] = (
        np.asarray(depths, dtype=np.float64)
        if depths is not None
        else np.array([len(tags) for tags in path_tags], dtype=np.float64)[ids]
    )
    own[:, col["depth_rel"]] = own[:, col["depth"]] - np.median(own[:, col["depth"]])
    own[:, col["path_share"]] = np.bincount(ids)[ids] / n
    links = np.asarray(link_densities, dtype=np.float64) if link_densities is not None else in_link
    own[:, col["link_density"]] = links
    previous = np.concatenate(([-1], ids[:-1]))
    changes = {}
    for a, b in set(zip(previous.tolist(), ids.tolist(), strict=True)):
        before = path_tags[a] if a >= 0 else ()
        after = path_tags[b]
        common = 0
        for x, y in zip(before, after, strict=False):
            if x != y:
                break
            common += 1
        changes[a, b] = (len(before) - common, len(after) - common)
    own[:, col["tags_closed"] : col["tags_opened"] + 1] = np.array(
        [changes[a, b] for a, b in zip(previous.tolist(), ids.tolist(), strict=True)]
    )

    check_deadline(deadline, "in the multilingual labeller")
    # characters by class, one pass over the page's code points
    classes_of, widths_of = _char_tables()
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    joined = "\n".join(texts)
    codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    codes = np.minimum(codes, _TABLE_SIZE)
    classes = classes_of[codes]
    owner = np.repeat(rows, lengths + 1)[: len(codes)]
    counts = np.bincount(owner * _N_CLASSES + classes, minlength=n * _N_CLASSES)
    counts = counts.reshape(n, _N_CLASSES).astype(np.float64)
    counts[:-1, 0] -= 1.0  # the "\n" joining each block to the next
    block_width = np.bincount(owner, widths_of[codes], minlength=n)
    block_width[:-1] -= 1.0
    safe = np.maximum(lengths, 1).astype(np.float64)
    log_chars = np.log1p(lengths)
    log_width = np.log1p(np.maximum(block_width, 0.0))
    own[:, col["log_chars"]] = log_chars
    own[:, col["log_width"]] = log_width
    own[:, col["log_chars_rel"]] = log_chars - np.median(log_chars)
    own[:, col["log_width_rel"]] = log_width - np.median(log_width)
    own[:, col["ratio_letter"]] = counts[:, 1] / safe
    own[:, col["ratio_digit"]] = counts[:, 2] / safe
    own[:, col["ratio_sentence_punct"]] = counts[:, 3] / safe
    own[:, col["ratio_other_punct"]] = counts[:, 4] / safe
    own[:, col["ratio_symbol"]] = counts[:, 5] / safe
    space = counts[:, 0] / safe
    own[:, col["ratio_space_rel"]] = space - np.median(space)
    stripped = [t.rstrip() for t in texts]
    own[:, col["ends_sentence"]] = [bool(t) and t[-1] in _SENTENCE_END for t in stripped]
    own[:, col["sentence_marks"]] = np.log1p(counts[:, 3])

    check_deadline(deadline, "in the multilingual labeller")
    # page
    seen = Counter(texts)
    own[:, col["duplicates"]] = [seen[t] - 1 for t in texts]
    total = float(lengths.sum()) or 1.0
    own[:, col["position"]] = rows / max(n - 1, 1)
    own[:, col["chars_before"]] = (np.cumsum(lengths) - lengths) / total
    own[:, col["chars_share"]] = lengths / total
    own[:, col["log_page_blocks"]] = np.log1p(n)
    container_id: dict[str, int] = {}
    containers = np.array([container_id.setdefault(info[1], len(container_id)) for info in infos])
    by_block = containers[ids]
    group = np.concatenate(([0], np.cumsum(by_block[1:] != by_block[:-1])))
    group_width = np.bincount(group, np.maximum(block_width, 0.0))
    group_chars = np.bincount(group, lengths.astype(np.float64))
    own[:, col["group_log_width"]] = np.log1p(group_width[group])
    own[:, col["group_blocks"]] = np.bincount(group)[group]
    own[:, col["group_link_density"]] = np.bincount(group, links * lengths)[group] / np.maximum(
        group_chars[group], 1.0
    )
    own[:, col["group_share"]] = group_chars[group] / total

    # neighbours
    context = own[:, _CONTEXT_INDEX]
    parts = [own]
    for offset in _OFFSETS:
        shifted = np.full_like(context, -1.0)
        k = min(abs(offset), n)
        if offset < 0:
            shifted[k:] = context[: n - k]
        else:
            shifted[: n - k] = context[k:]
        parts.append(shifted)
    if language_features:
        parts.append(_language_features(texts, counts, safe))
    return np.hstack(parts)


def _language_features(texts: Sequence[str], counts: np.ndarray, safe: np.ndarray) -> np.ndarray:
    """`LANGUAGE_FEATURES`: what a labeller built for English would use."""
    out = np.zeros((len(texts), len(LANGUAGE_FEATURES)))
    for i, text in enumerate(texts):
        words = text.split()
        n_words = len(words)
        out[i, 0] = np.log1p(n_words)
        out[i, 1] = (len(text) - counts[i, 0]) / max(n_words, 1)
        out[i, 3] = sum(ch.isupper() for ch in text) / safe[i]
        out[i, 4] = sum(ch < "\x80" for ch in text) / safe[i]
        out[i, 5] = sum(w.lower() in _STOPWORDS for w in words) / max(n_words, 1)
    out[:, 2] = counts[:, 0] / safe
    return out


def language_independent_features(
    blocks: Sequence[BlockLike], *, language_features: bool = False, deadline: float | None = None
) -> np.ndarray:
    """`page_features` of the pipeline's blocks (`document.Block`): the multilingual
    labeller's rows (`labeller.block_features` is the auto labeller's)."""
    return page_features(
        [b.tag_path for b in blocks],
        [b.text for b in blocks],
        depths=[b.depth for b in blocks],
        link_densities=[b.link_density for b in blocks],
        language_features=language_features,
        deadline=deadline,
    )


def top_tags(tag_paths: Iterable[str], k: int = len(TOP_TAGS)) -> tuple[str, ...]:
    """The ``k`` most frequent tags in ``tag_paths`` (ties by name): how `TOP_TAGS` was made."""
    counts = Counter(tag for path in tag_paths for tag in path.split())
    return tuple(tag for tag, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k])
