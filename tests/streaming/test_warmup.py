"""The warm-up hold and the gate that acknowledges in partition order."""

from __future__ import annotations

from types import SimpleNamespace

from stream_cleaner.document import RawDocument
from stream_cleaner.settings import CleanerSettings
from stream_cleaner.sites import SiteSettings, SiteTemplates
from stream_cleaner.streaming.records import InputMessage
from stream_cleaner.streaming.warmup import OVERFLOW, TIMEOUT, WARM, AckGate, WarmupHold

from ..test_sites import site_page


def event(partition: int, offset: int) -> SimpleNamespace:
    return SimpleNamespace(message=SimpleNamespace(topic="in", partition=partition, offset=offset))


def test_the_gate_acknowledges_a_partition_in_order_only():
    gate = AckGate()
    a0, a1, a2, b0 = event(0, 0), event(0, 1), event(0, 2), event(1, 0)
    gate.add([a0, a1, a2, b0])
    assert gate.done([a1, b0]) == [b0]  # a0 is held: nothing after it on partition 0
    assert gate.done([a2]) == []
    assert gate.done([a0]) == [a0, a1, a2]
    assert len(gate) == 0
    gate.add([event(0, 3), event(1, 1)])
    gate.forget(lambda tp: tp != ("in", 0))  # partition 0 lost in a rebalance
    assert len(gate) == 1


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def held_page(n: int, host: str = "news.example.org") -> tuple[InputMessage, RawDocument]:
    raw = site_page(n, host=host)
    return InputMessage("in", 0, n, host.encode(), raw.body.encode()), raw


def test_a_cold_sites_pages_are_held_until_each_has_min_pages_others():
    clock = Clock()
    templates = SiteTemplates(SiteSettings(min_pages=3))
    hold = WarmupHold(templates, seconds=30, max_pages=100, clock=clock)
    settings = CleanerSettings()
    verdicts = [hold.admit(n, *held_page(n), settings) for n in range(5)]
    # three held and learnt; the fourth finds three others (cleaned now, reading them), the
    # fifth finds its site warm by its URL and is cleaned as usual
    assert verdicts == ["held", "held", "held", "learnt", "clean"]
    assert len(templates.stats("news.example.org")) == 4
    released = hold.release()
    assert [(h.token, why) for h, why in released] == [(0, WARM), (1, WARM), (2, WARM)]
    assert len(hold) == 0 and hold.released[WARM] == 3


def test_held_pages_wait_no_longer_than_the_hold_nor_beyond_the_cap():
    clock = Clock()
    hold = WarmupHold(
        SiteTemplates(SiteSettings(min_pages=3)), seconds=10, max_pages=2, clock=clock
    )
    settings = CleanerSettings()
    for n, host in enumerate(("a.example", "b.example", "c.example")):
        assert hold.admit(n, *held_page(n, host), settings) == "held"
        clock.now += 3
    assert hold.due()  # three held, two allowed
    assert [(h.token, why) for h, why in hold.release()] == [(0, OVERFLOW)]
    assert not hold.due()
    clock.now = 13.5  # b.example's page came at 3, c.example's at 6
    assert [(h.token, why) for h, why in hold.release()] == [(1, TIMEOUT)]
    assert [(h.token, why) for h, why in hold.release(everything=True)] == [(2, "shutdown")]
    # a page with no site has nothing to wait for
    assert hold.admit(
        9, InputMessage("in", 0, 9), RawDocument(body="<p>no host</p>"), settings
    ) == ("clean")
