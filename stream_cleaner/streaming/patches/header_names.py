"""Kafka header names that are not UTF-8, read instead of crashing the consumer.

Kafka's record format stores a header name as bytes, and clients other than Java's (librdkafka,
Go's) write whatever bytes they are given. aiokafka decodes every header name as strict UTF-8
while it unpacks a fetched batch, so one such name raised UnicodeDecodeError inside the
worker's fetch: the worker crashed, and again after every restart, on the same message, with
the good messages of the partition behind it. aiokafka's pure-Python reader (used with
``AIOKAFKA_NO_EXTENSIONS=1``, or where its C extension is missing) raises the same error
wrapped in a CorruptRecordException; both are caught.

`install` makes aiokafka's fetcher keep each fetched partition's bytes, and read them again
past such an error with a copy of its pure-Python batch reader that writes the bad bytes of a
name as ``\\xNN`` (``backslashreplace``). The records already handed out are not repeated; the
message is then cleaned as any other, its header names escaped. Only a batch that fails is
read in Python: every other batch stays in aiokafka's compiled reader.

Private names: the name ``MemoryRecords`` in ``aiokafka.consumer.fetcher`` (replaced),
``PartitionRecords._unpack_records`` (wrapped), its ``_records``, ``_tp`` and
``next_fetch_offset``, and aiokafka 0.14's ``_DefaultRecordBatchPy._read_msg`` (copied in
`_LenientBatch`, but for the decoding of header names), ``_MemoryRecordsPy`` and its
``_next_slice`` and ``_cache_next``.

Tests: in ``tests/streaming/test_header_names.py``,
``test_a_fetch_with_a_header_name_that_is_not_utf8_is_read_whole_and_once`` runs it through
aiokafka's own fetcher classes, with the compiled and the Python reader; the first broker test
(``tests/streaming/test_worker_broker.py``) sends such a name to a worker.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Iterator
from typing import Any

from aiokafka.consumer import fetcher
from aiokafka.errors import CorruptRecordException
from aiokafka.record.default_records import _DefaultRecordBatchPy, _DefaultRecordPy
from aiokafka.record.legacy_records import LegacyRecordBatch
from aiokafka.record.memory_records import _MemoryRecordsPy
from aiokafka.record.util import decode_varint

from .versions import require_checked

log = logging.getLogger(__name__)

_INSTALLED: list[bool] = []


def install() -> None:
    """Patch aiokafka's fetcher (once per process; before the consumer starts)."""
    require_checked()
    if _INSTALLED:
        return
    compiled = fetcher.MemoryRecords
    unpack = fetcher.PartitionRecords._unpack_records

    def memory_records(data: bytes) -> _KeptRecords:
        return _KeptRecords(data, compiled(data))

    def unpack_records(self: Any) -> Iterator[Any]:
        try:
            yield from unpack(self)
        except (UnicodeDecodeError, CorruptRecordException) as exc:
            records = self._records
            if not isinstance(records, _KeptRecords) or not _bad_header_name(exc):
                raise
            log.warning(
                "%s: a header name that is not UTF-8 at offset %d or after (%s); the fetch "
                "is read again with the bad bytes escaped",
                self._tp, self.next_fetch_offset, exc,
            )  # fmt: skip
            self._records = _LenientRecords(records.data, self.next_fetch_offset)
            yield from unpack(self)

    fetcher.MemoryRecords = memory_records
    fetcher.PartitionRecords._unpack_records = unpack_records
    _INSTALLED.append(True)


def _bad_header_name(exc: Exception) -> bool:
    """Whether ``exc`` is a header name's decoding error: raised as it is by the compiled
    reader, as the cause of a CorruptRecordException by the Python one (``_read_msg`` decodes
    nothing else)."""
    return isinstance(exc, UnicodeDecodeError) or isinstance(exc.__cause__, UnicodeDecodeError)


