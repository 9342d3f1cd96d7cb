import difflib
import json
import os
import random

import pytest

from stream_cleaner import CleanerSettings
from stream_cleaner.cli import main
from stream_cleaner.evaluate import (
    Alignment,
    Page,
    PageChecks,
    PageScore,
    SnippetCounts,
    align_characters,
    align_tokens,
    align_words,
    bag_of_tokens,
    check_snippets,
    clean_pages,
    compare_lost,
    detect_layout,
    levenshtein_similarity,
    lost_main_content,
    paired_difference,
    read_checks,
    read_cleaneval,
    read_gold,
    read_outputs,
    read_pages,
    score_outputs,
    score_page,
    summarize,
    summarize_by_type,
    text_words,
)

from .conftest import BENCH_DATA, DATA, cleaneval_dir

EVAL = DATA / "eval"
TINY = str(DATA / "tiny.arpa")
# page 2 of the fixture: three gold paragraphs of 18 + 13 + 7 words; page 10: 1 + 17 + 7
GOLD_2_WORDS = 38
GOLD_10_WORDS = 25


# --- scorers on hand-made cases ----------------------------------------------------------------


def test_identical_texts_score_one_under_every_scorer():
    score = score_page("x", "the cat sat on the mat", "<p>the cat sat\n<p>on the mat")
    assert (score.alignment.precision, score.alignment.recall, score.alignment.f1) == (1, 1, 1)
    assert score.levenshtein == 1.0
    assert score.bag_f1 == 1.0


def test_markers_url_line_and_bom_are_not_words_on_either_side():
    gold = "\ufeffURL: http://example.org/a b\n<h>Hello world\n<P>Bye <l>now"
    assert text_words(gold) == ["Hello", "world", "Bye", "now"]
    # a published output carries them too
    assert align_words("URL: http://x\n<p>Hello world Bye now", gold).f1 == 1.0
    # a URL: line anywhere but the first line is text
    assert text_words("Hi\nURL: x") == ["Hi", "URL:", "x"]


def test_word_alignment_counts_longest_matching_blocks():
    a = align_words("a b c d", "<p>a b x d")
    assert (a.aligned, a.output_words, a.gold_words) == (3, 4, 4)
    assert a.precision == a.recall == 0.75
    # reordered blocks: only the first longest block aligns ...
    swapped = align_words("c d a b", "a b c d")
    assert swapped.aligned == 2
    assert swapped.f1 == 0.5
    # ... while the bag of tokens ignores order and the edit distance substitutes every word
    assert bag_of_tokens("c d a b".split(), "a b c d".split()) == (1.0, 1.0, 1.0)
    assert levenshtein_similarity("c d a b".split(), "a b c d".split()) == 0.0


def test_characters_align_where_words_are_whole_clauses():
    # Chinese puts no spaces between words: one space more and no white-space word aligns
    gold = "今天天气很好。我们去公园。"
    assert align_words("今天天气 很好。我们去公园。", gold).aligned == 0
    a = align_characters("首页\n今天天气 很好。\n我们去公园。", gold)
    assert (a.aligned, a.output_words, a.gold_words) == (13, 15, 13)
    assert align_characters("", gold).recall == 0.0


def test_alignment_is_case_and_punctuation_sensitive_like_cleaneval():
    assert align_words("The river.", "the river").aligned == 0


def test_empty_output_and_empty_gold():
    assert align_words("", "some gold words").f1 == 0.0
    assert align_words("some words", "").precision == 0.0
    assert align_words("", "").f1 == 1.0
    assert levenshtein_similarity([], []) == 1.0
    assert levenshtein_similarity([], ["a"]) == 0.0
    assert bag_of_tokens([], ["a"]) == (0.0, 0.0, 0.0)


def test_levenshtein_similarity_is_one_minus_word_edits_over_the_longer_text():
    # substitute b -> x, insert d: 2 edits over max(3, 4) words
    assert levenshtein_similarity("a b c".split(), "a x c d".split()) == 0.5
    # words, not characters: one changed letter is one whole substitution
    assert levenshtein_similarity(["colour"], ["color"]) == 0.0


