"""Record formats of the four topics: input decoding, output records, schemas, determinism."""

from __future__ import annotations

import base64
import gzip
import hashlib
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from stream_cleaner import CleanedDocument, CleanerSettings, DropReason, RawDocument, clean_document
from stream_cleaner.lm import LanguageModel
from stream_cleaner.streaming.records import (
    DEAD_LETTER_MAX_HEADERS,
    DEAD_LETTER_MAX_PAYLOAD_BYTES_DEFAULT,
    DEAD_LETTER_PREFIX_BYTES_DEFAULT,
    MAX_ID_BYTES,
    MAX_PAGE_BYTES_DEFAULT,
    MAX_URL_BYTES,
    NO_VALUES,
    DeadLetter,
    DeadLetterReason,
    InputMessage,
    Outcome,
    OutputRecord,
    PackedValues,
    bounded_text,
    clean_message,
    dead_letter_record,
    decode_input,
    document_record,
    max_envelope_bytes,
    outcome_records,
    sentence_records,
    timing_headers,
)

from ..conftest import DATA, REPO

TOPICS = REPO / "topics"
TOPIC = "crawl.raw-html.v1"
VERSION = "9.9.9-test"
PAGE = (
    "<html><head><title>Rivers</title></head><body>"
    '<nav><a href="/">Home</a> | <a href="/about">About</a></nav>'
    "<p>A river is a natural stream of water that flows towards an ocean, a lake or another "
    "river. Rivers are part of the water cycle.</p>"
    "<p>The water in a river usually flows in a channel between two banks.</p>"
    "</body></html>"
)
PAGE_BYTES = PAGE.encode()
# Latin-1 bytes: only the charset in the envelope's headers decodes them right.
LATIN1_PAGE = "<p>Bread is a food made from flour, water and yeast. Café crème.</p>".encode(
    "latin-1"
)


def _schema(name: str) -> Draft202012Validator:
    schema = orjson.loads((TOPICS / f"{name}.schema.json").read_bytes())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


INPUT_SCHEMA = _schema("crawl.raw-html.v1")
DOCUMENT_SCHEMA = _schema("clean.documents.v1")
SENTENCE_SCHEMA = _schema("clean.sentence-scores.v1")
DEAD_LETTER_SCHEMA = _schema("clean.dead-letter.v1")


@pytest.fixture(scope="module")
def settings() -> CleanerSettings:
    return CleanerSettings(model_path=str(DATA / "tiny.arpa"), mode="perplexity")


@pytest.fixture
def clean(settings: CleanerSettings, tiny_model: LanguageModel):
    """`clean_message` with the tiny model, its records checked against the schemas."""

    def run(msg: InputMessage, **options: Any) -> Outcome:
        options.setdefault("settings", settings)
        outcome = clean_message(msg, worker_version=VERSION, model=tiny_model, **options)
        check_outcome(outcome)
        return outcome

    return run


@pytest.fixture
def cleaned(settings: CleanerSettings, tiny_model: LanguageModel):
    """The cleaned document of a message that decodes to a page (the core's, as
    `clean_message` makes it; an Outcome keeps only its `DocumentStats`)."""

    def run(msg: InputMessage) -> CleanedDocument:
        raw = decode_input(msg)
        assert isinstance(raw, RawDocument)
        return clean_document(raw, settings=settings, model=tiny_model)

    return run


def message(
    value: bytes | None,
    *,
    key: bytes | None = None,
    headers: tuple[tuple[str, bytes], ...] = (),
    partition: int = 3,
    offset: int = 42,
) -> InputMessage:
    return InputMessage(
        topic=TOPIC,
        partition=partition,
        offset=offset,
        key=key,
        value=value,
        headers=headers,
        timestamp_ms=1_767_225_600_000,
    )


def envelope(**fields: Any) -> bytes:
    value = orjson.dumps(fields)
    assert INPUT_SCHEMA.is_valid(fields), list(INPUT_SCHEMA.iter_errors(fields))
    return value


def check_outcome(outcome: Outcome) -> None:
    """Exactly one kind, keys are the id, every value valid against its topic's schema."""
    key = outcome.id.encode()
    assert (outcome.document is None) != (outcome.dead_letter is None)
    if outcome.dead_letter is not None:
        assert outcome.records == (outcome.dead_letter,)
        assert outcome.sentences == ()
        assert outcome.dead_letter.key == key
        value = orjson.loads(outcome.dead_letter.value)
        DEAD_LETTER_SCHEMA.validate(value)
        assert value["reason"] == outcome.reason
        assert value["id"] == outcome.id
        return
    assert outcome.document is not None
    assert outcome.reason is None
    assert outcome.records == (outcome.document, *outcome.sentences)
    doc = orjson.loads(outcome.document.value)
    DOCUMENT_SCHEMA.validate(doc)
    assert outcome.document.key == key
    assert doc["id"] == outcome.id
    assert doc["n_sentences"] == len(outcome.sentences)
    for index, record in enumerate(outcome.sentences):
        assert record.key == key
        assert record.headers == ()
        sentence = orjson.loads(record.value)
        SENTENCE_SCHEMA.validate(sentence)
        assert sentence["document_id"] == outcome.id
        assert sentence["index"] == index
        assert sentence["n_sentences"] == len(outcome.sentences)
    kept = [orjson.loads(r.value) for r in outcome.sentences]
    assert doc["n_kept"] == sum(s["kept"] for s in kept)
    # the values are written with their keys in order, as the sorting serialiser would
    for record in outcome.sentences:
        assert record.value == orjson.dumps(orjson.loads(record.value), option=orjson.OPT_SORT_KEYS)
    assert outcome.bytes_out == sum(
        len(r.key) + len(r.value) + sum(len(n) + len(v) for n, v in r.headers)
        for r in outcome.records
    )


