"""The crawl envelope of ``crawl.raw-html.v1``: the one parser and the one writer of it.

```
JSON envelope bytes -> parse_envelope() -> RawDocument | InvalidEnvelope
RawDocument -> envelope_value() -> JSON envelope bytes
```

`topics/crawl.raw-html.v1.schema.json` is the contract. Every caller reads envelopes with
`parse_envelope`: the CLI's JSON Lines reader (`io.readers`; ``stream-cleaner produce`` reads
its inputs with it too) and the worker (`streaming.records.decode_input`), so one envelope
gives one document in both; ``produce`` writes them with `envelope_value`.

`parse_envelope` refuses every envelope the schema refuses, and one more kind: base64 that
the schema's pattern lets through but that does not decode (``"YQ"``, its padding missing).
The CLI reports a refused envelope as an ``invalid_json`` error record, the worker as an
``invalid_envelope`` dead letter, both with `InvalidEnvelope.detail` as the detail.

A plain module of the core: it knows nothing of Kafka, and ``streaming`` imports it, never
the other way round.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from typing import Any, Final

import orjson

from .document import RawDocument

__all__ = [
    "MAX_ID_BYTES",
    "MAX_URL_BYTES",
    "InvalidEnvelope",
    "bounded_text",
    "envelope_value",
    "exception_name",
    "parse_envelope",
]

# Longer ids and URLs (in UTF-8 bytes) are shortened (`bounded_text`): one 6 MB id made every
# record of its page 6 MB, over the broker's limit.
MAX_ID_BYTES: Final = 1024
MAX_URL_BYTES: Final = 16 * 1024

_BOM: Final = b"\xef\xbb\xbf"
_TEXT_ENCODINGS: Final = (None, "text")
_BASE64_ENCODINGS: Final = ("base64",)
# the schema's fields that hold a page: the first present is the page, the others are
# checked all the same (the schema checks every field it lists)
_BODY_FIELDS: Final = ("body", "body_base64", "html")

try:
    from pybase64 import b64decode as _fast_b64decode
except ImportError:  # without the stream extra's pybase64
    _fast_b64decode = base64.b64decode


class InvalidEnvelope(ValueError):
    """A value that is not an envelope the schema allows.

    Attributes:
        detail: what is wrong, for a person (the error record's or dead letter's detail).
        exception: the class of the exception behind it (a JSON or base64 error), if any.
        id, url: the envelope's own, when it names them with the right types (bounded as a
            document's are), so that its error record or dead letter can be joined; ``""``
            otherwise.
    """

    def __init__(self, detail: str, *, cause: BaseException | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.exception = exception_name(cause) if cause is not None else None
        self.id = ""
        self.url = ""

    def name_from(self, obj: Mapping[str, Any]) -> InvalidEnvelope:
        """Take the id and URL of the broken envelope."""
        raw_id, raw_url = obj.get("id"), obj.get("url")
        found = _integer(raw_id)
        if isinstance(raw_id, str) or found is not None:
            self.id = bounded_text(str(raw_id if found is None else found).strip(), MAX_ID_BYTES)
        if isinstance(raw_url, str):
            self.url = bounded_text(raw_url.strip(), MAX_URL_BYTES)
        return self


def parse_envelope(
    value: bytes | str, *, default_id: str = "", default_url: str = ""
) -> RawDocument:
    """The RawDocument of one JSON envelope (a leading UTF-8 BOM is allowed).

    The page is ``body`` (text, or base64 with ``body_encoding: base64``), else ``body_base64``,
    else ``html``. The id and URL are stripped of white space and bounded (`bounded_text`:
    `MAX_ID_BYTES`, `MAX_URL_BYTES`); an integer id becomes its digits. A header's number
    becomes its JSON text (``5``, ``1.5``), and a list of values is folded as HTTP folds a
    repeated header, with ``", "``. Fields the schema does not list are ignored;
    ``fetched_at`` is checked and ignored.

    Args:
        value: the envelope's JSON.
        default_id: the id when the envelope names none (or an empty one).
        default_url: the URL when the envelope names none (or an empty one).

    Returns:
        The document, its body bytes when the envelope's page is base64 and text otherwise.

    Raises:
        InvalidEnvelope: the schema refuses the value, or its base64 does not decode.
    """
    try:
        obj = orjson.loads(value[len(_BOM) :] if value[:3] == _BOM else value)
    except orjson.JSONDecodeError as exc:
        raise InvalidEnvelope(f"not valid JSON: {exc}", cause=exc) from None
    if not isinstance(obj, dict):
        raise InvalidEnvelope(f"a JSON {_json_type(obj)} where an envelope object belongs")
    try:
        body = _envelope_body(obj)
        raw_id = obj.get("id")
        envelope_id = _integer(raw_id)
        if raw_id is not None and envelope_id is None and not isinstance(raw_id, str):
            raise InvalidEnvelope(f"id must be a string or an integer, not {_json_type(raw_id)}")
        url = _str_field(obj, "url")
        content_type = _str_field(obj, "content_type")
        headers = _envelope_headers(obj.get("headers"))
        status = _status_field(obj)
        _check_unread_fields(obj)
    except InvalidEnvelope as exc:
        raise exc.name_from(obj) from None
    text_id = "" if raw_id is None else str(raw_id if envelope_id is None else envelope_id)
    return RawDocument(
        body=body,
        id=bounded_text(text_id.strip(), MAX_ID_BYTES) or default_id,
        url=bounded_text(url.strip(), MAX_URL_BYTES) or default_url,
        headers=headers,
        content_type=content_type or None,
        status=status,
    )


def envelope_value(doc: RawDocument) -> bytes:
    """``doc`` as a JSON envelope, which `parse_envelope` reads back as ``doc`` (its ``error``
    aside: a document with one has no page to send).

    The body goes as text when it is valid UTF-8 and as ``body_base64`` otherwise, so bytes
    in any charset arrive unchanged.
    """
    envelope: dict[str, Any] = {"id": doc.id, "url": doc.url}
    if doc.headers:
        envelope["headers"] = dict(doc.headers)
    if doc.content_type:
        envelope["content_type"] = doc.content_type
    if doc.status is not None:
        envelope["status"] = doc.status
    body = doc.body
    if isinstance(body, str):
        envelope["body"] = body
    else:
        try:
            envelope["body"] = body.decode("utf-8")
        except UnicodeDecodeError:
            envelope["body_base64"] = base64.b64encode(body).decode("ascii")
    return orjson.dumps(envelope)


def bounded_text(text: str, max_bytes: int) -> str:
    """``text``, or when its UTF-8 is longer than ``max_bytes``, its start, "…sha256:" and the
    SHA-256 of the whole (hex), ``max_bytes`` in all: the same text is shortened the same way
    on every replay, and two long texts stay apart."""
    if len(text) * 4 <= max_bytes:
        return text  # short enough in any encoding: no need to encode it
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    digest = hashlib.sha256(data).hexdigest()
    start = data[: max(max_bytes - 74, 0)].decode("utf-8", "ignore")
    return f"{start}…sha256:{digest}"


def exception_name(exc: BaseException) -> str:
    """The exception's class as ``module.Name`` (``orjson.JSONDecodeError``); builtins bare."""
    cls = type(exc)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _envelope_body(obj: Mapping[str, Any]) -> bytes | str:
    """The page of an envelope: ``body`` (text, or base64 with ``body_encoding: base64``),
    else ``body_base64``, else ``html``.

    Raises:
        InvalidEnvelope: a missing body, a field of the wrong type, a body that is not base64.
    """
    if "body" in obj:
        body = _str_field(obj, "body", required=True)
        encoding = _body_encoding(obj)
        return body if encoding in _TEXT_ENCODINGS else _b64decode(body, "body")
    if "body_base64" in obj:
        return _b64decode(_str_field(obj, "body_base64", required=True), "body_base64")
    if "html" in obj:
        return _str_field(obj, "html", required=True)
    raise InvalidEnvelope("the envelope has no body, body_base64 or html field")


