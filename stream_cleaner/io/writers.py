"""Writers: cleaned documents -> JSON Lines, a mirrored text tree, or WARC conversion records.

Every writer takes ``write(source, doc)`` for every document, error documents included, and
``close()``; all are context managers. A writer closes only what it opened itself: a stream
handed to it (stdout) is flushed, not closed.
"""

from __future__ import annotations

import hashlib
import io
import os
from abc import ABC, abstractmethod
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Final, Self, TextIO

import orjson

from stream_cleaner.document import CleanedDocument
from stream_cleaner.io.readers import Source, safe_name
from stream_cleaner.segment import CJK_ENDS

# The longest path component a text tree writes, in bytes: 255 (ext4, APFS...) less
# ".error" and a "-NN" collision suffix.
MAX_NAME_BYTES: Final = 240

__all__ = [
    "CleanEvalWriter",
    "DocumentWriter",
    "JsonlWriter",
    "TextTreeWriter",
    "WarcWriter",
    "cleaneval_text",
]

WARC_VERSION: Final = "1.1"
SOFTWARE: Final = "stream-cleaner"
HEADER_PREFIX: Final = "WARC-Stream-Cleaner-"


class DocumentWriter(ABC):
    """Where cleaned documents go; use as a context manager or call :meth:`close`."""

    @abstractmethod
    def write(self, source: Source, doc: CleanedDocument) -> None:
        """Writes ``doc``, the cleaned form of ``source.doc``."""

    def close(self) -> None:  # noqa: B027 - a writer with nothing to release needs no close
        """Flushes and releases what the writer opened; it takes no writes afterwards."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class JsonlWriter(DocumentWriter):
    """One JSON object per line: ``CleanedDocument.to_dict()`` plus ``origin``.

    Args:
        stream: a binary stream (``sys.stdout.buffer``, an open file); flushed, not closed.
        sentences: include the per-sentence list.
    """

    def __init__(self, stream: BinaryIO, *, sentences: bool) -> None:
        self._stream = stream
        self._sentences = sentences

    def write(self, source: Source, doc: CleanedDocument) -> None:
        record = doc.to_dict(sentences=self._sentences)
        record["origin"] = source.origin
        self._stream.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))

    def close(self) -> None:
        self._stream.flush()


class TextTreeWriter(DocumentWriter):
    """Mirrors the input tree: ``OUT_DIR/<relpath>.txt`` holds a document's cleaned text.

    A document with an error also gets ``<relpath>.error`` (``"<error>: <detail>"``); a stale
    ``.error`` left by an earlier run is removed when the document is now clean. Sources
    without a relpath are named from their document id. A relpath written twice in one run
    gets ``-2``, ``-3``... so that no document overwrites another.

    Args:
        out_dir: the root of the tree; created if missing.
        cleaneval: write `cleaneval_text` (``<p>``/``<h>``/``<l>`` lines) instead of the text.
    """

    def __init__(self, out_dir: str | os.PathLike[str], *, cleaneval: bool = False) -> None:
        self._root = Path(out_dir)
        self._root.mkdir(parents=True, exist_ok=True)
        self._used: set[str] = set()
        self._cleaneval = cleaneval

    def write(self, source: Source, doc: CleanedDocument) -> None:
        wanted = _tree_path(source, doc)
        relpath = self._claim(wanted)
        text = cleaneval_text(doc) if self._cleaneval else doc.text
        try:
            self._write_text(relpath, text)
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            # a file where the tree needs a directory, or the other way round ("a" and a
            # directory "a.txt"): the document goes to the top, under a flat name
            relpath = self._claim(safe_name(wanted))
            self._write_text(relpath, text)
        error_file = self._root / f"{relpath}.error"
        if doc.error is None:
            error_file.unlink(missing_ok=True)
        else:
            detail = f": {doc.error_detail}" if doc.error_detail else ""
            error_file.write_text(f"{doc.error}{detail}\n", encoding="utf-8")

    def _write_text(self, relpath: str, text: str) -> None:
        target = self._root / f"{relpath}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def _claim(self, relpath: str) -> str:
        candidate, n = relpath, 1
        while candidate in self._used:
            n += 1
            candidate = f"{relpath}-{n}"
        self._used.add(candidate)
        return candidate


class CleanEvalWriter(DocumentWriter):
    """CleanEval's gold format on one stream: per page a ``URL: <url>`` line, then its kept
    blocks, one per line, each marked ``<p>``, ``<h>`` or ``<l>``, and a blank line.

    Args:
        stream: a text stream (``sys.stdout``); flushed, not closed.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, source: Source, doc: CleanedDocument) -> None:
        url = doc.url or doc.id or source.origin
        self._stream.write(f"URL: {_one_line(url)}\n{cleaneval_text(doc)}\n\n")

    def close(self) -> None:
        self._stream.flush()


