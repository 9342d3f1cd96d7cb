"""The page's type (`page_types`): its features, the shipped model, and the type in the cleaned
document, its record and the worker's metrics."""

from __future__ import annotations

import json
import os

import numpy as np
import orjson
import pytest

from stream_cleaner import CleanerSettings, RawDocument, clean_document
from stream_cleaner.labeller import FEATURE_NAMES, block_features
from stream_cleaner.page_types import (
    CLASS_WORD_FEATURE_NAMES,
    FEATURE_NAMES_ALL,
    FEATURE_NAMES_COMMON,
    MODEL_PATH,
    PAGE_TYPES,
    PageTypeModel,
    classify_page,
    load_page_types,
    metric_label,
    most_probable,
    page_features,
    type_probabilities,
    url_features,
)
from stream_cleaner.parse import parse_blocks
from stream_cleaner.segment import split_sentences

from .conftest import BENCH_DATA, REPO

FEATURE = {name: i for i, name in enumerate(FEATURE_NAMES_ALL)}
SCHEMA = REPO / "topics" / "clean.documents.v1.schema.json"
LONG = (
    "The chain slipped again on the way home, so I cleaned it, oiled it and checked the "
    "tension, but it still jumps when I pedal hard up the hill near the station."
)
# a thread of eight posts, each with its author, date, text and reply links
THREAD = (
    "<html><head><title>How do I fix my bike chain? - Forum</title></head><body>"
    "<header><a href='/'>Home</a></header><div class='thread'>"
    + "".join(
        f"<div class='post'><div class='user'>user{i}</div><div class='date'>2026-01-0{i + 1}"
        f" 10:3{i}</div><p>{LONG} Reply {i} says so too.</p><a href='#'>Reply</a> "
        "<a href='#'>Quote</a></div>"
        for i in range(8)
    )
    + "</div></body></html>"
)
THREAD_URL = "https://forum.example.org/threads/how-do-i-fix-my-bike-chain.123/"


def _rows(html: str, *, class_words: bool = True):
    """A page's blocks and its `labeller.block_features` rows (no language model: the page
    type reads no perplexity)."""
    blocks = parse_blocks(html, class_words=class_words)
    sentences, block_of = [], []
    for block in blocks:
        split = split_sentences(block.text)
        sentences += split
        block_of += [block.index] * len(split)
    rows = block_features(
        blocks, sentences, block_of, log10_probs=[-10.0] * len(sentences),
        n_tokens=[5] * len(sentences), n_oov=[0] * len(sentences),
    )  # fmt: skip
    return blocks, rows


def test_the_types_live_in_one_place_and_the_schema_lists_them():
    schema = json.loads(SCHEMA.read_text())["properties"]
    assert schema["page_type"]["enum"] == ["", *PAGE_TYPES]
    assert schema["page_type_confidence"]["maximum"] == 1
    spec = json.loads(MODEL_PATH.read_text())
    assert tuple(spec["types"]) == PAGE_TYPES
    assert [metric_label(t) for t in ("", "forum")] == ["none", "forum"]


def test_url_features_read_generic_path_words():
    names = FEATURE_NAMES_COMMON[FEATURE_NAMES_COMMON.index("url_forum") :]

    def url(address: str) -> dict[str, float]:
        return dict(zip(names, url_features(address), strict=True))

    thread = url("https://example.org/community/t/why-is-my-build-slow/4711")
    assert thread["url_forum"] == 1 and thread["url_docs"] == 0
    assert thread["url_segments"] == 8 and thread["url_hyphens"] == 4
    assert url("https://example.org/docs/en/stable/quickstart.html")["url_docs"] == 1
    assert url("https://shop.example.org/products/wool-runners")["url_product"] == 1
    assert url("https://example.org/collections/sneakers?page=2")["url_collection"] == 1
    dated = url("https://example.org/2025/09/04/autumn-menus/")
    assert dated["url_article"] == 1 and dated["url_longest_segment"] == 6  # at - too
    for home in ("https://example.org/", "https://example.org", ""):
        assert url(home)["url_root"] == 1 and url(home)["url_segments"] == 0
    # no URL (answered without parsing) reads as a URL with no path does
    assert url_features("") == url_features("https://example.org")
    # words inside a segment are not words of the path
    assert url("https://example.org/threadneedle-street")["url_forum"] == 0
    # forum software's thread and board paths
    for address in (
        "https://board.example.net/showthread.php?t=186269",
        "https://example.net/boards/189706-switch/80702016",
        "https://example.com/r/cooking/comments/1rl0nt4/enamel_pans/",
        "https://example.com/talk/food_and_recipes/5498613-cheap-dinners",
    ):
        assert url(address)["url_forum"] == 1, address


