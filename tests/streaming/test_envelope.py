"""The CLI and the worker give the same document for the same crawl envelope.

Both read it with `stream_cleaner.envelope.parse_envelope`: the CLI's JSON Lines reader
(`stream-cleaner clean pages.jsonl`) and the worker (`decode_input`, then the real worker on
the real broker). Before they shared it, the CLI cleaned a ``body_encoding: base64`` body's
base64 text as if it were the page, and the worker refused a header holding a number that
the CLI read as text.
"""

from __future__ import annotations

import asyncio
import base64
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest

from stream_cleaner.cli import main
from stream_cleaner.io import iter_documents
from stream_cleaner.streaming.records import DeadLetter, InputMessage, decode_input

from ..conftest import DATA
from .test_worker_broker import (
    OUTCOME_SECONDS,
    _consume,
    _create_topics,
    _free_port,
    _produce_only,
    _start_worker,
    _stop,
    _tail,
    _wait_for,
    _worker_command,
)

PAGE = (
    "<html><head><title>Rivers</title></head><body>"
    "<p>A river is a natural stream of water that flows towards an ocean, a lake or another "
    "river. Rivers are part of the water cycle.</p>"
    "<p>The water in a river usually flows in a channel between two banks.</p></body></html>"
)
LATIN1 = PAGE.replace("banks.", "banks, café crème.").encode("latin-1")

# id -> envelope; every envelope names its id, so the CLI and the worker agree on it
ENVELOPES: dict[str, dict[str, Any]] = {
    # the example: the CLI cleaned the base64 text itself
    "b64": {"id": "b64", "body": base64.b64encode(PAGE.encode()).decode(),
            "body_encoding": "base64"},
    # headers holding numbers: the worker refused them; the charset must still be read
    "numbers": {
        "id": "numbers",
        "url": "https://example.org/numbers",
        "body_base64": base64.encodebytes(LATIN1).decode(),  # MIME line breaks
        "headers": {"Content-Type": "text/html; charset=iso-8859-1", "Content-Length": 1234,
                    "X-Hops": [1, "two", 3.5]},
    },
    "text": {"id": "text", "url": "https://example.org/t", "body": PAGE, "status": 200},
    "html": {"id": "html", "html": PAGE, "content_type": "text/html"},
    "spaced": {"id": "  spaced ", "url": " https://example.org/s ", "body": PAGE},
    "42": {"id": 42, "body": PAGE, "status": 200.0},
    "extra": {"id": "extra", "body": PAGE, "fetched_at": "2026-11-28T23:00:00Z",
              "crawler": {"depth": 2}, "body_base64": base64.b64encode(b"ignored").decode()},
    "gone": {"id": "gone", "body": PAGE, "status": 404},
    # what the schema refuses: an error record in the CLI, a dead letter in the worker
    "bad-b64": {"id": "bad-b64", "url": "https://example.org/b",
                "body": "<p>no base64</p>", "body_encoding": "base64"},
    "bad-status": {"id": "bad-status", "body": PAGE, "status": "200"},
    "bad-header": {"id": "bad-header", "body": PAGE, "headers": {"Age": None}},
    "bad-fetched": {"id": "bad-fetched", "body": PAGE, "fetched_at": True},
    "no-body": {"id": "no-body", "url": "https://example.org/nothing"},
}  # fmt: skip
INVALID = {"bad-b64", "bad-status", "bad-header", "bad-fetched", "no-body"}


def _jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "envelopes.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in ENVELOPES.values()))
    return path


def test_the_cli_reader_and_the_worker_decode_an_envelope_alike(tmp_path: Path) -> None:
    sources = list(iter_documents([_jsonl(tmp_path)]))
    assert len(sources) == len(ENVELOPES)
    for offset, (name, source) in enumerate(zip(ENVELOPES, sources, strict=True)):
        value = orjson.dumps(ENVELOPES[name])
        worker = decode_input(InputMessage("crawl.raw-html.v1", 0, offset, None, value))
        cli = source.doc
        if name in INVALID:
            assert isinstance(worker, DeadLetter), name
            assert worker.reason == "invalid_envelope"
            assert cli.error == f"invalid_json: {worker.detail}"
            assert (cli.id, cli.url) == (worker.id, worker.url) == (name, worker.url)
        else:
            assert cli.error is None, (name, cli.error)
            assert cli == worker, name
    decoded = {s.doc.id: s.doc for s in sources}
    assert decoded["b64"].body == PAGE.encode()
    assert decoded["numbers"].body == LATIN1
    assert decoded["numbers"].headers["Content-Length"] == "1234"
    assert decoded["numbers"].headers["X-Hops"] == "1, two, 3.5"
    assert (decoded["spaced"].id, decoded["spaced"].url) == ("spaced", "https://example.org/s")
    assert decoded["42"].status == 200
    assert decoded["bad-b64"].url == "https://example.org/b"


def _cli_records(path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> dict[str, dict]:
    args = ["clean", str(path), "--model", str(DATA / "tiny.arpa"), "--max-perplexity", "1e9",
            "--no-sentences", "--no-progress"]  # fmt: skip
    main(args)
    lines = capsysbinary.readouterr().out.splitlines()
    return {r["id"]: r for r in map(orjson.loads, lines)}


@pytest.mark.broker
def test_the_cli_and_the_real_worker_clean_an_envelope_alike(
    broker: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    cli = _cli_records(_jsonl(tmp_path), capsysbinary)
    assert set(cli) == set(ENVELOPES)
    tag = uuid.uuid4().hex[:8]
    names = _create_topics(broker, tag)
    port = _free_port()
    log = tmp_path / "worker.log"
    proc = _start_worker(_worker_command(broker, names, port, f"g{tag}"), log, tmp_path)
    try:
        inputs = [(None, orjson.dumps(e), [], None) for e in ENVELOPES.values()]
        asyncio.run(_produce_only(broker, names["input"], inputs))
        _wait_for(f"http://127.0.0.1:{port}/readyz", proc, log, OUTCOME_SECONDS)
        out = asyncio.run(_consume(broker, names, set(ENVELOPES)))
    finally:
        _stop(proc)
    documents = {d["id"]: d for d in out["documents"]}
    dead = {d["id"]: d for d in out["dead_letter"]}
    assert set(documents) | set(dead) == set(ENVELOPES), _tail(log)
    for name, record in cli.items():
        if record["error"] is None:
            doc = documents[name]
            fields = ("url", "title", "text", "n_sentences", "n_kept", "language", "encoding")
            assert {f: doc[f] for f in fields} == {f: record[f] for f in fields}, name
            assert doc["perplexity"] == pytest.approx(record["perplexity"]), name
        else:
            letter = dead[name]
            reason = "invalid_envelope" if record["error"] == "invalid_json" else record["error"]
            assert letter["reason"] == reason, name
            assert (letter["detail"], letter["url"]) == (record["error_detail"], record["url"])
    assert {name for name, r in cli.items() if r["error"] == "invalid_json"} == INVALID
    assert "café crème" in documents["numbers"]["text"]  # the charset of its headers
    assert "river" in documents["b64"]["text"]  # the page, not its base64
    assert cli["gone"]["error"] == dead["gone"]["reason"] == "not_a_page"
