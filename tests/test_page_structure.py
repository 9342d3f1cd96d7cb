"""Where blocks stand in the page (`page_structure`), the content-loss guard (`guard`) and the
stacked `auto` labeller that reads them."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from stream_cleaner import CleanerSettings, RawDocument, clean_document, guard
from stream_cleaner._native import native_module
from stream_cleaner.budget import TimeBudgetExceeded
from stream_cleaner.guard import GuardReason, guard_content
from stream_cleaner.labeller import (
    FEATURE_NAMES,
    BlockLabeller,
    block_features,
    label_blocks,
    labeller_path,
    load_labeller,
)
from stream_cleaner.page_structure import (
    OUTSIDE_MAIN_SCORE,
    SCORE_CONTEXT_NAMES,
    STRUCTURE_FEATURE_NAMES,
    _page_scores,
    _score_context,
    _structure_features,
    common_depths,
    is_prose,
    prose_words,
    row_depths,
    score_context,
    structure_features,
)
from stream_cleaner.parse import CLASS_GROUP_NAMES, parse_blocks
from stream_cleaner.segment import split_sentences

from .test_labeller import ARTICLE, ARTICLE_2, PAGE, TINY, _page_set

COLUMNS = {name: i for i, name in enumerate(FEATURE_NAMES)}
STRUCTURE = {name: i for i, name in enumerate(STRUCTURE_FEATURE_NAMES)}
CONTEXT = {name: i for i, name in enumerate(SCORE_CONTEXT_NAMES)}


def _features(blocks, model):
    sentences, block_of = [], []
    for block in blocks:
        split = split_sentences(block.text)
        sentences += split
        block_of += [block.index] * len(split)
    scores = model.score_many(sentences)
    return block_features(
        blocks, sentences, block_of, log10_probs=[s.log10_prob for s in scores],
        n_tokens=[s.n_tokens for s in scores], n_oov=[s.n_oov for s in scores],
    )  # fmt: skip


def test_common_depths_count_the_leading_tags_two_paths_share():
    html = (
        "<body><div><p>one</p><p>two</p></div><div><ul><li>three</li></ul></div>"
        "<section><p>four</p></section></body>"
    )
    blocks = parse_blocks(html)
    depths, common = common_depths(blocks)
    assert [b.tag_path for b in blocks] == [
        "html body div p", "html body div p", "html body div ul li", "html body section p",
    ]  # fmt: skip
    assert depths.tolist() == [4, 4, 5, 4]
    # "html body div" is shared by the first three (the two divs are one element here: tag
    # paths cannot tell siblings of one tag apart), "html body" by the last
    assert common.tolist() == [0, 4, 3, 2]


def test_the_main_element_holds_the_article_and_not_the_navigation(tiny_model):
    blocks = parse_blocks(PAGE)
    features = _features(blocks, tiny_model)
    structure, inside = structure_features(blocks, features, COLUMNS)
    texts = [b.text for b in blocks]
    by_text = dict(zip(texts, inside.tolist(), strict=True))
    assert by_text[ARTICLE] and by_text[ARTICLE_2]
    assert not by_text["Home"] and not by_text["© 2024 The Valley Times. All rights reserved."]
    article = structure[texts.index(ARTICLE)]
    home = structure[texts.index("Home")]
    assert article[STRUCTURE["main_in"]] == 1 and article[STRUCTURE["main_rel"]] == 0
    assert home[STRUCTURE["main_in"]] == 0 and home[STRUCTURE["main_rel"]] < 0
    # the article's paragraphs hold all the page's prose; the navigation none of it
    assert article[STRUCTURE["up2_prose_share"]] == pytest.approx(1.0)
    assert home[STRUCTURE["up2_prose_share"]] == 0.0
    assert home[STRUCTURE["up1_link_density"]] == 1.0


def test_prose_is_long_running_text_outside_links_in_any_script():
    words = np.array([12.0, 3.0, 12.0, 1.0])
    chars = np.array([80.0, 20.0, 80.0, 60.0])
    links = np.array([0.0, 0.0, 0.9, 0.0])
    non_ascii = np.array([0.0, 0.0, 0.0, 1.0])  # the last: a CJK sentence without spaces
    assert is_prose(words, chars, links, non_ascii).tolist() == [True, False, False, True]


def test_prose_words_count_a_block_without_spaces_by_its_characters():
    words = np.array([12.0, 1.0, 1.0, 2.0])
    chars = np.array([80.0, 60.0, 20.0, 12.0])
    non_ascii = np.array([0.0, 1.0, 1.0, 0.0])  # two CJK sentences without spaces
    assert prose_words(words, chars, non_ascii).tolist() == [12.0, 15.0, 5.0, 2.0]
    # a page all in Latin script: its white-space words as they are
    assert prose_words(words, chars, np.zeros(4)) is words


def test_score_context_reads_the_page_the_elements_and_the_neighbours():
    blocks = parse_blocks(
        "<body><nav><p>menu</p></nav><main><p>a</p><p>b</p><p>c</p></main></body>"
    )
    scores = np.array([-3.0, 1.0, 2.0, 3.0])
    chars = np.array([10.0, 10.0, 10.0, 20.0])
    inside = np.array([False, True, True, True])
    context = score_context(blocks, scores, chars, inside)
    assert context[:, CONTEXT["page_max_score"]].tolist() == [3.0] * 4
    assert context[:, CONTEXT["score_below_max"]].tolist() == [-6.0, -2.0, -1.0, 0.0]
    # the three paragraphs of main are one element: their mean score by characters
    assert context[1, CONTEXT["up1_mean_score"]] == pytest.approx((10 + 20 + 60) / 40)
    assert context[0, CONTEXT["neighbour_score_1"]] == pytest.approx((-3.0 + 1.0) / 2)
    assert context[0, CONTEXT["main_mean_score"]] == OUTSIDE_MAIN_SCORE
    assert context[2, CONTEXT["main_mean_score"]] == pytest.approx(2.25)
    assert context[0, CONTEXT["page_positive_share"]] == pytest.approx(0.8)


@pytest.mark.skipif(native_module("page_structure") is None, reason="native modules not built")
def test_native_page_structure_equals_the_reference(tiny_model):
    rng = np.random.default_rng(7)
    nested = PAGE.replace("<article>", "<article><div>").replace(
        "</article>", "</div></article><aside><p>Related: more walks</p></aside>"
    )
    pages = [PAGE, nested, "<p>one lone block</p>"]
    fast = native_module("page_structure")
    for html in pages:
        blocks = parse_blocks(html)
        features = _features(blocks, tiny_model)
        depths, common = common_depths(blocks)
        paths = [b.tag_path.split() for b in blocks]
        reference_common = [0] + [
            sum(
                1
                for _ in itertools.takewhile(
                    lambda pair: pair[0] == pair[1], zip(a, b, strict=False)
                )
            )
            for a, b in itertools.pairwise(paths)
        ]
        assert common.tolist() == reference_common
        assert fast.common_depths(blocks)[1].tolist() == reference_common
        found = row_depths(features, COLUMNS)
        assert [x.tolist() for x in found] == [depths.tolist(), reference_common]
        structure, inside = structure_features(blocks, features, COLUMNS)
        chars = np.expm1(features[:, COLUMNS["log_chars"]])
        words = np.exp(features[:, COLUMNS["log_words"]]) - 1
        link = np.ascontiguousarray(features[:, COLUMNS["link_density"]])
        prose = is_prose(words, chars, link, features[:, COLUMNS["ratio_non_ascii"]])
        slow, slow_inside = _structure_features(
            depths, common, chars=chars, prose=prose.astype(float), link=link,
            out=np.zeros_like(structure),
        )  # fmt: skip
        assert np.array_equal(structure, slow) and np.array_equal(inside, slow_inside)
        scores = rng.normal(size=len(blocks))
        context = score_context(blocks, scores, chars, inside)
        slow_context = _score_context(
            depths, common, scores, chars=chars, main_in=inside, out=np.zeros_like(context),
            page=_page_scores(scores, chars, inside),
        )  # fmt: skip
        assert np.array_equal(context, slow_context)


LONG = " ".join([ARTICLE, ARTICLE_2] * 2)  # about 200 words: a run of prose on its own


def test_the_guard_keeps_a_dropped_run_of_prose_and_says_so(tiny_model):
    html = f"<body><nav><a href='/'>Home</a></nav><div><p>{LONG}</p><p>{LONG}</p></div></body>"
    blocks = parse_blocks(html)
    features = _features(blocks, tiny_model)
    dropped = [False] * len(blocks)
    kept, why = guard_content(dropped, blocks, features)
    assert why == GuardReason.CONTENT_LOSS
    assert kept == [False, True, True]
    # a decision that keeps the run is left alone
    assert guard_content(kept, blocks, features) == (kept, None)


def test_the_guards_run_of_prose_is_not_broken_by_code_and_its_lead_ins(tiny_model, monkeypatch):
    """Rules 55 and 56: documentation puts code between its paragraphs, each sample after a
    lead-in line; blocks of code, and the block directly before one, are not counted among
    the blocks between two of the run's. Neither paragraph (65 and 51 words) is a run of
    `guard.MIN_RUN_WORDS` on its own; three blocks of anything else are a gap."""
    code = "<pre>pip install river</pre><p><code>flow(river)</code></p><pre>x = 1</pre>"
    html = f"<body><div><p>{ARTICLE}</p>{code}<p>{ARTICLE_2}</p></div></body>"
    blocks = parse_blocks(html)
    assert len(blocks) == 5
    features = _features(blocks, tiny_model)
    dropped = [False] * len(blocks)
    kept, why = guard_content(dropped, blocks, features)
    assert (kept, why) == ([True, False, False, False, True], GuardReason.CONTENT_LOSS)
    # three blocks of text that is not code break the run as before
    other = "<p>pip install river</p><p>flow river</p><p>x = 1</p>"
    blocks = parse_blocks(f"<body><div><p>{ARTICLE}</p>{other}<p>{ARTICLE_2}</p></div></body>")
    assert guard_content(dropped, blocks, _features(blocks, tiny_model)) == (dropped, None)
    # and so does the code with the rule off
    with monkeypatch.context() as patched:
        patched.setattr(guard, "GAP_FREE_COLUMNS", ())
        assert guard_content(dropped, parse_blocks(html), features) == (dropped, None)
    # rule 56: nor is a lead-in line directly before a block of code; the heading counts
    reference = (
        "<h3>WINDOW Clause</h3><p>The clause has the general form</p><pre>WINDOW name</pre>"
        "<p>where name is one of</p><pre>a b c</pre>"
    )
    html = f"<body><div><p>{ARTICLE}</p>{reference}<p>{ARTICLE_2}</p></div></body>"
    blocks = parse_blocks(html)
    features = _features(blocks, tiny_model)
    dropped = [False] * len(blocks)
    guarded = [True, *[False] * 5, True]
    assert guard_content(dropped, blocks, features) == (guarded, GuardReason.CONTENT_LOSS)
    monkeypatch.setattr(guard, "GAP_FREE_LEAD_INS", False)
    assert guard_content(dropped, blocks, features) == (dropped, None)


def test_article_modes_run_of_prose_is_not_broken_by_unlinked_headings_and_lists(tiny_model):
    """Rule 58: a review puts its "Pros" and "Cons" headings and their short points between
    its paragraphs; in `article` those blocks are not counted in the gap, while
    a linked list (navigation, teasers) still is, and other modes count them all."""
    points = (
        "<h3>Pros</h3><ul><li>Over fifty languages</li><li>Prices shown in advance</li></ul>"
        "<h3>Cons</h3><ul><li>No free trial</li></ul>"
    )
    html = f"<body><div><p>{ARTICLE}</p>{points}<p>{ARTICLE_2}</p></div></body>"
    blocks = parse_blocks(html)
    assert len(blocks) == 7
    features = _features(blocks, tiny_model)
    dropped = [False] * len(blocks)
    guarded = [True, *[False] * 5, True]
    assert guard.unlinked_gap("article") and not guard.unlinked_gap("auto")
    assert guard_content(dropped, blocks, features, mode="article") == (
        guarded,
        GuardReason.CONTENT_LOSS,
    )
    assert guard_content(dropped, blocks, features) == (dropped, None)
    teasers = "".join(f'<li><a href="/p{i}">Another post {i}</a></li>' for i in range(5))
    html = f"<body><div><p>{ARTICLE}</p><ul>{teasers}</ul><p>{ARTICLE_2}</p></div></body>"
    blocks = parse_blocks(html)
    features = _features(blocks, tiny_model)
    dropped = [False] * len(blocks)
    assert guard_content(dropped, blocks, features, mode="article") == (dropped, None)


def test_a_paragraph_ending_with_a_colon_joins_the_guards_run(tiny_model, monkeypatch):
    """Rule 59: documentation ends a paragraph "For more information, see:" before a list of
    links; such a paragraph joins the run (`guard.RUN_ENDS_WITH_COLON`), in every mode."""
    intro = ARTICLE_2.rstrip(".") + ". For more information, see:"
    html = f"<body><div><p>{ARTICLE}</p><p>{intro}</p></div></body>"
    blocks = parse_blocks(html)
    features = _features(blocks, tiny_model)
    assert features[1, guard._COLON] > 0 and features[1, guard._ENDS] == 0
    dropped = [False, False]
    monkeypatch.setattr(guard, "MIN_RUN_WORDS", 100)  # neither paragraph alone
    for mode in ("auto", "corpus", "article"):
        kept, why = guard_content(dropped, blocks, features, mode=mode)
        assert (kept, why) == ([True, True], GuardReason.CONTENT_LOSS)
    monkeypatch.setattr(guard, "RUN_ENDS_WITH_COLON", False)
    assert guard_content(dropped, blocks, features, mode="auto") == (dropped, None)


# Chinese prose: no spaces between words (about 120 words' worth of characters a paragraph)
CHINESE = "河流从山上流下来，经过古老的村庄和宽阔的田野，最后流入大海。" * 16


def test_the_guard_counts_the_words_of_a_page_written_without_spaces(tiny_model):
    html = f"<body><nav><a href='/'>首页</a></nav><div><p>{CHINESE}</p><p>{CHINESE}</p></div>"
    blocks = parse_blocks(html)
    features = _features(blocks, tiny_model)
    assert features[:, COLUMNS["log_words"]].max() < np.log1p(5)  # by spaces: a word a block
    dropped = [False] * len(blocks)
    kept, why = guard_content(dropped, blocks, features)
    assert (kept, why) == ([False, True, True], GuardReason.CONTENT_LOSS)
    # and the comment rule: an article's readers' comments go beside its prose (four blocks of
    # 480 characters: 480 words, over `guard.COMMENTS_BESIDE_PROSE_WORDS`)
    page = (
        "<body><article>" + f"<p>{CHINESE}</p>" * 4 + "</article>"
        f"<div class='comments'><p>{CHINESE[:40]}</p></div></body>"
    )
    blocks = parse_blocks(page)
    features = _features(blocks, tiny_model)
    assert guard.drop_comments([True] * 5, blocks, features, "article") == [True] * 4 + [False]


def test_the_guard_leaves_readers_comments_dropped(tiny_model):
    html = (
        f"<body><article><p>{ARTICLE}</p></article>"
        f"<div class='comments'><p>{LONG}</p><p>{LONG}</p></div></body>"
    )
    blocks = parse_blocks(html)
    features = _features(blocks, tiny_model)
    content = [True, False, False]
    assert guard_content(content, blocks, features) == (content, None)


def test_the_guard_keeps_the_main_element_too_where_the_labeller_knows_it(tiny_model, monkeypatch):
    html = (
        "<body><nav><a href='/'>Home</a></nav><main>"
        f"<p>{LONG}</p><p>{LONG}</p><ul><li>Weight: 2 kg</li><li>Colour: blue</li></ul>"
        "<footer><p>Printed in the footer of the main element.</p></footer></main></body>"
    )
    blocks = parse_blocks(html)
    texts = [b.text for b in blocks]
    features = _features(blocks, tiny_model)
    main_in = np.array([text != "Home" for text in texts])
    dropped = [False] * len(blocks)
    kept, why = guard_content(dropped, blocks, features, main_in)
    assert why == GuardReason.CONTENT_LOSS
    # the run, the short list items of the main element, not its footer nor the menu
    assert [t for t, k in zip(texts, kept, strict=True) if k] == [LONG, LONG, "Weight: 2 kg",
                                                                  "Colour: blue"]  # fmt: skip
    # without the main element: the run alone
    kept, _ = guard_content(dropped, blocks, features)
    assert [t for t, k in zip(texts, kept, strict=True) if k] == [LONG, LONG]
    # rule 24's limit (off as shipped): a main element of 99 % of the page's words (the menu's
    # link counts none) is kept beside the run under a limit of all of them, not of half
    blocks = parse_blocks(html.replace("<main>", "<p>Open from nine to five.</p><main>"))
    texts = [b.text for b in blocks]
    features = _features(blocks, tiny_model)
    main_in = np.array([text not in ("Home", "Open from nine to five.") for text in texts])
    dropped = [False] * len(blocks)
    monkeypatch.setattr(guard, "MAIN_MAX_PAGE_SHARE", 1.0)
    kept, _ = guard_content(dropped, blocks, features, main_in)
    assert [t for t, k in zip(texts, kept, strict=True) if k] == [LONG, LONG, "Weight: 2 kg",
                                                                  "Colour: blue"]  # fmt: skip
    monkeypatch.setattr(guard, "MAIN_MAX_PAGE_SHARE", 0.5)
    kept, _ = guard_content(dropped, blocks, features, main_in)
    assert [t for t, k in zip(texts, kept, strict=True) if k] == [LONG, LONG]


# twelve posts of a thread, each twelve words with no full stop: prose to the main element
# (`page_structure.is_prose`), no run of prose to the first trigger
THREAD_POSTS = [f"post {i} says the fix worked on my laptop after the second restart" for i in
                range(12)]  # fmt: skip
MAIN_FOOTER = "Printed in the footer of the main element."


def _thread(tiny_model, *, before: str = "", marked: str = "post", after: str = ""):
    """A page of a menu, ``before``, and a main element of the posts (class ``marked``) and
    ``after``: its blocks, texts, feature rows and main element."""
    html = (
        f"<body><nav><a href='/'>Home</a></nav>{before}<main>"
        + "".join(f"<div class='{marked}'>{p}</div>" for p in THREAD_POSTS)
        + f"{after}</main></body>"
    )
    blocks = parse_blocks(html)
    texts = [b.text for b in blocks]
    main_in = np.array([text not in ("Home", ARTICLE) for text in texts])
    return blocks, texts, _features(blocks, tiny_model), main_in


@pytest.fixture
def second_trigger(monkeypatch):
    """The guard's second trigger turned on as rules 6 and 8 chose it (off as shipped)."""
    monkeypatch.setattr(guard, "MAIN_MIN_WORDS", 100)


