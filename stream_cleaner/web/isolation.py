"""The worker's web demo works in a child process of its own, never beside the stream.

A worker that served the demo on its cleaning thread let two clients posting 2 MB pages cut a
drain from 178 to 3 documents/s. A second thread would not do either: cleaning holds the GIL,
so the stream's cleaning thread would wait for the demo's half the time. `ChildProcessExecutor`
runs each call in one child process instead (a ``concurrent.futures.Executor``, so `DemoApi`
uses it as it uses ``stream-cleaner serve``'s thread):

- The child is a new interpreter (``python -m stream_cleaner.web.isolation``: the worker has
  threads, which ``fork`` would copy mid-flight, and multiprocessing's ``spawn`` would import the
  worker's main module again), started on the first call and again on the next call after it
  died. It inherits the worker's ``sys.path``.
- It runs at the lowest CPU priority, Linux's ``SCHED_IDLE`` (nice 19 too, which is all that
  is left where a seccomp profile refuses the policy): it gets the CPU the stream leaves, and
  a busy worker answers the demo slowly (503 past its time limit) rather than cleaning less.
- One call at a time, and busy at most ``max_busy_share`` of the time: after each call it
  rests in proportion to the CPU the call took. A lowest-priority process still slowed the
  stream: with two clients posting 2 MB pages in a loop, the broker test
  (``tests/streaming/test_worker_web_demo.py``, on this project's 2-vCPU machine shared with
  other work) measured the drain at 0.65 and 0.76 of its rate without them (median cycle)
  with no rest, and at 0.81-1.04 in six runs with rests at the default share, 0.25; before
  this module, on the worker's cleaning thread, 0.07. The demo's process took 3-7 CPU
  seconds over the test's windows either way (it is starved as much as it rests), so the
  rests change when it runs more than how much; why that matters is not established (the
  idle vCPU it keeps busy may share a physical core with the worker's).
- Each call goes down a pipe of the child's own, which ends when the child dies, so a call
  whose child died fails instead of hanging (`stream_cleaner.parallel` explains why not
  ``multiprocessing.Pool``). A call cancelled before its turn (its request timed out) is
  never sent.
- It ignores SIGINT (a terminal's Ctrl-C reaches the whole process group: the worker stops it)
  and exits when its pipe closes: when the worker stops it, exits or is killed.

Calls and their arguments and results cross the pipe pickled: the functions are module-level,
and a `LanguageModel` crosses as its path.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from multiprocessing import connection
from typing import Any

# The child's niceness where SCHED_IDLE is refused: the lowest, so the stream comes first
NICENESS = 19


class ChildProcessExecutor(Executor):
    """Runs calls one at a time in a child process (see the module's docstring).

    Args:
        name: the child's process name (and its feeding thread's).
        max_busy_share: the largest share of the time the child may work: after a call that
            took it ``t`` seconds of CPU, it rests ``t * (1 / max_busy_share - 1)`` seconds
            before the next. 1: no rest.
    """

    def __init__(self, *, name: str = "stream-cleaner-demo", max_busy_share: float = 1.0) -> None:
        if not 0 < max_busy_share <= 1:
            raise ValueError(f"max_busy_share must be in (0, 1], not {max_busy_share}")
        self.name = name
        self.max_busy_share = max_busy_share
        self._stopping = threading.Event()
        self._cpu_seconds = 0.0  # the last call's, in the child
        self._calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._process: Any = None
        self._conn: connection.Connection | None = None

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new calls after shutdown")
            future: Future[Any] = Future()
            self._calls.put((future, fn, args, kwargs))
            if self._thread is None:
                self._thread = threading.Thread(target=self._feed, name=self.name, daemon=True)
                self._thread.start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking calls, stop the child (a call in progress fails) and the feeding
        thread; with ``cancel_futures``, calls not sent yet are cancelled."""
        with self._lock:
            self._closed = True
            thread = self._thread
        self._stopping.set()
        if cancel_futures:
            while True:
                try:
                    item = self._calls.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        self._calls.put(None)
        process = self._process
        if process is not None:
            process.terminate()
        if wait and thread is not None:
            thread.join()

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs (started by the first call)."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def _feed(self) -> None:
        try:
            while (item := self._calls.get()) is not None:
                future, fn, args, kwargs = item
                if not future.set_running_or_notify_cancel():
                    continue
                self._cpu_seconds = 0.0
                try:
                    result = self._call(fn, args, kwargs)
                except BaseException as exc:  # the call's own error, or the child's death
                    future.set_exception(exc)
                else:
                    future.set_result(result)
                self._stopping.wait(self._cpu_seconds * (1 / self.max_busy_share - 1))
        finally:
            self._stop_child()

    def _call(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self._process is None or self._process.poll() is not None:
            self._start_child()
        process, conn = self._process, self._conn
        assert conn is not None
        try:
            conn.send((fn, args, kwargs))
            ok, value, self._cpu_seconds = conn.recv()  # the end of the pipe if the child died
        except (EOFError, BrokenPipeError, ConnectionResetError):
            pass
        else:
            if ok:
                return value
            raise value
        try:
            code = process.wait(1)
        except subprocess.TimeoutExpired:
            code = None
        self._stop_child()
        raise ChildProcessError(f"the web demo's process died (exit code {code})")

    def _start_child(self) -> None:
        self._stop_child()
        ours, theirs = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path or "." for path in sys.path)}
        command = [sys.executable, "-m", __name__, str(theirs.fileno())]
        with self._lock, theirs:
            if self._closed:
                ours.close()
                raise RuntimeError("the executor was shut down")
            self._process = subprocess.Popen(command, pass_fds=(theirs.fileno(),), env=env)
            self._conn = connection.Connection(ours.detach())

    def _stop_child(self) -> None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()  # the child reads the end of its pipe and exits
        if process is not None:
            try:
                process.wait(1)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def lower_priority() -> None:
    """Make this process (and the threads it starts later) yield the CPU to every other:
    ``SCHED_IDLE`` where the system allows it, nice 19 in any case."""
    os.setpriority(os.PRIO_PROCESS, 0, max(NICENESS, os.getpriority(os.PRIO_PROCESS, 0)))
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or a seccomp profile
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def serve_calls(conn: connection.Connection) -> None:
    """The child's loop: run each call received on ``conn`` and send back ``(True, result,
    cpu_seconds)`` or ``(False, exception, cpu_seconds)``, until the pipe closes."""
    lower_priority()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            fn, args, kwargs = conn.recv()
        except (EOFError, OSError):  # the worker is gone, or stopped this process
            return
        started = time.process_time()
        try:
            ok, value = True, fn(*args, **kwargs)
        except Exception as exc:
            ok, value = False, exc
        cpu_seconds = time.process_time() - started
        try:
            conn.send((ok, value, cpu_seconds))
        except Exception as exc:  # a result or an exception that does not pickle
            conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}"), cpu_seconds))


if __name__ == "__main__":
    serve_calls(connection.Connection(int(sys.argv[1])))
