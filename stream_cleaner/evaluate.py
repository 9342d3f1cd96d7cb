"""Scoring extracted text against hand-cleaned gold text, and reading benchmarks that have it.

Three scorers, each named in every report:

1. **Word alignment** (CleanEval's own measure): both texts become whitespace tokens, the
   longest matching blocks of the two token sequences (difflib, no junk heuristic) count as
   aligned words, and precision, recall and F1 follow from the aligned count; averaged per
   page (macro) and pooled over all pages (micro).
2. **Word Levenshtein similarity**: ``1 - d / max(|output|, |gold|)`` with ``d`` the edit
   distance between the two token sequences (insertions, deletions, substitutions of whole
   words), averaged per page. The kind of edit-distance score the perplexity paper reported.
3. **Bag-of-tokens F1**: precision and recall of the output's token multiset against the
   gold's, order ignored, averaged per page.
4. **Snippet checks** (trafilatura's own evaluation method), on sets that come with a
   ``checks.json``: white space collapsed in the output and in each snippet, each ``with``
   snippet found in the output is a true positive, each one missing a false negative, each
   ``without`` snippet found a false positive; pooled over all pages.

Every figure can also be had per page type (``checks.json``'s ``type``: article, forum,
product...), and :func:`lost_main_content` is the rule that counts the pages where one system
loses the main content another keeps. :func:`paired_difference` says how far one system's
macro word-alignment F1 is from another's on the same pages, with a bootstrap interval over
the pages' sites: whether a lead of a few thousandths is a lead.

Before any scorer, gold markers (``<p>``, ``<h>``, ``<l>``), a leading ``URL:`` line and a
byte-order mark are removed from both sides, as CleanEval's scorer does (the published outputs
of other systems carry them too).

Readers: :func:`read_cleaneval` (HTML wrapped in ``<text id=..>``, gold with a ``URL:`` line),
:func:`read_pages` (any ``html/NAME.html`` + ``gold/NAME.txt`` folder: Dragnet, the 2026 pages
and the like; a ``checks.json`` beside them is read by :func:`read_checks`) and
:func:`read_outputs` (a folder of ``NAME.txt`` already extracted by some system).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .settings import CleanerSettings

# `paired_difference`'s bootstrap: resamples of the sites, the interval's coverage, the seed
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_LEVEL = 0.95
BOOTSTRAP_SEED = 20261130

_MARKER = re.compile(r"<[phl]>", re.IGNORECASE)
_URL_LINE = re.compile(r"\A\ufeff?URL:[^\n]*(\n|\Z)")
_CLEANEVAL_HEADER = re.compile(rb"\A(?:\xef\xbb\xbf)?<text\b[^\n]*>\r?\n")
_CLEANEVAL_ID = re.compile(rb'\bid="([^"]*)"')
_CLEANEVAL_FOOTER = re.compile(rb"</text>\s*\Z")
# Dragnet's gold files hold the article and then, on 417 of its 1,381 pages, a line of the
# keyboard's shifted digits ending in "&*()" (395 times "!@#$%^&*()  COMMENTS"; typed by hand,
# also "!@ $%^&*()", "  #$%^&*()", "!#@$%^&*()", a word other than COMMENTS or none) and the
# readers' comments. Its main-content task scores the article alone.
_COMMENTS_LINE = re.compile(r"^[ \t]*+[!@#$%^ ]*+&\*\(\)[ \t]*+[A-Z]*+[ \t]*+$", re.MULTILINE)

# Share of Dragnet pages held out for testing; nothing is ever tuned on them.
DRAGNET_TEST_PERCENT = 30
SPLITS = ("train", "test", "all")
LAYOUTS = ("auto", "cleaneval", "generic")

CHECKS_FILE = "checks.json"
"""The snippet checks of a page set, beside its ``html/`` and ``gold/`` folders."""

# The lost-main-content rule (`lost_main_content`): a page counts only when its gold has at
# least this many words, as a loss when one system's word-alignment recall is below the first
# limit while the other system's is above the second.
LOST_MIN_GOLD_WORDS = 20
LOST_MAX_RECALL = 0.3
KEPT_MIN_RECALL = 0.7

SCORER_NAMES = {
    "alignment_macro": "word alignment (CleanEval), per-page average",
    "alignment_micro": "word alignment (CleanEval), pooled over pages",
    "levenshtein": "word Levenshtein similarity 1 - d / max(len), per-page average",
    "bag": "bag-of-tokens F1, per-page average",
    "snippets": "snippet checks (trafilatura's method), pooled over pages",
}
"""The name each scorer goes by in reports, by its key in :meth:`Summary.to_dict`."""


def dragnet_split(name: str) -> str:
    """``"test"`` or ``"train"`` for a Dragnet page, from a hash of its file stem ("100").

    Fixed in code so that every run, and every tool, holds out the same pages.
    """
    stem = name.rsplit("/", 1)[-1].split(".", 1)[0]
    digest = int(hashlib.sha256(stem.encode()).hexdigest()[:8], 16)
    return "test" if digest % 100 < DRAGNET_TEST_PERCENT else "train"


# --- scorers -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Alignment:
    """Word alignment of one output against its gold."""

    aligned: int
    output_words: int
    gold_words: int

    @property
    def precision(self) -> float:
        return _ratio(self.aligned, self.output_words, empty_gold=not self.gold_words)

    @property
    def recall(self) -> float:
        return self.aligned / self.gold_words if self.gold_words else 1.0

    @property
    def f1(self) -> float:
        return _f1(self.precision, self.recall)


def _ratio(hits: int, total: int, *, empty_gold: bool) -> float:
    """Precision: an empty output is perfect only when the gold is empty too."""
    if not total:
        return 1.0 if empty_gold else 0.0
    return hits / total


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def text_words(text: str) -> list[str]:
    """The words of a gold or output text: BOM, leading ``URL:`` line and markers removed."""
    return _MARKER.sub(" ", _URL_LINE.sub("", text.lstrip("\ufeff"))).split()


gold_words = text_words
"""The words of a gold file (the same cleaning as any output gets)."""


@functools.cache
def _sequence_matcher() -> type[difflib.SequenceMatcher]:
    """cydifflib's SequenceMatcher when installed (the same blocks as difflib's, on all 684
    CleanEval test pages against jusText's published outputs, 7.7x faster), else difflib's."""
    try:
        from cydifflib import SequenceMatcher
    except ImportError:
        return difflib.SequenceMatcher
    return SequenceMatcher


def align_tokens(output: Sequence[str], gold: Sequence[str]) -> Alignment:
    """CleanEval word alignment of two token sequences: the longest matching blocks."""
    matcher = _sequence_matcher()(None, output, gold, autojunk=False)
    aligned = sum(block.size for block in matcher.get_matching_blocks())
    return Alignment(aligned, len(output), len(gold))


def align_words(output: str, gold: str) -> Alignment:
    """Align the words of ``output`` with those of the ``gold`` file."""
    return align_tokens(text_words(output), text_words(gold))


def align_characters(output: str, gold: str) -> Alignment:
    """Align the characters of ``output`` with those of ``gold``, white space removed: word
    alignment for languages written without spaces (Chinese, Japanese, Thai), whose
    white-space words are whole clauses (bench/multilingual_pipeline.py --peers,
    bench/package_pages.py)."""
    return align_tokens(list("".join(output.split())), list("".join(gold.split())))


def levenshtein_similarity(output: Sequence[str], gold: Sequence[str]) -> float:
    """``1 - d / max(|output|, |gold|)`` over words; 1.0 when both are empty.

    ``d`` is the word-level edit distance (rapidfuzz's C implementation on token lists).
    """
    longest = max(len(output), len(gold))
    if not longest:
        return 1.0
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:
        raise RuntimeError(
            "the Levenshtein scorer needs rapidfuzz: pip install 'stream-cleaner[eval]'"
        ) from None
    return 1.0 - Levenshtein.distance(output, gold) / longest


def bag_of_tokens(output: Sequence[str], gold: Sequence[str]) -> tuple[float, float, float]:
    """Precision, recall and F1 of the output's token multiset against the gold's."""
    overlap = (Counter(output) & Counter(gold)).total()
    p = _ratio(overlap, len(output), empty_gold=not gold)
    r = overlap / len(gold) if gold else 1.0
    return p, r, _f1(p, r)


def collapse_space(text: str) -> str:
    """``text`` with every run of white space (newlines too) made one space, ends stripped."""
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class SnippetCounts:
    """Snippet checks of one page, or pooled over pages (``+`` adds them up).

    Attributes:
        true_positives: ``with`` snippets found in the output.
        false_negatives: ``with`` snippets missing from it.
        false_positives: ``without`` snippets found in it.
        true_negatives: ``without`` snippets missing from it.
    """

    true_positives: int = 0
    false_negatives: int = 0
    false_positives: int = 0
    true_negatives: int = 0

    def __add__(self, other: SnippetCounts) -> SnippetCounts:
        return SnippetCounts(
            self.true_positives + other.true_positives,
            self.false_negatives + other.false_negatives,
            self.false_positives + other.false_positives,
            self.true_negatives + other.true_negatives,
        )

    @property
    def precision(self) -> float:
        """Found ``with`` snippets over all snippets found; with none found, 1.0 only when
        there was no ``with`` snippet to find (as the word scorers treat an empty output)."""
        found = self.true_positives + self.false_positives
        expected = self.true_positives + self.false_negatives
        return _ratio(self.true_positives, found, empty_gold=not expected)

    @property
    def recall(self) -> float:
        expected = self.true_positives + self.false_negatives
        return self.true_positives / expected if expected else 1.0

    @property
    def f1(self) -> float:
        return _f1(self.precision, self.recall)

    def to_dict(self) -> dict[str, float | int]:
        return {
            "p": self.precision,
            "r": self.recall,
            "f1": self.f1,
            "tp": self.true_positives,
            "fn": self.false_negatives,
            "fp": self.false_positives,
            "tn": self.true_negatives,
        }


def check_snippets(output: str, checks: PageChecks) -> SnippetCounts:
    """trafilatura's evaluation of one output: which snippets it holds, white space collapsed.

    Each ``with`` snippet found in the output is a true positive, each missing one a false
    negative; each ``without`` snippet found is a false positive, each missing one a true
    negative. A snippet is found when it is a substring of the output, both with their white
    space collapsed (`collapse_space`); case and punctuation count.
    """
    text = collapse_space(output)
    found_with = sum(collapse_space(s) in text for s in checks.with_snippets)
    found_without = sum(collapse_space(s) in text for s in checks.without_snippets)
    return SnippetCounts(
        true_positives=found_with,
        false_negatives=len(checks.with_snippets) - found_with,
        false_positives=found_without,
        true_negatives=len(checks.without_snippets) - found_without,
    )


@dataclass(frozen=True, slots=True)
class PageScore:
    """Every scorer's figures for one page.

    Attributes:
        page_type: the page's type in its set's checks (``article``, ``forum``...), else ``""``.
        snippets: the snippet checks, ``None`` for a page without checks.
        missing: the system gave no output for the page, which was scored as empty.
    """

    name: str
    alignment: Alignment
    levenshtein: float
    bag_precision: float
    bag_recall: float
    bag_f1: float
    page_type: str = ""
    snippets: SnippetCounts | None = None
    missing: bool = False


def score_page(
    name: str, output: str, gold: str, checks: PageChecks | None = None, *, missing: bool = False
) -> PageScore:
    """Score one output against its gold with every scorer (the snippets too, given checks)."""
    out, ref = text_words(output), text_words(gold)
    return PageScore(
        name,
        align_tokens(out, ref),
        levenshtein_similarity(out, ref),
        *bag_of_tokens(out, ref),
        page_type=checks.page_type if checks is not None else "",
        snippets=check_snippets(output, checks) if checks is not None else None,
        missing=missing,
    )


def lost_main_content(ours: PageScore, theirs: PageScore) -> bool:
    """Whether ``ours`` lost the main content of a page that ``theirs`` kept.

    The page counts when its gold has at least `LOST_MIN_GOLD_WORDS` words; it is lost when our
    word-alignment recall is below `LOST_MAX_RECALL` while theirs is above `KEPT_MIN_RECALL`.
    Swap the arguments for the pages they lose and we keep.
    """
    if ours.name != theirs.name:
        raise ValueError(f"two different pages: {ours.name!r} and {theirs.name!r}")
    return (
        ours.alignment.gold_words >= LOST_MIN_GOLD_WORDS
        and ours.alignment.recall < LOST_MAX_RECALL
        and theirs.alignment.recall > KEPT_MIN_RECALL
    )


@dataclass(frozen=True, slots=True)
class LostContent:
    """Main content lost by one system and kept by another, page by page (`compare_lost`).

    Attributes:
        pages: pages scored for both whose gold has at least `LOST_MIN_GOLD_WORDS` words.
        lost: the pages whose main content ours lost and theirs kept.
        reverse: the pages whose main content theirs lost and ours kept.
    """

    pages: int
    lost: tuple[str, ...]
    reverse: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"pages": self.pages, "lost": list(self.lost), "reverse": list(self.reverse)}


def compare_lost(ours: Sequence[PageScore], theirs: Sequence[PageScore]) -> LostContent:
    """Apply `lost_main_content` both ways to the pages scored for both systems.

    Args:
        ours, theirs: the per-page scores of two systems on the same set (`score_outputs`).
    """
    by_name = {s.name: s for s in theirs}
    pairs = [(s, by_name[s.name]) for s in ours if s.name in by_name]
    return LostContent(
        pages=sum(s.alignment.gold_words >= LOST_MIN_GOLD_WORDS for s, _ in pairs),
        lost=tuple(s.name for s, t in pairs if lost_main_content(s, t)),
        reverse=tuple(t.name for s, t in pairs if lost_main_content(t, s)),
    )


@dataclass(frozen=True, slots=True)
class Difference:
    """One system's macro word-alignment F1 minus another's on the same pages
    (`paired_difference`).

    Attributes:
        mean: the difference of the two macro F1s over the pages scored for both (the mean of
            the per-page differences).
        low, high: its `BOOTSTRAP_LEVEL` interval, the sites resampled.
        ahead: the share of resamples in which the first system is ahead (difference > 0).
        pages: the pages scored for both.
        sites: the groups resampled (a page without a site is its own).
    """

    mean: float
    low: float
    high: float
    ahead: float
    pages: int
    sites: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def page_sites(pages: Sequence[Page]) -> dict[str, str]:
    """Each page's site by name, as the labellers' site folds group it
    (`training.page_group`): the registered domain of the URL the set records, else of the
    one the page declares (canonical link, ``og:url``: `sites.find_page_url`); ``""`` when
    neither says."""
    from .decode import decode_body
    from .sites import find_page_url, site_of

    return {
        p.name: site_of(p.url or find_page_url(decode_body(p.raw).text), key="domain")
        for p in pages
    }


def paired_difference(
    ours: Sequence[PageScore],
    theirs: Sequence[PageScore],
    sites: Mapping[str, str] | None = None,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = BOOTSTRAP_LEVEL,
    seed: int = BOOTSTRAP_SEED,
) -> Difference:
    """How far ``ours``' macro word-alignment F1 is from ``theirs``', with a bootstrap interval.

    The pages scored for both are paired; a site's pages are resampled together (the sites'
    ``resamples`` draws with replacement, each draw's difference the mean over its pages), as
    a benchmark split by domain draws them: two pages of one template are not two witnesses.
    The interval is the draws' percentiles; the seed is fixed, so a run repeats its figures.

    Args:
        ours, theirs: the per-page scores of two systems on one set (`score_outputs`).
        sites: each page's site by name (`page_sites`); a page missing from it, or with
            ``""``, is its own site. ``None``: every page its own.

    Raises:
        ValueError: when no page is scored for both.
    """
    import numpy as np

    by_name = {s.name: s for s in theirs}
    pairs = [(s, by_name[s.name]) for s in ours if s.name in by_name]
    if not pairs:
        raise ValueError("no page scored for both systems")
    sites = sites or {}
    group_of: dict[str, int] = {}
    groups = np.array(
        [
            group_of.setdefault(sites.get(s.name) or f"page:{s.name}", len(group_of))
            for s, _ in pairs
        ]
    )
    diffs = np.array([s.alignment.f1 - t.alignment.f1 for s, t in pairs])
    n_groups = len(group_of)
    sums = np.bincount(groups, weights=diffs, minlength=n_groups)
    counts = np.bincount(groups, minlength=n_groups).astype(float)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n_groups, np.full(n_groups, 1.0 / n_groups), size=resamples)
    means = (draws @ sums) / (draws @ counts)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Difference(
        float(diffs.mean()), float(low), float(high), float((means > 0).mean()), len(pairs),
        n_groups,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Summary:
    """Every scorer over a set of pages.

    Attributes:
        pages: pages scored.
        precision, recall, f1: word alignment, macro (mean of the per-page figures).
        micro_precision, micro_recall, micro_f1: word alignment pooled over the pages.
        levenshtein: mean per-page word Levenshtein similarity.
        bag_precision, bag_recall, bag_f1: bag-of-tokens, macro.
        missing: pages without an output (scored as empty, or skipped: see the caller).
        snippets: the snippet checks pooled over the pages that have them; ``None`` when
            none has.
    """

    pages: int
    precision: float
    recall: float
    f1: float
    micro_precision: float
    micro_recall: float
    micro_f1: float
    levenshtein: float
    bag_precision: float
    bag_recall: float
    bag_f1: float
    missing: int = 0
    snippets: SnippetCounts | None = None

    def to_dict(self) -> dict[str, Any]:
        """The figures by scorer key (see :data:`SCORER_NAMES`); ``snippets`` only with checks."""
        figures = {
            "pages": self.pages,
            "missing": self.missing,
            "alignment_macro": {"p": self.precision, "r": self.recall, "f1": self.f1},
            "alignment_micro": {
                "p": self.micro_precision,
                "r": self.micro_recall,
                "f1": self.micro_f1,
            },
            "levenshtein": self.levenshtein,
            "bag": {"p": self.bag_precision, "r": self.bag_recall, "f1": self.bag_f1},
        }
        if self.snippets is not None:
            figures["snippets"] = self.snippets.to_dict()
        return figures


def summarize(scores: Sequence[PageScore], *, missing: int = 0) -> Summary:
    """Average (macro) and pool (micro) the per-page scores."""
    n = len(scores)
    if not n:
        raise ValueError("no pages to summarize")

    def mean(values: Iterable[float]) -> float:
        return sum(values) / n

    aligned = sum(s.alignment.aligned for s in scores)
    out_words = sum(s.alignment.output_words for s in scores)
    ref_words = sum(s.alignment.gold_words for s in scores)
    micro_p = _ratio(aligned, out_words, empty_gold=not ref_words)
    micro_r = aligned / ref_words if ref_words else 1.0
    checked = [s.snippets for s in scores if s.snippets is not None]
    return Summary(
        pages=n,
        precision=mean(s.alignment.precision for s in scores),
        recall=mean(s.alignment.recall for s in scores),
        f1=mean(s.alignment.f1 for s in scores),
        micro_precision=micro_p,
        micro_recall=micro_r,
        micro_f1=_f1(micro_p, micro_r),
        levenshtein=mean(s.levenshtein for s in scores),
        bag_precision=mean(s.bag_precision for s in scores),
        bag_recall=mean(s.bag_recall for s in scores),
        bag_f1=mean(s.bag_f1 for s in scores),
        missing=missing,
        snippets=sum(checked, SnippetCounts()) if checked else None,
    )


def summarize_by_type(scores: Sequence[PageScore]) -> dict[str, Summary]:
    """`summarize` the pages of each page type apart, the most frequent type first.

    Pages without a type (a set without checks) make no group; ``missing`` counts a type's
    pages that were scored as empty for want of an output (pages left out are not seen here).
    """
    groups: dict[str, list[PageScore]] = {}
    for score in scores:
        if score.page_type:
            groups.setdefault(score.page_type, []).append(score)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return {
        kind: summarize(group, missing=sum(s.missing for s in group)) for kind, group in ordered
    }


def score_outputs(
    pages: Sequence[Page], outputs: Mapping[str, str], *, missing: str = "empty"
) -> tuple[Summary, list[PageScore]]:
    """Score the outputs of one system on pages that have gold.

    Args:
        pages: the benchmark pages; those without gold are ignored.
        outputs: the system's text by page name.
        missing: ``"empty"`` scores a page without output as an empty output (what a system
            that produced nothing gets), ``"skip"`` leaves it out.

    Returns:
        The summary and the per-page scores, in page order.
    """
    if missing not in ("empty", "skip"):
        raise ValueError(f"missing must be 'empty' or 'skip', not {missing!r}")
    scores = []
    absent = 0
    for page in pages:
        if page.gold is None:
            continue
        output = outputs.get(page.name)
        if output is None:
            absent += 1
            if missing == "skip":
                continue
        scores.append(
            score_page(page.name, output or "", page.gold, page.checks, missing=output is None)
        )
    return summarize(scores, missing=absent), scores


def clean_pages(pages: Sequence[Page], settings: CleanerSettings | None = None) -> dict[str, str]:
    """stream-cleaner's kept text for each page, by page name (``""`` for a page in error).

    Each page goes to ``clean_document`` as its raw bytes, with its URL: the cleaner decodes it.
    """
    from .document import RawDocument
    from .pipeline import clean_document

    return {
        page.name: clean_document(
            RawDocument(body=page.raw, id=page.name, url=page.url), settings=settings
        ).text
        for page in pages
    }


def format_summary(summary: Summary) -> str:
    """A markdown table of every scorer, each under its full name (snippets with checks)."""
    rows = [
        ("alignment_macro", summary.precision, summary.recall, summary.f1),
        ("alignment_micro", summary.micro_precision, summary.micro_recall, summary.micro_f1),
        ("levenshtein", None, None, summary.levenshtein),
        ("bag", summary.bag_precision, summary.bag_recall, summary.bag_f1),
    ]
    if summary.snippets is not None:
        snippets = summary.snippets
        rows.append(("snippets", snippets.precision, snippets.recall, snippets.f1))
    lines = ["| scorer | precision | recall | F1 / similarity |", "|---|---:|---:|---:|"]
    for key, p, r, f in rows:
        cells = ["" if v is None else f"{v:.4f}" for v in (p, r, f)]
        lines.append(f"| {SCORER_NAMES[key]} | {' | '.join(cells)} |")
    return "\n".join(lines)


# --- readers -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Page:
    """One benchmark page.

    Attributes:
        name: the file's stem (``"100"`` for ``100.html``), unique within its set.
        url: the page's URL when the set records it, else ``""``.
        raw: the page's bytes, in whatever encoding it was served in (any CleanEval wrapper
            removed).
        gold: the hand-cleaned text, line endings normalised to ``\\n``, a leading ``URL:``
            line removed, ``<p>``/``<h>``/``<l>`` markers kept; ``None`` without a gold file.
        checks: the page's type and snippets when its set has a ``checks.json``, else ``None``.
    """

    name: str
    url: str
    raw: bytes
    gold: str | None = field(default=None, repr=False)
    checks: PageChecks | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class PageChecks:
    """One page's entry in a set's ``checks.json``.

    Attributes:
        url: the page's URL.
        page_type: what kind of page it is (``article``, ``forum``, ``product``...).
        with_snippets: strings a good extraction holds.
        without_snippets: strings (boilerplate) a good extraction does not hold.
    """

    url: str
    page_type: str
    with_snippets: tuple[str, ...]
    without_snippets: tuple[str, ...]


def read_checks(path: Path | str) -> dict[str, PageChecks]:
    """Read a ``checks.json``: by page name, ``{"url", "type", "with": [...], "without": [...]}``.

    Raises:
        ValueError: when the file is not an object of such entries (the entry is named).
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected an object of pages by name")
    checks = {}
    for name, entry in data.items():
        try:
            url, kind = entry.get("url", ""), entry["type"]
            with_, without = entry.get("with", []), entry.get("without", [])
            texts = [url, kind, *with_, *without]
            if (
                not all(isinstance(t, str) for t in texts)
                or not isinstance(with_, list)
                or not isinstance(without, list)
            ):
                raise TypeError("url, type and every snippet must be strings")
        except (AttributeError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: page {name!r}: {type(exc).__name__}: {exc}") from None
        if not kind or not all(collapse_space(t) for t in (*with_, *without)):
            raise ValueError(f"{path}: page {name!r}: empty type or snippet")
        checks[name] = PageChecks(url, kind, tuple(with_), tuple(without))
    return checks


def decode_text(data: bytes) -> str:
    """Decode a gold or output text file of unknown encoding, line endings to ``\\n``.

    UTF-16 by its byte-order mark, else UTF-8 (BOM dropped), else cp1252 (the CleanEval files
    that are not UTF-8 are Latin-1 or cp1252).
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16")
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def unwrap_cleaneval(data: bytes) -> tuple[str, bytes]:
    """Split a CleanEval HTML file into the URL of its ``<text id=..>`` wrapper and the page.

    A file without the wrapper comes back whole, with no URL.
    """
    header = _CLEANEVAL_HEADER.match(data)
    if header is None:
        return "", data
    found = _CLEANEVAL_ID.search(header.group(0))
    url = found.group(1).decode("utf-8", errors="replace") if found else ""
    body = data[header.end() :]
    footer = _CLEANEVAL_FOOTER.search(body)
    if footer is not None:
        body = body[: footer.start()]
    return url, body


def read_gold(path: Path, *, comments: bool = False) -> str | None:
    """A gold file's text with its ``URL:`` line removed; ``None`` when it does not exist.

    A Dragnet gold file that goes on with readers' comments (after its ``!@#$%^&*() COMMENTS``
    line) gives the article only, or with ``comments`` the article and the comments.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    text = _URL_LINE.sub("", decode_text(data).lstrip("\ufeff"), count=1)
    found = _COMMENTS_LINE.search(text)
    if found is None:
        return text
    if comments:
        return text[: found.start()] + text[found.end() :]
    return text[: found.start()]


