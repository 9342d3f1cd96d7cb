"""The drop-rule registry (`stream_cleaner.filters`): every reason set derives from it, and a
filter added here, in this file alone, reaches the records and the worker's metrics."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from stream_cleaner import decide
from stream_cleaner.decide import DropReason
from stream_cleaner.document import Block
from stream_cleaner.filters import REGISTRY, BlockFilter, Level, SentenceFilter
from stream_cleaner.pipeline import clean_document
from stream_cleaner.settings import CleanerSettings

TOPICS = Path(__file__).parents[1] / "topics"
PERPLEXITY = CleanerSettings(mode="perplexity", max_sentence_perplexity=1e9)
PAGE = (
    "<html><body><p>A river is a natural stream of water. The river flows towards an ocean. "
    "The fish swim in the river.</p><ul><li>Home</li><li>About us</li></ul></body></html>"
)


class ToyMarker(SentenceFilter):
    """Drops a sentence holding the word ``fish``."""

    reason = "toy_marker"

    def drops(self, text: str, value: object) -> bool:
        return "fish" in text.split()


class ToyList(BlockFilter):
    """Drops the blocks of list items, shorter than ``max_word_chars`` (the setting it reads)."""

    reason = "toy_list"
    setting = "max_word_chars"

    def drops(self, block: Block, value: object) -> bool:
        assert value == PERPLEXITY.max_word_chars  # the setting's value, as the rule asked
        return block.tag == "li"


@pytest.fixture(params=["native", "python"])
def both_paths(request, monkeypatch):
    """The decision pass natively (when built) and in pure Python."""
    if request.param == "python":
        monkeypatch.setattr(decide, "native_module", lambda name: None)
    elif decide.native_module("sentences") is None:
        pytest.skip("native speed-ups not built")
    return request.param


def test_the_reasons_are_the_registrys_in_one_order() -> None:
    shipped = (
        "high_perplexity", "no_words", "too_long", "time_budget", "site_template", "boilerplate",
    )  # fmt: skip
    assert REGISTRY.reasons() == shipped == DropReason.ALL
    assert [r.level for r in REGISTRY.rules()] == [
        Level.SENTENCE, Level.SENTENCE, Level.SENTENCE, Level.PAGE, Level.BLOCK, Level.BLOCK,
    ]  # fmt: skip
    assert REGISTRY.columns().reasons == (
        "no_words", "too_long", "high_perplexity", "site_template", "boilerplate"
    )  # fmt: skip


def test_the_topic_schemas_enums_are_the_registrys() -> None:
    """Fails when a rule is registered (or removed) and the schemas are not changed with it:
    their enums list the registry's reasons in its order."""
    documents = json.loads((TOPICS / "clean.documents.v1.schema.json").read_text())
    sentences = json.loads((TOPICS / "clean.sentence-scores.v1.schema.json").read_text())
    assert documents["properties"]["dropped"]["propertyNames"]["enum"] == list(REGISTRY.reasons())
    assert sentences["properties"]["reason"]["enum"] == [*REGISTRY.reasons(), None]


def test_the_registry_refuses_what_it_cannot_derive_from() -> None:
    class Again(SentenceFilter):
        reason = "no_words"

        def drops(self, text: str, value: object) -> bool:
            return False

    class NoSuchSetting(ToyMarker):
        reason = "toy_setting"
        setting = "max_toy_chars"

    class CamelCase(ToyMarker):
        reason = "ToyMarker"

    class Silent(SentenceFilter):
        reason = "toy_silent"

    for rule, message in (
        (Again, "registered already"),
        (NoSuchSetting, "no setting 'max_toy_chars'"),
        (CamelCase, "snake_case"),
        (Silent, "drops"),
    ):
        with pytest.raises(ValueError, match=message):
            REGISTRY.register(rule)
    assert REGISTRY.reasons() == DropReason.ALL and len(DropReason.ALL) == 6


