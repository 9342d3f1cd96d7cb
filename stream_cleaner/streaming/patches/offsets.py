"""Input offsets are committed only once the agent took and acknowledged them (fixing Faust).

Faust's consumer (faust-streaming 0.15) commits, per partition, the first run of consecutive
offsets the streams acknowledged. Around rebalances it committed inputs that no stream ever
saw; worker traces of the churn broker test showed four ways:

- A fetch under way at a seek (a rebalance's, or table recovery's second seek to the committed
  offsets) still hands over records read from the old position. Faust takes the offsets it
  did not see for a gap in the log (as compaction or transaction markers leave), counts them
  as acknowledged and drops them when they come again. Seen: sought to 97, then 110 came, and
  Faust noted a gap from 98 to 110.
- Between recovery's two seeks, the streams drop the events they get while flow control is
  suspended (Faust's Cython stream iterator skips them without a trace). When nothing was
  committed yet there is no second seek, so they never come again. Seen: a worker's batches
  went from offset 3 to 6 of a partition.
- Faust commits a run of acknowledged offsets that starts one past the committed offset: the
  record at the committed offset itself, dropped as above, was lost (offset 280 committed over
  with 281 onwards acknowledged).
- Faust forgets a revoked partition's committed and acknowledged offsets before it waits for
  the streams and commits it a last time. That commit started at the first offset
  acknowledged since, over any event dropped before it. Worker traces of the churn broker
  test show such commits in most runs; two CI runs of seven lost a page.

`guarded` makes a consumer class that fixes all four. Per input partition:

- Fetches must hand over the offsets in order. A record past the next offset is not handed
  over; the partition is sought back to the missing offset. Only if the same jump comes again
  when reading from there does the log really lack those records: a confirmed gap.
- A commit covers only the run of offsets acknowledged (or in confirmed gaps) that starts
  exactly at the committed offset (or, with nothing committed, where the assignment began
  reading; while the broker does not say where that is, nothing is committed). Only
  acknowledgements of events the agent took (`take`) count. A revoked partition keeps its
  committed and acknowledged offsets until its last commit.
- When commits have waited `STUCK_SECONDS` for an offset while later ones are acknowledged,
  and no stream holds its event, the event was dropped on the way: the partition is read
  again from it.

At worst some records are fetched and cleaned twice, which at-least-once delivery allows.
Table changelogs, which recovery reads with offsets of its own, and topics without
acknowledgements pass untouched.

The guard also finds a partition whose log no longer holds the offset it is to read: a log
that ends before it (the broker lost records: a topic deleted and re-created, an unclean leader
election, a broker without its storage) or starts after it (retention deleted records that were
not cleaned yet). Seen after a Tansu restart: the group's committed offset 65 against a new log
of 54 records, whose pages were never cleaned. Tansu answers a fetch past the end with no
records; Kafka with OFFSET_OUT_OF_RANGE, upon which aiokafka reads from the log start, and Faust
dropped those records as below its read offset. Either way the fetch's high watermark is below
the offset due, which the guard checks after every fetch (at assignment, the first fetch reads
at the committed offset); a log start past it shows as the same jump seen twice (a confirmed gap
that the broker's log start explains). Such a partition is read again per `OFFSET_RESET_POLICIES`
(``earliest`` by default: from its log start, at least once; ``latest``: from its end, skipping
what is there), its reset offset is committed, it is counted (``on_offset_reset``) and logged
once as an error, and it counts as unreadable (`unreadable_partitions`, /readyz) until the seek
is done. A new log that has already grown past the committed offset cannot be told from the
old one (Kafka's Java client compares leader epochs, which aiokafka does not read).

The guarded consumer also fetches a partition that Faust paused for its stream's full buffer
again as soon as the buffer has room, where Faust could wait a second (`_wait_next_records`).
`fetching_within` shortens the wait of each fetch, which Faust fixes at 1.5 s.

Private names: `guarded` subclasses faust-streaming's aiokafka ``Consumer`` (0.12 to 0.15) and
overrides its ``perform_seek``, ``seek``, ``_seek``, ``getmany``, ``ack``, ``_new_offset``,
``on_partitions_revoked``, ``on_buffer_drop`` and ``_wait_next_records``, reading and writing
its ``_read_offset``, ``_committed_offset``, ``_acked``, ``_acked_index``, ``_gap``,
``_unacked_messages``, ``_buffered_partitions``, ``_thread`` and ``_on_partitions_revoked``;
`fetching_within` wraps its ``_new_consumer_thread`` and the thread's
``_create_worker_consumer``, and sets aiokafka's ``AIOKafkaConsumer._fetch_max_wait_ms``.

Tests: ``tests/streaming/test_offsets.py`` pins the guard's decisions on scripted fetches. In
``tests/streaming/test_worker_broker.py``, on a real broker,
``test_workers_joining_leaving_and_killed_mid_stream_lose_nothing`` (workers churning) lost
pages in about half the runs without the guard, and
``test_a_broker_that_lost_its_data_gets_every_new_page_cleaned`` shows the reset; in
``tests/streaming/test_app.py``, ``test_worker_consumer_fetches_wait_what_the_settings_say``
shows the fetch wait.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from .versions import require_checked

log = logging.getLogger(__name__)

# how long commits of a partition may wait for an offset that no stream holds before the
# partition is read again from it
STUCK_SECONDS = 5.0
# the longest a rebalance waits for the log start offsets of partitions without a commit
LOOKUP_SECONDS = 10.0
# the longest a seek back waits for the consumer's thread
SEEK_SECONDS = 10.0
# the longest a fetch waits for records while a partition is paused for its stream's full
# buffer (Faust's fetches wait up to a second, and a paused partition is fetched again only
# by the next fetch)
PAUSED_FETCH_SECONDS = 0.05
# where a partition whose committed offset is outside its log is read again: ``earliest``,
# from the log start (every record it holds is cleaned, some maybe twice: at least once), or
# ``latest``, from its end (what it holds is skipped)
OFFSET_RESET_POLICIES = ("earliest", "latest")
OFFSET_RESET_DEFAULT = "earliest"
# why a partition was reset: its log ends before the offset due (the broker lost records), or
# starts after it (retention deleted records that were not cleaned)
RESET_PAST_LOG_END = "past_log_end"
RESET_BEFORE_LOG_START = "before_log_start"
OFFSET_RESET_REASONS = (RESET_PAST_LOG_END, RESET_BEFORE_LOG_START)


def fetching_within(consumer_class: type[Any], max_wait_seconds: float) -> type[Any]:
    """A subclass of Faust's aiokafka ``Consumer`` whose fetches wait ``max_wait_seconds`` at
    most for records (Faust fixes aiokafka's ``fetch_max_wait_ms`` at 1,500 ms).

    aiokafka keeps one fetch under way per broker, and while a partition's fetched records
    wait for the streams (a busy worker) it fetches only the others. When those others are
    idle, that fetch waits its whole maximum, and the busy partition's next records with it.
    A worker with its backlog in one of its four partitions made 151 documents/s at 1,500
    ms and 330-357 at 50-500 ms (CleanEval pages, Tansu, one run each).
    """
    require_checked()
    max_wait_ms = max(1, round(max_wait_seconds * 1000))

    class FetchingWithin(consumer_class):  # type: ignore[misc, valid-type]
        def _new_consumer_thread(self) -> Any:
            thread = super()._new_consumer_thread()
            create = thread._create_worker_consumer

            def create_worker_consumer(transport: Any) -> Any:
                consumer = create(transport)
                if not hasattr(consumer, "_fetch_max_wait_ms"):  # not the aiokafka we know
                    log.warning("cannot set the consumer's fetch wait: aiokafka changed")
                    return consumer
                consumer._fetch_max_wait_ms = max_wait_ms  # read when its fetcher starts
                return consumer

            thread._create_worker_consumer = create_worker_consumer
            return thread

    return FetchingWithin


def guarded(
    consumer_class: type[Any],
    *,
    offset_reset: str = OFFSET_RESET_DEFAULT,
    on_offset_reset: Callable[[str], None] | None = None,
) -> type[Any]:
    """A subclass of a Faust transport's ``Consumer`` that commits only what the agent took
    and acknowledged, offset after offset (see the module's docstring).

    Args:
        consumer_class: the transport's consumer class.
        offset_reset: where a partition whose committed offset is outside its log is read
            again, one of `OFFSET_RESET_POLICIES`.
        on_offset_reset: called with the reason (`OFFSET_RESET_REASONS`) of each such reset.
    """
    require_checked()
    if offset_reset not in OFFSET_RESET_POLICIES:
        raise ValueError(f"offset_reset must be one of {OFFSET_RESET_POLICIES}, not "
                         f"{offset_reset!r}")  # fmt: skip

    class GuardedConsumer(consumer_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # partitions whose log does not hold the offset due, not read again yet: why
            self._unreadable: dict[Any, str] = {}
            # partitions being reset now
            self._resetting: set[Any] = set()
            # the offset a reset partition is read again from, committed even before anything
            # is acknowledged (so that the group's committed offset is in the log again)
            self._reset_commit: dict[Any, int] = {}
            # messages the streams hold from a log that was replaced: their acknowledgements
            # must not count for the records that now have their offsets
            self._stale: weakref.WeakSet[Any] = weakref.WeakSet()
            # the offset each input partition's fetches must hand over next
            self._next_offset: dict[Any, int] = {}
            # partition -> (missing offset, offset that came instead), sought back once
            self._jumps: dict[Any, tuple[int, int]] = {}
            # confirmed gaps in the log: partition -> {first offset: offset after the gap}
            self._log_gaps: dict[Any, dict[int, int]] = {}
            # partition -> (the offset its commits wait for, since when)
            self._stuck: dict[Any, tuple[int, float]] = {}
            # where the assignment began reading a partition that had no committed offset
            self._start: dict[Any, int] = {}
            # assigned partitions without a commit whose log start the broker did not say yet
            self._start_unknown: set[Any] = set()
            # their log start looked up again, one lookup at a time
            self._looking_up: asyncio.Future[None] | None = None
            # the messages the agent took: only their acknowledgements count
            self._taken: weakref.WeakSet[Any] = weakref.WeakSet()
            # seeks back started at a commit
            self._seeking: set[asyncio.Future[bool]] = set()
            # set when a stream's buffer drains enough for its partition to be fetched again
            self._buffer_dropped = asyncio.Event()
            # partitions being revoked -> (committed offset, acknowledged offsets, their index)
            self._revoking: dict[Any, tuple[int | None, list[int], set[int]]] = {}
            on_revoked = self._on_partitions_revoked  # the app's, which waits and commits

            async def on_partitions_revoked_guarded(revoked: set[Any]) -> None:
                self._give_back_offsets()
                await on_revoked(revoked)

            self._on_partitions_revoked = on_partitions_revoked_guarded

        def _guards(self, tp: Any) -> bool:
            return bool(self.app.topics.acks_enabled_for(tp.topic))

        # -- seeks -----------------------------------------------------------------------

        async def perform_seek(self) -> None:
            await super().perform_seek()
            unknown = []
            for tp, offset in list(self._read_offset.items()):
                if not self._guards(tp):
                    continue
                self._jumps.pop(tp, None)
                self._stuck.pop(tp, None)
                if offset:  # sought to the committed offset: everything is read again
                    self._next_offset[tp] = offset
                elif tp not in self._start:
                    unknown.append(tp)
                # else nothing committed and nothing sought (recovery's second seek of the
                # same assignment): reading goes on where it was
            if unknown:  # a new assignment with nothing committed: read from the start
                starts = await self._log_starts(unknown)
                for tp, first in starts.items():
                    self._next_offset[tp] = self._start[tp] = first
                    self._start_unknown.discard(tp)
                self._start_unknown.update(tp for tp in unknown if tp not in starts)

        async def _log_starts(self, tps: list[Any]) -> dict[Any, int]:
            """The first offset of each partition's log (where the worker's reset policy,
            ``earliest``, starts a partition without a committed offset); empty if the broker
            cannot say now."""
            return await self._log_offsets(self.earliest_offsets, tps, "start")

        async def seek(self, partition: Any, offset: int) -> None:
            await super().seek(partition, offset)
            if self._guards(partition):
                self._next_offset[partition] = offset

        async def _seek(self, partition: Any, offset: int) -> None:
            # in the consumer's thread: Faust calls aiokafka's seek from the event loop's
            # thread, and the seek deleted a partition's fetched records while the consumer's
            # thread was reading them (a KeyError that stopped a worker in the churn test)
            thread = self._thread
            await thread.call_thread(thread.seek, partition, offset)

        async def _seek_back(self, tp: Any, offset: int) -> bool:
            try:
                await asyncio.wait_for(self.seek(tp, offset), SEEK_SECONDS)
            except Exception as exc:  # revoked meanwhile (its next owner reads it), stopping
                log.warning("seeking %s back to %d failed: %r", tp, offset, exc)
                return False
            return True

        async def on_partitions_revoked(self, revoked: set[Any]) -> None:
            """Faust's, with the partitions' offsets kept until their last commit.

            Faust forgets the committed and acknowledged offsets of the revoked partitions,
            then (`_on_partitions_revoked`, the app's) waits for the streams to acknowledge
            what they hold and commits. Forgotten, those last commits started at the first
            offset acknowledged since, and committed over an event dropped on the way and
            not read again yet (a page lost in the churn broker test). The guard gives the
            offsets back for the wait and forgets them after it.
            """
            self._revoking = {
                tp: (self._committed_offset.get(tp), self._acked.get(tp, []),
                     self._acked_index.get(tp, set()))
                for tp in revoked
                if self._guards(tp)
            }  # fmt: skip
            try:
                await super().on_partitions_revoked(revoked)
            finally:
                self._revoking = {}
                self._forget(revoked)

        def _give_back_offsets(self) -> None:
            for tp, (committed, acked, index) in self._revoking.items():
                if committed is not None:
                    self._committed_offset[tp] = committed
                if acked:
                    self._acked[tp] = acked
                    self._acked_index[tp] = index

        def _forget(self, tps: Iterable[Any]) -> None:
            for tp in tps:
                for state in (self._next_offset, self._jumps, self._log_gaps, self._stuck,
                              self._start, self._unreadable, self._reset_commit):  # fmt: skip
                    state.pop(tp, None)
                if self._guards(tp):  # what `_give_back_offsets` gave back, as Faust did
                    for faust_state in (self._committed_offset, self._acked, self._acked_index):
                        faust_state.pop(tp, None)
                self._start_unknown.discard(tp)

        # -- fetches ---------------------------------------------------------------------

        async def getmany(self, timeout: float) -> AsyncIterator[tuple[Any, Any]]:
            sought_back: set[Any] = set()
            async for tp, message in super().getmany(timeout):
                if tp in sought_back:
                    continue
                if not self._guards(tp):
                    yield tp, message
                    continue
                offset = message.offset
                expected = self._next_offset.get(tp)
                if expected is None or offset == expected:
                    self._next_offset[tp] = offset + 1
                    self._jumps.pop(tp, None)
                elif offset > expected:
                    if self._jumps.get(tp) != (expected, offset):
                        sought_back.add(tp)
                        log.info("%s: fetched %d where %d was due; reading again from %d",
                                 tp, offset, expected, expected)  # fmt: skip
                        if await self._seek_back(tp, expected):
                            self._jumps[tp] = (expected, offset)
                        else:  # not sought back: a jump again would prove nothing
                            self._jumps.pop(tp, None)
                        continue
                    # the same jump again, reading from the missing offset: a real gap, or
                    # the log now starts after it
                    del self._jumps[tp]
                    if await self._starts_after(tp, expected):
                        sought_back.add(tp)
                        await self._reset(tp, RESET_BEFORE_LOG_START, expected)
                        continue
                    self._log_gaps.setdefault(tp, {})[expected] = offset
                    self._read_offset[tp] = offset - 1  # so Faust notes no gap of its own
                    self._next_offset[tp] = offset + 1
                elif self._ends_before(tp, expected):  # the log lost records (Kafka's reset)
                    sought_back.add(tp)
                    await self._reset(tp, RESET_PAST_LOG_END, expected)
                    continue
                # below the expected offset: read again after a seek back; Faust drops it
                # if it is below its read offset
                yield tp, message

        # -- logs that no longer hold the offset due --------------------------------------

        @property
        def unreadable_partitions(self) -> dict[Any, str]:
            """The partitions whose log does not hold the offset due and that are not read
            again yet, with the reason (/readyz)."""
            return dict(self._unreadable)

        def _ends_before(self, tp: Any, offset: int) -> bool:
            """Whether the last fetch of ``tp`` saw its log end before ``offset``."""
            try:
                end = self.highwater(tp)
            except Exception:  # revoked meanwhile (aiokafka asserts the assignment)
                return False
            return end is not None and end < offset

        async def _starts_after(self, tp: Any, offset: int) -> bool:
            """Whether ``tp``'s log starts after ``offset`` (False if the broker cannot say)."""
            start = (await self._log_starts([tp])).get(tp)
            return start is not None and start > offset

        async def check_log_ends(self) -> None:
            """Reset the partitions whose last fetch ended before the offset due.

            Tansu answers such a fetch with no records and its log's end, so no record shows
            it (called after every fetch, and at assignment the first fetch reads at the
            committed offset). A fetch's end never falls below the offsets it handed over.
            """
            for tp, expected in list(self._next_offset.items()):
                if tp not in self._resetting and self._ends_before(tp, expected):
                    await self._reset(tp, RESET_PAST_LOG_END, expected)

        async def _reset(self, tp: Any, reason: str, expected: int) -> None:
            """Read ``tp`` again per the policy: from its log start or from its end.

            The partition is unreadable until the seek is done; the error is logged and
            counted once however many fetches show it. Its acknowledged offsets, its gaps and
            the events the streams hold from it are forgotten for commits (after a loss they
            are offsets of another log), and its reset offset is committed.
            """
            if tp in self._resetting:
                return
            self._resetting.add(tp)
            try:
                if tp not in self._unreadable:
                    self._unreadable[tp] = reason
                    log.error(
                        "%s: the log %s offset %d, where reading was due (%s); reading it "
                        "again from its %s (offset_reset=%s)", tp,
                        "ends before" if reason == RESET_PAST_LOG_END else "starts after",
                        expected, "the broker lost records: a topic re-created, an unclean "
                        "leader election or a broker without its storage"
                        if reason == RESET_PAST_LOG_END else "retention deleted records that "
                        "were not cleaned", "start" if offset_reset == "earliest" else "end",
                        offset_reset,
                    )  # fmt: skip
                    if on_offset_reset is not None:
                        on_offset_reset(reason)
                if offset_reset == "earliest":
                    target = (await self._log_starts([tp])).get(tp)
                else:
                    target = (await self._log_ends([tp])).get(tp)
                if target is None:  # the broker cannot say now: tried again after a fetch
                    return
                for state in (self._jumps, self._log_gaps, self._stuck):
                    state.pop(tp, None)
                self._acked[tp] = []
                self._acked_index[tp] = set()
                faust_gaps = getattr(self, "_gap", None)
                if faust_gaps is not None:
                    faust_gaps.pop(tp, None)
                for held in [m for m in list(self._unacked_messages) if m.tp == tp]:
                    self._taken.discard(held)
                    self._stale.add(held)
                self._committed_offset[tp] = None
                self._start[tp] = target
                self._start_unknown.discard(tp)
                self._reset_commit[tp] = target
                if await self._seek_back(tp, target):
                    self._unreadable.pop(tp, None)
            finally:
                self._resetting.discard(tp)

        async def _log_ends(self, tps: list[Any]) -> dict[Any, int]:
            """The end offset of each partition's log; empty if the broker cannot say now."""
            return await self._log_offsets(self.highwaters, tps, "end")

        async def _log_offsets(
            self, lookup: Callable[..., Awaitable[dict[Any, Any]]], tps: list[Any], which: str
        ) -> dict[Any, int]:
            """``lookup(*tps)`` within `LOOKUP_SECONDS`, the partitions it knows an offset of;
            empty (and a warning naming ``which`` end of the log) if the broker cannot say."""
            try:
                offsets = await asyncio.wait_for(lookup(*tps), LOOKUP_SECONDS)
            except Exception as exc:  # a broker error or a timeout: unknown
                log.warning("no log %s offsets for %s: %r", which, tps, exc)
                return {}
            return {tp: offset for tp, offset in offsets.items() if offset is not None}

        # -- flow control ----------------------------------------------------------------

        def on_buffer_drop(self, tp: Any) -> None:
            super().on_buffer_drop(tp)
            self._buffer_dropped.set()

        async def _wait_next_records(self, timeout: float) -> Any:
            """Faust's, without its long waits while a partition is paused.

            Faust pauses a partition while its stream's buffer is full and fetches only the
            others. With every partition paused it slept a whole second; with some, a fetch
            of the others waited up to a second (for records that may never come) while the
            paused one had records and room again. Either way the cleaning thread sat idle:
            a worker draining a backlog from one partition lost 1-2.5 s of its 6-8 s to it in
            three runs of eight (and in none of six with this). Here the fetch waits for a
            buffer to drain instead of the second, and while a partition is paused a fetch
            waits `PAUSED_FETCH_SECONDS` at most, so that the paused one is asked for again
            soon after it has room.
            """
            if self.flow_active and not self.app.client_only and self._buffered_partitions:
                if not self._get_active_partitions():
                    self._buffer_dropped.clear()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._buffer_dropped.wait(), timeout)
                    if not self._get_active_partitions():
                        return {}, set()
                timeout = min(timeout, PAUSED_FETCH_SECONDS)
            records = await super()._wait_next_records(timeout)
            await self.check_log_ends()
            return records

        # -- the agent -------------------------------------------------------------------

        def take(self, message: Any) -> None:
            """Note that the agent took ``message`` (called for every event it takes)."""
            if self._stale and message in self._stale:  # from a log that was replaced
                return
            self._taken.add(message)

        def ack(self, message: Any) -> bool:
            if self._guards(message.tp) and message not in self._taken:
                # an event a stream dropped (Faust's Python stream iterator acknowledges the
                # events it skips): the agent never had it, so it must not count
                return False
            return bool(super().ack(message))

        # -- commits ---------------------------------------------------------------------

        def _new_offset(self, tp: Any) -> int | None:
            if not self._guards(tp):
                return super()._new_offset(tp)
            acked = self._acked[tp]
            if not acked:  # nothing new; a reset partition commits where it reads again
                return self._reset_commit.pop(tp, None)
            acked.sort()
            start = self._committed_offset[tp]
            if start is None:  # nothing committed: from where the assignment began reading
                start = self._start.get(tp)
            if start is None:  # not known (yet): nothing is committed
                if tp in self._start_unknown:
                    self._look_up_starts()
                return None
            index = self._acked_index[tp]
            stale = bisect.bisect_left(acked, start)  # acknowledged before the seek said
            if stale:
                index.difference_update(acked[:stale])
                del acked[:stale]
            gaps = self._log_gaps.get(tp, {})
            for passed in [first for first, after in gaps.items() if after <= start]:
                del gaps[passed]
            end, n = start, 0
            while True:
                if n < len(acked) and acked[n] == end:
                    end, n = end + 1, n + 1
                elif end in gaps:
                    end = gaps[end]  # kept until committed past
                else:
                    break
            if end == start:
                if acked:
                    self._wait_for(tp, start)
                return None
            self._stuck.pop(tp, None)
            self._reset_commit.pop(tp, None)
            index.difference_update(acked[:n])
            del acked[:n]
            return end

        def _look_up_starts(self) -> None:
            """Ask the broker again for the log start of the partitions whose assignment began
            reading without one (a task: commits run on the event loop)."""
            if self._looking_up is not None and not self._looking_up.done():
                return

            async def look_up() -> None:
                for tp, first in (await self._log_starts(sorted(self._start_unknown))).items():
                    if tp in self._start_unknown:  # still assigned, still not known
                        self._start_unknown.discard(tp)
                        self._start[tp] = first

            self._looking_up = asyncio.ensure_future(look_up())

        def _wait_for(self, tp: Any, offset: int) -> None:
            """Commits of ``tp`` wait for ``offset`` while later offsets are acknowledged.

            Normally its event is still being cleaned or held. If no stream has held it for
            `STUCK_SECONDS` (Faust dropped it on the way), the partition is read again from
            it. The seek runs in a task: commits run on the event loop, and the consumer's
            thread may be in a rebalance that waits for the loop.
            """
            now = time.monotonic()
            since = self._stuck.get(tp)
            if since is None or since[0] != offset:
                self._stuck[tp] = (offset, now)
                return
            if now - since[1] < STUCK_SECONDS:
                return
            held = any(m.tp == tp and m.offset == offset for m in list(self._unacked_messages))
            self._stuck[tp] = (offset, now)  # look again in STUCK_SECONDS
            if held:
                return
            log.info("%s: commits waited %.0f s for offset %d, which no stream holds; "
                     "reading again from it", tp, now - since[1], offset)  # fmt: skip
            seeking = asyncio.ensure_future(self._seek_back(tp, offset))
            self._seeking.add(seeking)  # the loop keeps weak references to tasks
            seeking.add_done_callback(self._seeking.discard)

    # not renamed: mode registers a service's tasks under its class's module and qualified name
    return GuardedConsumer
