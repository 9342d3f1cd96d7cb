"""The consumer guard: input offsets are fetched, taken and committed in order, none skipped.

The broker test `test_workers_joining_leaving_and_killed_mid_stream_lose_nothing` is the one
that counts; these pin the guard's decisions on records scripted as the seeks and stale fetches
of a rebalance left them (the orders seen in worker traces), over a stand-in for Faust's
consumer that records what the guard asked of it.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import defaultdict
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest
from faust.types import TP

from stream_cleaner.streaming.patches.offsets import PAUSED_FETCH_SECONDS, guarded
from stream_cleaner.streaming.patches.versions import require_tested
from stream_cleaner.streaming.views import readiness

INPUT = TP("crawl.raw-html.v1", 0)
OTHER = TP("crawl.raw-html.v1", 1)
CHANGELOG = TP("g-site-templates-changelog", 0)


@pytest.fixture(autouse=True)
def _clients_checked() -> None:
    """The patches install only once the client version gate let the process run."""
    require_tested()


class Recorder:
    """The part of Faust's consumer the guard uses: committed offsets, seeks, fetches, gaps."""

    def __init__(self, *, committed: dict[Any, int | None], log_starts: dict[Any, int]) -> None:
        self.app = SimpleNamespace(
            topics=SimpleNamespace(acks_enabled_for=lambda topic: "changelog" not in topic)
        )
        self.committed = committed
        self._read_offset: dict[Any, int | None] = {}
        self.fetches: list[list[tuple[Any, int]]] = []
        self.seeks: list[tuple[Any, int]] = []
        self.gaps: list[tuple[Any, int, int]] = []
        self._unacked_messages: weakref.WeakSet[Any] = weakref.WeakSet()

        self.log_starts = log_starts
        self.log_ends: dict[Any, int] = {}  # the high watermark of each partition's last fetch
        self._acked: defaultdict[Any, list[int]] = defaultdict(list)
        self._acked_index: defaultdict[Any, set[int]] = defaultdict(set)
        self._committed_offset: defaultdict[Any, int | None] = defaultdict(lambda: None)
        self._on_partitions_revoked = self.revoked_by_app

    async def earliest_offsets(self, *tps: Any) -> dict[Any, int]:
        return {tp: self.log_starts[tp] for tp in tps}

    def highwater(self, tp: Any) -> int | None:
        return self.log_ends.get(tp)

    async def highwaters(self, *tps: Any) -> dict[Any, int]:
        return {tp: self.log_ends[tp] for tp in tps}

    def ack(self, message: Any) -> bool:  # as Faust's, without its locks
        tp, offset = message.tp, message.offset
        committed = self._committed_offset[tp]
        if (committed is None or offset >= committed) and offset not in self._acked_index[tp]:
            self._acked_index[tp].add(offset)
            self._acked[tp].append(offset)
            return True
        return False

    async def perform_seek(self) -> None:  # as Faust's: the read offset is the commit
        self._read_offset.update({tp: offset or None for tp, offset in self.committed.items()})
        self._committed_offset.update({tp: offset or None for tp, offset in self.committed.items()})

    async def seek(self, partition: Any, offset: int) -> None:
        self.seeks.append((partition, offset))
        self._read_offset[partition] = offset or None

    async def on_partitions_revoked(self, revoked: set[Any]) -> None:
        # as Faust's: it forgets the partitions' offsets first, then waits for their streams
        # and commits (the app's revocation: `while_revoking`)
        for tp in revoked:
            for state in (self._read_offset, self._acked, self._acked_index,
                          self._committed_offset):  # fmt: skip
                state.pop(tp, None)
        await self._on_partitions_revoked(revoked)

    async def revoked_by_app(self, revoked: set[Any]) -> None:
        await self.while_revoking()

    async def while_revoking(self) -> None:
        """What the app does as partitions are revoked (tests replace it)."""

    async def _add_gap(self, tp: Any, offset_from: int, offset_to: int) -> None:
        self.gaps.append((tp, offset_from, offset_to))

    async def getmany(self, timeout: float) -> AsyncIterator[tuple[Any, Any]]:
        for tp, offset in self.fetches.pop(0):
            yield tp, message(tp, offset)


class Message:
    """What the guard reads of a Faust message (and a weak reference to it)."""

    def __init__(self, tp: Any, offset: int) -> None:
        self.tp, self.offset = tp, offset


def message(tp: Any, offset: int) -> Message:
    return Message(tp, offset)


