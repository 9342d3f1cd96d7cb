"""The worker's Prometheus metrics, in a registry of their own.

Names start with ``stream_cleaner_``, use base units (seconds, bytes), counters end in
``_total``, latencies are histograms, and labels are bounded: dead-letter and drop reasons
(closed sets), stage names and languages (`language.metric_label`: 26 codes, ``und`` and
``other``), never ids, URLs or hosts. Counters count processing, so an
input that is replayed after a crash is counted again: compare them with the output topics
knowing that at-least-once delivery allows duplicates.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from ..language import METRIC_LANGUAGES, UNKNOWN, metric_label

if TYPE_CHECKING:
    from .records import InputMessage, Outcome

PREFIX: Final = "stream_cleaner_"
# The core's stages as `CleanedDocument.seconds` names them (label: corpus and article modes only),
# plus the worker's own.
CORE_STAGES: Final = ("decode", "parse", "language", "split", "score", "label", "decide")
STAGE_PUBLISH: Final = "publish"
# Perplexities of English sentences under a bigram model span 10 to 10^6.
PERPLEXITY_BUCKETS: Final = (10, 30, 100, 300, 1000, 3000, 10_000, 30_000, 100_000, 1e6)
# Stages take from microseconds (decide) to seconds (a 10 MB page), publish from ms upward.
STAGE_BUCKETS: Final = (
    0.0001,
    0.0005,
    0.001,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
CONTENT_TYPE: Final = CONTENT_TYPE_LATEST


class WorkerMetrics:
    """The metrics of one worker process; ``registry`` is what ``/metrics`` exposes."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        # process_resident_memory_bytes, process_cpu_seconds_total...: the dashboard's memory
        # and CPU panels, without a node exporter (Linux only; elsewhere it exports nothing)
        from prometheus_client import ProcessCollector

        ProcessCollector(registry=r)
        self.documents_received = Counter(
            PREFIX + "documents_received", "Input messages taken from the input topic.", registry=r
        )
        self.documents_cleaned = Counter(
            PREFIX + "documents_cleaned",
            "Input messages published as a cleaned document.",
            registry=r,
        )
        self.documents_dead_lettered = Counter(
            PREFIX + "documents_dead_lettered",
            "Input messages published as a dead letter, by reason.",
            ["reason"],
            registry=r,
        )
        self.input_bytes = Counter(
            PREFIX + "input_bytes", "Bytes of input message keys and values.", registry=r
        )
        self.output_bytes = Counter(
            PREFIX + "output_bytes",
            "Bytes of published record keys, values and headers.",
            registry=r,
        )
        self.sentences_kept = Counter(
            PREFIX + "sentences_kept", "Sentences kept in cleaned documents.", registry=r
        )
        self.sentences_dropped = Counter(
            PREFIX + "sentences_dropped", "Sentences dropped, by reason.", ["reason"], registry=r
        )
        self.documents_by_language = Counter(
            PREFIX + "documents_by_language",
            "Cleaned documents by the page's language: common languages by ISO 639-1 code, "
            "'und' when undetermined, every other one as 'other' (a bounded label).",
            ["language"],
            registry=r,
        )
        self.sentence_perplexity = Histogram(
            PREFIX + "sentence_perplexity",
            "Perplexity of scored sentences (those with at least one token).",
            buckets=PERPLEXITY_BUCKETS,
            registry=r,
        )
        self.stage_seconds = Histogram(
            PREFIX + "stage_duration_seconds",
            "Seconds per document in each core stage; publish is per batch, until the broker "
            "acknowledged every record of the batch.",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=r,
        )
        self.document_seconds = Histogram(
            PREFIX + "document_processing_seconds",
            "Seconds the core spent on one document, all stages.",
            buckets=STAGE_BUCKETS,
            registry=r,
        )
        self.publish_failures = Counter(
            PREFIX + "publish_failures",
            "Batches whose records the broker did not acknowledge (their inputs are not "
            "committed).",
            registry=r,
        )
        self.in_progress = Gauge(
            PREFIX + "documents_in_progress",
            "Input messages taken but not yet acknowledged.",
            registry=r,
        )
        self.last_processed = Gauge(
            PREFIX + "last_processed_timestamp_seconds",
            "Unix time at which the last input message was acknowledged.",
            registry=r,
        )
        self.model_loaded = Gauge(
            PREFIX + "model_loaded", "1 once the language model is loaded.", registry=r
        )
        # labelled series show up at 0 before their first event, so rates work from the start
        from ..decide import DropReason
        from .records import DeadLetterReason

        for reason in DeadLetterReason.ALL:
            self.documents_dead_lettered.labels(reason)
        for reason in DropReason.ALL:
            self.sentences_dropped.labels(reason)
        for stage in (*CORE_STAGES, STAGE_PUBLISH):
            self.stage_seconds.labels(stage)
        for language in (*sorted(METRIC_LANGUAGES), UNKNOWN, "other"):
            self.documents_by_language.labels(language)

    def observe_received(self, msg: InputMessage) -> None:
        """Count one input message and its bytes."""
        self.documents_received.inc()
        self.input_bytes.inc(len(msg.key or b"") + len(msg.value or b""))

    def observe_outcome(self, outcome: Outcome) -> None:
        """Count what one input message became, once its records are acknowledged."""
        if outcome.is_dead_letter:
            self.documents_dead_lettered.labels(outcome.reason).inc()
        else:
            self.documents_cleaned.inc()
        self.output_bytes.inc(outcome.bytes_out)
        doc = outcome.cleaned
        if doc is None:
            return
        for stage in CORE_STAGES:
            seconds = doc.seconds.get(stage)
            if seconds is not None:
                self.stage_seconds.labels(stage).observe(seconds)
        total = doc.seconds.get("total")
        if total is not None:
            self.document_seconds.observe(total)
        if outcome.is_dead_letter:
            return
        self.documents_by_language.labels(metric_label(doc.language.code)).inc()
        for sentence in doc.sentences:
            if sentence.keep:
                self.sentences_kept.inc()
            else:
                self.sentences_dropped.labels(sentence.reason or "unknown").inc()
            if sentence.perplexity is not None:
                self.sentence_perplexity.observe(sentence.perplexity)

    def observe_publish(self, seconds: float) -> None:
        """One batch's publish time, from the first send to the last acknowledgement."""
        self.stage_seconds.labels(STAGE_PUBLISH).observe(seconds)

    def mark_processed(self, now: float | None = None) -> None:
        """Set the last-processed timestamp (Unix seconds)."""
        self.last_processed.set(time.time() if now is None else now)

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format."""
        return generate_latest(self.registry)
