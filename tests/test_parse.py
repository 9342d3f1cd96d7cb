import time

import pytest

from stream_cleaner._native import native_module
from stream_cleaner.decode import decode_body
from stream_cleaner.parse import (
    CLASS_COMMENT,
    CLASS_GROUP_NAMES,
    CLASS_WORD_GROUPS,
    MAX_NAMES,
    MAX_NESTING_DEPTH,
    PageTooLarge,
    TimeBudgetExceeded,
    _attribute_work,
    _markup_work,
    aria_dialog,
    attribute_work,
    class_groups,
    extract_text,
    hidden_element,
    limit_nesting,
    looks_like_html,
    markup_work,
    max_tag_depth,
    page_title,
    parse_blocks,
    parse_text_blocks,
)

from .conftest import SAMPLES, cleaneval_dir

PAGE = """<!DOCTYPE html><html><head><title>T</title><style>p{}</style>
<script>var hidden = "script text";</script></head><body>
<div class="nav"><ul><li><a href="/">Home</a></li>
<li><a href="/a"><b>About</b> us</a></li></ul></div>
<div id="main"><h1>Big <b>news</b> today</h1>
<p>Mr. Smith went to <a href="x">Washington</a>. He paid 3.5 USD.<br>Second line
<!-- c --> here.</p>
<noscript>Enable JavaScript</noscript><template><p>template text</p></template>
<noframes><p>Frames fallback</p></noframes><noembed><b>Embed fallback</b></noembed>
<svg><text>svg text</text></svg><p>Café in Zürich — 東京</p> tail text
<table><tr><td>cell <i>one</i></td><td><i>cell</i> <i>two</i></td></tr></table>
<form><label>Search</label><select><option>One</option></select></form></div>
<footer>© 2026 <a>Example</a> | <a>Privacy</a></footer></body></html>"""

EXPECTED = [
    # text, tag, tag_path
    ("Home", "li", "html body div ul li a"),
    ("About us", "li", "html body div ul li a"),
    ("Big news today", "h1", "html body div h1"),
    ("Mr. Smith went to Washington. He paid 3.5 USD.", "p", "html body div p"),
    ("Second line here.", "p", "html body div p"),
    ("Café in Zürich — 東京", "p", "html body div p"),
    ("tail text", "div", "html body div"),
    ("cell one", "td", "html body div table tbody tr td"),
    ("cell two", "td", "html body div table tbody tr td"),
    ("Search", "form", "html body div form label"),
    ("One", "option", "html body div form select option"),
    ("© 2026 Example | Privacy", "footer", "html body footer"),
]


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_blocks_text_tags_and_paths(parser):
    blocks = parse_blocks(PAGE, parser=parser)
    assert [(b.text, b.tag, b.tag_path) for b in blocks] == EXPECTED
    assert [b.index for b in blocks] == list(range(len(EXPECTED)))
    assert all(b.depth == len(b.tag_path.split()) for b in blocks)


def _groups(code: int) -> dict[str, int]:
    """`Block.class_words` by group name: levels up to the nearest element naming it."""
    found = {name: code >> 4 * g & 15 for g, name in enumerate(CLASS_GROUP_NAMES)}
    return {name: levels for name, levels in found.items() if levels}


