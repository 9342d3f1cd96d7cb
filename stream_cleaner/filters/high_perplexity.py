"""``high_perplexity``: the paper's filter, a sentence whose perplexity is above the limit."""

from .base import Level, PassRule


class HighPerplexity(PassRule):
    """A sentence scoring above ``max_sentence_perplexity`` (in the labeller's modes, the
    limit of `decide.sentence_limit`). A sentence without a perplexity (no model for its
    language, or no token) is never dropped by it."""

    reason = "high_perplexity"
    setting = "max_sentence_perplexity"
    level = Level.SENTENCE
    step = "high_perplexity"
