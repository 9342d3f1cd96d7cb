"""The demo page in a real browser: Debian's chromium driven by Playwright, against
``stream-cleaner serve`` started on 127.0.0.1. Screenshots go to ``artifacts/`` (git-ignored).

Skipped without chromium or Playwright, except in CI (``CI`` set), where that is a failure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stream_cleaner.annotations import read_annotation
from stream_cleaner.decode import decode_body
from stream_cleaner.labeller import labeller_path
from stream_cleaner.parse import parse_blocks

from ..conftest import REPO, SAMPLES
from .conftest import ARTICLE, BOILERPLATE, PAGE, request, serve_process, write_page

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "artifacts"
ARTICLE_SENTENCES = [s.strip() for s in re.findall(r"[^.]+\.", ARTICLE)]


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed: pip install -e '.[browser]'")
    if not CHROMIUM.is_file():
        _missing(f"{CHROMIUM} is missing: apt-get install chromium (scripts/setup.sh does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"]
        )
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    write_page(root / "pages")
    return root / "pages", root / "labels"


@pytest.fixture(scope="module")
def server(folders):
    pages, labels = folders
    with serve_process("--pages-dir", str(pages), "--annotations-dir", str(labels)) as url:
        yield url


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == [], errors


def sentence(page, text: str):
    return page.locator("#original span.s", has_text=re.compile("^" + re.escape(text) + "$"))


def state(page, text: str) -> tuple[str, str]:
    span = sentence(page, text)
    return span.get_attribute("data-kept"), span.get_attribute("data-reason")


def test_clean_marks_boilerplate_dropped_and_the_slider_reclassifies_locally(page, server):
    page.goto(server + "/demo")
    assert page.locator("#threshold-value").inner_text() == "3,000"  # the server's default
    page.get_by_label("Page: HTML or plain text").fill(PAGE)
    page.locator("#mode").select_option("perplexity")
    with page.expect_request("**/api/clean") as sent:
        page.get_by_role("button", name="Clean").click()
    assert json.loads(sent.value.post_data) == {
        "mode": "perplexity",
        "sentence_filter": "auto",
        "model": "default",
        "max_perplexity": 3000,
        "html": PAGE,
    }
    page.wait_for_selector("#results:not([hidden]) #original span.s")

    for text in BOILERPLATE:
        assert state(page, text) == ("false", "high_perplexity"), text
        assert "dropped" in sentence(page, text).get_attribute("class")
        assert "r-high_perplexity" in sentence(page, text).get_attribute("class")
    for text in ARTICLE_SENTENCES:
        assert state(page, text) == ("true", ""), text
    title = sentence(page, "Menu").get_attribute("title")
    assert re.match(r"perplexity 17,3\d\d · dropped", title), title
    cleaned = page.locator("#cleaned").inner_text()
    assert cleaned == " ".join(ARTICLE_SENTENCES)
    assert page.locator("#histogram rect").count() > 0
    assert page.locator("#histogram line.limit").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "web-demo-clean.png"), full_page=True)

    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    slider = page.get_by_label("Perplexity limit")
    slider.focus()
    slider.press("Home")  # the keyboard moves it: limit 10
    assert page.locator("#threshold-value").inner_text() == "10"
    for text in ARTICLE_SENTENCES:
        assert state(page, text) == ("false", "high_perplexity"), text
    assert page.locator("#cleaned").inner_text() == ""
    assert page.locator("#histogram").get_attribute("data-limit") == "10"

    slider.press("End")  # limit 100,000: everything with words is kept
    for text in (*BOILERPLATE, *ARTICLE_SENTENCES):
        assert state(page, text) == ("true", ""), text

    slider.fill("3.7")  # 5,012: Home (4,146) kept, Menu (17,316) dropped
    assert state(page, "Home") == ("true", "")
    assert state(page, "Menu") == ("false", "high_perplexity")
    assert requests == [], requests
    page.screenshot(path=str(ARTIFACTS / "web-demo-slider.png"), full_page=True)


# the server's defaults (auto mode, whose labeller has no sentence limit), the paper's filter
# alone, and the auto labeller with the sentence filter on
SETTINGS = (("auto", "auto"), ("perplexity", "auto"), ("auto", "on"))
# slider positions (log10 of the limit): 316, 5,012 and 100,000
POSITIONS = ("2.5", "3.7", "5")


def shown(page) -> dict:
    """What the page shows: each sentence's (text, kept, reason, struck through), the cleaned
    text and the kept count of the summary."""
    state = page.evaluate(
        """() => ({
            sentences: Array.from(document.querySelectorAll('#original span.s'), (e) => [
                e.textContent, e.dataset.kept === 'true', e.dataset.reason || null,
                e.classList.contains('dropped')]),
            cleaned: document.getElementById('cleaned').textContent,
            summary: document.getElementById('summary').textContent,
        })"""
    )
    n_kept, n_sentences = map(
        int, re.match(r"(\d+) of (\d+) sentences kept", state["summary"]).groups()
    )
    assert n_sentences == len(state["sentences"])
    return {
        "sentences": [tuple(s) for s in state["sentences"]],
        "cleaned": state["cleaned"],
        "n_kept": n_kept,
    }


def decided(answer: dict) -> dict:
    """The same, as the API's answer says."""
    return {
        "sentences": [
            (s["text"], s["kept"], s["reason"], not s["kept"]) for s in answer["sentences"]
        ],
        "cleaned": answer["text"],
        "n_kept": answer["n_kept"],
    }


