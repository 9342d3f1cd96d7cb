# cython: language_level=3, boundscheck=False, wraparound=False
"""`sites.block_signatures` in one call per page: the same bytes into the same CRC-32; and
the tags `sites.find_page_url` reads, found without a regular expression (three passes of
`re` over a page's first 256 KiB took about 0.1 ms of a CleanEval page's 4).

Python twins (what each function must equal; DEVELOPERS.md names the tests):
`block_signatures`: `sites.block_signatures`.
`next_tag`: `sites._URL_TAG`'s search (`sites._url_tags`).
"""

from libc.string cimport memchr


cdef extern from "zlib.h":
    unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned int length) nogil


def block_signatures(blocks, Py_ssize_t limit):
    """Tag path CRC-32 << 32 | CRC-32 of the first 200 characters, lower-cased, digit runs
    as one ``0``; ``limit`` < 0 means every block."""
    cdef list signatures = []
    cdef dict path_hashes = {}
    cdef const char *data
    cdef Py_ssize_t length, i, n = 0
    cdef unsigned char c, previous
    cdef unsigned char buffer[1024]
    cdef unsigned long text_hash
    cdef unsigned int used
    cdef unsigned long long path_hash
    for block in blocks:
        if 0 <= limit <= n:
            break
        n += 1
        path = block.tag_path
        cached = path_hashes.get(path)
        if cached is None:
            encoded = (<str> path).encode("utf-8", "surrogatepass")
            data = encoded
            cached = path_hashes[path] = (
                <unsigned long long> crc32(0, <const unsigned char *> data, len(encoded))
            ) << 32
        path_hash = cached
        encoded = (<str> block.text)[:200].lower().encode("utf-8", "surrogatepass")
        data = encoded
        length = len(encoded)
        text_hash = crc32(0, NULL, 0)
        used = 0
        previous = 0
        for i in range(length):
            c = <unsigned char> data[i]
            if b"1" <= c <= b"9":
                c = b"0"
            if c == b"0" and previous == b"0":
                continue
            previous = c
            buffer[used] = c
            used += 1
            if used == sizeof(buffer):
                text_hash = crc32(text_hash, buffer, used)
                used = 0
        text_hash = crc32(text_hash, buffer, used)
        signatures.append(path_hash | text_hash)
    return signatures


include "unicode_text.pxi"


cdef inline bint _letter_is(unsigned int c, unsigned int letter) noexcept nogil:
    """Whether ``c`` matches the ASCII lower-case ``letter`` as `re.IGNORECASE` matches it: by
    its lower case, or by the two letters whose upper case is that of ``i`` or ``s`` (the
    equivalences `re` adds: dotless ı, long ſ)."""
    if c < 0x80:
        return (c | 0x20) == letter
    cdef unsigned int lower = Py_UNICODE_TOLOWER(c)
    return lower == letter or (letter == 0x69 and lower == 0x131) or (
        letter == 0x73 and lower == 0x17F)


cdef inline Py_ssize_t _next_open(const _char *data, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The position of the first "<" at or after ``i``, or ``n``."""
    cdef const void *found = NULL
    cdef const char *start = <const char *> data
    cdef Py_ssize_t b
    if _char is Py_UCS1:
        if i < n:
            found = memchr(data + i, 0x3C, n - i)
        i = n if found == NULL else <const _char *> found - data
    elif _char is Py_UCS2:
        # memchr finds the byte 0x3C fast; it is a "<" where it is a whole character's
        b = 2 * i
        while b < 2 * n:
            found = memchr(start + b, 0x3C, 2 * n - b)
            if found == NULL:
                return n
            b = <const char *> found - start
            if b % 2 == 0 and data[b // 2] == 0x3C:
                return b // 2
            b += 1
        i = n
    else:
        while i < n and data[i] != 0x3C:
            i += 1
    return i


cdef Py_ssize_t _next_tag(const _char *data, Py_ssize_t i, Py_ssize_t n, const unsigned int *letters,
                          const Py_ssize_t *lengths, Py_ssize_t names, Py_ssize_t *end,
                          Py_ssize_t *which) noexcept nogil:
    """The start of the first tag at or after ``i`` named one of ``names`` (their ``lengths``
    letters one after another in ``letters``), -1 if none: its end and which name in ``end``
    and ``which``."""
    cdef Py_ssize_t j, k, w, first
    cdef unsigned int c
    i = _next_open(data, i, n)
    while i < n:
        first = 0
        for w in range(names):
            j = i + 1
            k = 0
            while k < lengths[w] and j < n and _letter_is(data[j], letters[first + k]):
                j += 1
                k += 1
            first += lengths[w]
            if k < lengths[w] or j == n:
                continue
            # \b: the name's last letter is a word character, so the next one must not be
            c = data[j]
            if Py_UNICODE_ISALNUM(c) or c == 0x5F:
                continue
            while j < n and data[j] != 0x3C and data[j] != 0x3E:
                j += 1
            if j < n and data[j] == 0x3E:
                end[0] = j + 1
                which[0] = w
                return i
        i = _next_open(data, i + 1, n)
    return -1


def next_tag(str text, tuple names, Py_ssize_t start, Py_ssize_t limit):
    """The first tag named one of ``names`` in ``text[:limit]`` from ``start`` on, as
    ``(start, end, which name)``, or ``None``: what ``re.compile(r"<(?:(NAME)|(NAME)...)\\b[^<>]*+>",
    re.IGNORECASE).search(text, start, limit)`` finds, for names of ASCII lower-case letters
    (`sites._url_tags`)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = min(len(text), max(limit, 0)), k, w, used = 0, found, end = 0, which = 0
    cdef unsigned int letters[64]
    cdef Py_ssize_t lengths[8]
    if len(names) > 8:
        raise ValueError("at most 8 tag names")
    for w, name in enumerate(names):
        if not (name.isascii() and name.isalpha() and name.islower()) or used + len(name) > 64:
            raise ValueError("tag names of ASCII lower-case letters only, 64 in all")
        lengths[w] = len(name)
        for k in range(len(name)):
            letters[used + k] = ord(name[k])
        used += len(name)
    if start < 0:
        start = 0
    if kind == 1:
        found = _next_tag(<const Py_UCS1 *> data, start, n, letters, lengths, len(names), &end, &which)
    elif kind == 2:
        found = _next_tag(<const Py_UCS2 *> data, start, n, letters, lengths, len(names), &end, &which)
    else:
        found = _next_tag(<const Py_UCS4 *> data, start, n, letters, lengths, len(names), &end, &which)
    return None if found < 0 else (found, end, which)