def test_the_second_trigger_is_off_as_shipped(tiny_model):
    # rule 9 (docs/labeller.md): a thread dropped whole stays dropped; the page's longest run
    # of prose is the first trigger's, which these posts (no full stop) are not
    blocks, _, features, main_in = _thread(tiny_model)
    dropped = [False] * len(blocks)
    assert guard.MAIN_MIN_WORDS is None
    assert guard_content(dropped, blocks, features, main_in) == (dropped, None)


@pytest.mark.usefixtures("second_trigger")
def test_the_guard_keeps_a_dropped_main_element_whose_text_is_no_run_of_prose(tiny_model):
    # the decision keeps an article above the posts (more than `guard.MAIN_ALL_BELOW_WORDS`)
    blocks, texts, features, main_in = _thread(
        tiny_model, before=f"<article><p>{ARTICLE}</p></article>",
        after=f"<footer><p>{MAIN_FOOTER}</p></footer>",
    )  # fmt: skip
    posts = THREAD_POSTS
    article = [text == ARTICLE for text in texts]
    kept, why = guard_content(article, blocks, features, main_in)
    assert why == GuardReason.CONTENT_LOSS
    # the posts, not the main element's footer nor the menu
    assert [t for t, k in zip(texts, kept, strict=True) if k] == [ARTICLE, *posts]
    # half the posts kept (`guard.MAIN_MIN_KEPT_SHARE`): left alone
    half = [text in (ARTICLE, *posts[:6]) for text in texts]
    assert guard_content(half, blocks, features, main_in) == (half, None)
    # a third kept: kept again
    third = [text in (ARTICLE, *posts[:4]) for text in texts]
    assert guard_content(third, blocks, features, main_in)[1] == GuardReason.CONTENT_LOSS
    # without the main element (a labeller that does not read it), or too few words of prose
    assert guard_content(article, blocks, features) == (article, None)
    few = main_in & np.array([text not in posts[3:] for text in texts])
    assert guard_content(article, blocks, features, few) == (article, None)
    # nothing kept at all (under `guard.MAIN_ALL_BELOW_WORDS`): every block of the main element
    kept, _ = guard_content([False] * len(blocks), blocks, features, main_in)
    assert [t for t, k in zip(texts, kept, strict=True) if k] == [*posts, MAIN_FOOTER]


