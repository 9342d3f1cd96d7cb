"""Loaders for the benchmark page sets that ``bench/setup-data.sh`` unpacks into ``.cache/data``.

Every loader returns :class:`Page` records holding the page exactly as the bytes a crawler would
have fetched (``raw``), so that stream-cleaner can be timed on its own decoding; the peers get
text made by :func:`decode_for_peers`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent.parent / ".cache" / "data"
"""Where ``bench/setup-data.sh`` unpacks the page sets."""

CLEANEVAL_SPLITS = ("dev", "test")

_CLEANEVAL_HEADER = re.compile(rb"^<text\b[^\n]*>\r?\n")
_CLEANEVAL_ID = re.compile(rb'\bid="([^"]*)"')
_CLEANEVAL_FOOTER = re.compile(rb"</text>\s*\Z")
_GOLD_URL_LINE = re.compile(r"\AURL: *\S*[^\n]*\n")


@dataclass(frozen=True, slots=True)
class Page:
    """One benchmark page.

    Attributes:
        name: the file's stem (``"100"`` for ``100.html``), unique within its set.
        url: the page's URL when the set records it, else ``""``.
        raw: the page's bytes, in whatever encoding it was served in.
        gold: the hand-cleaned text, line endings normalised to ``\\n``; ``None`` when the set
            has no gold file for the page. CleanEval gold keeps its ``<p>``/``<h>``/``<l>``
            markers but loses its leading ``URL:`` line, which is not page text.
    """

    name: str
    url: str
    raw: bytes
    gold: str | None


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


def load_cleaneval(split: str, *, root: Path = DATA_DIR) -> list[Page]:
    """Load one CleanEval split, in page-number order.

    The HTML files are wrapped in ``<text id="URL" title=".." encoding="..">`` ... ``</text>``;
    the wrapper is cut from the bytes and the URL is taken from its ``id``.

    Args:
        split: ``"dev"`` or ``"test"``.
        root: the directory holding the unpacked sets.

    Returns:
        The split's pages, with gold text where a gold file exists.

    Raises:
        ValueError: for an unknown split.
        FileNotFoundError: when the set has not been unpacked.
    """
    if split not in CLEANEVAL_SPLITS:
        raise ValueError(f"unknown CleanEval split {split!r}; expected one of {CLEANEVAL_SPLITS}")
    base = root / "cleaneval" / split
    pages = []
    for path in _sorted_pages(_require_dir(base / "html").glob("*.html")):
        url, raw = _unwrap_cleaneval(path.read_bytes())
        gold = _read_gold(base / "gold" / f"{path.stem}.txt")
        if gold is not None:
            gold = _GOLD_URL_LINE.sub("", gold, count=1)
        pages.append(Page(name=path.stem, url=url, raw=raw, gold=gold))
    return pages


def load_dragnet(*, root: Path = DATA_DIR) -> list[Page]:
    """Load the Dragnet page set, in name order.

    Args:
        root: the directory holding the unpacked sets.

    Returns:
        The pages (Dragnet records no URL), with gold text where a gold file exists.

    Raises:
        FileNotFoundError: when the set has not been unpacked.
    """
    base = root / "dragnet"
    return [
        Page(
            name=path.stem,
            url="",
            raw=path.read_bytes(),
            gold=_read_gold(base / "gold" / f"{path.stem}.txt"),
        )
        for path in _sorted_pages(_require_dir(base / "html").glob("*.html"))
    ]


def _unwrap_cleaneval(data: bytes) -> tuple[str, bytes]:
    """Split a CleanEval file into the URL from its wrapper and the page bytes inside it."""
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


def _read_gold(path: Path) -> str | None:
    """Read a gold text file of unknown encoding; ``None`` when it does not exist."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16")
    else:
        text = decode_for_peers(data)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _require_dir(path: Path) -> Path:
    """Return ``path``, or fail with the command that creates it."""
    if not path.is_dir():
        raise FileNotFoundError(f"{path} not found; run `bash bench/setup-data.sh` first")
    return path


def _sorted_pages(paths: Iterable[Path]) -> list[Path]:
    """Sort page files numerically where names are numbers (``2`` before ``10``), else by name."""
    return sorted(paths, key=lambda p: (0, int(p.stem), "") if p.stem.isdigit() else (1, 0, p.stem))
