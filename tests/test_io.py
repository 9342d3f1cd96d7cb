"""Readers and writers of stream_cleaner.io, on inputs built here from literals."""

from __future__ import annotations

import base64
import gzip
import io
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import orjson
import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from stream_cleaner.document import CleanedDocument, RawDocument, ScoredSentence
from stream_cleaner.io import (
    JsonlWriter,
    ReaderError,
    ReadStats,
    Source,
    TextTreeWriter,
    WarcWriter,
    count_documents,
    iter_documents,
)

PAGES = [
    f"<html><head><title>Page {i}</title></head><body><p>Hello number {i}. "
    f"The quick brown fox jumps over the lazy dog.</p></body></html>".encode()
    for i in range(3)
]


# --- helpers -------------------------------------------------------------------------------


def warc_members(*, gz: bool = True, pages: list[bytes] = PAGES) -> list[tuple[str, bytes]]:
    """``(WARC-Type, bytes)`` per record: warcinfo, then request, response, metadata per page.

    Each record is written on its own, so with ``gz`` each is one gzip member.
    """
    members: list[tuple[str, bytes]] = []

    def add(kind: str, build: Callable[[WARCWriter], ArcWarcRecord]) -> None:
        buf = io.BytesIO()
        writer = WARCWriter(buf, gzip=gz)
        writer.write_record(build(writer))
        members.append((kind, buf.getvalue()))

    add("warcinfo", lambda w: w.create_warcinfo_record("test.warc.gz", {"software": "test"}))
    for i, page in enumerate(pages):
        url = f"http://example.com/{i}"
        request_headers = StatusAndHeaders(
            f"GET /{i} HTTP/1.1", [("Host", "example.com")], is_http_request=True
        )
        response_headers = StatusAndHeaders(
            "200 OK",
            [("content-type", "text/html; charset=utf-8"), ("Content-Length", str(len(page)))],
            protocol="HTTP/1.1",
        )
        add(
            "request",
            lambda w, url=url, h=request_headers: w.create_warc_record(
                url, "request", payload=io.BytesIO(b""), http_headers=h
            ),
        )
        add(
            "response",
            lambda w, url=url, page=page, h=response_headers: w.create_warc_record(
                url, "response", payload=io.BytesIO(page), http_headers=h
            ),
        )
        add(
            "metadata",
            lambda w, url=url: w.create_warc_record(
                url,
                "metadata",
                payload=io.BytesIO(b"fetchTimeMs: 12\r\n"),
                warc_content_type="application/warc-fields",
            ),
        )
    return members


def record_id(member: bytes) -> str:
    raw = gzip.decompress(member) if member[:2] == b"\x1f\x8b" else member
    match = re.search(rb"WARC-Record-ID: (<[^>]+>)", raw)
    assert match is not None
    return match.group(1).decode()


def read_all(
    paths: list[str | Path], *, stdin: BinaryIO | None = None
) -> tuple[list[Source], ReadStats]:
    stats = ReadStats()
    return list(iter_documents(paths, stdin=stdin, stats=stats)), stats


def write_responses(
    path: Path, responses: list[tuple[str, str, list[tuple[str, str]], bytes]], *, gz: bool
) -> Path:
    """A WARC of HTTP responses ``(uri, status, headers, payload)``, written to ``path``."""
    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=gz)
    for uri, status, headers, payload in responses:
        http = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
        record = writer.create_warc_record(
            uri, "response", payload=io.BytesIO(payload), http_headers=http
        )
        writer.write_record(record)
    path.write_bytes(buf.getvalue())
    return path


def assert_every_record_accounted(stats: ReadStats) -> None:
    """For WARC-only input: every record seen was either yielded or skipped, by count."""
    assert sum(stats.warc_records.values()) == stats.documents + sum(stats.skipped.values())


def cleaned(source: Source, text: str = "Hello number 0.") -> CleanedDocument:
    """A CleanedDocument as the core would make it, without running the core."""
    raw = source.doc
    error = detail = None
    if raw.error is not None:
        error, _, detail = raw.error.partition(": ")
    sentences = (
        ()
        if error
        else (
            ScoredSentence(text, 0, -12.5, 3, 0, 1333.5, True, None),
            ScoredSentence("Home | Login", 1, -20.0, 2, 1, 4641.6, False, "high_perplexity"),
        )
    )
    return CleanedDocument(
        id=raw.id,
        url=raw.url,
        text="" if error else text,
        sentences=sentences,
        perplexity=None if error else 2154.4,
        kept_perplexity=None if error else 1333.5,
        dropped={} if error else {"high_perplexity": 1},
        n_blocks=0 if error else 2,
        encoding=None if error else "utf-8",
        model_id="tiny-test",
        seconds={"total": 0.001},
        error=error,
        error_detail=detail,
    )


# --- files and trees -----------------------------------------------------------------------


