"""Keep/drop decisions. A filter returns ``(keep, reason)``; the reason is a closed set of
snake_case strings that the output records carry and the metrics count."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._native import native_module
from .filters import (
    REGISTRY,
    Boilerplate,
    HighPerplexity,
    NoWords,
    SiteTemplate,
    TimeBudget,
    TooLong,
)
from .lm import normalize
from .settings import MAX_SENTENCE_TOKENS_DEFAULT, MAX_WORD_CHARS_DEFAULT

if TYPE_CHECKING:
    from .document import ScoredSentence
    from .settings import CleanerSettings


class _Registered(type):
    @property
    def ALL(cls) -> tuple[str, ...]:  # noqa: N802 - the constant it has always been
        """Every drop reason, the registry's (`filters.REGISTRY`), rules added later included."""
        return REGISTRY.reasons()


class DropReason(metaclass=_Registered):
    """Why a sentence was dropped: the reasons of the rules shipped (`filters`); ``ALL`` is
    every registered one."""

    HIGH_PERPLEXITY = HighPerplexity.reason  # above max_sentence_perplexity: the paper's method
    NO_WORDS = NoWords.reason  # no letter at all: separators, page numbers, lone symbols
    TOO_LONG = TooLong.reason  # above max_sentence_tokens, or a word above max_word_chars: junk
    TIME_BUDGET = TimeBudget.reason  # the document ran out of time before it was scored
    SITE_TEMPLATE = SiteTemplate.reason  # its block repeats on most of the site's recent pages
    BOILERPLATE = Boilerplate.reason  # in a block the labeller (corpus/article mode) drops


class ErrorReason:
    """Why a whole document could not be cleaned (``CleanedDocument.error``)."""

    EMPTY = "empty"  # no body, or only white space, or no text after parsing
    BINARY = "binary_content"  # PDF, image, archive...: not a text format
    NOT_A_PAGE = "not_a_page"  # a non-2xx response, or a Content-Type that is no page
    TOO_LARGE = "too_large"  # above max_document_bytes
    TIME_BUDGET = "time_budget"  # past time_budget_seconds
    WARC_RECORD = "warc_record_error"  # a WARC record that could not be read
    INVALID_JSON = "invalid_json"  # a JSON Lines input line that is not a valid envelope
    READ_ERROR = "read_error"  # a file that could not be read
    INTERNAL = "internal_error"  # a bug: the detail names the exception

    ALL = (
        EMPTY, BINARY, NOT_A_PAGE, TOO_LARGE, TIME_BUDGET, WARC_RECORD, INVALID_JSON, READ_ERROR,
        INTERNAL,
    )  # fmt: skip


_LETTER = re.compile(r"[^\W\d_]")


def has_words(text: str) -> bool:
    """Whether a text has at least one letter (of any script)."""
    return _LETTER.search(text) is not None


_DIGIT = re.compile(r"\d")


def is_figure(text: str) -> bool:
    """Whether a sentence without a letter is a figure ("29", "9/11/16", "$19.99", ".333"): it
    holds a digit. In the labeller modes a figure is decided as its block, not as
    `DropReason.NO_WORDS` (rules 50 and 51 in bench/auto_training.py): a table, a price or a
    score the labeller keeps keeps its figures."""
    return _DIGIT.search(text) is not None


def too_long(text: str, *, max_sentence_tokens: int, max_word_chars: int) -> bool:
    """Whether a sentence is longer than natural text: more than ``max_sentence_tokens``
    tokens, or a token of more than ``max_word_chars`` characters (the language model's tokens,
    `lm.normalize`: words, punctuation marks, CJK characters one by one).

    Such a "sentence" is junk that no boundary cut (a 5 MB "word", 5 MB of "A. A."), and its
    perplexity, an average per token, cannot tell: an unknown word scores the same alone and
    5 MB long, and a pattern repeated a million times scores as one of its words.
    """
    if len(text) <= min(max_sentence_tokens, max_word_chars):
        return False  # nearly every sentence: a token has a character at least
    tokens = normalize(text).split()
    return len(tokens) > max_sentence_tokens or max(map(len, tokens), default=0) > max_word_chars


