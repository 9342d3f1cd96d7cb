"""The Faust application of the worker: settings, the app, its topics, agents and web views.

``create_app(WorkerSettings.from_env())`` builds an app with the `clean_raw_pages` agent and
the ``/metrics``, ``/healthz`` and ``/readyz`` pages; ``stream-cleaner worker`` runs it, and so
does ``faust -A stream_cleaner.streaming.app worker`` (the module's ``app``, built from the
environment on first use). Topics are never created by Faust (``topic_allow_declare=False``):
``stream-cleaner worker`` creates them with `topics.create_topics` before it starts, or
``stream-cleaner topics create`` does.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from .metrics import WorkerMetrics
from .runtime import WorkerRuntime, attach, runtime_of, warmup_module
from .settings import (
    GIL_SWITCH_INTERVAL_SECONDS,
    PRODUCER_BATCH_BYTES,
    STREAM_BUFFER_EVENTS,
    WorkerSettings,
)
from .topics import (
    KafkaSettings,
)

if TYPE_CHECKING:
    import faust


log = logging.getLogger(__name__)


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

    from . import agents, patches, views

    settings = WorkerSettings.from_env() if settings is None else settings
    # before Faust builds anything: only the client releases the patches were tested with
    patches.require_tested(allow_untested=settings.allow_untested_clients)
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
        # the agent fills batches itself (patches.batches.BatchSend): larger batches, fewer
        # requests
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
    # every patch of aiokafka's and faust-streaming's internals, the app's consumer among them
    patches.install(
        app,
        allow_untested=settings.allow_untested_clients,
        offset_reset=settings.offset_reset,
        on_offset_reset=metrics.count_offset_reset,
        fetch_max_wait_seconds=settings.fetch_max_wait_seconds,
    )
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
            runtime.warmup = warmup_module().WarmupHold(
                runtime.site_state.templates,
                seconds=settings.warmup_seconds,
                max_pages=settings.warmup_max_pages,
            )
    attach(app, runtime)
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