def test_a_file_is_one_page_read_as_bytes(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(b"\xef\xbb\xbf<p>caf\xc3\xa9</p>")

    sources, stats = read_all([page])

    assert sources == [
        Source(RawDocument(body=page.read_bytes(), id=str(page)), str(page), "page.html")
    ]
    assert (stats.files, stats.documents, stats.failed) == (1, 1, 0)


def test_a_directory_is_walked_sorted_without_hidden_files(tmp_path: Path) -> None:
    root = tmp_path / "site"
    files = {
        "b.html": b"<p>b</p>",
        "notes.txt": b"plain notes",
        "a/z.htm": b"<p>z</p>",
        "a/pages.jsonl": b'{"body": "<p>one</p>"}\n{"id": "two", "html": "<p>two</p>"}\n',
        "a/b/deep.html": b"<p>deep</p>",
        ".hidden.html": b"<p>hidden</p>",
        ".git/config.html": b"<p>git</p>",
        "a/.DS_Store": b"\x00\x01",
    }
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)

    sources, stats = read_all([root])

    assert [s.relpath for s in sources] == [
        "b.html",
        "a/pages.jsonl/line-1",
        "a/pages.jsonl/two",
        "a/z.htm",
        "a/b/deep.html",
    ]
    assert sources[0].doc == RawDocument(body=b"<p>b</p>", id=str(root / "b.html"))
    assert sources[0].origin == str(root / "b.html")
    assert sources[1].doc.body == "<p>one</p>"
    assert sources[1].origin == f"jsonl:{root / 'a/pages.jsonl'}:1"
    assert sources[4].doc.id == str(root / "a/b/deep.html")
    assert (stats.files, stats.documents, stats.failed) == (4, 5, 0)
    assert stats.skipped == {"file_not_page": 1}  # notes.txt


def test_a_directory_walk_passes_over_fifos_and_devices(tmp_path: Path) -> None:
    import os

    (tmp_path / "a.html").write_bytes(b"<p>a</p>")
    os.mkfifo(tmp_path / "fifo.html")  # reading it would wait for a writer forever
    (tmp_path / "zero.html").symlink_to("/dev/zero")  # reading it would never end
    (tmp_path / "z.html").write_bytes(b"<p>z</p>")
    sources, stats = read_all([tmp_path])
    assert [s.relpath for s in sources] == ["a.html", "z.html"]
    assert stats.skipped["file_not_regular"] == 2


def test_a_path_that_cannot_be_read_is_an_error_document_and_reading_goes_on(
    tmp_path: Path,
) -> None:
    (tmp_path / "page.html").write_bytes(PAGES[0])
    missing = tmp_path / "nonexistent" / "path.html"

    sources, stats = read_all([missing, tmp_path / "page.html"])

    assert [s.origin for s in sources] == [str(missing), str(tmp_path / "page.html")]
    assert sources[0].doc.id == str(missing)
    assert sources[0].relpath == "path.html"
    assert sources[0].doc.error == "read_error: cannot open: No such file or directory"
    assert sources[1].doc.body == PAGES[0]
    assert (stats.files, stats.documents, stats.failed) == (1, 2, 1)


def test_usage_errors_are_raised_before_reading() -> None:
    with pytest.raises(ValueError, match="only once"):
        iter_documents(["-", "-"], stdin=io.BytesIO(b""))


# --- WARC ----------------------------------------------------------------------------------


def test_warc_gz_yields_each_response_with_headers_url_and_id(tmp_path: Path) -> None:
    members = warc_members()
    path = tmp_path / "crawl.warc.gz"
    path.write_bytes(b"".join(data for _, data in members))
    response_ids = [record_id(data) for kind, data in members if kind == "response"]

    sources, stats = read_all([path])

    assert [s.doc.id for s in sources] == response_ids
    assert [s.doc.url for s in sources] == [f"http://example.com/{i}" for i in range(3)]
    assert [s.doc.body for s in sources] == PAGES
    for source in sources:
        assert source.doc.error is None
        assert source.doc.headers["Content-Type"] == "text/html; charset=utf-8"
        assert source.doc.headers["Content-Length"] == str(len(source.doc.body))
        assert source.origin.startswith(f"warc:{path}#")
        assert source.relpath is not None
        assert source.relpath.startswith("crawl.warc.gz/urn_uuid_")
    offsets = [int(s.origin.rsplit("#", 1)[1]) for s in sources]
    starts = [sum(len(d) for _, d in members[:i]) for i, (k, _) in enumerate(members)]
    assert offsets == [
        start for start, (k, _) in zip(starts, members, strict=True) if k == "response"
    ]
    assert stats.warc_records == {"warcinfo": 1, "request": 3, "response": 3, "metadata": 3}
    assert stats.skipped == {"warcinfo": 1, "request": 3, "metadata": 3}
    assert (stats.documents, stats.failed) == (3, 0)
    assert_every_record_accounted(stats)


@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "plain"])
def test_a_warc_is_recognised_by_its_first_bytes(tmp_path: Path, gz: bool) -> None:
    path = tmp_path / "crawl.bin"
    path.write_bytes(b"".join(data for _, data in warc_members(gz=gz)))

    sources, _ = read_all([path])

    assert [s.doc.body for s in sources] == PAGES


