"""Honest text layers: pages whose text layer lies are OCRed, with the reason recorded.

The lying PDFs are made from a real page of the Japanese maint-guide by
scripts/make_lying_pdfs.py (its CJK font's Unicode map removed, sent to the Private Use
Area, or sent to spaces) and a page of pdfminer "(cid:NN)" placeholders.
"""

from __future__ import annotations

import make_lying_pdfs
import numpy as np
import pypdfium2 as pdfium
import pytest

from conftest import text_pdf
from pipeline.extraction.honesty import doubt, glyphs_read_as_spaces
from pipeline.extraction.pdf import Chars
from pipeline.stages import extract


@pytest.fixture(scope="module")
def lying(sample_corpus, tmp_path_factory):
    return make_lying_pdfs.write_all(tmp_path_factory.mktemp("lying"))


def layer(path) -> Chars:
    page = pdfium.PdfDocument(path)[0]
    return Chars(page.get_textpage(), page.get_size()[1])


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
