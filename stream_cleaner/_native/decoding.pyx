# cython: language_level=3, boundscheck=False, wraparound=False
"""`decode._utf8_with_cp1252` in C: a page's valid UTF-8 sequences as UTF-8, each other byte
as windows-1252 (its five unassigned bytes as U+FFFD), in one pass.

Python's decoder calls the error handler once per invalid stretch, some 0.8 µs each: a page of
a million stray windows-1252 bytes took a second. Each byte of an invalid stretch is read on its
own either way (a stretch's later bytes are continuation bytes, which begin no sequence), so
the text is exactly Python's.

Python twins (what each function must equal; DEVELOPERS.md names the tests):
`utf8_with_cp1252`: `decode._utf8_with_cp1252`.
"""

from libc.string cimport memcpy

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE

# the UTF-8 bytes of windows-1252's reading of 0x80-0xFF, three bytes a slot, and their lengths
cdef unsigned char _CP1252[128 * 3]
cdef unsigned char _CP1252_LENGTH[128]


def _fill_table():
    for byte in range(128, 256):
        encoded = bytes([byte]).decode("cp1252", errors="replace").encode("utf-8")
        _CP1252_LENGTH[byte - 128] = len(encoded)
        for k, value in enumerate(encoded):
            _CP1252[(byte - 128) * 3 + k] = value


_fill_table()


cdef inline Py_ssize_t _valid_length(const unsigned char *s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The length of the valid UTF-8 sequence of two to four bytes at ``s[i]``, or 0."""
    cdef unsigned char c = s[i], lo = 0x80, hi = 0xBF
    cdef Py_ssize_t length, k
    if 0xC2 <= c <= 0xDF:
        length = 2
    elif 0xE0 <= c <= 0xEF:
        length = 3
        if c == 0xE0:
            lo = 0xA0
        elif c == 0xED:
            hi = 0x9F  # no surrogates
    elif 0xF0 <= c <= 0xF4:
        length = 4
        if c == 0xF0:
            lo = 0x90
        elif c == 0xF4:
            hi = 0x8F
    else:
        return 0
    if i + length > n or not (lo <= s[i + 1] <= hi):
        return 0
    for k in range(2, length):
        if not (0x80 <= s[i + k] <= 0xBF):
            return 0
    return length


def utf8_with_cp1252(bytes body):
    """``body`` as valid UTF-8: its valid sequences as they are, each other byte as the UTF-8 of
    its windows-1252 character (``bytes.decode("utf-8")`` of the result is the text)."""
    cdef Py_ssize_t n = PyBytes_GET_SIZE(body), i = 0, o = 0, length
    cdef const unsigned char *s = <const unsigned char *> PyBytes_AS_STRING(body)
    out = bytearray(3 * n)
    cdef unsigned char *d = out
    cdef unsigned char c
    with nogil:
        while i < n:
            c = s[i]
            if c < 0x80:
                d[o] = c
                o += 1
                i += 1
                continue
            length = _valid_length(s, i, n)
            if length:
                memcpy(d + o, s + i, length)
                o += length
                i += length
            else:
                memcpy(d + o, &_CP1252[(c - 128) * 3], _CP1252_LENGTH[c - 128])
                o += _CP1252_LENGTH[c - 128]
                i += 1
    return PyBytes_FromStringAndSize(<char *> d, o)
