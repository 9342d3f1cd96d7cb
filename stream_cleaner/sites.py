"""Site-level template detection (Yi & Liu, 2003): blocks that repeat across a site's pages.

Pages of one site share a template: navigation, ads, footers and legal lines appear with the
same presentation on page after page, while the article changes. For each site this module
keeps the block signatures of its last ``window_pages`` pages and tells, for a block of a new
page, how "templatey" it is:

- ``share``: the fraction of the site's recent pages that carry the block's signature (its tag
  path, our stand-in for Yi & Liu's presentation style, plus a hash of its normalised text);
- ``path_entropy``: in the spirit of their NodeImp, the entropy of the texts found under the
  block's tag path across those pages, normalised to [0, 1]. A path that always holds the same
  text (a menu) scores near 0; one whose text changes with every page (the article body) near
  1.

The direct rule drops a block whose share reaches ``min_share`` once the site has at least
``min_pages`` pages; the block labeller can use both numbers as features.

State is bounded: at most ``max_sites`` sites (least recently seen evicted first), each with a
ring of ``window_pages`` pages of at most ``max_blocks_per_page`` signatures. A page's
signatures pack into a few hundred bytes (`pack_signatures`), which is how the streaming worker
stores them in its changelog-backed table.
"""

from __future__ import annotations

import math
import re
import zlib
from array import array
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from urllib.parse import urlsplit

from ._native import native_module
from .document import Block

SITE_KEYS = ("host", "domain")

# Second-level labels under which registrations sit one level deeper (example.co.uk). A small
# offline list, not the Public Suffix List: `host` keying needs none of it.
_SECOND_LEVEL = frozenset("co com net org gov ac edu ne or go mil gob nic".split())


@dataclass(frozen=True, slots=True)
class SiteSettings:
    """Options of site-level template detection.

    Attributes:
        site_key: ``host`` (``news.example.com``) or ``domain`` (``example.com``).
        window_pages: how many recent pages of a site are remembered.
        min_pages: the rule applies only once a site has this many pages.
        min_share: a block seen on at least this fraction of the remembered pages is template.
        max_sites: sites tracked at once; the least recently seen is forgotten first.
        max_blocks_per_page: signatures kept per page (the first ones in reading order).
        path_entropy: also keep what `SiteStats.path_entropy` needs (a feature of the
            labellers trained with site evidence; the direct rule does without).
        rule_with_labeller: apply the direct rule also where a labeller that reads site
            evidence decides (by default it weighs the evidence itself).
    """

    site_key: str = "host"
    window_pages: int = 30
    min_pages: int = 5
    min_share: float = 0.5
    max_sites: int = 10_000
    max_blocks_per_page: int = 400
    path_entropy: bool = True
    rule_with_labeller: bool = False

    def __post_init__(self) -> None:
        if self.site_key not in SITE_KEYS:
            raise ValueError(f"site_key must be one of {SITE_KEYS}, not {self.site_key!r}")
        if not 0 < self.min_share <= 1:
            raise ValueError("min_share must be in (0, 1]")
        if self.window_pages < 1 or self.min_pages < 1 or self.max_sites < 1:
            raise ValueError("window_pages, min_pages and max_sites must be at least 1")
        if self.min_pages > self.window_pages:
            raise ValueError("min_pages cannot exceed window_pages")


def site_of(url: str, *, key: str = "host") -> str:
    """The site a URL belongs to: its host without ``www.``, or its registered domain.

    Returns:
        ``""`` when the URL has no host.
    """
    try:
        host = (urlsplit(url.strip()).hostname or "").rstrip(".")
    except ValueError:
        return ""
    if host.startswith("www."):
        host = host[4:]
    if key == "domain" and not host.replace(".", "").isdigit():
        labels = host.split(".")
        keep = 3 if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2 else 2
        host = ".".join(labels[-keep:])
    return host


# The tag path under which a page's identity is stored among its block signatures: CRC-32 of
# a path no parser writes, so no block's signature shares it.
_PAGE_PATH = zlib.crc32(b"\x00page") << 32