def test_resource_records_are_yielded_only_when_html(tmp_path: Path) -> None:
    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True)
    for uri, content_type, body in [
        ("file:///a.html", "text/html; charset=iso-8859-1", b"<p>caf\xe9</p>"),
        ("file:///logo.png", "image/png", b"\x89PNG\r\n"),
        ("file:///b.xhtml", "application/xhtml+xml", b"<p>b</p>"),
    ]:
        record = writer.create_warc_record(
            uri, "resource", payload=io.BytesIO(body), warc_content_type=content_type
        )
        writer.write_record(record)
    path = tmp_path / "files.warc.gz"
    path.write_bytes(buf.getvalue())

    sources, stats = read_all([path])

    assert [(s.doc.url, s.doc.content_type, s.doc.body) for s in sources] == [
        ("file:///a.html", "text/html; charset=iso-8859-1", b"<p>caf\xe9</p>"),
        ("file:///b.xhtml", "application/xhtml+xml", b"<p>b</p>"),
    ]
    assert all(s.doc.headers == {} for s in sources)
    assert stats.skipped == {"resource_not_html": 1}


def test_chunked_and_gzip_coded_payloads_are_decoded(tmp_path: Path) -> None:
    page = PAGES[0]
    coded = gzip.compress(page)
    chunked = (
        b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (coded[:20], coded[20:]))
        + b"0\r\n\r\n"
    )
    headers = [
        ("Content-Type", "text/html"),
        ("Transfer-Encoding", "chunked"),
        ("Content-Encoding", "gzip"),
    ]
    path = write_responses(
        tmp_path / "coded.warc", [("http://example.com/", "200 OK", headers, chunked)], gz=False
    )

    sources, _ = read_all([path])

    assert [s.doc.body for s in sources] == [page]
    # undone here: the cleaner must not try them again on the decoded bytes
    assert sources[0].doc.headers == {"Content-Type": "text/html"}


def test_responses_that_are_not_pages_fetched_whole_are_skipped_and_counted(
    tmp_path: Path,
) -> None:
    # a crawl's WARC holds every response: cleaned as pages, style sheets and scripts put
    # their code into the corpus, and 404 pages their "Not Found"
    page = b"<html><body><p>The council met on Tuesday.</p></body></html>"
    responses = [
        ("200 OK", "text/html; charset=utf-8", page, "page"),
        ("200 OK", "text/css", b"body { color: red }", None),
        ("200 OK", "application/javascript", b"var x = 1;", None),
        ("200 OK", "image/png", b"\x89PNG\r\n\x1a\n", None),
        ("200 OK", "application/json", b'{"a": "b"}', None),
        ("404 Not Found", "text/html", b"<h1>Not Found</h1>", None),
        ("301 Moved Permanently", "text/html", b"", None),
        ("503 Service Unavailable", "text/html", b"<p>busy</p>", None),
        ("200 OK", "text/plain", b"Plain text.", "text"),
        ("200 OK", "application/xhtml+xml", page, "xhtml"),
        ("200 OK", "application/octet-stream", page, "untyped"),
        ("206 Partial Content", "text/html", page, "partial"),
    ]
    path = write_responses(
        tmp_path / "crawl.warc.gz",
        [
            (f"http://example.com/{name or status[:3] + kind}", status,
             [("Content-Type", kind)], body)
            for status, kind, body, name in responses
        ],
        gz=True,
    )  # fmt: skip

    sources, stats = read_all([path])

    kept = [f"http://example.com/{name}" for *_, name in responses if name]
    assert [s.doc.url for s in sources] == kept
    assert stats.skipped == {
        "response_not_page": 4,
        "response_status_3xx": 1,
        "response_status_4xx": 1,
        "response_status_5xx": 1,
    }
    assert stats.warc_records == {"response": len(responses)}


def test_a_directory_walk_passes_over_style_sheets_scripts_and_images(tmp_path: Path) -> None:
    # a saved site (wget --mirror) holds them beside its pages; cleaned as pages, their code
    # went into the output
    for name in ["a.html", "style.CSS", "app.js", "logo.png", "font.woff2", "sub/b.htm"]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"<p>x</p>")

    sources, stats = read_all([tmp_path])
    named, _ = read_all([tmp_path / "app.js"])

    assert [s.relpath for s in sources] == ["a.html", "sub/b.htm"]
    assert stats.skipped == {"file_not_page": 4}
    assert len(named) == 1  # a file named on its own is read


def test_a_directory_walk_passes_over_text_files_that_are_no_page(tmp_path: Path) -> None:
    # a folder's README, notes, robots.txt, sitemaps and feeds, data: cleaned as pages, a
    # README was one more "document" (clean samples/ gave 7, stack 6)
    pages = ["index.html", "about", "page.php", "sub/b.htm", "sub/c.xhtml"]
    texts = ["README.md", "notes.txt", "robots.txt", "sitemap.xml", "feed.rss", "data.csv",
             "sub/LICENSE.rst", "sub/config.yaml"]  # fmt: skip
    for name in pages + texts:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"<p>x</p>")

    sources, stats = read_all([tmp_path])
    named, _ = read_all([tmp_path / "README.md"])

    assert [s.relpath for s in sources] == ["about", "index.html", "page.php", "sub/b.htm",
                                            "sub/c.xhtml"]  # fmt: skip
    assert stats.skipped == {"file_not_page": len(texts)}
    assert len(named) == 1  # a file named on its own is read