def test_page_features_of_a_literal_page():
    blocks, rows = _rows(THREAD)
    x = page_features(blocks, rows, THREAD_URL, class_words=True)
    assert x.shape == (len(FEATURE_NAMES_ALL),)
    f = dict(zip(FEATURE_NAMES_ALL, x.tolist(), strict=True))
    assert f["log_blocks"] == pytest.approx(np.log1p(len(blocks)))
    assert 0.5 < f["prose_char_share"] < 1 and f["code_char_share"] == 0
    assert f["dates_per_block"] > 0.2  # a date in every post
    # the posts' author and date lines share one tag path
    assert f["log_max_path_blocks"] == pytest.approx(np.log1p(16))
    assert f["url_forum"] == 1
    # the posts sit under the class word "post" (the content group), dates under "date"
    assert f["class_content_share"] > 0.9 and f["class_comment_share"] == 0
    assert 0 < f["class_meta_share"] < 0.2
    # without class words: the common columns alone, the same values
    plain_blocks, plain_rows = _rows(THREAD, class_words=False)
    common = page_features(plain_blocks, plain_rows, THREAD_URL, class_words=False)
    assert common.tolist() == x[: len(FEATURE_NAMES_COMMON)].tolist()
    assert FEATURE_NAMES_ALL[len(FEATURE_NAMES_COMMON) :] == CLASS_WORD_FEATURE_NAMES


def test_code_lists_and_tables_are_shares_of_the_page():
    page = (
        "<html><body><h1>Quick start</h1><p>Install it, then run the example below.</p>"
        "<pre><code>pip install example\nexample --run</code></pre>"
        "<ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr></table>"
        "<form><label>Name</label></form></body></html>"
    )
    blocks, rows = _rows(page)
    x = page_features(blocks, rows, "", class_words=True)
    f = dict(zip(FEATURE_NAMES_ALL, x.tolist(), strict=True))
    chars = np.array([len(b.text) for b in blocks], dtype=float)
    total = chars.sum() + 1
    code = sum(len(b.text) for b in blocks if " code" in b.tag_path + " ")
    assert f["code_char_share"] == pytest.approx(code / total)
    assert f["list_char_share"] == pytest.approx(len("one") * 2 / total, rel=0.05)
    assert f["table_char_share"] > 0 and f["form_char_share"] > 0
    assert f["headings"] == 1 and f["url_root"] == 1


def test_native_page_type_features_equal_the_reference():
    """The page's row in one native call is the numpy reference's, bit for bit: random rows
    (ties, zeros, link densities at the prose limit), tag paths and class words, 1 to 300
    blocks, with and without class words."""
    from stream_cleaner import page_types
    from stream_cleaner._native import native_module
    from stream_cleaner.document import Block

    fast = native_module("page_structure")
    if fast is None:
        pytest.skip("native modules not built")
    rng = np.random.default_rng(3)
    read = page_types._READ
    for n in (1, 2, 7, 8, 9, 127, 128, 129, 300):
        for _ in range(10):
            rows = rng.uniform(0, 1, size=(n, len(FEATURE_NAMES)))
            rows[:, read[0]] = rng.uniform(0, 9, size=n).round(rng.integers(0, 3))
            rows[:, read[1]] = rng.uniform(0, 6, size=n).round(rng.integers(0, 2))
            rows[:, read[2]] = rng.choice([0.0, 0.3, 0.5, 1.0], size=n)
            rows[:, read[3:8]] = rng.random((n, 5)) < 0.3
            rows[:, read[8:]] = rng.integers(0, 3, size=(n, 2))
            rows = np.asfortranarray(rows) if rng.random() < 0.5 else rows
            blocks = [
                Block(i, "text", "p", f"html body div{rng.integers(0, 4)} p", 4, 0.0, False,
                      False, False, False, False, int(rng.integers(0, 2**40)),
                      int(rng.integers(0, 5)))
                for i in range(n)
            ]  # fmt: skip
            chars, words = np.expm1(rows[:, read[0]]), np.expm1(rows[:, read[1]])
            for class_words in (True, False):
                slow = page_types._page_type_features(
                    blocks, rows, chars, words, class_words=class_words
                )
                found = fast.page_type_features(
                    rows, page_types._READ_COLUMNS, blocks, chars, words,
                    page_types.MIN_PROSE_WORDS, page_types.MAX_PROSE_LINK_DENSITY,
                    page_types.LONG_BLOCK_WORDS, class_words, len(page_types.CLASS_GROUP_NAMES),
                    page_types.CLASS_MAX_LEVELS,
                )  # fmt: skip
                assert found == slow, (n, class_words)


