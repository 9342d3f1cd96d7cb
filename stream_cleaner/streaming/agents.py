"""The `clean_raw_pages` agent: raw pages in, cleaned documents, sentences or dead letters out.

Delivery is at-least-once. The agent takes a batch of events without acknowledging them
(`take_events`, after Faust's ``stream.noack_take``), cleans it in a single worker thread,
sends every output record, waits until the broker has acknowledged all of them, and only then
acknowledges the batch's events. The worker's consumer (`patches.offsets.guarded`) commits only the
offsets the agent took and acknowledged, in order from the committed one, and batches are
acknowledged in order, so an input whose outputs were not written is never committed: after a
crash, a SIGTERM in the middle of a batch or a rebalance, it is cleaned again and its records
are published again, byte for byte (`records` keeps values free of clock and host); downstream
can deduplicate.
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

Batches are pipelined: while batch N is published and waits for the broker's
acknowledgements (a task on the event loop), batch N+1 is already being cleaned. Batch N+1 is
published only after batch N was acknowledged, so the order above holds. Batch N's records
are appended to the producer's batches (CPU work on the loop, about 10 ms for 16 pages) only
once batch N+1 is in the cleaning thread, or after `PUBLISH_DEFER_SECONDS` when no batch
comes: appended first, they kept the cleaning thread waiting for its next batch (a tenth of
the worker's time, measured with a backlog).

Cleaning is CPU-bound; it runs in one thread (`WorkerRuntime.executor`) so the event loop
keeps sending heartbeats and commits. One thread, because the model and the parser are
shared and the GIL would serialise more threads anyway: scale with processes and partitions.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..document import RawDocument
from ..settings import CleanerSettings
from .patches.batches import BatchSend
from .records import (
    InputMessage,
    Outcome,
    OutputRecord,
    clean_message,
    dead_letter_from_exception,
    decode_input,
    forward_outcome,
    outcome_records,
    site_to_rekey,
)
from .topics import MAX_MESSAGE_BYTES_DEFAULT

if TYPE_CHECKING:
    import faust

    from ..lm import LanguageModel
    from ..sites import SiteTemplates
    from .runtime import Send, WorkerRuntime
    from .warmup import WarmupHold

log = logging.getLogger(__name__)

# allocations between two collections of the youngest generation (Python's default is 700)
GC_YOUNG_THRESHOLD = 20_000

# the agent's name in the app (``app.agents[AGENT_NAME]``) and in Faust's logs and sensors
AGENT_NAME = "clean_raw_pages"

# the longest a cleaned batch waits for the next one to enter the cleaning thread before it
# is published (see the module's docstring)
PUBLISH_DEFER_SECONDS = 0.02
# how often an agent waiting for its first event checks whether the worker is stopping
STOP_CHECK_SECONDS = 1.0

# tasks that stop the worker after a failed batch, referenced until they are done
_CRASHING: set[asyncio.Task[Any]] = set()

# (topic role, record) pairs: role is a key of WorkerRuntime.topics
Routed = tuple[str, OutputRecord]


def load_model_now(path: str | None) -> LanguageModel:
    """The process-wide model of ``path``, loaded (memory-mapped) now rather than on first use."""
    from ..lm import load_model

    model = load_model(path)
    model.model  # noqa: B018 - the property loads the file
    return model


def settle_gc() -> None:
    """Tune the cyclic garbage collector for a long-running worker, once it has started.

    Everything made at start-up (Faust, aiokafka, the app, the model's wrappers) lives as long
    as the process: `gc.freeze` takes it out of every later collection. A page then makes
    hundreds of thousands of small objects that reference counting frees; collecting the
    youngest generation every `GC_YOUNG_THRESHOLD` allocations instead of Python's 700 makes
    far fewer pointless passes. On the CleanEval test pages this took the worker's time in the
    collector from 0.50 to 0.09 s per 684 pages (about 6 % of its CPU time).
    """
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)


def load_models_now(settings: CleanerSettings) -> LanguageModel:
    """Every language's model (``settings.models``) loaded now, then the default one, which
    is returned, and the rest of the cleaner warmed up (`warm_up`)."""
    for path in settings.model_paths().values():
        load_model_now(path)
    model = load_model_now(settings.model_path)
    warm_up(settings, model)
    return model


# bundled pages cleaned once at start: English, and a language without a model
WARM_UP_SAMPLES = ("news-article.html", "german-news.html")


def warm_up(settings: CleanerSettings, model: LanguageModel) -> None:
    """Clean the `WARM_UP_SAMPLES` once, so that what the first pages would load lazily is
    loaded before the worker reports ready: the language identifier's model, the block labellers,
    the modules imported on first use. Without it the first batch paid about 0.4 s for them.
    """
    from importlib import resources

    from ..pipeline import clean_document

    samples = resources.files("stream_cleaner") / "samples"
    for name in WARM_UP_SAMPLES:
        clean_document((samples / name).read_bytes(), settings=settings, model=model)


def clean_one(
    msg: InputMessage,
    *,
    worker_version: str,
    settings: CleanerSettings,
    model: LanguageModel | None,
    max_bytes: int,
    sites: SiteTemplates | None = None,
    rekey: str = "off",
    learn_site: bool = True,
    max_record_bytes: int = MAX_MESSAGE_BYTES_DEFAULT,
) -> Outcome:
    """`clean_message`, with any exception turned into an ``internal_error`` dead letter.

    One bad message must not stop the agent: `clean_message` already turns bad input into
    dead letters; this catches the bugs. With ``rekey`` (``missing`` or ``all``, see
    `records.site_to_rekey`), a message not keyed by its site is not cleaned here but
    forwarded to the site topic keyed by its site.
    """
    try:
        if rekey != "off":
            site = site_to_rekey(
                msg,
                rekey=rekey,
                site_key=sites.settings.site_key if sites is not None else "host",
                max_bytes=max_bytes,
            )
            if site is not None:
                return forward_outcome(msg, site)
        return clean_message(
            msg,
            worker_version=worker_version,
            settings=settings,
            model=model,
            max_bytes=max_bytes,
            sites=sites,
            learn_site=learn_site,
            max_record_bytes=max_record_bytes,
        )
    except Exception as exc:
        log.exception("cleaning %s failed; it goes to the dead letters", msg.source)
        return outcome_records(
            msg, dead_letter_from_exception(msg, exc), None, worker_version=worker_version,
            max_record_bytes=max_record_bytes,
        )  # fmt: skip


def clean_batch(
    messages: Sequence[InputMessage],
    *,
    worker_version: str,
    settings: CleanerSettings,
    model: LanguageModel | None,
    max_bytes: int,
    sites: SiteTemplates | None = None,
    rekey: str = "off",
    max_record_bytes: int = MAX_MESSAGE_BYTES_DEFAULT,
) -> list[Outcome]:
    """`clean_one` over a batch, in order: what the cleaning thread runs."""
    return [
        clean_one(
            msg,
            worker_version=worker_version,
            settings=settings,
            model=model,
            max_bytes=max_bytes,
            sites=sites,
            rekey=rekey,
            max_record_bytes=max_record_bytes,
        )
        for msg in messages
    ]


def clean_holding(
    messages: Sequence[InputMessage],
    tokens: Sequence[Any],
    *,
    hold: WarmupHold,
    worker_version: str,
    settings: CleanerSettings,
    model: LanguageModel | None,
    max_bytes: int,
    rekey: str = "off",
    release_only: bool = False,
    everything: bool = False,
    max_record_bytes: int = MAX_MESSAGE_BYTES_DEFAULT,
) -> list[tuple[Any, Outcome]]:
    """`clean_batch` with the warm-up hold: a cold site's pages are learnt and held; the held
    pages whose time has come (`WarmupHold.release`) are cleaned after the batch.

    Returns:
        ``(token, outcome)`` for every message cleaned or forwarded now, in order: the
        batch's, then the released ones'.
    """
    sites = hold.templates
    options = {
        "worker_version": worker_version, "settings": settings, "model": model,
        "max_bytes": max_bytes, "sites": sites, "max_record_bytes": max_record_bytes,
    }  # fmt: skip
    out: list[tuple[Any, Outcome]] = []
    for token, msg in zip(tokens, messages, strict=True):
        verdict = "clean"
        try:
            site = site_to_rekey(msg, rekey=rekey, site_key=sites.settings.site_key,
                                 max_bytes=max_bytes)  # fmt: skip
            if site is not None:
                out.append((token, forward_outcome(msg, site)))
                continue
            result = decode_input(msg, max_bytes=max_bytes)
            if isinstance(result, RawDocument):
                verdict = hold.admit(token, msg, result, settings)
        except Exception:  # clean_one below makes the dead letter of whatever this was
            log.exception("holding %s failed; it is cleaned now", msg.source)
        if verdict != "held":
            out.append((token, clean_one(msg, **options, learn_site=verdict == "clean")))
    for held, _ in hold.release(everything=everything):
        out.append((held.token, clean_one(held.msg, **options, learn_site=False)))
    return out


def route(outcome: Outcome) -> Iterable[Routed]:
    """Each record of an outcome with the role of its topic, in the order they are sent."""
    if outcome.dead_letter is not None:
        yield "dead_letter", outcome.dead_letter
        return
    if outcome.forward is not None:
        yield "site", outcome.forward
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
    send_values = getattr(send, "send_values", None)
    if send_values is None:
        pending = [
            await send(role, record) for outcome in outcomes for role, record in route(outcome)
        ]
        n_records = len(pending)
    else:  # a batching Send takes a document's sentence records in one call
        pending, n_records = [], 0
        for outcome in outcomes:
            if outcome.forward is not None:
                pending.append(await send("site", outcome.forward))
                n_records += 1
                continue
            head = outcome.dead_letter or outcome.document
            assert head is not None  # an Outcome is a document, a dead letter or a forward
            role = "dead_letter" if outcome.is_dead_letter else "documents"
            pending.append(await send(role, head))
            values = outcome.sentence_values
            if values:
                pending.extend(await send_values("sentences", head.key, values))
            n_records += 1 + len(values)
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


async def clean_events(
    events: Sequence[Any], runtime: WorkerRuntime, *, submitted: asyncio.Event | None = None
) -> list[Outcome]:
    """Count a batch of Faust events in and clean it in the cleaning thread.

    The events count as in progress from here until `publish_and_ack` settles them.
    ``submitted`` is set once the batch is in the cleaning thread's queue.
    """
    metrics = runtime.metrics
    messages = [InputMessage.from_faust(event.message) for event in events]
    for msg in messages:
        metrics.observe_received(msg)
    metrics.in_progress.inc(len(messages))
    site_state = runtime.site_state
    if site_state is not None:  # a new assignment: the statistics of its sites, from the table
        site_state.sync(runtime.assignment())
    try:
        cleaning = asyncio.get_running_loop().run_in_executor(
            runtime.executor,
            lambda: clean_batch(
                messages,
                worker_version=runtime.worker_version,
                settings=runtime.settings.cleaner,
                model=runtime.model,
                max_bytes=runtime.settings.max_page_bytes,
                sites=site_state.templates if site_state is not None else None,
                rekey=runtime.settings.rekey_mode,
                max_record_bytes=runtime.settings.max_message_bytes,
            ),
        )
        if submitted is not None:
            submitted.set()
        outcomes = await cleaning
    except BaseException:
        metrics.in_progress.dec(len(messages))
        raise
    finally:
        if submitted is not None:
            submitted.set()
    if site_state is not None:
        site_state.save()  # to the table, whose changelog survives the worker
        metrics.observe_sites(site_state.templates)
    return outcomes


async def clean_events_holding(
    events: Sequence[Any], runtime: WorkerRuntime, *, everything: bool = False
) -> tuple[list[Any], list[Outcome]]:
    """`clean_events` with the warm-up hold (`clean_holding`): the events whose outcomes are
    ready (held ones wait in the hold) and those outcomes. ``events`` may be empty: then only
    the held pages whose time has come are cleaned (all of them with ``everything``)."""
    metrics = runtime.metrics
    hold = runtime.warmup
    assert hold is not None and runtime.site_state is not None
    messages = [InputMessage.from_faust(event.message) for event in events]
    for msg in messages:
        metrics.observe_received(msg)
    metrics.in_progress.inc(len(messages))
    runtime.site_state.sync(runtime.assignment())
    done = await asyncio.get_running_loop().run_in_executor(
        runtime.executor,
        lambda: clean_holding(
            messages,
            events,
            hold=hold,
            worker_version=runtime.worker_version,
            settings=runtime.settings.cleaner,
            model=runtime.model,
            max_bytes=runtime.settings.max_page_bytes,
            rekey=runtime.settings.rekey_mode,
            everything=everything,
            max_record_bytes=runtime.settings.max_message_bytes,
        ),
    )
    runtime.site_state.save()
    metrics.observe_sites(runtime.site_state.templates)
    metrics.observe_warmup(hold)
    return [token for token, _ in done], [outcome for _, outcome in done]


async def publish_and_ack(
    events: Sequence[Any],
    outcomes: Sequence[Outcome],
    runtime: WorkerRuntime,
    *,
    send: Send,
    ack: Callable[[Any], Awaitable[Any]],
    not_before: asyncio.Event | None = None,
) -> None:
    """Publish a cleaned batch, then acknowledge its events; count its outcomes.

    The events are acknowledged only after every record of the batch has been acknowledged
    by the broker; if publishing fails, none is and the exception propagates. With
    ``not_before``, publishing waits until it is set, `PUBLISH_DEFER_SECONDS` at most.
    """
    metrics = runtime.metrics
    try:
        if not_before is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(not_before.wait(), PUBLISH_DEFER_SECONDS)
        started = time.perf_counter()
        try:
            await publish(outcomes, send)
        except Exception:
            metrics.publish_failures.inc()
            raise
        metrics.observe_publish(time.perf_counter() - started)
        for event in events:
            await ack(event)
        metrics.observe_outcomes(outcomes)
        metrics.mark_processed()
    finally:
        metrics.in_progress.dec(len(events))


async def process_batch(
    events: Sequence[Any],
    runtime: WorkerRuntime,
    *,
    send: Send,
    ack: Callable[[Any], Awaitable[Any]],
) -> list[Outcome]:
    """Clean, publish and then acknowledge one batch of Faust events: `clean_events` then
    `publish_and_ack`, one after the other (the agent overlaps them across batches)."""
    outcomes = await clean_events(events, runtime)
    await publish_and_ack(events, outcomes, runtime, send=send, ack=ack)
    return outcomes


def faust_send(app: faust.App, runtime: WorkerRuntime) -> Send:
    """The `Send` that writes to the runtime's topics through the app's producer, in batches."""
    return BatchSend(
        app,
        {
            role: topic.get_topic_name()
            for role, topic in runtime.topics.items()
            if role != "source"  # the agent's two topics, read and never written
        },
    )


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
            if runtime.settle_gc:
                settle_gc()
        send = runtime.send or faust_send(app, runtime)
        runtime.agent_running = True
        holding = runtime.warmup is not None
        watcher: asyncio.Future[None] | None = None
        try:
            # noack(): the stream never acknowledges by itself, not even once take_events has
            # ended and restored the stream's own setting (see the module's docstring)
            manual = stream.noack()
            batches = take_events(
                manual,
                settings.batch_size,
                settings.batch_max_bytes,
                settings.batch_within_seconds,
            )
            # Batch N is published and acknowledged (a task) while batch N+1 is cleaned: the
            # cleaning thread does not sit idle during the broker's round trip. Publishing
            # stays one batch at a time and in order, and batch N+1 is published only once
            # batch N has been acknowledged: a failed batch stops the worker before anything
            # after it is acknowledged.
            publishing: asyncio.Task[None] | None = None
            # set when the next batch is in the cleaning thread: the last batch's publishing
            # waits for it (PUBLISH_DEFER_SECONDS at most)
            next_in_thread = asyncio.Event()
            ack = _gated_ack(runtime, manual.ack) if holding else manual.ack
            runtime.release = lambda events=(), everything=False: _clean_and_publish(
                events, runtime, send=send, ack=ack, everything=everything
            )
            if holding:
                watcher = asyncio.ensure_future(_watch_warmup(app, runtime))
            try:
                async for events in batches:
                    if holding:  # held pages are released the same way (_watch_warmup)
                        publishing = asyncio.create_task(runtime.release(events))
                        publishing.add_done_callback(lambda task: _crash_on_failure(app, task))
                        if not await _published(publishing):
                            return
                        continue
                    try:
                        outcomes = await clean_events(events, runtime, submitted=next_in_thread)
                    except Exception as exc:  # a bug around the cleaning: as a failed publish
                        _stop_worker(app, exc)
                        return
                    if publishing is not None and not await _published(publishing):
                        return
                    next_in_thread = asyncio.Event()
                    published = publish_and_ack(
                        events, outcomes, runtime, send=send, ack=manual.ack,
                        not_before=next_in_thread,
                    )  # fmt: skip
                    publishing = asyncio.create_task(published)
                    # a failure stops the worker now, not when the next batch comes
                    publishing.add_done_callback(lambda task: _crash_on_failure(app, task))
            finally:
                if publishing is not None and not publishing.done():
                    # stopping (SIGTERM, rebalance): let the last batch finish and be acked
                    await asyncio.wait([publishing])
                if holding and len(runtime.warmup or ()):
                    # stopping: the held pages are cleaned now, without waiting any more
                    releasing = asyncio.ensure_future(runtime.release((), True))
                    await asyncio.wait([releasing])
        finally:
            runtime.agent_running = False
            runtime.release = None
            if watcher is not None:
                watcher.cancel()

    # with re-keying, the agent reads the site topic too: the same partition numbers of both
    # go to one worker (Faust co-partitions the topics of an agent), so a site's pages meet
    source = runtime.topics.get("source", runtime.topics["input"])
    return app.agent(source, name=AGENT_NAME)(clean_raw_pages)


async def take_events(
    stream: Any, max_events: int, max_bytes: int, within: float
) -> AsyncIterator[list[Any]]:
    """Batches of a ``stream.noack()`` stream's events, never acknowledged here.

    A batch ends at ``max_events`` events, or as soon as its messages' keys and values reach
    ``max_bytes`` (a batch always has at least one event), or ``within`` seconds after its
    first event arrived, whichever comes first; with ``within`` 0, a batch is whatever has
    arrived when the agent asks for one. Pages are in memory from the moment they are taken
    until their batch is acknowledged, with what cleaning made of them (several times the
    page): 32 pages of 2 MB a batch took a worker to 1.5 GB.

    The next batch fills while the agent works on the last one (a processor appends each
    event of the stream to a buffer, and waits while the buffer is full), so a busy cleaning
    thread finds its next batch ready: filling a batch only when it was asked for, as
    Faust's ``noack_take`` does, left the thread idle for about 9 ms of every 170.

    Every event taken is told to the consumer's ``take`` (`patches.offsets.guarded`), which counts
    only acknowledgements of events the agent took.
    """
    from mode.utils.aiter import aiter

    loop = asyncio.get_running_loop()
    take = getattr(stream.app.consumer, "take", None)
    buffer: list[Any] = []
    size = 0
    first_at = 0.0  # when the buffer's first event arrived, on the loop's clock
    arrived = asyncio.Event()  # the buffer holds an event
    full = asyncio.Event()  # the buffer holds a whole batch
    room = asyncio.Event()  # the buffer is not full
    room.set()

    async def add_to_buffer(value: Any) -> Any:
        nonlocal size, first_at
        try:
            if not room.is_set():  # a whole batch waits for the agent: so does this event
                await stream.wait(room)
            event = stream.current_event
            if event is None:
                raise RuntimeError("a value without its event reached the batch")
            if take is not None:
                take(event.message)
            if not buffer:
                first_at = loop.time()
                arrived.set()
            buffer.append(event)
            message = event.message
            size += len(message.key or b"") + len(message.value or b"")
            if len(buffer) >= max_events or size >= max_bytes:
                full.set()
                room.clear()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("adding an event to the batch failed")
            await stream.crash(exc)
        return value

    stream_enable_acks = stream.enable_acks
    stream.enable_acks = False
    stream.add_processor(add_to_buffer)
    stream._enable_passive(aiter(stream.channel))
    try:
        while not stream.should_stop:
            if not buffer:
                await stream.wait_for_stopped(arrived, timeout=STOP_CHECK_SECONDS)
                continue
            if not full.is_set():
                left = first_at + within - loop.time()
                if left > 0:
                    await stream.wait_for_stopped(full, timeout=left)
                    continue
            batch = buffer[:]
            buffer.clear()
            size = 0
            arrived.clear()
            full.clear()
            room.set()
            yield batch
    finally:
        stream.enable_acks = stream_enable_acks
        stream._processors.remove(add_to_buffer)


def _gated_ack(
    runtime: WorkerRuntime, ack: Callable[[Any], Awaitable[Any]]
) -> Callable[[Any], Awaitable[None]]:
    """An ``ack`` that lets events through in their partition's order (`warmup.AckGate`)."""
    gate = runtime.ack_gate

    async def gated(event: Any) -> None:
        for ready in gate.done((event,)):
            await ack(ready)

    return gated


async def _clean_and_publish(
    events: Sequence[Any],
    runtime: WorkerRuntime,
    *,
    send: Send,
    ack: Callable[[Any], Awaitable[Any]],
    everything: bool = False,
) -> None:
    """With the warm-up hold: clean a batch (or only release held pages), publish what is
    ready, acknowledge in partition order. One at a time (the agent and the timer share it)."""
    async with runtime.publish_lock:
        runtime.ack_gate.add(events)
        done, outcomes = await clean_events_holding(events, runtime, everything=everything)
        await publish_and_ack(done, outcomes, runtime, send=send, ack=ack)


def register_warmup_hooks(app: faust.App, runtime: WorkerRuntime) -> None:
    """Let go of the held pages of partitions the worker lost in a rebalance (their next
    owner reads them again)."""
    hold = runtime.warmup
    assert hold is not None

    @app.on_partitions_revoked.connect
    async def let_go(app: faust.App, revoked: Any, **kwargs: Any) -> None:
        lost = {(tp.topic, tp.partition) for tp in revoked}
        async with runtime.publish_lock:  # not while a batch is being cleaned or published
            gone = await asyncio.get_running_loop().run_in_executor(
                runtime.executor,
                hold.forget,
                lambda held: (held.msg.topic, held.msg.partition) not in lost,
            )
            runtime.ack_gate.forget(lambda tp: tp not in lost)
            runtime.metrics.in_progress.dec(gone)
            runtime.metrics.observe_warmup(hold)


async def _watch_warmup(app: faust.App, runtime: WorkerRuntime, interval: float = 0.25) -> None:
    """While the agent runs with the hold: clean the held pages that waited long enough,
    also when no input comes; and every held page as soon as the worker stops or its group
    rebalances, because Faust then waits for every taken message to be acknowledged.

    A task of its own, not a Faust timer: timers end as the app begins to stop, before Faust
    waits for the acknowledgements."""
    hold = runtime.warmup
    assert hold is not None
    while runtime.release is not None:
        leaving = bool(app.should_stop or getattr(app, "rebalancing", False))
        if len(hold) and (leaving or hold.due()):
            release = runtime.release
            task = asyncio.ensure_future(release((), leaving))
            task.add_done_callback(lambda task: _crash_on_failure(app, task))
            await asyncio.wait([task])
        await asyncio.sleep(interval)


async def _published(task: asyncio.Task[None]) -> bool:
    """Wait for a batch's publishing task; ``False`` if it failed (the worker is stopping)."""
    await asyncio.wait([task])
    return not task.cancelled() and task.exception() is None


def _crash_on_failure(app: faust.App, task: asyncio.Task[None]) -> None:
    """Stop the worker when a batch could not be published or acknowledged.

    Faust commits the first run of consecutive acknowledged offsets, wherever it starts: were
    a later batch acknowledged, the commit would skip this one. So nothing more is
    acknowledged in this process: the worker stops with an error, and the next owner of the
    partitions cleans this batch again.
    """
    if task.cancelled():
        return
    exc = task.exception()
    if isinstance(exc, Exception):
        _stop_worker(app, exc)


def _stop_worker(app: faust.App, exc: Exception) -> None:
    """Crash the app (exit code 1) without acknowledging anything more."""
    log.critical("a batch failed, stopping the worker: %r", exc, exc_info=exc)
    crashing = asyncio.get_running_loop().create_task(app.crash(exc))
    _CRASHING.add(crashing)  # the loop keeps weak references to tasks only
    crashing.add_done_callback(_CRASHING.discard)
