# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""fastText's ``predict`` (k=1, threshold 0) for a supervised hierarchical-softmax model, in
flat arrays: lid.176's answers for a page's language, to the bit, at a fraction of the cost.

fastText finds a token's subwords through an ``unordered_map`` per pruned bucket and decodes
each quantised row through two more tables: in the pipeline, with caches cold from the page's
parsing and scoring, a 200-character call took 150 µs (37 µs in a loop of calls). Here the
vocabulary and the pruned buckets are open-addressing tables, and a text's rows are first all
found, prefetched, then summed.

Every step is fastText 0.9's, in the same order and the same float types (`predict`'s
docstring lists them), so the sums, the tree search and the probability are the same floats.
`stream_cleaner.fasttext_file` reads the model file into the arrays this takes.

Python twin (what it must equal; DEVELOPERS.md names the test): `Predictor.predict` is
``fasttext.load_model(path).predict(text, k=1)``.
"""

from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.math cimport expf, log
from libc.stdint cimport int32_t, uint32_t
from libc.string cimport memcmp
from libcpp.vector cimport vector

import numpy as np

cdef extern from *:
    void __builtin_prefetch(const void *address) nogil

ctypedef struct Rows:
    # a `fasttext_file.Matrix`: dense (values), or product-quantised (codes, centroids)
    int dim, nsubq, dsub, lastdsub
    const float *values
    const unsigned char *codes
    const float *centroids
    const unsigned char *norm_codes  # NULL: no quantised norms
    const float *norm_centroids

ctypedef struct Bucket:
    # a pruned model's bucket -> its row after the words' (-1: an empty slot)
    int32_t key
    int32_t value

ctypedef struct Word:
    uint32_t hash  # Dictionary::hash of the entry's word
    int32_t index  # -1: an empty slot

cdef enum:
    KSUB = 256  # centroids per sub-quantiser
    MAX_DIM = 256

cdef const char *EOS = b"</s>"
cdef const char *LABEL_PREFIX = b"__label__"


cdef inline uint32_t _fnv_step(uint32_t h, char c) noexcept nogil:
    """One byte of ``Dictionary::hash``: FNV-1a over the bytes as signed chars."""
    return (h ^ <uint32_t> <int> <signed char> c) * 16777619u


cdef inline bint _is_eos(const char *token, size_t length) noexcept nogil:
    return length == 4 and memcmp(token, EOS, 4) == 0


cdef inline bint _separator(char c) noexcept nogil:
    """``Dictionary::readWord``'s separators."""
    return c == b" " or c == b"\n" or c == b"\r" or c == b"\t" or c == b"\v" or c == b"\f" \
        or c == 0