def _body_encoding(obj: Mapping[str, Any]) -> str | None:
    encoding = obj.get("body_encoding")
    if encoding in _TEXT_ENCODINGS or encoding in _BASE64_ENCODINGS:
        return encoding
    raise InvalidEnvelope(
        f"body_encoding must be 'text' or 'base64', not {orjson.dumps(encoding).decode()}"
    )


def _check_unread_fields(obj: Mapping[str, Any]) -> None:
    """Check what the schema says of the fields that give no part of the document: the page
    fields after the one read, ``body_encoding`` without a ``body``, and ``fetched_at``.

    Raises:
        InvalidEnvelope: one of them has a type or form the schema refuses.
    """
    read = next(name for name in _BODY_FIELDS if name in obj)
    for name in _BODY_FIELDS[_BODY_FIELDS.index(read) + 1 :]:
        if name in obj:
            text = _str_field(obj, name, required=True)
            if name == "body_base64":
                _b64decode(text, name)
    if read != "body":
        _body_encoding(obj)
    fetched_at = obj.get("fetched_at")
    if fetched_at is not None and not _is_number(fetched_at) and not isinstance(fetched_at, str):
        raise InvalidEnvelope(
            f"fetched_at must be a string or a number, not {_json_type(fetched_at)}"
        )


