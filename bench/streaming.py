"""End-to-end throughput of the streaming worker through a real broker, against the core.

In one run on this machine: for 1 and 2 worker processes in one consumer group, the core's own
rate on the CleanEval test pages, in as many processes at once as there will be workers (two
processes on this machine's two vCPUs each clean about a quarter slower than one alone); then
a fresh Tansu broker, the topics, the workers, all pages produced at once, and the time until
the last outcome. The outcomes are read only once the workers' metrics count them all, and
timed by their records' own timestamps: nothing reads beside the workers while they run.
Prints documents/s, the share of the core's rate per process, end-to-end
latency percentiles (from the input record's timestamp to the output record's) and each
worker's RSS.

The last column is the share of the machine's CPU time its hypervisor took for other guests
while the core was timed and during the run (/proc/stat's steal): on this project's machine
it went from 1 % to over 40 % within an hour, and a rate is only as good as the CPU it got.

Columns that tell where a worker's time goes: "CPU per doc" compares the core's CPU seconds
per page with the workers' (user + system, from /proc); "in the core" is the time the
workers' cleaning threads spent in `clean_document` over the run's wall time (per process);
"broker CPU" is the broker's CPU time over the run's wall time (1 core = 100 %), and "bench
CPU" the bench's own (producing with ``--rate``, watching the workers' metrics); "producing"
is how long the bench took to produce the pages (the workers cannot finish before it).

The machine is shared, and its neighbours' load moves wall-clock rates from one minute to
the next, so each run's core rate is the mean of two timings, just before and just after the
run. ``--repeat N`` prints every run, then the best core rate against the best worker rate
(which may come from different moments), then the median of the runs' own ratios. The core's
CPU per page is measured while the broker and the bench are not running, so it is flattered;
bench/streaming_cpu.py runs the core and the workers at the same time for a fair CPU
comparison.

With ``--rate``, the pages are produced one at a time at a steady rate below the workers'
capacity, and the latencies are what a page takes through a worker that is not behind.

    .venv/bin/python bench/streaming.py [--limit N] [--workers 1,2] [--repeat N] [--backlog]
        [--copies N] [--rate PAGES_PER_SECOND] [--compression CODEC]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data import load_cleaneval

from stream_cleaner import RawDocument, clean_document
from stream_cleaner.io import Source
from stream_cleaner.lm import load_model
from stream_cleaner.streaming.client import produce_async
from stream_cleaner.streaming.stack import (
    free_port,
    http_ok,
    running,
    tansu_broker,
    wait_for,
    worker_state,
)
from stream_cleaner.streaming.topics import (
    DEAD_LETTER_TOPIC,
    DOCUMENTS_TOPIC,
    RAW_HTML_TOPIC,
    KafkaSettings,
    create_topics,
    default_topic_specs,
)

# the share of a run's outcomes the "first 98 %" rate counts (see run_workers)
STEADY_SHARE = 0.98


# the input topic's partitions
PARTITIONS = 4


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def broker_pid(address: str) -> int | None:
    """The process id of the Tansu broker listening on ``address``, found by its command line."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if f"tcp://{address}".encode() in args and any(b"tansu" in a for a in args[:1]):
            return int(cmdline.parent.name)
    return None


def cpu_ticks() -> tuple[int, int]:
    """The machine's CPU time so far, in ticks: (all of it, what the hypervisor stole)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return sum(fields), fields[7]


def steal_share(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of the machine's CPU time the hypervisor stole between two `cpu_ticks`."""
    total = after[0] - before[0]
    return (after[1] - before[1]) / total if total else 0.0


def core_rate(pages: list, model: object) -> tuple[float, float]:
    """The core's pages/s and CPU seconds per page, one process, after a short warm-up."""
    for page in pages[:20]:
        clean_document(page.raw, model=model)
    started, cpu = time.perf_counter(), time.process_time()
    for page in pages:
        clean_document(page.raw, model=model)
    n = len(pages)
    return n / (time.perf_counter() - started), (time.process_time() - cpu) / n


