# cython: language_level=3, boundscheck=False, wraparound=False
"""The text-scanning part of `labeller.block_features`, one pass in C per page.

Per block: how many characters of each of the labeller's seven classes, the class of the
first character, whether the text ends a sentence or with a colon, and how many URL, legal,
separator and date patterns it holds. Counts are integers, so the features the labeller
computes from them are exactly the numpy version's (tests compare both).
"""

import numpy as np


cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void *PyUnicode_DATA(object text)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil


cdef inline int _class_of(Py_UCS4 c, const long[::1] ascii_class) nogil:
    return <int> ascii_class[c] if c < 128 else 6


def text_features(list texts, str joined, const long[::1] ends, const long[::1] ascii_class,
                  frozenset sentence_end, tuple literal_groups):
    """Arrays for a page's block texts (``joined`` is ``"\\n".join(texts)``, ``ends`` each
    block's end offset in it).

    Returns:
        ``(counts, first_class, ends_sentence, ends_colon, hits)``: class counts (n, 7)
        int64, the first character's class, two float64 flags, and per literal group (the
        last group ``None`` = dates) the hit counts, (n, groups) float64.
    """
    cdef Py_ssize_t n = len(texts), i, j, length, at, lo, hi, mid, g
    cdef Py_ssize_t total = len(joined)
    cdef str text
    cdef Py_UCS4 c
    cdef int kind
    cdef void *data
    counts_array = np.zeros((n, 7), dtype=np.int64)
    first_array = np.zeros(n, dtype=np.int64)
    flags_array = np.zeros((n, 2), dtype=np.float64)
    hits_array = np.zeros((n, len(literal_groups)), dtype=np.float64)
    cdef long[:, ::1] counts = counts_array
    cdef long[::1] first = first_array
    cdef double[:, ::1] flags = flags_array
    cdef double[:, ::1] hits = hits_array
    for i in range(n):
        text = <str> texts[i]
        length = len(text)
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        for j in range(length):
            counts[i, _class_of(PyUnicode_READ(kind, data, j), ascii_class)] += 1
        if length:
            first[i] = _class_of(text[0], ascii_class)
            flags[i, 0] = text[length - 1] in sentence_end
            flags[i, 1] = text[length - 1] == u":"
    _scan(joined, ends, n, literal_groups, hits)
    return counts_array, first_array, flags_array, hits_array


cdef enum:
    MAX_LITERALS = 32
    MAX_LITERAL_LENGTH = 24
    MAX_PER_FIRST = 8


cdef void _scan(str joined, const long[::1] ends, Py_ssize_t n, tuple groups,
                double[:, ::1] hits) except *:
    """One pass over the page for every pattern group. A literal counts every occurrence
    (overlapping ones too, as repeated str.find from the last hit + 1); a position is compared
    only with the literals whose first character it holds (all are below U+0100). The date
    group (``None``) counts [0-9][/.:-][0-9] without overlap, as re.finditer."""
    cdef Py_UCS4 chars[MAX_LITERALS][MAX_LITERAL_LENGTH]
    cdef Py_ssize_t lengths[MAX_LITERALS]
    cdef Py_ssize_t group_of[MAX_LITERALS]
    cdef int by_first[256][MAX_PER_FIRST]
    cdef int n_first[256]
    cdef Py_ssize_t k = 0, m, at, total = len(joined), g, date_group = -1, next_date = 0
    cdef int i, first, kind = PyUnicode_KIND(joined)
    cdef void *data = PyUnicode_DATA(joined)
    cdef Py_UCS4 c, d
    cdef bint same
    for first in range(256):
        n_first[first] = 0
    for g, literals in enumerate(groups):
        if literals is None:
            date_group = g
            continue
        for literal in literals:
            if k == MAX_LITERALS:
                raise ValueError("too many literals")
            if not 0 < len(literal) <= MAX_LITERAL_LENGTH or ord(literal[0]) > 255:
                raise ValueError(f"literal {literal!r} is not supported")
            lengths[k] = len(literal)
            group_of[k] = g
            for m in range(lengths[k]):
                chars[k][m] = literal[m]
            first = ord(literal[0])
            if n_first[first] == MAX_PER_FIRST:
                raise ValueError("too many literals with one first character")
            by_first[first][n_first[first]] = <int> k
            n_first[first] += 1
            k += 1
    for at in range(total):
        c = PyUnicode_READ(kind, data, at)
        if date_group >= 0 and at >= next_date and u"0" <= c <= u"9" and at + 2 < total:
            d = PyUnicode_READ(kind, data, at + 1)
            if d == u"/" or d == u"." or d == u":" or d == u"-":
                d = PyUnicode_READ(kind, data, at + 2)
                if u"0" <= d <= u"9":
                    _count(hits, ends, n, at, date_group)
                    next_date = at + 3
        if c > 255 or n_first[c] == 0:
            continue
        for i in range(n_first[c]):
            k = by_first[c][i]
            if at + lengths[k] > total:
                continue
            same = True
            for m in range(1, lengths[k]):
                if PyUnicode_READ(kind, data, at + m) != chars[k][m]:
                    same = False
                    break
            if same:
                _count(hits, ends, n, at, group_of[k])


cdef inline void _count(double[:, ::1] hits, const long[::1] ends, Py_ssize_t n,
                        Py_ssize_t at, Py_ssize_t g) noexcept nogil:
    """One hit at offset ``at``: to the first block whose end is at or after it."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if ends[mid] < at:
            lo = mid + 1
        else:
            hi = mid
    if lo > n - 1:
        lo = n - 1
    hits[lo, g] += 1.0
