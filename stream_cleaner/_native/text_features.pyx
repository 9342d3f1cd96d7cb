# cython: language_level=3, boundscheck=False, wraparound=False
"""The text-scanning part of `labeller.block_features`, one pass in C per page.

Per block: how many characters of each of the labeller's seven classes, the class of the
first character, whether the text ends a sentence or with a colon, and how many URL, legal,
separator and date patterns it holds. Counts are integers, so the features the labeller
computes from them are exactly the numpy version's (tests compare both).
"""

import numpy as np


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
        for j in range(length):
            counts[i, _class_of(text[j], ascii_class)] += 1
        if length:
            first[i] = _class_of(text[0], ascii_class)
            flags[i, 0] = text[length - 1] in sentence_end
            flags[i, 1] = text[length - 1] == u":"
    for g, literals in enumerate(literal_groups):
        if literals is None:  # dates: [0-9][/.:-][0-9], non-overlapping, as re.finditer
            at = 0
            while at + 2 < total:
                c = joined[at]
                if u"0" <= c <= u"9":
                    c = joined[at + 1]
                    if c == u"/" or c == u"." or c == u":" or c == u"-":
                        c = joined[at + 2]
                        if u"0" <= c <= u"9":
                            _count(hits, ends, n, at, g)
                            at += 3
                            continue
                at += 1
            continue
        for literal in literals:
            at = joined.find(literal)
            while at >= 0:
                _count(hits, ends, n, at, g)
                at = joined.find(literal, at + 1)
    return counts_array, first_array, flags_array, hits_array


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