def consumer(committed: dict[Any, int | None], log_starts: dict[Any, int] | None = None) -> Any:
    return guarded(Recorder)(committed=committed, log_starts=log_starts or {})


def fetch(consumer: Any, *records: tuple[Any, int]) -> list[tuple[Any, int]]:
    """What the streams get of one fetch holding ``records``."""
    consumer.fetches.append(list(records))

    async def drain() -> list[tuple[Any, int]]:
        return [(tp, message.offset) async for tp, message in consumer.getmany(1.0)]

    return asyncio.run(drain())


def test_records_from_before_a_seek_are_read_again_from_the_seek() -> None:
    guard = consumer({INPUT: 72, OTHER: 10})
    asyncio.run(guard.perform_seek())
    # the rest of a fetch from the old position: 78 where 72 is due
    got = fetch(guard, (INPUT, 78), (OTHER, 10), (INPUT, 79), (OTHER, 11))
    assert got == [(OTHER, 10), (OTHER, 11)]
    assert guard.seeks == [(INPUT, 72)]
    assert guard.gaps == []
    got = fetch(guard, (INPUT, 72), (INPUT, 73), (OTHER, 12))
    assert got == [(INPUT, 72), (INPUT, 73), (OTHER, 12)]
    assert guard.gaps == []


def test_a_jump_seen_again_from_the_missing_offset_is_a_gap_in_the_log() -> None:
    guard = consumer({INPUT: 10})
    asyncio.run(guard.perform_seek())
    assert fetch(guard, (INPUT, 15), (INPUT, 16)) == []
    assert guard.seeks == [(INPUT, 10)]
    assert fetch(guard, (INPUT, 15), (INPUT, 16)) == [(INPUT, 15), (INPUT, 16)]
    assert guard.seeks == [(INPUT, 10)]  # not sought a second time
    assert guard._log_gaps[INPUT] == {10: 15}
    # kept by the guard, not by Faust (whose gaps count towards its commits); Faust compares
    # the next record with its read offset and notes no gap of its own
    assert guard.gaps == []
    assert guard._read_offset[INPUT] == 14


def test_a_partition_without_a_commit_is_guarded_from_the_start_of_its_log() -> None:
    # nothing committed: no seek; the fetcher restarts at the log's start, but records read
    # before the rebalance from further on still come
    guard = consumer({INPUT: None}, log_starts={INPUT: 0})
    asyncio.run(guard.perform_seek())
    assert fetch(guard, (INPUT, 50), (INPUT, 51)) == []
    assert guard.seeks == [(INPUT, 0)]
    assert fetch(guard, (INPUT, 0), (INPUT, 1)) == [(INPUT, 0), (INPUT, 1)]


def test_records_read_again_after_a_seek_back_pass_for_faust_to_judge() -> None:
    guard = consumer({INPUT: 5})
    asyncio.run(guard.perform_seek())
    assert fetch(guard, (INPUT, 5), (INPUT, 6), (INPUT, 7)) == [(INPUT, 5), (INPUT, 6), (INPUT, 7)]
    asyncio.run(guard.seek(INPUT, 5))
    assert fetch(guard, (INPUT, 5), (INPUT, 6)) == [(INPUT, 5), (INPUT, 6)]
    # older than due (a fetch that began before the seek): Faust drops it below its read offset
    assert fetch(guard, (INPUT, 3)) == [(INPUT, 3)]
    assert guard.seeks == [(INPUT, 5)]


def test_changelogs_and_revoked_partitions_pass_untouched() -> None:
    guard = consumer({INPUT: 20, CHANGELOG: 3})
    asyncio.run(guard.perform_seek())
    assert fetch(guard, (CHANGELOG, 40), (CHANGELOG, 90)) == [(CHANGELOG, 40), (CHANGELOG, 90)]
    asyncio.run(guard.on_partitions_revoked({INPUT}))
    # nothing known of a partition until its next seek
    assert fetch(guard, (INPUT, 33), (INPUT, 34)) == [(INPUT, 33), (INPUT, 34)]
    assert guard.seeks == []
    assert fetch(guard, (INPUT, 36)) == []  # after 34, 35 is due
    assert guard.seeks == [(INPUT, 35)]


def test_the_worker_app_consumes_through_the_guard() -> None:
    from stream_cleaner.streaming.app import create_app

    app = create_app()
    assert "GuardedConsumer" in [cls.__name__ for cls in type(app.consumer).__mro__]
    assert hasattr(app.consumer, "_next_offset")


