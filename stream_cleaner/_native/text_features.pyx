# cython: language_level=3, boundscheck=False, wraparound=False
"""`labeller.block_features` in C: its text-scanning part, and the whole page's matrix.

Per block: how many characters of each of the labeller's seven classes, the class of the
first character, whether the text ends a sentence or with a colon, and how many URL, legal,
separator and date patterns it holds. Counts are integers, so the features the labeller
computes from them are exactly the numpy version's (tests compare both).

Python twins (what each function must equal; DEVELOPERS.md names the tests):
`page_features`: `labeller._block_features` (the numpy path of
`labeller.block_features`); `text_features`: `labeller._text_features`; `block_kinds`:
`labeller.block_kinds`; `class_features`: `labeller.class_features`; `attributes`: `pipeline._attributes`; `longest`,
`with_code_points`: the Python paths of `language.LanguageIdentifier.identify_page`
(``sorted(texts, key=len)``, `language._with_foreign_letters`); `pseudo_words`: the Python
path of `language.pseudo_words`.
"""

from libc.string cimport memset

import math
import types

import numpy as np


include "unicode_text.pxi"


cdef inline int _class_of(Py_UCS4 c, const long[::1] ascii_class) nogil:
    return <int> ascii_class[c] if c < 128 else 6


cdef inline void _count_classes(const _char *data, Py_ssize_t length, const long *ascii_class,
                                long *counts) noexcept nogil:
    """Add the class of each of ``length`` characters to ``counts`` (7 classes); four
    histograms in turn, so that runs of one class do not wait on one counter."""
    cdef Py_ssize_t j = 0, k
    cdef Py_UCS4 c
    cdef long parts[4][8]
    memset(parts, 0, sizeof(parts))
    while j + 4 <= length:
        c = data[j]
        parts[0][ascii_class[c] if c < 128 else 6] += 1
        c = data[j + 1]
        parts[1][ascii_class[c] if c < 128 else 6] += 1
        c = data[j + 2]
        parts[2][ascii_class[c] if c < 128 else 6] += 1
        c = data[j + 3]
        parts[3][ascii_class[c] if c < 128 else 6] += 1
        j += 4
    while j < length:
        c = data[j]
        parts[0][ascii_class[c] if c < 128 else 6] += 1
        j += 1
    for k in range(7):
        counts[k] += parts[0][k] + parts[1][k] + parts[2][k] + parts[3][k]


def text_features(list texts, str joined, const long[::1] ends, const long[::1] ascii_class,
                  frozenset sentence_end, tuple literal_groups):
    """Arrays for a page's block texts (``joined`` is ``"\\n".join(texts)``, ``ends`` each
    block's end offset in it).

    Returns:
        ``(counts, first_class, end_flags, hits)``: class counts (n, 7) int64, the first
        character's class, the ends-a-sentence and ends-with-a-colon flags (n, 2) float64,
        and per literal group (a ``None`` group = dates) the hit counts, (n, groups) float64.
    """
    cdef Py_ssize_t n = len(texts), i, j, length
    cdef str text
    cdef int kind
    cdef void *data
    cdef long class_counts[7]
    if ascii_class.shape[0] < 128:
        raise ValueError("ascii_class needs 128 entries")
    counts_array = np.zeros((n, 7), dtype=np.int64)
    first_array = np.zeros(n, dtype=np.int64)
    flags_array = np.zeros((n, 2), dtype=np.float64)
    hits_array = np.zeros((n, len(literal_groups)), dtype=np.float64)
    cdef long[:, ::1] counts = counts_array
    cdef long[::1] first = first_array
    cdef double[:, ::1] flags = flags_array
    cdef double[:, ::1] hits = hits_array
    cdef const long *classes = &ascii_class[0]
    for i in range(n):
        text = <str> texts[i]
        length = len(text)
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        for j in range(7):
            class_counts[j] = 0
        if kind == 1:
            _count_classes(<const Py_UCS1 *> data, length, classes, class_counts)
        elif kind == 2:
            _count_classes(<const Py_UCS2 *> data, length, classes, class_counts)
        else:
            _count_classes(<const Py_UCS4 *> data, length, classes, class_counts)
        for j in range(7):
            counts[i, j] = class_counts[j]
        if length:
            first[i] = _class_of(text[0], ascii_class)
            flags[i, 0] = text[length - 1] in sentence_end
            flags[i, 1] = text[length - 1] == u":"
    _scan(joined, ends, n, literal_groups, hits)
    return counts_array, first_array, flags_array, hits_array


cdef extern from *:
    int __builtin_ctz(unsigned int x) nogil


cdef enum:
    MAX_LITERALS = 32
    MAX_LITERAL_LENGTH = 24


