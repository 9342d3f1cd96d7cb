"""The worker end to end: `stream-cleaner worker` as a subprocess against the real broker.

Good pages, pages in compressed batches and every kind of bad input go in; exactly one
cleaned document or one dead letter comes out per input id, the sentence records match their
documents, the metrics count the same, the web pages answer, and SIGTERM stops the worker
cleanly.

The tests marked ``kafka_clients`` run again at the lowest aiokafka and faust-streaming the
worker allows (test_client_versions.py), this venv having the highest.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import orjson
import pytest

from stream_cleaner.streaming.topics import (
    KafkaSettings,
    TopicSpec,
    create_topics,
    default_topic_specs,
)

from ..conftest import DATA, REPO
from .conftest import batch_codecs

SAMPLES = REPO / "stream_cleaner" / "samples"

pytestmark = pytest.mark.broker

OUTCOME_SECONDS = 60.0
STOP_SECONDS = 15.0
MAX_PAGE_BYTES = 100_000
CRASH_PAGES = 2000
# input batches compressed with each of Kafka's codecs, keyed (and so named) by it
COMPRESSED_INPUTS = ("gzip", "snappy", "lz4", "zstd")
PARAGRAPHS = (
    "A river is a natural stream of water that flows towards an ocean, a lake or another river.",
    "Rivers are part of the water cycle, and most of their water comes from rain and melting snow.",
    "The water in a river usually flows in a channel between two banks.",
)


def _page(n: int) -> str:
    paragraphs = "".join(f"<p>{p} Page {n}.</p>" for p in PARAGRAPHS[: 1 + n % 3])
    return f"<html><head><title>Page {n}</title></head><body>{paragraphs}</body></html>"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _wait_for(url: str, proc: subprocess.Popen[bytes], log: Path, seconds: float) -> bytes:
    """The body of ``url`` once it answers 200; fails if the worker exits first."""
    deadline = time.monotonic() + seconds
    last: object = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the worker exited with {proc.returncode}:\n{_tail(log)}")
        try:
            status, body = _get(url)
        except OSError as exc:
            last = exc
        else:
            if status == 200:
                return body
            last = (status, body)
        time.sleep(0.2)
    pytest.fail(f"{url} did not answer 200 in {seconds} s (last: {last!r}):\n{_tail(log)}")


def _tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _inputs(input_topic: str) -> list[tuple[bytes | None, bytes | None, list, str | None]]:
    """(key, value, headers, expected dead-letter reason or None); ids are known from them."""
    json_header = [("content-type", b"application/json")]
    html_header = ("content-type", b"text/html; charset=utf-8")
    out: list[tuple[bytes | None, bytes | None, list, str | None]] = []
    for n in range(12):
        envelope = {"id": f"env-{n}", "url": f"https://example.org/env/{n}", "body": _page(n)}
        out.append((f"env-{n}".encode(), orjson.dumps(envelope), json_header, None))
    envelope = {
        "id": "env-b64",
        "url": "https://example.org/b64",
        "body_base64": base64.b64encode(_page(99).encode()).decode(),
    }
    out.append((b"env-b64", orjson.dumps(envelope), json_header, None))
    for n in range(12):
        doc_id = f"raw-{n}".encode()
        out.append((None, _page(100 + n).encode(), [("id", doc_id), html_header], None))
    out.append((b"https://example.org/keyed", _page(200).encode(), [html_header], None))
    out.append((None, b"", [("id", b"empty-1")], "empty"))
    pdf = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 8
    out.append((None, pdf, [("id", b"binary-1")], "binary_content"))
    out.append((None, b'{"id": "bad-json", "body": ', [("id", b"bad-json"), *json_header],
                "invalid_envelope"))  # fmt: skip
    gone = {"id": "gone-1", "url": "https://example.org/gone", "status": 404, "body": _page(250)}
    out.append((b"gone-1", orjson.dumps(gone), json_header, "not_a_page"))
    style = b"body { color: red }"
    out.append((None, style, [("id", b"style-1"), ("content-type", b"text/css")], "not_a_page"))
    big = _page(300).encode() + b"<p>" + b"x" * (MAX_PAGE_BYTES + 10) + b"</p>"
    out.append((None, big, [("id", b"big-1"), html_header], "too_large"))
    return out


async def _produce(
    servers: str, topic: str, inputs: list, compressed: tuple[str, ...] = ()
) -> list[str]:
    """Produce the inputs, then a page compressed with each codec of ``compressed``, keyed by
    its codec; returns the id each one should end under."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=servers, max_request_size=2 * 2**20)
    await producer.start()
    ids = []
    try:
        for key, value, headers, _reason in inputs:
            meta = await producer.send_and_wait(topic, value, key=key, headers=headers)
            header_id = dict(headers).get("id")
            if value and value.startswith(b"{") and b"bad-json" not in value:
                ids.append(orjson.loads(value)["id"])
            elif header_id:
                ids.append(header_id.decode())
            elif key:
                ids.append(key.decode())
            else:
                ids.append(f"kafka:{topic}:{meta.partition}:{meta.offset}")
        # one page with neither id nor key: its id is where it was read
        meta = await producer.send_and_wait(topic, _page(400).encode())
        ids.append(f"kafka:{topic}:{meta.partition}:{meta.offset}")
    finally:
        await producer.stop()
    for n, codec in enumerate(compressed):  # crawlers' producers often compress
        compressing = AIOKafkaProducer(bootstrap_servers=servers, compression_type=codec)
        await compressing.start()
        try:
            await compressing.send_and_wait(topic, _page(500 + n).encode(), key=codec.encode())
        finally:
            await compressing.stop()
        ids.append(codec)
    return ids


async def _consume(
    servers: str, names: dict[str, str], ids: set[str], seconds: float = OUTCOME_SECONDS
) -> dict[str, list]:
    """Read the output topics until every id has an outcome and its sentences (bounded)."""
    from aiokafka import AIOKafkaConsumer

    outputs = {role: topic for role, topic in names.items() if role != "input"}
    consumer = AIOKafkaConsumer(
        *outputs.values(),
        bootstrap_servers=servers,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        max_partition_fetch_bytes=2 * 2**20,
    )
    by_topic = {topic: role for role, topic in outputs.items()}
    out: dict[str, list] = defaultdict(list)
    await consumer.start()
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=500)
            for tp, records in batches.items():
                for record in records:
                    out[by_topic[tp.topic]].append(orjson.loads(record.value))
            if _complete(out, ids):
                # a little longer, to see duplicates if there were any
                for tp, records in (await consumer.getmany(timeout_ms=1000)).items():
                    out[by_topic[tp.topic]].extend(orjson.loads(r.value) for r in records)
                break
    finally:
        await consumer.stop()
    return out


def _complete(out: dict[str, list], ids: set[str]) -> bool:
    seen = {d["id"] for d in out["documents"]} | {d["id"] for d in out["dead_letter"]}
    if not ids <= seen:
        return False
    # distinct indices: a replayed document publishes its sentences again
    distinct = {(s["document_id"], s["index"]) for s in out["sentences"]}
    sentences = Counter(doc_id for doc_id, _ in distinct)
    return all(sentences[d["id"]] == d["n_sentences"] for d in out["documents"])


