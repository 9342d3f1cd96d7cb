"""The worker's records written into aiokafka's record batches directly, not record by record.

Upstream behaviour it works around: aiokafka's ``AIOKafkaProducer.send`` (0.13, 0.14) costs
about 70 µs a record through Faust's producer and aiokafka's accumulator, and a page makes about
200 sentence records: publishing was as slow as cleaning. `BatchSend` appends the records to
batches it opens itself (``producer.create_batch``) and hands them to ``send_batch``, and where
it can it swaps a batch's record builder for the native
``_native/record_batch.RecordBatchBuilder``, which writes the same bytes in a tenth of the time.

Private names it reads or writes: the producer's ``_serialize`` (the size check that ``send``
does and batches skip), ``_max_request_size`` and ``_message_accumulator`` (its
``_compression_type``, ``_txn_manager``, ``_batch_size``); a ``BatchBuilder``'s ``_builder``,
``_relative_offset``, ``_closed``, ``_key_serializer`` and ``_value_serializer``; Faust's
``app.producer._producer``. What goes wrong if they change: a record over the request limit is
no longer refused before it reaches a batch, or a swapped builder writes batches aiokafka would
not (with idempotence or transactions, which keep aiokafka's builder: `_fast_builder`).
Where a batch does not look as expected `_append_all` falls back to ``BatchBuilder.append``.

Tests: in ``tests/streaming/test_client.py``,
``test_batch_send_writes_every_record_in_order_across_full_batches`` sends through both
builders to a real broker; in ``tests/streaming/test_agents.py``,
``test_batches_take_the_native_builder_only_where_it_writes_what_aiokafka_would`` checks where
the native builder is taken; ``tests/test_native.py`` compares its bytes with aiokafka's.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any

from ..._native import native_module
from ..records import OutputRecord, PackedValues
from .versions import require_checked

if TYPE_CHECKING:
    import faust


class BatchSend:
    """A `Send` that writes records in batches, one per topic and partition, straight to the
    aiokafka producer under Faust's.

    Per-record sends cost about 70 µs each in the worker (Faust's producer, then aiokafka's
    accumulator); a page of 200 sentences made publishing as slow as cleaning. Records are
    appended to aiokafka batch builders (a document's sentence records in one `send_values`
    call) and `flush` hands the batches to the producer. Inside those batches the native
    ``record_batch.RecordBatchBuilder`` writes the records when it can (`_fast_builder`): the
    same bytes as aiokafka's, in 0.03 ms a page of CleanEval where aiokafka's builder took
    0.09-0.12 ms of the event loop, which shares the GIL with the cleaning thread
    (bench/record_batches.py). Partitions are chosen by aiokafka's default partitioner
    (murmur2 of the key, as Kafka's Java client), so a document's sentences stay together and
    in order. Faust's producer is still the one started, configured and flushed on shutdown.
    """

    def __init__(self, app: faust.App, names: dict[str, str]) -> None:
        from aiokafka.partitioner import DefaultPartitioner

        require_checked()
        self.app = app
        self.names = names
        self.partitioner = DefaultPartitioner()
        self.partitions: dict[str, list[int]] = {}
        # (topic, key) -> partition until the next flush: murmur2 is pure Python, and a
        # document's sentence records all share its key
        self.key_partition: dict[tuple[str, bytes | None], int] = {}
        self.open: dict[tuple[str, int], tuple[Any, asyncio.Future[Any]]] = {}

    def _producer(self) -> Any:
        producer = self.app.producer._producer  # aiokafka's, under Faust's Producer
        if producer is None:
            raise RuntimeError("the producer is not started")
        return producer

    async def __call__(self, role: str, record: OutputRecord) -> Awaitable[Any]:
        """Queue one record; the returned future is its batch's, done when the broker acked."""
        producer = self._producer()
        topic = self.names[role]
        slot = (topic, await self._partition(producer, topic, record.key))
        headers = list(record.headers)
        # the size check of producer.send, which batches skip: a record over the limit fails
        producer._serialize(record.key, record.value, headers)
        return await self._append(slot, record.key, record.value, headers)

    async def send_values(
        self, role: str, key: bytes, values: Sequence[bytes]
    ) -> list[asyncio.Future[Any]]:
        """Queue records that share one key and have no headers (a document's sentences):
        ``values`` as an Outcome holds them (`records.PackedValues`), or any sequence of bytes.

        Returns:
            The futures of the batches that hold them, each done when the broker acked it.
        """
        packed = values if type(values) is PackedValues else PackedValues.of(values)
        producer = self._producer()
        topic = self.names[role]
        slot = (topic, await self._partition(producer, topic, key))
        # producer.send's size check, only where it could fail: a record's overhead beside
        # its key and value is under 100 bytes
        near_limit = producer._max_request_size - len(key) - 1024
        entry = self.open.get(slot)
        waiters = [] if entry is None else [entry[1]]
        i, n = 0, len(packed)
        while i < n:
            if entry is not None:
                i = _append_all(entry[0], key, packed, i, near_limit)
                if i == n:
                    break
            value = packed[i]
            if len(value) > near_limit:
                producer._serialize(key, value, [])
            entry = await self._renew(slot, entry, key, value, [])
            waiters.append(entry[1])
            i += 1
        return waiters

    async def _partition(self, producer: Any, topic: str, key: bytes | None) -> int:
        partition = self.key_partition.get((topic, key))
        if partition is None:
            partitions = self.partitions.get(topic)
            if partitions is None:
                partitions = self.partitions[topic] = sorted(await producer.partitions_for(topic))
            partition = self.partitioner(key, partitions, partitions)
            self.key_partition[topic, key] = partition
        return partition

    async def _append(
        self, slot: tuple[str, int], key: bytes | None, value: bytes, headers: list[Any]
    ) -> asyncio.Future[Any]:
        """Append one record to the slot's open batch; the future of the batch that took it."""
        entry = self.open.get(slot)
        if entry is None or (
            entry[0].append(key=key, value=value, timestamp=None, headers=headers) is None
        ):
            entry = await self._renew(slot, entry, key, value, headers)
        return entry[1]

    async def _renew(
        self,
        slot: tuple[str, int],
        entry: tuple[Any, asyncio.Future[Any]] | None,
        key: bytes | None,
        value: bytes,
        headers: list[Any],
    ) -> tuple[Any, asyncio.Future[Any]]:
        """Send the slot's full batch if there is one, open a new one with the record in it."""
        if entry is not None:
            await self._send(slot)
        producer = self._producer()
        batch = producer.create_batch()
        if _fast_builder(producer, batch):
            accumulator = producer._message_accumulator
            codec = accumulator._compression_type
            batch._builder = native_module("record_batch").RecordBatchBuilder(
                accumulator._batch_size, codec, _codec_encoders().get(codec)
            )
        entry = self.open[slot] = (batch, asyncio.get_running_loop().create_future())
        entry[0].append(key=key, value=value, timestamp=None, headers=headers)
        return entry

    async def flush(self) -> None:
        """Hand every open batch to the producer; their futures complete on ack."""
        for slot in list(self.open):
            await self._send(slot)
        self.key_partition.clear()

    async def _send(self, slot: tuple[str, int]) -> None:
        batch, waiter = self.open.pop(slot)
        batch.close()
        try:
            sent = await self._producer().send_batch(batch, slot[0], partition=slot[1])
        except Exception as exc:  # the batch's future carries the failure
            waiter.set_exception(exc)
            return

        def settle(done: asyncio.Future[Any]) -> None:
            if done.exception() is not None:
                waiter.set_exception(done.exception())  # type: ignore[arg-type]
            else:
                waiter.set_result(done.result())

        sent.add_done_callback(settle)


_NO_HEADERS: list[Any] = []


@functools.cache
def _codec_encoders() -> dict[int, Any]:
    """aiokafka's compression functions by the codec bits of a batch's attributes."""
    from aiokafka import codec

    return {1: codec.gzip_encode, 2: codec.snappy_encode, 3: codec.lz4_encode,
            4: codec.zstd_encode}  # fmt: skip


def _fast_builder(producer: Any, batch: Any) -> bool:
    """Whether ``batch`` (fresh from ``producer.create_batch()``) can take the native builder:
    it is built, and aiokafka's builder is the one it replaces, for a batch of a producer
    without idempotence or transactions (which set a batch's producer state), uncompressed or
    compressed by a codec aiokafka has."""
    accumulator = getattr(producer, "_message_accumulator", None)
    codec = getattr(accumulator, "_compression_type", None)
    return (
        native_module("record_batch") is not None
        and type(getattr(batch, "_builder", None)).__name__ == "DefaultRecordBatchBuilder"
        and getattr(batch, "_relative_offset", None) == 0
        and (codec == 0 or codec in _codec_encoders())
        and getattr(accumulator, "_txn_manager", False) is None
        and isinstance(getattr(accumulator, "_batch_size", None), int)
    )


def _append_all(batch: Any, key: bytes, values: PackedValues, start: int, near_limit: int) -> int:
    """Append ``values[start:]`` (records without headers) to an aiokafka batch, until one
    does not fit or is near the size limit; returns the index of the first not appended.

    In one call to the native builder when the batch has it (`_fast_builder`); else through
    aiokafka's record builder, as ``BatchBuilder.append`` does but without its keyword call,
    serializer calls and metadata check per record: 0.3 µs a record instead of 0.75, for the
    ~200 sentence records of each page. Falls back to ``BatchBuilder.append`` when the batch
    does not look as expected (another aiokafka version).
    """
    builder = getattr(batch, "_builder", None)
    offset = getattr(batch, "_relative_offset", None)
    direct = (
        builder is not None
        and type(offset) is int
        and not batch._closed
        and batch._key_serializer is None
        and batch._value_serializer is None
    )
    if direct and hasattr(builder, "append_packed"):  # the native builder (`_fast_builder`)
        end = builder.append_packed(offset, key, values.data, values.ends, start, near_limit)
        batch._relative_offset = offset + end - start
        return end
    try:
        for i in range(start, len(values)):
            value = values[i]
            if len(value) > near_limit:
                return i
            if direct:
                if builder.append(offset, None, key, value, _NO_HEADERS) is None:
                    return i
                offset += 1
            elif batch.append(key=key, value=value, timestamp=None, headers=[]) is None:
                return i
        return len(values)
    finally:
        if direct:
            batch._relative_offset = offset
