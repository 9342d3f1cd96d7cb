"""HTML -> text blocks. The only module that imports an HTML parser.

Two backends walk their parser's tree and feed one `_BlockBuilder`, so both cut blocks by the
same rules: lexbor (selectolax), fast, the default; html5lib, the WHATWG reference
implementation in pure Python, for checking lexbor and for pages where exactness matters more
than speed. Every walk is iterative: a page of 100,000 nested elements cannot overflow the
stack.
"""

from __future__ import annotations

import functools
import io
import itertools
import re
from collections.abc import Mapping, Sequence
from html import unescape
from typing import Any

from ._native import native_module
from .budget import TimeBudgetExceeded, check_deadline
from .document import Block

# Elements whose content is never page text.
SKIP_TAGS = frozenset(
    "head script style noscript noframes noembed template svg math iframe object embed canvas "
    "audio video map area datalist".split()
)
# A page is parsed as a browser that runs scripts parses it: a <noscript>'s content is raw text
# up to the first </noscript>. Parsed as markup (scripting off, lexbor's default), Google Tag
# Manager's "<noscript><iframe src=... /></noscript>" opened an iframe whose raw text swallowed
# the rest of the page. But a crawler runs no scripts, and pages built by scripts keep their
# crawlable text in <noscript> (Discourse and Flarum forums: 0 to 15 characters outside it, 2,600
# to 24,000 inside). So when the text inside a page's noscript elements is at least
# `NOSCRIPT_PAGE_MIN_CHARS` and `NOSCRIPT_PAGE_RATIO` times the text outside them,
# `parse_blocks` returns the page as a client without scripts shows it, noscript content and
# all. Of the 1,424 benchmark pages with a noscript (CleanEval, Dragnet, the 2026 pages), the
# other pages come to at most 1.11 times (a gallery's captions repeated for such clients,
# not its main content; next 0.74, an article repeated whole): 4 leaves a wide margin on both
# sides. 200 characters, two sentences, is more than a "please enable JavaScript" notice.
NOSCRIPT_PAGE_RATIO = 4.0
NOSCRIPT_PAGE_MIN_CHARS = 200
_NOSCRIPT_PAGE_SKIP_TAGS = SKIP_TAGS - {"noscript"}
# Elements a browser lays out as their own box: they start and end a block.
BLOCK_TAGS = frozenset(
    """
    address article aside blockquote body br center dd details dialog dir div dl dt fieldset
    figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 header hgroup hr html legend
    li main menu nav ol optgroup option p pre section summary table tbody td tfoot th thead tr
    caption ul textarea select button marquee noframes
    """.split()
)
# Characters dropped from a block's text: the soft hyphen, the zero-width space, the word
# joiner and the zero-width no-break space only say where a line may (not) break. Left in,
# "coun\u00adcil" was no word the language model knew, and they went into the output.
INVISIBLE = "\u00ad\u200b\u2060\ufeff"
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
# the HTML standard's white space (ASCII's but the vertical tab)
HTML_WHITE_SPACE = " \t\n\f\r"
# a ``role`` whose first token is a dialog's (`aria_dialog`)
_DIALOG_ROLE = re.compile(
    f"[{HTML_WHITE_SPACE}]*(?:alert)?dialog(?:[{HTML_WHITE_SPACE}]|$)", re.IGNORECASE | re.ASCII
)
# An inline style that hides its element (and what is in it): a browser shows none of it. On
# Dragnet's training pages such text is mostly menus, pop-ups and alternative layouts; left
# out, the word-alignment F1 rose from 0.941 to 0.943 (article) and 0.819 to 0.827 (corpus).
_HIDDEN_STYLE = re.compile(
    r"display[ \t\n\r\f\v]*:[ \t\n\r\f\v]*none|visibility[ \t\n\r\f\v]*:[ \t\n\r\f\v]*hidden",
    re.IGNORECASE | re.ASCII,
)
# React's streaming server rendering (Next.js's App Router and others) sends what was not
# ready for the first chunk late in the page, each part in a hidden segment,
# `<div hidden id="S:1f">` (`<table hidden id=..>` inside a table), which an inline script
# (`$RC("B:0","S:0")`, `$RS("S:1","P:1")`) moves into its placeholder (`<template id="B:0">`)
# and reveals. A crawler runs no script: left hidden, the main content of 4 of the 460 2026
# pages was lost. The id is React's prefix "S:" and the segment's number in lower-case hex
# (`id.toString(16)`); React puts the `identifierPrefix` option before it, which Next.js does
# not set. Such segments are walked where they stand, at the end of the page: to walk them at
# their placeholder, both walks would have to read the scripts to pair the two (their numbers
# differ), drop the placeholder's fallback and walk subtrees out of document order. A segment
# inside a table body or row (`<table hidden><tbody id="S:2">`) stays hidden: its id is not on
# the hidden element (no benchmark page has one).
_REACT_SEGMENT_ID = re.compile(r"S:[0-9a-f]+")
HEADING_TAGS = frozenset("h1 h2 h3 h4 h5 h6".split())
LIST_TAGS = frozenset("li ul ol dl dt dd menu dir".split())
TABLE_TAGS = frozenset("table td th tr tbody thead tfoot caption".split())
FORM_TAGS = frozenset("form select option optgroup button label textarea input fieldset".split())