def page_identity(url: str | None) -> int | None:
    """A page's identity among its site's pages: its URL (host without ``www.``, path and
    query; not the scheme or the fragment) hashed under a tag path of its own, so that it can
    be stored with the page's block signatures. ``None`` without a usable URL.

    A site's statistics count pages, not fetches: a page crawled again, or replayed after a
    worker's crash, replaces its earlier version instead of counting as one more page that
    carries the same blocks (which made its own text look like template). The URL must be the
    one the page was fetched from: the URL a page declares (`find_page_url`) is often the
    site's home page on every page (143 of Dragnet's 1,380 pages share one with another).
    """
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").rstrip(".")
    except ValueError:
        return None
    if not host:
        return None
    host = host.removeprefix("www.")
    key = f"{host}{parts.path or '/'}?{parts.query}".encode("utf-8", "surrogatepass")
    return _PAGE_PATH | zlib.crc32(key)


# Whole tags first, then what names them in each: a tag's attributes end at the next "<" too,
# and nothing backtracks ("<link " repeated with no ">", or one tag of "rel=canonical "
# repeated, made the searches quadratic).
_URL_TAG_NAMES = ("link", "meta", "base")
_LINK, _META, _BASE = range(len(_URL_TAG_NAMES))
_URL_TAG = re.compile(
    "<(?:" + "|".join(f"({name})" for name in _URL_TAG_NAMES) + r")\b[^<>]*+>", re.IGNORECASE
)
_IS_CANONICAL = re.compile(r"\brel\s*+=\s*+[\"']?canonical\b", re.IGNORECASE)
_IS_OG_URL = re.compile(r"\bproperty\s*+=\s*+[\"']og:url[\"']", re.IGNORECASE)
# what a tag of each kind must hold for the two above to find it (natively, the tags without
# it are passed over: a page's head has dozens of other links and metas)
_URL_TAG_NEEDLES = ("canonical", "og:url", "")
_HREF = re.compile(r"\bhref\s*=\s*[\"']?(https?://[^\"'\s>]+)", re.IGNORECASE)
_CONTENT = re.compile(r"\bcontent\s*=\s*[\"']?(https?://[^\"'\s>]+)", re.IGNORECASE)
_LINK_HOST = re.compile(r"\b(?:href|src|action)\s*=\s*[\"']?https?://([\w.-]+)", re.IGNORECASE)
# where a page's URL is looked for: its first 256 KiB
_URL_SEARCH_CHARS = 262144


def find_page_url(html: str, *, hosts: bool = True) -> str:
    """The page's own URL as it declares it, for pages that arrive without one.

    Looks at the first ``<link rel=canonical>``, else the first ``<meta property=og:url>``,
    else the first ``<base href>`` (each only if its URL is absolute), then (with ``hosts``)
    falls back to ``http://HOST/`` for the host most of the page's absolute links, images and
    forms point to. Only the first 256 KiB are searched, in one pass that stops at the first
    canonical link.

    Returns:
        A URL, or ``""`` when the page names no host at all (without ``hosts``: declares no
        URL).
    """
    first: dict[int, str] = {}  # the first tag of each kind that names the page's URL
    for kind, tag in _url_tags(html):
        if kind in first:
            continue
        if kind == _LINK and _IS_CANONICAL.search(tag) is not None:
            first[kind] = tag
            value = _HREF.search(tag)
            if value is not None:
                return value.group(1)  # nothing later comes before a canonical link
        elif (kind == _META and _IS_OG_URL.search(tag) is not None) or kind == _BASE:
            first[kind] = tag
    for kind, value_pattern in ((_META, _CONTENT), (_BASE, _HREF)):
        value = value_pattern.search(first[kind]) if kind in first else None
        if value is not None:
            return value.group(1)
    if not hosts:
        return ""
    found_hosts: dict[str, int] = {}
    for found in _LINK_HOST.findall(html[:_URL_SEARCH_CHARS]):
        host = found.lower()
        found_hosts[host] = found_hosts.get(host, 0) + 1
    if not found_hosts:
        return ""
    return f"http://{max(found_hosts, key=found_hosts.__getitem__)}/"