def decide_sentence(
    text: str,
    perplexity: float | None,
    *,
    max_sentence_perplexity: float,
    max_sentence_tokens: int = MAX_SENTENCE_TOKENS_DEFAULT,
    max_word_chars: int = MAX_WORD_CHARS_DEFAULT,
) -> tuple[bool, str | None]:
    """The paper's filter: keep a sentence unless its perplexity is above the limit.

    A sentence without a perplexity (no model for its language) is kept when it has words:
    the filter has nothing to say about it. Before it, a sentence without a letter is dropped
    (`DropReason.NO_WORDS`), and so is one longer than natural text (`too_long`,
    `DropReason.TOO_LONG`).

    Returns:
        ``(True, None)`` to keep, ``(False, reason)`` to drop.
    """
    (decision,) = decide_sentences(
        [text], [perplexity], max_sentence_perplexity=max_sentence_perplexity,
        max_sentence_tokens=max_sentence_tokens, max_word_chars=max_word_chars,
    )  # fmt: skip
    return decision


def decide_sentences(
    texts: Sequence[str],
    perplexities: Sequence[float | None],
    *,
    max_sentence_perplexity: float,
    max_sentence_tokens: int = MAX_SENTENCE_TOKENS_DEFAULT,
    max_word_chars: int = MAX_WORD_CHARS_DEFAULT,
    figures: bool = False,
) -> list[tuple[bool, str | None]]:
    """`decide_sentence` for a page's sentences at once (the same rules, fewer Python calls);
    with ``figures``, a figure without a letter counts as words (`is_figure`)."""
    keep: tuple[bool, None] = (True, None)
    reasons = REGISTRY.columns().reasons
    no_words, long, too_high = ((False, reason) for reason in reasons[:3])
    fast = native_module("sentences")
    if fast is not None:
        words = fast.has_words(texts if isinstance(texts, list) else list(texts))
    else:
        letter = _LETTER.search
        words = [letter(text) is not None for text in texts]
    if figures:
        words = [has or is_figure(text) for has, text in zip(words, texts, strict=True)]
    shortest = min(max_sentence_tokens, max_word_chars)
    limits = {"max_sentence_tokens": max_sentence_tokens, "max_word_chars": max_word_chars}
    return [
        no_words
        if not has
        else long
        if len(text) > shortest and too_long(text, **limits)
        else keep
        if ppl is None
        else too_high
        if ppl > max_sentence_perplexity
        else keep
        for text, has, ppl in zip(texts, words, perplexities, strict=True)
    ]


def sentence_limit(settings: CleanerSettings, trained: float | None = None) -> float:
    """The perplexity limit a page's sentences are decided by (`decide_sentences`).

    ``settings.max_sentence_perplexity`` when `limits_by_setting`; otherwise, in the
    labeller's modes, the limit the labeller was trained with (``trained``) under
    ``sentence_filter="auto"``, and none (infinity) without one or under ``"off"``.
    """
    if limits_by_setting(settings):
        return settings.max_sentence_perplexity
    if settings.sentence_filter == "auto" and trained:
        return trained
    return math.inf


def limits_by_setting(settings: CleanerSettings) -> bool:
    """Whether ``settings.max_sentence_perplexity`` is the limit of `sentence_limit`: in
    perplexity mode (the paper's filter), and in the labeller's modes with
    ``sentence_filter="on"``."""
    return settings.mode == "perplexity" or settings.sentence_filter == "on"


def decided_by_limit(sentences: Iterable[ScoredSentence]) -> list[bool]:
    """Which of a page's decisions (`decide_page`'s) the perplexity limit made: a sentence kept
    with a perplexity, or dropped as `DropReason.HIGH_PERPLEXITY`.

    Every other decision comes before the limit and no limit changes it: no words, too long,
    no perplexity (no model for its language), a site template, a block the labeller drops, out
    of time. Under another limit ``L``, a sentence the limit decided is kept exactly when its
    perplexity is at most ``L``.
    """
    high = DropReason.HIGH_PERPLEXITY
    return [s.perplexity is not None and (s.keep or s.reason == high) for s in sentences]


def depends_on_setting_limit(
    sentences: Iterable[ScoredSentence], settings: CleanerSettings
) -> list[bool]:
    """Which of a page's decisions under ``settings`` another
    ``settings.max_sentence_perplexity`` decides again (`decided_by_limit`, when
    `limits_by_setting`): the only ones a different value of it can change, each to kept
    exactly when its perplexity is at most that value. The web demo's slider moves these."""
    if not limits_by_setting(settings):
        return [False for _ in sentences]
    return decided_by_limit(sentences)


