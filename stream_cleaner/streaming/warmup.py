"""Holding a new site's first pages until its template is known (site templates' warm-up).

A stream learns a site's template from the site's pages as they come, so its first pages are
cleaned without site evidence: the `site_template` rule needs ``min_pages`` pages first. With
``warmup_seconds`` set, the worker instead holds the pages of a site it has seen fewer than
``min_pages + 1`` times: it learns their blocks at once (the site warms up on them) and cleans
them once the site has ``min_pages`` *other* pages for each of them, or when they have waited
``warmup_seconds``, or when more than ``warmup_max_pages`` pages are held (the oldest first).
A held page is then cleaned as the batch mode's second pass cleans it: with what the site's
other pages say (`sites.SiteStats.others`).

Delivery stays at-least-once: a held message is not acknowledged, and neither is any later
message of its partition until it is (`AckGate`), because Faust commits offsets up to the
first unacknowledged one only when nothing before it is missing. So a held page holds its
partition's commits back for at most ``warmup_seconds``; after a crash, everything since it is
cleaned again. On shutdown every held page is cleaned at once; pages of partitions the worker
lost are let go without output (their next owner reads them again).

`WarmupHold` is used from the cleaning thread only; `AckGate` from the event loop only.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..document import RawDocument
from ..pipeline import observe_site
from ..settings import CleanerSettings
from ..sites import SiteTemplates, site_of
from .records import InputMessage

# why held pages were let go (the label of ``stream_cleaner_site_warmup_released_pages_total``)
WARM, TIMEOUT, OVERFLOW, SHUTDOWN = "warm", "timeout", "overflow", "shutdown"
RELEASE_REASONS = (WARM, TIMEOUT, OVERFLOW, SHUTDOWN)


@dataclass(slots=True)
class Held:
    """A page waiting for its site to warm up, with what acknowledges it."""

    token: Any  # the Faust event, acknowledged once the page's outcome is published
    msg: InputMessage
    site: str
    since: float
    number: int  # arrival order


class WarmupHold:
    """The pages held until their sites are warm.

    Args:
        templates: the worker's site statistics (held pages are learnt into them at once).
        seconds: the longest a page is held.
        max_pages: the most pages held at once; past it the oldest is let go.
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(
        self,
        templates: SiteTemplates,
        *,
        seconds: float,
        max_pages: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.templates = templates
        self.seconds = seconds
        self.max_pages = max_pages
        self.clock = clock
        self._held: OrderedDict[int, Held] = OrderedDict()  # by arrival
        self._next = 0
        self.released: dict[str, int] = dict.fromkeys(RELEASE_REASONS, 0)

    def __len__(self) -> int:
        return len(self._held)

    def _warm(self, site: str) -> bool:
        """Whether the site has ``min_pages`` pages besides any one of its pages."""
        stats = self.templates.stats(site) if site in self.templates else None
        return stats is not None and len(stats) > self.templates.settings.min_pages

    def admit(
        self, token: Any, msg: InputMessage, raw: RawDocument, settings: CleanerSettings
    ) -> str:
        """Hold the page if its site is cold.

        Returns:
            ``held``: the page was learnt and is held; ``learnt``: it was learnt but its site
            is warm, so clean it now reading its other pages (``learn_site=False``);
            ``clean``: nothing was done, clean it as usual.
        """
        key = self.templates.settings.site_key
        if raw.url and self._warm(site_of(raw.url, key=key)):
            return "clean"  # the common case, without parsing the page twice
        site = observe_site(raw, self.templates, settings=settings)
        if not site:
            return "clean"  # no site (or not a page): nothing to wait for
        if self._warm(site):
            return "learnt"
        self._held[self._next] = Held(token, msg, site, self.clock(), self._next)
        self._next += 1
        return "held"

    def release(self, *, everything: bool = False) -> list[tuple[Held, str]]:
        """The held pages to clean now, in arrival order, each with why it was let go."""
        if not self._held:
            return []
        now = self.clock()
        out: list[tuple[Held, str]] = []
        for number, held in list(self._held.items()):
            if everything:
                reason = SHUTDOWN
            elif self._warm(held.site):
                reason = WARM
            elif now - held.since >= self.seconds:
                reason = TIMEOUT
            else:
                continue
            del self._held[number]
            out.append((held, reason))
        while len(self._held) > self.max_pages:  # the oldest of the rest
            out.append((self._held.pop(next(iter(self._held))), OVERFLOW))
        out.sort(key=lambda item: item[0].number)
        for _, reason in out:
            self.released[reason] += 1
        return out

    def due(self) -> bool:
        """Whether `release` would let a page go now (a cheap look for the timer)."""
        if not self._held:
            return False
        oldest = next(iter(self._held.values()))
        return self.clock() - oldest.since >= self.seconds or len(self._held) > self.max_pages

    def forget(self, keep: Callable[[Held], bool]) -> int:
        """Drop the held pages ``keep`` rejects (partitions lost in a rebalance)."""
        gone = [number for number, held in self._held.items() if not keep(held)]
        for number in gone:
            del self._held[number]
        return len(gone)


class AckGate:
    """Acknowledges events in their partition's order, however they finish.

    `add` the events of a batch as they are taken; `done` those whose outcomes the broker
    acknowledged: it returns the events that may now be acknowledged, the finished run at
    the head of each partition's queue.
    """

    def __init__(self) -> None:
        self._queues: dict[tuple[str, int], deque[list[Any]]] = {}
        self._entry: dict[int, list[Any]] = {}  # id(event) -> [event, finished]

    def __len__(self) -> int:
        return len(self._entry)

    @staticmethod
    def _tp(event: Any) -> tuple[str, int]:
        return (event.message.topic, event.message.partition)

    def add(self, events: Iterable[Any]) -> None:
        for event in events:
            entry = [event, False]
            self._entry[id(event)] = entry
            self._queues.setdefault(self._tp(event), deque()).append(entry)

    def done(self, events: Iterable[Any]) -> list[Any]:
        touched = set()
        for event in events:
            entry = self._entry.get(id(event))
            if entry is not None:
                entry[1] = True
                touched.add(self._tp(event))
        ready = []
        for tp in touched:
            queue = self._queues[tp]
            while queue and queue[0][1]:
                event = queue.popleft()[0]
                del self._entry[id(event)]
                ready.append(event)
            if not queue:
                del self._queues[tp]
        return ready

    def forget(self, keep: Callable[[tuple[str, int]], bool]) -> None:
        """Drop the queues of the partitions ``keep`` rejects (lost in a rebalance)."""
        for tp in [tp for tp in self._queues if not keep(tp)]:
            for entry in self._queues.pop(tp):
                del self._entry[id(entry[0])]
