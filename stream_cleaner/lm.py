"""The KenLM language model: one normalisation for training and scoring, lazy memory-mapped
loading shared by the whole process, and the training command's helpers.

``normalize`` is the only text transformation a sentence sees before KenLM, at training time
and at query time alike; changing it changes ``NORMALIZATION_VERSION`` and needs new models.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import lzma
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NamedTuple

from ._native import native_module
from .segment import split_sentences

NORMALIZATION_VERSION = 1
DEFAULT_MODEL_PATH = Path(__file__).parent / "models" / "en-wiki-bigram.klm"
KENLM_BIN_ENV = "STREAM_CLEANER_KENLM_BIN"

# Typographic variants folded to one ASCII form, so "it’s" and "it's" are the same tokens.
_FOLD = {
    "’": "'", "‘": "'", "‚": "'", "′": "'", "´": "'", "`": "'",
    "“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "″": '"',
    "–": "-", "—": "-", "‒": "-", "―": "-", "−": "-", "‐": "-", "‑": "-",
    "…": ".", "\u00a0": " ", "\u200b": " ",
}  # fmt: skip
_FOLDABLE = re.compile("[" + "".join(_FOLD) + "]")
# Ideographs and kana are one token each: those scripts write words without spaces. Spaced a
# run at a time (`_spaced_run`), not a character at a time: a Python call per ideograph was
# half of a Chinese page's scoring. The two combining kana marks (U+3099, U+309A), the only
# combining marks in these blocks, stay out of the runs: `_spaced` keeps a combining mark as
# it is, between its spaced neighbours.
_CJK = re.compile("[\u3040-\u3098\u309b-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# Every other character that is neither a word character nor white space is a token of its
# own. ASCII punctuation is spaced out with str.replace (a memchr-speed pass per character
# present); the rest, rare, by regex.
_ASCII_PUNCT = "".join(c for c in map(chr, range(128)) if re.fullmatch(r"[^\w\s]", c))
_OTHER_PUNCT = re.compile(r"[^\w\s\x00-\x7f]")
_NON_ASCII_DIGIT = re.compile(r"[^\D0-9]")  # decimal digits of other scripts


def normalize(text: str) -> str:
    """Lower-case, fold typographic variants, map every digit to 0 and tokenise.

    Words are runs of letters, digits, underscores and combining marks; every other non-space
    character is a token of its own; CJK ideographs and kana are one token each.

    Returns:
        The tokens joined by single spaces (KenLM's input format).
    """
    return normalize_many([text.replace("\n", " ")])[0]


def normalize_many(texts: Sequence[str]) -> list[str]:
    """`normalize` of many single-line texts at once.

    A page's sentences go through here together, in a few passes of C string methods over the
    whole page: per-sentence calls, or one regex findall, spend more time in Python objects
    than in the work itself.
    """
    text = "\n".join(texts).lower()
    if "`" in text:  # the one ASCII character in _FOLD: folded on every page, ASCII or not
        text = text.replace("`", "'")
    for digit in "123456789":
        if digit in text:
            text = text.replace(digit, "0")
    if not text.isascii():
        text = _FOLDABLE.sub(_fold_char, text)
        text = _NON_ASCII_DIGIT.sub("0", text)
        if _OTHER_PUNCT.search(text):
            text = _OTHER_PUNCT.sub(_spaced, text)
        if _CJK.search(text):
            text = _CJK.sub(_spaced_run, text)
    for char in _ASCII_PUNCT:
        if char in text:
            text = text.replace(char, f" {char} ")
    return [" ".join(line.split()) for line in text.split("\n")]


def _spaced(match: re.Match[str]) -> str:
    char = match.group()
    if unicodedata.category(char)[0] == "M":
        return char  # a combining mark (Thai vowels, accents in NFD) belongs to its word
    return f" {char} "


def _spaced_run(match: re.Match[str]) -> str:
    return " " + " ".join(match.group()) + " "


def _fold_char(match: re.Match[str]) -> str:
    return _FOLD[match.group()]


class SentenceScore(NamedTuple):
    """KenLM's verdict on one normalised sentence (a NamedTuple: made once per sentence)."""

    log10_prob: float
    n_tokens: int
    n_oov: int

    @property
    def perplexity(self) -> float | None:
        return perplexity(self.log10_prob, self.n_tokens)


_EMPTY_SCORE = SentenceScore(0.0, 0, 0)

# A page's scores by column: log10 probabilities, token counts, OOV counts (one entry a sentence).
ScoreColumns = tuple[list[float], list[int], list[int]]


def score_columns(scores: Sequence[tuple[float, int, int]]) -> ScoreColumns:
    """Scores (`SentenceScore` or plain triples) as three columns."""
    if not scores:
        return [], [], []
    log10_probs, n_tokens, n_oovs = map(list, zip(*scores, strict=True))
    return log10_probs, n_tokens, n_oovs


def perplexity(log10_prob: float, n_tokens: int) -> float | None:
    """KenLM's perplexity: the end-of-sentence token counts, so a sentence of n words has n+1."""
    if n_tokens <= 0:
        return None
    return 10.0 ** (-log10_prob / (n_tokens + 1))


class LanguageModel:
    """A KenLM model, loaded on first use and memory-mapped.

    Args:
        path: a KenLM binary (``.klm``/``.binary``) or ARPA file. The JSON sidecar next to it
            (``PATH.json``), when present, names the model and records how it was built.
    """

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_MODEL_PATH) -> None:
        self.path = Path(path)
        self._model: Any = None
        self._page_scorer: Any = None
        self._known = _KnownTokens(self)
        self._lock = threading.Lock()
        self.load_seconds: float | None = None
        self.info = _read_sidecar(self.path)
        self.id = str(self.info.get("id") or self.path.stem)

    def __reduce__(self) -> tuple[Any, ...]:
        """A model pickles as its file: another process (the web demo's, `web.isolation`)
        loads its own copy once, with `load_model`."""
        return (load_model, (str(self.path.resolve()),))

    @property
    def model(self) -> Any:
        """The underlying ``kenlm.Model``, loaded on first access."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._load()
        return self._model

    def _load(self) -> None:
        import kenlm  # heavy and compiled: imported only when a model is really needed

        if not self.path.is_file():
            raise FileNotFoundError(f"language model not found: {self.path}")
        config = kenlm.Config()
        # mmap the binary: worker processes on one host share its pages through the page cache
        config.load_method = kenlm.LoadMethod.LAZY
        config.show_progress = False
        config.arpa_complain = kenlm.ARPALoadComplain.NONE
        started = time.perf_counter()
        model = kenlm.Model(str(self.path), config)
        self.load_seconds = time.perf_counter() - started
        fast = native_module("kenlm_score")
        if fast is not None:
            self._page_scorer = fast.PageScorer(model)
        self._model = model  # last: other threads take a set _model as fully loaded

    @property
    def order(self) -> int:
        return int(self.model.order)

    def score(self, normalized: str) -> SentenceScore:
        """Score an already normalised sentence (``normalize(text)``)."""
        model = self.model
        if not normalized:
            return SentenceScore(0.0, 0, 0)
        tokens = normalized.split(" ")
        n_known = sum(map(model.__contains__, tokens))  # map: no Python frame per token
        return SentenceScore(
            model.score(normalized, bos=True, eos=True), len(tokens), len(tokens) - n_known
        )

    def score_many(self, normalized: Sequence[str]) -> list[SentenceScore]:
        """`score` for a page's sentences at once (the pipeline's hot loop)."""
        kenlm_score = self.model.score
        if self._page_scorer is not None:
            return self._page_scorer.score_many(list(normalized), SentenceScore)
        known = self._known.__getitem__
        scores = []
        append = scores.append
        for sentence in normalized:
            if sentence:
                tokens = sentence.split(" ")
                n = len(tokens)
                append(
                    SentenceScore(kenlm_score(sentence, True, True), n, n - sum(map(known, tokens)))
                )
            else:
                append(_EMPTY_SCORE)
        return scores

    def score_texts(self, texts: Sequence[str]) -> list[SentenceScore]:
        """`score_many` of ``normalize_many(texts)``: raw single-line sentences scored."""
        self.model  # noqa: B018 - loads the model, and with it the native scorer when built
        if self._page_scorer is not None:
            return self._page_scorer.score_texts(list(texts), SentenceScore, normalize_many)
        return self.score_many(normalize_many(texts))

    def score_columns(self, texts: Sequence[str]) -> ScoreColumns:
        """`score_texts` as three lists, each sentence's log10 probability, tokens and OOVs:
        what the pipeline reads, without a record made per sentence."""
        self.model  # noqa: B018 - loads the model, and with it the native scorer when built
        if self._page_scorer is not None:
            return self._page_scorer.score_columns(list(texts), SentenceScore, normalize_many)
        return score_columns(self.score_many(normalize_many(texts)))

    def compute_sentence(self, text: str) -> float | None:
        """The perplexity of one raw sentence (pyplexity's ``compute_sentence``)."""
        return self.score(normalize(text)).perplexity

    def compute_text(self, text: str) -> float | None:
        """The perplexity of a whole text, from its sentences' summed log-probabilities."""
        total, n = 0.0, 0
        for sentence in split_sentences(" ".join(text.split())):
            s = self.score(normalize(sentence))
            total += s.log10_prob
            n += s.n_tokens + 1 if s.n_tokens else 0
        return 10.0 ** (-total / n) if n else None


class _KnownTokens(dict):
    """token -> whether the model knows it; a bounded cache in front of KenLM's vocabulary.

    A page's tokens repeat ("the", "of", menu words): a dict hit costs a tenth of asking KenLM,
    whose lookup encodes the token and hashes it again every time.
    """

    MAX_ENTRIES = 200_000

    def __init__(self, owner: LanguageModel) -> None:
        super().__init__()
        self.owner = owner

    def __missing__(self, token: str) -> bool:
        known = token in self.owner.model
        if len(self) >= self.MAX_ENTRIES:
            self.clear()  # simple and bounded; the frequent tokens come back at once
        self[token] = known
        return known


class PerplexityModel(LanguageModel):
    """pyplexity's model class, for its users: ``PerplexityModel.from_str("default")``."""

    @classmethod
    def from_str(cls, name: str = "default") -> PerplexityModel:
        """A model by name (``default`` or ``en-wiki-bigram``) or by file path."""
        if name in ("default", DEFAULT_MODEL_PATH.stem):
            return cls(DEFAULT_MODEL_PATH)
        return cls(name)


_MODELS: dict[Path, LanguageModel] = {}
_MODELS_BY_ARGUMENT: dict[str | os.PathLike[str] | None, LanguageModel] = {}
_MODELS_LOCK = threading.Lock()


def load_model(path: str | os.PathLike[str] | None = None) -> LanguageModel:
    """The process-wide model for ``path`` (default: the bundled English bigram).

    Every caller in one process gets the same object, so a worker loads its model once.
    """
    model = _MODELS_BY_ARGUMENT.get(path)  # the pipeline asks once per page: no path walk
    if model is not None:
        return model
    key = Path(path or DEFAULT_MODEL_PATH).resolve()
    model = _MODELS.get(key)
    if model is None:
        with _MODELS_LOCK:
            model = _MODELS.get(key)
            if model is None:
                model = _MODELS[key] = LanguageModel(key)
    if (path is None or os.path.isabs(path)) and len(_MODELS_BY_ARGUMENT) < 64:
        _MODELS_BY_ARGUMENT[path] = model  # absolute: resolves the same whatever the cwd
    return model


def _read_sidecar(path: Path) -> dict[str, Any]:
    sidecar = path.with_name(path.name + ".json")
    if not sidecar.is_file():
        return {}
    try:
        return dict(json.loads(sidecar.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


# --- training -------------------------------------------------------------------------------


class KenlmToolsMissing(RuntimeError):
    """lmplz / build_binary are not built; ``scripts/build-kenlm-tools.sh`` builds them."""


def find_kenlm_tool(name: str) -> str:
    """Path of ``lmplz`` or ``build_binary``: $STREAM_CLEANER_KENLM_BIN, .cache/kenlm/bin, PATH."""
    candidates = []
    if os.environ.get(KENLM_BIN_ENV):
        candidates.append(Path(os.environ[KENLM_BIN_ENV]) / name)
    candidates.append(Path(__file__).resolve().parent.parent / ".cache" / "kenlm" / "bin" / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise KenlmToolsMissing(
        f"{name} not found: run scripts/build-kenlm-tools.sh or set {KENLM_BIN_ENV}"
    )


def open_text(path: str | os.PathLike[str]) -> IO[str]:
    """Open a corpus file for reading as UTF-8 text, through xz/gzip/bz2 by its suffix."""
    path = str(path)
    if path.endswith(".xz"):
        return lzma.open(path, "rt", encoding="utf-8", errors="replace")
    if path.endswith(".gz"):
        import gzip

        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    if path.endswith(".bz2"):
        import bz2

        return bz2.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


# WikiExtractor writes section headings as a line of their own ending in a full stop
# ("Early life."): a line of one sentence of at most this many words inside a <doc> is one.
MAX_HEADING_WORDS = 8


def iter_corpus_sentences(lines: Iterable[str]) -> Iterator[str]:
    """Normalised sentences of a corpus: one paragraph (or sentence) per line.

    WikiExtractor's ``<doc ...>`` / ``</doc>`` lines are skipped, and so are, inside a
    ``<doc>``, its title (the first line) and its section headings (a line of one short
    sentence ending in '.'): they are not prose, and a model that learns them as sentences
    gives menu and link text ("Home", "Contact us") the low perplexity of a heading. Every
    other line is split with the same splitter the cleaner uses, then normalised. Lines with a
    NUL character are binary junk, not text, and are skipped too.
    """
    in_doc = at_title = False
    for raw_line in lines:
        line = raw_line.strip()
        if not line:
            continue
        if line.startswith("<doc "):
            in_doc = at_title = True
            continue
        if line == "</doc>":
            in_doc = at_title = False
            continue
        if "\x00" in line:
            # e.g. the enwiki dump starts with a stray .DS_Store: without this its bytes became
            # thousands of "\x00" and control-character tokens
            continue
        if at_title:
            at_title = False
            continue
        sentences = split_sentences(" ".join(line.split()))
        if (
            in_doc
            and len(sentences) == 1
            and line.endswith(".")
            and len(line.split()) <= MAX_HEADING_WORDS
        ):
            continue
        for sentence in sentences:
            normalized = normalize(sentence)
            if normalized:
                yield normalized


@dataclass(frozen=True, slots=True)
class TrainedModel:
    path: Path
    info: dict[str, Any]


def train_lm(
    corpora: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    *,
    order: int = 2,
    prune: Sequence[int] = (),
    max_vocab: int | None = None,
    memory: str = "40%",
    binary_type: str = "trie",
    quantize_bits: int | None = 8,
    arpa: bool = False,
    model_id: str | None = None,
    progress: Any = None,
) -> TrainedModel:
    """Train a KenLM model on raw text with the cleaner's own normalisation.

    Args:
        corpora: text files (optionally .xz/.gz/.bz2), one paragraph or sentence per line.
        output: the model file to write (KenLM binary, or ARPA when ``arpa`` is true).
        order: n-gram order (2 = bigram, 3 = trigram).
        prune: lmplz ``--prune`` thresholds, one per order from unigrams (e.g. ``0 1``).
        max_vocab: keep only this many most frequent words (lmplz
            ``--limit_vocab_file``): n-grams with any other word are dropped and the word
            scores as ``<unk>``. Shrinks a model more than pruning and costs less quality.
        memory: lmplz ``-S`` sort memory.
        binary_type: ``trie`` (compact) or ``probing`` (faster, larger).
        quantize_bits: bits for probabilities and backoffs in a trie (``None`` = no
            quantisation).
        arpa: write the ARPA text file instead of a binary.
        model_id: the id recorded in the sidecar; defaults to the output file's stem.
        progress: an optional callable given the number of sentences written so far.

    Returns:
        The written model path and its sidecar content.
    """
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    lmplz = find_kenlm_tool("lmplz")
    build_binary = None if arpa else find_kenlm_tool("build_binary")
    digest = hashlib.sha256()
    n_sentences = n_tokens = 0
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="stream-cleaner-lm-") as tmp:
        arpa_path = output if arpa else Path(tmp) / "model.arpa"
        # The normalised text goes to a file first, not down a pipe: the vocabulary limit
        # needs the word counts before lmplz starts, and an lmplz that fails reports its log
        # instead of a BrokenPipeError.
        text_path = Path(tmp) / "corpus.txt"
        counts: Counter[str] = Counter()
        with open(text_path, "w", encoding="utf-8") as text_out:
            for corpus in corpora:
                with open_file_hashed(corpus, digest) as lines:
                    for sentence in iter_corpus_sentences(lines):
                        text_out.write(sentence + "\n")
                        words = sentence.split(" ")
                        if max_vocab:
                            counts.update(words)
                        n_sentences += 1
                        n_tokens += len(words)
                        if progress is not None and n_sentences % 100_000 == 0:
                            progress(n_sentences)
        cmd = [lmplz, "-o", str(order), "-S", memory, "-T", tmp, "--discount_fallback"]
        if prune:
            cmd += ["--prune", *map(str, prune)]
        if max_vocab:
            vocab_path = Path(tmp) / "vocab.txt"
            # most frequent first, ties by the word itself: the same corpus gives the same list
            kept = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:max_vocab]
            vocab_path.write_text("\n".join(word for word, _ in kept) + "\n", encoding="utf-8")
            del counts, kept
            cmd += ["--limit_vocab_file", str(vocab_path)]
        log_path = Path(tmp) / "lmplz.log"
        with (
            open(text_path, "rb") as text_in,
            open(arpa_path, "wb") as arpa_out,
            open(log_path, "wb") as log,
        ):
            done = subprocess.run(cmd, stdin=text_in, stdout=arpa_out, stderr=log, check=False)
        code = done.returncode
        if code != 0:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"lmplz failed with exit code {code}:\n{tail}")
        text_path.unlink()
        vocab_size = _arpa_unigram_count(arpa_path)
        if not arpa:
            bcmd = [build_binary]
            if binary_type == "trie" and quantize_bits:
                bcmd += ["-q", str(quantize_bits), "-b", str(quantize_bits), "-a", "22"]
            bcmd += [binary_type, str(arpa_path), str(output)]
            done = subprocess.run(bcmd, capture_output=True, check=False)
            if done.returncode != 0:
                raise RuntimeError(
                    f"build_binary failed ({done.returncode}): {done.stderr.decode()[-2000:]}"
                )
    info = {
        "id": model_id or output.stem,
        "order": order,
        "prune": list(prune),
        "max_vocab": max_vocab,
        "binary": None if arpa else {"type": binary_type, "quantize_bits": quantize_bits},
        "normalization_version": NORMALIZATION_VERSION,
        "vocabulary_size": vocab_size,
        "training_sentences": n_sentences,
        "training_tokens": n_tokens,
        "corpus": [Path(c).name for c in corpora],
        "corpus_sha256": digest.hexdigest(),
        "size_bytes": output.stat().st_size,
        "training_seconds": round(time.time() - started, 1),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    output.with_name(output.name + ".json").write_text(json.dumps(info, indent=2) + "\n")
    return TrainedModel(output, info)


class open_file_hashed:  # noqa: N801 - used as a context manager, reads like open()
    """Open a corpus for text reading while feeding its raw bytes into a sha256."""

    def __init__(self, path: str | os.PathLike[str], digest: Any) -> None:
        self.path = Path(path)
        self.digest = digest

    def __enter__(self) -> Iterator[str]:
        with open(self.path, "rb") as raw:
            for chunk in iter(lambda: raw.read(1 << 20), b""):
                self.digest.update(chunk)
        self._stream = open_text(self.path)
        return iter(self._stream)

    def __exit__(self, *exc: object) -> None:
        self._stream.close()


def _arpa_unigram_count(arpa_path: Path) -> int | None:
    with open(arpa_path, encoding="utf-8", errors="replace") as arpa:
        for line in arpa:
            if line.startswith("ngram 1="):
                return int(line.split("=", 1)[1])
            if line.startswith("\\1-grams:"):
                break
    return None
