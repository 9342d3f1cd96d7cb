"""`ChildProcessExecutor`: the worker's web demo works in a child process of its own, at the
lowest CPU priority, busy at most its share of the time, and a child that dies fails only the
call it held."""

from __future__ import annotations

import os
import pickle
import signal
import time

import pytest

from stream_cleaner.web.api import ApiError
from stream_cleaner.web.isolation import ChildProcessExecutor


def burn() -> tuple[float, float]:
    """A few hundred milliseconds of CPU; when it ended (monotonic, the same clock in every
    process) and the CPU it took."""
    started = time.process_time()
    sum(range(20_000_000))
    return time.monotonic(), time.process_time() - started


@pytest.fixture
def executor():
    executor = ChildProcessExecutor()
    yield executor
    executor.shutdown()


def test_calls_run_in_a_child_at_the_lowest_priority(executor):
    child = executor.submit(os.getpid).result(60)
    assert child != os.getpid() and executor.pid == child
    assert executor.submit(os.getpriority, os.PRIO_PROCESS, 0).result(10) == 19
    assert executor.submit(os.sched_getscheduler, 0).result(10) == os.SCHED_IDLE
    assert executor.submit(os.getpid).result(10) == child  # one child for every call
    with pytest.raises(ValueError, match="invalid literal"):
        executor.submit(int, "x").result(10)
    with pytest.raises((pickle.PicklingError, AttributeError)):  # a local function
        executor.submit(lambda: 1).result(10)
    error = pickle.loads(pickle.dumps(ApiError(413, "too_large", "big", limit=5)))
    assert (error.status, error.code, error.message, error.extra) == (413, "too_large", "big",
                                                                       {"limit": 5})  # fmt: skip


def test_a_child_that_dies_fails_its_call_and_the_next_call_starts_another(executor):
    first = executor.submit(os.getpid).result(60)
    call = executor.submit(time.sleep, 30)
    time.sleep(0.5)
    os.kill(first, signal.SIGKILL)
    with pytest.raises(ChildProcessError, match="died"):
        call.result(10)
    assert executor.submit(os.getpid).result(60) not in (first, None)


def test_the_child_rests_in_proportion_to_the_cpu_a_call_took():
    executor = ChildProcessExecutor(max_busy_share=0.5)
    try:
        executor.submit(os.getpid).result(60)  # started
        first = executor.submit(burn)
        second = executor.submit(time.monotonic)
        ended, cpu = first.result(60)
        assert cpu > 0.05
        assert second.result(60) - ended >= 0.9 * cpu  # busy half the time: rests as long
    finally:
        executor.shutdown()
    with pytest.raises(ValueError, match="max_busy_share"):
        ChildProcessExecutor(max_busy_share=0)


def test_shutdown_stops_the_child_and_cancels_what_waits(executor):
    child = executor.submit(os.getpid).result(60)
    running = executor.submit(time.sleep, 30)
    waiting = executor.submit(os.getpid)
    time.sleep(0.3)
    started = time.monotonic()
    executor.shutdown(cancel_futures=True)
    assert time.monotonic() - started < 5
    assert waiting.cancelled()
    with pytest.raises(ChildProcessError):
        running.result(5)
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
    with pytest.raises(RuntimeError, match="shutdown"):
        executor.submit(os.getpid)


def test_a_call_cancelled_before_its_turn_is_never_sent(executor, tmp_path):
    executor.submit(os.getpid).result(60)
    running = executor.submit(time.sleep, 1)
    cancelled = executor.submit(os.mkdir, tmp_path / "sent")
    assert cancelled.cancel()
    running.result(10)
    assert executor.submit(os.getpid).result(10)
    assert not (tmp_path / "sent").exists()
