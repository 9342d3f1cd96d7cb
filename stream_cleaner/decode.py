"""Bytes -> str: BOM, HTTP charset, <meta charset>, then a detector. Never drops non-ASCII text.

The order follows the HTML standard's encoding sniffing, with one crawl-tested exception: a
page that declares a single-byte charset but is valid UTF-8 with non-ASCII bytes is read as
UTF-8 (pages are re-encoded to UTF-8 far more often than their declaration is updated, and
Latin-1 text is almost never valid UTF-8 by chance).
"""

from __future__ import annotations

import codecs
import functools
import importlib
import re
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from ._native import native_module

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# The standard's prescan looks at 1024 bytes; real pages put <meta> after long <script>s.
_PRESCAN_BYTES = 8192
# (possessive: "charset=" and 100,000 spaces took a minute to search)
_META_CHARSET = re.compile(
    rb"""<meta[^>]+?charset\s*+=\s*+(?:["']\s*+)?([a-zA-Z0-9_:.+-]+)""", re.IGNORECASE
)
_HEADER_CHARSET = re.compile(r"""charset\s*+=\s*+(?:["']\s*+)?([a-zA-Z0-9_:.+-]+)""", re.IGNORECASE)
# WHATWG: these labels mean windows-1252 in a browser, which is a superset of Latin-1.
_WHATWG_ALIASES = {
    "iso8859-1": "cp1252",
    "latin-1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "iso8859-9": "cp1254",
    "tis-620": "cp874",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "euc_kr": "cp949",
    "big5": "big5hkscs",
    "shift_jis": "cp932",
}
# Single-byte Latin charsets a detector confuses with windows-1252 on little evidence.
_WESTERN_LOOKALIKES = {
    "cp1250", "cp1257", "cp1258", "iso8859-2", "iso8859-3", "iso8859-4", "iso8859-10",
    "iso8859-13", "iso8859-14", "iso8859-15", "iso8859-16",
}  # fmt: skip
_HIGH_BYTES = bytes(range(128, 256))
# File signatures of formats that are certainly not a web page.
_BINARY_MAGIC = (
    b"%PDF-",
    b"\x89PNG",
    b"GIF87a",
    b"GIF89a",
    b"\xff\xd8\xff",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"BZh",
    b"\xfd7zXZ",
    b"RIFF",
    b"\x00\x00\x01\x00",
    b"ID3",
    b"OggS",
    b"\x7fELF",
    b"MZ",
    b"wOFF",
    b"wOF2",
    b"\x00asm",
    b"\xd0\xcf\x11\xe0",
)


_CONTROL_BYTES = bytes([*range(9), 11, *range(14, 27), *range(28, 32), 127])


class BinaryContent(ValueError):
    """The body is a binary format (PDF, image, archive...), not text."""


class ContentCodingError(BinaryContent):
    """A body whose ``Content-Encoding`` cannot be undone: corrupt, or not supported."""


class DecodedTooLarge(ContentCodingError):
    """A compressed body that decodes to more bytes than allowed."""


# the most bytes a compressed body may decode to (`undo_content_coding`)
MAX_DECODED_BYTES = 256 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def undo_content_coding(
    headers: Mapping[str, str], payload: bytes, *, max_bytes: int = MAX_DECODED_BYTES
) -> bytes:
    """The payload without the chunked transfer coding and the ``Content-Encoding`` (gzip,
    deflate, br, zstd; several, comma-separated, undone last first) that its headers name,
    where the bytes show them.

    Crawlers differ in whether they store or send a page as it came over the wire or decoded,
    with the original headers either way; so each coding is undone only when the bytes are
    in it. A payload without the gzip or zstd signature, deflate data the codec cannot read
    and brotli data that reads as text are taken as stored decoded. Header names are matched
    without regard to case.

    Raises:
        ContentCodingError: a corrupt payload, or br or zstd without cramjam installed.
        DecodedTooLarge: a payload that decodes to more than ``max_bytes``.
    """
    if not headers:
        return payload
    named = {key.lower(): value for key, value in headers.items()}
    if "chunked" in named.get("transfer-encoding", "").lower():
        dechunked = _dechunk(payload)
        if dechunked is not None:
            payload = dechunked
    # "gzip, br": gzip first, then br; a header sent twice arrives joined the same way
    codings = [c.strip() for c in named.get("content-encoding", "").lower().split(",")]
    for coding in reversed(codings):
        undo = _UNDO.get(coding)
        if undo is not None and payload:
            payload = undo(payload, coding, max_bytes)
    return payload