cdef class Predictor:
    """One model's tables; `predict` is safe from several threads (it writes nothing shared)."""

    cdef readonly object labels
    cdef object _keep  # the arrays the pointers below point into
    cdef const char *words
    cdef const long *word_start
    cdef int n_words, minn, maxn
    cdef uint32_t bucket
    cdef vector[Word] vocab_slots
    cdef uint32_t vocab_mask
    cdef bint pruned
    cdef vector[Bucket] prune_slots
    cdef uint32_t prune_mask
    cdef int prune_shift
    cdef vector[int32_t] sub_start
    cdef vector[int32_t] sub_ids
    cdef Rows input, output
    cdef const int *left
    cdef const int *right
    cdef int dim, osz

    def __init__(self, model):
        """``model``: a `fasttext_file.FastTextFile`."""
        words = b"".join(model.words)
        starts = np.zeros(len(model.words) + 1, dtype=np.int_)
        np.cumsum([len(w) for w in model.words], out=starts[1:])
        left = np.ascontiguousarray(model.tree_left, dtype=np.intc)
        right = np.ascontiguousarray(model.tree_right, dtype=np.intc)
        self._keep = [words, starts, left, right]
        self.labels = model.labels
        self.words = words
        cdef const long[::1] start_view = starts
        self.word_start = &start_view[0]
        self.n_words = model.labels_at
        self.minn, self.maxn, self.bucket = model.minn, model.maxn, model.bucket
        self.input = self._rows(model.input)
        self.output = self._rows(model.output)
        self.dim = model.input.dim
        self.osz = model.output.rows
        if self.output.dim != self.dim or self.dim > MAX_DIM:
            raise ValueError(f"the matrices must have the same dimension, at most {MAX_DIM}")
        cdef const int[::1] lv = left
        cdef const int[::1] rv = right
        self.left = &lv[0]
        self.right = &rv[0]
        self._vocabulary(len(model.words))
        self.pruned = model.pruned is not None
        if self.pruned:
            self._prune_table(model.pruned[0], model.pruned[1])
        self._subwords()

    cdef Rows _rows(self, matrix) except *:
        """The pointers into a `fasttext_file.Matrix`'s arrays (kept alive in ``_keep``)."""
        cdef Rows rows
        cdef const float[::1] floats
        cdef const unsigned char[::1] bytes_
        rows.dim = matrix.dim
        rows.values = rows.centroids = rows.norm_centroids = NULL
        rows.codes = rows.norm_codes = NULL
        rows.nsubq = rows.dsub = rows.lastdsub = 0
        if matrix.values is not None:
            values = np.ascontiguousarray(matrix.values, dtype=np.float32).ravel()
            self._keep.append(values)
            floats = values
            rows.values = &floats[0]
            return rows
        codes = np.ascontiguousarray(matrix.codes, dtype=np.uint8)
        centroids = np.ascontiguousarray(matrix.centroids, dtype=np.float32)
        self._keep += [codes, centroids]
        rows.nsubq, rows.dsub, rows.lastdsub = codes.shape[1], matrix.dsub, matrix.lastdsub
        bytes_ = codes.ravel()
        rows.codes = &bytes_[0]
        floats = centroids
        rows.centroids = &floats[0]
        if matrix.norm_codes is not None:
            norm_codes = np.ascontiguousarray(matrix.norm_codes, dtype=np.uint8)
            norm_centroids = np.ascontiguousarray(matrix.norm_centroids, dtype=np.float32)
            self._keep += [norm_codes, norm_centroids]
            bytes_ = norm_codes
            rows.norm_codes = &bytes_[0]
            floats = norm_centroids
            rows.norm_centroids = &floats[0]
        return rows

    cdef void _vocabulary(self, int size):
        """The open-addressing table of the dictionary's entries, by their FNV hash."""
        cdef uint32_t slots = 1
        cdef Word empty
        empty.hash = 0
        empty.index = -1
        while slots < 2 * <uint32_t> size + 2:
            slots *= 2
        self.vocab_mask = slots - 1
        self.vocab_slots.assign(slots, empty)
        cdef int i
        cdef uint32_t h, slot
        cdef long k
        for i in range(size):
            h = 2166136261u
            for k in range(self.word_start[i], self.word_start[i + 1]):
                h = _fnv_step(h, self.words[k])
            slot = h & self.vocab_mask
            while self.vocab_slots[slot].index != -1:
                slot = (slot + 1) & self.vocab_mask
            self.vocab_slots[slot].index = i
            self.vocab_slots[slot].hash = h

    cdef int _find(self, const char *token, size_t length, uint32_t h) noexcept nogil:
        """``Dictionary::getId``: the entry of a token, or -1."""
        cdef uint32_t slot = h & self.vocab_mask
        cdef int i
        while True:
            i = self.vocab_slots[slot].index
            if i == -1:
                return -1
            if (self.vocab_slots[slot].hash == h
                    and <size_t> (self.word_start[i + 1] - self.word_start[i]) == length
                    and memcmp(self.words + self.word_start[i], token, length) == 0):
                return i
            slot = (slot + 1) & self.vocab_mask

    cdef void _prune_table(self, keys, values):
        cdef const int32_t[::1] k = np.ascontiguousarray(keys, dtype=np.int32)
        cdef const int32_t[::1] v = np.ascontiguousarray(values, dtype=np.int32)
        cdef uint32_t slots = 2
        cdef int bits = 1
        cdef Bucket empty
        empty.key = -1
        empty.value = 0
        while slots < 2 * <uint32_t> k.shape[0] + 2:
            slots *= 2
            bits += 1
        self.prune_mask = slots - 1
        self.prune_shift = 32 - bits
        self.prune_slots.assign(slots, empty)
        cdef Py_ssize_t i
        cdef uint32_t slot
        for i in range(k.shape[0]):
            slot = self._prune_slot(k[i])
            while self.prune_slots[slot].key != -1 and self.prune_slots[slot].key != k[i]:
                slot = (slot + 1) & self.prune_mask
            self.prune_slots[slot].key = k[i]  # a key given twice: the last value, as a map's
            self.prune_slots[slot].value = v[i]

    cdef inline uint32_t _prune_slot(self, int32_t key) noexcept nogil:
        return (<uint32_t> key * 2654435761u) >> self.prune_shift

    cdef void _resolve(self, vector[int32_t] &rows, size_t start) noexcept nogil:
        """``Dictionary::pushHash`` of the buckets in ``rows[start:]`` (a bucket ``b`` as
        ``-b - 1``; a row as itself): each bucket as its input row, or left out when the model
        pruned it. The rows kept are prefetched for the sum."""
        cdef size_t i, put = start
        cdef int32_t id, key
        cdef uint32_t slot
        for i in range(start, rows.size()):
            id = rows[i]
            if id < 0:
                id = -id - 1
                if self.pruned:
                    slot = self._prune_slot(id)
                    while True:
                        key = self.prune_slots[slot].key
                        if key == id:
                            id = self.prune_slots[slot].value
                            break
                        if key == -1:
                            id = -1
                            break
                        slot = (slot + 1) & self.prune_mask
                    if id < 0:
                        continue
                id += self.n_words
            _prefetch_row(&self.input, id)
            rows[put] = id
            put += 1
        rows.resize(put)

    cdef void _compute_subwords(self, const char *token, size_t length,
                                vector[int32_t] &rows) noexcept nogil:
        """``Dictionary::computeSubwords`` of ``"<" + token + ">"``: the byte n-grams (whole
        UTF-8 characters) of minn to maxn characters, hashed into buckets (each pushed as
        ``-bucket - 1`` for `_resolve`, its slot prefetched)."""
        cdef size_t size = length + 2, i, j
        cdef int n
        cdef uint32_t h, bucket
        cdef char c
        for i in range(size):
            c = self._bounded(token, length, i)
            if (c & 0xC0) == 0x80:
                continue
            h = 2166136261u
            j = i
            n = 1
            while j < size and n <= self.maxn:
                h = _fnv_step(h, self._bounded(token, length, j))
                j += 1
                while j < size and (self._bounded(token, length, j) & 0xC0) == 0x80:
                    h = _fnv_step(h, self._bounded(token, length, j))
                    j += 1
                if n >= self.minn and not (n == 1 and (i == 0 or j == size)):
                    bucket = h % self.bucket
                    if self.pruned:
                        __builtin_prefetch(&self.prune_slots[self._prune_slot(bucket)])
                    rows.push_back(-<int32_t> bucket - 1)
                n += 1

    cdef inline char _bounded(self, const char *token, size_t length, size_t i) noexcept nogil:
        """Byte ``i`` of ``"<" + token + ">"``."""
        if i == 0:
            return b"<"
        if i == length + 1:
            return b">"
        return token[i - 1]

    cdef void _subwords(self):
        """``Dictionary::initNgrams`` for the words: each word's row, then its subwords'."""
        cdef int i
        cdef long length
        cdef vector[int32_t] rows
        self.sub_start.push_back(0)
        for i in range(self.n_words):
            rows.clear()
            rows.push_back(i)
            length = self.word_start[i + 1] - self.word_start[i]
            if not _is_eos(self.words + self.word_start[i], length):
                self._compute_subwords(self.words + self.word_start[i], length, rows)
                self._resolve(rows, 1)
            self.sub_ids.insert(self.sub_ids.end(), rows.begin(), rows.end())
            self.sub_start.push_back(<int32_t> self.sub_ids.size())

    cdef void _line(self, const char *data, size_t length,
                    vector[int32_t] &rows) noexcept nogil:
        """``Dictionary::getLine`` of ``data`` followed by a newline: the input rows of its
        words (labels skipped), up to and with the end-of-sentence token. The unknown words'
        buckets are all hashed first, then resolved (`_resolve`): their slots' misses overlap."""
        cdef size_t i = 0, start
        cdef uint32_t h
        cdef int wid, k
        cdef const char *token
        cdef size_t token_length
        while True:
            while i < length and _separator(data[i]):
                i += 1  # readWord skips separators before a word (the final newline: EOS)
            if i >= length:
                token = EOS
                token_length = 4
            else:
                start = i
                while i < length and not _separator(data[i]):
                    i += 1
                token = data + start
                token_length = i - start
            h = 2166136261u
            for k in range(<int> token_length):
                h = _fnv_step(h, token[k])
            wid = self._find(token, token_length, h)
            if wid >= 0:
                if wid < self.n_words:
                    for k in range(self.sub_start[wid], self.sub_start[wid + 1]):
                        rows.push_back(self.sub_ids[k])
            elif not (token_length >= 9 and memcmp(token, LABEL_PREFIX, 9) == 0
                      or _is_eos(token, token_length)):
                self._compute_subwords(token, token_length, rows)
            if _is_eos(token, token_length):
                break  # the newline's, or one in the text: the line ends there
        self._resolve(rows, 0)

    cdef void _dfs(self, int node, float score, const float *hidden, float floor,
                   int *best, float *best_score) noexcept nogil:
        """``HierarchicalSoftmaxLoss::dfs`` with k=1: the best leaf so far in ``best``."""
        cdef float f
        if score < floor:
            return
        if best[0] >= 0 and score < best_score[0]:
            return
        if self.left[node] == -1 and self.right[node] == -1:
            best[0] = node  # a tie replaces the leaf before: std::pop_heap's order
            best_score[0] = score
            return
        f = _dot_row(&self.output, hidden, node - self.osz)
        f = <float> (1.0 / <double> (<float> 1 + expf(-f)))
        self._dfs(self.left[node], score + _std_log(<float> (1.0 - <double> f)), hidden,
                  floor, best, best_score)
        self._dfs(self.right[node], score + _std_log(f), hidden, floor, best, best_score)

    def predict(self, str text):
        """``(label, probability)`` of fastText's ``predict(text, k=1)``, or ``None`` when it
        gives none. Steps, all fastText's: the text's UTF-8 and a newline cut into tokens at
        its separators; a known word's row and subword rows, an unknown word's subword rows
        (buckets the model pruned left out), labels skipped; the rows summed in that order in
        float32 (a quantised row: its norm times each centroid value), times ``float(1.0 /
        rows)``; the tree searched from the root, a node's sigmoid as ``1.0 / (1 + expf(-x))``
        in double, each branch's score ``score + float(log(float(p) + 1e-5))``, leaves below
        that of threshold 0 or below the best found left out; the best's ``expf``."""
        cdef Py_ssize_t length
        if "\n" in text:
            raise ValueError("predict processes one line at a time (remove '\\n')")
        cdef const char *data = PyUnicode_AsUTF8AndSize(text, &length)
        cdef vector[int32_t] rows
        cdef float hidden[MAX_DIM]
        cdef float inverse
        cdef int j, best = -1
        cdef float best_score = 0.0
        cdef size_t r
        with nogil:
            self._line(data, <size_t> length, rows)
            for j in range(self.dim):
                hidden[j] = 0.0
            for r in range(rows.size()):
                _add_row(&self.input, hidden, rows[r])
            if rows.size():
                inverse = <float> (1.0 / <double> rows.size())
                for j in range(self.dim):
                    hidden[j] *= inverse
                self._dfs(2 * self.osz - 2, 0.0, hidden, _std_log(0.0), &best, &best_score)
        if best < 0:
            return None
        return self.labels[best], <double> expf(best_score)


