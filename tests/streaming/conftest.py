"""The real broker for the streaming tests: a Tansu process on a free 127.0.0.1 port.

One broker serves the whole session (memory storage, gone when it stops); tests keep apart by
using their own topic names. Install the binary with ``bash scripts/install-tansu.sh``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import REPO

TANSU = REPO / ".cache" / "tansu" / "bin" / "tansu"
STARTUP_SECONDS = 20.0
STOP_SECONDS = 10.0


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A running Tansu broker; yields its bootstrap address ``127.0.0.1:PORT``.

    Skipped when the binary is not installed, but a failure in CI (``CI`` set), where
    scripts/setup.sh installs it.
    """
    if not os.access(TANSU, os.X_OK):
        message = f"{TANSU} not installed: run bash scripts/install-tansu.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    log_path = tmp_path_factory.mktemp("tansu") / "tansu.log"
    # a port found free can be taken before tansu binds it: try again with another one
    for _attempt in range(3):
        address = f"127.0.0.1:{_free_port()}"
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                [
                    str(TANSU),
                    "broker",
                    "--listener-url",
                    f"tcp://{address}",
                    "--advertised-listener-url",
                    f"tcp://{address}",
                    "--storage-engine",
                    "memory://tansu/",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            if _wait_until_ready(process, address):
                yield address
                return
        finally:
            _stop(process)
    pytest.fail(f"tansu did not start; its log:\n{_tail(log_path)}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_ready(process: subprocess.Popen[bytes], address: str) -> bool:
    """True once the broker answers a metadata request; False if it exits first.

    Raises:
        pytest.fail.Exception: it neither answered nor exited within STARTUP_SECONDS.
    """
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        if asyncio.run(_answers_metadata(address)):
            return True
        time.sleep(0.1)
    pytest.fail(f"tansu at {address} did not answer a metadata request in {STARTUP_SECONDS} s")


async def _answers_metadata(address: str) -> bool:
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.errors import KafkaError

    admin = AIOKafkaAdminClient(bootstrap_servers=address, request_timeout_ms=2000)
    try:
        await admin.start()  # bootstrapping is a metadata request
        await admin.list_topics()
    except KafkaError:
        return False
    else:
        return True
    finally:
        await admin.close()


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