cdef struct _Literals:
    Py_ssize_t length[MAX_LITERALS]
    Py_ssize_t group[MAX_LITERALS]
    Py_UCS4 chars[MAX_LITERALS][MAX_LITERAL_LENGTH]
    unsigned int first[257]  # first character -> the literals that start with it (bits)
    unsigned int second[257]  # second character (256: any above U+00FF) -> literals
    unsigned int single  # the literals of one character


cdef void _scan(str joined, const long[::1] ends, Py_ssize_t n, tuple groups,
                double[:, ::1] hits) except *:
    """Every hit of every pattern group, in one pass over the page. A literal counts every
    occurrence, overlapping ones too (as repeated str.find from the last hit + 1); a position
    is compared only with the literals whose first two characters it holds (first characters
    are all below U+0100). The date group (``None``) counts [0-9][/.:-][0-9] without overlap,
    as re.finditer."""
    cdef _Literals literals
    cdef Py_ssize_t total = len(joined), k = 0, m, g, date_group = -1
    cdef int kind = PyUnicode_KIND(joined)
    cdef void *data = PyUnicode_DATA(joined)
    cdef Py_UCS4 c
    memset(&literals, 0, sizeof(literals))
    for g, group in enumerate(groups):
        if group is None:
            date_group = g
            continue
        for literal in group:
            if k == MAX_LITERALS:
                raise ValueError("too many literals")
            if not 0 < len(literal) <= MAX_LITERAL_LENGTH or ord(literal[0]) > 255:
                raise ValueError(f"literal {literal!r} is not supported")
            literals.length[k] = len(literal)
            literals.group[k] = g
            for m in range(len(literal)):
                literals.chars[k][m] = literal[m]
            literals.first[ord(literal[0])] |= 1u << k
            if len(literal) == 1:
                literals.single |= 1u << k
            else:
                c = literal[1]
                literals.second[c if c < 256 else 256] |= 1u << k
            k += 1
    if kind == 1:
        _scan_page(<const Py_UCS1 *> data, total, &literals, date_group, ends, n, hits)
    elif kind == 2:
        _scan_page(<const Py_UCS2 *> data, total, &literals, date_group, ends, n, hits)
    else:
        _scan_page(<const Py_UCS4 *> data, total, &literals, date_group, ends, n, hits)


cdef void _scan_page(const _char *data, Py_ssize_t total, const _Literals *literals,
                     Py_ssize_t date_group, const long[::1] ends, Py_ssize_t n,
                     double[:, ::1] hits) noexcept nogil:
    cdef Py_ssize_t at, next_date = 0
    cdef Py_UCS4 c, d
    cdef unsigned int candidates
    for at in range(total):
        c = data[at]
        d = data[at + 1] if at + 1 < total else 0
        if date_group >= 0 and 48 <= c <= 57 and at >= next_date and at + 2 < total:  # 0-9
            if (d == 47 or d == 46 or d == 58 or d == 45) and 48 <= data[at + 2] <= 57:
                _count(hits, ends, n, at, date_group)
                next_date = at + 3
        # no branch on the first character alone: its literals, and those of the first two
        candidates = literals.first[c if c < 256 else 256] & (
            (literals.second[d if d < 256 else 256] if at + 1 < total else 0) | literals.single
        )
        if candidates:
            _match(data, total, at, candidates, literals, ends, n, hits)


cdef void _match(const _char *data, Py_ssize_t total, Py_ssize_t at, unsigned int candidates,
                 const _Literals *literals, const long[::1] ends, Py_ssize_t n,
                 double[:, ::1] hits) noexcept nogil:
    """Count the candidate literals that occur at ``at``."""
    cdef Py_ssize_t m, length
    cdef int k
    cdef bint same
    while candidates:
        k = __builtin_ctz(candidates)
        candidates &= candidates - 1
        length = literals.length[k]
        if at + length > total:
            continue
        same = True
        for m in range(1, length):
            if data[at + m] != literals.chars[k][m]:
                same = False
                break
        if same:
            _count(hits, ends, n, at, literals.group[k])


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


cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 c)


cdef bint _may_be_bullet(str text):
    """False when `labeller._BULLET` (``(?:[-*•·»>+o]|\\d{1,3}[.)]|[a-z][.)])\\s``, ignoring
    case) cannot match: it needs white space among the 2nd to 5th characters, and after an
    ASCII first character one of its three shapes. Other first characters (non-ASCII
    digits, and letters that fold to a-z) are left to the regex."""
    cdef Py_ssize_t length = len(text), j
    cdef Py_UCS4 first, second
    cdef bint spaced = False
    for j in range(1, 5 if length > 5 else length):
        if Py_UNICODE_ISSPACE(text[j]):
            spaced = True
            break
    if not spaced:
        return False
    first = text[0]
    if first >= 128:
        return True
    second = text[1]  # length >= 2: a space was found after the first character
    if first == u"-" or first == u"*" or first == u">" or first == u"+":
        return Py_UNICODE_ISSPACE(second)
    if (first == u"o" or first == u"O") and Py_UNICODE_ISSPACE(second):
        return True
    if u"0" <= first <= u"9":  # \d{1,3}[.)]: the mark is the 2nd, 3rd or 4th character
        for j in range(1, 4 if length > 4 else length):
            if text[j] == u"." or text[j] == u")":
                return True
        return False
    if (u"a" <= first <= u"z") or (u"A" <= first <= u"Z"):  # [a-z][.)]
        return second == u"." or second == u")"
    return False


cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        const char *name
        int type
        Py_ssize_t offset
        int flags
    ctypedef struct PyMemberDescrObject:
        PyMemberDef *d_member
    enum: T_OBJECT_EX


from cpython.ref cimport PyObject


cdef dict _MEMBER_OFFSETS = {}
_MEMBER_DESCRIPTOR = types.MemberDescriptorType


cdef Py_ssize_t _member_offset(type cls, str name) except -2:
    """Where instances of ``cls`` keep attribute ``name``: the offset of its ``__slots__``
    slot when ``cls`` reads it from one (a member descriptor of an object slot), else -1."""
    key = (cls, name)
    found = _MEMBER_OFFSETS.get(key)
    if found is None:
        found = -1
        descriptor = None
        for klass in cls.__mro__:  # as attribute lookup finds it
            if name in klass.__dict__:
                descriptor = klass.__dict__[name]
                break
        plain = cls.__getattribute__ is object.__getattribute__
        if plain and type(descriptor) is _MEMBER_DESCRIPTOR:
            member = (<PyMemberDescrObject *> <PyObject *> descriptor).d_member
            if member.type == T_OBJECT_EX:
                found = member.offset
        if len(_MEMBER_OFFSETS) < 1024:
            _MEMBER_OFFSETS[key] = found
    return found


cdef inline object _slot(object obj, Py_ssize_t offset, str name):
    """``getattr(obj, name)``, read straight from its slot when ``offset`` (>= 0, from
    `_member_offset` of ``type(obj)``) holds one; an empty slot raises as getattr does."""
    cdef PyObject *value
    if offset >= 0:
        value = (<PyObject **> ((<char *> <PyObject *> obj) + offset))[0]
        if value != NULL:
            return <object> value
    return getattr(obj, name)


cdef inline bint _same_tag(x, y) except -1:
    """``x == y`` for two tag names: by str's comparison when both are exact str."""
    if type(x) is str and type(y) is str:
        return x is y or (<str> x) == (<str> y)
    return x == y


