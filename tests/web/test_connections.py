"""The web port's guards (`web.connections`) over real sockets, on ``stream-cleaner serve`` (a
child process) and on a worker's port (Faust's web server as the worker starts it): a client
that sends its request head slowly is let go, and silent connections are capped without
locking out a probe."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path

import pytest

from stream_cleaner.web.config import WEB_ENV_PREFIX, WebSettings

from .conftest import request, serve_process, worker_port

Server = Callable[..., AbstractContextManager[str]]


def _serve(**options: float) -> AbstractContextManager[str]:
    env = {WEB_ENV_PREFIX + name.upper(): str(value) for name, value in options.items()}
    return serve_process(env=env)


def _worker(tmp_path: Path) -> Server:
    from stream_cleaner.streaming.app import WorkerSettings

    def start(**options: float) -> AbstractContextManager[str]:
        web = WebSettings().with_options(**options)
        return worker_port(WorkerSettings(datadir=str(tmp_path), web=web))

    return start


@pytest.fixture(params=["serve", "worker"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Server:
    return _serve if request.param == "serve" else _worker(tmp_path)


def _connect(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=5)


def _drip_until_closed(sock: socket.socket, head: bytes, seconds: float) -> float:
    """Send ``head`` a byte every 0.2 s, never finishing it; the seconds until the server
    closed the connection (``seconds`` if it held it that long)."""
    started = time.monotonic()
    sock.settimeout(0.2)
    for byte in head * 100:
        if time.monotonic() - started > seconds:
            break
        try:
            sock.send(bytes([byte]))
            if sock.recv(1024) == b"":
                break
        except TimeoutError:
            continue
        except OSError:  # reset: closed
            break
    return time.monotonic() - started


def test_a_client_sending_its_request_head_slowly_is_let_go(server: Server) -> None:
    """aiohttp waited for a request head as long as its keep-alive timeout: 75 s under
    ``serve``, 3,630 s on a worker's port."""
    with server(header_timeout_seconds=1) as base:
        with _connect(base) as sock:  # the first request
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            held = _drip_until_closed(sock, b"X-Slow: yes\r\n", seconds=10)
        assert held < 3, f"held {held:.1f} s"

        with _connect(base) as sock:  # the next one on a kept-alive connection
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            held = _drip_until_closed(sock, b"GET /healthz HTTP/1.1\r\n", seconds=10)
        assert held < 3, f"held {held:.1f} s"

        assert request(base + "/healthz")[0] == 200  # a client in a hurry is served


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed a connection that sent nothing (it sends nothing first)."""
    sock.settimeout(0.01)
    try:
        return sock.recv(65536) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def test_silent_connections_are_capped_without_locking_out_a_probe(server: Server) -> None:
    """3,000 silent connections were all held (40 s); now the port holds at most
    ``max_connections``, a new one closes the one that waited longest, and a connection that
    arrives when every held one is in a request is answered 503."""
    cap = 20
    with server(max_connections=cap, header_timeout_seconds=30) as base, ExitStack() as stack:
        silent = [stack.enter_context(_connect(base)) for _ in range(3 * cap)]
        time.sleep(0.5)
        closed = [sock for sock in silent if _closed(sock)]
        assert len(silent) - len(closed) <= cap, f"{len(silent) - len(closed)} held"
        assert silent[-1] not in closed  # the oldest went first
        # a probe still gets through, more than once
        for _ in range(3):
            assert request(base + "/healthz")[0] == 200

        # connections that each sent a request, whose bodies never come: aiohttp lingers
        # on them to read the bodies, so they are held, and a new connection is refused
        busy = [stack.enter_context(_connect(base)) for _ in range(cap)]
        for sock in busy:
            sock.sendall(b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        for sock in busy:
            sock.settimeout(5)
            assert sock.recv(65536).startswith(b"HTTP/1.1 405")
        with _connect(base) as late:
            late.settimeout(5)
            answer = late.recv(65536)
        assert answer.startswith(b"HTTP/1.1 503"), answer
