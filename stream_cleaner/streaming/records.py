"""The record formats of the four topics, as pure functions: bytes in, bytes out, no Kafka client.

```
crawl.raw-html.v1 message -> InputMessage -> decode_input() -> RawDocument | DeadLetter
RawDocument -> clean_document() -> CleanedDocument
outcome_records() -> Outcome: one document record and its sentence records, or one dead letter
```

The agents only wire these: turn the consumed message into an `InputMessage`, call
`clean_message` (or the three steps above), send the `Outcome`'s records, and commit the input
offset once the broker has acknowledged them. Every input message ends as exactly one cleaned
document or one dead-letter record.

Record values are serialised with sorted keys and hold nothing that depends on the clock, the
host or the run, so a replay of an input produces byte-identical keys and values and downstream
can deduplicate; timings and the worker version travel in Kafka headers (`timing_headers`).
topics/README.md describes each topic and its JSON Schema.
"""

from __future__ import annotations

import base64
import hashlib
import operator
import re
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from itertools import accumulate, pairwise
from typing import Any, Final, NamedTuple, overload

import numpy as np
import orjson

from .._native import native_module
from ..decide import ErrorReason
from ..decode import BinaryContent, decode_body, http_status
from ..document import CleanedDocument, RawDocument
from ..envelope import (
    MAX_ID_BYTES,
    MAX_URL_BYTES,
    InvalidEnvelope,
    bounded_text,
    exception_name,
    parse_envelope,
)
from ..lm import LanguageModel
from ..pipeline import clean_document
from ..settings import CleanerSettings
from ..sites import SiteTemplates, find_page_url, site_of
from .topics import MAX_MESSAGE_BYTES_DEFAULT

# The largest page cleaned: a raw value, or an envelope's decoded body, above it ends as a
# `too_large` dead letter.
MAX_PAGE_BYTES_DEFAULT: Final = 10 * 1024 * 1024
# What a JSON envelope may add to its page beside base64's third (URL, HTTP headers...). With the
# default page limit, the largest envelope read is 13.4 MiB, under the 14 MiB the topics allow.
ENVELOPE_OVERHEAD_BYTES: Final = 64 * 1024
# A dead letter carries the original value whole up to this size, and a prefix above it. 512 KiB
# keeps a dead-letter record (base64 grows it by a third) under Kafka's default 1 MiB message
# size, so the dead-letter topic and the tools that read it need no size settings.
DEAD_LETTER_MAX_PAYLOAD_BYTES_DEFAULT: Final = 512 * 1024
# The prefix of a larger value that a dead letter keeps, beside its size and SHA-256.
DEAD_LETTER_PREFIX_BYTES_DEFAULT: Final = 64 * 1024
# A dead letter carries the input's key whole up to this size, and its first headers up to
# this many, or this many bytes of names and values (the rest are counted in
# ``headers_omitted``).
DEAD_LETTER_MAX_KEY_BYTES: Final = 16 * 1024
DEAD_LETTER_MAX_HEADERS: Final = 1000
DEAD_LETTER_MAX_HEADER_BYTES: Final = 64 * 1024
# Longer error details (in UTF-8 bytes) are shortened (`bounded_text`), as ids and URLs are
# (`envelope.MAX_ID_BYTES`, `envelope.MAX_URL_BYTES`).
MAX_DETAIL_BYTES: Final = 4096
# What a record's key and value leave of the producer's limit (max_message_bytes) for its
# headers and framing. A document or sentence record above it ends as a `too_large` dead letter.
RECORD_OVERHEAD_BYTES: Final = 16 * 1024

# Kafka header names read on input messages (case-insensitive, the first one wins).
HEADER_ID: Final = "id"
HEADER_URL: Final = "url"
HEADER_CONTENT_TYPE: Final = "content-type"
# the HTTP status of a raw page's fetch, in digits: other than 2xx it is `not_a_page`
HEADER_STATUS: Final = "status"
# a raw page still in the codings it came in (gzip, deflate, br, zstd; chunked), as the
# crawler fetched it: the cleaner undoes them (`decode.undo_content_coding`)
HEADER_CONTENT_ENCODING: Final = "content-encoding"
HEADER_TRANSFER_ENCODING: Final = "transfer-encoding"
_CODING_HEADERS: Final = (HEADER_CONTENT_ENCODING, HEADER_TRANSFER_ENCODING)
# Kafka header names written on output records: what must stay out of the values.
HEADER_WORKER_VERSION: Final = "worker-version"
HEADER_PROCESSING_SECONDS: Final = "processing-seconds"
HEADER_STAGE_SECONDS: Final = "stage-seconds"
HEADER_SOURCE: Final = "source"

Headers = tuple[tuple[str, bytes], ...]
KeyValue = tuple[bytes, bytes]

