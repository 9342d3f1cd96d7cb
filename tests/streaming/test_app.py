"""Worker settings, the Faust app they build, the metrics and the views: no broker needed."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys

import orjson
import pytest
from prometheus_client import CollectorRegistry, generate_latest

from stream_cleaner.cli import parse_args
from stream_cleaner.streaming.app import (
    WorkerSettings,
    broker_credentials,
    broker_urls,
    create_app,
    measure_consumer_lag,
    runtime_of,
)
from stream_cleaner.streaming.metrics import BulkHistogram, WorkerMetrics
from stream_cleaner.streaming.records import InputMessage, clean_message, forward_outcome
from stream_cleaner.streaming.sensors import faust_monitor
from stream_cleaner.streaming.topics import KafkaSettings
from stream_cleaner.streaming.views import readiness

from ..conftest import DATA

CA_FILE = str(DATA / "test-ca.pem")


def test_worker_settings_from_env():
    settings = WorkerSettings.from_env(
        {
            "STREAM_CLEANER_WORKER_GROUP_ID": "cleaners",
            "STREAM_CLEANER_WORKER_BATCH_SIZE": "32",
            "STREAM_CLEANER_WORKER_BATCH_WITHIN_SECONDS": "0.25",
            "STREAM_CLEANER_WORKER_BATCH_MAX_BYTES": "1048576",
            "STREAM_CLEANER_WORKER_INPUT_TOPIC": "crawl.pages.v2",
            "STREAM_CLEANER_WORKER_WEB_PORT": "",
            "STREAM_CLEANER_KAFKA_BOOTSTRAP_SERVERS": "k1:9092,k2:9092",
            "STREAM_CLEANER_MAX_SENTENCE_PERPLEXITY": "500",
        }
    )
    assert settings.group_id == "cleaners"
    assert settings.batch_size == 32
    assert settings.batch_within_seconds == 0.25
    assert settings.batch_max_bytes == 1048576
    assert settings.input_topic == "crawl.pages.v2"
    assert settings.web_port == 6066
    assert settings.web.enabled is False  # the demo and API are opt-in on a worker
    assert WorkerSettings.from_env({"STREAM_CLEANER_WEB_ENABLED": "true"}).web.enabled is True
    assert settings.kafka.bootstrap_servers == ("k1:9092", "k2:9092")
    assert settings.cleaner.max_sentence_perplexity == 500
    assert settings.topic_specs()[0].name == "crawl.pages.v2"


def test_worker_topics_with_site_templates_are_every_topic_it_uses():
    """The four, then with site templates the table's changelog (compacted, kept for ever)
    and, when re-keying, the site topic; both partitioned as the input."""
    plain = WorkerSettings(group_id="g1")
    assert [spec.name for spec in plain.topic_specs()] == list(plain.topic_names)
    specs = plain.with_options(site_templates=True).topic_specs(partitions=6)
    site_topics = ["g1-site-templates-changelog", "crawl.raw-html.by-site.v1"]
    assert [spec.name for spec in specs] == [*plain.topic_names, *site_topics]
    changelog = specs[4]
    assert (changelog.partitions, changelog.retention_ms) == (6, -1)
    assert changelog.cleanup_policy == "compact"
    assert specs[5].partitions == 6
    no_rekey = plain.with_options(site_templates=True, rekey="off").topic_specs()
    assert [spec.name for spec in no_rekey][4:] == ["g1-site-templates-changelog"]


@pytest.mark.parametrize(
    "changes",
    [
        {"batch_size": 0},
        {"batch_within_seconds": -0.5},
        {"batch_max_bytes": 0},
        {"web_port": 0},
        {"group_id": ""},
        {"heartbeat_interval_seconds": 40.0},
        {"fetch_max_wait_seconds": float("nan")},
        {"fetch_max_wait_seconds": 0},
        {"compression": "brotli"},
        {"broker_wait_seconds": -1},
        {"documents_topic": "crawl.raw-html.v1"},
    ],
)
def test_worker_settings_refuse_bad_values(changes):
    with pytest.raises(ValueError):
        WorkerSettings(**changes)


def test_a_session_timeout_above_the_request_timeout_is_refused_before_faust_sees_it():
    with pytest.raises(ValueError, match=r"session_timeout_seconds \(45\) must not exceed"):
        WorkerSettings(session_timeout_seconds=45.0).check_timeouts()  # requests: 40 s
    # built in steps (the environment's request timeout, then a flag's session timeout)
    settings = WorkerSettings(request_timeout_seconds=8).with_options(session_timeout_seconds=6)
    settings.check_timeouts()


def test_broker_urls_and_credentials():
    pytest.importorskip("faust")
    import faust

    assert broker_urls(KafkaSettings(bootstrap_servers="a:1,b:2")) == ["kafka://a:1", "kafka://b:2"]
    assert broker_credentials(KafkaSettings()) is None
    ssl = broker_credentials(KafkaSettings(security_protocol="SSL", ssl_cafile=CA_FILE))
    assert isinstance(ssl, faust.SSLCredentials)
    sasl = broker_credentials(
        KafkaSettings(
            security_protocol="SASL_SSL",
            sasl_mechanism="SCRAM-SHA-256",
            sasl_username="cleaner",
            sasl_password="s3cret",
            ssl_cafile=CA_FILE,
        )
    )
    assert isinstance(sasl, faust.SASLCredentials)
    assert sasl.protocol.value == "SASL_SSL"
    assert sasl.mechanism.value == "SCRAM-SHA-256"
    plain = broker_credentials(
        KafkaSettings(security_protocol="SASL_PLAINTEXT", sasl_username="u", sasl_password="p")
    )
    assert plain.protocol.value == "SASL_PLAINTEXT"
    assert plain.mechanism.value == "PLAIN"


def test_create_app_configures_faust():
    pytest.importorskip("faust")
    settings = WorkerSettings(
        kafka=KafkaSettings(bootstrap_servers="k1:9092"),
        group_id="g1",
        web_host="127.0.0.1",
        web_port=7070,
        session_timeout_seconds=6,
        heartbeat_interval_seconds=1,
    )
    app = create_app(settings)
    conf = app.conf
    assert conf.id == "g1"
    assert [str(url) for url in conf.broker] == ["kafka://k1:9092"]
    assert conf.topic_disable_leader is True
    assert conf.topic_allow_declare is False
    assert conf.broker_session_timeout == 6
    assert conf.broker_heartbeat_interval == 1
    assert (conf.web_bind, conf.web_port) == ("127.0.0.1", 7070)
    runtime = runtime_of(app)
    assert {t.get_topic_name() for t in runtime.topics.values()} == set(settings.topic_names)
    assert list(app.agents) == ["clean_raw_pages"]
    # not started: not ready, and saying why
    state = readiness(app, runtime)
    assert state["ready"] is False
    assert state["model_loaded"] is False


def test_metrics_count_an_outcome(tiny_model):
    metrics = WorkerMetrics()
    msg = InputMessage(
        topic="in",
        partition=0,
        offset=1,
        key=b"doc-1",
        value=b"<p>A river is a natural stream of water. It flows towards an ocean.</p><p>| |</p>",
    )
    outcome = clean_message(msg, worker_version="0", model=tiny_model)
    metrics.observe_received(msg)
    metrics.observe_outcome(outcome)
    text = metrics.exposition().decode()
    assert "stream_cleaner_documents_received_total 1.0" in text
    assert "stream_cleaner_documents_cleaned_total 1.0" in text
    assert 'stream_cleaner_documents_dead_lettered_total{reason="empty"} 0.0' in text
    assert 'stream_cleaner_stage_duration_seconds_count{stage="parse"} 1.0' in text
    assert f"stream_cleaner_input_bytes_total {float(len(msg.key) + len(msg.value))}" in text
    kept = orjson.loads(outcome.document.value)["n_kept"]
    assert f"stream_cleaner_sentences_kept_total {float(kept)}" in text
    assert 'stream_cleaner_stage_duration_seconds_count{stage="language"} 1.0' in text
    by_language = {
        line.split('"')[1]: float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("stream_cleaner_documents_by_language_total{")
    }
    assert by_language["en"] == 1.0 and by_language["other"] == 0.0
    assert sum(by_language.values()) == 1.0
    assert len(by_language) == 28  # bounded: 26 common languages, und and other


def test_metrics_count_a_batch_as_its_outcomes_one_by_one(tiny_model):
    pages = [
        (b"doc-en", b"<p>A river is a natural stream of water. It flows towards an ocean.</p>"),
        (b"doc-en2", b"<p>The river flows. It is a stream.</p><p>| menu | home |</p>"),
        (b"doc-de", "<p>Die Stadtverwaltung hat am Dienstag einen neuen Haushalt für die "
                    "Bibliotheken beschlossen.</p>".encode()),
        (b"doc-empty", b""),
        (b"doc-pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" * 4),
        (None, b'{"id": 3'),
    ]  # fmt: skip
    messages = [
        InputMessage(topic="in", partition=0, offset=i, key=key, value=value)
        for i, (key, value) in enumerate(pages)
    ]
    outcomes = [clean_message(msg, worker_version="0", model=tiny_model) for msg in messages]
    outcomes.append(forward_outcome(messages[0], "example.org"))
    one_by_one, batched = WorkerMetrics(), WorkerMetrics()
    for outcome in outcomes:
        one_by_one.observe_outcome(outcome)
    batched.observe_outcomes(outcomes)
    expected = _samples(one_by_one.registry, "stream_cleaner_")
    assert _samples(batched.registry, "stream_cleaner_") == expected
    # and the batch was counted whole
    text = batched.exposition().decode()
    assert "stream_cleaner_documents_cleaned_total 3.0" in text
    assert "stream_cleaner_documents_rekeyed_total 1.0" in text
    assert sum(outcome.is_dead_letter for outcome in outcomes) == 3
    scored = sum(int((outcome.perplexities == outcome.perplexities).sum()) for outcome in outcomes)
    assert scored > 0
    assert f"stream_cleaner_sentence_perplexity_count {float(scored)}" in text


def _samples(registry, name):
    return {
        (tuple(sorted(s.labels.items())), s.name): s.value
        for family in registry.collect()
        for s in family.samples
        if s.name.startswith(name) and not s.name.endswith("_created")
    }


def test_bulk_histogram_exposes_what_prometheus_client_histogram_does():
    from prometheus_client import Histogram

    buckets = (0.001, 0.01, 0.1, 1.0)
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    bulk = BulkHistogram("t_seconds", "t", buckets=buckets, labelname="stage", registry=ours)
    reference = Histogram("t_seconds", "t", ["stage"], buckets=buckets, registry=theirs)
    bulk.labels("idle")
    reference.labels("idle")
    observations = [("parse", 0.0005), ("parse", 0.01), ("score", 0.05), ("parse", 3.0)]
    observations += [("score", v) for v in (0.001, 0.1, 1.0, 0.0)]  # bounds: le is inclusive
    bulk.observe_each(observations[:4])
    bulk.observe_many([v for _, v in observations[4:]], label="score")
    for stage, value in observations:
        reference.labels(stage).observe(value)
    assert _samples(ours, "t_seconds") == _samples(theirs, "t_seconds")
    assert (
        _samples(ours, "t_seconds")[(("le", "+Inf"), ("stage", "parse")), "t_seconds_bucket"] == 3
    )


class _Stream:
    """What Faust's monitor reads of a stream: its label, its task owner (weak-referable)."""

    def __init__(self, shortlabel: str) -> None:
        self.shortlabel = shortlabel
        self.task_owner = self


