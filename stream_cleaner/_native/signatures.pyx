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


cdef inline bint _holds(const _char *data, Py_ssize_t i, Py_ssize_t end,
                        const unsigned int *needle, Py_ssize_t length) noexcept nogil:
    """Whether ``data[i:end]`` holds ``needle`` (``length`` ASCII characters, lower-case),
    its letters matched as `re.IGNORECASE` matches them (`_letter_is`), other characters
    exactly."""
    cdef Py_ssize_t at, k
    cdef unsigned int c, wanted
    for at in range(i, end - length + 1):
        k = 0
        while k < length:
            c = data[at + k]
            wanted = needle[k]
            if not (c == wanted or (0x61 <= wanted <= 0x7A and _letter_is(c, wanted))):
                break
            k += 1
        if k == length:
            return True
    return False


cdef Py_ssize_t _next_tag(const _char *data, Py_ssize_t i, Py_ssize_t n, const unsigned int *letters,
                          const Py_ssize_t *lengths, Py_ssize_t names,
                          const unsigned int *needles, const Py_ssize_t *needle_lengths,
                          Py_ssize_t *end, Py_ssize_t *which) noexcept nogil:
    """The start of the first tag at or after ``i`` named one of ``names`` (their ``lengths``
    letters one after another in ``letters``) that holds that name's needle (``needles``,
    one after another, of ``needle_lengths``; of length 0: any tag), -1 if none: its end and
    which name in ``end`` and ``which``."""
    cdef Py_ssize_t j, k, w, first, needle_first
    cdef unsigned int c
    i = _next_open(data, i, n)
    while i < n:
        first = 0
        needle_first = 0
        for w in range(names):
            j = i + 1
            k = 0
            while k < lengths[w] and j < n and _letter_is(data[j], letters[first + k]):
                j += 1
                k += 1
            first += lengths[w]
            needle_first += needle_lengths[w]
            if k < lengths[w] or j == n:
                continue
            # \b: the name's last letter is a word character, so the next one must not be
            c = data[j]
            if Py_UNICODE_ISALNUM(c) or c == 0x5F:
                continue
            while j < n and data[j] != 0x3C and data[j] != 0x3E:
                j += 1
            if j < n and data[j] == 0x3E:
                if needle_lengths[w] and not _holds(
                    data, i, j + 1, needles + needle_first - needle_lengths[w], needle_lengths[w]
                ):
                    break  # a tag holds no "<": the next one starts after it
                end[0] = j + 1
                which[0] = w
                return i
        i = _next_open(data, i + 1, n)
    return -1


# the names and needles `next_tag` read last, as the C arrays it scans with: a page's search
# asks again for every tag it finds, with the same tuples
cdef object _names_read = None
cdef object _needles_read = None
cdef unsigned int _letters[64]
cdef Py_ssize_t _lengths[8]
cdef unsigned int _needle_letters[64]
cdef Py_ssize_t _needle_lengths[8]
cdef Py_ssize_t _n_names = 0


cdef int _read_names(tuple names, tuple needles) except -1:
    """``names`` and ``needles`` into the arrays `_next_tag` scans with."""
    global _names_read, _needles_read, _n_names
    cdef Py_ssize_t w, k, used = 0, needle_used = 0
    if len(names) > 8:
        raise ValueError("at most 8 tag names")
    if needles is not None and len(needles) != len(names):
        raise ValueError("one needle a name")
    _names_read = _needles_read = None  # until both are read
    for w, name in enumerate(names):
        if not (name.isascii() and name.isalpha() and name.islower()) or used + len(name) > 64:
            raise ValueError("tag names of ASCII lower-case letters only, 64 in all")
        _lengths[w] = len(name)
        for k in range(len(name)):
            _letters[used + k] = ord(name[k])
        used += len(name)
        needle = needles[w] if needles is not None else ""
        if not (needle.isascii() and needle == needle.lower()) or needle_used + len(needle) > 64:
            raise ValueError("needles of ASCII characters, no upper-case letter, 64 in all")
        _needle_lengths[w] = len(needle)
        for k in range(len(needle)):
            _needle_letters[needle_used + k] = ord(needle[k])
        needle_used += len(needle)
    _n_names = len(names)
    _names_read, _needles_read = names, needles
    return 0


def next_tag(str text, tuple names, Py_ssize_t start, Py_ssize_t limit, tuple needles=None):
    """The first tag named one of ``names`` in ``text[:limit]`` from ``start`` on, as
    ``(start, end, which name)``, or ``None``: what ``re.compile(r"<(?:(NAME)|(NAME)...)\\b[^<>]*+>",
    re.IGNORECASE).search(text, start, limit)`` finds, for names of ASCII lower-case letters
    (`sites._url_tags`). With ``needles`` (one string a name, "" for none), only a tag that
    holds its name's needle counts: the first match whose text
    ``re.search(re.escape(needle), tag, re.IGNORECASE)`` finds the needle in."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = min(len(text), max(limit, 0)), found, end = 0, which = 0
    if names is not _names_read or needles is not _needles_read:
        _read_names(names, needles)
    if start < 0:
        start = 0
    if kind == 1:
        found = _next_tag(<const Py_UCS1 *> data, start, n, _letters, _lengths, _n_names,
                          _needle_letters, _needle_lengths, &end, &which)
    elif kind == 2:
        found = _next_tag(<const Py_UCS2 *> data, start, n, _letters, _lengths, _n_names,
                          _needle_letters, _needle_lengths, &end, &which)
    else:
        found = _next_tag(<const Py_UCS4 *> data, start, n, _letters, _lengths, _n_names,
                          _needle_letters, _needle_lengths, &end, &which)
    return None if found < 0 else (found, end, which)
