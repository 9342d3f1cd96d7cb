"""Faust's own Prometheus sensors, in the worker's registry under ``stream_cleaner_faust_``.

They add what the worker cannot see itself: messages and events per topic and stream, table
operations, commit, assignment and rebalance latencies, and per input partition the end
offset and the committed offset (``..._topic_partition_end_offset`` minus
``..._topic_partition_offset_commited`` is the consumer lag Faust sees).

faust-streaming's `PrometheusMonitor` (0.12.0 to 0.15.3) is used with three differences,
each one a way its exposition misled:

- The sensors of what the worker does without Faust are left out, since they read 0 however
  much it worked. Its producer sensors (``topic_messages_sent``, ``total_sent_messages``,
  ``producer_send_latency``, ``total_error_messages_sent``, ``producer_error_send_latency``):
  the worker publishes its records itself (`patches.batches.BatchSend`), so they counted at most the
  site table's changelog. ``events_runtime_ms``: Faust times an event only when its stream
  acknowledges it, and the worker's agent acknowledges its events itself, after their
  batch's records were published. The worker's own metrics say both:
  ``stream_cleaner_documents_cleaned_total``, ``..._documents_dead_lettered_total``,
  ``..._output_bytes_total``, ``..._publish_failures_total``,
  ``..._stage_duration_seconds`` (``stage="publish"`` too) and
  ``..._document_processing_seconds``.
- Its ``total_rebalances`` and ``total_rebalances_recovering`` gauges are left out: they
  count rebalances in progress (up at the start, down at the end), so they read 0 between
  rebalances. ``stream_cleaner_rebalances_total`` counts them.
- Its latencies are histograms in milliseconds (``assign_latency``, ...; with buckets sized
  for seconds before 0.15), and ``rebalance_done_latency``,
  ``rebalance_done_consumer_latency`` and ``http_latency`` measure from the end of what they
  time, so they read about 0. Here they are ``..._seconds`` histograms (Prometheus' base
  unit), observed from the durations Faust's base `Monitor` measures itself.

Every other series is Faust's, with its names and values. The per-message hooks look their
labelled series up once (Faust formats a stream's label and calls ``labels()`` four times per
message, about 6 % of the event loop's time).
"""

from __future__ import annotations

import weakref
from typing import Any, Final

FAUST_METRICS_PREFIX: Final = "stream_cleaner_faust"
# Faust's fields that the worker does not export (see the module docstring)
LEFT_OUT: Final = frozenset(
    {
        "topic_messages_sent",
        "total_sent_messages",
        "producer_send_latency",
        "total_error_messages_sent",
        "producer_error_send_latency",
        "events_runtime_latency",
        "total_rebalances",
        "total_rebalances_recovering",
    }
)
# Faust's latency fields -> the name (after the prefix) and help of their histogram in seconds
SECONDS_HISTOGRAMS: Final = {
    "assign_latency": (
        "assign_latency_seconds",
        "Seconds the partition assignor took for an assignment (completed or failed).",
    ),
    "rebalance_done_consumer_latency": (
        "rebalance_done_consumer_latency_seconds",
        "Seconds from a rebalance's start until this worker answered the broker that it "
        "took its assignment.",
    ),
    "rebalance_done_latency": (
        "rebalance_done_latency_seconds",
        "Seconds from a rebalance's start until it was done here, tables recovered.",
    ),
    "http_latency": ("http_latency_seconds", "Seconds Faust's web server took per request."),
    "consumer_commit_latency": (
        "consumer_commit_latency_seconds",
        "Seconds a commit of the consumer's offsets took.",
    ),
}
# Faust 0.15's buckets (5 ms to 10 s) in seconds, and 30 s and 60 s for slow rebalances
LATENCY_BUCKETS: Final = (
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 30.0, 60.0
)  # fmt: skip


def faust_metrics(registry: Any) -> Any:
    """Faust's `FaustMetrics`, those exported registered in ``registry``: the latencies as
    histograms in seconds, the fields in `LEFT_OUT` in no registry (Faust still updates them)."""
    from faust.sensors.prometheus import FaustMetrics
    from prometheus_client import CollectorRegistry, Histogram

    made = FaustMetrics.create(CollectorRegistry(), FAUST_METRICS_PREFIX)
    metrics = made._replace(
        **{
            field: Histogram(
                f"{FAUST_METRICS_PREFIX}_{name}",
                documentation,
                buckets=LATENCY_BUCKETS,
                registry=None,  # registered below (prometheus_client's default is global)
            )
            for field, (name, documentation) in SECONDS_HISTOGRAMS.items()
        }
    )
    for field in metrics._fields:
        if field not in LEFT_OUT:
            registry.register(getattr(metrics, field))
    return metrics