class _Clock:
    """A monitor's clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _feed_monitors(monitors, clock: _Clock) -> None:
    """Messages and events of three partitions, two sends, a commit, an assignment and a
    rebalance, each hook called on every monitor at the same (fake) time."""
    from types import SimpleNamespace

    from faust.types import TP

    streams = (_Stream("Stream: crawl.raw-html.v1"), _Stream("Stream: site"))
    tps = [TP("crawl.raw-html.v1", 0), TP("crawl.raw-html.v1", 3), TP("site", 1)]

    def each(hook: str, *args, **kwargs) -> list:
        return [getattr(monitor, hook)(*args, **kwargs) for monitor in monitors]

    def feed(offsets: range) -> None:
        for offset in offsets:
            for i, tp in enumerate(tps):
                each("track_tp_end_offset", tp, offset + 10)
                each("on_message_in", tp, offset, SimpleNamespace())
                states = each("on_stream_event_in", tp, offset, streams[i % 2], None)
                clock.now += 0.25
                for monitor, state in zip(monitors, states, strict=True):
                    monitor.on_stream_event_out(tp, offset, streams[i % 2], None, state)

    feed(range(5))
    for _ in range(2):  # what Faust's producer reports: only its own sends (a table's)
        states = each("on_send_initiated", None, "changelog", None, 10, 100)
        clock.now += 0.002
        for monitor, state in zip(monitors, states, strict=True):
            monitor.on_send_completed(None, state, None)
    states = each("on_commit_initiated", None)
    clock.now += 0.05
    for monitor, state in zip(monitors, states, strict=True):
        monitor.on_commit_completed(None, state)
    states = each("on_assignment_start", None)
    clock.now += 0.1
    for monitor, state in zip(monitors, states, strict=True):
        monitor.on_assignment_completed(None, state)
    # a rebalance drops the partitions' series, then new ones come
    states = each("on_rebalance_start", SimpleNamespace(rebalancing_count=1))
    clock.now += 2.0
    for monitor, state in zip(monitors, states, strict=True):
        monitor.on_rebalance_return(None, state)
    clock.now += 1.0
    for monitor, state in zip(monitors, states, strict=True):
        monitor.on_rebalance_end(None, state)
    tps[1] = TP("crawl.raw-html.v1", 2)
    feed(range(5, 8))


def test_faust_sensors_are_fausts_without_producer_sensors_and_in_seconds():
    """The worker publishes without Faust's producer, so Faust's send sensors read 0 after
    documents were published; its rebalance gauges count rebalances in progress (0 after
    one), and its latencies are in milliseconds (``events_runtime_ms``), the rebalance ones
    measured from their own end (about 0). Every other series is Faust's."""
    from faust.sensors.prometheus import FaustMetrics, PrometheusMonitor

    clock = _Clock()
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    monitors = (
        faust_monitor(ours, time=clock),
        PrometheusMonitor(metrics=FaustMetrics.create(theirs, "stream_cleaner_faust"), time=clock),
    )
    _feed_monitors(monitors, clock)
    exported = _samples(ours, "stream_cleaner_faust_")
    reference = _samples(theirs, "stream_cleaner_faust_")
    names = {name for _, name in exported}
    assert not any("sent" in name or "send" in name for name in names), names
    assert not any(name.startswith("stream_cleaner_faust_total_rebalances") for name in names)
    assert not any("_ms" in name for name in names), names
    histograms = {
        family.name for family in ours.collect() if family.type == "histogram"
    }  # fmt: skip
    assert histograms == {
        f"stream_cleaner_faust_{name}"
        for name in (
            "assign_latency_seconds", "consumer_commit_latency_seconds",
            "rebalance_done_consumer_latency_seconds", "rebalance_done_latency_seconds",
            "http_latency_seconds",
        )
    }  # fmt: skip
    # the rest is Faust's, series for series
    kept = {key: value for key, value in reference.items() if key in exported}
    faust_only = {
        name for _, name in set(reference) - set(kept)
    }  # fmt: skip
    assert all(
        "sent" in name
        or "send" in name
        or "total_rebalances" in name
        or "latency" in name
        or "runtime_ms" in name
        for name in faust_only
    ), faust_only
    assert kept and all(exported[key] == value for key, value in kept.items())
    assert 'partition="3"' not in generate_latest(ours).decode()

    def histogram(name: str) -> tuple[float, float]:
        return exported[(), name + "_count"], exported[(), name + "_sum"]

    assert exported[(), "stream_cleaner_faust_total_events_total"] == 3 * 8
    count, total = histogram("stream_cleaner_faust_consumer_commit_latency_seconds")
    assert count == 1 and total == pytest.approx(0.05)
    count, total = histogram("stream_cleaner_faust_assign_latency_seconds")
    assert count == 1 and total == pytest.approx(0.1)
    # the rebalance took 2 s to answer the broker, 3 s in all; Faust's read about 0
    count, total = histogram("stream_cleaner_faust_rebalance_done_consumer_latency_seconds")
    assert count == 1 and total == pytest.approx(2.0)
    count, total = histogram("stream_cleaner_faust_rebalance_done_latency_seconds")
    assert count == 1 and total == pytest.approx(3.0)
    assert reference[(), "stream_cleaner_faust_rebalance_done_latency_sum"] == 0.0
    assert reference[(), "stream_cleaner_faust_total_rebalances"] == 0.0