def test_class_words_are_found_by_their_rules():
    group = {name: 1 << g for g, name in enumerate(CLASS_GROUP_NAMES)}
    assert class_groups("CommentList") == group["comment"]  # anywhere, any case
    # German and Scandinavian, Polish and Czech, Spanish and Portuguese names for comments
    for value in ("kommentarbereich", "komentarze", "lista-comentarios"):
        assert class_groups(value) == group["comment"], value
    assert class_groups("ad ad-slot") == class_groups("top-ADS") == group["ad"]  # whole word
    assert class_groups("advertisement_box") == group["ad"]  # at the start of a word
    assert class_groups("header load badge xadvert") == group["header"]  # "ad" inside words
    assert class_groups("post-content share-bar") == group["content"] | group["share"]
    assert class_groups("") == class_groups("x1 y2") == 0


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_class_words_say_how_far_up_the_path_each_group_is(parser):
    html = """<html class="comment"><body class="single-post comments-open">
    <div id="main"><article class="post"><p>Article text.</p></article>
    <section id="comments"><ol class="comment-list"><li class="comment">
    <div class="comment-body"><p>Nice post!</p></div></li></ol></section>
    <p>Loose <span class="ad">text</span></p></div></body></html>"""
    blocks = {b.text: b for b in parse_blocks(html, parser=parser)}
    # html's and body's classes name the page, not a part of it: left out
    assert _groups(blocks["Article text."].class_words) == {
        "content": 2, "any": 2,  # article.post, one level above the p
    }  # fmt: skip
    assert _groups(blocks["Nice post!"].class_words) == {
        "comment": 2, "content": 2, "any": 2,  # div.comment-body ("post" in "comment-body")
    }  # fmt: skip
    assert _groups(blocks["Loose text"].class_words) == {"content": 2, "any": 2}  # div#main
    # a caller whose labeller does not read them is spared the matching: all 0, else the same
    without = parse_blocks(html, parser=parser, class_words=False)
    assert [b.class_words for b in without] == [0] * len(without)
    assert [b.text for b in without] == list(blocks)


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_comment_marks_count_the_elements_named_for_comments_in_reading_order(parser):
    # a Movable Type thread: no container holds it, a heading's anchor starts it
    html = """<html><body><div class="entry">
    <p class="meta">By Ann, <a href="#comments" class="comments-link">2 comments</a></p>
    <p>Article text.</p><div hidden class="comment-preview"><p>Preview</p></div>
    <script class="comment-js">var c;</script>
    <h2><a id="comments"></a>Comments</h2><div id="c169900"><p>Nice post!</p></div>
    <p class="posted">Posted by: Bob</p></div>
    <div id="comment-form"><p>Leave a reply</p></div></body></html>"""
    blocks = parse_blocks(html, parser=parser)
    # the link inside the first block counts for it; hidden and skipped elements never count
    assert [(b.text, b.comment_marks) for b in blocks] == [
        ("By Ann, 2 comments", 1), ("Article text.", 1), ("Comments", 2), ("Nice post!", 2),
        ("Posted by: Bob", 2), ("Leave a reply", 3),
    ]  # fmt: skip
    without = parse_blocks(html, parser=parser, class_words=False)
    assert [b.comment_marks for b in without] == [0] * len(blocks)
    assert CLASS_WORD_GROUPS[CLASS_COMMENT][0] == "comment"  # the native walk's bit 0


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_block_flags_and_link_density(parser):
    by_text = {b.text: b for b in parse_blocks(PAGE, parser=parser)}
    home = by_text["Home"]
    assert home.in_link and home.in_list and home.link_density == 1.0
    assert by_text["Big news today"].in_heading
    assert by_text["cell one"].in_table and not by_text["cell one"].in_list
    assert by_text["Search"].in_form and by_text["One"].in_form
    sentence = by_text["Mr. Smith went to Washington. He paid 3.5 USD."]
    assert not sentence.in_link
    assert 0.1 < sentence.link_density < 0.3
    assert by_text["© 2026 Example | Privacy"].link_density > 0.5


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_scripts_styles_templates_svg_and_comments_are_dropped(parser):
    text = extract_text(PAGE, parser=parser)
    for hidden in ("script text", "p{}", "Enable JavaScript", "template text", "svg text", " c "):
        assert hidden not in text
    assert "T" not in text.split("\n")  # the <title> lives in <head>


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_soft_hyphens_and_zero_width_spaces_are_dropped_from_words(parser):
    html = (
        "<p>The coun&shy;cil met on Tues\u00adday to dis\u200bcuss the bud\u2060get.</p>"
        "<p>\u200b</p><p>\ufeffa \u200b b</p>"
        "<p>\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645</p>"
    )
    texts = [block.text for block in parse_blocks(html, parser=parser)]
    # the zero-width non-joiner shapes Persian and Indic words: it stays
    assert texts == ["The council met on Tuesday to discuss the budget.", "a b",
                     "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"]  # fmt: skip
    assert [b.text for b in parse_text_blocks("dis\u00adcuss\n\u200b\n")] == ["discuss"]