def _metric(text: str, name: str, **labels: str) -> float:
    wanted = name + (
        "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}" if labels else ""
    )
    for line in text.splitlines():
        if line.startswith(wanted + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{wanted} not in /metrics")


def _topic_names(tag: str) -> dict[str, str]:
    """The four topics' names for one test: {role: name}."""
    return {
        "input": f"w{tag}.crawl.raw-html.v1",
        "documents": f"w{tag}.clean.documents.v1",
        "sentences": f"w{tag}.clean.sentence-scores.v1",
        "dead_letter": f"w{tag}.clean.dead-letter.v1",
    }


def _create_topics(broker: str, tag: str) -> dict[str, str]:
    """The four topics under names of this test only, created; {role: name}."""
    names = _topic_names(tag)
    specs = default_topic_specs(
        partitions=4,
        input_topic=names["input"],
        documents_topic=names["documents"],
        sentence_scores_topic=names["sentences"],
        dead_letter_topic=names["dead_letter"],
    )
    create_topics(KafkaSettings(bootstrap_servers=broker), specs)
    return names


def _worker_command(broker: str, names: dict[str, str], port: int, group: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "stream_cleaner",
        "worker",
        "--bootstrap-servers",
        broker,
        "--web-host",
        "127.0.0.1",
        "--web-port",
        str(port),
        "--group",
        group,
        "--input-topic",
        names["input"],
        "--documents-topic",
        names["documents"],
        "--sentence-scores-topic",
        names["sentences"],
        "--dead-letter-topic",
        names["dead_letter"],
        "--no-create-topics",
        "--model",
        str(DATA / "tiny.arpa"),
        "--max-perplexity",
        "1e9",
        "--max-page-bytes",
        str(MAX_PAGE_BYTES),
        "--batch-size",
        "8",
        "--batch-within",
        "0.2",
        "--session-timeout",
        "6",
        "--heartbeat-interval",
        "1",
        "--loglevel",
        # info when looking into a failure: rebalances, seeks and the guard's reads again
        os.environ.get("STREAM_CLEANER_TEST_WORKER_LOGLEVEL", "warning"),
    ]


@pytest.mark.kafka_clients
@pytest.mark.parametrize("reader", ["compiled", "python"])
def test_worker_publishes_one_outcome_per_input(broker: str, tmp_path: Path, reader: str) -> None:
    """With aiokafka's compiled record reader and with its pure-Python one
    (``AIOKAFKA_NO_EXTENSIONS=1``, as where the extension is missing): a header name that is
    not UTF-8 crashed the worker with the Python one, at every restart."""
    tag = uuid.uuid4().hex[:8]
    names = _create_topics(broker, tag)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "worker.log"
    # its outputs compressed (the default writes them as they are; the other tests use it)
    command = [*_worker_command(broker, names, port, f"g{tag}"), "--compression", "zstd"]
    inputs = _inputs(names["input"])
    env = {"AIOKAFKA_NO_EXTENSIONS": "1"} if reader == "python" else {}
    proc = _start_worker(command, log, tmp_path, env=env)
    try:
        ids = asyncio.run(_produce(broker, names["input"], inputs, COMPRESSED_INPUTS))
        assert len(set(ids)) == len(ids) == len(inputs) + 1 + len(COMPRESSED_INPUTS)
        ids.append(_produce_raw_header_name(broker, names["input"], tmp_path))
        expected_reasons = {i: reason for i, (*_, reason) in zip(ids, inputs, strict=False)}
        expected_reasons.update({i: None for i in ids[len(inputs) :]})
        _wait_for(f"{base}/readyz", proc, log, OUTCOME_SECONDS)

        out = asyncio.run(_consume(broker, names, set(ids)))
        _assert_one_outcome_each(out, ids, expected_reasons, log)
        for doc in out["documents"]:
            sentences = sorted(
                (s for s in out["sentences"] if s["document_id"] == doc["id"]),
                key=lambda s: s["index"],
            )
            assert [s["index"] for s in sentences] == list(range(doc["n_sentences"]))
            assert sum(s["kept"] for s in sentences) == doc["n_kept"]
            assert doc["n_sentences"] >= 1
            assert doc["text"]
        settings = KafkaSettings(bootstrap_servers=broker)
        for topic in (names["documents"], names["sentences"]):  # every output batch in zstd
            codecs = [asyncio.run(batch_codecs(settings, topic, p)) for p in range(4)]
            assert {codec for found in codecs for codec in found} == {4}
        keyed = next(d for d in out["documents"] if d["id"] == "https://example.org/keyed")
        assert keyed["url"] == "https://example.org/keyed"
        big = next(d for d in out["dead_letter"] if d["id"] == "big-1")
        assert big["payload"]["size"] > MAX_PAGE_BYTES
        assert big["source"]["topic"] == names["input"]

        n_docs, n_dead = len(out["documents"]), len(out["dead_letter"])
        deadline = time.monotonic() + 10
        while True:  # counters move after the acknowledgement, a moment after the records
            text = _get(f"{base}/metrics")[1].decode()
            if _metric(text, "stream_cleaner_documents_cleaned_total") == n_docs or (
                time.monotonic() > deadline
            ):
                break
            time.sleep(0.2)
        assert _metric(text, "stream_cleaner_documents_received_total") == len(ids)
        assert _metric(text, "stream_cleaner_documents_cleaned_total") == n_docs
        for reason, n in [("empty", 1), ("binary_content", 1), ("invalid_envelope", 1),
                          ("too_large", 1), ("not_a_page", 2)]:  # fmt: skip
            assert _metric(text, "stream_cleaner_documents_dead_lettered_total", reason=reason) == n
        assert _metric(text, "stream_cleaner_sentences_kept_total") == sum(
            d["n_kept"] for d in out["documents"]
        )
        assert n_dead == 6
        assert _metric(text, "stream_cleaner_documents_in_progress") == 0
        assert _metric(text, "stream_cleaner_model_loaded") == 1
        assert _metric(text, "stream_cleaner_stage_duration_seconds_count", stage="publish") >= 1

        # Faust's own sensors, in the same registry: offsets of the input partitions
        end_offsets = [
            line
            for line in text.splitlines()
            if line.startswith("stream_cleaner_faust_topic_partition_end_offset{")
        ]
        assert end_offsets
        assert all(f'topic="{names["input"]}"' in line for line in end_offsets)
        assert _metric(text, "stream_cleaner_faust_total_events_total") == len(ids)
        # latencies in seconds, from Faust's own measures (sensors.py), at both ends of its
        # releases: joining the group took a rebalance (Faust's own histogram read ~0 ms)
        assert _metric(text, "stream_cleaner_faust_rebalance_done_latency_seconds_count") >= 1
        assert _metric(text, "stream_cleaner_faust_rebalance_done_latency_seconds_sum") > 0.1
        # what the worker does without Faust is left out: publishing, timing its events
        assert "stream_cleaner_faust_total_sent_messages" not in text
        assert "stream_cleaner_faust_events_runtime" not in text

        status, body = _get(f"{base}/healthz")
        assert status == 200
        status, body = _get(f"{base}/readyz")
        assert status == 200, body
        ready = json.loads(body)
        assert ready["model_loaded"] and ready["consumer_started"]
        assert ready["assigned_partitions"] == 4

        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=STOP_SECONDS)
        assert code == 0, _tail(log)
        assert time.monotonic() - started < STOP_SECONDS
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.kafka_clients
def test_worker_killed_mid_run_loses_nothing(broker: str, tmp_path: Path) -> None:
    """kill -9 while pages are in flight, start again: every page still gets its outcome.

    Duplicates are allowed (at-least-once) and must be byte-identical replays.
    """
    tag = uuid.uuid4().hex[:8]
    names = _create_topics(broker, tag)
    samples = sorted((REPO / "stream_cleaner" / "samples").glob("*.html"))
    pages = [samples[n % len(samples)].read_bytes() for n in range(CRASH_PAGES)]
    inputs = [
        (None, page, [("id", f"page-{n}".encode()), ("content-type", b"text/html")], None)
        for n, page in enumerate(pages)
    ]
    ids = [f"page-{n}" for n in range(CRASH_PAGES)]
    group = f"g{tag}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        asyncio.run(_produce_only(broker, names["input"], inputs))
        port = _free_port()
        log = tmp_path / "worker-1.log"
        procs.append(_start_worker(_worker_command(broker, names, port, group), log, tmp_path))
        deadline = time.monotonic() + OUTCOME_SECONDS
        received = 0.0
        while received < CRASH_PAGES // 10:
            assert time.monotonic() < deadline, _tail(log)
            assert procs[0].poll() is None, _tail(log)
            try:
                text = _get(f"http://127.0.0.1:{port}/metrics")[1].decode()
                received = _metric(text, "stream_cleaner_documents_received_total")
            except (OSError, AssertionError):
                pass
            time.sleep(0.05)
        procs[0].kill()  # SIGKILL: no commit, no leaving the group
        procs[0].wait()
        cleaned_before = _metric(text, "stream_cleaner_documents_cleaned_total")

        log = tmp_path / "worker-2.log"
        port = _free_port()
        procs.append(_start_worker(_worker_command(broker, names, port, group), log, tmp_path))
        out = asyncio.run(_consume(broker, names, set(ids), seconds=180))
        _assert_every_page_cleaned_replays_identical(out, ids, log)
        assert cleaned_before < CRASH_PAGES, "the worker finished before it was killed"
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_worker_stops_and_commits_nothing_when_a_record_cannot_be_published(
    broker: str, tmp_path: Path
) -> None:
    """A record the producer refuses: the worker exits 1, and no input offset is committed."""
    tag = uuid.uuid4().hex[:8]
    names = _create_topics(broker, tag)
    group = f"g{tag}"
    inputs = [
        (None, _page(n).encode() * 20, [("id", f"page-{n}".encode())], None) for n in range(400)
    ]
    asyncio.run(_produce_only(broker, names["input"], inputs))
    log = tmp_path / "worker.log"
    # every cleaned document's record is larger than the producer may send
    command = [*_worker_command(broker, names, _free_port(), group), "--max-message-bytes", "2000"]
    proc = _start_worker(command, log, tmp_path)
    try:
        code = proc.wait(timeout=OUTCOME_SECONDS)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 1, _tail(log)
    assert "a batch failed, stopping the worker" in log.read_text(errors="replace")
    assert asyncio.run(_committed(broker, group, names["input"])) == [None] * 4


