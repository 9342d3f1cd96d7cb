"""``serve``: the web demo and the HTTP API."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from .options import CommandParser, add_cleaner_options, cleaner_settings


def register(add_command: Callable[..., CommandParser]) -> None:
    """Add the commands of this module."""
    add_command(
        "serve",
        help="serve the web demo and HTTP API",
        description="Serve the web demo (GET /demo) and the HTTP API (POST /api/clean, GET "
        "/api/perplexity, the annotation routes; described at GET /api/openapi.json). Options "
        "default to STREAM_CLEANER_WEB_* variables (MAX_BODY_BYTES, MODELS, FETCH_URLS...). "
        "Ctrl-C stops it.",
        add_options=_serve_options,
    ).set_defaults(handler=_cmd_serve)


def _serve_options(p: CommandParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="bind address (default %(default)s)")
    p.add_argument("--port", type=int, default=8080, help="port (default %(default)s)")
    p.add_argument(
        "--add-model",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="offer another KenLM model under NAME (repeatable); 'default' is --model",
    )
    p.add_argument(
        "--fetch-urls",
        action="store_true",
        default=None,
        help="allow /api/clean to fetch a url (http/https, public addresses only)",
    )
    p.add_argument(
        "--fetch-private",
        action="store_true",
        default=None,
        help="with --fetch-urls, also fetch loopback, private and link-local addresses",
    )
    from ..web.config import WebSettings

    web = WebSettings()  # the defaults (STREAM_CLEANER_WEB_* variables change them)
    p.add_argument(
        "--fetch-timeout",
        type=float,
        help=f"seconds one fetch may take (default {web.fetch_timeout_seconds:g})",
    )
    p.add_argument(
        "--max-fetch-bytes",
        type=int,
        help=f"largest fetched page (default {web.max_fetch_bytes})",
    )
    p.add_argument(
        "--max-body-bytes", type=int, help=f"largest request body (default {web.max_body_bytes})"
    )
    p.add_argument(
        "--max-request-seconds",
        type=float,
        help=f"cleaning time per request (default {web.max_request_seconds:g})",
    )
    p.add_argument("--pages-dir", help="folder of HTML pages the annotation view may open")
    p.add_argument("--annotations-dir", help="folder where the annotation view saves labels")
    add_cleaner_options(p)


def _cmd_serve(args: argparse.Namespace) -> int:
    from ..lm import DEFAULT_MODEL_PATH
    from ..web.config import WebSettings, parse_model_specs
    from ..web.server import create_web_app, run_server

    web = WebSettings.from_env()
    web = web.with_options(
        models=web.models + parse_model_specs(args.add_model) or None,
        fetch_urls=args.fetch_urls,
        fetch_private=args.fetch_private,
        fetch_timeout_seconds=args.fetch_timeout,
        max_fetch_bytes=args.max_fetch_bytes,
        max_body_bytes=args.max_body_bytes,
        max_request_seconds=args.max_request_seconds,
        pages_dir=args.pages_dir,
        annotations_dir=args.annotations_dir,
    )
    cleaner = cleaner_settings(args)
    languages = cleaner.model_paths().values()
    for path in [cleaner.model_path, *languages, *(path for _, path in web.models)]:
        if not Path(path or DEFAULT_MODEL_PATH).is_file():
            raise FileNotFoundError(f"no model file {path}")
    run_server(create_web_app(web, cleaner), host=args.host, port=args.port, settings=web)
    return 0
