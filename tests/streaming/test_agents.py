"""The agent's wiring in memory: Faust's ``test_context``, no broker.

The output topics are replaced by recorders whose sends complete at once, so these tests see
what the agent publishes and when it acknowledges; the broker tests show the real thing.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from typing import Any

import orjson
import pytest

from stream_cleaner.settings import CleanerSettings
from stream_cleaner.streaming import agents
from stream_cleaner.streaming.app import WorkerSettings, create_app, runtime_of
from stream_cleaner.streaming.records import InputMessage, OutputRecord

from ..conftest import DATA

pytest.importorskip("faust")

PAGE = b"<html><body><p>A river is a natural stream of water.</p><p>Rivers flow.</p></body></html>"


class Recorder:
    """Stands for the output topics: keeps what is sent, acknowledges at once or never."""

    def __init__(self, *, fail: bool = False) -> None:
        self.sent: dict[str, list[OutputRecord]] = defaultdict(list)
        self.fail = fail

    async def __call__(self, role: str, record: OutputRecord) -> asyncio.Future[Any]:
        self.sent[role].append(record)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.fail:
            future.set_exception(RuntimeError("broker said no"))
        else:
            future.set_result(None)
        return future


def _settings() -> WorkerSettings:
    cleaner = CleanerSettings(model_path=str(DATA / "tiny.arpa"), max_sentence_perplexity=1e9)
    return WorkerSettings(cleaner=cleaner, batch_size=4, batch_within_seconds=0.05, web_port=6066)


def _outputs(app: Any) -> Recorder:
    recorder = Recorder()
    runtime_of(app).send = recorder
    return recorder


async def _wait(predicate: Any, seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_agent_publishes_documents_sentences_and_dead_letters():
    app = create_app(_settings())
    outputs = _outputs(app)
    agent = app.agents[agents.AGENT_NAME]

    async def run() -> None:
        async with agent.test_context() as ctx:
            await ctx.put(PAGE, key=b"doc-1", headers=[("content-type", b"text/html")])
            await ctx.put(b"", key=b"doc-2")
            await ctx.put(b'{"id": "doc-3", "body": ', key=b"doc-3")
            await _wait(
                lambda: len(outputs.sent["documents"]) + len(outputs.sent["dead_letter"]) == 3
            )

    asyncio.run(run())
    [document] = outputs.sent["documents"]
    doc = orjson.loads(document.value)
    assert document.key == b"doc-1"
    assert doc["n_sentences"] == len(outputs.sent["sentences"]) == 2
    assert dict(document.headers)["worker-version"]
    dead = [orjson.loads(record.value) for record in outputs.sent["dead_letter"]]
    reasons = {d["id"]: d["reason"] for d in dead}
    assert reasons == {"doc-2": "empty", "doc-3": "invalid_envelope"}
    metrics = runtime_of(app).metrics
    assert metrics.documents_received._value.get() == 3
    assert metrics.documents_cleaned._value.get() == 1
    assert metrics.documents_dead_lettered.labels("empty")._value.get() == 1
    assert runtime_of(app).model is not None


@pytest.mark.parametrize(("max_bytes", "batches"), [(10_000, [4]), (2 * len(PAGE), [2, 2])])
def test_a_batch_ends_at_its_byte_bound(monkeypatch, max_bytes, batches):
    settings = _settings().with_options(batch_max_bytes=max_bytes, batch_within_seconds=5.0)
    app = create_app(settings)
    outputs = _outputs(app)
    agent = app.agents[agents.AGENT_NAME]
    cleaned: list[int] = []
    clean_batch = agents.clean_batch

    def counting(messages: Any, **options: Any) -> Any:
        cleaned.append(len(messages))
        return clean_batch(messages, **options)

    monkeypatch.setattr(agents, "clean_batch", counting)

    async def run() -> None:
        async with agent.test_context() as ctx:
            for i in range(4):  # keys of 5 bytes: two pages and their keys pass 2 * len(PAGE)
                await ctx.put(PAGE, key=f"doc-{i}".encode())
            await _wait(lambda: len(outputs.sent["documents"]) == 4)

    asyncio.run(run())
    assert cleaned == batches
    assert [r.key for r in outputs.sent["documents"]] == [f"doc-{i}".encode() for i in range(4)]


def test_the_next_batch_fills_while_a_batch_is_cleaned(monkeypatch):
    # within 0: a batch is what has arrived when the cleaning thread is free; the pages that
    # come while it cleans make the next batch (4 at most), ready when it is asked for
    settings = _settings().with_options(batch_within_seconds=0.0)
    app = create_app(settings)
    outputs = _outputs(app)
    agent = app.agents[agents.AGENT_NAME]
    cleaned: list[int] = []
    first_batch_in = threading.Event()
    release = threading.Event()
    clean_batch = agents.clean_batch

    def held(messages: Any, **options: Any) -> Any:
        cleaned.append(len(messages))
        if len(cleaned) == 1:
            first_batch_in.set()
            assert release.wait(10)
        return clean_batch(messages, **options)

    monkeypatch.setattr(agents, "clean_batch", held)

    async def run() -> None:
        async with agent.test_context() as ctx:
            await ctx.put(PAGE, key=b"doc-0")
            await asyncio.get_running_loop().run_in_executor(None, first_batch_in.wait, 10)
            # each put returns once the stream has handed its page on: the next batch takes
            # pages while the first is held in the cleaning thread
            for i in range(1, 5):
                await asyncio.wait_for(ctx.put(PAGE, key=f"doc-{i}".encode()), 5)
            assert not release.is_set() and cleaned == [1]
            for i in range(5, 7):  # the next batch is full: these wait for room
                await ctx.put(PAGE, key=f"doc-{i}".encode(), wait=False)
            release.set()
            await _wait(lambda: len(outputs.sent["documents"]) == 7)

    asyncio.run(run())
    assert cleaned == [1, 4, 2]
    assert [r.key for r in outputs.sent["documents"]] == [f"doc-{i}".encode() for i in range(7)]


def test_a_batch_waits_within_seconds_after_its_first_page_at_most():
    settings = _settings().with_options(batch_size=1000, batch_within_seconds=0.4)
    app = create_app(settings)
    outputs = _outputs(app)
    agent = app.agents[agents.AGENT_NAME]
    waited: list[float] = []

    async def run() -> None:
        loop = asyncio.get_running_loop()
        async with agent.test_context() as ctx:
            for i in range(2):
                started = loop.time()
                await ctx.put(PAGE, key=f"doc-{i}".encode())
                await _wait(lambda i=i: len(outputs.sent["documents"]) == i + 1)
                waited.append(loop.time() - started)

    asyncio.run(run())
    # not cleaned before its batch's time is up, nor long after (1000 pages never came)
    assert all(0.35 < seconds < 3.0 for seconds in waited), waited


# --- process_batch without Faust: acknowledgement only after the broker acknowledged ---


class FaustLikeMessage:
    def __init__(self, offset: int, value: bytes) -> None:
        self.topic, self.partition, self.offset = "in", 0, offset
        self.key, self.value, self.headers, self.timestamp = f"k{offset}".encode(), value, [], None


class Event:
    def __init__(self, offset: int, value: bytes) -> None:
        self.message = FaustLikeMessage(offset, value)


def _runtime(app: Any) -> Any:
    runtime = runtime_of(app)
    runtime.model = agents.load_model_now(runtime.settings.cleaner.model_path)
    return runtime


def test_clean_events_tells_when_its_batch_is_in_the_cleaning_thread(monkeypatch):
    # what lets the batch before be published while this one is cleaned (not_before)
    runtime = runtime_of(create_app(_settings()))
    release = threading.Event()

    def held(messages: Any, **options: Any) -> list[Any]:
        assert release.wait(10)
        return []

    monkeypatch.setattr(agents, "clean_batch", held)

    async def run() -> None:
        submitted = asyncio.Event()
        cleaning = asyncio.ensure_future(
            agents.clean_events([Event(0, PAGE)], runtime, submitted=submitted)
        )
        await asyncio.wait_for(submitted.wait(), 5)
        assert not cleaning.done()
        release.set()
        assert await cleaning == []

    try:
        asyncio.run(run())
    finally:
        release.set()


def test_process_batch_acks_after_every_record_is_acknowledged():
    app = create_app(_settings())
    runtime = _runtime(app)
    order: list[str] = []

    async def send(role: str, record: OutputRecord) -> asyncio.Future[Any]:
        order.append(f"send {role}")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(
            0.01, lambda: (order.append("acked"), future.set_result(None))
        )
        return future

    async def ack(event: Event) -> None:
        order.append(f"ack {event.message.offset}")

    events = [Event(0, PAGE), Event(1, b"")]
    outcomes = asyncio.run(agents.process_batch(events, runtime, send=send, ack=ack))
    assert [o.is_dead_letter for o in outcomes] == [False, True]
    n_records = sum(len(o.records) for o in outcomes)
    assert order[: 2 * n_records].count("acked") == n_records  # every ack before the events'
    assert order[-2:] == ["ack 0", "ack 1"]
    assert runtime.metrics.in_progress._value.get() == 0


def test_process_batch_does_not_ack_when_a_record_is_refused():
    app = create_app(_settings())
    runtime = _runtime(app)
    acked: list[int] = []

    async def ack(event: Event) -> None:
        acked.append(event.message.offset)

    with pytest.raises(RuntimeError, match="broker said no"):
        asyncio.run(
            agents.process_batch([Event(0, PAGE)], runtime, send=Recorder(fail=True), ack=ack)
        )
    assert acked == []
    assert runtime.metrics.publish_failures._value.get() == 1
    assert runtime.metrics.documents_cleaned._value.get() == 0


def test_clean_one_turns_an_exception_into_an_internal_error_dead_letter(monkeypatch):
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("boom")

    monkeypatch.setattr(agents, "clean_message", broken)
    msg = InputMessage(topic="in", partition=3, offset=7, key=b"doc-9", value=PAGE)
    outcome = agents.clean_one(
        msg, worker_version="0", settings=CleanerSettings(), model=None, max_bytes=1000
    )
    assert outcome.reason == "internal_error"
    dead = orjson.loads(outcome.dead_letter.value)
    assert dead["id"] == "doc-9"
    assert dead["exception"] == "KeyError"
    assert dead["source"]["offset"] == 7


def test_loading_the_models_warms_up_what_the_first_page_would_load():
    """`load_models_now` (before the worker reports ready) also loads the language
    identifier's model and the mode's labeller, which the first batch would otherwise load
    while its pages wait; in a fresh process, where nothing was loaded before."""
    import subprocess
    import sys

    code = """