def dead_letter_value(outcome: Outcome) -> dict[str, Any]:
    assert outcome.dead_letter is not None
    return orjson.loads(outcome.dead_letter.value)


def document_value(outcome: Outcome) -> dict[str, Any]:
    assert outcome.document is not None
    return orjson.loads(outcome.document.value)


# --- the input forms ------------------------------------------------------------------------


def test_envelope_with_text_body(clean) -> None:
    value = envelope(
        id="doc-1",
        url="https://example.org/rivers",
        fetched_at="2026-01-01T00:00:00Z",
        status=200,
        headers={"Content-Type": "text/html; charset=utf-8", "Set-Cookie": ["a=1", "b=2"]},
        content_type="text/html; charset=utf-8",
        body=PAGE,
    )
    raw = decode_input(message(value, key=b"ignored-key"))
    assert isinstance(raw, RawDocument)
    assert raw.body == PAGE
    assert (raw.id, raw.url) == ("doc-1", "https://example.org/rivers")
    assert raw.headers == {"Content-Type": "text/html; charset=utf-8", "Set-Cookie": "a=1, b=2"}
    assert raw.content_type == "text/html; charset=utf-8"

    outcome = clean(message(value, key=b"ignored-key"))
    doc = document_value(outcome)
    assert outcome.id == "doc-1"
    assert (doc["url"], doc["title"]) == ("https://example.org/rivers", "Rivers")
    assert "A river is a natural stream of water" in doc["text"]
    assert doc["model_id"] == "tiny-test"
    assert doc["encoding"] is None
    assert doc["n_sentences"] == len(outcome.sentences) > 0


def test_envelope_with_base64_body(clean) -> None:
    value = envelope(
        id=17,
        url="https://example.org/bread",
        headers={"Content-Type": "text/html; charset=iso-8859-1"},
        body_base64=base64.b64encode(LATIN1_PAGE).decode(),
    )
    raw = decode_input(message(value))
    assert isinstance(raw, RawDocument)
    assert raw.body == LATIN1_PAGE
    assert raw.id == "17"

    doc = document_value(clean(message(value)))
    assert doc["id"] == "17"
    assert doc["encoding"] in ("iso-8859-1", "latin-1", "cp1252", "windows-1252")
    assert "Café crème." in doc["text"]


def test_bodies_still_in_their_content_coding_are_decoded(clean) -> None:
    # a crawler that forwards pages as fetched: the envelope's headers, or a raw message's
    # Kafka headers, name the coding
    coded = gzip.compress(LATIN1_PAGE)
    value = envelope(
        id="gz-1",
        headers={"Content-Type": "text/html; charset=iso-8859-1", "Content-Encoding": "gzip"},
        body_base64=base64.b64encode(coded).decode(),
    )
    assert "Café crème." in document_value(clean(message(value)))["text"]
    latin1 = b"text/html; charset=iso-8859-1"
    raw = message(coded, headers=(("id", b"gz-2"), ("content-type", latin1),
                                  ("content-encoding", b"gzip")))  # fmt: skip
    assert decode_input(raw).headers == {"content-encoding": "gzip"}
    assert "Café crème." in document_value(clean(raw))["text"]
    corrupt = message(coded[:30] + b"x" * 50, headers=(("content-encoding", b"gzip"),))
    dead = dead_letter_value(clean(corrupt))
    assert dead["reason"] == "binary_content"
    assert "Content-Encoding gzip" in dead["detail"]


def test_envelope_with_body_encoding_base64_and_line_breaks() -> None:
    encoded = base64.encodebytes(LATIN1_PAGE * 3).decode()  # MIME style: a line break every 76
    assert "\n" in encoded
    value = envelope(id="doc-2", body=encoded, body_encoding="base64")
    raw = decode_input(message(value))
    assert isinstance(raw, RawDocument)
    assert raw.body == LATIN1_PAGE * 3


def test_envelope_base64_in_every_shape_the_standard_library_accepts() -> None:
    """One line, MIME lines, padding to spare: the fast decoder's refusals fall back to the
    standard library, so the same bodies decode as before."""
    page = LATIN1_PAGE * 3
    one_line = base64.b64encode(page).decode()
    for encoded in [one_line, base64.encodebytes(page).decode(), one_line + "==", " " + one_line]:
        raw = decode_input(message(envelope(id="d", body=encoded, body_encoding="base64")))
        assert isinstance(raw, RawDocument), encoded[:20]
        assert raw.body == base64.b64decode("".join(encoded.split()))


def test_envelope_html_field_and_bom() -> None:
    value = b"\xef\xbb\xbf \n\t" + envelope(id="doc-3", html="<p>Hello.</p>")
    raw = decode_input(message(value))
    assert isinstance(raw, RawDocument)
    assert (raw.id, raw.body) == ("doc-3", "<p>Hello.</p>")


