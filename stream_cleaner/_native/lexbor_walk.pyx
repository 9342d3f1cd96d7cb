# cython: language_level=3, boundscheck=False, cdivision=True
"""`parse._walk` over lexbor's C tree: the same rules, without a Python object per DOM node.

selectolax hands out one Python ``LexborNode`` per node visited; on a typical page that is most
of the cost of cutting blocks. This walk reads lexbor's node structs directly (fields only: the
selectolax extension does not export lexbor's functions to other modules) and makes Python
objects only for what a block keeps. `parse._walk` stays the reference: tests check that both
give the same blocks.
"""

from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.ref cimport Py_INCREF, Py_XDECREF, PyObject
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport uintptr_t
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


cdef enum:
    IS_SKIP = 1
    IS_BLOCK = 2
    IS_LINK = 4


cdef extern from "lexbor/tag/const.h":
    enum: LXB_TAG__LAST_ENTRY


cdef class _TagTable:
    """Tag id -> (name, kind bits): standard tags in C arrays, custom ones in a dict."""

    cdef PyObject *standard_names[LXB_TAG__LAST_ENTRY]  # owned references
    cdef int standard_kinds[LXB_TAG__LAST_ENTRY]
    cdef dict custom
    cdef frozenset block_tags
    cdef frozenset skip_tags

    def __init__(self, block_tags, skip_tags):
        cdef Py_ssize_t i
        self.custom = {}
        self.block_tags = frozenset(block_tags)
        self.skip_tags = frozenset(skip_tags)
        for i in range(LXB_TAG__LAST_ENTRY):
            self.standard_kinds[i] = -1
            self.standard_names[i] = NULL

    def __dealloc__(self):
        cdef Py_ssize_t i
        for i in range(LXB_TAG__LAST_ENTRY):
            Py_XDECREF(self.standard_names[i])

    cdef int _kind_of(self, str name):
        cdef int kind = 0
        if name in self.skip_tags or not name or name[0] in "_!#-":
            kind |= IS_SKIP
        if name in self.block_tags:
            kind |= IS_BLOCK
        if name == "a":
            kind |= IS_LINK
        return kind

    cdef str _decode(self, uintptr_t tag_id):
        cdef size_t length = 0
        cdef const lxb_char_t *data = sc_tag_name(tag_id, &length)
        return PyUnicode_DecodeUTF8(<const char *> data, length, "replace") if data else ""

    cdef inline int kind(self, uintptr_t tag_id):
        """The kind bits of ``tag_id``, learning its name on first sight."""
        if tag_id < LXB_TAG__LAST_ENTRY:
            if self.standard_kinds[tag_id] < 0:
                name = self._decode(tag_id)
                Py_INCREF(name)
                self.standard_names[tag_id] = <PyObject *> name
                self.standard_kinds[tag_id] = self._kind_of(name)
            return self.standard_kinds[tag_id]
        entry = self.custom.get(tag_id)
        if entry is None:
            name = self._decode(tag_id)
            entry = self.custom[tag_id] = (name, self._kind_of(name))
        return <int> entry[1]

    cdef inline str name(self, uintptr_t tag_id):
        """The name of a tag id already seen by `kind`."""
        if tag_id < LXB_TAG__LAST_ENTRY:
            return <str> self.standard_names[tag_id]
        return <str> self.custom[tag_id][0]


cdef inline bint _ascii_blank(const lxb_char_t *data, size_t length):
    """Whether bytes are all ASCII white space (most text nodes between tags are)."""
    cdef size_t i
    cdef lxb_char_t c
    for i in range(length):
        c = data[i]
        if c != 32 and c != 10 and c != 9 and c != 13 and c != 12:
            return False
    return True


cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void *PyUnicode_DATA(object text)
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)
    bint Py_UNICODE_ISSPACE(Py_UCS4 c) nogil
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2


ctypedef fused _char:
    Py_UCS1
    Py_UCS2
    Py_UCS4


cdef Py_UCS4 *_collapse_buffer = NULL
cdef Py_ssize_t _collapse_capacity = 0


