"""``no_words``: a sentence without a letter (`decide.has_words`)."""

from .base import Level, PassRule


class NoWords(PassRule):
    """A sentence without a letter of any script: separators, page numbers, lone symbols.
    Decided first."""

    reason = "no_words"
    level = Level.SENTENCE
    step = "no_words"
