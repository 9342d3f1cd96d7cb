"""The worker's Kafka record batches and produce requests: aiokafka's against stream-cleaner's.

Cleans the CleanEval test pages once, as the worker does (envelope in, `outcome_records` out),
then writes every page's sentence records into 1 MiB record batches, as
`patches.batches.BatchSend` does, through each builder in turn: aiokafka's
``DefaultRecordBatchBuilder`` one record at a time (the loop of `patches.batches._append_all`
without the native builder), and
``_native/record_batch.RecordBatchBuilder`` a page's records (`records.PackedValues`) in one
`append_packed` call. Both build their batches (header and CRC-32C), and aiokafka's reader must
find the same records in both, every CRC right. Then the batches go into produce requests of
four partitions each, framed as ``AIOKafkaConnection.send`` sends them (size, header,
request), once by aiokafka's own encoding and connection and once by
`streaming.patches.produce_requests`' one-pass structs framed in one join (as the connection does
after `patches.install`), which must write the same bytes. Prints milliseconds per
page for each, the best of ``--repeat`` rounds, with the core's own time per page beside them
(after a warm-up of 20 pages): on the event loop, these milliseconds are taken from the
cleaning thread, which shares the GIL.

    .venv/bin/python bench/record_batches.py [--limit N] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data import load_cleaneval

BATCH_BYTES = 1024 * 1024  # the worker's producer batch size (app.PRODUCER_BATCH_BYTES)


def with_aiokafka(outcomes: list, codec: int = 0) -> list[bytes]:
    """The outcomes' sentence records in batches of aiokafka's builder (``codec``: the
    attributes' compression bits)."""
    from aiokafka.record.default_records import DefaultRecordBatchBuilder

    batches, offset = [], 0
    builder = DefaultRecordBatchBuilder(2, codec, 0, -1, -1, 0, BATCH_BYTES)
    for outcome in outcomes:
        key = outcome.document.key
        for value in outcome.sentence_values:
            # no timestamp: the time now, as the worker's batches write them
            if builder.append(offset, None, key, value, []) is None:
                batches.append(builder.build())
                builder = DefaultRecordBatchBuilder(2, codec, 0, -1, -1, 0, BATCH_BYTES)
                offset = 0
                builder.append(offset, None, key, value, [])
            offset += 1
    batches.append(builder.build())
    return batches


def with_native(outcomes: list, module: object, codec: int = 0) -> list[bytes]:
    """The same with the native builder, a page's records in one call, as the worker writes
    them (`patches.batches.BatchSend`)."""
    from stream_cleaner.streaming.patches.batches import _codec_encoders

    def new_builder() -> object:
        return module.RecordBatchBuilder(BATCH_BYTES, codec, _codec_encoders().get(codec))

    batches, offset = [], 0
    builder = new_builder()
    for outcome in outcomes:
        key, values, start = outcome.document.key, outcome.sentence_values, 0
        while True:
            end = builder.append_packed(offset, key, values.data, values.ends, start, BATCH_BYTES)
            offset += end - start
            if end == len(values):
                break
            batches.append(builder.build())
            builder, offset, start = new_builder(), 0, end
    batches.append(builder.build())
    return batches


# a request's batches: one per partition of the sentence topic (4 in bench/streaming.py)
REQUEST_PARTITIONS = 4


def produce_requests(batches: list[bytes]) -> list[object]:
    """The batches in ``ProduceRequest``s of `REQUEST_PARTITIONS` partitions, as the sender
    makes them (not yet encoded)."""
    from aiokafka.protocol.produce import ProduceRequest

    return [
        ProduceRequest(
            transactional_id=None, required_acks=-1, timeout=30_000,
            topics=[("clean.sentence-scores.v1",
                     list(enumerate(batches[i : i + REQUEST_PARTITIONS])))],
        )
        for i in range(0, len(batches), REQUEST_PARTITIONS)
    ]  # fmt: skip


def encode_requests(requests: list[object], struct_class: type) -> list[bytes]:
    """Each request built as ``struct_class`` and framed as ``AIOKafkaConnection.send`` does:
    aiokafka's own, or the one join of `patches.install` for a one-pass struct."""
    import struct

    framed = []
    for correlation_id, request in enumerate(requests):
        built = request.build(struct_class)
        header = built.build_request_header(correlation_id=correlation_id, client_id="bench")
        if hasattr(built, "frame"):
            framed.append(built.frame(header.encode()))
            continue
        message = header.encode() + built.encode()
        framed.append(struct.pack(">i", len(message)) + message)
    return framed


def _records(batches: list[bytes]) -> list[tuple] | None:
    """Every record's offset, key, value and headers, batch by batch; None if a CRC is wrong."""
    from aiokafka.record.default_records import DefaultRecordBatch

    found = []
    for data in batches:
        batch = DefaultRecordBatch(bytes(data))
        if not batch.validate_crc():
            return None
        found.append([(r.offset, r.key, r.value, r.headers) for r in batch])
    return found


def worker_outcomes(limit: int | None) -> tuple[list, list[float]]:
    """The CleanEval test pages (the first ``limit``) cleaned as the worker cleans them
    (envelope in, `outcome_records` out), after a warm-up of 20 pages: the outcomes of those
    that became documents, and the seconds `clean_document` took for each page."""
    from stream_cleaner import RawDocument, clean_document
    from stream_cleaner.io import Source
    from stream_cleaner.lm import load_model
    from stream_cleaner.streaming.agents import settle_gc
    from stream_cleaner.streaming.client import envelope_message
    from stream_cleaner.streaming.records import InputMessage, decode_input, outcome_records

    pages = load_cleaneval("test")[:limit]
    model = load_model()
    for page in pages[:20]:
        clean_document(page.raw, model=model)
    settle_gc()  # the worker's garbage collector settings
    outcomes, core = [], []
    for i, page in enumerate(pages):
        source = Source(RawDocument(body=page.raw, id=page.name, url=page.url), origin=page.name)
        key, value, headers = envelope_message(source)
        msg = InputMessage(topic="in", partition=0, offset=i, key=key, value=value,
                           headers=tuple(headers))  # fmt: skip
        raw = decode_input(msg, max_bytes=BATCH_BYTES * 16)
        started = time.perf_counter()
        doc = clean_document(raw, model=model)
        core.append(time.perf_counter() - started)
        outcome = outcome_records(msg, raw, doc, worker_version="bench")
        if outcome.document is not None:
            outcomes.append(outcome)
    return outcomes, core


def bench_setup(
    argv: list[str] | None, description: str, repeat: int
) -> tuple[argparse.Namespace, object, list, list[float]] | None:
    """The options (``--limit``, ``--repeat``), the native record batch module and
    `worker_outcomes`; ``None``, said on stderr, when the native modules are not built."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--limit", type=int, help="use only the first N CleanEval test pages")
    parser.add_argument("--repeat", type=int, default=repeat, help="rounds; the best is printed")
    args = parser.parse_args(argv)

    from stream_cleaner._native import native_module

    module = native_module("record_batch")
    if module is None:
        print("the native modules are not built: run scripts/build_native.py", file=sys.stderr)
        return None
    return args, module, *worker_outcomes(args.limit)


def main(argv: list[str] | None = None) -> int:
    setup = bench_setup(argv, __doc__.splitlines()[0], repeat=5)
    if setup is None:
        return 1
    args, module, outcomes, core = setup
    records = sum(len(outcome.sentence_values) for outcome in outcomes)

    from aiokafka.protocol.produce import ProduceRequest_v7

    from stream_cleaner.streaming.patches.produce_requests import one_pass

    timed = ("aiokafka record builder", "native record builder",
             "aiokafka's request encoding", "one-pass request encoding")  # fmt: skip
    best = dict.fromkeys(timed, float("inf"))
    for _ in range(args.repeat):
        started = time.perf_counter()
        reference = with_aiokafka(outcomes)
        best[timed[0]] = min(best[timed[0]], time.perf_counter() - started)
        started = time.perf_counter()
        ours = with_native(outcomes, module)
        best[timed[1]] = min(best[timed[1]], time.perf_counter() - started)
        requests = produce_requests(ours)
        started = time.perf_counter()
        reference_requests = encode_requests(requests, ProduceRequest_v7)
        best[timed[2]] = min(best[timed[2]], time.perf_counter() - started)
        started = time.perf_counter()
        our_requests = encode_requests(requests, one_pass(ProduceRequest_v7))
        best[timed[3]] = min(best[timed[3]], time.perf_counter() - started)
    same = _records(ours) == _records(reference)
    same_requests = our_requests == reference_requests
    n = len(outcomes)
    kib = sum(map(len, ours)) / n / 1024
    print(
        f"CleanEval test, {n} documents, {records / n:.0f} sentence records and {kib:.1f} KiB"
        f" a page, in {len(ours)} batches of 1 MiB and {len(requests)} produce requests"
    )
    print("| writer | ms a page | share of the core's time |")
    print("|---|---:|---:|")
    core_ms = sum(core) / len(core) * 1000
    print(f"| the core (`clean_document`) | {core_ms:.3f} | |")
    for name, seconds in best.items():
        ms = seconds / n * 1000
        print(f"| {name} | {ms:.3f} | {ms / core_ms:.1%} |")
    print(f"the same records, every CRC right: {same}; the same request bytes: {same_requests}")
    return 0 if same and same_requests else 1


if __name__ == "__main__":
    sys.exit(main())
