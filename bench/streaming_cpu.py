"""CPU seconds per page of the streaming worker against the core's, measured at the same time.

One Tansu broker; one worker per code tree given (default: this checkout), each in a consumer
group of its own and writing topics of its own, all reading the same CleanEval test pages; and
the core cleaning the same pages in another process alongside them. Everything runs at once
on the shared machine, so a neighbour's load slows all of them alike, and the CPU time per page
(user + system, from /proc) compares the worker's overhead with the core's cost even when the
wall-clock rates of bench/streaming.py move with the load. A worker's CPU is also split by
thread: the event loop (Faust, aiokafka, publishing, metrics), the cleaning thread (decoding
the input, the core, serialising the records) and the others (Faust's consumer thread).
Comparing two trees (the commit before a change and after) shows what the change saved:

    git archive OLD | tar -x -C /tmp/old   # then:
    .venv/bin/python bench/streaming_cpu.py --tree /tmp/old --tree .
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data import load_cleaneval
from streaming import _first_timestamps, cpu_seconds, wait_for_outcomes

from stream_cleaner import RawDocument
from stream_cleaner.io import Source
from stream_cleaner.streaming.client import produce_async
from stream_cleaner.streaming.stack import free_port, http_ok, tansu_broker, wait_for, worker_state
from stream_cleaner.streaming.topics import (
    RAW_HTML_TOPIC,
    KafkaSettings,
    create_topics,
    default_topic_specs,
)

REPO = Path(__file__).resolve().parent.parent


def thread_seconds(pid: int) -> dict[int, float]:
    """User + system CPU seconds of each thread of a process so far, by thread id."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rpartition(")")[2].split()
            found[int(task.name)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError):
            pass  # the thread ended
    return found


def split_threads(pid: int, before: dict[int, float], after: dict[int, float]) -> list[float]:
    """A worker's CPU seconds between two readings: the event loop (the main thread), the
    cleaning thread (the busiest other one) and all the rest (Faust's consumer thread...)."""
    spent = {tid: seconds - before.get(tid, 0.0) for tid, seconds in after.items()}
    loop = spent.pop(pid, 0.0)
    cleaning = max(spent.values(), default=0.0)
    return [loop, cleaning, sum(spent.values()) - cleaning]


def core_loop(limit: int | None) -> int:
    """The child process: warm up, say ``ready``, wait for a line, clean every page once."""
    from stream_cleaner import clean_document
    from stream_cleaner.lm import load_model

    pages = load_cleaneval("test")[:limit]
    model = load_model()
    for page in pages[:20]:
        clean_document(page.raw, model=model)
    print("ready", flush=True)
    sys.stdin.readline()
    started, cpu = time.perf_counter(), time.process_time()
    for page in pages:
        clean_document(page.raw, model=model)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(json.dumps({"pages": len(pages), "seconds": seconds, "cpu": cpu}), flush=True)
    return 0