@pytest.mark.parametrize("name", sorted(path.name for path in SAMPLES.glob("*.html")))
def test_the_page_shows_the_servers_decisions_and_the_slider_moves_only_the_limits(
    page, server, name
):
    """For every sample, at the server's limit the page shows the API's decisions; moving the
    slider changes only the sentences the API says the limit decided, and each to what the API
    answers at that limit. (The page once re-decided every sentence with a rule of its own:
    "0 of 111 sentences kept" on the German page, whose sentences have no perplexity.)"""
    html = decode_body((SAMPLES / name).read_bytes()).text
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    for mode, sentence_filter in SETTINGS:
        page.goto(server + "/demo")
        page.get_by_label("Page: HTML or plain text").fill(html)
        page.get_by_label("Mode", exact=True).select_option(mode)
        page.get_by_label("Sentence filter in kept blocks").select_option(sentence_filter)
        with page.expect_request("**/api/clean") as sent:
            page.get_by_role("button", name="Clean").click()
        page.wait_for_selector("#results:not([hidden]) #original span.s")
        body = json.loads(sent.value.post_data)
        assert body["max_perplexity"] == 3000  # the server's limit
        status, answer = request(server + "/api/clean", method="POST", data=body)
        assert status == 200, answer
        at_server = shown(page)
        assert at_server == decided(answer), (mode, sentence_filter)
        facts = page.locator("#page-facts")
        if answer["page_type"]:
            assert f"Page type: {answer['page_type']} (" in facts.inner_text()
        else:
            assert facts.is_hidden()
        limited = [s["max_perplexity_applies"] for s in answer["sentences"]]
        scored = any(s["perplexity"] is not None for s in answer["sentences"])
        by_setting = mode == "perplexity" or sentence_filter == "on"
        assert any(limited) == (by_setting and scored), (mode, sentence_filter)

        requests.clear()
        slider = page.get_by_label("Perplexity limit")
        for position in POSITIONS:
            slider.fill(position)
            limit = int(page.locator("#threshold-value").inner_text().replace(",", ""))
            moved = shown(page)
            for before, after, by_limit in zip(
                at_server["sentences"], moved["sentences"], limited, strict=True
            ):
                if not by_limit:
                    assert after == before, (mode, sentence_filter, limit)
            status, there = request(
                server + "/api/clean", method="POST", data={**body, "max_perplexity": limit}
            )
            assert status == 200, there
            assert moved == decided(there), (mode, sentence_filter, limit)
        assert requests == [], requests


def test_the_page_says_when_the_content_guard_kept_the_prose(browser, tmp_path):
    # the shipped auto labeller with a threshold no block reaches: it drops every block, and the
    # guard keeps the page's run of prose
    spec = json.loads(labeller_path("auto").read_text())
    spec["threshold"] = 1e9
    dropping = tmp_path / "drops-everything.json"
    dropping.write_text(json.dumps(spec))
    prose = " ".join([ARTICLE] * 3)
    html = (
        "<html><body><nav><a href='/'>Home</a></nav>"
        f"<div><p>{prose}</p><p>{prose}</p></div></body></html>"
    )
    with serve_process("--labeller", str(dropping)) as url:
        status, answer = request(url + "/api/clean", method="POST", data={"html": html})
        assert status == 200 and answer["guard"] == "content_loss", answer
        context = browser.new_context()
        page = context.new_page()
        page.goto(url + "/demo")
        page.get_by_label("Page: HTML or plain text").fill(html)
        page.get_by_role("button", name="Clean").click()
        page.wait_for_selector("#results:not([hidden]) #original span.s")
        assert "Content guard: the labeller dropped the page's longest run of prose" in (
            page.locator("#page-facts").inner_text()
        )
        assert shown(page) == decided(answer)
        context.close()


def test_the_page_says_when_article_mode_kept_a_threads_posts(page, server):
    # rule 35: a thread (twenty replies marked as comments) whose canonical URL is a forum's:
    # in article mode the page is decided as auto decides it, and the page says so
    from ..test_page_structure import _commented

    canonical = "<link rel='canonical' href='https://forum.example.org/threads/the-river.12/'>"
    html = _commented(1, comments=20).replace("<head>", f"<head>{canonical}")
    status, answer = request(
        server + "/api/clean", method="POST", data={"html": html, "mode": "article"}
    )
    assert status == 200 and answer["guard"] == "thread", answer
    page.goto(server + "/demo")
    page.get_by_label("Page: HTML or plain text").fill(html)
    page.get_by_label("Mode", exact=True).select_option("article")
    page.get_by_role("button", name="Clean").click()
    page.wait_for_selector("#results:not([hidden]) #original span.s")
    facts = page.locator("#page-facts").inner_text()
    assert "Page type: forum" in facts and "decided as auto decides it" in facts, facts
    assert shown(page) == decided(answer)


