# cython: language_level=3, boundscheck=False, cdivision=True
"""`parse._walk` over lexbor's C tree: the same rules, without a Python object per DOM node.

selectolax hands out one Python ``LexborNode`` per node visited; on a typical page that is most
of the cost of cutting blocks. This walk reads lexbor's node structs directly (fields only: the
selectolax extension does not export lexbor's functions to other modules) and makes Python
objects only for what a block keeps: text nodes are decoded from lexbor's UTF-8 straight into
the block's collapsed text (no string per node), the open elements and a block's tag path are C
arrays of tag ids, and the blocks are made by writing their slots (`sentences.make_records`).
`parse._walk` stays the reference: tests check that both give the same blocks.

Python twins (what each function must equal; DEVELOPERS.md names the tests):
`walk_blocks`: `parse._walk`; `count_char`: ``str.count``; `max_tag_depth`: `parse._nest`
(`parse.max_tag_depth`); `attribute_work`, `markup_work`: the Python paths of
`parse.attribute_work`, `parse.markup_work`.
"""

from cpython.mem cimport PyMem_Calloc, PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.ref cimport Py_INCREF, Py_XDECREF, PyObject
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport memchr, memcmp, memcpy
from libc.stdint cimport uint32_t, uint64_t, uintptr_t
from selectolax.lexbor cimport (
    LXB_DOM_NODE_TYPE_ELEMENT,
    LXB_DOM_NODE_TYPE_TEXT,
    LexborHTMLParser,
    lexbor_str_t,
    lxb_char_t,
    lxb_dom_character_data_t,
    lxb_dom_node_t,
)

import time


cdef extern from "tag_names.h":
    const lxb_char_t *sc_tag_name(uintptr_t tag_id, size_t *length)
    bint sc_attr_is(uintptr_t attr_id, const char *name, size_t length) nogil


# lexbor's element and attribute structs, for the fields the walk reads (selectolax declares
# them without fields)
cdef extern from "lexbor/dom/interfaces/element.h":
    ctypedef struct _LexborString "lexbor_str_t":
        lxb_char_t *data
        size_t length

    ctypedef struct _Attr "lxb_dom_attr_t":
        lxb_dom_node_t node
        _LexborString *value
        _Attr *next

    ctypedef struct _Element "lxb_dom_element_t":
        _Attr *first_attr

    enum: LXB_DOM_ATTR_STYLE
    enum: LXB_DOM_ATTR_CLASS
    enum: LXB_DOM_ATTR_ID
    enum: LXB_DOM_ATTR__LAST_ENTRY


cdef inline bint _ascii_space(lxb_char_t c) noexcept nogil:
    return c == 32 or 9 <= c <= 13


cdef bint _declares(const lxb_char_t *s, size_t n, size_t at, const char *name, const char *value) noexcept nogil:
    """Whether ``s[at:]`` is ``name``, white space, ``:``, white space, ``value`` (ASCII, any
    case): `parse._HIDDEN_STYLE` at one place."""
    cdef size_t i = 0
    while name[i]:
        if at >= n or (s[at] | 32) != <lxb_char_t> name[i]:
            return False
        at += 1
        i += 1
    while at < n and _ascii_space(s[at]):
        at += 1
    if at >= n or s[at] != 58:  # ':'
        return False
    at += 1
    while at < n and _ascii_space(s[at]):
        at += 1
    i = 0
    while value[i]:
        if at >= n or (s[at] | 32) != <lxb_char_t> value[i]:
            return False
        at += 1
        i += 1
    return True


cdef bint _until_found(_LexborString *value) noexcept nogil:
    """Whether a ``hidden`` attribute's value is ``until-found`` (ASCII, any case)."""
    return value != NULL and value.length == 11 and _ascii_is(value.data, "until-found", 11)


cdef bint _react_segment_id(_LexborString *value) noexcept nogil:
    """Whether an ``id`` is a segment's of React's streaming server rendering: ``S:`` and
    lower-case hex digits (`parse._REACT_SEGMENT_ID`)."""
    cdef size_t i
    if value == NULL or value.length < 3 or value.data[0] != 83 or value.data[1] != 58:  # 'S:'
        return False
    for i in range(2, value.length):
        if not (48 <= value.data[i] <= 57 or 97 <= value.data[i] <= 102):  # 0-9, a-f
            return False
    return True


cdef inline bint _ascii_is(const lxb_char_t *s, const char *word, size_t n) noexcept nogil:
    """Whether ``s[:n]`` is ``word`` (lower-case ASCII letters and ``-``), in any case."""
    cdef size_t i
    for i in range(n):
        if (s[i] | 32) != <lxb_char_t> word[i]:  # '-' | 32 is '-'
            return False
    return True


cdef bint _strip(_LexborString *value, size_t *start, size_t *end) noexcept nogil:
    """A value's bounds without the HTML white space around it; False for no value."""
    if value == NULL:
        return False
    start[0], end[0] = 0, value.length
    while start[0] < end[0] and _html_space(value.data[start[0]]):
        start[0] += 1
    while end[0] > start[0] and _html_space(value.data[end[0] - 1]):
        end[0] -= 1
    return True


cdef bint _dialog_role(_LexborString *value) noexcept nogil:
    """Whether a ``role``'s first token is ``dialog`` or ``alertdialog`` (ASCII, any case):
    `parse._DIALOG_ROLE`."""
    cdef size_t at, end
    if not _strip(value, &at, &end):
        return False
    if end - at >= 11 and _ascii_is(value.data + at, "alert", 5):
        at += 5
    if end - at < 6 or not _ascii_is(value.data + at, "dialog", 6):
        return False
    return at + 6 == end or _html_space(value.data[at + 6])


cdef bint _is_true(_LexborString *value) noexcept nogil:
    """Whether an attribute's value is ``true`` between HTML white space (ASCII, any case)."""
    cdef size_t start, end
    return (
        _strip(value, &start, &end) and end - start == 4
        and _ascii_is(value.data + start, "true", 4)
    )


cdef enum:
    _HIDDEN = 1  # `parse.hidden_element`
    _ARIA_DIALOG = 2  # `parse.aria_dialog`


cdef int _visibility(lxb_dom_node_t *node, bint aria) noexcept nogil:
    """`_HIDDEN` if a browser would show none of an element (`parse.hidden_element`): its
    inline style hides it, it has the ``hidden`` attribute (unless it is a React segment), or
    it is a ``dialog`` that is not open. Else, with ``aria``, `_ARIA_DIALOG` if it is a modal
    dialog by its ARIA attributes (`parse.aria_dialog`); else 0. One pass over its
    attributes."""
    cdef _Attr *attr = (<_Element *> node).first_attr
    cdef const lxb_char_t *s
    cdef size_t n, at
    cdef bint dialog = node.local_name == LXB_TAG_DIALOG
    cdef bint is_open = False
    cdef bint hidden = False
    cdef bint segment = False
    cdef bint aria_dialog = False
    while attr != NULL:
        if attr.node.local_name == LXB_DOM_ATTR_STYLE:
            if attr.value != NULL:
                s = attr.value.data
                n = attr.value.length
                for at in range(n):
                    if (s[at] | 32) == 100 and _declares(s, n, at, "display", "none"):  # 'd'
                        return _HIDDEN
                    if (s[at] | 32) == 118 and _declares(s, n, at, "visibility", "hidden"):
                        return _HIDDEN
        elif attr.node.local_name == LXB_DOM_ATTR_ID:
            segment = _react_segment_id(attr.value)
        elif attr.node.local_name > LXB_DOM_ATTR__LAST_ENTRY:
            if sc_attr_is(attr.node.local_name, "hidden", 6) and not _until_found(attr.value):
                hidden = True
            if dialog and sc_attr_is(attr.node.local_name, "open", 4):
                is_open = True
            if aria and not aria_dialog:
                if sc_attr_is(attr.node.local_name, "role", 4):
                    aria_dialog = _dialog_role(attr.value)
                elif sc_attr_is(attr.node.local_name, "aria-modal", 10):
                    aria_dialog = _is_true(attr.value)
        attr = attr.next
    if (hidden and not segment) or (dialog and not is_open):
        return _HIDDEN
    return _ARIA_DIALOG if aria_dialog else 0


