"""The records that flow through the cleaner, one type per arrow.

RawDocument -> decode -> parse -> Block -> segment -> lm.score -> decide -> ScoredSentence
-> CleanedDocument. The core never mutates a record once it is made.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .language import UNDETERMINED, UNKNOWN, Language

_KEEP = operator.attrgetter("keep")


@dataclass(frozen=True, slots=True)
class RawDocument:
    """One fetched page as a crawler hands it over.

    Attributes:
        body: the page as fetched (bytes) or already decoded (str).
        id: a stable identifier (WARC record id, file path, Kafka key...). May be empty.
        url: the page's URL when known.
        headers: HTTP response headers; only ``Content-Type`` is used, to find a charset.
        content_type: a Content-Type given outside the headers (WARC, JSON envelope).
        status: the HTTP status of the fetch, when known. A response other than 2xx
            (a redirect, an error page) or one whose Content-Type is no page (a style sheet,
            an image, JSON...) is not cleaned: its error is ``not_a_page``.
        error: set by a reader that could not even produce a body (a broken WARC record):
            the pipeline passes it through as the cleaned document's error.
    """

    body: bytes | str
    id: str = ""
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str | None = None
    error: str | None = None
    status: int | None = None


@dataclass(slots=True)
class Block:
    """A run of text that a browser would lay out as one box (paragraph, list item, cell...).

    Not frozen, for speed alone: a page makes hundreds of blocks and sentences, and a frozen
    dataclass takes six times longer to construct. Nothing changes one once it is made.

    Attributes:
        index: position of the block in reading order, from 0.
        text: the block's text, whitespace collapsed to single spaces.
        tag: the block-level element that holds the text (``p``, ``li``, ``td``, ``div``...).
        tag_path: the tags from ``html`` down to the deepest element holding all of the
            block's text, space separated (``html body div ul li a``).
        depth: the number of tags in ``tag_path``.
        link_density: the share of the block's characters that sit inside ``<a>`` elements.
        in_link, in_heading, in_list, in_table, in_form: whether ``tag_path`` passes through
            such an element.
        class_words: what the class and id attributes on ``tag_path`` say, 4 bits for each
            group of `parse.CLASS_WORD_GROUPS` (group ``g`` in bits ``4g`` to ``4g + 3``): how
            many levels up from the block's element is the nearest element whose class or id
            holds a word of the group (1: that element itself; at most 15), 0 when none.
        comment_marks: how many elements whose class or id names the comment group of
            `parse.CLASS_WORD_GROUPS` the page opens before the block ends, in document order,
            wherever they are (``<h2 id="comments">`` before a thread as well as the thread's
            own containers).
    """

    index: int
    text: str
    tag: str
    tag_path: str
    depth: int
    link_density: float
    in_link: bool
    in_heading: bool
    in_list: bool
    in_table: bool
    in_form: bool
    class_words: int = 0
    comment_marks: int = 0

    def with_text(self, text: str) -> Block:
        """This block with another text (what a labeller reads of it: `pipeline`): about a
        seventh of `dataclasses.replace`'s time under the profiler, on a page of 200 blocks."""
        return Block(
            self.index, text, self.tag, self.tag_path, self.depth, self.link_density,
            self.in_link, self.in_heading, self.in_list, self.in_table, self.in_form,
            self.class_words, self.comment_marks,
        )  # fmt: skip


@dataclass(slots=True)
class ScoredSentence:
    """One sentence of one block, with its language-model score and the decision on it.

    Not frozen, for the speed reason given on `Block`.

    ``perplexity`` is ``10 ** (-log10_prob / (n_tokens + 1))``: KenLM's definition, the end of
    sentence counting as a token. It is ``None`` when the sentence has no scorable token, or
    when no model was given for its language (``log10_prob`` is 0 then, ``n_tokens`` still
    counts its tokens). ``language`` is its block's (`language.LanguageIdentifier`).
    """

    text: str
    block_index: int
    log10_prob: float
    n_tokens: int
    n_oov: int
    perplexity: float | None
    keep: bool
    reason: str | None
    language: str = UNKNOWN

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "block": self.block_index,
            "log10_prob": self.log10_prob,
            "tokens": self.n_tokens,
            "oov": self.n_oov,
            "perplexity": self.perplexity,
            "kept": self.keep,
            "reason": self.reason,
            "language": self.language,
        }


