"""The content-loss guard: a page whose decision keeps far less of its running text than the
page holds gets that running text back.

A labeller trained on pages of some layouts can call every block of an unfamiliar one
boilerplate (a documentation page, a thread of posts, an article in markup it never saw): the
page then comes out with a title and a date, or empty, and a corpus loses it without a trace.
The guard measures the page's running text on its own, without the labeller: the longest run
of prose blocks in reading order (blocks of `MIN_RUN_BLOCK_WORDS` words or more that end a
sentence and sit mostly outside links, with at most `MAX_RUN_GAP` other blocks between two of
them), leaving out blocks in a part of the page its markup names for comments (readers'
comments are not an article's main content, and are often its longest run of prose). When
that run holds at least `MIN_RUN_WORDS` words and the decision keeps less than
`MIN_KEPT_SHARE` of them, the run's prose blocks are kept too, and the cleaned document says so
(``CleanedDocument.guard``, `GuardReason.CONTENT_LOSS`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .document import Block
from .labeller import FEATURE_NAMES
from .parse import CLASS_COMMENT

# What a run of prose is: fixed beforehand, as the page structure's prose (`page_structure`).
MIN_RUN_BLOCK_WORDS = 10
MAX_RUN_LINK_DENSITY = 0.3
MAX_RUN_GAP = 2
# When the guard steps in: chosen by `bench/auto_training.py guard` on the auto labeller's
# out-of-fold decisions over its 1,536 training pages: the fewest pages of lost main content
# (8 without the guard, 6 with it), then the best mean F1 (0.8608 against 0.8617 without).
MIN_RUN_WORDS = 200
MIN_KEPT_SHARE = 0.5
_COMMENT_BITS = 0xF << (4 * CLASS_COMMENT)
_WORDS, _LINKS, _ENDS = (
    FEATURE_NAMES.index(n) for n in ("log_words", "link_density", "ends_sentence")
)


class GuardReason:
    """Why the guard changed a page's decision (``CleanedDocument.guard``)."""

    CONTENT_LOSS = "content_loss"  # the page's longest run of prose was dropped: kept again

    ALL = (CONTENT_LOSS,)


def prose_run(
    blocks: Sequence[Block], words: np.ndarray, link_density: np.ndarray, ends_sentence: np.ndarray
) -> tuple[list[int], float]:
    """The blocks of the page's longest run of prose (see the module) and its words."""
    best: list[int] = []
    best_words = 0.0
    run: list[int] = []
    run_words = 0.0
    last = -MAX_RUN_GAP - 2
    for i, block in enumerate(blocks):
        if (
            words[i] < MIN_RUN_BLOCK_WORDS
            or link_density[i] >= MAX_RUN_LINK_DENSITY
            or not ends_sentence[i]
            or block.class_words & _COMMENT_BITS
        ):
            continue
        if i - last - 1 > MAX_RUN_GAP:
            run, run_words = [], 0.0
        run.append(i)
        run_words += words[i]
        last = i
        if run_words > best_words:
            best, best_words = list(run), run_words
    return best, best_words


def guard_content(
    content: Sequence[bool], blocks: Sequence[Block], features: np.ndarray
) -> tuple[list[bool], str | None]:
    """The decision with the guard applied, and why it changed it (``None``: it did not).

    Args:
        content: the labeller's decision per block.
        blocks: the page's blocks.
        features: the rows the labeller read (`labeller.block_features` first).
    """
    if not len(blocks):
        return list(content), None
    words = np.exp(features[:, _WORDS]) - 1.0
    run, run_words = prose_run(blocks, words, features[:, _LINKS], features[:, _ENDS])
    if run_words < MIN_RUN_WORDS:
        return list(content), None
    kept = sum(words[i] for i in run if content[i])
    if kept >= MIN_KEPT_SHARE * run_words:
        return list(content), None
    guarded = list(content)
    for i in run:
        guarded[i] = True
    return guarded, GuardReason.CONTENT_LOSS
