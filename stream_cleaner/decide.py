"""Keep/drop decisions. A filter returns ``(keep, reason)``; the reason is a closed set of
snake_case strings that the output records carry and the metrics count."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._native import native_module


class DropReason:
    """Why a sentence was dropped."""

    HIGH_PERPLEXITY = "high_perplexity"  # above max_sentence_perplexity: the paper's method
    NO_WORDS = "no_words"  # no letter at all: separators, page numbers, lone symbols
    TIME_BUDGET = "time_budget"  # the document ran out of time before it was scored
    SITE_TEMPLATE = "site_template"  # its block repeats on most of the site's recent pages
    BOILERPLATE = "boilerplate"  # in a block the labeller (corpus/article mode) drops

    ALL = (HIGH_PERPLEXITY, NO_WORDS, TIME_BUDGET, SITE_TEMPLATE, BOILERPLATE)


class ErrorReason:
    """Why a whole document could not be cleaned (``CleanedDocument.error``)."""

    EMPTY = "empty"  # no body, or only white space, or no text after parsing
    BINARY = "binary_content"  # PDF, image, archive...: not a text format
    TOO_LARGE = "too_large"  # above max_document_bytes
    TIME_BUDGET = "time_budget"  # past time_budget_seconds
    WARC_RECORD = "warc_record_error"  # a WARC record that could not be read
    INVALID_JSON = "invalid_json"  # a JSON Lines input line that is not a valid envelope
    READ_ERROR = "read_error"  # a file that could not be read
    INTERNAL = "internal_error"  # a bug: the detail names the exception

    ALL = (EMPTY, BINARY, TOO_LARGE, TIME_BUDGET, WARC_RECORD, INVALID_JSON, READ_ERROR, INTERNAL)


_LETTER = re.compile(r"[^\W\d_]")


def has_words(text: str) -> bool:
    """Whether a text has at least one letter (of any script)."""
    return _LETTER.search(text) is not None


def decide_sentence(
    text: str, perplexity: float | None, *, max_sentence_perplexity: float
) -> tuple[bool, str | None]:
    """The paper's filter: keep a sentence unless its perplexity is above the limit.

    A sentence without a perplexity (no model for its language) is kept when it has words:
    the filter has nothing to say about it.

    Returns:
        ``(True, None)`` to keep, ``(False, reason)`` to drop.
    """
    (decision,) = decide_sentences(
        [text], [perplexity], max_sentence_perplexity=max_sentence_perplexity
    )
    return decision


def decide_sentences(
    texts: Sequence[str], perplexities: Sequence[float | None], *, max_sentence_perplexity: float
) -> list[tuple[bool, str | None]]:
    """`decide_sentence` for a page's sentences at once (the same rules, fewer Python calls)."""
    keep: tuple[bool, None] = (True, None)
    no_words = (False, DropReason.NO_WORDS)
    too_high = (False, DropReason.HIGH_PERPLEXITY)
    fast = native_module("sentences")
    if fast is not None:
        words = fast.has_words(texts if isinstance(texts, list) else list(texts))
    else:
        letter = _LETTER.search
        words = [letter(text) is not None for text in texts]
    return [
        no_words
        if not has
        else keep
        if ppl is None
        else too_high
        if ppl > max_sentence_perplexity
        else keep
        for has, ppl in zip(words, perplexities, strict=True)
    ]