def faust_monitor(registry: Any, **kwargs: Any) -> Any:
    """Faust's Prometheus sensor (`PrometheusMonitor`), what it exports in ``registry``
    (`faust_metrics`), its latencies in seconds, its per-message hooks cheaper; ``kwargs``
    go to Faust's `Monitor` (``time``: its clock)."""
    from faust.sensors.monitor import Monitor as BaseMonitor
    from faust.sensors.prometheus import PrometheusMonitor

    class Monitor(PrometheusMonitor):
        """Faust's, with latencies in seconds and the labelled series of its per-message
        hooks looked up once. The series are the same; `_clear_partition_related_metrics`
        (at each rebalance) forgets them with Faust's own."""

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._labels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
            self._stream_events: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
            self._received: dict[Any, tuple[Any, Any]] = {}
            self._end_offsets: dict[Any, Any] = {}

        def _stream_label(self, stream: Any) -> str:
            label = self._labels.get(stream)
            if label is None:
                label = self._labels[stream] = super()._stream_label(stream)
            return label

        def on_message_in(self, tp: Any, offset: int, message: Any) -> None:
            BaseMonitor.on_message_in(self, tp, offset, message)
            metrics = self._metrics
            metrics.messages_received.inc()
            metrics.active_messages.inc()
            children = self._received.get(tp)
            if children is None:
                children = self._received[tp] = (
                    metrics.messages_received_per_topics.labels(topic=tp.topic),
                    metrics.messages_received_per_topics_partition.labels(
                        topic=tp.topic, partition=tp.partition
                    ),
                )
            children[0].inc()
            children[1].set(offset)

        def on_stream_event_in(self, tp: Any, offset: int, stream: Any, event: Any) -> Any:
            state = BaseMonitor.on_stream_event_in(self, tp, offset, stream, event)
            metrics = self._metrics
            metrics.total_events.inc()
            metrics.total_active_events.inc()
            child = self._stream_events.get(stream)
            if child is None:
                child = self._stream_events[stream] = metrics.total_events_per_stream.labels(
                    stream=f"stream.{self._stream_label(stream)}.events"
                )
            child.inc()
            return state

        def on_commit_completed(self, consumer: Any, state: Any) -> None:
            BaseMonitor.on_commit_completed(self, consumer, state)
            self._metrics.consumer_commit_latency.observe(self.commit_latency[-1])

        def on_assignment_error(self, assignor: Any, state: Any, exc: BaseException) -> None:
            BaseMonitor.on_assignment_error(self, assignor, state, exc)
            self._metrics.assignment_operations.labels(operation=self.ERROR).inc()
            self._metrics.assign_latency.observe(self.assignment_latency[-1])

        def on_assignment_completed(self, assignor: Any, state: Any) -> None:
            BaseMonitor.on_assignment_completed(self, assignor, state)
            self._metrics.assignment_operations.labels(operation=self.COMPLETED).inc()
            self._metrics.assign_latency.observe(self.assignment_latency[-1])

        def on_rebalance_return(self, app: Any, state: Any) -> None:
            BaseMonitor.on_rebalance_return(self, app, state)
            self._metrics.rebalance_done_consumer_latency.observe(state["latency_return"])

        def on_rebalance_end(self, app: Any, state: Any) -> None:
            BaseMonitor.on_rebalance_end(self, app, state)
            self._clear_partition_related_metrics()
            self._metrics.rebalance_done_latency.observe(state["latency_end"])

        def on_web_request_end(
            self, app: Any, request: Any, response: Any, state: Any, *, view: Any = None
        ) -> None:
            BaseMonitor.on_web_request_end(self, app, request, response, state, view=view)
            self._metrics.http_status_codes.labels(status_code=int(state["status_code"])).inc()
            self._metrics.http_latency.observe(state["latency_end"])

        def track_tp_end_offset(self, tp: Any, offset: int) -> None:
            BaseMonitor.track_tp_end_offset(self, tp, offset)
            child = self._end_offsets.get(tp)
            if child is None:
                child = self._end_offsets[tp] = self._metrics.topic_partition_end_offset.labels(
                    topic=tp.topic, partition=tp.partition
                )
            child.set(offset)

        def _clear_partition_related_metrics(self) -> None:
            super()._clear_partition_related_metrics()
            self._received.clear()
            self._end_offsets.clear()

    return Monitor(metrics=faust_metrics(registry), **kwargs)