@dataclass(frozen=True, slots=True)
class CleanedDocument:
    """What the cleaner made of one RawDocument.

    Attributes:
        id, url: copied from the input.
        text: the kept sentences; sentences of one block joined by a space (none after a CJK
            full stop: those scripts put none), blocks by a newline.
        sentences: every sentence of the page, kept or not, in reading order.
        perplexity: document perplexity from the summed log-probabilities and token counts of
            all its sentences (``None`` without tokens).
        kept_perplexity: the same over the kept sentences only.
        dropped: number of dropped sentences by reason.
        n_blocks: number of text blocks the parser found.
        encoding: the charset the body was decoded with (``None`` for str input).
        model_id: the language model that scored the sentences: the model of the page's
            language, or the default (English) model when that language has none.
        seconds: time spent per stage (decode, parse, language, split, score, label, decide)
            and in total.
        error: why the page could not be cleaned (a closed set, see ``decide.ErrorReason``),
            or ``None``. A document with an error has whatever text was made before it.
        error_detail: a human-readable explanation of ``error``.
        block_kinds: per block (by index) its kind, ``p``, ``h`` or ``l`` (paragraph, heading,
            list item), as CleanEval's gold marks them; empty when the page was not parsed.
        language: the page's language (ISO 639-1 code, ``und`` when unsure or not parsed)
            and the identifier's confidence.
        title: the text of the page's ``<title>`` (`parse.page_title`); ``""`` when it has
            none, and for plain text.
        guard: why the content-loss guard changed the labeller's decision
            (`guard.GuardReason`: ``content_loss``, the page's longest run of prose (or,
            where the decision kept almost nothing, its table of figures) was dropped and is
            kept; ``corpus_joined``, in ``auto``, the decision kept fewer words than
            `guard.CORPUS_BELOW_WORDS` (in ``article``, no word) and the corpus labeller's
            blocks outside comments, menus, sidebars, footers and overlays are kept too;
            ``thread``, in
            ``article``, a page typed a forum with a probability of at least
            `guard.ARTICLE_THREAD_PROBABILITY` is decided as ``auto`` decides it, its posts
            kept), or ``None`` when it did not.
        page_type: what kind of page it is, one of `page_types.PAGE_TYPES` (``article``,
            ``forum``, ``documentation``, ``product``, ``collection``, ``listing``,
            ``service``); ``""`` when not determined: in perplexity mode, for plain text,
            empty pages and errors.
        page_type_confidence: the page-type model's probability of ``page_type`` (0 for
            ``""``).
    """

    id: str
    url: str
    text: str
    sentences: tuple[ScoredSentence, ...]
    perplexity: float | None
    kept_perplexity: float | None
    dropped: Mapping[str, int]
    n_blocks: int
    encoding: str | None
    model_id: str
    seconds: Mapping[str, float]
    error: str | None = None
    error_detail: str | None = None
    block_kinds: tuple[str, ...] = ()
    language: Language = UNDETERMINED
    title: str = ""
    guard: str | None = None
    page_type: str = ""
    page_type_confidence: float = 0.0

    @property
    def n_kept(self) -> int:
        return sum(map(_KEEP, self.sentences))  # keep is a bool: True counts 1

    def to_dict(self, *, sentences: bool = True) -> dict[str, Any]:
        """A JSON-ready dict; ``sentences=False`` leaves the per-sentence list out."""
        out: dict[str, Any] = {
            "id": self.id,
            "url": self.url,
            "title": self.title,
            "text": self.text,
            "perplexity": self.perplexity,
            "kept_perplexity": self.kept_perplexity,
            "n_sentences": len(self.sentences),
            "n_kept": self.n_kept,
            "dropped": dict(self.dropped),
            "n_blocks": self.n_blocks,
            "encoding": self.encoding,
            "model_id": self.model_id,
            "seconds": dict(self.seconds),
            "error": self.error,
            "error_detail": self.error_detail,
            "language": self.language.code,
            "language_confidence": self.language.confidence,
            "guard": self.guard,
            "page_type": self.page_type,
            "page_type_confidence": self.page_type_confidence,
        }
        if sentences:
            out["sentences"] = [s.to_dict() for s in self.sentences]
        return out