@pytest.mark.usefixtures("second_trigger")
def test_the_guard_gives_a_thread_kept_down_to_nothing_its_comment_marked_posts(tiny_model):
    blocks, texts, features, main_in = _thread(tiny_model, marked="comment")
    dropped = [False] * len(blocks)
    kept, why = guard_content(dropped, blocks, features, main_in)
    assert why == GuardReason.CONTENT_LOSS
    assert [t for t, k in zip(texts, kept, strict=True) if k] == THREAD_POSTS


@pytest.mark.usefixtures("second_trigger")
def test_the_guard_leaves_an_article_kept_beside_its_dropped_comments(tiny_model):
    # the article (65 words of prose, `guard.MAIN_ALL_BELOW_WORDS` or more) is kept, the
    # comments are the main element and comment-marked: the trigger fires, keeps nothing more
    # and says nothing
    blocks, texts, features, main_in = _thread(
        tiny_model, before=f"<article><p>{ARTICLE}</p></article>", marked="comment"
    )
    article_only = [text == ARTICLE for text in texts]
    assert guard_content(article_only, blocks, features, main_in) == (article_only, None)


@pytest.mark.usefixtures("second_trigger")
def test_the_second_trigger_capped_leaves_a_page_that_keeps_enough_prose(tiny_model, monkeypatch):
    # the article (65 words) kept above unmarked posts: fires, unless the decision's kept prose
    # reaches `guard.MAIN_MAX_KEPT_WORDS` (rule 9's cap), counted on the page or in the main
    # element (where the article is not)
    blocks, texts, features, main_in = _thread(
        tiny_model, before=f"<article><p>{ARTICLE}</p></article>"
    )
    article = [text == ARTICLE for text in texts]
    assert guard_content(article, blocks, features, main_in)[1] == GuardReason.CONTENT_LOSS
    monkeypatch.setattr(guard, "MAIN_MAX_KEPT_WORDS", 60)
    assert guard_content(article, blocks, features, main_in) == (article, None)
    monkeypatch.setattr(guard, "MAIN_MAX_KEPT_FROM", "main")
    assert guard_content(article, blocks, features, main_in)[1] == GuardReason.CONTENT_LOSS


# a shop's list of goods (no run of prose, no sentence ends), a reader's comments, a footer
GOODS = [
    "Walking boots for wet hills and long days on rough ground",
    "A rain jacket that packs into its own pocket for the trail",
    "Wool socks knitted in the valley from the fleece of local sheep",
    "A map of the river path from its source in the hills to the sea",
    "A flask that keeps tea hot from the town bridge to the old quay",
]
REVIEW = (
    "I bought the boots last spring and they have kept my feet dry on every walk along the "
    "river since then, even in the worst of the winter rain."
)
SHOP = (
    "<body><nav><a href='/'>Home</a> <a href='/shop'>Shop</a></nav><main>"
    "<h1>Gear for the river path</h1><ul>" + "".join(f"<li>{g}</li>" for g in GOODS) + "</ul>"
    f"</main><div class='comments'><p>{REVIEW}</p><p>{REVIEW}</p></div><footer><p>Our shop "
    "has sold gear for walkers in the valley since the mills closed, and we post to every "
    "town along the river.</p></footer></body>"
)


def test_a_decision_of_a_few_words_is_joined_by_the_corpus_labeller(default_model, monkeypatch):
    blocks = parse_blocks(SHOP)
    texts = [b.text for b in blocks]
    features = _features(blocks, default_model)
    main_in = np.array([t == "Gear for the river path" or t in GOODS for t in texts])
    corpus = load_labeller("corpus")
    # what the corpus labeller keeps: the goods and the comments, not the menu nor the footer
    theirs = corpus.predict(np.ascontiguousarray(features[:, : len(FEATURE_NAMES)]))
    assert [t for t, k in zip(texts, theirs, strict=True) if k] == [*GOODS, REVIEW, REVIEW]
    # a decision of the heading alone (4 words): joined by the goods, not the comments
    heading = [t == "Gear for the river path" for t in texts]
    kept, why = guard.join_corpus(heading, blocks, features, main_in, corpus)
    assert why == GuardReason.CORPUS_JOINED
    assert [t for t, k in zip(texts, kept, strict=True) if k] == ["Gear for the river path", *GOODS]
    # past its deadline, the join stops as every stage does
    with pytest.raises(TimeBudgetExceeded):
        guard.join_corpus(heading, blocks, features, main_in, corpus,
                          deadline=time.thread_time() - 1)  # fmt: skip
    # a decision of the goods (59 words): the corpus labeller's 115 are not twice as many
    goods = [t in GOODS for t in texts]
    assert guard.join_corpus(goods, blocks, features, main_in, corpus) == (goods, None)
    # a decision of more words than the limit, or no limit: left as it is
    # in `article` (rule 62), only a decision keeping no word: the heading alone stays as it is
    below = guard.corpus_join_below("article")
    assert guard.corpus_join_below("auto") == guard.CORPUS_BELOW_WORDS > below > 0
    assert guard.corpus_join_below("corpus") is None and guard.joins_corpus("article")
    assert guard.join_corpus(heading, blocks, features, None, corpus, mode="article") == (
        heading,
        None,
    )
    nothing = [False] * len(blocks)
    kept, why = guard.join_corpus(nothing, blocks, features, None, corpus, mode="article")
    assert why == GuardReason.CORPUS_JOINED
    assert [t for t, k in zip(texts, kept, strict=True) if k] == GOODS  # no comment
    monkeypatch.setattr(guard, "CORPUS_BELOW_WORDS", 3)
    assert guard.join_corpus(heading, blocks, features, main_in, corpus) == (heading, None)
    monkeypatch.setattr(guard, "CORPUS_BELOW_WORDS", None)
    assert guard.join_corpus(heading, blocks, features, main_in, corpus) == (heading, None)


def _batting(players: int) -> str:
    """A table of batting figures: a header row, then a row of nine cells a player, the
    player's name linked."""
    rows = "".join(
        f"<tr><td>{i}</td><td><a href='/p/{i}'>Player, {chr(65 + i)}</a></td><td>{100 + i}</td>"
        f"<td>{30 + i}</td><td>.{300 + i}</td><td>.{350 + i}</td><td>.{400 + i}</td>"
        f"<td>{i % 7}</td><td>{i * 3}</td></tr>"
        for i in range(1, players + 1)
    )
    names = ("Rank", "Player", "G", "AB", "AVG", "OBP", "SLG", "HR", "RBI")
    return f"<table><tr>{''.join(f'<th>{h}</th>' for h in names)}</tr>{rows}</table>"