def test_a_toy_filter_added_here_reaches_the_record(tiny_model, both_paths) -> None:
    before = clean_document(PAGE, settings=PERPLEXITY, model=tiny_model)
    assert "The fish swim in the river." in before.text
    with REGISTRY.registered(ToyMarker):
        assert DropReason.ALL[-1] == "toy_marker"
        doc = clean_document(PAGE, settings=PERPLEXITY, model=tiny_model)
    fish = [s for s in doc.sentences if "fish" in s.text]
    assert [(s.keep, s.reason) for s in fish] == [(False, "toy_marker")]
    assert doc.dropped == {"toy_marker": 1}
    assert "fish" not in doc.text and "A river is a natural stream of water." in doc.text
    # every other decision as without it
    others = [(s.text, s.keep, s.reason) for s in doc.sentences if "fish" not in s.text]
    assert others == [(s.text, s.keep, s.reason) for s in before.sentences if "fish" not in s.text]
    assert "toy_marker" not in DropReason.ALL  # gone with the with block
    assert clean_document(PAGE, settings=PERPLEXITY, model=tiny_model).dropped == {}


def test_a_toy_block_filter_drops_its_blocks_after_the_sentence_rules(
    tiny_model, both_paths
) -> None:
    page = PAGE.replace("<li>Home</li>", "<li>Home</li><li>---</li>")
    with REGISTRY.registered(ToyList), REGISTRY.registered(ToyMarker):
        doc = clean_document(page, settings=PERPLEXITY, model=tiny_model)
    by_text = {s.text: s.reason for s in doc.sentences}
    # a block rule overrides the sentence rules: "---" has no words, its block is a list item
    assert by_text == {
        "A river is a natural stream of water.": None,
        "The river flows towards an ocean.": None,
        "The fish swim in the river.": "toy_marker",
        "Home": "toy_list",
        "---": "toy_list",
        "About us": "toy_list",
    }
    assert doc.dropped == {"toy_marker": 1, "toy_list": 3}


def test_the_first_filter_registered_names_the_drop(both_paths) -> None:
    class Second(ToyMarker):
        reason = "toy_second"

    texts = ["The fish swim.", "No marker here."]
    scores = ([-1.0, -1.0], [3, 3], [0, 0])
    with REGISTRY.registered(ToyMarker), REGISTRY.registered(Second):
        found = REGISTRY.sentence_reasons(texts, PERPLEXITY)
        assert found == ["toy_marker", None]
        columns, _, dropped = decide.decide_page(
            texts, [0, 0], scores, unscored=set(), max_sentence_perplexity=1e9,
            sentence_reasons=found,
        )  # fmt: skip
    assert columns[4:] == ([False, True], ["toy_marker", None])
    assert dropped == {"toy_marker": 1}
    assert REGISTRY.sentence_reasons(texts, PERPLEXITY) is None  # nothing added: nothing asked


def test_a_toy_filters_reason_reaches_the_workers_metrics(tiny_model, both_paths) -> None:
    metrics_module = pytest.importorskip("stream_cleaner.streaming.metrics")
    from stream_cleaner.streaming.records import InputMessage, clean_message

    msg = InputMessage(topic="in", partition=0, offset=1, key=b"doc-1", value=PAGE.encode())
    series = 'stream_cleaner_sentences_dropped_total{reason="toy_marker"}'
    assert series not in metrics_module.WorkerMetrics().exposition().decode()
    with REGISTRY.registered(ToyMarker):
        metrics = metrics_module.WorkerMetrics()
        # labelled from the registry: exported at 0 before the first drop
        assert f"{series} 0.0" in metrics.exposition().decode()
        outcome = clean_message(msg, worker_version="0", model=tiny_model)
    record = orjson.loads(outcome.document.value)
    assert record["dropped"].get("toy_marker") == 1
    sentences = [orjson.loads(value) for value in outcome.sentence_values]
    assert [s["reason"] for s in sentences if "fish" in s["text"]] == ["toy_marker"]
    metrics.observe_outcome(outcome)
    assert f"{series} 1.0" in metrics.exposition().decode()


def test_a_page_rule_is_applied_by_the_pipeline_not_asked() -> None:
    (page_rule,) = REGISTRY.rules(Level.PAGE)
    assert page_rule.reason == DropReason.TIME_BUDGET == "time_budget"
    assert page_rule.setting == "time_budget_seconds"