def _url_tags(html: str) -> Iterator[tuple[int, str]]:
    """The ``link``, ``meta`` and ``base`` tags of the page's first 256 KiB, in order: each as
    its kind (`_URL_TAG_NAMES`) and text (`_URL_TAG` is the reference). Natively, only those
    that hold their kind's `_URL_TAG_NEEDLES`: the others name no URL `find_page_url` reads."""
    fast = native_module("signatures")
    at = 0
    while True:
        if fast is not None:
            found = fast.next_tag(
                html, _URL_TAG_NAMES, at, _URL_SEARCH_CHARS, _URL_TAG_NEEDLES
            )  # fmt: skip
            if found is None:
                return
            start, at, kind = found
        else:
            match = _URL_TAG.search(html, at, _URL_SEARCH_CHARS)
            if match is None:
                return
            (start, at), kind = match.span(), match.lastindex - 1
        yield kind, html[start:at]


_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")


def block_signatures(blocks: Sequence[Block], *, limit: int | None = None) -> list[int]:
    """One 64-bit signature per block: its tag path's CRC-32 above its normalised text's.

    Text is lower-cased and every run of digits becomes ``0`` (dates, counters and prices
    change between pages of one template); the first 200 characters count. CRC-32, not ``hash()``:
    signatures must be the same in every process, and across restarts.
    """
    fast = native_module("signatures")
    if fast is not None:
        return fast.block_signatures(blocks, -1 if limit is None else limit)
    crc32 = zlib.crc32
    path_hashes: dict[str, int] = {}
    signatures = []
    for block in blocks[:limit] if limit is not None else blocks:
        path_hash = path_hashes.get(block.tag_path)
        if path_hash is None:
            path_hash = path_hashes[block.tag_path] = crc32(block.tag_path.encode()) << 32
        text = block.text[:200].lower().encode("utf-8", "surrogatepass").translate(_DIGITS_TO_ZERO)
        while b"00" in text:
            text = text.replace(b"00", b"0")
        signatures.append(path_hash | crc32(text))
    return signatures


def pack_signatures(signatures: Iterable[int]) -> bytes:
    """Signatures as little-endian uint64s (8 bytes each), for storage."""
    packed = array("Q", signatures)
    if packed.itemsize != 8:  # pragma: no cover - every platform CPython runs on has 8
        raise RuntimeError("array('Q') is not 64-bit here")
    return packed.tobytes()


def unpack_signatures(data: bytes) -> list[int]:
    return array("Q", data).tolist()


@dataclass(frozen=True, slots=True)
class BlockEvidence:
    """What a site's history says about one block."""

    share: float  # fraction of the site's remembered pages carrying this block's signature
    path_entropy: float  # 0: the path always holds the same text; 1: always a new one
    site_pages: int  # how many pages of the site are remembered


@dataclass(frozen=True, slots=True)
class PageEvidence:
    """`BlockEvidence` of every block of a page, as columns (what the labeller reads)."""

    share: list[float]
    path_entropy: list[float]
    site_pages: int

    @classmethod
    def none(cls, n_blocks: int) -> PageEvidence:
        """The evidence of a page of a site never seen."""
        return cls([0.0] * n_blocks, [1.0] * n_blocks, 0)


