"""The worker's Prometheus metrics, in a registry of their own.

Names start with ``stream_cleaner_``, use base units (seconds, bytes), counters end in
``_total``, latencies are histograms, and labels are bounded: dead-letter and drop reasons
(closed sets), stage names, languages (`language.metric_label`: 26 codes, ``und`` and
``other``) and page types (`page_types.PAGE_TYPES` and ``none``), never ids, URLs or hosts.
Counters count processing, so an input that is replayed after a crash is counted again:
compare them with the output topics knowing that at-least-once delivery allows duplicates.
"""

from __future__ import annotations

import math
import operator
import threading
import time
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import numpy as np
from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from ..guard import GuardReason
from ..language import METRIC_LANGUAGES, UNKNOWN, metric_label
from ..page_types import METRIC_UNDETERMINED, PAGE_TYPES
from ..page_types import metric_label as page_type_label
from .patches.offsets import OFFSET_RESET_REASONS

if TYPE_CHECKING:
    from ..sites import SiteTemplates
    from .records import InputMessage, Outcome
    from .warmup import WarmupHold

PREFIX: Final = "stream_cleaner_"
# The core's stages as `CleanedDocument.seconds` names them (label: corpus and article modes only),
# plus the worker's own.
CORE_STAGES: Final = (
    "decode", "parse", "language", "split", "score", "label", "page_type", "decide"
)  # fmt: skip
STAGE_PUBLISH: Final = "publish"
_CORE_STAGE_SET = frozenset(CORE_STAGES)
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