def detect_layout(root: Path) -> str:
    """``"cleaneval"`` when the first page of ``root/html`` has the ``<text`` wrapper and the set
    has no ``checks.json`` (CleanEval has none), else ``"generic"``."""
    if (root / CHECKS_FILE).is_file():
        return "generic"
    first = next(iter(_sorted_pages(_html_files(root))), None)
    if first is not None and _CLEANEVAL_HEADER.match(first.read_bytes()[:4096]):
        return "cleaneval"
    return "generic"


def read_pages(
    root: Path | str,
    *,
    layout: str = "auto",
    split: str = "all",
    limit: int | None = None,
    gold_comments: bool = False,
) -> list[Page]:
    """Read a benchmark folder: ``root/html/NAME.html`` with gold in ``root/gold/NAME.txt``.

    Args:
        root: the folder (``.cache/data/cleaneval/test``, ``.cache/data/dragnet``, ...).
        layout: ``"cleaneval"`` (unwrap ``<text id=..>``, URL from its ``id``),
            ``"generic"`` (the bytes as they are; Dragnet), or ``"auto"`` (by the first page).
        split: ``"all"``, or ``"train"``/``"test"`` of the fixed hash split
            (:func:`dragnet_split`).
        limit: read only the first N pages (after the split).
        gold_comments: count the readers' comments of a Dragnet gold file as gold too
            (`read_gold`).

    Returns:
        The pages in name order (numeric names numerically), gold ``None`` where missing. With a
        ``root/checks.json`` (`read_checks`) each page gets its checks, and its URL from them
        when the layout gave none.

    Raises:
        FileNotFoundError: when ``root/html`` is not a folder.
        ValueError: for an unknown format or split, or a malformed ``checks.json``.
    """
    root = Path(root)
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; expected one of {LAYOUTS}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    if layout == "auto":
        layout = detect_layout(root)
    checks_path = root / CHECKS_FILE
    checks = read_checks(checks_path) if checks_path.is_file() else {}
    pages = []
    for path in _sorted_pages(_html_files(root)):
        if split != "all" and dragnet_split(path.stem) != split:
            continue
        raw = path.read_bytes()
        url = ""
        if layout == "cleaneval":
            url, raw = unwrap_cleaneval(raw)
        gold = read_gold(root / "gold" / f"{path.stem}.txt", comments=gold_comments)
        page_checks = checks.get(path.stem)
        if page_checks is not None and not url:
            url = page_checks.url
        pages.append(Page(path.stem, url, raw, gold, page_checks))
        if limit is not None and len(pages) >= limit:
            break
    return pages


