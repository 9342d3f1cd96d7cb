"""bench/quality.py's wiring: extra page sets, stream-cleaner variants, lost content by peer."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import quality

from stream_cleaner.evaluate import Alignment, PageScore


def _score(name, page_type, recall, gold_words=100):
    aligned = round(gold_words * recall)
    alignment = Alignment(aligned, aligned, gold_words)
    return PageScore(name, alignment, 0.0, 0.0, 0.0, 0.0, page_type=page_type)


def test_page_sets_and_variants_from_the_command_line():
    args = quality.parse_args(
        [
            "--systems",
            "resiliparse",
            "--dataset",
            "gt=googletrends/val",
            "--variant",
            "exp",
            "mode=article",
            "labeller_path=/tmp/l.json",
        ]
    )
    assert args.systems == ["resiliparse", "stream-cleaner-exp"]  # a variant always runs
    assert args.variants == {"stream-cleaner-exp": ["mode=article", "labeller_path=/tmp/l.json"]}
    assert args.datasets == [*quality.DATASETS, "gt"]
    assert args.page_sets == {**quality.PAGE_SETS, "gt": "googletrends/val"}
    assert "modern2026" in quality.DATASETS
    for bad in (
        ["--dataset", "dragnet=x"],
        ["--dataset", "nopath"],
        ["--variant", "corpus"],
        ["--variant", "exp", "labeler_path=/tmp/l.json"],
        ["--variant", "exp", "mode"],
        ["--datasets", "nowhere"],
    ):
        with pytest.raises(SystemExit):
            quality.parse_args(bad)


def test_variant_options_must_be_settings_fields():
    with pytest.raises(ValueError, match="FIELD=VALUE"):
        quality.variant_system("stream-cleaner-x", ["labeler_path=/tmp/l.json"])


def test_lost_content_of_each_of_our_systems_against_each_peer_by_page_type():
    scores = {
        "stream-cleaner-corpus": [_score("a", "forum", 0.1), _score("b", "article", 0.9)],
        "trafilatura": [_score("a", "forum", 0.9), _score("b", "article", 0.1)],
        "resiliparse": [_score("a", "forum", 0.5), _score("b", "article", 0.9)],
    }
    table = quality.compare_with_peers(scores)
    assert list(table) == ["stream-cleaner-corpus"]
    cells = table["stream-cleaner-corpus"]["trafilatura"]
    assert list(cells) == ["all", "article", "forum"]  # two types of one page: by name
    assert (cells["all"].lost, cells["all"].reverse) == (("a",), ("b",))
    assert (cells["forum"].lost, cells["article"].reverse) == (("a",), ("b",))
    assert table["stream-cleaner-corpus"]["resiliparse"]["all"].lost == ()
    assert quality.format_lost(table).splitlines() == [
        "| stream-cleaner vs peer | all (2) | article (1) | forum (1) |",
        "|---|---:|---:|---:|",
        "| corpus vs trafilatura | 1 / 1 | 0 / 1 | 1 / 0 |",
        "| corpus vs resiliparse | 0 / 0 | 0 / 0 | 0 / 0 |",
    ]


def test_differences_from_each_peer_with_intervals_over_sites():
    ours = [_score(f"p{i}", "article", 0.9) for i in range(10)]
    scores = {
        "stream-cleaner-auto": ours,
        "trafilatura": [_score(f"p{i}", "article", 0.6) for i in range(10)],
        "resiliparse": [_score(f"p{i}", "article", 0.9) for i in range(10)],
    }
    table = quality.differences_from_peers(scores, {f"p{i}": "one.example" for i in range(5)})
    assert list(table) == ["stream-cleaner-auto"]
    assert list(table["stream-cleaner-auto"]) == ["trafilatura", "resiliparse"]
    ahead = table["stream-cleaner-auto"]["trafilatura"]
    assert ahead.mean == pytest.approx(1.8 / 1.9 - 1.2 / 1.6) and ahead.low > 0
    assert (ahead.pages, ahead.sites) == (10, 6)
    assert quality.format_differences(table).splitlines()[2:] == [
        f"| auto - trafilatura | {ahead.mean:+.4f} | {ahead.low:+.4f} to {ahead.high:+.4f} "
        "| 100% | 10 (6) |",
        "| auto - resiliparse | +0.0000 | +0.0000 to +0.0000 | 0% | 10 (6) |",
    ]


def test_page_sites_group_as_the_site_folds_do():
    from stream_cleaner.evaluate import Page, page_sites

    declared = b'<html><head><link rel="canonical" href="https://www.news.example.co.uk/a">'
    pages = [
        Page("a", "https://blog.shop.example.com/x", b"<p>x</p>"),
        Page("b", "", declared + b"</head><body><p>y</p></body></html>"),
        Page("c", "", b"<p>no address anywhere</p>"),
    ]
    assert page_sites(pages) == {"a": "example.com", "b": "example.co.uk", "c": ""}


def test_throughput_interleave_takes_turns_and_sums_each_systems_turns():
    """`throughput.py --interleave K`: every system cleans pages 1..K before any cleans
    K+1.., the order reversed every turn, and a system's row sums its turns."""
    import throughput
    from data import Page

    calls = []

    def system(name):
        def run(items):
            calls.append((name, tuple(items)))
            return throughput.PassResult(
                items.count("bad"), 1, {"x": 1}, stage_seconds={"parse": 0.5}
            )

        return throughput.System(name, "1", lambda pages: [p.name for p in pages], run)

    pages = [Page(name=n, url="", raw=b"<p>") for n in ("a", "bad", "c", "d", "e")]
    rows = throughput.measure_interleaved({"one": system("one"), "two": system("two")}, pages, 2)
    assert calls == [
        ("one", ("a", "bad")), ("two", ("a", "bad")),
        ("two", ("c", "d")), ("one", ("c", "d")),
        ("one", ("e",)), ("two", ("e",)),
    ]  # fmt: skip
    one = rows["one"]
    assert (one.pages, one.input_bytes, one.failures, one.empty) == (5, 15, 1, 3)
    assert one.failures_by_reason == {"x": 3} and one.stage_seconds == {"parse": 1.5}
    assert one.seconds > 0
    assert throughput.parse_args(["--interleave", "10"]).interleave == 10
    with pytest.raises(SystemExit):
        throughput.parse_args(["--interleave", "0"])