class BulkHistogram(Collector):
    """A Prometheus histogram that takes many observations in one call.

    `prometheus_client.Histogram.observe` takes a lock and walks the buckets in Python for
    every value; at a few hundred sentences per page, that was a tenth of the worker's time,
    and its eight stage timings per document cost the event loop more than the rest of the
    document's metrics. Here one call per document counts all its values, under one lock: in
    numpy for many values (a binary search each, then one bincount), with `bisect` for a few.
    Exposed like any histogram: ``_bucket{le=...}``, ``_count`` and ``_sum``, one series per
    value of its label when it has one (``labelname``).
    """

    def __init__(
        self,
        name: str,
        documentation: str,
        *,
        buckets: Sequence[float],
        labelname: str | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.labelname = labelname
        self.bounds = tuple(float(b) for b in buckets if not math.isinf(b))
        if list(self.bounds) != sorted(set(self.bounds)):
            raise ValueError("buckets must be increasing")
        self._bounds = np.array(self.bounds)
        # per label value (``""`` without a label): the bucket counts, the last one +Inf
        self._counts: dict[str, list[int]] = {}
        self._sums: dict[str, float] = {}
        self.lock = threading.Lock()
        if labelname is None:
            self.labels("")
        if registry is not None:
            registry.register(self)

    def labels(self, value: str) -> None:
        """Start the series of a label value at 0, so that it is exposed before its first
        observation."""
        with self.lock:
            self._series(value)

    def _series(self, value: str) -> list[int]:
        counts = self._counts.get(value)
        if counts is None:
            counts = self._counts[value] = [0] * (len(self.bounds) + 1)
            self._sums[value] = 0.0
        return counts

    def observe_many(self, values: Iterable[float | None] | np.ndarray, label: str = "") -> None:
        """Count each value into its bucket (``le``: the first bound not below it); ``None``
        and NaN are skipped."""
        if not isinstance(values, np.ndarray):
            values = np.array(list(values), dtype=np.float64)  # None becomes NaN
        found = values[~np.isnan(values)]
        if not len(found):
            return
        counts = np.bincount(
            np.searchsorted(self._bounds, found, side="left"), minlength=len(self.bounds) + 1
        ).tolist()
        total = float(found.sum())
        with self.lock:
            series = self._series(label)
            series[:] = map(operator.add, series, counts)
            self._sums[label] += total

    def observe_each(self, observations: Iterable[tuple[str, float]]) -> None:
        """Count ``(label value, value)`` pairs: one observation each, for a few values."""
        bounds, counts, sums = self.bounds, self._counts, self._sums
        with self.lock:
            for label, value in observations:
                series = counts.get(label) or self._series(label)
                series[bisect_left(bounds, value)] += 1
                sums[label] += value

    def collect(self) -> Iterator[HistogramMetricFamily]:
        with self.lock:
            series = [
                (label, list(counts), self._sums[label]) for label, counts in self._counts.items()
            ]
        labelnames = [self.labelname] if self.labelname is not None else []
        family = HistogramMetricFamily(self.name, self.documentation, labels=labelnames)
        for label, counts, total in series:
            cumulative, buckets = 0, []
            for bound, count in zip((*self.bounds, math.inf), counts, strict=True):
                cumulative += count
                buckets.append((floatToGoString(bound), cumulative))
            family.add_metric([label] if labelnames else [], buckets, total)
        yield family


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
        self.documents_rekeyed = Counter(
            PREFIX + "documents_rekeyed",
            "Input messages forwarded to the site topic, keyed by their site, to be cleaned "
            "from there (each is received again there).",
            registry=r,
        )
        self.documents_dead_lettered = Counter(
            PREFIX + "documents_dead_lettered",
            "Input messages published as a dead letter, by reason.",
            ["reason"],
            registry=r,
        )
        self.input_bytes = Counter(
            PREFIX + "input_bytes",
            "Bytes of input message keys and values, as decompressed.",
            registry=r,
        )
        self.output_bytes = Counter(
            PREFIX + "output_bytes",
            "Bytes of published record keys, values and headers, before any compression.",
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
        self.documents_guarded = Counter(
            PREFIX + "documents_guarded",
            "Cleaned documents whose labeller decision the content-loss guard changed, by why "
            "(content_loss: the page's longest run of running text, or its table of figures, "
            "had been dropped and is kept; corpus_joined: the decision kept almost nothing, "
            "the corpus labeller's blocks joined it; thread: in article mode, a likely forum "
            "thread decided as auto decides it).",
            ["guard"],
            registry=r,
        )
        self.documents_by_page_type = Counter(
            PREFIX + "documents_by_page_type",
            "Cleaned documents by the kind of page (article, forum, documentation, product, "
            "collection, listing, service; 'none' when not determined: perplexity mode, plain "
            "text, empty pages, errors).",
            ["page_type"],
            registry=r,
        )
        self.sentence_perplexity = BulkHistogram(
            PREFIX + "sentence_perplexity",
            "Perplexity of scored sentences (those with at least one token).",
            buckets=PERPLEXITY_BUCKETS,
            registry=r,
        )
        self.stage_seconds = BulkHistogram(
            PREFIX + "stage_duration_seconds",
            "Seconds per document in each core stage; publish is per batch, until the broker "
            "acknowledged every record of the batch.",
            labelname="stage",
            buckets=STAGE_BUCKETS,
            registry=r,
        )
        self.document_seconds = BulkHistogram(
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
        self.consumer_lag = Gauge(
            PREFIX + "consumer_lag",
            "Messages of each input partition assigned to this worker that are not committed "
            "yet: the partition's end offset minus the group's committed offset.",
            ["topic", "partition"],
            registry=r,
        )
        self._lag_series: set[tuple[str, str]] = set()
        self.site_warmup_held = Gauge(
            PREFIX + "site_warmup_held_pages",
            "Pages of sites still warming up, held until their site's template is known "
            "(STREAM_CLEANER_WORKER_WARMUP_SECONDS).",
            registry=r,
        )
        self.site_warmup_released = Counter(
            PREFIX + "site_warmup_released_pages",
            "Held pages cleaned, by why they were let go: warm (their site has enough "
            "pages), timeout, overflow (too many held) or shutdown.",
            ["reason"],
            registry=r,
        )
        self._warmup_released: dict[str, int] = {}
        self.site_templates_sites = Gauge(
            PREFIX + "site_templates_sites",
            "Sites whose template statistics this worker holds (bounded by max_sites).",
            registry=r,
        )
        self.site_templates_signatures = Gauge(
            PREFIX + "site_templates_signatures",
            "Block signatures held over all sites (bounded by max_sites x window x blocks).",
            registry=r,
        )
        self.site_templates_evicted = Gauge(
            PREFIX + "site_templates_evicted_sites",
            "Sites forgotten to stay under max_sites since the worker started.",
            registry=r,
        )
        self.offset_resets = Counter(
            PREFIX + "offset_resets",
            "Input partitions read again from elsewhere than their committed offset, which their "
            "log no longer held, by reason: past_log_end (the broker lost records: a topic "
            "re-created, an unclean leader election, a broker without its storage) or "
            "before_log_start (retention deleted records that were not cleaned). Where reading "
            "resumed is the worker's offset_reset policy (earliest: the log start).",
            ["reason"],
            registry=r,
        )
        self.rebalances = Counter(
            PREFIX + "rebalances",
            "Rebalances of the consumer group this worker went through (each ends with a new "
            "assignment; the first is the worker joining the group).",
            registry=r,
        )
        # labelled series show up at 0 before their first event, so rates work from the start
        from ..decide import DropReason
        from .records import DeadLetterReason
        from .warmup import RELEASE_REASONS

        for reason in DeadLetterReason.ALL:
            self.documents_dead_lettered.labels(reason)
        for reason in OFFSET_RESET_REASONS:
            self.offset_resets.labels(reason)
        for reason in RELEASE_REASONS:
            self.site_warmup_released.labels(reason)
        self._dropped_children = {
            reason: self.sentences_dropped.labels(reason) for reason in DropReason.ALL
        }
        for stage in (*CORE_STAGES, STAGE_PUBLISH):
            self.stage_seconds.labels(stage)
        # the labelled children observe_outcome updates for every document, looked up once
        # (``labels()`` takes a lock and builds a tuple each call)
        for guard in GuardReason.ALL:  # every series exported from the start, at 0
            self.documents_guarded.labels(guard)
        self._language_children = {
            language: self.documents_by_language.labels(language)
            for language in (*sorted(METRIC_LANGUAGES), UNKNOWN, "other")
        }
        self._page_type_children = {
            label: self.documents_by_page_type.labels(label)
            for label in (*PAGE_TYPES, METRIC_UNDETERMINED)
        }

    def observe_received(self, msg: InputMessage) -> None:
        """Count one input message and its bytes."""
        self.documents_received.inc()
        self.input_bytes.inc(len(msg.key or b"") + len(msg.value or b""))

    def observe_outcome(self, outcome: Outcome) -> None:
        """Count what one input message became, once its records are acknowledged."""
        self.observe_outcomes((outcome,))

    def observe_outcomes(self, outcomes: Iterable[Outcome]) -> None:
        """Count what a batch of input messages became, once its records are acknowledged.

        Each metric (and label) is updated once a batch, not once a document: every update
        takes a lock, and this runs on the event loop, whose time is taken from the cleaning
        thread's (one GIL).
        """
        rekeyed = cleaned = out_bytes = kept = 0
        dead: dict[str, int] = {}
        guarded: dict[str, int] = {}
        languages: dict[str, int] = {}
        page_types: dict[str, int] = {}
        dropped: dict[str, int] = {}
        stages: list[tuple[str, float]] = []
        totals: list[tuple[str, float]] = []
        perplexities: list[np.ndarray] = []
        for outcome in outcomes:
            out_bytes += outcome.bytes_out
            if outcome.is_forward:
                rekeyed += 1
                continue
            is_dead_letter = outcome.is_dead_letter
            if is_dead_letter:
                reason = str(outcome.reason)
                dead[reason] = dead.get(reason, 0) + 1
            else:
                cleaned += 1
            doc = outcome.stats
            if doc is None:
                continue
            seconds = doc.seconds
            stages += [
                (stage, value) for stage, value in seconds.items() if stage in _CORE_STAGE_SET
            ]
            total = seconds.get("total")
            if total is not None:
                totals.append(("", total))
            if is_dead_letter:
                continue
            language = metric_label(doc.language)
            languages[language] = languages.get(language, 0) + 1
            if doc.guard is not None:
                guarded[doc.guard] = guarded.get(doc.guard, 0) + 1
            page_type = page_type_label(doc.page_type)
            page_types[page_type] = page_types.get(page_type, 0) + 1
            # one update per reason, not per sentence: pages have hundreds
            for reason, count in doc.dropped.items():
                dropped[reason] = dropped.get(reason, 0) + count
                kept -= count
            kept += doc.n_sentences
            perplexities.append(outcome.perplexities)
        if rekeyed:
            self.documents_rekeyed.inc(rekeyed)
        if cleaned:
            self.documents_cleaned.inc(cleaned)
        for reason, n in dead.items():
            self.documents_dead_lettered.labels(reason).inc(n)
        self.output_bytes.inc(out_bytes)
        self.stage_seconds.observe_each(stages)
        self.document_seconds.observe_each(totals)
        for language, n in languages.items():
            self._language_children[language].inc(n)
        for guard, n in guarded.items():
            self.documents_guarded.labels(guard).inc(n)
        for page_type, n in page_types.items():
            self._page_type_children[page_type].inc(n)
        for reason, n in dropped.items():
            (self._dropped_children.get(reason) or self.sentences_dropped.labels(reason)).inc(n)
        self.sentences_kept.inc(kept)
        if perplexities:
            self.sentence_perplexity.observe_many(np.concatenate(perplexities))

    def count_offset_reset(self, reason: str) -> None:
        """One input partition read again elsewhere than its committed offset
        (`patches.offsets.OFFSET_RESET_REASONS`)."""
        self.offset_resets.labels(reason).inc()

    def observe_publish(self, seconds: float) -> None:
        """One batch's publish time, from the first send to the last acknowledgement."""
        self.stage_seconds.observe_each(((STAGE_PUBLISH, seconds),))

    def set_consumer_lag(self, lags: Mapping[tuple[str, int], int]) -> None:
        """Set the lag of each assigned partition, ``(topic, partition) -> messages``.

        The series of partitions not in ``lags`` (no longer assigned) are removed, so the
        metric has one series per partition this worker holds, no more.
        """
        series = {(topic, str(partition)) for topic, partition in lags}
        for gone in self._lag_series - series:
            self.consumer_lag.remove(*gone)
        for (topic, partition), lag in lags.items():
            self.consumer_lag.labels(topic, str(partition)).set(lag)
        self._lag_series = series

    def forget_consumer_lag(self, partitions: Iterable[tuple[str, int]]) -> None:
        """Remove the lag series of revoked partitions."""
        for topic, partition in partitions:
            key = (topic, str(partition))
            if key in self._lag_series:
                self.consumer_lag.remove(*key)
                self._lag_series.discard(key)

    def observe_warmup(self, hold: WarmupHold) -> None:
        """The pages the warm-up hold keeps now, and those it let go since last time."""
        self.site_warmup_held.set(len(hold))
        for reason, total in hold.released.items():
            seen = self._warmup_released.get(reason, 0)
            if total > seen:
                self.site_warmup_released.labels(reason).inc(total - seen)
                self._warmup_released[reason] = total

    def observe_sites(self, templates: SiteTemplates) -> None:
        """The site statistics' size, after a batch (`streaming.sitestate`)."""
        self.site_templates_sites.set(len(templates))
        self.site_templates_signatures.set(templates.n_signatures)
        self.site_templates_evicted.set(templates.evicted_sites)

    def mark_processed(self, now: float | None = None) -> None:
        """Set the last-processed timestamp (Unix seconds)."""
        self.last_processed.set(time.time() if now is None else now)

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format."""
        return generate_latest(self.registry)
