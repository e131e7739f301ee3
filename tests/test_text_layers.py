"""Honest text layers: pages whose text layer lies are OCRed, with the reason recorded.

The lying PDFs are made from a real page of the Japanese maint-guide by
scripts/make_lying_pdfs.py (its CJK font's Unicode map removed, sent to the Private Use
Area, sent to spaces, or kept with its blocks miscounted) and a page of pdfminer "(cid:NN)"
placeholders.
"""

from __future__ import annotations

from pathlib import Path

import make_lying_pdfs
import numpy as np
import pypdfium2 as pdfium
import pytest

from conftest import text_pdf
from pipeline.extraction.fonts import dropped_codes
from pipeline.extraction.honesty import doubt, glyphs_read_as_spaces
from pipeline.extraction.pdf import Chars, page_chars
from pipeline.stages import extract


@pytest.fixture(scope="module")
def lying(sample_corpus, tmp_path_factory):
    return make_lying_pdfs.write_all(tmp_path_factory.mktemp("lying"))


def layer(path) -> Chars:
    page = pdfium.PdfDocument(path)[0]
    return page_chars(page)


@pytest.mark.parametrize("name, reason", [("honest", None), ("cjk-no-tounicode", "unmapped_glyphs"),
                                          ("cjk-pua", "private_use"), ("cid-codes", "cid_codes"),
                                          ("cjk-to-spaces", "glyphs_as_spaces")])
def test_lying_layers_are_told_from_the_honest_page(lying, name, reason):
    chars = layer(lying[name])
    assert doubt(chars.text, chars.ink, glyphs_read_as_spaces(chars)) == reason


def test_real_space_glyphs_are_not_glyphs_read_as_spaces(tmp_path):
    """A producer that writes every word gap as a space glyph (matplotlib here, office
    suites alike): the spaces are characters of the layer, but they leave no ink."""
    chars = layer(text_pdf("Rosetta reads born-digital pages from their text layer. " * 40, tmp_path / "spaces.pdf"))
    spaces = chars.text.count(" ")
    assert spaces > 200
    assert glyphs_read_as_spaces(chars) == 0.0
    assert doubt(chars.text, chars.ink, glyphs_read_as_spaces(chars)) is None


def test_c1_control_characters_make_the_layer_doubted():
    """Greek set in an LGR font, as PDFium reads it (greek-utf8.pdf of texlive-lang-german)."""
    text = "Thlèfwno (-a) (Proairetik\x88, bl. odhgÐec)\r\n" * 3
    assert doubt(text, np.array([not c.isspace() for c in text])) == "control_characters"
    stray = "A long line of ordinary text. " * 3 + "One stray \x95 from a symbol font."
    assert doubt(stray, np.array([not c.isspace() for c in stray])) is None


def test_a_page_of_replacement_characters_is_doubted():
    text = "Debian " + "\ufffd" * 40 + " maint-guide"
    assert doubt(text, np.array([not c.isspace() for c in text])) == "replacement_chars"


@pytest.mark.parametrize("text", ["Straße, naïve café — “quoted” → ½ € © ∑ α β γ ЖЯ",
                                  "这是一个测试。日本語のテキスト、カタカナ。한국어",
                                  "icons \ue000\ue001 in a long line of ordinary English text, " * 3])
def test_honest_text_is_not_doubted(text):
    assert doubt(text, np.array([not c.isspace() for c in text])) is None


@pytest.mark.parametrize("name, reason", [("cjk-no-tounicode", "unmapped_glyphs"), ("cjk-to-spaces", "glyphs_as_spaces")])
def test_a_cjk_font_without_a_true_unicode_map_is_ocred(lying, settings, name, reason):
    """Before: glyph ids in stray scripts, or spaces; after: the page's Japanese, read by OCR."""
    before = layer(lying[name]).text
    assert "パッチ" not in before and "patchutils" in before  # the Latin fonts kept their maps
    (page,) = extract.extract_file(lying[name], settings).pages
    assert (page.method, page.ocr_reason) == ("ocr", reason)
    assert "パッチ" in page.text and "patchutils" in page.text
    (honest,) = extract.extract_file(lying["honest"], settings).pages
    assert (honest.method, honest.ocr_reason) == ("text_layer", None)


