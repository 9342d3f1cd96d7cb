"""Keep/drop decisions. A filter returns ``(keep, reason)``; the reason is a closed set of
snake_case strings that the output records carry and the metrics count."""

from __future__ import annotations

import re


class DropReason:
    """Why a sentence was dropped."""

    HIGH_PERPLEXITY = "high_perplexity"  # above max_sentence_perplexity: the paper's method
    NO_WORDS = "no_words"  # no letter at all: separators, page numbers, lone symbols
    TIME_BUDGET = "time_budget"  # the document ran out of time before it was scored
    BOILERPLATE = "boilerplate"  # in a block the labeller (corpus/article mode) drops

    ALL = (HIGH_PERPLEXITY, NO_WORDS, TIME_BUDGET, BOILERPLATE)


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

    Returns:
        ``(True, None)`` to keep, ``(False, reason)`` to drop.
    """
    if perplexity is None or not has_words(text):
        return False, DropReason.NO_WORDS
    if perplexity > max_sentence_perplexity:
        return False, DropReason.HIGH_PERPLEXITY
    return True, None
