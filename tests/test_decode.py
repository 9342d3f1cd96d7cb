import codecs
import gzip
import zlib

import cramjam
import pytest

from stream_cleaner.decode import (
    BinaryContent,
    ContentCodingError,
    DecodedTooLarge,
    charset_from_content_type,
    decode_body,
    undo_content_coding,
)

from .conftest import SAMPLES

CAFE = "Café in Zürich — 東京"


def page(charset_meta: str, body: str) -> str:
    return f"<html><head>{charset_meta}</head><body><p>{body}</p></body></html>"


def test_utf8_keeps_every_character():
    decoded = decode_body(page('<meta charset="utf-8">', CAFE).encode("utf-8"))
    assert CAFE in decoded.text
    assert decoded.encoding == "utf-8"


def test_bom_wins_over_everything():
    raw = codecs.BOM_UTF8 + page('<meta charset="iso-8859-1">', CAFE).encode("utf-8")
    decoded = decode_body(raw, content_type="text/html; charset=iso-8859-1")
    assert decoded.source == "bom"
    assert CAFE in decoded.text
    utf16 = codecs.BOM_UTF16_LE + page("", CAFE).encode("utf-16-le")
    assert CAFE in decode_body(utf16).text


def test_http_charset_comes_before_meta():
    raw = page('<meta charset="utf-8">', "Привет мир").encode("koi8-r")
    decoded = decode_body(raw, headers={"Content-Type": "text/html; charset=KOI8-R"})
    assert decoded.source == "http"
    assert "Привет мир" in decoded.text


def test_meta_charset_and_http_equiv():
    raw = page('<meta charset="windows-1251">', "Привет мир").encode("cp1251")
    assert "Привет мир" in decode_body(raw).text
    equiv = '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
    raw = page(equiv, "Grüße aus Köln").encode("latin-1")
    decoded = decode_body(raw)
    assert decoded.source == "meta"
    assert "Grüße aus Köln" in decoded.text


def test_latin1_label_means_windows_1252():
    raw = page('<meta charset="iso-8859-1">', "“quoted” – dash").encode("cp1252")
    assert "“quoted” – dash" in decode_body(raw).text


def test_wrong_declared_charset_is_corrected():
    # declared Latin-1 but really UTF-8: reading it as declared would make mojibake
    raw = page('<meta charset="iso-8859-1">', CAFE).encode("utf-8")
    assert CAFE in decode_body(raw).text
    # declared UTF-8 but really Latin-1: strict UTF-8 fails, detection takes over
    raw = page('<meta charset="utf-8">', "Grüße aus Köln, schöne Straße. " * 20).encode("latin-1")
    decoded = decode_body(raw)
    assert "Grüße aus Köln" in decoded.text
    assert "\ufffd" not in decoded.text


@pytest.mark.parametrize(
    "label", ["iso-8859-15", "iso-8859-2", "iso-8859-7", "koi8-r", "windows-1256", "macintosh"]
)
def test_a_utf8_page_declared_in_any_single_byte_charset_is_read_as_utf8(label):
    text = "Café crème, Ελλάδα, Москва, العربية"
    raw = page(f'<meta charset="{label}">', text).encode("utf-8")
    assert text in decode_body(raw).text
    header = {"Content-Type": f"text/html; charset={label}"}
    assert text in decode_body(page("", text).encode("utf-8"), headers=header).text
    # what the charset says still holds for bytes that are not UTF-8
    legacy = "Grüße, schöne Straße"
    raw = page(f'<meta charset="{label}">', legacy).encode("iso-8859-15", "replace")
    assert decode_body(raw).text == raw.decode(codecs.lookup(label).name)


def test_undeclared_iso_2022_jp_is_read_by_its_escapes():
    text = "日本語のテキストです。東京は日本の首都です。"
    raw = page("", text).encode("iso2022_jp")
    assert raw.isascii()  # 7-bit: valid UTF-8 as well, escapes and all
    decoded = decode_body(raw)
    assert text in decoded.text
    assert "\x1b" not in decoded.text


def test_undeclared_legacy_charset_is_detected():
    text = "Съешь же ещё этих мягких французских булок, да выпей чаю. " * 10
    decoded = decode_body(page("", text).encode("cp1251"))
    assert decoded.source == "detected"
    assert "французских булок" in decoded.text


