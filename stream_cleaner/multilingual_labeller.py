"""The multilingual block labeller: content or boilerplate per block, in any language.

It reads the language-independent features of `block_features` (MultiBoilerNet's idea).

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._native import native_module
from .block_features import (
    BASELINE_FEATURE_NAMES,
    FEATURE_NAMES,
    TOP_TAGS,
    BlockLike,
    language_independent_features,
)
from .budget import TimeBudgetExceeded, check_deadline
from .labeller import MODELS_DIR, TreeEnsemble, container_mask
from .loaded import LoadedOnce

MULTILINGUAL_FORMAT = 1
MULTILINGUAL_MODEL = MODELS_DIR / "labeller-multilingual.json"


def _array(spec: dict[str, Any]) -> np.ndarray:
    """An array of a model file: ``{"shape": [...], "float32": base64 of little-endian floats}``."""
    data = np.frombuffer(base64.b64decode(spec["float32"]), dtype="<f4")
    return data.reshape(spec["shape"]).astype(np.float64)


# Rows of the recurrence between two looks at the page's deadline: about 10 ms of CPU with the
# shipped networks (a page of 100,000 blocks takes 1.5 s or more in C).
RECURRENCE_STEPS = 256
# Rows projected at once (`SequenceLayer.network_logits`), the deadline looked at between them:
# about 3 ms of CPU with the shipped networks (2,048 rows took 12 ms, and 50-70 on a loaded host,
# past the tenth of a budget `tests/test_budget.py` allows). The projections are the same, bit
# for bit, whatever the slices' size, as long as they are equal.
PROJECTION_ROWS = 512


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
            # in slices of rows (`PROJECTION_ROWS`), the deadline looked at between them; of
            # equal size: a last one of a single row is a matrix-vector product, whose sums BLAS
            # rounds differently
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
        features = language_independent_features(
            blocks, language_features=self.language_features, deadline=deadline
        )
        check_deadline(deadline, "in the multilingual labeller")
        tag_paths = [b.tag_path for b in blocks]
        return self.predict_features(features, tag_paths, deadline=deadline).tolist()


_loaded: LoadedOnce[MultilingualLabeller] = LoadedOnce()


def load_multilingual(path: str | Path | None = None) -> MultilingualLabeller:
    """The process-wide multilingual labeller (the shipped one by default), loaded once."""
    key = str(path or MULTILINGUAL_MODEL)
    return _loaded.get(key, MultilingualLabeller.load, key)


def predict_blocks(blocks: Sequence[BlockLike], path: str | Path | None = None) -> list[bool]:
    """Content or boilerplate for each block of a page, with the multilingual labeller."""
    return load_multilingual(path).predict(blocks)
