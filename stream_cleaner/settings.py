"""Every threshold and option of the cleaner, with its default, in one place."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

PARSERS = ("lexbor", "html5lib")
# What counts as content. perplexity: the paper's sentence filter alone; corpus: the block
# labeller trained on CleanEval (all well-formed running text, boilerplate and malformed text
# removed); article: the block labeller trained on article pages (main content only); auto:
# the block labeller trained on every kind of page the project holds (CleanEval, Dragnet,
# GoogleTrends, the 2026 pages: articles, forums, documentation, products, listings), which
# reads where each block stands in the page and judges it with the blocks around it.
MODES = ("perplexity", "corpus", "article", "auto")
# The modes a block labeller decides (`labeller.labeller_path`: models/labeller-MODE.json).
LABELLER_MODES = ("corpus", "article", "auto")
# auto is the default: a user should not need to know which mode suits a page
# (bench/auto_training.py chose it; docs/labeller.md has the figures).
MODE_DEFAULT = "auto"
# Sentence filter inside the blocks the labeller keeps: auto = as the labeller was trained
# (its file records the limit chosen on its training data, or none), on = max_sentence_perplexity,
# off = none.
SENTENCE_FILTERS = ("auto", "on", "off")
# On which pages the language-independent multilingual labeller (`multilingual_labeller`) must also
# call a block content for it to be kept: auto = pages whose language has no language model,
# in corpus mode (the corpus labeller then sees no perplexity) and in auto mode for languages
# written without spaces between words (`language.UNSPACED_LANGUAGES`), on = every page of the
# labeller's modes, off = none. Chosen by bench/multilingual_pipeline.py: on pages without a
# model the pair beats either labeller alone in corpus mode, and loses to the article labeller
# alone in article mode; in auto mode it loses on Latin-script pages (GoogleTrends val without
# a model: 0.715 against 0.732) and wins on Chinese, Japanese and Thai (docs/models.md: chosen
# after those test sets were read).
MULTILINGUAL_LABELLERS = ("auto", "on", "off")

# Chosen on CleanEval dev only: `python bench/threshold.py` prints the table behind it.
MAX_SENTENCE_PERPLEXITY_DEFAULT = 3000.0
# A sentence longer than natural text is dropped as `too_long` in every mode, whatever its
# perplexity and its block's label: a 5 MB "word" scores as any unknown word does alone, and
# 5 MB of "A. A." as "A.". No word of any language is longer than 1,000 characters: C4's rule
# (Raffel et al. 2020, as datatrove's C4QualityFilter and NeMo Curator's LongWordFilter apply
# it), which also catches minified code. The model's tokens of the text kept on the 2,700
# benchmark pages (CleanEval, Dragnet, GoogleTrends, modern2026, MultiBoilerNet's Thai) are at
# most 99 characters long (a form's underline), 173 in Thai, which puts no space between
# words; their sentences have at most 971 tokens, and 10,000 leaves ten times that.
MAX_WORD_CHARS_DEFAULT = 1000
MAX_SENTENCE_TOKENS_DEFAULT = 10_000
# Pages above this are refused with the reason `too_large` rather than parsed.
MAX_DOCUMENT_BYTES_DEFAULT = 32 * 1024 * 1024
# Pages with more text blocks are refused with `too_large` as they parse: memory and time grow
# with the blocks (about 1 kB each), and of the 2,288 benchmark pages here none has 2,400.
MAX_BLOCKS_DEFAULT = 100_000
# CPU seconds one document may take, of the thread that cleans it (`budget`: a pause or a busy
# neighbour costs the page nothing); past them the document ends with `time_budget`.
TIME_BUDGET_SECONDS_DEFAULT = 5.0
ENV_PREFIX = "STREAM_CLEANER_"


def option(
    default: Any,
    help: str,
    *,
    flag: str | None = None,
    choices: Iterable[str] | None = None,
    metavar: str | None = None,
) -> Any:
    """A settings field that the command line sets: its flag is generated from this.

    ``stream_cleaner.cli.options`` turns such a field into an option of the commands that
    take these settings: ``flag`` (default ``--`` + the field's name with dashes), the type
    of ``default``, ``choices``, and ``help`` followed by the default and the environment
    variable. A ``True`` default gives ``--no-NAME``. The option's own default is ``None``
    (unset: the environment's value or the field's default stands).

    Args:
        default: the field's default, written here only.
        help: what the option does, without its default (the CLI appends it).
    """
    metadata: dict[str, Any] = {"help": help}
    if flag is not None:
        metadata["flag"] = flag
    if choices is not None:
        metadata["choices"] = tuple(choices)
    if metavar is not None:
        metadata["metavar"] = metavar
    return field(default=default, metadata=metadata)


@dataclass(frozen=True, slots=True)
class CleanerSettings:
    """Options of `clean_document`.

    Attributes:
        max_sentence_perplexity: sentences scoring above it are dropped (the paper's method).
        max_sentence_tokens, max_word_chars: a sentence of more tokens (the model's, of
            `lm.normalize`), or with a token of more characters, is dropped as ``too_long``
            in every mode (`decide.too_long`).
        parser: HTML parser backend, ``lexbor`` (fast, default) or ``html5lib`` (reference).
        model_path: a KenLM binary or ARPA file; ``None`` means the bundled English bigram.
        max_document_bytes: larger bodies are not parsed and end with the error ``too_large``.
        max_blocks: a page with more text blocks ends with ``too_large`` too, as it parses.
        time_budget_seconds: per-document budget, in CPU seconds of the cleaning thread
            (`budget`); ``0`` disables it.
        mode: ``perplexity``, ``corpus``, ``article`` or ``auto`` (see `MODES`).
        sentence_filter: in the labeller's modes, whether sentences of kept blocks still go
            through the perplexity filter: ``auto`` (as the labeller was trained), ``on`` (with
            ``max_sentence_perplexity``) or ``off``.
        labeller_path: a labeller model file (``train-labeller``) instead of the mode's
            bundled one.
        site_labeller_path: the labeller for pages whose site has enough pages of evidence
            (``train-labeller --site-features``; see `pipeline`); by default the mode's
            bundled ``labeller-MODE-sites.json`` where there is one and ``labeller_path`` is
            not set.
        page_type_model_path: a page-type model file (``bench/page_types.py``, `page_types`)
            instead of the bundled one.
        multilingual_labeller: in the labeller's modes, on which pages a block is kept only
            when the multilingual labeller also calls it content: ``auto`` (pages in a
            language without a language model: in corpus mode all, in auto mode those of a
            language written without spaces), ``on`` (every page) or ``off`` (none); see
            `MULTILINGUAL_LABELLERS`.
        multilingual_labeller_path: a multilingual labeller file (bench/multilingual.py
            ``--save``) instead of the bundled one.
        content_guard: in the labeller's modes, keep a page's longest run of running text
            when the labeller drops most of it, and in ``auto`` join a decision of a few
            words with the corpus labeller's (`guard`; the document's ``guard`` says so).
        models: language models by language, ``"de=/m/de.klm,fr=/m/fr.klm"`` (ISO 639-1
            codes, as `language.identifier` names them). Each block is scored by the model of
            its language; blocks of a language without one get no perplexity (see
            `pipeline`). English is ``model_path``: an ``en=`` entry here sets it.
    """

    max_sentence_perplexity: float = option(
        MAX_SENTENCE_PERPLEXITY_DEFAULT,
        "drop sentences above this perplexity",
        flag="--max-perplexity",
    )
    max_sentence_tokens: int = MAX_SENTENCE_TOKENS_DEFAULT
    max_word_chars: int = MAX_WORD_CHARS_DEFAULT
    parser: str = option("lexbor", "HTML parser backend", choices=PARSERS)
    model_path: str | None = None  # with models: cli.options' --model [LANG=]PATH
    max_document_bytes: int = option(
        MAX_DOCUMENT_BYTES_DEFAULT, "larger pages are refused as too_large", flag="--max-bytes"
    )
    max_blocks: int = option(
        MAX_BLOCKS_DEFAULT, "pages with more text blocks are refused as too_large"
    )
    time_budget_seconds: float = option(
        TIME_BUDGET_SECONDS_DEFAULT,
        "CPU seconds one page may take (0 = no limit)",
        flag="--time-budget",
    )
    mode: str = option(
        MODE_DEFAULT,
        "what counts as content: auto (the labeller trained on every kind of page: articles, "
        "forums, documentation, products, listings), perplexity (the paper's sentence filter "
        "alone), corpus (all good running text) or article (main content only)",
        choices=MODES,
    )
    sentence_filter: str = option(
        "auto",
        "in the labeller's modes, also drop sentences of kept blocks above the perplexity "
        "limit: auto (as the labeller was trained), on, off",
        choices=SENTENCE_FILTERS,
    )
    labeller_path: str | None = option(
        None, "a train-labeller model file (default: the mode's bundled one)", flag="--labeller"
    )
    site_labeller_path: str | None = None
    page_type_model_path: str | None = None
    models: str = ""
    multilingual_labeller: str = option(
        "auto",
        "on which pages the language-independent multilingual labeller must also call a "
        "block content: auto (pages in a language without a model, in corpus mode, and in "
        "auto mode for languages written without spaces), on (every page), off",
        choices=MULTILINGUAL_LABELLERS,
    )
    multilingual_labeller_path: str | None = option(
        None,
        "a multilingual labeller model file (default: the bundled one)",
        flag="--multilingual-labeller-file",
    )
    content_guard: bool = option(
        True,
        "in the labeller's modes, do not keep a page's longest run of running text when the "
        "labeller drops most of it, nor in auto join a decision of a few words with the "
        "corpus labeller's (the content-loss guard)",
    )

    def __post_init__(self) -> None:
        english = self.model_paths().get("en")  # raises for a malformed models string
        if english is not None:
            if self.model_path is not None and self.model_path != english:
                raise ValueError(
                    f"two English models: model_path={self.model_path!r} and en={english!r}"
                )
            object.__setattr__(self, "model_path", english)
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {self.mode!r}")
        if self.sentence_filter not in SENTENCE_FILTERS:
            raise ValueError(
                f"sentence_filter must be one of {SENTENCE_FILTERS}, not {self.sentence_filter!r}"
            )
        if self.multilingual_labeller not in MULTILINGUAL_LABELLERS:
            raise ValueError(
                f"multilingual_labeller must be one of {MULTILINGUAL_LABELLERS}, "
                f"not {self.multilingual_labeller!r}"
            )
        if self.parser not in PARSERS:
            raise ValueError(f"parser must be one of {PARSERS}, not {self.parser!r}")
        if self.max_sentence_perplexity <= 0:
            raise ValueError("max_sentence_perplexity must be positive")
        if self.max_sentence_tokens <= 0 or self.max_word_chars <= 0:
            raise ValueError("max_sentence_tokens and max_word_chars must be positive")
        if self.max_document_bytes <= 0:
            raise ValueError("max_document_bytes must be positive")
        if self.max_blocks <= 0:
            raise ValueError("max_blocks must be positive")
        if self.time_budget_seconds < 0:
            raise ValueError("time_budget_seconds must not be negative")

    def model_paths(self) -> dict[str, str]:
        """``models`` as a dict, language -> path (without the English default)."""
        return parse_models(self.models)

    def with_options(self, **changes: Any) -> CleanerSettings:
        """A copy with the given fields changed; ``None`` values are ignored."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CleanerSettings:
        """Settings from ``STREAM_CLEANER_<FIELD>`` variables, defaults for the rest."""
        return cls(**values_from_env(cls, ENV_PREFIX, environ))


_LANGUAGE_CODE = re.compile(r"[a-z]{2,3}")


def parse_models(spec: str | Iterable[str]) -> dict[str, str]:
    """Language models by language from ``"de=/a.klm,fr=/b.klm"`` (or from its parts).

    Raises:
        ValueError: an entry is not ``LANG=PATH`` with a two- or three-letter code, or names
            a language twice.
    """
    entries = spec.split(",") if isinstance(spec, str) else list(spec)
    models: dict[str, str] = {}
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        code, sep, path = entry.partition("=")
        code, path = code.strip().lower(), path.strip()
        if not sep or not path or not _LANGUAGE_CODE.fullmatch(code):
            raise ValueError(f"a language model is LANG=PATH (de=/m/de.klm), not {entry!r}")
        if code in models:
            raise ValueError(f"two models for the language {code!r}")
        models[code] = path
    return models


def format_models(models: Mapping[str, str]) -> str:
    """The ``models`` string of a dict, language -> path (`parse_models`'s inverse)."""
    return ",".join(f"{code}={path}" for code, path in models.items())


def values_from_env(
    cls: type, prefix: str, environ: Mapping[str, str] | None = None, *, skip: Iterable[str] = ()
) -> dict[str, Any]:
    """Field values of the dataclass ``cls`` from ``<prefix><FIELD>`` variables.

    Each value is converted to the type of the field's default (bool, int, float, else str);
    empty variables count as unset; fields in ``skip`` are left out.
    """
    environ = os.environ if environ is None else environ
    defaults = cls()
    values: dict[str, Any] = {}
    for f in fields(cls):
        raw = environ.get(prefix + f.name.upper())
        if not raw or f.name in skip:
            continue
        default = getattr(defaults, f.name)
        if isinstance(default, bool):
            values[f.name] = raw.strip().lower() in ("1", "true", "yes", "on")
        elif isinstance(default, int):
            values[f.name] = int(raw)
        elif isinstance(default, float):
            values[f.name] = float(raw)
        else:
            values[f.name] = raw
    return values
