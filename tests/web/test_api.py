"""The HTTP API over real HTTP: every route, every error case, and the worker's copy of it."""

from __future__ import annotations

import base64
import json
import os
import re
import time
from pathlib import Path

import pytest

from stream_cleaner.annotations import read_annotation
from stream_cleaner.decode import decode_body
from stream_cleaner.document import RawDocument
from stream_cleaner.pipeline import clean_document
from stream_cleaner.settings import CleanerSettings
from stream_cleaner.web.api import ROUTES, ApiError, resolve_under
from stream_cleaner.web.config import WebSettings, parse_model_specs
from stream_cleaner.web.fetch import is_public_address
from stream_cleaner.web.server import create_web_app

from ..conftest import DATA, REPO, SAMPLES
from .conftest import ARTICLE, BOILERPLATE, PAGE, request, running, write_page


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("web")
    pages, labels = root / "pages", root / "labels"
    write_page(pages)
    write_page(pages / "sub", "other.html")
    (root / "secret.html").write_text("<p>Outside the folder.</p>")
    (pages / "escape.html").symlink_to(root / "secret.html")
    return pages, labels


@pytest.fixture(scope="module")
def base(folders: tuple[Path, Path]):
    pages, labels = folders
    settings = WebSettings(
        max_body_bytes=64 * 1024,
        max_text_chars=200,
        models=(("tiny", str(DATA / "tiny.arpa")),),
        pages_dir=str(pages),
        annotations_dir=str(labels),
    )
    with running(create_web_app(settings)) as url:
        yield url


def clean(base: str, **payload) -> tuple[int, dict]:
    return request(base + "/api/clean", method="POST", data=payload)


def by_text(document: dict) -> dict[str, dict]:
    return {s["text"]: s for s in document["sentences"]}


def test_clean_html_keeps_the_article_and_drops_the_navigation(base):
    status, doc = clean(base, html=PAGE, mode="perplexity")
    assert status == 200, doc
    sentences = by_text(doc)
    for text in BOILERPLATE:
        assert sentences[text]["kept"] is False
        assert sentences[text]["reason"] == "high_perplexity"
        assert sentences[text]["perplexity"] > 3000
    for text in re.findall(r"[^.]+\.", ARTICLE):
        assert sentences[text.strip()]["kept"] is True
    fields = {"text", "block", "perplexity", "kept", "reason", "max_perplexity_applies"}
    assert set(doc["sentences"][0]) >= fields
    assert doc["model"] == "default" and doc["mode"] == "perplexity"
    assert doc["max_perplexity"] == 3000 and doc["max_perplexity_applies"] is True
    assert all(s["max_perplexity_applies"] for s in doc["sentences"])  # each has a perplexity
    assert doc["text"].startswith("The city council approved")


def test_clean_text_threshold_mode_and_named_model(base):
    status, doc = clean(base, text="Home\n" + ARTICLE, max_perplexity=10, mode="perplexity")
    assert status == 200
    assert doc["n_blocks"] == 2 and doc["n_kept"] == 0 and doc["text"] == ""
    # in the labeller's modes the limit applies with the sentence filter on, to the sentences
    # of the kept blocks, as in the CLI and the worker; the server's filter (auto) has none
    status, doc = clean(base, html=PAGE, mode="corpus", max_perplexity=10, sentence_filter="on")
    assert status == 200 and doc["max_perplexity_applies"] is True
    assert doc["sentence_filter"] == "on"
    assert {s["reason"] for s in doc["sentences"]} <= {"boilerplate", "high_perplexity"}
    assert doc["text"] == ""
    for s in doc["sentences"]:
        assert s["max_perplexity_applies"] == (s["reason"] == "high_perplexity"), s
    status, doc = clean(base, html=PAGE, mode="corpus", max_perplexity=10)
    assert status == 200 and doc["max_perplexity_applies"] is False and doc["text"]
    assert doc["sentence_filter"] == "auto"
    assert not any(s["max_perplexity_applies"] for s in doc["sentences"])
    assert doc == {
        **clean(base, html=PAGE, mode="corpus")[1],
        "max_perplexity": 10,
        "seconds": doc["seconds"],
    }
    status, doc = clean(base, text=ARTICLE, mode="perplexity", model="tiny")
    assert status == 200
    assert doc["model"] == "tiny" and doc["model_id"] == "tiny-test"


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.html")))
def test_the_api_decides_as_the_cli_and_the_worker(base, name):
    """At the server's settings, with or without its limit given (as the demo page sends it),
    the answer is the core's cleaning under the same settings: what the CLI and the worker
    keep. (It was not: a limit given turned the sentence filter on in the labeller's modes.)"""
    html = decode_body((SAMPLES / name).read_bytes()).text
    core = clean_document(RawDocument(body=html, content_type="text/html"))
    for payload in ({"html": html}, {"html": html, "max_perplexity": 3000}):
        status, doc = clean(base, **payload)
        assert status == 200, doc
        assert (doc["n_kept"], doc["text"]) == (core.n_kept, core.text)
        got = [(s["text"], s["kept"], s["reason"]) for s in doc["sentences"]]
        assert got == [(s.text, s.keep, s.reason) for s in core.sentences]
        assert (doc["guard"], doc["page_type"]) == (core.guard, core.page_type)


