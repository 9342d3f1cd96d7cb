"""The HTTP API and the demo page: aiohttp handlers shared by the worker and ``serve``.

Routes (`ROUTES`; described in ``static/openapi.json``, served at ``/api/openapi.json``):

- ``GET /demo``: the page (clean view and annotation view), no external assets.
- ``POST /api/clean``: ``{html | text | url, mode, sentence_filter, max_perplexity, model}``
  -> the cleaned document with every sentence (text, perplexity, block, kept, reason, and
  whether another ``max_perplexity`` would decide it again: `decide.depends_on_setting_limit`).
- ``GET /api/perplexity?text=...&model=...``: the perplexity of one sentence.
- ``GET /api/annotate/pages``: the HTML files of the annotation folder.
- ``POST /api/annotate/load``: ``{path}`` or ``{name, html_base64}`` -> the page's blocks with
  the predicted labels (or the saved ones).
- ``POST /api/annotate/save``: an annotation (`annotations.PageAnnotation`) -> written.

Errors are JSON, ``{"error": {"status", "code", "message"}}``: 400 malformed JSON, a body
that cannot be read or a missing parameter, 403 a disabled feature or a path outside the
folder, 404 a missing page, 408 a body not sent within ``max_request_seconds``, 413 a body,
text or fetched page over its limit (or a page too large to parse), 422 a value the API does
not accept (unknown model or mode, bad threshold, URL scheme), 502/504 a failed or slow
fetch, 503 a page that ran out of processing time, or ``busy``: more than
``max_pending_requests`` requests that read a body or clean were in progress.

Everything CPU-bound (parsing a request's JSON, cleaning, encoding the answer's JSON) runs on
the executor, through module-level functions whose arguments pickle: ``serve``'s thread, or
the worker's child process (`isolation`), where the event loop only moves bytes.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import json
import math
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import settings as settings_module
from ..annotations import (
    KINDS,
    LABELS,
    AnnotationError,
    PageAnnotation,
    find_annotation,
    predict_page,
    write_annotation,
)
from ..decide import DropReason, ErrorReason, depends_on_setting_limit, limits_by_setting
from ..decode import BinaryContent
from ..document import RawDocument
from ..lm import DEFAULT_MODEL_PATH, LanguageModel, load_model, perplexity
from ..parse import PageTooLarge, TimeBudgetExceeded
from ..pipeline import clean_document
from ..segment import CJK_ENDS
from ..settings import SENTENCE_FILTERS, CleanerSettings
from .config import DEFAULT_MODEL_NAME, WebSettings
from .fetch import FetchError, fetch_url

if TYPE_CHECKING:
    from aiohttp import web

STATIC_DIR = Path(__file__).parent / "static"
CLEAN_FIELDS = frozenset(
    {"html", "text", "url", "mode", "sentence_filter", "max_perplexity", "model"}
)
MAX_LISTED_PAGES = 1000
# A page's error -> the HTTP status of the answer that carries it
_ERROR_STATUS = {
    ErrorReason.TOO_LARGE: 413,
    ErrorReason.TIME_BUDGET: 503,
    ErrorReason.EMPTY: 422,
    ErrorReason.BINARY: 422,
    ErrorReason.INTERNAL: 500,
}

Handler = Callable[["web.Request"], Awaitable["web.StreamResponse"]]


class Route(NamedTuple):
    method: str
    path: str
    name: str  # the DemoApi method that answers it, without its leading underscore
    pending: bool  # reads a body or runs on the executor: counts in max_pending_requests


ROUTES = (
    Route("GET", "/demo", "page", False),
    Route("GET", "/api/openapi.json", "openapi", False),
    Route("POST", "/api/clean", "clean", True),
    Route("GET", "/api/perplexity", "perplexity", True),
    Route("GET", "/api/annotate/pages", "annotate_pages", False),
    Route("POST", "/api/annotate/load", "annotate_load", True),
    Route("POST", "/api/annotate/save", "annotate_save", True),
)


class ApiError(Exception):
    """A request the API answers with an error: status, a snake_case code and a message."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra

    def __reduce__(self) -> tuple[Any, ...]:
        # it crosses back from the worker's demo process (`isolation`)
        return (_api_error, (self.status, self.code, self.message, self.extra))