def test_bag_of_tokens_counts_repeated_tokens_once_per_occurrence():
    p, r, f = bag_of_tokens("a a b".split(), "a b b c".split())
    assert (p, r) == (2 / 3, 2 / 4)
    assert f == pytest.approx(4 / 7)


def test_macro_averages_pages_and_micro_pools_words():
    one = score_page("1", "word", "word")  # F1 1.0
    other = score_page("2", "", " ".join(["w"] * 99))  # F1 0.0
    summary = summarize([one, other])
    assert summary.f1 == 0.5
    assert summary.micro_precision == 1.0
    assert summary.micro_recall == pytest.approx(1 / 100)
    assert summary.micro_f1 == pytest.approx(2 * 0.01 / 1.01)
    assert summary.levenshtein == 0.5
    with pytest.raises(ValueError):
        summarize([])


def test_fast_alignment_gives_difflibs_blocks():
    rng = random.Random(4)
    vocab = "the a of and river water bank mill town road".split()
    for _ in range(200):
        out = [rng.choice(vocab) for _ in range(rng.randint(0, 60))]
        gold = [rng.choice(vocab) for _ in range(rng.randint(0, 60))]
        matcher = difflib.SequenceMatcher(None, out, gold, autojunk=False)
        expected = sum(b.size for b in matcher.get_matching_blocks())
        assert align_tokens(out, gold).aligned == expected


def test_score_outputs_scores_missing_pages_as_empty_or_skips_them():
    pages = [Page("1", "", b"", "<p>a b c d"), Page("2", "", b"", "<p>e f"), Page("3", "", b"")]
    summary, scores = score_outputs(pages, {"1": "a b c d"})
    assert [s.name for s in scores] == ["1", "2"]  # page 3 has no gold
    assert (summary.pages, summary.missing, summary.f1) == (2, 1, 0.5)
    summary, scores = score_outputs(pages, {"1": "a b c d"}, missing="skip")
    assert (summary.pages, summary.missing, summary.f1) == (1, 1, 1.0)
    assert isinstance(scores[0], PageScore)
    with pytest.raises(ValueError):
        score_outputs(pages, {}, missing="zero")


# --- readers on the fixtures ---------------------------------------------------------------


def test_cleaneval_reader_unwraps_pages_and_cleans_gold():
    pages = read_cleaneval(EVAL / "cleaneval")
    assert [p.name for p in pages] == ["2", "3", "10"]  # numeric order
    two, three, ten = pages
    assert two.url == "http://example.org/rivers"  # the id, though the title holds markup
    assert two.raw.startswith(b"<html>")
    assert two.raw.endswith(b"</html>\r\n")
    assert b"</text>" not in two.raw
    assert "Café owners" in two.gold  # cp1252 gold
    assert not two.gold.startswith("URL:")
    assert "\r" not in two.gold
    assert len(text_words(two.gold)) == GOLD_2_WORDS
    assert three.gold is None
    assert ten.raw.startswith(b"\xef\xbb\xbf<html>")  # the page's BOM is the cleaner's business
    assert ten.gold.startswith("<h>Bread")  # BOM and URL line gone, markers kept
    assert "Zürich bakers sell bread — every day." in ten.gold
    assert len(text_words(ten.gold)) == GOLD_10_WORDS
    assert detect_layout(EVAL / "cleaneval") == "cleaneval"
    assert read_pages(EVAL / "cleaneval") == pages
    assert read_cleaneval(EVAL / "cleaneval", limit=1) == pages[:1]


