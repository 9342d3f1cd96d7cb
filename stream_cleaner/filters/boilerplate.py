"""``boilerplate``: a block the labeller drops (`labeller`, in corpus, article, auto mode)."""

from .base import Level, PassRule


class Boilerplate(PassRule):
    """Every sentence of a block that the mode's labeller (with the multilingual labeller and
    the content-loss guard) does not call content. Overrides the sentence rules."""

    reason = "boilerplate"
    setting = "mode"
    level = Level.BLOCK
    step = "boilerplate"
