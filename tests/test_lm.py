import json
import math
import re
import unicodedata

import kenlm
import pytest

from stream_cleaner import lm
from stream_cleaner.lm import (
    NORMALIZATION_VERSION,
    KenlmToolsMissing,
    LanguageModel,
    PerplexityModel,
    find_kenlm_tool,
    iter_corpus_sentences,
    load_model,
    normalize,
    normalize_many,
    perplexity,
    train_lm,
)

from .conftest import DATA


def test_normalize_lowercases_zeroes_digits_and_splits_punctuation():
    assert normalize("Café in Zürich — 東京, it’s 3.14 USD!") == (
        "café in zürich - 東 京 , it ' s 0 . 00 usd !"
    )


def test_normalize_keeps_every_script():
    assert normalize("Привет, мир") == "привет , мир"
    assert normalize("مرحبا بالعالم") == "مرحبا بالعالم"
    assert normalize("ภาษาไทย ง่าย") == "ภาษาไทย ง่าย"


def test_normalize_many_equals_normalize_one_by_one():
    # the batch form is what the pipeline uses; training uses the single form
    reference = re.compile(
        r"[^\W\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|"
        r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\w\s]"
    )
    texts = ["A b.", "", "x²½ ٣ 𝟘 — «q» ©2007 東京。", "tab\there", "snake_case & co"]
    batch = normalize_many(texts)
    assert batch == [normalize(t) for t in texts]
    fold = str.maketrans({"—": "-", "«": '"', "»": '"'})
    for text, normalized in zip(texts, batch, strict=True):
        expected = " ".join(reference.findall(re.sub(r"\d", "0", text.lower().translate(fold))))
        assert normalized == expected


def test_ideographs_and_kana_are_a_token_each_and_combining_marks_stay_apart():
    """Runs of ideographs and kana are spaced at once (`lm._CJK`); the two combining kana
    marks, which that pattern leaves out, end as tokens of their own between spaced
    neighbours and stay with a letter of another script, as a character at a time did."""
    assert normalize("ガイド東京タワー。東京abc京都12") == (
        "ガ イ ド 東 京 タ ワ ー 。 東 京 abc 京 都 00"
    )
    assert normalize("か\u3099き\u309aく a\u3099b") == "か \u3099 き \u309a く a\u3099b"
    blocks = re.findall(r"\\u(....)-\\u(....)", lm._CJK.pattern.encode("unicode_escape").decode())
    marks = [
        c for a, b in blocks for c in range(int(a, 16), int(b, 16) + 1)
        if unicodedata.category(chr(c)).startswith("M")
    ]  # fmt: skip
    # this Python's Unicode data puts no other combining mark in those blocks
    assert len(blocks) == 5 and marks == []


def test_perplexity_counts_the_end_of_sentence():
    assert perplexity(-3.0, 2) == pytest.approx(10.0)
    assert perplexity(0.0, 0) is None


def test_score_matches_kenlm_and_counts_oov(tiny_model):
    sentence = normalize("A river is a natural stream of zorblax.")
    score = tiny_model.score(sentence)
    raw = kenlm.Model(str(DATA / "tiny.arpa"))
    assert score.log10_prob == pytest.approx(raw.score(sentence, bos=True, eos=True))
    assert score.n_tokens == len(sentence.split())
    assert score.n_oov == 1  # zorblax
    assert score.perplexity == pytest.approx(raw.perplexity(sentence), rel=1e-6)
    assert tiny_model.score_many([sentence, ""]) == [score, (0.0, 0, 0)]


def test_in_domain_text_scores_lower_than_boilerplate(tiny_model):
    prose = tiny_model.compute_sentence("The water in a river flows towards the lake.")
    menu = tiny_model.compute_sentence("Login | Register | FAQ | Sitemap")
    assert prose < menu