def page_features(list blocks, list sentences, block_of, log10_probs, n_tokens, n_oov,
                  dict col, Py_ssize_t n_own, const long[::1] context_index, tuple offsets,
                  dict tag_group_of, path_info, dict path_cache, const long[::1] ascii_class,
                  frozenset sentence_end, tuple pattern_groups, bullet_match,
                  double low_ppl, double no_ppl, Py_ssize_t extra_columns=0):
    """`labeller.block_features` of a page with at least one block, in one pass per loop.

    Every value is made by the same operations in the same order as the numpy reference
    (sums in index order, as ``np.bincount`` and ``np.cumsum`` make them; ``reduceat``'s rule
    for empty segments), and the logarithms are numpy's own calls, so the matrix is the
    reference's, bit for bit (tests compare both). It is laid out column-major (the transpose
    of a C-ordered (features, blocks) array): filling one feature for every block runs along
    memory, and the labeller's tree walk reads it transposed without a copy.

    Args:
        blocks, sentences, block_of, log10_probs, n_tokens, n_oov: as
            `labeller.block_features` takes them.
        col: `labeller._INDEX` (own feature name -> column); n_own: how many own features.
        context_index, offsets: the own columns the neighbour features repeat, and the
            neighbours' offsets.
        tag_group_of, path_info, ascii_class, sentence_end, pattern_groups, bullet_match:
            the labeller's tables, `_path_info`, and ``_BULLET.match``.
        path_cache: ``_path_info``'s cache (tag path -> what it returns), read first.
        low_ppl, no_ppl: `labeller._LOW_PPL` and `labeller._NO_PPL`.
        extra_columns: zero columns after the features (`labeller.block_features`).
    """
    cdef Py_ssize_t n = len(blocks), n_sent = len(sentences), n_ctx = context_index.shape[0]
    cdef Py_ssize_t i, j, k, s, g, p, lo, hi, n_paths, n_flags, offset, source
    cdef Py_ssize_t c_first_path = col["path_nav"], c_depth = col["depth"]
    cdef Py_ssize_t c_link_density = col["link_density"], c_closed = col["tags_closed"]
    cdef Py_ssize_t c_ratio = col["ratio_space"], c_mean_word = col["mean_word_length"]
    cdef Py_ssize_t c_starts_upper = col["starts_upper"], c_ends = col["ends_sentence"]
    cdef Py_ssize_t c_colon = col["ends_colon"], c_n_sent = col["n_sentences"]
    cdef Py_ssize_t c_wps = col["words_per_sentence"], c_ended = col["sentences_ended"]
    cdef Py_ssize_t c_log_ppl = col["log_ppl"], c_min = col["min_log_ppl"]
    cdef Py_ssize_t c_max = col["max_log_ppl"], c_oov = col["oov_rate"]
    cdef Py_ssize_t c_low = col["low_ppl_share"], c_dup = col["duplicates"]
    cdef Py_ssize_t c_bullet = col["bullet"], c_position = col["position"]
    cdef Py_ssize_t c_before = col["chars_before"], c_page_blocks = col["log_page_blocks"]
    cdef Py_ssize_t c_page_chars = col["log_page_chars"]
    cdef Py_ssize_t c_group_blocks = col["group_blocks"], c_group_links = col["group_link_density"]
    cdef Py_ssize_t c_group_share = col["group_share"], c_group_ppl = col["group_mean_log_ppl"]
    cdef Py_ssize_t c_log_chars = col["log_chars"], c_log_words = col["log_words"]
    cdef Py_ssize_t c_group_log_chars = col["group_log_chars"]
    cdef Py_ssize_t[4] c_patterns
    cdef Py_ssize_t[3] c_window_target
    cdef Py_ssize_t[3] c_window_source
    cdef Py_ssize_t start
    cdef long total_chars = 0, before_chars, a_len, b_len, common
    cdef double total, value, low_value, high_value, weight
    cdef str text
    cdef Py_UCS4 c
    c_patterns[0], c_patterns[1] = col["urls"], col["dates"]
    c_patterns[2], c_patterns[3] = col["legal"], col["separators"]
    c_window_target[0], c_window_source[0] = col["window_log_ppl"], c_log_ppl
    c_window_target[1], c_window_source[1] = col["window_link_density"], c_link_density
    c_window_target[2], c_window_source[2] = col["window_ends_sentence"], c_ends

    width = n_own + len(offsets) * n_ctx
    # built transposed, (features, blocks): most loops below fill one feature for every
    # block, along a row of this array; the caller gets its transpose, (blocks, features)
    out = np.zeros((width + extra_columns, n))
    cdef double[:, ::1] own = out
    lengths_array = np.empty(n, dtype=np.int64)
    cdef long[::1] lengths = lengths_array
    ids_array = np.empty(n, dtype=np.int64)
    cdef long[::1] ids = ids_array
    ends_array = np.empty(n, dtype=np.int64)
    cdef long[::1] ends = ends_array

    # markup: per block its tag group, path, link density; per distinct path its features
    cdef dict path_id = {}
    cdef list texts = [], infos = [], firsts = []
    cdef Py_ssize_t at_text = -1, at_tag = -1, at_path = -1, at_link_density = -1
    cls = None
    for i in range(n):
        block = blocks[i]
        if type(block) is not cls:  # where its class keeps the fields (one class a page)
            cls = type(block)
            at_text = _member_offset(cls, "text")
            at_tag = _member_offset(cls, "tag")
            at_path = _member_offset(cls, "tag_path")
            at_link_density = _member_offset(cls, "link_density")
        text = _slot(block, at_text, "text")
        texts.append(text)
        lengths[i] = len(text)
        total_chars += lengths[i]
        ends[i] = total_chars + i
        g = tag_group_of.get(_slot(block, at_tag, "tag"), -1)
        if g >= 0:
            own[g, i] = 1.0
        path = _slot(block, at_path, "tag_path")
        found = path_id.get(path)
        if found is None:
            found = path_id[path] = len(infos)
            info = path_cache.get(path)  # `_path_info`'s cache, read without the call
            infos.append(info if info is not None else path_info(path))
            firsts.append(block)
        ids[i] = <Py_ssize_t> found
        own[c_link_density, i] = _slot(block, at_link_density, "link_density")
    n_paths = len(infos)
    n_flags = len(infos[0][0])
    # per path: its flags, and the markup of its first block (as floats, as numpy makes them)
    path_values_array = np.empty((n_paths, n_flags + 6))
    cdef double[:, ::1] path_values = path_values_array
    for p in range(n_paths):
        flags = <tuple> infos[p][0]
        if len(flags) != n_flags:
            raise ValueError("paths with different numbers of flags")
        for k in range(n_flags):
            path_values[p, k] = flags[k]
        block = firsts[p]
        path_values[p, n_flags] = block.depth
        path_values[p, n_flags + 1] = block.in_link
        path_values[p, n_flags + 2] = block.in_heading
        path_values[p, n_flags + 3] = block.in_list
        path_values[p, n_flags + 4] = block.in_table
        path_values[p, n_flags + 5] = block.in_form
    # tags closed and opened since the previous block, once per distinct pair of paths
    cdef dict changes = {}
    cdef list tags_of = [info[2] for info in infos]
    for i in range(n):
        key = (ids[i - 1] if i else -1) * (n_paths + 1) + ids[i]
        change = changes.get(key)
        if change is None:
            a = tags_of[ids[i - 1]] if i else ()
            b = tags_of[ids[i]]
            a_len, b_len = len(a), len(b)
            common = 0
            # tag names: str.split's strings, compared as str (as the reference's == does)
            while common < a_len and common < b_len and _same_tag(a[common], b[common]):
                common += 1
            change = changes[key] = (a_len - common, b_len - common)
        own[c_closed, i] = <long> change[0]
        own[c_closed + 1, i] = <long> change[1]
        p = ids[i]
        for k in range(n_flags):
            own[c_first_path + k, i] = path_values[p, k]
        for k in range(6):
            own[c_depth + k, i] = path_values[p, n_flags + k]

    # characters by class, first and last characters, the page-wide patterns
    class_counts_array, first_class_array, end_flags_array, hits_array = text_features(
        texts, "\n".join(texts), ends, ascii_class, sentence_end, pattern_groups
    )
    cdef long[:, ::1] class_counts = class_counts_array
    cdef long[::1] first_class = first_class_array
    cdef double[:, ::1] end_flags = end_flags_array
    cdef double[:, ::1] hits = hits_array
    words_array = np.empty(n)
    cdef double[::1] words = words_array
    cdef double safe_length
    for i in range(n):
        safe_length = <double> (lengths[i] if lengths[i] > 1 else 1)
        for k in range(7):
            own[c_ratio + k, i] = (<double> class_counts[i, k]) / safe_length
        words[i] = (<double> class_counts[i, 0]) + 1.0
        own[c_mean_word, i] = (<double> lengths[i] - <double> class_counts[i, 0]) / words[i]
        own[c_starts_upper, i] = 1.0 if first_class[i] == 2 or first_class[i] == 6 else 0.0
        own[c_ends, i] = end_flags[i, 0]
        own[c_colon, i] = end_flags[i, 1]
        for g in range(4):
            own[c_patterns[g], i] = hits[i, g]

    # sentences and their scores
    per_block_array = np.zeros(n)
    cdef double[::1] per_block = per_block_array
    cdef long[::1] owner
    cdef double[::1] log_ppl
    cdef double[::1] sums
    cdef double[:, ::1] scores
    cdef double tokens
    if n_sent:
        if not len(block_of) == len(log10_probs) == len(n_tokens) == len(n_oov) == n_sent:
            raise ValueError("one block index and one score per sentence")
        owner_array = np.empty(n_sent, dtype=np.int64)
        owner = owner_array
        scores_array = np.empty((3, n_sent))  # log10 p, tokens, OOVs: as np.asarray makes them
        scores = scores_array
        for s in range(n_sent):
            owner[s] = block_of[s]
            if not 0 <= owner[s] < n:
                raise ValueError("a sentence's block index is out of range")
            scores[0, s] = log10_probs[s]
            scores[1, s] = n_tokens[s]
            scores[2, s] = n_oov[s]
        log_ppl_array = np.empty(n_sent)
        log_ppl = log_ppl_array
        sums_array = np.zeros((n, 6))  # ended, log10 p, tokens+1, OOVs, tokens, fluent
        sums = sums_array.ravel()
        for s in range(n_sent):
            text = <str> sentences[s]
            i = owner[s]
            per_block[i] += 1.0
            sums[6 * i] += 1.0 if text[len(text) - 1] in sentence_end else 0.0
            tokens = scores[1, s]
            value = scores[0, s]
            log_ppl[s] = -value / (tokens + 1.0) if tokens > 0 else no_ppl
            sums[6 * i + 1] += value
            sums[6 * i + 2] += tokens + 1.0 if tokens > 0 else 0.0
            sums[6 * i + 3] += scores[2, s]
            sums[6 * i + 4] += tokens
            sums[6 * i + 5] += 1.0 if log_ppl[s] <= low_ppl else 0.0
        for i in range(n):
            own[c_n_sent, i] = per_block[i]
            own[c_wps, i] = words[i] / (per_block[i] if per_block[i] > 1.0 else 1.0)
            own[c_ended, i] = sums[6 * i] / (per_block[i] if per_block[i] > 1.0 else 1.0)
            own[c_log_ppl, i] = (
                -sums[6 * i + 1] / (sums[6 * i + 2] if sums[6 * i + 2] > 1.0 else 1.0)
                if sums[6 * i + 2] > 0 else no_ppl
            )
            own[c_oov, i] = sums[6 * i + 3] / (sums[6 * i + 4] if sums[6 * i + 4] > 1.0 else 1.0)
            own[c_low, i] = sums[6 * i + 5] / (per_block[i] if per_block[i] > 1.0 else 1.0)
        # min and max per block as np.minimum/maximum.reduceat over the first sentence of
        # each block (np.searchsorted), clipped to the last sentence
        lo = 0
        for i in range(n):
            while lo < n_sent and owner[lo] < i:
                lo += 1
            if per_block[i] <= 0:
                own[c_min, i] = own[c_max, i] = no_ppl
                continue
            start = lo if lo < n_sent - 1 else n_sent - 1
            if i == n - 1:
                hi = n_sent
            else:
                hi = lo
                while hi < n_sent and owner[hi] < i + 1:
                    hi += 1
                if hi > n_sent - 1:
                    hi = n_sent - 1
            low_value = high_value = log_ppl[start]
            if start < hi:
                for s in range(start + 1, hi):
                    if log_ppl[s] < low_value:
                        low_value = log_ppl[s]
                    if log_ppl[s] > high_value:
                        high_value = log_ppl[s]
            own[c_min, i] = low_value
            own[c_max, i] = high_value
    else:
        for i in range(n):
            own[c_wps, i] = words[i] / 1.0
            own[c_log_ppl, i] = own[c_min, i] = own[c_max, i] = no_ppl

    # duplicates on the page and bullets
    cdef dict seen = {}
    for text in texts:
        seen[text] = seen.get(text, 0) + 1
    for i in range(n):
        text = <str> texts[i]
        own[c_dup, i] = <long> seen[text] - 1
        own[c_bullet, i] = 1.0 if _may_be_bullet(text) and bullet_match(text) is not None else 0.0

    # position, and the run of blocks in one container
    total = <double> total_chars if total_chars else 1.0
    before_chars = 0
    for i in range(n):
        own[c_position, i] = (<double> i) / (<double> (n - 1 if n - 1 > 1 else 1))
        before_chars += lengths[i]
        own[c_before, i] = (<double> (before_chars - lengths[i])) / total
    cdef dict container_id = {}
    containers = [container_id.setdefault(info[1], len(container_id)) for info in infos]
    group_array = np.empty(n, dtype=np.int64)
    cdef long[::1] group = group_array
    group[0] = 0
    for i in range(1, n):
        group[i] = group[i - 1] + (
            1 if containers[ids[i]] != containers[ids[i - 1]] else 0
        )
    cdef Py_ssize_t n_groups = group[n - 1] + 1
    group_sums_array = np.zeros((n_groups, 4))  # chars, blocks, link chars, log ppl x chars
    cdef double[:, ::1] group_sums = group_sums_array
    for i in range(n):
        g = group[i]
        group_sums[g, 0] += <double> lengths[i]
        group_sums[g, 1] += 1.0
        group_sums[g, 2] += own[c_link_density, i] * <double> lengths[i]
        group_sums[g, 3] += own[c_log_ppl, i] * <double> lengths[i]
    group_chars_array = np.empty(n)
    cdef double[::1] group_chars = group_chars_array
    for i in range(n):
        g = group[i]
        group_chars[i] = group_sums[g, 0]
        own[c_group_blocks, i] = group_sums[g, 1]
        value = group_sums[g, 0] if group_sums[g, 0] > 1.0 else 1.0
        own[c_group_links, i] = group_sums[g, 2] / value
        own[c_group_share, i] = group_sums[g, 0] / total
        own[c_group_ppl, i] = group_sums[g, 3] / value

    # windows of +-3 blocks, weighted by length (np.cumsum's running sums, from 0)
    cumulative_array = np.empty((2, n + 1))
    cdef double[:, ::1] cumulative = cumulative_array
    cdef Py_ssize_t w
    for w in range(3):
        source = c_window_source[w]
        cumulative[0, 0] = cumulative[1, 0] = 0.0
        for i in range(n):
            weight = <double> lengths[i]
            cumulative[0, i + 1] = (
                weight * own[source, i] if i == 0 else cumulative[0, i] + weight * own[source, i]
            )
            cumulative[1, i + 1] = weight if i == 0 else cumulative[1, i] + weight
        for i in range(n):
            lo = i - 3 if i > 3 else 0
            hi = i + 4 if i + 4 < n else n
            value = cumulative[1, hi] - cumulative[1, lo]
            own[c_window_target[w], i] = (cumulative[0, hi] - cumulative[0, lo]) / (
                value if value > 1.0 else 1.0
            )

    # the logarithms, by numpy as the reference takes them
    out[c_log_chars, :] = np.log1p(lengths_array)
    out[c_log_words, :] = np.log(words_array)
    out[c_group_log_chars, :] = np.log1p(group_chars_array)
    out[c_page_blocks, :] = math.log1p(n)
    out[c_page_chars, :] = math.log1p(total)

    # neighbours: the context columns of the blocks before and after, -1 off the page
    for k in range(len(offsets)):
        offset = offsets[k]
        for s in range(n_ctx):
            source = context_index[s]
            p = n_own + k * n_ctx + s
            for i in range(n):
                j = i + offset
                own[p, i] = own[source, j] if 0 <= j < n else -1.0
    return out.T


