"""Language-independent block features and the multilingual block labeller.

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

The classifier is a LightGBM tree ensemble exported as `labeller.TreeEnsemble` arrays
(`models/labeller-multilingual.json`: three boosters trained with different seeds, their trees
merged so that the sum is their mean score, since one seed's zero-shot figures swing by up to
0.05); `MultilingualLabeller.predict(blocks)` labels a page.

One rule no English training page can teach: a block whose tag path passes through an HTML5
``nav``, ``footer`` or ``aside`` is boilerplate (`labeller.BOILERPLATE_CONTAINERS`, the model file's
``boilerplate_containers``), as in trafilatura or readability. The 2007 CleanEval pages the
trees learn from predate those tags; on MultiBoilerNet's modern English GoogleTrends train and
val pages, 0.0-4.9% of their blocks are content, and the rule raises the macro F1 there from
0.760 to 0.771 (adding ``header`` gave 0.767; bench/multilingual.py prints both).

A sequence layer (`SequenceLayer`), MultiBoilerNet's own idea: three bidirectional GRUs read
the page's rows in order, so that a block is judged with the whole page around it, and their
mean probability of content is averaged with the trees' (``sequence`` in the model file).
bench/multilingual_sequence.py chose it on English data alone (cross-validation on CleanEval,
MultiBoilerNet's GoogleTrends pages as validation; two disjoint seed sets) among LSTMs and GRUs
alone or beside the trees; it was trained with torch, which never runs here: the forward pass
is numpy. Earlier sequence layers, a second-stage model on the out-of-fold scores of the
neighbouring blocks (stacking) and a two-state Viterbi pass over the scores, did not beat the
trees alone (bench/multilingual_variants.py; figures in the model's .meta.json).
"""

from __future__ import annotations

import base64
import itertools
import json
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ._native import native_module
from .budget import TimeBudgetExceeded, check_deadline
from .labeller import MODELS_DIR, TreeEnsemble, container_mask

MULTILINGUAL_FORMAT = 1
MULTILINGUAL_MODEL = MODELS_DIR / "labeller-multilingual.json"

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


def block_features(
    blocks: Sequence[BlockLike], *, language_features: bool = False, deadline: float | None = None
) -> np.ndarray:
    """`page_features` of the pipeline's blocks (`document.Block`)."""
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


def _array(spec: dict[str, Any]) -> np.ndarray:
    """An array of a model file: ``{"shape": [...], "float32": base64 of little-endian floats}``."""
    data = np.frombuffer(base64.b64decode(spec["float32"]), dtype="<f4")
    return data.reshape(spec["shape"]).astype(np.float64)


# Rows of the recurrence between two looks at the page's deadline: about 10 ms of CPU with the
# shipped networks (a page of 100,000 blocks takes 1.5 s or more in C).
RECURRENCE_STEPS = 256
# Rows projected at once (`SequenceLayer.network_logits`), the deadline looked at between them.
PROJECTION_ROWS = 2_048