_DUMPS_OPTIONS: Final = orjson.OPT_SORT_KEYS
# Regexes rather than lstrip(): they stop at the first other byte instead of copying 10 MB.
_JSON_START = re.compile(rb"\A(?:\xef\xbb\xbf)?[ \t\r\n]*\{")
_BLANK = re.compile(rb"\A(?:\xef\xbb\xbf)?[ \t\r\n]*\Z")
_URL = re.compile(r"\Ahttps?://\S+\Z", re.IGNORECASE)


class DeadLetterReason:
    """Why an input message ended in the dead-letter topic: a closed set of snake_case strings.

    Every `ErrorReason` of the core (a page the core could not clean: ``empty``,
    ``binary_content``, ``too_large``, ``time_budget``...; ``not_a_page`` for a fetch whose
    status or Content-Type says it is no page), plus ``invalid_envelope`` for a JSON
    envelope that cannot be read. ``too_large`` is also used for a message value above the
    worker's limit, and ``internal_error`` for a bug anywhere on the way.
    """

    TOO_LARGE = ErrorReason.TOO_LARGE
    INVALID_ENVELOPE = "invalid_envelope"
    INTERNAL = ErrorReason.INTERNAL

    ALL = (*ErrorReason.ALL, INVALID_ENVELOPE)


@dataclass(frozen=True, slots=True)
class InputMessage:
    """One message consumed from the input topic, as the client handed it over.

    Attributes:
        topic, partition, offset: where the message was read; they make the stable id of a
            message that names no id, and the dead letter's source.
        key: the raw message key, or ``None``.
        value: the raw message value, or ``None`` (a tombstone).
        headers: the Kafka headers as ``(name, value)`` pairs, in order.
        timestamp_ms: the message timestamp in milliseconds since the epoch, when known.
    """

    topic: str
    partition: int
    offset: int
    key: bytes | None = None
    value: bytes | None = None
    headers: Headers = ()
    timestamp_ms: int | None = None

    @classmethod
    def from_faust(cls, message: Any) -> InputMessage:
        """The InputMessage of a Faust ``Message`` (``event.message``), whatever the serializers.

        Faust keeps the undecoded key and value on the message; its timestamp is in seconds
        and its headers are pairs or a mapping.
        """
        timestamp = message.timestamp
        return cls(
            topic=message.topic,
            partition=message.partition,
            offset=message.offset,
            key=message.key,
            value=message.value,
            headers=normalize_headers(message.headers),
            timestamp_ms=None if timestamp is None else round(timestamp * 1000),
        )

    @classmethod
    def from_consumer_record(cls, record: Any) -> InputMessage:
        """The InputMessage of an aiokafka ``ConsumerRecord`` (timestamp in milliseconds)."""
        return cls(
            topic=record.topic,
            partition=record.partition,
            offset=record.offset,
            key=record.key,
            value=record.value,
            headers=normalize_headers(record.headers),
            timestamp_ms=record.timestamp,
        )

    @property
    def source(self) -> str:
        """``topic:partition:offset``; topic names cannot hold a colon, so it is unambiguous."""
        return f"{self.topic}:{self.partition}:{self.offset}"

    def header(self, name: str) -> bytes | None:
        """The value of the first header called ``name`` (case-insensitive), or ``None``."""
        wanted = name.lower()
        for key, value in self.headers:
            if key.lower() == wanted:
                return value
        return None


def normalize_headers(
    headers: Mapping[Any, Any] | Iterable[tuple[Any, Any]] | None,
) -> Headers:
    """Kafka headers as ``(str, bytes)`` pairs, from pairs or a mapping, str or bytes, or None."""
    if not headers:
        return ()
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    out: list[tuple[str, bytes]] = []
    for name, value in pairs:
        text_name = name.decode("utf-8", "backslashreplace") if isinstance(name, bytes) else name
        if value is None:
            raw = b""
        elif isinstance(value, str):
            raw = value.encode("utf-8", "backslashreplace")
        else:
            raw = bytes(value)
        out.append((str(text_name), raw))
    return tuple(out)


def stable_id(msg: InputMessage) -> str:
    """The id of a message that names none: ``kafka:topic:partition:offset``, the same on replay."""
    return f"kafka:{msg.source}"


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """An input message that ends in the dead-letter topic instead of as a cleaned document.

    Attributes:
        reason: one of `DeadLetterReason.ALL`.
        detail: a human-readable explanation.
        source: the input message, whose value the dead-letter record carries (bounded).
        id: the document id as far as it is known (see `decode_input`), never empty.
        url: the page URL as far as it is known.
        exception: the class of the exception behind it (``orjson.JSONDecodeError``), if any.
    """

    reason: str
    detail: str
    source: InputMessage
    id: str
    url: str = ""
    exception: str | None = None

    def __post_init__(self) -> None:
        if self.reason not in DeadLetterReason.ALL:
            raise ValueError(f"unknown dead-letter reason {self.reason!r}")