def test_the_readmes_api_examples_answer_as_shown(base):
    """Each ``curl`` of the README's API example cleans its snippet to text (one gave ``""``: a
    labeller mode, and the README says to clean snippets in perplexity mode)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    bodies = re.findall(r"curl -s localhost:8080/api/clean -d '([^']*)'", readme)
    assert bodies
    for body in bodies:
        payload = json.loads(body)
        status, doc = clean(base, **payload)
        assert status == 200 and doc["text"] == "The council met.", (body, doc)
    (query,) = re.findall(r"curl -s 'localhost:8080/api/perplexity\?([^']*)'", readme)
    status, scored = request(f"{base}/api/perplexity?{query}")
    assert status == 200 and scored["perplexity"] > 0


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        ({"html": "<p>x</p>", "model": "nope"}, 422, "unknown_model"),
        ({"html": "<p>x</p>", "mode": "nope"}, 422, "unknown_mode"),
        ({"html": "<p>x</p>", "sentence_filter": "yes"}, 422, "unknown_sentence_filter"),
        ({"html": "<p>x</p>", "sentence_filter": True}, 422, "unknown_sentence_filter"),
        ({"html": "<p>x</p>", "max_perplexity": -1}, 422, "invalid_max_perplexity"),
        ({"html": "<p>x</p>", "max_perplexity": "high"}, 422, "invalid_max_perplexity"),
        ({"html": "<p>x</p>", "max_perplexity": True}, 422, "invalid_max_perplexity"),
        ({"html": "<p>x</p>", "max_perplexty": 10}, 422, "unknown_field"),
        ({}, 422, "missing_input"),
        ({"html": "<p>x</p>", "text": "x"}, 422, "missing_input"),
        ({"html": 42}, 422, "invalid_input"),
        ({"html": ""}, 422, "empty"),
        ({"url": "https://example.org/"}, 403, "url_fetch_disabled"),
    ],
)
def test_clean_errors(base, payload, status, code):
    got, answer = clean(base, **payload)
    assert (got, answer["error"]["code"]) == (status, code), answer
    assert answer["error"]["status"] == status and answer["error"]["message"]


def test_malformed_and_oversize_bodies(base):
    url = base + "/api/clean"
    for body in (b'{"html": ', b"\xff\xfe", b'["html"]', b""):
        status, answer = request(url, method="POST", body=body)
        assert (status, answer["error"]["code"]) == (400, "malformed_json")
    status, answer = request(url, method="POST", data={"text": "word " * 20_000})
    assert (status, answer["error"]["code"]) == (413, "body_too_large")


def test_hostile_bodies_are_client_errors(base):
    url = base + "/api/clean"
    status, answer = request(
        url, method="POST", body=b'{"html": "<p>Hi.</p>", "max_perplexity": 1' + b"0" * 400 + b"}"
    )
    assert (status, answer["error"]["code"]) == (422, "invalid_max_perplexity")
    status, answer = request(url, method="POST", body=b"[" * 20_000 + b"]" * 20_000)
    assert (status, answer["error"]["code"]) == (400, "malformed_json")  # not a RecursionError
    for coding in ("gzip", "deflate"):
        status, answer = request(
            url, method="POST", body=b"not compressed", headers={"Content-Encoding": coding}
        )
        assert (status, answer["error"]["code"]) == (400, "bad_body"), coding
    assert request(base + "/demo", method="HEAD")[0] == 200
    assert request(base + "/api/openapi.json", method="HEAD")[0] == 200


def test_a_client_that_stops_sending_its_body_is_answered_408():
    import socket
    import time

    with running(create_web_app(WebSettings(max_request_seconds=1))) as url:
        port = int(url.rsplit(":", 1)[1])
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(
                b"POST /api/clean HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b'Content-Length: 1000\r\n\r\n{"html": "<p>'
            )
            answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert b"body_timeout" in answer
        assert time.monotonic() - started < 5


def test_requests_beyond_max_pending_are_answered_busy():
    import socket

    settings = WebSettings(max_pending_requests=1, max_request_seconds=2)
    with running(create_web_app(settings)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as stalled:
            stalled.sendall(
                b"POST /api/clean HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b'Content-Length: 1000\r\n\r\n{"html": "<p>'
            )  # holds the one slot until its body times out
            time.sleep(0.3)
            status, answer = clean(url, text=ARTICLE)
            assert (status, answer["error"]["code"]) == (503, "busy")
            assert request(url + "/demo")[0] == 200  # the page and the probes do not count
            assert stalled.recv(65536).startswith(b"HTTP/1.1 408")
        assert clean(url, text=ARTICLE)[0] == 200  # the slot is free again


def test_the_time_budget_ends_a_request_with_503():
    with running(create_web_app(cleaner=CleanerSettings(time_budget_seconds=1e-9))) as url:
        status, answer = clean(url, text=ARTICLE)
    assert (status, answer["error"]["code"]) == (503, "time_budget")
    assert answer["document"]["error"] == "time_budget"


def test_perplexity(base):
    status, answer = request(base + "/api/perplexity?text=The%20council%20met.")
    assert status == 200
    assert answer["tokens"] == 4 and 1 < answer["perplexity"] < 3000
    assert answer["model"] == "default"
    status, tiny = request(base + "/api/perplexity?text=The%20council%20met.&model=tiny")
    assert status == 200 and tiny["perplexity"] != answer["perplexity"]
    for query, status, code in [
        ("", 400, "missing_parameter"),
        ("?text=" + "a" * 201, 413, "text_too_long"),
        ("?text=a&model=nope", 422, "unknown_model"),
    ]:
        got, answer = request(base + "/api/perplexity" + query)
        assert (got, answer["error"]["code"]) == (status, code)


def test_openapi_is_json_and_lists_every_route(base):
    status, spec = request(base + "/api/openapi.json")
    assert status == 200 and spec["openapi"].startswith("3.")
    described = {(method.upper(), path) for path, ops in spec["paths"].items() for method in ops}
    assert described == {(route.method, route.path) for route in ROUTES}
    text = json.dumps(spec)
    for ref in set(re.findall(r'"#/components/(\w+)/(\w+)"', text)):
        assert ref[1] in spec["components"][ref[0]], ref


def test_the_page_has_no_external_assets(base):
    status, html = request(base + "/demo")
    assert status == 200 and html.startswith("<!doctype html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html
    assert "/*STYLE*/" not in html and "/*SCRIPT*/" not in html
    config = json.loads(re.search(r'<script id="config"[^>]*>(.*?)</script>', html, re.S)[1])
    assert config["models"] == ["default", "tiny"] and config["fetch_urls"] is False
    assert "URL fetching is off" in html
    for control in ("input", "mode", "model", "threshold", "url", "file", "page-path"):
        assert f'<label for="{control}"' in html


def test_annotation_pages_load_and_save(base, folders):
    _, labels = folders
    status, answer = request(base + "/api/annotate/pages")
    assert answer == {"enabled": True, "pages": ["escape.html", "news.html", "sub/other.html"]}
    status, page = request(base + "/api/annotate/load", method="POST", data={"path": "news.html"})
    assert status == 200 and page["saved"] is False
    assert page["source"] == "news.html" and len(page["html_sha256"]) == 64
    blocks = page["blocks"]
    assert [b["index"] for b in blocks] == list(range(len(blocks)))
    assert blocks[0]["text"] == "Home" and blocks[0]["predicted_label"] == "boilerplate"
    assert blocks[0]["kind"] == "list"
    article = next(b for b in blocks if b["text"].startswith("The city council"))
    assert article["label"] == "content" and article["kind"] == "paragraph"

    # an upload of the same bytes is the same page
    encoded = base64.b64encode(PAGE.encode()).decode()
    status, upload = request(
        base + "/api/annotate/load",
        method="POST",
        data={"name": "x/news.html", "html_base64": encoded},
    )
    assert status == 200 and upload["html_sha256"] == page["html_sha256"]
    assert upload["source"] == "news.html"

    blocks[0]["label"] = "content"
    blocks[1]["kind"] = "paragraph"
    saved = {key: page[key] for key in ("source", "html_sha256", "parser", "format", "version")}
    saved["blocks"] = [
        {key: b[key] for key in ("index", "text", "tag_path", "label", "kind")} for b in blocks
    ]
    status, answer = request(base + "/api/annotate/save", method="POST", data=saved)
    assert status == 200 and answer["blocks"] == len(blocks)
    on_disk = read_annotation(labels / answer["saved"])
    assert on_disk.to_dict() == saved
    status, again = request(base + "/api/annotate/load", method="POST", data={"path": "news.html"})
    assert again["saved"] is True
    assert again["blocks"][0]["label"] == "content"
    assert again["blocks"][0]["predicted_label"] == "boilerplate"


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        ({"path": "../secret.html"}, 403, "path_outside_folder"),
        ({"path": "/etc/passwd"}, 403, "path_outside_folder"),
        ({"path": "escape.html"}, 403, "path_outside_folder"),
        ({"path": "missing.html"}, 404, "page_not_found"),
        ({"path": "a" * 300}, 404, "page_not_found"),  # a name too long for the file system
        ({"path": ""}, 422, "invalid_path"),
        ({"name": "a.html", "html_base64": "not base64!"}, 422, "invalid_input"),
        (
            {"name": "a.pdf", "html_base64": base64.b64encode(b"%PDF-1.4\x00\x01\x02").decode()},
            422,
            "binary_content",
        ),
        ({}, 422, "missing_input"),
        (  # as /api/clean refuses it: one element of 8,000 attributes
            {"html_base64": base64.b64encode(b"<p" + b" a" * 8_000 + b">Hi.</p>").decode()},
            413,
            "too_large",
        ),
    ],
)
def test_annotation_load_errors(base, payload, status, code):
    got, answer = request(base + "/api/annotate/load", method="POST", data=payload)
    assert (got, answer["error"]["code"]) == (status, code), answer


def test_annotation_load_keeps_the_cleaners_limits(tmp_path):
    settings = WebSettings(pages_dir=str(tmp_path))
    page = base64.b64encode(b"<p>A paragraph.</p>" * 50).decode()
    with running(create_web_app(settings, CleanerSettings(max_blocks=10))) as url:
        status, answer = request(
            url + "/api/annotate/load", method="POST", data={"html_base64": page}
        )
    assert (status, answer["error"]["code"]) == (413, "too_large")  # as /api/clean answers


def test_annotation_save_errors(base):
    good = {"source": "a.html", "html_sha256": "0" * 64, "blocks": []}
    for change, code in [
        ({"html_sha256": "abc"}, "invalid_annotation"),
        (
            {"blocks": [{"index": 0, "text": "x", "tag_path": "p", "label": "x", "kind": "list"}]},
            "invalid_annotation",
        ),
        ({"source": ""}, "invalid_annotation"),
        (  # a lone surrogate: valid JSON, no Unicode to write
            {
                "blocks": [
                    {
                        "index": 0,
                        "text": "\ud800",
                        "tag_path": "p",
                        "label": "content",
                        "kind": "paragraph",
                    }
                ]
            },
            "invalid_annotation",
        ),
    ]:
        status, answer = request(
            base + "/api/annotate/save", method="POST", data={**good, **change}
        )
        assert (status, answer["error"]["code"]) == (422, code)


def test_folders_off_by_default():
    with running(create_web_app()) as url:
        assert request(url + "/api/annotate/pages")[1] == {"enabled": False, "pages": []}
        status, answer = request(url + "/api/annotate/load", method="POST", data={"path": "a.html"})
        assert (status, answer["error"]["code"]) == (403, "pages_dir_disabled")
        status, answer = request(
            url + "/api/annotate/save",
            method="POST",
            data={"source": "a.html", "html_sha256": "0" * 64, "blocks": []},
        )
        assert (status, answer["error"]["code"]) == (403, "annotations_disabled")


# --- URL fetching ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def origin():
    """A local site to fetch from: a page, a redirect to it, a big page and a 404."""
    from aiohttp import web

    async def page(request):
        return web.Response(text=PAGE, content_type="text/html")

    async def redirect(request):
        raise web.HTTPFound("/page")

    async def big(request):
        return web.Response(text="<p>" + "word " * 100_000 + "</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/redirect", redirect)
    app.router.add_get("/big", big)

    async def bad_redirect(request):
        return web.Response(status=302, headers={"Location": "http://[::1"})

    app.router.add_get("/bad-redirect", bad_redirect)
    with running(app) as url:
        yield url


def test_fetching_refuses_private_addresses_unless_allowed(origin):
    settings = WebSettings(fetch_urls=True, max_fetch_bytes=100_000, fetch_timeout_seconds=5)
    with running(create_web_app(settings)) as url:
        port = origin.rsplit(":", 1)[1]
        loopback = ("127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "[::7f00:1]",
                    "[64:ff9b::7f00:1]", "[2002:7f00:1::1]")  # fmt: skip
        for target in (f"http://{host}:{port}/page" for host in loopback):
            status, answer = clean(url, url=target)
            assert (status, answer["error"]["code"]) == (403, "address_not_allowed"), target
        long_label = "http://" + "a" * 64 + ".example/"  # IDNA refuses labels over 63
        for target in ("ftp://example.org/a", "file:///etc/passwd", "http:///nohost", long_label):
            status, answer = clean(url, url=target)
            assert (status, answer["error"]["code"]) == (422, "invalid_url"), target
    with running(create_web_app(settings.with_options(fetch_private=True))) as url:
        status, doc = clean(url, url=origin + "/redirect")
        assert status == 200, doc
        assert doc["url"] == origin + "/page"
        assert by_text(doc)["Menu"]["kept"] is False
        status, answer = clean(url, url=origin + "/big")
        assert (status, answer["error"]["code"]) == (413, "fetch_too_large")
        for path in ("/missing", "/bad-redirect"):
            status, answer = clean(url, url=origin + path)
            assert (status, answer["error"]["code"]) == (502, "fetch_failed"), path


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700::1111", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("192.168.0.1", False),
        ("172.16.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("::1", False),
        ("fe80::1%eth0", False),
        ("fd00::1", False),
        ("::ffff:127.0.0.1", False),
        ("224.0.0.1", False),
        # IPv6 forms that stand for an IPv4 address are judged as that address
        ("::7f00:1", False),  # IPv4-compatible 127.0.0.1
        ("::a9fe:a9fe", False),  # IPv4-compatible 169.254.169.254
        ("::ffff:0:7f00:1", False),  # IPv4-translated (SIIT)
        ("64:ff9b::7f00:1", False),  # NAT64's well-known prefix
        ("64:ff9b::a00:1", False),
        ("64:ff9b::808:808", True),
        ("64:ff9b:1::808:808", False),  # NAT64's local-use prefix
        # tunnels: the IPv6 address and each IPv4 endpoint it carries must be public
        ("2002:7f00:1::1", False),  # 6to4 through 127.0.0.1
        ("2002:a9fe:a9fe::1", False),
        ("2002:808:808::1", True),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False),  # Teredo
        ("2606:4700::5efe:7f00:1", False),  # ISATAP to 127.0.0.1 under a public prefix
        ("2606:4700::200:5efe:a00:1", False),
        ("2606:4700::200:5efe:808:808", True),
    ],
)
def test_is_public_address(address, public):
    assert is_public_address(address) is public


def test_resolve_under(tmp_path):
    (tmp_path / "a.html").write_text("x")
    assert resolve_under(tmp_path, "a.html") == (tmp_path / "a.html").resolve()
    assert resolve_under(tmp_path, "sub/../a.html") == (tmp_path / "a.html").resolve()


def test_settings_from_env_and_model_specs():
    settings = WebSettings.from_env(
        {
            "STREAM_CLEANER_WEB_FETCH_URLS": "true",
            "STREAM_CLEANER_WEB_MAX_BODY_BYTES": "1000",
            "STREAM_CLEANER_WEB_MODELS": "tiny=/m/tiny.klm, de=/m/de.klm",
            "STREAM_CLEANER_WEB_PAGES_DIR": "/pages",
        }
    )
    assert settings.fetch_urls is True and settings.max_body_bytes == 1000
    assert settings.models == (("tiny", "/m/tiny.klm"), ("de", "/m/de.klm"))
    assert settings.pages_dir == "/pages" and settings.annotations_dir is None
    with pytest.raises(ValueError, match="NAME=PATH"):
        parse_model_specs(["tiny"])
    with pytest.raises(ValueError, match="unique"):
        WebSettings(models=(("default", "/x"),))
    for bad in ({"max_connections": 0}, {"header_timeout_seconds": 0}):
        with pytest.raises(ValueError, match="positive"):
            WebSettings(**bad)


# --- the worker's web server -----------------------------------------------------------------


def test_the_worker_serves_the_demo_and_api_only_when_enabled(tmp_path):
    from stream_cleaner.streaming.app import WorkerSettings, create_app, runtime_of

    app = create_app(WorkerSettings(datadir=str(tmp_path), web=WebSettings(enabled=True)))
    runtime = runtime_of(app)
    try:
        with running(app.web.web_app) as url:
            status, doc = clean(url, html=PAGE, max_perplexity=5000, mode="perplexity")
            assert status == 200 and by_text(doc)["Menu"]["kept"] is False
            assert by_text(doc)["Home"]["kept"] is True  # 4,146 is under 5,000
            status, answer = clean(url, html=PAGE, model="nope")
            assert (status, answer["error"]["code"]) == (422, "unknown_model")
            status, answer = request(url + "/api/clean", method="POST", body=b"[1")
            assert (status, answer["error"]["code"]) == (400, "malformed_json")
            status, score = request(url + "/api/perplexity?text=The+council+met.")
            assert status == 200 and score["perplexity"] > 0
            status, html = request(url + "/demo")
            assert status == 200 and "Perplexity limit" in html
            assert request(url + "/api/openapi.json")[0] == 200
            assert request(url + "/healthz")[0] == 200
            # cleaned in a child process at the lowest priority, not on the stream's thread
            child = runtime.demo_executor.pid
            assert child is not None and os.getpriority(os.PRIO_PROCESS, child) == 19
            assert os.sched_getscheduler(child) == os.SCHED_IDLE
    finally:
        runtime.executor.shutdown(wait=False)
        runtime.demo_executor.shutdown()

    off = create_app(WorkerSettings(datadir=str(tmp_path)))  # the default
    try:
        with running(off.web.web_app) as url:
            assert request(url + "/api/clean", method="POST", data={"html": PAGE})[0] in (404, 405)
            assert request(url + "/demo")[0] == 404
            assert request(url + "/healthz")[0] == 200
    finally:
        runtime_of(off).executor.shutdown(wait=False)
    assert runtime_of(off).demo_executor is None


def test_serve_refuses_a_missing_model(capsys):
    from stream_cleaner.cli import main

    assert main(["serve", "--add-model", "x=/nonexistent/model.klm"]) == 1
    assert "no model file /nonexistent/model.klm" in capsys.readouterr().err


def test_unknown_routes_and_methods_answer_json(base):
    status, answer = request(base + "/api/nothing")
    assert (status, answer["error"]["code"]) == (404, "not_found")
    status, answer = request(base + "/api/clean")
    assert (status, answer["error"]["code"]) == (405, "method_not_allowed")


def test_a_model_whose_file_is_missing_is_a_server_error(tmp_path):
    settings = WebSettings(models=(("gone", str(tmp_path / "gone.klm")),))
    with running(create_web_app(settings)) as url:
        status, answer = clean(url, text=ARTICLE, model="gone")
    assert (status, answer["error"]["code"]) == (500, "model_unavailable")


def test_modes_are_the_cores_and_reach_the_settings():
    from stream_cleaner.settings import MODES, CleanerSettings
    from stream_cleaner.web.api import DemoApi

    api = DemoApi()
    try:
        assert api.config()["modes"] == list(MODES)
        assert api.config()["mode"] == CleanerSettings().mode
        assert api._mode_of("article") == "article"
        with pytest.raises(ApiError, match="unknown mode"):
            api._mode_of("fancy")
        settings = api.settings_for("perplexity", 100.0)
        assert (settings.mode, settings.max_sentence_perplexity) == ("perplexity", 100.0)
        assert settings.sentence_filter == CleanerSettings().sentence_filter
        assert api.settings_for("auto", 100.0, "on").sentence_filter == "on"
        assert api.config()["sentence_filter"] == CleanerSettings().sentence_filter
    finally:
        api.close()