def test_a_page_of_figures_keeps_its_table(tiny_model, monkeypatch):
    """Rule 60: a table of figures counts no words, so neither the guard's run nor
    `join_corpus` sees it; a decision that keeps almost nothing gets the table back."""
    page = (
        "<body><nav><table>" + "".join(f"<tr><td>{y}</td></tr>" for y in range(1990, 2050))
        + f"</table></nav><h1>Batting, 2019</h1>{_batting(10)}<footer><p>Data by the league."
        "</p></footer></body>"
    )  # fmt: skip
    blocks = parse_blocks(page)
    features = _features(blocks, tiny_model)
    texts = [b.text for b in blocks]
    table = [i for i, b in enumerate(blocks) if b.tag in ("td", "th") and "nav" not in b.tag_path]
    assert len(table) == 99
    heading = [t == "Batting, 2019" for t in texts]
    kept, why = guard.keep_figures(heading, blocks, features, None)
    assert why == GuardReason.CONTENT_LOSS
    # the table, header row too, and not the years of the menu's table nor the footer
    assert [i for i, k in enumerate(kept) if k] == [texts.index("Batting, 2019"), *table]
    # in the pipeline, where `auto`'s labeller keeps the heading and the names: every figure
    # reaches the text, and the record says why
    doc = clean_document(RawDocument(body=page), settings=CleanerSettings(mode="auto"))
    assert ".310" in doc.text.split() and "RBI" in doc.text.split()
    assert "1990" not in doc.text.split() and doc.guard == GuardReason.CONTENT_LOSS
    monkeypatch.setattr(guard, "FIGURE_TABLE_MIN_CELLS", None)
    doc = clean_document(RawDocument(body=page), settings=CleanerSettings(mode="auto"))
    assert ".310" not in doc.text.split() and doc.guard is None
    monkeypatch.undo()
    # a decision of enough words, a table of too few figures, or a table of words: no change
    monkeypatch.setattr(guard, "CORPUS_BELOW_WORDS", 1)
    assert guard.keep_figures(heading, blocks, features, None) == (heading, None)
    monkeypatch.undo()
    small = parse_blocks(f"<body><h1>Batting</h1>{_batting(5)}</body>")
    small_heading = [b.text == "Batting" for b in small]
    assert guard.keep_figures(small_heading, small, _features(small, tiny_model), None) == (
        small_heading,
        None,
    )
    words = parse_blocks(
        "<body><h1>Towns</h1><table>"
        + "".join(f"<tr><td>Town {i}</td><td>River {i}</td><td>{i}</td></tr>" for i in range(40))
        + "</table></body>"
    )
    none = [False] * len(words)
    assert guard.keep_figures(none, words, _features(words, tiny_model), None) == (none, None)
    monkeypatch.setattr(guard, "FIGURE_TABLE_MIN_CELLS", None)
    assert guard.keep_figures(heading, blocks, features, None) == (heading, None)


# a fresh interpreter whose bundled labeller of one mode is missing (a broken install): what
# cleaning a page in another mode does
_BROKEN_INSTALL = """
import sys
from stream_cleaner import CleanerSettings, clean_document, labeller
mode, missing, guard = sys.argv[1], sys.argv[2], sys.argv[3] == "guard"
bundled = labeller.labeller_path
labeller.labeller_path = lambda m: bundled(m).with_name("none.json") if m == missing else bundled(m)
try:
    doc = clean_document("<p>Hello.</p>", settings=CleanerSettings(mode=mode, content_guard=guard))
except FileNotFoundError:
    print("set-up error")
else:
    print(doc.error)
"""