# What a page's class and id attributes say about the elements they name, as readability and
# trafilatura read them: groups of words, each found anywhere in an attribute's value (ASCII,
# any case), or with "^" only at the start of a word of it, or with "=" only as a whole word
# (words: runs of ASCII letters and digits). A block's `Block.class_words` tells, per group,
# how far up its tag path the nearest element with such a word is; the last group, "any",
# stands for any class or id at all. The article labeller learns from them which containers
# hold comments, related links, share buttons... (`labeller.class_features`).
CLASS_WORD_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("comment", ("comment", "komment", "koment", "comentar", "disqus", "repl", "respond", "discuss",
                 "community", "remark")),
    ("related", ("related", "recommend", "outbrain", "taboola", "popular", "trending",
                 "read-next", "readmore", "more-stories", "also-")),
    ("share", ("share", "sharing", "social", "follow", "tweet", "facebook", "twitter", "print",
               "bookmark")),
    ("nav", ("nav", "menu", "breadcrumb", "pagination", "pager", "skip")),
    ("sidebar", ("sidebar", "widget", "aside", "rail")),
    ("footer", ("footer", "copyright", "legal", "bottom")),
    ("header", ("header", "masthead", "banner", "topbar", "logo")),
    ("ad", ("=ad", "=ads", "^advert", "^sponsor", "^promo", "=dfp")),
    ("overlay", ("cookie", "consent", "gdpr", "newsletter", "subscribe", "signup", "modal",
                 "popup", "overlay", "paywall")),
    ("meta", ("meta", "byline", "author", "date", "time", "publish", "tags", "categor")),
    ("content", ("article", "content", "entry", "post", "story", "body", "text", "main",
                 "hentry", "blog")),
    ("media", ("caption", "figure", "media", "gallery", "credit", "photo", "image", "video")),
    ("title", ("title", "headline", "heading")),
)  # fmt: skip
CLASS_GROUP_NAMES: tuple[str, ...] = (*(name for name, _ in CLASS_WORD_GROUPS), "any")
# The group whose elements `Block.comment_marks` counts: a thread of readers' comments often
# follows a heading or anchor named "comments" rather than sitting inside such a container.
# Bit 0 of an element's groups, here and in `_native/lexbor_walk.pyx`.
CLASS_COMMENT = 0
CLASS_ANY = len(CLASS_WORD_GROUPS)  # the group bit of any class or id
CLASS_MAX_LEVELS = 15  # a group's 4 bits in `Block.class_words`
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


@functools.lru_cache(maxsize=8192)
def class_groups(value: str) -> int:
    """The groups of `CLASS_WORD_GROUPS` (bit ``g`` for group ``g``) whose words an attribute
    value holds; `_native/lexbor_walk.pyx` matches the same way over lexbor's bytes."""
    value = value.translate(_ASCII_LOWER)
    found = 0
    for group, (_, words) in enumerate(CLASS_WORD_GROUPS):
        for entry in words:
            rule, word = (entry[0], entry[1:]) if entry[0] in "^=" else ("", entry)
            at = value.find(word)
            while at >= 0:
                end = at + len(word)
                if not rule or (
                    (at == 0 or value[at - 1] not in _ASCII_ALNUM)
                    and (rule == "^" or end == len(value) or value[end] not in _ASCII_ALNUM)
                ):
                    found |= 1 << group
                    break
                at = value.find(word, at + 1)
            if found >> group & 1:
                break
    return found


def element_class_groups(tag: str, attributes: Mapping[str, str | None]) -> int:
    """`class_groups` of an element's class and id, with the `CLASS_ANY` bit when it has
    either with a value. Those of ``html`` and ``body`` are left out: they name the page
    (WordPress's "single-post comments-open", feature flags), not a part of it."""
    if tag in ("html", "body"):
        return 0
    found = 0
    for name in ("class", "id"):
        value = attributes.get(name)
        if value:
            found |= class_groups(value) | 1 << CLASS_ANY
    return found


def _no_class_groups(tag: str, attributes: Mapping[str, str | None]) -> int:
    return 0


def _class_words(groups: Sequence[int]) -> int:
    """`Block.class_words` of a block whose tag path's elements have ``groups`` (root
    first; the last one is the block's element)."""
    code = seen = 0
    depth = len(groups)
    for i in range(depth - 1, -1, -1):
        new = groups[i] & ~seen
        if new:
            levels = min(depth - i, CLASS_MAX_LEVELS)
            seen |= new
            group = 0
            while new:
                if new & 1:
                    code |= levels << (4 * group)
                new >>= 1
                group += 1
    return code


MAX_NESTING_DEPTH = 512
# `attribute_work` past which no parser is given a page: one element of 7,000 attributes
# (lexbor about 0.1 s, html5lib 1 s). Of the 2,468 benchmark pages here (Dragnet, CleanEval,
# GoogleTrends, package pages) the heaviest comes to 182,255.
MAX_ATTRIBUTE_WORK = 5e7
# distinct tag and attribute names past which no parser is given a page: lexbor's name tables
# take time quadratic in them (160,000 distinct attribute names in 2.7 MB: 5.9 s; as many
# custom tags 3.4 s). The benchmark pages here have at most about 200.
MAX_NAMES = 20_000
_HTML_SPACE = frozenset(HTML_WHITE_SPACE)
_HTML_SPACE_OR_SLASH = _HTML_SPACE | {"/"}
_LONG_TAG = 256
_LONG_TAG_START = re.compile(r"<[A-Za-z]")
# a start tag's name (group 1: what follows it), quoted values whole; a quote opens a value
# anywhere here, where the tokenizer opens one only after "=": the Python path's estimate
_TAG_SPAN = re.compile(r"""<[^\s/>]*+((?:[^>"']++|"[^"]*+"?|'[^']*+'?)*+)""")
_RAW_TEXT_NAME = re.compile(r"(script|style)[\s/>]", re.IGNORECASE)
_RAW_TEXT_END = {name: re.compile(f"</{name}", re.IGNORECASE) for name in ("script", "style")}
_NESTING_SCAN_TAGS = 8192
_LOOKS_LIKE_HTML = re.compile(
    r"<(?:!doctype|html|head|body|meta|title|p|div|span|a|br|table|ul|li|h[1-6]|script|style|"
    r"article|section|nav|header|footer|form|img|b|i|strong|em|font|center|tr|td|main|svg|"
    r"link|noscript|iframe|figure|template|input|button|hr)[\s>/]|<!--"
    # or any whole tag, custom elements too ("<my-app>", "<dl><dd>")
    r"|</?[a-zA-Z][a-zA-Z0-9-]*+(?:\s[^<>]*+)?/?>",
    re.IGNORECASE,
)


