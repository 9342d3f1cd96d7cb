# cython: language_level=3, boundscheck=False, wraparound=False
"""A Kafka record batch (message format v2) written in one pass, for the worker.

`RecordBatchBuilder` takes the place of aiokafka's ``DefaultRecordBatchBuilder`` inside the
batches `streaming.patches.batches.BatchSend` fills: the same methods, the same bytes for the
same records and timestamps. Its `append_packed` appends a document's sentence records (one
key, no headers, the values end to end in one bytes object) in one call, a few tens of
nanoseconds a record against half a microsecond through aiokafka's ``append``, and `build`
checksums with the CPU's CRC-32C instruction instead of a table. Both ran on the event loop,
the worker's thread that shares the GIL with the cleaning thread. A compressed batch's records
go through the codec aiokafka's builder calls, at `build`, as there.

Python twins (what each function must equal; DEVELOPERS.md names the tests):
`RecordBatchBuilder`: aiokafka's ``DefaultRecordBatchBuilder`` (no Python twin in this
package: aiokafka's bytes are the reference); `crc32c`: aiokafka's ``crc32c``.
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_Resize
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

import time

cdef extern from "crc32c.h":
    uint32_t sc_crc32c(const unsigned char *data, size_t n) nogil
    int sc_crc32c_force(int fastest) nogil

# the batch header: base offset (8), length (4), partition leader epoch (4), magic (1), CRC
# (4), then from the attributes on what the CRC covers: attributes (2), last offset delta
# (4), first and max timestamps (8 + 8), producer id (8) and epoch (2), base sequence (4),
# record count (4)
cdef enum:
    HEADER_SIZE = 61
    CRC_AT = 17
    ATTRIBUTES_AT = 21
    AFTER_LENGTH = 12  # the base offset and the length: what the length does not count


def crc32c(data):
    """The CRC-32C of ``data`` (bytes), as the batches are checksummed."""
    cdef const unsigned char[::1] view = data
    return sc_crc32c(&view[0] if len(view) else NULL, len(view))


def use_fastest_crc(bint fastest):
    """For tests: ``False`` checksums by table, as on a CPU without the instruction."""
    return sc_crc32c_force(fastest)


cdef inline Py_ssize_t _zigzag_size(int64_t value) noexcept nogil:
    cdef uint64_t v = (<uint64_t> value << 1) ^ <uint64_t> (value >> 63)
    cdef Py_ssize_t n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n


cdef inline uint8_t *_put_varint(uint8_t *at, int64_t value) noexcept nogil:
    """Kafka's varint: zigzag, then seven bits a byte, low first."""
    cdef uint64_t v = (<uint64_t> value << 1) ^ <uint64_t> (value >> 63)
    while v >= 0x80:
        at[0] = <uint8_t> ((v & 0x7F) | 0x80)
        at += 1
        v >>= 7
    at[0] = <uint8_t> v
    return at + 1


cdef inline uint8_t *_put_record_head(
    uint8_t *at, int64_t body, int64_t timestamp_delta, int64_t offset
) noexcept nogil:
    """A record's length, attributes (none), timestamp delta and offset delta."""
    at = _put_varint(at, body)
    at[0] = 0
    at = _put_varint(at + 1, timestamp_delta)
    return _put_varint(at, offset)


cdef inline void _put_be(uint8_t *at, uint64_t value, int width) noexcept nogil:
    cdef int i
    for i in range(width):
        at[width - 1 - i] = <uint8_t> (value >> (8 * i))


cdef inline uint8_t *_put_bytes(
    uint8_t *at, const unsigned char[::1] data, bint null
) noexcept nogil:
    if null:
        return _put_varint(at, -1)
    cdef Py_ssize_t n = data.shape[0]
    at = _put_varint(at, n)
    if n:
        memcpy(at, &data[0], n)
    return at + n


