"""``worker`` (the Faust worker on the Kafka topics) and ``stack`` (all of it, locally).

The worker's flags are `WorkerSettings`' option fields (`options.add_settings_options`),
built only when the worker's parser is used: its module imports no Kafka client.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..settings import ENV_PREFIX, CleanerSettings
from .options import (
    SAMPLES_DIR,
    CommandParser,
    add_cleaner_options,
    add_kafka_options,
    add_settings_options,
    cleaner_settings,
    flag_of,
    option_fields,
    option_values,
    require_stream_extra,
)
from .status import EXIT_ERROR, exit_status

if TYPE_CHECKING:
    from ..streaming.stack import StackResult

log = logging.getLogger("stream_cleaner")
# the cleaner's options that `stack` passes on to the worker it starts
STACK_CLEANER_OPTIONS = ("max_sentence_perplexity", "mode")


def register(add_command: Callable[..., CommandParser]) -> None:
    """Add the commands of this module."""
    add_command(
        "stack",
        help="run everything locally: broker, topics, worker, pages in, summary out",
        description="Start a Kafka-protocol broker on 127.0.0.1 (Tansu; or use "
        "--bootstrap-servers), create the topics, start a worker, produce the pages in PATHs "
        "(default: the bundled samples), wait until each has a cleaned document or a dead "
        "letter, print a summary and a few cleaned documents, then stop everything it "
        "started (Ctrl-C too).",
        add_options=_stack_options,
    ).set_defaults(handler=_cmd_stack)
    add_command(
        "worker",
        help="run the streaming worker (Faust) on the Kafka topics",
        description="Clean the pages of the input topic and publish cleaned documents, "
        "sentence scores and dead letters, with at-least-once delivery. Creates the topics "
        "first unless --no-create-topics. Serves /metrics, /healthz and /readyz (and with "
        "--web-demo the web demo and API). Settings come "
        "from flags, else STREAM_CLEANER_WORKER_* (GROUP_ID, BATCH_SIZE, WEB_PORT, "
        "INPUT_TOPIC...), STREAM_CLEANER_KAFKA_* and STREAM_CLEANER_* variables. SIGTERM or "
        "SIGINT stop it: acknowledged work is committed, the rest is cleaned again later.",
        add_options=_worker_options,
    ).set_defaults(handler=_cmd_worker)


def _stack_options(p: CommandParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--bootstrap-servers", help="use this running Kafka instead of Tansu")
    p.add_argument(
        "--keep-running",
        action="store_true",
        help="keep the broker and worker up after the summary, until Ctrl-C",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=180.0,
        help="seconds to wait for all outcomes (default %(default)g)",
    )
    p.add_argument("--model", help="KenLM model for the worker (default: the bundled bigram)")
    add_settings_options(p, CleanerSettings, ENV_PREFIX, names=STACK_CLEANER_OPTIONS)


def _worker_options(p: CommandParser) -> None:
    from ..streaming.settings import WORKER_ENV_PREFIX, WorkerSettings

    add_kafka_options(p)
    add_settings_options(p, WorkerSettings, WORKER_ENV_PREFIX)
    p.add_argument(
        "--web-demo",
        action="store_true",
        default=None,
        help="also serve the web demo and HTTP API (/demo, /api/...) on the web port, cleaning "
        "in a process of their own at the lowest CPU priority, never on the stream's thread "
        "(default off; STREAM_CLEANER_WEB_ENABLED; the other STREAM_CLEANER_WEB_* variables "
        "set their limits)",
    )
    p.add_argument(
        "--no-create-topics",
        action="store_true",
        help="do not create missing topics at start-up (they must exist)",
    )
    p.add_argument("--loglevel", default="info", help="Faust log level (default %(default)s)")
    add_cleaner_options(p)


def _cmd_stack(args: argparse.Namespace) -> int:
    require_stream_extra()
    from ..io import iter_documents
    from ..streaming.stack import run_stack

    sources = list(iter_documents(args.paths or [str(SAMPLES_DIR)]))
    worker_args = ["--model", args.model] if args.model else []
    for field in option_fields(CleanerSettings, STACK_CLEANER_OPTIONS):
        value = getattr(args, field.name)
        if value is not None:  # the worker's flag is the same, generated from the same field
            worker_args += [flag_of(field), str(value)]
    result = run_stack(
        sources,
        bootstrap_servers=args.bootstrap_servers,
        worker_args=worker_args,
        timeout=args.timeout,
        keep_running=args.keep_running,
    )
    return stack_exit_status(result)


def stack_exit_status(result: StackResult) -> int:
    """``stack``'s exit code: `EXIT_ERROR` when a page got no outcome (the stack failed, not
    the page), else the codes of ``clean`` with dead letters as the inputs that failed."""
    if result.missing:
        return EXIT_ERROR
    return exit_status(failed=sum(result.dead_letters.values()), total=result.produced)


def _cmd_worker(args: argparse.Namespace) -> int:
    require_stream_extra()
    from dataclasses import replace

    from ..streaming import patches, topics
    from ..streaming.agents import load_models_now
    from ..streaming.app import WorkerSettings, create_app, run_worker

    if args.timeout <= 0:
        raise ValueError("--timeout must be positive")
    settings = WorkerSettings.from_env()
    kafka = settings.kafka
    if args.bootstrap_servers:
        kafka = replace(kafka, bootstrap_servers=args.bootstrap_servers)
    settings = settings.with_options(
        kafka=kafka,
        cleaner=cleaner_settings(args, settings.cleaner),
        web=settings.web.with_options(enabled=args.web_demo),
        **option_values(WorkerSettings, args),
    )
    # first: refused releases of aiokafka or faust-streaming stop the worker before it loads
    # its models or waits for brokers
    patches.require_tested(allow_untested=settings.allow_untested_clients)
    settings.check_timeouts()
    load_models_now(settings.cleaner)  # fail now, before joining the group
    if settings.broker_wait_seconds > 0:  # a worker started before its cluster answers waits
        topics.wait_for_brokers(settings.kafka, settings.broker_wait_seconds)
    specs = settings.topic_specs()
    if not args.no_create_topics:
        outcomes = topics.create_topics(kafka, specs, timeout=args.timeout)
        created = [name for name, outcome in outcomes.items() if outcome == "created"]
        if created:
            log.warning("created the topics %s", ", ".join(created))
    else:  # nothing relies on auto-creation: a missing topic stops the worker now, named
        found = topics.describe_topics(kafka, [spec.name for spec in specs], timeout=args.timeout)
        missing = [spec.name for spec in specs if spec.name not in found]
        if missing:
            raise RuntimeError(
                f"the topics {', '.join(missing)} do not exist: create them with `stream-cleaner "
                "topics create` under the worker's STREAM_CLEANER_WORKER_* settings, or start "
                "the worker without --no-create-topics"
            )
    return run_worker(create_app(settings), loglevel=args.loglevel)