def test_envelope_without_id_takes_header_then_key_then_stable_id() -> None:
    value = envelope(body="<p>Hello.</p>")
    with_header = decode_input(message(value, key=b"key-id", headers=(("ID", b"header-id"),)))
    with_key = decode_input(message(value, key=b"key-id"))
    with_nothing = decode_input(message(value))
    assert isinstance(with_header, RawDocument)
    assert isinstance(with_key, RawDocument)
    assert isinstance(with_nothing, RawDocument)
    assert with_header.id == "header-id"
    assert with_key.id == "key-id"
    assert with_nothing.id == "kafka:crawl.raw-html.v1:3:42"


def test_raw_html_with_id_and_url_in_headers(clean) -> None:
    headers = (
        ("URL", b"https://example.org/page"),
        ("id", b"doc-4"),
        ("Content-Type", b"text/html; charset=utf-8"),
        ("id", b"second-id-is-ignored"),
    )
    raw = decode_input(message(PAGE_BYTES, key=b"some-key", headers=headers))
    assert isinstance(raw, RawDocument)
    assert raw.body == PAGE_BYTES
    assert (raw.id, raw.url) == ("doc-4", "https://example.org/page")
    assert raw.content_type == "text/html; charset=utf-8"

    outcome = clean(message(PAGE_BYTES, key=b"some-key", headers=headers))
    doc = document_value(outcome)
    assert (outcome.id, doc["url"], doc["encoding"]) == (
        "doc-4",
        "https://example.org/page",
        "utf-8",
    )


def test_raw_html_with_id_in_key(clean) -> None:
    outcome = clean(message(PAGE_BYTES, key=b"doc-5"))
    assert outcome.id == "doc-5"
    assert document_value(outcome)["url"] == ""
    # a key that is a URL is the id and the URL
    raw = decode_input(message(PAGE_BYTES, key=b"https://example.org/k"))
    assert isinstance(raw, RawDocument)
    assert (raw.id, raw.url) == ("https://example.org/k", "https://example.org/k")
    # a key that is not UTF-8 still gives the same id every time
    raw = decode_input(message(PAGE_BYTES, key=b"doc-\xff"))
    assert isinstance(raw, RawDocument)
    assert raw.id == "doc-\\xff"


def test_raw_html_without_any_id_gets_a_stable_id(clean) -> None:
    first = clean(message(PAGE_BYTES, partition=7, offset=1234))
    again = clean(message(PAGE_BYTES, partition=7, offset=1234))
    other = clean(message(PAGE_BYTES, partition=7, offset=1235))
    assert first.id == again.id == "kafka:crawl.raw-html.v1:7:1234"
    assert other.id == "kafka:crawl.raw-html.v1:7:1235"


def test_a_declared_non_json_content_type_means_raw_bytes() -> None:
    value = b'{"body": "this page happens to look like JSON"}'
    raw = decode_input(message(value, headers=(("content-type", b"text/html"),)))
    assert isinstance(raw, RawDocument)
    assert raw.body == value


# --- dead letters from decoding -------------------------------------------------------------


def test_invalid_json_envelope(clean) -> None:
    value = b'{"id": "doc-6", "url": "https://example.org/", "body": "<p>unterminated'
    dl = decode_input(message(value, key=b"doc-6"))
    assert isinstance(dl, DeadLetter)
    assert dl.reason == DeadLetterReason.INVALID_ENVELOPE == "invalid_envelope"
    assert dl.exception == "orjson.JSONDecodeError"
    assert dl.id == "doc-6"  # from the key: the envelope could not be read

    out = dead_letter_value(clean(message(value, key=b"doc-6")))
    assert out["reason"] == "invalid_envelope"
    assert base64.b64decode(out["payload"]["base64"]) == value
    assert out["source"] == {
        "topic": TOPIC,
        "partition": 3,
        "offset": 42,
        "timestamp_ms": 1_767_225_600_000,
        "key": {
            "size": 5,
            "sha256": hashlib.sha256(b"doc-6").hexdigest(),
            "truncated": False,
            "base64": base64.b64encode(b"doc-6").decode(),
        },
        "headers": [],
        "headers_omitted": 0,
    }
    assert out["worker_version"] == VERSION


def test_bad_base64_body(clean) -> None:
    value = orjson.dumps({"id": "doc-7", "url": "https://example.org/7", "body_base64": "PGh0!!"})
    assert not INPUT_SCHEMA.is_valid(orjson.loads(value))
    outcome = clean(message(value))
    out = dead_letter_value(outcome)
    assert outcome.id == "doc-7"  # the envelope named it, though its body is broken
    assert (out["reason"], out["exception"], out["url"]) == (
        "invalid_envelope",
        "binascii.Error",
        "https://example.org/7",
    )
    assert "body_base64 is not valid base64" in out["detail"]

    bad_encoded = orjson.dumps({"id": "doc-7b", "body": "<p>", "body_encoding": "base64"})
    dl = decode_input(message(bad_encoded))
    assert isinstance(dl, DeadLetter)
    assert (dl.reason, dl.id) == ("invalid_envelope", "doc-7b")