def test_controls_are_labelled_and_colours_readable(page, server):
    page.goto(server + "/demo")
    unlabelled = page.evaluate(
        """() => Array.from(document.querySelectorAll('input, select, textarea, button'))
            .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')
                           && !e.textContent.trim())
            .map((e) => e.id || e.outerHTML)"""
    )
    assert unlabelled == []
    page.get_by_label("Page: HTML or plain text").fill(PAGE)
    for _ in range(10):  # Tab through the form to the button, and submit with the keyboard
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "submit":
            break
    page.keyboard.press("Enter")
    page.wait_for_selector("#original span.s")
    colours = page.evaluate(
        """() => Array.from(document.querySelectorAll('#original span.s, #legend span.s'))
            .map((e) => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor])"""
    )
    for colour, background in colours:
        behind = "rgb(255, 255, 255)" if background == "rgba(0, 0, 0, 0)" else background
        assert contrast(colour, behind) >= 4.5, (colour, behind)


def contrast(a: str, b: str) -> float:
    def luminance(css: str) -> float:
        channels = [int(x) / 255 for x in re.findall(r"\d+", css)[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_annotation_view_labels_blocks_with_the_keyboard_and_saves(page, server, folders, tmp_path):
    pages, labels = folders
    page.goto(server + "/demo#annotate")
    page.get_by_label("or open a page of the server's folder").select_option("news.html")
    page.get_by_role("button", name="Load", exact=True).click()
    page.wait_for_selector("#blocks li")
    blocks = page.locator("#blocks li")
    predicted = [
        (blocks.nth(i).get_attribute("data-label"), blocks.nth(i).get_attribute("data-kind"))
        for i in range(blocks.count())
    ]
    assert predicted[0] == ("boilerplate", "list")  # "Home", a navigation link
    listbox = page.get_by_role("listbox", name="Blocks of the page")
    assert listbox.evaluate("e => e === document.activeElement")
    listbox.press("c")  # block 0: content
    listbox.press("ArrowDown")
    listbox.press("ArrowDown")
    listbox.press("ArrowUp")
    listbox.press("h")  # block 1: heading
    assert blocks.nth(0).get_attribute("data-label") == "content"
    assert blocks.nth(1).get_attribute("data-kind") == "heading"
    assert listbox.get_attribute("aria-activedescendant") == "block-1"

    with page.expect_request("**/api/annotate/save") as sent:
        listbox.press("s")
    page.wait_for_selector("#ann-status:has-text('Saved')")
    page.screenshot(path=str(ARTIFACTS / "web-demo-annotate.png"), full_page=True)
    body = json.loads(sent.value.post_data)
    (path,) = labels.glob("*.json")
    saved = read_annotation(path)
    assert saved.to_dict() == body  # what the browser sent loads back unchanged
    got = [(b.label, b.kind) for b in saved.blocks]
    assert got[0] == ("content", "list")
    assert got[1] == ("boilerplate", "heading")
    assert got[2:] == predicted[2:]
    assert saved.source == "news.html"

    # train on it: train-labeller reads the folder of saved labels and the page they label
    model_file = tmp_path / "labeller.json"
    trained = subprocess.run(
        [sys.executable, "-m", "stream_cleaner", "train-labeller", str(labels), "--pages-dir",
         str(pages), "--mode", "corpus", "--folds", "0", "--trees", "5", "-o", str(model_file)],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    assert trained.returncode == 0, trained.stderr
    meta = json.loads(Path(f"{model_file}.meta.json").read_text())
    assert (meta["pages"], meta["blocks"]) == (1, len(saved.blocks))
    assert meta["content_blocks"] == sum(b.label == "content" for b in saved.blocks)
    assert meta["trained_on"][0]["split"] == "annotations"
    assert read_annotation(path) == saved  # training read the labels and left them unchanged

    # the mouse works too, and a reload shows the saved labels
    page.reload()
    page.get_by_label("or open a page of the server's folder").select_option("news.html")
    page.get_by_role("button", name="Load", exact=True).click()
    page.wait_for_selector("#ann-status:has-text('saved labels loaded')")
    assert blocks.nth(0).get_attribute("data-label") == "content"
    blocks.nth(2).get_by_role("button", name="content", exact=True).click()
    assert blocks.nth(2).get_attribute("data-label") == "content"


def test_annotation_view_uploads_a_file(page, server, tmp_path):
    upload = write_page(tmp_path, "uploaded.html")
    page.goto(server + "/demo#annotate")
    page.get_by_label("Upload an HTML file").set_input_files(str(upload))
    page.get_by_role("button", name="Load", exact=True).click()
    page.wait_for_selector("#ann-status:has-text('uploaded.html')")
    texts = page.locator("#blocks li .text").all_inner_texts()
    assert len(texts) == len(parse_blocks(PAGE)) == 8
    assert texts[0].startswith("Home")
