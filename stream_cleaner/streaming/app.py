"""The Faust application of the worker: settings, the app, its topics, agents and web views.

``create_app(WorkerSettings.from_env())`` builds an app with the `clean_raw_pages` agent and
the ``/metrics``, ``/healthz`` and ``/readyz`` pages; ``stream-cleaner worker`` runs it, and so
does ``faust -A stream_cleaner.streaming.app worker`` (the module's ``app``, built from the
environment on first use). Topics are never created by Faust (``topic_allow_declare=False``):
``stream-cleaner worker`` creates them with `topics.create_topics` before it starts, or
``stream-cleaner topics create`` does.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .. import __version__
from .metrics import WorkerMetrics
from .settings import SITE_ENV_PREFIX, WEB_PORT_DEFAULT, WORKER_ENV_PREFIX, WorkerSettings  # noqa: F401 - lived here
from .topics import KafkaSettings

if TYPE_CHECKING:
    import faust

    from ..lm import LanguageModel
    from .agents import Send
    from .sitestate import SiteState
    from .warmup import AckGate, WarmupHold

log = logging.getLogger(__name__)

# How long a thread may hold the GIL while another waits for it (Python's default: 5 ms).
# The cleaning thread and the event loop take turns; fewer forced turns cost less: with a
# backlog of the 684 CleanEval test pages one worker cleaned 139-147 documents/s at 20 ms
# against 107-128 at 5 ms and 119-124 at 1 ms (bench/streaming.py --backlog, interleaved
# runs on a busy machine). The loop still gets the GIL within 20 ms: heartbeats are due in
# seconds.
GIL_SWITCH_INTERVAL_SECONDS: Final = 0.02
# Fetched messages waiting for the agent. Faust's default, 4096, held a whole backlog in
# memory (30 pages of 7 MB: 1.4 GB, with the batches above); with 4, 560 MB. The fetcher
# refills the queue from the consumer's prefetched records, in memory: a backlog of CleanEval
# pages drained as fast with 4 or 32 (/tmp/drain.py, three interleaved runs each).
STREAM_BUFFER_EVENTS: Final = 8
# The largest record batch the agent fills (agents.BatchSend), one per topic and partition:
# a CleanEval page's ~200 sentence records are ~50 KB, so batches of 256 KiB made about four
# produce requests where one would do. With 1 MiB batches a drain of 1,368 pages cost the event
# loop 0.68-0.80 ms a page against 0.84-0.86, and the broker (Tansu) 0.32-0.37 against
# 0.40-0.49 (three interleaved drains each; 4 MiB: no better). 1 MiB stays under a Kafka
# broker's default `message.max.bytes` (1 MiB + 12 bytes), though `topics create` allows 14 MiB.
PRODUCER_BATCH_BYTES: Final = 1024 * 1024


@dataclass(slots=True)
class WorkerRuntime:
    """What the agent and the views of one app share: settings, metrics, model, topics.

    Attributes:
        settings: the worker's settings.
        metrics: the worker's metrics.
        executor: the single thread that runs the CPU-bound cleaning off the event loop.
        topics: the four Faust topics by role: ``input``, ``documents``, ``sentences``,
            ``dead_letter``.
        model: the language model, once loaded (`readyz` checks it).
        agent_running: whether the agent's loop is running.
        send: how the agent publishes a record (`agents.Send`); ``None`` means through the
            app's producer (`agents.faust_send`). Tests put an in-memory recorder here.
        settle_gc: whether the agent tunes the garbage collector once started
            (`agents.settle_gc`): set by `run_worker`, which owns the process.
        demo_executor: the web demo's child process (`web.isolation`), when the demo is on.
    """

    settings: WorkerSettings
    metrics: WorkerMetrics
    executor: ThreadPoolExecutor
    topics: dict[str, Any]
    model: LanguageModel | None = None
    agent_running: bool = False
    send: Send | None = None
    settle_gc: bool = False
    demo_executor: Executor | None = None
    site_state: SiteState | None = None
    app: Any = None
    # the warm-up hold (`streaming.warmup`), when ``warmup_seconds`` is set
    warmup: WarmupHold | None = None
    ack_gate: AckGate = field(default_factory=lambda: _warmup().AckGate())
    publish_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # while the agent runs with the hold: clean a batch (or release held pages) and publish
    release: Callable[..., Awaitable[None]] | None = None

    def assignment(self) -> frozenset[Any]:
        """The input partitions this worker holds now (empty before the first assignment)."""
        try:
            return frozenset(self.app.consumer.assignment())
        except Exception:  # no consumer yet, or one that is being rebuilt
            return frozenset()

    @property
    def worker_version(self) -> str:
        return __version__


# app -> its runtime; a Faust App takes no new attributes cleanly, and tests build several apps
_RUNTIMES: dict[int, WorkerRuntime] = {}


def _warmup() -> Any:
    from . import warmup

    return warmup


def runtime_of(app: faust.App) -> WorkerRuntime:
    """The `WorkerRuntime` of an app made by `create_app`."""
    return _RUNTIMES[id(app)]


def broker_urls(kafka: KafkaSettings) -> list[str]:
    """Faust's broker URLs (``kafka://host:port``) for the bootstrap servers."""
    return [f"kafka://{server}" for server in kafka.bootstrap_servers]