def test_a_partition_that_cannot_be_sought_back_proves_no_gap() -> None:
    guard = consumer({INPUT: 10})
    asyncio.run(guard.perform_seek())

    async def revoked(partition: Any, offset: int) -> None:
        raise RuntimeError("partition not assigned")

    guard.seek = revoked
    assert fetch(guard, (INPUT, 15)) == []
    # the same jump once more is not taken for a gap: nothing was read from 10 in between
    guard.seek = Recorder.seek.__get__(guard)
    assert fetch(guard, (INPUT, 15)) == []
    assert guard.seeks == [(INPUT, 10)]
    assert guard.gaps == []


def take(guard: Any, tp: Any, *offsets: int) -> list[int]:
    """The agent takes events at ``offsets`` (it keeps them in ``guard.events``)."""
    events = [message(tp, offset) for offset in offsets]
    for event in events:
        guard.take(event)
    guard.events = getattr(guard, "events", []) + events  # the agent holds what it took
    return [event.offset for event in events]


def commit_offset(guard: Any, tp: Any) -> int | None:
    """What a commit of ``tp`` would commit now, with the seeks back it starts done."""

    async def commit() -> int | None:
        offset = guard._new_offset(tp)
        await asyncio.gather(*guard._seeking)
        if offset is not None:  # as Faust's commit records it
            guard._committed_offset[tp] = offset
        return offset

    return asyncio.run(commit())


def test_commits_wait_for_an_event_dropped_on_the_way_and_read_it_again(monkeypatch) -> None:
    # offsets 4 and 5 reached the stream while flow control was suspended and were dropped
    guard = consumer({INPUT: None}, log_starts={INPUT: 0})
    asyncio.run(guard.perform_seek())
    take(guard, INPUT, 0, 1, 2, 3, 6, 7)
    for event in guard.events:
        guard.ack(event)
    assert commit_offset(guard, INPUT) == 4
    assert commit_offset(guard, INPUT) is None  # waits for 4 (noted now)
    assert guard.seeks == []
    monkeypatch.setattr("stream_cleaner.streaming.patches.offsets.STUCK_SECONDS", 0.0)
    held = message(INPUT, 4)  # while a stream holds 4 (held for its site, being cleaned)
    guard._unacked_messages.add(held)
    assert commit_offset(guard, INPUT) is None
    assert guard.seeks == []
    guard._unacked_messages.discard(held)
    assert commit_offset(guard, INPUT) is None
    assert guard.seeks == [(INPUT, 4)]  # no stream holds it: read again from 4
    take(guard, INPUT, 4, 5, 6, 7)
    for event in guard.events[-4:]:
        guard.ack(event)
    assert commit_offset(guard, INPUT) == 8


def test_an_event_at_the_end_of_a_confirmed_gap_is_taken() -> None:
    guard = consumer({INPUT: 10})
    asyncio.run(guard.perform_seek())
    fetch(guard, (INPUT, 15))
    fetch(guard, (INPUT, 15))  # confirmed: the log has nothing from 10 to 14
    assert take(guard, INPUT, 15, 16) == [15, 16]
    for event in guard.events:
        guard.ack(event)
    assert guard._new_offset(INPUT) == 17


def test_nothing_is_committed_past_an_offset_the_agent_did_not_acknowledge() -> None:
    guard = consumer({INPUT: 280})
    asyncio.run(guard.perform_seek())
    take(guard, INPUT, 280, 281, 282)
    first, *rest = guard.events
    for event in rest:
        assert guard.ack(event)
    # Faust's own rule commits 283 here: 281 is only one past the committed 280
    assert guard._new_offset(INPUT) is None
    assert guard.ack(first)
    assert guard._new_offset(INPUT) == 283


def test_only_acknowledgements_of_events_the_agent_took_count() -> None:
    guard = consumer({INPUT: 0}, log_starts={INPUT: 0})
    asyncio.run(guard.perform_seek())
    skipped = message(INPUT, 0)  # a stream dropped it and acknowledged it anyway
    assert not guard.ack(skipped)
    take(guard, INPUT, 0)
    assert guard.ack(guard.events[0])
    assert guard._new_offset(INPUT) == 1