def run(trees: list[Path], limit: int | None, tmp: Path) -> None:
    pages = load_cleaneval("test")[:limit]
    sources = [Source(RawDocument(body=p.raw, id=p.name, url=p.url), origin=p.name)
               for p in pages]  # fmt: skip
    with ExitStack() as stack:
        address = stack.enter_context(tansu_broker(tmp / "broker.log"))
        settings = KafkaSettings(bootstrap_servers=address)
        outputs = []
        for i in range(len(trees)):
            names = {"documents_topic": f"t{i}.clean.documents.v1",
                     "sentence_scores_topic": f"t{i}.clean.sentence-scores.v1",
                     "dead_letter_topic": f"t{i}.clean.dead-letter.v1"}  # fmt: skip
            # the input topic exists once; the others' input topic names are never read
            create_topics(settings, default_topic_specs(
                partitions=4, replication_factor=1,
                input_topic=RAW_HTML_TOPIC if i == 0 else f"t{i}.unused.v1", **names))  # fmt: skip
            outputs.append(names)
        workers, bases = [], []
        for i, tree in enumerate(trees):
            web = free_port()
            cmd = [sys.executable, "-m", "stream_cleaner", "worker", "--bootstrap-servers",
                   address, "--no-create-topics", "--web-host", "127.0.0.1", "--web-port",
                   str(web), "--group", f"cpu-{i}"]  # fmt: skip
            for option, name in outputs[i].items():
                cmd += ["--" + option.removesuffix("_topic").replace("_", "-") + "-topic", name]
            log = stack.enter_context(open(tmp / f"worker-{i}.log", "wb"))
            # cwd: ``python -m`` imports the package of the working directory first
            proc = subprocess.Popen(cmd, cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree)),
                                    stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
            stack.callback(_stop, proc)
            workers.append(proc)
            bases.append(f"http://127.0.0.1:{web}")
        for base, proc in zip(bases, workers, strict=True):
            wait_for(lambda b=base: http_ok(f"{b}/readyz"), "worker", 120, proc)
            wait_for(
                lambda b=base: worker_state(b).get("assigned_partitions", 0) == 4,
                "group join", 120, proc,
            )  # fmt: skip
        core = subprocess.Popen(
            [sys.executable, __file__, "--core-loop", *(["--limit", str(limit)] if limit else [])],
            cwd=trees[-1], env=dict(os.environ, PYTHONPATH=str(trees[-1])),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        stack.callback(_stop, core)
        assert core.stdout is not None and core.stdin is not None
        core.stdout.readline()  # ready
        cpu_before = [cpu_seconds(w.pid) for w in workers]
        threads_before = [thread_seconds(w.pid) for w in workers]
        core.stdin.write("go\n")
        core.stdin.flush()
        asyncio.run(produce_async(sources, settings, RAW_HTML_TOPIC))
        for base in bases:  # nothing reads the outputs while the workers run
            wait_for_outcomes([base], len(sources), 600)
        cpu = [cpu_seconds(w.pid) - before for w, before in zip(workers, cpu_before, strict=True)]
        threads = [split_threads(w.pid, before, thread_seconds(w.pid))
                   for w, before in zip(workers, threads_before, strict=True)]  # fmt: skip
        done = [asyncio.run(_first_timestamps(
                    settings, [names["documents_topic"], names["dead_letter_topic"]],
                    len(sources), 600)) for names in outputs]  # fmt: skip
        inputs = asyncio.run(_first_timestamps(settings, [RAW_HTML_TOPIC], len(sources), 600))
        result = json.loads(core.stdout.readline())
    start = min(inputs.values())
    core_ms = result["cpu"] / result["pages"] * 1000
    print(f"CleanEval test, {len(pages)} pages, everything at once\n")
    print(
        "| who | outcomes | seconds | pages/s | CPU ms per page | core's CPU / this "
        "| event loop ms | cleaning thread ms | other threads ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rate = result["pages"] / result["seconds"]
    print(f"| core, one process | {result['pages']} | {result['seconds']:.1f} "
          f"| {rate:.1f} | {core_ms:.2f} | 100% | | | |")  # fmt: skip
    for tree, times, seconds, split in zip(trees, done, cpu, threads, strict=True):
        elapsed = (max(times.values()) - start) / 1000
        ms = seconds / len(times) * 1000
        per_thread = " | ".join(f"{part / len(times) * 1000:.2f}" for part in split)
        print(f"| worker, {tree} | {len(times)} | {elapsed:.1f} | {len(times) / elapsed:.1f} "
              f"| {ms:.2f} | {core_ms / ms:.0%} | {per_thread} |")  # fmt: skip


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tree", action="append", type=Path,
        help="a checkout whose worker to run (repeatable; default: this one)",
    )  # fmt: skip
    parser.add_argument("--limit", type=int, help="use only the first N CleanEval test pages")
    parser.add_argument("--core-loop", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.core_loop:
        return core_loop(args.limit)
    trees = [tree.resolve() for tree in args.tree or [REPO]]
    with tempfile.TemporaryDirectory() as tmp:
        run(trees, args.limit, Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
