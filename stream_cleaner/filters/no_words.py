"""``no_words``: a sentence without a letter (`decide.has_words`), but for a figure in the
labeller modes (`decide.is_figure`)."""

from .base import Level, PassRule


class NoWords(PassRule):
    """A sentence without a letter of any script: separators, page numbers, lone symbols.
    Decided first. In the labeller modes a figure ("29", "$19.99") is decided as its block."""

    reason = "no_words"
    level = Level.SENTENCE
    step = "no_words"
