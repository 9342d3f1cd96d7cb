"""``too_long``: a sentence longer than natural text (`decide.too_long`)."""

from .base import Level, PassRule


class TooLong(PassRule):
    """A sentence of more than ``max_sentence_tokens`` tokens, or with a token of more than
    ``max_word_chars`` characters (this rule reads both; ``setting`` names the first), in
    every mode, whatever its perplexity."""

    reason = "too_long"
    setting = "max_sentence_tokens"
    level = Level.SENTENCE
    step = "too_long"