from stream_cleaner import labeller, language
from stream_cleaner.settings import CleanerSettings
from stream_cleaner.streaming.agents import load_models_now
assert language.identifier()._predict is None and not labeller._labellers
load_models_now(CleanerSettings(mode="corpus"))
print(language.identifier()._predict is not None, sorted(labeller._labellers))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded, labellers = done.stdout.split(" ", 1)
    assert loaded == "True"
    assert "'corpus'" in labellers


@pytest.mark.parametrize(
    ("options", "native"),
    [
        ({}, True),
        ({"compression_type": "gzip"}, True),
        ({"compression_type": "zstd"}, True),
        ({"enable_idempotence": True}, False),
        ({"transactional_id": "t"}, False),
    ],
)
def test_batches_take_the_native_builder_only_where_it_writes_what_aiokafka_would(options, native):
    """The native record builder writes batches without producer state, compressed or not: a
    producer that is idempotent or transactional keeps aiokafka's builder."""
    from aiokafka import AIOKafkaProducer

    from stream_cleaner._native import native_module
    from stream_cleaner.streaming.patches.batches import _fast_builder

    async def check() -> bool:
        producer = AIOKafkaProducer(bootstrap_servers="127.0.0.1:1", **options)  # never started
        try:
            return _fast_builder(producer, producer.create_batch())
        finally:
            await producer.stop()

    assert asyncio.run(check()) is (native and native_module("record_batch") is not None)