def _undo_gzip(payload: bytes, coding: str, max_bytes: int) -> bytes:
    return _inflate(payload, 31, coding, max_bytes) if payload.startswith(_GZIP_MAGIC) else payload


def _undo_deflate(payload: bytes, coding: str, max_bytes: int) -> bytes:
    if (payload[0] & 0x0F) == 8 and int.from_bytes(payload[:2], "big") % 31 == 0:
        return _inflate(payload, 15, coding, max_bytes)  # zlib-wrapped, as the standard says
    try:
        return _inflate(payload, -15, coding, max_bytes)  # raw deflate, as servers send it
    except DecodedTooLarge:
        raise
    except ContentCodingError:
        return payload  # not raw deflate either: take it as stored decoded


def _undo_brotli_or_zstd(payload: bytes, coding: str, max_bytes: int) -> bytes:
    if coding == "zstd" and not payload.startswith(_ZSTD_MAGIC):
        return payload
    try:
        return _cramjam_decompress(payload, coding, max_bytes)
    except DecodedTooLarge:
        raise
    except ContentCodingError:
        if coding == "br" and _looks_like_text(payload):
            return payload  # brotli has no signature: this one was stored decoded
        raise


# the codings undone, by Content-Encoding value; any other is left to the bytes (binary data
# is refused later)
_UNDO: dict[str, Callable[[bytes, str, int], bytes]] = {
    "gzip": _undo_gzip,
    "x-gzip": _undo_gzip,
    "deflate": _undo_deflate,
    "br": _undo_brotli_or_zstd,
    "zstd": _undo_brotli_or_zstd,
}


def _looks_like_text(payload: bytes) -> bool:
    """Whether a payload reads as text (few control bytes, as `_reject_binary` counts them),
    where compressed data has about one in nine."""
    head = payload[:1024]
    return (len(head) - len(head.translate(None, _CONTROL_BYTES))) * 20 <= len(head)


def _cramjam_decompress(payload: bytes, coding: str, max_bytes: int) -> bytes:
    """Brotli or Zstandard through cramjam (aiokafka's codecs), into a bounded buffer."""
    try:
        import cramjam
    except ImportError:
        raise ContentCodingError(f"Content-Encoding {coding}: needs cramjam, which is not "
                                 "installed") from None  # fmt: skip
    codec = cramjam.brotli if coding == "br" else cramjam.zstd
    size = min(max_bytes, max(1 << 16, 16 * len(payload)))
    while True:
        out = bytearray(size)
        try:
            n = codec.decompress_into(payload, out)
        except cramjam.DecompressionError as exc:
            if "whole buffer" not in str(exc):
                raise ContentCodingError(f"Content-Encoding {coding}: {exc}") from None
            if size >= max_bytes:
                raise DecodedTooLarge(
                    f"Content-Encoding {coding}: more than {max_bytes} bytes decoded"
                ) from None
            size = min(max_bytes, size * 4)
            continue
        return bytes(memoryview(out)[:n])


def _inflate(data: bytes, wbits: int, coding: str, max_bytes: int) -> bytes:
    inflater = zlib.decompressobj(wbits)
    try:
        # A payload cut off by the crawler's size limit inflates to a prefix: keep it.
        out = inflater.decompress(data, max_bytes)
    except zlib.error as exc:
        raise ContentCodingError(f"Content-Encoding {coding}: {exc}") from None
    if inflater.unconsumed_tail:
        raise DecodedTooLarge(f"Content-Encoding {coding}: more than {max_bytes} bytes decoded")
    if not out and not inflater.eof:
        raise ContentCodingError(f"Content-Encoding {coding}: nothing decoded from "
                                 f"{len(data)} bytes (corrupt or cut off)")  # fmt: skip
    return out