cdef inline Py_ssize_t _append_words(const _char *data, Py_ssize_t length, Py_UCS4 *out,
                                     Py_ssize_t at, bint *in_word) noexcept nogil:
    """Copy the words of ``data`` to ``out`` from ``at``, one space before each word but
    the first of the whole text; return the new end."""
    cdef Py_ssize_t i
    cdef Py_UCS4 c
    cdef bint space
    for i in range(length):
        c = data[i]
        space = (c == 32 or 9 <= c <= 13 or 28 <= c <= 31) if c < 128 else Py_UNICODE_ISSPACE(c)
        if space:
            in_word[0] = False
            continue
        if not in_word[0]:
            if at:
                out[at] = 32
                at += 1
            in_word[0] = True
        out[at] = c
        at += 1
    return at


cdef str _collapse(list parts):
    """``" ".join("".join(parts).split())`` without a string per word: the words of the
    parts (split at white space as ``str.split`` sees it: ``Py_UNICODE_ISSPACE``), one space
    between them, copied in one pass and narrowed by ``PyUnicode_FromKindAndData``."""
    global _collapse_buffer, _collapse_capacity
    cdef Py_ssize_t need = 0, at = 0
    cdef Py_UCS4 *grown
    cdef bint in_word = False
    cdef int kind
    cdef str part
    for part in parts:
        need += len(part) + 1
    if need > _collapse_capacity:
        grown = <Py_UCS4 *> PyMem_Realloc(_collapse_buffer, need * sizeof(Py_UCS4))
        if grown == NULL:
            raise MemoryError()
        _collapse_buffer, _collapse_capacity = grown, need
    for part in parts:
        kind = PyUnicode_KIND(part)
        if kind == 1:
            at = _append_words(<const Py_UCS1 *> PyUnicode_DATA(part), len(part),
                               _collapse_buffer, at, &in_word)
        elif kind == 2:
            at = _append_words(<const Py_UCS2 *> PyUnicode_DATA(part), len(part),
                               _collapse_buffer, at, &in_word)
        else:
            at = _append_words(<const Py_UCS4 *> PyUnicode_DATA(part), len(part),
                               _collapse_buffer, at, &in_word)
    text = <str> PyUnicode_FromKindAndData(4, _collapse_buffer, at)
    if _collapse_capacity > 1 << 20:  # a huge block: give its buffer back
        PyMem_Free(_collapse_buffer)
        _collapse_buffer, _collapse_capacity = NULL, 0
    return text