def broker_credentials(kafka: KafkaSettings) -> Any:
    """Faust credentials for the SASL/SSL settings, or ``None`` for PLAINTEXT."""
    import faust

    if kafka.security_protocol == "PLAINTEXT":
        return None
    if kafka.security_protocol == "SSL":
        return faust.SSLCredentials(kafka.ssl_context())
    return faust.SASLCredentials(
        username=kafka.sasl_username,
        password=kafka.sasl_password,
        # SASLCredentials picks SASL_SSL when given a context, SASL_PLAINTEXT without
        ssl_context=kafka.ssl_context() if kafka.uses_tls else None,
        mechanism=kafka.sasl_mechanism,
    )


def create_app(settings: WorkerSettings | None = None) -> faust.App:
    """The Faust app of the worker, with its topics, the `clean_raw_pages` agent and views.

    The topics use raw serializers: keys and values are bytes in and bytes out, encoded by
    `records`. Faust creates no topic (``topic_allow_declare=False``) and runs no leader
    election (``topic_disable_leader=True``), so the only topics it touches are the four.

    Args:
        settings: the worker's settings; `WorkerSettings.from_env` when ``None``.

    Returns:
        The app, not started: run it with `run_worker` or ``faust -A ... worker``.
    """
    import faust

    from . import agents, client_versions, header_names, offsets, produce_requests, views

    settings = WorkerSettings.from_env() if settings is None else settings
    # before any patch of their internals: only the releases they were tested with
    client_versions.require_tested(allow_untested=settings.allow_untested_clients)
    header_names.install()  # a header name that is not UTF-8 must not crash the fetch
    settings.check_timeouts()
    datadir = settings.datadir or os.path.join(
        tempfile.gettempdir(), f"stream-cleaner-{settings.group_id}-data"
    )
    app = faust.App(
        settings.group_id,
        broker=broker_urls(settings.kafka),
        broker_credentials=broker_credentials(settings.kafka),
        broker_session_timeout=settings.session_timeout_seconds,
        broker_heartbeat_interval=settings.heartbeat_interval_seconds,
        broker_request_timeout=settings.request_timeout_seconds,
        broker_commit_interval=settings.commit_interval_seconds,
        consumer_max_fetch_size=settings.max_message_bytes,
        producer_max_request_size=settings.max_message_bytes,
        # the agent fills batches itself (agents.BatchSend): larger batches, fewer requests
        producer_max_batch_size=PRODUCER_BATCH_BYTES,
        # input produced before the first worker of a group started is cleaned too
        consumer_auto_offset_reset="earliest",
        # fetched messages waiting for the agent: Faust's default (4096) holds a backlog of
        # large pages in memory
        stream_buffer_maxsize=STREAM_BUFFER_EVENTS,
        producer_acks=-1,  # acknowledged = written to every in-sync replica
        producer_compression_type=None if settings.compression == "none" else settings.compression,
        # The check guards a table's on-disk store against a changelog truncated behind it;
        # the site table's store is in memory (nothing persisted, recovered from the changelog
        # at every start). On Tansu, whose end offset of a partition is the first offset of its
        # last record batch plus one, it crashed a worker that kept a changelog partition
        # through a rebalance after reading that batch to its end.
        recovery_consistency_check=False,
        topic_allow_declare=False,
        topic_disable_leader=True,
        web_enabled=True,
        web_bind=settings.web_host,
        web_host=settings.web_host,
        web_port=settings.web_port,
        datadir=datadir,
        autodiscover=False,
    )
    metrics = WorkerMetrics()
    # commits only the input offsets the agent took and acknowledged, in order
    # (offsets.guarded): without it, Faust committed past pages around rebalances; reads a
    # partition whose log lost its committed offset again per the policy, counted
    app.transport.Consumer = offsets.guarded(
        app.transport.Consumer,
        offset_reset=settings.offset_reset,
        on_offset_reset=metrics.count_offset_reset,
    )
    # fetches of idle partitions must not hold back a busy one's for 1.5 s
    app.transport.Consumer = offsets.fetching_within(
        app.transport.Consumer, settings.fetch_max_wait_seconds
    )
    # produce requests encoded with one copy of their record batches, not six (produce_requests)
    produce_requests.install()
    topic_args = {"key_serializer": "raw", "value_serializer": "raw"}
    topics = {
        "input": app.topic(settings.input_topic, **topic_args),
        "documents": app.topic(settings.documents_topic, **topic_args),
        "sentences": app.topic(settings.sentence_scores_topic, **topic_args),
        "dead_letter": app.topic(settings.dead_letter_topic, **topic_args),
    }
    if settings.rekey_mode != "off":
        topics["site"] = app.topic(settings.site_topic, **topic_args)
        topics["source"] = app.topic(settings.input_topic, settings.site_topic, **topic_args)
    runtime = WorkerRuntime(
        settings=settings,
        metrics=metrics,
        executor=ThreadPoolExecutor(max_workers=1, thread_name_prefix="stream-cleaner-clean"),
        topics=topics,
    )
    runtime.app = app
    if settings.site_templates:
        from .sitestate import TABLE_NAME, SiteState

        table = app.Table(
            TABLE_NAME,
            default=None,
            key_type=bytes,  # bytes: Faust's "raw" codec for keys, values and the changelog
            value_type=bytes,
            partitions=settings.site_partitions,
            # a site's state goes to the partition murmur2 gives its name, where a crawler
            # keying its messages by site puts the site's pages too
            use_partitioner=True,
        )
        runtime.site_state = SiteState(settings.sites, table)
        if settings.warmup_seconds > 0:
            runtime.warmup = _warmup().WarmupHold(
                runtime.site_state.templates,
                seconds=settings.warmup_seconds,
                max_pages=settings.warmup_max_pages,
            )
    _RUNTIMES[id(app)] = runtime
    _add_faust_sensors(app, runtime)
    agents.register_agents(app, runtime)
    if runtime.warmup is not None:
        agents.register_warmup_hooks(app, runtime)
    views.register_views(app, runtime)
    _add_group_metrics(app, runtime)
    return app