def _dechunk(data: bytes) -> bytes | None:
    """The payload of a chunked body, or ``None`` if ``data`` is not chunked."""
    parts: list[bytes] = []
    pos = 0
    while True:
        eol = data.find(b"\n", pos)
        if eol < 0:
            return None
        size_text = data[pos:eol].split(b";", 1)[0].strip()
        if not size_text or size_text.strip(b"0123456789abcdefABCDEF"):
            return None
        size = int(size_text, 16)
        if size == 0:
            return b"".join(parts)
        start = eol + 1
        parts.append(data[start : start + size])
        pos = start + size
        if pos >= len(data):
            return b"".join(parts)  # cut off inside a chunk: keep what there is
        if data.startswith(b"\r\n", pos):
            pos += 2
        elif data.startswith(b"\n", pos):
            pos += 1
        else:
            return None


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    encoding: str
    source: str  # bom | http | meta | utf-8 | detected | fallback
    # the body itself when it is exactly ``text`` in UTF-8 (strict UTF-8 or ASCII): lexbor
    # parses it without the text being encoded again (`parse.parse_blocks`)
    utf8: bytes | None = field(default=None, compare=False, repr=False)


def charset_from_content_type(content_type: str | None) -> str | None:
    """The charset parameter of a Content-Type header value, if any."""
    if not content_type:
        return None
    match = _HEADER_CHARSET.search(content_type)
    return match.group(1) if match else None


def content_type_from_headers(headers: Mapping[str, str]) -> str | None:
    for key, value in headers.items():
        if key.lower() == "content-type":
            return value
    return None


# text types that are not pages (`is_page_type`)
_TEXT_NOT_PAGES: Final = frozenset({
    "text/css", "text/javascript", "text/ecmascript", "text/x-javascript", "text/csv",
    "text/tab-separated-values", "text/xml", "text/calendar", "text/vcard", "text/x-vcard",
    "text/vtt", "text/x-component", "text/cache-manifest",
})  # fmt: skip
# media types that say nothing of what the bytes are: the cleaner sniffs them
_UNTYPED: Final = frozenset({
    "", "application/octet-stream", "binary/octet-stream", "application/unknown", "unknown",
    "unknown/unknown", "*/*", "application/x-unknown-content-type",
})  # fmt: skip


def is_page_type(content_type: str) -> bool:
    """Whether an HTTP Content-Type can be a page to clean: HTML, XHTML, plain text and other
    text that is not code or data, or no type worth the name (the bytes then tell).

    A crawl holds every response the crawler fetched: style sheets, scripts, images, fonts,
    feeds and JSON besides the pages. Their text is not a page's, and cleaned as one it put
    CSS rules and JavaScript into the corpus.
    """
    media = content_type.split(";", 1)[0].strip().lower()
    if media in _UNTYPED or media in ("application/xhtml+xml", "application/xhtml"):
        return True
    return media.startswith("text/") and media not in _TEXT_NOT_PAGES


def http_status(value: object) -> int | None:
    """A raw message's ``status`` header (`streaming.records`): an integer, or a string of
    digits, or absent (``None``). An envelope's ``status`` is an integer by its schema
    (`envelope.parse_envelope`).

    Raises:
        ValueError: any other value.
    """
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value)
    raise ValueError(f"status must be an integer, not {value!r:.40}")


def decode_body(
    body: bytes,
    *,
    content_type: str | None = None,
    headers: Mapping[str, str] | None = None,
    max_bytes: int = MAX_DECODED_BYTES,
) -> Decoded:
    """Decode a fetched page.

    Args:
        body: the raw bytes.
        content_type: a Content-Type value known from outside the headers.
        headers: the HTTP response headers: the transfer and content codings they name are
            undone (`undo_content_coding`), and Content-Type gives the charset.
        max_bytes: the most bytes a compressed body may decode to.

    Returns:
        The text, the codec used and where the choice came from.

    Raises:
        BinaryContent: for bodies that are images, PDFs, archives or other binary data.
        ContentCodingError: a body whose ``Content-Encoding`` cannot be undone.
        DecodedTooLarge: a compressed body that decodes to more than ``max_bytes``.
    """
    if headers:
        body = undo_content_coding(headers, body, max_bytes=max_bytes)
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return Decoded(body[len(bom) :].decode(encoding, errors="replace"), encoding, "bom")
    if content_type is None and headers:
        content_type = content_type_from_headers(headers)
    label = charset_from_content_type(content_type)
    utf16 = _utf16_without_bom(body, declared=_utf16_label(label))
    if utf16 is not None:
        return utf16
    _reject_binary(body)
    declared = _codec(label)
    source = "http"
    if declared is None:
        match = _META_CHARSET.search(body, 0, _PRESCAN_BYTES)
        declared = _codec(match.group(1).decode("ascii", "replace")) if match else None
        source = "meta"
    if declared is not None:
        as_utf8 = _utf8_with_non_ascii(body) if _single_byte(declared) else None
        if as_utf8 is not None:
            return Decoded(as_utf8, "utf-8", "utf-8", body)
        try:
            text, exact = _decode_declared(body, declared)
        except UnicodeDecodeError:
            pass  # the declaration is wrong: fall through to detection
        else:
            return Decoded(text, declared, source, body if exact else None)
    return _undeclared(body)


def _undeclared(body: bytes) -> Decoded:
    """A body without a (usable) declaration: UTF-8, UTF-8 with windows-1252 bytes in it, or
    what a detector says."""
    if b"\x1b$" in body and body.isascii():  # ISO-2022-JP's escapes: 7-bit, valid UTF-8 too
        try:
            return Decoded(body.decode("iso2022_jp_2"), "iso2022_jp_2", "detected")
        except UnicodeDecodeError:
            pass
    try:
        return Decoded(body.decode("utf-8"), "utf-8", "utf-8", body)
    except UnicodeDecodeError:
        pass
    mixed = _utf8_with_cp1252(body)
    if mixed is None:
        return _detect(body)
    legacy = _detect_non_western(body) if _mostly_invalid_utf8(body, mixed) else None
    return legacy or Decoded(mixed, "utf-8", "utf-8")


def _utf16_label(label: str | None) -> str | None:
    """The codec a charset label names if it is UTF-16 (``utf-16``, ``utf-16-le`` or
    ``utf-16-be``), else None."""
    try:
        name = codecs.lookup(label.strip().lower()).name if label is not None else ""
    except LookupError:
        return None
    return name if name.startswith("utf-16") else None