def walk_blocks(LexborHTMLParser parser, block, block_tags, skip_tags, heading_tags, list_tags,
                table_tags, form_tags, deadline, timeout_error):
    """The blocks of a parsed page, exactly as `parse._walk` cuts them.

    Args:
        parser: a selectolax parser holding the page.
        block: the `Block` class (positional fields as `parse._walk` passes them).
        block_tags, skip_tags, heading_tags, list_tags, table_tags, form_tags: the tag sets of
            `parse`.
        deadline: a ``time.monotonic()`` instant, or None.
        timeout_error: the exception class raised past the deadline.
    """
    cdef _TagTable tags = _TagTable(block_tags, skip_tags)
    cdef lxb_dom_node_t *root
    cdef lxb_dom_node_t *node
    cdef lxb_dom_node_t **open_nodes = NULL
    cdef int *open_kinds = NULL
    cdef int *grown_kinds
    cdef Py_ssize_t n_open = 0, capacity = 0
    cdef Py_ssize_t n_chars = 0, link_chars = 0, link_depth = 0, count = 0
    cdef Py_ssize_t lca = -1, low = 0, depth, n
    cdef int kind
    cdef lexbor_str_t *chars
    cdef lxb_dom_node_t **grown
    cdef bint has_text
    cdef list blocks = [], stack, block_stack = ["html"], parts = [], path = []
    cdef dict path_info = {}
    cdef str tag, data, block_tag = ""

    if parser.document == NULL:
        return blocks
    root = <lxb_dom_node_t *> parser.document.dom_document.element
    if root == NULL:
        return blocks
    kind = tags.kind(root.local_name)
    stack = [tags.name(root.local_name)]
    monotonic = time.monotonic

    def flush():
        nonlocal n_chars, link_chars, lca
        text = _collapse(parts)
        parts.clear()
        if text:
            key = tuple(path[:lca])
            info = path_info.get(key)
            if info is None:
                info = path_info[key] = (
                    " ".join(key),
                    len(key),
                    "a" in key,
                    not heading_tags.isdisjoint(key),
                    not list_tags.isdisjoint(key),
                    not table_tags.isdisjoint(key),
                    not form_tags.isdisjoint(key),
                )
            blocks.append(
                block(
                    len(blocks), text, block_tag, info[0], info[1],
                    <double> link_chars / n_chars if n_chars else 0.0,
                    info[2], info[3], info[4], info[5], info[6],
                )
            )
        n_chars = link_chars = 0
        lca = -1

    try:
        capacity = 64
        open_nodes = <lxb_dom_node_t **> PyMem_Realloc(NULL, capacity * sizeof(lxb_dom_node_t *))
        open_kinds = <int *> PyMem_Realloc(NULL, capacity * sizeof(int))
        if open_nodes == NULL or open_kinds == NULL:
            raise MemoryError()
        open_nodes[0] = root
        open_kinds[0] = kind
        n_open = 1
        node = root.first_child
        while True:
            if node == NULL:  # the children of open_nodes[-1] are done: close it
                stack.pop()
                kind = open_kinds[n_open - 1]
                if kind & IS_BLOCK:
                    if parts:
                        flush()
                    block_stack.pop()
                elif kind & IS_LINK:
                    link_depth -= 1
                if low > len(stack):
                    low = len(stack)
                n_open -= 1
                node = open_nodes[n_open].next
                if n_open == 0:
                    break
                continue
            if node.type == LXB_DOM_NODE_TYPE_TEXT:
                chars = &(<lxb_dom_character_data_t *> node).data
                has_text = False
                if chars.data != NULL and chars.length and not _ascii_blank(chars.data, chars.length):
                    data = PyUnicode_DecodeUTF8(<const char *> chars.data, chars.length, "replace")
                    has_text = not data.isspace()
                if has_text:
                    parts.append(data)
                    n = len(data)
                    n_chars += n
                    if link_depth:
                        link_chars += n
                    depth = len(stack)
                    if lca < 0:
                        lca = depth
                        path = stack[:]
                        block_tag = block_stack[-1]
                    elif low < lca:
                        lca = low
                    low = depth
                elif parts:
                    parts.append(" ")
            elif node.type == LXB_DOM_NODE_TYPE_ELEMENT:
                kind = tags.kind(node.local_name)
                if not kind & IS_SKIP:
                    count += 1
                    if deadline is not None and not count & 1023 and monotonic() > deadline:
                        raise timeout_error("time budget exceeded while parsing")
                    tag = tags.name(node.local_name)
                    if kind & IS_BLOCK:
                        if parts:
                            flush()
                        block_stack.append(tag)
                    elif kind & IS_LINK:
                        link_depth += 1
                    stack.append(tag)
                    if n_open == capacity:
                        capacity *= 2
                        grown = <lxb_dom_node_t **> PyMem_Realloc(
                            open_nodes, capacity * sizeof(lxb_dom_node_t *)
                        )
                        if grown == NULL:
                            raise MemoryError()
                        open_nodes = grown
                        grown_kinds = <int *> PyMem_Realloc(open_kinds, capacity * sizeof(int))
                        if grown_kinds == NULL:
                            raise MemoryError()
                        open_kinds = grown_kinds
                    open_nodes[n_open] = node
                    open_kinds[n_open] = kind
                    n_open += 1
                    node = node.first_child
                    continue
            node = node.next
        if parts:
            flush()
    finally:
        PyMem_Free(open_nodes)
        PyMem_Free(open_kinds)
    return blocks
