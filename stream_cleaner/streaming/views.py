"""The worker's web pages: ``/metrics``, ``/healthz`` and ``/readyz``, served by Faust's web server.

- ``/metrics``: the worker's Prometheus registry (`metrics.WorkerMetrics`) in the text format.
- ``/healthz``: liveness, 200 whenever the web server answers, i.e. the process and its event
  loop run. A loop starved by CPU work would stop answering, which is what liveness is for.
- ``/readyz``: readiness, 200 when the language model is loaded, the agent's loop is running,
  the consumer service has started and it can read every partition it holds; it has then
  either an assignment or is waiting for one (a group with more workers than partitions
  leaves some idle, and they are still ready). 503 otherwise, as while a partition whose log
  no longer holds its committed offset is not read again yet (`patches.offsets`). The JSON
  body shows each check, the assigned partitions and the unreadable ones with the reason.
- The web demo and API (``/demo``, ``/api/...``, `web.api.ROUTES`), only when enabled
  (``--web-demo``, ``STREAM_CLEANER_WEB_ENABLED=true``): the same handlers as ``stream-cleaner
  serve``, which clean in a child process of their own at the lowest CPU priority
  (`web.isolation`), never on the stream's cleaning thread: one request at a time, at most
  ``max_pending_requests`` in progress, busy at most ``max_busy_share`` of the time.

The port is guarded as ``serve``'s is (`guard_port`): a header timeout and a connection cap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .metrics import CONTENT_TYPE

if TYPE_CHECKING:
    import faust

    from ..web.config import WebSettings
    from .runtime import WorkerRuntime


def readiness(app: faust.App, runtime: WorkerRuntime) -> dict[str, Any]:
    """The readiness checks, with ``ready`` set when all pass."""
    consumer = getattr(app, "_consumer", None)  # never create a consumer just to look at it
    consumer_started = bool(consumer is not None and consumer.started and not consumer.should_stop)
    assigned = len(consumer.assignment()) if consumer_started else 0
    unreadable = getattr(consumer, "unreadable_partitions", {}) if consumer_started else {}
    checks = {
        "model_loaded": runtime.model is not None,
        "agent_running": runtime.agent_running,
        "consumer_started": consumer_started,
        "partitions_readable": not unreadable,
    }
    return {
        "ready": all(checks.values()),
        **checks,
        "assigned_partitions": assigned,
        "unreadable_partitions": {
            f"{tp.topic}:{tp.partition}": reason for tp, reason in sorted(unreadable.items())
        },
        "rebalancing": bool(getattr(app, "rebalancing", False)),
    }


def register_demo(app: faust.App, runtime: WorkerRuntime) -> None:
    """Add the routes of `web.api.ROUTES` as Faust views calling the shared handlers, which
    clean in a child process (``runtime.demo_executor``, started by the first request)."""
    import faust

    from ..web.api import ROUTES, DemoApi
    from ..web.isolation import ChildProcessExecutor

    runtime.demo_executor = ChildProcessExecutor(max_busy_share=runtime.settings.web.max_busy_share)
    api = DemoApi(runtime.settings.web, runtime.settings.cleaner, executor=runtime.demo_executor)
    for route in ROUTES:
        handler = api.handler(route)

        async def call(
            view: faust.web.View, request: faust.web.Request, handler: Any = handler
        ) -> Any:
            return await handler(request)

        name = "demo_" + route.name
        app.page(route.path, name=name)(type(name, (faust.web.View,), {route.method.lower(): call}))


def guard_port(app: faust.App, settings: WebSettings) -> None:
    """Run ``app``'s web server on a `web.connections.GuardedRunner`: the header timeout and
    connection cap of ``settings``, as ``stream-cleaner serve`` has.

    Faust's aiohttp driver (faust-streaming 0.15) makes its ``AppRunner`` in its constructor
    and keeps it as ``_runner``, with aiohttp's defaults: a request head awaited for 3,630 s,
    any number of connections. Its ``start_server`` sets that runner up and starts a site on
    it, so the runner is replaced before the server starts.

    Raises:
        RuntimeError: the driver no longer keeps an ``AppRunner`` there, or has started it.
    """
    from aiohttp import web

    from ..web.connections import GuardedRunner

    driver = app.web
    runner = getattr(driver, "_runner", None)
    if type(runner) is not web.AppRunner or runner.server is not None:
        raise RuntimeError(
            f"Faust's web driver {type(driver).__name__} has no AppRunner to replace "
            f"(found {runner!r}): check streaming.views.guard_port against this faust-streaming"
        )
    driver._runner = GuardedRunner(
        driver.web_app,
        header_timeout_seconds=settings.header_timeout_seconds,
        max_connections=settings.max_connections,
        access_log=None,
    )


def register_views(app: faust.App, runtime: WorkerRuntime) -> None:
    """Add the three pages, and the demo and API when enabled, to ``app``'s web server, and
    guard its port (`guard_port`)."""
    if runtime.settings.web.enabled:
        register_demo(app, runtime)
    guard_port(app, runtime.settings.web)

    @app.page("/metrics")
    async def metrics(view: faust.web.View, request: faust.web.Request) -> faust.web.Response:
        from aiohttp import web  # Faust's web driver; its helpers refuse a charset here

        return web.Response(
            body=runtime.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE}
        )

    @app.page("/healthz")
    async def healthz(view: faust.web.View, request: faust.web.Request) -> faust.web.Response:
        return view.json({"alive": True})

    @app.page("/readyz")
    async def readyz(view: faust.web.View, request: faust.web.Request) -> faust.web.Response:
        state = readiness(app, runtime)
        return view.json(state, status=200 if state["ready"] else 503)
