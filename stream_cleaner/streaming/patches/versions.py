"""The aiokafka and faust-streaming releases the worker is tested with, and the gate that keeps
it from starting with others.

The worker patches private internals of both, every patch in this package (`patches`: its
docstring lists them). Any release may change what they replace or read, and a patch that no
longer holds can lose pages silently instead of failing. So the patches run only with releases
in `SUPPORTED`, the one place that knows the range: ``pyproject.toml``'s bounds say the same (a
test compares them), CI runs the broker tests at both ends (the highest in ``.venv``, the lowest
in the venv of ``scripts/install-lowest-clients.sh``: ``tests/streaming/test_client_versions.py``),
`require_tested` refuses the rest at start unless told to accept the risk, and no patch installs
before it has been called (`require_checked`).

Below the floors the worker fails at start: aiokafka 0.11 and 0.12 build produce requests in a
way `produce_requests` does not know (``TypeError: list expected at most 1 argument, got 3``),
and faust-streaming 0.11 passes aiokafka 0.13 an ``api_version`` it no longer takes. The
ceilings are the newest releases on PyPI when the range was last tested; a newer one is
refused until the broker tests have run with it and `SUPPORTED` and ``pyproject.toml`` say so.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from importlib import metadata
from typing import Final

log = logging.getLogger(__name__)

# distribution -> (lowest, highest) release the worker is tested with, both included
SUPPORTED: Final[Mapping[str, tuple[str, str]]] = {
    "aiokafka": ("0.13.0", "0.14.0"),
    "faust-streaming": ("0.12.0", "0.15.3"),
}
ALLOW_UNTESTED_FLAG: Final = "--allow-untested-clients"
ALLOW_UNTESTED_ENV: Final = "STREAM_CLEANER_WORKER_ALLOW_UNTESTED_CLIENTS"
_RELEASE = re.compile(r"\d+(?:\.\d+)*")
_WARNED: list[bool] = []
# set once `require_tested` let the process run: the patches install only then
_CHECKED: list[bool] = []


class UntestedClients(RuntimeError):
    """aiokafka or faust-streaming is installed at a release the worker is not tested with."""


def installed_versions() -> dict[str, str | None]:
    """The installed release of each distribution in `SUPPORTED` (``None``: not installed)."""
    found: dict[str, str | None] = {}
    for name in SUPPORTED:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def _release(version: str) -> tuple[int, ...] | None:
    """``0.14.0`` as ``(0, 14)`` (trailing zeros dropped, so ``0.14`` is the same); ``None``
    for anything but a plain release (a pre-release, a post-release, a local build): nothing
    but the tested releases counts as tested."""
    if not _RELEASE.fullmatch(version):
        return None
    parts = [int(part) for part in version.split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def is_tested(name: str, version: str | None) -> bool:
    """Whether ``version`` of ``name`` is inside its `SUPPORTED` range."""
    release = None if version is None else _release(version)
    if release is None:
        return False
    lowest, highest = SUPPORTED[name]
    return bool(_release(lowest) <= release <= _release(highest))  # type: ignore[operator]


def untested(installed: Mapping[str, str | None] | None = None) -> dict[str, str | None]:
    """The distributions whose installed release is outside its range: ``{name: version}``."""
    installed = installed_versions() if installed is None else installed
    return {name: installed.get(name) for name in SUPPORTED
            if not is_tested(name, installed.get(name))}  # fmt: skip


def describe(outside: Mapping[str, str | None]) -> str:
    """What is installed against what is tested, e.g. ``aiokafka 0.12.0 (tested: 0.13.0 to
    0.14.0)``."""
    return ", ".join(
        f"{name} {version or 'not installed'} (tested: {SUPPORTED[name][0]} to "
        f"{SUPPORTED[name][1]})"
        for name, version in outside.items()
    )


def require_tested(*, allow_untested: bool = False) -> None:
    """Refuse to run the worker with aiokafka or faust-streaming outside `SUPPORTED`.

    Args:
        allow_untested: run anyway (`ALLOW_UNTESTED_FLAG`, `ALLOW_UNTESTED_ENV`), with a
            warning, once per process.

    Raises:
        UntestedClients: a release is outside its range, named with the range.
    """
    outside = untested()
    if not outside:
        _CHECKED[:] = [True]
        return
    what = (
        f"{describe(outside)}: the worker patches internals of these libraries, and releases "
        "outside the tested range may lose pages silently"
    )
    if not allow_untested:
        raise UntestedClients(
            f"{what}. Install a tested release (pip install 'stream-cleaner[stream]'), or accept "
            f"the risk with {ALLOW_UNTESTED_FLAG} ({ALLOW_UNTESTED_ENV}=true)"
        )
    if not _WARNED:
        _WARNED.append(True)
        log.warning("%s; running anyway (%s)", what, ALLOW_UNTESTED_FLAG)
    _CHECKED[:] = [True]


def require_checked() -> None:
    """Refuse to patch a client before `require_tested` let the process run.

    Every patch in this package calls it first, so none can be installed without the gate.

    Raises:
        RuntimeError: the gate was not checked in this process.
    """
    if not _CHECKED:
        raise RuntimeError(
            "the aiokafka and faust-streaming releases were not checked: install the patches "
            "with stream_cleaner.streaming.patches.install, which checks them first"
        )


def lowest_requirements() -> list[str]:
    """``name==lowest`` for each distribution: what the lowest-end venv installs."""
    return [f"{name}=={lowest}" for name, (lowest, _) in SUPPORTED.items()]
