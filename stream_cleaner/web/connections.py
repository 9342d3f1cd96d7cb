"""Guards of a web port against clients that hold connections: a deadline for each request's
head and a cap on the connections held at once. ``stream-cleaner serve`` and the worker's port
(Faust's aiohttp server, `streaming.views.guard_port`) both run on `GuardedRunner`.

aiohttp's server waits for a request head as long as its keep-alive timeout: 75 s under
``web.run_app`` (a client sending its headers a byte at a time was held that long), 3,630 s
under a plain ``AppRunner``, which Faust makes; before aiohttp 3.14 it did not time a
connection's first request at all. It holds any number of connections (3,000 silent ones were
held 40 s). Here:

- A connection must send a whole request head within ``header_timeout_seconds`` of being
  opened, and each next one within as long of the previous answer (aiohttp's keep-alive
  timeout, set to the same value); else it is closed.
- At most ``max_connections`` are held. A connection beyond them closes the one that has waited
  longest for its first request head, so silent connections cannot lock out a probe or a
  scrape; when every held connection has sent a request, the new one is answered 503 and
  closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

_REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\n"
    b"Content-Length: 25\r\n\r\ntoo many open connections"
)


class GuardedRunner(web.AppRunner):
    """An ``AppRunner`` whose server has the guards of this module.

    Args:
        app: the application.
        header_timeout_seconds: how long a connection may take to send a request head, from
            its opening or from the previous answer.
        max_connections: the most connections held at once.
        kwargs: ``AppRunner``'s own options (``access_log``, ``handle_signals``...).
    """

    def __init__(
        self,
        app: web.Application,
        *,
        header_timeout_seconds: float,
        max_connections: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(app, keepalive_timeout=header_timeout_seconds, **kwargs)
        self.header_timeout_seconds = header_timeout_seconds
        self.max_connections = max_connections
        self.guard: ConnectionGuard | None = None

    async def setup(self) -> None:
        await super().setup()
        assert self.server is not None
        self.guard = ConnectionGuard(
            self.server,
            header_timeout_seconds=self.header_timeout_seconds,
            max_connections=self.max_connections,
        )


class ConnectionGuard:
    """The deadline and the cap on one aiohttp ``Server``, through its public hooks.

    It wraps the server's ``connection_made`` and ``connection_lost`` (which each connection's
    ``RequestHandler`` calls) and its ``request_factory`` (called once a request head has been
    parsed); handlers are closed with their public ``force_close``.
    """

    def __init__(
        self, server: web.Server, *, header_timeout_seconds: float, max_connections: int
    ) -> None:
        self.server = server
        self.header_timeout_seconds = header_timeout_seconds
        self.max_connections = max_connections
        self.loop = asyncio.get_running_loop()
        # connections that have not sent a request head yet -> when they opened, oldest first
        self.waiting: dict[RequestHandler, float] = {}
        self._made = server.connection_made
        self._lost = server.connection_lost
        self._request_factory = server.request_factory
        server.connection_made = self._connection_made  # type: ignore[method-assign]
        server.connection_lost = self._connection_lost  # type: ignore[method-assign]
        server.request_factory = self._request_made

    def _connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        self._made(handler, transport)
        if len(self.server.connections) > self.max_connections:
            if not self.waiting:  # every connection is in a request: this one must go
                transport.write(_REFUSED)
                handler.force_close()
                return
            oldest = next(iter(self.waiting))
            del self.waiting[oldest]
            oldest.force_close()
        opened = self.loop.time()
        self.waiting[handler] = opened
        self.loop.call_at(opened + self.header_timeout_seconds, self._expire, handler, opened)

    def _expire(self, handler: RequestHandler, opened: float) -> None:
        if self.waiting.get(handler) == opened:
            del self.waiting[handler]
            handler.force_close()

    def _connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        self.waiting.pop(handler, None)
        self._lost(handler, exc)

    def _request_made(self, message: Any, payload: Any, protocol: Any, *args: Any) -> Any:
        self.waiting.pop(protocol, None)  # a head came: aiohttp's keep-alive times the next
        return self._request_factory(message, payload, protocol, *args)