def read_cleaneval(root: Path | str, *, limit: int | None = None) -> list[Page]:
    """Read one CleanEval split folder (``.../cleaneval/dev`` or ``.../cleaneval/test``)."""
    return read_pages(root, layout="cleaneval", limit=limit)


def read_outputs(folder: Path | str, names: Iterable[str] | None = None) -> dict[str, str]:
    """Read a folder of already extracted texts, ``NAME.txt`` per page, by page name.

    Args:
        folder: the outputs of one system.
        names: read only these pages (the others are not even opened).

    Raises:
        FileNotFoundError: when ``folder`` is not a folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder of NAME.txt outputs")
    wanted = None if names is None else set(names)
    return {
        path.stem: decode_text(path.read_bytes())
        for path in folder.glob("*.txt")
        if wanted is None or path.stem in wanted
    }


def _html_files(root: Path) -> list[Path]:
    html = root / "html"
    if not html.is_dir():
        raise FileNotFoundError(f"{html} not found: expected html/NAME.html and gold/NAME.txt")
    return [p for p in html.iterdir() if p.suffix.lower() in (".html", ".htm") and p.is_file()]


def _sorted_pages(paths: Iterable[Path]) -> list[Path]:
    """Numeric names numerically (``2`` before ``10``), then the rest by name."""
    return sorted(paths, key=lambda p: (0, int(p.stem), "") if p.stem.isdigit() else (1, 0, p.stem))