def max_envelope_bytes(max_bytes: int) -> int:
    """The largest JSON envelope read for pages of up to ``max_bytes``: base64 plus overhead."""
    return -(-max_bytes * 4 // 3) + ENVELOPE_OVERHEAD_BYTES


def decode_input(
    msg: InputMessage, *, max_bytes: int = MAX_PAGE_BYTES_DEFAULT
) -> RawDocument | DeadLetter:
    """Read one input message: a JSON envelope or raw HTML bytes. Never raises.

    A value is a JSON envelope when its ``content-type`` header is JSON (``application/json``
    or ``+json``), or, without a ``content-type`` header, when its first byte after a BOM and
    white space is ``{``. A declared non-JSON ``content-type`` (``text/html``) means raw bytes.

    The document id is the envelope's ``id``, else the ``id`` header, else the key (UTF-8),
    else `stable_id` (topic, partition and offset, so a replay gets the same id). The URL is
    the envelope's ``url``, else the ``url`` header, else the key if it is an http(s) URL.

    Args:
        msg: the consumed message.
        max_bytes: the largest page: a raw value larger than this, or an envelope whose
            decoded body is (in bytes, or in characters for a text body), is ``too_large``.
            An envelope above `max_envelope_bytes` is ``too_large`` without being parsed, so
            its dead letter's id comes from the headers or the key only.

    Returns:
        The RawDocument to clean, or the DeadLetter to publish: ``too_large``;
        ``invalid_envelope`` for a JSON value that is not a valid envelope (what
        `envelope.parse_envelope`, the CLI's parser too, refuses: what the topic's schema
        refuses, and base64 that does not decode); ``internal_error`` for a bug. An empty or null
        value is a RawDocument with an empty body: the core reports it as ``empty``, the same
        reason as for any other empty page.
    """
    try:
        return _decode_input(msg, max_bytes)
    except Exception as exc:  # a bug here must still end as one dead letter, not a lost input
        try:
            return dead_letter_from_exception(msg, exc)
        except Exception:  # the id lookup itself failed: fall back to what cannot
            return dead_letter_from_exception(msg, exc, doc_id=stable_id(msg))


def _decode_input(msg: InputMessage, max_bytes: int) -> RawDocument | DeadLetter:
    value = msg.value or b""
    doc_id = _message_id(msg)
    url = _message_url(msg)
    content_type = _header_text(msg, HEADER_CONTENT_TYPE)
    is_envelope = _BLANK.match(value) is None and _is_json(value, content_type)
    limit = max_envelope_bytes(max_bytes) if is_envelope else max_bytes
    if len(value) > limit:
        kind = "JSON envelope" if is_envelope else "message value"
        return _too_large(msg, f"the {kind} has {len(value)} bytes, more than {limit}", doc_id, url)
    if not is_envelope:
        codings = {name: text for name in _CODING_HEADERS if (text := _header_text(msg, name))}
        # a JSON content-type names the envelope format (here with an empty value), not a page's
        page_type = content_type if content_type and not _is_json(value, content_type) else None
        return RawDocument(
            body=value,
            id=doc_id,
            url=url,
            headers=codings,
            content_type=page_type,
            status=_header_status(msg),
        )
    try:
        doc = parse_envelope(value, default_id=doc_id, default_url=url)
    except InvalidEnvelope as exc:
        return DeadLetter(
            reason=DeadLetterReason.INVALID_ENVELOPE,
            detail=exc.detail,
            source=msg,
            id=exc.id or doc_id,
            url=exc.url or url,
            exception=exc.exception,
        )
    if len(doc.body) > max_bytes:
        unit = "bytes" if isinstance(doc.body, bytes) else "characters"
        detail = f"the envelope's body has {len(doc.body)} {unit}, more than max_bytes={max_bytes}"
        return _too_large(msg, detail, doc.id, doc.url)
    return doc


def _too_large(msg: InputMessage, detail: str, doc_id: str, url: str) -> DeadLetter:
    return DeadLetter(
        reason=DeadLetterReason.TOO_LARGE, detail=detail, source=msg, id=doc_id, url=url
    )


def _message_id(msg: InputMessage) -> str:
    """The id named by the headers or the key, else the stable id."""
    found = _header_text(msg, HEADER_ID) or _key_text(msg)
    return bounded_text(found, MAX_ID_BYTES) if found else stable_id(msg)


def _message_url(msg: InputMessage) -> str:
    url = _header_text(msg, HEADER_URL)
    if not url:
        key = _key_text(msg)
        url = key if _URL.match(key) else ""
    return bounded_text(url, MAX_URL_BYTES)


def _key_text(msg: InputMessage) -> str:
    # backslashreplace: a non-UTF-8 key still gives the same id on every replay
    return msg.key.decode("utf-8", "backslashreplace").strip() if msg.key else ""


def _header_text(msg: InputMessage, name: str) -> str:
    value = msg.header(name)
    return value.decode("utf-8", "backslashreplace").strip() if value else ""


def _header_status(msg: InputMessage) -> int | None:
    """The ``status`` header as an integer; ``None`` when absent or not one (a hint, ignored
    when unreadable rather than refusing the page)."""
    try:
        return http_status(_header_text(msg, HEADER_STATUS) or None)
    except ValueError:
        return None


def _is_json(value: bytes, content_type: str) -> bool:
    if content_type:
        media_type = content_type.split(";", 1)[0].strip().lower()
        return media_type == "application/json" or media_type.endswith("+json")
    return _JSON_START.match(value) is not None


def dead_letter_from_document(msg: InputMessage, doc: CleanedDocument) -> DeadLetter:
    """The dead letter of a document the core could not clean (``doc.error`` is set)."""
    if doc.error is None:
        raise ValueError("the document has no error: it is a cleaned document, not a dead letter")
    reason = doc.error if doc.error in DeadLetterReason.ALL else DeadLetterReason.INTERNAL
    detail = doc.error_detail or doc.error
    exception = None
    if reason == DeadLetterReason.INTERNAL:
        # the core writes "ExceptionName: message" for an internal error
        name, sep, _ = detail.partition(": ")
        exception = name if sep and name.isidentifier() else None
    return DeadLetter(
        reason=reason,
        detail=detail,
        source=msg,
        id=doc.id or _message_id(msg),
        url=doc.url,
        exception=exception,
    )


def dead_letter_from_exception(
    msg: InputMessage,
    exc: BaseException,
    *,
    doc_id: str = "",
    url: str = "",
    reason: str = DeadLetterReason.INTERNAL,
) -> DeadLetter:
    """The dead letter of an input whose handling raised ``exc`` (``internal_error`` by default).

    Args:
        msg: the input message.
        exc: the exception.
        doc_id: the document id if known; else the headers', the key's or the stable id.
        url: the page URL if it is known.
        reason: one of `DeadLetterReason.ALL`.
    """
    return DeadLetter(
        reason=reason,
        detail=f"{type(exc).__name__}: {exc}",
        source=msg,
        id=doc_id or _message_id(msg),
        url=url,
        exception=exception_name(exc),
    )


def _payload(data: bytes | None, *, max_bytes: int, prefix_bytes: int) -> dict[str, Any] | None:
    """``data`` as base64 when it is at most ``max_bytes``, else its first ``prefix_bytes``."""
    if data is None:
        return None
    truncated = len(data) > max_bytes
    kept = data[:prefix_bytes] if truncated else data
    return {
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "truncated": truncated,
        "base64": base64.b64encode(kept).decode("ascii"),
    }


def dead_letter_record(
    dl: DeadLetter,
    *,
    worker_version: str,
    max_payload_bytes: int = DEAD_LETTER_MAX_PAYLOAD_BYTES_DEFAULT,
    prefix_bytes: int = DEAD_LETTER_PREFIX_BYTES_DEFAULT,
) -> KeyValue:
    """The ``clean.dead-letter.v1`` record of a dead letter, keyed by the document id.

    The original value (and key) is carried whole as base64 up to ``max_payload_bytes``; above
    it, only the first ``prefix_bytes``, with ``truncated`` set. Both always come with their
    size and SHA-256, so a truncated payload can still be matched to its original. The worker
    version is in the value (the issue asks for it), so dead letters are byte-identical across
    replays by the same worker version; deduplicate them on ``source``.

    Args:
        dl: the dead letter.
        worker_version: the version of the worker that made it.
        max_payload_bytes: the largest value carried whole.
        prefix_bytes: how much of a larger value is carried.

    Returns:
        ``(key, value)``, both bytes.
    """
    msg = dl.source
    key_bytes = min(max_payload_bytes, DEAD_LETTER_MAX_KEY_BYTES)
    headers, omitted = _bounded_headers(msg.headers)
    doc_id = bounded_text(dl.id, MAX_ID_BYTES)
    value = {
        "id": doc_id,
        "url": bounded_text(dl.url, MAX_URL_BYTES),
        "reason": dl.reason,
        "detail": bounded_text(dl.detail, MAX_DETAIL_BYTES),
        "exception": dl.exception,
        "source": {
            "topic": msg.topic,
            "partition": msg.partition,
            "offset": msg.offset,
            "timestamp_ms": msg.timestamp_ms,
            "key": _payload(
                msg.key, max_bytes=key_bytes, prefix_bytes=min(prefix_bytes, key_bytes)
            ),
            "headers": headers,
            "headers_omitted": omitted,
        },
        "payload": _payload(msg.value, max_bytes=max_payload_bytes, prefix_bytes=prefix_bytes),
        "worker_version": worker_version,
    }
    return _key(doc_id), orjson.dumps(value, option=_DUMPS_OPTIONS)


def _bounded_headers(headers: Sequence[tuple[str, bytes]]) -> tuple[list[dict[str, str]], int]:
    """A dead letter's copy of the input's headers, in order, up to `DEAD_LETTER_MAX_HEADERS`
    of them and `DEAD_LETTER_MAX_HEADER_BYTES` of names and values, and how many were left out."""
    out: list[dict[str, str]] = []
    total = 0
    for name, raw in headers:
        total += len(name) + len(raw)
        if total > DEAD_LETTER_MAX_HEADER_BYTES or len(out) == DEAD_LETTER_MAX_HEADERS:
            break
        out.append({"name": name, "value_base64": base64.b64encode(raw).decode("ascii")})
    return out, len(headers) - len(out)


def document_record(doc: CleanedDocument, *, model_id: str | None = None) -> KeyValue:
    """The ``clean.documents.v1`` record of a cleaned document, keyed by the document id.

    Args:
        doc: a document without ``error`` (one with an error is a dead letter).
        model_id: the language model's id; ``doc.model_id`` when omitted.

    Returns:
        ``(key, value)``, both bytes.

    Raises:
        ValueError: the document has an error.
    """
    if doc.error is not None:
        raise ValueError(f"document {doc.id!r} has the error {doc.error!r}: it is a dead letter")
    value = {
        "id": doc.id,
        "url": doc.url,
        "title": doc.title,
        "text": doc.text,
        "perplexity": doc.perplexity,
        "kept_perplexity": doc.kept_perplexity,
        "dropped": dict(doc.dropped),
        "n_sentences": len(doc.sentences),
        "n_kept": doc.n_kept,
        "n_blocks": doc.n_blocks,
        "encoding": doc.encoding,
        "model_id": model_id or doc.model_id,
        "language": doc.language.code,
        "language_confidence": doc.language.confidence,
        "guard": doc.guard,
        "page_type": doc.page_type,
        "page_type_confidence": doc.page_type_confidence,
    }
    return _key(doc.id), orjson.dumps(value, option=_DUMPS_OPTIONS)


class PackedValues(Sequence[bytes]):
    """Byte strings stored end to end in one ``bytes`` object, with the offset where each ends.

    A page's sentence values (some 200) as two objects instead of 200: the worker keeps a
    batch's records until the broker has them, and 200 small ``bytes`` a page scattered over
    memory made the cleaning that went on beside them slower; the producer's batch builder
    copies them in one pass (`record_batch.RecordBatchBuilder.append_packed`). Indexing and
    iterating give the values as ``bytes``; two PackedValues are equal when their values are.

    Attributes:
        data: the values, end to end.
        ends: ``array('q')``: value ``i`` is ``data[ends[i - 1]:ends[i]]`` (from 0 for the
            first).
    """

    __slots__ = ("data", "ends")

    def __init__(self, data: bytes = b"", ends: Iterable[int] = ()) -> None:
        self.data = data
        self.ends = ends if type(ends) is array and ends.typecode == "q" else array("q", ends)
        last = self.ends[-1] if self.ends else 0
        if last != len(data):
            raise ValueError(f"the values end at {last}, the data at {len(data)}")

    @classmethod
    def of(cls, values: Iterable[bytes]) -> PackedValues:
        """``values`` packed."""
        values = list(values)
        return cls(b"".join(values), accumulate(map(len, values)))

    def __len__(self) -> int:
        return len(self.ends)

    @overload
    def __getitem__(self, index: int) -> bytes: ...
    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...
    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        ends = self.ends
        if index < 0:
            index += len(ends)
        if not 0 <= index < len(ends):
            raise IndexError("value index out of range")
        return self.data[ends[index - 1] if index else 0 : ends[index]]

    def __iter__(self) -> Iterator[bytes]:
        data, start = self.data, 0
        for end in self.ends:
            yield data[start:end]
            start = end

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedValues):
            return self.data == other.data and self.ends == other.ends
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.data, self.ends.tobytes()))

    def __repr__(self) -> str:
        return f"PackedValues({list(self)!r})"


