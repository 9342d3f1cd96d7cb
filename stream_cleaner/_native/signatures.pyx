# cython: language_level=3, boundscheck=False, wraparound=False
"""`sites.block_signatures` in one call per page: the same bytes into the same CRC-32.

Python twins (what each function must equal; DEVELOPERS.md names the tests):
`block_signatures`: `sites.block_signatures`.
"""


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
