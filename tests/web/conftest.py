"""Servers for the web tests: aiohttp apps on 127.0.0.1, a free port, in a thread of this
process (`running`), or ``stream-cleaner serve`` in a child process (`serve_process`)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..conftest import REPO

ARTICLE = (
    "The city council approved the new budget for public schools on Tuesday evening. "
    "Teachers said that the money would pay for smaller classes and new books. "
    "The mayor thanked the members of the council for their work on the plan."
)
# navigation, a cookie line and a footer around an article: small, and boilerplate that the
# bundled model scores above the default limit (3,000): nav 3,668-17,316, article 79-215
BOILERPLATE = ("Home", "Sport", "Weather", "Menu", "Accept all cookies")
PAGE = f"""<!doctype html><html><head><title>News</title></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/s">Sport</a></li>
<li><a href="/w">Weather</a></li><li><a href="/m">Menu</a></li></ul></nav>
<article><h1>Council approves school budget</h1><p>{ARTICLE}</p></article>
<footer><p>Accept all cookies</p><p>© 2024 Example Media | Privacy | Terms | RSS</p></footer>
</body></html>"""


@contextmanager
def running(app: Any) -> Iterator[str]:
    """Serve an aiohttp application on 127.0.0.1 in a background thread; yields its URL."""
    from aiohttp import web

    loop = asyncio.new_event_loop()
    started = threading.Event()
    state: dict[str, Any] = {}

    async def start() -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        state["runner"] = runner
        state["port"] = runner.addresses[0][1]

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield f"http://127.0.0.1:{state['port']}"
    finally:
        asyncio.run_coroutine_threadsafe(state["runner"].cleanup(), loop).result(10)
        asyncio.run_coroutine_threadsafe(_cancel_tasks(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def request(
    url: str,
    *,
    method: str = "GET",
    body: bytes | None = None,
    data: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """HTTP request; returns the status and the JSON answer (or the text when not JSON)."""
    if data is not None:
        body = json.dumps(data).encode()
    req = urllib.request.Request(url, data=body, method=method)
    req.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode("utf-8", "replace")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_process(*args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``stream-cleaner serve ARGS`` on 127.0.0.1 and a free port, with ``env`` added to the
    environment; stopped at the end."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    process = subprocess.Popen(
        [sys.executable, "-m", "stream_cleaner", "serve", "--port", str(port), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"serve exited: {process.stdout.read() if process.stdout else ''}"
                )
            try:
                if request(base + "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("serve did not start within 30 s")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def write_page(folder: Path, name: str = "news.html") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(PAGE, encoding="utf-8")
    return path


@contextmanager
def worker_port(settings: Any) -> Iterator[str]:
    """The web server of a worker's Faust app (`streaming.app.create_app`), started as the
    worker starts it (``app.web.start_server``) on 127.0.0.1 and a free port, no broker
    needed; yields its URL."""
    from stream_cleaner.streaming.app import create_app, runtime_of

    port = free_port()
    app = create_app(settings.with_options(web_host="127.0.0.1", web_port=port))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(app.web.start_server(), loop).result(10)
        yield f"http://127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(app.web.stop_server(), loop).result(10)
        asyncio.run_coroutine_threadsafe(_cancel_tasks(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        runtime = runtime_of(app)
        runtime.executor.shutdown(wait=False)
        if runtime.demo_executor is not None:
            runtime.demo_executor.shutdown()


async def _cancel_tasks() -> None:
    """Cancel the loop's other tasks (connections the server let linger) and wait for them."""
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