@pytest.mark.parametrize(
    ("mode", "missing", "guarded", "outcome"),
    [
        ("auto", "corpus", "guard", "set-up error"),  # `join_corpus` may need it on any page
        ("auto", "corpus", "no-guard", "None"),  # never needed
        ("article", "auto", "guard", "set-up error"),  # a likely thread is decided as auto
        ("article", "corpus", "guard", "set-up error"),  # an empty decision is joined
        ("article", "auto", "no-guard", "None"),
    ],
)
def test_a_labeller_a_mode_may_need_is_loaded_before_its_first_page(
    mode, missing, guarded, outcome
):
    # a missing bundled file stops the caller at once, as the mode's own labeller's does,
    # instead of failing every page that needs it as an internal error
    done = subprocess.run(
        [sys.executable, "-c", _BROKEN_INSTALL, mode, missing, guarded],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == outcome, done.stderr


def test_the_run_trigger_limited_by_the_prose_kept_over_the_page(tiny_model, monkeypatch):
    # an article's first paragraph (64 words) kept, its second (231) dropped: a run of 295
    # words kept less than half, so the guard steps in, unless rule 23's limits (off as
    # shipped) find that the decision keeps enough prose over the page
    html = f"<body><article><p>{ARTICLE}</p></article><div><p>{LONG}</p></div></body>"
    blocks = parse_blocks(html)
    features = _features(blocks, tiny_model)
    article = [True, False]
    assert guard_content(article, blocks, features) == ([True, True], GuardReason.CONTENT_LOSS)
    monkeypatch.setattr(guard, "PAGE_KEPT_WORDS", 60)
    assert guard_content(article, blocks, features) == (article, None)
    monkeypatch.setattr(guard, "PAGE_KEPT_WORDS", 70)
    assert guard_content(article, blocks, features)[1] == GuardReason.CONTENT_LOSS
    monkeypatch.setattr(guard, "PAGE_KEPT_WORDS", None)
    monkeypatch.setattr(guard, "PAGE_KEPT_SHARE", 0.2)  # 64 words against 59
    assert guard_content(article, blocks, features) == (article, None)
    monkeypatch.setattr(guard, "PAGE_KEPT_SHARE", 0.5)
    assert guard_content(article, blocks, features)[1] == GuardReason.CONTENT_LOSS


def test_the_labeller_that_reads_the_page_structure_says_where_its_main_element_is(tiny_model):
    html = f"<body><nav><a href='/'>Home</a></nav><main><p>{LONG}</p><p>{LONG}</p></main></body>"
    blocks = parse_blocks(html)
    sentences, block_of = [], []
    for block in blocks:
        split = split_sentences(block.text)
        sentences += split
        block_of += [block.index] * len(split)
    scores = [s for s in tiny_model.score_many(sentences)]
    columns = (
        [s.log10_prob for s in scores],
        [s.n_tokens for s in scores],
        [s.n_oov for s in scores],
    )
    _, _, auto, rows = label_blocks(blocks, sentences, block_of, columns, mode="auto")
    assert auto.main_in(rows).tolist() == [False, True, True]
    _, _, corpus, rows = label_blocks(blocks, sentences, block_of, columns, mode="corpus")
    assert corpus.main_in(rows) is None


@pytest.mark.parametrize(
    ("part", "notice"),
    [
        ("<aside>{}</aside>", ""),  # a sidebar of post teasers, by its element
        ("<footer>{}</footer>", ""),
        ("<div class='site-footer'>{}</div>", ""),  # ... or by its class
        ("<div id='cookie-consent'>{}</div>", ""),  # an overlay
        ("<div>{}</div>", "Copyright 2026, all rights reserved. "),  # a legal notice
    ],
)
def test_the_guard_takes_no_run_from_sidebars_footers_overlays_or_legal_text(
    tiny_model, part, notice
):
    def guard(html):
        blocks = parse_blocks(html)
        content = [True] + [False] * (len(blocks) - 1)
        return content, guard_content(content, blocks, _features(blocks, tiny_model))

    article = f"<body><article><p>{ARTICLE}</p></article>"
    prose = f"<p>{notice}{LONG}</p><p>{notice}{LONG}</p>"
    content, guarded = guard(f"{article}{part.format(prose)}</body>")
    assert guarded == (content, None)
    # the same prose in a plain division is a run the guard keeps
    _, guarded = guard(f"{article}<div><p>{LONG}</p><p>{LONG}</p></div></body>")
    assert guarded == ([True, True, True], GuardReason.CONTENT_LOSS)


def test_a_name_around_the_main_element_leaves_no_block_out(tiny_model, monkeypatch):
    # the layout's wrapper is named for its sidebar; the main element sits inside it
    html = (
        "<body><div class='layout-with-sidebar'><nav><a href='/'>Home</a></nav>"
        f"<main><p>{LONG}</p><p>{LONG}</p></main>"
        f"<div class='sidebar'><p>{LONG}</p></div></div></body>"
    )
    blocks = parse_blocks(html)
    features = _features(blocks, tiny_model)
    _, main_in = structure_features(blocks, features, COLUMNS)
    assert main_in.tolist() == [False, True, True, False]
    dropped = [False] * len(blocks)
    kept, why = guard_content(dropped, blocks, features, main_in)
    assert (kept, why) == ([False, True, True, False], GuardReason.CONTENT_LOSS)
    # the sidebar's own name still counts: the wrapper's alone made every block a sidebar's
    monkeypatch.setattr(guard, "BELOW_MAIN_GROUPS", ())
    assert guard_content(dropped, blocks, features, main_in) == (dropped, None)


def test_rule_15_takes_a_thread_in_a_container_named_for_replies(tiny_model, monkeypatch):
    # a thread whose posts sit in a container named for replies; the decision keeps the first
    html = (
        "<body><nav><a href='/'>Home</a></nav><div class='js-replyContainer'>"
        + f"<article><p>{LONG}</p></article>" * 3
        + "</div></body>"
    )
    blocks = parse_blocks(html)
    features = _features(blocks, tiny_model)
    _, main_in = structure_features(blocks, features, COLUMNS)
    first = [False, True, False, False]
    # as shipped (`guard.BELOW_MAIN_IN_THREADS`, since rule 18): the posts are the thread's
    kept, why = guard_content(first, blocks, features, main_in)
    assert (kept, why) == ([False, True, True, True], GuardReason.CONTENT_LOSS)
    # without it every post is in "comments", and no run is taken from them
    monkeypatch.setattr(guard, "BELOW_MAIN_IN_THREADS", ())
    assert guard_content(first, blocks, features, main_in) == (first, None)


def test_native_prose_run_equals_the_reference(monkeypatch):
    """The guard's run of prose found in one native call is the reference's: random rows
    (words at the block limit, link densities at the run limit, unended blocks, outside
    columns, class words and blocks of code), gaps of every length, 0 to 300 blocks."""
    from stream_cleaner import guard
    from stream_cleaner.document import Block

    fast = native_module("page_structure")
    if fast is None:
        pytest.skip("native modules not built")
    rng = np.random.default_rng(9)
    bits, columns = guard._outside_marks(tuple(guard.OUTSIDE_GROUPS), tuple(guard.OUTSIDE_COLUMNS))
    below, _ = guard._outside_marks(tuple(guard.BELOW_MAIN_GROUPS), ())
    _, free = guard._outside_marks((), tuple(guard.GAP_FREE_COLUMNS))
    assert len(free) == 2
    nav = CLASS_GROUP_NAMES.index("nav")
    assert "nav" in guard.BELOW_MAIN_GROUPS
    for n in (0, 1, 2, 5, 40, 300):
        for _ in range(40):
            rows = np.zeros((n, len(FEATURE_NAMES)))
            words = rng.choice([0.0, 5.0, 10.0, 11.5, 40.0, 200.0], size=n)
            rows[:, guard._WORDS] = np.log1p(words)
            rows[:, guard._LINKS] = rng.choice([0.0, 0.1, 0.3, 0.9], size=n)
            rows[:, guard._ENDS] = rng.random(n) < 0.8
            rows[:, columns] = rng.random((n, len(columns))) < 0.05
            rows[:, free] = rng.random((n, len(free))) < 0.2  # blocks of code (rule 55)
            # class words: none, a group left out, one counting only below the main element
            # (at random levels, 1 to 15), or a group never left out
            codes = [0, bits & -bits, 1 << 60, *(level << (4 * nav) for level in (1, 3, 15))]
            blocks = [
                Block(i, "t", "p", "html body p", 3, 0.0, False, False, False, False, False,
                      int(rng.choice(codes)) | int(rng.choice(codes)))
                for i in range(n)
            ]  # fmt: skip
            words = np.exp(rows[:, guard._WORDS]) - 1.0
            found = fast.prose_run(
                words, rows, guard._LINKS, guard._ENDS, columns, blocks, bits,
                guard.MIN_RUN_BLOCK_WORDS, guard.MAX_RUN_LINK_DENSITY, guard.MAX_RUN_GAP,
                gap_free_columns=free, lead_ins=guard.GAP_FREE_LEAD_INS,
            )  # fmt: skip
            assert found == guard._prose_run(blocks, rows, words), n
            unlinked = guard._outside_marks((), tuple(guard.GAP_FREE_UNLINKED_COLUMNS))[1]
            rows[:, unlinked] = rng.random((n, len(unlinked))) < 0.3  # rule 58's flags
            found = fast.prose_run(
                words, rows, guard._LINKS, guard._ENDS, columns, blocks, bits,
                guard.MIN_RUN_BLOCK_WORDS, guard.MAX_RUN_LINK_DENSITY, guard.MAX_RUN_GAP,
                gap_free_columns=free, lead_ins=guard.GAP_FREE_LEAD_INS,
                gap_free_unlinked_columns=unlinked,
            )  # fmt: skip
            assert found == guard._prose_run(blocks, rows, words, unlinked=True), n
            rows[:, guard._COLON] = rng.random(n) < 0.3  # rule 59: a colon ends a run's block
            found = fast.prose_run(
                words, rows, guard._LINKS, guard._ENDS, columns, blocks, bits,
                guard.MIN_RUN_BLOCK_WORDS, guard.MAX_RUN_LINK_DENSITY, guard.MAX_RUN_GAP,
                gap_free_columns=free, lead_ins=guard.GAP_FREE_LEAD_INS, colon_column=guard._COLON,
            )  # fmt: skip
            assert found == guard._prose_run(blocks, rows, words), n
            with monkeypatch.context() as patched:  # no block ending with a colon joins it
                patched.setattr(guard, "RUN_ENDS_WITH_COLON", False)
                assert fast.prose_run(
                    words, rows, guard._LINKS, guard._ENDS, columns, blocks, bits,
                    guard.MIN_RUN_BLOCK_WORDS, guard.MAX_RUN_LINK_DENSITY, guard.MAX_RUN_GAP,
                    gap_free_columns=free, lead_ins=guard.GAP_FREE_LEAD_INS,
                ) == guard._prose_run(blocks, rows, words), n  # fmt: skip
            rows[:, guard._COLON] = 0  # the walks below pass no colon column
            with monkeypatch.context() as patched:  # every block counted in a gap
                patched.setattr(guard, "GAP_FREE_COLUMNS", ())
                assert fast.prose_run(
                    words, rows, guard._LINKS, guard._ENDS, columns, blocks, bits,
                    guard.MIN_RUN_BLOCK_WORDS, guard.MAX_RUN_LINK_DENSITY, guard.MAX_RUN_GAP,
                ) == guard._prose_run(blocks, rows, words), n  # fmt: skip
            with monkeypatch.context() as patched:  # code not counted, its lead-ins counted
                patched.setattr(guard, "GAP_FREE_LEAD_INS", False)
                assert fast.prose_run(
                    words, rows, guard._LINKS, guard._ENDS, columns, blocks, bits,
                    guard.MIN_RUN_BLOCK_WORDS, guard.MAX_RUN_LINK_DENSITY, guard.MAX_RUN_GAP,
                    gap_free_columns=free,
                ) == guard._prose_run(blocks, rows, words), n  # fmt: skip
            posts, _ = guard._outside_marks(guard._outside_groups(True), ())  # rule 34
            found = fast.prose_run(
                words, rows, guard._LINKS, guard._ENDS, columns, blocks, posts,
                guard.MIN_RUN_BLOCK_WORDS, guard.MAX_RUN_LINK_DENSITY, guard.MAX_RUN_GAP,
                gap_free_columns=free, lead_ins=guard.GAP_FREE_LEAD_INS,
            )  # fmt: skip
            assert found == guard._prose_run(blocks, rows, words, posts=True), n
            around = rng.integers(0, 16, size=n)
            if n:  # and the levels themselves, from random depths and a random main element
                rows[:, guard._DEPTH] = rng.integers(3, 30, size=n)
                rows[:, guard._OPENED] = rng.integers(0, rows[:, guard._DEPTH] + 1)
                main_in = np.zeros(n, dtype=bool)
                start = int(rng.integers(0, n))
                main_in[start : int(rng.integers(start, n)) + 1] = True
                levels = fast.levels_around_main(rows, guard._DEPTH, guard._OPENED,
                                                 main_in.view(np.uint8))  # fmt: skip
                assert levels.tolist() == guard.levels_around_main(rows, main_in).tolist()
            found = fast.prose_run(
                words, rows, guard._LINKS, guard._ENDS, columns, blocks, bits,
                guard.MIN_RUN_BLOCK_WORDS, guard.MAX_RUN_LINK_DENSITY, guard.MAX_RUN_GAP,
                around, below, free, guard.GAP_FREE_LEAD_INS,
            )  # fmt: skip
            assert found == guard._prose_run(
                blocks, rows, words, around, guard.BELOW_MAIN_GROUPS
            ), n


def test_native_main_words_equal_the_reference():
    """The second trigger's words counted in one native call are the numpy reference's:
    random rows (words and characters at the prose limits, CJK shares either side of half,
    link densities at the limit), random main elements and decisions, 0 to 300 blocks."""
    from stream_cleaner import guard

    fast = native_module("page_structure")
    if fast is None:
        pytest.skip("native modules not built")
    rng = np.random.default_rng(11)
    for n in (0, 1, 2, 5, 40, 300):
        for _ in range(40):
            rows = np.zeros((n, len(FEATURE_NAMES)))
            words = rng.choice([1.0, 9.0, 10.0, 25.0, 300.0], size=n)
            rows[:, guard._WORDS] = np.log1p(words)
            rows[:, guard._CHARS] = np.log1p(rng.choice([20.0, 39.0, 40.0, 400.0], size=n))
            rows[:, guard._LINKS] = rng.choice([0.0, 0.2, 0.34, 0.9], size=n)
            rows[:, guard._NON_ASCII] = rng.choice([0.0, 0.49, 0.5, 1.0], size=n)
            words = np.exp(rows[:, guard._WORDS]) - 1.0
            main_in = rng.random(n) < 0.6
            content = (rng.random(n) < 0.4).tolist()
            found = fast.main_words(
                words, rows, guard._CHARS, guard._LINKS, guard._NON_ASCII, main_in.view(np.uint8),
                content, guard.MIN_PROSE_WORDS, guard.MIN_PROSE_CHARS_CJK,
                guard.MAX_PROSE_LINK_DENSITY,
            )  # fmt: skip
            prose, kept = guard.main_prose(content, rows, words)
            reference = [words[m].sum() for m in (main_in & prose, main_in & kept, kept)]
            assert found == pytest.approx(reference, rel=1e-12, abs=1e-9), n


def test_a_stacked_labeller_with_structure_features_trains_and_cleans(tmp_path, tiny_model):
    pytest.importorskip("lightgbm")
    from stream_cleaner.training import train_labeller

    pages_dir = _page_set(tmp_path / "pages")
    out = tmp_path / "auto.json"
    meta = train_labeller(
        [(str(pages_dir), None)], mode="auto", output=out, model=tiny_model, num_trees=20,
        folds=3, class_features=True, structure_features=True, stacked=True, folds_by_site=True,
    )  # fmt: skip
    assert meta["stacked"] and meta["structure_features"]
    spec = json.loads(out.read_text())
    assert spec["features"][-len(STRUCTURE_FEATURE_NAMES) :] == list(STRUCTURE_FEATURE_NAMES)
    labeller = BlockLabeller.load(out)
    assert labeller.stage2 is not None and labeller.structure_features
    settings = CleanerSettings(mode="auto", labeller_path=str(out), model_path=TINY)
    doc = clean_document(PAGE, settings=settings)
    assert ARTICLE in doc.text and "Terms of use" not in doc.text


def test_the_shipped_auto_labeller_is_stacked_and_reads_the_page_structure():
    labeller = BlockLabeller.load(labeller_path("auto"))
    assert labeller.stage2 is not None and labeller.structure_features
    assert labeller.class_features and not labeller.site_features
    meta = json.loads(labeller_path("auto").with_suffix(".json.meta.json").read_text())
    assert meta["folds_by_site"] and meta["pages"] > 1500
    assert len(meta["sources"]) == 4
    assert meta["weights"] == "sets"  # each training set weighs the same


@pytest.fixture
def dropping(tmp_path):
    """The shipped auto labeller with a threshold no block reaches: it drops every block."""
    spec = json.loads(labeller_path("auto").read_text())
    spec["threshold"] = 1e9
    path = tmp_path / "drops-everything.json"
    path.write_text(json.dumps(spec))
    return path


def test_a_guarded_document_says_so_in_its_record_and_the_guard_can_be_off(dropping, default_model):
    from stream_cleaner.streaming.records import document_record

    page = (
        "<html><body><nav><a href='/'>Home</a></nav>"
        f"<div><p>{LONG}</p><p>{LONG}</p></div></body></html>"
    )
    settings = CleanerSettings(labeller_path=str(dropping))
    doc = clean_document(page, settings=settings, model=default_model)
    assert doc.guard == GuardReason.CONTENT_LOSS
    assert ARTICLE in doc.text and "Home" not in doc.text
    assert doc.to_dict()["guard"] == GuardReason.CONTENT_LOSS
    assert json.loads(document_record(doc)[1])["guard"] == GuardReason.CONTENT_LOSS
    off = clean_document(page, settings=settings.with_options(content_guard=False),
                         model=default_model)  # fmt: skip
    assert off.guard is None and off.text == ""
    schema = json.loads(
        (labeller_path("auto").parents[2] / "topics" / "clean.documents.v1.schema.json").read_text()
    )
    assert set(schema["properties"]["guard"]["enum"]) == {*GuardReason.ALL, None}


def test_a_dropped_heading_is_kept_above_the_block_it_heads(tiny_model, monkeypatch):
    # rule 27, off as shipped
    assert guard.HEADING_MAX_WORDS is None
    monkeypatch.setattr(guard, "HEADING_MAX_WORDS", 20)
    html = (
        f"<body><h2>The river path</h2><p>{ARTICLE}</p><h2>Opening hours</h2><p>{ARTICLE_2}</p>"
        "<h3>A heading of more than twenty words, which is no section's title at all but a "
        f"whole sentence set in large type for effect</h3><p>{ARTICLE}</p></body>"
    )
    blocks = parse_blocks(html)
    features = _features(blocks, tiny_model)
    assert [b.in_heading for b in blocks] == [True, False, True, False, True, False]
    # the paragraphs kept, the second dropped: its heading stays dropped, and so does the
    # long one
    content = [False, True, False, False, False, True]
    assert guard.keep_headings(content, blocks, features) == [True, True, False, False, False,
                                                              True]  # fmt: skip
    monkeypatch.setattr(guard, "HEADING_MAX_WORDS", None)
    assert guard.keep_headings(content, blocks, features) == content


def test_a_kept_repeat_of_a_kept_block_is_dropped(monkeypatch):
    # rule 39, off as shipped: a responsive layout's second copy of a description, and a short
    # line repeated
    assert guard.REPEAT_MIN_WORDS is None
    monkeypatch.setattr(guard, "REPEAT_MIN_WORDS", 5)
    short = "Add to basket"  # under `guard.REPEAT_MIN_WORDS`: every copy stays
    html = (
        f"<body><p>{ARTICLE}</p><p>{short}</p><div class='mobile'><p>{ARTICLE}</p></div>"
        f"<p>{ARTICLE_2}</p><p>{short}</p><p>{ARTICLE_2}</p></body>"
    )
    blocks = parse_blocks(html)
    assert len(short.split()) < guard.REPEAT_MIN_WORDS <= len(ARTICLE.split())
    everything = [True] * len(blocks)
    assert guard.drop_repeats(everything, blocks) == [True, True, False, True, True, False]
    # a copy the decision drops leaves the kept one alone: the first kept copy stays
    assert guard.drop_repeats([False, True, True, True, True, True], blocks) == [
        False, True, True, True, True, False
    ]  # fmt: skip
    monkeypatch.setattr(guard, "REPEAT_MIN_WORDS", None)
    assert guard.drop_repeats(everything, blocks) == everything


def test_a_kept_call_to_action_is_dropped(tiny_model, monkeypatch):
    # rules 45 and 46: a short block that asks the reader to act, heads a widget of other
    # pages, discloses commissions or is a shop's or a thread's interface, in English and
    # German; content that starts alike stays
    assert guard.CALL_TO_ACTION_MAX_WORDS == 12
    widgets = ["Share this article:", "Related Articles", "You may also like", "12 Comments",
               "Sign up for our newsletter", "Ähnliche Beiträge", "Drucken",
               "Subscribe to our letters about walks along the river in the valley",  # 12 words
               "As an Amazon Associate we earn from qualifying purchases"]  # fmt: skip
    content = ["More information on the river path", "Registered walkers may camp", ARTICLE,
               "Commentary from the valley", "Share prices rose in the mills",
               "Add to cart", "6 Answers"]  # fmt: skip
    long_call = "Subscribe to hear first about every walk we add along the river in spring"
    texts = [*widgets, *content, long_call]
    blocks = parse_blocks("<body>" + "".join(f"<p>{t}</p>" for t in texts) + "</body>")
    assert [b.text for b in blocks] == texts
    features = _features(blocks, tiny_model)
    everything = [True] * len(blocks)
    kept = guard.drop_calls_to_action(everything, blocks, features)
    assert [t for t, k in zip(texts, kept, strict=True) if k] == [*content[:-2], long_call]
    # what the decision drops stays dropped
    nothing = [False] * len(blocks)
    assert guard.drop_calls_to_action(nothing, blocks, features) == nothing
    monkeypatch.setattr(guard, "CALL_TO_ACTION_MAX_WORDS", 8)  # the last two widgets: 12, 9
    kept = guard.drop_calls_to_action(everything, blocks, features)
    assert [t for t, k in zip(texts, kept, strict=True) if k] == [*widgets[-2:], *content[:-2],
                                                                   long_call]  # fmt: skip
    # rule 46's interface lines ("Add to cart", "6 Answers") stay without it
    monkeypatch.setattr(guard, "CALL_TO_ACTION_MAX_WORDS", 12)
    monkeypatch.setattr(guard, "INTERFACE_LINES", False)
    kept = guard.drop_calls_to_action(everything, blocks, features)
    assert [t for t, k in zip(texts, kept, strict=True) if k] == [*content, long_call]
    monkeypatch.setattr(guard, "CALL_TO_ACTION_MAX_WORDS", None)  # off
    assert guard.drop_calls_to_action(everything, blocks, features) == everything


def test_auto_drops_the_calls_to_action_its_labeller_keeps(monkeypatch):
    # rule 45 through the pipeline: the lines around an article that ask the reader to act
    # or head a widget, which the labeller keeps with the article; auto with the rule off
    # keeps them too
    page = (
        "<html><head><title>The river path</title></head><body><nav><a href='/'>Home</a></nav>"
        f"<main><article><h1>The river path</h1><p>{ARTICLE}</p><p>Share this article:</p>"
        f"<p>{ARTICLE_2}</p><h2>Related Articles</h2><p>Sign up for our newsletter</p>"
        "</article></main></body></html>"
    )
    calls = ["Share this article:", "Related Articles", "Sign up for our newsletter"]
    auto = clean_document(page, settings=CleanerSettings(mode="auto"))
    assert ARTICLE in auto.text and ARTICLE_2 in auto.text
    assert not any(call in auto.text for call in calls)
    dropped = [s for s in auto.sentences if s.text in calls]
    assert len(dropped) == 3 and {(s.keep, s.reason) for s in dropped} == {(False, "boilerplate")}
    monkeypatch.setattr(guard, "CALL_TO_ACTION_MAX_WORDS", None)
    off = clean_document(page, settings=CleanerSettings(mode="auto"))
    assert all(call in off.text for call in calls)


def test_match_starts_lists_every_start_of_a_match():
    # the shipped phrases: every text they match starts with one of the strings (digits of
    # any script as "0"), and most texts do not; patterns it cannot follow give None
    pattern = guard._STARTS_WITH_INTERFACE
    starts = guard.match_starts(pattern, guard._START_CHARS)
    assert starts is not None and 100 < len(starts) < 1000
    assert {len(s) for s in starts} == {guard._START_CHARS}
    phrases = ["share this article", "related articles", "12 comments", "١٢ comments",
               "1.2k views", "3 answers", "add to cart", "posts: 116", "you may also like",
               "ähnliche beiträge", "à lire aussi", "añadir al carrito", "click to expand...",
               "back to top", "print", "tweet", "see all",
               "sign up for our newsletter"]  # fmt: skip
    others = ["the river path", "more than a walk", "comet", "12 apples", "shares rose", "vie"]
    for text in phrases + others:
        found = guard._DIGIT.sub("0", text[: guard._START_CHARS]) in starts
        assert found == bool(pattern.match(text)) or (found and text in others), text
    assert all(pattern.match(t) for t in phrases)

    def starts_of(pattern, flags=0):
        return guard.match_starts(re.compile(pattern, flags), 4)

    assert starts_of(r"x\d+ y") == {"x0 y", "x00 ", "x000"}
    assert starts_of(r"(?:ab)?cdef\b") == {"abcd", "cdef"}
    assert starts_of("ab|abcde") is None  # a match of two characters
    assert starts_of("(?=a)abcd") is None  # a look-ahead
    assert starts_of("[a-z]+foo") is None  # too many strings
    assert starts_of("abcd", re.IGNORECASE) is None  # "ABCD" matches too
    assert starts_of("(?i)abcd") is None and starts_of("(?i:ab)cd") is None
    codes = guard.start_codes(frozenset({"ab0 ", "àb  "}))
    assert codes.tolist() == [ord("a") | ord("b") << 8 | ord("0") << 16 | ord(" ") << 24]


def test_native_calls_to_action_candidates_hold_the_references(monkeypatch):
    """The native candidates are the reference's on texts in ASCII and hold them on any:
    random short texts of phrase starts, disclosure words anywhere, capitals, digits of two
    scripts, accents, curly quotes and the two characters outside ASCII that lowercase to
    ASCII (U+0130, U+212A); random decisions and word counts. `drop_calls_to_action`
    decides the same with and without native modules."""
    from stream_cleaner.document import Block

    fast = native_module("page_structure")
    if fast is None:
        pytest.skip("native modules not built")
    pieces = ["Share ", "this ", "Related ", "12 ", "٣ ", "Comments", "Add to cart", "the ",
              "river ", "NEWSLETTER", "affiliate", "Amazon Associate", "commissions ", "é",
              "“", "İ", "K", "Print", "Posts: ", "view", "à lire ", "sp", "on", "ad",
              "x"]  # fmt: skip
    rng = np.random.default_rng(45)
    starts = guard.match_starts(guard._STARTS_WITH_INTERFACE, guard._START_CHARS)
    below = np.log(guard.CALL_TO_ACTION_MAX_WORDS + 0.5)
    for n in (0, 1, 3, 40, 200):
        for _ in range(30):
            texts = ["".join(rng.choice(pieces, size=rng.integers(1, 6))) for _ in range(n)]
            blocks = [
                Block(i, t, "p", "html body p", 3, 0.0, False, False, False, False, False, 0)
                for i, t in enumerate(texts)
            ]  # fmt: skip
            rows = np.zeros((n, len(FEATURE_NAMES)))
            rows[:, guard._WORDS] = np.log(rng.choice([1.0, 4.0, 12.0, 13.0, 40.0], size=n))
            content = (rng.random(n) < 0.8).tolist()
            reference = guard._calls_to_action_candidates(content, blocks, rows, below, starts)
            found = fast.calls_to_action_candidates(
                content, blocks, rows, guard._WORDS, below, guard.start_codes(starts),
                guard._START_CHARS, guard._ANYWHERE_KEYS,
            )  # fmt: skip
            assert set(reference) <= set(found) and found == sorted(found)
            plain = [i for i in found if texts[i].isascii()]
            assert plain == [i for i in reference if texts[i].isascii()]
            decided = guard.drop_calls_to_action(content, blocks, rows)
            with monkeypatch.context() as m:
                m.setattr(guard, "native_module", lambda name: None)
                assert guard.drop_calls_to_action(content, blocks, rows) == decided
    # a word found in capitals, and after the Kelvin sign, which lowercases to "k"
    texts = ["A KIT here", "\u212aIT", "a kat", "Ki t"]
    blocks = [Block(i, t, "p", "html body p", 3, 0.0, False, False, False, False, False, 0)
              for i, t in enumerate(texts)]  # fmt: skip
    rows = np.zeros((len(texts), len(FEATURE_NAMES)))
    found = fast.calls_to_action_candidates(
        [True] * 4, blocks, rows, guard._WORDS, below, guard.start_codes(frozenset({"zzzz"})),
        4, ("kit",),
    )  # fmt: skip
    assert found == [0, 1] and "kit" in texts[1].lower()


def test_auto_keeps_a_repeated_paragraph_once(monkeypatch):
    # rule 39 through the pipeline, switched on: an article whose paragraphs a second, mobile
    # copy repeats; auto keeps each once, article mode (no such rule) both copies, and so
    # does auto as shipped
    body = f"<p>{ARTICLE}</p><p>{ARTICLE_2}</p>"
    page = (
        "<html><head><title>The river</title></head><body><nav><a href='/'>Home</a></nav>"
        f"<main><article><h1>The river</h1><div class='desktop'>{body}</div>"
        f"<div class='mobile'>{body}</div></article></main></body></html>"
    )
    monkeypatch.setattr(guard, "REPEAT_MIN_WORDS", 5)
    auto = clean_document(page, settings=CleanerSettings(mode="auto"))
    article = clean_document(page, settings=CleanerSettings(mode="article"))
    assert auto.text.count(ARTICLE) == 1 and auto.text.count(ARTICLE_2) == 1
    assert article.text.count(ARTICLE) == 2
    repeated = [s for s in auto.sentences if not s.keep and s.text in ARTICLE]
    assert repeated and {s.reason for s in repeated} == {"boilerplate"}
    monkeypatch.setattr(guard, "REPEAT_MIN_WORDS", None)
    shipped = clean_document(page, settings=CleanerSettings(mode="auto"))
    assert shipped.text.count(ARTICLE) == 2


def test_auto_joins_a_decision_of_nothing_with_the_corpus_labellers_and_says_so(
    dropping, default_model
):
    from stream_cleaner.streaming.records import document_record

    # the auto labeller dropping every block of a shop's page: no run of prose for the guard
    # (goods without sentence ends; the comments and the footer are left out)
    settings = CleanerSettings(labeller_path=str(dropping))
    doc = clean_document(SHOP, settings=settings, model=default_model)
    assert doc.guard == GuardReason.CORPUS_JOINED
    assert doc.text.splitlines() == GOODS  # the heading is the corpus labeller's to drop
    assert json.loads(document_record(doc)[1])["guard"] == GuardReason.CORPUS_JOINED
    off = clean_document(SHOP, settings=settings.with_options(content_guard=False),
                         model=default_model)  # fmt: skip
    assert off.guard is None and off.text == ""
    # article mode with the same labeller keeps no word either, so it is joined too (rule 62;
    # a decision keeping a few words is not: `test_a_decision_of_a_few_words_is_joined_...`)
    article = clean_document(SHOP, settings=settings.with_options(mode="article"),
                             model=default_model)  # fmt: skip
    assert article.guard == GuardReason.CORPUS_JOINED and article.text.splitlines() == GOODS


def test_native_page_scores_equal_the_reference():
    fast = native_module("page_structure")
    if fast is None:
        pytest.skip("native modules not built")
    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 8, 9, 100, 128, 129, 300, 1000):
        for _ in range(20):
            scores = rng.normal(size=n).round(rng.integers(0, 3))  # ties, zeros
            chars = np.expm1(rng.uniform(0, 8, size=n)) * (rng.random(n) > 0.1)
            inside = rng.random(n) < rng.choice([0.0, 0.3, 1.0])
            found = fast.page_scores(scores, chars, inside.astype(np.uint8))
            assert found == _page_scores(scores, chars, inside), (n, scores, chars, inside)
    zero = np.zeros(3)
    assert fast.page_scores(zero, zero, np.ones(3, np.uint8)) == _page_scores(zero, zero, zero > -1)


