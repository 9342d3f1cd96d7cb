"""``stream-cleaner serve``: the demo and API on a plain aiohttp server, no broker needed."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from ..settings import CleanerSettings
from .api import DemoApi, error_response
from .config import WebSettings

if TYPE_CHECKING:
    from aiohttp import web


def create_web_app(
    web_settings: WebSettings | None = None, cleaner: CleanerSettings | None = None
) -> web.Application:
    """An aiohttp application with the routes of `api.ROUTES`, ``/`` (to ``/demo``) and
    ``/healthz``."""
    from aiohttp import web

    api = DemoApi(web_settings, cleaner)

    @web.middleware
    async def json_errors(request: web.Request, handler: Any) -> web.StreamResponse:
        """aiohttp's own 404 and 405 answers, as JSON errors under /api/."""
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if not request.path.startswith("/api/") or exc.status < 400:
                raise
            code = exc.reason.lower().replace(" ", "_")
            return error_response(
                exc.status, code, f"{request.method} {request.path}: {exc.reason}"
            )

    # aiohttp's own cap applies to request.read(); the API reads bodies itself with its limit
    app = web.Application(client_max_size=api.web.max_body_bytes, middlewares=[json_errors])
    api.add_routes(app)

    async def index(request: web.Request) -> web.Response:
        raise web.HTTPFound("/demo")

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"alive": True})

    app.router.add_get("/", index)
    app.router.add_get("/healthz", healthz)

    async def close_api(app: web.Application) -> None:
        api.close()

    app.on_cleanup.append(close_api)
    return app


def run_server(
    app: web.Application,
    *,
    host: str,
    port: int,
    settings: WebSettings | None = None,
    print_url: bool = True,
) -> None:  # pragma: no cover - exercised through the CLI by the browser and guard tests
    """Serve ``app`` until SIGINT or SIGTERM, with the port's guards (`connections`) set by
    ``settings``' header timeout and connection cap."""
    from aiohttp import web

    from .connections import GuardedRunner

    settings = settings or WebSettings()
    url = f"http://{host if ':' not in host else f'[{host}]'}:{port}/demo"

    async def serve() -> None:
        runner = GuardedRunner(
            app,
            header_timeout_seconds=settings.header_timeout_seconds,
            max_connections=settings.max_connections,
            access_log=None,
            handle_signals=True,  # SIGINT and SIGTERM raise GracefulExit, as in web.run_app
        )
        await runner.setup()
        try:
            await web.TCPSite(runner, host, port).start()
            if print_url:
                print(f"serving the demo at {url}", flush=True)
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    with contextlib.suppress(web.GracefulExit, KeyboardInterrupt):
        asyncio.run(serve())