# The page's <title> (RCDATA: its text runs to the end tag), searched for in the first 64 KiB,
# or in the first MiB when no <body> starts in those (a head full of inline scripts and
# styles); one after a <body> start tag is an SVG's or a stray one, not the page's
# (a tag's attributes end at the next "<" too: without it, "<title " repeated with no ">"
# made each search run to the window's end, quadratic: a minute for 280 kB)
_TITLE = re.compile(r"<[tT][iI][tT][lL][eE](?:[\s/][^<>]*+)?>([^<]*)")
_BODY_START = re.compile(r"<body[\s/>]", re.IGNORECASE)
_TITLE_WINDOW = 65536
_MAX_HEAD_CHARS = 1 << 20
MAX_TITLE_CHARS = 1000


class PageTooLarge(ValueError):
    """A page has more blocks than its caller's ``max_blocks``, or elements with more
    attributes than the parsers can read in time (`MAX_ATTRIBUTE_WORK`)."""


def looks_like_html(text: str) -> bool:
    """Whether a text has HTML markup: a common tag, a comment or any whole tag anywhere in it
    (else it is treated as plain text). Most pages are known by their first tag; pages that
    start with 70 kB of white space, a licence comment or an inline SVG are pages too."""
    return _LOOKS_LIKE_HTML.search(text) is not None


def page_title(html: str) -> str:
    """The text of a page's ``<title>``, entities decoded and white space collapsed (at most
    `MAX_TITLE_CHARS` characters); ``""`` when the page has none before its ``<body>``."""
    match = _TITLE.search(html, 0, _TITLE_WINDOW)
    if match is None and len(html) <= _TITLE_WINDOW:  # searched whole: a quarter of CleanEval's
        return ""
    if match is None and _BODY_START.search(html, 0, _TITLE_WINDOW) is None:
        match = _TITLE.search(html, 0, _MAX_HEAD_CHARS)
    if match is None or _BODY_START.search(html, 0, match.start()) is not None:
        return ""
    text = _INVISIBLE.sub("", unescape(match.group(1)))
    return " ".join(text.split())[:MAX_TITLE_CHARS]


def parse_blocks(
    html: str,
    *,
    parser: str = "lexbor",
    deadline: float | None = None,
    utf8: bytes | None = None,
    class_words: bool = True,
    max_blocks: int | None = None,
    dialogs: list[int] | None = None,
) -> list[Block]:
    """Cut a page into text blocks in reading order.

    The page is parsed as a browser with scripting on parses it (a ``<noscript>``'s content is
    raw text), unless the text inside its noscript elements is most of the page's
    (`NOSCRIPT_PAGE_RATIO`): then as a client without scripts shows it.

    Args:
        html: the decoded page.
        parser: ``lexbor`` or ``html5lib``.
        deadline: an instant of this thread's CPU time (`budget.deadline_after`) past which
            parsing stops with `TimeBudgetExceeded`.
        utf8: ``html`` in UTF-8, when the caller has it (`decode.Decoded.utf8`): lexbor reads
            it as it is instead of an encoding of ``html``.
        class_words: find `Block.class_words` and `Block.comment_marks`; ``False`` leaves
            them 0 and saves the matching, for a caller whose labeller does not read them.
        max_blocks: past this many blocks, parsing stops with `PageTooLarge` (memory grows
            with the blocks: a 16 MB page of two million paragraphs took 1.5 GB to parse).
        dialogs: a list that receives the index of each returned block inside an element
            that is a modal dialog by its ARIA attributes (`aria_dialog`), in order.

    Returns:
        The blocks with their text, tag path, depth, link density and container flags.
    """
    options: dict[str, Any] = {
        "parser": parser, "deadline": deadline, "utf8": utf8, "class_words": class_words,
        "max_blocks": max_blocks,
    }  # fmt: skip
    noscript: list[int] = []
    named = len(dialogs) if dialogs is not None else 0
    blocks = _parse_blocks(html, scripting=True, noscript=noscript, dialogs=dialogs, **options)
    # the raw markup inside the noscript elements bounds their text: only a page whose markup
    # could pass is parsed again, without scripts
    inside = sum(noscript)
    if inside < NOSCRIPT_PAGE_MIN_CHARS:
        return blocks
    outside = sum(len(block.text) for block in blocks)
    if inside < NOSCRIPT_PAGE_RATIO * outside:
        return blocks
    again: list[int] | None = [] if dialogs is not None else None
    without_scripts = _parse_blocks(html, scripting=False, noscript=None, dialogs=again, **options)
    inside = sum(len(block.text) for block in without_scripts) - outside
    if inside < NOSCRIPT_PAGE_MIN_CHARS or inside < NOSCRIPT_PAGE_RATIO * outside:
        return blocks
    if dialogs is not None and again is not None:  # the blocks returned are these
        dialogs[named:] = again
    return without_scripts


def _parse_blocks(
    html: str,
    *,
    scripting: bool,
    noscript: list[int] | None,
    dialogs: list[int] | None,
    parser: str,
    deadline: float | None,
    utf8: bytes | None,
    class_words: bool,
    max_blocks: int | None,
) -> list[Block]:
    """`parse_blocks` as a browser with scripting on (``noscript`` then receives the length
    of each ``<noscript>``'s raw content the walk passes), or off, where the content of
    noscript elements is markup and page text; ``dialogs`` as `parse_blocks` says."""
    limited = limit_nesting(html, scripting=scripting)
    # selectolax encodes a str to UTF-8 ("ignore": no surrogate survives), which is ``utf8``
    # exactly when ``html`` was decoded from it and nesting left it alone
    source = utf8 if utf8 is not None and limited is html else limited
    fast = native_module("lexbor_walk")
    work, names = (
        fast.markup_work(source, MAX_NAMES)
        if fast is not None
        else _markup_work(limited, MAX_NAMES)
    )
    if work > MAX_ATTRIBUTE_WORK:
        raise PageTooLarge(
            "elements with too many attributes to parse in time (their counts' squares sum "
            f"to {work:.0f}, above {MAX_ATTRIBUTE_WORK:.0f})"
        )
    if names > MAX_NAMES:
        raise PageTooLarge(
            f"more than {MAX_NAMES} distinct tag and attribute names, too many to parse in time"
        )
    skip_tags = SKIP_TAGS if scripting else _NOSCRIPT_PAGE_SKIP_TAGS
    if parser == "lexbor":
        from selectolax.lexbor import LexborHTMLParser

        document = LexborHTMLParser(source, scripting=scripting)
        if fast is not None:
            return fast.walk_blocks(
                document, Block, BLOCK_TAGS, skip_tags, HEADING_TAGS, LIST_TAGS, TABLE_TAGS,
                FORM_TAGS, deadline, TimeBudgetExceeded,
                CLASS_WORD_GROUPS if class_words else None, max_blocks or 0, too_many_blocks,
                noscript, dialogs,
            )  # fmt: skip
        root = document.root
    elif parser == "html5lib":
        root = _html5lib_root(limited, deadline, scripting=scripting)
    else:
        raise ValueError(f"unknown parser {parser!r}")
    if root is None:
        return []
    return _walk(
        root, deadline, class_words=class_words, max_blocks=max_blocks, skip_tags=skip_tags,
        noscript=noscript, dialogs=dialogs,
    )  # fmt: skip


def hidden_by_style(style: str | None) -> bool:
    """Whether an element's ``style`` attribute hides it (``display: none`` or
    ``visibility: hidden``)."""
    return style is not None and _HIDDEN_STYLE.search(style) is not None


def hidden_element(tag: str, attributes: Mapping[str, str | None]) -> bool:
    """Whether a browser shows none of an element, which is then walked past with all it
    holds: its inline style hides it (`hidden_by_style`), it has the ``hidden`` attribute
    (the HTML standard's ``display: none``; ``hidden="until-found"`` text stays, since the
    browser's find-in-page reveals it, and so does a segment of React's streaming server
    rendering, which its script reveals: `_REACT_SEGMENT_ID`), or it is a ``dialog`` that is
    not ``open``."""
    if "hidden" in attributes:
        value = attributes["hidden"]
        if not (value and value.isascii() and value.lower() == "until-found"):
            segment_id = attributes.get("id")
            if segment_id is None or not _REACT_SEGMENT_ID.fullmatch(segment_id):
                return True
    if tag == "dialog" and "open" not in attributes:
        return True
    return hidden_by_style(attributes.get("style"))


def aria_dialog(attributes: Mapping[str, str | None]) -> bool:
    """Whether an element is a modal dialog by its ARIA attributes: its ``role``'s first
    token is ``dialog`` or ``alertdialog``, or its ``aria-modal`` is ``true`` (ASCII, any
    case). A shop's policies, a cookie banner's settings, a sign-in or country picker: the
    page holds them for its script to show when a link opens them. Their blocks are parsed
    (the labellers learnt pages with them) and never content in the labeller modes
    (`parse_blocks`'s ``dialogs``; rules 53 and 54 in ``bench/auto_training.py``)."""
    modal = attributes.get("aria-modal")
    if modal is not None and modal.strip(HTML_WHITE_SPACE).lower() == "true":
        return True
    role = attributes.get("role")
    return role is not None and _DIALOG_ROLE.match(role) is not None


def attribute_work(html: str) -> float:
    """The sum, over the start tags of ``html``, of the square of each one's attributes.

    Both parsers take time quadratic in the distinct attributes of one element (lexbor 0.6 s
    for 20,000 and 2.4 s for 40,000, html5lib 8 s and 33 s) and no deadline can interrupt
    them inside a tag, so `parse_blocks` refuses a page past `MAX_ATTRIBUTE_WORK` before
    either sees it. The tags are read as the HTML tokenizer
    reads them (quoted values may hold ``>``); the raw text of ``script`` and ``style`` is
    skipped. Natively when built; the Python path counts only tags of `_LONG_TAG` characters
    or more (a shorter one cannot hold 128 attributes).
    """
    fast = native_module("lexbor_walk")
    return fast.attribute_work(html) if fast is not None else _attribute_work(html)


def _attribute_work(html: str) -> float:
    """`attribute_work` in Python: tags under `_LONG_TAG` characters are not counted."""
    work = 0.0
    position = 0
    while True:
        match = _LONG_TAG_START.search(html, position)
        if match is None:
            return work
        span = _TAG_SPAN.match(html, match.start())
        assert span is not None  # the pattern matches any "<" and letter
        position = span.end()
        if position - span.start() >= _LONG_TAG:
            work += _count_attributes(span.group(1)) ** 2
        raw = _RAW_TEXT_NAME.match(html, match.start() + 1)
        if raw is not None:
            end = _RAW_TEXT_END[raw.group(1).lower()].search(html, position)
            position = len(html) if end is None else end.start()


def markup_work(html: str, max_names: int = MAX_NAMES) -> tuple[float, int]:
    """`attribute_work`, and how many distinct tag and attribute names ``html`` holds when it
    reads more than ``max_names`` names in all (else that count, which is no less: a page
    passes when the second figure is at most ``max_names``). Natively when built."""
    fast = native_module("lexbor_walk")
    return fast.markup_work(html, max_names) if fast is not None else _markup_work(html, max_names)


def _markup_work(html: str, max_names: int) -> tuple[float, int]:
    """`markup_work` in Python: only a page of more than ``2 * max_names`` characters has its
    names counted (a name takes two at least: "<p", " a"), and a quote opens a value anywhere
    in a tag (`_TAG_SPAN`)."""
    work = _attribute_work(html)
    if len(html) // 2 <= max_names:
        return work, len(html) // 2
    names: set[str] = set()
    position = 0
    while len(names) <= max_names:
        match = _LONG_TAG_START.search(html, position)
        if match is None:
            break
        span = _TAG_SPAN.match(html, match.start())
        assert span is not None  # the pattern matches any "<" and letter
        position = span.end()
        names.add("<" + html[match.start() + 1 : span.start(1)].lower())
        rest = _QUOTED.sub(" ", span.group(1))
        names.update(name.lower() for name in _ATTRIBUTE_NAME.findall(rest))
        raw = _RAW_TEXT_NAME.match(html, match.start() + 1)
        if raw is not None:
            end = _RAW_TEXT_END[raw.group(1).lower()].search(html, position)
            position = len(html) if end is None else end.start()
    return work, len(names)


_QUOTED = re.compile(r"""=\s*+(?:"[^"]*+"?|'[^']*+'?|[^\s>]*+)""")
_ATTRIBUTE_NAME = re.compile(r"[^\s/>=]++")


def _count_attributes(rest: str) -> int:
    """The attributes of a start tag, ``rest`` its text after the name: `attribute_work`'s
    states of the HTML tokenizer (0 before a name, 1 in a name, 2 after one, 3 before a
    value, 4 in a quoted value, 5 in an unquoted value)."""
    count = state = 0
    quote = ""
    for c in rest:
        if state == 4:
            if c == quote:
                state = 0
        elif c == ">":
            break
        elif state == 0:
            if c not in _HTML_SPACE_OR_SLASH:
                count += 1
                state = 1
        elif state == 1:
            if c in _HTML_SPACE:
                state = 2
            elif c == "/":
                state = 0
            elif c == "=":
                state = 3
        elif state == 2:
            if c == "/":
                state = 0
            elif c == "=":
                state = 3
            elif c not in _HTML_SPACE:
                count += 1
                state = 1
        elif state == 3:
            if c in "\"'":
                quote, state = c, 4
            elif c not in _HTML_SPACE:
                state = 5
        elif c in _HTML_SPACE:
            state = 0
    return count


def limit_nesting(html: str, max_depth: int = MAX_NESTING_DEPTH, *, scripting: bool = True) -> str:
    """Flatten elements a browser would nest deeper than ``max_depth``, keeping all the text.

    Both parsers take time quadratic in the nesting depth (lexbor: 23 s for 100,000 nested
    divs), and no deadline can interrupt C code, so deep markup is flattened before parsing, as
    Blink's parser does past depth 512: the start tags that would open an element deeper than
    ``max_depth`` (as the nesting model counts, `max_tag_depth`) go, with as many of their end
    tags; text, comments and raw text (a script's, a style's) stay as they were. Only pages
    with many tags are even looked at: below `_NESTING_SCAN_TAGS` tags the worst case costs
    lexbor about 0.1 s. ``scripting``: whether the page will be parsed with scripting on
    (`parse_blocks`), where a ``<noscript>``'s content is raw text.
    """
    fast = native_module("lexbor_walk")
    tags = fast.count_char(html, "<") if fast is not None else html.count("<")
    if tags <= _NESTING_SCAN_TAGS:
        return html
    if max_tag_depth(html, scripting=scripting) <= max_depth:
        return html
    kept: list[str] = []
    _nest(html, scripting, max_depth, kept)
    return "".join(kept)


def max_tag_depth(html: str, *, scripting: bool = True) -> int:
    """How deep a browser would nest the elements of ``html``, as the nesting model counts them
    (`_nest`; 0 without any element); natively when built. ``scripting``: whether a
    ``<noscript>``'s content is raw text, as it is with scripting on."""
    fast = native_module("lexbor_walk")
    if fast is not None:
        return fast.max_tag_depth(html, _NESTING_KINDS, _NESTING_SEARCH, scripting)
    return _nest(html, scripting)


