"""`WebSettings`: every limit and option of the web demo and API, defaults in one place."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..settings import values_from_env

WEB_ENV_PREFIX = "STREAM_CLEANER_WEB_"
DEFAULT_MODEL_NAME = "default"
# A request body (JSON with a page inside) larger than this is refused with 413.
MAX_BODY_BYTES_DEFAULT = 2 * 1024 * 1024
# Wall-clock seconds a request may spend cleaning; also caps the core's per-page time budget.
MAX_REQUEST_SECONDS_DEFAULT = 10.0
# Longest text `GET /api/perplexity` scores: it is in the query, and aiohttp caps a request
# line at 8 KiB.
MAX_TEXT_CHARS_DEFAULT = 2_000
# Requests that read a body or wait for their turn to clean at once; more are answered 503
# at once. Each holds up to max_body_bytes, several times that once parsed.
MAX_PENDING_REQUESTS_DEFAULT = 8
# The share of the time a worker's demo process may clean (`isolation`): it rests after each
# request in proportion to the CPU the request took. Even at the lowest CPU priority it slowed
# a draining worker while it ran (the broker test's figures are in `isolation`).
MAX_BUSY_SHARE_DEFAULT = 0.25
# Seconds a connection has to send a request head, from its opening or the previous answer
# (also how long an idle keep-alive connection stays open). Probes and scrapers send theirs at
# once.
HEADER_TIMEOUT_SECONDS_DEFAULT = 10.0
# Connections held at once; beyond it the one that has waited longest for its first request
# head is closed (`connections`). A worker's port sees probes, scrapes and a few demo users.
MAX_CONNECTIONS_DEFAULT = 100
FETCH_TIMEOUT_SECONDS_DEFAULT = 10.0
MAX_FETCH_BYTES_DEFAULT = 2 * 1024 * 1024
MAX_FETCH_REDIRECTS = 5


@dataclass(frozen=True, slots=True)
class WebSettings:
    """Options of a web port (its guards) and of the web demo and API on it.

    Attributes:
        enabled: whether the worker serves the demo and API beside ``/metrics``, ``/healthz``
            and ``/readyz``; off by default (``stream-cleaner serve`` always serves them). On,
            a worker cleans their requests in a process of its own at the lowest CPU priority,
            never on the stream's cleaning thread (`web.isolation`).
        max_body_bytes: larger request bodies are refused with 413.
        max_request_seconds: cleaning time per request; past it the answer is 503.
        max_pending_requests: requests that read a body or wait to be cleaned at once (one
            is cleaned at a time); more are answered 503 ``busy`` at once.
        max_busy_share: on a worker, the largest share of the time the demo's process may
            clean: after a request that took it ``t`` seconds of CPU it rests
            ``t * (1 / max_busy_share - 1)`` seconds. ``serve`` does not rest.
        header_timeout_seconds: a connection that has not sent a whole request head this
            long after it opened, or after the previous answer, is closed.
        max_connections: the most connections the port holds; beyond it the one that has
            waited longest for its first request head is closed (`web.connections`).
        max_text_chars: longest text ``/api/perplexity`` accepts (413 above).
        models: extra named models as ``((name, path), ...)``; ``default`` is always the
            cleaner's own model (the bundled one unless configured).
        fetch_urls: whether ``/api/clean`` may fetch a ``url``; off by default.
        fetch_private: whether fetching may reach loopback, private, link-local or other
            non-public addresses; off by default.
        fetch_timeout_seconds: time limit of one fetch, redirects included.
        max_fetch_bytes: larger fetched pages are refused with 413.
        pages_dir: folder whose HTML files the annotation view may open by path.
        annotations_dir: folder where the annotation view saves labels; saving is off
            without it.
    """

    enabled: bool = False
    max_body_bytes: int = MAX_BODY_BYTES_DEFAULT
    max_request_seconds: float = MAX_REQUEST_SECONDS_DEFAULT
    max_pending_requests: int = MAX_PENDING_REQUESTS_DEFAULT
    max_busy_share: float = MAX_BUSY_SHARE_DEFAULT
    header_timeout_seconds: float = HEADER_TIMEOUT_SECONDS_DEFAULT
    max_connections: int = MAX_CONNECTIONS_DEFAULT
    max_text_chars: int = MAX_TEXT_CHARS_DEFAULT
    models: tuple[tuple[str, str], ...] = ()
    fetch_urls: bool = False
    fetch_private: bool = False
    fetch_timeout_seconds: float = FETCH_TIMEOUT_SECONDS_DEFAULT
    max_fetch_bytes: int = MAX_FETCH_BYTES_DEFAULT
    pages_dir: str | None = None
    annotations_dir: str | None = None

    def __post_init__(self) -> None:
        if self.max_body_bytes < 1 or self.max_fetch_bytes < 1 or self.max_text_chars < 1:
            raise ValueError("max_body_bytes, max_fetch_bytes and max_text_chars must be positive")
        if self.max_request_seconds <= 0 or self.fetch_timeout_seconds <= 0:
            raise ValueError("max_request_seconds and fetch_timeout_seconds must be positive")
        if self.max_pending_requests < 1 or self.max_connections < 1:
            raise ValueError("max_pending_requests and max_connections must be positive")
        if not self.header_timeout_seconds > 0:  # NaN too
            raise ValueError("header_timeout_seconds must be positive")
        if not 0 < self.max_busy_share <= 1:
            raise ValueError("max_busy_share must be above 0 and at most 1")
        names = [name for name, _ in self.models]
        if DEFAULT_MODEL_NAME in names or len(set(names)) != len(names):
            raise ValueError(f"model names must be unique and not {DEFAULT_MODEL_NAME!r}")

    def with_options(self, **changes: Any) -> WebSettings:
        """A copy with the given fields changed; ``None`` values are ignored."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WebSettings:
        """Settings from ``STREAM_CLEANER_WEB_<FIELD>`` variables, defaults for the rest.

        ``STREAM_CLEANER_WEB_MODELS`` lists extra models as ``name=path,name=path``.
        """
        environ = os.environ if environ is None else environ
        values = values_from_env(cls, WEB_ENV_PREFIX, environ, skip=("models",))
        models = parse_model_specs((environ.get(WEB_ENV_PREFIX + "MODELS") or "").split(","))
        return cls(models=models, **values)


def parse_model_specs(specs: list[str] | tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``["name=path", ...]`` as ``(("name", "path"), ...)``; blank entries are skipped.

    Raises:
        ValueError: an entry is not ``name=path``.
    """
    pairs = []
    for spec in specs:
        if not spec.strip():
            continue
        name, sep, path = spec.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise ValueError(f"a model is given as NAME=PATH, not {spec!r}")
        pairs.append((name.strip(), path.strip()))
    return tuple(pairs)
