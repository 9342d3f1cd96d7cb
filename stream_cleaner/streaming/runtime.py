"""What the agent and the views of one worker share: `WorkerRuntime`, and `Send`, how the
agent publishes a record.

`app` makes a runtime per app (`runtime_of`); `agents` and `views` read it. This module imports
neither of them, nor `app`: the worker's modules depend on it one way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import __version__
from .metrics import WorkerMetrics

if TYPE_CHECKING:
    import faust

    from ..lm import LanguageModel
    from .records import OutputRecord
    from .settings import WorkerSettings
    from .sitestate import SiteState
    from .warmup import AckGate, WarmupHold

# how the agent publishes a record to a topic (a role of `WorkerRuntime.topics`): awaited, it
# queues the record and returns a future done when the broker acknowledged it
Send = Callable[[str, "OutputRecord"], Awaitable[Awaitable[Any]]]


@dataclass(slots=True)
class WorkerRuntime:
    """What the agent and the views of one app share: settings, metrics, model, topics.

    Attributes:
        settings: the worker's settings.
        metrics: the worker's metrics.
        executor: the single thread that runs the CPU-bound cleaning off the event loop.
        topics: the four Faust topics by role: ``input``, ``documents``, ``sentences``,
            ``dead_letter``.
        model: the language model, once loaded (`readyz` checks it).
        agent_running: whether the agent's loop is running.
        send: how the agent publishes a record (`Send`); ``None`` means through the
            app's producer (`agents.faust_send`). Tests put an in-memory recorder here.
        settle_gc: whether the agent tunes the garbage collector once started
            (`agents.settle_gc`): set by `run_worker`, which owns the process.
        demo_executor: the web demo's child process (`web.isolation`), when the demo is on.
    """

    settings: WorkerSettings
    metrics: WorkerMetrics
    executor: ThreadPoolExecutor
    topics: dict[str, Any]
    model: LanguageModel | None = None
    agent_running: bool = False
    send: Send | None = None
    settle_gc: bool = False
    demo_executor: Executor | None = None
    site_state: SiteState | None = None
    app: Any = None
    # the warm-up hold (`streaming.warmup`), when ``warmup_seconds`` is set
    warmup: WarmupHold | None = None
    ack_gate: AckGate = field(default_factory=lambda: warmup_module().AckGate())
    publish_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # while the agent runs with the hold: clean a batch (or release held pages) and publish
    release: Callable[..., Awaitable[None]] | None = None

    def assignment(self) -> frozenset[Any]:
        """The input partitions this worker holds now (empty before the first assignment)."""
        try:
            return frozenset(self.app.consumer.assignment())
        except Exception:  # no consumer yet, or one that is being rebuilt
            return frozenset()

    @property
    def worker_version(self) -> str:
        return __version__


# app -> its runtime; a Faust App takes no new attributes cleanly, and tests build several apps
_RUNTIMES: dict[int, WorkerRuntime] = {}


def attach(app: faust.App, runtime: WorkerRuntime) -> None:
    """Make ``runtime`` the one `runtime_of` gives for ``app`` (`app.create_app`)."""
    _RUNTIMES[id(app)] = runtime


def warmup_module() -> Any:
    """`streaming.warmup`, imported on first use (it imports the core's pipeline)."""
    from . import warmup

    return warmup


def runtime_of(app: faust.App) -> WorkerRuntime:
    """The `WorkerRuntime` of an app made by `create_app`."""
    return _RUNTIMES[id(app)]