def _api_error(status: int, code: str, message: str, extra: dict[str, Any]) -> ApiError:
    return ApiError(status, code, message, **extra)


def error_body(status: int, code: str, message: str, **extra: Any) -> bytes:
    """The JSON body of an error."""
    body = {"error": {"status": status, "code": code, "message": message}, **extra}
    return json.dumps(body).encode()


def error_response(status: int, code: str, message: str, **extra: Any) -> web.Response:
    """The JSON answer of an error."""
    return json_response(status, error_body(status, code, message, **extra))


def json_response(status: int, body: bytes) -> web.Response:
    """An answer whose body is JSON already encoded."""
    from aiohttp import web

    return web.Response(body=body, status=status, content_type="application/json", charset="utf-8")


def parse_json_object(body: bytes) -> dict[str, Any]:
    """A request body as a JSON object (on the executor: 2 MB of JSON take ~50 ms).

    Raises:
        ApiError: 400, the body is not a JSON object.
    """
    try:
        value = json.loads(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError included; deep nesting
        raise ApiError(400, "malformed_json", f"the body is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ApiError(400, "malformed_json", "the body must be a JSON object")
    return value


def clean_answer(
    raw: RawDocument, *, settings: CleanerSettings, model: LanguageModel, extra: dict[str, Any]
) -> tuple[int, bytes]:
    """``/api/clean``'s status and JSON body for a page: the cleaned document with ``extra``,
    or the error of a page the core could not clean, carrying the document.

    Beside the document's fields, ``max_perplexity_applies`` says whether
    ``settings.max_sentence_perplexity`` is the limit the sentences were decided by
    (`decide.limits_by_setting`), and each sentence's whether its decision is that limit's
    (`decide.depends_on_setting_limit`): the only sentences another ``max_perplexity`` changes,
    each to kept exactly when its perplexity is at most that value. The demo's slider moves
    these and no other.
    """
    document = clean_document(raw, settings=settings, model=model)
    out = document.to_dict()
    out.update(extra)
    out["max_perplexity_applies"] = limits_by_setting(settings)
    depends = depends_on_setting_limit(document.sentences, settings)
    for sentence, applies in zip(out["sentences"], depends, strict=True):
        sentence["max_perplexity_applies"] = applies
    if document.error:
        status = _ERROR_STATUS.get(document.error, 422)
        message = document.error_detail or document.error
        return status, error_body(status, document.error, message, document=out)
    return 200, json.dumps(out).encode()


def annotate_answer(
    body: bytes,
    source: str,
    *,
    settings: CleanerSettings,
    model: LanguageModel,
    annotations_dir: str | None,
) -> bytes:
    """``/api/annotate/load``'s JSON body: the page's blocks with the predicted labels, and the
    saved ones where the annotation folder has them.

    Raises:
        ApiError: 422 a binary page, 413 a page too large, 503 out of time.
    """
    try:
        page = predict_page(body, source, settings=settings, model=model)
    except BinaryContent as exc:
        raise ApiError(422, ErrorReason.BINARY, str(exc)) from None
    except PageTooLarge as exc:
        raise ApiError(413, ErrorReason.TOO_LARGE, str(exc)) from None
    except TimeBudgetExceeded as exc:
        raise ApiError(503, ErrorReason.TIME_BUDGET, str(exc)) from None
    saved = None
    if annotations_dir is not None:
        try:
            saved = find_annotation(annotations_dir, source, page.html_sha256)
        except (AnnotationError, OSError):
            saved = None  # a broken earlier file: start from the prediction again
    saved_by_index = {block.index: block for block in saved.blocks} if saved else {}
    blocks = []
    for block in page.blocks:
        chosen = saved_by_index.get(block.index, block)
        blocks.append(
            {
                **block.to_dict(),
                "label": chosen.label,
                "kind": chosen.kind,
                "predicted_label": block.label,
                "predicted_kind": block.kind,
            }
        )
    return json.dumps({**page.to_dict(), "blocks": blocks, "saved": saved is not None}).encode()


def modes() -> tuple[str, ...]:
    """The cleaning modes the core knows (``settings.MODES``)."""
    return tuple(settings_module.MODES)


def resolve_under(root: str | Path, relative: str) -> Path:
    """``relative`` inside ``root``; symlinks are followed before the check.

    Raises:
        ApiError: the path is empty (422) or lands outside ``root`` (403).
    """
    if not relative or "\x00" in relative:
        raise ApiError(422, "invalid_path", "path must be a non-empty relative path")
    base = Path(root).resolve()
    candidate = (base / relative).resolve()
    if not candidate.is_relative_to(base):
        raise ApiError(403, "path_outside_folder", "the path leads outside the pages folder")
    return candidate


def _choice(value: Any, default: str, known: Sequence[str], field: str, plural: str) -> str:
    """A request's ``field``: ``default`` when left out, else one of ``known`` (a 422
    ``unknown_FIELD`` naming them otherwise)."""
    if value is None:
        return default
    if not isinstance(value, str) or value not in known:
        raise ApiError(
            422,
            f"unknown_{field}",
            f"unknown {field} {value!r}; known: {', '.join(known)}",
            **{plural: list(known)},
        )
    return value


class DemoApi:
    """The handlers of `ROUTES` over one configuration.

    Args:
        web: the web settings (limits, models, fetching, folders).
        cleaner: the cleaner's settings, the base of every request's settings.
        executor: where cleaning runs, off the event loop; a private one-thread pool if
            ``None``. The worker passes a child process of its own (`isolation`), never its
            cleaning thread.
    """

    def __init__(
        self,
        web: WebSettings | None = None,
        cleaner: CleanerSettings | None = None,
        *,
        executor: Executor | None = None,
    ) -> None:
        self.web = web or WebSettings()
        self.cleaner = cleaner or CleanerSettings()
        self._own_executor = executor is None
        self.executor = executor or ThreadPoolExecutor(1, thread_name_prefix="stream-cleaner-web")
        self.models: dict[str, str | None] = {DEFAULT_MODEL_NAME: self.cleaner.model_path}
        self.models.update(self.web.models)
        self._page_html: bytes | None = None
        self._pending = 0  # requests of the routes that count, in progress

    def close(self) -> None:
        """Stop the private executor (a shared one is left to its owner)."""
        if self._own_executor:
            self.executor.shutdown(wait=False, cancel_futures=True)

    def handler(self, route: Route) -> Handler:
        """The aiohttp handler of ``route``: errors become JSON answers, and a route that
        counts is answered 503 ``busy`` while ``max_pending_requests`` are in progress."""
        method = getattr(self, "_" + route.name)
        counts = int(route.pending)

        @functools.wraps(method)
        async def handle(request: web.Request) -> web.StreamResponse:
            if counts and self._pending >= self.web.max_pending_requests:
                limit = self.web.max_pending_requests
                answer = error_response(
                    503, "busy", f"{limit} requests are in progress already; try again later"
                )
                answer.headers["Retry-After"] = "1"
                return answer
            self._pending += counts
            try:
                return await method(request)
            except ApiError as exc:
                return error_response(exc.status, exc.code, exc.message, **exc.extra)
            finally:
                self._pending -= counts

        return handle

    def add_routes(self, app: web.Application) -> None:
        """Add every route of `ROUTES` to a plain aiohttp application."""
        for route in ROUTES:
            if route.method == "GET":  # HEAD too, as for any GET
                app.router.add_get(route.path, self.handler(route))
            else:
                app.router.add_route(route.method, route.path, self.handler(route))

    # --- shared helpers ---------------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """What the page needs to know: models, modes, defaults and limits."""
        return {
            "models": list(self.models),
            "modes": list(modes()),
            "mode": self.cleaner.mode,
            "sentence_filters": list(SENTENCE_FILTERS),
            "sentence_filter": self.cleaner.sentence_filter,
            "max_perplexity": self.cleaner.max_sentence_perplexity,
            # the core's joining of a block's kept sentences (`segment.join_sentences`): a
            # space between two, except after one of these
            "no_space_after": "".join(sorted(CJK_ENDS)),
            "max_body_bytes": self.web.max_body_bytes,
            "max_request_seconds": self.web.max_request_seconds,
            "fetch_urls": self.web.fetch_urls,
            "fetch_private": self.web.fetch_private,
            "fetch_timeout_seconds": self.web.fetch_timeout_seconds,
            "max_fetch_bytes": self.web.max_fetch_bytes,
            "pages_dir": self.web.pages_dir is not None,
            "annotations_dir": self.web.annotations_dir is not None,
            "labels": list(LABELS),
            "kinds": list(KINDS),
            "reasons": list(DropReason.ALL),
        }

    def model(self, name: Any) -> tuple[str, LanguageModel]:
        """The named model (``default`` when ``name`` is None).

        Raises:
            ApiError: 422 for a name the registry does not have, 500 when its file is missing.
        """
        name = DEFAULT_MODEL_NAME if name is None else name
        if not isinstance(name, str) or name not in self.models:
            raise ApiError(
                422,
                "unknown_model",
                f"unknown model {name!r}; known: {', '.join(self.models)}",
                models=list(self.models),
            )
        path = Path(self.models[name] or DEFAULT_MODEL_PATH)
        if not path.is_file():
            raise ApiError(500, "model_unavailable", f"the file of model {name!r} is missing")
        return name, load_model(path)

    async def run(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``func(*args, **kwargs)`` on the executor, within the request time limit.

        Raises:
            ApiError: 503 when it takes longer than ``max_request_seconds`` (plus a second for
                the queue); the core's own time budget normally ends a page before that.
        """
        loop = asyncio.get_running_loop()
        call = functools.partial(func, *args, **kwargs)
        limit = self.web.max_request_seconds + 1.0
        try:
            return await asyncio.wait_for(loop.run_in_executor(self.executor, call), limit)
        except TimeoutError:
            raise ApiError(
                503, "timeout", f"the request took more than {limit:g} s to process"
            ) from None

    async def read_json(self, request: web.Request) -> dict[str, Any]:
        """The request's JSON object, read up to ``max_body_bytes``.

        Raises:
            ApiError: 413 for a larger body, 400 for one that is not a JSON object.
        """
        limit = self.web.max_body_bytes
        too_large = ApiError(
            413, "body_too_large", f"the request body is over {limit} bytes", limit=limit
        )
        if request.content_length is not None and request.content_length > limit:
            raise too_large
        from aiohttp.web import RequestPayloadError

        body = bytearray()
        seconds = self.web.max_request_seconds
        try:
            async with asyncio.timeout(seconds):  # a client that stops sending is let go
                async for chunk in request.content.iter_chunked(65536):
                    body += chunk
                    if len(body) > limit:
                        raise too_large
        except TimeoutError:
            raise ApiError(
                408, "body_timeout", f"the request body took more than {seconds:g} s to send"
            ) from None
        except (RequestPayloadError, ConnectionResetError) as exc:
            # a body that is not in its Content-Encoding, a bad chunk, a client gone
            raise ApiError(400, "bad_body", f"the request body cannot be read: {exc}") from None
        result: dict[str, Any] = await self.run(parse_json_object, bytes(body))
        return result

    def settings_for(
        self, mode: str, max_perplexity: float, sentence_filter: str | None = None
    ) -> CleanerSettings:
        """The request's cleaner settings: the base with its threshold, mode, sentence filter
        and time limit."""
        budget = self.cleaner.time_budget_seconds or math.inf
        changes: dict[str, Any] = {
            "max_sentence_perplexity": max_perplexity,
            "time_budget_seconds": min(budget, self.web.max_request_seconds),
            "mode": mode,
            "sentence_filter": sentence_filter or self.cleaner.sentence_filter,
        }
        try:
            return self.cleaner.with_options(**changes)
        except ValueError as exc:
            raise ApiError(422, "invalid_settings", str(exc)) from None

    def _mode_of(self, value: Any) -> str:
        return _choice(value, self.cleaner.mode, modes(), "mode", "modes")

    def _sentence_filter_of(self, value: Any) -> str:
        return _choice(
            value, self.cleaner.sentence_filter, SENTENCE_FILTERS, "sentence_filter",
            "sentence_filters",
        )  # fmt: skip

    def _threshold_of(self, value: Any) -> float:
        if value is None:
            return self.cleaner.max_sentence_perplexity
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        try:
            number = float(value) if ok else math.nan
        except OverflowError:  # an integer of hundreds of digits
            number = math.inf
        if not math.isfinite(number) or number <= 0:
            raise ApiError(
                422, "invalid_max_perplexity", "max_perplexity must be a positive number"
            )
        return number

    # --- handlers ---------------------------------------------------------------------------

    async def _page(self, request: web.Request) -> web.Response:
        from aiohttp import web

        if self._page_html is None:
            html = (STATIC_DIR / "demo.html").read_text(encoding="utf-8")
            config = json.dumps(self.config()).replace("<", "\\u003c")
            html = (
                html.replace("/*STYLE*/", (STATIC_DIR / "demo.css").read_text(encoding="utf-8"))
                .replace("/*SCRIPT*/", (STATIC_DIR / "demo.js").read_text(encoding="utf-8"))
                .replace("{/*CONFIG*/}", config)
            )
            self._page_html = html.encode("utf-8")
        return web.Response(
            body=self._page_html,
            content_type="text/html",
            charset="utf-8",
            headers={
                # everything is inline: nothing may be loaded from anywhere else
                "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                "script-src 'unsafe-inline'; connect-src 'self'; img-src data:",
                "Cache-Control": "no-cache",
            },
        )

    async def _openapi(self, request: web.Request) -> web.Response:
        from aiohttp import web

        return web.Response(
            body=(STATIC_DIR / "openapi.json").read_bytes(), content_type="application/json"
        )

    async def _clean(self, request: web.Request) -> web.Response:
        payload = await self.read_json(request)
        unknown = sorted(set(payload) - CLEAN_FIELDS)
        if unknown:
            raise ApiError(422, "unknown_field", f"unknown fields: {', '.join(unknown)}")
        given = [key for key in ("html", "text", "url") if payload.get(key) is not None]
        if len(given) != 1:
            raise ApiError(422, "missing_input", "give exactly one of html, text or url")
        (source,) = given
        value = payload[source]
        if not isinstance(value, str):
            raise ApiError(422, "invalid_input", f"{source} must be a string")
        mode = self._mode_of(payload.get("mode"))
        # each field is the setting of its name, as for the CLI and the worker: a limit asked
        # for in the labeller's modes applies when the sentence filter is on (the answer's
        # max_perplexity_applies says whether it did)
        sentence_filter = self._sentence_filter_of(payload.get("sentence_filter"))
        threshold = self._threshold_of(payload.get("max_perplexity"))
        name, model = self.model(payload.get("model"))
        settings = self.settings_for(mode, threshold, sentence_filter)
        if source == "url":
            raw = await self._fetch(value)
        else:
            content_type = "text/html" if source == "html" else "text/plain"
            raw = RawDocument(body=value, content_type=content_type)
        extra = {
            "mode": mode,
            "max_perplexity": threshold,
            "model": name,
            "sentence_filter": sentence_filter,
        }
        status, body = await self.run(
            clean_answer, raw, settings=settings, model=model, extra=extra
        )
        return json_response(status, body)

    async def _fetch(self, url: str) -> RawDocument:
        if not self.web.fetch_urls:
            raise ApiError(
                403,
                "url_fetch_disabled",
                "this server does not fetch URLs (start it with --fetch-urls to allow it)",
            )
        try:
            fetched = await fetch_url(
                url,
                timeout_seconds=self.web.fetch_timeout_seconds,
                max_bytes=self.web.max_fetch_bytes,
                allow_private=self.web.fetch_private,
            )
        except FetchError as exc:
            raise ApiError(exc.status, exc.code, exc.message) from None
        return RawDocument(
            body=fetched.body, id=fetched.url, url=fetched.url, headers=fetched.headers
        )

    async def _perplexity(self, request: web.Request) -> web.Response:
        from aiohttp import web

        text = request.query.get("text")
        if text is None:
            raise ApiError(400, "missing_parameter", "give the sentence as ?text=...")
        if len(text) > self.web.max_text_chars:
            raise ApiError(
                413, "text_too_long", f"text is over {self.web.max_text_chars} characters"
            )
        name, model = self.model(request.query.get("model"))
        (score,) = await self.run(model.score_texts, [text])
        log10_prob, n_tokens, n_oov = score[0], score[1], score[2]
        return web.json_response(
            {
                "text": text,
                "perplexity": perplexity(log10_prob, n_tokens),
                "log10_prob": log10_prob,
                "tokens": n_tokens,
                "oov": n_oov,
                "model": name,
                "model_id": model.id,
            }
        )

    async def _annotate_pages(self, request: web.Request) -> web.Response:
        from aiohttp import web

        pages: list[str] = []
        if self.web.pages_dir is not None:
            root = Path(self.web.pages_dir)
            found = sorted(
                path.relative_to(root).as_posix()
                for path in root.rglob("*")
                if path.suffix.lower() in (".html", ".htm") and path.is_file()
            )
            pages = found[:MAX_LISTED_PAGES]
        return web.json_response({"enabled": self.web.pages_dir is not None, "pages": pages})

    async def _annotate_load(self, request: web.Request) -> web.Response:
        payload = await self.read_json(request)
        if payload.get("path") is not None:
            body, source = self._read_page(payload["path"])
        elif payload.get("html_base64") is not None:
            body, source = self._uploaded_page(payload.get("name"), payload["html_base64"])
        else:
            raise ApiError(422, "missing_input", "give a path or an uploaded html_base64")
        _, model = self.model(None)
        settings = self.settings_for(self.cleaner.mode, self.cleaner.max_sentence_perplexity)
        answer = await self.run(
            annotate_answer,
            body,
            source,
            settings=settings,
            model=model,
            annotations_dir=self.web.annotations_dir,
        )
        return json_response(200, answer)

    def _read_page(self, path: Any) -> tuple[bytes, str]:
        if self.web.pages_dir is None:
            raise ApiError(403, "pages_dir_disabled", "this server has no pages folder")
        if not isinstance(path, str):
            raise ApiError(422, "invalid_path", "path must be a string")
        not_found = ApiError(404, "page_not_found", f"no page {path!r} in the pages folder")
        try:
            full = resolve_under(self.web.pages_dir, path)
            if not full.is_file():
                raise not_found
            if full.stat().st_size > self.web.max_body_bytes:
                raise ApiError(
                    413, "page_too_large", f"the page is over {self.web.max_body_bytes} B"
                )
            body = full.read_bytes()
        except OSError:  # a name too long, a loop of links, a page gone or unreadable
            raise not_found from None
        return body, full.relative_to(Path(self.web.pages_dir).resolve()).as_posix()

    def _uploaded_page(self, name: Any, encoded: Any) -> tuple[bytes, str]:
        if not isinstance(encoded, str):
            raise ApiError(422, "invalid_input", "html_base64 must be a string")
        try:
            body = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(422, "invalid_input", "html_base64 is not valid base64") from None
        source = Path(name).name if isinstance(name, str) and name.strip() else "upload.html"
        return body, source

    async def _annotate_save(self, request: web.Request) -> web.Response:
        from aiohttp import web

        payload = await self.read_json(request)
        if self.web.annotations_dir is None:
            raise ApiError(
                403, "annotations_disabled", "this server has no folder to save labels in"
            )
        try:
            page = PageAnnotation.from_dict(payload)
            path = write_annotation(self.web.annotations_dir, page)
        except AnnotationError as exc:
            raise ApiError(422, "invalid_annotation", str(exc)) from None
        except UnicodeEncodeError:  # a lone surrogate ("\\ud800") that JSON let through
            raise ApiError(
                422, "invalid_annotation", "the annotation holds text that is not Unicode"
            ) from None
        return web.json_response({"saved": path.name, "blocks": len(page.blocks)})