# What a browser would not show, and what it would: the page, then the blocks it gives
HIDDEN = {
    "inline style": (
        '<div><p>Shown.</p><div style="display:none"><p>A hidden menu.</p></div>'
        '<p style="color: red; DISPLAY : None !important">Hidden too.</p>'
        '<span style="visibility:hidden">Invisible.</span>'
        '<p style="display: block">Shown as a block.</p>'
        '<p style="display:\u00a0none">No ASCII space: shown.</p></div>',
        ["Shown.", "Shown as a block.", "No ASCII space: shown."],
    ),
    "hidden attribute, closed dialogs": (
        "<div><p>Shown.</p><p hidden>Hidden.</p><div HIDDEN=hidden><p>A hidden menu.</p></div>"
        '<section hidden="until-found"><p>Found by search: shown.</p></section>'
        '<p data-hidden="1" aria-hidden="true">Other attributes: shown.</p>'
        "<dialog><p>Subscribe to our newsletter!</p></dialog>"
        "<dialog open><p>An open dialog: shown.</p></dialog>"
        '<dialog class="x" data-open><p>Closed.</p></dialog><p>End.</p></div>',
        ["Shown.", "Found by search: shown.", "Other attributes: shown.",
         "An open dialog: shown.", "End."],
    ),
}  # fmt: skip


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
@pytest.mark.parametrize("case", list(HIDDEN))
def test_what_a_browser_would_not_show_is_walked_past(parser, case):
    html, shown = HIDDEN[case]
    assert [block.text for block in parse_blocks(html, parser=parser)] == shown


@pytest.mark.parametrize(
    ("html", "title"),
    [
        ("<html><head><TITLE lang=en>Caf&eacute; &amp;\n  Bar\u00ad</TITLE></head>", "Café & Bar"),
        ("<title>Rivers</title><body><svg><title>An icon</title></svg>", "Rivers"),
        ("<html><body><svg><title>An icon</title></svg><p>No title of its own</p>", ""),
        ("<p>No title at all</p>", ""),
        ("<title>   </title>", ""),
        ("<titles>Not a title</titles>", ""),
        ("<title>" + "x" * 5000 + "</title>", "x" * 1000),
        # a head of inline scripts longer than the first 64 KiB
        ("<head><script>" + "var a;" * 20000 + "</script><title>Late</title>", "Late"),
        ("<head></head><body>" + "<p>x</p>" * 10000 + "<svg><title>Icon</title></svg>", ""),
    ],
)
def test_page_title(html, title):
    assert page_title(html) == title


def test_a_head_of_unclosed_title_tags_is_searched_in_linear_time():
    started = time.monotonic()
    assert page_title("<title " * 50_000) == ""
    assert page_title("<title " * 50_000 + "<title>Found</title>") == "Found"
    assert time.monotonic() - started < 1  # each search ran to the window's end: a minute


def test_the_python_walk_over_lexbor_skips_hidden_elements_as_the_native_one_does():
    from selectolax.lexbor import LexborHTMLParser

    from stream_cleaner.parse import _walk

    html = (
        '<p>a</p><div style="visibility: hidden"><p>b</p></div><p style="x">c</p>'
        '<p hidden>d</p><dialog>e</dialog><p hidden="until-found">f</p>'
    )
    assert [b.text for b in _walk(LexborHTMLParser(html).root, None)] == ["a", "c", "f"]
    assert [b.text for b in parse_blocks(html)] == ["a", "c", "f"]


# a page as React's streaming server rendering sends it (Next.js App Router): the content comes
# late, in hidden segments that a script moves into their placeholders
REACT_STREAMED_PAGE = """<!DOCTYPE html><html><body><header>Site</header>
<main><!--$?--><template id="B:0"></template><p>Loading...</p><!--/$--></main>
<footer>Footer</footer>
<div hidden id="S:0"><article><h1>Title</h1><p>The story, <!--$?--><template id="B:1"></template>
<!--/$-->told late.</p></article></div><script>$RC("B:0","S:0")</script>
<div hidden id="S:1a"><p>Comments</p></div><script>$RC("B:1","S:1a")</script>
<table hidden id="S:2"><tbody><tr><td>Cell</td></tr></tbody></table>
<div hidden id="S:">no digits</div><div hidden id="s:3">lower s</div>
<div hidden id="xS:3">prefix</div><div hidden id="S:3 ">space</div><div hidden id="S:G">G</div>
<div hidden id="P:3">P</div><div hidden>no id</div><div id="S:4" style="display:none">styled</div>
<dialog hidden id="S:5">closed dialog</dialog></body></html>"""


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_react_streamed_segments_are_walked_though_hidden(parser):
    """A crawler runs no script, so a segment is never moved and revealed: its blocks come at
    the end of the page; every other hidden element stays hidden."""
    blocks = [b.text for b in parse_blocks(REACT_STREAMED_PAGE, parser=parser)]
    assert blocks == ["Site", "Loading...", "Footer", "Title", "The story, told late.",
                      "Comments", "Cell"]  # fmt: skip


@pytest.mark.parametrize(
    ("tag", "attributes", "hidden"),
    [
        ("div", {"hidden": "", "id": "S:0"}, False),
        ("div", {"hidden": None, "id": "S:9f"}, False),
        ("table", {"hidden": "", "id": "S:2"}, False),
        ("div", {"hidden": "", "id": "S:"}, True),
        ("div", {"hidden": "", "id": "S:9F"}, True),  # React writes lower case hex
        ("div", {"hidden": "", "id": "B:0"}, True),
        ("div", {"hidden": "", "id": "app-S:0"}, True),
        ("div", {"hidden": "", "id": None}, True),
        ("div", {"id": "S:0", "style": "display: none"}, True),
        ("dialog", {"hidden": "", "id": "S:0"}, True),
    ],
)
def test_hidden_element_spares_react_segments_only(tag, attributes, hidden):
    assert hidden_element(tag, attributes) is hidden


# (role, aria-modal) -> whether the element is a modal dialog by its ARIA attributes (rule 54)
DIALOG_ATTRIBUTES = [
    ("dialog", None, True),
    ("Dialog", None, True),
    (" alertdialog\n", None, True),
    ("dialog navigation", None, True),  # the first token is the role
    ("navigation dialog", None, False),
    ("dialogue", None, False),
    ("alert", None, False),
    ("alertdialogs", None, False),
    ("\vdialog", None, False),  # not HTML white space
    ("", None, False),
    (None, "true", True),
    (None, " TRUE ", True),
    (None, "false", False),
    (None, "", False),
    (None, "truee", False),
    ("main", "false", False),
]


@pytest.mark.parametrize(("role", "modal", "dialog"), DIALOG_ATTRIBUTES)
def test_aria_dialog_reads_the_role_and_aria_modal(role, modal, dialog):
    attributes = {k: v for k, v in (("role", role), ("aria-modal", modal)) if v is not None}
    assert aria_dialog(attributes) is dialog
    assert not hidden_element("div", attributes)  # walked: the labellers learnt them


DIALOG_PAGE = (
    "<main><p>Everyday sneakers.</p></main><footer><a href=#p>Privacy policy</a>"
    '<div id=p role="dialog" aria-modal="true"><h2>Privacy</h2><p>We collect your data.</p>'
    '<div role="dialog"><p>Nested</p></div></div><p>Between</p>'
    '<div role="region"><p>Newsletter</p></div><section aria-modal=TRUE>Sign <b>in</b>'
    '</section><span role="alertdialog">Cookies</span> and a tail</footer>'
)


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_the_blocks_of_aria_dialogs_are_parsed_and_named(parser):
    """A footer's privacy policy in a modal dialog: a browser shows it when its link is
    clicked. Its blocks are parsed and named; a block that only starts in one is not."""
    dialogs: list[int] = []
    blocks = parse_blocks(DIALOG_PAGE, parser=parser, dialogs=dialogs)
    assert [b.text for b in blocks] == [
        "Everyday sneakers.", "Privacy policy", "Privacy", "We collect your data.", "Nested",
        "Between", "Newsletter", "Sign in", "Cookies and a tail",
    ]  # fmt: skip
    assert dialogs == [2, 3, 4, 7]
    assert parse_blocks(DIALOG_PAGE, parser=parser) == blocks


