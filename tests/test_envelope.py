"""The crawl envelope's one parser against its contract, topics/crawl.raw-html.v1.schema.json.

The CLI and the worker read envelopes with this parser alone; tests/streaming/test_envelope.py
checks that both give the same document for the same envelope, through the real worker too.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from stream_cleaner.document import RawDocument
from stream_cleaner.envelope import (
    MAX_ID_BYTES,
    InvalidEnvelope,
    envelope_value,
    parse_envelope,
)

from .conftest import REPO

SCHEMA = Draft202012Validator(
    orjson.loads((REPO / "topics" / "crawl.raw-html.v1.schema.json").read_bytes())
)
PAGE = "<p>A river is a natural stream of water.</p>"
PAGE_B64 = base64.b64encode(PAGE.encode()).decode()

# envelopes the schema allows: each must parse
VALID: list[dict[str, Any]] = [
    {"body": PAGE},
    {"id": "a", "body": PAGE, "body_encoding": "text"},
    {"id": "a", "body": PAGE, "body_encoding": None},
    {"id": "b64", "body": PAGE_B64, "body_encoding": "base64"},
    {
        "id": "b64-lines",
        "body": "\n".join([PAGE_B64[:20], PAGE_B64[20:]]),
        "body_encoding": "base64",
    },
    {"id": 7, "body_base64": PAGE_B64},
    {"id": 7.0, "html": PAGE},  # JSON Schema's integer: a number whose fraction is zero
    {"id": "h", "body": PAGE, "headers": {"Content-Length": 45, "Age": 1.5, "Via": ["a", 2]}},
    {"id": "h", "body": PAGE, "headers": None, "url": None, "content_type": None},
    {"id": "s", "body": PAGE, "status": 200, "fetched_at": 1767225600.5},
    {"id": "s", "body": PAGE, "status": 200.0, "fetched_at": "2026-01-01T00:00:00Z"},
    {"id": "s", "body": PAGE, "status": None, "fetched_at": None},
    {"id": "extra", "body": PAGE, "crawler": {"depth": 3}, "tags": [1, True]},
    {"id": "both", "body": PAGE, "body_base64": PAGE_B64, "html": "<p>other</p>"},
    {"id": "enc", "html": PAGE, "body_encoding": "text"},
]
# envelopes the schema refuses: each must be an InvalidEnvelope whose detail names the field
INVALID: list[tuple[Any, str]] = [
    ([1, 2], "a JSON array where an envelope object belongs"),
    ({"id": "x"}, "no body, body_base64 or html"),
    ({"id": "x", "body": 5}, "body must be a string, not number"),
    ({"id": "x", "body": None}, "body must be a string, not null"),
    ({"id": "x", "body": PAGE, "body_encoding": "gzip"}, "body_encoding must be"),
    ({"id": "x", "html": PAGE, "body_encoding": "gzip"}, "body_encoding must be"),
    ({"id": "x", "body": "<p>x</p>", "body_encoding": "base64"}, "body is not valid base64"),
    ({"id": "x", "body_base64": "PGh0!!"}, "body_base64 is not valid base64"),
    ({"id": "x", "body_base64": "YQ= =\n"}, "white space inside its padding"),
    ({"id": "x", "body": PAGE, "body_base64": "***"}, "body_base64 is not valid base64"),
    ({"id": "x", "body": PAGE, "html": 5}, "html must be a string, not number"),
    ({"id": ["x"], "body": PAGE}, "id must be a string or an integer, not array"),
    ({"id": True, "body": PAGE}, "id must be a string or an integer, not boolean"),
    ({"id": 1.5, "body": PAGE}, "id must be a string or an integer, not number"),
    ({"id": "x", "body": PAGE, "url": 3}, "url must be a string, not number"),
    ({"id": "x", "body": PAGE, "content_type": ["text/html"]}, "content_type must be a string"),
    ({"id": "x", "body": PAGE, "status": "200"}, "status must be an integer"),
    ({"id": "x", "body": PAGE, "status": True}, "status must be an integer"),
    ({"id": "x", "body": PAGE, "headers": ["a"]}, "headers must be an object, not array"),
    ({"id": "x", "body": PAGE, "headers": {"A": True}}, "headers['A'] must be a string, a number"),
    ({"id": "x", "body": PAGE, "headers": {"A": None}}, "not null"),
    ({"id": "x", "body": PAGE, "headers": {"A": [["b"]]}}, "not array"),
    ({"id": "x", "body": PAGE, "headers": {"A": {"b": 1}}}, "not object"),
    ({"id": "x", "body": PAGE, "fetched_at": True}, "fetched_at must be a string or a number"),
    ({"id": "x", "body": PAGE, "fetched_at": {}}, "fetched_at must be a string or a number"),
]


@pytest.mark.parametrize("fields", VALID, ids=range(len(VALID)))
def test_what_the_schema_allows_parses(fields: dict[str, Any]) -> None:
    assert SCHEMA.is_valid(fields), list(SCHEMA.iter_errors(fields))
    doc = parse_envelope(orjson.dumps(fields), default_id="default")
    assert doc.body in (PAGE, PAGE.encode())


@pytest.mark.parametrize(("fields", "detail"), INVALID, ids=range(len(INVALID)))
def test_what_the_schema_refuses_is_an_invalid_envelope(fields: Any, detail: str) -> None:
    assert not SCHEMA.is_valid(fields)
    with pytest.raises(InvalidEnvelope) as caught:
        parse_envelope(orjson.dumps(fields))
    assert detail in caught.value.detail
    # the envelope's id and URL are kept where their types are right, for the error record
    expected_id = fields.get("id") if isinstance(fields, dict) else None
    assert caught.value.id == (expected_id if isinstance(expected_id, str) else "")


def test_base64_the_schema_lets_through_but_that_does_not_decode_is_refused() -> None:
    # the schema's pattern cannot see missing padding; decoding does
    for name in ("body", "body_base64"):
        fields = {"id": "x", name: "YQ", "body_encoding": "base64"}
        assert SCHEMA.is_valid(fields)
        with pytest.raises(InvalidEnvelope, match=f"{name} is not valid base64"):
            parse_envelope(orjson.dumps(fields))
    assert parse_envelope(b'{"body": "YQ==", "body_encoding": "base64"}').body == b"a"


def test_fields_become_the_document() -> None:
    fields = {
        "id": "  doc-1 ",
        "url": " https://example.org/a ",
        "body": PAGE_B64,
        "body_encoding": "base64",
        "headers": {"Content-Type": "text/html", "Content-Length": 45, "Age": 1.5,
                    "Vary": ["Accept", 2]},
        "content_type": "",
        "status": 200.0,
        "fetched_at": 1767225600,
    }  # fmt: skip
    value = b"\xef\xbb\xbf" + orjson.dumps(fields)
    assert parse_envelope(value, default_id="d", default_url="u") == RawDocument(
        body=PAGE.encode(),
        id="doc-1",
        url="https://example.org/a",
        headers={"Content-Type": "text/html", "Content-Length": "45", "Age": "1.5",
                 "Vary": "Accept, 2"},
        content_type=None,
        status=200,
    )  # fmt: skip
    assert parse_envelope(b'{"id": "", "html": "x"}', default_id="d", default_url="u") == (
        RawDocument(body="x", id="d", url="u")
    )
    assert parse_envelope(b'{"id": 12, "html": "x"}').id == "12"
    long_id = parse_envelope(orjson.dumps({"id": "x" * 5000, "html": "x"})).id
    assert len(long_id.encode()) == MAX_ID_BYTES and "sha256:" in long_id


def test_invalid_json_says_so_and_names_its_exception() -> None:
    with pytest.raises(InvalidEnvelope, match="not valid JSON") as caught:
        parse_envelope(b'{"id": "x", "body": ')
    assert caught.value.exception == "orjson.JSONDecodeError"
    assert caught.value.id == ""


@pytest.mark.parametrize(
    "doc",
    [
        RawDocument(body="<p>text</p>", id="a", url="https://example.org/a"),
        RawDocument(body=b"<p>caf\xc3\xa9</p>", id="b"),  # UTF-8 bytes go as text
        RawDocument(
            body=b"<p>caf\xe9</p>",  # Latin-1 bytes go as base64
            id="c",
            url="https://example.org/c",
            headers={"Content-Type": "text/html; charset=iso-8859-1", "Age": "5"},
            content_type="text/html",
            status=200,
        ),
    ],
)
def test_what_produce_writes_parses_back_to_the_same_document(doc: RawDocument) -> None:
    value = envelope_value(doc)
    assert SCHEMA.is_valid(orjson.loads(value))
    parsed = parse_envelope(value)
    body = doc.body.decode() if doc.id == "b" else doc.body
    assert parsed == RawDocument(**{**_fields(doc), "body": body})


def _fields(doc: RawDocument) -> dict[str, Any]:
    return {name: getattr(doc, name) for name in RawDocument.__dataclass_fields__}