cdef inline const float *_centroid(const Rows *rows, int m, int code) noexcept nogil:
    """``ProductQuantizer::get_centroids``: the last sub-quantiser's are lastdsub wide."""
    if m == rows.nsubq - 1:
        return rows.centroids + <size_t> m * KSUB * rows.dsub + <size_t> code * rows.lastdsub
    return rows.centroids + (<size_t> m * KSUB + code) * rows.dsub


cdef inline void _prefetch_row(const Rows *rows, int i) noexcept nogil:
    if rows.values != NULL:
        __builtin_prefetch(rows.values + <size_t> i * rows.dim)
        return
    __builtin_prefetch(rows.codes + <size_t> i * rows.nsubq)
    if rows.norm_codes != NULL:
        __builtin_prefetch(rows.norm_codes + i)


cdef inline float _norm(const Rows *rows, int i) noexcept nogil:
    """A quantised row's norm (``npq_->get_centroids(0, norm_codes_[i])[0]``), 1 without."""
    return rows.norm_centroids[rows.norm_codes[i]] if rows.norm_codes != NULL else 1.0


cdef inline float _centroids(const Rows *rows, int i, float *x, float alpha,
                             bint add) noexcept nogil:
    """Row ``i`` of a quantised matrix, one sub-quantiser's centroid ``c`` after the other:
    with ``add``, ``x[j] += alpha * c[j]`` (``ProductQuantizer::addcode``); without, the sum
    of ``x[j] * c[j]``, returned (``mulcode``'s, before its norm)."""
    cdef int m, n, width = rows.dsub
    cdef const unsigned char *code = rows.codes + <size_t> i * rows.nsubq
    cdef const float *c
    cdef float d = 0.0
    for m in range(rows.nsubq):
        if m == rows.nsubq - 1:
            width = rows.lastdsub
        c = _centroid(rows, m, code[m])
        for n in range(width):
            if add:
                x[m * rows.dsub + n] += alpha * c[n]
            else:
                d += x[m * rows.dsub + n] * c[n]
    return d


cdef inline void _add_row(const Rows *rows, float *x, int i) noexcept nogil:
    """``addRowToVector``: dense, ``x[j] += row[j]``; quantised, ``addcode`` with the row's
    norm."""
    cdef int j
    cdef const float *c
    if rows.values == NULL:
        _centroids(rows, i, x, _norm(rows, i), True)
        return
    c = rows.values + <size_t> i * rows.dim
    for j in range(rows.dim):
        x[j] += c[j]


cdef inline float _dot_row(const Rows *rows, const float *x, int i) noexcept nogil:
    """``dotRow``: dense, the sum of ``row[j] * x[j]``; quantised, ``mulcode``'s sum times
    the row's norm."""
    cdef int j
    cdef const float *c
    cdef float d = 0.0
    if rows.values == NULL:
        return _centroids(rows, i, <float *> x, 0.0, False) * _norm(rows, i)
    c = rows.values + <size_t> i * rows.dim
    for j in range(rows.dim):
        d += c[j] * x[j]
    return d


cdef inline float _std_log(float x) noexcept nogil:
    """fastText's ``std_log``: ``log(x + 1e-5)`` in double, as a float."""
    return <float> log(<double> x + 1e-5)