def _add_faust_sensors(app: faust.App, runtime: WorkerRuntime) -> None:
    """Faust's own Prometheus sensors, in the worker's registry under ``stream_cleaner_faust_``
    (`sensors`: what Faust sees and the worker does not, latencies in seconds)."""
    from .sensors import faust_monitor

    app.monitor = faust_monitor(runtime.metrics.registry)


async def measure_consumer_lag(
    app: faust.App, topic: str, earliest: dict[Any, int] | None = None
) -> dict[tuple[str, int], int]:
    """The lag of each partition of ``topic`` assigned to this worker, in messages.

    Lag is the partition's end offset minus the offset the group committed last (Faust's own
    record of it: the next offset to read after the committed inputs). The end offset is the
    high watermark of the consumer's last fetch from the partition; it is behind only while
    the partition is paused (Faust pauses partitions whose buffer is full, and all of them
    during a rebalance). A partition with nothing committed yet lags from its earliest offset,
    where the worker starts reading (``auto_offset_reset=earliest``), and so does one whose
    committed offset is past its end: its log lost records, and every record it holds now
    waits (this lag read 0 while 54 such pages were never cleaned).

    Only a partition not fetched yet, or with nothing committed, needs a request to the
    broker (ListOffsets): it goes through the consumer's thread, behind its fetches, and
    takes up to a second or two. Tansu answers ListOffsets for the end with the first offset
    of the last batch plus one, so the fetched high watermark is also the more exact one.

    Args:
        app: the worker's app.
        topic: the input topic.
        earliest: earliest offsets by partition, kept between calls to save requests.

    Returns:
        ``{(topic, partition): lag}``; empty when no consumer runs or nothing is assigned.
    """
    consumer = getattr(app, "_consumer", None)  # never create a consumer just to look at it
    if consumer is None or not consumer.started or consumer.should_stop:
        return {}
    assigned = sorted(tp for tp in consumer.assignment() if tp.topic == topic)
    ends: dict[Any, int] = {}
    for tp in assigned:
        try:
            end = consumer.highwater(tp)
        except Exception:  # revoked meanwhile: aiokafka asserts the assignment
            continue
        if end is not None:
            ends[tp] = end
    unfetched = [tp for tp in assigned if tp not in ends]
    if unfetched:
        ends.update(await consumer.highwaters(*unfetched))
    # Faust's committed offsets, updated by each commit and read from the broker on assignment
    committed = consumer._committed_offset
    earliest = {} if earliest is None else earliest
    # past the end: a log that lost records, whose start may have moved too (asked again)
    lost = [tp for tp in assigned if tp in ends and (committed.get(tp) or 0) > ends[tp]]
    fresh = [tp for tp in assigned if not committed.get(tp) and tp not in earliest]
    if fresh or lost:
        earliest.update(await consumer.earliest_offsets(*fresh, *lost))
    lags: dict[tuple[str, int], int] = {}
    for tp in assigned:
        end = ends.get(tp)
        start = committed.get(tp)
        if not start or tp in lost:
            start = earliest.get(tp) or 0
        if end is not None:
            lags[tp.topic, tp.partition] = max(0, end - start)
    return lags


