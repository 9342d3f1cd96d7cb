"""Scoring extracted text against hand-cleaned gold text.

CleanEval-style word alignment: both texts become whitespace tokens, the longest matching
blocks of the two token sequences (difflib, no junk heuristic) count as aligned words, and
precision, recall and F1 follow from the aligned count. Gold markers (``<p>``, ``<h>``,
``<l>``) and a leading ``URL:`` line are not words and are removed first.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass

_MARKER = re.compile(r"<[phl]>", re.IGNORECASE)
_URL_LINE = re.compile(r"\A\ufeff?URL:[^\n]*\n")
# Share of Dragnet pages held out for testing; nothing is ever tuned on them.
DRAGNET_TEST_PERCENT = 30


def dragnet_split(name: str) -> str:
    """``"test"`` or ``"train"`` for a Dragnet page, from a hash of its file stem ("100").

    Fixed in code so that every run, and every tool, holds out the same pages.
    """
    stem = name.rsplit("/", 1)[-1].split(".", 1)[0]
    digest = int(hashlib.sha256(stem.encode()).hexdigest()[:8], 16)
    return "test" if digest % 100 < DRAGNET_TEST_PERCENT else "train"


@dataclass(frozen=True, slots=True)
class Alignment:
    """Word alignment of one output against its gold."""

    aligned: int
    output_words: int
    gold_words: int

    @property
    def precision(self) -> float:
        if not self.output_words:
            return 1.0 if not self.gold_words else 0.0
        return self.aligned / self.output_words

    @property
    def recall(self) -> float:
        return self.aligned / self.gold_words if self.gold_words else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def gold_words(gold: str) -> list[str]:
    """The words of a gold file: markers and the ``URL:`` line removed."""
    return _MARKER.sub(" ", _URL_LINE.sub("", gold.lstrip("\ufeff"))).split()


def align_words(output: str, gold: str) -> Alignment:
    """Align the whitespace tokens of ``output`` with those of the ``gold`` file."""
    out_tokens = output.split()
    gold_tokens = gold_words(gold)
    matcher = difflib.SequenceMatcher(None, out_tokens, gold_tokens, autojunk=False)
    aligned = sum(block.size for block in matcher.get_matching_blocks())
    return Alignment(aligned, len(out_tokens), len(gold_tokens))