def test_backends_agree_on_the_bundled_samples():
    for path in sorted(SAMPLES.glob("*.html")):
        html = decode_body(path.read_bytes()).text
        lexbor = [(b.text, b.tag_path) for b in parse_blocks(html, parser="lexbor")]
        reference = [(b.text, b.tag_path) for b in parse_blocks(html, parser="html5lib")]
        assert lexbor == reference, path.name
        assert len(lexbor) > 30


@pytest.mark.slow
def test_backends_give_the_same_block_texts_on_cleaneval_dev():
    pages = sorted(cleaneval_dir("dev").glob("*.html"))
    assert len(pages) == 58
    differing = []
    for path in pages:
        html = decode_body(path.read_bytes()).text
        lexbor = [b.text for b in parse_blocks(html, parser="lexbor")]
        reference = [b.text for b in parse_blocks(html, parser="html5lib")]
        if " ".join(lexbor).split() != " ".join(reference).split():
            differing.append(path.name)
    # measured: all 58 pages give identical block texts
    assert differing == []


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_deeply_nested_page_is_flattened_and_parsed_quickly(parser):
    # unflattened, lexbor alone takes 23 s on this page (quadratic in depth)
    html = "<div>" * 100_000 + "deep <b>text</b>" + "</div>" * 100_000 + "<p>after</p>"
    started = time.monotonic()
    blocks = parse_blocks(html, parser=parser, deadline=time.thread_time() + 10)
    assert [b.text for b in blocks] == ["deep text", "after"]
    assert blocks[0].depth <= MAX_NESTING_DEPTH + 2
    assert time.monotonic() - started < 5


def test_limit_nesting_keeps_text_and_shallow_markup():
    html = "<section>" + "<div>" * 10_000 + "x" + "</div>" * 10_000 + "</section><br>"
    flat = limit_nesting(html, max_depth=4)
    assert flat.count("<div>") == 3 and flat.count("</div>") == 3
    assert flat.startswith("<section>") and flat.endswith("</section><br>")
    assert "x" in flat
    small = "<div>" * 600 + "x" + "</div>" * 600
    assert limit_nesting(small) is small  # few tags: not even scanned


def test_nesting_counts_elements_a_browser_closes_as_closed():
    # end tags a page may leave out: the next sibling's start tag closes the element
    assert max_tag_depth("<ul>" + "<li>item" * 3000 + "</ul>") == 2
    assert max_tag_depth("<div>" + "<p>para <b>bold</b>" * 3000) == 3
    assert max_tag_depth("<dl>" + "<dt>term<dd>definition" * 2000 + "</dl>") == 2
    assert max_tag_depth("<select>" + "<option>one" * 3000 + "</select>") == 2
    assert max_tag_depth("<table>" + "<tr><td>a<td>b<th>c" * 2000 + "</table>") == 3
    assert max_tag_depth("<ul><li><p>one<li><p>two<li><ul><li>nested</ul></ul>") == 4
    # "/>" closes an svg or math element, a void one needs none; "<div/>" opens a div
    assert max_tag_depth("<svg>" + '<path d="M0 0"/><text>t</text>' * 3000 + "</svg>") == 2
    assert max_tag_depth("<math>" + "<mi/><mo/>" * 3000 + "</math><br><img>") == 1
    assert max_tag_depth("<div/>" * 600) == 600
    assert max_tag_depth("<p/>" * 600) == 1  # each p closes the one before
    # tags inside comments, raw text and quoted values are no tags
    assert max_tag_depth("<!-- " + "<div>" * 600 + " --><script>" + "<div>" * 600) == 0
    assert max_tag_depth('<a title="' + "<div>" * 600 + '">x</a>') == 1
    # an end tag a browser ignores (an open special element stands between) closes nothing
    assert max_tag_depth("<span><div></span>" * 600) == 1200
    assert max_tag_depth("<div>" * 600 + "</span>" * 600) == 600