def test_generic_reader_keeps_bytes_as_they_are():
    pages = read_pages(EVAL / "generic")
    assert detect_layout(EVAL / "generic") == "generic"
    assert [(p.name, p.url, p.gold is None) for p in pages] == [
        ("alpha", "", False),
        ("beta", "", True),
    ]
    assert pages[0].raw.startswith(b"<html><head><meta charset")
    # the fixed hash split picks a subset, and together they are the whole
    train = read_pages(EVAL / "generic", split="train")
    test = read_pages(EVAL / "generic", split="test")
    assert sorted(p.name for p in train + test) == ["alpha", "beta"]


def test_dragnet_gold_is_the_article_without_its_comments(tmp_path):
    # Dragnet's gold files go on with the readers' comments after a separator line
    (tmp_path / "html").mkdir()
    (tmp_path / "gold").mkdir()
    (tmp_path / "html" / "7.html").write_bytes(b"<p>A tide table.</p><p>Nice post!</p>")
    gold = "A tide table.\n\n!@#$%^&*() COMMENTS\n\nNice post!\n"
    (tmp_path / "gold" / "7.txt").write_text(gold)
    assert read_gold(tmp_path / "gold" / "7.txt") == "A tide table.\n\n"
    both = read_gold(tmp_path / "gold" / "7.txt", comments=True)
    assert both == "A tide table.\n\n\n\nNice post!\n"
    assert [p.gold for p in read_pages(tmp_path)] == ["A tide table.\n\n"]
    assert [p.gold for p in read_pages(tmp_path, gold_comments=True)] == [both]
    # the command scores an output that keeps the comment against either gold
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "7.txt").write_text("A tide table. Nice post!")
    figures = tmp_path / "figures.json"
    args = ["evaluate", str(tmp_path), "--outputs", str(tmp_path / "out"), "--json", str(figures)]
    assert main(args) == 0
    assert json.loads(figures.read_text())["alignment_macro"]["p"] == pytest.approx(3 / 5)
    assert main([*args, "--gold-comments"]) == 0
    assert json.loads(figures.read_text())["alignment_macro"]["f1"] == pytest.approx(1.0)
    # the separator counts only as a line of its own
    (tmp_path / "gold" / "7.txt").write_text("Press !@#$%^&*() COMMENTS to reply.\n")
    assert read_gold(tmp_path / "gold" / "7.txt") == "Press !@#$%^&*() COMMENTS to reply.\n"
    # ... typed by hand, in all the shapes the Dragnet files have
    for line in ("!@ $%^&*()  COMMENTS", "  #$%^&*()  COMMENTS", "!#@$%^&*()  COMMENTS",
                 "!@#$%$%^&*()  COMMENTS", "!!@#$%^&*()  COMMNENTS", "!@#$%^&*()  \tCORRECTED",
                 "@#$%^&*() COMMENTS", "!@#$%^&*()"):  # fmt: skip
        (tmp_path / "gold" / "7.txt").write_text(f"A tide table.\n{line}\nNice post!\n")
        assert read_gold(tmp_path / "gold" / "7.txt") == "A tide table.\n", line


def test_readers_fail_clearly():
    with pytest.raises(FileNotFoundError, match="html"):
        read_pages(EVAL / "outputs")
    with pytest.raises(ValueError):
        read_pages(EVAL / "generic", layout="warc")
    with pytest.raises(ValueError):
        read_pages(EVAL / "generic", split="dev")
    with pytest.raises(FileNotFoundError):
        read_outputs(EVAL / "nowhere")


def test_outputs_reader_decodes_and_selects():
    outputs = read_outputs(EVAL / "outputs")
    assert list(outputs) == ["2"]
    assert "Café owners" in outputs["2"]
    assert read_outputs(EVAL / "outputs", ["10"]) == {}


def test_clean_pages_runs_the_cleaner_on_raw_bytes(tiny_model):
    pages = read_cleaneval(EVAL / "cleaneval")
    settings = CleanerSettings(model_path=TINY, max_sentence_perplexity=1e9)
    texts = clean_pages(pages, settings)
    assert list(texts) == ["2", "3", "10"]
    assert "Café owners built mills on the banks." in texts["2"]  # decoded from ISO-8859-1
    assert "Zürich bakers" in texts["10"]