def longest(list texts, Py_ssize_t k):
    """``sorted(texts, key=len, reverse=True)[:k]`` (`language.LanguageIdentifier.identify_page`'s
    vote): the ``k`` longest texts, longest first, the earlier of two of one length first."""
    cdef Py_ssize_t n = len(texts), i, j, m = 0, length
    cdef Py_ssize_t[8] best_at
    cdef Py_ssize_t[8] best_length
    if not 0 <= k <= 8:
        raise ValueError("longest keeps up to 8 texts")
    for i in range(n):
        length = len(<str> texts[i])
        if m == k and (k == 0 or length <= best_length[m - 1]):
            continue  # not longer than the shortest kept: an earlier one of its length wins
        j = m if m < k else k - 1  # the free place, or the shortest's
        while j > 0 and best_length[j - 1] < length:
            best_at[j] = best_at[j - 1]
            best_length[j] = best_length[j - 1]
            j -= 1
        best_at[j] = i
        best_length[j] = length
        if m < k:
            m += 1
    return [texts[best_at[j]] for j in range(m)]


cdef inline bint _has_code_point(const _char *data, Py_ssize_t length,
                                 const unsigned int *bounds, Py_ssize_t n_bounds) noexcept nogil:
    cdef Py_ssize_t i, r
    cdef Py_UCS4 c, lowest = 0xFFFFFFFF
    for r in range(0, n_bounds, 2):
        if bounds[r] < lowest:
            lowest = bounds[r]
    for i in range(length):
        c = data[i]
        if c < lowest:
            continue  # below every range: most characters of a page in Latin letters
        for r in range(0, n_bounds, 2):
            if bounds[r] <= c <= bounds[r + 1]:
                return True
    return False


