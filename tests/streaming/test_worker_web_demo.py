"""The web demo on a worker's port (``--web-demo``) against the real broker: clients of the
demo cannot stall the stream.

A worker that served the demo on its cleaning thread let two clients posting a 2 MB page in a
loop cut a 3,000-page drain from 178 to 3 documents/s and push its memory from 194 to 794 MB.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import http.client
import json
import os
import statistics
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from stream_cleaner.web.config import MAX_BODY_BYTES_DEFAULT

from .test_worker_broker import (
    SAMPLES,
    _create_topics,
    _free_port,
    _get,
    _metric,
    _produce_only,
    _start_worker,
    _stop,
    _tail,
    _wait_for,
    _worker_command,
)

pytestmark = pytest.mark.broker

MIN_RATIO = 0.8
CYCLES = 12  # of four windows: without the clients, with them twice, without
WINDOW_SECONDS = 2.0
AHEAD_PAGES = 2_000  # the backlog kept ahead of the worker (it cleans 100-300 documents/s here)


def _demo_page() -> bytes:
    """A ``/api/clean`` body of about 2 MB (the default limit): the samples' markup repeated."""
    samples = "".join(
        path.read_bytes().decode("latin-1") for path in sorted(SAMPLES.glob("*.html"))
    )
    html = samples * (MAX_BODY_BYTES_DEFAULT // len(samples) + 1)
    body = json.dumps({"html": html}).encode()
    while len(body) > MAX_BODY_BYTES_DEFAULT:
        html = html[: len(html) * MAX_BODY_BYTES_DEFAULT // len(body) - 1000]
        body = json.dumps({"html": html}).encode()
    return body


class Hammer:
    """Clients that post a large page to ``/api/clean`` in a loop, each on its own connection,
    while ``on`` is set; ``statuses`` counts the answers."""

    def __init__(self, port: int, clients: int) -> None:
        self.port = port
        self.body = _demo_page()
        self.on = threading.Event()
        self.stopping = threading.Event()
        self.statuses: Counter[int | str] = Counter()
        self.in_flight = 0
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._client, daemon=True) for _ in range(clients)]
        for thread in self.threads:
            thread.start()

    def _client(self) -> None:
        connection = None
        while not self.stopping.is_set():
            if not self.on.wait(0.1):
                continue
            with self._lock:
                self.in_flight += 1
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                connection.request(
                    "POST", "/api/clean", self.body, {"Content-Type": "application/json"}
                )
                response = connection.getresponse()
                response.read()
                self.statuses[response.status] += 1
            except OSError as exc:
                self.statuses[type(exc).__name__] += 1
                connection = None
                time.sleep(0.1)
            finally:
                with self._lock:
                    self.in_flight -= 1

    def answered(self) -> int:
        return self.statuses[200]

    def pause(self) -> None:
        """Stop sending, and wait for the answers of the requests sent."""
        self.on.clear()
        deadline = time.monotonic() + 60
        while self.in_flight and time.monotonic() < deadline:
            time.sleep(0.1)

    def stop(self) -> None:
        self.on.clear()
        self.stopping.set()
        for thread in self.threads:
            thread.join(60)


async def _timestamps(servers: str, topic: str) -> list[float]:
    """The timestamps (the worker's producer sets them), in seconds, of every document in
    ``topic``, one per id."""
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=servers,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        max_partition_fetch_bytes=16 * 2**20,
    )
    stamps: dict[bytes, float] = {}
    await consumer.start()
    try:
        idle_since = time.monotonic()
        while time.monotonic() - idle_since < 3:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                idle_since = time.monotonic()
                for record in records:  # a replay keeps the first
                    stamps.setdefault(record.key, record.timestamp / 1000)
    finally:
        await consumer.stop()
    return sorted(stamps.values())


