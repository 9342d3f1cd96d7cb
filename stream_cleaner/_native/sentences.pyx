# cython: language_level=3, boundscheck=False, wraparound=False
"""`segment.split_sentences` over a page's blocks in one call, without a regex object per block.

It follows the reference's regular expressions character by character (a boundary is a run of
sentence-final punctuation, optional closing quotes or brackets, white space, then the first
character of what follows; CJK full stops need no white space) and looks up the word before a
dot in the reference's ABBREVIATIONS. Tests check both give
the same sentences.

Python twins (what each function must equal; DEVELOPERS.md names the tests):
`split_blocks`: `segment.split_blocks`; `join_kept`: `segment.join_kept`; `has_words`:
the word test of `decide.decide_sentences`; `decide_page`: `decide.decide_page`;
`make_records`: calling the record class (`pipeline.make_sentences`, the blocks of
`parse`); `sentence_values`: `streaming.records.sentence_values`.
"""

from cpython.unicode cimport Py_UNICODE_ISLOWER, Py_UNICODE_ISSPACE


cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void *PyUnicode_DATA(object text)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil


cdef inline bint _final(Py_UCS4 c):
    return c == u"." or c == u"!" or c == u"?" or c == u"…"


cdef inline bint _closer(Py_UCS4 c):
    return (c == u'"' or c == u"'" or c == u"”" or c == u"’" or c == u"»" or c == u")"
            or c == u"]")


cdef inline bint _cjk_stop(Py_UCS4 c):
    return c == u"。" or c == u"！" or c == u"？"


cdef inline bint _cjk_closer(Py_UCS4 c):
    return (c == u"」" or c == u"』" or c == u"”" or c == u"’" or c == u"）" or c == u")")


cdef bint _is_abbreviation(str text, Py_ssize_t start, Py_ssize_t dot, frozenset abbreviations):
    """`segment._is_abbreviation`, the same backward scan."""
    cdef Py_ssize_t begin = dot
    while begin > start and not Py_UNICODE_ISSPACE(text[begin - 1]):
        begin -= 1
    if begin == dot:
        return False
    word = text[begin:dot].lstrip("([\"'“‘").lower()
    if len(word) == 1 and word.isalpha():
        return True
    return word in abbreviations


cdef void _split(str text, list out, list block_of, object index, frozenset abbreviations):
    cdef Py_ssize_t n = len(text), p = 0, i, j, k, w, start = 0, end
    cdef Py_UCS4 c
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    while p < n:
        c = PyUnicode_READ(kind, data, p)
        if _final(c):
            i = p
            j = i + 1
            while j < n and _final(PyUnicode_READ(kind, data, j)):
                j += 1
            k = j
            while k < n and _closer(PyUnicode_READ(kind, data, k)):
                k += 1
            w = k
            while w < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, w)):
                w += 1
            if w == k or w == n:  # no white space, or nothing after it: not a boundary here,
                p = j  # nor later in the run (a match starts where a run does: linear time)
                continue
            p = w + 1  # the match consumed the first character of what follows
            if Py_UNICODE_ISLOWER(PyUnicode_READ(kind, data, w)):
                continue
            if PyUnicode_READ(kind, data, i) == 46 and _is_abbreviation(text, start, i, abbreviations):
                continue
            end = w
        elif _cjk_stop(c):
            k = p + 1
            while k < n and _cjk_stop(PyUnicode_READ(kind, data, k)):
                k += 1
            while k < n and _cjk_closer(PyUnicode_READ(kind, data, k)):
                k += 1
            p = end = k
        else:
            p += 1
            continue
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
            block_of.append(index)
        start = end
    piece = text[start:].strip()
    if piece:
        out.append(piece)
        block_of.append(index)


def split_blocks(list texts, list indexes, frozenset abbreviations):
    """The sentences of many blocks, and the index of the block each one comes from.

    Args:
        texts: the blocks' texts, white space already collapsed.
        indexes: the blocks' indexes, one per text.
        abbreviations: `segment.ABBREVIATIONS`.
    """
    cdef list sentences = [], block_of = []
    cdef Py_ssize_t b
    for b in range(len(texts)):
        _split(<str> texts[b], sentences, block_of, indexes[b], abbreviations)
    return sentences, block_of