# A safety notice in the languages of a product's markets, as manuals print it: four of its
# scripts (Arabic, Hebrew, Armenian, Georgian) lie outside the configured languages' blocks.
MULTILINGUAL_NOTICE = """Warning: disconnect the mains supply before opening the housing.
Warnung: Vor dem Öffnen des Gehäuses die Netzversorgung trennen.
Advertencia: desconecte la alimentación de red antes de abrir la carcasa.
تحذير: افصل مصدر الطاقة الرئيسي قبل فتح الغلاف.
אזהרה: נתקו את אספקת החשמל לפני פתיחת המארז.
Զգուշացում. անջատեք էլեկտրասնուցումը՝ նախքան պատյանը բացելը։
გაფრთხილება: კორპუსის გახსნამდე გამორთეთ ელექტროკვება.
Внимание: перед открытием корпуса отключите сетевое питание.
Προειδοποίηση: αποσυνδέστε την τροφοδοσία πριν ανοίξετε το περίβλημα.
"""


def test_text_in_scripts_outside_the_configured_languages_is_read_from_the_layer(settings, tmp_path):
    """Words of Arabic or Georgian keep to their script, where glyph ids read as text jump
    between unrelated scripts character by character: a multilingual page is no lying layer,
    and OCR in the configured languages would lose every line of it."""
    (page,) = extract.extract_file(text_pdf(MULTILINGUAL_NOTICE * 2, tmp_path / "notice.pdf"), settings).pages
    assert (page.method, page.ocr_reason) == ("text_layer", None)
    assert "Netzversorgung trennen" in page.text and "გაფრთხილება" in page.text and "אזהרה" in page.text


@pytest.mark.parametrize("text", ["Anlage 3", "ii"])
def test_a_short_text_layer_the_ocr_reads_no_more_of_is_kept(settings, tmp_path, text):
    """A cover page's title, a page number: under 25 characters, the page is OCRed as a scan
    might be; the OCR reads the same or less (nothing of a small "ii"), so the layer stands."""
    (page,) = extract.extract_file(text_pdf(text, tmp_path / "short.pdf"), settings).pages
    assert (page.method, page.ocr_reason, page.text) == ("text_layer", None, text)


def test_a_unicode_map_with_miscounted_blocks_is_read_whole(lying, settings):
    """pdfcpu declares one entry more than it writes in a block of its fonts' ToUnicode maps;
    PDFium drops such a block and reads its glyphs as their ids: real letters of stray
    scripts ("をᲗう" for "を扱う") that no honesty check sees. The map's entries say what they
    are, as pdfminer and poppler read them: the page reads as the honest one."""
    before = layer(lying["cjk-miscounted"]).text
    assert "を扱う" not in before and "パッチを" in before  # the blocks counted right still read
    (page,) = extract.extract_file(lying["cjk-miscounted"], settings).pages
    (honest,) = extract.extract_file(lying["honest"], settings).pages
    assert (page.method, page.ocr_reason) == ("text_layer", None)
    assert [b.text for b in page.blocks] == [b.text for b in honest.blocks] and "を扱う" in page.text


CMAP = "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n{}endcmap end end\n"


@pytest.mark.parametrize("blocks, dropped", [
    ("2 beginbfchar\n<0010> <0041>\n<0011> <0042>\nendbfchar\n", {}),
    ("3 beginbfchar\n<0010> <0041>\n<0011> <0042>\nendbfchar\n", {0x10: "A", 0x11: "B"}),  # over
    ("1 beginbfchar\n<0010> <0041>\n<0011> <0042>\nendbfchar\n", {0x10: "A", 0x11: "B"}),  # under
    ("2 beginbfrange\n<0020> <0022> <0061>\n<0030> <0031> [<00E4> <00DF>]\nendbfrange\n", {}),
    ("1 beginbfrange\n<0020> <0022> <0061>\n<0030> <0031> [<00E4> <00DF>]\nendbfrange\n",
     {0x20: "a", 0x21: "b", 0x22: "c", 0x30: "ä", 0x31: "ß"}),
    # a code a block PDFium reads maps again is read by it
    ("2 beginbfchar\n<0010> <0041>\nendbfchar\n1 beginbfchar\n<0010> <0058>\nendbfchar\n", {}),
    ("2 beginbfchar <0003> /space <0010> <0041> endbfchar", {}),  # a glyph name is an entry too
    ("1 beginbfchar <0003> /space <0010> <0041> endbfchar", {0x10: "A"}),
])
def test_the_blocks_pdfium_drops_from_a_unicode_map(blocks, dropped):
    assert dropped_codes(CMAP.format(blocks).encode())[0] == dropped