NO_VALUES: Final = PackedValues()


def sentence_records(doc: CleanedDocument) -> list[KeyValue]:
    """The ``clean.sentence-scores.v1`` records of a document, one per sentence, in order.

    All are keyed by the document id, so a document's sentences share a partition and stay in
    order; each carries ``n_sentences`` so a reader knows when it has them all.
    """
    key = _key(doc.id)
    return [(key, value) for value in sentence_values(doc)]


def _largest(values: PackedValues) -> int:
    """The length of the longest of ``values`` (0 for none)."""
    ends = values.ends
    if not ends:
        return 0
    return max(ends[0], max((b - a for a, b in pairwise(ends)), default=0))


def sentence_values(doc: CleanedDocument) -> PackedValues:
    """The values of `sentence_records`, without the key they all share, packed.

    The hot loop of the worker's own code (one record per sentence): the dict is written with
    its keys in sorted order, so orjson needs no ``OPT_SORT_KEYS`` for the same bytes.
    """
    fast = native_module("sentences")
    if fast is not None:
        return PackedValues(*fast.sentence_values(doc.id, doc.sentences, orjson.dumps))
    doc_id = doc.id
    total = len(doc.sentences)
    dumps = orjson.dumps
    return PackedValues.of(
        dumps(
            {
                "block_index": s.block_index,
                "document_id": doc_id,
                "index": index,
                "kept": s.keep,
                "language": s.language,
                "log10_prob": s.log10_prob,
                "n_sentences": total,
                "oov": s.n_oov,
                "perplexity": s.perplexity,
                "reason": s.reason,
                "text": s.text,
                "tokens": s.n_tokens,
            }
        )
        for index, s in enumerate(doc.sentences)
    )