cdef extern from "Python.h":
    bint Py_UNICODE_ISALNUM(Py_UCS4 c)
    bint Py_UNICODE_ISDECIMAL(Py_UCS4 c)


def has_words(list texts):
    """`decide.has_words` of each text: whether it holds a character of the reference's
    ``[^\\W\\d_]``, which for the re module is a word character (``str.isalnum``'s, as
    ``Py_UNICODE_ISALNUM`` tells) that is neither a decimal digit nor ``_``."""
    cdef list found = []
    cdef str text
    cdef Py_UCS4 c
    cdef bint letter
    for text in texts:
        letter = False
        for c in text:
            if c < 128:
                if (u"a" <= c <= u"z") or (u"A" <= c <= u"Z"):
                    letter = True
                    break
            elif Py_UNICODE_ISALNUM(c) and not Py_UNICODE_ISDECIMAL(c):
                letter = True
                break
        found.append(letter)
    return found


def join_kept(list sentences, list block_of, list keeps, frozenset cjk_ends):
    """`segment.join_kept`: per block with a kept sentence, in order, its kept sentences
    joined as `segment.join_sentences` joins them. None when ``block_of`` decreases somewhere
    (the caller then takes the reference, which groups by dict)."""
    cdef Py_ssize_t n = len(sentences), s
    cdef list texts = [], group = []
    cdef object current = None
    if not len(block_of) == len(keeps) == n:
        raise ValueError("one block index and one decision per sentence")
    for s in range(n):
        b = block_of[s]
        if current is not None and b < current:
            return None
        if not keeps[s]:
            continue
        if group and b != current:
            texts.append(_join(group, cjk_ends))
            group = []
        current = b
        group.append(sentences[s])
    if group:
        texts.append(_join(group, cjk_ends))
    return texts


cdef str _join(list group, frozenset cjk_ends):
    """`segment.join_sentences`: one space between sentences, none after a CJK full stop."""
    cdef str joined = " ".join(group)
    cdef Py_ssize_t i
    if len(group) == 1 or joined.isascii():
        return joined
    parts = [group[0]]
    for i in range(1, len(group)):
        before = <str> group[i - 1]
        parts.append(group[i] if before[len(before) - 1] in cjk_ends else " " + group[i])
    return "".join(parts)


cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        const char *name
        int type
        Py_ssize_t offset
        int flags
    ctypedef struct PyMemberDescrObject:
        PyMemberDef *d_member
    ctypedef struct PyTypeObject:
        PyObject *(*tp_alloc)(PyTypeObject *, Py_ssize_t)
    ctypedef struct PyObject:
        pass
    enum: T_OBJECT_EX
    enum: READONLY
    void Py_INCREF(object o)


from cpython.ref cimport PyObject as _Object

cdef dict _SLOT_OFFSETS = {}


cdef tuple _slot_offsets(type cls, tuple names):
    """The offsets of a slots dataclass's fields, when building one by writing them is what
    its ``__init__`` does (plain generated ``__init__``, no ``__post_init__``, writable
    object slots, ``object.__new__``); None otherwise."""
    import dataclasses
    import types

    key = (cls, names)
    if key in _SLOT_OFFSETS:
        return _SLOT_OFFSETS[key]
    offsets = None
    try:
        fields = dataclasses.fields(cls)
        plain = (
            type(cls) is type
            and cls.__new__ is object.__new__
            and not hasattr(cls, "__post_init__")
            and "__dict__" not in dir(cls)
            and tuple(f.name for f in fields) == names
            and all(f.init for f in fields)
        )
        if plain:
            found = []
            for name in names:
                descriptor = cls.__dict__[name]
                if type(descriptor) is not types.MemberDescriptorType:
                    raise TypeError(name)
                member = (<PyMemberDescrObject *> <_Object *> descriptor).d_member
                if member.type != T_OBJECT_EX or member.flags & READONLY:
                    raise TypeError(name)
                found.append(member.offset)
            offsets = tuple(found)
    except (TypeError, KeyError, AttributeError):
        offsets = None
    _SLOT_OFFSETS[key] = offsets
    return offsets


cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void *op)
    bint PyType_IS_GC(PyTypeObject *t)
    bint PyUnicode_CheckExact(object o)
    bint PyLong_CheckExact(object o)
    bint PyFloat_CheckExact(object o)
    bint PyBool_Check(object o)