def test_an_ordinary_page_of_many_tags_is_not_flattened():
    """A long page without </p> or </li>, with inline svg icons: 3 MB of markup the old count
    (+1 per start tag, -1 per end tag) put at depth 27,000, whose flattening merged its
    paragraphs and lost the svg's end tags."""
    page = (
        "<html><body><main>"
        + "<p>Paragraph number one.<ul><li>first item<li>second item</ul>" * 3000
        + '<svg><path d="M0 0"/><circle r="1"/></svg><p>The end.'
        + "</main></body></html>"
    )
    assert limit_nesting(page) is page
    texts = [b.text for b in parse_blocks(page)]
    assert len(texts) == 3 * 3000 + 1 and texts[-1] == "The end."


def test_flattening_keeps_raw_text_raw_and_every_word():
    deep = "<div>" * 5000
    html = (
        deep
        + "<script>var hidden = '<b>';</script><style>p { x: 1 }</style>"
        + '<span title="a>b">kept</span> <!-- <p> --> words<textarea><i>raw</textarea>'
        + "</div>" * 5000
        + "<p>after</p>"
    )
    flat = limit_nesting(html)
    assert flat.count("<div>") == MAX_NESTING_DEPTH and "<script>var hidden" in flat
    texts = [b.text for b in parse_blocks(html)]
    assert texts == ["kept words", "<i>raw", "after"]  # nothing of the script or the style


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_noscript_is_raw_text_as_with_scripting_on(parser):
    # Google Tag Manager's snippet, self-closed: parsed as markup, the iframe's raw text ran to
    # the end of the page
    gtm = (
        '<html><body><noscript><iframe src="https://www.googletagmanager.com/ns.html?id=GTM-X" '
        'height="0" width="0" style="display: none; visibility: hidden;" /></noscript>'
        "<h1>Title</h1><p>Main text of the page.</p></body></html>"
    )
    assert [b.text for b in parse_blocks(gtm, parser=parser)] == ["Title", "Main text of the page."]
    # a tracking pixel in a head's noscript closed the head: the title became page text
    head = (
        '<html><head><noscript><img src="p.gif"></noscript><title>Page title</title></head>'
        "<body><p>Body text.</p></body></html>"
    )
    assert [b.text for b in parse_blocks(head, parser=parser)] == ["Body text."]


POST = "<div class=post><p>{}. A reply in the thread, with enough words to be read.</p></div>"


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_a_page_built_by_scripts_is_read_from_its_noscript(parser):
    """A forum whose posts only a client without scripts sees (Discourse, Flarum)."""
    posts = "".join(POST.format(n) for n in range(1, 6))
    html = (
        "<html><head><title>Thread</title></head><body><header><a href=/>Forum</a></header>"
        f"<div id=app></div><noscript><h1>The thread</h1>{posts}</noscript>"
        "<noscript><iframe src=https://www.googletagmanager.com/ns.html /></noscript>"
        "<footer>Powered by a forum</footer></body></html>"
    )
    texts = [b.text for b in parse_blocks(html, parser=parser)]
    assert texts[:3] == [
        "Forum",
        "The thread",
        "1. A reply in the thread, with enough words to be read.",
    ]
    assert texts[-1].startswith("5. A reply") and len(texts) == 7  # the swallowed footer too
    blocks = parse_blocks(html, parser=parser)
    assert blocks[1].tag_path == "html body noscript h1"


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_a_noscript_notice_on_an_ordinary_page_changes_nothing(parser):
    article = "<p>" + "An ordinary article with its own text. " * 8 + "</p>"
    notice = "<noscript><p>Please enable JavaScript to use this site.</p></noscript>"
    pages = [
        (f"<body>{notice}<h1>Title</h1>{article}{article}</body>", 3),
        (f"<body><div id=root></div>{notice}</body>", 0),  # a notice is not a page
        # inside only 3 times the text outside: the page stands as it is
        (f"<body>{article}<noscript>{article * 3}</noscript></body>", 1),
    ]
    for html, count in pages:
        blocks = parse_blocks(html, parser=parser)
        assert len(blocks) == count and not any("JavaScript" in b.text for b in blocks)


def test_a_deep_noscript_page_is_flattened_before_its_second_parse():
    html = "<body><noscript>" + "<div>" * 100_000 + "deep <b>text</b> " * 30 + "</div>" * 100_000
    started = time.monotonic()
    blocks = parse_blocks(html + "</noscript></body>", deadline=time.monotonic() + 10)
    assert [b.text for b in blocks] == [" ".join(["deep text"] * 30)]
    assert time.monotonic() - started < 5