class SequenceLayer:
    """Bidirectional GRUs over a page's rows, in numpy: each network's probability of content
    per block, and their mean.

    A row is standardised with the English training pages' means and deviations and clipped,
    as at training time. The input projections of all rows are one matrix product; then every
    direction of every network runs in one loop over the blocks (the backward ones read the
    page from its end: `gru_states`, in C when the native speed-ups are built). The gates are
    torch's GRU (``r``, ``z``, ``n``), and a linear layer over both directions' states gives
    each block's log-odds.
    """

    def __init__(self, spec: dict[str, Any], n_features: int) -> None:
        if spec.get("cell") != "gru":
            raise ValueError(f"unsupported sequence layer {spec.get('cell')!r}")
        self.mean = np.asarray(spec["mean"], dtype=np.float64)
        self.scale = np.asarray(spec["scale"], dtype=np.float64)
        self.clip = float(spec["clip"])
        self.threshold = float(spec["threshold"])
        self.tree_weight = float(spec["tree_weight"])
        networks = spec["networks"]
        hidden = int(spec["hidden"])
        directions = [
            {name: _array(net[name + suffix]) for name in ("weight_ih", "weight_hh", "bias_ih",
                                                            "bias_hh")}
            for net in networks
            for suffix in ("", "_reverse")
        ]  # fmt: skip
        shapes = {(d["weight_ih"].shape, d["weight_hh"].shape) for d in directions}
        if shapes != {((3 * hidden, n_features), (3 * hidden, hidden))} or not (
            self.mean.shape == self.scale.shape == (n_features,)
        ):
            raise ValueError("the sequence layer does not fit the labeller's features; retrain")
        self.hidden = hidden
        self.w_ih = np.vstack([d["weight_ih"] for d in directions]).T  # (features, dirs * 3h)
        self.b_ih = np.concatenate([d["bias_ih"] for d in directions])
        self.w_hh = np.stack([d["weight_hh"] for d in directions])  # (dirs, 3h, h)
        self.w_hh_t = np.ascontiguousarray(self.w_hh.transpose(0, 2, 1))  # for the C loop
        self.b_hh = np.stack([d["bias_hh"] for d in directions])  # (dirs, 3h)
        self.w_out = np.stack([_array(net["out_weight"])[0] for net in networks])  # (nets, 2h)
        self.b_out = np.array([_array(net["out_bias"])[0] for net in networks])

    def network_logits(self, features: np.ndarray, *, deadline: float | None = None) -> np.ndarray:
        """Each network's log-odds of content per row of a `page_features` matrix,
        ``(networks, rows)``; `budget.TimeBudgetExceeded` past ``deadline`` (`budget`)."""
        n, hid, dirs = len(features), self.hidden, len(self.w_hh)
        gates = np.empty((n, dirs, 3 * hid))
        with _one_blas_thread():
            # in slices of rows, the deadline looked at between them: 0.5 s for 100,000 rows.
            # Slices of equal size: a last one of a single row is a matrix-vector product, whose
            # sums BLAS rounds differently
            slices = -(-n // PROJECTION_ROWS)
            bounds = [n * i // slices for i in range(slices + 1)]
            for start, end in itertools.pairwise(bounds):
                check_deadline(deadline, "in the multilingual labeller")
                rows = features[start:end]
                x = np.clip((rows - self.mean) / self.scale, -self.clip, self.clip)
                part = (x @ self.w_ih + self.b_ih).reshape(end - start, dirs, 3 * hid)
                gates[start:end, 0::2] = part[:, 0::2]
                # a backward direction's step t reads row n - 1 - t
                gates[n - end : n - start, 1::2] = part[::-1, 1::2]
        native = native_module("sequence")
        if native is not None:
            states = native.gru_states(
                gates, self.w_hh_t, self.b_hh, deadline, TimeBudgetExceeded, RECURRENCE_STEPS
            )
        else:
            states = gru_states(gates, self.w_hh, self.b_hh, deadline=deadline)
        forward, backward = states[:, 0::2], states[::-1, 1::2]  # (rows, networks, hidden)
        return (
            np.einsum("bkh,kh->kb", forward, self.w_out[:, :hid])
            + np.einsum("bkh,kh->kb", backward, self.w_out[:, hid:])
            + self.b_out[:, None]
        )

    def probabilities(self, features: np.ndarray, *, deadline: float | None = None) -> np.ndarray:
        """The networks' mean probability of content per row."""
        return np.mean(_sigmoid(self.network_logits(features, deadline=deadline)), axis=0)


_blas: Any = None
_blas_lock = threading.Lock()


def _one_blas_thread() -> Any:
    """A context in which numpy's BLAS runs one thread. At the size of a page's projections
    OpenBLAS splits a product over every core, and its threads then spin between calls: the
    labeller took 6.4 ms of CPU for a product that takes 1.5 on one thread, and a worker's
    spinning threads take the CPU of the other workers on its host."""
    global _blas
    if _blas is None:
        from threadpoolctl import ThreadpoolController

        with _blas_lock:
            if _blas is None:
                _blas = ThreadpoolController()
    return _blas.limit(limits=1, user_api="blas")


def gru_states(
    gates: np.ndarray, w_hh: np.ndarray, b_hh: np.ndarray, *, deadline: float | None = None
) -> np.ndarray:
    """The hidden state of every direction after every row, ``(rows, directions, hidden)``:
    the reference of ``_native/sequence.gru_states``.

    Args:
        gates: each row's input projections per direction, ``(rows, directions, 3 hidden)``,
            a backward direction's rows already reversed (step ``t`` reads ``gates[t]``).
        w_hh: the recurrent weights, ``(directions, 3 hidden, hidden)``, gates in torch's
            order (reset, update, candidate).
        b_hh: the recurrent biases, ``(directions, 3 hidden)``.
        deadline: past it (`budget`; looked at every `RECURRENCE_STEPS` rows),
            `budget.TimeBudgetExceeded`.
    """
    n, dirs, hid = gates.shape[0], gates.shape[1], w_hh.shape[2]
    states = np.empty((n, dirs, hid))
    h = np.zeros((dirs, hid))
    for t in range(n):
        if t and not t % RECURRENCE_STEPS:
            check_deadline(deadline, "in the multilingual labeller's recurrence")
        recurrent = np.matmul(w_hh, h[:, :, None])[:, :, 0] + b_hh
        g = gates[t]
        rz = _sigmoid(g[:, : 2 * hid] + recurrent[:, : 2 * hid])
        candidate = np.tanh(g[:, 2 * hid :] + rz[:, :hid] * recurrent[:, 2 * hid :])
        h = candidate + rz[:, hid:] * (h - candidate)
        states[t] = h
    return states


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * np.tanh(0.5 * x) + 0.5


class MultilingualLabeller:
    """Content (True) or boilerplate per block, from language-independent features only."""

    def __init__(self, spec: dict[str, Any]) -> None:
        if spec.get("format") != MULTILINGUAL_FORMAT:
            raise ValueError(f"unsupported multilingual labeller format {spec.get('format')!r}")
        self.language_features = bool(spec.get("language_features", False))
        expected = BASELINE_FEATURE_NAMES if self.language_features else FEATURE_NAMES
        if tuple(spec["features"]) != expected or tuple(spec["top_tags"]) != TOP_TAGS:
            raise ValueError("the multilingual labeller was trained on other features; retrain")
        self.threshold = float(spec["threshold"])
        self.boilerplate_containers = tuple(spec.get("boilerplate_containers", ()))
        self.trees = TreeEnsemble(spec)
        self.sequence = (
            SequenceLayer(spec["sequence"], len(expected)) if spec.get("sequence") else None
        )

    @classmethod
    def load(cls, path: str | Path = MULTILINGUAL_MODEL) -> MultilingualLabeller:
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    def scores(self, features: np.ndarray, *, deadline: float | None = None) -> np.ndarray:
        """The raw score (log-odds of content) of each row of a `page_features` matrix."""
        if features.shape[0] == 0:
            return np.zeros(0)
        return self.trees.raw_scores(features, deadline=deadline)

    def probabilities(self, features: np.ndarray, *, deadline: float | None = None) -> np.ndarray:
        """With a sequence layer: the probability of content of each row, the trees' and the
        networks' weighed together (``tree_weight``)."""
        if self.sequence is None:
            raise ValueError("this multilingual labeller has no sequence layer")
        if features.shape[0] == 0:
            return np.zeros(0)
        weight = self.sequence.tree_weight
        trees = _sigmoid(self.scores(features, deadline=deadline))
        networks = self.sequence.probabilities(features, deadline=deadline)
        return weight * trees + (1.0 - weight) * networks

    def predict_features(
        self,
        features: np.ndarray,
        tag_paths: Sequence[str] | None = None,
        *,
        deadline: float | None = None,
    ) -> np.ndarray:
        """Whether each row is content: the trees' score (or, with a sequence layer, the
        probability of `probabilities`) above the threshold chosen on English data and, when
        the rows' ``tag_paths`` are given, not inside a ``boilerplate_containers`` tag.
        Past ``deadline`` (`budget`), `budget.TimeBudgetExceeded`."""
        if self.sequence is not None:
            content = self.probabilities(features, deadline=deadline) > self.sequence.threshold
        else:
            content = self.scores(features, deadline=deadline) > self.threshold
        if tag_paths is not None and self.boilerplate_containers:
            content &= ~container_mask(tag_paths, self.boilerplate_containers)
        return content

    def predict(self, blocks: Sequence[BlockLike], *, deadline: float | None = None) -> list[bool]:
        """Whether each block of a page is content (`budget.TimeBudgetExceeded` past
        ``deadline``)."""
        features = block_features(
            blocks, language_features=self.language_features, deadline=deadline
        )
        check_deadline(deadline, "in the multilingual labeller")
        tag_paths = [b.tag_path for b in blocks]
        return self.predict_features(features, tag_paths, deadline=deadline).tolist()


_loaded: dict[str, MultilingualLabeller] = {}
_loaded_lock = threading.Lock()


def load_multilingual(path: str | Path | None = None) -> MultilingualLabeller:
    """The process-wide multilingual labeller (the shipped one by default), loaded once."""
    key = str(path or MULTILINGUAL_MODEL)
    labeller = _loaded.get(key)
    if labeller is None:
        with _loaded_lock:
            labeller = _loaded.get(key)
            if labeller is None:
                labeller = _loaded[key] = MultilingualLabeller.load(key)
    return labeller


def predict_blocks(blocks: Sequence[BlockLike], path: str | Path | None = None) -> list[bool]:
    """Content or boilerplate for each block of a page, with the multilingual labeller."""
    return load_multilingual(path).predict(blocks)