cdef inline bint _atomic(object value):
    """Whether ``value`` can hold no reference to another object: None, or an exact str,
    int, float or bool."""
    return (value is None or PyUnicode_CheckExact(value) or PyLong_CheckExact(value)
            or PyFloat_CheckExact(value) or PyBool_Check(value))


def make_records(type cls, tuple names, list columns):
    """``list(map(cls, *columns))`` for a slots dataclass whose fields are ``names``: each
    instance allocated and its slots written directly when that is all ``__init__`` would
    do (`_slot_offsets`), else by calling the class.

    A record made here whose fields are all None, str, int, float or bool is taken out of
    the cyclic garbage collector's lists, as CPython does with tuples of such values: it can
    be in no reference cycle, and the collections that run while a page is cleaned then
    skip the page's hundreds of records (and move none of them to older generations).
    Records are not changed once made (`document.Block`); one whose field were later set
    to a container would be freed by its reference count alone.
    """
    cdef tuple offsets = _slot_offsets(cls, names)
    cdef Py_ssize_t n_fields = len(names), n, i, k
    cdef list records
    cdef PyObject *record
    cdef PyObject **slot
    cdef bint atomic, collectable = PyType_IS_GC(<PyTypeObject *> cls)
    if offsets is None or len(columns) != n_fields:
        return list(map(cls, *columns))
    n = len(columns[0]) if n_fields else 0
    for column in columns:
        if len(column) != n:
            return list(map(cls, *columns))  # the class raises as the reference would
    cdef Py_ssize_t[32] at
    if n_fields > 32:
        return list(map(cls, *columns))
    for k in range(n_fields):
        at[k] = offsets[k]
    cols = [list(column) for column in columns]
    records = [None] * n
    for i in range(n):
        record = (<PyTypeObject *> cls).tp_alloc(<PyTypeObject *> cls, 0)
        if record == NULL:
            raise MemoryError()
        obj = <object> record  # a new reference, which obj now owns...
        Py_DECREF_raw(record)  # ...so drop tp_alloc's
        atomic = collectable
        for k in range(n_fields):
            value = (<list> cols[k])[i]
            Py_INCREF(value)
            slot = <PyObject **> ((<char *> record) + at[k])
            slot[0] = <PyObject *> <_Object *> value
            if atomic and not _atomic(value):
                atomic = False
        if atomic:
            PyObject_GC_UnTrack(record)
        records[i] = obj
    return records


cdef extern from *:
    """
    static inline void Py_DECREF_raw(PyObject *o) { Py_DECREF(o); }
    """
    void Py_DECREF_raw(PyObject *o)


cdef extern from "math.h":
    double pow(double x, double y) nogil
    bint isinf(double x) nogil