def test_a_past_deadline_stops_both_parsers():
    for parser in ("lexbor", "html5lib"):
        html = "<p>text</p>" * 5000
        with pytest.raises(TimeBudgetExceeded):
            parse_blocks(html, parser=parser, deadline=time.thread_time() - 1)


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_a_page_of_more_blocks_than_max_blocks_stops_parsing(parser):
    html = "<p>A river is a natural stream of water.</p>" * 3000
    assert len(parse_blocks(html, parser=parser, max_blocks=3000)) == 3000
    with pytest.raises(PageTooLarge, match="max_blocks=2999"):  # over by one, at the end
        parse_blocks(html, parser=parser, max_blocks=2999)
    with pytest.raises(PageTooLarge, match="max_blocks=1500"):  # stopped on the way
        parse_blocks(html * 100, parser=parser, max_blocks=1500)


def test_attribute_work_reads_tags_as_the_tokenizer_does():
    fast = native_module("lexbor_walk")
    names = " ".join(f"data-a{i}" for i in range(200))  # a tag long enough for both paths
    cases = {
        f"<p {names}>x</p>": 200**2,
        f"<div {names} title='a > b' class=\"c\">x": 202**2,  # ">" inside quotes
        f"<P {names}/ ID = x / >x<p a b>": 201**2 + 0,  # a short tag: Python path skips it
        f"<script {names}>if (a<b {names}) {{}}</script><p>": 200**2,  # raw text skipped
        f"<!-- <p {names}> --><p>": 200**2,  # comments are not read as such: an estimate
    }
    for html, expected in cases.items():
        assert _attribute_work(html) == expected
        if fast is not None:
            assert fast.attribute_work(html) >= expected
            assert fast.attribute_work(html.encode()) == attribute_work(html)
    if fast is not None:
        assert fast.attribute_work("<p a b c>é<br d e>😀") == 9 + 4
        assert fast.attribute_work("<style a>p<b c d></style><scripts e f>") == 1 + 4


def test_attribute_work_of_bytes_is_that_of_text_read_character_by_character():
    """Natively, a page's UTF-8 bytes pass over attribute names and unquoted values in a tight
    loop, and over quoted values with memchr; text of four bytes a character is read one
    character at a time: tag soup gives both the same sums and names."""
    import random

    fast = native_module("lexbor_walk")
    if fast is None:
        pytest.skip("the native walk is not built")
    rnd = random.Random(17)
    pieces = ["<", ">", "<p", "<P ", "<script", "</script", "<style", "</style>", " ", "\t",
              "\n", "\f", "/", "=", "'", '"', "a", "B", "data-x", "id", "x y", "é",
              "<!--"]  # fmt: skip
    for _ in range(20_000):
        html = "".join(rnd.choices(pieces, k=rnd.randint(0, 40)))
        wide = "\U0001f600" + html  # four bytes a character, before any tag
        assert fast.attribute_work(html.encode()) == fast.attribute_work(wide), html
        assert fast.markup_work(html.encode(), 3) == fast.markup_work(wide, 3), html


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
def test_an_element_of_thousands_of_attributes_is_refused_before_parsing(parser):
    html = "<p " + " ".join(f"a{i}" for i in range(40_000)) + ">Some text.</p>"
    started = time.monotonic()
    with pytest.raises(PageTooLarge, match="too many attributes"):
        parse_blocks(html, parser=parser)
    assert time.monotonic() - started < 1  # lexbor alone: 2.4 s, html5lib 33 s
    assert parse_blocks(html[:20_000] + ">Some text.</p>", parser=parser)[0].text == "Some text."