# --- the CLI command end to end ------------------------------------------------------------


def test_evaluate_command_scores_a_folder_of_outputs(tmp_path, capsys):
    figures = tmp_path / "figures.json"
    per_page = tmp_path / "pages.tsv"
    args = ["evaluate", str(EVAL / "cleaneval"), "--outputs", str(EVAL / "outputs")]
    assert main([*args, "--json", str(figures), "--per-page", str(per_page)]) == 0
    out = capsys.readouterr().out
    assert "2 pages scored, 1 without gold skipped; 1 pages without output scored as empty" in out
    for name in ("word alignment (CleanEval), per-page average", "pooled over pages",
                 "word Levenshtein similarity", "bag-of-tokens F1"):  # fmt: skip
        assert name in out
    report = json.loads(figures.read_text())
    page_2_f1 = 2 * (38 / 40) / (38 / 40 + 1)  # "Home Contact" are the two extra words
    assert report["alignment_macro"]["f1"] == pytest.approx(page_2_f1 / 2)  # page 10 empty
    assert report["alignment_micro"]["p"] == pytest.approx(38 / 40)
    assert report["alignment_micro"]["r"] == pytest.approx(38 / (GOLD_2_WORDS + GOLD_10_WORDS))
    assert report["levenshtein"] == pytest.approx((1 - 2 / 40) / 2)
    assert report["bag"]["f1"] == pytest.approx(page_2_f1 / 2)
    lines = per_page.read_text().splitlines()
    assert lines[1].split("\t")[:4] == ["2", "0.9500", "1.0000", f"{page_2_f1:.4f}"]
    assert lines[2].startswith("10\t0.0000")

    assert main([*args, "--missing", "skip", "--json", str(figures)]) == 0
    assert json.loads(figures.read_text())["alignment_macro"]["f1"] == pytest.approx(page_2_f1)