def test_the_worker_registers_fausts_sensors_without_the_misleading_ones():
    pytest.importorskip("faust")
    app = create_app(WorkerSettings(kafka=KafkaSettings(bootstrap_servers="k1:9092")))
    text = runtime_of(app).metrics.exposition().decode()
    assert "stream_cleaner_faust_topic_partition_end_offset" in text
    assert "stream_cleaner_faust_rebalance_done_latency_seconds_bucket" in text
    for name in ("total_sent_messages", "topic_messages_sent", "producer_send_latency",
                 "total_rebalances", "events_runtime_ms"):  # fmt: skip
        assert f"stream_cleaner_faust_{name}" not in text


def test_bulk_histogram_skips_missing_values():
    registry = CollectorRegistry()
    bulk = BulkHistogram("p", "p", buckets=(10, 100), registry=registry)
    bulk.observe_many([5.0, None, float("nan"), 50.0, 500.0])
    found = _samples(registry, "p")
    assert found[(), "p_count"] == 3 and found[(), "p_sum"] == 555.0
    assert found[(("le", "10.0"),), "p_bucket"] == 1


def test_worker_consumer_fetches_wait_what_the_settings_say():
    pytest.importorskip("faust")

    async def fetch_wait_ms(settings: WorkerSettings) -> int:
        app = create_app(settings)
        # the aiokafka consumer Faust's consumer thread makes (Faust asks for 1,500 ms);
        # nothing connects before it is started
        kafka_consumer = app.consumer._thread._create_worker_consumer(app.transport)
        await kafka_consumer.stop()
        return kafka_consumer._fetch_max_wait_ms

    settings = WorkerSettings(kafka=KafkaSettings(bootstrap_servers="k1:9092"))
    assert asyncio.run(fetch_wait_ms(settings)) == 100
    settings = settings.with_options(fetch_max_wait_seconds=0.25)
    assert asyncio.run(fetch_wait_ms(settings)) == 250


