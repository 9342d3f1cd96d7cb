"""Header names that are not UTF-8 through aiokafka's own fetcher classes, with its compiled
reader and with its pure-Python one (``AIOKAFKA_NO_EXTENSIONS=1``, or wherever the extension is
missing); through a real broker and worker: test_worker_broker.py, `_produce_raw_header_name`."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import pytest
from aiokafka.consumer import fetcher
from aiokafka.consumer.fetcher import READ_UNCOMMITTED
from aiokafka.record.default_records import _DefaultRecordBatchBuilderPy
from aiokafka.structs import TopicPartition

from stream_cleaner.streaming.patches import header_names
from stream_cleaner.streaming.patches.versions import require_tested

from ..conftest import REPO


class _RawName(str):
    """A header name whose bytes on the wire are not UTF-8 (as librdkafka may write them)."""

    __slots__ = ()

    def encode(self, *args: object, **kwargs: object) -> bytes:
        return b"x-\xff\xfe"


def _batch(base_offset: int, records: list[tuple[bytes, list[tuple[str, bytes]]]]) -> bytes:
    builder = _DefaultRecordBatchBuilderPy(
        magic=2, compression_type=0, is_transactional=0, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, batch_size=1 << 20,
    )  # fmt: skip
    for delta, (value, headers) in enumerate(records):
        builder.append(delta, timestamp=1000, key=b"k", value=value, headers=headers)
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base_offset)  # as the broker assigns it (outside the CRC)
    return bytes(data)


def _read(data: bytes) -> list[tuple[int, bytes, tuple]]:
    records = fetcher.MemoryRecords(data)
    partition = fetcher.PartitionRecords(
        TopicPartition("t", 0), records, None, 0, None, None, True, READ_UNCOMMITTED
    )
    return [(r.offset, r.value, tuple(r.headers)) for r in partition]


@pytest.mark.parametrize("reader", ["compiled", "python"])
def test_a_fetch_with_a_header_name_that_is_not_utf8_is_read_whole_and_once(reader: str) -> None:
    """The same records from both readers. aiokafka's Python reader wraps the decoding error
    in a CorruptRecordException, which crashed the fetch (and the worker, at every restart)."""
    if reader == "compiled":
        check_reading_a_header_name_that_is_not_utf8()
        return
    # aiokafka chooses its reader at import: a process of its own
    code = ("from tests.streaming.test_header_names import check_reading_a_header_name_that_is_"
            "not_utf8 as check; check(python=True)")  # fmt: skip
    env = {**os.environ, "AIOKAFKA_NO_EXTENSIONS": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


def check_reading_a_header_name_that_is_not_utf8(*, python: bool = False) -> None:
    from aiokafka.record.memory_records import _MemoryRecordsPy

    assert (fetcher.MemoryRecords is _MemoryRecordsPy) == python  # the reader under test
    data = _batch(0, [
        (b"a", [("id", b"1")]),
        (b"b", [(_RawName("x"), b"v"), ("id", b"2")]),
        (b"c", []),
    ]) + _batch(3, [(b"d", []), (b"e", [])])  # fmt: skip
    require_tested()  # the gate, without which no patch installs
    header_names.install()
    header_names.install()  # once is enough; twice is harmless
    assert _read(data) == [
        (0, b"a", (("id", b"1"),)),
        (1, b"b", (("x-\\xff\\xfe", b"v"), ("id", b"2"))),
        (2, b"c", ()),
        (3, b"d", ()),
        (4, b"e", ()),
    ]
    # a fetch without such a name still goes through aiokafka's compiled reader alone
    good = _batch(5, [(b"f", [("id", b"6")])])
    assert _read(good) == [(5, b"f", (("id", b"6"),))]
