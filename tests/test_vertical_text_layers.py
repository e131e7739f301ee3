"""Born-digital PDFs whose text layer is vertical (tategaki): real TeX output (LuaLaTeX +
luatexja, upLaTeX + dvipdfmx) of maint-guide paragraphs in ja, zh-cn and zh-tw, one and two
tiers, with section headings (tests/fixtures/vertical-layer, scripts/make_vertical_text_pdfs.py,
the measurement half of the paragraphs). Read in column order: tier by tier, columns right
to left, each top to bottom.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import scan_pages
from make_vertical_text_pdfs import HEADING_MARK, read_truth
from pipeline.stages import extract

LAYERS = Path(__file__).parent / "fixtures" / "vertical-layer"
PDFS = sorted(LAYERS.glob("*.pdf"))
VERTICAL_FORMS = re.compile(r"[\ufe10-\ufe19\ufe30-\ufe4f]")
HYPHENATED = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+")


def test_every_kind_and_language_has_a_fixture():
    names = {p.stem for p in PDFS}
    assert {f"{lang}-lualatex-{tiers}" for lang in ("ja", "zh-cn", "zh-tw") for tiers in ("1tier", "2tier")} <= names
    assert {"ja-uplatex-1tier", "ja-lualatex-numbered"} <= names


@pytest.mark.parametrize("pdf", PDFS, ids=[p.stem for p in PDFS])
def test_vertical_layer_is_read_in_column_order(settings, pdf):
    truth = read_truth(pdf)
    doc = extract.extract_file(pdf, settings)
    assert all(p.method == "text_layer" and p.direction == "vertical" for p in doc.pages if len(p.text) > 25)
    text = "\n".join(p.text for p in doc.pages)
    assert scan_pages.cer(truth, text) <= 1.0
    # punctuation in its ordinary forms, as a horizontal page has it
    assert not VERTICAL_FORMS.search(text)
    for mark in "。、「」ー，":
        assert text.count(mark) == truth.count(mark), mark
    # a compound's hyphen that a column ends at is decided by the page's words ("lintian-overrides")
    for compound in set(HYPHENATED.findall(truth)):
        assert text.count(compound) == truth.count(compound), compound



@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_a_vertical_page_shown_turned_is_read_as_it_stands(settings, tmp_path, rotate):
    """The page with the most Latin set sideways (as many glyphs as its upright CJK ones): read
    the way its columns stand, whichever way the page is shown, its boxes placed as shown."""
    import pypdfium2 as pdfium

    pdf = LAYERS / "zh-tw-lualatex-2tier.pdf"
    (upright,) = extract.extract_file(pdf, settings).pages
    document = pdfium.PdfDocument(pdf)
    try:
        document[0].set_rotation(rotate)
        document.save(tmp_path / "turned.pdf")
    finally:
        document.close()
    (page,) = extract.extract_file(tmp_path / "turned.pdf", settings).pages
    assert page.direction == "vertical" and page.rotation == (-rotate) % 360 and page.text == upright.text
    assert all(0 <= b.bbox[0] < b.bbox[2] <= page.width and 0 <= b.bbox[1] < b.bbox[3] <= page.height
               for b in page.blocks)

@pytest.mark.parametrize("pdf", [p for p in PDFS if "2tier" in p.stem], ids=lambda p: p.stem)
def test_headings_start_blocks_and_tiers_are_read_in_turn(settings, pdf):
    """Each section heading is a block of its own, and the second heading (in the lower
    tier, or further left) comes after every paragraph of the first section."""
    lines = pdf.with_suffix(".txt").read_text(encoding="utf-8").splitlines()
    headings = [scan_pages.normalise(line.removeprefix(HEADING_MARK)) for line in lines if line.startswith(HEADING_MARK)]
    assert len(headings) == 2
    blocks = [scan_pages.normalise(b.text) for p in extract.extract_file(pdf, settings).pages for b in p.blocks]
    first, second = blocks.index(headings[0]), blocks.index(headings[1])
    assert first == 0 and second > first + 1
    assert sum(len(b) for b in blocks[first + 1:second]) > 400  # the first section's paragraphs come between


def test_a_page_number_under_the_text_is_read_last_and_across(settings):
    """Its two digits step right: they are one horizontal item below the tier, not two
    columns read right to left ("21")."""
    (page,) = extract.extract_file(LAYERS / "ja-lualatex-numbered.pdf", settings).pages
    last = page.blocks[-1]
    assert (last.text, last.direction) == ("12", "horizontal")
    assert all(b.direction == "vertical" for b in page.blocks[:-1])