class SiteStats:
    """One site's last ``window`` pages: a ring of signature sets and their counts.

    With ``entropy`` on, per tag path it also keeps the number of (page, text) occurrences
    ``T`` and the sum of ``c log c`` over its texts' counts ``S``, updated as pages come and
    go, so a path's text entropy ``log T - S / T`` costs O(1) to read. The direct rule needs
    only the counts, and the bookkeeping doubles the cost of adding a page, so it is off by
    default.
    """

    __slots__ = (
        "_counts", "_n_discounted", "_path_texts", "_path_totals", "entropy", "pages", "window"
    )  # fmt: skip

    def __init__(self, window: int, *, entropy: bool = False) -> None:
        self.window = window
        self.entropy = entropy
        self.pages: deque[tuple[int, ...]] = deque()  # oldest first
        self._counts: dict[int, int] = {}
        self._path_texts: dict[int, dict[int, int]] = {}
        self._path_totals: dict[int, list[float]] = {}  # path -> [T, S]
        self._n_discounted = 0  # pages taken out of the counts for a while (`evidence_of_others`)

    def __len__(self) -> int:
        return len(self.pages) - self._n_discounted

    @property
    def n_signatures(self) -> int:
        return len(self._counts)

    def count(self, signature: int) -> int:
        """On how many of the remembered pages the signature appears."""
        return self._counts.get(signature, 0)

    def add_page(self, signatures: Iterable[int], identity: int | None = None) -> None:
        """Remember one page (each signature counts once per page); forget the oldest.

        With ``identity`` (`page_identity`), stored first among the page's signatures, an
        earlier page of the same identity is forgotten first: the new one replaces it.
        """
        if identity is not None:
            self.remove_page(identity)
            page = tuple(dict.fromkeys((identity, *signatures)))
        else:
            page = tuple(dict.fromkeys(signatures))
        self.pages.append(page)
        self._count(page, +1)
        while len(self.pages) > self.window:
            self._count(self.pages.popleft(), -1)

    def find_page(self, identity: int) -> tuple[int, ...] | None:
        """The remembered page stored with this identity, if any."""
        for page in self.pages:
            if page and page[0] == identity:
                return page
        return None

    def remove_page(self, identity: int) -> bool:
        """Forget the page stored with this identity; whether there was one."""
        page = self.find_page(identity)
        if page is None:
            return False
        self.pages.remove(page)
        self._count(page, -1)
        return True

    def _count(self, page: tuple[int, ...], step: int) -> None:
        """Add (``step`` 1) or take away (-1) a page's signatures from the counts."""
        counts = self._counts
        for signature in page:
            left = counts.get(signature, 0) + step
            if left:
                counts[signature] = left
            else:
                del counts[signature]
        if not self.entropy:
            return
        path_texts, path_totals = self._path_texts, self._path_totals
        for signature in page:  # `_change_text`, inlined: it runs for every block
            path = signature >> 32
            text = signature & 0xFFFFFFFF
            texts = path_texts.get(path)
            if texts is None:
                texts = path_texts[path] = {}
                totals = path_totals[path] = [0.0, 0.0]
            else:
                totals = path_totals[path]
            before = texts.get(text, 0)
            after = before + step
            if after:
                texts[text] = after
            else:
                del texts[text]
            totals[0] += step
            totals[1] += _c_log_c(after) - _c_log_c(before)
            if not texts:
                del path_texts[path], path_totals[path]

    def evidence(self, signatures: Sequence[int]) -> list[BlockEvidence]:
        """The evidence on each of a page's blocks (the page itself not yet added)."""
        page = self.page_evidence(signatures, len(signatures))
        return list(
            map(BlockEvidence, page.share, page.path_entropy, [page.site_pages] * len(signatures))
        )

    def page_evidence(self, signatures: Sequence[int], n_blocks: int) -> PageEvidence:
        """`evidence` for a whole page at once, as columns; blocks past the signatures (the
        cap per page) get share 0 and entropy 1."""
        n_pages = len(self)
        get = self._counts.get
        share = [get(signature, 0) / n_pages for signature in signatures] if n_pages else (
            [0.0] * len(signatures)
        )  # fmt: skip
        if self.entropy:
            by_path: dict[int, float] = {}
            entropy = []
            for signature in signatures:
                path = signature >> 32
                value = by_path.get(path)
                if value is None:
                    value = by_path[path] = self.path_entropy(path)
                entropy.append(value)
        else:
            entropy = [1.0] * len(signatures)
        missing = n_blocks - len(signatures)
        if missing > 0:
            share += [0.0] * missing
            entropy += [1.0] * missing
        return PageEvidence(share, entropy, n_pages)

    @contextmanager
    def others(self, signatures: Sequence[int], identity: int | None = None) -> Iterator[None]:
        """Within this block, the statistics leave out one page with these signatures: for a
        page already among the remembered ones (a batch's first pass added it), so that it
        reads what the site's *other* pages say, as a stream would give it. Nothing is left
        out when the page's signatures are not all remembered (it was not added). With
        ``identity``, the page stored with it is the one left out, whatever its signatures."""
        found = self.find_page(identity) if identity is not None else None
        page = found if found is not None else tuple(dict.fromkeys(signatures))
        counts = self._counts
        if found is None and (
            not self.pages or any(counts.get(signature, 0) < 1 for signature in page)
        ):
            yield
            return
        self._count(page, -1)
        self._n_discounted += 1
        try:
            yield
        finally:
            self._count(page, +1)
            self._n_discounted -= 1

    def path_entropy(self, path: int) -> float:
        """The entropy of the texts seen under a tag path, in [0, 1]; 1 for unseen paths.

        Raises:
            ValueError: when the statistics were made without ``entropy``.
        """
        if not self.entropy:
            raise ValueError("path entropy needs SiteStats(entropy=True)")
        totals = self._path_totals.get(path)
        if totals is None or totals[0] <= 1:
            return 1.0  # nothing says it is template
        total, sum_c_log_c = totals
        entropy = math.log(total) - sum_c_log_c / total
        return min(1.0, max(0.0, entropy / math.log(total)))