cdef inline bint _in_ranges(Py_UCS4 c, const unsigned int *bounds,
                            Py_ssize_t n_bounds) noexcept nogil:
    cdef Py_ssize_t r
    for r in range(0, n_bounds, 2):
        if bounds[r] <= c <= bounds[r + 1]:
            return True
    return False


cdef Py_ssize_t _cut_runs(const _char *data, Py_ssize_t length, const unsigned int *bounds,
                          Py_ssize_t n_bounds, Py_ssize_t size, Py_UCS4 *out) noexcept nogil:
    """Copy ``data`` to ``out`` (when not NULL) with a space after every ``size`` characters
    of a run in ``bounds`` that more of the run follow; the number of spaces put in."""
    cdef Py_ssize_t i, at = 0, run = 0, spaces = 0
    cdef Py_UCS4 c
    cdef bint inside
    for i in range(length):
        c = data[i]
        inside = c >= 0x80 and _in_ranges(c, bounds, n_bounds)
        if inside:
            if run and run % size == 0:
                spaces += 1
                if out != NULL:
                    out[at] = 0x20
                    at += 1
            run += 1
        else:
            run = 0
        if out != NULL:
            out[at] = c
            at += 1
    return spaces


def pseudo_words(str text, const unsigned int[::1] bounds, Py_ssize_t size):
    """`language.pseudo_words`: a space after every ``size`` characters of a run of the
    ranges ``bounds[2r] .. bounds[2r + 1]`` that more of the run follow (``"ab cd e"`` for
    ``"abcde"``, ``size`` 2); ``text`` itself when nothing is cut."""
    cdef Py_ssize_t length = len(text), n_bounds = bounds.shape[0], spaces
    cdef int kind = PyUnicode_KIND(text)
    cdef const unsigned int *ranges = &bounds[0] if n_bounds else NULL
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_UCS4[::1] out
    if n_bounds % 2:
        raise ValueError("bounds come in pairs")
    if size < 1:
        raise ValueError("size must be positive")
    if PyUnicode_IS_ASCII(text) or length <= size:
        return text
    if kind == 1:
        spaces = _cut_runs(<const Py_UCS1 *> data, length, ranges, n_bounds, size, NULL)
    elif kind == 2:
        spaces = _cut_runs(<const Py_UCS2 *> data, length, ranges, n_bounds, size, NULL)
    else:
        spaces = _cut_runs(<const Py_UCS4 *> data, length, ranges, n_bounds, size, NULL)
    if not spaces:
        return text
    out = np.empty(length + spaces, dtype=np.uint32)
    if kind == 1:
        _cut_runs(<const Py_UCS1 *> data, length, ranges, n_bounds, size, &out[0])
    elif kind == 2:
        _cut_runs(<const Py_UCS2 *> data, length, ranges, n_bounds, size, &out[0])
    else:
        _cut_runs(<const Py_UCS4 *> data, length, ranges, n_bounds, size, &out[0])
    return PyUnicode_FromKindAndData(4, &out[0], length + spaces)