def decide_page(list texts, list block_of, list log10_probs, list n_tokens, list n_oovs,
                unscored, double max_perplexity, content, template, Py_ssize_t shortest_long,
                too_long, tuple reasons, sentence_reasons, block_reasons, is_figure=None):
    """`decide.decide_page` in one pass: the same columns, sums and counts (its Python code
    is the reference; tests compare both). ``too_long`` is `decide.too_long` with the
    settings' limits, asked of the sentences longer than ``shortest_long`` characters only.
    ``reasons`` is the registry's reason of each step of the pass (`filters.PASS_STEPS`:
    `filters.Registry.columns`); ``sentence_reasons`` (by sentence) and ``block_reasons`` (by
    block index) the verdicts of the filters added to it, or None; ``is_figure``
    (`decide.is_figure`), asked of the sentences without a letter, in the labeller modes, or
    None."""
    cdef Py_ssize_t n = len(texts), i
    cdef double lp, x, ppl_value, total_lp = 0.0, kept_lp = 0.0
    cdef long long tokens, total_n = 0, kept_n = 0
    cdef bint keep, has
    cdef bint block_level = content is not None or bool(template) or block_reasons is not None
    cdef list perplexities = [], keeps = [], reasons_out = [], words
    cdef dict dropped = {}
    cdef str no_words, long, too_high, site_template, boilerplate
    no_words, long, too_high, site_template, boilerplate = reasons
    if not len(block_of) == len(log10_probs) == len(n_tokens) == len(n_oovs) == n:
        raise ValueError("one block index and one score per sentence")
    if sentence_reasons is not None and len(sentence_reasons) != n:
        raise ValueError("one added verdict per sentence")
    words = has_words(texts)
    for i in range(n):
        lp_object = log10_probs[i]
        n_object = n_tokens[i]
        tokens = n_object
        ppl = None
        if tokens > 0:
            x = -(<double> lp_object) / <double> (tokens + 1)
            ppl_value = pow(10.0, x)
            if isinf(ppl_value) and not isinf(x):
                raise OverflowError("(34, 'Numerical result out of range')")
            ppl = ppl_value
        if unscored and i in unscored:
            ppl = None
        perplexities.append(ppl)
        has = words[i]
        if not has and is_figure is not None:
            has = is_figure(texts[i])
        if not has:
            keep, reason = False, no_words
        elif len(<str> texts[i]) > shortest_long and too_long(texts[i]):
            keep, reason = False, long
        elif ppl is None:
            keep, reason = True, None
        elif ppl_value > max_perplexity:
            keep, reason = False, too_high
        else:
            keep, reason = True, None
        if keep and sentence_reasons is not None:
            added = sentence_reasons[i]
            if added is not None:
                keep, reason = False, added
        if block_level:
            b = block_of[i]
            if b in template:
                keep, reason = False, site_template
            elif content is not None and not content[b]:
                keep, reason = False, boilerplate
            elif block_reasons is not None and b in block_reasons:
                keep, reason = False, block_reasons[b]
        keeps.append(keep)
        reasons_out.append(reason)
        if ppl is not None:
            lp = lp_object
            total_lp += lp
            total_n += tokens + 1
            if keep:
                kept_lp += lp
                kept_n += tokens + 1
        if not keep:
            key = reason or "unknown"
            dropped[key] = dropped.get(key, 0) + 1
    columns = (log10_probs, n_tokens, n_oovs, perplexities, keeps, reasons_out)
    return columns, (total_lp, total_n, kept_lp, kept_n), dropped



from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdlib cimport free, realloc
from libc.string cimport memchr, memcpy
from cpython cimport array

import array

# the type of sentence_values' ends, cloned for each page
cdef array.array _ENDS = array.array("q")


cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object value, int *overflow) except? -1


cdef struct Buffer:
    char *data
    Py_ssize_t size
    Py_ssize_t capacity


cdef int _grow(Buffer *out, Py_ssize_t more) except -1:
    cdef Py_ssize_t capacity = out.capacity * 2 if out.capacity else 1024
    cdef char *data
    while capacity < out.size + more:
        capacity *= 2
    data = <char *> realloc(out.data, capacity)
    if data == NULL:
        raise MemoryError()
    out.data = data
    out.capacity = capacity
    return 0


cdef inline int _put(Buffer *out, const char *data, Py_ssize_t length) except -1:
    if out.size + length > out.capacity:
        _grow(out, length)
    memcpy(out.data + out.size, data, length)
    out.size += length
    return 0


cdef inline int _put_bytes(Buffer *out, bytes piece) except -1:
    return _put(out, PyBytes_AS_STRING(piece), PyBytes_GET_SIZE(piece))


cdef int _put_int(Buffer *out, value, dumps) except -1:
    """A field that is an int: formatted here when it is a plain int that fits 64 bits, else
    by ``dumps`` (which then writes, or raises, as the reference would)."""
    cdef int overflow = 0
    cdef long long number
    cdef unsigned long long magnitude
    cdef char[24] digits
    cdef int start = 24
    if type(value) is int:
        number = PyLong_AsLongLongAndOverflow(value, &overflow)
        if not overflow:
            # by hand: snprintf's format parsing cost more than the rest of the record
            magnitude = <unsigned long long> number if number >= 0 else (
                0 - <unsigned long long> number)
            while True:
                start -= 1
                digits[start] = <char> (48 + magnitude % 10)
                magnitude //= 10
                if magnitude == 0:
                    break
            if number < 0:
                start -= 1
                digits[start] = b"-"
            return _put(out, digits + start, 24 - start)
    return _put_bytes(out, dumps(value))


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object text, Py_ssize_t *size) except NULL


cdef const char *_HEX = b"0123456789abcdef"