cdef class RecordBatchBuilder:
    """aiokafka's ``DefaultRecordBatchBuilder`` for a non-transactional batch of a producer
    without idempotence: what `patches.batches.BatchSend` swaps in (`batches._fast_builder`
    says when).

    Args:
        batch_size: the most bytes the batch takes before compression, header included; its
            first record is taken whatever its size (the producer checks records against its
            request size).
        codec: the attributes' compression bits, 0 (none) to 4 (zstd).
        compress: with a codec, the function that compresses the records (aiokafka's
            ``codec.*_encode``), even when that does not shrink them, as aiokafka's compiled
            builder does.
    """

    cdef bytearray _buffer
    cdef Py_ssize_t _size, _batch_size, _count
    cdef int64_t _first_timestamp, _max_timestamp, _last_offset
    cdef bint _built
    cdef int _codec
    cdef object _compress

    def __cinit__(self, Py_ssize_t batch_size, int codec=0, compress=None):
        if not 0 <= codec <= 4 or (codec != 0) != (compress is not None):
            raise ValueError("a codec from 1 to 4 with its compress function, or neither")
        self._codec = codec
        self._compress = compress
        self._batch_size = batch_size
        self._buffer = bytearray(max(HEADER_SIZE, min(batch_size, 65536)))
        self._size = HEADER_SIZE
        self._count = 0
        self._last_offset = 0
        self._first_timestamp = self._max_timestamp = -1  # as aiokafka writes an empty batch
        self._built = False

    cdef uint8_t *_room(self, Py_ssize_t more) except NULL:
        cdef Py_ssize_t capacity = len(self._buffer)
        if self._size + more > capacity:
            capacity = max(2 * capacity, self._size + more)
            if PyByteArray_Resize(self._buffer, capacity) < 0:
                return NULL
        return <uint8_t *> PyByteArray_AS_STRING(self._buffer) + self._size

    cdef int _check_open(self) except -1:
        if self._built:
            raise RuntimeError("the batch is built: no record can be added")
        return 0

    cdef bint _fits(self, Py_ssize_t record_size):
        return self._count == 0 or self._size + record_size <= self._batch_size

    cdef void _stamp(self, int64_t offset, int64_t timestamp):
        if self._count == 0:
            self._first_timestamp = self._max_timestamp = timestamp
        elif timestamp > self._max_timestamp:
            self._max_timestamp = timestamp
        self._last_offset = offset
        self._count += 1

    def append(self, offset, timestamp, key=None, value=None, headers=()):
        """One record, as ``DefaultRecordBatchBuilder.append``: ``timestamp`` in ms (``None``:
        now), ``headers`` as ``(str, bytes | None)`` pairs.

        Returns:
            ``(offset, size, timestamp)``, or ``None`` when the record does not fit.
        """
        self._check_open()
        if type(offset) is not int:
            raise TypeError(offset)
        if timestamp is None:
            timestamp = int(time.time() * 1000)
        elif type(timestamp) is not int:
            raise TypeError(timestamp)
        if not (key is None or isinstance(key, (bytes, bytearray, memoryview))):
            raise TypeError(f"Not supported type for key: {type(key)}")
        if not (value is None or isinstance(value, (bytes, bytearray, memoryview))):
            raise TypeError(f"Not supported type for value: {type(value)}")
        cdef int64_t c_offset = offset, c_timestamp = timestamp
        cdef int64_t delta = 0 if self._count == 0 else c_timestamp - self._first_timestamp
        cdef const unsigned char[::1] key_view = key if key is not None else None
        cdef const unsigned char[::1] value_view = value if value is not None else None
        cdef list encoded = [
            (name.encode("utf-8"), header_value) for name, header_value in headers
        ]
        cdef Py_ssize_t body = 1 + _zigzag_size(delta) + _zigzag_size(c_offset)
        body += 1 if key is None else _zigzag_size(len(key_view)) + len(key_view)
        body += 1 if value is None else _zigzag_size(len(value_view)) + len(value_view)
        body += _zigzag_size(len(encoded))
        for name, header_value in encoded:
            body += _zigzag_size(len(name)) + len(name)
            body += 1 if header_value is None else (
                _zigzag_size(len(header_value)) + len(header_value))  # fmt: skip
        cdef Py_ssize_t size = _zigzag_size(body) + body
        if not self._fits(size):
            return None
        cdef uint8_t *at = _put_record_head(self._room(size), body, delta, c_offset)
        at = _put_bytes(at, key_view, key is None)
        at = _put_bytes(at, value_view, value is None)
        at = _put_varint(at, len(encoded))
        cdef const unsigned char[::1] part
        for name, header_value in encoded:
            part = name
            at = _put_bytes(at, part, False)
            part = header_value if header_value is not None else None
            at = _put_bytes(at, part, header_value is None)
        self._size += size
        self._stamp(c_offset, c_timestamp)
        return (offset, size, timestamp)

    def append_packed(
        self,
        int64_t offset,
        bytes key,
        bytes data,
        const long long[::1] ends,
        Py_ssize_t start,
        Py_ssize_t near_limit,
    ):
        """Records of the values packed in ``data`` (value ``i`` ends at ``ends[i]``, the
        next begins there: `records.PackedValues`), from value ``start``, all keyed ``key``,
        without headers, with offsets from ``offset`` and the time now, until one does not fit
        or is longer than ``near_limit`` (the caller checks that one against the producer's
        limits).

        Returns:
            The index of the first value not appended.

        Raises:
            ValueError: ``start`` or an end is out of range, or the ends go backwards.
        """
        self._check_open()
        cdef Py_ssize_t n = ends.shape[0]
        if start < 0 or start > n:
            raise ValueError(f"start {start} is outside the {n} values")
        cdef int64_t timestamp = <int64_t> (time.time() * 1000)
        cdef Py_ssize_t key_length = PyBytes_GET_SIZE(key)
        cdef const char *key_data = PyBytes_AS_STRING(key)
        cdef const char *values = PyBytes_AS_STRING(data)
        cdef Py_ssize_t total = PyBytes_GET_SIZE(data)
        cdef Py_ssize_t key_part = _zigzag_size(key_length) + key_length
        cdef Py_ssize_t i, begin, end, length, body, size
        cdef int64_t delta
        cdef uint8_t *at
        begin = ends[start - 1] if start > 0 else 0
        end = begin
        for i in range(start, n):  # checked before anything is appended
            if ends[i] < end or ends[i] > total:
                raise ValueError(f"value {i} ends at {ends[i]}, outside {end}..{total}")
            end = ends[i]
        if begin < 0:
            raise ValueError(f"value {start} begins at {begin}")
        for i in range(start, n):
            end = ends[i]
            length = end - begin
            if length > near_limit:
                return i
            delta = 0 if self._count == 0 else timestamp - self._first_timestamp
            body = 1 + _zigzag_size(delta) + _zigzag_size(offset) + key_part
            body += _zigzag_size(length) + length + 1
            size = _zigzag_size(body) + body
            if not self._fits(size):
                return i
            at = _put_record_head(self._room(size), body, delta, offset)
            at = _put_varint(at, key_length)
            memcpy(at, key_data, key_length)
            at = _put_varint(at + key_length, length)
            memcpy(at, values + begin, length)
            at[length] = 0  # no headers: a count of zero
            self._size += size
            self._stamp(offset, timestamp)
            offset += 1
            begin = end
        return n

    def build(self):
        """The batch's bytes, compressed, header and checksum written; no record can be added
        after."""
        cdef int codec = 0
        if not self._built:
            if PyByteArray_Resize(self._buffer, self._size) < 0:
                raise MemoryError()
            if self._codec:
                # bytes, as aiokafka hands them over: cramjam's lz4 takes no memoryview
                with memoryview(self._buffer) as view:
                    compressed = self._compress(bytes(view[HEADER_SIZE:]))
                self._buffer[HEADER_SIZE:] = compressed
                self._size = len(self._buffer)
                codec = self._codec
            self._write_header(codec)
            self._built = True
        return self._buffer

    cdef void _write_header(self, int codec):
        cdef uint8_t *at = <uint8_t *> PyByteArray_AS_STRING(self._buffer)
        _put_be(at, 0, 8)  # base offset: the broker sets it
        _put_be(at + 8, <uint64_t> (self._size - AFTER_LENGTH), 4)
        _put_be(at + 12, <uint64_t> <int64_t> -1, 4)  # no partition leader epoch
        at[16] = 2  # magic
        _put_be(at + ATTRIBUTES_AT, codec, 2)  # the codec, create time, not transactional
        _put_be(at + 23, <uint64_t> self._last_offset, 4)
        _put_be(at + 27, <uint64_t> self._first_timestamp, 8)
        _put_be(at + 35, <uint64_t> self._max_timestamp, 8)
        _put_be(at + 43, <uint64_t> <int64_t> -1, 8)  # no producer id
        _put_be(at + 51, <uint64_t> <int64_t> -1, 2)  # nor epoch
        _put_be(at + 53, 0, 4)  # base sequence: 0, as aiokafka's BatchBuilder writes
        _put_be(at + 57, <uint64_t> self._count, 4)
        cdef uint32_t crc
        with nogil:
            crc = sc_crc32c(at + ATTRIBUTES_AT, self._size - ATTRIBUTES_AT)
        _put_be(at + CRC_AT, crc, 4)

    def size(self):
        """Bytes written so far, header included."""
        return self._size

    def record_count(self):
        return self._count

    def set_producer_state(self, producer_id, producer_epoch, base_sequence):
        raise NotImplementedError("an idempotent producer's batches need aiokafka's builder")

