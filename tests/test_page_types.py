"""The page's type (`page_types`): its features and the shipped model."""

from __future__ import annotations

import json

import numpy as np
import pytest

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
    page_features,
    url_features,
)
from stream_cleaner.parse import parse_blocks
from stream_cleaner.segment import split_sentences

from .conftest import REPO

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
    # words inside a segment are not words of the path
    assert url("https://example.org/threadneedle-street")["url_forum"] == 0


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
    assert load_page_types() is load_page_types()