def _cpu_seconds(pid: int | None) -> float:
    """User and system CPU time of a process so far."""
    with contextlib.suppress(OSError, TypeError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return 0.0


def _wait_idle(pid: int, seconds: float = 60) -> None:
    """Until a process has taken no CPU for half a second (at most ``seconds``)."""
    deadline = time.monotonic() + seconds
    last = _cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = _cpu_seconds(pid)
        if now == last:
            return
        last = now


def _rss_mb(pid: int | None) -> int:
    with contextlib.suppress(OSError, StopIteration, TypeError):
        status = Path(f"/proc/{pid}/status").read_text()
        return int(next(x for x in status.splitlines() if x.startswith("VmRSS")).split()[1]) >> 10
    return 0


class Feeder:
    """Keeps the input topic ``ahead`` pages ahead of what the worker has cleaned, from a
    thread, so the worker always has a backlog to drain; ``min_ahead`` is the least it had
    while ``watching`` is set."""

    def __init__(self, broker: str, topic: str, base: str, ahead: int) -> None:
        self.broker, self.topic, self.base, self.ahead = broker, topic, base, ahead
        self.pages = [path.read_bytes() for path in sorted(SAMPLES.glob("*.html"))]
        self.produced = 0
        self.min_ahead = ahead
        self.watching = threading.Event()
        self.stopping = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def cleaned(self) -> int:
        metrics = _get(f"{self.base}/metrics")[1].decode()
        return int(_metric(metrics, "stream_cleaner_documents_cleaned_total"))

    def _run(self) -> None:
        try:
            while not self.stopping.wait(0.3):
                ahead = self.produced - self.cleaned()
                if self.watching.is_set():
                    self.min_ahead = min(self.min_ahead, ahead)
                if ahead < self.ahead:
                    numbers = range(self.produced, self.produced + self.ahead // 2)
                    inputs = [
                        (f"page-{n}".encode(), self.pages[n % len(self.pages)],
                         [("id", f"page-{n}".encode())], None)
                        for n in numbers
                    ]  # fmt: skip
                    asyncio.run(_produce_only(self.broker, self.topic, inputs))
                    self.produced += len(inputs)
        except BaseException as exc:
            self.error = exc

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(60)


def test_demo_clients_do_not_slow_the_stream(broker: str, tmp_path: Path) -> None:
    """A worker drains a backlog while two clients post a 2 MB page to ``/api/clean`` in a
    loop, in windows of two seconds that alternate with windows without them (cycles of one
    without, two with, one without; before a window without them, the clients have their last
    answers and the demo's process is idle). In the median cycle the worker cleans at least
    80 % as many documents a second with the clients as without. Short alternating windows
    and the median keep the load of the machine's other processes, which moves the rate by
    half in a few seconds here, out of the ratio."""
    tag = uuid.uuid4().hex[:8]
    names = _create_topics(broker, tag)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "worker.log"
    command = [*_worker_command(broker, names, port, f"g{tag}"), "--web-demo"]
    proc = _start_worker(command, log, tmp_path)
    hammer = Hammer(port, clients=2)
    feeder = None
    windows: list[tuple[bool, float, float]] = []  # (with the clients, start, end): time.time()
    peak = {"worker": 0, "demo": 0}
    try:
        _wait_for(f"{base}/readyz", proc, log, 60)
        hammer.on.set()  # the demo's process starts with the first request, before any window
        deadline = time.monotonic() + 300
        while not hammer.answered() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert hammer.answered(), (hammer.statuses, _tail(log))
        hammer.pause()
        demo = _demo_pid(proc.pid)
        assert demo is not None, "no demo process"

        feeder = Feeder(broker, names["input"], base, AHEAD_PAGES)
        while feeder.produced < AHEAD_PAGES:
            assert feeder.error is None and proc.poll() is None, (feeder.error, _tail(log))
            time.sleep(0.1)
        feeder.watching.set()
        cpu = {"worker": _cpu_seconds(proc.pid), "demo": _cpu_seconds(demo)}
        for loaded in (False, True, True, False) * CYCLES:
            if loaded:
                hammer.on.set()
            elif hammer.on.is_set():
                hammer.pause()
                _wait_idle(demo)  # a request whose answer timed out may still be cleaned
            start = time.time()
            while time.time() < start + WINDOW_SECONDS:
                assert proc.poll() is None, _tail(log)
                if loaded:
                    peak["worker"] = max(peak["worker"], _rss_mb(proc.pid))
                    peak["demo"] = max(peak["demo"], _rss_mb(demo))
                time.sleep(0.1)
            windows.append((loaded, start, time.time()))
        hammer.pause()
        feeder.watching.clear()
        cpu = {"worker": _cpu_seconds(proc.pid) - cpu["worker"],
               "demo": _cpu_seconds(demo) - cpu["demo"]}  # fmt: skip
        assert feeder.error is None, feeder.error
        assert feeder.min_ahead > 0, "the worker ran out of backlog"
    finally:
        hammer.stop()
        if feeder is not None:
            feeder.stop()
        _stop(proc)

    stamps = asyncio.run(_timestamps(broker, names["documents"]))
    rates = [
        (loaded, (bisect.bisect(stamps, end) - bisect.bisect(stamps, start)) / (end - start))
        for loaded, start, end in windows
    ]
    cycles = [rates[i : i + 4] for i in range(0, len(rates), 4)]
    ratios = [
        statistics.mean(r for loaded, r in cycle if loaded)
        / statistics.mean(r for loaded, r in cycle if not loaded)
        for cycle in cycles
    ]
    ratio = statistics.median(ratios)
    report = (
        f"documents/s by cycle (without, with, with, without): "
        f"{[[round(r) for _, r in cycle] for cycle in cycles]}; ratio by cycle "
        f"{[round(r, 2) for r in ratios]}, median {ratio:.2f}; demo answers "
        f"{dict(hammer.statuses)}; CPU seconds over the windows: worker {cpu['worker']:.1f}, "
        f"demo process {cpu['demo']:.1f}; peak RSS with the clients: worker {peak['worker']} "
        f"MB, demo process {peak['demo']} MB"
    )
    print(report)
    assert ratio >= MIN_RATIO, report


def _demo_pid(worker: int) -> int | None:
    """The demo's child process of the worker (``python -m stream_cleaner.web.isolation``)."""
    with contextlib.suppress(OSError):
        for children in Path(f"/proc/{worker}/task").glob("*/children"):
            for child in children.read_text().split():
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
                if b"stream_cleaner.web.isolation" in cmdline:
                    return int(child)
    return None