def test_acknowledgements_from_before_a_seek_do_not_block_commits() -> None:
    guard = consumer({INPUT: None}, log_starts={INPUT: 0})
    asyncio.run(guard.perform_seek())
    take(guard, INPUT, 0, 1, 2)
    guard.committed = {INPUT: 2}  # another worker committed 2 meanwhile; this one re-joins
    asyncio.run(guard.on_partitions_revoked({INPUT}))
    for event in guard.events:  # its last batch, acknowledged once published
        guard.ack(event)
    asyncio.run(guard.perform_seek())
    assert guard._new_offset(INPUT) == 3


def test_records_before_a_new_assignments_seek_do_not_hide_the_start_of_the_log() -> None:
    guard = consumer({INPUT: None}, log_starts={INPUT: 0})
    # a record fetched before the rebalance, handed over before the assignment's seek
    assert fetch(guard, (INPUT, 50)) == [(INPUT, 50)]
    assert take(guard, INPUT, 50) == [50]
    guard.ack(guard.events[0])
    asyncio.run(guard.perform_seek())
    assert fetch(guard, (INPUT, 51)) == []
    assert guard.seeks == [(INPUT, 0)]
    assert guard._new_offset(INPUT) is None  # 0 to 49 were not acknowledged


def test_commits_while_partitions_are_revoked_start_at_the_committed_offset() -> None:
    # Faust forgets a revoked partition's committed offset before it waits for the streams to
    # acknowledge what they hold and commits a last time; the agent acknowledged 151 to 153
    # and then 154 to 157 while 150 was dropped on the way (it is read again from 150 later)
    guard = consumer({INPUT: 150})
    asyncio.run(guard.perform_seek())
    take(guard, INPUT, 151, 152, 153, 154, 155, 156, 157)
    for event in guard.events[:3]:
        guard.ack(event)
    assert guard._new_offset(INPUT) is None
    commits = []

    async def while_revoking() -> None:
        for event in guard.events[3:]:
            guard.ack(event)
        commits.append(guard._new_offset(INPUT))

    guard.while_revoking = while_revoking
    asyncio.run(guard.on_partitions_revoked({INPUT}))
    assert commits == [None]  # not 158: nothing past 150 before 150 is acknowledged


def test_the_last_commit_of_revoked_partitions_covers_what_was_acknowledged_before() -> None:
    guard = consumer({INPUT: 150})
    asyncio.run(guard.perform_seek())
    take(guard, INPUT, 150, 151, 152, 153)
    for event in guard.events[:3]:  # acknowledged since the last commit
        guard.ack(event)
    commits = []

    async def while_revoking() -> None:
        guard.ack(guard.events[3])
        commits.append(guard._new_offset(INPUT))

    guard.while_revoking = while_revoking
    asyncio.run(guard.on_partitions_revoked({INPUT}))
    assert commits == [154]
    assert guard._acked == {} and guard._committed_offset == {}  # forgotten after it
    # and the next assignment starts afresh from what the broker says
    guard.committed = {INPUT: 154}
    asyncio.run(guard.perform_seek())
    take(guard, INPUT, 154)
    guard.ack(guard.events[-1])
    assert guard._new_offset(INPUT) == 155


def test_without_the_log_start_nothing_is_committed_until_the_broker_says_it() -> None:
    guard = consumer({INPUT: None}, log_starts={})  # the broker does not answer

    async def scenario() -> list[int | None]:
        await guard.perform_seek()
        take(guard, INPUT, 3, 4)  # 0 to 2 were dropped on the way
        for event in guard.events:
            guard.ack(event)
        commits = [guard._new_offset(INPUT)]  # not 5: where reading began is not known
        await guard._looking_up
        guard.log_starts[INPUT] = 0  # it answers now
        commits.append(guard._new_offset(INPUT))
        await guard._looking_up
        assert guard._start == {INPUT: 0}
        commits.append(guard._new_offset(INPUT))  # 0 to 2 are not acknowledged
        take(guard, INPUT, 0, 1, 2)  # read again (the guard's seek back after its wait)
        for event in guard.events[-3:]:
            guard.ack(event)
        commits.append(guard._new_offset(INPUT))
        return commits

    assert asyncio.run(scenario()) == [None, None, None, 5]


# -- flow control ----------------------------------------------------------------------------