def _c_log_c(count: int) -> float:
    return count * math.log(count) if count > 1 else 0.0


class SiteTemplates:
    """Template statistics for many sites, bounded in sites and in pages per site.

    Args:
        settings: window, thresholds and caps.
    """

    def __init__(self, settings: SiteSettings | None = None) -> None:
        self.settings = settings or SiteSettings()
        self._sites: OrderedDict[str, SiteStats] = OrderedDict()
        self.evicted_sites = 0
        # for a store that mirrors the statistics (the worker's table): sites changed and
        # sites forgotten since the store last took them (`take_changes`)
        self._changed: set[str] = set()
        self._forgotten: set[str] = set()

    def __len__(self) -> int:
        return len(self._sites)

    def __contains__(self, site: object) -> bool:
        return site in self._sites

    @property
    def n_signatures(self) -> int:
        """Distinct signatures held over all sites (what memory grows with)."""
        return sum(stats.n_signatures for stats in self._sites.values())

    def stats(self, site: str) -> SiteStats:
        """The site's statistics, created empty on first sight; marks it recently used."""
        stats = self._sites.get(site)
        if stats is None:
            stats = self._sites[site] = SiteStats(
                self.settings.window_pages, entropy=self.settings.path_entropy
            )
            while len(self._sites) > self.settings.max_sites:
                forgotten, _ = self._sites.popitem(last=False)
                self.evicted_sites += 1
                self._changed.discard(forgotten)
                self._forgotten.add(forgotten)
        else:
            self._sites.move_to_end(site)
        return stats

    def signatures(self, blocks: Sequence[Block]) -> list[int]:
        return block_signatures(blocks, limit=self.settings.max_blocks_per_page)

    def template_blocks(
        self, site: str, blocks: Sequence[Block], *, learn: bool = False
    ) -> list[bool]:
        """Which blocks the direct rule calls template (`assess` without the evidence)."""
        return self.assess(site, blocks, learn=learn)[0]

    def assess(
        self,
        site: str,
        blocks: Sequence[Block],
        *,
        learn: bool = False,
        evidence: bool = False,
        url: str | None = None,
    ) -> tuple[list[bool], PageEvidence | None]:
        """What the site's other pages say about a page's blocks.

        Args:
            site: the page's site (`site_of`).
            blocks: the page's blocks.
            learn: a stream's way: read the pages seen before this one, then add it. Without,
                the batch's way: the page was added in a first pass (`observe`) and its own
                occurrence is left out (`SiteStats.others`).
            evidence: also return the page's `PageEvidence` (for the labeller).
            url: the page's URL, its identity (`page_identity`): an earlier version of the
                page among the site's pages is not one of its *other* pages, and learning
                the page replaces it.

        Returns:
            Per block whether the direct rule calls it template (at least ``min_share`` of the
            other pages carry it, once there are ``min_pages`` of them), and the evidence or
            ``None``. Blocks past ``max_blocks_per_page`` are never template and have no
            evidence (share 0).
        """
        signatures = self.signatures(blocks)
        identity = page_identity(url)
        stats = self.stats(site) if learn else self._sites.get(site)
        flags = [False] * len(blocks)
        found: PageEvidence | None = None
        if stats is None:
            return flags, PageEvidence.none(len(blocks)) if evidence else None
        if learn and identity is not None:
            stats.remove_page(identity)  # its earlier version: replaced below
        with nullcontext() if learn else stats.others(signatures, identity):
            n_pages = len(stats)
            if n_pages >= self.settings.min_pages:
                needed = self.settings.min_share * n_pages
                count = stats.count
                flags[: len(signatures)] = [count(signature) >= needed for signature in signatures]
            if evidence:
                found = stats.page_evidence(signatures, len(blocks))
        if learn:
            stats.add_page(signatures, identity)
            self._changed.add(site)
        return flags, found

    def observe(self, site: str, blocks: Sequence[Block], *, url: str | None = None) -> None:
        """Add one page of ``site`` to its statistics (replacing the page of the same ``url``,
        see `assess`)."""
        if site:
            self.stats(site).add_page(self.signatures(blocks), page_identity(url))
            self._changed.add(site)

    def pages(self, site: str) -> list[tuple[int, ...]]:
        """The remembered pages of a site, oldest first (what a store saves)."""
        stats = self._sites.get(site)
        return list(stats.pages) if stats is not None else []

    def restore(self, site: str, pages: Iterable[Sequence[int]]) -> None:
        """Replace a site's statistics by saved pages (oldest first), as if seen again."""
        stats = self._sites[site] = SiteStats(
            self.settings.window_pages, entropy=self.settings.path_entropy
        )
        for page in pages:
            stats.add_page(page)
        while len(self._sites) > self.settings.max_sites:
            forgotten, _ = self._sites.popitem(last=False)
            self.evicted_sites += 1
            self._forgotten.add(forgotten)

    def clear(self) -> None:
        """Forget every site (a worker whose partitions changed reloads from its store)."""
        self._sites.clear()
        self._changed.clear()
        self._forgotten.clear()

    def take_changes(self) -> tuple[set[str], set[str]]:
        """The sites changed and the sites forgotten since the last call."""
        changed, forgotten = self._changed, self._forgotten
        self._changed, self._forgotten = set(), set()
        return changed, forgotten


def encode_pages(pages: Sequence[Sequence[int]]) -> bytes:
    """A site's pages as bytes: per page a uint32 count, then its signatures (uint64)."""
    parts = []
    for page in pages:
        parts.append(len(page).to_bytes(4, "little"))
        parts.append(pack_signatures(page))
    return b"".join(parts)


def decode_pages(data: bytes) -> list[tuple[int, ...]]:
    """The inverse of `encode_pages`.

    Raises:
        ValueError: the bytes are not what `encode_pages` writes.
    """
    pages: list[tuple[int, ...]] = []
    at = 0
    while at < len(data):
        if at + 4 > len(data):
            raise ValueError("truncated site pages")
        count = int.from_bytes(data[at : at + 4], "little")
        end = at + 4 + 8 * count
        if end > len(data):
            raise ValueError("truncated site pages")
        pages.append(tuple(unpack_signatures(data[at + 4 : end])))
        at = end
    return pages
