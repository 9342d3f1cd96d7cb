"""Loaders for the benchmark page sets that ``bench/setup-data.sh`` unpacks into ``.cache/data``.

Every loader returns :class:`Page` records holding the page exactly as the bytes a crawler would
have fetched (``raw``), so that stream-cleaner can be timed on its own decoding; the peers get
text made by :func:`decode_for_peers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stream_cleaner.evaluate import Page, dragnet_split, read_cleaneval, read_pages

__all__ = ["CLEANEVAL_SPLITS", "DATA_DIR", "Page", "decode_for_peers", "load_cleaneval",
           "load_dragnet", "load_page_set", "new_site_test_pages"]  # fmt: skip

DATA_DIR = Path(__file__).resolve().parent.parent / ".cache" / "data"
"""Where ``bench/setup-data.sh`` unpacks the page sets."""

CLEANEVAL_SPLITS = ("dev", "test")


def decode_for_peers(raw: bytes) -> str:
    """Decode page bytes the way a typical user hands text to a peer extractor.

    Args:
        raw: the page as fetched.

    Returns:
        The text decoded as UTF-8 (a leading BOM dropped), or as cp1252 when that fails.
    """
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        # cp1252 leaves five bytes undefined; a user would not want those to crash the run.
        return raw.decode("cp1252", errors="replace")


def load_cleaneval(split: str, *, root: Path = DATA_DIR, limit: int | None = None) -> list[Page]:
    """Load one CleanEval split, in page-number order (``stream_cleaner.evaluate`` reads it).

    The HTML files are wrapped in ``<text id="URL" title=".." encoding="..">`` ... ``</text>``;
    the wrapper is cut from the bytes and the URL is taken from its ``id``.

    Args:
        split: ``"dev"`` or ``"test"``.
        root: the directory holding the unpacked sets.
        limit: only the first N pages.

    Returns:
        The split's pages, with gold text where a gold file exists.

    Raises:
        ValueError: for an unknown split.
        FileNotFoundError: when the set has not been unpacked.
    """
    if split not in CLEANEVAL_SPLITS:
        raise ValueError(f"unknown CleanEval split {split!r}; expected one of {CLEANEVAL_SPLITS}")
    return read_cleaneval(_require_dir(root / "cleaneval" / split), limit=limit)


def load_dragnet(
    *, root: Path = DATA_DIR, split: str = "all", limit: int | None = None
) -> list[Page]:
    """Load the Dragnet page set, in name order.

    Args:
        root: the directory holding the unpacked sets.
        split: ``"all"``, or ``"train"``/``"test"`` of the fixed split
            (``stream_cleaner.evaluate.dragnet_split``).
        limit: only the first N pages (of the split).

    Returns:
        The pages (Dragnet records no URL), with gold text where a gold file exists.

    Raises:
        FileNotFoundError: when the set has not been unpacked.
    """
    return read_pages(_require_dir(root / "dragnet"), layout="generic", split=split, limit=limit)


def load_page_set(
    folder: Path | str, *, root: Path = DATA_DIR, limit: int | None = None
) -> list[Page]:
    """Load a page set in the generic layout: ``html/NAME.html``, ``gold/NAME.txt`` and, when
    there is one, ``checks.json`` (page types and snippets; ``stream_cleaner.evaluate``).

    Args:
        folder: the set's folder, relative to ``root`` (``"modern2026"``) or absolute.
        root: the directory holding the unpacked sets.
        limit: only the first N pages, in name order.

    Raises:
        FileNotFoundError: when the set has not been unpacked.
    """
    return read_pages(_require_dir(root / folder), layout="auto", limit=limit)


def _require_dir(path: Path) -> Path:
    """Return ``path``, or fail with the command that creates it."""
    if not (path / "html").is_dir():
        raise FileNotFoundError(f"{path} not found; run `bash bench/setup-data.sh` first")
    return path


def new_site_test_pages(pages: Sequence[Page]) -> list[Page]:
    """The Dragnet test-split pages of sites that have no page in the train split.

    Three test pages in four come from a site the article labeller saw in training (several
    sites have ten or more pages); these are the others, the nearest thing here to a page from
    a site nobody trained on. A page's site is the one it declares (canonical link, ``og:url``:
    `stream_cleaner.sites.find_page_url`), as Dragnet records no URL.

    Args:
        pages: Dragnet pages, both splits (a subset gives the pages of its test split whose
            site has no train page in the subset).
    """
    from stream_cleaner.decode import decode_body
    from stream_cleaner.sites import find_page_url, site_of

    site = {p.name: site_of(find_page_url(decode_body(p.raw).text)) for p in pages}
    trained = {site[p.name] for p in pages if dragnet_split(p.name) == "train"}
    return [
        p
        for p in pages
        if dragnet_split(p.name) == "test" and site[p.name] and site[p.name] not in trained
    ]