def _status_field(obj: Mapping[str, Any]) -> int | None:
    value = obj.get("status")
    status = _integer(value)
    if value is not None and status is None:
        raise InvalidEnvelope(f"status must be an integer, not {value!r:.40}")
    return status


def _integer(value: Any) -> int | None:
    """``value`` as an int when JSON Schema counts it an integer (``5``, and ``5.0``: a number
    whose fraction is zero), else ``None``."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return None


def _is_number(value: Any) -> bool:
    return type(value) is int or type(value) is float  # not bool, which JSON keeps apart


def _b64decode(text: str, field: str) -> bytes:
    try:  # most base64 is one line: decoded as it is, without copying it first
        # pybase64: 30x the standard library's speed (0.2 ms for a 50 KB page); stricter, so
        # what it refuses gets the standard library's answer below
        return _fast_b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        pass
    # MIME-style base64 (line breaks every 76 characters) is common: white space is not an error
    compact = "".join(text.split())
    try:
        data = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidEnvelope(f"{field} is not valid base64: {exc}", cause=exc) from None
    padding = len(compact) - len(compact.rstrip("="))
    if padding and not text.rstrip().endswith("=" * padding):
        # the schema's pattern: white space may not part the padding ("YQ= =")
        raise InvalidEnvelope(f"{field} is not valid base64: white space inside its padding")
    return data


def _envelope_headers(raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidEnvelope(f"headers must be an object, not {_json_type(raw)}")
    headers: dict[str, str] = {}
    for key, value in raw.items():
        if isinstance(value, str):
            headers[key] = value
        elif _is_number(value):
            headers[key] = orjson.dumps(value).decode()
        elif isinstance(value, list) and all(isinstance(v, str) or _is_number(v) for v in value):
            # repeated HTTP headers arrive as lists; HTTP itself folds them with ", "
            headers[key] = ", ".join(
                v if isinstance(v, str) else orjson.dumps(v).decode() for v in value
            )
        else:
            raise InvalidEnvelope(
                f"headers[{key!r}] must be a string, a number or a list of them, "
                f"not {_json_type(value)}"
            )
    return headers


def _str_field(obj: Mapping[str, Any], key: str, *, required: bool = False) -> str:
    """``obj[key]`` if it is a string; "" if it is absent or null and not required.

    Raises:
        InvalidEnvelope: another type, or missing though required.
    """
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise InvalidEnvelope(f"{key} must be a string, not {_json_type(value)}")
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )
