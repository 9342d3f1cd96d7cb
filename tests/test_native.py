"""The compiled speed-ups give exactly what their pure Python references give."""

import array
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from stream_cleaner import lm, parse, segment
from stream_cleaner._native import MODULES, native_module, version_mismatch
from stream_cleaner.decode import decode_body
from stream_cleaner.document import Block
from stream_cleaner.lm import SentenceScore, normalize_many

from .conftest import REPO, SAMPLES, cleaneval_dir


@pytest.fixture(scope="module")
def native():
    """The three modules; missing ones fail in CI (setup.sh builds them) and skip elsewhere."""
    modules = {name: native_module(name) for name in MODULES}
    missing = [name for name, module in modules.items() if module is None]
    if missing:
        message = f"native speed-ups not built ({missing}): run python scripts/build_native.py"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return modules


TRICKY_PAGE = """<!doctype html><html><head><title>t</title><style>p{}</style></head><body>
<my-widget>custom <b>element</b> text</my-widget><!-- a comment -->
<div>before <a href=x>a <i>link</i></a> after<svg><text>no</text></svg></div>
<template><p>hidden template</p></template>
<ul><li>one<li>two <span> </span> three</li></ul><p>   </p><p>Caf\u00e9 \u6771\u4eac &amp; more</p>
<table><tr><td>cell<td><form><select><option>opt</select></form></table>
<h2>Head<br>line</h2>tail text<p><x-y:z>odd name</x-y:z></p><![CDATA[cdata]]><?pi stuff?>
</body></html>"""


def _walks(html: str):
    from selectolax.lexbor import LexborHTMLParser

    html = parse.limit_nesting(html)
    reference = parse._walk(LexborHTMLParser(html).root, None)
    fast = native_module("lexbor_walk").walk_blocks(
        LexborHTMLParser(html), Block, parse.BLOCK_TAGS, parse.SKIP_TAGS, parse.HEADING_TAGS,
        parse.LIST_TAGS, parse.TABLE_TAGS, parse.FORM_TAGS, None, parse.TimeBudgetExceeded,
        parse.CLASS_WORD_GROUPS,
    )  # fmt: skip
    return reference, fast


def test_native_walk_keeps_custom_tags_to_their_page(native):
    """Custom tag ids are addresses in their document: pages with other custom elements, one
    after the other, each get their own names, and standard paths remembered across pages
    do not leak into custom ones (or other tag sets)."""
    pages = [
        f"<html><body><x-{name}><p>one {name}</p></x-{name}><div><{name}-y>two</{name}-y>"
        f"<p>three</p></div><nav><ul><li>four</li></ul></nav></body></html>"
        for name in ("aa", "bb", "cc", "aa", "dd-ee", "li", "h1")
    ]
    for page in pages * 2:
        reference, fast = _walks(page)
        assert fast == reference, page
    from selectolax.lexbor import LexborHTMLParser

    # other tag sets: li a heading, no tables
    args = (Block, parse.BLOCK_TAGS, parse.SKIP_TAGS, {"li"}, parse.LIST_TAGS, set(), set())
    blocks = native_module("lexbor_walk").walk_blocks(
        LexborHTMLParser(pages[0]), *args, None, parse.TimeBudgetExceeded, parse.CLASS_WORD_GROUPS
    )
    assert [(b.text, b.in_heading) for b in blocks if b.text == "four"] == [("four", True)]
    # other class words: group 0 "box" anywhere, group 1 the whole word "x", then "any"
    html = '<div class="Boxed"><p id="a-X-1">one</p><p class="xy">two</p></div><p class=z>3</p>'
    groups = (("box", ("box",)), ("x", ("=x",)))
    blocks = native_module("lexbor_walk").walk_blocks(
        LexborHTMLParser(html), *args, None, parse.TimeBudgetExceeded, groups
    )
    assert [b.class_words for b in blocks] == [0x112, 0x102, 0x100]
    assert [b.comment_marks for b in blocks] == [1, 1, 1]  # group 0's elements: div.Boxed
    blocks = native_module("lexbor_walk").walk_blocks(
        LexborHTMLParser(html), *args, None, parse.TimeBudgetExceeded, None
    )
    assert [(b.text, b.class_words, b.comment_marks) for b in blocks] == [
        ("one", 0, 0), ("two", 0, 0), ("3", 0, 0)
    ]  # fmt: skip


def test_native_class_words_match_the_reference_on_random_attribute_values(native):
    """The native match tries at each position only the words starting with the two
    characters there: attribute values made of the class words' pieces, cases, separators
    and ends give the groups the Python walk finds, and a second character that is not a
    letter is compared, not only bucketed ("a-b" is not "a_b")."""
    import random

    rng = random.Random(7)
    words = [w.lstrip("^=") for _, group in parse.CLASS_WORD_GROUPS for w in group]
    pieces = [*words, *(w[: rng.randint(1, len(w))] for w in words), "-", "_", " ", "1", "x"]
    values = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(400)]
    values += [v.upper() for v in values[:50]] + ["ad", "Ad-x", "xad", "advertise", "dfp", "a"]
    page = "".join(f'<p class="{v}" id="{v[::-1]}">t</p>' for v in values)
    reference, fast = _walks(page)
    assert fast == reference
    assert len({b.class_words for b in fast}) > 100  # the values reach many sets of groups
    from selectolax.lexbor import LexborHTMLParser

    args = (Block, parse.BLOCK_TAGS, parse.SKIP_TAGS, parse.HEADING_TAGS, parse.LIST_TAGS)
    groups = (("dash", ("a-b",)), ("under", ("=a_b",)), ("one", ("=q",)))
    html = '<p class="xa_b">1</p><p class="a-b">2</p><p class="z q">3</p><p class="a_b q1">4</p>'
    blocks = native_module("lexbor_walk").walk_blocks(
        LexborHTMLParser(html), *args, set(), set(), None, parse.TimeBudgetExceeded, groups
    )
    assert [b.class_words for b in blocks] == [0x1000, 0x1001, 0x1100, 0x1010]


def test_native_class_words_remembered_on_their_own_page_only(native):
    """The walk remembers what each class or id value matched, for the page's later values of
    the same bytes: values repeated, values sharing a slot of its table (hundreds of them,
    2,048 slots), and pages one after another whose values have the same lengths but other
    words all give the Python walk's groups. (A slot of an earlier page is never read: its
    document is gone. That is memory safety, which no answer here can show.)"""
    import random

    rng = random.Random(13)
    words = [w.lstrip("^=") for _, group in parse.CLASS_WORD_GROUPS for w in group]
    pieces = [*words, *(w[: rng.randint(1, len(w))] for w in words), "-", "_", " ", "1", "x"]

    def draw():
        return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(600)]

    values = draw()

    def page(values):
        return "".join(f'<div class="{v}"><p id="{v}">t</p></div>' for v in values)

    found = []
    for round in range(4):
        repeated = values * 3
        rng.shuffle(repeated)
        reference, fast = _walks(page(repeated))
        assert fast == reference, round
        found.append([b.class_words for b in fast])
        # the next page: values of the same lengths, other words
        values = [
            (new + "x" * len(old))[: len(old)] for old, new in zip(values, draw(), strict=True)
        ]
    assert all(len(set(codes)) > 100 for codes in found)
    assert found[0] != found[1] != found[2] != found[3]


def test_native_walk_walks_react_streamed_segments_as_the_reference_does(native):
    from .test_parse import REACT_STREAMED_PAGE

    reference, fast = _walks(REACT_STREAMED_PAGE)
    assert fast == reference
    texts = [block.text for block in fast]
    assert texts[-4:] == ["Title", "The story, told late.", "Comments", "Cell"]
    assert fast[-4].tag_path == "html body div article h1"


def test_native_walk_names_aria_dialogs_as_the_reference_does(native):
    from selectolax.lexbor import LexborHTMLParser

    from .test_parse import DIALOG_ATTRIBUTES, DIALOG_PAGE

    pages = [DIALOG_PAGE, TRICKY_PAGE]
    for role, modal, _ in DIALOG_ATTRIBUTES:
        attributes = "".join(
            f' {name}="{value}"' for name, value in (("role", role), ("aria-modal", modal))
            if value is not None
        )  # fmt: skip
        pages.append(f"<p>before</p><div{attributes}><p>inside</p>text</div><p>after</p>")
    for html in pages:
        found: dict[str, list[int]] = {"reference": [], "native": []}
        reference = parse._walk(LexborHTMLParser(html).root, None, dialogs=found["reference"])
        fast = native_module("lexbor_walk").walk_blocks(
            LexborHTMLParser(html), Block, parse.BLOCK_TAGS, parse.SKIP_TAGS,
            parse.HEADING_TAGS, parse.LIST_TAGS, parse.TABLE_TAGS, parse.FORM_TAGS, None,
            parse.TimeBudgetExceeded, parse.CLASS_WORD_GROUPS, 0, None, None, found["native"],
        )  # fmt: skip
        assert fast == reference, html
        assert found["native"] == found["reference"], html
    assert found["native"] == []  # the tricky page has none
    for (_, _, dialog), html in zip(DIALOG_ATTRIBUTES, pages[2:], strict=True):
        found_here: list[int] = []
        parse.parse_blocks(html, dialogs=found_here)
        assert found_here == ([1, 2] if dialog else []), html


def test_native_walk_equals_the_reference_on_tricky_markup_and_samples(native):
    pages = [TRICKY_PAGE, "", "<p>only", "text without tags", "<div>" * 3000 + "deep"]
    pages += [decode_body(path.read_bytes()).text for path in sorted(SAMPLES.glob("*.html"))]
    for html in pages:
        reference, fast = _walks(html)
        assert fast == reference
    reference, _ = _walks(TRICKY_PAGE)
    paths = {block.text: block.tag_path for block in reference}
    assert paths["custom element text"] == "html body my-widget"
    assert paths["odd name"] == "html body p x-y:z"
    assert paths["before a link after"] == "html body div"
    assert not any("hidden template" in text or text == "no" for text in paths)


NOSCRIPT_PAGE = """<html><head><noscript><img src=p.gif><link rel=x></noscript><title>t</title>
</head><body><noscript><iframe src="https://example.com/ns.html" /></noscript><p>Intro</p>
<noscript><div class=post><p>Caf\u00e9 \u6771\u4eac post \U0001f600</p><ul><li>one<li>two</ul></div>
</noscript><div hidden><noscript>hidden one</noscript></div><noscript></noscript>
<noscript style="display:none">styled</noscript><p>after</p></body></html>"""


def test_native_walk_equals_the_reference_with_scripting_on_and_off(native):
    """With scripting on, both walks pass the noscript elements and count the same raw
    characters in them; with it off and noscript walked into (`parse_blocks`' page without
    scripts), they cut the same blocks."""
    from selectolax.lexbor import LexborHTMLParser

    walk = native_module("lexbor_walk").walk_blocks
    args = (
        parse.HEADING_TAGS, parse.LIST_TAGS, parse.TABLE_TAGS, parse.FORM_TAGS, None,
        parse.TimeBudgetExceeded, parse.CLASS_WORD_GROUPS, 0, parse.too_many_blocks,
    )  # fmt: skip
    pages = [NOSCRIPT_PAGE, TRICKY_PAGE, "<noscript>only</noscript>", "<p>no noscript</p>"]
    pages += [decode_body(path.read_bytes()).text for path in sorted(SAMPLES.glob("*.html"))]
    for html in pages:
        counted, fast_counted = [], []
        reference = parse._walk(LexborHTMLParser(html, scripting=True).root, None, noscript=counted)
        fast = walk(LexborHTMLParser(html, scripting=True), Block, parse.BLOCK_TAGS,
                    parse.SKIP_TAGS, *args, fast_counted)  # fmt: skip
        assert fast == reference and fast_counted == counted, html[:80]
        skip = parse._NOSCRIPT_PAGE_SKIP_TAGS
        reference = parse._walk(LexborHTMLParser(html).root, None, skip_tags=skip)
        fast = walk(LexborHTMLParser(html), Block, parse.BLOCK_TAGS, skip, *args)
        assert fast == reference, html[:80]
    counted = []
    parse._walk(LexborHTMLParser(NOSCRIPT_PAGE, scripting=True).root, None, noscript=counted)
    iframe, post = (part.split("</noscript>")[0] for part in NOSCRIPT_PAGE.split("<noscript>")[2:4])
    # the head is not walked, nor the hidden div: a noscript in either is not counted
    assert counted == [len(iframe), len(post), 0, len("styled")]


def test_native_walk_collapses_white_space_as_str_split_does(native):
    """Text nodes full of white space of every kind (and characters that only look blank):
    each block's text is the words of its nodes joined by one space, as the reference's
    " ".join(text.split()) makes it."""
    rnd = random.Random(17)
    pieces = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u1680",
              "\u2000", "\u2028", "\u3000", "\u200b", "\ufeff", "\x01", "a", "B", "\u00e9",
              "\u6771", "\U0001f600", "x y", "&nbsp;", "&#x2003;"]  # fmt: skip
    tags = ["p", "span", "b", "div", "a", "li"]
    for _ in range(300):
        body = "".join(
            f"<{tag}>{''.join(rnd.choices(pieces, k=rnd.randint(0, 8)))}</{tag}>"
            for tag in rnd.choices(tags, k=rnd.randint(1, 12))
        )
        reference, fast = _walks(f"<html><body>{body}</body></html>")
        assert fast == reference, body


def test_native_count_char_equals_str_count(native):
    rnd = random.Random(5)
    alphabet = ["<", "a", " ", "\u00e9", "\u6771", "\U0001f600", "\u3c3c", "\u013c"]
    count = native["lexbor_walk"].count_char
    for n in (0, 1, 7, 64, 1000, 70_000, 140_001):
        for letters in (alphabet[:3], alphabet[:4], alphabet[:6], alphabet):
            text = "".join(rnd.choices(letters, k=n))
            for char in ("<", "\u3c3c", "\U0001f600", "\u013c"):
                assert count(text, char) == text.count(char)


def test_native_max_tag_depth_equals_the_nesting_model(native, monkeypatch):
    """Random runs of tags the model treats apart (implied ends, tables, svg's "/>", raw text,
    comments, quotes, cut-off tags): the native count is `parse._nest`'s, with scripting on
    and off, and with a search window small enough to be reached."""
    rnd = random.Random(9)
    pieces = ["<", "</", ">", "/", "/>", " ", "\t", "=", '"', "'", "\u3000", "a", "Z", "\u00e9"]
    pieces += ["\u6771", "\U0001f600", "-", "!", "?", "<!--", "-->", "<!-->", "<!doctype html>"]
    pieces += ["<?x?>", "</>", "p", "<p>", "</p>", "<P>", "<li>", "</li>", "<ul>", "</ul>", "<dl>"]
    pieces += ["<dt>", "<dd>", "<div>", "</div>", "<div/>", "<table>", "</table>", "<tr>", "<td>"]
    pieces += ["<th>", "</td>", "</tr>", "<tbody>", "<caption>", "<option>", "<optgroup>", "<h1>"]
    pieces += ["<h2>", "</h1>", "<button>", "<span>", "</span>", "<b>", "</b>", "<svg>", "</svg>"]
    pieces += ["<svg/>", '<path d="M0/>"/>', "<g>", "</g>", "<foreignObject>", "<math>", "<mi>"]
    pieces += ["<script>", "</script>", "<SCRIPT>", "</scRipt >", "<style>", "</style>", "<title>"]
    pieces += ["<textarea>", "</title>", "<noscript>", "</noscript>", "<iframe>", "<plaintext>"]
    pieces += ["<html>", "<head>", "</head>", "<body>", "</body>", "<br>", "</br>", "<img/>"]
    pieces += ["<hr>"]
    pieces += ["<a b='>'>", '<a b = ">">', "<x-y>", "</x-y>", "<\u00c9>", "</\u00e9>", "<template>"]
    pieces += ["<div a=b/>", "<abcdefghijklmnopq>", "</abcdefghijklmnopq>"]
    fast = native["lexbor_walk"].max_tag_depth
    texts = ["", "<", "</", "<a", "</a", "<br", "<br>", "</br>", "x</p><p>", "<!--", "<!-"]
    texts += ["".join(rnd.choices(pieces, k=rnd.randint(0, 80))) for _ in range(10000)]
    kinds = parse._NESTING_KINDS
    for scripting in (True, False):
        expected = [parse._nest(text, scripting) for text in texts]
        assert [fast(text, kinds, parse._NESTING_SEARCH, scripting) for text in texts] == expected
    monkeypatch.setattr(parse, "_NESTING_SEARCH", 3)
    expected = [parse._nest(text, True) for text in texts]
    assert [fast(text, kinds, 3, True) for text in texts] == expected
    monkeypatch.undo()
    assert parse.max_tag_depth("<div>" * 600) == 600  # through the native module
    assert parse.limit_nesting("<div>x" * 9000).count("<div>") == parse.MAX_NESTING_DEPTH


def test_native_language_helpers_equal_their_references(native):
    import array

    from stream_cleaner import language

    rnd = random.Random(13)
    alphabet = ["a", "Z", " ", "\u00e9", "\u0416", "\u05d0", "\u6771", "\u0e01", "\u0905", "1"]
    alphabet += ["\u036f", "\u0370", "\u03ff", "\u0400", "\ufeff", "\uff01", "\U0001f600"]
    fast = native["text_features"]
    for _ in range(3000):
        texts = [
            "".join(rnd.choices(alphabet, k=rnd.choice((0, 1, 5, 11, 12, 13, 40))))
            * rnd.randint(1, 3)
            for _ in range(rnd.randint(0, 30))
        ]
        for k in (0, 1, 5, 8):
            assert fast.longest(texts, k) == sorted(texts, key=len, reverse=True)[:k]
        for script, pattern in language._FOREIGN.items():
            assert fast.with_code_points(
                texts, language.MIN_BLOCK_CHARS, language._FOREIGN_BOUNDS[script]
            ) == language._with_foreign_letters(texts, pattern.search)
        assert fast.with_code_points(texts, 3, array.array("I")) == []
    with pytest.raises(ValueError):
        fast.longest(["a"], 9)
    # rule 48's pseudo-words: kana, ideographs (one outside the first plane) and their edges
    alphabet += ["\u3040", "\u30ff", "\u4e00", "\u9fff", "\uff66", "\U00020000", "\u3002"]
    bounds = language._PSEUDO_WORD_BOUNDS
    for _ in range(3000):
        text = "".join(rnd.choices(alphabet, k=rnd.randint(0, 40)))
        assert fast.pseudo_words(text, bounds, 2) == language._pseudo_words(text), text
    assert fast.pseudo_words("東京都庁", bounds, 2) == "東京 都庁"
    with pytest.raises(ValueError):
        fast.pseudo_words("東京都庁", array.array("I", [1]), 2)


def test_native_langid_predicts_what_fasttext_predicts(native):
    """`langid.Predictor` gives fastText's label and probability, to the bit: on the block
    texts of CleanEval dev and the samples, as the identifier cuts them, and on random text of
    many scripts with every separator fastText knows, labels and end-of-sentence tokens."""
    from stream_cleaner.fasttext_file import read_fasttext
    from stream_cleaner.language import SAMPLE_CHARS, VOTE_CHARS, _model_file, identifier

    fasttext_model = identifier().model  # the wheel: the reference
    with _model_file() as path:
        predictor = native["langid"].Predictor(read_fasttext(path))

    def reference(text):
        labels, scores = fasttext_model.predict(text, k=1)
        return (labels[0], scores[0]) if labels else None

    texts = []
    pages = [p.read_bytes() for p in sorted(cleaneval_dir("dev").glob("*.html"))[:40]]
    pages += [p.read_bytes() for p in sorted(SAMPLES.glob("*.html"))]
    for page in pages:
        for block in parse.parse_blocks(decode_body(page).text):
            for size in (VOTE_CHARS, SAMPLE_CHARS):
                texts.append(" ".join(block.text[: 2 * size].split())[:size])
    rnd = random.Random(7)
    alphabet = list("abcdefghij ABC éüñßøЖжЯя中文日本語한국어ไทย")
    alphabet += list("العربيةעבריתελληνικά.,!?'-0123456789_<>/")
    alphabet += [" ", " ", "\t", "\r", "\v", "\f", "\0", "__label__en", "</s>", "__label__x"]
    for _ in range(3000):
        texts.append("".join(rnd.choices(alphabet, k=rnd.randint(0, 60))))
    texts += ["", " ", "</s> words after the end are not read", "__label__de Wort"]
    assert len(texts) > 5000
    for text in texts:
        assert predictor.predict(text) == reference(text), text
    with pytest.raises(ValueError):
        predictor.predict("one line\nat a time")


