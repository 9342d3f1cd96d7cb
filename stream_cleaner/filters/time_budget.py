"""``time_budget``: the page ran out of CPU time before it was decided (`budget`)."""

from .base import DropRule, Level


class TimeBudget(DropRule):
    """Every sentence of a page past ``time_budget_seconds``: `pipeline` drops them all, and
    the document ends with the error of the same name."""

    reason = "time_budget"
    setting = "time_budget_seconds"
    level = Level.PAGE