class Fetcher:
    """The part of Faust's consumer that its flow control uses: the partitions paused for a
    full stream buffer, the active ones, and the timeout each fetch was given."""

    def __init__(self, partitions: set[Any]) -> None:
        self.app = SimpleNamespace(
            client_only=False, topics=SimpleNamespace(acks_enabled_for=lambda topic: True)
        )
        self.flow_active = True
        self._active = set(partitions)
        self._buffered_partitions: set[Any] = set()
        self.fetch_timeouts: list[float] = []
        self._on_partitions_revoked = None  # the app's (unused here)

    def _get_active_partitions(self) -> set[Any]:
        return self._active

    def on_buffer_full(self, tp: Any) -> None:  # as Faust's
        self._active.discard(tp)
        self._buffered_partitions.add(tp)

    def on_buffer_drop(self, tp: Any) -> None:  # as Faust's
        if tp in self._buffered_partitions:
            self._active.add(tp)
            self._buffered_partitions.discard(tp)

    async def _wait_next_records(self, timeout: float) -> tuple[dict[Any, Any], set[Any]]:
        # Faust's: with no active partition it sleeps a second; else it fetches the active
        # ones, waiting up to ``timeout``
        self.fetch_timeouts.append(timeout)
        if not self._active:
            await asyncio.sleep(1)
            return {}, set()
        return {tp: ["record"] for tp in self._active}, set(self._active)


def fetcher(*partitions: Any) -> Any:
    return guarded(Fetcher)(set(partitions))


def test_with_every_partition_paused_a_fetch_waits_for_a_buffer_to_drain() -> None:
    async def main() -> None:
        consumer = fetcher(INPUT, OTHER)
        consumer.on_buffer_full(INPUT)
        consumer.on_buffer_full(OTHER)
        started = time.monotonic()
        fetching = asyncio.ensure_future(consumer._wait_next_records(1.0))
        await asyncio.sleep(0.05)
        assert not fetching.done()
        consumer.on_buffer_drop(OTHER)
        records, active = await asyncio.wait_for(fetching, 1)
        assert time.monotonic() - started < 0.5  # Faust slept a whole second
        assert active == {OTHER} and set(records) == {OTHER}

        consumer.on_buffer_full(OTHER)
        started = time.monotonic()
        assert await consumer._wait_next_records(0.05) == ({}, set())  # none drained
        assert time.monotonic() - started < 0.5

    asyncio.run(main())


def test_while_a_partition_is_paused_a_fetch_of_the_others_is_short() -> None:
    async def main() -> None:
        consumer = fetcher(INPUT, OTHER)
        consumer.on_buffer_full(INPUT)
        _, active = await consumer._wait_next_records(1.0)
        assert active == {OTHER}
        # INPUT comes back at the next fetch, which comes soon
        assert consumer.fetch_timeouts == [PAUSED_FETCH_SECONDS]
        consumer.on_buffer_drop(INPUT)
        _, active = await consumer._wait_next_records(1.0)
        assert active == {INPUT, OTHER} and consumer.fetch_timeouts[-1] == 1.0

    asyncio.run(main())


# -- logs that no longer hold the offset due ---------------------------------------------------


def resetting(
    committed: dict[Any, int | None], log_starts: dict[Any, int], **options: Any
) -> tuple[Any, list[str]]:
    """A guard whose resets are counted in the returned list, its partitions assigned."""
    resets: list[str] = []
    guard = guarded(Recorder, on_offset_reset=resets.append, **options)(
        committed=committed, log_starts=log_starts
    )
    asyncio.run(guard.perform_seek())
    return guard, resets


def test_a_log_that_ends_before_the_committed_offset_is_read_again_from_its_start() -> None:
    """Kafka's way: the fetch at the committed offset is out of range, aiokafka reads from the
    log start, and Faust dropped what came as below its read offset (a lag of 0, pages never
    cleaned)."""
    guard, resets = resetting({INPUT: 100, OTHER: 7}, {INPUT: 0, OTHER: 0})
    guard.log_ends.update({INPUT: 54, OTHER: 9})
    assert fetch(guard, (INPUT, 0), (OTHER, 7), (INPUT, 1)) == [(OTHER, 7)]
    assert guard.seeks == [(INPUT, 0)]
    assert resets == ["past_log_end"]
    assert guard.unreadable_partitions == {}
    assert commit_offset(guard, INPUT) == 0  # the group's offset is inside the log again
    assert fetch(guard, (INPUT, 0), (INPUT, 1)) == [(INPUT, 0), (INPUT, 1)]
    take(guard, INPUT, 0, 1)
    for event in guard.events:
        guard.ack(event)
    assert commit_offset(guard, INPUT) == 2
    asyncio.run(guard.check_log_ends())
    assert resets == ["past_log_end"]
    assert guard.seeks == [(INPUT, 0)]