def _add_group_metrics(app: faust.App, runtime: WorkerRuntime) -> None:
    """Measure the consumer lag every ``lag_interval_seconds``, forget revoked partitions and
    count rebalances."""
    metrics = runtime.metrics
    topic = runtime.settings.input_topic
    earliest: dict[Any, int] = {}

    async def measure_lag() -> None:
        try:
            metrics.set_consumer_lag(await measure_consumer_lag(app, topic, earliest))
        except Exception as exc:  # a broker hiccup must not stop the worker; next time then
            log.warning("could not measure the consumer lag: %r", exc)

    app.timer(runtime.settings.lag_interval_seconds, name="stream_cleaner.consumer_lag")(
        measure_lag
    )

    @app.on_partitions_revoked.connect
    async def forget_lag(app: faust.App, revoked: Any, **kwargs: Any) -> None:
        metrics.forget_consumer_lag((tp.topic, tp.partition) for tp in revoked)
        for tp in revoked:
            earliest.pop(tp, None)

    @app.on_partitions_assigned.connect
    async def count_rebalance(app: faust.App, assigned: Any, **kwargs: Any) -> None:
        metrics.rebalances.inc()


def run_worker(app: faust.App, *, loglevel: str = "info") -> int:
    """Run the app as a Faust worker until SIGTERM or SIGINT; returns the exit code.

    Faust handles the signals: it stops the agent (its unacknowledged batch is not
    committed and will be cleaned again by the next owner of its partitions), commits the
    acknowledged offsets, leaves the group and stops the web server.

    The process's GIL switch interval becomes `GIL_SWITCH_INTERVAL_SECONDS`.
    """
    runtime_of(app).settle_gc = True
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_SECONDS)
    worker = make_worker(app, loglevel=loglevel)
    try:
        worker.execute_from_commandline()
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        runtime = runtime_of(app)
        runtime.executor.shutdown(wait=False, cancel_futures=True)
        if runtime.demo_executor is not None:
            runtime.demo_executor.shutdown(wait=False, cancel_futures=True)
    return 0  # pragma: no cover - execute_from_commandline always raises SystemExit


def make_worker(app: faust.App, *, loglevel: str = "info") -> faust.Worker:
    """The Faust worker `run_worker` runs, without Faust's terminal spinner.

    At ``warning`` and above, the spinner sets the root logger to DEBUG so that every record
    turns it: every debug call of aiokafka, Faust and mode (several per produce request) then
    builds its record, a tenth of the event loop's time in a busy worker.
    """
    import faust

    worker = faust.Worker(app, loglevel=loglevel, quiet=True)
    worker.spinner = None  # read when the root logger is set up, in execute_from_commandline
    return worker


def __getattr__(name: str) -> Any:
    """``app``: the app of `WorkerSettings.from_env`, built on first use (``faust -A``)."""
    if name == "app":
        global app
        app = create_app()
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
