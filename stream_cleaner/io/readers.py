"""Readers: HTML files, directory trees, WARC / WARC.gz, JSON Lines and stdin -> RawDocuments.

Every unit of input becomes exactly one :class:`Source`. A unit that cannot be read (a broken
WARC record, a bad JSON line, a file that cannot be opened) becomes a Source whose RawDocument
has an empty body and ``error="<code>: <detail>"`` (codes in :class:`ReaderError`), so that the
writers record the failure instead of losing the record.

A JSON Lines file holds one crawl envelope per line (topics/crawl.raw-html.v1.schema.json),
read by `stream_cleaner.envelope.parse_envelope`, the worker's parser too.

WARC files are parsed here rather than by fastwarc or warcio: both lose or garble records on
some corruptions without raising (a file cut inside its last record, a Content-Length that
overshoots its record), and neither can carry on after a broken gzip member. This reader
takes each gzip member as the unit of failure, checks that every block ends where its
Content-Length says, and after any corruption resumes at the next readable record.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO, Final

from stream_cleaner.decide import ErrorReason
from stream_cleaner.decode import (
    MAX_DECODED_BYTES,
    is_page_type,
    undo_content_coding,
)
from stream_cleaner.document import RawDocument
from stream_cleaner.envelope import InvalidEnvelope, parse_envelope

__all__ = [
    "JSONL_SUFFIXES",
    "WARC_SUFFIXES",
    "ReadStats",
    "ReaderError",
    "Source",
    "count_documents",
    "iter_documents",
    "safe_name",
    "walk_skip_reason",
]

WARC_SUFFIXES: Final = (".warc", ".warc.gz")
JSONL_SUFFIXES: Final = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")
STDIN_ARG: Final = "-"
STDIN_NAME: Final = "stdin"

SNIFF_BYTES: Final = 4096
CHUNK_BYTES: Final = 64 << 10
INFLATE_STEP_BYTES: Final = 256 << 10  # most bytes one zlib call may return
MAX_WARC_HEADER_BYTES: Final = 64 << 10
MAX_REWIND_BYTES: Final = 64 << 20
MAX_DECODED_PAYLOAD_BYTES: Final = MAX_DECODED_BYTES
MAX_NAME_CHARS: Final = 120
# files a directory walk passes over, counted as ``file_not_page`` (`walk_skip_reason`): the
# style sheets, scripts, images, fonts, media and documents of a saved site (wget's mirror
# holds them beside its pages), and the text files that are no page: a folder's README and
# notes, robots.txt, sitemaps and feeds, data and configuration. A file named on its own is
# always read.
NOT_PAGE_SUFFIXES: Final = (
    ".css", ".js", ".mjs", ".map", ".json", ".png", ".jpg", ".jpeg", ".gif", ".webp",
    ".avif", ".bmp", ".ico", ".svg", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp3",
    ".mp4", ".webm", ".ogg", ".wav", ".avi", ".mov", ".pdf", ".zip", ".tar", ".tgz", ".7z",
    ".rar", ".exe", ".dmg", ".iso", ".swf", ".wasm",
    ".txt", ".md", ".markdown", ".rst", ".csv", ".tsv", ".log", ".xml", ".rss", ".atom",
    ".yaml", ".yml", ".toml", ".ini", ".cfg", ".ics", ".vcf", ".vtt",
)  # fmt: skip

_MANY_SUFFIXES: Final = WARC_SUFFIXES + JSONL_SUFFIXES  # files of many documents
_GZIP_MAGIC: Final = b"\x1f\x8b"
# the HTTP headers naming the codings `_decode_payload` undoes (canonical names)
_CODING_HEADERS: Final = ("Content-Encoding", "Transfer-Encoding")
_GZIP_MEMBER_START: Final = b"\x1f\x8b\x08"
_UTF8_BOM: Final = b"\xef\xbb\xbf"
_PADDING: Final = b"\x00 \t\r\n"
_HTTP_STATUS = re.compile(r"HTTP/\d(?:\.\d)? +(\d{3})(?: |$)")
_HEADER_END = re.compile(rb"\n\r?\n")
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


class ReaderError:
    """The error codes a reader puts before ``": "`` in ``RawDocument.error``.

    They are the cleaner's own error reasons, so a reader's failure reaches the output record
    and the metrics under the same name.
    """

    WARC_RECORD: Final = ErrorReason.WARC_RECORD
    INVALID_JSON: Final = ErrorReason.INVALID_JSON
    READ: Final = ErrorReason.READ_ERROR
    ALL: Final = frozenset({WARC_RECORD, INVALID_JSON, READ})


@dataclass(frozen=True, slots=True)
class Source:
    """One document and where it came from.

    Attributes:
        doc: the document, or an error document (empty body, ``error`` set).
        origin: where it was read: a file path, ``warc:PATH#OFFSET`` (the offset of the
            record, or of its gzip member; ``#MEMBER+N`` for a record N bytes into a member
            that holds several), ``jsonl:PATH:LINE`` or ``stdin``.
        relpath: where the document sits in a mirrored output tree: the path relative to
            the directory argument (the file name for a file argument), with
            ``/<record name>`` appended for records of a WARC or JSON Lines file.
            ``None`` when the caller has no such path.
    """

    doc: RawDocument
    origin: str
    relpath: str | None = None


@dataclass(slots=True)
class ReadStats:
    """What the readers saw; pass one to :func:`iter_documents` and read it during or after.

    Attributes:
        files: files opened (stdin counts as one).
        documents: Sources yielded, error documents included.
        failed: Sources yielded with a reader error.
        warc_records: WARC records seen, by WARC-Type; a region that could not be parsed at
            all counts as one ``unreadable`` record. Each is either yielded or skipped.
        skipped: records not yielded, by WARC-Type or reason (``resource_not_html``,
            ``response_not_http``; ``response_status_3xx`` and the other classes but 2xx;
            ``response_not_page`` for a Content-Type that `is_page_type` refuses: style
            sheets, scripts, images, fonts, feeds, JSON), and ``blank_line`` for empty JSON
            Lines, and the files a directory walk passes over (`walk_skip_reason`):
            ``file_not_page`` (`NOT_PAGE_SUFFIXES`), ``file_not_regular`` (FIFOs, sockets,
            devices).
    """

    files: int = 0
    documents: int = 0
    failed: int = 0
    warc_records: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return {
            "files": self.files,
            "documents": self.documents,
            "failed": self.failed,
            "warc_records": dict(self.warc_records),
            "skipped": dict(self.skipped),
        }


def iter_documents(
    paths: Sequence[str | os.PathLike[str]],
    *,
    stdin: BinaryIO | None = None,
    stats: ReadStats | None = None,
    exclude: Sequence[str | os.PathLike[str]] = (),
) -> Iterator[Source]:
    """Reads every document under ``paths``, in order.

    A path may be a file, a directory (walked recursively in sorted order, hidden files and
    directories skipped) or ``-`` for stdin; one that cannot be read (missing, no permission)
    is an error document (``read_error``), and reading goes on. A file is a WARC if its name
    ends with :data:`WARC_SUFFIXES` or its first bytes are ``WARC/`` (plain or gzipped), JSON
    Lines if its name ends with :data:`JSONL_SUFFIXES`, and otherwise one page, read as bytes (and
    gunzipped when they are gzip). Stdin is sniffed: ``WARC/`` or gzipped ``WARC/`` -> WARC,
    gzip whose content starts with ``{`` -> JSON Lines, other gzip -> one page gunzipped,
    first non-blank byte ``{`` -> JSON Lines, anything else -> one page.

    Args:
        paths: files, directories and ``-``.
        stdin: the stream ``-`` reads; ``sys.stdin.buffer`` when ``None``.
        stats: counters to update while reading.
        exclude: files or directories never read, though under a directory of ``paths``:
            where the caller writes its output.

    Returns:
        An iterator of Sources; the arguments are checked before it is returned.

    Raises:
        ValueError: ``-`` is given more than once, or a path is (or is inside) one of
            ``exclude``.
    """
    names = [os.fspath(path) for path in paths]
    if names.count(STDIN_ARG) > 1:
        raise ValueError("'-' (stdin) may be given only once")
    excluded = frozenset(os.path.realpath(path) for path in exclude)
    outputs = {_file_id(path) for path in exclude} - {None}  # a hard link is the same file
    for name in names:
        if name != STDIN_ARG and (
            _inside(os.path.realpath(name), excluded) or _file_id(name) in outputs
        ):
            raise ValueError(f"{name} is where the output goes: write the output elsewhere")
    return _iter_documents(names, stdin, stats if stats is not None else ReadStats(), excluded)


def count_documents(
    paths: Sequence[str | os.PathLike[str]], *, exclude: Sequence[str | os.PathLike[str]] = ()
) -> int | None:
    """How many Sources :func:`iter_documents` yields for ``paths``, when the names tell
    without reading a file: files and directory trees of pages (walked by the same rule, a
    path that cannot be read counting as its error document). ``None`` when an input holds an
    unknown number: stdin, a WARC or JSON Lines file. A WARC known only by its first bytes
    counts as one page; the total is then too low."""
    excluded = frozenset(os.path.realpath(path) for path in exclude)
    scratch = ReadStats()
    total = 0
    for name in map(os.fspath, paths):
        if name == STDIN_ARG:
            return None
        if not os.path.isdir(name):
            files: Iterator[tuple[str, str] | OSError] = iter([(name, name)])
        else:
            files = _walk_tree(name, scratch, excluded)
        for entry in files:
            if not isinstance(entry, OSError) and entry[0].lower().endswith(_MANY_SUFFIXES):
                return None
            total += 1
    return total


def _file_id(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """The device and inode of an existing regular file, else None."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None


def _inside(path: str, excluded: frozenset[str]) -> bool:
    """Whether ``path`` (a real path) is one of ``excluded`` or inside one of them."""
    return any(path == ex or path.startswith(ex.rstrip(os.sep) + os.sep) for ex in excluded)


def safe_name(text: str) -> str:
    """A file name made from ``text``: ``[A-Za-z0-9._-]`` only, at most 120 characters.

    A longer name is cut and ends with a hash of the whole text, so distinct ids stay
    distinct.
    """
    name = _UNSAFE_NAME_CHARS.sub("_", text).strip("._") or "record"
    if len(name) > MAX_NAME_CHARS:
        digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = f"{name[: MAX_NAME_CHARS - 17]}-{digest}"
    return name


def _iter_documents(
    names: list[str], stdin: BinaryIO | None, stats: ReadStats, excluded: frozenset[str]
) -> Iterator[Source]:
    for name in names:
        if name == STDIN_ARG:
            sources = _read_stdin(stdin if stdin is not None else sys.stdin.buffer, stats)
        elif os.path.isdir(name):
            sources = _read_tree(name, stats, excluded)
        else:
            sources = _read_file(name, os.path.basename(name), stats)
        for source in sources:
            stats.documents += 1
            if source.doc.error is not None:
                stats.failed += 1
            yield _printable_names(source)


def _printable_names(source: Source) -> Source:
    """``source`` with the bytes of a file name that is not UTF-8 (read by `os` as lone
    surrogates, which JSON and WARC cannot carry) as ``\\xNN`` in its id and origin. Its
    ``relpath`` keeps them: an output tree's file is named with the input's own bytes."""
    doc, origin = source.doc, source.origin
    if doc.id.isascii() and origin.isascii():
        return source  # the common case, at once
    doc_id, fixed_origin = _escape_surrogates(doc.id), _escape_surrogates(origin)
    if doc_id == doc.id and fixed_origin == origin:
        return source
    return replace(source, doc=replace(doc, id=doc_id), origin=fixed_origin)


def _escape_surrogates(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")  # the file name's own bytes
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "backslashreplace")  # other lone surrogates
        return raw.decode("utf-8", "backslashreplace")
    return text


def _error_source(
    code: str, detail: str, *, doc_id: str, origin: str, relpath: str | None, url: str = ""
) -> Source:
    doc = RawDocument(body=b"", id=doc_id, url=url, error=f"{code}: {detail}")
    return Source(doc, origin, relpath)


# --- files, trees, stdin -------------------------------------------------------------------


def walk_skip_reason(path: str) -> str | None:
    """Why a directory walk passes over the file at ``path`` (its skip reason in
    `ReadStats.skipped`), or ``None`` when it reads it: the one rule for every command that
    walks a tree (``clean``, ``produce``, ``stack``, ``demo``...). A file named on its own is
    always read."""
    name = os.path.basename(path).lower()
    if name.endswith(NOT_PAGE_SUFFIXES):
        return "file_not_page"
    if not _regular_or_unreadable(path):
        return "file_not_regular"  # a FIFO would block, /dev/zero never end
    if "." not in name.lstrip(".") and not _starts_like_a_page(path):
        return "file_not_page"  # LICENSE, Makefile, a script: a mirror's page would be markup
    return None


# markup a page without a suffix starts with (a mirror's ``about`` saved by wget without
# --adjust-extension), looked for in its first `SNIFF_BYTES`
_MARKUP = re.compile(rb"<(?:!doctype|html|head|body|meta|title|div|p[ >]|!--|\?xml)", re.I)


def _starts_like_a_page(path: str) -> bool:
    """Whether a file without a suffix starts as a page, a WARC or JSON Lines would: markup
    after a byte-order mark and white space, a WARC record, gzip, or a JSON object. A file
    that cannot be read counts as one (its reader then says why)."""
    try:
        with open(path, "rb") as stream:
            prefix = stream.read(SNIFF_BYTES)
    except OSError:
        return True
    head = prefix.removeprefix(_UTF8_BOM).lstrip()
    return (
        head.startswith((b"<", b"{", b"WARC/", _GZIP_MAGIC)) or _MARKUP.search(prefix) is not None
    )


def _read_tree(
    root: str, stats: ReadStats, excluded: frozenset[str] = frozenset()
) -> Iterator[Source]:
    for entry in _walk_tree(root, stats, excluded):
        if isinstance(entry, OSError):
            yield _walk_error(entry, root)
        else:
            yield from _read_file(*entry, stats)


def _walk_tree(
    root: str, stats: ReadStats, excluded: frozenset[str]
) -> Iterator[tuple[str, str] | OSError]:
    """The files of a tree a walk reads, as ``(path, relpath)``, in sorted order, and the
    directories it cannot list; the files it passes over are counted in ``stats.skipped``."""
    errors: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=errors.append):
        # os.walk only reports unreadable directories to onerror; they become error documents.
        yield from errors
        errors.clear()
        dirnames[:] = sorted(
            d for d in dirnames
            if not d.startswith(".")
            and not (excluded and _inside(os.path.realpath(os.path.join(dirpath, d)), excluded))
        )  # fmt: skip
        for filename in sorted(filenames):
            if filename.startswith("."):
                continue
            path = os.path.join(dirpath, filename)
            if excluded and os.path.realpath(path) in excluded:
                continue  # the output being written
            reason = walk_skip_reason(path)
            if reason is not None:
                stats.skipped[reason] += 1
                continue
            yield path, os.path.relpath(path, root).replace(os.sep, "/")
    yield from errors


def _regular_or_unreadable(path: str) -> bool:
    """Whether a directory entry is a regular file (through symbolic links), or cannot even be
    looked at (`_read_file` then says why)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


def _walk_error(exc: OSError, root: str) -> Source:
    path = os.fspath(exc.filename) if exc.filename is not None else root
    relpath = os.path.relpath(path, root).replace(os.sep, "/")
    detail = f"cannot list directory: {exc.strerror or exc}"
    return _error_source(ReaderError.READ, detail, doc_id=path, origin=path, relpath=relpath)


def _read_file(path: str, relpath: str, stats: ReadStats) -> Iterator[Source]:
    try:
        stream = open(path, "rb")  # noqa: SIM115 - closed below, after the generator is done
    except OSError as exc:
        detail = f"cannot open: {exc.strerror or exc}"
        yield _error_source(ReaderError.READ, detail, doc_id=path, origin=path, relpath=relpath)
        return
    stats.files += 1
    with stream:
        try:
            prefix = stream.read(SNIFF_BYTES)
            cursor = _Cursor(stream.read, initial=prefix)
            lower = path.lower()
            if lower.endswith(WARC_SUFFIXES) or _looks_like_warc(prefix):
                yield from _read_warc(cursor, name=path, relpath=relpath, stats=stats)
            elif lower.endswith(JSONL_SUFFIXES):
                yield from _read_jsonl(cursor, name=path, relpath=relpath, stats=stats)
            else:
                yield _bounded_page(prefix, stream, path, relpath)
        except OSError as exc:
            detail = f"I/O error, rest of the file not read: {exc.strerror or exc}"
            yield _error_source(ReaderError.READ, detail, doc_id=path, origin=path, relpath=relpath)


def _read_stdin(stream: BinaryIO, stats: ReadStats) -> Iterator[Source]:
    stats.files += 1
    prefix = _read_prefix(stream)
    cursor = _Cursor(stream.read, initial=prefix)
    if prefix.startswith(b"WARC/"):
        yield from _read_warc(cursor, name=STDIN_NAME, relpath=STDIN_NAME, stats=stats)
    elif prefix.startswith(_GZIP_MAGIC):
        head = _gunzip_head(prefix)
        if head.lstrip().startswith(b"{"):
            yield from _read_jsonl(cursor, name=STDIN_NAME, relpath=STDIN_NAME, stats=stats)
        elif head.startswith(b"WARC/") or not head:  # a broken one: the WARC reader says how
            yield from _read_warc(cursor, name=STDIN_NAME, relpath=STDIN_NAME, stats=stats)
        else:
            yield _bounded_page(prefix, stream, STDIN_NAME, STDIN_NAME)
    elif prefix.removeprefix(_UTF8_BOM).lstrip().startswith(b"{"):
        yield from _read_jsonl(cursor, name=STDIN_NAME, relpath=STDIN_NAME, stats=stats)
    else:
        yield _bounded_page(prefix, stream, STDIN_NAME, STDIN_NAME)


def _bounded_page(prefix: bytes, stream: BinaryIO, name: str, relpath: str | None) -> Source:
    """The page of a file or stdin whose first bytes are ``prefix``, read to its end unless
    that is more than `MAX_DECODED_PAYLOAD_BYTES` (then ``too_large``, without holding it)."""
    body = prefix + stream.read(MAX_DECODED_PAYLOAD_BYTES + 1 - len(prefix))
    if len(body) > MAX_DECODED_PAYLOAD_BYTES:
        detail = f"more than {MAX_DECODED_PAYLOAD_BYTES} bytes"
        return _error_source(ErrorReason.TOO_LARGE, detail, doc_id=name, origin=name,
                             relpath=relpath)  # fmt: skip
    return _page_source(body, name, relpath)


def _page_source(body: bytes, name: str, relpath: str | None) -> Source:
    """One page: the bytes of a file (or stdin), gunzipped when they are gzip (pages are
    often stored as ``page.html.gz``)."""
    if body.startswith(_GZIP_MAGIC):
        try:
            body = undo_content_coding({"Content-Encoding": "gzip"}, body,
                                       max_bytes=MAX_DECODED_PAYLOAD_BYTES)  # fmt: skip
        except ValueError as exc:
            return _error_source(ReaderError.READ, f"broken gzip data: {exc}", doc_id=name,
                                 origin=name, relpath=relpath)  # fmt: skip
    return Source(RawDocument(body=body, id=name), name, relpath)


def _read_prefix(stream: BinaryIO) -> bytes:
    """The first ``SNIFF_BYTES`` (fewer at the end of input): a pipe may return less per read."""
    parts: list[bytes] = []
    size = 0
    while size < SNIFF_BYTES:
        part = stream.read(SNIFF_BYTES - size)
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


def _looks_like_warc(prefix: bytes) -> bool:
    if prefix.startswith(b"WARC/"):
        return True
    return prefix.startswith(_GZIP_MAGIC) and _gunzip_head(prefix).startswith(b"WARC/")


def _gunzip_head(data: bytes) -> bytes:
    """The first bytes of the gzip member at the start of ``data``; ``b""`` if it is broken."""
    try:
        return zlib.decompressobj(31).decompress(data, 64)
    except zlib.error:
        return b""


# --- byte streams --------------------------------------------------------------------------


class _GzipError(Exception):
    """Gzip data that cannot be decompressed (corrupt, or cut off by the end of input)."""


class _Cursor:
    """A forward reader over ``read(size)`` with peek, find and a bounded rewind.

    Offsets count bytes from the start of the stream. The bytes from the mark onwards stay
    buffered, so that a reader can go back to the start of a record it failed to parse; a
    mark further back than ``MAX_REWIND_BYTES`` is given up so that memory stays bounded.
    """

    __slots__ = ("_base", "_buf", "_eof", "_mark", "_pos", "_read")

    def __init__(self, read: Callable[[int], bytes], *, initial: bytes = b"") -> None:
        self._read = read
        self._buf = bytearray(initial)
        self._pos = 0
        self._base = 0
        self._mark: int | None = None
        self._eof = False

    @property
    def offset(self) -> int:
        return self._base + self._pos

    def _fill(self, n: int) -> bool:
        """Buffers ``n`` bytes after the position; False if the input ends first."""
        avail = len(self._buf) - self._pos
        if avail >= n:
            return True
        if self._eof:
            return False
        keep = self._pos
        if self._mark is not None:
            if self.offset - self._mark > MAX_REWIND_BYTES:
                self._mark = None
            else:
                keep = self._mark - self._base
        if keep:
            del self._buf[:keep]
            self._base += keep
            self._pos -= keep
        while avail < n:
            chunk = self._read(max(n - avail, CHUNK_BYTES))
            if not chunk:
                self._eof = True
                break
            self._buf += chunk
            avail += len(chunk)
        return avail >= n

    def at_eof(self) -> bool:
        return not self._fill(1)

    def available(self, n: int) -> int:
        """How many of the next ``n`` bytes the input still has (buffering them)."""
        self._fill(n)
        return min(n, len(self._buf) - self._pos)

    def peek(self, n: int) -> bytes:
        self._fill(n)
        return bytes(self._buf[self._pos : self._pos + n])

    def read(self, n: int) -> bytes:
        self._fill(n)
        with memoryview(self._buf) as view:
            data = bytes(view[self._pos : self._pos + n])
        self._pos += len(data)
        return data

    def read_some(self, n: int) -> bytes:
        """Up to ``n`` bytes, at least one unless the input has ended."""
        if not self._fill(1):
            return b""
        return self.read(min(n, len(self._buf) - self._pos))

    def skip(self, n: int) -> None:
        self._fill(n)
        self._pos = min(self._pos + n, len(self._buf))

    def readline(self, limit: int | None = None) -> bytes:
        """Bytes up to and including the next ``\\n``; at most ``limit`` bytes."""
        scanned = 0
        while True:
            stop = len(self._buf) if limit is None else min(len(self._buf), self._pos + limit)
            idx = self._buf.find(b"\n", self._pos + scanned, stop)
            if idx >= 0:
                return self.read(idx + 1 - self._pos)
            if limit is not None and len(self._buf) - self._pos >= limit:
                return self.read(limit)
            scanned = len(self._buf) - self._pos
            if not self._fill(scanned + 1):
                return self.read(scanned)

    def read_through(self, pattern: re.Pattern[bytes], limit: int) -> bytes:
        """Bytes up to the end of the next match of ``pattern`` (at most 8 bytes long).

        Without a match in the next ``limit`` bytes: those bytes, or all up to the end of
        input.
        """
        scanned = 0
        while True:
            stop = min(len(self._buf), self._pos + limit)
            match = pattern.search(self._buf, self._pos + max(0, scanned - 8), stop)
            if match:
                return self.read(match.end() - self._pos)
            if len(self._buf) - self._pos >= limit:
                return self.read(limit)
            scanned = len(self._buf) - self._pos
            if not self._fill(scanned + 1):
                return self.read(scanned)

    def skip_bytes(self, chars: bytes) -> None:
        """Skips every following byte that is one of ``chars``."""
        while self._fill(1) and self._buf[self._pos] in chars:
            self._pos += 1

    def find(self, pattern: bytes) -> bool:
        """Moves to the next occurrence of ``pattern``; to the end of input if there is none."""
        while True:
            idx = self._buf.find(pattern, self._pos)
            if idx >= 0:
                self._pos = idx
                return True
            # The pattern may straddle the end of the buffer: keep its possible start.
            self._pos = max(self._pos, len(self._buf) - len(pattern) + 1)
            if not self._fill(len(self._buf) - self._pos + 1):
                self._pos = len(self._buf)
                return False

    def mark(self) -> None:
        self._mark = self.offset

    def unmark(self) -> None:
        self._mark = None

    def rewind(self, offset: int) -> bool:
        """Goes back to ``offset`` if it is still buffered."""
        if not self._base <= offset <= self.offset:
            return False
        self._pos = offset - self._base
        return True


class _GzipMember:
    """``read(size)`` over the decompressed content of the gzip member at a cursor.

    Reads the compressed bytes from the cursor and leaves it just after the member.
    """

    __slots__ = ("_done", "_inflater", "_source")

    def __init__(self, source: _Cursor) -> None:
        self._source = source
        self._inflater = zlib.decompressobj(31)
        self._done = False

    def read(self, _size: int) -> bytes:
        while not self._done:
            data = self._inflater.unconsumed_tail or self._source.read_some(CHUNK_BYTES)
            if not data:
                raise _GzipError("the input ends inside a gzip member")
            try:
                out = self._inflater.decompress(data, INFLATE_STEP_BYTES)
            except zlib.error as exc:
                raise _GzipError(str(exc)) from None
            if self._inflater.eof:
                self._done = True
                # The decompressor read past the member's end: give those bytes back.
                end = self._source.offset - len(self._inflater.unused_data)
                self._source.rewind(end)
            if out:
                return out
        return b""


class _Gunzip:
    """``read(size)`` over the concatenated content of all gzip members at a cursor."""

    __slots__ = ("_member", "_source", "member_offset")

    def __init__(self, source: _Cursor) -> None:
        self._source = source
        self._member: _GzipMember | None = None
        self.member_offset = source.offset  # where the member being read starts

    def read(self, size: int) -> bytes:
        while True:
            if self._member is None:
                head = self._source.peek(2)
                if not head:
                    return b""
                self.member_offset = self._source.offset
                if head != _GZIP_MAGIC:
                    raise _GzipError(f"bytes at offset {self._source.offset} are not gzip data")
                self._source.mark()  # a broken member: the next one may start inside its bytes
                self._member = _GzipMember(self._source)
            out = self._member.read(size)
            if out:
                return out
            self._member = None


def _skip_padding(cursor: _Cursor) -> bool:
    """Consumes the rest of the input if it is only NUL or white space (harmless padding)."""
    rest = cursor.peek(CHUNK_BYTES)
    if len(rest) < CHUNK_BYTES and not rest.strip(_PADDING):
        cursor.skip(len(rest))
        return True
    return False


# --- WARC ----------------------------------------------------------------------------------


class _RecordError(Exception):
    """A WARC record that cannot be parsed; the message says why."""


@dataclass(frozen=True, slots=True)
class _Record:
    offset: int
    header: dict[str, str]
    block: bytes


@dataclass(frozen=True, slots=True)
class _Failure:
    offset: int
    detail: str
    header: dict[str, str]
    gzip: bool = False


def _read_warc(
    cursor: _Cursor, *, name: str, relpath: str | None, stats: ReadStats
) -> Iterator[Source]:
    if cursor.peek(2) == _GZIP_MAGIC:
        items = _gzip_items(cursor)
    else:
        items = ((str(item.offset), item) for item in _parse_records(cursor, scope="file"))
    for where, item in items:
        source = _warc_source(item, name=name, where=where, relpath=relpath, stats=stats)
        if source is not None:
            yield source


def _gzip_items(cursor: _Cursor) -> Iterator[tuple[str, _Record | _Failure]]:
    """Records of a gzipped WARC, each gzip member read (and failing) on its own."""
    while True:
        start = cursor.offset
        head = cursor.peek(2)
        if not head:
            return
        if head != _GZIP_MAGIC:
            if _skip_padding(cursor):
                return
            found = _find_member(cursor, start)
            detail = f"{cursor.offset - start} bytes that are not gzip data" + (
                f"; reading resumed at byte {cursor.offset}"
                if found
                else "; no readable gzip member after them: rest of the file skipped"
            )
            yield str(start), _Failure(start, detail, {})
            if not found:
                return
            continue
        cursor.mark()
        member = _Cursor(_GzipMember(cursor).read)
        for item in _parse_records(member, scope="gzip member"):
            result = item
            if isinstance(item, _Failure) and item.gzip:
                found = _find_member(cursor, start + 1)
                result = replace(
                    item,
                    detail=f"{item.detail} (gzip member at byte {start})"
                    + (
                        f"; reading resumed at byte {cursor.offset}"
                        if found
                        else f"; no readable gzip member after it: rest of the file"
                        f" from byte {start} skipped"
                    ),
                )
            yield (str(start) if item.offset == 0 else f"{start}+{item.offset}"), result
        cursor.unmark()


def _find_member(cursor: _Cursor, offset: int) -> bool:
    """Moves to the first gzip member at or after ``offset`` that starts a WARC record."""
    cursor.rewind(offset)
    cursor.unmark()
    while cursor.find(_GZIP_MEMBER_START):
        if _gunzip_head(cursor.peek(SNIFF_BYTES)).startswith(b"WARC/"):
            return True
        cursor.skip(1)
    return False


def _parse_records(cursor: _Cursor, *, scope: str) -> Iterator[_Record | _Failure]:
    """Every record until the end of input; a broken one is reported and skipped over.

    After a failure the cursor goes back to just after the broken record's start and looks
    for the next line starting with ``WARC/``, so a record whose Content-Length is wrong does
    not take the following records down with it. Broken gzip data ends the iteration.
    """
    while True:
        header: dict[str, str] = {}
        start = cursor.offset
        try:
            cursor.skip_bytes(b"\r\n")
            start = cursor.offset
            if cursor.at_eof() or (cursor.peek(5) != b"WARC/" and _skip_padding(cursor)):
                return
            cursor.mark()
            block = _parse_record(cursor, header)
            # Look past the record before yielding it: at the end of a gzip member this makes
            # zlib check the member's CRC, so a corrupt member fails its own record.
            cursor.skip_bytes(b"\r\n")
            cursor.at_eof()
        except _GzipError as exc:
            yield _Failure(start, f"broken gzip data: {exc}", header, gzip=True)
            return
        except _RecordError as exc:
            failure = _resync(cursor, _Failure(start, str(exc), header), scope)
            yield failure
            if failure.gzip:
                return
            continue
        yield _Record(start, header, block)


def _parse_record(cursor: _Cursor, header: dict[str, str]) -> bytes:
    """Reads the record at the cursor into ``header`` (lower-case names); returns its block.

    Raises:
        _RecordError: the record is malformed or cut short.
        _GzipError: the gzip data under the cursor is broken.
    """
    if cursor.peek(5) != b"WARC/":
        raise _RecordError(f"expected a WARC/ version line, found {cursor.peek(32)!r}")
    head = cursor.read_through(_HEADER_END, MAX_WARC_HEADER_BYTES)
    if not head.endswith((b"\n\n", b"\n\r\n")):
        if len(head) >= MAX_WARC_HEADER_BYTES:
            raise _RecordError(f"WARC header longer than {MAX_WARC_HEADER_BYTES} bytes")
        raise _RecordError("the input ends inside the WARC header")
    name = ""
    # The search stopped at the first blank line: only the last lines are empty.
    for line in head.decode("utf-8", "replace").split("\n")[1:]:
        text = line.rstrip("\r")
        if not text:
            break
        if text[0] in " \t" and name:
            header[name] = f"{header[name]} {text.strip()}"
            continue
        key, colon, value = text.partition(":")
        if not colon:
            raise _RecordError(f"malformed WARC header line {text[:60]!r}")
        name = key.strip().lower()
        header[name] = value.strip()
    length_text = header.get("content-length")
    if length_text is None:
        raise _RecordError("the WARC header has no Content-Length")
    if not (length_text.isascii() and length_text.isdigit()):
        raise _RecordError(f"invalid Content-Length {length_text[:40]!r}")
    length = int(length_text)
    found = cursor.available(length)  # before copying: a Content-Length past the end of the
    if found < length:  # input, record after record, copied the rest each time (quadratic)
        raise _RecordError(f"block truncated: {found} of {length} bytes before the input ends")
    block = cursor.read(length)
    if not _at_record_end(cursor):
        raise _RecordError(
            f"the record does not end after the {length} bytes of its Content-Length"
        )
    return block


def _at_record_end(cursor: _Cursor) -> bool:
    """Consumes the CRLF CRLF after a block; True if the input or the next record follows."""
    if cursor.peek(4) == b"\r\n\r\n":
        cursor.skip(4)
        return True
    # Lenient about the separator itself: some writers put fewer or more line breaks.
    cursor.skip_bytes(b"\r\n")
    following = cursor.peek(5)
    return not following or following == b"WARC/"


def _resync(cursor: _Cursor, failure: _Failure, scope: str) -> _Failure:
    """Moves to the next ``WARC/`` line after the failed record's start; says so in the detail."""
    cursor.rewind(failure.offset + 1)
    cursor.unmark()
    try:
        found = cursor.find(b"\nWARC/")
    except _GzipError as exc:
        return replace(failure, detail=f"{failure.detail}; then broken gzip data: {exc}", gzip=True)
    if found:
        cursor.skip(1)
        where = (
            f"byte {cursor.offset}" if scope == "file" else f"byte {cursor.offset} of the {scope}"
        )
        return replace(failure, detail=f"{failure.detail}; reading resumed at {where}")
    if scope != "file":
        return failure  # one record per gzip member is the norm: nothing more to say
    return replace(failure, detail=f"{failure.detail}; no further WARC record in the file")


def _warc_source(
    item: _Record | _Failure, *, name: str, where: str, relpath: str | None, stats: ReadStats
) -> Source | None:
    header = item.header
    warc_type = header.get("warc-type", "").lower()
    record_id = header.get("warc-record-id", "")
    url = header.get("warc-target-uri", "").removeprefix("<").removesuffix(">")
    origin = f"warc:{name}#{where}"
    doc_id = record_id or f"{name}#{where}"
    record_relpath = None
    if relpath is not None:
        record_relpath = f"{relpath}/{safe_name(record_id or f'offset-{where}')}"

    def error(detail: str) -> Source:
        return _error_source(
            ReaderError.WARC_RECORD,
            detail,
            doc_id=doc_id,
            origin=origin,
            relpath=record_relpath,
            url=url,
        )

    if isinstance(item, _Failure):
        stats.warc_records[warc_type or "unreadable"] += 1
        return error(item.detail)
    stats.warc_records[warc_type or "unknown"] += 1
    try:
        doc, skip_reason = _record_document(item, warc_type, doc_id=doc_id, url=url)
    except ValueError as exc:
        return error(str(exc))
    if doc is None:
        stats.skipped[skip_reason or warc_type] += 1
        return None
    return Source(doc, origin, record_relpath)


def _record_document(
    record: _Record, warc_type: str, *, doc_id: str, url: str
) -> tuple[RawDocument | None, str | None]:
    """``(document, None)`` for a page record, ``(None, reason)`` for one that is skipped.

    Raises:
        ValueError: the HTTP message in a response record is broken.
    """
    content_type = record.header.get("content-type", "")
    if warc_type == "response":
        is_http = content_type.lower().startswith("application/http") or (
            not content_type and record.block.startswith(b"HTTP/")
        )
        if not is_http:
            return None, "response_not_http"
        return _response_document(record.block, doc_id=doc_id, url=url)
    if warc_type == "resource":
        if "html" not in content_type.lower():
            return None, "resource_not_html"
        return RawDocument(body=record.block, id=doc_id, url=url, content_type=content_type), None
    return None, warc_type or "unknown"


def _response_document(
    block: bytes, *, doc_id: str, url: str
) -> tuple[RawDocument | None, str | None]:
    """`_record_document` of an HTTP response: a page fetched whole (2xx) whose type can be
    a page; else the reason it is skipped.

    Raises:
        ValueError: the HTTP message is broken.
    """
    status, http_headers, payload = _split_http(block)
    if not 200 <= status < 300:  # redirects, error pages: not the page the URL names
        return None, f"response_status_{status // 100}xx"
    if not is_page_type(http_headers.get("Content-Type", "")):
        return None, "response_not_page"  # style sheets, scripts, images, feeds...
    payload = _decode_payload(http_headers, payload)
    # the codings are undone: the cleaner must not try them again on the decoded bytes
    headers = {k: v for k, v in http_headers.items() if k not in _CODING_HEADERS}
    return RawDocument(body=payload, id=doc_id, url=url, headers=headers), None


# --- HTTP ----------------------------------------------------------------------------------


def _split_http(block: bytes) -> tuple[int, dict[str, str], bytes]:
    """Splits an HTTP response into its status code, headers (canonical names) and payload
    (still in the codings the headers name).

    Raises:
        ValueError: the header block has no end or no status line.
    """
    end, gap = block.find(b"\r\n\r\n"), 4
    bare = block.find(b"\n\n", 0, end if end >= 0 else len(block))
    if end < 0 or 0 <= bare < end:
        end, gap = bare, 2
    if end < 0:
        raise ValueError("bad HTTP header block: no blank line after the headers")
    lines = block[:end].decode("latin-1").replace("\r\n", "\n").split("\n")
    status = _HTTP_STATUS.match(lines[0])
    if not status:
        raise ValueError(f"bad HTTP header block: status line {lines[0][:60]!r}")
    headers: dict[str, str] = {}
    last = ""
    for line in lines[1:]:
        if line[:1] in (" ", "\t") and last:
            headers[last] = f"{headers[last]} {line.strip()}"
            continue
        key, colon, value = line.partition(":")
        if not colon or not key.strip():
            continue  # browsers ignore a header line without a name; so do we
        last = _canonical_header(key.strip())
        value = value.strip()
        headers[last] = f"{headers[last]}, {value}" if last in headers else value
    return int(status.group(1)), headers, block[end + gap :]


def _canonical_header(name: str) -> str:
    return "-".join(part[:1].upper() + part[1:].lower() for part in name.split("-"))


def _decode_payload(headers: dict[str, str], payload: bytes) -> bytes:
    """Undoes chunked transfer coding and the content coding where present
    (`decode.undo_content_coding`).

    Raises:
        ValueError: a compressed payload is corrupt, too large or in a coding that cannot be
            read here.
    """
    return undo_content_coding(headers, payload, max_bytes=MAX_DECODED_PAYLOAD_BYTES)


# --- JSON Lines: one crawl envelope per line (`envelope.parse_envelope`) ---------------------


def _read_jsonl(
    cursor: _Cursor, *, name: str, relpath: str | None, stats: ReadStats
) -> Iterator[Source]:
    gunzip = _Gunzip(cursor) if cursor.peek(2) == _GZIP_MAGIC else None
    lines = _Cursor(gunzip.read) if gunzip is not None else cursor
    lineno = 0
    while True:
        try:
            line = lines.readline()
        except _GzipError as exc:
            assert gunzip is not None
            resumed = _next_member(cursor, gunzip.member_offset)
            rest = "read from the next gzip member on" if resumed else "rest of the file skipped"
            yield _error_source(
                ReaderError.READ,
                f"broken gzip data after line {lineno}: {exc}; {rest}",
                doc_id=f"{name}:{lineno + 1}",
                origin=f"jsonl:{name}:{lineno + 1}",
                relpath=None if relpath is None else f"{relpath}/line-{lineno + 1}",
            )
            if not resumed:
                return
            gunzip = _Gunzip(cursor)  # the lines after the gap are numbered on
            lines = _Cursor(gunzip.read)
            continue
        if not line:
            return
        lineno += 1
        if lineno == 1:
            line = line.removeprefix(_UTF8_BOM)
        if not line.strip():
            stats.skipped["blank_line"] += 1
            continue
        yield _jsonl_source(line, name=name, lineno=lineno, relpath=relpath)


def _next_member(cursor: _Cursor, broken: int) -> bool:
    """Moves to the first gzip member that starts after the broken one at ``broken`` and
    decompresses (from where the cursor is, if the broken one's bytes are no longer held)."""
    if cursor.rewind(broken):
        cursor.skip(1)
    cursor.unmark()
    while cursor.find(_GZIP_MEMBER_START):
        if _gunzip_head(cursor.peek(SNIFF_BYTES)):
            return True
        cursor.skip(1)
    return False


def _jsonl_source(line: bytes, *, name: str, lineno: int, relpath: str | None) -> Source:
    origin = f"jsonl:{name}:{lineno}"
    line_id = f"{name}:{lineno}"
    try:
        doc = parse_envelope(line, default_id=line_id)
    except InvalidEnvelope as exc:  # the producer's id and URL, when the line names them
        return _error_source(
            ReaderError.INVALID_JSON,
            exc.detail,
            doc_id=exc.id or line_id,
            origin=origin,
            relpath=None if relpath is None else f"{relpath}/line-{lineno}",
            url=exc.url,
        )
    record_name = safe_name(doc.id) if doc.id != line_id else f"line-{lineno}"
    return Source(doc, origin, None if relpath is None else f"{relpath}/{record_name}")