async def _committed(servers: str, group: str, topic: str) -> list[int | None]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=servers, group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        return [await consumer.committed(TopicPartition(topic, p)) for p in range(4)]
    finally:
        await consumer.stop()


async def _commit(servers: str, group: str, topic: str, offsets: list[int]) -> None:
    """Commit ``offsets`` (one per partition) for ``group``, as a consumer outside it."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=servers, group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(len(offsets))]
        consumer.assign(tps)
        await consumer.commit(dict(zip(tps, offsets, strict=True)))
    finally:
        await consumer.stop()


def _wait_committed(servers: str, group: str, topic: str, offsets: list[int], log: Path) -> None:
    """Wait until ``group`` has committed ``offsets`` (one per partition), 30 s at most."""
    deadline = time.monotonic() + 30
    while (committed := asyncio.run(_committed(servers, group, topic))) != offsets:
        assert time.monotonic() < deadline, f"committed {committed}:\n{_tail(log)}"
        time.sleep(0.5)


async def _input_positions(servers: str, topic: str, ids: set[str]) -> dict[str, tuple]:
    """Where the envelopes of ``ids`` are in ``topic``: {id: (partition, offset)}."""
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=servers, group_id=None, auto_offset_reset="earliest"
    )
    found: dict[str, tuple] = {}
    await consumer.start()
    try:
        deadline = time.monotonic() + 30
        while len(found) < len(ids) and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=1000)).values():
                for record in records:
                    doc_id = orjson.loads(record.value).get("id")
                    if doc_id in ids:
                        found[doc_id] = (record.partition, record.offset)
    finally:
        await consumer.stop()
    return found


def _produce_raw_header_name(servers: str, topic: str, tmp_path: Path) -> str:
    """Produce a page with a header whose name is not UTF-8, as librdkafka may write one (from
    a process with aiokafka's Python record builder, which lets a name's bytes be chosen);
    returns its id. aiokafka's reader crashed the worker's fetch on it."""
    script = tmp_path / "raw_header_name.py"
    script.write_text(
        "import asyncio, sys\n"
        "from aiokafka import AIOKafkaProducer\n"
        "class RawName(str):\n"
        "    def encode(self, *a, **k):\n"
        "        return b'x-\\xff\\xfe'\n"
        "async def main():\n"
        "    producer = AIOKafkaProducer(bootstrap_servers=sys.argv[1])\n"
        "    await producer.start()\n"
        "    headers = [(RawName('x'), b'v'), ('id', b'raw-header-name')]\n"
        "    page = b'<p>The river rises in the hills and flows down to the sea.</p>'\n"
        "    await producer.send_and_wait(sys.argv[2], page, headers=headers)\n"
        "    await producer.stop()\n"
        "asyncio.run(main())\n"
    )
    env = {**os.environ, "AIOKAFKA_NO_EXTENSIONS": "1"}
    subprocess.run([sys.executable, str(script), servers, topic], check=True, env=env, timeout=60)
    return "raw-header-name"


async def _produce_only(servers: str, topic: str, inputs: list) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=servers, max_request_size=2 * 2**20)
    await producer.start()
    try:
        futures = [
            await producer.send(topic, value, key=key, headers=headers)
            for key, value, headers, _ in inputs
        ]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


def _start_worker(
    command: list[str], log: Path, tmp_path: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """A worker subprocess writing to ``log``, with ``env`` added to its environment; the
    caller stops it."""
    with log.open("wb") as log_file:
        return subprocess.Popen(
            command, cwd=tmp_path, stdout=log_file, stderr=subprocess.STDOUT,
            env={**_env(tmp_path), **(env or {})},
        )  # fmt: skip


def _assert_every_page_cleaned_replays_identical(
    out: dict[str, list], ids: list[str], log: Path
) -> None:
    """Every id has a cleaned document and no dead letter; an id cleaned more than once (a
    replay, which at-least-once allows) has byte-identical documents."""
    assert _complete(out, set(ids)), _tail(log)
    assert out["dead_letter"] == []
    documents: dict[str, list] = defaultdict(list)
    for doc in out["documents"]:
        documents[doc["id"]].append(doc)
    assert set(documents) == set(ids)
    for copies in documents.values():
        assert all(copy == copies[0] for copy in copies), "a replay is not identical"


def _assert_one_outcome_each(
    out: dict[str, list], ids: list[str], expected_reasons: dict[str, str | None], log: Path
) -> None:
    """Every id has exactly one outcome, and the dead letters are the expected ones."""
    assert _complete(out, set(ids)), _tail(log)
    outcomes = Counter(d["id"] for d in out["documents"]) + Counter(
        d["id"] for d in out["dead_letter"]
    )
    assert set(outcomes) == set(ids)
    assert set(outcomes.values()) == {1}, "an input has more than one outcome"
    reasons = {d["id"]: d["reason"] for d in out["dead_letter"]}
    assert reasons == {i: r for i, r in expected_reasons.items() if r is not None}


def _env(tmp_path: Path) -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["STREAM_CLEANER_WORKER_DATADIR"] = str(tmp_path / "faust-data")
    return env


@pytest.mark.broker
def test_two_workers_share_the_partitions_and_process_everything_once(
    broker: str, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    names = _create_topics(broker, tag)
    group = f"g{tag}"
    ports = [_free_port(), _free_port()]
    logs = [tmp_path / "worker-0.log", tmp_path / "worker-1.log"]
    procs = []
    try:
        for port, log in zip(ports, logs, strict=True):
            procs.append(_start_worker(_worker_command(broker, names, port, group), log, tmp_path))
        for port, proc, log in zip(ports, procs, logs, strict=True):
            _wait_for(f"http://127.0.0.1:{port}/readyz", proc, log, OUTCOME_SECONDS)
        # both members must hold partitions before any input arrives: no rebalance mid-run,
        # so nothing is processed twice
        deadline = time.monotonic() + OUTCOME_SECONDS
        assigned = [0, 0]
        while time.monotonic() < deadline:
            states = [orjson.loads(_get(f"http://127.0.0.1:{p}/readyz")[1]) for p in ports]
            assigned = [s["assigned_partitions"] for s in states]
            if sum(assigned) == 4 and all(assigned) and not any(s["rebalancing"] for s in states):
                break
            time.sleep(0.5)
        assert sum(assigned) == 4 and all(assigned), assigned
        inputs = [
            (f"two-{n}".encode(), _page(n).encode(), [("id", f"two-{n}".encode())], None)
            for n in range(200)
        ]
        ids = set(asyncio.run(_produce(broker, names["input"], inputs)))
        out = asyncio.run(_consume(broker, names, ids))
        documents = Counter(d["id"] for d in out["documents"])
        assert set(documents) == ids
        assert set(documents.values()) == {1}  # everything exactly once
        received = [
            _metric(
                _get(f"http://127.0.0.1:{p}/metrics")[1].decode(),
                "stream_cleaner_documents_received_total",
            )
            for p in ports
        ]
        assert sum(received) == len(ids) and all(received)  # both did a share
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.slow
@pytest.mark.broker
def test_worker_cleans_2000_pages_with_bad_inputs_mixed_in(broker: str, tmp_path: Path) -> None:
    """Real CleanEval and Dragnet pages, generated pages and the bad inputs of `_inputs`: one
    outcome each, the same outcome the core gives, and /metrics agreeing with the outputs."""
    from stream_cleaner import CleanerSettings, RawDocument, clean_document

    from ..conftest import BENCH_DATA, cleaneval_dir

    tag = uuid.uuid4().hex[:8]
    names = _create_topics(broker, tag)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "worker.log"
    mixed = _inputs(names["input"])
    real_paths = sorted(cleaneval_dir("test").glob("*.html"))
    real_paths += sorted((BENCH_DATA / "dragnet" / "html").glob("*.html"))
    real_paths = real_paths[: 2000 - len(mixed) - 1]
    settings = CleanerSettings(model_path=str(DATA / "tiny.arpa"), max_sentence_perplexity=1e9)
    inputs = list(mixed)
    for path in real_paths:
        raw = path.read_bytes()
        page_id = f"real-{path.parent.parent.name}-{path.stem}"
        if len(raw) > MAX_PAGE_BYTES:
            expected = "too_large"
        else:  # the worker must agree with the core
            expected = clean_document(RawDocument(body=raw), settings=settings).error
        inputs.append((None, raw, [("id", page_id.encode())], expected))
    proc = _start_worker(_worker_command(broker, names, port, f"g{tag}"), log, tmp_path)
    try:
        ids = asyncio.run(_produce(broker, names["input"], inputs))
        assert len(set(ids)) == len(ids) == 2000
        expected = {i: reason for i, (*_, reason) in zip(ids, inputs, strict=False)}
        expected[ids[-1]] = None
        out = asyncio.run(_consume(broker, names, set(ids), seconds=240))
        _assert_one_outcome_each(out, ids, expected, log)
        reasons = {d["id"]: d["reason"] for d in out["dead_letter"]}
        deadline = time.monotonic() + 10
        while True:  # counters move after the acknowledgement, a moment after the records
            text = _get(f"{base}/metrics")[1].decode()
            done = _metric(text, "stream_cleaner_documents_cleaned_total")
            if done == len(out["documents"]) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert _metric(text, "stream_cleaner_documents_received_total") == 2000
        assert done == len(out["documents"])
        for reason in set(reasons.values()):
            assert _metric(
                text, "stream_cleaner_documents_dead_lettered_total", reason=reason
            ) == sum(r == reason for r in reasons.values())
        kept = _metric(text, "stream_cleaner_sentences_kept_total")
        assert kept == sum(d["n_kept"] for d in out["documents"])
    finally:
        _stop(proc)


def _lag(text: str) -> dict[str, float]:
    """``stream_cleaner_consumer_lag`` by partition, from a /metrics page."""
    lags = {}
    for line in text.splitlines():
        if line.startswith("stream_cleaner_consumer_lag{"):
            labels, value = line.rsplit(" ", 1)
            partition = labels.split('partition="', 1)[1].split('"', 1)[0]
            lags[partition] = float(value)
    return lags


def _wait_for_lag(
    port: int, proc: subprocess.Popen[bytes], log: Path, check: Any, seconds: float
) -> dict[str, float]:
    """The lag by partition once ``check(lags)`` holds; fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    lags: dict[str, float] = {}
    while time.monotonic() < deadline:
        assert proc.poll() is None, _tail(log)
        try:
            lags = _lag(_get(f"http://127.0.0.1:{port}/metrics")[1].decode())
        except OSError:
            lags = {}
        if check(lags):
            return lags
        time.sleep(0.1)
    pytest.fail(f"the lag never passed the check: {lags}\n{_tail(log)}")


