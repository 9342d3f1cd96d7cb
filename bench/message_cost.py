"""What the worker's own records cost before any Kafka work: `clean_message` against the core.

The worker's cleaning thread runs `streaming.records.clean_message` on each input message: it
decodes the JSON envelope, cleans the page with `clean_document`, and writes the document
record and one record per sentence. This times both on the CleanEval test pages in one
process (CPU time, whole passes alternating, after one untimed pass of each: the first pass
loads what loads lazily and fills KenLM's memo tables), so the ratio is the least a worker
can spend a page against the core, with Faust, aiokafka and the broker costing nothing.
bench/streaming.py and bench/streaming_cpu.py measure the rest.

    .venv/bin/python bench/message_cost.py [--passes 3] [--limit N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data import load_cleaneval

from stream_cleaner import RawDocument, clean_document
from stream_cleaner.io import Source
from stream_cleaner.lm import load_model
from stream_cleaner.settings import CleanerSettings
from stream_cleaner.streaming.client import envelope_message
from stream_cleaner.streaming.records import InputMessage, clean_message


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()

    settings = CleanerSettings()
    model = load_model(settings.model_path)
    docs = [
        RawDocument(body=page.raw, id=page.name, url=page.url)
        for page in load_cleaneval("test", limit=args.limit)
    ]
    messages = []
    for offset, doc in enumerate(docs):  # the envelopes `stream-cleaner produce` writes
        key, value, headers = envelope_message(Source(doc=doc, origin=doc.id, relpath=None))
        messages.append(InputMessage(topic="crawl.raw-html.v1", partition=0, offset=offset,
                                     key=key, value=value, headers=tuple(headers)))  # fmt: skip
    for doc, msg in zip(docs, messages, strict=True):
        clean_document(doc, settings=settings, model=model)
        clean_message(msg, worker_version="bench", settings=settings, model=model)

    core_ms, message_ms = [], []
    for _ in range(args.passes):
        started = time.process_time()
        for doc in docs:
            clean_document(doc, settings=settings, model=model)
        core_ms.append((time.process_time() - started) / len(docs) * 1000)
        started = time.process_time()
        for msg in messages:
            clean_message(msg, worker_version="bench", settings=settings, model=model)
        message_ms.append((time.process_time() - started) / len(docs) * 1000)

    print(f"CleanEval test, {len(docs)} pages, {args.passes} passes, CPU ms a page")
    print("| pass | clean_document | clean_message | clean_message / clean_document |")
    print("|---:|---:|---:|---:|")
    for i, (core, message) in enumerate(zip(core_ms, message_ms, strict=True), 1):
        print(f"| {i} | {core:.3f} | {message:.3f} | {message / core:.3f} |")
    ratio = statistics.median(m / c for c, m in zip(core_ms, message_ms, strict=True))
    core, message = statistics.median(core_ms), statistics.median(message_ms)
    print(f"| median | {core:.3f} | {message:.3f} | {ratio:.3f} (of the passes' ratios) |")


if __name__ == "__main__":
    main()
