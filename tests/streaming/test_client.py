import asyncio
import json
import os
import uuid
from pathlib import Path

import pytest

from stream_cleaner.document import RawDocument
from stream_cleaner.io import Source, iter_documents
from stream_cleaner.streaming.client import (
    envelope_message,
    produce,
    raw_message,
    tail_async,
)
from stream_cleaner.streaming.records import InputMessage, decode_input
from stream_cleaner.streaming.topics import (
    KafkaSettings,
    TopicSpec,
    create_topics,
    describe_topics,
)

from ..conftest import SAMPLES
from .conftest import batch_codecs

LATIN1 = "<p>Grüße aus Köln</p>".encode("latin-1")


def source(body, **fields) -> Source:
    return Source(RawDocument(body=body, **fields), origin="test")


@pytest.mark.parametrize("encode", [envelope_message, raw_message])
def test_both_input_forms_decode_back_to_the_same_page(encode):
    for body in (b"<p>Caf\xc3\xa9</p>", LATIN1, "<p>text</p>"):
        page = source(body, id="d1", url="http://e.org/", content_type="text/html")
        key, value, headers = encode(page)
        doc = decode_input(InputMessage("t", 0, 7, key=key, value=value, headers=tuple(headers)))
        assert isinstance(doc, RawDocument)
        assert (doc.id, doc.url) == ("d1", "http://e.org/")
        expected = body.encode() if isinstance(body, str) else body
        got = doc.body.encode() if isinstance(doc.body, str) else doc.body
        assert got == expected


@pytest.mark.parametrize("encode", [envelope_message, raw_message])
def test_both_input_forms_carry_the_fetch_status(encode):
    for status in (404, 200, None):
        key, value, headers = encode(source("<p>x</p>", id="d2", status=status))
        doc = decode_input(InputMessage("t", 0, 8, key=key, value=value, headers=tuple(headers)))
        assert isinstance(doc, RawDocument) and doc.status == status
    bad = InputMessage("t", 0, 9, key=b"d3", value=b"<p>x</p>", headers=(("status", b"x1"),))
    assert decode_input(bad).status is None  # a raw page's unreadable status: only a hint


def test_envelope_sends_non_utf8_bodies_as_base64():
    _, value, _ = envelope_message(source(LATIN1, id="x"))
    assert b'"body_base64"' in value and b'"body"' not in value


@pytest.mark.broker
def test_produce_then_tail_round_trip(broker):
    settings = KafkaSettings(bootstrap_servers=(broker,))
    topic = f"test-{uuid.uuid4().hex[:8]}.raw-html.v1"
    create_topics(
        settings,
        [
            TopicSpec(
                topic,
                partitions=3,
                replication_factor=1,
                retention_ms=3_600_000,
                max_message_bytes=None,
            )
        ],
    )
    sources = list(iter_documents([str(SAMPLES)]))
    broken = Source(RawDocument(body=b"", id="w", error="warc_record_error: cut"), "warc:x#0")
    huge = Source(RawDocument(body=b"<p>" + b"x" * 2_000_000, id="huge"), "huge.html")
    stats = produce([huge, *sources, broken], settings, topic, max_request_bytes=1_000_000)
    assert stats.sent == len(sources)  # the pages after the one too large too
    assert stats.skipped[0].startswith("huge.html: too_large: 2")
    assert stats.skipped[1:] == ["warc:x#0: warc_record_error: cut"]
    records = []
    n = asyncio.run(tail_async(settings, topic, records.append, idle_seconds=2.0))
    assert n == len(sources)
    assert sorted(r["key"] for r in records) == sorted(s.doc.id for s in sources)
    assert all(r["headers"]["content-type"] == "application/json" for r in records)
    assert {r["value"]["id"] for r in records} == {s.doc.id for s in sources}


@pytest.mark.broker
def test_tail_refuses_a_missing_topic_without_creating_it(broker):
    settings = KafkaSettings(bootstrap_servers=(broker,))
    with pytest.raises(RuntimeError, match="does not exist"):
        asyncio.run(tail_async(settings, "no-such-topic-here", print, idle_seconds=0.5))
    assert "no-such-topic-here" not in describe_topics(settings, ["no-such-topic-here"])


