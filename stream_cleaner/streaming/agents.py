"""The `clean_raw_pages` agent: raw pages in, cleaned documents, sentences or dead letters out.

Delivery is at-least-once. The agent takes a batch of events without acknowledging them
(``stream.noack_take``), cleans it in a single worker thread, sends every output record,
waits until the broker has acknowledged all of them, and only then acknowledges the batch's
events. Faust commits acknowledged offsets only, and batches are acknowledged in order, so an
input whose outputs were not written is never committed: after a crash, a SIGTERM in the
middle of a batch or a rebalance, it is cleaned again and its records are published again,
byte for byte (`records` keeps values free of clock and host); downstream can deduplicate.
On SIGTERM Faust first waits for the taken events to be acknowledged, so a clean stop
finishes its batch, commits and leaves the group.

``stream.take`` is not used on purpose: it acknowledges the events of a batch in a
``finally`` clause, which also runs when the agent is cancelled or fails half-way through
publishing, and would let Faust commit inputs whose outputs were lost. ``noack_take`` alone
is not enough either: when it ends it gives the stream back its own acknowledging, and the
stream's background drainer may then acknowledge the events still queued (seen once on
Tansu: a failed publish, then 17 offsets committed). The agent therefore iterates a
``stream.noack()`` clone, which never acknowledges by itself.

If a batch cannot be published (or fails in any other way), nothing after it may be
acknowledged either: Faust commits the first run of consecutive acknowledged offsets wherever
it starts, so a later batch's acknowledgement would commit past the failed one. The agent
stops the worker instead (``app.crash``, exit code 1); the partitions' next owner cleans the
batch again.

Cleaning is CPU-bound; it runs in one thread (`WorkerRuntime.executor`) so the event loop
keeps sending heartbeats and commits. One thread, because the model and the parser are
shared and the GIL would serialise more threads anyway: scale with processes and partitions.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..settings import CleanerSettings
from .records import (
    InputMessage,
    Outcome,
    OutputRecord,
    clean_message,
    dead_letter_from_exception,
    outcome_records,
)

if TYPE_CHECKING:
    import faust

    from ..lm import LanguageModel
    from .app import WorkerRuntime

log = logging.getLogger(__name__)

# the agent's name in the app (``app.agents[AGENT_NAME]``) and in Faust's logs and sensors
AGENT_NAME = "clean_raw_pages"

# (topic role, record) pairs: role is a key of WorkerRuntime.topics
Routed = tuple[str, OutputRecord]
Send = Callable[[str, OutputRecord], Awaitable[Awaitable[Any]]]


def load_model_now(path: str | None) -> LanguageModel:
    """The process-wide model of ``path``, loaded (memory-mapped) now rather than on first use."""
    from ..lm import load_model

    model = load_model(path)
    model.model  # noqa: B018 - the property loads the file
    return model


def load_models_now(settings: CleanerSettings) -> LanguageModel:
    """Every language's model (``settings.models``) loaded now, then the default one, which
    is returned."""
    for path in settings.model_paths().values():
        load_model_now(path)
    return load_model_now(settings.model_path)


def clean_one(
    msg: InputMessage,
    *,
    worker_version: str,
    settings: CleanerSettings,
    model: LanguageModel | None,
    max_bytes: int,
) -> Outcome:
    """`clean_message`, with any exception turned into an ``internal_error`` dead letter.

    One bad message must not stop the agent: `clean_message` already turns bad input into
    dead letters; this catches the bugs.
    """
    try:
        return clean_message(
            msg,
            worker_version=worker_version,
            settings=settings,
            model=model,
            max_bytes=max_bytes,
        )
    except Exception as exc:
        log.exception("cleaning %s failed; it goes to the dead letters", msg.source)
        return outcome_records(
            msg, dead_letter_from_exception(msg, exc), None, worker_version=worker_version
        )


def clean_batch(
    messages: Sequence[InputMessage],
    *,
    worker_version: str,
    settings: CleanerSettings,
    model: LanguageModel | None,
    max_bytes: int,
) -> list[Outcome]:
    """`clean_one` over a batch, in order: what the cleaning thread runs."""
    return [
        clean_one(
            msg,
            worker_version=worker_version,
            settings=settings,
            model=model,
            max_bytes=max_bytes,
        )
        for msg in messages
    ]


def route(outcome: Outcome) -> Iterable[Routed]:
    """Each record of an outcome with the role of its topic, in the order they are sent."""
    if outcome.dead_letter is not None:
        yield "dead_letter", outcome.dead_letter
        return
    assert outcome.document is not None  # an Outcome is a document or a dead letter
    yield "documents", outcome.document
    for sentence in outcome.sentences:
        yield "sentences", sentence


async def publish(outcomes: Sequence[Outcome], send: Send) -> int:
    """Send every record of ``outcomes`` and wait until the broker acknowledged all of them.

    Args:
        outcomes: what the batch became.
        send: ``await send(role, record)`` queues one record and returns an awaitable that
            completes when the broker acknowledged it (`faust_send`).

    Returns:
        The number of records.

    Raises:
        Whatever the producer raised for a record that could not be written; the batch must
        then not be acknowledged.
    """
    pending = [await send(role, record) for outcome in outcomes for role, record in route(outcome)]
    n_records = len(pending)
    flush = getattr(send, "flush", None)
    if flush is not None:
        await flush()  # a batching Send queues records until flushed
        pending = list({id(f): f for f in pending}.values())  # one future per batch
    # gather: every record must be acknowledged; the first failure is raised after all settle
    results = await asyncio.gather(*pending, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return n_records


async def process_batch(
    events: Sequence[Any],
    runtime: WorkerRuntime,
    *,
    send: Send,
    ack: Callable[[Any], Awaitable[Any]],
) -> list[Outcome]:
    """Clean, publish and then acknowledge one batch of Faust events.

    The events are acknowledged only after every record of the batch has been acknowledged
    by the broker; if publishing fails, none is and the exception propagates.
    """
    metrics = runtime.metrics
    messages = [InputMessage.from_faust(event.message) for event in events]
    for msg in messages:
        metrics.observe_received(msg)
    metrics.in_progress.inc(len(messages))
    try:
        loop = asyncio.get_running_loop()
        outcomes = await loop.run_in_executor(
            runtime.executor,
            lambda: clean_batch(
                messages,
                worker_version=runtime.worker_version,
                settings=runtime.settings.cleaner,
                model=runtime.model,
                max_bytes=runtime.settings.max_page_bytes,
            ),
        )
        started = time.perf_counter()
        try:
            await publish(outcomes, send)
        except Exception:
            metrics.publish_failures.inc()
            raise
        metrics.observe_publish(time.perf_counter() - started)
        for event in events:
            await ack(event)
        for outcome in outcomes:
            metrics.observe_outcome(outcome)
        metrics.mark_processed()
        return outcomes
    finally:
        metrics.in_progress.dec(len(messages))


class BatchSend:
    """A `Send` that writes records in batches, one per topic and partition, straight to the
    aiokafka producer under Faust's.

    Per-record sends cost about 70 µs each in the worker (Faust's producer, then aiokafka's
    accumulator); a page of 200 sentences made publishing as slow as cleaning. Records are
    appended to aiokafka batch builders (about 5 µs each) and `flush` hands the batches to
    the producer. Partitions are chosen by aiokafka's default partitioner (murmur2 of the key,
    as Kafka's Java client), so a document's sentences stay together and in order. Faust's
    producer is still the one started, configured and flushed on shutdown.
    """

    def __init__(self, app: faust.App, names: dict[str, str]) -> None:
        from aiokafka.partitioner import DefaultPartitioner

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
        partition = self.key_partition.get((topic, record.key))
        if partition is None:
            partitions = self.partitions.get(topic)
            if partitions is None:
                partitions = self.partitions[topic] = sorted(await producer.partitions_for(topic))
            partition = self.partitioner(record.key, partitions, partitions)
            self.key_partition[topic, record.key] = partition
        slot = (topic, partition)
        headers = list(record.headers)
        # the size check of producer.send, which batches skip: a record over the limit fails
        producer._serialize(record.key, record.value, headers)
        entry = self.open.get(slot)
        if entry is None or (
            entry[0].append(key=record.key, value=record.value, timestamp=None, headers=headers)
            is None
        ):
            if entry is not None:
                await self._send(slot)  # full; an empty batch always takes one record
            entry = self.open[slot] = (
                producer.create_batch(),
                asyncio.get_running_loop().create_future(),
            )
            entry[0].append(key=record.key, value=record.value, timestamp=None, headers=headers)
        return entry[1]

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


def faust_send(app: faust.App, runtime: WorkerRuntime) -> Send:
    """The `Send` that writes to the runtime's topics through the app's producer, in batches."""
    return BatchSend(app, {role: topic.get_topic_name() for role, topic in runtime.topics.items()})


def register_agents(app: faust.App, runtime: WorkerRuntime) -> Any:
    """Declare the `clean_raw_pages` agent on ``app``; returns the agent."""
    settings = runtime.settings

    async def clean_raw_pages(stream: faust.StreamT) -> None:
        """Clean every page of the input topic; see the module's docstring for delivery."""
        loop = asyncio.get_running_loop()
        if runtime.model is None:
            runtime.model = await loop.run_in_executor(
                runtime.executor, load_models_now, settings.cleaner
            )
            runtime.metrics.model_loaded.set(1)
        send = runtime.send or faust_send(app, runtime)
        runtime.agent_running = True
        try:
            # noack(): the stream never acknowledges by itself, not even once noack_take has
            # ended and restored the stream's own setting (see the module's docstring)
            manual = stream.noack()
            batches = manual.noack_take(settings.batch_size, within=settings.batch_within_seconds)
            async for events in batches:
                try:
                    await process_batch(events, runtime, send=send, ack=manual.ack)
                except Exception as exc:
                    # Faust commits the first run of consecutive acknowledged offsets, wherever
                    # it starts: were a later batch acknowledged, the commit would skip this
                    # one. So nothing more is acknowledged in this process: the worker stops
                    # with an error, and the next owner of the partitions cleans this batch.
                    log.critical("a batch failed, stopping the worker: %r", exc)
                    await app.crash(exc)
                    return
        finally:
            runtime.agent_running = False

    return app.agent(runtime.topics["input"], name=AGENT_NAME)(clean_raw_pages)
