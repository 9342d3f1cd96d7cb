"""Adapters that run the peer extractors the same way: page text in, plain text out.

Each adapter takes the page HTML as ``str`` (already decoded, see ``data.decode_for_peers``) and
returns the extracted text. An adapter never raises: a peer's exception becomes ``""`` and is
counted in :data:`FAILURES` under the peer's name, so a benchmark can report it.

The peers are bench-only dependencies (``bench/requirements.txt``), imported inside the adapters
so that a missing one costs only its own row; :func:`check_peer_import` tells ahead of a run.
"""

from __future__ import annotations

import functools
import importlib
import logging
from collections import Counter
from collections.abc import Callable

logger = logging.getLogger(__name__)

Adapter = Callable[[str], str]

FAILURES: Counter[str] = Counter()
"""Exceptions swallowed so far, by peer name."""

PEER_MODULES: dict[str, tuple[str, ...]] = {
    "trafilatura": ("trafilatura",),
    "trafilatura-precision": ("trafilatura",),
    "justext": ("justext",),
    "resiliparse": ("resiliparse.parse.html", "resiliparse.extract.html2text"),
    "boilerpy3": ("boilerpy3.extractors",),
    "readability": ("readability", "lxml.html"),
}
"""The modules each adapter imports, checked by :func:`check_peer_import`."""

PEER_DISTRIBUTIONS: dict[str, str] = {
    "trafilatura": "trafilatura",
    "trafilatura-precision": "trafilatura",
    "justext": "jusText",
    "resiliparse": "Resiliparse",
    "boilerpy3": "boilerpy3",
    "readability": "readability-lxml",
}
"""The installed distribution behind each adapter, for reporting its version."""


def _fail_soft(name: str) -> Callable[[Adapter], Adapter]:
    """Make an adapter return ``""`` instead of raising, counting the failure under ``name``."""

    def decorate(extract: Adapter) -> Adapter:
        @functools.wraps(extract)
        def adapter(html: str) -> str:
            try:
                return extract(html)
            except Exception as exc:  # any peer error is one counted failure, whatever its type
                FAILURES[name] += 1
                logger.debug("%s failed: %s: %s", name, type(exc).__name__, exc)
                return ""

        return adapter

    return decorate


@_fail_soft("trafilatura")
def extract_trafilatura(html: str) -> str:
    """Extract with trafilatura's defaults (``trafilatura.extract``)."""
    from trafilatura import extract

    return extract(html) or ""


@_fail_soft("trafilatura-precision")
def extract_trafilatura_precision(html: str) -> str:
    """Extract with trafilatura favouring precision over recall."""
    from trafilatura import extract

    return extract(html, favor_precision=True) or ""


@functools.cache
def _english_stoplist() -> frozenset[str]:
    """jusText's English stoplist, read from its package data once rather than per page."""
    import justext

    return justext.get_stoplist("English")


@_fail_soft("justext")
def extract_justext(html: str) -> str:
    """Extract with jusText's defaults and English stoplist: non-boilerplate paragraphs."""
    import justext

    paragraphs = justext.justext(html, _english_stoplist())
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


@_fail_soft("resiliparse")
def extract_resiliparse(html: str) -> str:
    """Extract with Resiliparse's main-content heuristics."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    return extract_plain_text(HTMLTree.parse(html), main_content=True)


@functools.cache
def _boilerpy3_article_extractor() -> object:
    """One boilerpy3 ArticleExtractor, reused: it keeps no state between pages."""
    from boilerpy3.extractors import ArticleExtractor

    return ArticleExtractor()


@_fail_soft("boilerpy3")
def extract_boilerpy3(html: str) -> str:
    """Extract with boilerpy3's ArticleExtractor (a port of Boilerpipe)."""
    return _boilerpy3_article_extractor().get_content(html)


@_fail_soft("readability")
def extract_readability(html: str) -> str:
    """Extract with readability-lxml, then strip the summary's tags with lxml."""
    import lxml.html
    from readability import Document

    summary = Document(html).summary()
    if not summary.strip():
        return ""
    return lxml.html.fromstring(summary).text_content()


PEERS: dict[str, Adapter] = {
    "trafilatura": extract_trafilatura,
    "trafilatura-precision": extract_trafilatura_precision,
    "justext": extract_justext,
    "resiliparse": extract_resiliparse,
    "boilerpy3": extract_boilerpy3,
    "readability": extract_readability,
}


def check_peer_import(name: str) -> str | None:
    """Import the modules a peer's adapter needs.

    Args:
        name: a key of :data:`PEERS`.

    Returns:
        ``None`` when every module imports, else a one-line reason naming the fix.
    """
    for module in PEER_MODULES[name]:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            return f"cannot import {module} ({exc}); run `bash bench/setup-env.sh`"
    return None


def peer_version(name: str) -> str | None:
    """The installed version of the distribution behind a peer, ``None`` when not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PEER_DISTRIBUTIONS[name])
    except PackageNotFoundError:
        return None