def _core_rate_after(barrier: Any, pages: list, model: object, out: Any) -> None:
    barrier.wait()
    out.put(core_rate(pages, model))


def core_rates(pages: list, model: object, processes: int) -> tuple[float, float]:
    """`core_rate` of one process while ``processes`` run it at once (mean per process).

    Two processes on this machine's two vCPUs each clean about a quarter slower than one
    alone: the reference for n worker processes is n core processes at once.
    """
    if processes == 1:
        return core_rate(pages, model)
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(processes), ctx.Queue()
    children = [ctx.Process(target=_core_rate_after, args=(barrier, pages, model, out))
                for _ in range(processes)]  # fmt: skip
    for child in children:
        child.start()
    results = [out.get() for _ in children]
    for child in children:
        child.join()
    return (statistics.mean(r[0] for r in results), statistics.mean(r[1] for r in results))


def http_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def metric(text: str, name: str) -> float:
    """The value of an unlabelled sample in a Prometheus text page."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise KeyError(name)


def outcomes_published(base: str) -> float:
    """A worker's outcomes so far: cleaned documents and dead letters, from its metrics."""
    total = 0.0
    for line in http_text(f"{base}/metrics").splitlines():
        if line.startswith(("stream_cleaner_documents_cleaned_total ",
                            "stream_cleaner_documents_dead_lettered_total{")):  # fmt: skip
            total += float(line.split()[-1])
    return total


def wait_for_outcomes(bases: list[str], expected: int, timeout: float) -> None:
    """Return once the workers at ``bases`` count ``expected`` outcomes in all, or after
    ``timeout`` seconds.

    Nothing reads the outcome topics while the workers are timed: a reader beside them took
    8 % of a vCPU on this machine, and the broker spent about as much more serving it, where
    a consumer downstream runs on other machines. A scrape of a worker's metrics costs it 3.5 ms of
    CPU. (The topics' end offsets would cost it nothing, but Tansu's end offset of a
    partition stops at its last batch's first record: DEVELOPERS.md.) Replays count twice in
    the workers' counters, so a run with replays may read its last few outcomes as they come.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sum(outcomes_published(base) for base in bases) >= expected:
            return
        time.sleep(0.5)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def record_times(
    settings: KafkaSettings, expected: int, timeout: float
) -> tuple[dict[str, int], dict[str, int]]:
    """Timestamps (ms) by document id of the inputs and of their outcomes (documents or dead
    letters), read until ``expected`` outcomes came.

    Call it once the workers have published ``expected`` outcomes (`wait_for_outcomes`):
    the times are the records' own, so reading them late changes none of them.
    """
    outcomes = await _first_timestamps(settings, [DOCUMENTS_TOPIC, DEAD_LETTER_TOPIC],
                                       expected, timeout)  # fmt: skip
    inputs = await _first_timestamps(settings, [RAW_HTML_TOPIC], len(outcomes), timeout)
    return inputs, outcomes


async def _first_timestamps(
    settings: KafkaSettings, topics: list[str], expected: int, timeout: float
) -> dict[str, int]:
    """The first timestamp of each key of ``topics``, read until ``expected`` keys came."""
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(
        *topics, **settings.client_kwargs(),
        group_id=None, auto_offset_reset="earliest", enable_auto_commit=False,
        fetch_max_bytes=64 * 1024 * 1024, max_partition_fetch_bytes=16 * 1024 * 1024,
    )  # fmt: skip
    seen: dict[str, int] = {}
    await consumer.start()
    try:
        deadline = time.monotonic() + timeout
        while len(seen) < expected and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                for record in records:
                    seen.setdefault(record.key.decode(), record.timestamp)
    finally:
        await consumer.stop()
    return seen


async def produce_paced(
    sources: Sequence[Source],
    settings: KafkaSettings,
    topic: str,
    rate: float | None,
    busy: int | None = None,
) -> None:
    """Send the pages one by one at ``rate`` pages a second, each at its own time, or as fast
    as the producer takes them with ``rate`` None. With ``busy``, page i goes to partition
    ``i % busy`` and the topic's other partitions stay empty; else its key picks one."""
    from aiokafka import AIOKafkaProducer

    from stream_cleaner.streaming.client import envelope_message

    producer = AIOKafkaProducer(**settings.client_kwargs(), acks="all",
                                linger_ms=0 if rate else 5,
                                max_request_size=16 * 1024 * 1024)  # fmt: skip
    await producer.start()
    try:
        loop = asyncio.get_running_loop()
        start, pending = loop.time(), []
        for i, source in enumerate(sources):
            delay = start + i / rate - loop.time() if rate else 0
            if delay > 0:
                await asyncio.sleep(delay)
            key, value, headers = envelope_message(source)
            partition = None if busy is None else i % busy
            pending.append(await producer.send(topic, value=value, key=key, headers=headers,
                                               partition=partition))  # fmt: skip
        await asyncio.gather(*pending)
    finally:
        await producer.stop()


