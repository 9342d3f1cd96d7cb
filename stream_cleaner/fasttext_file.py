"""fastText's supervised model files (``.bin``, quantised ``.ftz``), read into arrays for
``_native/langid.pyx``, which predicts as fastText does (the same tokens, subwords, sums and
hierarchical softmax, so the same labels and probabilities to the bit) without fastText's
hash-map chasing: a page's language cost 0.15 ms in fastText's calls, most of it cache misses.
The matrices stay as the file has them (a quantised row is 8 bytes of codes), so that the
tables a text reads stay small enough for the CPU's caches between pages.

The layout is fastText 0.9's (``FastText::loadModel``): the magic number and version, the
arguments, the dictionary (its words, then the pruned n-gram buckets), the input matrix
(dense, or product-quantised with quantised norms) and the output matrix. Only what a
hierarchical-softmax classifier without word n-grams needs is kept (lid.176's kind); other
models raise `ValueError`, and the caller keeps fastText for them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = 793712314
VERSION = 12
_ARGS = struct.Struct("<12id")  # dim ws epoch minCount neg wordNgrams loss model bucket
# minn maxn lrUpdateRate, then t
LOSS_HS, MODEL_SUPERVISED = 1, 3
ENTRY_WORD, ENTRY_LABEL = 0, 1
KSUB = 256  # centroids per sub-quantiser (fastText's ``ProductQuantizer::ksub_``)


@dataclass(frozen=True)
class Matrix:
    """A matrix as fastText holds it: dense (``values``), or product-quantised (``codes``:
    per row a centroid of each sub-quantiser, whose values ``centroids`` holds in fastText's
    layout, ``dsub`` columns each, ``lastdsub`` for the last; with quantised norms, each
    row's norm is ``norm_centroids[norm_codes[row]]``)."""

    rows: int
    dim: int
    values: np.ndarray | None = None  # float32 (rows, dim)
    codes: np.ndarray | None = None  # uint8 (rows, sub-quantisers)
    centroids: np.ndarray | None = None  # float32 (dim * KSUB,)
    dsub: int = 0
    lastdsub: int = 0
    norm_codes: np.ndarray | None = None  # uint8 (rows,)
    norm_centroids: np.ndarray | None = None  # float32 (KSUB,)


@dataclass(frozen=True)
class FastTextFile:
    """What a supervised model file holds, as arrays.

    Attributes:
        words: the dictionary's entries in order (words, then labels), UTF-8.
        labels_at: index of the first label in ``words`` (fastText's ``nwords``).
        bucket, minn, maxn: the subword hashing arguments.
        pruned: the pruned input's bucket -> row-after-the-words map, as two int32 arrays
            (``None``: not pruned, a bucket's row is ``labels_at + bucket``).
        input, output: the matrices.
        tree_left, tree_right: the hierarchical softmax's Huffman tree (int32, ``2 * labels -
            1`` nodes, leaves first, the root last; -1 for a leaf's children).
    """

    words: tuple[bytes, ...]
    labels_at: int
    bucket: int
    minn: int
    maxn: int
    pruned: tuple[np.ndarray, np.ndarray] | None
    input: Matrix
    output: Matrix
    tree_left: np.ndarray
    tree_right: np.ndarray

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(w.decode("utf-8", "replace") for w in self.words[self.labels_at :])


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def unpack(self, fmt: str) -> tuple:
        out = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return out

    def array(self, dtype: str, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.at).copy()
        self.at += out.nbytes
        return out

    def word(self) -> bytes:
        """A dictionary entry's word: the bytes up to a NUL."""
        end = self.data.index(b"\0", self.at)
        word = self.data[self.at : end]
        self.at = end + 1
        return word


def _product_quantizer(reader: _Reader) -> tuple[int, int, int, np.ndarray]:
    dim, nsubq, dsub, lastdsub = reader.unpack("<4i")
    return nsubq, dsub, lastdsub, reader.array("<f4", dim * KSUB)


def _matrix(reader: _Reader, quantised: bool) -> Matrix:
    """fastText's ``DenseMatrix::load`` or ``QuantMatrix::load``."""
    if not quantised:
        rows, dim = reader.unpack("<qq")
        values = reader.array("<f4", rows * dim).reshape(rows, dim)
        return Matrix(rows, dim, values=np.ascontiguousarray(values, dtype=np.float32))
    (qnorm,) = reader.unpack("<?")
    rows, dim = reader.unpack("<qq")
    (codesize,) = reader.unpack("<i")
    codes = reader.array("u1", codesize)
    nsubq, dsub, lastdsub, centroids = _product_quantizer(reader)
    if codesize != rows * nsubq or dsub * (nsubq - 1) + lastdsub != dim:
        raise ValueError("a quantised matrix's codes do not match its shape")
    norm_codes = norm_centroids = None
    if qnorm:
        norm_codes = reader.array("u1", rows)
        _, _, _, norm_centroids = _product_quantizer(reader)  # one dimension: a norm each
    return Matrix(
        rows, dim, codes=codes.reshape(rows, nsubq), centroids=centroids.astype(np.float32),
        dsub=dsub, lastdsub=lastdsub, norm_codes=norm_codes,
        norm_centroids=None if norm_centroids is None else norm_centroids.astype(np.float32),
    )  # fmt: skip


def huffman_tree(counts: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """``HierarchicalSoftmaxLoss::buildTree`` of the labels' counts (most frequent first)."""
    n = len(counts)
    count = [*counts, *([10**15] * (n - 1))]
    left = [-1] * (2 * n - 1)
    right = [-1] * (2 * n - 1)
    leaf, node = n - 1, n
    for i in range(n, 2 * n - 1):
        pair = []
        for _ in range(2):
            if leaf >= 0 and count[leaf] < count[node]:
                pair.append(leaf)
                leaf -= 1
            else:
                pair.append(node)
                node += 1
        left[i], right[i] = pair
        count[i] = count[pair[0]] + count[pair[1]]
    return np.asarray(left, dtype=np.int32), np.asarray(right, dtype=np.int32)


def read_fasttext(path: str | Path) -> FastTextFile:
    """The model at ``path``. Raises `ValueError` for a file or model kind it does not read."""
    reader = _Reader(Path(path).read_bytes())
    magic, version = reader.unpack("<ii")
    if magic != MAGIC or version != VERSION:
        raise ValueError(f"{path}: not a fastText model of version {VERSION}")
    args = reader.unpack(_ARGS.format)
    dim, _, _, _, _, word_ngrams, loss, model, bucket, minn, maxn = args[:11]
    if loss != LOSS_HS or model != MODEL_SUPERVISED or word_ngrams > 1:
        raise ValueError(f"{path}: only supervised hierarchical softmax models without word "
                         "n-grams are read")  # fmt: skip
    size, nwords, nlabels = reader.unpack("<3i")
    _, pruneidx_size = reader.unpack("<qq")
    words, counts, types = [], [], []
    for _ in range(size):
        words.append(reader.word())
        count, kind = reader.unpack("<qb")
        counts.append(count)
        types.append(kind)
    if types != [ENTRY_WORD] * nwords + [ENTRY_LABEL] * nlabels:
        raise ValueError(f"{path}: the dictionary's words and labels are not in order")
    pruned = None
    if pruneidx_size >= 0:
        pairs = reader.array("<i4", 2 * pruneidx_size).reshape(-1, 2)
        pruned = (np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1]))
    (quantised,) = reader.unpack("<?")
    if not quantised and pruned is not None:
        raise ValueError(f"{path}: a pruned dictionary needs a quantised input")
    input_matrix = _matrix(reader, quantised)
    (qout,) = reader.unpack("<?")
    output = _matrix(reader, quantised and qout)
    if input_matrix.dim != dim or (output.rows, output.dim) != (nlabels, dim):
        raise ValueError(f"{path}: the matrices do not match the arguments")
    left, right = huffman_tree(counts[nwords:])
    return FastTextFile(
        words=tuple(words), labels_at=nwords, bucket=bucket, minn=minn, maxn=maxn,
        pruned=pruned, input=input_matrix, output=output, tree_left=left, tree_right=right,
    )  # fmt: skip
