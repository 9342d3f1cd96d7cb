"""The Kafka tools: ``topics`` (create, list), ``produce`` and ``tail``.

Their options are added when one of them is parsed (`CommandParser`), with the defaults
read from `streaming.topics`, which imports no Kafka client: the commands load aiokafka only
when they run (tests/streaming/test_topics.py).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from typing import Any

from .options import (
    CommandParser,
    add_kafka_options,
    global_options_after,
    kafka_from,
    require_stream_extra,
    skipped_records,
)
from .status import exit_status


def register(add_command: Callable[..., CommandParser]) -> None:
    """Add the commands of this module."""
    add_command(
        "topics",
        help="create or list the worker's Kafka topics",
        description="Create the worker's four Kafka topics (input, cleaned documents, sentence "
        "scores, dead letters) through the broker's admin API, or list them with their "
        "partitions. Nothing relies on the broker's auto-creation. Connection settings come "
        "from STREAM_CLEANER_KAFKA_* variables (BOOTSTRAP_SERVERS, SECURITY_PROTOCOL, "
        "SASL_MECHANISM, SASL_USERNAME, SASL_PASSWORD, SSL_CAFILE); topic names from the "
        "worker's STREAM_CLEANER_WORKER_*_TOPIC variables (INPUT, DOCUMENTS, SENTENCE_SCORES, "
        "DEAD_LETTER), else the defaults.",
        add_options=_topics_options,
    ).set_defaults(handler=_cmd_topics)
    add_command(
        "produce",
        help="send pages to the input topic",
        description="Send every page found in PATHs (HTML files, directory trees, WARC, JSON "
        "Lines, - for stdin) to the input topic, as JSON envelopes (default) or as raw HTML "
        "with the id and url in headers. Waits until the broker has them all. Inputs a reader "
        "could not read (a broken WARC record) are listed on stderr, not sent.",
        add_options=_produce_options,
    ).set_defaults(handler=_cmd_produce)
    add_command(
        "tail",
        help="print the records of a topic",
        description="Print a topic's records as JSON Lines (partition, offset, key, headers, "
        "value), from the beginning, without joining a consumer group; stops after --max "
        "records or --idle seconds without one.",
        add_options=_tail_options,
    ).set_defaults(handler=_cmd_tail)


def _topics_options(p: CommandParser) -> None:
    from ..streaming import topics

    after = global_options_after()
    topic_commands = p.add_subparsers(dest="topics_command", required=True, metavar="ACTION")
    create = topic_commands.add_parser(
        "create",
        parents=[after],
        help="create the topics that do not exist yet",
        description="Create the topics that do not exist yet; existing ones are left as they "
        "are and reported as 'exists'. Prints one line per topic.",
    )
    listing = topic_commands.add_parser(
        "list",
        parents=[after],
        help="list the topics and their partitions",
        description="Print each of the worker's topics with its partition count, or "
        "'missing'. Creates nothing.",
    )
    for sub in (create, listing):
        add_kafka_options(sub)
        sub.add_argument(
            "--input-topic",
            help=f"name of the raw HTML input topic (default {topics.RAW_HTML_TOPIC})",
        )
    listing.add_argument(
        "--all", action="store_true", help="list every topic on the cluster instead"
    )
    create.add_argument(
        "--partitions",
        type=int,
        help=f"partitions of every topic (default {topics.PARTITIONS_DEFAULT})",
    )
    create.add_argument(
        "--replication-factor",
        type=int,
        help=f"copies of each partition (default: {topics.MAX_DEFAULT_REPLICATION_FACTOR}, or "
        "the number of brokers when fewer)",
    )
    create.add_argument(
        "--retention-ms",
        type=int,
        help="retention of the input and output topics in ms (default "
        f"{topics.RETENTION_MS_DEFAULT}, {topics.RETENTION_MS_DEFAULT // topics.DAY_MS} days)",
    )
    create.add_argument(
        "--max-message-bytes",
        type=int,
        help=f"max.message.bytes of every topic (default {topics.MAX_MESSAGE_BYTES_DEFAULT}, "
        f"{topics.MAX_MESSAGE_BYTES_DEFAULT >> 20} MiB: a 10 MiB page as base64 in a JSON "
        "envelope)",
    )
    create.add_argument(
        "--dead-letter-retention-ms",
        type=int,
        help="retention of the dead-letter topic in ms (default "
        f"{topics.DEAD_LETTER_RETENTION_MS_DEFAULT}, "
        f"{topics.DEAD_LETTER_RETENTION_MS_DEFAULT // topics.DAY_MS} days)",
    )


def _produce_options(p: CommandParser) -> None:
    from ..streaming import topics

    p.add_argument("paths", nargs="+", metavar="PATH")
    add_kafka_options(p)
    p.add_argument("--topic", default=None, help=f"input topic (default {topics.RAW_HTML_TOPIC})")
    p.add_argument("--form", choices=("envelope", "raw"), default="envelope")
    p.add_argument(
        "--compression",
        default="none",
        help=f"the codec of the record batches sent: {', '.join(topics.COMPRESSION_TYPES)} "
        "(default %(default)s)",
    )


def _tail_options(p: CommandParser) -> None:
    p.add_argument("topic", metavar="TOPIC")
    add_kafka_options(p)
    p.add_argument("--max", type=int, dest="max_records", help="stop after N records")
    p.add_argument(
        "--idle",
        type=float,
        default=5.0,
        help="stop after this many seconds without a record (default %(default)g; 0: never)",
    )
    p.add_argument("--latest", action="store_true", help="only records that arrive from now")


def _cmd_topics(args: argparse.Namespace) -> int:
    require_stream_extra()
    from dataclasses import replace

    from ..streaming import topics
    from ..streaming.settings import WorkerSettings

    if args.timeout <= 0:
        raise ValueError("--timeout must be positive")
    kafka = topics.KafkaSettings.from_env()
    if args.bootstrap_servers:
        kafka = replace(kafka, bootstrap_servers=args.bootstrap_servers)
    # the worker's own topics (STREAM_CLEANER_WORKER_*: names, site templates, re-keying), so
    # that a deployment that renames them creates the topics its workers read and write
    worker = WorkerSettings.from_env().with_options(input_topic=args.input_topic)
    options = {
        "partitions": getattr(args, "partitions", None),
        "replication_factor": getattr(args, "replication_factor", None),
        "retention_ms": getattr(args, "retention_ms", None),
        "dead_letter_retention_ms": getattr(args, "dead_letter_retention_ms", None),
        "max_message_bytes": getattr(args, "max_message_bytes", None),
    }
    specs = worker.topic_specs(**{k: v for k, v in options.items() if v is not None})
    aiokafka_log = logging.getLogger("aiokafka")
    level = aiokafka_log.level
    if not args.verbose:
        # aiokafka logs every failed connection attempt; the one-line error main() prints
        # says the same once
        aiokafka_log.setLevel(logging.CRITICAL)
    try:
        if args.topics_command == "create":
            outcomes = topics.create_topics(kafka, specs, timeout=args.timeout)
            existing = [name for name, outcome in outcomes.items() if outcome == "exists"]
            # a topic that was there already keeps its own partition count: show it
            actual = topics.describe_topics(kafka, existing, timeout=args.timeout)
            for spec in specs:
                count = actual.get(spec.name, spec.partitions)
                note = "" if count == spec.partitions else f" (not {spec.partitions}: left as is)"
                print(f"{spec.name:<32} {outcomes[spec.name]:<8} {_partitions(count)}{note}")
            return 0
        names = None if args.all else [spec.name for spec in specs]
        partitions = topics.describe_topics(kafka, names, timeout=args.timeout)
        for name in partitions if names is None else names:
            print(f"{name:<32} {_partitions(partitions.get(name))}")
        return 0
    finally:
        aiokafka_log.setLevel(level)


def _partitions(count: int | None) -> str:
    if count is None:
        return "missing"
    return f"{count} partition{'' if count == 1 else 's'}"


def _cmd_produce(args: argparse.Namespace) -> int:
    require_stream_extra()
    from ..io import ReadStats, iter_documents
    from ..streaming.client import produce
    from ..streaming.topics import RAW_HTML_TOPIC

    read = ReadStats()
    sources = iter_documents(args.paths, stdin=sys.stdin.buffer, stats=read)
    stats = produce(sources, kafka_from(args), args.topic or RAW_HTML_TOPIC, form=args.form,
                    compression=args.compression)  # fmt: skip
    for skipped in stats.skipped:
        print(f"not sent: {skipped}", file=sys.stderr)
    print(
        f"stream-cleaner produce: {stats.sent} pages ({stats.bytes / 1e6:.1f} MB) sent to "
        f"{args.topic or RAW_HTML_TOPIC}, {len(stats.skipped)} not sent{skipped_records(read)}",
        file=sys.stderr,
    )
    return exit_status(failed=len(stats.skipped), total=stats.sent + len(stats.skipped))


def _cmd_tail(args: argparse.Namespace) -> int:
    require_stream_extra()
    import asyncio

    import orjson

    from ..streaming.client import tail_async

    def emit(record: dict[str, Any]) -> None:
        sys.stdout.buffer.write(orjson.dumps(record) + b"\n")
        sys.stdout.buffer.flush()

    asyncio.run(
        tail_async(
            kafka_from(args),
            args.topic,
            emit,
            from_beginning=not args.latest,
            max_records=args.max_records,
            idle_seconds=args.idle or None,
        )
    )
    return 0
