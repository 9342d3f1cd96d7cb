"""Every patch of aiokafka's and faust-streaming's private internals, behind one version gate.

The worker replaces, wraps or reads private parts of both clients where their own behaviour
lost pages, crashed the worker or cost more than the cleaning. Each module names the upstream
behaviour it works around, the private names it touches, what goes wrong without it and the
tests that show it:

- `offsets`: Faust's consumer commits inputs no stream took around rebalances, and misses a
  log that lost its committed offset (``guarded``); Faust fixes aiokafka's fetch wait at
  1.5 s (``fetching_within``).
- `header_names`: aiokafka's fetcher crashes on a header name that is not UTF-8.
- `produce_requests`: aiokafka copies a produce request's record batches at every level of
  its encoding.
- `batches`: aiokafka's per-record ``send`` costs more than the cleaning; `batches.BatchSend`
  fills the producer's batches itself (the agent's way to publish).

`versions` is the gate: the releases they are tested with (`versions.SUPPORTED`) and
`versions.require_tested`, which refuses others. `install` checks it and then installs every
patch; each patch also refuses to install before the gate was checked in the process
(`versions.require_checked`). Importing this package imports neither client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .versions import UntestedClients, require_tested

__all__ = ["UntestedClients", "install", "require_tested"]


def install(
    app: Any = None,
    *,
    allow_untested: bool = False,
    offset_reset: str | None = None,
    on_offset_reset: Callable[[str], None] | None = None,
    fetch_max_wait_seconds: float | None = None,
) -> None:
    """Check the client releases, then patch them: the one way the patches are installed.

    aiokafka's fetcher (`header_names`) and its sender and connection (`produce_requests`) are
    patched for the whole process, once. With ``app`` (the worker's Faust app, not started),
    its transport's consumer becomes the guarded one (`offsets.guarded`) whose fetches wait
    ``fetch_max_wait_seconds`` at most (`offsets.fetching_within`). The agent's `batches.
    BatchSend` needs no installing; it too refuses to be built before the gate.

    Args:
        app: the worker's app; ``None`` for the CLI's clients (``produce``, ``tail``).
        allow_untested: run with releases outside `versions.SUPPORTED`, with a warning.
        offset_reset: where a partition whose committed offset is outside its log is read
            again (`offsets.OFFSET_RESET_POLICIES`); `offsets.OFFSET_RESET_DEFAULT` if ``None``.
        on_offset_reset: called with the reason of each such reset.
        fetch_max_wait_seconds: the longest a fetch of the app's consumer waits for records.

    Raises:
        UntestedClients: a release is outside its tested range and ``allow_untested`` is false;
            nothing is patched then.
    """
    require_tested(allow_untested=allow_untested)
    from . import header_names, produce_requests

    header_names.install()  # a header name that is not UTF-8 must not crash the fetch
    # produce requests encoded with one copy of their record batches, not six
    produce_requests.install()
    if app is None:
        return
    from . import offsets

    # commits only the input offsets the agent took and acknowledged, in order: without it,
    # Faust committed past pages around rebalances; reads a partition whose log lost its
    # committed offset again per the policy, counted
    app.transport.Consumer = offsets.guarded(
        app.transport.Consumer,
        offset_reset=offsets.OFFSET_RESET_DEFAULT if offset_reset is None else offset_reset,
        on_offset_reset=on_offset_reset,
    )
    if fetch_max_wait_seconds is not None:
        # fetches of idle partitions must not hold back a busy one's for 1.5 s
        app.transport.Consumer = offsets.fetching_within(
            app.transport.Consumer, fetch_max_wait_seconds
        )