# The nesting model: the HTML tree builder's stack of open elements, cut down to what decides
# how deep elements nest, and run in one pass over the page (`max_tag_depth` natively, in
# `_native/lexbor_walk.pyx`, which must count exactly as `_nest` does). Tags are read as the
# tokenizer reads them: comments, doctypes and the raw text of script, style, textarea, title...
# are passed over; a quote opens a value after "=" only; a tag cut off by the end of the page is
# no tag. A start tag first closes what a browser closes for it: an open p (for a div, a list,
# a heading...), li, dd or dt, option, table cell, row or section, a table in a table, a heading
# in a heading, so that end tags a page leaves out (</p>, </li>, </td>...) do not pile up; an
# end tag closes its element and all above it, unless a scope or "special" element stands
# between (then a browser ignores it, and so does the model). Inside svg and math, "/>"
# closes an element; in HTML it does not ("<div/>" opens a div). Before this the estimate
# counted +1 per start tag and -1 per end tag: 11,963 for an ordinary 2 MB page with SVG
# railroad diagrams, whose flattening then lost its main content.
# Every search of the stack looks at most `_NESTING_SEARCH` elements down; past that nothing
# is closed, so the model errs deep, as a defence must. Not modelled: the formatting elements
# the adoption agency reopens, foster parenting, the tbody and tr a browser adds to a table
# without them (lexbor then nests 2 deeper per table).
_NESTING_SEARCH = 64
# what the model knows of an element, by name: bits (`_NESTING_KINDS`, in the same values in
# `_native/lexbor_walk.pyx`)
_NEST_SPECIAL = 1 << 0  # the standard's "special" elements: an end tag of any other stops at one
_NEST_SCOPE = 1 << 1  # an end tag of a special element stops at one
_NEST_BUTTON = 1 << 2  # (the scope of a p also ends at a button)
_NEST_TABLE_CONTEXT = 1 << 3  # where the search for a cell, row or section stops
_NEST_P = 1 << 4
_NEST_LI = 1 << 5
_NEST_DD_DT = 1 << 6
_NEST_CELL = 1 << 7
_NEST_ROW = 1 << 8
_NEST_SECTION = 1 << 9
_NEST_CAPTION = 1 << 10
_NEST_TABLE = 1 << 11
_NEST_HEADING = 1 << 12
_NEST_OPTION = 1 << 13
_NEST_OPTGROUP = 1 << 14
_NEST_CLOSES_P = 1 << 15  # its start tag closes an open p
_NEST_LIST_BARRIER = 1 << 16  # where the search for an li, dd or dt stops
_NEST_FOREIGN = 1 << 17  # svg, math: their children are foreign elements
_NEST_INTEGRATION = 1 << 18  # a foreign element whose children are HTML again
_NEST_VOID = 1 << 19
_NEST_RAW = 1 << 20  # its content is text up to its end tag
_NEST_NOSCRIPT = 1 << 21  # and so is a noscript's, with scripting on
_NEST_ROOT = 1 << 22  # html, head, body: a second start tag opens nothing
_NESTING_GROUPS = (
    (_NEST_SPECIAL, "address applet area article aside base basefont bgsound blockquote body br "
     "button caption center col colgroup dd details dir div dl dt embed fieldset figcaption "
     "figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html iframe img "
     "input keygen li link listing main marquee menu meta nav noembed noframes noscript object "
     "ol p param plaintext pre script search section select source style summary table tbody "
     "td template textarea tfoot th thead title tr track ul wbr xmp mi mo mn ms mtext "
     "annotation-xml foreignobject desc"),
    (_NEST_SCOPE, "applet caption html table td th marquee object template mi mo mn ms mtext "
     "annotation-xml foreignobject desc title"),
    (_NEST_BUTTON, "button"),
    (_NEST_TABLE_CONTEXT, "html table template"),
    (_NEST_P, "p"),
    (_NEST_LI, "li"),
    (_NEST_DD_DT, "dd dt"),
    (_NEST_CELL, "td th"),
    (_NEST_ROW, "tr"),
    (_NEST_SECTION, "tbody thead tfoot"),
    (_NEST_CAPTION, "caption colgroup"),
    (_NEST_TABLE, "table"),
    (_NEST_HEADING, "h1 h2 h3 h4 h5 h6"),
    (_NEST_OPTION, "option"),
    (_NEST_OPTGROUP, "optgroup"),
    # (a table closes a p only in no-quirks mode: left out, the model errs deep)
    (_NEST_CLOSES_P, "address article aside blockquote center details dialog dir div dl "
     "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr main menu nav "
     "ol p pre search section summary ul li dd dt listing"),
    (_NEST_FOREIGN, "svg math"),
    (_NEST_INTEGRATION, "foreignobject desc title mi mo mn ms mtext annotation-xml"),
    (_NEST_VOID, "area base basefont bgsound br col embed frame hr image img input keygen link "
     "meta param source track wbr"),
    (_NEST_RAW, "script style textarea title xmp iframe noembed noframes plaintext"),
    (_NEST_NOSCRIPT, "noscript"),
    (_NEST_ROOT, "html head body"),
)  # fmt: skip


def _nesting_kinds() -> dict[str, int]:
    kinds: dict[str, int] = {}
    for bit, names in _NESTING_GROUPS:
        for name in names.split():
            kinds[name] = kinds.get(name, 0) | bit
    for name, bits in kinds.items():
        if bits & _NEST_SPECIAL and name not in ("address", "div", "p"):
            kinds[name] = bits | _NEST_LIST_BARRIER
    return kinds


_NESTING_KINDS = _nesting_kinds()
# "<" and what follows: a comment, a doctype or bogus comment, or a tag (group 1 "/" for an
# end tag, group 2 its name)
_NESTING_TOKEN = re.compile(r"<(?:!--|[!?]|/(?![A-Za-z])|(/?)([A-Za-z][^\t\n\f\r />]*+))")
# the rest of a tag up to its ">": a quote opens a value only after "=" (and white space)
_TAG_REST = re.compile(r"""(?:[^>"'=]++|=[\t\n\f\r ]*+(?:"[^"]*+"?|'[^']*+'?)?|["'])*+""")


@functools.lru_cache(maxsize=16)
def _raw_text_end(name: str) -> re.Pattern[str]:
    return re.compile(f"</{name}[\\t\\n\\f\\r />]", re.IGNORECASE | re.ASCII)