@pytest.mark.broker
def test_produce_and_tail_commands(broker, capsysbinary):
    from stream_cleaner.cli import main

    topic = f"test-{uuid.uuid4().hex[:8]}.cli.v1"
    settings = KafkaSettings(bootstrap_servers=(broker,))
    create_topics(
        settings,
        [
            TopicSpec(
                topic,
                partitions=2,
                replication_factor=1,
                retention_ms=3_600_000,
                max_message_bytes=None,
            )
        ],
    )
    assert (
        main(
            [
                "produce",
                str(SAMPLES),
                "--bootstrap-servers",
                broker,
                "--topic",
                topic,
                "--form",
                "raw",
                "--compression",
                "snappy",
            ]
        )
        == 0
    )
    assert b"pages" in capsysbinary.readouterr().err
    codecs = [asyncio.run(batch_codecs(settings, topic, partition)) for partition in (0, 1)]
    assert {codec for found in codecs for codec in found} == {2}  # snappy
    assert main(["tail", topic, "--bootstrap-servers", broker, "--max", "3"]) == 0
    lines = capsysbinary.readouterr().out.splitlines()
    assert len(lines) == 3
    assert all(json.loads(line)["headers"]["id"] for line in lines)


@pytest.mark.broker
def test_a_broker_not_listening_yet_is_not_ready_and_logs_nothing(caplog):
    from stream_cleaner.streaming.stack import broker_answers, free_port

    with caplog.at_level("DEBUG", logger="aiokafka"):
        assert asyncio.run(broker_answers(f"127.0.0.1:{free_port()}")) is False
    # the stack's start-up polls the port: no client error for each poll
    assert [r for r in caplog.records if r.levelname in ("ERROR", "WARNING")] == []


def test_stack_command_cleans_the_samples_end_to_end(capsys):
    from stream_cleaner.cli import main

    assert main(["stack", "--timeout", "90"]) == 0
    out = capsys.readouterr().out
    assert "6 produced, 6 cleaned, 0 dead letters (none), 0 without an outcome" in out
    assert "metrics     http://127.0.0.1:" in out


@pytest.mark.broker
def test_stack_makes_the_topics_its_worker_is_set_to_use(capsys, monkeypatch):
    """The worker's settings from the environment name the topics the stack creates, feeds
    and reads: renamed ones, and with site templates the table's changelog and the site
    topic (the worker, told not to create topics, refuses to start without them)."""
    from stream_cleaner.cli import main

    monkeypatch.setenv("STREAM_CLEANER_WORKER_SITE_TEMPLATES", "true")
    monkeypatch.setenv("STREAM_CLEANER_WORKER_INPUT_TOPIC", "crawl.stack-pages.v1")
    assert main(["stack", "--timeout", "90"]) == 0
    out = capsys.readouterr().out
    assert "6 produced, 6 cleaned, 0 dead letters (none), 0 without an outcome" in out
    topics = next(line for line in out.splitlines() if line.startswith("topics"))
    assert "crawl.stack-pages.v1" in topics and "crawl.raw-html.v1" not in topics
    assert "stream-cleaner-site-templates-changelog" in topics


