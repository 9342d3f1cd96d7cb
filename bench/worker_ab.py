"""The worker's output records of two trees for the same input, compared byte for byte.

The pages of PATH as ``stream-cleaner produce`` sends them, a value that is not JSON (a dead
letter) and a page with a header of its own are the input records. For each tree, a fresh
Tansu broker with the worker's default topics and group gets those records, partition for
partition; the tree's worker (``cd TREE; PYTHONPATH=TREE python -m stream_cleaner worker``)
cleans them, and every record of its documents, sentence-scores and dead-letter topics is read
back. Per topic, the key, value and headers of every record must be the same, on the same
partition, and each key's records in the same order. Left out: the ``processing-seconds``
and ``stage-seconds`` headers (timings), the output records' timestamps (the inputs keep
theirs: a dead letter quotes its input's), and the interleaving of different keys in a
partition (the order in which the worker fetched its input partitions).

    .venv/bin/python bench/worker_ab.py --tree /work/baseline --tree . [--pages DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.streaming import outcomes_published  # noqa: E402
from stream_cleaner.streaming.settings import WorkerSettings  # noqa: E402
from stream_cleaner.streaming.stack import (  # noqa: E402
    LOCAL_WORKER_ARGS,
    free_port,
    http_ok,
    tansu_broker,
)
from stream_cleaner.streaming.topics import KafkaSettings, create_topics  # noqa: E402

ROLES = ("documents", "sentences", "dead_letter")
# headers that say how long the cleaning took (`records.timing_headers`): never the same twice
TIMINGS = ("processing-seconds", "stage-seconds")


def topic_of(settings: WorkerSettings, role: str) -> str:
    return {"input": settings.input_topic, "documents": settings.documents_topic,
            "sentences": settings.sentence_scores_topic,
            "dead_letter": settings.dead_letter_topic}[role]  # fmt: skip


async def read_all(kafka: KafkaSettings, topic: str) -> list[Any]:
    """Every record of ``topic``, partition by partition in offset order."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(**kafka.client_kwargs(), group_id=None,
                                enable_auto_commit=False, fetch_max_bytes=64 << 20,
                                max_partition_fetch_bytes=16 << 20)  # fmt: skip
    await consumer.start()
    try:
        tps = [
            TopicPartition(topic, p)
            for p in sorted(
                consumer.partitions_for_topic(topic) or await _partitions(consumer, topic)
            )
        ]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        records: list[Any] = []
        while [tp for tp in tps if await consumer.position(tp) < ends[tp]]:
            for batch in (await consumer.getmany(timeout_ms=500)).values():
                records.extend(batch)
        return sorted(records, key=lambda r: (r.partition, r.offset))
    finally:
        await consumer.stop()


async def _partitions(consumer: Any, topic: str) -> set[int]:
    await consumer.topics()
    return consumer.partitions_for_topic(topic) or set()


async def input_records(kafka: KafkaSettings, source: str) -> list[Any]:
    """The records of ``source``, and two more: ``(partition, key, value, headers,
    timestamp)`` (a dead letter quotes its input's timestamp)."""
    records = [(r.partition, r.key, r.value, list(r.headers), r.timestamp) for r in
               await read_all(kafka, source)]  # fmt: skip
    stamp = records[-1][-1] if records else 1_700_000_000_000
    records.append((0, b"not-json", b"{this is not json", [], stamp))
    records.append((1, b"with-header", b'{"id": "with-header", "url": "http://example.com/", '
                    b'"body": "<p>A page with a header of its own.</p>"}',
                    [("x-crawler", b"v")], stamp))  # fmt: skip
    return records


async def write_input(kafka: KafkaSettings, topic: str, records: list[Any]) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(**kafka.client_kwargs(), acks="all", max_request_size=16 << 20)
    await producer.start()
    try:
        for partition, key, value, headers, timestamp in records:
            await producer.send_and_wait(topic, value, key=key, partition=partition,
                                         headers=headers, timestamp_ms=timestamp)  # fmt: skip
    finally:
        await producer.stop()