@pytest.mark.parametrize(
    ("codec", "text"),
    [
        ("gbk", "北京市政府召开了会议，讨论了新的预算。"),
        ("shift_jis", "東京都の会議が開かれました。"),
        ("big5", "臺北市政府召開了會議，討論了新的預算。"),
        ("euc-kr", "서울시 정부가 회의를 열었습니다."),
        ("cp1251", "Совет обсудил бюджет школ «Я»."),
    ],
    ids=["gbk", "shift_jis", "big5", "euc-kr", "cp1251"],
)
def test_undeclared_legacy_pages_with_chance_utf8_sequences_are_detected(codec, text):
    # in each, some byte pairs happen to be valid UTF-8 (GBK 中文 = d6 d0 ce c4; cp1251 Я» =
    # df bb): read as UTF-8 with the rest as windows-1252, the whole page was mojibake
    raw = page("", text * 3).encode(codec)
    decoded = decode_body(raw)
    assert decoded.source == "detected"
    assert text * 3 in decoded.text


def test_a_utf8_page_with_pasted_windows_1252_text_keeps_both_when_the_pasted_part_is_larger():
    pasted = "Grüße aus Köln, schöne Straße, “zitiert” – Ende. " * 20
    raw = page('<meta charset="utf-8">', "Café — ™").encode("utf-8") + pasted.encode("cp1252")
    decoded = decode_body(raw)
    assert "Café — ™" in decoded.text
    assert pasted in decoded.text


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("content_type", ["text/html; charset=UTF-16", None])
def test_utf16_without_a_byte_order_mark_is_read_not_refused_as_binary(codec, content_type):
    # a server may declare UTF-16 (its label alone means little endian) or nothing; the zero
    # byte in every other place made such a page binary data
    raw = page("", CAFE).encode(codec)
    if content_type and codec == "utf-16-be":
        content_type = "text/html; charset=UTF-16BE"
    decoded = decode_body(raw, content_type=content_type)
    assert decoded.encoding == codec
    assert decoded.source == ("http" if content_type else "detected")
    assert CAFE in decoded.text


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("label", ["UTF-16", "UTF-16LE/BE", None])
def test_utf16_without_a_byte_order_mark_holding_mostly_chinese_is_read(codec, label):
    # few zero bytes: the half-zero test alone called such a page binary data
    text = "这是一个中文句子，不应该出现乱码。北京是中国的首都，人口众多。😀" * 20
    raw = page("", text).encode(codec)
    if label == "UTF-16LE/BE":
        label = codec.replace("-", "").upper().replace("UTF16", "UTF-16")
    decoded = decode_body(raw, content_type=f"text/html; charset={label}" if label else None)
    assert decoded.encoding == codec
    assert text in decoded.text


def test_utf16_bytes_that_are_not_markup_nor_declared_stay_binary():
    with pytest.raises(BinaryContent):
        decode_body("plain words, no markup at all".encode("utf-16-le"))
    # and a <meta> naming UTF-16 in an ASCII page means UTF-8, as in browsers
    decoded = decode_body(page('<meta charset="utf-16">', CAFE).encode("utf-8"))
    assert decoded.encoding == "utf-8"
    assert CAFE in decoded.text


def test_unknown_charset_label_falls_back():
    raw = page('<meta charset="x-no-such-charset">', CAFE).encode("utf-8")
    assert CAFE in decode_body(raw).text


@pytest.mark.parametrize("label", ["base64", "zlib", "rot13", "hex"])
def test_codecs_that_are_not_text_encodings_count_as_unknown(label):
    # Python knows them, but bytes.decode refuses them: a page declaring one is still read
    raw = page(f'<meta charset="{label}">', CAFE).encode("utf-8")
    assert CAFE in decode_body(raw).text
    assert decode_body(raw, content_type=f"text/html; charset={label}").text.count(CAFE) == 1


@pytest.mark.parametrize(
    "raw",
    [
        b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        b"\xff\xd8\xff\xe0\x00\x10JFIF",
        b"PK\x03\x04\x14\x00\x00\x00",
        bytes(range(256)) * 4,
    ],
    ids=["pdf", "png", "jpeg", "zip", "random-bytes"],
)
def test_binary_bodies_are_refused(raw):
    with pytest.raises(BinaryContent):
        decode_body(raw)