@pytest.mark.parametrize(
    ("value", "content_type", "detail"),
    [
        (b'{"id": "x", "url": "https://example.org/"}', None, "no body, body_base64 or html"),
        (b'{"id": "x", "body": 5}', None, "body must be a string, not number"),
        (b'{"id": "x", "body": null}', None, "body must be a string, not null"),
        (b'{"id": "x", "body": "<p>", "body_encoding": "gzip"}', None, "body_encoding must be"),
        (b'{"id": "x", "body": "<p>", "headers": ["a"]}', None, "headers must be an object"),
        (
            b'{"id": "x", "body": "<p>", "headers": {"Content-Type": null}}',
            None,
            "headers['Content-Type'] must be a string, a number or a list of them, not null",
        ),
        (b'{"id": "x", "body": "<p>", "headers": {"a": [true]}}', None, "not array"),
        (b'{"id": "x", "body": "<p>", "headers": {"a": false}}', None, "not boolean"),
        (b'{"id": ["x"], "body": "<p>"}', None, "id must be a string or an integer"),
        (b'{"id": "x", "body": "<p>", "url": 3}', None, "url must be a string"),
        (b"[1, 2]", b"application/json", "a JSON array where an envelope object belongs"),
        (b"<html>not json</html>", b"application/json", "not valid JSON"),
    ],
)
def test_invalid_envelopes(value: bytes, content_type: bytes | None, detail: str, clean) -> None:
    headers = (("content-type", content_type),) if content_type else ()
    outcome = clean(message(value, headers=headers))
    assert outcome.reason == "invalid_envelope"
    assert detail in dead_letter_value(outcome)["detail"]


def test_oversize_raw_value() -> None:
    dl = decode_input(message(b"<p>" + b"x" * 200, key=b"big"), max_bytes=100)
    assert isinstance(dl, DeadLetter)
    assert (dl.reason, dl.id) == ("too_large", "big")
    assert "203 bytes, more than 100" in dl.detail

    limit = decode_input(message(b"x" * 100, key=b"ok"), max_bytes=100)
    assert isinstance(limit, RawDocument)


def test_oversize_default_limit_is_10_mib(clean) -> None:
    assert MAX_PAGE_BYTES_DEFAULT == 10 * 1024 * 1024
    value = b"<p>" + b"a" * MAX_PAGE_BYTES_DEFAULT
    outcome = clean(message(value, headers=(("id", b"doc-huge"),)))
    out = dead_letter_value(outcome)
    assert (out["id"], out["reason"]) == ("doc-huge", "too_large")
    assert out["payload"]["size"] == len(value)
    assert out["payload"]["truncated"] is True
    assert outcome.dead_letter is not None
    assert len(outcome.dead_letter.value) < 1024 * 1024


def test_oversize_envelope() -> None:
    # the decoded body is above the limit, the envelope is not: too_large, named by the envelope
    body = base64.b64encode(b"x" * 120).decode()
    dl = decode_input(message(orjson.dumps({"id": "doc-8", "body_base64": body})), max_bytes=100)
    assert isinstance(dl, DeadLetter)
    assert (dl.reason, dl.id) == ("too_large", "doc-8")
    assert "body has 120 bytes" in dl.detail
    # base64 of a page at the limit passes
    body = base64.b64encode(b"x" * 100).decode()
    raw = decode_input(message(orjson.dumps({"id": "doc-8", "body_base64": body})), max_bytes=100)
    assert isinstance(raw, RawDocument)
    # above max_envelope_bytes the envelope is not parsed: the id comes from the key
    value = orjson.dumps({"id": "doc-8", "body": "x" * max_envelope_bytes(100)})
    dl = decode_input(message(value, key=b"key-8"), max_bytes=100)
    assert isinstance(dl, DeadLetter)
    assert (dl.reason, dl.id) == ("too_large", "key-8")
    assert max_envelope_bytes(MAX_PAGE_BYTES_DEFAULT) < 14 * 1024 * 1024


@pytest.mark.parametrize("value", [b"", None, b"  \n"])
def test_empty_value_is_a_page_the_core_reports_empty(value: bytes | None, clean) -> None:
    raw = decode_input(message(value, key=b"doc-empty"))
    assert isinstance(raw, RawDocument)
    assert raw.body == (value or b"")
    outcome = clean(message(value, key=b"doc-empty"))
    assert (outcome.id, outcome.reason) == ("doc-empty", "empty")
    payload = dead_letter_value(outcome)["payload"]
    if value is None:
        assert payload is None
    else:
        assert payload["size"] == len(value)


def test_empty_value_with_json_content_type_is_empty_too(clean) -> None:
    outcome = clean(message(b"", key=b"d", headers=(("content-type", b"application/json"),)))
    assert outcome.reason == "empty"


def test_decode_input_never_raises() -> None:
    # a header value that is not bytes stands for any bug in decoding
    broken = message(PAGE_BYTES, headers=(("id", 5),))  # type: ignore[arg-type]
    dl = decode_input(broken)
    assert isinstance(dl, DeadLetter)
    assert dl.reason == "internal_error"
    assert dl.exception == "AttributeError"
    assert dl.id == "kafka:crawl.raw-html.v1:3:42"


# --- dead letters from the core and from serialising ----------------------------------------


def test_binary_content_is_a_dead_letter(clean) -> None:
    pdf = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" * 4
    outcome = clean(message(pdf, key=b"doc-pdf"))
    assert outcome.reason == "binary_content"
    assert outcome.stats is not None
    assert outcome.stats.error == "binary_content"
    assert base64.b64decode(dead_letter_value(outcome)["payload"]["base64"]) == pdf


