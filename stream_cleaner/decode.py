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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# The standard's prescan looks at 1024 bytes; real pages put <meta> after long <script>s.
_PRESCAN_BYTES = 8192
_META_CHARSET = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([a-zA-Z0-9_:.+-]+)""", re.IGNORECASE
)
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([a-zA-Z0-9_:.+-]+)""", re.IGNORECASE)
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
_SINGLE_BYTE = {"cp1252", "cp1250", "cp1251", "cp1254", "cp874"}
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


def decode_body(
    body: bytes,
    *,
    content_type: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Decoded:
    """Decode a fetched page.

    Args:
        body: the raw bytes.
        content_type: a Content-Type value known from outside the headers.
        headers: the HTTP response headers, searched for Content-Type.

    Returns:
        The text, the codec used and where the choice came from.

    Raises:
        BinaryContent: for bodies that are images, PDFs, archives or other binary data.
    """
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return Decoded(body[len(bom) :].decode(encoding, errors="replace"), encoding, "bom")
    if content_type is None and headers:
        content_type = content_type_from_headers(headers)
    label = charset_from_content_type(content_type)
    utf16 = _utf16_without_bom(body, declared=_is_utf16(label))
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
        as_utf8 = _utf8_with_non_ascii(body) if declared in _SINGLE_BYTE else None
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
    try:
        return Decoded(body.decode("utf-8"), "utf-8", "utf-8", body)
    except UnicodeDecodeError:
        pass
    mixed = _utf8_with_cp1252(body)
    if mixed is None:
        return _detect(body)
    legacy = _detect_non_western(body) if _mostly_invalid_utf8(body, mixed) else None
    return legacy or Decoded(mixed, "utf-8", "utf-8")


def _is_utf16(label: str | None) -> bool:
    """Whether a charset label names UTF-16 (of either byte order)."""
    try:
        return label is not None and codecs.lookup(label.strip().lower()).name.startswith("utf-16")
    except LookupError:
        return False


def _utf16_without_bom(body: bytes, *, declared: bool) -> Decoded | None:
    """The body read as UTF-16 when it is UTF-16 text without a byte order mark, else None.

    Markup is mostly ASCII, so in UTF-16 every other byte is zero: the odd ones in little
    endian, the even ones in big endian. A server may say so in its Content-Type (which the
    HTML standard honours, where a <meta> naming UTF-16 means UTF-8) or say nothing; without
    this, the zero bytes made such a page binary data. Undeclared, the text must also start
    with markup.
    """
    head = body[: min(len(body), 4096) // 2 * 2]
    if len(head) < 16:
        return None
    even, odd = head[0::2], head[1::2]
    even_zeros, odd_zeros = even.count(0), odd.count(0)
    if odd_zeros * 2 >= len(odd) and even_zeros * 20 < len(even):
        encoding = "utf-16-le"
    elif even_zeros * 2 >= len(even) and odd_zeros * 20 < len(odd):
        encoding = "utf-16-be"
    else:
        return None
    text = body.decode(encoding, errors="replace")
    if not declared and not text.lstrip().startswith("<"):
        return None
    return Decoded(text, encoding, "http" if declared else "detected")


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