def run_workers(
    sources: list[Source],
    n_workers: int,
    tmp: Path,
    *,
    backlog: bool = False,
    rate: float | None = None,
    busy: int | None = None,
    compression: str = "none",
) -> dict[str, float]:
    with ExitStack() as stack:
        address = stack.enter_context(tansu_broker(tmp / f"broker-{n_workers}.log"))
        settings = KafkaSettings(bootstrap_servers=address)
        create_topics(settings, default_topic_specs(partitions=PARTITIONS, replication_factor=1))
        if backlog:  # the pages wait in the topic before any worker starts
            produce_all(sources, settings, busy)
        workers = []
        bases: list[str] = []
        for i in range(n_workers):  # all started at once: they join the group together
            web = free_port()
            workers.append(stack.enter_context(running(
                [sys.executable, "-m", "stream_cleaner", "worker", "--bootstrap-servers",
                 address, "--no-create-topics", "--web-host", "127.0.0.1",
                 "--web-port", str(web), "--compression", compression],
                tmp / f"worker-{n_workers}-{i}.log")))  # fmt: skip
            bases.append(f"http://127.0.0.1:{web}")
        for base, proc in zip(bases, workers, strict=True):
            wait_for(lambda base=base: http_ok(f"{base}/readyz"), "worker", 90, proc)
        # the clock starts once the group has handed out every partition: with a backlog, a
        # worker that joined first may have been cleaning alone until then, and those outcomes
        # are left out of the rate
        wait_for(
            lambda: sum(worker_state(b).get("assigned_partitions", 0) for b in bases) == PARTITIONS
            and not any(worker_state(b).get("rebalancing") for b in bases),
            "group join", 120, workers[0],
        )  # fmt: skip
        formed_ms = time.time() * 1000
        cleaning_before = sum(_cleaning_seconds(b) for b in bases)
        cpu_before = sum(cpu_seconds(w.pid) for w in workers)
        broker = broker_pid(address)
        broker_before = cpu_seconds(broker) if broker else float("nan")
        if rate is not None:
            asyncio.run(produce_paced(sources, settings, RAW_HTML_TOPIC, rate, busy))
        elif not backlog:
            produce_all(sources, settings, busy)
        own_before = time.process_time()
        wait_for_outcomes(bases, len(sources), timeout=600)
        own_cpu = time.process_time() - own_before
        cpu = sum(cpu_seconds(w.pid) for w in workers) - cpu_before
        broker_cpu = (cpu_seconds(broker) if broker else float("nan")) - broker_before
        cleaning = sum(_cleaning_seconds(b) for b in bases) - cleaning_before
        inputs, outcomes = asyncio.run(record_times(settings, len(sources), timeout=600))
        latencies = sorted(t - inputs[i] for i, t in outcomes.items() if i in inputs)
        timed = len(outcomes)
        elapsed = (max(outcomes.values()) - min(inputs.values())) / 1000
        start = min(inputs.values())
        if backlog:
            # from the first outcome, or from the group's forming when a worker had begun
            # alone, to the last outcome: the outcomes published after that start
            start = max(formed_ms, min(outcomes.values()))
            timed = sum(t > start for t in outcomes.values())
            elapsed = (max(outcomes.values()) - start) / 1000
        # the same rate up to the outcome that makes STEADY_SHARE of them: the last pages of a
        # drain can wait on fetches while most partitions have run dry (Tansu answers those
        # only when their maximum wait is up: the worker's --fetch-max-wait, 0.1 s, where
        # Faust's 1.5 s made the rate depend on the drain's last second), a wait that only
        # the end of the input has
        after = sorted(t for t in outcomes.values() if t > start)
        k = max(1, math.ceil(STEADY_SHARE * len(after)))
        steady = k / max((after[k - 1] - start) / 1000, 1e-9) if after else float("nan")
        return {
            "outcomes": len(outcomes),
            "timed": timed,
            "seconds": elapsed,
            "produce_seconds": (max(inputs.values()) - min(inputs.values())) / 1000,
            "docs_per_second": timed / elapsed,
            "steady_per_second": steady,
            "p50_ms": statistics.median(latencies),
            "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
            "rss_mb": max(rss_mb(w.pid) for w in workers),
            "cpu_per_doc": cpu / timed,
            "core_share": cleaning / (elapsed * n_workers),
            "broker_cpu": broker_cpu / elapsed,
            "bench_cpu": own_cpu / elapsed,
        }