def test_a_fetch_without_records_that_ends_before_the_offset_due_resets_it_too() -> None:
    """Tansu's way: a fetch past the end answers no records and the log's end."""
    guard, resets = resetting({INPUT: 100}, {INPUT: 0})
    asyncio.run(guard.check_log_ends())  # not fetched yet: nothing known
    assert resets == []
    guard.log_ends[INPUT] = 54
    asyncio.run(guard.check_log_ends())
    asyncio.run(guard.check_log_ends())
    assert guard.seeks == [(INPUT, 0)]
    assert resets == ["past_log_end"]


def test_with_offset_reset_latest_a_lost_log_is_read_from_its_end() -> None:
    guard, resets = resetting({INPUT: 100}, {INPUT: 0}, offset_reset="latest")
    guard.log_ends[INPUT] = 54
    asyncio.run(guard.check_log_ends())
    assert guard.seeks == [(INPUT, 54)]
    assert commit_offset(guard, INPUT) == 54
    assert resets == ["past_log_end"]


def test_a_log_that_starts_after_the_offset_due_is_read_from_its_start_and_counted() -> None:
    """Retention deleted records before they were cleaned: Kafka answers the fetch out of
    range and aiokafka reads from the log start; a jump seen twice, which the log start
    explains (not a gap inside the log)."""
    guard, resets = resetting({INPUT: 10}, {INPUT: 50})
    assert fetch(guard, (INPUT, 50), (INPUT, 51)) == []
    assert guard.seeks == [(INPUT, 10)]
    assert fetch(guard, (INPUT, 50), (INPUT, 51)) == []
    assert guard.seeks == [(INPUT, 10), (INPUT, 50)]
    assert resets == ["before_log_start"]
    assert fetch(guard, (INPUT, 50), (INPUT, 51)) == [(INPUT, 50), (INPUT, 51)]
    assert commit_offset(guard, INPUT) == 50
    # a gap inside the log is still a gap, not a reset
    guard, resets = resetting({INPUT: 10}, {INPUT: 0})
    fetch(guard, (INPUT, 15))
    assert fetch(guard, (INPUT, 15)) == [(INPUT, 15)]
    assert resets == []


def test_events_held_from_a_lost_log_do_not_count_for_the_records_now_at_their_offsets() -> None:
    guard, resets = resetting({INPUT: 100}, {INPUT: 0})
    take(guard, INPUT, 100, 101, 102)  # cleaned when the broker lost the log, or being cleaned
    assert guard.ack(guard.events[0])  # acknowledged, not committed yet
    guard._unacked_messages.update(guard.events[1:])  # Faust tracks what it hands to streams
    late = message(INPUT, 103)  # handed to the stream, not taken yet
    guard._unacked_messages.add(late)
    guard.log_ends[INPUT] = 54
    asyncio.run(guard.check_log_ends())
    assert resets == ["past_log_end"]
    guard.take(late)
    for event in [*guard.events[1:], late]:
        assert not guard.ack(event)
    assert commit_offset(guard, INPUT) == 0
    # the new log's records up to 99 cleaned: nothing of the old log counts for 100 on
    take(guard, INPUT, *range(100))
    for event in guard.events[3:]:
        guard.ack(event)
    assert commit_offset(guard, INPUT) == 100


def test_a_partition_that_cannot_be_read_again_yet_is_not_ready() -> None:
    guard, resets = resetting({INPUT: 100}, {})  # the broker does not say where the log starts
    guard.log_ends[INPUT] = 54
    asyncio.run(guard.check_log_ends())
    asyncio.run(guard.check_log_ends())
    assert resets == ["past_log_end"]  # logged and counted once
    assert guard.seeks == []
    assert guard.unreadable_partitions == {INPUT: "past_log_end"}
    guard.started, guard.should_stop = True, False
    guard.assignment = lambda: {INPUT}
    app = SimpleNamespace(_consumer=guard, rebalancing=False)
    runtime = SimpleNamespace(model=object(), agent_running=True)
    state = readiness(app, runtime)  # type: ignore[arg-type]
    assert state["ready"] is False
    assert state["partitions_readable"] is False
    assert state["unreadable_partitions"] == {"crawl.raw-html.v1:0": "past_log_end"}
    guard.log_starts[INPUT] = 0  # the broker answers again
    asyncio.run(guard.check_log_ends())
    assert guard.seeks == [(INPUT, 0)]
    assert resets == ["past_log_end"]
    assert readiness(app, runtime)["ready"] is True  # type: ignore[arg-type]