def _nest(
    html: str, scripting: bool, max_depth: int | None = None, kept: list[str] | None = None
) -> int:
    """The nesting model over ``html``: the deepest its stack of open elements grows. With
    ``max_depth`` and ``kept``, ``kept`` receives the page's pieces without the start tags that
    would open an element deeper than ``max_depth`` (and as many end tags of each name); the
    stack then never grows past ``max_depth``."""
    kind_of = _NESTING_KINDS.get
    raw = _NEST_RAW | (_NEST_NOSCRIPT if scripting else 0)
    window = _NESTING_SEARCH
    names: list[str] = []  # the open elements, innermost last
    kinds: list[int] = []
    foreign: list[bool] = []  # whether each one's children are svg or math elements
    roots: set[str] = set()
    dropped: dict[str, int] = {}  # start tags left out, by name, whose end tags go too
    deepest = position = i = 0
    n = len(html)

    def find(target: int, barrier: int) -> int:
        """Where the innermost open element with a ``target`` bit is, if one is found before
        an element with a ``barrier`` bit and within ``window``; else -1."""
        for k in range(len(kinds) - 1, max(len(kinds) - window, 0) - 1, -1):
            if kinds[k] & target:
                return k
            if kinds[k] & barrier:
                return -1
        return -1

    def close(k: int) -> None:
        if k >= 0:
            del names[k:], kinds[k:], foreign[k:]

    while True:
        match = _NESTING_TOKEN.search(html, i)
        if match is None:
            break
        name = match.group(2)
        if name is None:  # a comment to its "-->", anything else to its ">"
            end = (
                html.find("-->", match.start() + 2) + 2
                if match.group().endswith("-")
                else html.find(">", match.end())
            )
            i = n if end < 2 else end + 1
            continue
        end = _TAG_REST.match(html, match.end()).end()  # type: ignore[union-attr]
        if end >= n:
            break
        i = end + 1
        name = name.lower() if name.isascii() else name.translate(_ASCII_LOWER)
        bits = kind_of(name, 0)
        if match.group(1):  # an end tag
            if kept is not None and dropped.get(name):
                dropped[name] -= 1
                kept.append(html[position : match.start()])
                position = i
            elif not bits & _NEST_ROOT or name == "head":
                barrier = _NEST_SCOPE if bits & _NEST_SPECIAL else _NEST_SPECIAL
                for k in range(len(names) - 1, max(len(names) - window, 0) - 1, -1):
                    if names[k] == name:
                        close(k)
                        break
                    if kinds[k] & barrier:
                        break
            continue
        self_closing = html[end - 1] == "/"
        if foreign and foreign[-1]:
            if self_closing:
                continue
            child_foreign = not bits & _NEST_INTEGRATION
        else:
            if bits & raw:
                found = _raw_text_end(name).search(html, i)
                i = n if found is None else found.start()
                continue
            if bits & _NEST_ROOT:
                if name == "body" and names and names[-1] == "head":
                    close(len(names) - 1)
                if name in roots:
                    continue
                roots.add(name)
            elif bits:
                if bits & _NEST_LI:
                    close(find(_NEST_LI, _NEST_LIST_BARRIER))
                if bits & _NEST_DD_DT:
                    close(find(_NEST_DD_DT, _NEST_LIST_BARRIER))
                # (a p is looked for only when there is one to find: a C-speed test)
                if bits & _NEST_CLOSES_P and "p" in names[-window:]:
                    close(find(_NEST_P, _NEST_SCOPE | _NEST_BUTTON))
                if bits & _NEST_HEADING and kinds and kinds[-1] & _NEST_HEADING:
                    close(len(kinds) - 1)
                if bits & (_NEST_OPTION | _NEST_OPTGROUP) and kinds and kinds[-1] & _NEST_OPTION:
                    close(len(kinds) - 1)
                if bits & _NEST_OPTGROUP and kinds and kinds[-1] & _NEST_OPTGROUP:
                    close(len(kinds) - 1)
                if bits & (_NEST_CELL | _NEST_ROW | _NEST_SECTION | _NEST_CAPTION):
                    close(find(_NEST_CELL, _NEST_TABLE_CONTEXT))
                if bits & (_NEST_ROW | _NEST_SECTION | _NEST_CAPTION):
                    close(find(_NEST_ROW, _NEST_TABLE_CONTEXT))
                if bits & (_NEST_SECTION | _NEST_CAPTION):
                    close(find(_NEST_SECTION, _NEST_TABLE_CONTEXT))
                if bits & _NEST_TABLE:
                    close(find(_NEST_TABLE, _NEST_CELL | _NEST_CAPTION))
            if bits & _NEST_VOID or (bits & _NEST_FOREIGN and self_closing):
                continue
            child_foreign = bool(bits & _NEST_FOREIGN)
        if kept is not None and max_depth is not None and len(names) >= max_depth:
            dropped[name] = dropped.get(name, 0) + 1
            kept.append(html[position : match.start()])
            position = i
            continue
        names.append(name)
        kinds.append(bits)
        foreign.append(child_foreign)
        deepest = max(deepest, len(names))
    if kept is not None:
        kept.append(html[position:])
    return deepest


def parse_text_blocks(text: str) -> list[Block]:
    """Blocks of a plain-text document: one per non-empty line."""
    blocks = []
    for line in text.splitlines():
        collapsed = " ".join(_INVISIBLE.sub("", line).split())
        if collapsed:
            blocks.append(
                Block(
                    len(blocks), collapsed, "p", "text", 1, 0.0, False, False, False, False, False
                )
            )
    return blocks


def extract_text(html: str, *, parser: str = "lexbor") -> str:
    """The page's text without any filtering: blocks separated by newlines (``strip-tags``)."""
    return "\n".join(block.text for block in parse_blocks(html, parser=parser))


