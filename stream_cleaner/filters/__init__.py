"""The drop rules: one small class per file, each registered on one line below.

Every reason set derives from `REGISTRY`: `decide.DropReason.ALL`, the ``reason`` and
``dropped`` enums of the topic schemas (tests/streaming/test_records.py checks them), and the
labels of ``stream_cleaner_sentences_dropped_total``. To add a filter, write a module here
with a `SentenceFilter` (or `BlockFilter`) subclass and register it (DEVELOPERS.md).
"""

from .base import (
    PASS_STEPS,
    BlockFilter,
    DropRule,
    Level,
    PassColumns,
    PassRule,
    Registry,
    SentenceFilter,
)
from .boilerplate import Boilerplate
from .high_perplexity import HighPerplexity
from .no_words import NoWords
from .site_template import SiteTemplate
from .time_budget import TimeBudget
from .too_long import TooLong

__all__ = [
    "PASS_STEPS",
    "REGISTRY",
    "BlockFilter",
    "Boilerplate",
    "DropRule",
    "HighPerplexity",
    "Level",
    "NoWords",
    "PassColumns",
    "PassRule",
    "Registry",
    "SentenceFilter",
    "SiteTemplate",
    "TimeBudget",
    "TooLong",
]

# the registration order is the order of the reason sets (schemas, metric labels)
REGISTRY = Registry()
REGISTRY.register(HighPerplexity)
REGISTRY.register(NoWords)
REGISTRY.register(TooLong)
REGISTRY.register(TimeBudget)
REGISTRY.register(SiteTemplate)
REGISTRY.register(Boilerplate)