def test_worker_producer_compresses_with_the_settings_codec():
    """The codec reaches the aiokafka producer Faust makes (its attributes' codec bits), so
    the batches `patches.batches.BatchSend` fills are compressed with it."""
    pytest.importorskip("faust")

    async def codec(settings: WorkerSettings) -> int:
        producer = create_app(settings).producer._new_producer()  # never started
        try:
            return producer._message_accumulator._compression_type
        finally:
            await producer.stop()

    settings = WorkerSettings(kafka=KafkaSettings(bootstrap_servers="k1:9092"))
    assert asyncio.run(codec(settings)) == 0
    assert asyncio.run(codec(settings.with_options(compression="zstd"))) == 4
    assert asyncio.run(codec(settings.with_options(compression="gzip"))) == 1


def test_worker_command_options():
    args = parse_args(
        [
            "worker",
            "--bootstrap-servers",
            "k:9092",
            "--group",
            "g",
            "--web-port",
            "7000",
            "--batch-size",
            "4",
            "--no-create-topics",
            "--max-perplexity",
            "800",
            "--fetch-max-wait",
            "0.5",
            "--compression",
            "lz4",
            "--broker-wait",
            "5",
        ]
    )
    assert (args.group_id, args.web_port, args.batch_size) == ("g", 7000, 4)
    assert args.fetch_max_wait_seconds == 0.5
    assert args.compression == "lz4"
    assert args.broker_wait_seconds == 5
    assert args.no_create_topics is True
    assert args.max_sentence_perplexity == 800
    assert args.web_demo is None  # the environment's choice stands
    assert parse_args(["worker", "--web-demo"]).web_demo is True