def decide_page(
    texts: Sequence[str],
    block_of: Sequence[int],
    scores: tuple[list[float], list[int], list[int]],
    *,
    unscored: Collection[int],
    max_sentence_perplexity: float,
    max_sentence_tokens: int = MAX_SENTENCE_TOKENS_DEFAULT,
    max_word_chars: int = MAX_WORD_CHARS_DEFAULT,
    content: Sequence[bool] | None = None,
    template: Collection[int] = frozenset(),
    sentence_reasons: Sequence[str | None] | None = None,
    block_reasons: Mapping[int, str] | None = None,
    figures: bool = False,
) -> tuple[tuple[list[Any], ...], tuple[float, int, float, int], dict[str, int]]:
    """Every decision on a page's sentences, and the page's sums, from their scores.

    The rules are the registry's (`filters.REGISTRY`), in two levels, the later overriding:
    each sentence's (`decide_sentences`: no words, unless ``figures`` (the labeller modes) and
    it is a figure, `is_figure`; `too_long` with ``max_sentence_tokens``
    and ``max_word_chars``, then the perplexity limit; KenLM's perplexity is ``None``
    without tokens, and for the positions in ``unscored``, whose language has no model), then
    the added sentence filters' verdicts (``sentence_reasons``, `Registry.sentence_reasons`);
    then its block's: a block of the site's ``template`` (`DropReason.SITE_TEMPLATE`), a
    block the labeller's ``content`` marks as boilerplate (`DropReason.BOILERPLATE`), then
    the added block filters' verdicts (``block_reasons``, `Registry.block_reasons`).

    Args:
        texts, block_of: the page's sentences and the block of each.
        scores: the sentences' log10 probabilities, tokens and OOVs, as three lists
            (`lm.ScoreColumns`).

    Returns:
        The columns ``(log10_probs, n_tokens, n_oovs, perplexities, keeps, reasons)`` (the
        first three are ``scores``' lists); the sums ``(log10 p, tokens, kept log10 p, kept
        tokens)`` over the sentences with a perplexity (each sentence's tokens plus its end);
        and the dropped sentences by reason, in order of first appearance.
    """
    log10_probs, n_tokens, n_oovs = scores
    fast = native_module("sentences")
    if fast is not None:
        # the native loop asks `too_long` of the sentences longer than either limit only
        is_long = functools.partial(
            too_long, max_sentence_tokens=max_sentence_tokens, max_word_chars=max_word_chars
        )
        return fast.decide_page(
            list(texts), list(block_of), log10_probs, n_tokens, n_oovs, unscored,
            float(max_sentence_perplexity), content, template,
            min(max_sentence_tokens, max_word_chars), is_long, REGISTRY.columns().reasons,
            sentence_reasons, block_reasons, is_figure if figures else None,
        )  # fmt: skip
    if not len(block_of) == len(log10_probs) == len(n_tokens) == len(n_oovs) == len(texts):
        raise ValueError("one block index and one score per sentence")
    # lm.perplexity, inline: a function call per sentence costs more than the formula
    perplexities = [
        10.0 ** (-lp / (n + 1)) if n > 0 else None
        for lp, n in zip(log10_probs, n_tokens, strict=True)
    ]
    for i in unscored:
        perplexities[i] = None
    decisions = decide_sentences(
        texts, perplexities, max_sentence_perplexity=max_sentence_perplexity,
        max_sentence_tokens=max_sentence_tokens, max_word_chars=max_word_chars,
        figures=figures,
    )  # fmt: skip
    if sentence_reasons is not None:
        decisions = [
            (False, added) if decision[0] and added is not None else decision
            for decision, added in zip(decisions, sentence_reasons, strict=True)
        ]
    if content is not None or template or block_reasons is not None:
        *_, template_reason, boilerplate_reason = REGISTRY.columns().reasons
        as_template = (False, template_reason)
        as_boilerplate = (False, boilerplate_reason)
        by_block = block_reasons or {}
        decisions = [
            as_template
            if b in template
            else as_boilerplate
            if content is not None and not content[b]
            else (False, by_block[b])
            if b in by_block
            else decision
            for b, decision in zip(block_of, decisions, strict=True)
        ]
    keeps = [decision[0] for decision in decisions]
    reasons = [decision[1] for decision in decisions]
    total_lp = kept_lp = 0.0
    total_n = kept_n = 0
    for lp, n, ppl, keep in zip(log10_probs, n_tokens, perplexities, keeps, strict=True):
        if ppl is not None:
            total_lp += lp
            total_n += n + 1
            if keep:
                kept_lp += lp
                kept_n += n + 1
    dropped: dict[str, int] = {}
    for keep, reason in zip(keeps, reasons, strict=True):
        if not keep:
            key = reason or "unknown"
            dropped[key] = dropped.get(key, 0) + 1
    columns = (log10_probs, n_tokens, n_oovs, perplexities, keeps, reasons)
    return columns, (total_lp, total_n, kept_lp, kept_n), dropped