def _walk(
    root: Any,
    deadline: float | None,
    *,
    class_words: bool = True,
    max_blocks: int | None = None,
    skip_tags: frozenset[str] = SKIP_TAGS,
    noscript: list[int] | None = None,
    dialogs: list[int] | None = None,
) -> list[Block]:
    """Cut blocks out of a parsed page, depth first, without recursion.

    For lexbor, ``_native/lexbor_walk.pyx`` does the same over lexbor's C structs when it is
    built (about a third of the time); this walk is its reference and serves html5lib.

    ``root`` follows lexbor's node protocol (``tag``, ``child``, ``next``, ``text_content``,
    text nodes tagged ``-text``); html5lib's tree is adapted to it, so both backends follow the
    very same rules.

    The tag path of a block is the path to the lowest common ancestor of its text nodes, kept in
    O(1) per node: ``path`` is the stack at the block's first text node and ``lca`` its length;
    ``low`` is the shallowest depth closed since the last text node, and a later text node
    lowers ``lca`` to it (the two texts share only the ancestors above it).

    Elements of ``skip_tags`` are walked past; of those, a ``noscript``'s raw content (its first
    child's text, with scripting on) has its length appended to ``noscript`` when given.
    ``dialogs``, when given, receives the index of each block whose tag path passes through
    an element that is a dialog by its ARIA attributes (`aria_dialog`).
    """
    blocks: list[Block] = []
    stack: list[str] = [root.tag]
    # `element_class_groups` of the open elements (0 without ``class_words``)
    element_groups = element_class_groups if class_words else _no_class_groups
    groups: list[int] = [element_groups(root.tag, root.attributes)]
    path_groups: list[int] = []
    block_stack: list[str] = ["html"]
    open_nodes: list[Any] = [root]
    parts: list[str] = []
    path: list[str] = []
    n_chars = link_chars = link_depth = count = comment_marks = 0
    lca = -1
    low = 0
    block_tag = ""
    dialog = -1  # the position in ``stack`` of the outermost open ARIA dialog, or -1

    # tag path -> (path string, depth, in_link, in_heading, in_list, in_table, in_form): a
    # page repeats a few dozen paths over hundreds of blocks
    path_info: dict[tuple[str, ...], tuple[str, int, bool, bool, bool, bool, bool]] = {}

    def flush() -> None:
        nonlocal n_chars, link_chars, lca
        text = " ".join(_INVISIBLE.sub("", "".join(parts)).split())
        parts.clear()
        if text:
            key = tuple(path[:lca])
            code = _class_words(path_groups[:lca])
            info = path_info.get(key)
            if info is None:
                info = path_info[key] = (
                    " ".join(key),
                    len(key),
                    "a" in key,
                    not HEADING_TAGS.isdisjoint(key),
                    not LIST_TAGS.isdisjoint(key),
                    not TABLE_TAGS.isdisjoint(key),
                    not FORM_TAGS.isdisjoint(key),
                )
            blocks.append(
                Block(
                    len(blocks),
                    text,
                    block_tag,
                    info[0],
                    info[1],
                    link_chars / n_chars if n_chars else 0.0,
                    *info[2:],
                    code,
                    comment_marks,
                )
            )
            if 0 <= dialog < lca and dialogs is not None:
                dialogs.append(len(blocks) - 1)
        n_chars = link_chars = 0
        lca = -1

    block_tags = BLOCK_TAGS  # a local: this loop runs per DOM node
    add_part, push, open_node = parts.append, stack.append, open_nodes.append
    node = root.child
    while True:
        if node is None:  # the children of open_nodes[-1] are done: close it
            tag = stack.pop()
            groups.pop()
            if tag in block_tags:
                if parts:
                    flush()
                block_stack.pop()
            elif tag == "a":
                link_depth -= 1
            if dialog == len(stack):
                dialog = -1
            if low > len(stack):  # noqa: PLR1730 - min() is a builtin call per node
                low = len(stack)
            node = open_nodes.pop().next
            if not open_nodes:
                break
            continue
        tag = node.tag
        if tag == "-text":
            data = node.text_content
            if data and not data.isspace():
                add_part(data)
                n = len(data)
                n_chars += n
                if link_depth:
                    link_chars += n
                depth = len(stack)
                if lca < 0:
                    lca = depth
                    path = stack[:]
                    path_groups = groups[:]
                    block_tag = block_stack[-1]
                elif low < lca:
                    lca = low
                low = depth
            elif parts:
                add_part(" ")
        elif (
            tag
            and tag[0] not in "_!#-"  # not a comment or doctype
            and tag not in skip_tags
            and not hidden_element(tag, node.attributes)
        ):
            count += 1
            if not count & 1023:
                check_deadline(deadline, "while parsing")
                if max_blocks and len(blocks) > max_blocks:
                    raise too_many_blocks(max_blocks)
            if tag in block_tags:
                if parts:
                    flush()
                block_stack.append(tag)
            elif tag == "a":
                link_depth += 1
            if dialogs is not None and dialog < 0 and aria_dialog(node.attributes):
                dialog = len(stack)
            push(tag)
            found = element_groups(tag, node.attributes)
            groups.append(found)
            comment_marks += found >> CLASS_COMMENT & 1
            open_node(node)
            node = node.child
            continue
        elif noscript is not None and tag == "noscript":
            child = node.child
            noscript.append(
                len(child.text_content or "") if child is not None and child.tag == "-text" else 0
            )
        node = node.next
    if parts:
        flush()
    if max_blocks and len(blocks) > max_blocks:
        raise too_many_blocks(max_blocks)
    return blocks


def too_many_blocks(max_blocks: int) -> PageTooLarge:
    """The error of a page with more than ``max_blocks`` blocks (both walks, plain text)."""
    return PageTooLarge(f"more than max_blocks={max_blocks} text blocks")


class _Html5libNode:
    """An html5lib (ElementTree) node seen through lexbor's node protocol."""

    __slots__ = ("attributes", "child", "next", "tag", "text_content")

    def __init__(
        self, tag: str, text_content: str | None = None, attributes: dict[str, str] | None = None
    ) -> None:
        self.tag = tag
        self.text_content = text_content
        self.attributes = attributes if attributes is not None else {}
        self.child: _Html5libNode | None = None
        self.next: _Html5libNode | None = None


class _DeadlineReader(io.StringIO):
    """Feeds html5lib in small reads, looking at the clock between them.

    html5lib's tree builder is quadratic on deeply nested markup; without this a hostile page
    could hold the parser far past the document's budget.
    """

    def __init__(self, text: str, deadline: float | None) -> None:
        super().__init__(text)
        self.deadline = deadline

    def read(self, size: int | None = -1) -> str:
        check_deadline(self.deadline, "while parsing (html5lib)")
        return super().read(1024 if size is None or size < 0 else min(size, 1024))


def _html5lib_root(html: str, deadline: float | None, *, scripting: bool) -> _Html5libNode:
    """Parse with html5lib (with ``scripting`` on or off) and link its tree up as
    `_Html5libNode`s (iteratively)."""
    import html5lib

    tree = html5lib.parse(
        _DeadlineReader(html, deadline),
        treebuilder="etree",
        namespaceHTMLElements=False,
        scripting=scripting,
    )
    root = _Html5libNode(tree.tag)
    todo = [(tree, root)]
    while todo:
        element, node = todo.pop()
        children: list[_Html5libNode] = []
        if element.text:
            children.append(_Html5libNode("-text", element.text))
        for sub in element:
            # comments have a function as their tag; their tails are still page text
            if isinstance(sub.tag, str):
                # svg and math keep their namespace in html5lib's tree: "{ns}svg" -> "svg"
                child = _Html5libNode(sub.tag.rpartition("}")[2], attributes=sub.attrib)
                children.append(child)
                todo.append((sub, child))
            if sub.tail:
                children.append(_Html5libNode("-text", sub.tail))
        for left, right in itertools.pairwise(children):
            left.next = right
        node.child = children[0] if children else None
    return root
