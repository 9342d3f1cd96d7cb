"""Feeding pages into the input topic and reading the output topics, for people and tests.

`produce` sends pages read by `stream_cleaner.io` (files, directories, WARC, JSON Lines,
stdin) to the input topic as JSON envelopes or as raw HTML; `tail` prints a topic's records.
Neither knows anything of cleaning: they are the crawler's and the consumer's side of the
topics, as documented in topics/README.md.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from ..envelope import envelope_value
from ..io import Source
from .topics import COMPRESSION_TYPES, MAX_MESSAGE_BYTES_DEFAULT, KafkaSettings

Form = Literal["envelope", "raw"]


@dataclass(slots=True)
class ProduceStats:
    """What `produce` did: messages sent and acknowledged, and inputs it could not send."""

    sent: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)


def envelope_message(source: Source) -> tuple[bytes, bytes, list[tuple[str, bytes]]]:
    """A page as the JSON envelope of crawl.raw-html.v1: (key, value, headers).

    The value is `envelope.envelope_value`'s, which the worker reads back with
    `envelope.parse_envelope` as the same document.
    """
    doc = source.doc
    headers = [("content-type", b"application/json")]
    return doc.id.encode("utf-8"), envelope_value(doc), headers


def raw_message(source: Source) -> tuple[bytes, bytes, list[tuple[str, bytes]]]:
    """A page as raw HTML bytes, its id in the key and its url in a header."""
    doc = source.doc
    body = doc.body if isinstance(doc.body, bytes) else doc.body.encode("utf-8")
    headers = [("id", doc.id.encode("utf-8"))]
    if doc.url:
        headers.append(("url", doc.url.encode("utf-8")))
    content_type = doc.content_type or next(
        (v for k, v in doc.headers.items() if k.lower() == "content-type"), None
    )
    if content_type:
        headers.append(("content-type", content_type.encode("utf-8")))
    if doc.status is not None:
        headers.append(("status", str(doc.status).encode("ascii")))
    return doc.id.encode("utf-8"), body, headers


async def produce_async(
    sources: Iterable[Source],
    settings: KafkaSettings,
    topic: str,
    *,
    form: Form = "envelope",
    max_request_bytes: int = MAX_MESSAGE_BYTES_DEFAULT,
    on_sent: Callable[[Source], None] | None = None,
    compression: str = "none",
) -> ProduceStats:
    """Send every page of ``sources`` to ``topic`` and wait until the broker has them all.

    A source that a reader could not read (a broken WARC record, a bad JSON line) has no page
    to send, and a page over ``max_request_bytes`` is not sent: each is listed in ``skipped``
    with its error instead, and the others are sent. ``compression`` is the codec
    of the record batches (none, gzip, snappy, lz4 or zstd).
    """
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import MessageSizeTooLargeError

    from . import patches

    if compression not in COMPRESSION_TYPES:
        raise ValueError(f"compression must be one of {COMPRESSION_TYPES}, not {compression!r}")
    # one copy of a request's record batches, not six (patches.produce_requests); unlike the
    # worker, produce runs with untested client releases too (the gate warns)
    patches.install(allow_untested=True)
    encode = envelope_message if form == "envelope" else raw_message
    producer = AIOKafkaProducer(
        **settings.client_kwargs(),
        acks="all",
        max_request_size=max_request_bytes,
        linger_ms=5,
        compression_type=None if compression == "none" else compression,
    )
    stats = ProduceStats()
    await producer.start()
    try:
        pending = []
        for source in sources:
            if source.doc.error:
                stats.skipped.append(f"{source.origin}: {source.doc.error}")
                continue
            key, value, headers = encode(source)
            try:
                sent = await producer.send(topic, value=value, key=key, headers=headers)
            except MessageSizeTooLargeError:  # one page too large stops no other
                stats.skipped.append(
                    f"{source.origin}: too_large: {len(value)} bytes, over the producer's "
                    f"max_request_bytes ({max_request_bytes})"
                )
                continue
            pending.append(sent)
            stats.sent += 1
            stats.bytes += len(value)
            if on_sent is not None:
                on_sent(source)
            if len(pending) >= 256:
                await asyncio.gather(*pending)
                pending.clear()
        await asyncio.gather(*pending)
    finally:
        await producer.stop()
    return stats


def produce(
    sources: Iterable[Source], settings: KafkaSettings, topic: str, **options: Any
) -> ProduceStats:
    """`produce_async` for synchronous callers."""
    return asyncio.run(produce_async(sources, settings, topic, **options))


async def tail_async(
    settings: KafkaSettings,
    topic: str,
    emit: Callable[[dict[str, Any]], None],
    *,
    from_beginning: bool = True,
    max_records: int | None = None,
    idle_seconds: float | None = 5.0,
) -> int:
    """Read ``topic`` without joining a consumer group and pass each record to ``emit``.

    Each record is a dict: partition, offset, key, headers and the value (parsed JSON when it
    is JSON, else text). Stops after ``max_records`` records or ``idle_seconds`` without a
    record (``None``: never).

    Returns:
        The number of records read.
    """
    from aiokafka import AIOKafkaConsumer, TopicPartition

    from . import patches

    # tail the input topic too, whatever its header names (patches.header_names); unlike the
    # worker, tail runs with untested client releases too (the gate warns)
    patches.install(allow_untested=True)
    consumer = AIOKafkaConsumer(
        **settings.client_kwargs(),
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest" if from_beginning else "latest",
        fetch_max_bytes=MAX_MESSAGE_BYTES_DEFAULT * 2,
        max_partition_fetch_bytes=MAX_MESSAGE_BYTES_DEFAULT,
    )
    await consumer.start()
    count = 0
    try:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            # ask the metadata of every topic: naming a missing one would create it
            await consumer.topics()
            partitions = consumer.partitions_for_topic(topic) or set()
        if not partitions:
            raise RuntimeError(f"topic {topic!r} does not exist")
        consumer.assign([TopicPartition(topic, p) for p in sorted(partitions)])
        last = time.monotonic()
        while max_records is None or count < max_records:
            batches = await consumer.getmany(timeout_ms=200)
            for records in batches.values():
                for record in records:
                    emit(_record_dict(record))
                    count += 1
                    last = time.monotonic()
                    if max_records is not None and count >= max_records:
                        return count
            if idle_seconds is not None and time.monotonic() - last > idle_seconds:
                return count
    finally:
        await consumer.stop()
    return count


def _record_dict(record: Any) -> dict[str, Any]:
    value: Any = record.value
    if value is not None:
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            value = value.decode("utf-8", errors="replace")
    return {
        "partition": record.partition,
        "offset": record.offset,
        "key": record.key.decode("utf-8", errors="replace") if record.key else None,
        "headers": {k: v.decode("utf-8", errors="replace") for k, v in record.headers or ()},
        "value": value,
    }