cdef int _put_str(Buffer *out, text, dumps) except -1:
    """A JSON string as orjson writes it: UTF-8 as is; ``"``, ``\\`` and the control characters
    below U+0020 escaped (\\b \\t \\n \\f \\r, else \\u00xx). What is not a valid str for
    that (not a str, lone surrogates) goes to ``dumps``, which raises as the reference does."""
    cdef const char *data
    cdef Py_ssize_t length, i
    cdef unsigned char c
    cdef char *at
    if type(text) is not str:
        return _put_bytes(out, dumps(text))
    try:
        data = PyUnicode_AsUTF8AndSize(text, &length)
    except UnicodeEncodeError:
        return _put_bytes(out, dumps(text))
    if out.size + 2 + 6 * length > out.capacity:
        _grow(out, 2 + 6 * length)
    at = out.data + out.size
    at[0] = b'"'
    at += 1
    for i in range(length):
        c = <unsigned char> data[i]
        if c >= 0x20 and c != 0x22 and c != 0x5c:
            at[0] = <char> c
            at += 1
            continue
        at[0] = b"\\"
        if c == 0x22 or c == 0x5c:
            at[1] = <char> c
        elif c == 0x08:
            at[1] = b"b"
        elif c == 0x09:
            at[1] = b"t"
        elif c == 0x0a:
            at[1] = b"n"
        elif c == 0x0c:
            at[1] = b"f"
        elif c == 0x0d:
            at[1] = b"r"
        else:
            at[1] = b"u"
            at[2] = b"0"
            at[3] = b"0"
            at[4] = _HEX[c >> 4]
            at[5] = _HEX[c & 15]
            at += 6
            continue
        at += 2
    at[0] = b'"'
    out.size = at + 1 - out.data
    return 0


cdef bytes _cached(dict cache, value, dumps):
    """``dumps(value)`` for the few values a field repeats (languages, reasons)."""
    try:
        return cache[value]
    except KeyError:
        encoded = dumps(value)
        if len(cache) < 256:
            cache[value] = encoded
        return encoded
    except TypeError:  # unhashable: what dumps makes of it, uncached
        return dumps(value)


cdef struct Items:
    # the items of a JSON array of numbers (or nulls) as written, taken one by one: the next
    # starts at ``at``; ``end`` is the closing bracket
    const char *at
    const char *end


cdef bint _items(bytes array, Py_ssize_t n, Items *items):
    """Point ``items`` at the ``n`` items of ``array`` (a JSON array of numbers, or nulls);
    False if it holds another number of comma-separated items (a value with a comma)."""
    cdef const char *data = array
    cdef Py_ssize_t length = len(array), commas = 0, i
    for i in range(1, length - 1):
        if data[i] == b",":
            commas += 1
    items.at = data + 1
    items.end = data + length - 1
    return commas == n - 1


cdef inline int _put_item(Buffer *out, Items *items) except -1:
    """The next item of ``items``."""
    cdef const char *comma = <const char *> memchr(items.at, b",", items.end - items.at)
    cdef const char *stop = comma if comma != NULL else items.end
    _put(out, items.at, stop - items.at)
    items.at = stop + 1
    return 0


# the fields sentence_values reads, by position in _SENTENCE_FIELDS
_SENTENCE_FIELDS = ("text", "block_index", "log10_prob", "n_tokens", "n_oov", "perplexity",
                    "keep", "reason", "language")


cdef inline object _field(object record, Py_ssize_t offset, str name):
    """``getattr(record, name)``, read straight from its slot at ``offset`` when that is
    known (>= 0) and set."""
    cdef PyObject *value
    if offset >= 0:
        value = (<PyObject **> ((<char *> <_Object *> record) + offset))[0]
        if value != NULL:
            return <object> <_Object *> value
    return getattr(record, name)


cdef list _field_offsets(sentences):
    """The slot offsets of `_SENTENCE_FIELDS` in the sentences' class (`_slot_offsets`), or
    -1 for each when the sentences are not all of one such class."""
    import dataclasses

    cdef list unknown = [-1] * len(_SENTENCE_FIELDS)
    cls = type(sentences[0])
    for sentence in sentences:
        if type(sentence) is not cls:
            return unknown
    try:
        names = tuple(field.name for field in dataclasses.fields(cls))
    except TypeError:
        return unknown
    offsets = _slot_offsets(cls, names)
    if offsets is None or not all(name in names for name in _SENTENCE_FIELDS):
        return unknown
    return [offsets[names.index(name)] for name in _SENTENCE_FIELDS]


