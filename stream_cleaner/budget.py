"""A page's time budget, in CPU seconds of the thread that cleans it.

Wall-clock time counts what the page did not cost: a worker paused by SIGSTOP, or starved by a
noisy neighbour on its host, turned an ordinary page into a ``time_budget`` dead letter, and
its replay into a document (issue 37). `time.thread_time` counts this thread's CPU only, so
neither a pause nor the worker's other threads (its event loop, the producer) spend a page's
budget. A deadline is an instant of the clock of the thread that made it and means nothing in
another one: `pipeline` makes it, and checks it, in the thread that cleans the page.

The stages look at the clock often enough that a page stops within a few percent of its
budget: the walks every 1,024 elements (`parse`, ``_native/lexbor_walk``), the scoring between
slices of sentences (`pipeline`), the labellers between their steps and between chunks of rows
(`labeller`, `block_features`), and the multilingual labeller's recurrence every 256 rows
(`multilingual_labeller.gru_states`; ``_native/sequence`` reads the same clock in C).
"""

from __future__ import annotations

import time


class TimeBudgetExceeded(TimeoutError):
    """A page went past its deadline."""


def deadline_after(seconds: float) -> float | None:
    """The deadline ``seconds`` of this thread's CPU time from now; ``None`` for ``0``, no
    budget."""
    return time.thread_time() + seconds if seconds else None


def check_deadline(deadline: float | None, when: str) -> None:
    """Raise `TimeBudgetExceeded` ("time budget exceeded ``when``") past ``deadline``."""
    if deadline is not None and time.thread_time() > deadline:
        raise TimeBudgetExceeded(f"time budget exceeded {when}")