def test_fetches_that_are_no_page_are_dead_letters_not_documents(clean) -> None:
    # a crawler's topic carries every fetch: redirects, error pages, style sheets, JSON
    for status in (301, 404, 503, 404.0):
        value = envelope(id=f"e-{status}", url="https://example.org/gone", status=200, body=PAGE)
        value = value.replace(b'"status":200', orjson.dumps({"status": status})[1:-1])
        outcome = clean(message(value))
        check_outcome(outcome)
        assert (outcome.id, outcome.reason) == (f"e-{status}", "not_a_page")
        assert f"HTTP status {status:.0f}" in dead_letter_value(outcome)["detail"]
    for fields in ({"content_type": "text/css"}, {"headers": {"content-type": "image/png"}},
                   {"headers": {"Content-Type": "application/json; charset=utf-8"}}):  # fmt: skip
        asset = envelope(id="asset", status=200, body="a { color: red }", **fields)
        outcome = clean(message(asset))
        check_outcome(outcome)
        assert outcome.reason == "not_a_page"
        assert "Content-Type" in dead_letter_value(outcome)["detail"]
    raw = message(b"body { margin: 0 }", key=b"style", headers=(("content-type", b"text/css"),))
    assert clean(raw).reason == "not_a_page"
    # pages: 2xx, HTML, XHTML, plain text, no type or an untyped one
    for status, content_type in ((200, "text/html"), (203, "application/xhtml+xml"),
                                 (200, "text/plain"), (None, None),
                                 (200, "application/octet-stream")):  # fmt: skip
        fields = {"id": "page", "body": PAGE, "status": status, "content_type": content_type}
        outcome = clean(message(orjson.dumps(fields)))
        assert outcome.reason is None and outcome.document is not None, fields


@pytest.mark.parametrize("status", ["two hundred", "200", 200.5, True, [200]])
def test_a_status_that_is_no_integer_is_an_invalid_envelope(status: Any, clean) -> None:
    # the schema's integer: digits in a string are not one, 200.0 is (JSON Schema counts a
    # number whose fraction is zero as an integer)
    fields = {"id": "s", "url": "https://example.org/s", "status": status, "body": PAGE}
    value = orjson.dumps(fields)
    assert not INPUT_SCHEMA.is_valid(fields)
    assert INPUT_SCHEMA.is_valid({**fields, "status": 200.0})
    assert clean(message(orjson.dumps({**fields, "status": 200.0}))).reason is None
    outcome = clean(message(value))
    assert (outcome.id, outcome.reason) == ("s", "invalid_envelope")
    assert "status must be an integer" in dead_letter_value(outcome)["detail"]


def test_time_budget_is_a_dead_letter_without_sentences(clean, settings) -> None:
    tight = settings.with_options(time_budget_seconds=1e-9)
    outcome = clean(message(PAGE_BYTES, key=b"doc-slow"), settings=tight)
    assert outcome.reason == "time_budget"
    assert outcome.sentences == ()
    assert outcome.dead_letter is not None
    names = [name for name, _ in outcome.dead_letter.headers]
    assert names == ["worker-version", "processing-seconds", "stage-seconds", "source"]


def test_missing_cleaned_document_is_an_internal_error() -> None:
    msg = message(PAGE_BYTES, key=b"doc-lost")
    raw = decode_input(msg)
    assert isinstance(raw, RawDocument)
    outcome = outcome_records(msg, raw, None, worker_version=VERSION)
    check_outcome(outcome)
    assert (outcome.id, outcome.reason) == ("doc-lost", "internal_error")


def test_a_document_that_cannot_be_serialised_is_an_internal_error(cleaned) -> None:
    msg = message(PAGE_BYTES, key=b"doc-bad")
    good = cleaned(msg)
    broken = replace(good, text="lone surrogate \ud800")
    outcome = outcome_records(msg, decode_input(msg), broken, worker_version=VERSION)
    check_outcome(outcome)
    out = dead_letter_value(outcome)
    assert (out["id"], out["reason"], out["exception"]) == (
        "doc-bad",
        "internal_error",
        "TypeError",
    )


def test_core_internal_error_names_its_exception() -> None:
    msg = message(PAGE_BYTES, key=b"doc-bug")
    doc = CleanedDocument(
        id="doc-bug",
        url="",
        text="",
        sentences=(),
        perplexity=None,
        kept_perplexity=None,
        dropped={},
        n_blocks=0,
        encoding=None,
        model_id="tiny-test",
        seconds={"total": 0.001},
        error="internal_error",
        error_detail="KeyError: 'x'",
    )
    outcome = outcome_records(msg, decode_input(msg), doc, worker_version=VERSION)
    check_outcome(outcome)
    assert dead_letter_value(outcome)["exception"] == "KeyError"
    with pytest.raises(ValueError, match="dead letter"):
        document_record(doc)


# --- payload bounding -----------------------------------------------------------------------


def test_dead_letter_payload_is_whole_up_to_the_limit_then_a_prefix() -> None:
    small = bytes(range(256)) * 4
    big = bytes(range(256)) * 40
    for value, truncated in ((small, False), (big, True)):
        dl = DeadLetter(reason="too_large", detail="d", source=message(value, key=b"k"), id="k")
        key, raw = dead_letter_record(
            dl, worker_version=VERSION, max_payload_bytes=len(small), prefix_bytes=100
        )
        out = orjson.loads(raw)
        DEAD_LETTER_SCHEMA.validate(out)
        assert key == b"k"
        payload = out["payload"]
        assert payload["size"] == len(value)
        assert payload["sha256"] == hashlib.sha256(value).hexdigest()
        assert payload["truncated"] is truncated
        kept = base64.b64decode(payload["base64"])
        assert kept == (value[:100] if truncated else value)