def test_consumer_lag_counts_the_backlog_and_follows_the_assignment(
    broker: str, tmp_path: Path
) -> None:
    """Pages produced while no worker runs show as lag, which goes to 0 once they are cleaned;
    a second worker takes half the partitions, and their lag leaves the first one's metrics."""
    tag = uuid.uuid4().hex[:8]
    names = _create_topics(broker, tag)
    group = f"g{tag}"
    n_pages = 60
    inputs = [(f"lag-{n}".encode(), _page(n).encode(), [], None) for n in range(n_pages)]
    asyncio.run(_produce_only(broker, names["input"], inputs))
    ports = [_free_port(), _free_port()]
    logs = [tmp_path / "worker-0.log", tmp_path / "worker-1.log"]
    # batches that wait 15 s to fill: the backlog is in sight for seconds before any of it
    # is committed (unless the group join ends right as a batch's 15 s run out)
    slow = ["--batch-size", "1000", "--batch-within", "15", "--lag-interval", "0.2"]
    procs = [_start_worker([*_worker_command(broker, names, ports[0], group), *slow], logs[0],
                           tmp_path)]  # fmt: skip
    try:
        lags = _wait_for_lag(
            ports[0], procs[0], logs[0], lambda lags: sum(lags.values()) == n_pages, 60
        )
        assert set(lags) == {"0", "1", "2", "3"}
        assert all(lags.values())  # keys spread the pages over the four partitions
        out = asyncio.run(_consume(broker, names, {f"lag-{n}" for n in range(n_pages)}))
        assert len(out["documents"]) == n_pages
        # committed (every second) and measured again: nothing left
        _wait_for_lag(
            ports[0], procs[0], logs[0], lambda lags: len(lags) == 4 and not any(lags.values()), 30
        )

        # a second member: the partitions are split, each worker reports only its own
        procs.append(_start_worker(_worker_command(broker, names, ports[1], group), logs[1],
                                   tmp_path))  # fmt: skip
        _wait_for_lag(ports[1], procs[1], logs[1], lambda lags: len(lags) == 2, 60)
        first = _wait_for_lag(ports[0], procs[0], logs[0], lambda lags: len(lags) == 2, 30)
        second = _lag(_get(f"http://127.0.0.1:{ports[1]}/metrics")[1].decode())
        assert set(first) | set(second) == {"0", "1", "2", "3"}
        assert not any(first.values()) and not any(second.values())
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _big_page(n: int, size: int) -> bytes:
    """A valid page of about ``size`` bytes: paragraphs of long sentences, numbered."""
    parts = [f"<html><head><title>Big page {n}</title></head><body>".encode()]
    total, i = 0, 0
    while total < size:
        clauses = ", and ".join(f"{p[:-1].lower()} ({n}.{i}.{k})" for k, p in enumerate(PARAGRAPHS))
        chunk = f"<p>{clauses.capitalize()}. {clauses.capitalize()}.</p>\n".encode()
        parts.append(chunk)
        total += len(chunk)
        i += 1
    parts.append(b"</body></html>")
    return b"".join(parts)


async def _group_state(servers: str, group: str) -> tuple[str, tuple[str, ...]]:
    """The group's state and member ids, from the broker (DescribeGroups)."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=servers)
    await admin.start()
    try:
        [response] = await admin.describe_consumer_groups([group])
    finally:
        await admin.close()
    [(_error, _group, state, _protocol_type, _protocol, members)] = response.groups
    return state, tuple(sorted(member[0] for member in members))


async def _watch_outcomes(
    servers: str, names: dict[str, str], group: str, ids: set[str], seconds: float
) -> tuple[Counter[str], Counter[str], set[tuple[str, tuple[str, ...]]]]:
    """Read documents and dead letters until every id has one (sentences are not read), and
    ask the broker for the group's state and members every half second meanwhile."""
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(
        names["documents"],
        names["dead_letter"],
        bootstrap_servers=servers,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        max_partition_fetch_bytes=16 * 2**20,
        fetch_max_bytes=64 * 2**20,
    )
    documents: Counter[str] = Counter()
    dead: Counter[str] = Counter()
    states = set()
    await consumer.start()
    try:
        deadline = time.monotonic() + seconds
        while not ids <= set(documents) | set(dead) and time.monotonic() < deadline:
            states.add(await _group_state(servers, group))
            for tp, records in (await consumer.getmany(timeout_ms=500)).items():
                seen = documents if tp.topic == names["documents"] else dead
                seen.update(record.key.decode() for record in records)
        states.add(await _group_state(servers, group))
    finally:
        await consumer.stop()
    return documents, dead, states