def run_worker(tree: Path, broker: str, settings: WorkerSettings, expected: int, log: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "stream_cleaner", "worker", "--bootstrap-servers", broker,
               "--no-create-topics", "--group", settings.group_id,
               "--input-topic", settings.input_topic,
               "--documents-topic", settings.documents_topic,
               "--sentence-scores-topic", settings.sentence_scores_topic,
               "--dead-letter-topic", settings.dead_letter_topic,
               "--web-host", "127.0.0.1", "--web-port", str(port), "--loglevel", "warning",
               *LOCAL_WORKER_ARGS]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with log.open("wb") as out:
        worker = subprocess.Popen(command, cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if worker.poll() is not None:
                raise RuntimeError(f"{tree}'s worker exited: {log.read_text()[-3000:]}")
            try:
                if http_ok(f"{base}/readyz") and outcomes_published(base) >= expected:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"{tree}'s worker did not finish: {log.read_text()[-3000:]}")
    finally:
        worker.send_signal(signal.SIGINT)
        try:
            worker.wait(60)
        except subprocess.TimeoutExpired:
            worker.kill()


def outputs(records: list[Any]) -> tuple[dict[Any, list[Any]], int]:
    """A topic's records as ``{(partition, key): [(value, headers), ...]}`` and their count."""
    by_key: dict[Any, list[Any]] = defaultdict(list)
    for r in records:
        headers = tuple((name, value) for name, value in r.headers if name not in TIMINGS)
        by_key[r.partition, r.key].append((r.value, headers))
    return dict(by_key), len(records)


def show_difference(first: dict[Any, list[Any]], second: dict[Any, list[Any]]) -> None:
    """The fields of the first differing record's JSON value, and its headers."""
    import orjson

    for slot in sorted(set(first) | set(second), key=repr):
        a, b = first.get(slot, []), second.get(slot, [])
        if a == b:
            continue
        for (value_a, headers_a), (value_b, headers_b) in zip(a, b, strict=False):
            if headers_a != headers_b:
                print(f"  {slot}: headers {headers_a} / {headers_b}")
            if value_a != value_b:
                doc_a, doc_b = orjson.loads(value_a), orjson.loads(value_b)
                for field in sorted(set(doc_a) | set(doc_b)):
                    if doc_a.get(field) != doc_b.get(field):
                        print(
                            f"  {slot}: {field}: {doc_a.get(field)!r:.200} / "
                            f"{doc_b.get(field)!r:.200}"
                        )
            return
        print(f"  {slot}: {len(a)} / {len(b)} records")
        return


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, help="a checkout (twice)")
    parser.add_argument("--pages", default=str(REPO / ".cache/data/cleaneval/dev/html"))
    args = parser.parse_args()
    trees = [Path(tree).resolve() for tree in args.tree]
    settings = WorkerSettings()
    specs = settings.topic_specs(partitions=4, replication_factor=1)
    with tempfile.TemporaryDirectory(prefix="worker-ab-") as tmp:
        with tansu_broker(Path(tmp) / "source.log") as broker:
            kafka = KafkaSettings(bootstrap_servers=(broker,))
            create_topics(kafka, specs[:1])
            subprocess.run([sys.executable, "-m", "stream_cleaner", "produce", args.pages,
                            "--bootstrap-servers", broker, "--topic", settings.input_topic],
                           cwd=REPO, check=True, capture_output=True)  # fmt: skip
            records = asyncio.run(input_records(kafka, settings.input_topic))
        inputs, got = [], []
        for i, tree in enumerate(trees):
            with tansu_broker(Path(tmp) / f"broker{i}.log") as broker:
                kafka = KafkaSettings(bootstrap_servers=(broker,))
                create_topics(kafka, specs)
                asyncio.run(write_input(kafka, settings.input_topic, records))
                started = time.monotonic()
                run_worker(tree, broker, settings, len(records), Path(tmp) / f"worker{i}.log")
                print(f"{tree}: {len(records)} inputs cleaned in "
                      f"{time.monotonic() - started:.0f} s")  # fmt: skip
                inputs.append(asyncio.run(read_all(kafka, settings.input_topic)))
                got.append({role: outputs(asyncio.run(read_all(kafka, topic_of(settings, role))))
                            for role in ROLES})  # fmt: skip
    same_input = len({tuple((r.partition, r.key, r.value, tuple(r.headers)) for r in records)
                      for records in inputs}) == 1  # fmt: skip
    print(f"input: {len(records)} records a tree, the same in every tree: {same_input}")
    differ = not same_input
    for role in ROLES:
        same = all(g[role][0] == got[0][role][0] for g in got[1:])
        counts = " / ".join(str(g[role][1]) for g in got)
        print(f"{role}: {counts} records; key, value and headers (but timings) the same: {same}")
        if not same:
            show_difference(got[0][role][0], got[1][role][0])
        differ += not same
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