def test_compute_text_sums_log_probabilities(tiny_model):
    text = "Bread is a food. Rivers carry boats."
    parts = [tiny_model.score(normalize(s)) for s in ("Bread is a food.", "Rivers carry boats.")]
    log_prob = sum(p.log10_prob for p in parts)
    n = sum(p.n_tokens + 1 for p in parts)
    assert tiny_model.compute_text(text) == pytest.approx(10 ** (-log_prob / n))


def test_sidecar_names_the_model(tiny_model):
    assert tiny_model.id == "tiny-test"
    assert tiny_model.info["normalization_version"] == NORMALIZATION_VERSION


def test_load_model_is_shared_per_process():
    path = DATA / "tiny.arpa"
    assert load_model(path) is load_model(str(path))


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="language model not found"):
        LanguageModel(tmp_path / "nope.klm").model  # noqa: B018


def test_pyplexity_style_api(default_model):
    model = PerplexityModel.from_str("default")
    assert model.path == default_model.path
    good = model.compute_sentence("The city council approved the new budget on Tuesday.")
    bad = model.compute_sentence("Home | Login | Cart (0) | Sitemap")
    assert good < bad


def test_corpus_reader_skips_wikiextractor_markup_titles_and_headings():
    lines = [
        '<doc id="1" url="u" title="Title">',
        "Title",
        "Early life.",  # a section heading: one short sentence on its own line
        "One two. Three four.",
        "A single sentence of prose that is long enough to be prose.",
        "\x00\x01binary junk",
        "</doc>",
        "",
        "Outside any doc.",
    ]
    assert list(iter_corpus_sentences(lines)) == [
        "one two .",
        "three four .",
        "a single sentence of prose that is long enough to be prose .",
        "outside any doc .",
    ]


def test_find_tool_reports_how_to_build(monkeypatch, tmp_path):
    monkeypatch.setenv("STREAM_CLEANER_KENLM_BIN", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr("stream_cleaner.lm.Path.is_file", lambda self: False)
    with pytest.raises(KenlmToolsMissing, match=r"build-kenlm-tools\.sh"):
        find_kenlm_tool("lmplz")


@pytest.mark.lmplz
def test_train_lm_builds_a_binary_that_scores(tmp_path):
    trained = train_lm([DATA / "tiny-corpus.txt"], tmp_path / "m.klm", order=3, model_id="t3")
    assert trained.path.is_file()
    info = json.loads((tmp_path / "m.klm.json").read_text())
    assert info["order"] == 3
    assert info["id"] == "t3"
    assert info["vocabulary_size"] > 150
    assert info["training_sentences"] == 31  # titles and "History." headings left out
    assert len(info["corpus_sha256"]) == 64
    model = LanguageModel(trained.path)
    assert model.order == 3
    assert model.id == "t3"
    seen = model.compute_sentence("A river is a natural stream of water.")
    unseen = model.compute_sentence("Quantum flux capacitors hum loudly.")
    assert math.isfinite(seen)
    assert seen < unseen


@pytest.mark.lmplz
def test_train_lm_arpa_output_matches_the_committed_fixture(tmp_path):
    trained = train_lm([DATA / "tiny-corpus.txt"], tmp_path / "tiny.arpa", arpa=True)
    assert trained.path.read_text() == (DATA / "tiny.arpa").read_text()


@pytest.mark.lmplz
def test_train_lm_limits_the_vocabulary(tmp_path):
    trained = train_lm([DATA / "tiny-corpus.txt"], tmp_path / "v.arpa", arpa=True, max_vocab=50)
    assert trained.info["max_vocab"] == 50
    assert trained.info["vocabulary_size"] <= 53  # the 50 words plus <s>, </s>, <unk>
    model = LanguageModel(trained.path)
    assert model.score(normalize("the river")).n_oov == 0
    assert model.score(normalize("zorblax quux")).n_oov == 2


@pytest.mark.lmplz
def test_train_lm_reports_lmplz_errors(tmp_path):
    with pytest.raises(RuntimeError, match="lmplz failed"):
        train_lm([DATA / "tiny-corpus.txt"], tmp_path / "bad.klm", order=2, prune=(0, 2, 1))
