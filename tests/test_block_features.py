"""Language-independent block features, what the multilingual labeller reads (issue 8)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stream_cleaner.block_features import (
    BASELINE_FEATURE_NAMES,
    FEATURE_NAMES,
    LANGUAGE_FEATURES,
    TOP_TAGS,
    page_features,
    top_tags,
)

COL = {name: i for i, name in enumerate(FEATURE_NAMES)}


def test_cjk_and_thai_text_gives_sensible_character_ratios():
    texts = ["这是一个测试。", "ที่นี่ภาษาไทย", "Price: 42 €"]
    x = page_features(["html body div p", "html body div p", "html body div ul li a"], texts)
    zh, th, en = x
    # 6 letters and a sentence end, each two columns wide
    assert zh[COL["ratio_letter"]] == pytest.approx(6 / 7)
    assert zh[COL["ratio_sentence_punct"]] == pytest.approx(1 / 7)
    assert zh[COL["ends_sentence"]] == 1.0
    assert zh[COL["log_chars"]] == pytest.approx(math.log1p(7))
    assert zh[COL["log_width"]] == pytest.approx(math.log1p(14))
    # Thai vowel signs are marks: letters, without a column of their own
    assert th[COL["ratio_letter"]] == 1.0
    assert th[COL["log_width"]] < th[COL["log_chars"]]
    assert th[COL["ratio_other_punct"]] == 0.0 and th[COL["ends_sentence"]] == 0.0
    assert en[COL["ratio_digit"]] == pytest.approx(2 / 11)
    assert en[COL["ratio_symbol"]] == pytest.approx(1 / 11)
    assert en[COL["ratio_other_punct"]] == pytest.approx(1 / 11)
    # markup: top-k tag counts, last tag, link from the path
    assert en[COL["tag_a"]] == 1.0 and en[COL["last_a"]] == 1.0 and en[COL["in_link"]] == 1.0
    assert zh[COL["tag_div"]] == 1.0 and zh[COL["last_p"]] == 1.0 and zh[COL["in_link"]] == 0.0
    assert en[COL["depth"]] == 6.0 and en[COL["tags_opened"]] == 3.0


def test_cjk_punctuation_counts_as_punctuation():
    x = page_features(["p"], ["「東京」、大阪，北京；"])
    assert x[0, COL["ratio_other_punct"]] == pytest.approx(5 / 11)
    assert x[0, COL["ratio_letter"]] == pytest.approx(6 / 11)


# Latin to Cyrillic, letter for letter: a text of the same shape in another script
_CYRILLIC = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "абцдефгхийклмнопярстуввхызАБЦДЕФГХИЙКЛМНОПЯРСТУВВХЫЗ",
)


def test_features_do_not_change_when_the_script_changes_but_the_shape_does_not():
    paths = ["html body div ul li a"] * 3 + ["html body div h1"] + ["html body div p"] * 3
    texts = ["Home", "News", "Contact", "A title"]
    texts += ["The first paragraph of the story, with 3 clauses; it ends here."] * 2
    texts += ["Another one (shorter)!"]
    english = page_features(paths, texts)
    cyrillic = page_features(paths, [t.translate(_CYRILLIC) for t in texts])
    np.testing.assert_array_equal(english, cyrillic)
    # the language-dependent baseline features do change
    en_base = page_features(paths, texts, language_features=True)
    cy_base = page_features(paths, [t.translate(_CYRILLIC) for t in texts], language_features=True)
    ascii_col = BASELINE_FEATURE_NAMES.index("ratio_ascii")
    assert (en_base[:, ascii_col] > cy_base[:, ascii_col]).all()
    assert en_base.shape[1] == len(FEATURE_NAMES) + len(LANGUAGE_FEATURES)


def test_neighbour_features_and_duplicates():
    x = page_features(["p", "p", "p"], ["same", "other text", "same"])
    assert x[:, COL["duplicates"]].tolist() == [1.0, 0.0, 1.0]
    assert x[0, COL["log_width@-1"]] == -1.0  # no block before the first
    assert x[1, COL["log_width@-1"]] == x[0, COL["log_width"]]
    assert x[1, COL["log_width@+1"]] == x[2, COL["log_width"]]
    assert x[:, COL["position"]].tolist() == [0.0, 0.5, 1.0]
    assert page_features([], []).shape == (0, len(FEATURE_NAMES))


def test_top_tags_counts_tags_over_paths():
    assert top_tags(["html body div a", "html body div div span"], 2) == ("div", "body")
    assert len(TOP_TAGS) == 40 and len(set(TOP_TAGS)) == 40
