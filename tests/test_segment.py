import time

from stream_cleaner._native import native_module
from stream_cleaner.segment import ABBREVIATIONS, split_sentences


def test_splits_at_full_stops_followed_by_a_capital():
    assert split_sentences("The river rose. The town was flooded! Was it? Yes.") == [
        "The river rose.",
        "The town was flooded!",
        "Was it?",
        "Yes.",
    ]


def test_abbreviations_and_initials_do_not_end_a_sentence():
    text = "Mr. Smith met Dr. Jones in St. Louis. J. R. R. Tolkien wrote e.g. this. It ended."
    assert split_sentences(text) == [
        "Mr. Smith met Dr. Jones in St. Louis.",
        "J. R. R. Tolkien wrote e.g. this.",
        "It ended.",
    ]


def test_decimals_and_urls_stay_whole():
    text = "It costs 3.5 USD at www.example.com/a.b today. See https://example.org/x.html now."
    assert split_sentences(text) == [
        "It costs 3.5 USD at www.example.com/a.b today.",
        "See https://example.org/x.html now.",
    ]


def test_cjk_full_stops_need_no_space():
    assert split_sentences("東京は晴れ。大阪は雨！本当？") == [
        "東京は晴れ。",
        "大阪は雨！",
        "本当？",
    ]


def test_a_lower_case_continuation_is_not_a_new_sentence():
    assert split_sentences("He said so. and left.") == ["He said so. and left."]


def test_closing_quotes_stay_with_their_sentence():
    assert split_sentences('"Is it?" she asked. "Yes." Then silence.') == [
        '"Is it?" she asked.',
        '"Yes."',
        "Then silence.",
    ]


def test_text_without_boundary_and_empty_text():
    assert split_sentences("Home") == ["Home"]
    assert split_sentences("") == []
    assert split_sentences("Read more...") == ["Read more..."]


def test_a_long_run_of_dots_splits_in_linear_time():
    fast = native_module("sentences")
    for text in ("Rivers " + "." * 300_000 + "x", "A " + "?!" * 150_000 + ")" * 1000 + "b"):
        started = time.monotonic()
        assert split_sentences(text) == [text]
        if fast is not None:
            assert fast.split_blocks([text], [0], ABBREVIATIONS) == ([text], [0])
        assert time.monotonic() - started < 1  # searching inside the run again: 36 s