def test_dead_letter_payload_defaults() -> None:
    assert DEAD_LETTER_MAX_PAYLOAD_BYTES_DEFAULT == 512 * 1024
    assert DEAD_LETTER_PREFIX_BYTES_DEFAULT == 64 * 1024
    value = b"x" * (DEAD_LETTER_MAX_PAYLOAD_BYTES_DEFAULT + 1)
    key = b"k" * (DEAD_LETTER_MAX_PAYLOAD_BYTES_DEFAULT + 1)
    headers = (("url", b"https://example.org/"),)
    dl = DeadLetter(
        reason="too_large", detail="d", source=message(value, key=key, headers=headers), id="k"
    )
    _, raw = dead_letter_record(dl, worker_version=VERSION)
    out = orjson.loads(raw)
    DEAD_LETTER_SCHEMA.validate(out)
    assert len(base64.b64decode(out["payload"]["base64"])) == DEAD_LETTER_PREFIX_BYTES_DEFAULT
    assert out["source"]["key"]["truncated"] is True
    assert out["source"]["key"]["size"] == len(key)
    assert out["source"]["headers"] == [
        {"name": "url", "value_base64": base64.b64encode(b"https://example.org/").decode()}
    ]
    # the largest untruncated dead letter stays under Kafka's default 1 MiB record
    whole = DeadLetter(
        reason="too_large",
        detail="d",
        source=message(b"x" * DEAD_LETTER_MAX_PAYLOAD_BYTES_DEFAULT, key=b"k"),
        id="k",
    )
    assert len(dead_letter_record(whole, worker_version=VERSION)[1]) < 1024 * 1024


def test_dead_letter_reason_is_a_closed_set() -> None:
    with pytest.raises(ValueError, match="unknown dead-letter reason"):
        DeadLetter(reason="oops", detail="", source=message(b""), id="x")


# --- determinism, headers, exactly one outcome ----------------------------------------------