def produce_all(sources: list[Source], settings: KafkaSettings, busy: int | None) -> None:
    """Every page to the input topic, as fast as it goes (into ``busy`` partitions only)."""
    if busy is None:
        asyncio.run(produce_async(sources, settings, RAW_HTML_TOPIC))
    else:
        asyncio.run(produce_paced(sources, settings, RAW_HTML_TOPIC, None, busy))


def _cleaning_seconds(base: str) -> float:
    """A worker's time in `clean_document` so far (its processing-time histogram's sum)."""
    return metric(http_text(f"{base}/metrics"), "stream_cleaner_document_processing_seconds_sum")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, help="use only the first N CleanEval test pages")
    parser.add_argument("--workers", default="1,2", help="worker process counts to run")
    parser.add_argument(
        "--backlog", action="store_true",
        help="produce every page before the workers start, and time how fast they drain the "
        "topic (from the first outcome, or the group's forming if later, to the last): the "
        "workers' rate without the bench producing beside them; latencies then measure the "
        "wait in the backlog",
    )  # fmt: skip
    parser.add_argument(
        "--repeat", type=int, default=1,
        help="runs per worker count; each run is a row, then the best rates of all runs and "
        "the median of the runs' own ratios (a shared machine's neighbours only ever slow a "
        "run down)",
    )  # fmt: skip
    parser.add_argument(
        "--copies", type=int, default=1,
        help="produce each page N times (distinct ids): longer runs, the same mix of pages",
    )  # fmt: skip
    parser.add_argument(
        "--rate", type=float,
        help="produce the pages at this many a second, one at a time, while the workers run "
        "(a steady load below their capacity): the latencies are then a page's own time "
        "through the worker, not its wait behind the others",
    )  # fmt: skip
    parser.add_argument(
        "--busy-partitions", type=int, choices=range(1, PARTITIONS + 1), metavar="N",
        help=f"put every page into the first N of the input topic's {PARTITIONS} partitions "
        "and leave the others idle (default: the keys spread them over all)",
    )  # fmt: skip
    parser.add_argument(
        "--compression", default="none",
        help="the workers' codec for their output batches (worker --compression)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.rate is not None and args.backlog:
        parser.error("--rate and --backlog exclude each other")
    pages = load_cleaneval("test")[: args.limit]
    sources = [Source(RawDocument(body=p.raw, id=f"{p.name}.{k}" if k else p.name, url=p.url),
                      origin=p.name)
               for k in range(args.copies) for p in pages]  # fmt: skip
    model = load_model()
    busy = (
        f", into {args.busy_partitions} of the {PARTITIONS} partitions"
        if args.busy_partitions
        else ""
    )
    if args.compression != "none":
        busy += f"; the workers' outputs in {args.compression}"
    print(f"CleanEval test, {len(pages)} pages ({len(sources)} produced{busy}); the core "
          f"timed just before and just after each run, in as many processes at once as there "
          f"are workers (pages/s per process, the mean of the two)\n")  # fmt: skip
    print(
        "| worker processes | run | core pages/s | outcomes | seconds | documents/s "
        "| per process vs core | documents/s, first 98 % | per process vs core, first 98 % "
        "| CPU per doc, core / worker | in the core | broker CPU | bench CPU "
        "| producing "
        "| p50 latency | p99 latency | worker RSS | steal, core / run |"
    )
    print("|---:|---|" + "---:|" * 16)
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.workers.split(",")):
            runs = []
            for k in range(args.repeat):
                # the core's rate bracketing the run: the host's speed drifts within a minute
                ticks = [cpu_ticks()]
                before = core_rates(pages, model, n)
                ticks.append(cpu_ticks())
                run = run_workers(sources, n, Path(tmp), backlog=args.backlog, rate=args.rate,
                                  busy=args.busy_partitions,
                                  compression=args.compression)  # fmt: skip
                ticks.append(cpu_ticks())
                after = core_rates(pages, model, n)
                ticks.append(cpu_ticks())
                run["steal_core"] = (steal_share(*ticks[0:2]) + steal_share(*ticks[2:4])) / 2
                run["steal_run"] = steal_share(*ticks[1:3])
                core = (statistics.mean((before[0], after[0])),
                        statistics.mean((before[1], after[1])))  # fmt: skip
                runs.append((core, run))
                print(_row(n, f"{k + 1}", core[0], core[1], run), flush=True)
            if args.repeat > 1:
                rate = max(core[0] for core, _ in runs)
                core_cpu = min(core[1] for core, _ in runs)
                r = dict(max((run for _, run in runs), key=lambda run: run["docs_per_second"]))
                r["steady_per_second"] = max(run["steady_per_second"] for _, run in runs)
                r["cpu_per_doc"] = min(run["cpu_per_doc"] for _, run in runs)
                print(_row(n, "best of each", rate, core_cpu, r), flush=True)
                ratio = statistics.median(run["docs_per_second"] / n / core[0]
                                          for core, run in runs)  # fmt: skip
                cpu_ratio = statistics.median(core[1] / run["cpu_per_doc"] for core, run in runs)
                steady = statistics.median(run["steady_per_second"] / n / core[0]
                                           for core, run in runs)  # fmt: skip
                print(f"| {n} | median of the runs' own ratios | | | | | {ratio:.0%} | "
                      f"| {steady:.0%} | {cpu_ratio:.0%} |" + " |" * 8, flush=True)  # fmt: skip
    return 0


def _row(n: int, label: str, rate: float, core_cpu: float, r: dict[str, float]) -> str:
    """One row of the table: a run (or the best of several) against the core's rate."""
    outcomes = str(r["outcomes"])
    if r["timed"] != r["outcomes"]:
        outcomes += f" ({r['timed']} timed)"
    return (f"| {n} | {label} | {rate:.1f} | {outcomes} | {r['seconds']:.1f} "
            f"| {r['docs_per_second']:.1f} | {r['docs_per_second'] / n / rate:.0%} "
            f"| {r['steady_per_second']:.1f} | {r['steady_per_second'] / n / rate:.0%} "
            f"| {core_cpu / r['cpu_per_doc']:.0%} | {r['core_share']:.0%} "
            f"| {r['broker_cpu']:.0%} | {r['bench_cpu']:.0%} "
            f"| {r['produce_seconds']:.1f} s | {r['p50_ms'] / 1000:.2f} s "
            f"| {r['p99_ms'] / 1000:.2f} s | {r['rss_mb']:.0f} MB "
            f"| {r['steal_core']:.0%} / {r['steal_run']:.0%} |")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