def test_worker_stays_in_its_group_while_cleaning_large_pages(broker: str, tmp_path: Path) -> None:
    """Pages of 9 MiB, seconds of cleaning each, with a 3 s session: the busy worker keeps its
    heartbeats going, so the group never rebalances and the idle second member of the group
    is never handed the busy one's partitions; every page is cleaned once, by the busy one.

    Tansu drops a member that stayed silent past its session when another member of the
    group talks to it (a worker stopped with SIGSTOP for 6 s lost its partitions to the other
    one within 5 s), so the idle member is what would expose missed heartbeats.
    """
    tag = uuid.uuid4().hex[:8]
    names = _create_topics(broker, tag)
    group = f"g{tag}"
    ports = [_free_port(), _free_port()]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    logs = [tmp_path / "busy.log", tmp_path / "idle.log"]
    options = [
        # the defaults for pages, a short session: one page takes about as long to clean
        "--max-page-bytes", str(10 * 2**20), "--time-budget", "0",
        "--session-timeout", "3", "--heartbeat-interval", "0.5", "--lag-interval", "0.5",
    ]  # fmt: skip
    procs = [
        _start_worker([*_worker_command(broker, names, port, group), *options], log, tmp_path)
        for port, log in zip(ports, logs, strict=True)
    ]
    try:
        # both members hold two partitions each; the lag series name the busy one's
        busy = _wait_for_lag(ports[0], procs[0], logs[0], lambda lags: len(lags) == 2, 90)
        _wait_for_lag(ports[1], procs[1], logs[1], lambda lags: len(lags) == 2, 30)
        state, members = asyncio.run(_group_state(broker, group))
        assert state == "Stable" and len(members) == 2, (state, members)
        rebalances = [
            _metric(_get(f"{base}/metrics")[1].decode(), "stream_cleaner_rebalances_total")
            for base in bases
        ]

        # 0.16-0.6 s of cleaning a page here (16 pages once took 2.6 s on a fast host): 32 pages
        # keep the cleaning well past one session timeout
        n_pages = 32
        partitions = sorted(int(p) for p in busy)
        inputs = [
            (f"big-{n}".encode(), _big_page(n, 9 * 2**20), partitions[n % 2])
            for n in range(n_pages)
        ]
        started = time.monotonic()
        asyncio.run(_produce_to_partitions(broker, names["input"], inputs))
        ids = {f"big-{n}" for n in range(n_pages)}
        documents, dead, states = asyncio.run(
            _watch_outcomes(broker, names, group, ids, seconds=240)
        )
        elapsed = time.monotonic() - started
        assert dead == Counter(), _tail(logs[0])
        assert documents == Counter({i: 1 for i in ids}), _tail(logs[0])
        # never rebalancing, always the same two members
        assert states == {("Stable", members)}, states
        texts = [_get(f"{base}/metrics")[1].decode() for base in bases]
        for text, before in zip(texts, rebalances, strict=True):
            assert _metric(text, "stream_cleaner_rebalances_total") == before
        assert _metric(texts[0], "stream_cleaner_documents_cleaned_total") == n_pages
        assert _metric(texts[1], "stream_cleaner_documents_received_total") == 0
        assert orjson.loads(_get(f"{bases[1]}/readyz")[1])["assigned_partitions"] == 2
        cleaning = _metric(texts[0], "stream_cleaner_document_processing_seconds_sum")
        assert cleaning > 3, "the pages were cleaned faster than one session timeout"
        assert elapsed > cleaning
        for log in logs:
            assert "Heartbeat failed" not in log.read_text(errors="replace")
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_a_backlog_of_large_pages_stays_within_bounded_memory(broker: str, tmp_path: Path) -> None:
    """40 pages of 3 MiB (the bundled samples, repeated) wait in the topic before the worker
    starts, with batches of 32 pages: the worker's memory is bounded by its batches' bytes and
    its short fetch queue, not by the backlog: 518 MB at its peak, against 1,114 MB before
    the byte bound and the short queue (Faust's queue held 4,096 fetched messages)."""
    tag = uuid.uuid4().hex[:8]
    names = _create_topics(broker, tag)
    n_pages = 40
    samples = b"".join(path.read_bytes() for path in sorted(SAMPLES.glob("*.html")))
    page = samples * (3 * 2**20 // len(samples))  # real pages' markup, many blocks
    inputs = [(f"big-{n}".encode(), page + b"<p>%d</p>" % n, n % 4) for n in range(n_pages)]
    asyncio.run(_produce_to_partitions(broker, names["input"], inputs))
    port = _free_port()
    log = tmp_path / "worker.log"
    command = [*_worker_command(broker, names, port, f"g{tag}"), "--batch-size", "32"]
    command += ["--max-page-bytes", str(10 * 2**20), "--time-budget", "0"]
    proc = _start_worker(command, log, tmp_path)
    peak = [0]
    watching = threading.Event()

    def sample() -> None:
        while not watching.wait(0.1):
            with contextlib.suppress(OSError):
                status = Path(f"/proc/{proc.pid}/status").read_text()
                rss = int(next(x for x in status.splitlines() if x.startswith("VmRSS")).split()[1])
                peak[0] = max(peak[0], rss // 1024)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        ids = {f"big-{n}" for n in range(n_pages)}
        documents, dead, _ = asyncio.run(
            _watch_outcomes(broker, names, f"g{tag}", ids, seconds=300)
        )
        assert dead == Counter(), _tail(log)
        assert documents == Counter({i: 1 for i in ids}), _tail(log)
        assert peak[0] < 700, f"peak RSS {peak[0]} MB"
    finally:
        watching.set()
        sampler.join()
        _stop(proc)


async def _produce_to_partitions(servers: str, topic: str, inputs: list) -> None:
    """Produce ``(key, value, partition)`` records, each to the partition it names."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=servers, max_request_size=16 * 2**20)
    await producer.start()
    try:
        for key, value, partition in inputs:
            await producer.send_and_wait(topic, value, key=key, partition=partition)
    finally:
        await producer.stop()


def _site_page(n: int) -> str:
    """A page of one site: its header, menu and footer around a story of its own."""
    story = " ".join(f"{PARAGRAPHS[(n + i) % 3][:-1]} in story {n * 7 + i}." for i in range(3))
    return (
        "<html><body><div id=top><h1>The Valley Times</h1><ul><li><a href=/>Home</a></li>"
        "<li><a href=/sport>Sport results and tables</a></li></ul></div>"
        f"<div class=story><p>{story}</p></div>"
        "<div id=foot><p>Copyright 2024 The Valley Times, all rights reserved.</p></div>"
        "</body></html>"
    )


async def _produce_site_pages(servers: str, topic: str, numbers: range) -> list[str]:
    """Pages of news.example.org keyed by their site, as a crawler should key them."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=servers)
    await producer.start()
    try:
        ids = []
        for n in numbers:
            envelope = {
                "id": f"site-{n}",
                "url": f"https://news.example.org/story/{n}",
                "body": _site_page(n),
            }
            await producer.send_and_wait(topic, orjson.dumps(envelope), key=b"news.example.org")
            ids.append(f"site-{n}")
        return ids
    finally:
        await producer.stop()


def _site_test_topics(broker: str, *, site_topic: bool = False) -> tuple[str, dict[str, str], str]:
    """A consumer group and the topics of a site-template test, under names of this test
    only: the four ({role: name}), the table's changelog and, when asked, the site topic
    (its name, else ""; the default site topic, shared, exists either way: the worker
    checks that every topic it may use is there)."""
    from stream_cleaner.streaming.sitestate import changelog_topic
    from stream_cleaner.streaming.topics import SITE_TOPIC

    tag = uuid.uuid4().hex[:8]
    group = f"g{tag}"
    names = _create_topics(broker, tag)
    extra = [TopicSpec(changelog_topic(group), 4, None, -1, cleanup_policy="compact")]
    site = f"w{tag}.crawl.raw-html.by-site.v1" if site_topic else ""
    extra.append(TopicSpec(site or SITE_TOPIC, 4, None, 86_400_000))
    create_topics(KafkaSettings(bootstrap_servers=broker), extra)
    return group, names, site


def _start_site_worker(
    broker: str, names: dict[str, str], group: str, tmp_path: Path, log: Path, **settings: str
) -> tuple[subprocess.Popen[bytes], int]:
    """A worker with site templates (min_pages 3, perplexity mode) and ``settings`` as
    ``STREAM_CLEANER_*`` variables (``WORKER_REKEY="all"``...), ready; and its web port."""
    env = {
        **_env(tmp_path),
        "STREAM_CLEANER_WORKER_SITE_TEMPLATES": "true",
        "STREAM_CLEANER_WORKER_SITE_PARTITIONS": "4",
        "STREAM_CLEANER_SITE_MIN_PAGES": "3",
        "STREAM_CLEANER_MODE": "perplexity",
        **{f"STREAM_CLEANER_{name}": value for name, value in settings.items()},
    }
    port = _free_port()
    with log.open("wb") as log_file:
        proc = subprocess.Popen(
            _worker_command(broker, names, port, group), cwd=tmp_path, stdout=log_file,
            stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
    try:
        _wait_for(f"http://127.0.0.1:{port}/readyz", proc, log, OUTCOME_SECONDS)
    except BaseException:
        _stop(proc)
        raise
    return proc, port


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if the worker is still there after STOP_SECONDS."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_site_templates_survive_a_worker_restart(broker: str, tmp_path: Path) -> None:
    """The site's statistics live in a changelog-backed table: a new worker process starts
    with them, and drops the site's template from its very first page."""
    group, names, _ = _site_test_topics(broker)

    def template_drops(out: dict[str, list]) -> dict[str, int]:
        return {d["id"]: d["dropped"].get("site_template", 0) for d in out["documents"]}

    log = tmp_path / "first.log"
    proc, port = _start_site_worker(broker, names, group, tmp_path, log)
    try:
        ids = asyncio.run(_produce_site_pages(broker, names["input"], range(6)))
        drops = template_drops(asyncio.run(_consume(broker, names, set(ids))))
        assert [drops[i] for i in ids[:3]] == [0, 0, 0], _tail(log)  # warming up
        assert all(drops[i] >= 3 for i in ids[3:]), (drops, _tail(log))
        text = _get(f"http://127.0.0.1:{port}/metrics")[1].decode()
        assert _metric(text, "stream_cleaner_site_templates_sites") == 1
        assert _metric(text, "stream_cleaner_site_templates_signatures") > 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=STOP_SECONDS) == 0, _tail(log)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    log = tmp_path / "second.log"
    proc, _ = _start_site_worker(broker, names, group, tmp_path, log)
    try:
        ids = asyncio.run(_produce_site_pages(broker, names["input"], range(6, 7)))
        drops = template_drops(asyncio.run(_consume(broker, names, set(ids))))
        # a cold worker would clean this page without site evidence (min_pages 3)
        assert drops[ids[0]] >= 3, (drops, _tail(log))
    finally:
        _stop(proc)


async def _produce_many_sites(servers: str, topic: str, sites: int, rounds: range) -> list[str]:
    """A page of each of ``sites`` sites per round, keyed by site, all sent before waiting
    for any: a site per changelog partition is not enough, the table writes several at once."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=servers)
    await producer.start()
    try:
        ids, sent = [], []
        for n in rounds:
            for k in range(sites):
                host = f"site{k}.example.org"
                envelope = {"id": f"{host}-{n}", "url": f"https://{host}/story/{n}",
                            "body": _site_page(n)}  # fmt: skip
                sent.append(await producer.send(topic, orjson.dumps(envelope), key=host.encode()))
                ids.append(envelope["id"])
        await asyncio.gather(*sent)
        return ids
    finally:
        await producer.stop()


def _wait_assigned(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until the worker holds partitions and is not rebalancing."""
    deadline = time.monotonic() + OUTCOME_SECONDS
    while time.monotonic() < deadline:
        assert proc.poll() is None, _tail(log)
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(_get(f"http://127.0.0.1:{port}/readyz")[1])
            if state["assigned_partitions"] and not state["rebalancing"]:
                return
        time.sleep(0.2)
    pytest.fail(f"no partitions assigned in {OUTCOME_SECONDS} s:\n{_tail(log)}")


def test_a_worker_with_site_templates_survives_the_rebalances_after_its_recovery(
    broker: str, tmp_path: Path
) -> None:
    """A worker recovers the site table, then a second worker joins: the first keeps some
    changelog partitions and recovers them again, and both go on cleaning.

    The table writes several sites to a changelog partition at once, in one record batch.
    Tansu answers the end offset of a partition (ListOffsets) with the first offset of its last
    batch plus one, so a worker that had read that batch to its end stood past the "end" in
    the next rebalance, and Faust's recovery consistency check (meant for stores that persist
    offsets on disk; the worker's is in memory) crashed it.
    """
    group, names, _ = _site_test_topics(broker)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        log = tmp_path / "first.log"
        procs.append(_start_site_worker(broker, names, group, tmp_path, log)[0])
        ids = asyncio.run(_produce_many_sites(broker, names["input"], 12, range(2)))
        _assert_one_outcome_each(asyncio.run(_consume(broker, names, set(ids))), ids, {}, log)
        _stop(procs[0])
        assert procs[0].returncode == 0, _tail(log)

        logs = [tmp_path / "second.log", tmp_path / "third.log"]
        second, port = _start_site_worker(broker, names, group, tmp_path, logs[0])
        procs.append(second)
        _wait_assigned(port, second, logs[0])  # the whole table recovered
        third, port = _start_site_worker(broker, names, group, tmp_path, logs[1])
        procs.append(third)
        _wait_assigned(port, third, logs[1])
        time.sleep(2)  # the second worker's recovery of the partitions it kept
        ids = asyncio.run(_produce_many_sites(broker, names["input"], 12, range(2, 3)))
        out = asyncio.run(_consume(broker, names, set(ids)))
        for proc, log in zip((second, third), logs, strict=True):
            assert proc.poll() is None, _tail(log)
            assert "ConsistencyError" not in log.read_text(errors="replace")
        assert _complete(out, set(ids)), _tail(logs[0])
        outcomes = Counter(d["id"] for d in out["documents"] if d["id"] in ids)
        assert outcomes == dict.fromkeys(ids, 1)
        assert out["dead_letter"] == []
    finally:
        for proc in procs:
            _stop(proc)


def test_pages_without_a_key_are_rekeyed_by_site(broker: str, tmp_path: Path) -> None:
    """Unkeyed pages spread over every partition go through the site topic, keyed by their
    site: one partition holds the site's pages, so its template is learnt in one place."""
    from aiokafka import AIOKafkaConsumer

    group, names, site_topic = _site_test_topics(broker, site_topic=True)

    def envelope(n: int) -> bytes:
        url = f"https://news.example.org/story/{n}"
        return orjson.dumps({"id": f"site-{n}", "url": url, "body": _site_page(n)})

    pages = [(None, envelope(n), n % 4) for n in range(8)]
    # a raw page with neither key nor URL: its site is the one its canonical link names, and
    # its id is where it was first read
    declared = _site_page(8).replace(
        "<html>", '<html><link rel="canonical" href="https://news.example.org/story/8">'
    )
    pages.append((None, declared.encode(), 1))
    log = tmp_path / "worker.log"
    proc, port = _start_site_worker(
        broker, names, group, tmp_path, log, WORKER_SITE_TOPIC=site_topic
    )
    try:
        asyncio.run(_produce_to_partitions(broker, names["input"], pages))
        ids = {f"site-{n}" for n in range(8)} | {f"kafka:{names['input']}:1:2"}
        out = asyncio.run(_consume(broker, names, ids))
        _assert_one_outcome_each(out, sorted(ids), {}, log)
        drops = {d["id"]: d["dropped"].get("site_template", 0) for d in out["documents"]}
        # in the site topic's order, the pages after the third are cleaned with evidence
        assert sorted(drops.values())[:3] == [0, 0, 0] and min(sorted(drops.values())[3:]) >= 3

        async def forwarded() -> list:
            consumer = AIOKafkaConsumer(
                site_topic, bootstrap_servers=broker, auto_offset_reset="earliest"
            )
            await consumer.start()
            try:
                records: list = []
                deadline = time.monotonic() + 10
                while len(records) < len(pages) and time.monotonic() < deadline:
                    for batch in (await consumer.getmany(timeout_ms=500)).values():
                        records.extend(batch)
                return records
            finally:
                await consumer.stop()

        records = asyncio.run(forwarded())
        assert len(records) == len(pages)
        assert {r.key for r in records} == {b"news.example.org"}
        assert len({r.partition for r in records}) == 1  # the site's one partition
        # the raw page keeps the id it had where it was first read: a replay forwards the same
        (raw,) = [r for r in records if r.value == declared.encode()]
        headers = dict(raw.headers)
        assert headers["id"] == f"kafka:{names['input']}:1:2".encode()
        assert headers["stream-cleaner-rekeyed-from"] == f"{names['input']}:1:2".encode()
        text = _get(f"http://127.0.0.1:{port}/metrics")[1].decode()
        assert _metric(text, "stream_cleaner_documents_rekeyed_total") == len(pages)
        assert _metric(text, "stream_cleaner_documents_cleaned_total") == len(pages)
    finally:
        _stop(proc)


def test_warmup_holds_a_new_sites_first_pages_until_it_is_known(
    broker: str, tmp_path: Path
) -> None:
    """With a warm-up hold, a new site's first pages wait for the site's template: all four
    pages of a site lose its template (without the hold the first three keep it); a lone
    page of another site waits out the hold and is cleaned without evidence; every offset is
    committed in the end."""
    group, names, _ = _site_test_topics(broker)
    log = tmp_path / "worker.log"
    proc, port = _start_site_worker(broker, names, group, tmp_path, log, WORKER_WARMUP_SECONDS="4")
    try:
        ids = asyncio.run(_produce_site_pages(broker, names["input"], range(4)))
        lone = _site_page(9).replace("The Valley Times", "The Hill Post")
        started = time.monotonic()
        envelope = {"id": "hill-1", "url": "https://hill.example.org/1", "body": lone}
        page = (b"hill.example.org", orjson.dumps(envelope), 0)
        asyncio.run(_produce_to_partitions(broker, names["input"], [page]))
        out = asyncio.run(_consume(broker, names, {*ids, "hill-1"}))
        _assert_one_outcome_each(out, [*ids, "hill-1"], {}, log)
        drops = {d["id"]: d["dropped"].get("site_template", 0) for d in out["documents"]}
        assert all(drops[i] >= 3 for i in ids), (drops, _tail(log))
        assert drops["hill-1"] == 0
        assert time.monotonic() - started >= 3.5  # it waited out the hold
        text = _get(f"http://127.0.0.1:{port}/metrics")[1].decode()
        # three were held; the fourth found its site warm and was cleaned at once
        assert _metric(text, "stream_cleaner_site_warmup_released_pages_total", reason="warm") == 3
        assert (
            _metric(text, "stream_cleaner_site_warmup_released_pages_total", reason="timeout") == 1
        )
        assert _metric(text, "stream_cleaner_site_warmup_held_pages") == 0
        assert _metric(text, "stream_cleaner_documents_in_progress") == 0
        # a page held when the worker is stopped is cleaned before it leaves
        envelope = {"id": "dale-1", "url": "https://dale.example.org/1", "body": lone}
        page = (b"dale.example.org", orjson.dumps(envelope), 1)
        asyncio.run(_produce_to_partitions(broker, names["input"], [page]))
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            text = _get(f"http://127.0.0.1:{port}/metrics")[1].decode()
            if _metric(text, "stream_cleaner_site_warmup_held_pages") == 1:
                break
            time.sleep(0.1)
        assert _metric(text, "stream_cleaner_site_warmup_held_pages") == 1, _tail(log)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=STOP_SECONDS) == 0, _tail(log)
        out = asyncio.run(_consume(broker, names, {"dale-1"}))
        assert [d["id"] for d in out["documents"]].count("dale-1") == 1, _tail(log)
        committed = asyncio.run(_committed(broker, group, names["input"]))
        assert sum(c or 0 for c in committed) == 6, committed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


CHURN_SECONDS = 40.0
CHURN_PAGES = 1200


@pytest.mark.kafka_clients
def test_workers_joining_leaving_and_killed_mid_stream_lose_nothing(
    broker: str, tmp_path: Path
) -> None:
    """Pages stream in while workers of one group start, stop (SIGTERM) and die (kill -9)
    every few seconds, with site templates and the warm-up hold on: every page gets an
    outcome once one worker drains the rest.

    Without the consumer guard (`offsets.guarded`) about half the runs lost pages, committed
    over by Faust after stale fetches, events dropped between recovery's two seeks, or a
    missing record at the committed offset. Failures say whether the pages were committed
    (lost) or only late.
    """
    import random

    group, names, _ = _site_test_topics(broker)
    rng = random.Random(7)
    samples = sorted(SAMPLES.glob("*.html"))
    pages = []
    for n in range(CHURN_PAGES):
        host = f"site{n % 12}.example.org"
        body = base64.b64encode(samples[n % len(samples)].read_bytes()).decode()
        envelope = {"id": f"churn-{n}", "url": f"https://{host}/page/{n}", "body_base64": body}
        pages.append((host.encode(), orjson.dumps(envelope)))
    ids = {f"churn-{n}" for n in range(CHURN_PAGES)}

    async def produce_steadily() -> None:
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(bootstrap_servers=broker, max_request_size=2 * 2**20)
        await producer.start()
        try:
            sent, start = [], time.monotonic()
            for n, (key, value) in enumerate(pages):
                sent.append(await producer.send(names["input"], value, key=key))
                delay = start + (n + 1) * CHURN_SECONDS / CHURN_PAGES - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            await asyncio.gather(*sent)
        finally:
            await producer.stop()

    procs: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start() -> None:
        log = tmp_path / f"worker-{len(procs)}.log"
        env = {
            **_env(tmp_path),
            "STREAM_CLEANER_WORKER_SITE_TEMPLATES": "true",
            "STREAM_CLEANER_WORKER_SITE_PARTITIONS": "4",
            "STREAM_CLEANER_SITE_MIN_PAGES": "3",
            "STREAM_CLEANER_MODE": "perplexity",
            "STREAM_CLEANER_WORKER_WARMUP_SECONDS": "1",
        }
        with log.open("wb") as log_file:
            proc = subprocess.Popen(
                _worker_command(broker, names, _free_port(), group), cwd=tmp_path,
                stdout=log_file, stderr=subprocess.STDOUT, env=env,
            )  # fmt: skip
        procs.append((proc, log))

    producing = threading.Thread(target=lambda: asyncio.run(produce_steadily()))
    try:
        start()
        producing.start()
        deadline = time.monotonic() + CHURN_SECONDS
        while time.monotonic() < deadline:
            time.sleep(rng.uniform(2.0, 5.0))
            alive = [entry for entry in procs if entry[0].poll() is None]
            for proc, log in procs:
                assert proc.returncode in (None, 0, -signal.SIGKILL), _tail(log)
            action = rng.choice(("start", "stop", "kill")) if len(alive) > 1 else "start"
            if action == "start" and len(alive) < 3:
                start()
            elif action != "start" or len(alive) >= 3:
                proc, log = rng.choice(alive)
                if action == "kill":
                    proc.kill()
                    proc.wait()
                else:
                    proc.send_signal(signal.SIGTERM)
                    assert proc.wait(timeout=STOP_SECONDS) == 0, _tail(log)
        producing.join()
        if not any(proc.poll() is None for proc, _ in procs):
            start()
        out = asyncio.run(_consume(broker, names, ids, seconds=90))
        seen = {d["id"] for d in out["documents"]} | {d["id"] for d in out["dead_letter"]}
        lost = sorted(ids - seen)
        if lost:  # lost (committed past) or late (a worker stalled): say which, and where
            committed = asyncio.run(_committed(broker, group, names["input"]))
            where = asyncio.run(_input_positions(broker, names["input"], set(lost[:5])))
            workers = [(proc.poll(), log.name, _tail(log, 5)) for proc, log in procs]
            pytest.fail(f"{len(lost)} pages without an outcome, e.g. {lost[:5]} at (partition, "
                        f"offset) {where}; committed input offsets {committed}; workers "
                        f"{workers}")  # fmt: skip
        assert _complete(out, ids)
        assert out["dead_letter"] == []
    finally:
        for proc, _ in procs:
            _stop(proc)


def test_a_broker_that_stops_answering_for_a_while_loses_nothing(tmp_path: Path) -> None:
    """The broker frozen (SIGSTOP) mid-run for 12 s, as in a long pause or a network
    partition, then thawed: longer than the worker's requests may take (8 s here) and than
    its group session (6 s). The worker carries on: it never exits, every input has its
    outcome and replays are identical. A broker of its own: the session's broker serves the
    other tests."""
    from stream_cleaner.streaming.stack import tansu_broker

    from .conftest import TANSU

    if not TANSU.exists():
        pytest.skip("Tansu is not installed")
    tag = uuid.uuid4().hex[:8]
    samples = sorted(SAMPLES.glob("*.html"))
    n_pages = 600
    inputs = [
        (None, samples[n % len(samples)].read_bytes(),
         [("id", f"p-{n}".encode()), ("content-type", b"text/html")], None)
        for n in range(n_pages)
    ]  # fmt: skip
    ids = [f"p-{n}" for n in range(n_pages)]
    with tansu_broker(tmp_path / "tansu.log", binary=str(TANSU)) as address:
        broker_pid = _listening_pid(address)
        names = _create_topics(address, tag)
        asyncio.run(_produce_only(address, names["input"], inputs))
        port = _free_port()
        log = tmp_path / "worker.log"
        with log.open("wb") as log_file:
            proc = subprocess.Popen(
                _worker_command(address, names, port, f"g{tag}"), cwd=tmp_path,
                stdout=log_file, stderr=subprocess.STDOUT,
                env={**_env(tmp_path), "STREAM_CLEANER_WORKER_REQUEST_TIMEOUT_SECONDS": "8"},
            )  # fmt: skip
        try:
            received = 0.0
            deadline = time.monotonic() + OUTCOME_SECONDS
            while received < n_pages // 10:
                assert time.monotonic() < deadline and proc.poll() is None, _tail(log)
                with contextlib.suppress(OSError, AssertionError):
                    text = _get(f"http://127.0.0.1:{port}/metrics")[1].decode()
                    received = _metric(text, "stream_cleaner_documents_received_total")
                time.sleep(0.05)
            os.kill(broker_pid, signal.SIGSTOP)
            try:
                time.sleep(12)
                assert proc.poll() is None, _tail(log)
            finally:
                os.kill(broker_pid, signal.SIGCONT)
            out = asyncio.run(_consume(address, names, set(ids), seconds=120))
            assert proc.poll() is None, _tail(log)
            _assert_every_page_cleaned_replays_identical(out, ids, log)
            # the pause outlasted the requests under way (aiokafka logs their timeouts)
            assert "RequestTimedOutError" in log.read_text(errors="replace")
        finally:
            proc.kill()
            proc.wait()


def _listening_pid(address: str) -> int:
    """The pid of the Tansu process whose listener URL is ``address``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            args = cmdline.read_bytes().split(b"\0")
            if f"tcp://{address}".encode() in args and b"tansu" in args[0]:
                found.append(int(cmdline.parent.name))
    assert len(found) == 1, found
    return found[0]


def test_a_worker_started_before_its_broker_waits_for_it(tmp_path: Path) -> None:
    """A worker whose cluster does not answer yet (a pod scheduled while Kafka restarts)
    waits, saying so, instead of exiting; once the broker listens it creates the topics,
    joins and cleans. With nobody answering for ``--broker-wait`` it exits 1 with a message."""
    from stream_cleaner.streaming.stack import running

    from .conftest import TANSU

    if not TANSU.exists():
        pytest.skip("Tansu is not installed")
    tag = uuid.uuid4().hex[:8]
    port, web = _free_port(), _free_port()
    address = f"127.0.0.1:{port}"
    command = [arg for arg in _worker_command(address, _topic_names(tag), web, f"g{tag}")
               if arg != "--no-create-topics"]  # fmt: skip
    log = tmp_path / "worker.log"
    proc = _start_worker([*command, "--broker-wait", "60"], log, tmp_path)
    try:
        time.sleep(4)
        assert proc.poll() is None, _tail(log)
        assert "waiting for a Kafka broker at " + address in log.read_text()
        listener = f"tcp://{address}"
        broker = [str(TANSU), "broker", "--listener-url", listener, "--advertised-listener-url",
                  listener, "--storage-engine", "memory://tansu/"]  # fmt: skip
        with running(broker, tmp_path / "tansu.log"):
            _wait_for(f"http://127.0.0.1:{web}/readyz", proc, log, OUTCOME_SECONDS)
            names = _topic_names(tag)
            inputs = [(b"late-1", _page(1).encode(), [("id", b"late-1")], None)]
            asyncio.run(_produce_only(address, names["input"], inputs))
            out = asyncio.run(_consume(address, names, {"late-1"}))
            assert [d["id"] for d in out["documents"]] == ["late-1"]
    finally:
        proc.kill()
        proc.wait()

    lonely = tmp_path / "lonely.log"
    started = time.monotonic()
    proc = _start_worker([*command, "--broker-wait", "2"], lonely, tmp_path)
    assert proc.wait(timeout=60) == 1
    assert time.monotonic() - started < 40
    assert f"no Kafka broker answered at {address} in 2 s" in lonely.read_text()


def test_a_worker_without_its_topics_says_which_or_creates_them(
    broker: str, tmp_path: Path
) -> None:
    """With site templates the worker also uses the table's changelog and the site topic.
    Told not to create topics, it names the missing ones and exits at start (it used to
    crash on its first batch, and again after every restart); else it creates every one of
    them and cleans."""
    from stream_cleaner.streaming.sitestate import changelog_topic
    from stream_cleaner.streaming.topics import describe_topics

    tag = uuid.uuid4().hex[:8]
    group = f"g{tag}"
    names = _create_topics(broker, tag)
    site_topic = f"w{tag}.crawl.raw-html.by-site.v1"
    env = {**_env(tmp_path), "STREAM_CLEANER_WORKER_SITE_TEMPLATES": "true",
           "STREAM_CLEANER_WORKER_SITE_PARTITIONS": "4",
           "STREAM_CLEANER_WORKER_SITE_TOPIC": site_topic}  # fmt: skip
    port = _free_port()
    command = _worker_command(broker, names, port, group)
    log = tmp_path / "refused.log"
    with log.open("wb") as log_file:
        done = subprocess.run(command, cwd=tmp_path, stdout=log_file, stderr=subprocess.STDOUT,
                              env=env, timeout=90, check=False)  # fmt: skip
    assert done.returncode == 1, _tail(log)
    assert (f"the topics {changelog_topic(group)}, {site_topic} do not exist"
            in log.read_text()), _tail(log)  # fmt: skip

    log = tmp_path / "creating.log"
    with log.open("wb") as log_file:
        proc = subprocess.Popen(
            [arg for arg in command if arg != "--no-create-topics"], cwd=tmp_path,
            stdout=log_file, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
    try:
        _wait_for(f"http://127.0.0.1:{port}/readyz", proc, log, OUTCOME_SECONDS)
        settings = KafkaSettings(bootstrap_servers=broker)
        assert set(describe_topics(settings, [changelog_topic(group), site_topic])) == {
            changelog_topic(group), site_topic}  # fmt: skip
        inputs = [(None, _page(n).encode(), [("id", f"s-{n}".encode())], None) for n in range(3)]
        asyncio.run(_produce_only(broker, names["input"], inputs))
        out = asyncio.run(_consume(broker, names, {"s-0", "s-1", "s-2"}))
        assert sorted(d["id"] for d in out["documents"]) == ["s-0", "s-1", "s-2"]
        assert proc.poll() is None
    finally:
        _stop(proc)


LOSS_PAGES_BEFORE = 100  # per partition, cleaned and committed before the broker loses them
LOSS_PAGES_AFTER = 60  # per partition, produced to the empty broker: fewer, so that the
# committed offsets are past the new logs' ends


@pytest.mark.kafka_clients
def test_a_broker_that_lost_its_data_gets_every_new_page_cleaned(tmp_path: Path) -> None:
    """The broker is killed and restarted empty on its port (Tansu keeps its logs in memory;
    on Kafka, a topic deleted and re-created or an unclean leader election does the same),
    the topics are created again and 240 pages produced, while the group's committed
    offsets point past the new logs' ends. Every page gets its outcome; the worker counts
    each partition it resets, logs it once, and the lag and /readyz end clean. It used to
    read the new pages, drop them as below its committed offset and report a lag of 0, with
    /readyz at 200 and the pages never cleaned."""
    from stream_cleaner.streaming.stack import broker_answers, running

    from .conftest import TANSU

    if not TANSU.exists():
        pytest.skip("Tansu is not installed")
    tag = uuid.uuid4().hex[:8]
    group = f"g{tag}"
    address = f"127.0.0.1:{_free_port()}"
    listener = f"tcp://{address}"
    tansu = [str(TANSU), "broker", "--listener-url", listener, "--advertised-listener-url",
             listener, "--storage-engine", "memory://tansu/"]  # fmt: skip

    def wait_for_broker() -> None:
        deadline = time.monotonic() + 30
        while not asyncio.run(broker_answers(address)):
            assert time.monotonic() < deadline, "the broker did not start"
            time.sleep(0.2)

    def produce(name: str, per_partition: int) -> set[str]:
        """``per_partition`` pages to each partition, their ids ``{name}-{n}``."""
        ids = [f"{name}-{n}" for n in range(4 * per_partition)]
        envelopes = [orjson.dumps({"id": i, "url": f"https://example.org/{i}", "body": _page(n)})
                     for n, i in enumerate(ids)]  # fmt: skip
        inputs = [(None, value, n % 4) for n, value in enumerate(envelopes)]
        asyncio.run(_produce_to_partitions(address, names["input"], inputs))
        return set(ids)

    names = _topic_names(tag)
    port = _free_port()
    log = tmp_path / "worker.log"
    proc: subprocess.Popen[bytes] | None = None
    try:
        with running(tansu, tmp_path / "tansu-1.log") as first_broker:
            wait_for_broker()
            _create_topics(address, tag)
            before = produce("before", LOSS_PAGES_BEFORE)
            proc = _start_worker(_worker_command(address, names, port, group), log, tmp_path)
            out = asyncio.run(_consume(address, names, before))
            assert _complete(out, before), _tail(log)
            _wait_committed(address, group, names["input"], [LOSS_PAGES_BEFORE] * 4, log)
            # frozen until the group's offsets are in the new broker: a worker that rejoins
            # first makes a commit from outside the group fail
            proc.send_signal(signal.SIGSTOP)
            first_broker.kill()  # its logs, commits and group are gone with it
            first_broker.wait()

        with running(tansu, tmp_path / "tansu-2.log"):
            wait_for_broker()
            _create_topics(address, tag)
            # the group's offsets outlived the logs: on Kafka, an unclean leader election; on
            # Tansu, a commit the worker made to the new broker before it noticed the loss
            asyncio.run(_commit(address, group, names["input"], [LOSS_PAGES_BEFORE] * 4))
            after = produce("after", LOSS_PAGES_AFTER)
            proc.send_signal(signal.SIGCONT)
            out = asyncio.run(_consume(address, names, after, seconds=120))
            seen = {d["id"] for d in out["documents"]} | {d["id"] for d in out["dead_letter"]}
            text = _get(f"http://127.0.0.1:{port}/metrics")[1].decode()
            assert after <= seen, (
                f"{len(after - seen)} pages without an outcome; lag {_lag(text)}; "
                f"committed {asyncio.run(_committed(address, group, names['input']))}:\n"
                f"{_tail(log)}"
            )
            _wait_committed(address, group, names["input"], [LOSS_PAGES_AFTER] * 4, log)
            _wait_for_lag(port, proc, log, lambda lags: lags == dict.fromkeys("0123", 0.0), 30)
            status, body = _get(f"http://127.0.0.1:{port}/readyz")
            assert status == 200 and json.loads(body)["unreadable_partitions"] == {}, body
            # each partition reset and counted (again if its reset offset was not committed
            # before the worker rejoined the new broker's group), one error line each
            text = _get(f"http://127.0.0.1:{port}/metrics")[1].decode()
            resets = _metric(text, "stream_cleaner_offset_resets_total", reason="past_log_end")
            errors = log.read_text(errors="replace").count("where reading was due")
            assert 4 <= resets <= 8 and errors == resets, (resets, errors, _tail(log))
    finally:
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGCONT)
            _stop(proc)