# a reader's comment: prose, under class words of the ``comment`` group
COMMENT = (
    "I walked the whole footpath last spring with my daughter and we counted eleven old mill "
    "races along the way. The trout were rising in the evening near the second bridge."
)


def _commented(paragraphs: int, comments: int = 3, comment: str = COMMENT) -> str:
    """An article of ``paragraphs`` runs of prose (about 200 words each) over ``comments``
    comments."""
    return (
        "<html><head><title>The river</title></head><body><nav><a href='/'>Home</a></nav>"
        "<main><article><h1>The river</h1>" + f"<p>{LONG}</p>" * paragraphs + "</article>"
        f"<section class='comments'><h2>{comments} comments</h2>"
        + f"<div class='comment'><p>{comment}</p></div>" * comments
        + "</section></main></body></html>"
    )


def test_readers_comments_kept_beside_an_article_are_dropped(tiny_model):
    blocks = parse_blocks(_commented(3))
    texts = [b.text for b in blocks]
    features = _features(blocks, tiny_model)
    everything = [True] * len(blocks)
    kept = guard.drop_comments(everything, blocks, features)
    # every block of the comments' part goes, their heading too
    thread = (COMMENT, "3 comments")
    assert [t for t, k in zip(texts, kept, strict=True) if k] == [
        t for t in texts if t not in thread
    ]
    # the comments not kept: nothing to do
    no_comments = [t not in thread for t in texts]
    assert guard.drop_comments(no_comments, blocks, features) == no_comments