cdef inline lxb_char_t _lower(lxb_char_t c) noexcept nogil:
    return c | 32 if 65 <= c <= 90 else c


cdef inline bint _alnum(lxb_char_t c) noexcept nogil:
    c = _lower(c)
    return (97 <= c <= 122) or (48 <= c <= 57)


cdef inline int _second(lxb_char_t c) noexcept nogil:
    """The bucket of a class word's second character (lower-cased): 0-25 for a letter, 26 for
    anything else or none."""
    return c - 97 if 97 <= c <= 122 else 26


cdef struct _Seen:
    uint64_t page  # the `_ClassWords.page` it was found on; 0: never used
    const lxb_char_t *value  # in that page's document
    size_t length
    uint32_t found


cdef enum:
    SEEN_SLOTS = 2048  # a power of 2; 64 KiB


cdef class _ClassWords:
    """`parse.CLASS_WORD_GROUPS` as C arrays, bucketed by their first two characters: `match`
    finds the groups of an attribute value as `parse.class_groups` does, trying at each
    position only the words that start with the two characters there (a modern page's class
    attributes run to hundreds of characters, and a bucket by first letter alone held up to
    ten words to try at each of them).

    `seen_match` remembers what `match` found for the values of one page (a modern page
    repeats its class attributes: two thirds of the 30 kB of class and id values of a 2026 page
    are ones it had already), in a table whose slots point into the page's document to compare
    the bytes: a slot is read only on the page (`page`, a number new for every walk) that wrote
    it, while that document lives."""

    cdef list keep  # the words' bytes, owning what `words` points into
    cdef const char **words
    cdef size_t *lengths
    cdef int *groups
    cdef int *rules  # 0 anywhere, 1 at the start of a word, 2 a whole word
    # words starting with letter i then character j (`_second`): bucket[27 * i + j] <= k <
    # bucket[27 * i + j + 1]
    cdef int bucket[27 * 27 + 1]
    cdef uint32_t any_bit
    cdef _Seen *seen
    cdef uint64_t page  # this walk's number (`new_page`)

    def __init__(self, tuple word_groups):
        entries = []
        for group, (_, words) in enumerate(word_groups):
            for entry in words:
                rule = {"^": 1, "=": 2}.get(entry[0], 0)
                word = (entry[1:] if rule else entry).encode("ascii")
                if not word or not (97 <= word[0] <= 122):
                    raise ValueError(f"a class word must start with a lower-case letter: {entry!r}")
                # a word of one letter goes in every bucket of its letter
                seconds = [_second(word[1])] if len(word) > 1 else range(27)
                for second in seconds:
                    entries.append((word, group, rule, 27 * (word[0] - 97) + second))
        entries.sort(key=lambda e: e[3])
        n = len(entries)
        self.keep = [e[0] for e in entries]
        self.words = <const char **> PyMem_Malloc(max(n, 1) * sizeof(char *))
        self.lengths = <size_t *> PyMem_Malloc(max(n, 1) * sizeof(size_t))
        self.groups = <int *> PyMem_Malloc(max(n, 1) * sizeof(int))
        self.rules = <int *> PyMem_Malloc(max(n, 1) * sizeof(int))
        if not (self.words and self.lengths and self.groups and self.rules):
            raise MemoryError()
        for k in range(n):
            self.words[k] = <const char *> (<bytes> self.keep[k])
            self.lengths[k] = len(<bytes> self.keep[k])
            self.groups[k] = entries[k][1]
            self.rules[k] = entries[k][2]
        k = 0
        for i in range(27 * 27 + 1):
            while k < n and entries[k][3] < i:
                k += 1
            self.bucket[i] = k
        self.any_bit = 1u << len(word_groups)
        self.seen = <_Seen *> PyMem_Calloc(SEEN_SLOTS, sizeof(_Seen))
        if self.seen == NULL:
            raise MemoryError()

    def __cinit__(self):
        self.words = NULL
        self.lengths = NULL
        self.groups = NULL
        self.rules = NULL
        self.seen = NULL
        self.page = 0

    def __dealloc__(self):
        PyMem_Free(<void *> self.words)
        PyMem_Free(self.lengths)
        PyMem_Free(self.groups)
        PyMem_Free(self.rules)
        PyMem_Free(self.seen)

    cdef void new_page(self) noexcept:
        """A walk of another document begins (with the GIL held, so that two walks at once,
        in two threads, never share a number): the values remembered so far no longer count."""
        self.page += 1

    cdef uint32_t seen_match(self, const lxb_char_t *s, size_t n) noexcept nogil:
        """`match`, remembered for the page's later values of the same bytes."""
        # the slot from the length and three words of the value, at its start, middle and end
        # (a hash of every byte cost as much as matching it): values that share a slot only
        # take turns in it, and memcmp tells them apart
        cdef uint64_t h = n * 0x9E3779B97F4A7C15u, word = 0
        memcpy(&word, s, n if n < 8 else 8)
        h = (h ^ word) * 0xFF51AFD7ED558CCDu
        if n > 8:
            memcpy(&word, s + n - 8, 8)
            h = (h ^ word) * 0xC4CEB9FE1A85EC53u
        if n > 16:
            memcpy(&word, s + n // 2 - 4, 8)
            h = (h ^ word) * 0xFF51AFD7ED558CCDu
        cdef _Seen *slot = &self.seen[(h ^ (h >> 29) ^ (h >> 47)) & (SEEN_SLOTS - 1)]
        if slot.page == self.page and slot.length == n and memcmp(slot.value, s, n) == 0:
            return slot.found
        slot.found = self.match(s, n)
        slot.page, slot.value, slot.length = self.page, s, n
        return slot.found

    cdef uint32_t match(self, const lxb_char_t *s, size_t n) noexcept nogil:
        cdef uint32_t found = 0
        cdef size_t i, j, length
        cdef int k, b
        cdef lxb_char_t c
        cdef const char *word
        for i in range(n):
            c = _lower(s[i])
            if c < 97 or c > 122:
                continue
            b = 27 * (c - 97) + (_second(_lower(s[i + 1])) if i + 1 < n else 26)
            for k in range(self.bucket[b], self.bucket[b + 1]):
                length = self.lengths[k]
                if i + length > n or found >> self.groups[k] & 1:
                    continue
                word = self.words[k]
                j = 1  # the bucket lumps every second character that is not a letter
                while j < length and _lower(s[i + j]) == <lxb_char_t> word[j]:
                    j += 1
                if j < length:
                    continue
                if self.rules[k] and i > 0 and _alnum(s[i - 1]):
                    continue
                if self.rules[k] == 2 and i + length < n and _alnum(s[i + length]):
                    continue
                found |= 1u << self.groups[k]
        return found

    cdef uint32_t element(self, lxb_dom_node_t *node) noexcept nogil:
        """`parse.element_class_groups` of an element."""
        cdef _Attr *attr = (<_Element *> node).first_attr
        cdef uint32_t found = 0
        if node.local_name == LXB_TAG_HTML or node.local_name == LXB_TAG_BODY:
            return 0
        while attr != NULL:
            if ((attr.node.local_name == LXB_DOM_ATTR_CLASS
                 or attr.node.local_name == LXB_DOM_ATTR_ID)
                    and attr.value != NULL and attr.value.length):
                found |= self.seen_match(attr.value.data, attr.value.length) | self.any_bit
            attr = attr.next
        return found


_CLASS_WORDS = {}


cdef _ClassWords _class_words(tuple word_groups):
    found = _CLASS_WORDS.get(word_groups)
    if found is None:
        if len(_CLASS_WORDS) >= 16:
            _CLASS_WORDS.clear()
        found = _CLASS_WORDS[word_groups] = _ClassWords(word_groups)
    return <_ClassWords> found


cdef uint64_t _class_code(const uint32_t *groups, Py_ssize_t depth) noexcept nogil:
    """`parse._class_words` of a tag path's element groups."""
    cdef uint64_t code = 0
    cdef uint32_t seen = 0, new
    cdef Py_ssize_t i
    cdef uint64_t levels
    cdef int group
    for i in range(depth - 1, -1, -1):
        new = groups[i] & ~seen
        if new:
            levels = depth - i if depth - i < 15 else 15
            seen |= new
            group = 0
            while new:
                if new & 1:
                    code |= levels << (4 * group)
                new >>= 1
                group += 1
    return code


cdef enum:
    IS_SKIP = 1
    IS_BLOCK = 2
    IS_LINK = 4


cdef enum:
    _CLASS_COMMENT = 0  # parse.CLASS_COMMENT: the bit of the group `Block.comment_marks` counts


cdef extern from "lexbor/tag/const.h":
    enum: LXB_TAG__LAST_ENTRY
    enum: LXB_TAG_DIALOG
    enum: LXB_TAG_HTML
    enum: LXB_TAG_BODY
    enum: LXB_TAG_NOSCRIPT


cdef class _Standard:
    """The names and kind bits of every standard tag id (lexbor's ids below
    ``LXB_TAG__LAST_ENTRY`` are the same in every document), and the features of the tag paths
    made of them, for one set of the walk's tag sets: made once, read by every page's walk."""

    cdef PyObject *names[LXB_TAG__LAST_ENTRY]  # owned references
    cdef int kinds[LXB_TAG__LAST_ENTRY]
    cdef frozenset block_tags
    cdef frozenset skip_tags
    cdef dict paths  # a path's tag ids (bytes) -> `_Walk.flush`'s path features

    def __cinit__(self):
        cdef Py_ssize_t i
        for i in range(LXB_TAG__LAST_ENTRY):
            self.names[i] = NULL

    def __init__(self, frozenset block_tags, frozenset skip_tags):
        cdef Py_ssize_t i
        self.block_tags = block_tags
        self.skip_tags = skip_tags
        self.paths = {}
        for i in range(LXB_TAG__LAST_ENTRY):
            name = _tag_name(i)
            Py_INCREF(name)
            self.names[i] = <PyObject *> name
            self.kinds[i] = _kind_of(name, block_tags, skip_tags)

    def __dealloc__(self):
        cdef Py_ssize_t i
        for i in range(LXB_TAG__LAST_ENTRY):
            Py_XDECREF(self.names[i])


cdef int _kind_of(str name, frozenset block_tags, frozenset skip_tags):
    cdef int kind = 0
    if name in skip_tags or not name or name[0] in "_!#-":
        kind |= IS_SKIP
    if name in block_tags:
        kind |= IS_BLOCK
    if name == "a":
        kind |= IS_LINK
    return kind


cdef str _tag_name(uintptr_t tag_id):
    cdef size_t length = 0
    cdef const lxb_char_t *data = sc_tag_name(tag_id, &length)
    return PyUnicode_DecodeUTF8(<const char *> data, length, "replace") if data else ""


# `_Standard` by the tag sets it was made for (a process has one or two)
_STANDARDS = {}
_PATHS_MAX = 50_000  # tag paths remembered across pages, per `_Standard`


cdef _Standard _standard(frozenset block_tags, frozenset skip_tags, tuple path_sets):
    key = (block_tags, skip_tags, path_sets)
    standard = _STANDARDS.get(key)
    if standard is None:
        if len(_STANDARDS) >= 16:
            _STANDARDS.clear()
        standard = _STANDARDS[key] = _Standard(block_tags, skip_tags)
    return <_Standard> standard


cdef class _TagTable:
    """Tag id -> (name, kind bits): standard tags from a shared `_Standard`, the page's custom
    ones (ids that are addresses in its document) in a dict of its own."""

    cdef _Standard standard
    cdef dict custom

    def __init__(self, _Standard standard):
        self.standard = standard
        self.custom = {}

    cdef inline int kind(self, uintptr_t tag_id):
        """The kind bits of ``tag_id``, learning a custom tag's name on first sight."""
        if tag_id < LXB_TAG__LAST_ENTRY:
            return self.standard.kinds[tag_id]
        entry = self.custom.get(tag_id)
        if entry is None:
            name = _tag_name(tag_id)
            entry = self.custom[tag_id] = (
                name, _kind_of(name, self.standard.block_tags, self.standard.skip_tags)
            )
        return <int> entry[1]

    cdef inline str name(self, uintptr_t tag_id):
        """The name of a tag id already seen by `kind`."""
        if tag_id < LXB_TAG__LAST_ENTRY:
            return <str> self.standard.names[tag_id]
        return <str> self.custom[tag_id][0]

    cdef inline PyObject *name_ref(self, uintptr_t tag_id):
        """`name`, borrowed: the table holds it as long as it lives."""
        if tag_id < LXB_TAG__LAST_ENTRY:
            return self.standard.names[tag_id]
        return <PyObject *> (<tuple> self.custom[tag_id])[0]


cdef inline bint _ascii_blank(const lxb_char_t *data, size_t length):
    """Whether bytes are all ASCII white space (most text nodes between tags are)."""
    cdef size_t i
    cdef lxb_char_t c
    for i in range(length):
        c = data[i]
        if c != 32 and c != 10 and c != 9 and c != 13 and c != 12:
            return False
    return True


include "unicode_text.pxi"


cdef inline bint _is_space(Py_UCS4 c) noexcept nogil:
    """White space as ``str.split`` and ``str.isspace`` see it."""
    return (c == 32 or 9 <= c <= 13 or 28 <= c <= 31) if c < 128 else Py_UNICODE_ISSPACE(c)


# A block's text as it is collapsed: its words, one space between them (UCS-4).
cdef struct _Words:
    Py_UCS4 *out
    Py_ssize_t at  # characters written
    Py_ssize_t capacity
    bint in_word  # the last character seen was not white space


cdef inline void _add(_Words *words, Py_UCS4 c) noexcept nogil:
    """One character of a text node: white space ends the word, a word's first character gets
    one space before it (but the block's first word), invisible characters that only mark
    where a line may break (`parse.INVISIBLE`) are dropped, the others are copied."""
    if _is_space(c):
        words.in_word = False
        return
    if c == 0xAD or c == 0x200B or c == 0x2060 or c == 0xFEFF:
        return
    if not words.in_word:
        if words.at:
            words.out[words.at] = 32
            words.at += 1
        words.in_word = True
    words.out[words.at] = c
    words.at += 1


cdef inline void _add_words(_Words *words, const _char *data, Py_ssize_t length) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(length):
        _add(words, data[i])


cdef Py_ssize_t _add_utf8(_Words *words, const lxb_char_t *data, size_t length,
                          bint *has_text) noexcept nogil:
    """Decode a text node's UTF-8 into ``words``; return its length in characters, or -1
    when it is not well-formed UTF-8 as Python's decoder sees it (``words`` is then as it was,
    and the caller decodes the node with Python's ``replace`` handler)."""
    cdef Py_ssize_t at = words.at, n = 0
    cdef bint in_word = words.in_word
    cdef size_t i = 0
    cdef Py_UCS4 c
    cdef lxb_char_t b0, b1, b2, b3
    has_text[0] = False
    while i < length:
        b0 = data[i]
        if b0 < 0x80:
            c = b0
            i += 1
        elif 0xC2 <= b0 <= 0xDF:
            if i + 1 >= length or (data[i + 1] & 0xC0) != 0x80:
                break
            c = ((b0 & 0x1F) << 6) | (data[i + 1] & 0x3F)
            i += 2
        elif 0xE0 <= b0 <= 0xEF:
            if i + 2 >= length:
                break
            b1 = data[i + 1]
            b2 = data[i + 2]
            if (b1 & 0xC0) != 0x80 or (b2 & 0xC0) != 0x80:
                break
            if (b0 == 0xE0 and b1 < 0xA0) or (b0 == 0xED and b1 >= 0xA0):
                break  # overlong, or a surrogate
            c = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
            i += 3
        elif 0xF0 <= b0 <= 0xF4:
            if i + 3 >= length:
                break
            b1 = data[i + 1]
            b2 = data[i + 2]
            b3 = data[i + 3]
            if (b1 & 0xC0) != 0x80 or (b2 & 0xC0) != 0x80 or (b3 & 0xC0) != 0x80:
                break
            if (b0 == 0xF0 and b1 < 0x90) or (b0 == 0xF4 and b1 >= 0x90):
                break  # overlong, or past U+10FFFF
            c = ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
            i += 4
        else:
            break
        n += 1
        if not has_text[0] and not _is_space(c):
            has_text[0] = True
        _add(words, c)
    if i < length:  # malformed: undo
        words.at = at
        words.in_word = in_word
        has_text[0] = False
        return -1
    return n


cdef class _Walk:
    """The state of one walk: the open elements, the block being gathered, the blocks made."""

    cdef _TagTable tags
    cdef lxb_dom_node_t **open_nodes
    cdef uintptr_t *open_ids
    cdef int *open_kinds
    cdef PyObject **block_stack  # names of the open block elements, borrowed from `tags`
    cdef uintptr_t *path  # the open elements' ids at the block's first text node
    cdef uint32_t *open_groups  # the open elements' class word groups (`_ClassWords.element`)
    cdef uint32_t *path_groups  # and those at the block's first text node
    cdef Py_ssize_t n_open, n_block_stack, capacity
    cdef _Words words
    cdef bint has_text  # the block has a text node that is not all white space
    cdef Py_ssize_t n_chars, link_chars, lca
    cdef Py_ssize_t comment_marks  # elements opened so far naming `parse.CLASS_COMMENT`
    cdef object block_tag
    cdef dict path_info
    cdef tuple heading_tags, list_tags, table_tags, form_tags  # frozensets, in a tuple
    cdef list columns  # the Block fields, one list each
    cdef list dialogs  # receives the blocks in ARIA dialogs (`parse._walk`'s), or None
    cdef Py_ssize_t dialog  # the outermost open ARIA dialog's place in open_nodes, or -1

    def __cinit__(self):
        self.open_nodes = NULL
        self.open_ids = NULL
        self.open_kinds = NULL
        self.block_stack = NULL
        self.path = NULL
        self.open_groups = NULL
        self.path_groups = NULL
        self.words.out = NULL
        self.words.capacity = 0

    def __dealloc__(self):
        PyMem_Free(self.open_nodes)
        PyMem_Free(self.open_ids)
        PyMem_Free(self.open_kinds)
        PyMem_Free(self.block_stack)
        PyMem_Free(self.path)
        PyMem_Free(self.open_groups)
        PyMem_Free(self.path_groups)
        PyMem_Free(self.words.out)

    cdef int grow(self) except -1:
        """Double the room for open elements."""
        cdef Py_ssize_t capacity = self.capacity * 2 if self.capacity else 64
        cdef void *p
        p = PyMem_Realloc(self.open_nodes, capacity * sizeof(lxb_dom_node_t *))
        if p == NULL:
            raise MemoryError()
        self.open_nodes = <lxb_dom_node_t **> p
        p = PyMem_Realloc(self.open_ids, capacity * sizeof(uintptr_t))
        if p == NULL:
            raise MemoryError()
        self.open_ids = <uintptr_t *> p
        p = PyMem_Realloc(self.open_kinds, capacity * sizeof(int))
        if p == NULL:
            raise MemoryError()
        self.open_kinds = <int *> p
        p = PyMem_Realloc(self.block_stack, (capacity + 1) * sizeof(PyObject *))
        if p == NULL:
            raise MemoryError()
        self.block_stack = <PyObject **> p
        p = PyMem_Realloc(self.path, capacity * sizeof(uintptr_t))
        if p == NULL:
            raise MemoryError()
        self.path = <uintptr_t *> p
        p = PyMem_Realloc(self.open_groups, capacity * sizeof(uint32_t))
        if p == NULL:
            raise MemoryError()
        self.open_groups = <uint32_t *> p
        p = PyMem_Realloc(self.path_groups, capacity * sizeof(uint32_t))
        if p == NULL:
            raise MemoryError()
        self.path_groups = <uint32_t *> p
        self.capacity = capacity
        return 0

    cdef int reserve_text(self, size_t length) except -1:
        """Room for ``length`` more characters and a space in the block's text."""
        cdef Py_ssize_t need = self.words.at + <Py_ssize_t> length + 1
        cdef Py_ssize_t capacity
        cdef void *p
        if need > self.words.capacity:
            capacity = max(need, 2 * self.words.capacity, 1024)
            p = PyMem_Realloc(self.words.out, capacity * sizeof(Py_UCS4))
            if p == NULL:
                raise MemoryError()
            self.words.out = <Py_UCS4 *> p
            self.words.capacity = capacity
        return 0

    cdef int add_decoded(self, str data) except -1:
        """A text node Python decoded (malformed UTF-8): its words, as `_add_utf8` adds."""
        cdef int kind = PyUnicode_KIND(data)
        cdef Py_ssize_t length = len(data)
        self.reserve_text(length)
        if kind == 1:
            _add_words(&self.words, <const Py_UCS1 *> PyUnicode_DATA(data), length)
        elif kind == 2:
            _add_words(&self.words, <const Py_UCS2 *> PyUnicode_DATA(data), length)
        else:
            _add_words(&self.words, <const Py_UCS4 *> PyUnicode_DATA(data), length)
        return 0

    cdef int flush(self) except -1:
        """End the block being gathered: its text, path and densities become a row."""
        cdef Py_ssize_t i, lca = self.lca
        cdef str text = <str> PyUnicode_FromKindAndData(4, self.words.out, self.words.at)
        if self.words.capacity > 1 << 20:  # a huge block: give its buffer back
            PyMem_Free(self.words.out)
            self.words.out = NULL
            self.words.capacity = 0
        if text:
            key = PyBytes_FromStringAndSize(<const char *> self.path, lca * sizeof(uintptr_t))
            # a path of standard tags means the same on every page: remembered across pages
            paths = self.path_info
            for i in range(lca):
                if self.path[i] >= LXB_TAG__LAST_ENTRY:
                    break
            else:
                paths = self.tags.standard.paths
                if len(paths) > _PATHS_MAX:
                    paths.clear()
            info = paths.get(key)
            if info is None:
                names = tuple([self.tags.name(self.path[i]) for i in range(lca)])
                info = paths[key] = (
                    " ".join(names),
                    len(names),
                    "a" in names,
                    not (<frozenset> self.heading_tags[0]).isdisjoint(names),
                    not (<frozenset> self.list_tags[0]).isdisjoint(names),
                    not (<frozenset> self.table_tags[0]).isdisjoint(names),
                    not (<frozenset> self.form_tags[0]).isdisjoint(names),
                )
            columns = self.columns
            (<list> columns[0]).append(len(<list> columns[0]))
            (<list> columns[1]).append(text)
            (<list> columns[2]).append(self.block_tag)
            for i in range(2):
                (<list> columns[3 + i]).append((<tuple> info)[i])
            (<list> columns[5]).append(
                <double> self.link_chars / self.n_chars if self.n_chars else 0.0
            )
            for i in range(2, 7):
                (<list> columns[4 + i]).append((<tuple> info)[i])
            (<list> columns[11]).append(_class_code(self.path_groups, lca))
            (<list> columns[12]).append(self.comment_marks)
            if 0 <= self.dialog < lca and self.dialogs is not None:
                self.dialogs.append(len(<list> columns[0]) - 1)
        self.words.at = 0
        self.words.in_word = False
        self.has_text = False
        self.n_chars = self.link_chars = 0
        self.lca = -1
        return 0


def walk_blocks(LexborHTMLParser parser, block, block_tags, skip_tags, heading_tags, list_tags,
                table_tags, form_tags, deadline, timeout_error, class_word_groups,
                Py_ssize_t max_blocks=0, too_many_error=None, list noscript=None,
                list dialogs=None):
    """The blocks of a parsed page, exactly as `parse._walk` cuts them.

    The text nodes' UTF-8 is decoded and white-space collapsed straight into the block's text
    (`_add_utf8`), with no string per node; the tag path of a block is a key of the open
    elements' ids until a new path needs its names; the blocks are made at the end, by
    `sentences.make_records` when it is built.

    Args:
        parser: a selectolax parser holding the page.
        block: the `Block` class (positional fields as `parse._walk` passes them).
        block_tags, skip_tags, heading_tags, list_tags, table_tags, form_tags: the tag sets of
            `parse`.
        deadline: an instant of this thread's CPU time (``time.thread_time()``: see
            `budget`), or None.
        timeout_error: the exception class raised past the deadline.
        class_word_groups: `parse.CLASS_WORD_GROUPS`, or None to leave every block's
            ``class_words`` and ``comment_marks`` 0 without reading an attribute.
        max_blocks: past this many blocks (0: no limit), ``too_many_error(max_blocks)`` (an
            exception; `parse.too_many_blocks`) is raised.
        noscript: a list that receives the length (in characters) of the raw content of each
            skipped ``noscript`` the walk passes, as `parse._walk` counts it; or None.
        dialogs: a list that receives the index of each block in an ARIA dialog, as
            `parse._walk`'s ``dialogs``; or None.
    """
    cdef _Walk walk = _Walk()
    cdef tuple path_sets = (
        frozenset(heading_tags), frozenset(list_tags), frozenset(table_tags), frozenset(form_tags)
    )
    cdef _TagTable tags = _TagTable(
        _standard(frozenset(block_tags), frozenset(skip_tags), path_sets)
    )
    cdef _ClassWords class_words = (
        _class_words(class_word_groups) if class_word_groups is not None else None
    )
    if class_words is not None:
        class_words.new_page()
    cdef lxb_dom_node_t *root
    cdef lxb_dom_node_t *node
    cdef Py_ssize_t link_depth = 0, count = 0, low = 0, depth, n
    cdef int kind
    cdef uintptr_t tag_id
    cdef lexbor_str_t *chars
    cdef bint node_has_text, aria
    cdef int seen
    cdef str data

    walk.tags = tags
    walk.path_info = {}
    walk.heading_tags = (path_sets[0],)
    walk.list_tags = (path_sets[1],)
    walk.table_tags = (path_sets[2],)
    walk.form_tags = (path_sets[3],)
    walk.columns = [[] for _ in range(13)]
    walk.dialogs = dialogs
    walk.dialog = -1
    aria = dialogs is not None
    walk.lca = -1
    walk.comment_marks = 0
    walk.block_tag = ""
    if parser.document == NULL:
        return []
    root = <lxb_dom_node_t *> parser.document.dom_document.element
    if root == NULL:
        return []
    walk.grow()
    walk.open_nodes[0] = root
    walk.open_ids[0] = root.local_name
    walk.open_kinds[0] = tags.kind(root.local_name)
    walk.open_groups[0] = class_words.element(root) if class_words is not None else 0
    walk.n_open = 1
    walk.block_stack[0] = <PyObject *> _HTML
    walk.n_block_stack = 1
    thread_time = time.thread_time

    node = root.first_child
    while True:
        if node == NULL:  # the children of the last open element are done: close it
            kind = walk.open_kinds[walk.n_open - 1]
            if kind & IS_BLOCK:
                if walk.has_text:
                    walk.flush()
                walk.n_block_stack -= 1
            elif kind & IS_LINK:
                link_depth -= 1
            if walk.dialog == walk.n_open - 1:
                walk.dialog = -1
            if low > walk.n_open - 1:
                low = walk.n_open - 1
            walk.n_open -= 1
            node = walk.open_nodes[walk.n_open].next
            if walk.n_open == 0:
                break
            continue
        if node.type == LXB_DOM_NODE_TYPE_TEXT:
            chars = &(<lxb_dom_character_data_t *> node).data
            node_has_text = False
            if chars.data != NULL and chars.length and not _ascii_blank(chars.data, chars.length):
                walk.reserve_text(chars.length)
                n = _add_utf8(&walk.words, chars.data, chars.length, &node_has_text)
                if n < 0:
                    data = PyUnicode_DecodeUTF8(<const char *> chars.data, chars.length, "replace")
                    node_has_text = not data.isspace()
                    n = len(data)
                    if node_has_text:
                        walk.add_decoded(data)
            if node_has_text:
                walk.has_text = True
                walk.n_chars += n
                if link_depth:
                    walk.link_chars += n
                depth = walk.n_open
                if walk.lca < 0:
                    walk.lca = depth
                    memcpy(walk.path, walk.open_ids, depth * sizeof(uintptr_t))
                    memcpy(walk.path_groups, walk.open_groups, depth * sizeof(uint32_t))
                    walk.block_tag = <object> walk.block_stack[walk.n_block_stack - 1]
                elif low < walk.lca:
                    walk.lca = low
                low = depth
            else:
                walk.words.in_word = False  # white space between words
        elif node.type == LXB_DOM_NODE_TYPE_ELEMENT:
            tag_id = node.local_name
            kind = tags.kind(tag_id)
            seen = _HIDDEN if kind & IS_SKIP else _visibility(node, aria)
            if not seen & _HIDDEN:
                count += 1
                if not count & 1023:
                    if deadline is not None and thread_time() > deadline:
                        raise timeout_error("time budget exceeded while parsing")
                    if max_blocks and len(walk.columns[0]) > max_blocks:
                        raise too_many_error(max_blocks)
                if kind & IS_BLOCK:
                    if walk.has_text:
                        walk.flush()
                    walk.block_stack[walk.n_block_stack] = tags.name_ref(tag_id)
                    walk.n_block_stack += 1
                elif kind & IS_LINK:
                    link_depth += 1
                if walk.n_open == walk.capacity:
                    walk.grow()
                if seen & _ARIA_DIALOG and walk.dialog < 0:
                    walk.dialog = walk.n_open
                walk.open_nodes[walk.n_open] = node
                walk.open_ids[walk.n_open] = tag_id
                walk.open_kinds[walk.n_open] = kind
                walk.open_groups[walk.n_open] = (
                    class_words.element(node) if class_words is not None else 0
                )
                walk.comment_marks += walk.open_groups[walk.n_open] >> _CLASS_COMMENT & 1
                walk.n_open += 1
                node = node.first_child
                continue
            if noscript is not None and tag_id == LXB_TAG_NOSCRIPT:
                noscript.append(_text_chars(node.first_child))
        node = node.next
    if walk.has_text:
        walk.flush()
    if max_blocks and len(walk.columns[0]) > max_blocks:
        raise too_many_error(max_blocks)
    return _make_blocks(block, walk.columns)


cdef Py_ssize_t _text_chars(lxb_dom_node_t *node):
    """The characters of a text node's UTF-8 (0 for no node or another kind of node)."""
    cdef lexbor_str_t *chars
    cdef Py_ssize_t count = 0
    cdef size_t i
    if node == NULL or node.type != LXB_DOM_NODE_TYPE_TEXT:
        return 0
    chars = &(<lxb_dom_character_data_t *> node).data
    if chars.data == NULL:
        return 0
    for i in range(chars.length):
        count += (chars.data[i] & 0xC0) != 0x80
    return count


cdef str _HTML = "html"
_FIELDS = None


def _make_blocks(block, list columns):
    """``list(map(block, *columns))``; natively (`sentences.make_records`) for a dataclass
    when that module is built."""
    global _FIELDS
    if _FIELDS is None or _FIELDS[0] is not block:
        import dataclasses

        try:
            from stream_cleaner._native.sentences import make_records
        except ImportError:
            make_records = None
        if make_records is None or not isinstance(block, type) or not dataclasses.is_dataclass(block):
            _FIELDS = (block, None, None)
        else:
            _FIELDS = (block, tuple(f.name for f in dataclasses.fields(block)), make_records)
    if _FIELDS[1] is None:
        return list(map(block, *columns))
    return _FIELDS[2](block, _FIELDS[1], columns)


cdef extern from *:
    """
    #include <stdint.h>
    /* a loop the compiler vectorises: a count in 32 bits per run of 65,536 characters */
    #define SC_COUNT(NAME, T) \\
    __attribute__((optimize("O3"))) static Py_ssize_t NAME(const T *s, Py_ssize_t n, T c) { \\
        Py_ssize_t total = 0, i = 0; \\
        while (i < n) { \\
            Py_ssize_t end = n - i > 65536 ? i + 65536 : n; \\
            uint32_t part = 0; \\
            for (; i < end; i++) part += s[i] == c; \\
            total += part; \\
        } \\
        return total; \\
    }
    SC_COUNT(sc_count1, uint8_t)
    SC_COUNT(sc_count2, uint16_t)
    SC_COUNT(sc_count4, uint32_t)
    """
    Py_ssize_t sc_count1(const Py_UCS1 *s, Py_ssize_t n, Py_UCS1 c) nogil
    Py_ssize_t sc_count2(const Py_UCS2 *s, Py_ssize_t n, Py_UCS2 c) nogil
    Py_ssize_t sc_count4(const Py_UCS4 *s, Py_ssize_t n, Py_UCS4 c) nogil


def count_char(str text, str char):
    """``text.count(char)`` for one character, in a vectorised loop (`parse.limit_nesting`
    counts the ``<`` of every page)."""
    if len(char) != 1:
        raise ValueError("count_char counts one character")
    cdef Py_UCS4 c = char[0]
    cdef int kind = PyUnicode_KIND(text)
    cdef Py_ssize_t n = len(text)
    if kind == 1:
        return sc_count1(<const Py_UCS1 *> PyUnicode_DATA(text), n, <Py_UCS1> c) if c < 256 else 0
    if kind == 2:
        return sc_count2(<const Py_UCS2 *> PyUnicode_DATA(text), n, <Py_UCS2> c) if c < 65536 else 0
    return sc_count4(<const Py_UCS4 *> PyUnicode_DATA(text), n, c)


cdef inline Py_ssize_t _next_open(const _char *s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Where the next "<" at or after ``i`` is (``n`` if there is none), at memchr's speed in
    a page of Latin-1 or UTF-8."""
    cdef const void *found
    if _char is Py_UCS1:
        found = memchr(s + i, 60, n - i)
        return n if found == NULL else <const Py_UCS1 *> found - s
    while i < n and s[i] != u"<":
        i += 1
    return i


cdef inline bint _html_space(Py_UCS4 c) noexcept nogil:
    """White space as the HTML tokenizer sees it (tab, LF, FF, CR, space)."""
    return c == 32 or c == 9 or c == 10 or c == 12 or c == 13


cdef inline uint32_t _fold(uint32_t c) noexcept nogil:
    """An ASCII capital's small letter; any other character as it is."""
    return c + 32 if 65 <= c <= 90 else c


cdef bint _names(const _char *s, Py_ssize_t at, Py_ssize_t n, const char *name) noexcept nogil:
    """Whether ``s[at:]`` starts with ``name`` (lower case ASCII), in any case."""
    cdef Py_ssize_t k = 0
    while name[k] != 0:
        if at + k >= n or _fold(<uint32_t> s[at + k]) != <uint32_t> <unsigned char> name[k]:
            return False
        k += 1
    return True


cdef Py_ssize_t _raw_text_end(const _char *s, Py_ssize_t i, Py_ssize_t n,
                              const char *end_tag) noexcept nogil:
    """Where the raw text of a ``script`` or ``style`` element that starts at ``i`` ends: at
    its end tag (``end_tag``, "</script"), or at ``n``."""
    while True:
        i = _next_open(s, i, n)
        if i >= n or _names(s, i, n, end_tag):
            return i
        i += 1


# `parse._nest`'s model of how deep a browser nests a page's elements, counted natively: the
# same tokens, the same closing rules, the same bits (parse._NEST_*).
cdef enum:
    _NEST_SPECIAL = 1 << 0
    _NEST_SCOPE = 1 << 1
    _NEST_BUTTON = 1 << 2
    _NEST_TABLE_CONTEXT = 1 << 3
    _NEST_P = 1 << 4
    _NEST_LI = 1 << 5
    _NEST_DD_DT = 1 << 6
    _NEST_CELL = 1 << 7
    _NEST_ROW = 1 << 8
    _NEST_SECTION = 1 << 9
    _NEST_CAPTION = 1 << 10
    _NEST_TABLE = 1 << 11
    _NEST_HEADING = 1 << 12
    _NEST_OPTION = 1 << 13
    _NEST_OPTGROUP = 1 << 14
    _NEST_CLOSES_P = 1 << 15
    _NEST_LIST_BARRIER = 1 << 16
    _NEST_FOREIGN = 1 << 17
    _NEST_INTEGRATION = 1 << 18
    _NEST_VOID = 1 << 19
    _NEST_RAW = 1 << 20
    _NEST_NOSCRIPT = 1 << 21
    _NEST_ROOT = 1 << 22


cdef enum:
    _KIND_SLOTS = 512  # a power of two, well above the ~110 names of `parse._NESTING_KINDS`


cdef class _NestingKinds:
    """`parse._NESTING_KINDS` as an open-addressing table, keyed by a name packed into two
    64-bit words (lower-case ASCII, up to 16 characters; the longest name is 14)."""

    cdef uint64_t keys[_KIND_SLOTS][2]  # keys[slot][0] == 0: an empty slot
    cdef uint32_t kinds[_KIND_SLOTS]
    cdef object source  # the dict it was made from

    def __init__(self, dict kinds):
        cdef uint64_t key[2]
        cdef bytes data
        cdef Py_ssize_t k, slot
        self.source = kinds
        for name, bits in kinds.items():
            data = name.encode("ascii")
            if not 0 < len(data) <= 16:
                raise ValueError(f"nesting kind names have 1 to 16 characters: {name!r}")
            key[0] = key[1] = 0
            for k in range(len(data)):
                key[k >> 3] |= (<uint64_t> data[k]) << (8 * (k & 7))
            slot = _kind_slot(key[0], key[1])
            while self.keys[slot][0] != 0:
                slot = (slot + 1) & (_KIND_SLOTS - 1)
            self.keys[slot][0] = key[0]
            self.keys[slot][1] = key[1]
            self.kinds[slot] = bits

    cdef inline uint32_t lookup(self, uint64_t a, uint64_t b) noexcept nogil:
        cdef Py_ssize_t slot = _kind_slot(a, b)
        while self.keys[slot][0] != 0:
            if self.keys[slot][0] == a and self.keys[slot][1] == b:
                return self.kinds[slot]
            slot = (slot + 1) & (_KIND_SLOTS - 1)
        return 0


cdef inline Py_ssize_t _kind_slot(uint64_t a, uint64_t b) noexcept nogil:
    return <Py_ssize_t> (((a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL)) >> 55)


cdef uint32_t _nest_kind(_NestingKinds table, const _char *s, Py_ssize_t at,
                       Py_ssize_t length) noexcept nogil:
    """The bits of the name ``s[at:at + length]`` in ``table``, in any ASCII case (0 for a
    name it does not hold)."""
    cdef uint64_t key[2]
    cdef Py_ssize_t k
    cdef uint32_t c
    if length > 16:
        return 0
    key[0] = key[1] = 0
    for k in range(length):
        c = _fold(<uint32_t> s[at + k])
        if c == 0 or c >= 128:
            return 0
        key[k >> 3] |= (<uint64_t> c) << (8 * (k & 7))
    return table.lookup(key[0], key[1])


cdef struct _Open:
    Py_ssize_t at  # the element's name: the characters at..at + length of the page
    Py_ssize_t length
    uint32_t kind
    bint foreign  # whether its children are svg or math elements


cdef inline bint _same_name(const _char *s, Py_ssize_t a, Py_ssize_t b,
                            Py_ssize_t length) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(length):
        if _fold(<uint32_t> s[a + k]) != _fold(<uint32_t> s[b + k]):
            return False
    return True


cdef inline bint _is_name(const _char *s, Py_ssize_t at, Py_ssize_t length,
                          const char *name, Py_ssize_t name_length) noexcept nogil:
    return length == name_length and _names(s, at, at + length, name)


cdef inline Py_ssize_t _find_open(const _Open *open_, Py_ssize_t size, Py_ssize_t window,
                                  uint32_t target, uint32_t barrier) noexcept nogil:
    """`parse._nest`'s ``find``: the innermost open element with a ``target`` bit, found
    before one with a ``barrier`` bit and within ``window``, or -1."""
    cdef Py_ssize_t k = size - 1, stop = size - window if size > window else 0
    while k >= stop:
        if open_[k].kind & target:
            return k
        if open_[k].kind & barrier:
            return -1
        k -= 1
    return -1


cdef inline Py_ssize_t _find_char(const _char *s, Py_ssize_t i, Py_ssize_t n,
                                  Py_UCS4 c) noexcept nogil:
    while i < n and s[i] != c:
        i += 1
    return i


cdef Py_ssize_t _raw_end(const _char *s, Py_ssize_t i, Py_ssize_t n, Py_ssize_t name_at,
                         Py_ssize_t length) noexcept nogil:
    """Where the raw text that starts at ``i`` ends: at "</" and its element's name (at
    ``name_at``) in any ASCII case, then white space, "/" or ">"; else ``n``."""
    cdef Py_UCS4 c
    while True:
        i = _next_open(s, i, n)
        if i >= n:
            return n
        if i + 2 + length < n and s[i + 1] == u"/" and _same_name(s, i + 2, name_at, length):
            c = s[i + 2 + length]
            if _html_space(c) or c == u"/" or c == u">":
                return i
        i += 1


cdef inline bint _ascii_letter(Py_UCS4 c) noexcept nogil:
    return (u"a" <= c <= u"z") or (u"A" <= c <= u"Z")


cdef Py_ssize_t _nest_depth(const _char *s, Py_ssize_t n, _NestingKinds table,
                            Py_ssize_t window, bint scripting) except -1:
    """`parse._nest` without ``max_depth``: the deepest the model's stack grows."""
    cdef _Open *open_ = NULL
    cdef _Open *grown
    cdef Py_ssize_t size = 0, capacity = 0, deepest = 0, i = 0, name_at, name_end, end, k
    cdef uint32_t bits, barrier, raw = _NEST_RAW | (_NEST_NOSCRIPT if scripting else 0)
    cdef bint closing, self_closing, child_foreign
    cdef int root, roots = 0
    cdef Py_UCS4 c
    try:
        while True:
            i = _next_open(s, i, n)
            if i >= n:
                break
            c = s[i + 1] if i + 1 < n else 0
            if c == u"!" or c == u"?" or (c == u"/" and not (i + 2 < n and _ascii_letter(s[i + 2]))):
                if c == u"!" and i + 3 < n and s[i + 2] == u"-" and s[i + 3] == u"-":
                    k = i + 2  # a comment, to its "-->"
                    while k + 2 < n and not (s[k] == u"-" and s[k + 1] == u"-" and s[k + 2] == u">"):
                        k += 1
                    i = n if k + 2 >= n else k + 3
                else:
                    k = _find_char(s, i + 2, n, 62)  # ">"
                    i = n if k >= n else k + 1
                continue
            if c == u"/":
                closing = True
                name_at = i + 2
            elif _ascii_letter(c):
                closing = False
                name_at = i + 1
            else:
                i += 1
                continue
            name_end = name_at
            while name_end < n:
                c = s[name_end]
                if _html_space(c) or c == u"/" or c == u">":
                    break
                name_end += 1
            end = name_end  # the tag's ">", a quote opening a value after "=" only
            while end < n:
                c = s[end]
                if c == u">":
                    break
                end += 1
                if c == u"=":
                    while end < n and _html_space(s[end]):
                        end += 1
                    if end < n and (s[end] == u'"' or s[end] == u"'"):
                        end = _find_char(s, end + 1, n, s[end])
                        if end < n:
                            end += 1
            if end >= n:
                break  # a tag cut off by the end of the page
            i = end + 1
            bits = _nest_kind(table, s, name_at, name_end - name_at)
            if closing:
                if not bits & _NEST_ROOT or _is_name(s, name_at, name_end - name_at, "head", 4):
                    barrier = _NEST_SCOPE if bits & _NEST_SPECIAL else _NEST_SPECIAL
                    k = size - 1
                    while k >= (size - window if size > window else 0):
                        if (open_[k].length == name_end - name_at
                                and _same_name(s, open_[k].at, name_at, name_end - name_at)):
                            size = k
                            break
                        if open_[k].kind & barrier:
                            break
                        k -= 1
                continue
            self_closing = s[end - 1] == u"/"
            if size and open_[size - 1].foreign:
                if self_closing:
                    continue
                child_foreign = not bits & _NEST_INTEGRATION
            else:
                if bits & raw:
                    i = _raw_end(s, i, n, name_at, name_end - name_at)
                    continue
                if bits & _NEST_ROOT:
                    root = (1 if _is_name(s, name_at, name_end - name_at, "html", 4) else
                            2 if _is_name(s, name_at, name_end - name_at, "head", 4) else 4)
                    if (root == 4 and size
                            and _is_name(s, open_[size - 1].at, open_[size - 1].length, "head", 4)):
                        size -= 1
                    if roots & root:
                        continue
                    roots |= root
                elif bits:
                    if bits & _NEST_LI:
                        k = _find_open(open_, size, window, _NEST_LI, _NEST_LIST_BARRIER)
                        if k >= 0:
                            size = k
                    if bits & _NEST_DD_DT:
                        k = _find_open(open_, size, window, _NEST_DD_DT, _NEST_LIST_BARRIER)
                        if k >= 0:
                            size = k
                    if bits & _NEST_CLOSES_P:
                        k = _find_open(open_, size, window, _NEST_P, _NEST_SCOPE | _NEST_BUTTON)
                        if k >= 0:
                            size = k
                    if bits & _NEST_HEADING and size and open_[size - 1].kind & _NEST_HEADING:
                        size -= 1
                    if (bits & (_NEST_OPTION | _NEST_OPTGROUP) and size
                            and open_[size - 1].kind & _NEST_OPTION):
                        size -= 1
                    if bits & _NEST_OPTGROUP and size and open_[size - 1].kind & _NEST_OPTGROUP:
                        size -= 1
                    if bits & (_NEST_CELL | _NEST_ROW | _NEST_SECTION | _NEST_CAPTION):
                        k = _find_open(open_, size, window, _NEST_CELL, _NEST_TABLE_CONTEXT)
                        if k >= 0:
                            size = k
                    if bits & (_NEST_ROW | _NEST_SECTION | _NEST_CAPTION):
                        k = _find_open(open_, size, window, _NEST_ROW, _NEST_TABLE_CONTEXT)
                        if k >= 0:
                            size = k
                    if bits & (_NEST_SECTION | _NEST_CAPTION):
                        k = _find_open(open_, size, window, _NEST_SECTION, _NEST_TABLE_CONTEXT)
                        if k >= 0:
                            size = k
                    if bits & _NEST_TABLE:
                        k = _find_open(open_, size, window, _NEST_TABLE, _NEST_CELL | _NEST_CAPTION)
                        if k >= 0:
                            size = k
                if bits & _NEST_VOID or (bits & _NEST_FOREIGN and self_closing):
                    continue
                child_foreign = (bits & _NEST_FOREIGN) != 0
            if size == capacity:
                capacity = 2 * capacity if capacity else 256
                grown = <_Open *> PyMem_Realloc(open_, capacity * sizeof(_Open))
                if grown == NULL:
                    raise MemoryError()
                open_ = grown
            open_[size].at = name_at
            open_[size].length = name_end - name_at
            open_[size].kind = bits
            open_[size].foreign = child_foreign
            size += 1
            if size > deepest:
                deepest = size
    finally:
        PyMem_Free(open_)
    return deepest


_NESTING_TABLE = None  # the `_NestingKinds` of the last dict given to `max_tag_depth`


def max_tag_depth(str html, dict kinds, Py_ssize_t window, bint scripting):
    """``parse._nest(html, scripting)``: how deep a browser would nest the elements of ``html``
    as the nesting model counts, ``kinds`` being `parse._NESTING_KINDS` and ``window``
    `parse._NESTING_SEARCH`."""
    global _NESTING_TABLE
    if _NESTING_TABLE is None or (<_NestingKinds> _NESTING_TABLE).source is not kinds:
        _NESTING_TABLE = _NestingKinds(kinds)
    cdef _NestingKinds table = <_NestingKinds> _NESTING_TABLE
    cdef int kind = PyUnicode_KIND(html)
    cdef Py_ssize_t n = len(html)
    if kind == 1:
        return _nest_depth(<const Py_UCS1 *> PyUnicode_DATA(html), n, table, window, scripting)
    if kind == 2:
        return _nest_depth(<const Py_UCS2 *> PyUnicode_DATA(html), n, table, window, scripting)
    return _nest_depth(<const Py_UCS4 *> PyUnicode_DATA(html), n, table, window, scripting)


cdef struct _Names:
    # the tag and attribute names read; with ``slots`` (an open-addressing set of their
    # 64-bit hashes, ``mask + 1`` of them, 0 for empty), also how many are distinct
    Py_ssize_t seen
    Py_ssize_t distinct
    uint64_t *slots
    uint64_t mask


cdef inline void _add_name(_Names *names, const _char *s, Py_ssize_t start, Py_ssize_t end,
                           uint64_t basis) noexcept nogil:
    """Count the name ``s[start:end]`` (``basis`` keeps tag names apart from attributes')."""
    cdef uint64_t h = basis, slot
    cdef Py_ssize_t k
    names.seen += 1
    if names.slots == NULL:
        return
    for k in range(start, end):  # FNV-1a over the folded characters
        h = (h ^ _fold(<uint32_t> s[k])) * 1099511628211ULL
    if h == 0:
        h = 1
    slot = h & names.mask
    while names.slots[slot] != 0:
        if names.slots[slot] == h:
            return
        slot = (slot + 1) & names.mask
    if <uint64_t> names.distinct * 2 < names.mask:  # a full set stops counting: it is enough
        names.slots[slot] = h
        names.distinct += 1


# the bytes that end an attribute's name (white space, "/", "=", ">") and an unquoted value
# (white space, ">"): `_attribute_work` passes over the others in a tight loop
cdef unsigned char _ENDS_NAME[256]
cdef unsigned char _ENDS_UNQUOTED[256]
for _c in range(256):
    _ENDS_UNQUOTED[_c] = _html_space(_c) or _c == 62
    _ENDS_NAME[_c] = _ENDS_UNQUOTED[_c] or _c == 47 or _c == 61


cdef double _attribute_work(const _char *s, Py_ssize_t n, _Names *names) noexcept nogil:
    """`parse.attribute_work` of ``n`` characters; the names it reads are counted in ``names``."""
    cdef Py_ssize_t i = 0, start, name_start = 0
    cdef double work = 0
    cdef long count
    cdef int state
    cdef Py_UCS4 c, quote = 0
    cdef const void *found
    cdef const char *raw
    while True:
        i = _next_open(s, i, n)
        if i >= n:
            break
        i += 1
        if i >= n or not ((u"a" <= s[i] <= u"z") or (u"A" <= s[i] <= u"Z")):
            continue
        start = i
        raw = NULL
        if _names(s, i, n, "script"):
            raw = "</script"
        elif _names(s, i, n, "style"):
            raw = "</style"
        while i < n and not _html_space(s[i]) and s[i] != u"/" and s[i] != u">":
            i += 1
        _add_name(names, s, start, i, 14695981039346656037ULL)
        if raw != NULL and i - start != (6 if raw[2] == 115 and raw[3] == 99 else 5):
            raw = NULL  # "scripts", "styles": another name
        # the tokenizer's attribute states: 0 before a name, 1 in a name, 2 after one,
        # 3 before a value, 4 in a quoted value, 5 in an unquoted value
        state = 0
        count = 0
        while i < n:
            if _char is Py_UCS1:  # to the end of a name or an unquoted value at once
                if state == 1:
                    while i < n and not _ENDS_NAME[s[i]]:
                        i += 1
                elif state == 5:
                    while i < n and not _ENDS_UNQUOTED[s[i]]:
                        i += 1
                if i >= n:
                    break
            c = s[i]
            if state == 1 and (_html_space(c) or c == u"/" or c == u"=" or c == u">"):
                _add_name(names, s, name_start, i, 1469598103934665603ULL)
            if state == 4:
                if _char is Py_UCS1:  # to the closing quote at memchr's speed
                    found = memchr(s + i, quote, n - i)
                    if found == NULL:
                        i = n
                        break
                    i = <const Py_UCS1 *> found - s
                    state = 0
                elif c == quote:
                    state = 0
            elif c == u">":
                break
            elif state == 0:
                if not (_html_space(c) or c == u"/"):
                    count += 1
                    state = 1
                    name_start = i
            elif state == 1:
                if _html_space(c):
                    state = 2
                elif c == u"/":
                    state = 0
                elif c == u"=":
                    state = 3
            elif state == 2:
                if c == u"/":
                    state = 0
                elif c == u"=":
                    state = 3
                elif not _html_space(c):
                    count += 1
                    state = 1
                    name_start = i
            elif state == 3:
                if c == u"\"" or c == u"'":
                    quote = c
                    state = 4
                elif not _html_space(c):
                    state = 5
            elif _html_space(c):  # state 5
                state = 0
            i += 1
        if state == 1 and i >= n:
            _add_name(names, s, name_start, n, 1469598103934665603ULL)
        work += <double> count * count
        if raw != NULL and i < n:
            i = _raw_text_end(s, i + 1, n, raw)
    return work


cdef double _work(object html, _Names *names) except? -1:
    """`_attribute_work` of a str or of its UTF-8 bytes."""
    if isinstance(html, bytes):
        return _attribute_work(<const Py_UCS1 *> <const char *> html, len(html), names)
    cdef int kind = PyUnicode_KIND(html)
    cdef Py_ssize_t n = len(html)
    if kind == 1:
        return _attribute_work(<const Py_UCS1 *> PyUnicode_DATA(html), n, names)
    if kind == 2:
        return _attribute_work(<const Py_UCS2 *> PyUnicode_DATA(html), n, names)
    return _attribute_work(<const Py_UCS4 *> PyUnicode_DATA(html), n, names)


def attribute_work(html):
    """`parse.attribute_work`: the sum over start tags of the square of their attributes, of
    a str or of its UTF-8 (the same sum: the tags are ASCII)."""
    cdef _Names names
    names.seen = names.distinct = 0
    names.slots = NULL
    return _work(html, &names)


def markup_work(html, Py_ssize_t max_names):
    """`parse.markup_work`: `attribute_work`, and the distinct tag and attribute names, at
    most ``max_names + 1`` of them, counted only when the page reads more than ``max_names``
    names in all (else that count, which is no less)."""
    cdef _Names names
    cdef uint64_t size = 1
    names.seen = names.distinct = 0
    names.slots = NULL
    work = _work(html, &names)
    if names.seen <= max_names:
        return work, names.seen
    while size < <uint64_t> (max_names + 1) * 4:
        size *= 2
    names.slots = <uint64_t *> PyMem_Calloc(size, sizeof(uint64_t))
    if names.slots == NULL:
        raise MemoryError()
    names.mask = size - 1
    try:
        _work(html, &names)
    finally:
        PyMem_Free(names.slots)
    return work, names.distinct