def test_evaluate_command_runs_stream_cleaner(tmp_path, capsys):
    figures = tmp_path / "figures.json"
    argv = ["evaluate", str(EVAL / "generic"), "--model", TINY, "--json", str(figures)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "generic layout" in out
    assert "system: stream-cleaner (" in out
    assert "pages/s" in out
    report = json.loads(figures.read_text())
    assert report["pages"] == 1
    # "Some kinds of bread..." is a sentence of the tiny model's corpus: kept, so recall is 1
    assert report["alignment_macro"]["r"] == 1.0


def test_evaluate_command_usage_errors(capsys):
    assert main(["evaluate", str(EVAL / "nowhere")]) == 1
    assert "not found" in capsys.readouterr().err
    assert main(["evaluate", str(EVAL / "generic"), "--limit", "0"]) == 1


# --- snippet checks, page types and lost main content -------------------------------------

CHECKS = {
    "a1": {
        "url": "https://news.example/a1",
        "type": "article",
        "with": ["The tide  turns\nat noon.", "Boats wait."],
        "without": ["Subscribe now", "Home"],
    },
    "f1": {
        "url": "https://forum.example/t/1",
        "type": "forum",
        "with": ["My pump leaks."],
        "without": ["Reply"],
    },
    "a2": {"url": "https://news.example/a2", "type": "article", "with": ["Rain."], "without": []},
}


def test_snippets_are_found_with_white_space_collapsed_on_both_sides():
    checks = PageChecks(
        "u", "article", ("The tide  turns\nat noon.", "Boats wait."), ("Subscribe now", "Home")
    )
    found = check_snippets("Home\n\nThe tide turns at\tnoon. Boats\nwait.", checks)
    assert found == SnippetCounts(
        true_positives=2, false_negatives=0, false_positives=1, true_negatives=1
    )
    # a substring test: case and punctuation count, word boundaries do not
    assert check_snippets("the tide turns at noon", checks) == SnippetCounts(0, 2, 0, 2)
    assert check_snippets("Homeward. Boats wait.", checks) == SnippetCounts(1, 1, 1, 1)
    assert check_snippets("", checks) == SnippetCounts(0, 2, 0, 2)


def test_snippet_counts_pool_before_precision_and_recall():
    pooled = SnippetCounts(3, 1, 1, 4) + SnippetCounts(0, 4, 0, 1)
    assert pooled == SnippetCounts(3, 5, 1, 5)
    assert (pooled.precision, pooled.recall) == (3 / 4, 3 / 8)
    assert pooled.f1 == pytest.approx(2 * (3 / 4) * (3 / 8) / (3 / 4 + 3 / 8))
    assert pooled.to_dict() == {
        "p": 0.75,
        "r": 0.375,
        "f1": pooled.f1,
        "tp": 3,
        "fn": 5,
        "fp": 1,
        "tn": 5,
    }
    # nothing found: precision 0 when something was to be found, 1 when nothing was
    assert SnippetCounts(0, 2, 0, 3).precision == 0.0
    assert SnippetCounts(0, 0, 0, 3).precision == SnippetCounts(0, 0, 0, 3).f1 == 1.0


def test_checks_reader_reads_each_page_and_refuses_malformed_entries(tmp_path):
    path = tmp_path / "checks.json"
    path.write_text(json.dumps(CHECKS), encoding="utf-8")
    checks = read_checks(path)
    assert list(checks) == ["a1", "f1", "a2"]
    assert checks["a1"] == PageChecks(
        "https://news.example/a1",
        "article",
        ("The tide  turns\nat noon.", "Boats wait."),
        ("Subscribe now", "Home"),
    )
    assert checks["a2"].without_snippets == ()
    for broken in (
        [CHECKS["a1"]],  # a list, not pages by name
        {"x": {"url": "u", "with": []}},  # no type
        {"x": {"type": "article", "with": "one string"}},  # a string, not a list
        {"x": {"type": "article", "with": [3]}},
        {"x": {"type": "article", "with": ["  \n"]}},  # a snippet every text holds
        {"x": "article"},
    ):
        path.write_text(json.dumps(broken), encoding="utf-8")
        with pytest.raises(ValueError):
            read_checks(path)


def _page_set(root, pages, checks=CHECKS):
    (root / "html").mkdir()
    (root / "gold").mkdir()
    for name, (html, gold) in pages.items():
        (root / "html" / f"{name}.html").write_bytes(html)
        (root / "gold" / f"{name}.txt").write_text(gold, encoding="utf-8")
    (root / "checks.json").write_text(json.dumps(checks), encoding="utf-8")


def test_a_set_with_checks_is_generic_and_its_pages_carry_them(tmp_path):
    # a first page that looks wrapped would make it CleanEval, but the checks say otherwise
    _page_set(
        tmp_path,
        {
            "a1": (b'<text id="x">\n<p>The tide</p>', "The tide"),
            "f1": (b"<p>My pump leaks.</p>", "My pump leaks."),
        },
    )
    assert detect_layout(tmp_path) == "generic"
    pages = read_pages(tmp_path)
    assert [(p.name, p.url, p.checks.page_type) for p in pages] == [
        ("a1", "https://news.example/a1", "article"),
        ("f1", "https://forum.example/t/1", "forum"),
    ]
    assert pages[0].raw.startswith(b"<text")  # left as it is
    (tmp_path / "checks.json").unlink()
    assert detect_layout(tmp_path) == "cleaneval"
    assert read_pages(tmp_path, layout="generic")[1].checks is None


def _pages_with_checks():
    checks = {
        name: PageChecks(e["url"], e["type"], tuple(e["with"]), tuple(e["without"]))
        for name, e in CHECKS.items()
    }
    gold = {
        "a1": "The tide turns at noon. Boats wait.",
        "f1": "My pump leaks. It is old.",
        "a2": "Rain.",
    }
    return [Page(name, "", b"", gold[name], checks[name]) for name in CHECKS]


def test_snippets_and_page_types_in_the_summaries():
    pages = _pages_with_checks()
    outputs = {"a1": "Home The tide turns at noon. Boats wait.", "f1": "Reply"}  # a2 missing
    summary, scores = score_outputs(pages, outputs)
    assert [(s.name, s.page_type, s.missing) for s in scores] == [
        ("a1", "article", False),
        ("f1", "forum", False),
        ("a2", "article", True),
    ]
    assert [s.snippets for s in scores] == [
        SnippetCounts(2, 0, 1, 1),
        SnippetCounts(0, 1, 1, 0),
        SnippetCounts(0, 1, 0, 0),
    ]
    assert summary.snippets == SnippetCounts(2, 2, 2, 1)
    assert summary.to_dict()["snippets"]["f1"] == pytest.approx(0.5)
    by_type = summarize_by_type(scores)
    assert list(by_type) == ["article", "forum"]  # the most frequent type first
    assert (by_type["article"].pages, by_type["article"].missing) == (2, 1)
    assert by_type["article"].snippets == SnippetCounts(2, 1, 1, 1)
    assert by_type["forum"].f1 == 0.0
    assert by_type["article"].f1 == pytest.approx((2 * (7 / 8) / (7 / 8 + 1) + 0) / 2)
    # a set without checks: no snippet figures, no types
    plain = [Page(p.name, "", b"", p.gold) for p in pages]
    summary, scores = score_outputs(plain, outputs)
    assert summary.snippets is None and "snippets" not in summary.to_dict()
    assert summarize_by_type(scores) == {}


def _score(name, gold_words, recall):
    aligned = round(gold_words * recall)
    return PageScore(name, Alignment(aligned, aligned, gold_words), 0.0, 0.0, 0.0, 0.0)


def test_lost_main_content_rule_and_its_limits():
    assert lost_main_content(_score("p", 100, 0.29), _score("p", 100, 0.71))
    assert not lost_main_content(_score("p", 100, 0.30), _score("p", 100, 0.71))  # not < 0.3
    assert not lost_main_content(_score("p", 100, 0.29), _score("p", 100, 0.70))  # not > 0.7
    assert lost_main_content(_score("p", 20, 0.0), _score("p", 20, 1.0))
    assert not lost_main_content(_score("p", 19, 0.0), _score("p", 19, 1.0))  # too short
    with pytest.raises(ValueError):
        lost_main_content(_score("p", 100, 0.0), _score("q", 100, 1.0))


def test_compare_lost_counts_both_ways_on_pages_scored_for_both():
    ours = [
        _score("a", 100, 0.1),
        _score("b", 100, 0.9),
        _score("c", 10, 0.0),
        _score("d", 100, 0.5),
        _score("e", 50, 0.0),
    ]
    theirs = [
        _score("a", 100, 0.8),
        _score("b", 100, 0.2),
        _score("c", 10, 1.0),
        _score("d", 100, 0.9),
    ]
    found = compare_lost(ours, theirs)
    assert (found.pages, found.lost, found.reverse) == (3, ("a",), ("b",))
    assert found.to_dict() == {"pages": 3, "lost": ["a"], "reverse": ["b"]}


def _f1(recall):  # `_score`'s pages: every output word aligned
    return 2 * recall / (1 + recall)


def test_paired_difference_resamples_a_sites_pages_together():
    same_gain = paired_difference(
        [_score(f"p{i}", 100, 0.9) for i in range(40)],
        [_score(f"p{i}", 100, 0.5) for i in range(40)],
    )
    gain = _f1(0.9) - _f1(0.5)
    assert same_gain.mean == pytest.approx(gain)
    assert same_gain.low == pytest.approx(gain) and same_gain.high == pytest.approx(gain)
    assert (same_gain.ahead, same_gain.pages, same_gain.sites) == (1.0, 40, 40)
    # far ahead on 20 pages, a little behind on 20: a lead when each page is a witness, none
    # when the 20 are one site's (a draw without that site is behind)
    ours = [_score(f"a{i}", 100, 0.9) for i in range(20)]
    ours += [_score(f"b{i}", 100, 0.5) for i in range(20)]
    theirs = [_score(f"a{i}", 100, 0.5) for i in range(20)]
    theirs += [_score(f"b{i}", 100, 0.55) for i in range(20)]
    by_page = paired_difference(ours, theirs)
    by_site = paired_difference(ours, theirs, {f"a{i}": "one.example" for i in range(20)})
    assert (
        by_site.mean
        == pytest.approx(by_page.mean)
        == pytest.approx((gain + _f1(0.5) - _f1(0.55)) / 2)
    )
    assert by_page.low > 0 and by_page.ahead == 1.0
    assert by_site.low < 0 < by_site.high and 0.5 < by_site.ahead < 0.8
    assert (by_page.sites, by_site.sites) == (40, 21)
    assert paired_difference(ours, theirs, {"a0": "one.example"}) == paired_difference(
        ours, theirs, {"a0": "one.example"}
    )  # a fixed seed: a run repeats its figures
    assert paired_difference(ours, theirs[:10]).pages == 10  # pages scored for both only
    assert paired_difference(theirs, ours).mean == pytest.approx(-by_page.mean)
    with pytest.raises(ValueError, match="no page"):
        paired_difference(ours, [_score("elsewhere", 100, 1.0)])


def test_evaluate_command_reports_snippets_types_and_lost_content(tmp_path, capsys):
    root = tmp_path / "set"
    root.mkdir()
    long_gold = " ".join(f"w{i}" for i in range(30))
    _page_set(
        root,
        {
            "a1": (b"<p>x</p>", "The tide turns at noon. Boats wait. " + long_gold),
            "f1": (b"<p>x</p>", "My pump leaks."),
            "a2": (b"<p>x</p>", "Rain."),
        },
    )
    for folder, texts in {
        "ours": {"a1": "Home", "f1": "My pump leaks. Reply", "a2": "Rain."},
        "peer": {"a1": "The tide turns at noon. Boats wait. " + long_gold, "f1": "", "a2": ""},
    }.items():
        (tmp_path / folder).mkdir()
        for name, text in texts.items():
            (tmp_path / folder / f"{name}.txt").write_text(text, encoding="utf-8")
    figures, per_page = tmp_path / "figures.json", tmp_path / "pages.tsv"
    argv = [
        "evaluate",
        str(root),
        "--outputs",
        str(tmp_path / "ours"),
        "--against",
        str(tmp_path / "peer"),
        "--json",
        str(figures),
        "--per-page",
        str(per_page),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "(generic layout" in out
    assert "snippet checks (trafilatura's method), pooled over pages" in out
    assert "### article, 2 pages" in out and "### forum, 1 pages" in out
    assert "1 pages lost here and kept there, 0 lost there and kept here (of 1 pages" in out
    report = json.loads(figures.read_text())
    assert report["snippets"] | {"p": 0, "r": 0, "f1": 0} == {
        "p": 0,
        "r": 0,
        "f1": 0,
        "tp": 2,
        "fn": 2,
        "fp": 2,
        "tn": 1,
    }
    assert report["snippets"]["p"] == pytest.approx(0.5)
    assert set(report["by_type"]) == {"article", "forum"}
    assert report["by_type"]["forum"]["snippets"]["tp"] == 1
    assert report["lost_main_content"][str(tmp_path / "peer")] == {
        "pages": 1,
        "lost": ["a1"],
        "reverse": [],
    }
    # per page -1 (a1), 6/7 - 0 (f1: 3 of 4 words aligned), 1 - 0 (a2)
    difference = report["differences"][str(tmp_path / "peer")]
    assert difference["mean"] == pytest.approx((-1 + 6 / 7 + 1) / 3)
    assert difference["low"] < difference["mean"] < difference["high"]
    assert (difference["pages"], difference["sites"]) == (3, 2)  # a1 and a2: news.example
    assert f"here minus there {difference['mean']:+.4f} (95 % interval" in out
    lines = [line.split("\t") for line in per_page.read_text().splitlines()]
    assert lines[0][-5:] == ["type", "tp", "fn", "fp", "tn"]
    assert lines[1][0] == "a1" and lines[1][-5:] == ["article", "0", "2", "1", "1"]


# --- the real CleanEval data ---------------------------------------------------------------


@pytest.mark.slow
def test_cleaneval_dev_reads_whole_and_scores_as_documented():
    root = cleaneval_dir("dev").parent
    pages = read_cleaneval(root)
    assert len(pages) == 58
    assert all(p.gold is not None and p.url.startswith("http") for p in pages)
    assert not any(p.raw.startswith(b"<text") or p.gold.startswith("URL:") for p in pages)
    # the README's threshold table: macro word-alignment F1 0.8705 at max perplexity 3000
    perplexity_mode = CleanerSettings(mode="perplexity")
    summary, _ = score_outputs(pages, clean_pages(pages, perplexity_mode))
    assert summary.f1 == pytest.approx(0.8705, abs=0.002)
    assert 0.5 < summary.levenshtein < summary.f1
    # an extractor that keeps nothing scores 1 only on the one page whose gold is empty too
    assert sum(not text_words(p.gold) for p in pages) == 1
    assert score_outputs(pages, {})[0].f1 == pytest.approx(1 / 58)
    assert score_outputs(pages, {p.name: p.gold for p in pages})[0].f1 == 1.0


@pytest.mark.slow
def test_published_justext_outputs_pair_with_cleaneval_test():
    cleaneval_dir("test")
    folder = BENCH_DATA / "cleaneval" / "published-outputs" / "justext"
    pages = read_cleaneval(BENCH_DATA / "cleaneval" / "test", limit=120)
    outputs = read_outputs(folder, [p.name for p in pages])
    assert len(outputs) > 40
    summary, _ = score_outputs(pages, outputs, missing="skip")
    assert summary.f1 > 0.8  # the files belong to these pages: unrelated text would score ~0


@pytest.mark.slow
def test_new_site_test_pages_come_from_sites_the_train_split_lacks():
    import sys

    from stream_cleaner.decode import decode_body
    from stream_cleaner.evaluate import dragnet_split
    from stream_cleaner.sites import find_page_url, site_of

    cleaneval_dir("test")  # skips (fails in CI) when bench/setup-data.sh has not run
    sys.path.insert(0, str(BENCH_DATA.parent.parent / "bench"))
    from data import load_dragnet, new_site_test_pages

    pages = load_dragnet()
    site = {p.name: site_of(find_page_url(decode_body(p.raw).text)) for p in pages}
    train_sites = {site[p.name] for p in pages if dragnet_split(p.name) == "train"}
    new = new_site_test_pages(pages)
    assert all(dragnet_split(p.name) == "test" and site[p.name] not in train_sites for p in new)
    assert len(new) == 99  # of the 413 test pages: the others' sites have train pages


@pytest.mark.slow
def test_the_2026_pages_read_with_their_checks():
    root = BENCH_DATA / "modern2026"
    if not (root / "html").is_dir():
        message = f"{root} not unpacked: run bash bench/setup-data.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    pages = read_pages(root)
    assert len(pages) == 460
    assert detect_layout(root) == "generic"
    assert all(p.gold and p.checks and p.url == p.checks.url for p in pages)
    types = {kind: s.pages for kind, s in summarize_by_type(score_outputs(pages, {})[1]).items()}
    assert types == {
        "article": 231,
        "service": 47,
        "product": 46,
        "forum": 45,
        "documentation": 37,
        "collection": 27,
        "listing": 25,
        "blog": 2,
    }
    # the gold holds every `with` snippet and, on one page (m1482), one `without` snippet
    summary, _ = score_outputs(pages, {p.name: p.gold for p in pages})
    assert summary.snippets == SnippetCounts(2228, 0, 1, 2485)