def test_import_and_cli_do_not_import_faust():
    code = (
        "import sys, stream_cleaner, stream_cleaner.cli; "
        "stream_cleaner.cli.parse_args(['worker']); "
        "print(sorted(m for m in ('faust', 'prometheus_client', 'aiokafka') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("loglevel", ["info", "warning", "error"])
def test_worker_logging_leaves_debug_records_unmade(loglevel):
    # Faust's spinner would set the root logger to DEBUG at warning and above: every debug call
    # of aiokafka would then build its record (a subprocess: mode replaces the root handlers)
    code = (
        "import logging, sys; from stream_cleaner.streaming.app import create_app, make_worker; "
        f"worker = make_worker(create_app(), loglevel={loglevel!r}); worker._setup_logging(); "
        "log = logging.getLogger('aiokafka'); "  # print() now goes to the log: write stdout
        "sys.__stdout__.write(f'{log.isEnabledFor(logging.DEBUG)} {log.getEffectiveLevel()}')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    enabled, level = out.stdout.split()
    assert enabled == "False"
    assert int(level) == getattr(logging, loglevel.upper())


def test_consumer_lag_keeps_one_series_per_assigned_partition():
    metrics = WorkerMetrics()
    metrics.set_consumer_lag({("in", 0): 5, ("in", 1): 0, ("in", 2): 7})
    text = metrics.exposition().decode()
    assert 'stream_cleaner_consumer_lag{partition="0",topic="in"} 5.0' in text
    assert 'stream_cleaner_consumer_lag{partition="2",topic="in"} 7.0' in text
    metrics.set_consumer_lag({("in", 2): 1, ("in", 3): 4})  # 0 and 1 went to another worker
    lines = [
        line
        for line in metrics.exposition().decode().splitlines()
        if line.startswith("stream_cleaner_consumer_lag{")
    ]
    assert lines == [
        'stream_cleaner_consumer_lag{partition="2",topic="in"} 1.0',
        'stream_cleaner_consumer_lag{partition="3",topic="in"} 4.0',
    ]
    metrics.forget_consumer_lag([("in", 3), ("in", 9)])
    assert 'partition="3"' not in metrics.exposition().decode()
    metrics.set_consumer_lag({})
    assert "stream_cleaner_consumer_lag{" not in metrics.exposition().decode()


def test_consumer_lag_of_a_log_that_lost_its_committed_offset_is_its_whole_log():
    """Committed 100, but the log (re-created, or after a broker that lost its storage) ends
    at 54: its 54 records wait. The lag read 0 while they were never cleaned."""
    from types import SimpleNamespace

    from faust.types import TP

    lost, kept, fresh = TP("in", 0), TP("in", 1), TP("in", 2)

    async def earliest_offsets(*tps):
        return {tp: 0 for tp in tps}

    consumer = SimpleNamespace(
        started=True, should_stop=False, assignment=lambda: {lost, kept, fresh},
        highwater={lost: 54, kept: 30, fresh: 5}.get, earliest_offsets=earliest_offsets,
        _committed_offset={lost: 100, kept: 20},
    )  # fmt: skip
    lags = asyncio.run(measure_consumer_lag(SimpleNamespace(_consumer=consumer), "in"))
    assert lags == {("in", 0): 54, ("in", 1): 10, ("in", 2): 5}


def test_offset_resets_are_counted_by_reason_from_zero():
    metrics = WorkerMetrics()
    text = metrics.exposition().decode()
    assert 'stream_cleaner_offset_resets_total{reason="past_log_end"} 0.0' in text
    assert 'stream_cleaner_offset_resets_total{reason="before_log_start"} 0.0' in text
    metrics.count_offset_reset("past_log_end")
    text = metrics.exposition().decode()
    assert 'stream_cleaner_offset_resets_total{reason="past_log_end"} 1.0' in text


def test_warmup_releases_are_exported_by_reason_from_zero():
    """The dashboard's panel reads them before the first page is let go."""
    from stream_cleaner.streaming.warmup import RELEASE_REASONS

    text = WorkerMetrics().exposition().decode()
    for reason in RELEASE_REASONS:
        assert f'stream_cleaner_site_warmup_released_pages_total{{reason="{reason}"}} 0.0' in text


def test_the_offset_reset_policy_is_a_setting(monkeypatch):
    assert WorkerSettings().offset_reset == "earliest"
    monkeypatch.setenv("STREAM_CLEANER_WORKER_OFFSET_RESET", "latest")
    assert WorkerSettings.from_env().offset_reset == "latest"
    with pytest.raises(ValueError, match="offset_reset must be one of"):
        WorkerSettings(offset_reset="none")
    from stream_cleaner.streaming.patches.offsets import OFFSET_RESET_POLICIES

    for policy in OFFSET_RESET_POLICIES:  # the flag offers each policy
        assert parse_args(["worker", "--offset-reset", policy]).offset_reset == policy
    with pytest.raises(SystemExit):
        parse_args(["worker", "--offset-reset", "none"])


def test_sentence_perplexity_histogram_counts_like_prometheus_client():
    from prometheus_client import Histogram, generate_latest

    from stream_cleaner.streaming.metrics import PERPLEXITY_BUCKETS

    values = [5.0, 10.0, 10.5, 300.0, 2e6, 1e6]
    metrics = WorkerMetrics()
    metrics.sentence_perplexity.observe_many(values)
    registry = CollectorRegistry()
    reference = Histogram(
        "stream_cleaner_sentence_perplexity", "x", buckets=PERPLEXITY_BUCKETS, registry=registry
    )
    for value in values:
        reference.observe(value)

    def samples(text: str) -> list[str]:
        return [
            line
            for line in text.splitlines()
            if line.startswith("stream_cleaner_sentence_perplexity_") and "_created" not in line
        ]

    expected = samples(generate_latest(registry).decode())
    assert len(expected) == len(PERPLEXITY_BUCKETS) + 3  # buckets, +Inf, count, sum
    assert samples(metrics.exposition().decode()) == expected
