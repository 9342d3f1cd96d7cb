"""Text -> sentences: a rule-based splitter that needs no download and runs at regex speed.

A boundary is sentence-final punctuation followed by white space and a character that can
start a sentence (anything but a lower-case letter), unless the word before it is a known
abbreviation or a single-letter initial. CJK full stops (。！？) end a sentence with no white
space after them. Decimals (3.14) and URLs (example.org/a.b) have no white space after their
dots, so they are never split.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from ._native import native_module

# Lower-cased, without the final dot. Titles, Latin abbreviations, months, common units and
# company suffixes: the ones that end a word in running text and are followed by a capital.
ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof rev hon sr jr st mt ft gen col lt sgt capt cmdr adm gov sen rep pres
    messrs mme mlle mssrs fr br sra
    vs etc e.g i.e cf al approx ca viz no nos vol vols pp p fig figs eq eqs ch sec art
    jan feb mar apr jun jul aug sep sept oct nov dec
    inc ltd co corp bros llc plc dept univ assn est
    a.m p.m u.s u.k u.n e.u d.c
    """.split()
)

# A run of punctuation that ends a sentence when white space follows it (after optional
# closing quotes or brackets that belong to the sentence being closed: `_AFTER_RUN`, whose
# group 1 is the first character of what comes next). CJK full stops need no white space:
# they end a sentence with their closers (`_CJK_RUN`). A run that no white space follows is
# passed over whole: searching again inside it made a run of 300,000 dots quadratic (36 s).
_RUN = re.compile(r"[.!?…]+")
_RUN_CJK = re.compile(r"[.!?…]+|[。！？]")
_AFTER_RUN = re.compile(r"""["'”’»)\]]*\s+(\S)""")
_CJK_RUN = re.compile(r"[。！？]+[」』”’）)]*")
_CJK_STOP = re.compile(r"[。！？]")
_FINAL_PUNCT = re.compile(r"[.!?…。！？]")  # a cheap first look: one class, no alternation


def split_sentences(text: str) -> list[str]:
    """Split one block's text into sentences.

    Args:
        text: the text of one block, white space already collapsed.

    Returns:
        The sentences, stripped, in order; empty sentences are left out. A text without any
        boundary comes back as one sentence.
    """
    if _FINAL_PUNCT.search(text) is None:
        return [text] if text else []  # most blocks (menus, titles, items): nothing to split
    runs = _RUN_CJK if _CJK_STOP.search(text) else _RUN
    sentences: list[str] = []
    start = position = 0
    while (run := runs.search(text, position)) is not None:
        at = run.start()
        if text[at] in "。！？":
            end = position = _CJK_RUN.match(text, at).end()  # type: ignore[union-attr]
        else:
            after = _AFTER_RUN.match(text, run.end())
            if after is None:  # no white space, or nothing after it: not a boundary
                position = run.end()
                continue
            position = after.end()  # the first character of what follows is passed over
            if after.group(1).islower():
                continue
            if text[at] == "." and _is_abbreviation(text, start, at):
                continue
            end = after.start(1)
        piece = text[start:end].strip()
        if piece:
            sentences.append(piece)
        start = end
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def split_blocks(texts: Sequence[str], indexes: Sequence[int]) -> tuple[list[str], list[int]]:
    """`split_sentences` of many blocks: the sentences, and the index of each one's block.

    Args:
        texts: the blocks' texts, white space already collapsed.
        indexes: the blocks' indexes, one per text.
    """
    fast = native_module("sentences")
    if fast is not None:
        return fast.split_blocks(list(texts), list(indexes), ABBREVIATIONS)
    sentences: list[str] = []
    block_of: list[int] = []
    for text, index in zip(texts, indexes, strict=True):
        found = split_sentences(text)
        sentences += found
        block_of += [index] * len(found)
    return sentences, block_of


def _is_abbreviation(text: str, start: int, dot: int) -> bool:
    """Whether the word ending at ``dot`` (the index of its final '.') is an abbreviation.

    The word is the run of non-space characters before the dot, not reaching back past
    ``start`` (a backward scan: a regex search from ``start`` costs time in the whole
    sentence's length, for every dot).
    """
    begin = dot
    while begin > start and not text[begin - 1].isspace():
        begin -= 1
    if begin == dot:
        return False
    word = text[begin:dot].lstrip("([\"'“‘").lower()
    if len(word) == 1 and word.isalpha():
        return True  # an initial: "J. R. R. Tolkien"
    return word in ABBREVIATIONS


# A sentence that ends in a full-width stop (and closing bracket) was not followed by a space:
# Chinese and Japanese write none between sentences.
CJK_ENDS = frozenset("。！？」』）")


def join_sentences(sentences: Sequence[str]) -> str:
    """The kept sentences of a block as one text: joined by a space, except after a CJK full
    stop, where the page had none."""
    joined = " ".join(sentences)
    if joined.isascii() or len(sentences) == 1:
        return joined
    parts = [sentences[0]]
    for before, sentence in itertools.pairwise(sentences):
        parts.append(sentence if before[-1] in CJK_ENDS else " " + sentence)
    return "".join(parts)


def join_kept(
    sentences: Sequence[str], block_of: Sequence[int], keeps: Sequence[bool]
) -> list[str]:
    """The text of each block that kept a sentence, in order of first appearance: its kept
    sentences joined by `join_sentences`."""
    fast = native_module("sentences")
    if fast is not None:
        texts = fast.join_kept(list(sentences), list(block_of), list(keeps), CJK_ENDS)
        if texts is not None:
            return texts
    kept_by_block: dict[int, list[str]] = {}
    for text, b, keep in zip(sentences, block_of, keeps, strict=True):
        if keep:
            kept_by_block.setdefault(b, []).append(text)
    return list(map(join_sentences, kept_by_block.values()))