def cleaneval_text(doc: CleanedDocument) -> str:
    """The kept text of ``doc`` in CleanEval's markup: one line per kept block, marked with
    its kind (``<p>`` paragraph, ``<h>`` heading, ``<l>`` list item)."""
    kinds = doc.block_kinds
    lines: list[str] = []
    current = -1
    for sentence in doc.sentences:
        if not sentence.keep:
            continue
        b = sentence.block_index
        if b != current:
            kind = kinds[b] if b < len(kinds) else "p"
            lines.append(f"<{kind}>{sentence.text}")
            current = b
        else:
            lines[-1] += sentence.text if lines[-1][-1] in CJK_ENDS else f" {sentence.text}"
    return "\n".join(lines)


def _tree_path(source: Source, doc: CleanedDocument) -> str:
    """A relative path that stays inside the output tree, whatever the Source says."""
    raw = source.relpath or safe_name(doc.id or source.doc.id or source.origin)
    parts = [
        "_" if part == ".." else _short_name(part.replace("\0", "_"))
        for part in raw.replace("\\", "/").split("/")
        if part not in ("", ".")
    ]
    return "/".join(parts) or "document"


def _short_name(part: str) -> str:
    """A path component short enough for any file system (255 bytes) with ``.error`` after
    it: a longer one keeps its start and ends with a hash of the whole."""
    data = part.encode("utf-8", "surrogateescape")
    if len(data) <= MAX_NAME_BYTES:
        return part
    digest = hashlib.sha1(data).hexdigest()[:16]
    start = data[: MAX_NAME_BYTES - 17].decode("utf-8", "surrogateescape")
    return f"{start}-{digest}"


class WarcWriter(DocumentWriter):
    """WARC/1.1: a ``warcinfo`` record, then one ``conversion`` record per document.

    Each record holds the cleaned text (``text/plain; charset=utf-8``) and the headers
    ``WARC-Target-URI`` (when the document has a URL), ``WARC-Refers-To`` (the source record,
    for documents read from a WARC), ``WARC-Stream-Cleaner-Origin``,
    ``WARC-Stream-Cleaner-Perplexity`` and ``-Kept-Perplexity`` (when known),
    ``WARC-Stream-Cleaner-Model``, and ``WARC-Stream-Cleaner-Error`` / ``-Error-Detail`` for
    documents with an error.

    Args:
        stream_or_path: a path (opened, and closed by :meth:`close`) or a binary stream.
        gzip: compress each record as its own gzip member; by default, when the path ends
            with ``.gz`` (never for a stream).

    Raises:
        ModuleNotFoundError: warcio, which writes the records, is not installed.
    """

    def __init__(
        self, stream_or_path: BinaryIO | str | os.PathLike[str], *, gzip: bool | None = None
    ) -> None:
        # Local: only WARC output needs warcio, so the other writers work without it.
        from warcio.warcwriter import WARCWriter

        self._owned: BinaryIO | None = None
        if isinstance(stream_or_path, str | os.PathLike):
            path = os.fspath(stream_or_path)
            self._owned = open(path, "wb")  # noqa: SIM115 - closed in close()
            stream: BinaryIO = self._owned
            filename = os.path.basename(path)
            compress = path.endswith(".gz") if gzip is None else gzip
        else:
            stream = stream_or_path
            filename = ""
            compress = bool(gzip)
        self._stream = stream
        self._writer = WARCWriter(stream, gzip=compress, warc_version=WARC_VERSION)
        info = self._writer.create_warcinfo_record(
            filename, {"software": SOFTWARE, "format": f"WARC File Format {WARC_VERSION}"}
        )
        self._writer.write_record(info)
        self._warcinfo_id = info.rec_headers.get_header("WARC-Record-ID")

    def write(self, source: Source, doc: CleanedDocument) -> None:
        headers = {"WARC-Warcinfo-ID": self._warcinfo_id}
        source_id = source.doc.id
        if source.origin.startswith("warc:") and source_id.startswith("<"):
            headers["WARC-Refers-To"] = source_id
        headers[f"{HEADER_PREFIX}Origin"] = source.origin
        if doc.perplexity is not None:
            headers[f"{HEADER_PREFIX}Perplexity"] = repr(doc.perplexity)
        if doc.kept_perplexity is not None:
            headers[f"{HEADER_PREFIX}Kept-Perplexity"] = repr(doc.kept_perplexity)
        if doc.model_id:
            headers[f"{HEADER_PREFIX}Model"] = doc.model_id
        if doc.error is not None:
            headers[f"{HEADER_PREFIX}Error"] = doc.error
            if doc.error_detail:
                headers[f"{HEADER_PREFIX}Error-Detail"] = doc.error_detail
        payload = doc.text.encode("utf-8")
        record = self._writer.create_warc_record(
            _one_line(doc.url or source.doc.url),
            "conversion",
            payload=io.BytesIO(payload),
            length=len(payload),
            warc_content_type="text/plain; charset=utf-8",
            warc_headers_dict={name: _one_line(value) for name, value in headers.items()},
        )
        self._writer.write_record(record)

    def close(self) -> None:
        if self._owned is not None:
            self._owned.close()
        else:
            self._stream.flush()


def _one_line(value: str) -> str:
    """A header value cannot hold a line break: a detail with one would end the header."""
    return " ".join(value.split()) if "\n" in value or "\r" in value else value