def sentence_values(str doc_id, sentences, dumps):
    """``records.sentence_values``: the JSON value of each sentence record, byte for byte,
    written end to end: ``(data, ends)``, the bytes of all the values and an ``array('q')``
    of where each ends in them (`records.PackedValues`).

    The record is written field by field in the reference's (sorted) key order; ints and the
    text as orjson writes them (`_put_str`). Floats and anything unusual go through ``dumps``
    (orjson's, as in the reference): the floats of a page in one call (a JSON number holds no
    comma, so the list splits on them), languages and reasons once per distinct value. One
    ``dumps`` call per record cost as much as the whole reference: orjson allocates each
    result at 1 KiB, then shrinks it.
    """
    cdef Py_ssize_t n = len(sentences), i
    cdef array.array ends = array.clone(_ENDS, n, zero=False)
    if n == 0:
        return b"", ends
    # the floats of the page in one dumps call each, taken item by item from its array
    cdef bytes log10_json = dumps([s.log10_prob for s in sentences])
    cdef bytes perplexity_json = dumps([s.perplexity for s in sentences])
    cdef Items log10_items, perplexity_items
    cdef list log10_probs = None, perplexities = None
    cdef bytes id_json = dumps(doc_id)
    cdef dict cache = {}
    cdef list offsets = _field_offsets(sentences)
    cdef Py_ssize_t at_text = offsets[0], at_block = offsets[1], at_tokens = offsets[3]
    cdef Py_ssize_t at_oov = offsets[4], at_keep = offsets[6], at_reason = offsets[7]
    cdef Py_ssize_t at_language = offsets[8], at_log10 = offsets[2], at_perplexity = offsets[5]
    # a field that holds something with a comma in it (not a number) makes more items: it is
    # written value by value
    if not _items(log10_json, n, &log10_items):
        log10_probs = [dumps(_field(s, at_log10, "log10_prob")) for s in sentences]
    if not _items(perplexity_json, n, &perplexity_items):
        perplexities = [dumps(_field(s, at_perplexity, "perplexity")) for s in sentences]
    cdef Buffer out
    out.data = NULL
    out.size = out.capacity = 0
    try:
        for i in range(n):
            s = sentences[i]
            _put(&out, b'{"block_index":', 15)
            _put_int(&out, _field(s, at_block, "block_index"), dumps)
            _put(&out, b',"document_id":', 15)
            _put_bytes(&out, id_json)
            _put(&out, b',"index":', 9)
            _put_int(&out, i, dumps)
            _put(&out, b',"kept":', 8)
            keep = _field(s, at_keep, "keep")
            if keep is True:
                _put(&out, b"true", 4)
            elif keep is False:
                _put(&out, b"false", 5)
            else:
                _put_bytes(&out, dumps(keep))
            _put(&out, b',"language":', 12)
            _put_bytes(&out, _cached(cache, _field(s, at_language, "language"), dumps))
            _put(&out, b',"log10_prob":', 14)
            if log10_probs is None:
                _put_item(&out, &log10_items)
            else:
                _put_bytes(&out, <bytes> log10_probs[i])
            _put(&out, b',"n_sentences":', 15)
            _put_int(&out, n, dumps)
            _put(&out, b',"oov":', 7)
            _put_int(&out, _field(s, at_oov, "n_oov"), dumps)
            _put(&out, b',"perplexity":', 14)
            if perplexities is None:
                _put_item(&out, &perplexity_items)
            else:
                _put_bytes(&out, <bytes> perplexities[i])
            _put(&out, b',"reason":', 10)
            _put_bytes(&out, _cached(cache, _field(s, at_reason, "reason"), dumps))
            _put(&out, b',"text":', 8)
            _put_str(&out, _field(s, at_text, "text"), dumps)
            _put(&out, b',"tokens":', 10)
            _put_int(&out, _field(s, at_tokens, "n_tokens"), dumps)
            _put(&out, b"}", 1)
            ends.data.as_longlongs[i] = out.size
        data = PyBytes_FromStringAndSize(out.data, out.size)
    finally:
        free(out.data)
    return data, ends
