# cython: language_level=3, boundscheck=False, cdivision=True
"""`parse._walk` over lexbor's C tree: the same rules, without a Python object per DOM node.

selectolax hands out one Python ``LexborNode`` per node visited; on a typical page that is most
of the cost of cutting blocks. This walk reads lexbor's node structs directly (fields only: the
selectolax extension does not export lexbor's functions to other modules) and makes Python
objects only for what a block keeps. `parse._walk` stays the reference: tests check that both
give the same blocks.
"""

from cpython.mem cimport PyMem_Free, PyMem_Realloc
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


cdef class _TagTable:
    """Tag id -> (name, kind bits), filled as ids are met."""

    cdef dict names
    cdef dict kinds
    cdef frozenset block_tags
    cdef frozenset skip_tags

    def __init__(self, block_tags, skip_tags):
        self.names = {}
        self.kinds = {}
        self.block_tags = frozenset(block_tags)
        self.skip_tags = frozenset(skip_tags)

    cdef str name(self, uintptr_t tag_id):
        cdef size_t length = 0
        cdef const lxb_char_t *data
        name = self.names.get(tag_id)
        if name is None:
            data = sc_tag_name(tag_id, &length)
            name = PyUnicode_DecodeUTF8(<const char *> data, length, "replace") if data else ""
            kind = 0
            if name in self.skip_tags or not name or name[0] in "_!#-":
                kind |= IS_SKIP
            if name in self.block_tags:
                kind |= IS_BLOCK
            if name == "a":
                kind |= IS_LINK
            self.names[tag_id] = name
            self.kinds[tag_id] = kind
        return <str> name

    cdef int kind(self, uintptr_t tag_id):
        return <int> self.kinds[tag_id]


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
    stack = [tags.name(root.local_name)]
    monotonic = time.monotonic

    def flush():
        nonlocal n_chars, link_chars, lca
        text = " ".join("".join(parts).split())
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
        if open_nodes == NULL:
            raise MemoryError()
        open_nodes[0] = root
        n_open = 1
        node = root.first_child
        while True:
            if node == NULL:  # the children of open_nodes[-1] are done: close it
                tag = stack.pop()
                kind = tags.kind(open_nodes[n_open - 1].local_name)
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
                if chars.data != NULL and chars.length:
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
                tag = tags.name(node.local_name)
                kind = tags.kind(node.local_name)
                if not kind & IS_SKIP:
                    count += 1
                    if deadline is not None and not count & 1023 and monotonic() > deadline:
                        raise timeout_error("time budget exceeded while parsing")
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
                    open_nodes[n_open] = node
                    n_open += 1
                    node = node.first_child
                    continue
            node = node.next
        if parts:
            flush()
    finally:
        PyMem_Free(open_nodes)
    return blocks
