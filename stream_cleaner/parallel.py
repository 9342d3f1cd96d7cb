"""Cleaning in several processes, for ``clean -j N``, where a process that dies loses no page.

``multiprocessing.Pool`` hangs for ever when one of its processes is killed (by the OOM killer,
or by hand), and ``ProcessPoolExecutor`` can hang in its shutdown after one: their processes
share one task queue, and a process killed while it holds the queue's lock leaves the others
and the parent waiting on it. Here each process has a pipe of its own and the parent waits on
the pipes and on the processes themselves, so it always learns which process died and which
pages it held: those pages are cleaned again, one at a time in a new process, and a page
whose process dies a second time is an ``internal_error`` record, not a hung run.
"""

from __future__ import annotations

import collections
import dataclasses
import multiprocessing as mp
import signal
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .document import CleanedDocument
    from .io.readers import Source
    from .settings import CleanerSettings
    from .sites import SiteTemplates

BATCH = 4  # pages sent to a process at once: fewer round trips through its pipe
AHEAD = 16  # batches read ahead of the oldest page not yet given back, per process


def clean_in_processes(
    sources: Iterator[Source],
    settings: CleanerSettings,
    jobs: int,
    sites: SiteTemplates | None = None,
) -> Iterator[tuple[Source, CleanedDocument]]:
    """Each source and its cleaned document, in the order of ``sources``, cleaned in ``jobs``
    processes that each hold the model once (forked, they share its memory-mapped pages).

    Raises:
        RuntimeError: a process could not clean at all (a model file that cannot be read...).
    """
    pool = _Pool(settings, sites, jobs)
    held: dict[int, Source] = {}  # read and not yet given back
    numbered = enumerate(sources)
    next_out = 0
    read_all = False
    try:
        while True:
            while not read_all and len(held) < AHEAD * BATCH * jobs:
                item = next(numbered, None)
                if item is None:
                    read_all = True
                else:
                    held[item[0]] = item[1]
                    pool.todo.append(_Page(*item))
            while next_out in pool.done:
                yield held.pop(next_out), pool.done.pop(next_out)
                next_out += 1
            if read_all and not held:
                return
            pool.step()
    finally:
        pool.stop()


class _Pool:
    """The processes, the pages waiting for one and the pages cleaned and not yet given back."""

    def __init__(self, settings: CleanerSettings, sites: SiteTemplates | None, jobs: int):
        # fork shares the already memory-mapped model pages with the children
        self.ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self.settings, self.sites = settings, sites
        self.processes = [_Process(self.ctx, settings, sites) for _ in range(jobs)]
        self.todo: collections.deque[_Page] = collections.deque()
        self.done: dict[int, CleanedDocument] = {}

    def step(self) -> None:
        """Give the idle processes pages, and wait for one to answer or die."""
        for i, process in enumerate(self.processes):
            if not process.pages and self.todo and not process.send(_next_batch(self.todo)):
                self.replace(i, delivered=False)
        busy = [p for p in self.processes if p.pages]
        if not busy:  # every process died as it was given its pages: again, in new ones
            return
        ready = set(wait([p.conn for p in busy] + [p.process.sentinel for p in busy]))
        for i, process in enumerate(self.processes):
            if process.pages and (process.conn in ready or process.process.sentinel in ready):
                results = process.receive()
                if results is None:
                    self.replace(i, delivered=True)
                else:
                    self.done.update(results)

    def replace(self, i: int, *, delivered: bool) -> None:
        """A new process for one that died; the pages it held are cleaned again, first.

        Pages it died before it could be sent (``delivered`` False) are not held against.
        """
        dead = self.processes[i]
        dead.stop()
        for page in reversed(dead.pages):
            if not delivered:
                self.todo.appendleft(page)
            elif page.retry:
                self.done[page.index] = _died(page.source, self.settings, dead.process.exitcode)
            else:
                self.todo.appendleft(_Page(page.index, page.source, retry=True))
        self.processes[i] = _Process(self.ctx, self.settings, self.sites)

    def stop(self) -> None:
        for process in self.processes:
            process.stop()


@dataclasses.dataclass
class _Page:
    index: int
    source: Source
    retry: bool = False  # its process died with it once: it goes alone


def _next_batch(todo: collections.deque[_Page]) -> list[_Page]:
    """A page cleaned again goes alone, so that a second death is its own."""
    batch = [todo.popleft()]
    while not batch[0].retry and len(batch) < BATCH and todo and not todo[0].retry:
        batch.append(todo.popleft())
    return batch


def _died(source: Source, settings: CleanerSettings, exitcode: int | None) -> CleanedDocument:
    """The error record of a page whose cleaning process died twice."""
    from .decide import ErrorReason
    from .pipeline import clean_document

    how = f"killed by signal {-exitcode}" if exitcode and exitcode < 0 else f"exit {exitcode}"
    detail = f"the process cleaning the page died twice (last {how}: out of memory, or killed)"
    failed = dataclasses.replace(source.doc, body=b"", error=f"{ErrorReason.INTERNAL}: {detail}")
    return clean_document(failed, settings=settings)


class _Process:
    """One cleaning process, its end of the pipe and the pages it holds."""

    def __init__(self, ctx: Any, settings: CleanerSettings, sites: SiteTemplates | None):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=_serve, args=(child, self.conn, settings, sites), daemon=True
        )
        self.process.start()
        child.close()
        self.pages: list[_Page] = []

    def send(self, pages: list[_Page]) -> bool:
        """Give the process ``pages``; False if it is dead."""
        self.pages = pages
        try:
            self.conn.send([(page.index, page.source.doc) for page in pages])
        except OSError:  # a broken pipe: it died
            return False
        return True

    def receive(self) -> list[tuple[int, CleanedDocument]] | None:
        """The cleaned pages, or None if the process died."""
        try:
            kind, value = self.conn.recv()
        except (EOFError, OSError):
            return None
        if kind == "failed":
            raise RuntimeError(f"a cleaning process failed: {value}")
        self.pages = []
        return value

    def stop(self) -> None:
        self.conn.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join()


def _serve(
    conn: Connection, parent_end: Connection, settings: CleanerSettings, sites: SiteTemplates | None
) -> None:
    """A cleaning process: pages in, cleaned documents out, until the parent closes the pipe."""
    from .pipeline import clean_document

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    parent_end.close()  # forked, it holds the parent's end too: the parent's EOF needs this
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        try:
            results = [
                (index, clean_document(doc, settings=settings, sites=sites, learn_site=False))
                for index, doc in batch
            ]
        except Exception as exc:  # a set-up error, not a page's: it ends the run
            conn.send(("failed", f"{type(exc).__name__}: {exc}"))
            return
        conn.send(("cleaned", results))
