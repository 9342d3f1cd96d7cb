"""`stale_fetches`: records under way during a seek are dropped and read again from the commits.

Faust's own `Consumer.getmany` and `perform_seek` run here on a stand-in for the consumer that
has only what they read: the records of one fetch, the committed offsets and a seek log.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("faust")

from faust.transport.consumer import Consumer
from faust.types import TP

from stream_cleaner.streaming import stale_fetches

stale_fetches.install()

PARTITION = TP("crawl.raw-html.v1", 0)
CHANGELOG = TP("group-site-templates-changelog", 0)


class StandIn:
    """What Faust's `getmany` and `perform_seek` touch on a consumer, and no more."""

    def __init__(self, offsets: list[int], committed: int) -> None:
        self.app = SimpleNamespace(
            consumer_generation_id=1,
            monitor=SimpleNamespace(track_tp_end_offset=lambda *a: None),
            tables=SimpleNamespace(changelog_topics={CHANGELOG.topic}),
        )
        self.scheduler = SimpleNamespace(iterate=lambda records: iter(
            (tp, record) for tp, records_of_tp in records.items() for record in records_of_tp
        ))  # fmt: skip
        self.flow_active = True
        self.should_stop = False
        self._buffered_partitions: set[TP] = set()
        self._read_offset: dict[TP, int | None] = {PARTITION: committed}
        self._committed_offset: dict[TP, int | None] = {PARTITION: committed}
        self.committed = committed
        self.fetch = {PARTITION: [SimpleNamespace(offset=o) for o in offsets]}
        self.seeks_to: list[int] = []
        self.log = SimpleNamespace(dev=lambda *args: None)

    async def _wait_next_records(self, timeout: float) -> tuple[Any, Any]:
        return self.fetch, None

    def highwater(self, tp: TP) -> int:
        return 1000

    def _to_message(self, tp: TP, record: Any) -> Any:
        return record

    async def seek_to_committed(self) -> dict[TP, int]:
        self.seeks_to.append(self.committed)
        return {PARTITION: self.committed}

    async def _seek(self, tp: TP, offset: int) -> None:
        self.seeks_to.append(offset)

    # Faust's methods, as patched, on this object
    getmany = Consumer.getmany
    perform_seek = Consumer.perform_seek
    seek = Consumer.seek


async def _drain(consumer: StandIn, seek_after: int | None = None) -> list[int]:
    """The offsets one getmany hands over; a seek (as a rebalance makes) after the
    ``seek_after``-th record."""
    handed = []
    async for _tp, message in consumer.getmany(timeout=1.0):
        handed.append(message.offset)
        if len(handed) == seek_after:
            await consumer.perform_seek()
    return handed


def test_a_fetch_without_a_seek_hands_over_every_record() -> None:
    consumer = StandIn([196, 197, 198], committed=196)
    assert asyncio.run(_drain(consumer)) == [196, 197, 198]
    assert consumer.seeks_to == []


def test_records_under_way_during_a_seek_are_dropped_and_read_again() -> None:
    """The soak run's loss: records read from the old position (221...) reached the stream
    after the seek to 196, and Faust took 197-220 for a gap in the log and committed past it."""
    consumer = StandIn([221, 222, 223], committed=196)
    assert asyncio.run(_drain(consumer, seek_after=1)) == [221]  # the seek came after 221
    # the rest is dropped, and the partition sought back to where the seek put it
    assert consumer.seeks_to == [196, 196]
    assert consumer._read_offset[PARTITION] == 196
    assert stale_fetches.seeks(consumer) == 4  # two seeks, each counted as it began and ended


def test_a_fetch_that_begins_after_a_seek_hands_over_every_record() -> None:
    consumer = StandIn([196, 197], committed=196)

    async def fetch_after_a_seek() -> list[int]:
        generator = consumer.getmany(timeout=1.0)  # made, not started: nothing fetched yet
        await consumer.perform_seek()
        return [message.offset async for _tp, message in generator]

    assert asyncio.run(fetch_after_a_seek()) == [196, 197]
    assert consumer.seeks_to == [196]  # no second seek: nothing was dropped


def test_table_changelog_records_pass_a_seek_untouched() -> None:
    """Recovery reads changelogs with offsets of its own: nothing of theirs is dropped."""
    consumer = StandIn([221, 222], committed=196)
    consumer.fetch[CHANGELOG] = [SimpleNamespace(offset=o) for o in (40, 41)]
    assert asyncio.run(_drain(consumer, seek_after=1)) == [221, 40, 41]
    assert consumer.seeks_to == [196, 196]  # the stream partition alone is sought back