def test_a_walk_reads_a_file_without_a_suffix_only_when_it_starts_as_a_page(tmp_path: Path) -> None:
    # wget saves example.org/about as "about"; a folder's LICENSE or Makefile is no page
    files = {
        "about": b"\xef\xbb\xbf\n  <!DOCTYPE html><p>About us.</p>",
        "team": b"Our team: <div>x</div>",  # markup after a line of text
        "LICENSE": b"Apache License\nVersion 2.0, January 2004\n",
        "Makefile": b"all:\n\tcc -o x x.c\n",
        "run": b"#!/bin/sh\necho 1 < /dev/null\n",
    }
    for name, body in files.items():
        (tmp_path / name).write_bytes(body)

    sources, stats = read_all([tmp_path])
    named, _ = read_all([tmp_path / "LICENSE"])

    assert [s.relpath for s in sources] == ["about", "team"]
    assert stats.skipped == {"file_not_page": 3}
    assert len(named) == 1  # a file named on its own is read


def test_the_documents_of_files_and_trees_are_counted_before_reading(tmp_path: Path) -> None:
    import os

    for name in ["a.html", "README.md", "style.css", ".hidden.html", "sub/b.htm", "sub/c"]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"<p>x</p>")
    os.mkfifo(tmp_path / "fifo.html")
    page = tmp_path / "a.html"
    paths: list[str | Path] = [tmp_path, page, tmp_path / "missing.html"]

    sources, _ = read_all(paths)

    # the walk's own rule: not the README, the style sheet, hidden files or the FIFO
    assert count_documents(paths) == len(sources) == 5
    (tmp_path / "out.jsonl").write_bytes(b"")  # where the output goes: never read
    assert count_documents(paths, exclude=[tmp_path / "out.jsonl"]) == 5
    (tmp_path / "out.jsonl").unlink()
    # a WARC or JSON Lines file holds any number of documents, stdin anything
    for other in ["crawl.warc.gz", "pages.jsonl", "sub/more.ndjson"]:
        (tmp_path / other).write_bytes(b"")
        assert count_documents([tmp_path]) is None
        assert count_documents([page, tmp_path / other]) is None
        (tmp_path / other).unlink()
    assert count_documents([page, "-"]) is None
    assert count_documents([page]) == 1


def test_gzipped_pages_are_read_gunzipped_from_files_and_stdin(tmp_path: Path) -> None:
    page = PAGES[0]
    (tmp_path / "page.html.gz").write_bytes(gzip.compress(page))
    (tmp_path / "broken.html.gz").write_bytes(b"\x1f\x8b\x08\x00" + bytes(40))

    sources, _ = read_all([tmp_path])
    from_stdin, _ = read_all(["-"], stdin=io.BytesIO(gzip.compress(page)))

    broken, good = sources
    assert good.doc.body == page
    assert broken.doc.error.startswith("read_error: broken gzip data")
    assert [s.doc.body for s in from_stdin] == [page]


def test_brotli_coded_payloads_are_decoded(tmp_path: Path) -> None:
    import cramjam

    page = PAGES[0]
    headers = [("Content-Type", "text/html"), ("Content-Encoding", "br")]
    coded = bytes(cramjam.brotli.compress(page))
    path = write_responses(
        tmp_path / "br.warc.gz", [("http://example.com/", "200 OK", headers, coded)], gz=True
    )

    sources, _ = read_all([path])

    assert [s.doc.body for s in sources] == [page]


def _corrupt(member: bytes, how: str) -> bytes:
    """One gzip member broken in one of the ways real WARC files break."""
    raw = gzip.decompress(member)
    if how == "flipped_bytes":
        middle = len(member) // 2
        return (
            member[:middle]
            + bytes(b ^ 0xFF for b in member[middle : middle + 8])
            + member[middle + 8 :]
        )
    if how == "truncated_member":
        return member[: len(member) // 2]
    if how == "bad_http_header":
        return gzip.compress(raw.replace(b"HTTP/1.1 200 OK", b"\x00\x01 garbage 200", 1))
    if how == "block_shorter_than_content_length":
        return gzip.compress(raw[:-60] + b"\r\n\r\n")
    if how == "bad_content_length":
        return gzip.compress(re.sub(rb"Content-Length: \d+", b"Content-Length: many", raw, count=1))
    if how == "bad_version_line":
        return gzip.compress(raw.replace(b"WARC/1.0", b"WARX/1.0", 1))
    raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    [
        "flipped_bytes",
        "truncated_member",
        "bad_http_header",
        "block_shorter_than_content_length",
        "bad_content_length",
        "bad_version_line",
    ],
)
def test_a_broken_record_in_warc_gz_is_an_error_document_between_the_good_ones(
    tmp_path: Path, how: str
) -> None:
    members = warc_members()
    responses = [i for i, (kind, _) in enumerate(members) if kind == "response"]
    broken = responses[1]
    data = [d for _, d in members]
    data[broken] = _corrupt(data[broken], how)
    path = tmp_path / "crawl.warc.gz"
    path.write_bytes(b"".join(data))

    sources, stats = read_all([path])

    assert len(sources) == 3
    good = [sources[0], sources[2]]
    assert [s.doc.body for s in good] == [PAGES[0], PAGES[2]]
    assert [s.doc.id for s in good] == [
        record_id(members[i][1]) for i in (responses[0], responses[2])
    ]
    error = sources[1].doc
    assert error.body == b""
    assert error.error is not None
    assert error.error.startswith(f"{ReaderError.WARC_RECORD}: ")
    offset = sum(len(d) for d in data[:broken])
    assert sources[1].origin == f"warc:{path}#{offset}"
    assert (stats.documents, stats.failed) == (3, 1)
    assert_every_record_accounted(stats)


