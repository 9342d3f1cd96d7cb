"""bench/package_pages.py's gold preparation: trafilatura's checks and domdown's Markdown."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import package_pages

REALWORLD = """
def test_extract(xmloutput):
    result = load_mock_page('https://a.example/x', xmloutput)
    assert 'Impressum' not in result and "Die GEMA" in result # and 'commented' in result
    if xmloutput is False:
        assert 'Kapitel' in result
    result = load_mock_page('https://b.example/y', xmloutput)
    print(result)

def test_other():
    assert 'not a check' in result
"""


def test_realworld_checks_are_the_asserts_after_each_mock_page():
    checks = package_pages.realworld_snippets(REALWORLD)
    # commented-out checks, pages without a check and asserts of other tests are left out
    assert checks == {"https://a.example/x": (["Die GEMA", "Kapitel"], ["Impressum"])}


def test_markdown_gold_keeps_the_text_a_reader_sees():
    markdown = (
        "---\ntitle: A page\n---\n## Heading\n\n- **Bold** item with [a link](https://x.example)"
        " ![logo](logo.png)\n1. first\n> quoted | cell |\n"
        '| T1: <a href="https://x.example">Name</a><br> |\n'
    )
    assert package_pages.markdown_text(markdown).split() == (
        "Heading Bold item with a link first quoted cell T1: Name".split()
    )


def test_snippet_rows_count_pages_passing_every_check(tmp_path):
    checks = {
        "a": {"with": ["kept text"], "without": ["Impressum"]},
        "b": {"with": ["x"], "without": []},
    }
    (tmp_path / package_pages.SNIPPETS).write_text(json.dumps(checks))
    outputs = {
        "good": {"a": "the kept\ntext only", "b": "x"},
        "noisy": {"a": "kept text Impressum", "b": ""},
    }
    table = package_pages.snippet_rows(tmp_path, outputs).splitlines()
    assert table[2] == "| good | 2/2 | 2/2 (1.000) | 1/1 (1.000) |"
    assert table[3] == "| noisy | 0/2 | 1/2 (0.500) | 0/1 (0.000) |"


def test_pages_written_without_spaces_are_scored_over_characters():
    from stream_cleaner.evaluate import Page

    chinese = "市政府星期二宣布，位于市中心的新图书馆正式向公众开放。图书馆收藏了八万多册图书。"
    english = "The city opened its new library on Tuesday, with eighty thousand books."
    pages = [Page("zh", "", b"", gold=chinese), Page("en", "", b"", gold=english)]
    outputs = {
        "whole": {"zh": chinese, "en": ""},  # the English page is not scored here
        "menu too": {"zh": "首页 新闻\n" + chinese, "en": english},
        "half": {"zh": chinese[:20], "en": english},
    }
    table = package_pages.unspaced_rows(pages, outputs)
    assert "(zh)" in table
    rows = [
        line.split(" | ")
        for line in table.splitlines()
        if line.startswith("| ") and "---" not in line
    ]
    assert [r[0].strip("| ") for r in rows[1:]] == ["whole", "menu too", "half"]
    assert rows[1][1].strip(" |") == "1.000"
    assert package_pages.unspaced_rows(pages[1:], outputs) == ""