def with_code_points(list texts, Py_ssize_t min_length, const unsigned int[::1] bounds):
    """The indices of the texts that are not all ASCII, at least ``min_length`` characters
    long, and hold a code point of one of the ranges ``bounds[2r] .. bounds[2r + 1]`` (as a
    regex character class of those ranges finds one)."""
    cdef Py_ssize_t n = len(texts), i, length, n_bounds = bounds.shape[0]
    cdef list found = []
    cdef int kind
    cdef const unsigned int *ranges = &bounds[0] if n_bounds else NULL
    if n_bounds % 2:
        raise ValueError("bounds come in pairs")
    for i in range(n):
        text = <str> texts[i]
        length = len(text)
        kind = PyUnicode_KIND(text)
        if length < min_length or PyUnicode_IS_ASCII(text):
            continue
        if kind == 1:
            hit = _has_code_point(<const Py_UCS1 *> PyUnicode_DATA(text), length, ranges, n_bounds)
        elif kind == 2:
            hit = _has_code_point(<const Py_UCS2 *> PyUnicode_DATA(text), length, ranges, n_bounds)
        else:
            hit = _has_code_point(<const Py_UCS4 *> PyUnicode_DATA(text), length, ranges, n_bounds)
        if hit:
            found.append(i)
    return found



