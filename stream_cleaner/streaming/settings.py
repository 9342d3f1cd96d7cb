"""The worker's settings: `WorkerSettings`, every default in one place, read from the
environment (``STREAM_CLEANER_WORKER_*``) or set by ``stream-cleaner worker``'s options.

Apart from the Faust app (`app`) so that the command line can build the worker's flags from
these fields (`stream_cleaner.cli.options`) without importing Faust, aiokafka or Prometheus;
imported by `app` (which builds the worker from them), `runtime` and the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final

from ..settings import CleanerSettings, option, values_from_env
from ..sites import SiteSettings
from ..web.config import WebSettings
from .patches.offsets import OFFSET_RESET_DEFAULT, OFFSET_RESET_POLICIES
from .records import MAX_PAGE_BYTES_DEFAULT, REKEY_MODES
from .topics import (
    BROKER_WAIT_SECONDS_DEFAULT,
    COMPRESSION_TYPES,
    DEAD_LETTER_TOPIC,
    DOCUMENTS_TOPIC,
    MAX_MESSAGE_BYTES_DEFAULT,
    PARTITIONS_DEFAULT,
    RAW_HTML_TOPIC,
    SENTENCE_SCORES_TOPIC,
    SITE_TOPIC,
    KafkaSettings,
    TopicSpec,
    default_topic_specs,
)

WORKER_ENV_PREFIX: Final = "STREAM_CLEANER_WORKER_"
SITE_ENV_PREFIX: Final = "STREAM_CLEANER_SITE_"
GROUP_ID_DEFAULT: Final = "stream-cleaner"
# A batch amortises the hop to the cleaning thread and the wait for acknowledgements; 16
# pages of ~50 KB take ~0.2 s to clean, well inside every broker timeout.
# How long a thread may hold the GIL while another waits for it (Python's default: 5 ms).
# The cleaning thread and the event loop take turns; fewer forced turns cost less: with a
# backlog of the 684 CleanEval test pages one worker cleaned 139-147 documents/s at 20 ms
# against 107-128 at 5 ms and 119-124 at 1 ms (bench/streaming.py --backlog, interleaved
# runs on a busy machine). The loop still gets the GIL within 20 ms: heartbeats are due in
# seconds.
GIL_SWITCH_INTERVAL_SECONDS: Final = 0.02
# A batch amortises the hop to the cleaning thread and the wait for acknowledgements; 16
# pages of ~50 KB take ~0.2 s to clean, well inside every broker timeout.
# Pages per batch: with a backlog of the 684 CleanEval test pages one worker made 150-173
# documents/s with 32 against 131-169 with 16 (interleaved runs): fewer batches, less per-batch
# work on the event loop. Each batch's pages are in memory at once: mind very large pages.
BATCH_SIZE_DEFAULT: Final = 32
# How long a batch may wait for more pages after its first one arrived. 0: a batch is what
# has arrived when the cleaning thread is free (the next one fills while a batch is cleaned),
# so no page waits for pages that have not come, and a backlog still makes whole batches.
# With 0.5, the last pages of every burst waited half a second for a batch that never filled.
BATCH_WITHIN_SECONDS_DEFAULT: Final = 0.0
# Bytes of input a batch holds at most (it ends with the message that reaches them). A
# cleaned page and its records take several times the page's size until the batch is
# acknowledged, and three batches are in flight (filling, cleaning, publishing): a backlog of
# 2 MB pages took a worker to 1.5 GB with batches of 32 pages. CleanEval pages (37 KB on
# average) never reach it.
BATCH_MAX_BYTES_DEFAULT: Final = 16 * 1024 * 1024
# Fetched messages waiting for the agent. Faust's default, 4096, held a whole backlog in
# memory (30 pages of 7 MB: 1.4 GB, with the batches above); with 4, 560 MB. The fetcher
# refills the queue from the consumer's prefetched records, in memory: a backlog of CleanEval
# pages drained as fast with 4 or 32 (/tmp/drain.py, three interleaved runs each).
STREAM_BUFFER_EVENTS: Final = 8
# The largest record batch the agent fills (patches.batches.BatchSend), one per topic and partition:
# a CleanEval page's ~200 sentence records are ~50 KB, so batches of 256 KiB made about four
# produce requests where one would do. With 1 MiB batches a drain of 1,368 pages cost the event
# loop 0.68-0.80 ms a page against 0.84-0.86, and the broker (Tansu) 0.32-0.37 against
# 0.40-0.49 (three interleaved drains each; 4 MiB: no better). 1 MiB stays under a Kafka
# broker's default `message.max.bytes` (1 MiB + 12 bytes), though `topics create` allows 14 MiB.
PRODUCER_BATCH_BYTES: Final = 1024 * 1024
WEB_HOST_DEFAULT: Final = "0.0.0.0"  # a pod's probes and Prometheus come from outside
WEB_PORT_DEFAULT: Final = 6066  # Faust's own default
# Kafka's defaults (45 s session) make a dead worker's partitions wait long for a new owner;
# cleaning runs off the event loop, so heartbeats keep flowing and 30 s is plenty.
SESSION_TIMEOUT_SECONDS_DEFAULT: Final = 30.0
HEARTBEAT_INTERVAL_SECONDS_DEFAULT: Final = 3.0
REQUEST_TIMEOUT_SECONDS_DEFAULT: Final = 40.0
# How often acknowledged offsets are committed: what a crash replays at most, in seconds.
COMMIT_INTERVAL_SECONDS_DEFAULT: Final = 1.0
# The longest a fetch waits for records. Faust asks aiokafka for 1,500 ms, and a fetch of a
# worker's idle partitions held back the next records of its busy ones for as long
# (patches.offsets.fetching_within): with a backlog in one of four partitions, one worker made 151
# documents/s at 1,500 ms and 330-357 at 50-500. A fetch returns as soon as records come, so
# a short wait costs only more requests from an idle worker (ten a second per broker).
FETCH_MAX_WAIT_SECONDS_DEFAULT: Final = 0.1
# How often the consumer lag is measured: one ListOffsets request to the broker each time.
LAG_INTERVAL_SECONDS_DEFAULT: Final = 5.0


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """Everything the worker is configured with, defaults in one place.

    Attributes:
        kafka: how to reach the cluster (brokers, SASL/SSL).
        cleaner: the core's settings (thresholds, model path, parser, time budget).
        input_topic, documents_topic, sentence_scores_topic, dead_letter_topic: topic names.
        group_id: the consumer group, also the Faust app id.
        batch_size: most input messages cleaned and published together.
        batch_within_seconds: longest wait for a batch to fill after its first page arrived;
            0 (the default) cleans what has arrived as soon as the cleaning thread is free.
        batch_max_bytes: a batch also ends once its messages reach this many bytes: a
            batch's pages and what cleaning made of them stay in memory until it is
            acknowledged.
        max_page_bytes: larger pages end as ``too_large`` dead letters.
        max_message_bytes: the producer's largest request and the consumer's largest fetch
            per partition; at least the topics' ``max.message.bytes``.
        web_host, web_port: where ``/metrics``, ``/healthz`` and ``/readyz`` are served (and
            the web demo and API, when ``web.enabled``).
        session_timeout_seconds: how long the group waits for a silent worker.
        heartbeat_interval_seconds: how often the worker tells the group it is alive.
        request_timeout_seconds: how long one broker request may take.
        commit_interval_seconds: how often acknowledged offsets are committed.
        fetch_max_wait_seconds: the longest a fetch waits for records to come.
        compression: the codec of the output record batches, one of `COMPRESSION_TYPES`
            (Kafka's ``compression.type`` of the producer); ``none`` by default.
        broker_wait_seconds: how long ``stream-cleaner worker`` waits at start for a broker
            to answer (`topics.wait_for_brokers`) before it gives up; 0 does not wait.
        lag_interval_seconds: how often ``stream_cleaner_consumer_lag`` is measured.
        datadir: Faust's data directory (unused without tables); a temporary one if ``None``.
        web: the web port's guards, and the web demo and API, off unless ``web.enabled``
            (``STREAM_CLEANER_WEB_*``).
        site_templates: learn each site's template and drop the blocks that repeat across
            its pages (`streaming.sitestate`); the state lives in a changelog-backed table.
        site_partitions: partitions of the table's changelog topic: the input topic's.
        sites: window, thresholds and caps of the site statistics (``STREAM_CLEANER_SITE_*``).
        rekey: with site templates, which input messages go to ``site_topic`` keyed by their
            site before they are cleaned (`records.site_to_rekey`): ``missing`` (default)
            those without a key, ``all`` every one whose key is not its site, ``off`` none.
        site_topic: where re-keyed messages go; partitioned like the input topic.
        warmup_seconds: with site templates, hold a new site's pages until the site has
            ``min_pages`` other pages for each, for at most this long (`streaming.warmup`);
            ``0`` cleans them at once, without site evidence.
        warmup_max_pages: the most pages held at once (the oldest is let go first).
        allow_untested_clients: start even with aiokafka or faust-streaming releases outside
            the tested range (`patches.versions.SUPPORTED`), whose internals the worker patches.
        offset_reset: where an input partition whose committed offset is outside its log
            (records lost by the broker, or deleted by retention before they were cleaned) is
            read again: ``earliest`` (default), from its log start, at least once; ``latest``,
            from its end, skipping what it holds (`patches.offsets.OFFSET_RESET_POLICIES`). Each
            reset is counted (``stream_cleaner_offset_resets_total``) and logged as an error.
            A partition without a committed offset is always read from its log start.
    """

    kafka: KafkaSettings = field(default_factory=KafkaSettings)
    cleaner: CleanerSettings = field(default_factory=CleanerSettings)
    input_topic: str = option(RAW_HTML_TOPIC, "raw HTML input topic")
    documents_topic: str = option(DOCUMENTS_TOPIC, "cleaned documents")
    sentence_scores_topic: str = option(SENTENCE_SCORES_TOPIC, "sentence scores")
    dead_letter_topic: str = option(DEAD_LETTER_TOPIC, "dead letters")
    group_id: str = option(GROUP_ID_DEFAULT, "consumer group", flag="--group")
    batch_size: int = option(BATCH_SIZE_DEFAULT, "pages cleaned and published together")
    batch_within_seconds: float = option(
        BATCH_WITHIN_SECONDS_DEFAULT,
        "seconds a batch may wait to fill after its first page (0: clean what has arrived as "
        "soon as the cleaning thread is free)",
        flag="--batch-within",
    )
    batch_max_bytes: int = option(
        BATCH_MAX_BYTES_DEFAULT, "a batch also ends once its messages reach this many bytes"
    )
    max_page_bytes: int = option(
        MAX_PAGE_BYTES_DEFAULT, "larger pages become too_large dead letters"
    )
    max_message_bytes: int = option(
        MAX_MESSAGE_BYTES_DEFAULT,
        "largest record produced or fetched per partition; the brokers' and topics' limits "
        "must allow it",
    )
    web_host: str = option(WEB_HOST_DEFAULT, "bind address of the web pages")
    web_port: int = option(WEB_PORT_DEFAULT, "port of the web pages")
    session_timeout_seconds: float = option(
        SESSION_TIMEOUT_SECONDS_DEFAULT,
        "seconds the group waits for a silent worker",
        flag="--session-timeout",
    )
    heartbeat_interval_seconds: float = option(
        HEARTBEAT_INTERVAL_SECONDS_DEFAULT,
        "seconds between heartbeats",
        flag="--heartbeat-interval",
    )
    request_timeout_seconds: float = REQUEST_TIMEOUT_SECONDS_DEFAULT
    commit_interval_seconds: float = COMMIT_INTERVAL_SECONDS_DEFAULT
    fetch_max_wait_seconds: float = option(
        FETCH_MAX_WAIT_SECONDS_DEFAULT,
        "seconds a fetch waits at most for records to come",
        flag="--fetch-max-wait",
    )
    # no choices: the flag has always taken any codec and left the check to __post_init__
    compression: str = option(
        "none", f"the codec of the output record batches: {', '.join(COMPRESSION_TYPES)}"
    )
    broker_wait_seconds: float = option(
        BROKER_WAIT_SECONDS_DEFAULT,
        "seconds to wait at start for a broker to answer (0: no wait); --timeout then bounds "
        "creating the topics",
        flag="--broker-wait",
    )
    lag_interval_seconds: float = option(
        LAG_INTERVAL_SECONDS_DEFAULT,
        "seconds between measures of the consumer lag",
        flag="--lag-interval",
    )
    datadir: str | None = None
    web: WebSettings = field(default_factory=WebSettings)
    site_templates: bool = False
    site_partitions: int = PARTITIONS_DEFAULT
    sites: SiteSettings = field(default_factory=SiteSettings)
    rekey: str = "missing"
    site_topic: str = SITE_TOPIC
    warmup_seconds: float = 0.0
    warmup_max_pages: int = 1000
    allow_untested_clients: bool = option(
        False,
        "start even when the installed aiokafka or faust-streaming is outside the releases "
        "the worker is tested with (it patches their internals: pages may be lost silently)",
    )
    offset_reset: str = option(
        OFFSET_RESET_DEFAULT,
        "where a partition whose log no longer holds its committed offset (records lost or "
        "deleted by retention) is read again: earliest (its log start, at least once) or "
        "latest (its end, skipping what it holds)",
        choices=OFFSET_RESET_POLICIES,
    )

    def __post_init__(self) -> None:
        for each in fields(self):  # NaN passes every comparison below
            value = getattr(self, each.name)
            if isinstance(value, float) and math.isnan(value):
                raise ValueError(f"{each.name} must be a number, not {value}")
        names = self.topic_names
        if len(set(names)) != len(names):
            raise ValueError(f"the four topics need four different names, not {names}")
        if self.rekey not in REKEY_MODES:
            raise ValueError(f"rekey must be one of {REKEY_MODES}, not {self.rekey!r}")
        if self.rekey_mode != "off" and self.site_topic in names:
            raise ValueError(f"the site topic {self.site_topic!r} must be a topic of its own")
        if not self.group_id:
            raise ValueError("group_id must not be empty")
        if self.batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if self.batch_within_seconds < 0:
            raise ValueError("batch_within_seconds must not be negative")
        if self.batch_max_bytes < 1:
            raise ValueError("batch_max_bytes must be positive")
        if self.max_page_bytes < 1 or self.max_message_bytes < 1:
            raise ValueError("max_page_bytes and max_message_bytes must be positive")
        if not 1 <= self.web_port <= 65535:
            raise ValueError("web_port must be a port number, 1-65535")
        if not 0 < self.heartbeat_interval_seconds < self.session_timeout_seconds:
            raise ValueError("heartbeat_interval_seconds must be positive and below the session")
        if self.request_timeout_seconds <= 0 or self.commit_interval_seconds <= 0:
            raise ValueError("request_timeout_seconds and commit_interval_seconds must be positive")
        if self.lag_interval_seconds <= 0 or self.fetch_max_wait_seconds <= 0:
            raise ValueError("lag_interval_seconds and fetch_max_wait_seconds must be positive")
        if self.broker_wait_seconds < 0:
            raise ValueError("broker_wait_seconds must not be negative")
        if self.compression not in COMPRESSION_TYPES:
            raise ValueError(f"compression must be one of {COMPRESSION_TYPES}, not "
                             f"{self.compression!r}")  # fmt: skip
        if self.warmup_seconds < 0 or self.warmup_max_pages < 1:
            raise ValueError("warmup_seconds must not be negative, warmup_max_pages positive")
        if self.offset_reset not in OFFSET_RESET_POLICIES:
            raise ValueError(f"offset_reset must be one of {OFFSET_RESET_POLICIES}, not "
                             f"{self.offset_reset!r}")  # fmt: skip

    def check_timeouts(self) -> None:
        """Faust's rule, which it checks only once the worker has started (237 log lines and
        five tracebacks): the session timeout may not exceed the request timeout. Checked on
        the settings as the worker runs them, not on each step of building them (an
        environment's request timeout and a flag's session timeout).

        Raises:
            ValueError: the session timeout is above the request timeout.
        """
        if self.session_timeout_seconds > self.request_timeout_seconds:
            raise ValueError(
                f"session_timeout_seconds ({self.session_timeout_seconds:g}) must not exceed "
                f"request_timeout_seconds ({self.request_timeout_seconds:g}): raise that too"
            )

    @property
    def topic_names(self) -> tuple[str, str, str, str]:
        """Input, documents, sentence scores, dead letters."""
        return (
            self.input_topic,
            self.documents_topic,
            self.sentence_scores_topic,
            self.dead_letter_topic,
        )

    @property
    def rekey_mode(self) -> str:
        """``rekey`` where it applies: ``off`` without site templates."""
        return self.rekey if self.site_templates else "off"

    def topic_specs(self, **options: Any) -> tuple[TopicSpec, ...]:
        """The specs of every topic the worker reads or writes: the four under these names,
        and with site templates the table's changelog and, when messages are re-keyed, the
        site topic; ``options`` as `default_topic_specs`."""
        from .sitestate import changelog_topic

        specs = default_topic_specs(
            input_topic=self.input_topic,
            documents_topic=self.documents_topic,
            sentence_scores_topic=self.sentence_scores_topic,
            dead_letter_topic=self.dead_letter_topic,
            **options,
        )
        if self.site_templates:
            # the site table's changelog: compacted (one record per site is its state), kept
            # for ever, partitioned like the input so a site's pages and state share a number
            specs += (
                replace(specs[0], name=changelog_topic(self.group_id), retention_ms=-1,
                        cleanup_policy="compact"),
            )  # fmt: skip
        if self.rekey_mode != "off":
            specs += (replace(specs[0], name=self.site_topic),)  # partitioned as the input
        return specs

    def with_options(self, **changes: Any) -> WorkerSettings:
        """A copy with the given fields changed; ``None`` values are ignored."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WorkerSettings:
        """Settings from the environment, defaults for the rest.

        ``STREAM_CLEANER_WORKER_<FIELD>`` for this class's own fields (``..._GROUP_ID``,
        ``..._BATCH_SIZE``, ``..._WEB_PORT``, ``..._INPUT_TOPIC``...),
        ``STREAM_CLEANER_KAFKA_*`` for `KafkaSettings`, ``STREAM_CLEANER_WEB_*`` for `WebSettings`
        and ``STREAM_CLEANER_*`` for `CleanerSettings`. Empty variables count as unset.

        Raises:
            ValueError: a variable has a value the settings do not accept.
        """
        values = values_from_env(
            cls, WORKER_ENV_PREFIX, environ, skip=("kafka", "cleaner", "web", "sites")
        )
        return cls(
            kafka=KafkaSettings.from_env(environ),
            cleaner=CleanerSettings.from_env(environ),
            web=WebSettings.from_env(environ),
            sites=SiteSettings(**values_from_env(SiteSettings, SITE_ENV_PREFIX, environ)),
            **values,
        )