@pytest.mark.broker
@pytest.mark.parametrize(
    ("builder", "compression"),
    [("RecordBatchBuilder", None), ("DefaultRecordBatchBuilder", None),
     ("RecordBatchBuilder", "zstd"), ("RecordBatchBuilder", "lz4")],
)  # fmt: skip
def test_batch_send_writes_every_record_in_order_across_full_batches(
    broker, builder, compression, monkeypatch
):
    """The worker's BatchSend through a real producer whose batches hold only a few records:
    a document's sentence records fill batch after batch, a record near the request limit
    gets a batch of its own, a record over it is refused; every record arrives once, in
    order, on the key's partition (the consumer checks every batch's CRC), and every future
    is done when the broker has them. With the native builder and with aiokafka's, and with
    the native builder compressing (the broker then holds batches of that codec)."""
    from types import SimpleNamespace

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.errors import MessageSizeTooLargeError

    from stream_cleaner._native import native_module
    from stream_cleaner.streaming.patches import batches
    from stream_cleaner.streaming.patches.batches import BatchSend
    from stream_cleaner.streaming.patches.versions import require_tested

    if builder == "RecordBatchBuilder" and native_module("record_batch") is None:
        if os.environ.get("CI"):
            pytest.fail("the native speed-ups are not built")
        pytest.skip("the native speed-ups are not built")
    require_tested()  # the gate, without which BatchSend refuses to be built
    if builder == "DefaultRecordBatchBuilder":
        monkeypatch.setattr(batches, "_fast_builder", lambda producer, batch: False)

    settings = KafkaSettings(bootstrap_servers=(broker,))
    topic = f"test-{uuid.uuid4().hex[:8]}.sentences.v1"
    spec = TopicSpec(topic, partitions=3, replication_factor=1, retention_ms=3_600_000,
                     max_message_bytes=None)  # fmt: skip
    create_topics(settings, [spec])
    values = [b'{"index":%d,"text":"%s"}' % (i, b"x" * (i % 50)) for i in range(500)]
    big = b"y" * 60_000  # under the 64 KiB request limit, but near it

    async def run() -> list[bytes]:
        producer = AIOKafkaProducer(**settings.client_kwargs(), max_batch_size=2048,
                                    max_request_size=65_536,
                                    compression_type=compression)  # fmt: skip
        await producer.start()
        try:
            app = SimpleNamespace(producer=SimpleNamespace(_producer=producer))
            send = BatchSend(app, {"sentences": topic})
            waiters = await send.send_values("sentences", b"doc-1", values[:250])
            assert {type(batch._builder).__name__ for batch, _ in send.open.values()} == {builder}
            waiters += await send.send_values("sentences", b"doc-1", [big])
            waiters += await send.send_values("sentences", b"doc-1", values[250:])
            with pytest.raises(MessageSizeTooLargeError):
                await send.send_values("sentences", b"doc-1", [b"z" * 70_000])
            await send.flush()
            assert len(waiters) > 10  # the records filled many batches
            await asyncio.gather(*waiters)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, **settings.client_kwargs(), group_id=None,
                                    auto_offset_reset="earliest", check_crcs=True)  # fmt: skip
        await consumer.start()
        got: list[tuple[int, bytes]] = []
        try:
            while len(got) < len(values) + 1:
                for records in (await consumer.getmany(timeout_ms=2000)).values():
                    got += [(r.partition, r.value) for r in records]
        finally:
            await consumer.stop()
        assert len({partition for partition, _ in got}) == 1
        codecs = await batch_codecs(settings, topic, got[0][0])
        assert len(codecs) > 10
        assert set(codecs) == {{None: 0, "lz4": 3, "zstd": 4}[compression]}
        return [value for _, value in got]

    assert asyncio.run(run()) == [*values[:250], big, *values[250:]]


def _children(pid: int) -> list[int]:
    children = []
    for stat in os.listdir("/proc"):
        if stat.isdigit():
            try:
                fields = Path(f"/proc/{stat}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                children.append(int(stat))
    return children


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.broker
def test_a_stack_stopped_with_sigterm_stops_its_broker_and_worker():
    import signal
    import subprocess
    import sys
    import time

    stack = subprocess.Popen(
        [sys.executable, "-m", "stream_cleaner", "stack", "--keep-running", "--timeout", "90"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # a plain kill of the stack alone, as a supervisor sends it
    )
    try:
        for line in stack.stdout:
            if line.startswith("running: Ctrl-C stops"):
                break
        children = _children(stack.pid)
        assert len(children) == 2  # the broker and the worker
        stack.send_signal(signal.SIGTERM)
        stack.wait(timeout=60)
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [pid for pid in children if _alive(pid)] == []
    finally:
        if stack.poll() is None:
            os.killpg(stack.pid, signal.SIGKILL)