def test_the_model_file_is_checked_against_the_types_and_features():
    spec = json.loads(MODEL_PATH.read_text())
    model = PageTypeModel(spec)
    assert model.with_class_words.num_class == len(PAGE_TYPES)
    blocks, rows = _rows(THREAD)
    x = page_features(blocks, rows, THREAD_URL, class_words=True)
    for class_words in (True, False):
        p = model.probabilities(x if class_words else x[: len(FEATURE_NAMES_COMMON)],
                                class_words=class_words)  # fmt: skip
        assert p.shape == (len(PAGE_TYPES),) and p.sum() == pytest.approx(1.0)
    for key, value in (("types", [*PAGE_TYPES[:-1], "homepage"]), ("features", ["x"]),
                       ("format", 99)):  # fmt: skip
        with pytest.raises(ValueError):
            PageTypeModel({**spec, key: value})
    assert classify_page([], np.zeros((0, len(FEATURE_NAMES))), "", class_words=True) == ("", 0.0)
    assert type_probabilities([], np.zeros((0, len(FEATURE_NAMES))), "", class_words=True) is None
    # the type is the most probable one of `type_probabilities`, which `drop_comments` reads
    p = type_probabilities(blocks, rows, THREAD_URL, class_words=True)
    assert p.sum() == pytest.approx(1.0)
    best = PAGE_TYPES[int(p.argmax())]
    assert classify_page(blocks, rows, THREAD_URL, class_words=True) == (best, float(p.max()))
    assert most_probable(p) == (best, float(p.max())) and most_probable(None) == ("", 0.0)
    assert load_page_types() is load_page_types()


def test_a_thread_is_a_forum_in_every_labeller_mode(default_model):
    from stream_cleaner.streaming.records import document_record

    raw = RawDocument(body=THREAD, url=THREAD_URL, id="t1")
    for mode in ("auto", "corpus", "article"):
        doc = clean_document(raw, settings=CleanerSettings(mode=mode), model=default_model)
        assert doc.page_type == "forum" and 0.5 < doc.page_type_confidence <= 1, mode
        assert "page_type" in doc.seconds
        record = orjson.loads(document_record(doc)[1])
        assert record["page_type"] == "forum"
        assert record["page_type_confidence"] == doc.page_type_confidence
        assert doc.to_dict()["page_type"] == "forum"
    # the page type is the model's answer on the labeller's rows
    blocks, rows = _rows(THREAD)
    assert doc.page_type == classify_page(blocks, rows, THREAD_URL, class_words=True)[0]


def test_a_page_type_model_of_ones_own_names_the_type(default_model, tmp_path):
    # the bundled model with each tree moved to the class before it: another model, whose
    # answer for the thread is another type
    spec = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    for name in ("with_class_words", "without_class_words"):
        roots = spec[name]["roots"]
        spec[name]["roots"] = roots[1:] + roots[:1]
    path = tmp_path / "page-types.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    own = PageTypeModel.load(path)
    blocks, rows = _rows(THREAD)
    expected = classify_page(blocks, rows, THREAD_URL, class_words=True, model=own)
    assert expected[0] != "forum"

    raw = RawDocument(body=THREAD, url=THREAD_URL)
    settings = CleanerSettings(mode="auto", page_type_model_path=str(path))
    doc = clean_document(raw, settings=settings, model=default_model)
    assert doc.page_type == expected[0]
    assert doc.page_type_confidence == pytest.approx(expected[1])
    bundled = clean_document(raw, settings=CleanerSettings(mode="auto"), model=default_model)
    assert bundled.page_type == "forum"
    missing = CleanerSettings(mode="auto", page_type_model_path=str(tmp_path / "none.json"))
    with pytest.raises(FileNotFoundError):  # a set-up error, before any page
        clean_document(raw, settings=missing, model=default_model)


