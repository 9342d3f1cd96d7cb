"""What a drop rule is, and the registry that every reason set derives from.

A drop rule owns three things: its reason (the snake_case string that the records carry and
the metric ``stream_cleaner_sentences_dropped_total`` counts by), the `CleanerSettings` field
it reads (or none) and the level it acts on: a sentence, a block (all its sentences) or the
page (all of them). The rules the project ships are decided in `decide.decide_page`'s one
pass (`PassRule`, native when built); a rule added later is a `SentenceFilter` or a
`BlockFilter` whose ``drops`` the registry calls, and the pass applies its verdicts as one
column (`Registry.sentence_reasons`, `Registry.block_reasons`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

if TYPE_CHECKING:
    from ..document import Block
    from ..settings import CleanerSettings


class Level:
    """What a rule drops: one sentence, a block's sentences, or every sentence of the page.

    Levels are decided in this order, a later one overriding: a sentence dropped by a rule of
    a block is counted under the block's reason."""

    SENTENCE = "sentence"
    BLOCK = "block"
    PAGE = "page"

    ALL = (SENTENCE, BLOCK, PAGE)


class DropRule:
    """A rule that drops sentences: a reason, the setting it reads, its level.

    Attributes:
        reason: the string of the records and the metric label (snake_case).
        setting: the `CleanerSettings` field the rule reads, or ``None``.
        level: one of `Level.ALL`.
    """

    reason: ClassVar[str]
    setting: ClassVar[str | None] = None
    level: ClassVar[str]


class PassRule(DropRule):
    """A rule decided inside `decide.decide_page`'s pass (and its native twin): its class
    says what it is, the pass how it is decided. ``step`` names its place in the pass
    (`PASS_STEPS`); the pass takes its reason from the registry (`Registry.columns`)."""

    step: ClassVar[str]


# The steps of decide_page's pass, in the order it decides them (a later level overrides).
PASS_STEPS = ("no_words", "too_long", "high_perplexity", "site_template", "boilerplate")


class SentenceFilter(DropRule):
    """A rule on one sentence's text, decided after the pass's sentence rules (a sentence
    they drop is not asked), in the order the rules were registered."""

    level = Level.SENTENCE

    def drops(self, text: str, value: Any) -> bool:
        """Whether to drop the sentence ``text``; ``value`` is the setting's (or None)."""
        raise NotImplementedError


class BlockFilter(DropRule):
    """A rule on one block, decided after the pass's block rules (site templates, the
    labeller's boilerplate), in the order the rules were registered."""

    level = Level.BLOCK

    def drops(self, block: Block, value: Any) -> bool:
        """Whether to drop every sentence of ``block``; ``value`` is the setting's (or None)."""
        raise NotImplementedError


class PassColumns(NamedTuple):
    """What `decide.decide_page`'s pass reads from the registry, built once per change."""

    reasons: tuple[str, ...]  # the reason of each of PASS_STEPS, in that order
    sentence_filters: tuple[SentenceFilter, ...]
    block_filters: tuple[BlockFilter, ...]


_SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


class Registry:
    """The drop rules in force, in registration order: the one home of the reason set."""

    def __init__(self) -> None:
        self._rules: list[DropRule] = []
        self._columns: PassColumns | None = None

    def register(self, rule: type[DropRule]) -> type[DropRule]:
        """Add a rule class (usable as a decorator); its reason must be new.

        Raises:
            ValueError: a reason already registered or not snake_case, an unknown level,
                setting or pass step, or a filter without ``drops``.
        """
        from ..settings import CleanerSettings

        reason = getattr(rule, "reason", None)
        if not isinstance(reason, str) or not _SNAKE_CASE.fullmatch(reason):
            raise ValueError(f"{rule.__name__}: a reason is a snake_case string, not {reason!r}")
        if reason in self.reasons():
            raise ValueError(f"{rule.__name__}: the reason {reason!r} is registered already")
        if getattr(rule, "level", None) not in Level.ALL:
            raise ValueError(f"{rule.__name__}: the level must be one of {Level.ALL}")
        names = {f.name for f in dataclasses.fields(CleanerSettings)}
        if rule.setting is not None and rule.setting not in names:
            raise ValueError(f"{rule.__name__}: no setting {rule.setting!r} in CleanerSettings")
        if issubclass(rule, PassRule):
            if rule.step not in PASS_STEPS:
                raise ValueError(f"{rule.__name__}: the pass has no step {rule.step!r}")
        elif issubclass(rule, SentenceFilter | BlockFilter):
            base = SentenceFilter if issubclass(rule, SentenceFilter) else BlockFilter
            if rule.drops is base.drops:
                raise ValueError(f"{rule.__name__}: a filter says what it drops (drops())")
        elif rule.level != Level.PAGE:
            raise ValueError(f"{rule.__name__}: a rule is a SentenceFilter or a BlockFilter")
        self._rules.append(rule())
        self._columns = None
        return rule

    def unregister(self, rule: type[DropRule]) -> None:
        """Remove a rule class registered before."""
        self._rules = [r for r in self._rules if type(r) is not rule]
        self._columns = None

    @contextmanager
    def registered(self, rule: type[DropRule]) -> Iterator[type[DropRule]]:
        """``rule`` registered for the ``with`` block only (tests, experiments)."""
        self.register(rule)
        try:
            yield rule
        finally:
            self.unregister(rule)

    def rules(self, level: str | None = None) -> tuple[DropRule, ...]:
        """The rules in registration order, of one level or all."""
        return tuple(r for r in self._rules if level is None or r.level == level)

    def reasons(self) -> tuple[str, ...]:
        """Every drop reason, in registration order: `decide.DropReason.ALL`, the records'
        and the topic schemas' enums, the metric's labels."""
        return tuple(r.reason for r in self._rules)

    def columns(self) -> PassColumns:
        """The registry as the pass reads it (cached until the next change)."""
        if self._columns is None:
            steps = {r.step: r.reason for r in self._rules if isinstance(r, PassRule)}
            missing = [step for step in PASS_STEPS if step not in steps]
            if missing:
                raise LookupError(f"no rule registered for the pass's steps {missing}")
            self._columns = PassColumns(
                tuple(steps[step] for step in PASS_STEPS),
                tuple(r for r in self._rules if isinstance(r, SentenceFilter)),
                tuple(r for r in self._rules if isinstance(r, BlockFilter)),
            )
        return self._columns

    def sentence_reasons(
        self, texts: Sequence[str], settings: CleanerSettings
    ) -> list[str | None] | None:
        """The first added `SentenceFilter` dropping each sentence (its reason, or None);
        None when no filter is added (the pass then asks nothing)."""
        filters = self.columns().sentence_filters
        if not filters:
            return None
        found: list[str | None] = [None] * len(texts)
        for f in reversed(filters):  # the first registered wins
            value = getattr(settings, f.setting) if f.setting else None
            for i, text in enumerate(texts):
                if f.drops(text, value):
                    found[i] = f.reason
        return found

    def block_reasons(
        self, blocks: Sequence[Block], settings: CleanerSettings
    ) -> dict[int, str] | None:
        """The first added `BlockFilter` dropping each block, by block index; None when no
        filter is added."""
        filters = self.columns().block_filters
        if not filters:
            return None
        found: dict[int, str] = {}
        for f in reversed(filters):
            value = getattr(settings, f.setting) if f.setting else None
            for block in blocks:
                if f.drops(block, value):
                    found[block.index] = f.reason
        return found