class Trickle(io.RawIOBase):
    """A pipe that hands over a few bytes per read, as a slow network stream does."""

    def __init__(self, data: bytes, step: int = 5) -> None:
        self._data = data
        self._pos = 0
        self._step = step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), self._step, len(self._data) - self._pos)
        buffer[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n


def test_a_checksum_error_at_the_end_of_a_gzip_member_fails_its_own_record() -> None:
    # Read a few bytes at a time, the whole record is out of zlib before it reads the CRC
    # that says the member is corrupt; the record must still be the one that fails.
    # Incompressible, so that the broken member starts after the bytes read to sniff stdin.
    first = b"<p>" + random.Random(0).randbytes(6000) + b"</p>"
    members = warc_members(pages=[first, PAGES[1], PAGES[2]])
    data = [d for _, d in members]
    crc_at = len(data[5]) - 8
    data[5] = data[5][:crc_at] + bytes([data[5][crc_at] ^ 0xFF]) + data[5][crc_at + 1 :]

    sources, stats = read_all(["-"], stdin=Trickle(b"".join(data)))

    assert [s.doc.body for s in sources] == [first, b"", PAGES[2]]
    broken = sources[1].doc
    assert (broken.id, broken.url) == (record_id(members[5][1]), "http://example.com/1")
    assert broken.error is not None
    assert "incorrect data check" in broken.error
    assert "unreadable" not in stats.warc_records
    assert_every_record_accounted(stats)


def test_warc_gz_cut_inside_a_record_ends_with_an_error_document(tmp_path: Path) -> None:
    members = warc_members()
    data = b"".join(d for _, d in members[:5])
    cut = data + members[5][1][: len(members[5][1]) // 2]
    path = tmp_path / "cut.warc.gz"
    path.write_bytes(cut)

    sources, stats = read_all([path])

    assert [s.doc.body for s in sources] == [PAGES[0], b""]
    assert sources[1].doc.error is not None
    assert "the input ends inside a gzip member" in sources[1].doc.error
    assert f"rest of the file from byte {len(data)} skipped" in sources[1].doc.error
    assert stats.failed == 1
    assert_every_record_accounted(stats)


def test_unreadable_rest_of_warc_gz_is_one_error_document_with_its_offset(
    tmp_path: Path,
) -> None:
    members = warc_members()
    head = b"".join(d for _, d in members[:4])
    path = tmp_path / "crawl.warc.gz"
    path.write_bytes(head + bytes(range(256)) * 20)

    sources, stats = read_all([path])

    assert len(sources) == 2
    assert sources[0].doc.body == PAGES[0]
    assert sources[1].origin == f"warc:{path}#{len(head)}"
    assert sources[1].doc.error == (
        f"{ReaderError.WARC_RECORD}: 5120 bytes that are not gzip data; no readable gzip member"
        " after them: rest of the file skipped"
    )
    assert stats.warc_records["unreadable"] == 1


def test_a_wrong_content_length_in_a_plain_warc_does_not_take_the_next_records_down(
    tmp_path: Path,
) -> None:
    members = warc_members(gz=False)
    data = [d for _, d in members]
    broken = 5  # the second response
    data[broken] = re.sub(
        rb"Content-Length: (\d+)",
        lambda m: b"Content-Length: %d" % (int(m.group(1)) + 300),
        data[broken],
        count=1,
    )
    path = tmp_path / "crawl.warc"
    path.write_bytes(b"".join(data))

    sources, stats = read_all([path])

    assert [s.doc.body for s in sources] == [PAGES[0], b"", PAGES[2]]
    assert sources[1].doc.id == record_id(members[broken][1])
    assert sources[1].doc.url == "http://example.com/1"
    assert sources[1].doc.error is not None
    assert "reading resumed at byte" in sources[1].doc.error
    assert stats.warc_records["metadata"] == 3  # the record after the broken one is found
    assert_every_record_accounted(stats)


def test_a_plain_warc_cut_inside_a_record_ends_with_an_error_document(tmp_path: Path) -> None:
    data = b"".join(d for _, d in warc_members(gz=False))
    last_response = data.rfind(b"WARC/1.0\r\nWARC-Type: response")
    path = tmp_path / "cut.warc"
    path.write_bytes(data[: last_response + 500])

    sources, stats = read_all([path])

    assert [s.doc.body for s in sources] == [PAGES[0], PAGES[1], b""]
    assert sources[2].doc.error is not None
    assert "block truncated" in sources[2].doc.error
    assert sources[2].origin == f"warc:{path}#{last_response}"
    assert_every_record_accounted(stats)


# --- JSON Lines ----------------------------------------------------------------------------


def test_a_bad_json_line_that_names_its_id_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "pages.jsonl"
    path.write_bytes(b'{"id": "doc-9", "url": "http://n/", "body_base64": "***"}\n{"id": true}\n')

    (named, unnamed), _ = read_all([path])

    assert (named.doc.id, named.doc.url) == ("doc-9", "http://n/")
    assert "body_base64 is not valid base64" in named.doc.error
    assert unnamed.doc.id == f"{path}:2"


def test_jsonl_fields_and_bad_lines_become_documents_or_errors(tmp_path: Path) -> None:
    lines = [
        b'{"id": "a", "url": "http://a/", "body": "<p>a</p>",'
        b' "headers": {"Content-Type": "text/html; charset=utf-8"}}',
        b'{"body_base64": "' + base64.b64encode(b"<p>caf\xe9</p>") + b'",'
        b' "content_type": "text/html; charset=latin-1"}',
        b'{"id": 7, "html": "<p>seven</p>"}',
        b"",
        b'{"id": "broken", "body": ',
        b'["not", "an", "object"]',
        b'{"url": "http://nobody/"}',
        b'{"body": 42}',
        b'{"body_base64": "***"}',
        b'{"html": "<p>last</p>"}',
    ]
    path = tmp_path / "pages.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")

    sources, stats = read_all([path])

    assert len(sources) == 9
    ok = [s for s in sources if s.doc.error is None]
    assert [s.doc for s in ok] == [
        RawDocument(
            body="<p>a</p>",
            id="a",
            url="http://a/",
            headers={"Content-Type": "text/html; charset=utf-8"},
        ),
        RawDocument(
            body=b"<p>caf\xe9</p>", id=f"{path}:2", content_type="text/html; charset=latin-1"
        ),
        RawDocument(body="<p>seven</p>", id="7"),
        RawDocument(body="<p>last</p>", id=f"{path}:10"),
    ]
    assert [s.relpath for s in ok] == [
        "pages.jsonl/a",
        "pages.jsonl/line-2",
        "pages.jsonl/7",
        "pages.jsonl/line-10",
    ]
    errors = {s.doc.id: s.doc.error for s in sources if s.doc.error is not None}
    assert list(errors) == [f"{path}:{n}" for n in (5, 6, 7, 8, 9)]
    assert all(e.startswith(f"{ReaderError.INVALID_JSON}: ") for e in errors.values())
    assert "a JSON array where an envelope object belongs" in errors[f"{path}:6"]
    assert "no body, body_base64 or html" in errors[f"{path}:7"]
    assert "body must be a string, not number" in errors[f"{path}:8"]
    assert "body_base64 is not valid base64" in errors[f"{path}:9"]
    assert next(s.origin for s in sources if s.doc.error) == f"jsonl:{path}:5"
    assert all(s.doc.body == b"" for s in sources if s.doc.error)
    assert (stats.documents, stats.failed, stats.skipped["blank_line"]) == (9, 5, 1)


def test_jsonl_gz_is_decompressed_and_a_broken_tail_is_reported(tmp_path: Path) -> None:
    first = gzip.compress(b'{"id": "a", "body": "<p>a</p>"}\n')
    second = gzip.compress(b'{"id": "b", "body": "<p>b</p>"}\n')
    path = tmp_path / "pages.jsonl.gz"
    path.write_bytes(first + second + second[:12])

    sources, stats = read_all([path])

    assert [s.doc.id for s in sources] == ["a", "b", f"{path}:3"]
    assert [s.doc.body for s in sources] == ["<p>a</p>", "<p>b</p>", b""]
    assert sources[2].doc.error is not None
    assert sources[2].doc.error.startswith(f"{ReaderError.READ}: broken gzip data after line 2")
    assert sources[2].doc.error.endswith("rest of the file skipped")
    assert stats.failed == 1


def test_jsonl_gz_goes_on_after_a_broken_member(tmp_path: Path) -> None:
    members = [gzip.compress(b'{"id": "%d", "body": "<p>x</p>"}\n' % i) for i in range(5)]
    broken = bytearray(members[2])
    broken[-8] ^= 0xFF  # its CRC: the data reads, the check fails
    cut = members[3][: len(members[3]) // 2]  # a member cut short, the next one after it
    path = tmp_path / "pages.jsonl.gz"
    path.write_bytes(members[0] + members[1] + bytes(broken) + cut + members[4])

    sources, _ = read_all([path])

    # one error record for the gap: the broken member and the cut one, which does not start
    # a readable member, then the next member that does
    assert [s.doc.id for s in sources] == ["0", "1", f"{path}:3", "4"]
    assert "read from the next gzip member on" in (sources[2].doc.error or "")
    path.write_bytes(members[0] + bytes(broken) + members[3] + members[4])
    sources, _ = read_all([path])
    assert [s.doc.id for s in sources] == ["0", f"{path}:2", "3", "4"]


# --- stdin ---------------------------------------------------------------------------------


def _stdin_inputs() -> dict[str, bytes]:
    jsonl = b'{"id": "x", "body": "<p>x</p>"}\n{"id": "y", "body": "<p>y</p>"}\n'
    return {
        "warc": b"".join(d for _, d in warc_members(gz=False)),
        "warc_gz": b"".join(d for _, d in warc_members(gz=True)),
        "jsonl": b"\n  " + jsonl,
        "jsonl_gz": gzip.compress(jsonl),
        "html": b"  <!doctype html><p>just a page</p>",
    }


@pytest.mark.parametrize("kind", ["warc", "warc_gz", "jsonl", "jsonl_gz", "html"])
def test_stdin_format_is_sniffed(kind: str) -> None:
    data = _stdin_inputs()[kind]

    sources, stats = read_all(["-"], stdin=io.BytesIO(data))

    if kind.startswith("warc"):
        assert [s.doc.body for s in sources] == PAGES
        assert all(s.origin.startswith("warc:stdin#") for s in sources)
        assert all((s.relpath or "").startswith("stdin/urn_uuid_") for s in sources)
    elif kind.startswith("jsonl"):
        assert [(s.doc.id, s.doc.body) for s in sources] == [("x", "<p>x</p>"), ("y", "<p>y</p>")]
        first = 2 if kind == "jsonl" else 1  # the plain one starts with a blank line
        assert [s.origin for s in sources] == [f"jsonl:stdin:{first}", f"jsonl:stdin:{first + 1}"]
        assert [s.relpath for s in sources] == ["stdin/x", "stdin/y"]
    else:
        assert sources == [Source(RawDocument(body=data, id="stdin"), "stdin", "stdin")]
    assert stats.files == 1


# --- writers -------------------------------------------------------------------------------


def _mixed_sources(tmp_path: Path) -> list[Source]:
    """A tree: index.html, then sub/crawl.warc.gz (a good and a broken response), sub/page.html."""
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    (root / "index.html").write_bytes(b"<p>index</p>")
    (root / "sub" / "page.html").write_bytes(b"<p>page</p>")
    members = warc_members(pages=PAGES[:2])
    data = [d for _, d in members]
    data[5] = _corrupt(data[5], "bad_http_header")
    (root / "sub" / "crawl.warc.gz").write_bytes(b"".join(data))
    sources, _ = read_all([root])
    relpaths = [s.relpath or "" for s in sources]
    assert relpaths[0] == "index.html"
    assert [r.startswith("sub/crawl.warc.gz/urn_uuid_") for r in relpaths[1:3]] == [True, True]
    assert relpaths[3] == "sub/page.html"
    return sources


def test_jsonl_writer_writes_one_object_per_document_with_its_origin(tmp_path: Path) -> None:
    sources = _mixed_sources(tmp_path)
    for sentences in (True, False):
        out = io.BytesIO()
        with JsonlWriter(out, sentences=sentences) as writer:
            for source in sources:
                writer.write(source, cleaned(source))
        assert not out.closed

        records = [orjson.loads(line) for line in out.getvalue().splitlines()]

        assert [r["id"] for r in records] == [s.doc.id for s in sources]
        assert [r["origin"] for r in records] == [s.origin for s in sources]
        assert records[0]["text"] == "Hello number 0."
        assert records[0]["perplexity"] == 2154.4
        assert ("sentences" in records[0]) is sentences
        assert [r["error"] for r in records] == [None, None, ReaderError.WARC_RECORD, None]
        assert records[2]["error_detail"].startswith("bad HTTP header block")


def test_text_tree_writer_mirrors_the_input_tree(tmp_path: Path) -> None:
    sources = _mixed_sources(tmp_path)
    out = tmp_path / "out"
    stale = out / "index.html.error"
    stale.parent.mkdir(parents=True)
    stale.write_text("old_error: from an earlier run\n")
    outside = Source(RawDocument(body="", id="x"), "elsewhere", "../../escape")
    unnamed = Source(RawDocument(body="", id="<urn:uuid:1234>"), "kafka", None)

    with TextTreeWriter(out) as writer:
        for source in [*sources, sources[0], outside, unnamed]:
            writer.write(source, cleaned(source, text=f"text of {source.doc.id}"))

    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    warc_records = [s.relpath for s in sources if s.origin.startswith("warc:")]
    assert written == sorted(
        [
            "index.html.txt",
            "index.html-2.txt",
            "sub/page.html.txt",
            f"{warc_records[0]}.txt",
            f"{warc_records[1]}.txt",
            f"{warc_records[1]}.error",
            "_/_/escape.txt",
            "urn_uuid_1234.txt",
        ]
    )
    assert (out / "sub/page.html.txt").read_text() == f"text of {sources[3].doc.id}"
    assert (out / "index.html-2.txt").read_text() == f"text of {sources[0].doc.id}"
    assert (out / f"{warc_records[0]}.txt").read_text() == f"text of {sources[1].doc.id}"
    assert (out / f"{warc_records[1]}.txt").read_text() == ""
    error_text = (out / f"{warc_records[1]}.error").read_text()
    assert error_text.startswith(f"{ReaderError.WARC_RECORD}: bad HTTP header block")


@pytest.mark.parametrize("name", ["clean.warc.gz", "clean.warc"])
def test_warc_writer_writes_conversion_records_that_warcio_reads(tmp_path: Path, name: str) -> None:
    sources = _mixed_sources(tmp_path)
    path = tmp_path / name

    with WarcWriter(path) as writer:
        for source in sources:
            writer.write(source, cleaned(source, text=f"tëxt of {source.doc.url or source.doc.id}"))

    data = path.read_bytes()
    assert (data[:2] == b"\x1f\x8b") is name.endswith(".gz")
    with path.open("rb") as stream:
        records = [
            (r.rec_type, r.rec_headers, r.content_stream().read())
            for r in ArchiveIterator(stream, check_digests=True)
        ]
    assert [r[0] for r in records] == ["warcinfo", *["conversion"] * len(sources)]
    warcinfo_id = records[0][1].get_header("WARC-Record-ID")
    for source, (_, headers, body) in zip(sources, records[1:], strict=True):
        assert headers.protocol == "WARC/1.1"
        assert headers.get_header("Content-Type") == "text/plain; charset=utf-8"
        assert headers.get_header("WARC-Warcinfo-ID") == warcinfo_id
        assert headers.get_header("WARC-Stream-Cleaner-Origin") == source.origin
        assert headers.get_header("WARC-Stream-Cleaner-Model") == "tiny-test"
        from_warc = source.origin.startswith("warc:")
        assert headers.get_header("WARC-Refers-To") == (source.doc.id if from_warc else None)
        assert headers.get_header("WARC-Target-URI") == (source.doc.url or None)
        if source.doc.error is None:
            assert body == f"tëxt of {source.doc.url or source.doc.id}".encode()
            assert headers.get_header("WARC-Stream-Cleaner-Perplexity") == "2154.4"
            assert headers.get_header("WARC-Stream-Cleaner-Error") is None
        else:
            assert body == b""
            assert headers.get_header("WARC-Stream-Cleaner-Perplexity") is None
            assert headers.get_header("WARC-Stream-Cleaner-Error") == ReaderError.WARC_RECORD
            detail = headers.get_header("WARC-Stream-Cleaner-Error-Detail")
            assert detail.startswith("bad HTTP header block")

    # Our own reader sees the conversion records and skips them, counted.
    _, stats = read_all([path])
    assert stats.skipped == {"warcinfo": 1, "conversion": len(sources)}


def test_warc_writer_on_a_stream_flushes_without_closing_it() -> None:
    source = Source(RawDocument(body=b"<p>x</p>", id="page.html"), "page.html", "page.html")
    stream = io.BytesIO()

    with WarcWriter(stream) as writer:
        writer.write(source, cleaned(source, text="line one\nline two"))

    assert not stream.closed
    assert stream.getvalue().startswith(b"WARC/1.1\r\n")
    records = list(ArchiveIterator(io.BytesIO(stream.getvalue())))
    assert [r.rec_type for r in records] == ["warcinfo", "conversion"]


def test_a_url_or_id_with_a_line_break_cannot_add_warc_headers(tmp_path: Path) -> None:
    doc = RawDocument(
        body=b"<p>x</p>",
        id="u3\r\nX-Injected: y",
        url="http://x.com/a b\r\nWARC-Type: response\r\nContent-Length: 5",
    )
    source = Source(doc, "warc:in.warc#0", None)
    path = tmp_path / "out.warc"
    with WarcWriter(path) as writer:
        writer.write(source, cleaned(source, text="The whole text of the page."))
    with path.open("rb") as stream:
        records = [(r.rec_headers, r.content_stream().read()) for r in ArchiveIterator(stream)]
    headers, body = records[-1]
    assert body == b"The whole text of the page."
    assert headers.get_header("WARC-Type") == "conversion"
    assert headers.get_header("WARC-Target-URI").startswith("http://x.com/a%20b%20WARC-Type:")
    assert headers.get_header("X-Injected") is None


def test_a_text_tree_takes_files_where_directories_go_and_very_long_names(tmp_path: Path) -> None:
    docs = [
        RawDocument(body=b"<p>a</p>", id="in/a"),  # its text goes to a.txt ...
        RawDocument(body=b"<p>b</p>", id="in/a.txt/b.html"),  # ... which b needs as a directory
        RawDocument(body=b"<p>c</p>", id="in/" + "c" * 300 + ".html"),
    ]
    sources = [Source(d, d.id, d.id.removeprefix("in/")) for d in docs]
    out = tmp_path / "out"
    with TextTreeWriter(out) as writer:
        for source in sources:
            writer.write(source, cleaned(source, text=f"text of {source.doc.id[:5]}"))
    written = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*") if p.is_file()}
    assert written.pop("a.txt") == "text of in/a"
    assert written.pop("a.txt_b.html.txt") == "text of in/a."
    ((long_name, text),) = written.items()
    assert text == "text of in/cc" and len(long_name.encode()) <= 255
    assert long_name.startswith("c" * 200)


def test_records_whose_content_length_runs_past_the_end_are_read_in_linear_time(
    tmp_path: Path,
) -> None:
    import time

    path = tmp_path / "bad.warc"
    path.write_bytes(
        b"WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 999999999\r\n\r\n" * 50_000
    )
    started = time.monotonic()
    sources, _ = read_all([path])
    assert len(sources) == 50_000
    assert all("block truncated" in (s.doc.error or "") for s in sources)
    assert time.monotonic() - started < 5  # each record copied the rest of the file