CASES = {
    "envelope text": message(orjson.dumps({"id": "a", "url": "https://e.org/a", "body": PAGE})),
    "envelope base64": message(
        orjson.dumps({"id": "b", "body_base64": base64.b64encode(LATIN1_PAGE).decode()})
    ),
    "raw, headers": message(PAGE_BYTES, headers=(("id", b"c"), ("url", b"https://e.org/c"))),
    "raw, key": message(PAGE_BYTES, key=b"d"),
    "raw, no id": message(PAGE_BYTES, offset=99),
    "invalid json": message(b'{"id": "f", "body": "'),
    "bad base64": message(b'{"id": "g", "body_base64": "@@@"}'),
    "oversize": message(b"<p>" + b"z" * 1000, key=b"h"),
    "empty": message(b"", key=b"i"),
    "null": message(None, key=b"j"),
    "binary": message(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3, key=b"k"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_replay_gives_identical_records_and_exactly_one_outcome(name: str, clean) -> None:
    msg = CASES[name]
    first = clean(msg, max_bytes=1000)
    again = clean(msg, max_bytes=1000)
    assert [(r.key, r.value) for r in first.records] == [(r.key, r.value) for r in again.records]
    assert first.is_dead_letter == (first.document is None)
    assert first.bytes_out >= sum(len(r.key) + len(r.value) for r in first.records)
    for record in first.records:
        assert b"seconds" not in record.value
        assert b"total" not in record.value
        assert VERSION.encode() not in record.value or first.is_dead_letter


def test_case_kinds() -> None:
    kinds = {}
    for name, msg in CASES.items():
        result = decode_input(msg, max_bytes=1000)
        kinds[name] = result.reason if isinstance(result, DeadLetter) else "raw"
    assert kinds == {
        "envelope text": "raw",
        "envelope base64": "raw",
        "raw, headers": "raw",
        "raw, key": "raw",
        "raw, no id": "raw",
        "invalid json": "invalid_envelope",
        "bad base64": "invalid_envelope",
        "oversize": "too_large",
        "empty": "raw",
        "null": "raw",
        "binary": "raw",
    }


def test_outcome_is_exactly_one_kind() -> None:
    record = OutputRecord(b"k", b"{}")
    with pytest.raises(ValueError, match="exactly one"):
        Outcome(id="k")
    with pytest.raises(ValueError, match="exactly one"):
        Outcome(id="k", document=record, dead_letter=record, reason="empty")
    with pytest.raises(ValueError, match="no sentence records"):
        Outcome(id="k", dead_letter=record, sentence_values=(b"{}",), reason="empty")
    with pytest.raises(ValueError, match="reason"):
        Outcome(id="k", dead_letter=record)


def test_packed_values_are_a_sequence_of_bytes() -> None:
    """A page's sentence values, end to end in one bytes object: indexed, sliced and iterated
    as the bytes they were, equal only to the same values (not merely the same bytes)."""
    values = [b'{"a":1}', b"", b'{"text":"\\u00e9"}', b"x"]
    packed = PackedValues.of(values)
    assert len(packed) == 4 and list(packed) == values
    assert [packed[i] for i in range(-4, 4)] == values + values
    assert packed[1:3] == values[1:3] and packed[::-1] == values[::-1]
    assert packed.data == b"".join(values) and list(packed.ends) == [7, 7, 24, 25]
    with pytest.raises(IndexError):
        packed[4]
    with pytest.raises(IndexError):
        packed[-5]
    assert packed == PackedValues.of(values) and hash(packed) == hash(PackedValues.of(values))
    assert packed != PackedValues.of([b"".join(values)])  # the same bytes, other values
    assert packed != values  # a list is not packed values
    assert PackedValues() == NO_VALUES and not NO_VALUES and list(NO_VALUES) == []
    with pytest.raises(ValueError, match="end at 3"):
        PackedValues(b"abcd", [1, 3])
    # an Outcome packs the sequence it is given, and counts its bytes
    outcome = Outcome(id="k", document=OutputRecord(b"k", b"{}"), sentence_values=values)
    assert type(outcome.sentence_values) is PackedValues and outcome.sentence_values == packed
    assert outcome.bytes_out == 1 + 2 + 4 * 1 + 25
    assert [r.value for r in outcome.sentences] == values


def test_timing_headers(clean) -> None:
    outcome = clean(message(PAGE_BYTES, key=b"doc-t", offset=5))
    assert outcome.document is not None
    headers = dict(outcome.document.headers)
    assert headers["worker-version"] == VERSION.encode()
    assert headers["source"] == b"crawl.raw-html.v1:3:5"
    assert float(headers["processing-seconds"]) >= 0
    stages = orjson.loads(headers["stage-seconds"])
    assert set(stages) >= {"decode", "parse", "split", "score", "decide", "total"}
    assert timing_headers(None, worker_version="1") == [("worker-version", b"1")]


def test_document_and_sentence_records_directly(cleaned) -> None:
    doc = cleaned(message(PAGE_BYTES, key=b"doc-r"))
    key, value = document_record(doc, model_id="other-model")
    assert key == b"doc-r"
    assert orjson.loads(value)["model_id"] == "other-model"
    records = sentence_records(doc)
    assert len(records) == len(doc.sentences)
    first = orjson.loads(records[0][1])
    assert first["text"] == doc.sentences[0].text
    assert first["block_index"] == doc.sentences[0].block_index
    assert value == orjson.dumps(orjson.loads(value), option=orjson.OPT_SORT_KEYS)


def test_records_carry_the_languages(clean) -> None:
    page = (
        "<html><body><p>Die Stadtverwaltung hat am Dienstag einen neuen Haushalt für die "
        "Bibliotheken beschlossen.</p><p>Москва является столицей Российской Федерации и "
        "крупнейшим городом страны.</p></body></html>"
    )
    outcome = clean(message(page.encode("utf-8"), key=b"doc-de"))  # checked against the schemas
    doc = document_value(outcome)
    assert doc["language"] == "de" and 0.5 < doc["language_confidence"] <= 1
    sentences = [orjson.loads(record.value) for record in outcome.sentences]
    assert [s["language"] for s in sentences] == ["de", "ru"]
    # no model for either: no perplexity, nothing dropped for it
    assert [s["perplexity"] for s in sentences] == [None, None]
    assert all(s["kept"] and s["tokens"] > 0 and s["log10_prob"] == 0 for s in sentences)
    # records written before the language fields still validate: they are optional
    for schema, value in ((DOCUMENT_SCHEMA, doc), (SENTENCE_SCHEMA, sentences[0])):
        old = {k: v for k, v in value.items() if not k.startswith("language")}
        schema.validate(old)


# --- adapters and schemas -------------------------------------------------------------------


def test_from_faust_and_from_consumer_record() -> None:
    faust_message = SimpleNamespace(
        topic=TOPIC,
        partition=1,
        offset=2,
        key=b"k",
        value=b"v",
        headers={"id": b"x", "url": "https://e.org/"},
        timestamp=1_767_225_600.5,
    )
    msg = InputMessage.from_faust(faust_message)
    assert msg == InputMessage(
        TOPIC, 1, 2, b"k", b"v", (("id", b"x"), ("url", b"https://e.org/")), 1_767_225_600_500
    )
    record = SimpleNamespace(
        topic=TOPIC,
        partition=1,
        offset=2,
        key=None,
        value=b"v",
        headers=[("id", b"x"), ("empty", None)],
        timestamp=1_767_225_600_500,
    )
    msg = InputMessage.from_consumer_record(record)
    assert msg.headers == (("id", b"x"), ("empty", b""))
    assert msg.timestamp_ms == 1_767_225_600_500
    assert msg.header("ID") == b"x"


def test_schema_enums_match_the_code() -> None:
    reasons = DEAD_LETTER_SCHEMA.schema["properties"]["reason"]["enum"]
    assert sorted(reasons) == sorted(DeadLetterReason.ALL)
    assert {"too_large", "invalid_envelope", "internal_error"} <= set(reasons)
    drops = DOCUMENT_SCHEMA.schema["properties"]["dropped"]["propertyNames"]["enum"]
    assert sorted(drops) == sorted(DropReason.ALL)
    sentence_reasons = SENTENCE_SCHEMA.schema["properties"]["reason"]["enum"]
    assert sorted(r for r in sentence_reasons if r) == sorted(DropReason.ALL)


def test_every_topic_has_a_schema_and_a_readme_section() -> None:
    readme = (TOPICS / "README.md").read_text()
    for name in (
        "crawl.raw-html.v1",
        "clean.documents.v1",
        "clean.sentence-scores.v1",
        "clean.dead-letter.v1",
    ):
        assert Path(TOPICS / f"{name}.schema.json").is_file()
        assert f"## `{name}`" in readme


def test_which_messages_are_rekeyed_by_site() -> None:
    from stream_cleaner.streaming.records import (
        HEADER_REKEYED_FROM,
        forward_outcome,
        site_to_rekey,
    )

    envelope = orjson.dumps({"url": "https://www.news.example.org/a", "body": "<p>Story</p>"})
    unkeyed = InputMessage("in", 2, 7, None, envelope)
    assert site_to_rekey(unkeyed, rekey="missing") == "news.example.org"
    assert site_to_rekey(unkeyed, rekey="off") is None
    by_id = replace(unkeyed, key=b"doc-1")
    assert site_to_rekey(by_id, rekey="missing") is None  # a key: trusted as the crawler's
    assert site_to_rekey(by_id, rekey="all") == "news.example.org"
    assert site_to_rekey(replace(unkeyed, key=b"news.example.org"), rekey="all") is None
    assert site_to_rekey(unkeyed, rekey="missing", site_key="domain") == "example.org"
    # the site a raw page declares; none for a page that names no host, or not a page at all
    declared = b'<link rel="canonical" href="http://shop.example.com/x"><p>Shoes</p>'
    assert site_to_rekey(InputMessage("in", 0, 1, None, declared), rekey="all") == (
        "shop.example.com"
    )
    assert site_to_rekey(InputMessage("in", 0, 1, None, b"<p>no host</p>"), rekey="all") is None
    assert site_to_rekey(InputMessage("in", 0, 1, None, b'{"url": 3}'), rekey="all") is None
    outcome = forward_outcome(unkeyed, "news.example.org")
    assert outcome.is_forward and outcome.forward is not None
    assert outcome.forward.key == b"news.example.org" and outcome.forward.value == envelope
    headers = dict(outcome.forward.headers)
    assert headers["id"] == b"kafka:in:2:7" and headers[HEADER_REKEYED_FROM] == b"in:2:7"
    # once re-keyed, never again: the message is cleaned where it arrives
    again = InputMessage("by-site", 0, 0, None, envelope, outcome.forward.headers)
    assert site_to_rekey(again, rekey="all") is None
    with pytest.raises(ValueError):
        Outcome(id="x", forward=outcome.forward, dead_letter=outcome.forward, reason="r")


# --- bounded records --------------------------------------------------------------------------


def test_long_ids_and_urls_are_shortened_the_same_way_on_every_replay(clean) -> None:
    long_id = "doc-" + "x" * 3_000_000
    page = b"<p>The river rises in the hills and flows to the sea.</p>"
    out = clean(
        message(page, headers=(("id", long_id.encode()), ("url", b"https://a.org/" * 5000)))
    )
    doc = document_value(out)
    assert doc["id"] == bounded_text(long_id, MAX_ID_BYTES) == out.document.key.decode()
    assert doc["id"].startswith("doc-xxx") and len(doc["id"].encode()) == MAX_ID_BYTES
    assert doc["id"].endswith(hashlib.sha256(long_id.encode()).hexdigest())
    assert len(doc["url"].encode()) == MAX_URL_BYTES
    assert bounded_text(long_id + "y", MAX_ID_BYTES) != doc["id"]  # two long ids stay apart
    assert bounded_text("doc-1", MAX_ID_BYTES) == "doc-1"
    # the same from the key, in a dead letter: a 3 MB key and no value
    dl = clean(message(None, key=long_id.encode()))
    assert dead_letter_value(dl)["id"] == doc["id"]
    assert len(dl.dead_letter.value) < 100_000


def test_a_dead_letter_copies_a_bounded_number_of_headers(clean) -> None:
    headers = tuple((f"h{i}", b"") for i in range(500_000))
    out = dead_letter_value(clean(message(None, headers=headers)))
    assert len(out["source"]["headers"]) == DEAD_LETTER_MAX_HEADERS
    assert out["source"]["headers_omitted"] == 500_000 - DEAD_LETTER_MAX_HEADERS
    big = tuple((f"h{i}", b"v" * 30_000) for i in range(5))  # 64 KiB of values: two fit
    out = dead_letter_value(clean(message(None, headers=big)))
    assert [h["name"] for h in out["source"]["headers"]] == ["h0", "h1"]
    assert out["source"]["headers_omitted"] == 3


def test_a_page_whose_records_exceed_the_message_size_is_a_too_large_dead_letter(clean) -> None:
    page = ("<p>" + "The river rises in the hills and flows to the sea. " * 4000 + "</p>").encode()
    kept = clean(message(page, key=b"doc-big"))
    assert kept.document is not None and len(kept.document.value) > 200_000
    small = clean(message(page, key=b"doc-big"), max_record_bytes=200_000)
    out = dead_letter_value(small)
    assert small.document is None and not small.sentence_values
    assert out["reason"] == "too_large" and "max_message_bytes=200000" in out["detail"]
    assert len(small.dead_letter.key) + len(small.dead_letter.value) < 200_000
    assert out["payload"]["truncated"] and len(base64.b64decode(out["payload"]["base64"])) == 1024