def test_comments_stay_beside_less_prose_than_the_limit(tiny_model, monkeypatch):
    # one run of prose (232 words, under `guard.COMMENTS_BESIDE_PROSE_WORDS`) beside them, or
    # only the comments kept (a thread whose posts are marked as comments)
    blocks = parse_blocks(_commented(1))
    texts = [b.text for b in blocks]
    features = _features(blocks, tiny_model)
    everything = [True] * len(blocks)
    assert guard.drop_comments(everything, blocks, features) == everything
    assert guard.drop_comments(everything, blocks, features, "forum") == everything
    posts = [t == COMMENT for t in texts]
    assert guard.drop_comments(posts, blocks, features, "article") == posts
    # on a page of type article the limit can be lower (`guard.COMMENTS_BESIDE_ARTICLE_WORDS`,
    # the same since rule 18)
    assert guard.drop_comments(everything, blocks, features, "article") == everything
    monkeypatch.setattr(guard, "COMMENTS_BESIDE_ARTICLE_WORDS", 200)
    kept = guard.drop_comments(everything, blocks, features, "article")
    assert [t for t, k in zip(texts, kept, strict=True) if k] == [
        t for t in texts if t not in (COMMENT, "3 comments")
    ]


def test_comments_beside_a_short_article_go_on_a_page_unlikely_to_be_a_forum(tiny_model):
    # 232 words of prose outside the comments: under the 400 of every page, over the 50 of a
    # page the page-type model thinks unlikely to be a forum (rule 30)
    blocks = parse_blocks(_commented(1))
    texts = [b.text for b in blocks]
    features = _features(blocks, tiny_model)
    everything = [True] * len(blocks)
    article = [t not in (COMMENT, "3 comments") for t in texts]
    below = guard.COMMENTS_FORUM_BELOW
    assert guard.drop_comments(everything, blocks, features, "article", below - 0.01) == article
    for likely in (below, 0.9, None):  # a likely forum, or not known
        assert guard.drop_comments(everything, blocks, features, "article", likely) == everything
    # a thread kept only in its posts keeps them, whatever the model thinks
    posts = [t == COMMENT for t in texts]
    assert guard.drop_comments(posts, blocks, features, "article", 0.0) == posts