def timing_headers(
    doc: CleanedDocument | None,
    *,
    worker_version: str,
    msg: InputMessage | None = None,
) -> list[tuple[str, bytes]]:
    """Kafka headers for what must stay out of record values: timings, worker, source.

    Args:
        doc: the cleaned document, for its processing time (total and per stage); ``None``
            for an input that never reached the core.
        worker_version: the worker's version.
        msg: the input message, for the ``source`` header (``topic:partition:offset``).

    Returns:
        ``worker-version``, then ``processing-seconds`` (total) and ``stage-seconds`` (a JSON
        object of seconds per stage) when ``doc`` is given, then ``source`` when ``msg`` is.
    """
    headers = [(HEADER_WORKER_VERSION, worker_version.encode("utf-8"))]
    if doc is not None and doc.seconds:
        seconds = {stage: round(value, 6) for stage, value in doc.seconds.items()}
        total = seconds.get("total", sum(seconds.values()))
        headers.append((HEADER_PROCESSING_SECONDS, f"{total:.6f}".encode("ascii")))
        headers.append((HEADER_STAGE_SECONDS, orjson.dumps(seconds, option=_DUMPS_OPTIONS)))
    if msg is not None:
        headers.append((HEADER_SOURCE, msg.source.encode("utf-8")))
    return headers