def test_native_walk_decodes_text_nodes_as_python_does(native):
    """The walk decodes lexbor's UTF-8 itself: well-formed or not (bytes handed to lexbor
    as they are), each block is what Python's ``decode("utf-8", "replace")`` of its nodes
    gives the reference."""
    from selectolax.lexbor import LexborHTMLParser

    rnd = random.Random(23)
    pieces = [b"a", b" ", b"\n", b"caf\xc3\xa9", b"\xe6\x9d\xb1", b"\xf0\x9f\x98\x80",
              b"\xc2\xa0", b"\xe3\x80\x80", b"\xff", b"\xc3", b"\xe6\x9d", b"\xed\xa0\x80",
              b"\xe0\x80\xaf", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80", b"\xf0\x9f"]  # fmt: skip
    tags = [b"p", b"span", b"a", b"li"]
    for _ in range(300):
        body = b"".join(
            b"<%s>%s</%s>" % (tag, b"".join(rnd.choices(pieces, k=rnd.randint(0, 8))), tag)
            for tag in rnd.choices(tags, k=rnd.randint(1, 8))
        )
        reference = parse._walk(LexborHTMLParser(body).root, None)
        fast = native["lexbor_walk"].walk_blocks(
            LexborHTMLParser(body), Block, parse.BLOCK_TAGS, parse.SKIP_TAGS,
            parse.HEADING_TAGS, parse.LIST_TAGS, parse.TABLE_TAGS, parse.FORM_TAGS, None,
            parse.TimeBudgetExceeded, parse.CLASS_WORD_GROUPS,
        )  # fmt: skip
        assert fast == reference, body


@pytest.mark.slow
def test_native_walk_split_and_scoring_equal_the_reference_on_cleaneval_dev(native, default_model):
    scorer = native["kenlm_score"].PageScorer(default_model.model)
    for path in sorted(cleaneval_dir("dev").glob("*.html")):
        html = decode_body(path.read_bytes()).text
        reference, fast = _walks(html)
        assert fast == reference, path.name
        sentences, block_of = native["sentences"].split_blocks(
            [b.text for b in fast], [b.index for b in fast], segment.ABBREVIATIONS
        )
        expected: list[str] = []
        for block in fast:
            found = segment.split_sentences(block.text)
            expected += found
            assert block_of.count(block.index) == len(found)
        assert sentences == expected, path.name
        # against kenlm's own Model.score and vocabulary, sentence by sentence (score_many
        # would be the native scorer again); twice, the second time from the scorer's memos
        expected_scores = [default_model.score(n) for n in normalize_many(sentences)]
        for _ in range(2):
            scores = scorer.score_texts(sentences, SentenceScore, normalize_many)
            assert scores == expected_scores, path.name
            assert all(type(score) is SentenceScore for score in scores)
            columns = scorer.score_columns(sentences, SentenceScore, normalize_many)
            assert columns == lm.score_columns(expected_scores), path.name


def test_native_split_equals_the_reference_on_random_text(native):
    alphabet = list("aAbZx .!?\u2026\"'\u201d\u2019\u00bb)]")
    alphabet += list("\u3002\uff01\uff1f\u300d\u300f\uff09\u00e9")
    alphabet += ["Mr", "e.g", "J", "  ", "\u00a0", "1"]
    rnd = random.Random(7)
    for _ in range(20000):
        text = " ".join("".join(rnd.choices(alphabet, k=rnd.randint(0, 14))).split())
        got, block_of = native["sentences"].split_blocks([text], [3], segment.ABBREVIATIONS)
        assert got == segment.split_sentences(text), repr(text)
        assert block_of == [3] * len(got)
    cases = ["Mr. Smith went. Then e.g. Bob came.", "J. R. R. Tolkien wrote it. It sold."]
    for text in cases:
        assert native["sentences"].split_blocks([text], [0], segment.ABBREVIATIONS)[0] == (
            segment.split_sentences(text)
        )


def test_native_normalise_and_score_equal_the_reference_on_random_text(native, tiny_model):
    scorer = native["kenlm_score"].PageScorer(tiny_model.model)
    rnd = random.Random(11)
    alphabet = [chr(c) for c in range(128) if c != 10] + ["the ", "cat ", "Sat", "42"]
    alphabet += ["caf\u00e9", "\u6771", "\u2019", "`"]
    alphabet += list(lm._FOLD)  # texts whose only non-ASCII characters fold to ASCII, too
    # and Latin letters, symbols, punctuation, spaces the scorer normalises natively, next to
    # characters it leaves to the reference (a capital I with a dot lower-cases to two, a
    # combining mark, Greek, Cyrillic)
    alphabet += [chr(c) for c in rnd.sample(range(0x80, 0x250), 60)]
    alphabet += [chr(c) for c in rnd.sample(range(0x2000, 0x2C00), 60)]
    alphabet += list("\u0130\u212a\u0301\u20d0\u0085\u2028\u00ad\u00df\u01c5\u00b2\u03a3\u0416")
    texts = ["".join(rnd.choices(alphabet, k=rnd.randint(0, 16))) for _ in range(20000)]
    # kenlm's own lookups (its Python binding ends a sentence at a NUL: those texts left out),
    # then the same again from the scorer's warm memos
    texts_without_nul = [text for text in texts if "\x00" not in text]
    expected = [tiny_model.score(n) for n in normalize_many(texts_without_nul)]
    assert scorer.score_texts(texts_without_nul, SentenceScore, normalize_many) == expected
    assert scorer.score_texts(texts_without_nul, SentenceScore, normalize_many) == expected
    assert scorer.score_texts(texts, SentenceScore, normalize_many) == (
        tiny_model.score_many(normalize_many(texts))
    )
    # the same scores as columns, each value of the same type
    columns = scorer.score_columns(texts, SentenceScore, normalize_many)
    assert columns == lm.score_columns(tiny_model.score_many(normalize_many(texts)))
    assert [type(x) for column in columns for x in column] == [
        type(x) for column in lm.score_columns(scorer.score_texts(texts, SentenceScore,
                                               normalize_many)) for x in column
    ]  # fmt: skip
    # sentences longer than the scorer's chunk of prefetched tokens (32), cut anywhere
    words = [text for text in texts_without_nul if text.strip()]
    long_texts = [" ".join(rnd.choices(words, k=rnd.randint(20, 200))) for _ in range(300)]
    expected = [tiny_model.score(n) for n in normalize_many(long_texts)]
    assert scorer.score_texts(long_texts, SentenceScore, normalize_many) == expected
    # per sentence, too: a page's other sentences must not change how one is normalised
    for text in texts[:2000]:
        assert normalize_many([text]) == normalize_many(["caf\u00e9 \u00b4 \u6771", text])[1:]


def test_native_scorer_memo_tables_are_given_back(native, default_model):
    """Each scorer maps 7.3 MB of memo tables (in huge pages where the kernel allows): a
    scorer made again and again, and dropped, holds no more memory than a few."""
    import gc

    def resident_kb() -> int:
        status = Path("/proc/self/status").read_text()
        return int(status.split("VmRSS:")[1].split()[0])

    texts = ["the council met on monday .", "a river is a natural stream of water ."]
    scorer = native["kenlm_score"].PageScorer(default_model.model)
    expected = scorer.score_texts(texts, SentenceScore, normalize_many)
    before = resident_kb()
    for _ in range(40):
        scorer = native["kenlm_score"].PageScorer(default_model.model)
        scorer.__init__(default_model.model)  # a second init reuses or remaps its tables
        assert scorer.score_texts(texts, SentenceScore, normalize_many) == expected
        del scorer
        gc.collect()
    assert resident_kb() - before < 4 * 7_300  # 40 scorers kept would be 290 MB


def test_native_scorer_made_again_for_another_model_forgets_the_first(
    native, default_model, tiny_model
):
    """A scorer's second ``__init__``, for another model, clears the word ids it memoised for
    the first: its scores are a new scorer's."""
    texts = ["the council met on monday .", "a river is a natural stream of water ."]
    scorer = native["kenlm_score"].PageScorer(default_model.model)
    first = scorer.score_texts(texts, SentenceScore, normalize_many)
    scorer.__init__(tiny_model.model)
    fresh = native["kenlm_score"].PageScorer(tiny_model.model)
    again = scorer.score_texts(texts, SentenceScore, normalize_many)
    assert again == fresh.score_texts(texts, SentenceScore, normalize_many) != first


def test_native_scorer_gives_the_same_scores_to_threads_at_once(native, default_model):
    """The scorer scores without the GIL, behind a lock of its own: four threads sharing one
    scorer (and so its memo tables) each get exactly the single-threaded scores."""
    import threading

    scorer = native["kenlm_score"].PageScorer(default_model.model)
    rnd = random.Random(23)
    # the bundled pages' words, and made-up ones: more words and bigrams than the memos'
    # 65,536 and 262,144 slots, so that the threads keep overwriting each other's entries
    texts = [decode_body(path.read_bytes()).text for path in SAMPLES.glob("*.html")]
    words = sorted({word for text in texts for word in text.split()})
    words += ["".join(rnd.choices("etaoinshrdlu", k=rnd.randint(2, 9))) for _ in range(100000)]
    pages = [
        [" ".join(rnd.choices(words, k=rnd.randint(1, 30))) for _ in range(2500)] for _ in range(8)
    ]
    expected = [[default_model.score(n) for n in normalize_many(page)] for page in pages]
    failures: list[int] = []
    start = threading.Barrier(4)

    def score_pages(seed: int) -> None:
        start.wait()
        order = random.Random(seed)
        for _ in range(30):
            k = order.randrange(len(pages))
            if scorer.score_texts(pages[k], SentenceScore, normalize_many) != expected[k]:
                failures.append(k)
            if scorer.score_many(normalize_many(pages[k]), SentenceScore) != expected[k]:
                failures.append(k)

    threads = [threading.Thread(target=score_pages, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_native_join_kept_equals_the_reference(native, monkeypatch):
    rnd = random.Random(19)
    pieces = ["Mr. Smith.", "\u6771\u4eac\u3002", "\u300d", "ok", "caf\u00e9!", "x\uff1f", "a b"]
    for _ in range(2000):
        n = rnd.randint(0, 12)
        sentences = rnd.choices(pieces, k=n)
        block_of = sorted(rnd.choices(range(6), k=n))
        if rnd.random() < 0.1:
            rnd.shuffle(block_of)  # out of order: the native version hands over to the reference
        keeps = [rnd.random() < 0.7 for _ in range(n)]
        fast = segment.join_kept(sentences, block_of, keeps)
        with monkeypatch.context() as patched:
            patched.setattr(segment, "native_module", lambda name: None)
            assert fast == segment.join_kept(sentences, block_of, keeps), (sentences, block_of)


def test_native_make_records_equals_calling_the_class(native):
    import dataclasses
    import gc

    from stream_cleaner.document import ScoredSentence

    make = native["sentences"].make_records
    names = tuple(field.name for field in dataclasses.fields(ScoredSentence))
    columns = [[f"s{i}" for i in range(50)], list(range(50)), [-1.5] * 50, [3] * 50, [0] * 50,
               [None, 12.5] * 25, [True, False] * 25, [None, "high_perplexity"] * 25,
               ["en"] * 50]  # fmt: skip
    made = make(ScoredSentence, names, columns)
    assert made == list(map(ScoredSentence, *columns))
    assert all(type(record) is ScoredSentence for record in made)
    # records of atomic values only are out of the cyclic collector's lists; one holding a
    # container stays in them, and a cycle through it is collected
    assert not any(gc.is_tracked(record) for record in made)
    boxed = make(ScoredSentence, names, [column[:2] for column in columns[:-1]] + [[[], "en"]])
    assert gc.is_tracked(boxed[0]) and not gc.is_tracked(boxed[1])
    boxed[0].language.append(boxed[0])
    del boxed
    assert gc.collect() > 0
    assert make(ScoredSentence, names, [[] for _ in names]) == []
    blocks = [[0, 1], ["a", "b"], ["p", "li"], ["html body p", "html body ul li"], [3, 5],
              [0.0, 1.0], [False, True], [False] * 2, [False, True], [False] * 2,
              [False] * 2]  # fmt: skip
    block_names = tuple(field.name for field in dataclasses.fields(Block))
    assert make(Block, block_names, blocks) == list(map(Block, *blocks))

    # classes whose __init__ does more than write slots are called instead
    @dataclasses.dataclass(slots=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            self.value += 1

    @dataclasses.dataclass
    class WithDict:
        value: int

    for cls in (Checked, WithDict):
        assert make(cls, ("value",), [[1, 2]]) == [cls(1), cls(2)]
    uneven = [column[:2] for column in columns[:-1]] + [["en"]]  # map stops at the shortest
    assert make(ScoredSentence, names, uneven) == list(map(ScoredSentence, *uneven))


def test_native_decide_page_equals_the_reference(native, monkeypatch):
    from stream_cleaner import decide

    rnd = random.Random(23)
    texts_pool = ["Hello there.", "123 456", "--", "caf\u00e9", "\u00b2", "_", "\u6771", ""]
    # too long for the small limits below: a long word, many tokens, many ideographs
    texts_pool += ["Wordswithoutspaces", "A. A. A. A. A.", "\u6771" * 9, "-----------"]
    for _ in range(3000):
        n = rnd.randint(0, 15)
        texts = rnd.choices(texts_pool, k=n)
        block_of = sorted(rnd.choices(range(5), k=n))
        scores = []
        for _ in range(n):
            tokens = rnd.choice([0, 0, 1, 3, 12])
            scores.append((-rnd.random() * 4.0 * (tokens + 1), tokens, rnd.randint(0, tokens)))
        options = {
            "unscored": set(rnd.sample(range(n), k=rnd.randint(0, n // 3))) if n else set(),
            "max_sentence_perplexity": rnd.choice([50.0, 3000.0, float("inf")]),
            "content": [rnd.random() < 0.6 for _ in range(5)] if rnd.random() < 0.5 else None,
            "template": frozenset(rnd.sample(range(5), k=rnd.randint(0, 2))),
            "max_sentence_tokens": rnd.choice([4, 8, 10_000]),
            "max_word_chars": rnd.choice([5, 12, 1000]),
            # the verdicts of filters added to the registry (`filters.Registry`)
            "sentence_reasons": [rnd.choice([None, None, "toy_a", "toy_b"]) for _ in range(n)]
            if rnd.random() < 0.3
            else None,
            "block_reasons": {b: rnd.choice(["toy_c", "toy_d"]) for b in rnd.sample(range(5), 2)}
            if rnd.random() < 0.3
            else None,
            "figures": rnd.random() < 0.5,  # the labeller modes: figures count as words
        }
        columns = lm.score_columns(scores)
        fast = decide.decide_page(texts, block_of, columns, **options)
        with monkeypatch.context() as patched:
            patched.setattr(decide, "native_module", lambda name: None)
            slow = decide.decide_page(texts, block_of, columns, **options)
        assert fast == slow, (texts, scores, options)
        assert list(fast[2]) == list(slow[2])  # drop reasons in the same order
        assert fast[0][:3] == columns  # the scores' columns, as they came


def test_native_block_signatures_equal_the_reference(native, monkeypatch):
    from stream_cleaner import sites

    rnd = random.Random(5)
    alphabet = [*"aB 0123456789.-", "\u00c9t\u00e9", "\u6771", "\ud800", "00", "9" * 5]
    blocks = [
        Block(i, "".join(rnd.choices(alphabet, k=rnd.randint(0, 300))), "p",
              rnd.choice(["html body p", "html body div \u00e9 p"]), 3, 0.0,
              False, False, False, False, False)
        for i in range(3000)
    ]  # fmt: skip
    fast = native["signatures"].block_signatures(blocks, -1)
    assert native["signatures"].block_signatures(blocks, 10) == fast[:10]
    monkeypatch.setattr(sites, "native_module", lambda name: None)
    assert sites.block_signatures(blocks) == fast
    assert sites.block_signatures(blocks, limit=10) == fast[:10]


def test_native_next_tag_is_the_reference_search(native, monkeypatch):
    """`next_tag` finds what `sites._URL_TAG` finds, in text of one, two and four bytes a
    character, with the letters `re.IGNORECASE` reads as ASCII ones and bytes 0x3C inside
    other characters; and the page URLs found both ways are the same."""
    import re

    from stream_cleaner import sites

    names = sites._URL_TAG_NAMES
    pattern = re.compile(r"<(?:(link)|(meta)|(base))\b[^<>]*+>", re.IGNORECASE)
    assert pattern.pattern == sites._URL_TAG.pattern

    def reference(text, at, limit, needles=None):
        for found in pattern.finditer(text, at, limit):
            needle = needles[found.lastindex - 1] if needles else ""
            if re.search(re.escape(needle), found.group(), re.IGNORECASE):
                return (*found.span(), found.lastindex - 1)
        return None

    # every character re reads as one of the names' letters, beside the ASCII ones
    letters = re.compile(f"[{''.join(set(''.join(names)))}]", re.IGNORECASE)
    odd = [chr(i) for i in range(0x80, 0x110000) if letters.fullmatch(chr(i))]
    assert odd == ["\u0130", "\u0131", "\u017f", "\u212a"]
    alphabet = [*"<>lLiInNkKmMeEtTaAbBsS _1=/'\"", *odd, "\u043c", "\u3c3c", "\u3e00",
                "\u00e9", "\u0660", "\U0001f600"]  # fmt: skip
    rnd = random.Random(11)
    for _ in range(30_000):
        text = "".join(rnd.choices(alphabet, k=rnd.randint(0, 30)))
        at, limit = rnd.randint(-1, 10), rnd.randint(0, 35)
        assert native["signatures"].next_tag(text, names, at, limit) == reference(
            text, max(at, 0), limit
        ), (text, at, limit)
    # with needles a tag must hold (letters as re.IGNORECASE reads them, ":" as itself; the
    # pages' own needles, then short ones that random text holds often)
    assert sites._URL_TAG_NEEDLES == ("canonical", "og:url", "")
    alphabet = ["<link", "<LİNK", "<meta", "<base", "<bases", "<", ">", " ", "x", "i", "I",
                "ı", "İ", "s", "ſ", "k", "K", ":", "\x1a", "canonical", "CANONİCAL", "canonica",
                "og:url", "OG:URL", "og\x1aurl", "og:", "url"]  # fmt: skip
    weights = [3, 3, 3, 3, 1, 1, 6, *[1] * 20]  # tags, closed often
    found = 0
    for needles in (sites._URL_TAG_NEEDLES, ("i:", "s", ""), ("", "", "k")):
        for _ in range(10_000):
            text = "".join(rnd.choices(alphabet, weights, k=rnd.randint(0, 20)))
            at, limit = rnd.randint(-1, 10), rnd.randint(0, 100)
            expected = reference(text, max(at, 0), limit, needles)
            assert native["signatures"].next_tag(text, names, at, limit, needles) == expected, (
                text, at, limit, needles,
            )  # fmt: skip
            found += expected != reference(text, max(at, 0), limit)  # a tag passed over
        # and without them again, after the module read them
        assert native["signatures"].next_tag("<META>", names, 0, 9) == (0, 6, 1)
    assert found > 3_000
    with pytest.raises(ValueError, match="no upper-case"):
        native["signatures"].next_tag("<link>", names, 0, 9, ("Canonical", "", ""))
    with pytest.raises(ValueError, match="one needle a name"):
        native["signatures"].next_tag("<link>", names, 0, 9, ("canonical",))
    pages = [decode_body(path.read_bytes()).text for path in sorted(SAMPLES.glob("*.html"))]
    fast = [sites.find_page_url(page, hosts=hosts) for page in pages for hosts in (True, False)]
    monkeypatch.setattr(sites, "native_module", lambda name: None)
    assert [sites.find_page_url(page, hosts=h) for page in pages for h in (True, False)] == fast


@pytest.mark.parametrize("mode", ["corpus", "article", "auto"])
@pytest.mark.parametrize("fastest", [True, False])
def test_native_tree_walk_equals_numpy_on_the_shipped_labellers(native, mode, fastest, monkeypatch):
    """Every walk gives numpy's leaves: the depth-7 stages of auto and article walked with
    AVX-512 (where the CPU has it: in blocks of 32 rows, of 8, then one by one) and without."""
    import numpy as np

    from stream_cleaner import labeller
    from stream_cleaner.page_types import load_page_types

    shipped = labeller.load_labeller(mode)
    ensembles = [shipped.trees] + ([shipped.kind_trees] if shipped.kind_trees else [])
    ensembles += [shipped.stage2] if shipped.stage2 else []
    if mode == "auto":  # and the page types' multiclass ensembles, of depth 6
        types = load_page_types()
        ensembles += [types.with_class_words, types.without_class_words]
    rng = np.random.default_rng(3)
    native["trees"].use_fastest_walk(fastest)
    try:
        _walks_equal_numpy(native, ensembles, rng, monkeypatch)
    finally:
        native["trees"].use_fastest_walk(True)


def _walks_equal_numpy(native, ensembles, rng, monkeypatch):
    import numpy as np

    from stream_cleaner import labeller

    for trees in ensembles:
        assert trees.complete is not None  # depth 7 (auto, article), 6 (types), 4 (corpus)
        assert trees.complete[0].shape[1] == 2**trees.depth - 1  # laid out at their own depth
        feature, split, leaf_value = trees.complete
        for rows in (0, 1, 3, 4, 7, 8, 9, 47, 131):
            features = rng.normal(scale=3.0, size=(rows, trees._columns_read))
            for column in range(trees._columns_read):  # values on a split: they go left
                splits = trees.split[trees.feature == column]
                if len(splits) and len(features[2::3]):
                    features[2::3, column] = rng.choice(splits, size=len(features[2::3]))
            features[::5, 7] = np.nan  # NaN goes left in both
            features[1::4] = np.inf
            fast = native["trees"].leaf_values(
                features, trees.feature, trees.split, trees.children, trees.value, trees.roots,
                trees.depth,
            )  # fmt: skip
            complete = native["trees"].leaf_values_complete(
                np.ascontiguousarray(features.T), feature, split, leaf_value, trees.depth
            )
            through_the_class = trees.leaf_values(features)  # the complete layout's walk
            monkeypatch.setattr(labeller, "native_module", lambda name: None)
            reference = trees.leaf_values(features)
            monkeypatch.undo()
            assert np.array_equal(fast, reference)
            assert np.array_equal(complete, reference)
            assert np.array_equal(through_the_class, reference)
            # walked and summed in one call (the leaves held tree by tree): numpy's sums
            sums = native["trees"].raw_scores_complete(
                np.ascontiguousarray(features.T), feature, split, leaf_value, trees.depth,
                trees.num_class,
            )  # fmt: skip
            k = trees.num_class
            per_class = reference.reshape(rows, len(trees.roots) // k, k)
            expected = reference.sum(axis=1) if k == 1 else per_class.sum(axis=1)
            assert sums.tobytes() == expected.tobytes()
            # a few rows (a page's type) walk the preorder layout, the same sums
            preorder = native["trees"].raw_scores_preorder(
                features, *trees.preorder, trees.num_class
            )
            assert preorder.tobytes() == expected.tobytes()
            assert trees.raw_scores(features).tobytes() == expected.tobytes()
        with pytest.raises(ValueError, match="fewer feature columns"):
            trees.leaf_values(np.zeros((2, 3)))
        with pytest.raises(ValueError, match="fewer feature columns"):
            trees.raw_scores(np.zeros((1, 3)))  # the preorder walk's rows


def test_native_walk_and_sums_in_one_call_add_as_numpy_does(native):
    """`raw_scores_complete` sums each row's leaves, held tree by tree, in numpy's pairwise
    order (a stride per tree): every block of the scheme, zeros of both signs, depths 7 and 8
    on 8, 32 and more rows (the vector walk's stores) and depth 2; and the vector walk finds
    the leaves the walk one row at a time finds (NaN going left in both)."""
    import numpy as np

    rng = np.random.default_rng(12)
    for depth in (2, 7, 8):
        nodes = 2**depth - 1
        for n_trees in (1, 7, 8, 9, 60, 128, 129, 150, 257, 300):
            feature = rng.integers(0, 5, size=(n_trees, nodes)).astype(np.intc)
            split = rng.normal(size=(n_trees, nodes))
            leaf_value = rng.normal(scale=rng.choice([1e-3, 1.0, 1e3]), size=(n_trees, nodes + 1))
            leaf_value[:, ::7] = 0.0
            leaf_value[:, 3::7] = -0.0
            for rows in (0, 1, 8, 13, 32, 45):
                columns = np.ascontiguousarray(rng.normal(size=(5, rows)))
                columns[2, ::3] = np.nan
                leaves = native["trees"].leaf_values_complete(
                    columns, feature, split, leaf_value, depth
                )
                native["trees"].use_fastest_walk(False)
                try:
                    one_by_one = native["trees"].leaf_values_complete(
                        columns, feature, split, leaf_value, depth
                    )
                finally:
                    native["trees"].use_fastest_walk(True)
                assert np.array_equal(leaves, one_by_one), (depth, n_trees, rows)
                sums = native["trees"].raw_scores_complete(
                    columns, feature, split, leaf_value, depth, 1
                )
                assert sums.tobytes() == leaves.sum(axis=1).tobytes(), (depth, n_trees, rows)


def test_native_leaf_sums_add_as_numpy_does(native, monkeypatch):
    """Bit for bit numpy's sums: pairwise along a row (each block of its pairwise scheme:
    under 8 trees, up to 128, longer), one by one per class for multiclass ensembles; zeros
    of both signs included; and through the shipped labellers' raw scores."""
    import numpy as np

    from stream_cleaner import labeller

    rng = np.random.default_rng(8)
    leaf_sums = native["trees"].leaf_sums
    for n_trees in (0, 1, 3, 7, 8, 9, 15, 16, 17, 60, 100, 127, 128, 129, 200, 257, 300, 1000):
        for rows in (0, 1, 5, 33):
            values = rng.normal(scale=rng.choice([1e-3, 1.0, 1e3]), size=(rows, n_trees))
            values[::3, ::2] = 0.0
            values[1::3, 1::2] = -0.0
            if rows > 2:
                values[2] = -0.0  # a row of negative zeros
            assert leaf_sums(values, 1).tobytes() == values.sum(axis=1).tobytes()
            for num_class in (2, 3, 4):
                if n_trees % num_class:
                    with pytest.raises(ValueError):
                        leaf_sums(values, num_class)
                    continue
                expected = values.reshape(rows, n_trees // num_class, num_class).sum(axis=1)
                assert leaf_sums(values, num_class).tobytes() == expected.tobytes()
    for mode in ("corpus", "article"):
        shipped = labeller.load_labeller(mode)
        for trees in [shipped.trees] + ([shipped.kind_trees] if shipped.kind_trees else []):
            features = rng.normal(scale=3.0, size=(301, trees._columns_read))
            fast = trees.raw_scores(features)
            with monkeypatch.context() as patched:
                patched.setattr(labeller, "native_module", lambda name: None)
                assert fast.tobytes() == trees.raw_scores(features).tobytes()


def test_native_tree_walk_keeps_deep_trees_in_node_arrays(native, monkeypatch):
    import numpy as np

    from stream_cleaner import labeller
    from stream_cleaner.multilingual_labeller import load_multilingual

    trees = load_multilingual().trees
    assert trees.depth > labeller._COMPLETE_MAX_DEPTH and trees.complete is None
    features = np.random.default_rng(4).normal(scale=3.0, size=(37, trees._columns_read))
    fast = trees.leaf_values(features)
    few = trees.raw_scores(features[:3])  # fewer than `_FEW_ROWS`: the preorder walk
    monkeypatch.setattr(labeller, "native_module", lambda name: None)
    assert np.array_equal(fast, trees.leaf_values(features))
    assert few.tobytes() == trees.raw_scores(features[:3]).tobytes()


def test_native_preorder_walk_refuses_a_layout_it_could_walk_out_of(native):
    """`raw_scores_preorder` reads its arrays without bounds checks, so it checks the layout
    first: a column the row lacks, a right child behind its node or past the end, a root past
    the end."""
    import numpy as np

    walk = native["trees"].raw_scores_preorder
    # one tree: node 0 tests column 1 at 0.5, leaves 1 (left, value -1) and 2 (right, value 2)
    feature = np.array([1, -1, -1], dtype=np.intc)
    split = np.array([0.5, -1.0, 2.0])
    right = np.array([2, -1, -1], dtype=np.intc)
    roots = np.array([0], dtype=np.intc)
    rows = np.array([[9.0, 0.0], [9.0, 1.0], [9.0, np.nan]])
    assert walk(rows, feature, split, right, roots, 1).tolist() == [-1.0, 2.0, -1.0]
    with pytest.raises(ValueError, match="columns"):
        walk(rows[:, :1].copy(), feature, split, right, roots, 1)
    for bad_right in ([0, -1, -1], [3, -1, -1]):
        with pytest.raises(ValueError, match="preorder"):
            walk(rows, feature, split, np.array(bad_right, dtype=np.intc), roots, 1)
    with pytest.raises(ValueError, match="preorder"):
        walk(rows, feature, split, right, np.array([3], dtype=np.intc), 1)
    with pytest.raises(ValueError, match="preorder"):
        walk(rows, feature, split[:2].copy(), right, roots, 1)


def test_native_gru_states_equal_numpy(native, monkeypatch):
    import numpy as np

    from stream_cleaner import multilingual_labeller
    from stream_cleaner.multilingual_labeller import gru_states, load_multilingual

    sequence = load_multilingual().sequence
    rng = np.random.default_rng(5)
    for rows in (0, 1, 2, 17, 240):
        # the shipped networks' weights, and random ones of another size
        for w_hh, b_hh in (
            (sequence.w_hh, sequence.b_hh),
            (rng.normal(size=(4, 24, 8)), rng.normal(size=(4, 24))),
        ):
            gates = rng.normal(scale=4.0, size=(rows, w_hh.shape[0], w_hh.shape[1]))
            w_t = np.ascontiguousarray(w_hh.transpose(0, 2, 1))
            fast = native["sequence"].gru_states(gates, w_t, b_hh)
            np.testing.assert_allclose(fast, gru_states(gates, w_hh, b_hh), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="shapes"):
        native["sequence"].gru_states(np.zeros((3, 4, 24)), np.zeros((4, 8, 23)), np.zeros((4, 24)))
    # and through the labeller: the same log-odds with and without the native module
    x = sequence.mean + sequence.scale * rng.normal(size=(120, len(sequence.mean)))
    fast = sequence.network_logits(x)
    monkeypatch.setattr(multilingual_labeller, "native_module", lambda name: None)
    np.testing.assert_allclose(fast, sequence.network_logits(x), rtol=0, atol=1e-12)


def test_native_gru_states_stop_at_a_deadline_as_numpy_does(native):
    """Both recurrences read the page's clock (`budget`: this thread's CPU time) every
    `RECURRENCE_STEPS` rows: past it they raise, before it they run to the end."""
    import time

    import numpy as np

    from stream_cleaner.budget import TimeBudgetExceeded
    from stream_cleaner.multilingual_labeller import RECURRENCE_STEPS, gru_states, load_multilingual

    sequence = load_multilingual().sequence
    w_hh, b_hh = sequence.w_hh, sequence.b_hh
    gates = np.random.default_rng(6).normal(size=(2 * RECURRENCE_STEPS, *b_hh.shape))
    past, later = time.thread_time() - 1, time.thread_time() + 600
    with pytest.raises(TimeBudgetExceeded, match="recurrence"):
        native["sequence"].gru_states(
            gates, sequence.w_hh_t, b_hh, past, TimeBudgetExceeded, RECURRENCE_STEPS
        )
    with pytest.raises(TimeBudgetExceeded, match="recurrence"):
        gru_states(gates, w_hh, b_hh, deadline=past)
    fast = native["sequence"].gru_states(
        gates, sequence.w_hh_t, b_hh, later, TimeBudgetExceeded, RECURRENCE_STEPS
    )
    np.testing.assert_allclose(fast, gru_states(gates, w_hh, b_hh, deadline=later), atol=1e-12)
    short = gates[:RECURRENCE_STEPS]  # no look at the clock before the first step
    assert len(gru_states(short, w_hh, b_hh, deadline=past)) == RECURRENCE_STEPS


def test_native_text_features_equal_numpy(native, monkeypatch):
    import numpy as np

    from stream_cleaner import labeller

    rnd = random.Random(9)
    pieces = ["12/05", "2007-01", "10:30", "1.2.3", "www.x.com", "\u00a9 2024", " | ", " - "]
    pieces += ["Rights Reserved", "Cookie", "a", "B", "\u6771", "\ud800", " ", ".", ":", "\u2022"]
    pages = [
        ["".join(rnd.choices(pieces, k=rnd.randint(1, 30))) for _ in range(rnd.randint(1, 40))]
        for _ in range(300)
    ]
    pages.append([TRICKY_PAGE])
    for texts in pages:
        blocks = [
            Block(i, t, "p", "html body p", 3, 0.0, False, False, False, False, False)
            for i, t in enumerate(texts)
        ]
        sentences = list(texts)
        options = {"log10_probs": [-10.0] * len(texts), "n_tokens": [4] * len(texts),
                   "n_oov": [0] * len(texts)}  # fmt: skip
        fast = labeller.block_features(blocks, sentences, list(range(len(texts))), **options)
        monkeypatch.setattr(labeller, "native_module", lambda name: None)
        slow = labeller.block_features(blocks, sentences, list(range(len(texts))), **options)
        monkeypatch.undo()
        assert np.array_equal(fast, slow, equal_nan=True), texts


def _page_features_and_reference(blocks, sentences, block_of, scores, monkeypatch):
    import numpy as np

    from stream_cleaner import labeller

    log10_probs, n_tokens, n_oov = zip(*scores, strict=True) if scores else ((), (), ())
    options = {"log10_probs": log10_probs, "n_tokens": n_tokens, "n_oov": n_oov}
    fast = labeller.block_features(blocks, sentences, block_of, **options)
    with monkeypatch.context() as patched:
        patched.setattr(labeller, "native_module", lambda name: None)
        slow = labeller.block_features(blocks, sentences, block_of, **options)
    assert fast.shape == slow.shape == (len(blocks), len(labeller.FEATURE_NAMES))
    # bit for bit: the same operations in the same order, numpy's logarithms
    return fast.tobytes() == slow.tobytes() and np.array_equal(fast, slow)


def test_native_block_kinds_equal_the_reference(native, monkeypatch):
    import dataclasses

    from stream_cleaner import labeller

    @dataclasses.dataclass
    class DictBlock:  # no slots: attributes read by getattr
        tag: str
        in_heading: bool
        in_list: bool

    class Shouting(Block):  # a subclass whose attribute is a property, not its slot
        __slots__ = ()

        @property  # type: ignore[misc]
        def tag(self):
            return "h1"

    def shouting(*values):
        made = Shouting.__new__(Shouting)
        fields = dataclasses.fields(Block)
        values += tuple(field.default for field in fields[len(values) :])
        for field, value in zip(fields, values, strict=True):
            getattr(Block, field.name).__set__(made, value)  # its slots, under the property
        return made

    rnd = random.Random(31)
    tags = ["p", "div", "li", "dd", "dt", "h1", "h6", "h7", "td", "span", "pre"]
    for _ in range(500):
        blocks = []
        for i in range(rnd.randint(0, 12)):
            tag, heading, in_list = rnd.choice(tags), rnd.random() < 0.2, rnd.random() < 0.4
            kind = rnd.choice([Block, Block, DictBlock, shouting])
            if kind is DictBlock:
                blocks.append(DictBlock(tag, heading, in_list))
            else:
                blocks.append(kind(i, "t", tag, "html body", 2, 0.0, False, heading, in_list,
                                   False, False))  # fmt: skip
        fast = labeller.block_kinds(blocks)
        with monkeypatch.context() as patched:
            patched.setattr(labeller, "native_module", lambda name: None)
            slow = labeller.block_kinds(blocks)
        assert fast == slow, blocks
    unset = Block.__new__(Block)  # an empty slot raises as getattr does
    with pytest.raises(AttributeError):
        labeller.block_kinds([unset])
    with pytest.raises(AttributeError):
        native["text_features"].attributes([blocks[0], unset], "text")
    for name in ("text", "index", "tag"):  # the pipeline's reads of the blocks' fields
        mixed = [Block(0, "a", "p", "html", 1, 0.0, *[False] * 5), DictBlock("td", True, False),
                 shouting(1, "b", "li", "html ul li", 3, 0.5, *[True] * 5)]  # fmt: skip
        for objects in (mixed, mixed[::2], []):
            present = [o for o in objects if hasattr(o, name)]
            expected = [getattr(o, name) for o in present]
            assert native["text_features"].attributes(present, name) == expected


def test_native_page_features_equal_numpy_on_random_pages(native, monkeypatch):
    rnd = random.Random(13)
    paths = ["html body div p", "html body div ul li a", "html body table tr td", "html body",
             "html body nav ul li", "html body div div span", "html body form select"]  # fmt: skip
    tags = ["p", "li", "td", "div", "h2", "option", "pre", "x-custom"]
    words = ["the", "Cat", "1.", "-", "\u2022", "www.x.com", "12/05", ":", "\u6771", "Home", "."]
    # bullet shapes and near misses, letters that fold to a-z, non-ASCII digits
    words += ["o", "O", "a)", "12)", "123.", "1234.", "K.", "\u212a.", "\u017f)", "\u0663.", "*",
              "+", ">", "\u00bb", "\u00b7", "x\u00a0", "7\u3000", "ab."]  # fmt: skip
    # and runs of ideographs, kana and Thai: blocks written without spaces
    words += ["\u6cb3\u6d41\u4ece\u5c71\u4e0a\u6d41\u4e0b\u6765", "\u6771\u4eac\u306e\u591c",
              "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22", "\u3002"]  # fmt: skip
    for _ in range(300):
        n = rnd.randint(1, 30)
        blocks = []
        for i in range(n):
            path = rnd.choice(paths)
            text = rnd.choice([" ", " ", " ", ""]).join(rnd.choices(words, k=rnd.randint(1, 12)))
            in_link = "a" in path.split()
            flags = (in_link, "h2" in path, "li" in path, "td" in path, "form" in path)
            blocks.append(Block(i, text, rnd.choice(tags), path, len(path.split()),
                                rnd.choice([0.0, 0.5, 1.0]), *flags))  # fmt: skip
        sentences, block_of, scores = [], [], []
        for block in blocks:  # 0 to 3 sentences per block: empty blocks between full ones
            for _ in range(rnd.choice([0, 1, 1, 2, 3])):
                sentences.append(rnd.choice([block.text, block.text + ".", "x"]))
                block_of.append(block.index)
                tokens = rnd.randint(0, 9)
                scores.append((-rnd.random() * 5 * (tokens + 1), tokens, rnd.randint(0, tokens)))
        assert _page_features_and_reference(blocks, sentences, block_of, scores, monkeypatch)


@pytest.mark.slow
def test_native_class_features_equal_the_reference(native, monkeypatch):
    import numpy as np

    from stream_cleaner import labeller

    rnd = random.Random(17)
    for _ in range(300):
        marks = 0
        blocks = []
        for i in range(rnd.randint(1, 20)):
            # any level of any group, every bit of the 64 included
            code = rnd.choice([0, rnd.getrandbits(64), rnd.getrandbits(8) << 56, 2**64 - 1])
            marks += rnd.choice([0, 0, 1, 3])
            blocks.append(Block(i, "t", "p", "html body p", 3, 0.0, *[False] * 5, code, marks))
        fast = labeller.class_features(blocks)
        with monkeypatch.context() as patched:
            patched.setattr(labeller, "native_module", lambda name: None)
            slow = labeller.class_features(blocks)
        assert fast.shape == slow.shape == (len(blocks), len(labeller.CLASS_FEATURE_NAMES))
        assert np.ascontiguousarray(fast).tobytes() == slow.tobytes(), blocks


def test_native_page_features_equal_numpy_on_cleaneval_dev(native, default_model, monkeypatch):
    for path in sorted(cleaneval_dir("dev").glob("*.html")):
        blocks = parse.parse_blocks(decode_body(path.read_bytes()).text)
        if not blocks:
            continue
        sentences, block_of = segment.split_blocks([b.text for b in blocks],
                                                   [b.index for b in blocks])  # fmt: skip
        scores = default_model.score_texts(sentences)
        assert _page_features_and_reference(blocks, sentences, block_of, scores, monkeypatch), (
            path.name
        )


def test_modules_built_for_other_versions_are_not_used():
    assert version_mismatch({"selectolax": "0.0.1"}) == (
        "built for selectolax 0.0.1, but "
        f"{__import__('importlib.metadata').metadata.version('selectolax')} is installed"
    )
    missing = {"no-such-package-here": "1"}
    assert version_mismatch(missing) == "no-such-package-here is not installed"
    assert version_mismatch({}) is None


def test_modules_built_from_other_sources_are_not_used(tmp_path):
    """A source tree whose .pyx, .pxi or .h files changed since the build: its modules may
    lack functions the Python side now calls. Where no sources are shipped, no check."""
    from stream_cleaner._native import SOURCES_KEY, source_digest, stale_sources

    assert source_digest(tmp_path) is None
    assert stale_sources({SOURCES_KEY: "anything"}, tmp_path) is None
    (tmp_path / "walk.pyx").write_text("def f(): pass\n")
    (tmp_path / "notes.txt").write_text("not a source")
    built = {"kenlm": "0.3.0", SOURCES_KEY: source_digest(tmp_path)}
    assert stale_sources(built, tmp_path) is None
    (tmp_path / "notes.txt").write_text("still not a source")
    assert stale_sources(built, tmp_path) is None
    for change in ("walk.h", "walk.pyx"):
        (tmp_path / change).write_text("def f(): return 1\n")
        assert "built from other sources" in stale_sources(built, tmp_path)
        built[SOURCES_KEY] = source_digest(tmp_path)
    assert stale_sources({"kenlm": "0.3.0"}, tmp_path) is not None  # built before the digest
    assert version_mismatch({SOURCES_KEY: built[SOURCES_KEY]}) is None  # the digest is no package
    # this tree's build is of its sources (CI builds them; elsewhere the fixture skips)
    assert source_digest() is not None


@pytest.mark.parametrize(
    ("built_for", "problem"),
    [
        (None, "they were never built"),
        ({"kenlm": "0.0.1"}, "built for kenlm 0.0.1, but"),
        ("stale", "built from other sources"),
    ],
)
def test_unusable_native_modules_are_said_once_in_the_log(
    built_for, problem, tmp_path, monkeypatch, caplog
):
    """Never built, built for other versions or from other sources: one warning, not one per
    module or call."""
    import stream_cleaner._native as native_package

    path = tmp_path / "built_for.json"
    if built_for == "stale":  # the installed versions, but sources changed since
        (tmp_path / "walk.pyx").write_text("def f(): pass\n")
        built_for = {
            name: __import__("importlib.metadata").metadata.version(name)
            for name in ("selectolax", "kenlm")
        } | {native_package.SOURCES_KEY: "0" * 64}
    if built_for is not None:
        path.write_text(json.dumps(built_for))
    monkeypatch.setattr(native_package, "BUILT_FOR", path)
    native_package.native_usable.cache_clear()
    native_module.cache_clear()
    try:
        with caplog.at_level("INFO", logger="stream_cleaner._native"):
            assert [native_module(name) for name in MODULES * 2] == [None] * len(MODULES) * 2
        (record,) = caplog.records
        assert record.levelname == "WARNING"
        assert problem in record.getMessage() and "half as fast" in record.getMessage()
    finally:
        native_package.native_usable.cache_clear()
        native_module.cache_clear()


def test_the_cleaner_gives_the_same_documents_with_native_code_off(native, tmp_path):
    """Same JSON Lines out of `stream-cleaner clean` with STREAM_CLEANER_NATIVE=0 and =1."""
    outputs = []
    for flag in ("0", "1"):
        out = tmp_path / f"native-{flag}.jsonl"
        env = {**os.environ, "STREAM_CLEANER_NATIVE": flag}
        subprocess.run(
            [sys.executable, "-m", "stream_cleaner", "clean", str(SAMPLES), "-o", str(out)],
            check=True, cwd=REPO, env=env, capture_output=True,
        )  # fmt: skip
        outputs.append(_without_timings(out.read_text()))
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) == len(list(SAMPLES.glob("*.html")))  # not the README


def _without_timings(jsonl: str) -> list[dict]:
    import json

    records = [json.loads(line) for line in jsonl.splitlines()]
    for record in records:
        record.pop("seconds", None)
    return sorted(records, key=lambda r: r.get("id") or "")


def test_native_sentence_values_equal_the_reference(native, monkeypatch):
    """The worker's sentence records, written natively, are the reference's bytes: texts with
    every escape JSON needs, non-ASCII, floats of every shape, absent perplexities, odd
    reasons and languages, big and negative ints, and objects that are not slots records."""
    import dataclasses

    from stream_cleaner.document import CleanedDocument, ScoredSentence
    from stream_cleaner.streaming import records

    rnd = random.Random(29)
    pieces = ['"', "\\", "/", "\x00", "\x01", "\x08", "\t", "\n", "\x0b", "\x0c", "\r", "\x1f",
              "\x7f", "\u00e9", "\u2028", "\u6771", "\U0001f600", "plain words", " "]  # fmt: skip
    floats = [0.0, -0.0, 1e-7, 1e16, 1e20, -123.456, 3.0, 1234.5, float("inf"), float("nan"),
              2.5e-320, None]  # fmt: skip

    def sentence(i: int) -> ScoredSentence:
        return ScoredSentence(
            text="".join(rnd.choices(pieces, k=rnd.randint(0, 6))),
            block_index=rnd.choice([i, 0, -3, 2**40, 2**63 - 1, -(2**63)]),
            log10_prob=rnd.choice([f for f in floats if f is not None]),
            n_tokens=rnd.randint(0, 40),
            n_oov=rnd.randint(0, 5),
            perplexity=rnd.choice(floats),
            keep=rnd.random() < 0.5,
            reason=rnd.choice([None, "high_perplexity", 'caf\u00e9 "x"']),
            language=rnd.choice(["en", "und", "zh", None]),
        )

    # the same fields without slots: the native code reads them by name
    loose = dataclasses.make_dataclass(
        "Loose", [(field.name, field.type) for field in dataclasses.fields(ScoredSentence)]
    )

    def document(doc_id: str, sentences: tuple) -> CleanedDocument:
        return CleanedDocument(id=doc_id, url="", text="", sentences=sentences, perplexity=None,
                               kept_perplexity=None, dropped={}, n_blocks=0, encoding=None,
                               model_id="m", seconds={})  # fmt: skip

    def values(doc: CleanedDocument, fast: bool) -> list[bytes]:
        with monkeypatch.context() as patched:
            if not fast:
                patched.setattr(records, "native_module", lambda name: None)
            return records.sentence_values(doc)

    for n in [0, 1, 2, 50, 300]:
        sentences = tuple(sentence(i) for i in range(n))
        doc = document(rnd.choice(["d1", 'odd "id" \u00e9']), sentences)
        assert values(doc, True) == values(doc, False)
        loose_sentences = tuple(loose(**dataclasses.asdict(s)) for s in sentences)
        doc = dataclasses.replace(doc, sentences=loose_sentences)
        assert values(doc, True) == values(doc, False)
    # float fields holding something else, with a comma in it or not: written as the
    # reference writes them
    odd = ["1,2", "x", True, [1.5, 2.0], {"a": 1.0, "b": None}, 7, None]
    for field in ("log10_prob", "perplexity"):
        sentences = tuple(
            dataclasses.replace(sentence(i), **{field: rnd.choice(odd)}) if i % 3 == 1
            else sentence(i)
            for i in range(40)
        )  # fmt: skip
        doc = document("d-odd", sentences)
        assert values(doc, True) == values(doc, False)
    broken = ScoredSentence("\ud800 lone surrogate", 0, -1.0, 1, 0, 10.0, True, None)
    doc = document("d", (broken,))
    with pytest.raises(TypeError):
        values(doc, True)
    with pytest.raises(TypeError):
        values(doc, False)


@pytest.mark.parametrize("max_depth", [4, -1])
def test_dart_booster_exports_to_the_scores_lightgbm_predicts(native, monkeypatch, max_depth):
    """bench/multilingual.py's grid may choose dart: its trees, rescaled as later ones are
    added, export through `export_trees` as they are; the native walks (complete layout and
    node arrays) and numpy give LightGBM's raw scores."""
    lightgbm = pytest.importorskip("lightgbm")
    import numpy as np

    from stream_cleaner import labeller
    from stream_cleaner.training import export_trees

    rng = np.random.default_rng(11)
    x = rng.normal(size=(2000, 12))
    y = (x[:, 0] + 0.5 * x[:, 3] * x[:, 5] + rng.normal(scale=0.5, size=2000) > 0).astype(int)
    params = {"objective": "binary", "boosting": "dart", "num_leaves": 15, "max_depth": max_depth,
              "verbose": -1, "num_threads": 1, "seed": 3, "deterministic": True}  # fmt: skip
    booster = lightgbm.train(params, lightgbm.Dataset(x, y), num_boost_round=60)
    trees = labeller.TreeEnsemble(export_trees(booster))
    assert (trees.complete is not None) == (max_depth == 4)
    test = rng.normal(scale=2.0, size=(501, 12))
    expected = booster.predict(test, raw_score=True)
    fast = trees.raw_scores(test)
    np.testing.assert_allclose(fast, expected, rtol=0, atol=1e-9)
    monkeypatch.setattr(labeller, "native_module", lambda name: None)
    assert fast.tobytes() == trees.raw_scores(test).tobytes()


def _aiokafka_batch(records: list, batch_size: int, codec: int = 0) -> tuple[list, bytes]:
    """What aiokafka's own builder makes of ``(offset, timestamp, key, value, headers)``:
    which records it took (None where one did not fit) and the batch's bytes."""
    from aiokafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(2, codec, 0, -1, -1, 0, batch_size)
    taken = []
    for offset, timestamp, key, value, headers in records:
        found = builder.append(offset, timestamp, key=key, value=value, headers=headers)
        taken.append(None if found is None else (found.offset, found.size, found.timestamp))
    return taken, bytes(builder.build())


def _random_records(rnd: random.Random, n: int) -> list:
    def blob() -> bytes | None:
        return rnd.choice([None, b"", bytes(rnd.randbytes(rnd.choice([1, 63, 64, 200, 9000])))])

    records, timestamp = [], 1_700_000_000_000
    for offset in range(n):
        timestamp += rnd.choice([0, 1, -5, 70_000, -(2**40)])  # deltas of every varint size
        headers = [(rnd.choice(["a", "stage-seconds", "caf\u00e9"]), blob())
                   for _ in range(rnd.choice([0, 0, 1, 3]))]  # fmt: skip
        key = blob()
        value = blob() if key is not None else b"v"  # aiokafka needs one of the two
        records.append((offset, timestamp, key, value, headers))
    return records


@pytest.mark.parametrize("fastest_crc", [True, False])
def test_native_record_batch_is_aiokafkas_bytes(native, fastest_crc):
    """The worker's record batches are byte for byte aiokafka's for the same records: keys,
    values and header values absent, empty or long, timestamps going back, and batches that
    fill up (the first record always taken); with the CRC instruction and with the table."""
    from aiokafka.record.default_records import DefaultRecordBatch

    module = native["record_batch"]
    rnd = random.Random(41)
    try:
        module.use_fastest_crc(fastest_crc)
        for n, batch_size in [(0, 1024), (1, 10), (40, 1 << 20), (60, 4096), (30, 300)]:
            records = _random_records(rnd, n)
            taken, expected = _aiokafka_batch(records, batch_size)
            builder = module.RecordBatchBuilder(batch_size)
            ours = [builder.append(offset, timestamp, key=key, value=value, headers=headers)
                    for offset, timestamp, key, value, headers in records]  # fmt: skip
            assert ours == taken
            assert builder.record_count() == sum(found is not None for found in taken)
            built = bytes(builder.build())
            assert built == expected
            assert DefaultRecordBatch(built).validate_crc()
            with pytest.raises(RuntimeError):
                builder.append(0, None, key=b"k", value=b"v", headers=[])
    finally:
        module.use_fastest_crc(True)


@pytest.mark.parametrize("codec", [1, 2, 3, 4], ids=["gzip", "snappy", "lz4", "zstd"])
def test_native_record_batch_compresses_as_aiokafka_does(native, codec):
    """A batch with a codec: the records compressed by aiokafka's codec function, the codec in
    the attributes, the length and CRC of the compressed batch; aiokafka reads back every
    record. Byte for byte aiokafka's batch, but for gzip, whose stream carries the time. Like
    aiokafka's compiled builder, it compresses even what does not shrink, and empty batches."""
    from aiokafka.record.default_records import DefaultRecordBatch

    from stream_cleaner.streaming.patches.batches import _codec_encoders

    module = native["record_batch"]
    text = b"the same words again "
    values = [b'{"index":%d,"text":"%s"}' % (i, text * (i % 9)) for i in range(300)]
    records = [(i, 1_700_000_000_000 + i, b"doc-1", value, []) for i, value in enumerate(values)]
    builder = module.RecordBatchBuilder(1 << 20, codec, _codec_encoders()[codec])
    for offset, timestamp, key, value, headers in records:
        assert builder.append(offset, timestamp, key=key, value=value, headers=headers)
    uncompressed = builder.size()
    built = bytes(builder.build())
    assert builder.size() == len(built) < uncompressed / 3
    expected = _aiokafka_batch(records, 1 << 20, codec)[1]
    if codec != 1:
        assert built == expected
    batch = DefaultRecordBatch(built)
    assert batch.validate_crc() and batch.compression_type == codec
    assert [(r.offset, r.key, r.value) for r in batch] == [(i, b"doc-1", v) for i, _, _, v, _ in
                                                          records]  # fmt: skip

    noise = random.Random(codec).randbytes(3000)  # does not compress
    builder = module.RecordBatchBuilder(1 << 20, codec, _codec_encoders()[codec])
    builder.append(0, 1_700_000_000_000, key=None, value=noise, headers=[])
    built = bytes(builder.build())
    assert len(built) > 3000 + 61
    assert [r.value for r in DefaultRecordBatch(built)] == [noise]
    empty = bytes(module.RecordBatchBuilder(1 << 20, codec, _codec_encoders()[codec]).build())
    if codec != 1:
        assert built == _aiokafka_batch([(0, 1_700_000_000_000, None, noise, [])], 1 << 20,
                                        codec)[1]  # fmt: skip
        assert empty == _aiokafka_batch([], 1 << 20, codec)[1]
    assert DefaultRecordBatch(empty).compression_type == codec
    with pytest.raises(ValueError):
        module.RecordBatchBuilder(1 << 20, codec)  # a codec needs its function


def test_native_record_batch_appends_packed_values_as_aiokafka_appends_them(native):
    """`append_packed`: a document's sentence records in one call are the records aiokafka
    writes one by one (at the batch's timestamp); it stops at the first that does not fit or
    is near the size limit, and the rest go on from there. Ends outside the data are refused."""
    from stream_cleaner.streaming.records import PackedValues

    module = native["record_batch"]
    values = [b'{"index":%d,"text":"%s"}' % (i, b"x" * (i * 7 % 300)) for i in range(400)]
    values[150] = b"y" * 5000  # near the limit below
    values[200] = b""
    packed = PackedValues.of(values)
    data, ends = packed.data, packed.ends
    builder = module.RecordBatchBuilder(16_384)
    end = builder.append_packed(10, b"doc-1", data, ends, 3, 4000)
    assert 3 < end < 150
    built = bytes(builder.build())
    timestamp = int.from_bytes(built[27:35], "big")
    records = [(10 + i, timestamp, b"doc-1", values[3 + i], []) for i in range(end - 3)]
    taken, expected = _aiokafka_batch(records, 16_384)
    assert None not in taken
    assert built == expected
    builder = module.RecordBatchBuilder(1 << 20)
    assert builder.append_packed(0, b"doc-1", data, ends, end, 4000) == 150
    assert builder.append_packed(140, b"doc-1", data, ends, 151, 4000) == len(values)
    assert builder.record_count() == 150 - end + len(values) - 151
    builder = module.RecordBatchBuilder(1 << 20)
    with pytest.raises(ValueError):  # an end past the data
        builder.append_packed(0, b"doc-1", data[:-1], ends, 0, 1 << 20)
    with pytest.raises(ValueError):  # ends going backwards
        builder.append_packed(0, b"doc-1", data, array.array("q", [5, 3]), 0, 1 << 20)
    with pytest.raises(ValueError):
        builder.append_packed(0, b"doc-1", data, ends, len(values) + 1, 1 << 20)
    assert builder.append_packed(0, b"doc-1", data, ends, len(values), 1 << 20) == len(values)
    assert builder.record_count() == 0


def test_native_crc32c_is_castagnolis(native):
    """The checksum is CRC-32C (its check value, and aiokafka's on random data of every
    length up to a few words past the instruction's eight bytes), with either way of making it."""
    from aiokafka.record.util import calc_crc32c

    module = native["record_batch"]
    rnd = random.Random(5)
    try:
        for fastest in (True, False):
            module.use_fastest_crc(fastest)
            assert module.crc32c(b"123456789") == 0xE3069283
            for n in [*range(40), 1000, 65_537]:
                data = rnd.randbytes(n)
                assert module.crc32c(data) == calc_crc32c(data)
    finally:
        module.use_fastest_crc(True)


def test_native_utf8_with_cp1252_is_pythons_decoding(native):
    from stream_cleaner import decode

    module = native["decoding"]
    rng = random.Random(7)
    cases = [
        b"",
        "caf\u00e9 \u6771\u4eac \U0001f600".encode() + b"caf\xe9 \x80\x81\x8d\x8f\x90\x9d\xff",
        b"\xe9\x80A \xe0\x80\x80 \xed\xa0\x80 \xf4\x90\x80\x80 \xf0\x8f\xbf\xbf \xc0\xaf \xc2",
        b"\xf0\x9f\x98",  # a sequence cut at the end
    ]
    # random bytes, and random runs of valid and broken UTF-8 (the edges of each lead byte)
    cases += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) for _ in range(300)]
    pieces = [b"a", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xe9", b"\x80", b"\xf4"]
    cases += [b"".join(rng.choices(pieces, k=rng.randrange(1, 60))) for _ in range(300)]
    for body in cases:
        expected = body.decode("utf-8", errors=decode._CP1252_FALLBACK)
        assert module.utf8_with_cp1252(body).decode("utf-8") == expected, body