def test_markup_work_counts_distinct_tag_and_attribute_names():
    fast = native_module("lexbor_walk")
    cases = {  # page: its distinct names, counted when it reads more than 3 in all
        "<p a b c>\u00e9<br d e>\U0001f600<P A>": 7,  # p a b c br d e: case folded
        "<p title=\"a b=c d\" Title>x</p><div a='>' b>": 5,  # values are no names
        "<style a>p<b c d></style><scripts e f>": 5,  # nor is a style's text
        "<p id=1><p id=2><p id=3><title title>": 4,  # a tag and an attribute: two names
    }
    for html, distinct in cases.items():
        if fast is not None:
            assert fast.markup_work(html, 3) == (attribute_work(html), distinct), html
            assert fast.markup_work(html.encode(), 3)[1] == distinct
            assert fast.markup_work(html, 50)[1] >= distinct  # names read, not told apart
    assert _markup_work("<p id=1>" * 10_000, 100)[1] == 2
    assert _markup_work("<p a>", 3) == (0, 2)  # too short for 4 names: not counted
    many = "".join(f"<p data-x{i}=1>" for i in range(30))
    for work in (markup_work, _markup_work):
        assert work(many, 10)[1] > 10  # the caller's limit is passed: enough said


@pytest.mark.parametrize("parser", ["lexbor", "html5lib"])
@pytest.mark.parametrize("name", ["tag", "attribute"])
def test_a_page_of_too_many_distinct_names_is_refused_before_parsing(parser, name):
    # lexbor's name tables: 160,000 distinct attribute names took 5.9 s to parse, tags 3.4 s
    n = 160_000
    if name == "tag":
        html = "".join(f"<p><t{i}>x</t{i}></p>" for i in range(n))
    else:
        html = "".join(f"<p a{i}=1>x</p>" for i in range(n))
    started = time.monotonic()
    with pytest.raises(PageTooLarge, match=f"more than {MAX_NAMES} distinct tag and attribute"):
        parse_blocks(html, parser=parser)
    assert time.monotonic() - started < 1
    assert len(parse_blocks(html[: len(html) // 20], parser="lexbor")) > 1000  # 8,000: parsed


def test_plain_text_is_recognised_and_split_by_lines():
    text = "First paragraph here.\n\nSecond   paragraph.\n"
    assert not looks_like_html(text)
    assert looks_like_html("<p>x</p>")
    # pages whose first tag comes late, or is no common one
    assert looks_like_html("\n" * 70_000 + "<html><body><p>x</p>")
    assert looks_like_html("<!-- " + "licence " * 10_000 + "-->\n<x-app>Text</x-app>")
    assert looks_like_html('<svg viewBox="0 0 1 1"><path d="M0 0"/></svg>' * 2000)
    assert not looks_like_html("a < b and c > d, " * 10_000)
    assert looks_like_html("<dl><dd>text") and looks_like_html("<my-app>Text</my-app>")
    assert [b.text for b in parse_text_blocks(text)] == [
        "First paragraph here.",
        "Second paragraph.",
    ]


def test_unknown_parser_is_an_error():
    with pytest.raises(ValueError, match="unknown parser"):
        parse_blocks("<p>x</p>", parser="regex")


def test_deep_markup_with_an_unclosed_tag_is_flattened_in_linear_time():
    started = time.monotonic()
    for tail in ("<bx" + "x" * 400_000, "<a " * 150_000):
        html = "<html><body>" + "<div>" * 9000 + "<p>Deep text.</p>" + tail
        assert "Deep text." in limit_nesting(html)
    assert time.monotonic() - started < 1  # 45 s and 15 s before


def test_a_page_parsed_again_without_scripts_names_the_dialogs_of_that_parse():
    """A thread served whole inside <noscript> is parsed as a client without scripts shows
    it; the dialogs named are that parse's (after what the list held already)."""
    post = "A post of the thread, long enough to be most of the page's text. " * 5
    html = (
        '<div role="dialog"><p>Script dialog</p></div><noscript><p>'
        + post
        + '</p><div aria-modal="true"><p>Sign in</p></div></noscript>'
    )
    dialogs = [99]
    blocks = parse_blocks(html, dialogs=dialogs)
    assert [b.text for b in blocks] == ["Script dialog", post.strip(), "Sign in"]
    assert dialogs == [99, 0, 2]
    scripted: list[int] = []
    parse_blocks('<div role="dialog"><p>Script dialog</p></div><noscript>x</noscript>',
                 dialogs=scripted)  # fmt: skip
    assert scripted == [0]
