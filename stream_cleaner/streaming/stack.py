"""The one-command local stack: a broker, the topics, a worker, pages in, a summary out.

`run_stack` starts a Kafka-protocol broker on 127.0.0.1 (Tansu, or uses the one the user
names), creates the topics, starts one worker process, produces the pages, waits until every
page has an outcome (a cleaned document or a dead letter), prints a summary and a few cleaned
documents, and stops what it started, on Ctrl-C too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import orjson

from ..io import Source
from .client import produce_async
from .settings import WorkerSettings
from .topics import (
    DEAD_LETTER_TOPIC,
    DOCUMENTS_TOPIC,
    KafkaSettings,
    accepts_connections,
    create_topics,
)

TANSU_ENV = "STREAM_CLEANER_TANSU"
# One worker on one machine: a short session makes the group join (which takes about half
# the session timeout on Tansu) quick; a production worker keeps the defaults.
LOCAL_WORKER_ARGS = ("--session-timeout", "6", "--heartbeat-interval", "1")
_REPO = Path(__file__).resolve().parents[2]


@dataclass(slots=True)
class StackResult:
    """What came out of the stack for the pages that went in."""

    produced: int = 0
    documents: list[dict[str, Any]] = field(default_factory=list)
    dead_letters: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    missing: int = 0

    @property
    def sentences(self) -> int:
        return sum(d.get("n_sentences", 0) for d in self.documents)

    @property
    def kept(self) -> int:
        return sum(d.get("n_kept", 0) for d in self.documents)


def find_tansu() -> str:
    """The Tansu binary: $STREAM_CLEANER_TANSU, .cache/tansu/bin/tansu, or PATH."""
    for candidate in (os.environ.get(TANSU_ENV), str(_REPO / ".cache" / "tansu" / "bin" / "tansu")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("tansu")
    if found:
        return found
    raise FileNotFoundError(
        "no Kafka-protocol broker to start: run scripts/install-tansu.sh, set "
        f"{TANSU_ENV}, or give --bootstrap-servers of a running Kafka"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def running(cmd: Sequence[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A child process that is stopped (SIGTERM, then SIGKILL) however the block ends."""
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def tansu_broker(
    log: Path, *, binary: str | None = None, startup_seconds: float = 20.0, attempts: int = 3
) -> Iterator[str]:
    """A memory-only Tansu broker on a free 127.0.0.1 port; yields ``127.0.0.1:PORT``.

    Ready means it answered a metadata request. A port found free can be taken before Tansu
    binds it, so a broker that exits at start is tried again on another port.

    Raises:
        RuntimeError: it did not start, with the end of its log.
    """
    binary = binary or find_tansu()
    for _attempt in range(attempts):
        address = f"127.0.0.1:{free_port()}"
        listener = f"tcp://{address}"
        cmd = [binary, "broker", "--listener-url", listener, "--advertised-listener-url"]
        cmd += [listener, "--storage-engine", "memory://tansu/"]
        with running(cmd, log) as proc:
            deadline = time.monotonic() + startup_seconds
            while proc.poll() is None and time.monotonic() < deadline:
                if asyncio.run(broker_answers(address)):
                    yield address
                    return
                time.sleep(0.1)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:]) if log.exists() else ""
    raise RuntimeError(f"the Tansu broker did not start; its log:\n{tail}")


async def broker_answers(address: str) -> bool:
    """Whether a Kafka broker at ``address`` answers a metadata request within 2 s."""
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.errors import KafkaError

    if not accepts_connections([address], 2.0):  # no client, whose failed bootstrap logs
        return False
    admin = AIOKafkaAdminClient(bootstrap_servers=address, request_timeout_ms=2000)
    try:
        await admin.start()  # bootstrapping is a metadata request
        await admin.list_topics()
    except KafkaError:
        return False
    else:
        return True
    finally:
        await admin.close()


def wait_for(check: Any, what: str, timeout: float, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what}: the process exited with code {proc.returncode}")
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.2)
    raise RuntimeError(f"{what}: not ready after {timeout:.0f} s")


def worker_state(base: str) -> dict[str, Any]:
    """A worker's /readyz body: its checks and its assigned partitions."""
    try:
        with urllib.request.urlopen(f"{base}/readyz", timeout=2) as response:
            return dict(orjson.loads(response.read()))
    except urllib.error.HTTPError as error:  # 503 while not ready: the body still tells
        return dict(orjson.loads(error.read()))


def http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:  # our own 127.0.0.1 worker
        return bool(response.status == 200)