class _KeptRecords:
    """aiokafka's compiled MemoryRecords of a fetch, and the fetch's bytes."""

    __slots__ = ("_records", "data")

    def __init__(self, data: bytes, records: Any) -> None:
        self.data = data
        self._records = records

    def has_next(self) -> bool:
        return self._records.has_next()

    def next_batch(self) -> Any:
        return self._records.next_batch()

    def size_in_bytes(self) -> int:
        return self._records.size_in_bytes()


class _LenientRecords:
    """A fetch's batches in aiokafka's Python reader, header names read with
    ``backslashreplace``, from the batch that holds offset ``start`` on (the records before
    it were handed out already)."""

    __slots__ = ("_batches", "_size")

    def __init__(self, data: bytes, start: int) -> None:
        reader = _PythonRecords(data)
        self._size = reader.size_in_bytes()
        self._batches: collections.deque[Any] = collections.deque()
        while reader.has_next():
            batch = reader.next_batch()
            if not isinstance(batch, _LenientBatch) or batch.next_offset > start:
                self._batches.append(batch)

    def has_next(self) -> bool:
        return bool(self._batches)

    def next_batch(self) -> Any:
        return self._batches.popleft()

    def size_in_bytes(self) -> int:
        return self._size


class _PythonRecords(_MemoryRecordsPy):
    """aiokafka's Python MemoryRecords, whose batches of format 2 are `_LenientBatch`es (its
    own would be the compiled ones)."""

    def next_batch(self, *args: Any, **kwargs: Any) -> Any:
        next_slice = self._next_slice
        if next_slice is None:
            return None
        if len(next_slice) < self.MIN_SLICE:
            raise CorruptRecordException(
                f"Record size is less than the minimum record overhead "
                f"({self.MIN_SLICE - self.LOG_OVERHEAD})"
            )
        self._cache_next()
        magic = next_slice[self.MAGIC_OFFSET]
        return _LenientBatch(next_slice) if magic >= 2 else LegacyRecordBatch(next_slice, magic)


class _LenientBatch(_DefaultRecordBatchPy):
    """aiokafka's `_DefaultRecordBatchPy` with header names that need not be UTF-8."""

    def _read_msg(self, decode_varint: Any = decode_varint) -> _DefaultRecordPy:
        # aiokafka 0.14's _DefaultRecordBatchPy._read_msg, but for the header name's decoding
        buffer = self._buffer
        pos = self._pos
        length, pos = decode_varint(buffer, pos)
        start_pos = pos
        _, pos = decode_varint(buffer, pos)  # attributes
        ts_delta, pos = decode_varint(buffer, pos)
        if self.timestamp_type == self.LOG_APPEND_TIME:
            timestamp = self.max_timestamp
        else:
            timestamp = self.first_timestamp + ts_delta
        offset_delta, pos = decode_varint(buffer, pos)
        offset = self.base_offset + offset_delta
        key, pos = _nullable_bytes(buffer, pos)
        value, pos = _nullable_bytes(buffer, pos)
        header_count, pos = decode_varint(buffer, pos)
        if header_count < 0:
            raise CorruptRecordException(f"Found invalid number of record headers {header_count}")
        headers: list[tuple[str, bytes | None]] = []
        for _ in range(header_count):
            name_len, pos = decode_varint(buffer, pos)
            if name_len < 0:
                raise CorruptRecordException(f"Invalid negative header key size {name_len}")
            name = bytes(buffer[pos : pos + name_len]).decode("utf-8", "backslashreplace")
            pos += name_len
            header_value, pos = _nullable_bytes(buffer, pos)
            headers.append((name, header_value))
        if pos - start_pos != length:
            raise CorruptRecordException(
                f"Invalid record size: expected to read {length} bytes in record payload, "
                f"but instead read {pos - start_pos}"
            )
        self._pos = pos
        return _DefaultRecordPy(offset, timestamp, self.timestamp_type, key, value, headers)


def _nullable_bytes(buffer: bytearray, pos: int) -> tuple[bytes | None, int]:
    """Kafka's NULLABLE_BYTES at ``pos`` (a varint length, -1 for null), and where it ends."""
    length, pos = decode_varint(buffer, pos)
    if length < 0:
        return None, pos
    return bytes(buffer[pos : pos + length]), pos + length