def stamp_pdf(path, codes: list[int], cmap: str) -> Path:
    """A page whose text is drawn by a form XObject (a stamp, as pdfcpu and editors add them)
    in a two-byte font with the ToUnicode map ``cmap``, one glyph per code; no font program
    (PDFium and pdfminer read the text by the map alone)."""
    content = b"q /Stamp Do Q"
    form = ("BT /F1 24 Tf 72 700 Td <" + "".join(f"{c:04X}" for c in codes) + "> Tj ET").encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Stamp 9 0 R >> >>"
        b" /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+Stamp /Encoding /Identity-H /DescendantFonts [6 0 R]"
        b" /ToUnicode 7 0 R >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /ABCDEF+Stamp /CIDSystemInfo << /Registry (Adobe)"
        b" /Ordering (Identity) /Supplement 0 >> /FontDescriptor 8 0 R /DW 1000 >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(cmap.encode()), cmap.encode()),
        b"<< /Type /FontDescriptor /FontName /ABCDEF+Stamp /Flags 4 /FontBBox [0 -200 1000 800] /ItalicAngle 0"
        b" /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 >>",
        b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >>"
        b" /Length %d >>\nstream\n%s\nendstream" % (len(form), form),
    ]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def test_a_stamps_font_is_read_by_its_whole_map(tmp_path):
    """The font sits in a form XObject's resources, as a stamp's does; one dropped block holds
    a code PDFium reads as half a surrogate pair (U+DE14, Unifont's "１" in pdfcpu's
    Japanese stamp), another a code it reads as a letter the counted block also gives ("Ä"
    at 0x00C4, the dropped block's "Ö"): that one may be right, and is read where it is drawn."""
    from pipeline.extraction.fonts import PageFonts

    cmap = CMAP.format("2 beginbfchar\n<0031> <0031>\n<0032> <00C4>\nendbfchar\n"
                       "4 beginbfchar\n<0010> <4EBA>\n<0011> <9593>\n<DE14> <FF11>\n<00C4> <00D6>\n"
                       "<0020> <0020>\nendbfchar\n")  # 5 entries declared 4
    path = stamp_pdf(tmp_path / "stamp.pdf", [0x10, 0x11, 0xDE14, 0x31, 0x32, 0xC4], cmap)
    assert layer(path).text == "\x10\x11\ufffd1ÄÄ"  # PDFium: the dropped block's codes
    import pdfplumber

    with pdfplumber.open(path) as plumber:
        page = pdfium.PdfDocument(path)[0]
        chars = page_chars(page, PageFonts(lambda: plumber.pages[0]))
        assert chars.text == "人間１1ÄÖ"


def test_reading_a_pages_fonts_keeps_no_page_image_in_memory(tmp_path):
    """Forms are found among a page's XObjects, which pdfminer resolves with their bytes and
    keeps for the document's life: a scan's page images all stayed (47 MB for 30 pages)."""
    import pdfplumber
    from PIL import Image

    from pipeline.extraction.fonts import PageFonts

    rng = np.random.default_rng(0)
    pages = [Image.fromarray(rng.integers(0, 255, (400, 300, 3), dtype=np.uint8)) for _ in range(3)]
    path = tmp_path / "scan.pdf"
    pages[0].save(path, save_all=True, append_images=pages[1:], quality=90)
    maps: dict = {}
    with pdfplumber.open(path) as plumber:
        for index in range(3):
            assert PageFonts(lambda: plumber.pages[index], maps).misread() == {}
        kept = [obj for obj, _ in plumber.doc._cached_objs.values() if getattr(obj, "rawdata", None)]
        assert sum(len(obj.rawdata) for obj in kept) < 10_000


def test_a_page_pdfminer_cannot_read_keeps_pdfiums_reading():
    """The position lookup parses the page with pdfminer, which fails on content PDFium reads;
    that raised out of the text layer's reading and quarantined the document as corrupt."""
    from pipeline.extraction.fonts import PageFonts

    class Unreadable:
        rotation = 0
        page_obj = type("PDFPage", (), {"mediabox": (0, 0, 612, 792)})()

        @property
        def chars(self):
            raise ValueError("pdfminer: unexpected token in the content stream")

    assert PageFonts(Unreadable).texts_at(None, [(0, "Roboto-Regular")]) == {}