async def collect_outcomes(
    settings: KafkaSettings,
    expected: set[str],
    *,
    timeout: float,
    topics: tuple[str, str] = (DOCUMENTS_TOPIC, DEAD_LETTER_TOPIC),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Read the documents and dead-letter topics (``topics``, in that order) until every
    expected id has an outcome."""
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(
        *topics,
        **settings.client_kwargs(),
        group_id=None,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_bytes=32 * 1024 * 1024,
        max_partition_fetch_bytes=16 * 1024 * 1024,
    )
    documents: list[dict[str, Any]] = []
    dead: list[dict[str, Any]] = []
    seen: set[str] = set()
    await consumer.start()
    try:
        deadline = time.monotonic() + timeout
        while not expected <= seen and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=500)
            for records in batches.values():
                for record in records:
                    value = orjson.loads(record.value)
                    (documents if record.topic == topics[0] else dead).append(value)
                    seen.add(value.get("id", ""))
    finally:
        await consumer.stop()
    return documents, dead


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a plain ``kill``, a supervisor) stops what the stack started, as Ctrl-C does:
    without this the process died at once and left its broker and worker running."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; a caller in another thread keeps its own
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_stack(
    sources: Sequence[Source],
    *,
    bootstrap_servers: str | None = None,
    worker_args: Sequence[str] = (),
    partitions: int = 4,
    timeout: float = 180.0,
    keep_running: bool = False,
    out: TextIO | None = None,
) -> StackResult:
    """Run the whole pipeline on ``sources`` on this machine and report.

    Args:
        sources: the pages to produce.
        bootstrap_servers: a running Kafka to use instead of starting Tansu.
        worker_args: extra ``stream-cleaner worker`` options (``--max-perplexity`` ...).
        partitions: partitions of each topic created.
        timeout: seconds to wait for all outcomes.
        keep_running: after the summary, keep everything up until Ctrl-C.
        out: where the summary goes (default: stdout).
    """
    out = out or sys.stdout
    with (
        _terminate_as_interrupt(),
        tempfile.TemporaryDirectory(prefix="stream-cleaner-stack-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        logs = Path(tmp)
        if bootstrap_servers is None:
            bootstrap_servers = stack.enter_context(tansu_broker(logs / "broker.log"))
            print(f"broker      Tansu on {bootstrap_servers} (memory only)", file=out)
        settings = replace(KafkaSettings.from_env(), bootstrap_servers=bootstrap_servers)
        # the topics the worker will use, as its STREAM_CLEANER_WORKER_* settings name them
        # (with site templates, the table's changelog and the site topic too)
        names = WorkerSettings.from_env()
        specs = names.topic_specs(partitions=partitions, replication_factor=1)
        create_topics(settings, specs)
        print(f"topics      {', '.join(s.name for s in specs)} ({partitions} partitions)", file=out)
        web_port = free_port()
        worker = stack.enter_context(
            running(
                [
                    sys.executable,
                    "-m",
                    "stream_cleaner",
                    "worker",
                    "--bootstrap-servers",
                    bootstrap_servers,
                    "--no-create-topics",
                    "--web-host",
                    "127.0.0.1",
                    "--web-port",
                    str(web_port),
                    *LOCAL_WORKER_ARGS,
                    *worker_args,
                ],
                logs / "worker.log",
            )
        )
        base = f"http://127.0.0.1:{web_port}"
        try:
            wait_for(lambda: http_ok(f"{base}/readyz"), "worker", 90, worker)
        except RuntimeError:
            print((logs / "worker.log").read_text(errors="replace")[-3000:], file=sys.stderr)
            raise
        joined = time.monotonic()
        # a worker is ready before its group hands it partitions; wait for those too, so that
        # the rate below measures cleaning, not the group join (half the session timeout)
        wait_for(
            lambda: worker_state(base).get("assigned_partitions", 0) > 0, "group join", 90, worker
        )
        print(
            f"worker      pid {worker.pid}, joined its group in "
            f"{time.monotonic() - joined:.1f} s, metrics at {base}/metrics",
            file=out,
        )
        result = StackResult()
        started = time.monotonic()
        stats = asyncio.run(produce_async(sources, settings, names.input_topic))
        result.produced = stats.sent
        for skipped in stats.skipped:
            print(f"not sent    {skipped}", file=out)
        expected = {s.doc.id for s in sources if not s.doc.error}
        outputs = (names.documents_topic, names.dead_letter_topic)
        documents, dead = asyncio.run(
            collect_outcomes(settings, expected, timeout=timeout, topics=outputs)
        )
        result.seconds = time.monotonic() - started
        result.documents = documents
        result.dead_letters = Counter(d.get("reason", "unknown") for d in dead)
        result.missing = len(expected - {d.get("id") for d in documents + dead})
        print_summary(result, base, out)
        if keep_running:
            print("\nrunning: Ctrl-C stops the worker and the broker", file=out)
            with contextlib.suppress(KeyboardInterrupt):
                while worker.poll() is None:
                    time.sleep(1)
        return result


def print_summary(result: StackResult, base: str, out: TextIO) -> None:
    """The short report: counts, kept ratio, rate, where the metrics are, a few documents."""
    ratio = result.kept / result.sentences if result.sentences else 0.0
    rate = result.produced / result.seconds if result.seconds else 0.0
    dead = ", ".join(f"{k}={v}" for k, v in sorted(result.dead_letters.items())) or "none"
    print(
        f"\ndocuments   {result.produced} produced, {len(result.documents)} cleaned, "
        f"{sum(result.dead_letters.values())} dead letters ({dead}), "
        f"{result.missing} without an outcome",
        file=out,
    )
    print(f"sentences   {result.kept}/{result.sentences} kept ({ratio:.0%})", file=out)
    print(f"throughput  {rate:.1f} documents/s end to end (produce to last outcome)", file=out)
    print(f"metrics     {base}/metrics", file=out)
    for doc in result.documents[:3]:
        print(f"\n--- {doc.get('id')} ---", file=out)
        print(str(doc.get("text", ""))[:400], file=out)