def test_auto_mode_reads_the_forum_probability(monkeypatch):
    # twelve comments under one run of prose at a thread's URL: the page-type model calls it a
    # forum, and the labeller keeps the comments
    page = RawDocument(
        body=_commented(1, comments=12, comment=f"{COMMENT} {COMMENT}"),
        url="https://forum.example.org/threads/the-river.12/",
    )
    doc = clean_document(page, settings=CleanerSettings(mode="auto"))
    assert doc.page_type == "forum" and COMMENT in doc.text
    # without the URL the model calls it an article, unlikely to be a forum: the comments go
    doc = clean_document(page.body, settings=CleanerSettings(mode="auto"))
    assert doc.page_type == "article" and COMMENT not in doc.text and LONG in doc.text
    # every page unlikely to be a forum: the thread loses them too, its opening post stays
    monkeypatch.setattr(guard, "COMMENTS_FORUM_BELOW", 1.01)
    doc = clean_document(page, settings=CleanerSettings(mode="auto"))
    assert COMMENT not in doc.text and LONG in doc.text


def test_auto_mode_drops_the_comments_its_labeller_keeps_beside_an_article(monkeypatch):
    # a thread of twelve longer comments under two runs of prose: the shipped labeller keeps
    # the comments here (on a page of three short ones it drops them itself)
    page = _commented(2, comments=12, comment=f"{COMMENT} {COMMENT}")
    assert COMMENT not in clean_document(page, settings=CleanerSettings(mode="auto")).text
    # the labeller keeps them: the rule (rule 11, docs/labeller.md) is what drops them
    monkeypatch.setattr(guard, "COMMENTS_BESIDE_PROSE_WORDS", 10**9)
    monkeypatch.setattr(guard, "COMMENTS_BESIDE_ARTICLE_WORDS", 10**9)
    monkeypatch.setattr(guard, "COMMENTS_UNLIKELY_FORUM_WORDS", None)  # and rule 30's
    assert COMMENT in clean_document(page, settings=CleanerSettings(mode="auto")).text


def test_the_second_trigger_on_likely_forums_only(tiny_model, monkeypatch):
    # rule 31's variant (off as shipped): a thread whose decision keeps its opening post only,
    # its replies marked as comments; the trigger keeps every block of the main element, but
    # only where the page-type model is sure enough that the page is a forum
    blocks = parse_blocks(_commented(1, comments=12))  # 232 words over 12 replies of 31
    texts = [b.text for b in blocks]
    features = _features(blocks, tiny_model)
    main_in = np.array(["comment" in t or t in (LONG, COMMENT) for t in texts])  # the thread
    opening = [t == LONG for t in texts]
    settings = {"MAIN_MIN_WORDS": 100, "MAIN_MIN_KEPT_SHARE": 0.5, "MAIN_KEEP": "all",
                "MAIN_KEPT_FROM": "main", "MAIN_MIN_FORUM_PROBABILITY": 0.8}  # fmt: skip
    for name, value in settings.items():
        monkeypatch.setattr(guard, name, value)
    kept, why = guard.guard_content(opening, blocks, features, main_in, 0.9)
    assert why == guard.GuardReason.CONTENT_LOSS
    assert [t for t, k in zip(texts, kept, strict=True) if k].count(COMMENT) == 12
    for unsure in (0.79, None):
        assert guard.guard_content(opening, blocks, features, main_in, unsure) == (opening, None)
    monkeypatch.setattr(guard, "MAIN_MIN_FORUM_PROBABILITY", None)  # every page
    assert guard.guard_content(opening, blocks, features, main_in, None)[1] is not None


def test_article_mode_takes_a_likely_forums_posts_for_its_run(tiny_model, monkeypatch):
    # rule 34: a thread kept down to its opening post, its replies marked as comments. The
    # guard takes no run of prose from comment-marked parts, unless they are a thread's posts
    blocks = parse_blocks(_commented(1, comments=12))  # 232 words over 12 replies of 31
    texts = [b.text for b in blocks]
    features = _features(blocks, tiny_model)
    opening = [t == LONG for t in texts]
    assert guard.guard_content(opening, blocks, features) == (opening, None)
    kept, why = guard.guard_content(opening, blocks, features, posts=True)
    assert why == guard.GuardReason.CONTENT_LOSS
    assert [t for t, k in zip(texts, kept, strict=True) if k].count(COMMENT) == 12
    # the same without the native modules
    monkeypatch.setattr(guard, "native_module", lambda name: None)
    assert guard.guard_content(opening, blocks, features, posts=True) == (kept, why)
    # posts: in article mode only, on a page the page-type model thinks a forum
    monkeypatch.setattr(guard, "ARTICLE_POSTS_FORUM_PROBABILITY", 0.8)
    assert guard.posts_in_comments("article", 0.8)
    for mode, probability in (("article", 0.79), ("article", None), ("auto", 0.99)):
        assert not guard.posts_in_comments(mode, probability)
    monkeypatch.setattr(guard, "ARTICLE_POSTS_FORUM_PROBABILITY", None)
    assert not guard.posts_in_comments("article", 1.0)


def test_article_mode_decides_a_likely_thread_as_auto(monkeypatch):
    # rule 35: twenty replies, marked as comments, under an opening post at a thread's URL.
    # The page-type model calls it a forum; the article labeller drops the replies as
    # readers' comments, unless the page is decided as auto decides it
    page = RawDocument(
        body=_commented(1, comments=20),
        url="https://forum.example.org/threads/the-river.12/",
    )
    article = clean_document(page, settings=CleanerSettings(mode="article"))
    auto = clean_document(page, settings=CleanerSettings(mode="auto"))
    assert article.page_type == "forum"
    assert article.page_type_confidence >= guard.ARTICLE_THREAD_PROBABILITY
    assert article.guard == GuardReason.THREAD
    assert article.text == auto.text and COMMENT in article.text and LONG in article.text
    assert auto.guard != GuardReason.THREAD  # auto is auto already
    # the guard off, the rule off or the model less sure: the article labeller's decision
    off = clean_document(page, settings=CleanerSettings(mode="article", content_guard=False))
    assert off.guard is None and COMMENT not in off.text and LONG in off.text
    for setting in (None, article.page_type_confidence + 0.001):
        monkeypatch.setattr(guard, "ARTICLE_THREAD_PROBABILITY", setting)
        unsure = clean_document(page, settings=CleanerSettings(mode="article"))
        assert unsure.guard != GuardReason.THREAD and unsure.text == off.text