def _key(doc_id: str) -> bytes:
    return doc_id.encode("utf-8", "backslashreplace")


class OutputRecord(NamedTuple):
    """One record to publish: key, value and headers, all bytes.

    A named tuple rather than a frozen dataclass: hundreds are made per page, and a tuple is
    made several times faster.
    """

    key: bytes
    value: bytes
    headers: Headers = ()


_PERPLEXITY = operator.attrgetter("perplexity")


class DocumentStats(NamedTuple):
    """What the metrics read of a cleaned document (`WorkerMetrics.observe_outcome`).

    An `Outcome` keeps these instead of the document: a batch's outcomes live until the
    broker has their records, and a page's document (its sentences, blocks and text, some
    thousand objects) freed then by the event loop, cold, cost it a tenth of its time with
    the GIL (py-spy); freed in the cleaning thread right after its records are written, it is
    still in cache.
    """

    error: str | None
    language: str
    seconds: Mapping[str, float]
    dropped: Mapping[str, int]
    n_sentences: int
    guard: str | None = None
    page_type: str = ""

    @classmethod
    def of(cls, doc: CleanedDocument) -> DocumentStats:
        return cls(
            doc.error, doc.language.code, doc.seconds, doc.dropped, len(doc.sentences),
            doc.guard, doc.page_type,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one input message becomes: one cleaned document with its sentences, or one dead letter.

    Attributes:
        id: the document id.
        document: the ``clean.documents.v1`` record, or ``None`` for a dead letter.
        sentence_values: the values of the ``clean.sentence-scores.v1`` records, which all
            have the document record's key and no headers (`sentences` makes the records);
            empty for a dead letter, and for a document without sentences. Packed (any other
            sequence of bytes given is packed).
        dead_letter: the ``clean.dead-letter.v1`` record, or ``None`` for a cleaned document.
        reason: the dead-letter reason, or ``None``.
        cleaned: what the core returned (init only): its `DocumentStats` and sentence
            perplexities are kept, not the document; ``None`` when the input never reached
            the core.
        forward: the record re-keyed to the site topic (`forward_outcome`), or ``None``.
        stats: the cleaned document's `DocumentStats`, for metrics (computed; ``None`` when
            the input never reached the core).
        bytes_out: bytes of keys, values and headers over all the outcome's records (computed).
        perplexities: a cleaned document's sentence perplexities, NaN for a sentence without
            one, as a float64 array (computed; empty for a dead letter or a forward).
    """

    id: str
    document: OutputRecord | None = None
    sentence_values: PackedValues = NO_VALUES
    dead_letter: OutputRecord | None = None
    reason: str | None = None
    cleaned: InitVar[CleanedDocument | None] = None
    forward: OutputRecord | None = None
    # What the metrics read (`WorkerMetrics.observe_outcome`), worked out where the outcome
    # is made, in the cleaning thread, while its records are still in the CPU's caches: read
    # later by the event loop, a page's few hundred sentence values cost it several times
    # more, and the event loop's time is taken from the cleaning thread's (one GIL).
    stats: DocumentStats | None = field(init=False, compare=False)
    bytes_out: int = field(init=False, compare=False)
    perplexities: np.ndarray = field(init=False, compare=False, repr=False)

    def __post_init__(self, cleaned: CleanedDocument | None) -> None:
        heads = (self.document, self.dead_letter, self.forward)
        if sum(head is not None for head in heads) != 1:
            raise ValueError(
                "an outcome is exactly one cleaned document, one dead letter or one forward"
            )
        if self.dead_letter is not None and (self.sentence_values or self.reason is None):
            raise ValueError("a dead letter has a reason and no sentence records")
        if self.forward is not None and self.sentence_values:
            raise ValueError("a forwarded message has no sentence records")
        head = self.document or self.dead_letter or self.forward
        assert head is not None
        values = self.sentence_values
        if type(values) is not PackedValues:
            values = PackedValues.of(values)
            object.__setattr__(self, "sentence_values", values)
        n = len(head.key) + len(head.value) + sum(len(k) + len(v) for k, v in head.headers)
        n += len(head.key) * len(values) + len(values.data)
        object.__setattr__(self, "bytes_out", n)
        scored = cleaned.sentences if cleaned is not None and self.document else ()
        # each sentence's perplexity, NaN for one without (no token, no model for it)
        found = np.array(list(map(_PERPLEXITY, scored)), dtype=np.float64)
        object.__setattr__(self, "perplexities", found)
        stats = None if cleaned is None else DocumentStats.of(cleaned)
        object.__setattr__(self, "stats", stats)

    @property
    def is_dead_letter(self) -> bool:
        return self.dead_letter is not None

    @property
    def is_forward(self) -> bool:
        """The message goes to the site topic, re-keyed by its site (`forward_record`): it
        is cleaned when it comes back from there."""
        return self.forward is not None

    @property
    def sentences(self) -> tuple[OutputRecord, ...]:
        """The ``clean.sentence-scores.v1`` records, keyed like the document record."""
        if self.document is None:
            return ()
        key = self.document.key
        return tuple(OutputRecord(key, value) for value in self.sentence_values)

    @property
    def records(self) -> tuple[OutputRecord, ...]:
        """All records: the document then its sentences, or the dead letter alone."""
        if self.dead_letter is not None:
            return (self.dead_letter,)
        if self.forward is not None:
            return (self.forward,)
        assert self.document is not None  # __post_init__ guarantees one of the three
        return (self.document, *self.sentences)


def outcome_records(
    msg: InputMessage,
    result: RawDocument | DeadLetter,
    doc: CleanedDocument | None,
    *,
    worker_version: str,
    model_id: str | None = None,
    max_payload_bytes: int = DEAD_LETTER_MAX_PAYLOAD_BYTES_DEFAULT,
    prefix_bytes: int = DEAD_LETTER_PREFIX_BYTES_DEFAULT,
    max_record_bytes: int = MAX_MESSAGE_BYTES_DEFAULT,
) -> Outcome:
    """The records of one input message: a cleaned document with its sentences, or a dead letter.

    A DeadLetter from `decode_input`, a document the core returned with an ``error`` (empty,
    binary_content, too_large, time_budget...), a missing ``doc``, a document that cannot
    be serialised and one whose document or sentence record would not fit in
    ``max_record_bytes`` all end as one dead-letter record. Never raises for a valid ``msg``.

    Args:
        msg: the input message.
        result: what `decode_input` made of it.
        doc: what `clean_document` made of ``result``; ``None`` when ``result`` is a DeadLetter.
        worker_version: the worker's version, for the dead letter and the headers.
        model_id: the language model's id; ``doc.model_id`` when omitted.
        max_payload_bytes, prefix_bytes: see `dead_letter_record`.
        max_record_bytes: the producer's largest record (the worker's ``max_message_bytes``);
            a dead letter above it (with a small limit) keeps only a prefix of the payload.

    Returns:
        The Outcome. The document record carries `timing_headers`; the dead-letter record
        carries them too; sentence records carry no headers (their document's record has them).
    """
    if isinstance(result, DeadLetter):
        dl = result
        doc = None
    elif doc is None:
        dl = DeadLetter(
            reason=DeadLetterReason.INTERNAL,
            detail="the worker produced no cleaned document for a decoded input",
            source=msg,
            id=result.id or _message_id(msg),
            url=result.url,
        )
    elif doc.error is not None:
        dl = dead_letter_from_document(msg, doc)
    else:
        try:
            headers = tuple(timing_headers(doc, worker_version=worker_version, msg=msg))
            key, value = document_record(doc, model_id=model_id)
            values = sentence_values(doc)
            limit = max_record_bytes - RECORD_OVERHEAD_BYTES - len(key)
            # the sentences' total first: their longest matters only when that is too long
            largest = max(len(value), _largest(values) if len(values.data) > limit else 0)
            if largest <= limit:
                return Outcome(
                    id=doc.id,
                    document=OutputRecord(key, value, headers),
                    sentence_values=values,
                    cleaned=doc,
                )
            dl = DeadLetter(
                reason=DeadLetterReason.TOO_LARGE,
                detail=f"the cleaned page makes a record of {largest} bytes, more than the "
                f"{limit} that max_message_bytes={max_record_bytes} leaves",
                source=msg,
                id=doc.id,
                url=doc.url,
            )
        except Exception as exc:  # e.g. text that is not valid UTF-8: never lose the input
            dl = dead_letter_from_exception(msg, exc, doc_id=doc.id, url=doc.url)
    key, value = dead_letter_record(
        dl,
        worker_version=worker_version,
        max_payload_bytes=max_payload_bytes,
        prefix_bytes=prefix_bytes,
    )
    if len(key) + len(value) > max_record_bytes - RECORD_OVERHEAD_BYTES:
        key, value = dead_letter_record(  # a small max_message_bytes: a prefix of 1 kB
            dl, worker_version=worker_version, max_payload_bytes=0,
            prefix_bytes=min(prefix_bytes, 1024),
        )  # fmt: skip
    headers = tuple(timing_headers(doc, worker_version=worker_version, msg=msg))
    return Outcome(
        id=dl.id,
        dead_letter=OutputRecord(key, value, headers),
        reason=dl.reason,
        cleaned=doc,
    )


def clean_message(
    msg: InputMessage,
    *,
    worker_version: str,
    settings: CleanerSettings | None = None,
    model: LanguageModel | None = None,
    max_bytes: int = MAX_PAGE_BYTES_DEFAULT,
    sites: SiteTemplates | None = None,
    learn_site: bool = True,
    max_record_bytes: int = MAX_MESSAGE_BYTES_DEFAULT,
) -> Outcome:
    """Decode, clean and serialise one input message: everything an agent does but the I/O.

    A plain function of picklable arguments, so an agent can run it in an executor to keep the
    event loop free.

    Args:
        msg: the input message.
        worker_version: the worker's version.
        settings: the cleaner's settings; the defaults when omitted.
        model: the language model; the process-wide model of ``settings.model_path`` if omitted.
        max_bytes: the largest page cleaned (see `decode_input`).
        sites: site-template statistics to use and to learn from (`clean_document`).
        learn_site: ``False`` for a page the statistics learnt already (a held page,
            `warmup`): it reads its site's other pages.
        max_record_bytes: the producer's largest record (see `outcome_records`).

    Returns:
        The Outcome to publish.

    Raises:
        Whatever `clean_document` raises for a broken set-up (a missing model file): that is
        not the page's fault, and dead-lettering every page would hide it.
    """
    result = decode_input(msg, max_bytes=max_bytes)
    doc = None
    if isinstance(result, RawDocument):
        doc = clean_document(
            result, settings=settings, model=model, sites=sites, learn_site=learn_site
        )
    return outcome_records(
        msg, result, doc, worker_version=worker_version, max_record_bytes=max_record_bytes
    )


# the header a re-keyed message carries: where it was first read (topic:partition:offset)
HEADER_REKEYED_FROM: Final = "stream-cleaner-rekeyed-from"
REKEY_MODES: Final = ("off", "missing", "all")


def site_to_rekey(
    msg: InputMessage,
    *,
    rekey: str,
    site_key: str = "host",
    max_bytes: int = MAX_PAGE_BYTES_DEFAULT,
) -> str | None:
    """The site to re-key a message by, or ``None`` to clean it where it is.

    Site templates need a site's pages on one partition. With ``rekey`` ``missing``, a
    message without a key goes to the site topic keyed by its site; with ``all``, so does
    every message whose key is not its site; ``off`` re-keys nothing. A message that
    carries `HEADER_REKEYED_FROM` was re-keyed already, and one whose site cannot be told
    (no URL, nor one the page declares) or that will be a dead letter stays where it is.
    """
    if rekey == "off" or (rekey == "missing" and msg.key) or msg.header(HEADER_REKEYED_FROM):
        return None
    result = decode_input(msg, max_bytes=max_bytes)
    if not isinstance(result, RawDocument):
        return None
    url = result.url
    if not url:
        try:
            body = result.body
            text = (
                decode_body(body, content_type=result.content_type, headers=result.headers).text
                if isinstance(body, bytes)
                else body
            )
        except BinaryContent:
            return None
        url = find_page_url(text)
    site = site_of(url, key=site_key)
    if not site or (msg.key is not None and msg.key == site.encode("utf-8")):
        return None
    return site


def forward_outcome(msg: InputMessage, site: str) -> Outcome:
    """The message as it goes to the site topic: its value and headers as they came, keyed
    by ``site``, with its id and URL in headers when only its key or its coordinates gave
    them (a replay then forwards the same record) and `HEADER_REKEYED_FROM`."""
    headers = [(name, value) for name, value in msg.headers if name.lower() != HEADER_REKEYED_FROM]
    doc_id = _message_id(msg)
    if not msg.header(HEADER_ID):
        headers.append((HEADER_ID, _key(doc_id)))
    url = _message_url(msg)
    if url and not msg.header(HEADER_URL):
        headers.append((HEADER_URL, url.encode("utf-8")))
    headers.append((HEADER_REKEYED_FROM, msg.source.encode("utf-8")))
    record = OutputRecord(site.encode("utf-8"), msg.value or b"", tuple(headers))
    return Outcome(id=doc_id, forward=record)