def test_no_page_type_without_the_labeller_or_without_a_page(default_model):
    auto = CleanerSettings(mode="auto")
    cases = [
        (RawDocument(body=THREAD, url=THREAD_URL), CleanerSettings(mode="perplexity")),
        (RawDocument(body=b""), auto),  # empty
        (RawDocument(body=b"<html><body><script>x()</script></body></html>"), auto),  # no text
        (RawDocument(body=LONG, content_type="text/plain"), auto),  # plain text: no markup
        (RawDocument(body=THREAD, status=404), auto),  # not a page
    ]
    for raw, settings in cases:
        doc = clean_document(raw, settings=settings, model=default_model)
        assert (doc.page_type, doc.page_type_confidence) == ("", 0.0), raw
        assert doc.to_dict()["page_type"] == ""


def test_the_page_declares_its_url_when_it_arrives_without_one(default_model):
    declared = THREAD.replace(
        "<head>", f"<head><link rel='canonical' href='{THREAD_URL}'>"
    )  # fmt: skip
    settings = CleanerSettings(mode="auto")
    fetched = clean_document(RawDocument(body=THREAD, url=THREAD_URL), settings=settings,
                             model=default_model)  # fmt: skip
    found = clean_document(RawDocument(body=declared), settings=settings, model=default_model)
    assert found.page_type == fetched.page_type == "forum"
    assert found.page_type_confidence == pytest.approx(fetched.page_type_confidence)


def test_the_worker_counts_documents_by_page_type(default_model):
    from stream_cleaner.streaming.metrics import WorkerMetrics
    from stream_cleaner.streaming.records import InputMessage, clean_message

    metrics = WorkerMetrics()
    pages = [(b"t1", THREAD.encode()), (b"t2", THREAD.encode()), (b"e", b"")]
    headers = [("url", THREAD_URL.encode())]
    messages = [
        InputMessage(topic="in", partition=0, offset=i, key=key, value=value, headers=headers)
        for i, (key, value) in enumerate(pages)
    ]
    outcomes = [clean_message(m, worker_version="0", model=default_model) for m in messages]
    metrics.observe_outcomes(outcomes)
    text = metrics.exposition().decode()
    counts = {
        line.split('"')[1]: float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("stream_cleaner_documents_by_page_type_total{")
    }
    assert counts["forum"] == 2.0  # the empty page is a dead letter, counted elsewhere
    assert set(counts) == {*PAGE_TYPES, "none"}  # bounded, every series from the start
    assert sum(counts.values()) == 2.0


@pytest.mark.slow
def test_the_2026_pages_get_the_type_the_model_was_trained_to_give():
    """On every fourth page of 2026: the pipeline's type in the labeller's modes is the model's
    answer on the features `bench/page_types.py` trains on (one code path), and the model,
    trained on these pages, names most of them right."""
    from stream_cleaner.evaluate import read_checks
    from stream_cleaner.lm import load_model
    from stream_cleaner.training import prepare_page

    root = BENCH_DATA / "modern2026"
    if not (root / "html").is_dir():
        message = f"{root} not unpacked: run bash bench/setup-data.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    checks = read_checks(root / "checks.json")
    model = load_model()
    right = total = 0
    for name in sorted(checks)[::4]:
        body = (root / "html" / f"{name}.html").read_bytes()
        url = checks[name].url
        page = prepare_page(name, body, "", model=model, url=url)
        expected = {
            class_words: classify_page(page.blocks, page.features, url, class_words=class_words)
            for class_words in (True, False)
        }
        for mode, class_words in (("auto", True), ("article", True), ("corpus", False)):
            doc = clean_document(RawDocument(body=body, url=url),
                                 settings=CleanerSettings(mode=mode), model=model)  # fmt: skip
            assert doc.page_type == expected[class_words][0], (name, mode)
            assert doc.page_type_confidence == pytest.approx(expected[class_words][1])
        kind = checks[name].page_type
        right += expected[True][0] == ("article" if kind == "blog" else kind)
        total += 1
    assert total == 115
    assert right / total > 0.9  # in sample: out of fold it is 0.71 (docs/labeller.md)