def _utf16_without_bom(body: bytes, *, declared: str | None) -> Decoded | None:
    """The body read as UTF-16 when it is UTF-16 text without a byte order mark, else None.

    Markup is mostly ASCII, so in UTF-16 every other byte is zero: the odd ones in little
    endian, the even ones in big endian. A server may say so in its Content-Type (which the
    HTML standard honours, where a <meta> naming UTF-16 means UTF-8) or say nothing; without
    this, the zero bytes made such a page binary data. Undeclared, the text must also start
    with markup. Declared (``declared``: the codec the Content-Type names), a page of mostly
    Chinese or Japanese text, with few zero bytes, is UTF-16 too: in the byte order the
    label names, or else the one its markup's "<" shows.
    """
    head = body[: min(len(body), 4096) // 2 * 2]
    if declared is None and (len(head) < 16 or b"\x00" not in head):  # most pages: one scan
        return None
    even, odd = head[0::2], head[1::2]
    even_zeros, odd_zeros = even.count(0), odd.count(0)
    if odd_zeros * 2 >= len(odd) and even_zeros * 20 < len(even):
        encoding = "utf-16-le"
    elif even_zeros * 2 >= len(even) and odd_zeros * 20 < len(odd):
        encoding = "utf-16-be"
    elif declared in ("utf-16-le", "utf-16-be"):
        encoding = declared
    elif declared is not None and len(body) % 2 == 0:
        # markup's "<": its byte comes first in little endian, second in big endian
        encoding = "utf-16-be" if odd.count(b"<") > even.count(b"<") else "utf-16-le"
    else:  # undeclared, mostly CJK: a tag must start it, and the start must read cleanly
        encoding = _utf16_tag_start(head)
        if encoding is None:
            return None
    text = body.decode(encoding, errors="replace")
    if not declared and not text.lstrip().startswith("<"):
        return None
    return Decoded(text, encoding, "http" if declared else "detected")


# "<" and an ASCII letter, "!" or "?" in UTF-16, after optional white space
_UTF16_TAGS = {
    "utf-16-le": re.compile(rb"(?:[ \t\r\n]\x00)*<\x00[A-Za-z!?]\x00"),
    "utf-16-be": re.compile(rb"(?:\x00[ \t\r\n])*\x00<\x00[A-Za-z!?]"),
}


def _utf16_tag_start(head: bytes) -> str | None:
    """The UTF-16 byte order in which ``head`` starts with a tag and decodes without error."""
    for encoding, tag in _UTF16_TAGS.items():
        if tag.match(head):
            try:  # (incremental: the head may end inside a surrogate pair)
                codecs.getincrementaldecoder(encoding)().decode(head, final=False)
            except UnicodeDecodeError:
                return None
            return encoding
    return None


def _decode_declared(body: bytes, codec: str) -> tuple[str, bool]:
    """``body.decode(codec)``, and whether ``body`` is that text in UTF-8; an ASCII body in a
    single-byte charset that maps ASCII to itself is decoded as ASCII, the same text without
    the per-byte table lookups."""
    if body.isascii() and _ascii_is_identity(codec):
        return body.decode("ascii"), True
    return body.decode(codec), codec == "utf-8"


@functools.cache
def _ascii_is_identity(codec: str) -> bool:
    """Whether ``codec`` is a table-driven single-byte charset (a ``decoding_table`` in its
    ``encodings`` module: each byte decoded on its own) whose first 128 entries are ASCII."""
    try:
        module = importlib.import_module(f"encodings.{codecs.lookup(codec).name.replace('-', '_')}")
    except (ImportError, LookupError):
        return False
    table = getattr(module, "decoding_table", None)
    return isinstance(table, str) and table[:128] == "".join(map(chr, range(128)))


def _utf8_with_cp1252(body: bytes) -> str | None:
    """Read a page that is UTF-8 in places as UTF-8, and its other bytes as windows-1252.

    Pages are often mixed: a UTF-8 template around text pasted from a windows-1252 source, or
    a UTF-8 page with one truncated character. Decoding all of it in a legacy charset would
    garble every UTF-8 character. Returns None when the page has no valid multi-byte UTF-8
    sequence at all (then it is a legacy charset: ask the detector).
    """
    fast = native_module("decoding")
    if fast is not None:  # the same text in one pass, for pages of many stray bytes
        text = fast.utf8_with_cp1252(body).decode("utf-8")
    else:
        text = body.decode("utf-8", errors=_CP1252_FALLBACK)
    # each valid multi-byte sequence makes the text shorter than the bytes; a byte read as
    # windows-1252 keeps the length
    return text if len(text) < len(body) else None


def _mostly_invalid_utf8(body: bytes, mixed: str) -> bool:
    """Whether most of the body's non-ASCII bytes are not valid UTF-8 (``mixed`` is
    `_utf8_with_cp1252` of it).

    A page in a legacy charset has valid UTF-8 sequences by chance: GBK, Shift_JIS or Big5
    byte pairs often are one, and a whole undeclared Chinese page was read as windows-1252
    for a few of them. Each valid sequence of k bytes shortens the text by k - 1, so at
    most twice the shortening are bytes in valid sequences.
    """
    non_ascii = len(body) - len(body.translate(None, _HIGH_BYTES))
    return non_ascii > 4 * (len(body) - len(mixed))


def _detect_non_western(body: bytes) -> Decoded | None:
    """The body in the charset the detector names, when that is neither UTF-8 nor a Western
    single-byte charset and decodes all of it; else None.

    For a page whose non-ASCII bytes are mostly not UTF-8: a Western answer would read them
    as windows-1252 does, which `_utf8_with_cp1252` already did for them, and it keeps the
    page's UTF-8 parts as well.
    """
    sample = body[:65536]
    encoding = _codec(_detector()(sample))
    if not encoding or encoding in _WESTERN_LOOKALIKES or encoding in ("utf-8", "cp1252"):
        return None
    if not _plausible(encoding, sample):
        return None
    try:
        return Decoded(body.decode(encoding), encoding, "detected")
    except UnicodeDecodeError:
        return None


def _decode_error_as_cp1252(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    return error.object[error.start : error.end].decode("cp1252", errors="replace"), error.end


_CP1252_FALLBACK = "stream_cleaner.cp1252_fallback"
codecs.register_error(_CP1252_FALLBACK, _decode_error_as_cp1252)


def _codec(label: str | None) -> str | None:
    """The Python codec name for a charset label, or None for unknown labels."""
    if not label:
        return None
    try:
        info = codecs.lookup(label.strip().lower())
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True):
        return None  # base64, zlib, rot13...: codecs that bytes.decode refuses
    name = info.name
    if name in ("utf-16-le", "utf-16-be", "utf-16", "utf-32"):
        # a page cannot declare UTF-16 in its own ASCII bytes: browsers read it as UTF-8
        return "utf-8"
    return _WHATWG_ALIASES.get(name, name)


@functools.lru_cache(maxsize=256)
def _single_byte(codec: str) -> bool:
    """Whether a codec reads one character from each byte (windows-125x, ISO-8859-x, KOI8...,
    and the 7-bit ISO-2022-JP or HZ, which no non-ASCII byte can be): the charsets whose
    declaration a body of valid UTF-8 with non-ASCII bytes overrides."""
    return len(bytes(range(256)).decode(codec, "replace")) == 256


def _utf8_with_non_ascii(body: bytes) -> str | None:
    """The body decoded as UTF-8 when it is valid UTF-8 with non-ASCII bytes, else None."""
    if body.isascii():
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _reject_binary(body: bytes) -> None:
    head = body[:4096]
    if head.startswith(_BINARY_MAGIC):
        raise BinaryContent(f"binary signature {head[:8]!r}")
    # Text has almost no C0 control bytes besides tab/CR/LF/FF (ESC is allowed: ISO-2022-JP
    # uses it); compressed or encrypted data has about one in nine.
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    if controls * 20 > len(head):
        raise BinaryContent(f"{controls} control bytes in the first {len(head)}: binary data")


def _detect(body: bytes) -> Decoded:
    """Neither declaration nor UTF-8 fits: ask a detector, else fall back to cp1252.

    faust-cchardet (C, about 0.1 ms a page) is used when installed; charset-normalizer (pure
    Python, ~10 ms a page) otherwise.
    """
    sample = body[:65536]
    encoding = _codec(_detector()(sample))
    if encoding and encoding != "utf-8" and _plausible(encoding, sample):
        try:
            return Decoded(body.decode(encoding), encoding, "detected")
        except UnicodeDecodeError:
            pass
    return Decoded(body.decode("cp1252", errors="replace"), "cp1252", "fallback")


def _plausible(encoding: str, sample: bytes) -> bool:
    """Whether a detected charset is believable for a web page.

    Detectors name DOS and Mac code pages, or a Latin variant, for English pages with a
    handful of non-ASCII bytes (a ©, a curly quote). Those code pages are not used on the
    web, and a few bytes are no evidence. In both cases windows-1252, the browsers' Western
    default, is the better guess.
    """
    if encoding.startswith(("cp4", "cp7", "cp8", "mac-", "mac_")) and encoding != "cp874":
        return False
    non_ascii = len(sample) - len(sample.translate(None, _HIGH_BYTES))
    return not (encoding in _WESTERN_LOOKALIKES and non_ascii * 100 < len(sample))


@functools.cache
def _detector() -> Callable[[bytes], str | None]:
    try:
        import cchardet
    except ImportError:
        from charset_normalizer import from_bytes

        def detect_normalizer(sample: bytes) -> str | None:
            best = from_bytes(sample).best()
            return best.encoding if best is not None else None

        return detect_normalizer

    def detect_cchardet(sample: bytes) -> str | None:
        return cchardet.detect(sample).get("encoding")

    return detect_cchardet