def test_content_type_charset_parsing():
    assert charset_from_content_type('text/html; charset="UTF-8"') == "UTF-8"
    assert charset_from_content_type("text/html") is None
    assert charset_from_content_type(None) is None


def test_bundled_latin1_sample_decodes():
    decoded = decode_body((SAMPLES / "german-news.html").read_bytes())
    assert decoded.encoding == "cp1252"
    assert "ä" in decoded.text and "ß" in decoded.text
    assert "\ufffd" not in decoded.text


def test_mixed_utf8_and_windows_1252_bytes_are_both_read():
    text = "Café in Zürich — 東京. " * 50
    raw = page('<meta charset="utf-8">', text).encode("utf-8")
    raw = raw.replace("Café".encode(), b"Caf\xe9", 1)  # one stray windows-1252 byte
    raw += "<p>pasted \u201cquoted\u201d text</p>".encode("cp1252")
    decoded = decode_body(raw)
    assert decoded.encoding == "utf-8"
    assert decoded.text.count("Café in Zürich — 東京.") == 50
    assert "pasted “quoted” text" in decoded.text
    assert "\ufffd" not in decoded.text


def test_a_few_non_ascii_bytes_in_an_english_page_mean_windows_1252():
    # detectors call this IBM865 or Mac Central European; browsers would use windows-1252
    english = "The committee met on Tuesday and approved the budget for the year. " * 80
    raw = page("", english + "\u00a9 2007 Example Ltd. \u2019").encode("cp1252")
    decoded = decode_body(raw)
    assert decoded.encoding == "cp1252"
    assert "© 2007 Example Ltd. ’" in decoded.text


def test_ascii_pages_in_a_declared_single_byte_charset_decode_as_that_charset_would():
    import encodings.aliases

    text = "\t\n\r" + "".join(map(chr, range(32, 127))) * 3
    exercised = 0
    for codec in sorted(set(encodings.aliases.aliases.values())):
        try:
            if not codecs.lookup(codec)._is_text_encoding:
                continue  # base64, zlib...: not charsets
        except LookupError:
            continue  # mbcs and the like: Windows only
        raw = page(f'<meta charset="{codec}">', text).encode("ascii")
        decoded = decode_body(raw)
        if decoded.encoding == codecs.lookup(codec).name and decoded.source == "meta":
            assert decoded.text == raw.decode(decoded.encoding), codec
            exercised += 1
    assert exercised >= 40  # the single-byte charsets among them
    # EBCDIC maps ASCII bytes elsewhere: never read as ASCII
    raw = page("", "plain words").encode("ascii")
    assert decode_body(raw, content_type="text/html; charset=cp037").text == raw.decode("cp037")


@pytest.mark.parametrize(
    ("raw", "headers", "exact"),
    [
        (page('<meta charset="utf-8">', CAFE).encode("utf-8"), None, True),
        (page("", CAFE).encode("utf-8"), None, True),
        (page('<meta charset="iso-8859-1">', "plain ASCII").encode("ascii"), None, True),
        (page('<meta charset="windows-1252">', CAFE).encode("utf-8"), None, True),
        (page("", "Caf\u00e9").encode("cp1252"), None, False),
        (page("", "ok").encode("ascii"), {"Content-Type": "text/html; charset=cp037"}, False),
        (page("", "ok").encode("cp037"), {"Content-Type": "text/html; charset=cp037"}, False),
        (codecs.BOM_UTF8 + page("", CAFE).encode("utf-8"), None, False),
    ],
)
def test_the_body_is_kept_for_the_parser_only_when_it_is_the_text_in_utf8(raw, headers, exact):
    """``Decoded.utf8`` lets lexbor read the body without re-encoding the text: it must be
    that text's UTF-8 byte for byte, or absent."""
    decoded = decode_body(raw, headers=headers)
    if exact:
        assert decoded.utf8 is raw
    if decoded.utf8 is not None:
        assert decoded.utf8 == decoded.text.encode("utf-8")