def block_kinds(list blocks, frozenset heading_tags, frozenset list_tags,
                frozenset not_list_tags, str paragraph, str heading, str list_item):
    """`labeller.block_kinds`: ``heading`` for a block in a heading or of a heading tag, else
    ``list_item`` for a list tag, or a block in a list whose tag is not one of
    ``not_list_tags``, else ``paragraph``."""
    cdef Py_ssize_t n = len(blocks), i
    cdef Py_ssize_t at_tag = -1, at_heading = -1, at_list = -1
    cdef list kinds = [paragraph] * n
    cls = None
    for i in range(n):
        block = blocks[i]
        if type(block) is not cls:  # the offsets of its class (one class a page, in practice)
            cls = type(block)
            at_tag = _member_offset(cls, "tag")
            at_heading = _member_offset(cls, "in_heading")
            at_list = _member_offset(cls, "in_list")
        tag = _slot(block, at_tag, "tag")
        if _slot(block, at_heading, "in_heading") or tag in heading_tags:
            kinds[i] = heading
        elif tag in list_tags or (_slot(block, at_list, "in_list") and tag not in not_list_tags):
            kinds[i] = list_item
    return kinds


def class_features(list blocks, Py_ssize_t n_groups, unsigned long long max_levels):
    """`labeller.class_features` of a page with at least one block, column-major (the
    transpose of a C-ordered (features, blocks) array, as `page_features` lays its matrix
    out): per group the levels up to the nearest element naming it (``max_levels + 1``: none),
    the share of blocks with any, then the comment marks' share, their log (numpy's, as the
    reference takes it) and the page's."""
    cdef Py_ssize_t n = len(blocks), i, g
    cdef Py_ssize_t at_words = -1, at_marks = -1
    cdef unsigned long long code, level
    cdef Py_ssize_t with_any = 0
    cdef double page_marks
    out_array = np.empty((n_groups + 4, n))
    cdef double[:, ::1] out = out_array
    marks_array = np.empty(n)
    cdef double[::1] marks = marks_array
    cls = None
    for i in range(n):
        block = blocks[i]
        if type(block) is not cls:
            cls = type(block)
            at_words = _member_offset(cls, "class_words")
            at_marks = _member_offset(cls, "comment_marks")
        code = _slot(block, at_words, "class_words")
        for g in range(n_groups):
            level = (code >> (4 * g)) & max_levels
            out[g, i] = <double> level if level > 0 else <double> (max_levels + 1)
        if (code >> (4 * (n_groups - 1))) & max_levels:
            with_any += 1
        marks[i] = _slot(block, at_marks, "comment_marks")
    page_marks = marks[n - 1]  # the marks count up in reading order
    cdef double share = (<double> with_any) / (<double> n), log_page = math.log1p(page_marks)
    for i in range(n):
        out[n_groups, i] = share
        out[n_groups + 1, i] = marks[i] / page_marks if page_marks else 0.0
        out[n_groups + 3, i] = log_page
    out_array[n_groups + 2, :] = np.log1p(marks_array)
    return out_array.T


def attributes(list objects, str name):
    """``list(map(operator.attrgetter(name), objects))``, read from the objects' slots when
    their class keeps ``name`` in one (`_member_offset`)."""
    cdef Py_ssize_t n = len(objects), i, at = -1
    cdef list values = [None] * n
    cls = None
    for i in range(n):
        obj = objects[i]
        if type(obj) is not cls:
            cls = type(obj)
            at = _member_offset(cls, name)
        values[i] = _slot(obj, at, name)
    return values
