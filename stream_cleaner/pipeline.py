"""clean_document(): decode -> parse -> split -> score -> decide, composition only, no I/O.

It never raises for bad input: empty, binary, oversized, undecodable or unparseable pages come
back as a CleanedDocument with an ``error``. It raises only for a broken set-up (a model file
that does not exist).

Languages: the page's language and each block's are identified (`language.identifier`) and
each sentence is scored by the model of its block's language (``settings.models``; English
and undetermined blocks by the default model, ``settings.model_path``). A sentence in a
language without a model gets no perplexity (``None``; ``log10_prob`` 0, its tokens still
counted) and is never dropped as ``high_perplexity``: with no model, the paper's filter has
nothing to say, so perplexity mode keeps it unless it has no words. Site templates still
apply, and in corpus/article mode the labeller decides from its language-independent
features, its perplexity features set to a neutral value (the labeller's
``unscored_log_ppl``). In corpus mode the multilingual labeller (`multilingual_labeller`,
language-independent features only) must also call a block content on such a page
(``settings.multilingual_labeller``).
"""

from __future__ import annotations

import array
import bisect
import dataclasses
import functools
import itertools
import operator
import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ._native import native_module
from .budget import TimeBudgetExceeded, check_deadline, deadline_after
from .decide import DropReason, ErrorReason, decide_page, sentence_limit
from .decode import (
    BinaryContent,
    Decoded,
    DecodedTooLarge,
    content_type_from_headers,
    decode_body,
    is_page_type,
)
from .document import Block, CleanedDocument, RawDocument, ScoredSentence
from .filters import REGISTRY
from .guard import (
    GuardReason,
    drop_calls_to_action,
    drop_comments,
    drop_dialogs,
    drop_repeats,
    guard_content,
    join_corpus,
    joins_corpus,
    keep_figures,
    keep_headings,
    posts_in_comments,
    takes_auto,
    threads_as_auto,
)
from .labeller import (
    block_kinds,
    label_blocks,
    load_labeller,
    site_labeller_path,
    unscored_score,
)
from .language import UNDETERMINED, UNKNOWN, UNSPACED_LANGUAGES, identifier, pseudo_words_many
from .lm import (
    LanguageModel,
    ScoreColumns,
    SentenceScore,
    load_model,
    normalize_many,
    score_columns,
)
from .multilingual_labeller import load_multilingual
from .page_types import PAGE_TYPES, load_page_types, most_probable, type_probabilities
from .parse import (
    PageTooLarge,
    looks_like_html,
    page_title,
    parse_blocks,
    parse_text_blocks,
    too_many_blocks,
)
from .segment import join_kept, split_blocks
from .settings import CleanerSettings
from .sites import PageEvidence, SiteTemplates, find_page_url, site_of

if TYPE_CHECKING:
    import numpy as np

_DEFAULT_SETTINGS = CleanerSettings()
FORUM = PAGE_TYPES.index("forum")  # `drop_comments` reads the page's forum probability
# The modes whose labeller and page-type model read a page in a language written without
# spaces through `language.pseudo_words` (bench/auto_training.py): `corpus` and `article`
# since rule 48, `auto` since rule 63 (newspaper4k's seven Chinese, Japanese, Thai and
# Burmese pages, F1 over characters, 0.937 to 0.962)
PSEUDO_WORD_MODES: frozenset[str] = frozenset({"corpus", "article", "auto"})