def test_the_kept_body_gives_the_same_blocks():
    from stream_cleaner.parse import parse_blocks

    kept = 0
    for path in sorted(SAMPLES.glob("*.html")):
        decoded = decode_body(path.read_bytes())
        kept += decoded.utf8 is not None
        assert parse_blocks(decoded.text, utf8=decoded.utf8) == parse_blocks(decoded.text)
    assert kept


CODED_PAGE = page('<meta charset="utf-8">', CAFE).encode("utf-8")


@pytest.mark.parametrize(
    ("coding", "coded"),
    [
        ("gzip", gzip.compress(CODED_PAGE)),
        ("x-gzip", gzip.compress(CODED_PAGE)),
        ("deflate", zlib.compress(CODED_PAGE)),  # zlib-wrapped, as the standard says
        ("deflate", zlib.compress(CODED_PAGE)[2:-4]),  # raw, as many servers send it
        ("br", bytes(cramjam.brotli.compress(CODED_PAGE))),
        ("zstd", bytes(cramjam.zstd.compress(CODED_PAGE))),
    ],
    ids=["gzip", "x-gzip", "deflate-zlib", "deflate-raw", "br", "zstd"],
)
def test_a_body_in_the_content_coding_its_headers_name_is_decoded(coding, coded):
    # a crawler that forwards the body as it came over the wire: before, gzip's signature or
    # the compressed bytes made every such page binary_content
    decoded = decode_body(coded, headers={"content-encoding": coding.upper()})
    assert CAFE in decoded.text
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(coded), coded)
    headers = {"Transfer-Encoding": "chunked", "Content-Encoding": coding}
    assert undo_content_coding(headers, chunked) == CODED_PAGE


def test_several_content_codings_are_undone_last_first():
    twice = gzip.compress(bytes(cramjam.brotli.compress(CODED_PAGE)))
    assert undo_content_coding({"Content-Encoding": "br, gzip"}, twice) == CODED_PAGE
    once = gzip.compress(CODED_PAGE)  # a header repeated: "gzip, gzip" for one gzip
    assert undo_content_coding({"Content-Encoding": "gzip, gzip"}, once) == CODED_PAGE
    assert undo_content_coding({"Content-Encoding": "identity, gzip"}, once) == CODED_PAGE


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_a_body_stored_decoded_under_its_original_headers_is_taken_as_it_is(coding):
    assert undo_content_coding({"Content-Encoding": coding}, CODED_PAGE) == CODED_PAGE
    text = b"plain text, no markup, stored decoded"
    assert undo_content_coding({"Content-Encoding": coding}, text) == text


def test_a_corrupt_coded_body_is_an_error_that_says_so():
    with pytest.raises(ContentCodingError, match="gzip"):
        decode_body(
            gzip.compress(CODED_PAGE)[:20] + b"x" * 40, headers={"Content-Encoding": "gzip"}
        )
    with pytest.raises(ContentCodingError, match="br"):
        decode_body(bytes(range(256)), headers={"Content-Encoding": "br"})
    # a body cut off by the crawler's size limit decodes to its beginning
    cut = gzip.compress(CODED_PAGE * 200)[:400]
    assert decode_body(cut, headers={"Content-Encoding": "gzip"}).text.startswith("<html>")


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_a_coded_body_decodes_to_at_most_max_bytes(coding):
    big = b"<p>" + b"a" * 300_000
    coded = {
        "gzip": gzip.compress,
        "deflate": zlib.compress,
        "br": lambda b: bytes(cramjam.brotli.compress(b)),
        "zstd": lambda b: bytes(cramjam.zstd.compress(b)),
    }[coding](big)
    assert len(coded) < 2_000  # a bomb, in small
    with pytest.raises(DecodedTooLarge):
        decode_body(coded, headers={"Content-Encoding": coding}, max_bytes=100_000)
    assert decode_body(coded, headers={"Content-Encoding": coding}, max_bytes=400_000).text


def test_a_content_type_of_spaces_after_charset_is_searched_in_linear_time():
    import time

    started = time.monotonic()
    assert charset_from_content_type("text/html; charset=" + " " * 100_000) is None
    assert charset_from_content_type("text/html; charset = ' utf-8'") == "utf-8"
    assert decode_body(b"<meta charset=" + b" " * 8178 + b"x>").text
    assert time.monotonic() - started < 1  # a minute before