class _Failed(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def clean_document(
    raw: RawDocument | bytes | str,
    *,
    settings: CleanerSettings | None = None,
    model: LanguageModel | None = None,
    sites: SiteTemplates | None = None,
    learn_site: bool = True,
) -> CleanedDocument:
    """Clean one page.

    Args:
        raw: the page, as a RawDocument or as its body alone (bytes or str).
        settings: thresholds and options; the defaults when omitted.
        model: the default (English) language model; the process-wide model of
            ``settings.model_path`` when omitted. Other languages' models come from
            ``settings.models``.
        sites: per-site template statistics: blocks repeated on most of the site's recent
            pages are dropped (reason ``site_template``). The site comes from ``raw.url``, or
            from the URL the page declares (`sites.find_page_url`).
        learn_site: add this page to ``sites`` after cleaning it (streams do; the batch
            two-pass mode learns every page first, with `observe_site`, and then cleans).

    Returns:
        The cleaned document, with every sentence, its score and the decision on it.
    """
    if not isinstance(raw, RawDocument):
        raw = RawDocument(body=raw)
    settings = settings or _DEFAULT_SETTINGS
    model = model or load_model(settings.model_path)
    models = language_models(settings, model)
    for each in models.values():
        each.model  # noqa: B018 - load now: a missing model is a set-up error, not a page error
    identifier().predict  # noqa: B018 - and the language identifier's
    if settings.mode != "perplexity":
        load_labeller(settings.mode, settings.labeller_path)  # the same for the labellers
        if settings.content_guard and takes_auto(settings.mode):
            load_labeller("auto")  # a likely thread's decision is auto's
        if settings.content_guard and joins_corpus(settings.mode):
            load_labeller("corpus")  # a page of a few words is joined by corpus's blocks
        load_page_types(settings.page_type_model_path)  # and the page-type model
        if settings.multilingual_labeller != "off":
            load_multilingual(settings.multilingual_labeller_path)
    run = _Run(raw, settings, model, models)
    run.sites, run.learn_site = sites, learn_site
    try:
        run.clean()
    except _Failed as failure:
        run.error, run.error_detail = failure.reason, failure.detail
    except TimeBudgetExceeded as exc:
        run.error, run.error_detail = ErrorReason.TIME_BUDGET, str(exc)
    except Exception as exc:
        run.error = ErrorReason.INTERNAL
        run.error_detail = f"{type(exc).__name__}: {exc}"
    return run.result()


def clean_documents(
    raws: Iterable[RawDocument | bytes | str],
    *,
    settings: CleanerSettings | None = None,
    model: LanguageModel | None = None,
) -> Iterator[CleanedDocument]:
    """`clean_document` over many pages, in order."""
    settings = settings or _DEFAULT_SETTINGS
    model = model or load_model(settings.model_path)
    for raw in raws:
        yield clean_document(raw, settings=settings, model=model)


def language_models(
    settings: CleanerSettings, model: LanguageModel | None = None
) -> dict[str, LanguageModel]:
    """The models by language: ``en`` is ``model`` (default: ``settings.model_path``'s), the
    others come from ``settings.models``; every one is the process-wide model of its file."""
    models = {"en": model or load_model(settings.model_path)}
    if settings.models:
        others = _OTHER_MODELS.get(settings.models)
        if others is None:  # parsed and resolved once per models string, not once per page
            others = {
                code: load_model(path)
                for code, path in settings.model_paths().items()
                if code != "en"
            }
            if len(_OTHER_MODELS) < 64:
                _OTHER_MODELS[settings.models] = others
        models.update(others)
    return models


_OTHER_MODELS: dict[str, dict[str, LanguageModel]] = {}


def observe_site(
    raw: RawDocument, sites: SiteTemplates, *, settings: CleanerSettings | None = None
) -> str:
    """Add a page's blocks to its site's statistics without cleaning it (the first pass).

    Returns:
        The page's site, ``""`` when it has none or cannot be parsed (nothing is learnt then).
    """
    settings = settings or _DEFAULT_SETTINGS
    if raw.error or len(raw.body) > settings.max_document_bytes:
        return ""
    try:
        body = raw.body
        text = _decode(raw, body, settings).text if (isinstance(body, bytes)) else body
        site = site_of(raw.url or find_page_url(text), key=sites.settings.site_key)
        if site and text.strip() and not _is_plain_text(raw, text):
            # the page's identity is the URL it was fetched from, never one it declares:
            # pages of a site often all name its home page (canonical, og:url, base href)
            blocks = parse_blocks(
                text, parser=settings.parser, class_words=False, max_blocks=settings.max_blocks
            )
            sites.observe(site, blocks, url=raw.url)
            return site
    except (BinaryContent, TimeBudgetExceeded, PageTooLarge):
        pass
    return ""


def _decode(raw: RawDocument, body: bytes, settings: CleanerSettings) -> Decoded:
    """`decode_body` of a page's bytes with what its RawDocument says of them; a compressed
    body may decode to ``max_document_bytes`` at most."""
    return decode_body(
        body,
        content_type=raw.content_type,
        headers=raw.headers,
        max_bytes=settings.max_document_bytes,
    )


class PerplexityProcessor:
    """pyplexity's processor, for its users: clean a text or an HTML string with a limit.

    Args:
        perpl_model: the language model (default: the bundled English bigram).
        perpl_limit: sentences above this perplexity are dropped.
    """

    def __init__(
        self, perpl_model: LanguageModel | None = None, perpl_limit: float | None = None
    ) -> None:
        self.model = perpl_model or load_model()
        # pyplexity's method: the sentence filter alone
        self.settings = _DEFAULT_SETTINGS.with_options(
            max_sentence_perplexity=perpl_limit, mode="perplexity"
        )

    def process(self, text: str) -> str:
        """The kept text of ``text`` (HTML is detected and its tags removed)."""
        return clean_document(text, settings=self.settings, model=self.model).text


@functools.lru_cache(maxsize=64)
def _site_labeller(settings: CleanerSettings) -> str | None:
    """The labeller file that reads site evidence under ``settings``, if any: the site
    labeller (`labeller.site_labeller_path`), or ``labeller_path`` when it was trained with
    site features."""
    if settings.mode == "perplexity":
        return None
    path = site_labeller_path(
        settings.mode,
        labeller_path=settings.labeller_path,
        site_labeller_path=settings.site_labeller_path,
    )
    labeller = settings.labeller_path
    if path is None and labeller and load_labeller(settings.mode, labeller).site_features:
        path = labeller
    return path


@functools.lru_cache(maxsize=64)
def _reads_class_words(settings: CleanerSettings, with_sites: bool) -> bool:
    """Whether a labeller that may decide a page under ``settings`` reads `Block.class_words`
    (the walk looks for them only then: `parse_blocks`'s ``class_words``)."""
    if settings.mode == "perplexity":
        return False
    if load_labeller(settings.mode, settings.labeller_path).class_features:
        return True
    site_labeller = _site_labeller(settings) if with_sites else None
    return site_labeller is not None and load_labeller(settings.mode, site_labeller).class_features


class _Run:
    """The state of one document's trip through the pipeline."""

    def __init__(
        self,
        raw: RawDocument,
        settings: CleanerSettings,
        model: LanguageModel,
        models: dict[str, LanguageModel] | None = None,
    ) -> None:
        self.raw = raw
        self.settings = settings
        self.model = model
        self.models = models if models is not None else {"en": model}
        self.language = UNDETERMINED
        self.started = time.perf_counter()
        # CPU seconds of this thread, the one that cleans the page (`budget`)
        self.deadline = deadline_after(settings.time_budget_seconds)
        self.seconds: dict[str, float] = {}
        self.sentences: list[ScoredSentence] = []
        self.n_blocks = 0
        self.encoding: str | None = None
        self.error: str | None = None
        self.error_detail: str | None = None
        self.block_texts: list[str] = []
        self.sites: SiteTemplates | None = None
        self.learn_site = True
        self.template_blocks: frozenset[int] = frozenset()
        self.dialog_blocks: list[int] = []  # blocks in ARIA dialogs (`parse.aria_dialog`)
        self.site_evidence: PageEvidence | None = None
        self.labeller_path = settings.labeller_path  # the labeller that decides this page
        self.block_kinds: tuple[str, ...] = ()
        self.title = ""
        self.guard: str | None = None  # why the content-loss guard changed the decision
        # the page's markup and whether its blocks have their class and id words: set for
        # an HTML page, whose type `page_types` then names in the labeller's modes
        self.html: str | None = None
        self.class_words = False
        self.page_type = ""
        self.page_type_confidence = 0.0
        self.forum_probability: float | None = None  # read by `drop_comments`, `guard_content`
        # (total log10 p, tokens, kept log10 p, kept tokens, drops by reason), once decided
        self.totals: tuple[float, int, float, int, dict[str, int]] | None = None

    def _lap(self, stage: str, since: float) -> float:
        """Add the time since ``since`` to ``stage``'s; now."""
        now = time.perf_counter()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - since
        return now

    def clean(self) -> None:
        raw, settings = self.raw, self.settings
        if raw.error:
            # readers write "<code>: <detail>" (codes in ErrorReason)
            reason, _, detail = raw.error.partition(": ")
            raise _Failed(reason, detail or reason)
        refusal = _not_a_page(raw)
        if refusal is not None:
            raise _Failed(ErrorReason.NOT_A_PAGE, refusal)
        body = raw.body
        size = len(body)
        if size > settings.max_document_bytes:
            raise _Failed(
                ErrorReason.TOO_LARGE,
                f"{size} bytes is more than max_document_bytes={settings.max_document_bytes}",
            )
        t = time.perf_counter()
        if isinstance(body, bytes):
            try:
                decoded = _decode(raw, body, settings)
            except DecodedTooLarge as exc:
                raise _Failed(ErrorReason.TOO_LARGE, str(exc)) from None
            except BinaryContent as exc:
                raise _Failed(ErrorReason.BINARY, str(exc)) from None
            text, self.encoding, utf8 = decoded.text, decoded.encoding, decoded.utf8
        else:
            text, utf8 = _without_lone_surrogates(body)
        t = self._lap("decode", t)
        if not text or text.isspace():
            raise _Failed(ErrorReason.EMPTY, "the body is empty")
        try:
            if _is_plain_text(raw, text):
                blocks = parse_text_blocks(text)
                if len(blocks) > settings.max_blocks:
                    raise too_many_blocks(settings.max_blocks)
            else:
                self.title = page_title(text)
                self.html = text
                self.class_words = _reads_class_words(settings, self.sites is not None)
                blocks = parse_blocks(
                    text,
                    parser=settings.parser,
                    deadline=self.deadline,
                    utf8=utf8,
                    class_words=self.class_words,
                    max_blocks=settings.max_blocks,
                    # only the labeller modes drop them (`_label`)
                    dialogs=self.dialog_blocks if settings.mode != "perplexity" else None,
                )
        except PageTooLarge as exc:
            raise _Failed(ErrorReason.TOO_LARGE, str(exc)) from None
        self.n_blocks = len(blocks)
        t = self._lap("parse", t)
        if not blocks:
            raise _Failed(ErrorReason.EMPTY, "no text found in the page")
        if self.sites is not None and not _is_plain_text(raw, text):
            self._apply_site_templates(text, blocks)
        self._score_blocks(blocks)

    def _apply_site_templates(self, text: str, blocks: list[Block]) -> None:
        sites = self.sites
        assert sites is not None
        t = time.perf_counter()
        site = site_of(self.raw.url or find_page_url(text), key=sites.settings.site_key)
        if site:
            settings = self.settings
            labeller = _site_labeller(settings)
            flags, evidence = sites.assess(
                site, blocks, learn=self.learn_site, evidence=labeller is not None,
                url=self.raw.url,  # the fetched URL only, as in `observe_site`
            )  # fmt: skip
            # the site labeller decides once the site has enough other pages to read
            if evidence is not None and evidence.site_pages >= sites.settings.min_pages:
                self.site_evidence, self.labeller_path = evidence, labeller
                if not sites.settings.rule_with_labeller:
                    flags = []
            elif labeller is not None and labeller == settings.labeller_path:
                self.site_evidence = evidence  # a labeller with site features decides anyway
            self.template_blocks = frozenset(
                block.index for block, flag in zip(blocks, flags, strict=False) if flag
            )
        self._lap("site", t)

    def _score_blocks(self, blocks: list[Block]) -> None:
        """The steps after parsing, each timed under its name (`CleanedDocument.seconds`):
        language, split, score, label (and page_type), decide. Past the deadline, every
        sentence is dropped (``time_budget``) and the document ends with that error."""
        t = time.perf_counter()
        block_texts = _attributes(blocks, "text")
        block_languages = self._identify_languages(block_texts)
        t = self._lap("language", t)
        texts, block_of, languages = self._split(blocks, block_texts, block_languages)
        t = self._lap("split", t)
        try:
            check_deadline(self.deadline, "before scoring")
            scores, unscored = self._score_sentences(texts, languages)
            t = self._lap("score", t)
            content, max_ppl, t = self._label(
                blocks, texts, block_of, scores=scores, unscored=unscored, t=t
            )
            self._decide(
                blocks, texts, block_of, languages, scores=scores, unscored=unscored,
                content=content, max_ppl=max_ppl,
            )  # fmt: skip
            self._lap("decide", t)
        except TimeBudgetExceeded:
            self._out_of_time(texts, block_of, languages)
            raise

    def _identify_languages(self, block_texts: list[str]) -> list[Any]:
        """The page's language (``self.language``) and each block's (`language.identifier`)."""
        self.language, block_languages = identifier().identify_page(block_texts)
        return block_languages

    def _split(
        self, blocks: list[Block], block_texts: list[str], block_languages: list[Any]
    ) -> tuple[list[str], list[int], list[Any]]:
        """The page's sentences (`segment.split_blocks`), the block of each and its language."""
        texts, block_of = split_blocks(block_texts, _attributes(blocks, "index"))
        first = block_languages[0] if block_languages else None
        if block_languages.count(first) == len(block_languages):  # one language: most pages
            languages = [first] * len(block_of)
        else:
            languages = [block_languages[b] for b in block_of]
        return texts, block_of, languages

    def _label(
        self,
        blocks: list[Block],
        texts: list[str],
        block_of: list[int],
        *,
        scores: ScoreColumns,
        unscored: set[int],
        t: float,
        mode: str | None = None,
    ) -> tuple[list[bool] | None, float, float]:
        """Which blocks are content (None in perplexity mode) and the sentences' perplexity
        limit (`decide.sentence_limit`): the mode's labeller, the page's type, the multilingual
        labeller where it applies, the content-loss guard. Returns them with the time of the
        last lap. ``mode``: another mode's labeller and rules than the settings' (its bundled
        labeller, no site evidence): `article` takes `auto`'s on a likely thread
        (`guard.threads_as_auto`)."""
        settings = self.settings
        mode = mode or settings.mode
        if mode == "perplexity":
            self.block_kinds = tuple(block_kinds(blocks))
            return None, sentence_limit(settings), t
        own = mode == settings.mode
        labeller_path = self.labeller_path if own else None
        features_scores = scores
        if unscored:  # no model, no evidence either way: neutral perplexity features
            log_ppl = load_labeller(mode, labeller_path).unscored_log_ppl
            log10_probs, n_tokens, n_oovs = map(list, scores)
            for i in unscored:
                log10_probs[i], _, n_oovs[i] = unscored_score(n_tokens[i], log_ppl)
            features_scores = (log10_probs, n_tokens, n_oovs)
        read_blocks, read_texts = self._labellers_view(blocks, texts, mode)
        content, kinds, labeller, rows = label_blocks(
            read_blocks, read_texts, block_of, features_scores, mode=mode,
            labeller_path=labeller_path, site_evidence=self.site_evidence if own else None,
            deadline=self.deadline,
        )  # fmt: skip
        max_ppl = sentence_limit(settings, labeller.max_sentence_perplexity)
        self.block_kinds = tuple(kinds)
        t = self._lap("label", t)
        if self.html is not None and own:  # before the rules below: `drop_comments` reads it
            self._classify_page(read_blocks, rows)
            t = self._lap("page_type", t)
            if settings.content_guard and threads_as_auto(
                mode, self.page_type, self.page_type_confidence
            ):
                content, max_ppl, t = self._label(
                    blocks, texts, block_of, scores=scores, unscored=unscored, t=t, mode="auto"
                )
                self.guard = GuardReason.THREAD
                return content, max_ppl, t
        if mode == "auto":
            content = drop_comments(content, blocks, rows, self.page_type, self.forum_probability)
        if self._multilingual_applies(mode):
            content = self._multilingual_content(blocks, content)
        if settings.content_guard:
            main_in = labeller.main_in(rows)
            content, self.guard = guard_content(
                content, blocks, rows, main_in, self.forum_probability,
                posts=posts_in_comments(mode, self.forum_probability),
                mode=mode,
            )  # fmt: skip
            if joins_corpus(mode):
                corpus = load_labeller("corpus")
                content, joined = join_corpus(
                    content, blocks, rows, main_in, corpus, deadline=self.deadline, mode=mode
                )
                self.guard = joined or self.guard
            content, figures = keep_figures(content, blocks, rows, main_in)
            self.guard = figures or self.guard
        if mode == "auto":
            content = drop_repeats(keep_headings(content, blocks, rows), blocks)
            content = drop_calls_to_action(content, blocks, rows)
        if self.dialog_blocks:
            content = drop_dialogs(content, self.dialog_blocks)
        t = self._lap("label", t)  # the rules on the labeller's decision count as labelling
        check_deadline(self.deadline, "while labelling")
        return content, max_ppl, t

    def _decide(
        self,
        blocks: list[Block],
        texts: list[str],
        block_of: list[int],
        languages: list[Any],
        *,
        scores: ScoreColumns,
        unscored: set[int],
        content: list[bool] | None,
        max_ppl: float,
    ) -> None:
        """Every decision on the page's sentences (`decide.decide_page`, with the filters
        added to `filters.REGISTRY`), its sums and its kept text."""
        settings = self.settings
        columns, totals, dropped = decide_page(
            texts, block_of, scores, unscored=unscored, max_sentence_perplexity=max_ppl,
            max_sentence_tokens=settings.max_sentence_tokens,
            max_word_chars=settings.max_word_chars,
            content=content, template=self.template_blocks,
            sentence_reasons=REGISTRY.sentence_reasons(texts, settings),
            block_reasons=REGISTRY.block_reasons(blocks, settings),
            figures=content is not None,  # a kept table, price or score keeps its figures
        )  # fmt: skip
        log10_probs, n_tokens, n_oovs, perplexities, keeps, reasons = columns
        self.sentences = make_sentences(
            (texts, block_of, log10_probs, n_tokens, n_oovs, perplexities, keeps, reasons,
             languages)
        )  # fmt: skip
        self.totals = (*totals, dropped)
        self.block_texts = join_kept(texts, block_of, keeps)

    def _out_of_time(self, texts: list[str], block_of: list[int], languages: list[Any]) -> None:
        """Every sentence dropped as the page rule `filters.TimeBudget` says."""
        n = len(texts)
        self.sentences = make_sentences(
            (texts, block_of, [0.0] * n, [0] * n, [0] * n, [None] * n, [False] * n,
             [DropReason.TIME_BUDGET] * n, languages)
        )  # fmt: skip
        # their sums, which `result` need not count again past the deadline
        self.totals = (0.0, 0, 0.0, 0, {DropReason.TIME_BUDGET: n} if n else {})

    def _classify_page(self, blocks: list[Block], rows: np.ndarray) -> None:
        """Name the page's type (`page_types`) from the labeller's rows and the page's URL:
        the fetched one, else the one the page declares (canonical, og:url, base)."""
        assert self.html is not None
        url = self.raw.url or find_page_url(self.html, hosts=False)
        model = load_page_types(self.settings.page_type_model_path)
        probabilities = type_probabilities(
            blocks, rows, url, class_words=self.class_words, model=model
        )
        self.page_type, self.page_type_confidence = most_probable(probabilities)
        if probabilities is not None:
            self.forum_probability = float(probabilities[FORUM])

    def _labellers_view(
        self, blocks: list[Block], texts: list[str], mode: str
    ) -> tuple[list[Block], list[str]]:
        """The blocks and sentences the labeller and the page-type model read: on a page in a
        language written without spaces, in a mode of `PSEUDO_WORD_MODES`, with its runs of
        such scripts cut into pseudo-words (`language.pseudo_words`); else the page's own."""
        if mode not in PSEUDO_WORD_MODES or self.language.code not in UNSPACED_LANGUAGES:
            return blocks, texts
        read_blocks: list[Block] = []
        read_texts: list[str] = []
        for start in range(0, max(len(blocks), len(texts)), VIEW_SLICE):
            check_deadline(self.deadline, "while labelling")
            end = start + VIEW_SLICE
            cut = pseudo_words_many([b.text for b in blocks[start:end]])
            read_blocks += [
                b if text is b.text else b.with_text(text)
                for b, text in zip(blocks[start:end], cut, strict=True)
            ]
            read_texts += pseudo_words_many(texts[start:end])
        return read_blocks, read_texts

    def _multilingual_applies(self, mode: str) -> bool:
        """Whether the multilingual labeller has a say on this page's blocks, decided in
        ``mode`` (see ``settings.multilingual_labeller``): ``auto`` when no model scores the
        page's language, in corpus mode, and in auto mode for languages written without
        spaces between words (`language.UNSPACED_LANGUAGES`), whose words the auto labeller's
        features cannot count."""
        choice = self.settings.multilingual_labeller
        if choice != "auto":
            return choice == "on"
        code = self.language.code
        if code == UNKNOWN or code in self.models:
            return False
        return mode == "corpus" or (mode == "auto" and code in UNSPACED_LANGUAGES)

    def _multilingual_content(self, blocks: list[Block], content: list[bool]) -> list[bool]:
        """The blocks both the mode's labeller (``content``) and the multilingual labeller
        call content: on pages without a model, the pair beat either alone
        (bench/multilingual_pipeline.py)."""
        labeller = load_multilingual(self.settings.multilingual_labeller_path)
        found = labeller.predict(blocks, deadline=self.deadline)
        return [a and b for a, b in zip(content, found, strict=True)]

    def _score_sentences(
        self, texts: list[str], languages: list[str]
    ) -> tuple[ScoreColumns, set[int]]:
        """Each sentence's score by the model of its language, as columns (`lm.ScoreColumns`),
        and the positions of the sentences whose language has no model (scored
        ``(0.0, tokens, 0)``). A page of more than `SCORE_SLICE_CHARS` characters is scored in
        slices of sentences (`_slices`: text with ideographs counts more), the deadline looked
        at between them."""
        ranges = _slices(texts, SCORE_SLICE_CHARS)
        if len(ranges) == 1:
            return self._score_slice(texts, languages)
        log10_probs: list[float] = []
        n_tokens: list[int] = []
        n_oovs: list[int] = []
        unscored: set[int] = set()
        for start, end in ranges:
            check_deadline(self.deadline, "while scoring")
            (lps, ns, oovs), found = self._score_slice(texts[start:end], languages[start:end])
            log10_probs += lps
            n_tokens += ns
            n_oovs += oovs
            unscored.update(start + i for i in found)
        return (log10_probs, n_tokens, n_oovs), unscored

    def _score_slice(self, texts: list[str], languages: list[str]) -> tuple[ScoreColumns, set[int]]:
        """`_score_sentences` of some of the page's sentences, at once."""
        models, default = self.models, self.model
        routes = {
            code: models.get(code, default if code == UNKNOWN else None) for code in set(languages)
        }
        if all(m is default for m in routes.values()):  # the common case: one model
            return default.score_columns(texts), set()
        scores: list[SentenceScore] = [None] * len(texts)  # type: ignore[list-item]
        unscored: set[int] = set()
        by_model: dict[LanguageModel | None, list[int]] = {}
        for i, code in enumerate(languages):
            by_model.setdefault(routes[code], []).append(i)
        for model, indexes in by_model.items():
            part = [texts[i] for i in indexes]
            if model is None:
                unscored.update(indexes)
                found = [
                    SentenceScore(0.0, len(n.split()), 0) for n in normalize_many(part)
                ]  # fmt: skip
            else:
                found = model.score_texts(part)
            for i, score in zip(indexes, found, strict=True):
                scores[i] = score
        return score_columns(scores), unscored

    def result(self) -> CleanedDocument:
        if self.totals is not None and self.error in (None, ErrorReason.TIME_BUDGET):
            total_lp, total_n, kept_lp, kept_n, dropped = self.totals
        else:
            total_lp = kept_lp = 0.0
            total_n = kept_n = 0
            dropped = Counter()
            for s in self.sentences:
                if s.perplexity is not None:
                    total_lp += s.log10_prob
                    total_n += s.n_tokens + 1
                    if s.keep:
                        kept_lp += s.log10_prob
                        kept_n += s.n_tokens + 1
                if not s.keep:
                    dropped[s.reason or "unknown"] += 1
        self.seconds["total"] = time.perf_counter() - self.started
        return CleanedDocument(
            id=self.raw.id,
            url=self.raw.url,
            text="\n".join(self.block_texts),
            sentences=tuple(self.sentences),
            perplexity=10.0 ** (-total_lp / total_n) if total_n else None,
            kept_perplexity=10.0 ** (-kept_lp / kept_n) if kept_n else None,
            dropped=dict(dropped),
            n_blocks=self.n_blocks,
            encoding=self.encoding,
            model_id=self.models.get(self.language.code, self.model).id,
            seconds=self.seconds,
            error=self.error,
            error_detail=self.error_detail,
            block_kinds=self.block_kinds,
            language=self.language,
            title=self.title,
            guard=self.guard,
            page_type=self.page_type if self.error is None else "",
            page_type_confidence=self.page_type_confidence if self.error is None else 0.0,
        )


_SENTENCE_FIELDS = tuple(field.name for field in dataclasses.fields(ScoredSentence))
# Characters of sentences scored between two looks at the deadline, a character of a text
# with ideographs counting `IDEOGRAPH_COST` times: 64,000 characters of a language without a
# model are normalised by regex (to count their tokens) in 2.7 ms (Russian) to 6.9 (Thai); in
# Japanese 34 ms when this was chosen, an ideograph at a time, 11 ms since `lm` spaces a run
# of them at once (so a slice of ideographs now takes 1.5 ms, and a smaller cost would do);
# English, scored natively, takes 2-3 ms. Slicing changes no score, but it is not free:
# at 8,192 characters of any text (1,630 slices for CleanEval test's 684 pages, 696 now)
# `auto` took 4-5 % more CPU a page (bench/core_ab.py, both orders, 2026-11-30).
SCORE_SLICE_CHARS = 1 << 16
IDEOGRAPH_COST = 8
# from the CJK radicals up: the scripts whose every character the regex makes a token
_IDEOGRAPH_BOUNDS = array.array("I", [0x2E80, 0x10FFFF])
_IDEOGRAPHS = re.compile(f"[{chr(_IDEOGRAPH_BOUNDS[0])}-{chr(_IDEOGRAPH_BOUNDS[1])}]")
# Blocks and sentences `_labellers_view` cuts into pseudo-words between two looks at the
# deadline: a 20,000-block Chinese page took 38 ms cut in one go, more than a tenth of a
# quarter of its budget (tests/test_budget.py), about 4 ms a slice
VIEW_SLICE = 2048


def _slices(texts: list[str], max_chars: int) -> list[tuple[int, int]]:
    """Consecutive ranges ``(start, end)`` of ``texts`` that cover them all, each of at most
    ``max_chars`` characters (or of one longer text), where each character of a text with a
    code point from U+2E80 up (`_IDEOGRAPHS`) counts `IDEOGRAPH_COST` times."""
    n = len(texts)
    chars = sum(map(len, texts))  # most pages: C loops, no list
    if chars * IDEOGRAPH_COST <= max_chars:
        return [(0, n)]
    fast = native_module("text_features")
    if fast is not None:
        slow = fast.with_code_points(texts, 1, _IDEOGRAPH_BOUNDS)
    else:
        slow = [i for i, text in enumerate(texts) if _IDEOGRAPHS.search(text)]
    if not slow and chars <= max_chars:
        return [(0, n)]
    lengths = list(map(len, texts))
    for i in slow:
        lengths[i] *= IDEOGRAPH_COST
    ends = list(itertools.accumulate(lengths))
    ranges = []
    start = 0
    while start < n:
        before = ends[start - 1] if start else 0
        end = max(bisect.bisect_right(ends, before + max_chars, start), start + 1)
        ranges.append((start, end))
        start = end
    return ranges


def make_sentences(columns: Sequence[Sequence[Any]]) -> list[ScoredSentence]:
    """``list(map(ScoredSentence, *columns))``, the columns in field order; natively (the
    instances' slots written directly, which is all the dataclass's ``__init__`` does) when
    built."""
    fast = native_module("sentences")
    if fast is not None:
        return fast.make_records(ScoredSentence, _SENTENCE_FIELDS, list(columns))
    return list(map(ScoredSentence, *columns))


def _attributes(objects: list[Any], name: str) -> list[Any]:
    """``list(map(operator.attrgetter(name), objects))``; natively (slots read directly)
    when built."""
    fast = native_module("text_features")
    if fast is not None:
        return fast.attributes(objects, name)
    return list(map(operator.attrgetter(name), objects))


def _without_lone_surrogates(text: str) -> tuple[str, bytes]:
    """A text body and its UTF-8, less any lone surrogate (``"\\udc9f"``: what
    ``errors="surrogateescape"`` makes of a byte that is not UTF-8). No surrogate can be written
    as UTF-8, so none may reach the output records; lexbor's input drops them the same way.
    """
    try:
        return text, text.encode("utf-8")
    except UnicodeEncodeError:
        utf8 = text.encode("utf-8", "ignore")
        return utf8.decode("utf-8"), utf8


def _not_a_page(raw: RawDocument) -> str | None:
    """Why a fetch is no page to clean, from what the crawler says of it, or ``None``: a
    status other than 2xx (a redirect or an error page is not the page its URL names) or a
    Content-Type that `is_page_type` refuses (style sheets, scripts, images, JSON...)."""
    if raw.status is not None and not 200 <= raw.status < 300:
        return f"HTTP status {raw.status}: not the page its URL names"
    content_type = raw.content_type
    if content_type is None and raw.headers:
        content_type = content_type_from_headers(raw.headers)
    if content_type is not None and not is_page_type(content_type):
        media = content_type.split(";", 1)[0].strip()
        return f"Content-Type {media[:100]}: a style sheet, script, image or data, not a page"
    return None


def _is_plain_text(raw: RawDocument, text: str) -> bool:
    content_type = (raw.content_type or "").lower()
    if content_type.startswith("text/plain"):
        return True
    return not looks_like_html(text)
