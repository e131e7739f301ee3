"""Extraction on real files: text layers, every scanned page kind, mixed pages, bad files.

Fixtures are committed (tests/fixtures, made by scripts/make_test_fixtures.py,
scripts/make_page_kind_fixtures.py and scripts/make_ligature_fixture.py; files from other
projects with a .txt beside them saying where from). OCR runs the real engines; CER bounds are loose
enough for a small page (a few characters) and tight enough to catch a wrong reading
order, rotation or engine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import scan_pages
from conftest import text_pdf
from make_test_fixtures import assemble_pdf
from pipeline.batch import discovery
from pipeline.batch.runner import run_stage
from pipeline.cli.main import main as cli_main
from pipeline.contracts import DocRef, DocumentError
from pipeline.extraction import scans, tables
from pipeline.extraction.annotations import utf16_string
from pipeline.extraction.fonts import PageFonts
from pipeline.extraction.pdf import PAD, clean_text, pdfium_document, text_by_index
from pipeline.stages import EXTRACT, extract, stage
from pipeline.stores import secrets

FIXTURES = Path(__file__).parent / "fixtures"
KINDS = FIXTURES / "kinds"


def truth(pdf: Path) -> str:
    return pdf.with_suffix(".txt").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "name, direction, rotation, engine, max_cer",
    [
        # 78 characters; the sideways ASCII colon at the end is read as ":…" (3.8 %)
        ("ja-vertical", "vertical", 0, "jpn_vert", 4.0),
        ("ja-vertical-rot180", "vertical", 180, "jpn_vert", 3.0),
        # one 34-character paragraph whose “” are set as vertical quotes, read as 『』
        ("zh-cn-vertical", "vertical", 0, "rapidocr", 10.0),
        ("zh-tw-vertical-2tier", "vertical", 0, "rapidocr", 4.0),
        ("de-horizontal", "horizontal", 0, "rapidocr", 1.5),
        ("en-two-column", "horizontal", 0, "rapidocr", 1.5),
        # code in vertical Chinese: columns with Latin are read by Tesseract too and merged
        ("zh-tw-vertical-code", "vertical", 0, "rapidocr", 2.0),
        # Latin pages turned by 90 degrees read correctly in their visual layout (see
        # docs/extraction.md): the direction reported is the visual one. CJK pages ask
        # Tesseract OSD which way their glyphs stand.
        ("es-horizontal-rot90", "vertical", 180, "rapidocr", 1.5),
        ("zh-cn-horizontal-rot270", "horizontal", 270, "rapidocr", 3.0),
    ],
)
def test_scanned_page_kinds(settings, name, direction, rotation, engine, max_cer):
    pdf = KINDS / f"{name}.pdf"
    doc = extract.extract_file(pdf, settings, doc_id=name)
    (page,) = doc.pages
    assert page.method == "ocr"
    assert page.direction == direction and page.rotation == rotation
    assert engine in page.engine
    assert all(b.method == "ocr" and engine in (b.engine or "") for b in page.blocks)
    assert scan_pages.cer(truth(pdf), page.text) <= max_cer


def test_code_in_vertical_chinese_keeps_its_symbols(settings):
    """Upright full-width ： and - in vertical Chinese reach PP-OCR sideways (it read
    "installgentoo", "gentootarget"); Tesseract chi_tra_vert reads them upright."""
    doc = extract.extract_file(KINDS / "zh-tw-vertical-code.pdf", settings, doc_id="code")
    (page,) = doc.pages
    assert "chi_tra_vert" in page.engine and any("chi_tra_vert" in e for e in doc.engines)
    text = scan_pages.normalise(page.text)
    assert "install:gentoo" in text and "gentoo-target" in text


def test_vertical_chinese_without_its_tesseract_model_keeps_the_pp_ocr_read(settings, caplog):
    """The Tesseract read only adds symbols: a missing model is a warning, not a failure."""
    languages = {**settings.languages, "zh": settings.languages["zh"].model_copy(
        update={"tesseract_vertical": "no_such_vert", "tesseract_vertical_traditional": "no_such_vert"})}
    crippled = settings.model_copy(update={"languages": languages})
    (page,) = extract.extract_file(KINDS / "zh-tw-vertical-code.pdf", crippled, doc_id="code").pages
    assert "no_such_vert unavailable" in caplog.text and "tesseract" not in page.engine
    assert scan_pages.cer(truth(KINDS / "zh-tw-vertical-code.pdf"), page.text) < 10


def test_heading_over_vertical_text_is_read_in_its_own_direction(settings):
    """A horizontal heading over vertical Japanese: read as a line, first, by PP-OCR;
    the body as columns by jpn_vert (read as one page, the heading came out reversed:
    each of its glyphs was taken for a column, right to left)."""
    pdf = KINDS / "ja-vertical-heading.pdf"
    heading, *body = truth(pdf).splitlines()
    (page,) = extract.extract_file(pdf, settings, doc_id="heading").pages
    directions = [b.direction for b in page.blocks]
    assert directions == sorted(directions) and set(directions) == {"horizontal", "vertical"}  # heading first
    top = [b for b in page.blocks if b.direction == "horizontal"]
    assert all("rapidocr" in b.engine for b in top)
    assert all("jpn_vert" in b.engine for b in page.blocks if b.direction == "vertical")
    assert scan_pages.cer(heading, "".join(b.text for b in top)) <= 5.0
    assert scan_pages.cer(truth(pdf), page.text) <= 6.0


def test_two_tier_and_two_column_reading_order(settings):
    """Paragraphs come out in reading order: tier by tier, left column before right."""
    for name in ("zh-tw-vertical-2tier", "en-two-column"):
        pdf = KINDS / f"{name}.pdf"
        page = extract.extract_file(pdf, settings).pages[0]
        paragraphs = [scan_pages.normalise(p) for p in truth(pdf).splitlines() if p.strip()]
        text = scan_pages.normalise(page.text)
        # each paragraph's start is found after the previous one's
        positions = [text.find(p[:6]) for p in paragraphs]
        assert all(p >= 0 for p in positions), (name, positions)
        assert positions == sorted(positions), (name, positions)


@pytest.mark.parametrize("name, max_cer", [("image-only", 1.0), ("zh-small", 1.0),
                                           # 5 columns, 124 characters: one misread (0.8 %)
                                           ("ja-vertical-small", 2.5)])
def test_image_only_fixtures_are_ocred(settings, name, max_cer):
    pdf = FIXTURES / f"{name}.pdf"
    page = extract.extract_file(pdf, settings).pages[0]
    assert page.method == "ocr" and page.ocr_reason == "no_text_layer"
    assert scan_pages.cer(truth(pdf), page.text) <= max_cer


def test_mixed_page_reads_text_layer_and_scanned_region(settings):
    pdf = KINDS / "mixed-page.pdf"
    (page,) = extract.extract_file(pdf, settings).pages
    assert page.method == "text_layer" and page.ocr_reason == "scanned_region"
    methods = [b.method for b in page.blocks]
    assert methods == ["text_layer", "ocr"]
    assert scan_pages.cer(truth(pdf), page.text) <= 1.0


def test_a_chunk_carries_how_its_own_pages_were_read(settings, tmp_path):
    """A born-digital document with a scanned page (a contract's signed last page): the chunks
    of its text-layer pages are text layer, those of the scanned page OCR; the document both."""
    import pypdfium2 as pdfium

    from pipeline.stages import chunk, language, structure
    from pipeline.stages.enrich import extraction_method

    merged = pdfium.PdfDocument.new()
    for part in ("en-born-digital.pdf", "image-only.pdf"):
        merged.import_pages(pdfium.PdfDocument(FIXTURES / part))
    merged.save(tmp_path / "contract.pdf")
    cleaned = language.clean_and_detect(extract.extract_file(tmp_path / "contract.pdf", settings), settings)
    assert cleaned.extraction_methods == ["ocr", "text_layer"]
    chunks = chunk.chunk_document(cleaned, structure.tag(cleaned), settings).chunks
    methods = {(c.page_start, c.page_end): extraction_method(cleaned, c) for c in chunks}
    assert {pages[0] for pages in methods} == {1, 2, 3}
    assert all(method == ("ocr" if pages == (3, 3) else "ocr+text_layer" if 3 in pages else "text_layer")
               for pages, method in methods.items()), methods
    assert methods.get((3, 3)) == "ocr" and methods.get((1, 1)) == "text_layer"
    # a workspace written before pages kept their methods: the document's, as then
    old = cleaned.model_copy(update={"pages": [p.model_copy(update={"methods": []}) for p in cleaned.pages]})
    assert {extraction_method(old, c) for c in chunks} == {"ocr+text_layer"}


def test_born_digital_text_layer(settings):
    doc = extract.extract_file(FIXTURES / "en-born-digital.pdf", settings, doc_id="en", sha256="x")
    assert [(p.method, p.ocr_reason) for p in doc.pages] == [("text_layer", None), ("text_layer", None)]
    assert doc.engines[0].startswith("pdfium-")
    text = "\n".join(p.text for p in doc.pages)
    assert "Debian" in text and "  " not in text  # words spaced, not glued or doubled
    assert "\ufffe" not in text and "\u00ad" not in text
    for page in doc.pages:
        for block in page.blocks:
            x0, top, x1, bottom = block.bbox
            assert 0 <= x0 < x1 <= page.width and 0 <= top < bottom <= page.height


def ruled_table_pdf(path: Path, rows: list[tuple[str, ...]]) -> Path:
    """A born-digital page with a table ruled the way dblatex rules the Debian manuals'
    tables: horizontal rules across the whole table, vertical rules only between
    columns (no outer sides)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["pdf.fonttype"] = 42
    from matplotlib import pyplot as plt
    from matplotlib.lines import Line2D

    figure = plt.figure(figsize=(8.27, 11.69))
    figure.text(0.08, 0.9, "Package split scenario for the libraries below.", fontsize=10, family="DejaVu Sans")
    columns, top, pitch = [0.1, 0.32, 0.52, 0.7], 0.85, 0.03
    for r, row in enumerate(rows):
        for x, cell in zip(columns, row):
            figure.text(x, top - (r + 0.7) * pitch, cell, fontsize=9, family="DejaVu Sans")
    bottom = top - len(rows) * pitch
    for y in [top - r * pitch for r in range(len(rows) + 1)]:
        figure.add_artist(Line2D([0.08, 0.92], [y, y], linewidth=0.6, color="black"))
    for x in columns[1:]:
        figure.add_artist(Line2D([x - 0.01, x - 0.01], [bottom, top], linewidth=0.6, color="black"))
    figure.text(0.08, bottom - 0.04, "The development package holds the unversioned symlink.", fontsize=10,
                family="DejaVu Sans")
    figure.savefig(path, format="pdf")
    plt.close(figure)
    return path


def test_table_ruled_only_between_columns_is_read_whole_and_once(settings, tmp_path):
    """pdfplumber finds such a table without its first and last columns; its rows came
    out twice (as text lines and as a partial table) on the Debian manuals' pages."""
    rows = [("Package", "Architecture:", "Multi-Arch:", "Contents"),
            ("libfoo1", "any", "same", "shared library"),
            ("libfoo1-dbg", "any", "same", "debugging symbols"),
            ("libfoo-dev", "any", "same", "development files")]
    doc = extract.extract_file(ruled_table_pdf(tmp_path / "table.pdf", rows), settings, doc_id="table")
    (page,) = doc.pages
    (table,) = [b for b in page.blocks if b.kind == "table"]
    assert table.text.splitlines() == [" | ".join(row) for row in rows]
    assert page.text.count("libfoo1-dbg") == 1 and page.text.count("debugging symbols") == 1
    assert [b.kind for b in page.blocks] == ["text", "table", "text"]
    assert "pdfplumber" in page.engine


def one_font_pdf(path: Path, content: bytes, boxes: bytes, font: list[bytes]) -> Path:
    """A one-page PDF of the content stream ``content``, its page dictionary's ``boxes``
    (MediaBox, CropBox, /Rotate) as given, its text in the font /F1: ``font``'s objects, numbered
    from 5 (the font dictionary first)."""
    path.write_bytes(assemble_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R %s /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>" % boxes,
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content), *font]))
    return path


def helvetica_pdf(path: Path, content: bytes, boxes: bytes) -> Path:
    """``one_font_pdf`` in Helvetica."""
    return one_font_pdf(path, content, boxes, [b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"])


def grid_pdf(path: Path, lines: int, size: float = 800.0, spread: bool = False) -> Path:
    """A page ruled by ``lines`` + 1 lines each way, as a spreadsheet printed to one page is,
    with a label in every tenth cell of its first column and a title above it; with ``spread``,
    on the right half of a spread twice as wide, the page cropped to that half and 20 pt off
    its top."""
    step = size / lines
    ops = ["0.3 w"]
    for i in range(lines + 1):
        at = 20 + i * step
        ops += [f"20 {at:.2f} m {20 + size:.2f} {at:.2f} l S", f"{at:.2f} 20 m {at:.2f} {20 + size:.2f} l S"]
    ops += ["BT /F1 12 Tf 1 0 0 1 20 830 Tm (Register of processing activities) Tj /F1 4 Tf"]
    ops += [f"1 0 0 1 21 {21 + i * step:.2f} Tm (row{i}) Tj" for i in range(0, lines, 10)]
    content = "\n".join(["1 0 0 1 840 0 cm" if spread else "", *ops, "ET"]).encode()
    boxes = b"/MediaBox [0 0 1680 850] /CropBox [840 0 1680 830]" if spread else b"/MediaBox [0 0 840 850]"
    return helvetica_pdf(path, content, boxes)


def spread_half_pdf(path: Path, half: str = "right") -> Path:
    """One half of a two-page spread, as a scanned journal's pages are cut: a 1200 x 800
    MediaBox with the CropBox on its right half (from y 100 up), a line of text on each half and
    a grayscale image (a scanned region, white) on each; the left half is not shown. With
    ``half="left"`` the visible page is the left half, the CropBox cut at its right edge only."""
    image = b"\xff" * 40 * 40
    shown, hidden = (650, 50) if half == "right" else (50, 650)
    content = (b"BT /F1 14 Tf 1 0 0 1 %d 700 Tm (Visible: the Supplier keeps its records for ten years.) Tj "
               b"1 0 0 1 %d 700 Tm (Hidden: the back cover of the spread.) Tj ET "
               b"q 400 0 0 300 %d 200 cm /Scan Do Q q 400 0 0 300 %d 200 cm /Scan Do Q"
               % (shown, hidden, shown + 50, hidden))
    path.write_bytes(assemble_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 1200 800] /CropBox %s /Contents 4 0 R "
        % (b"[600 100 1200 800]" if half == "right" else b"[0 100 600 800]") +
        b"/Resources << /Font << /F1 5 0 R >> /XObject << /Scan 6 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /XObject /Subtype /Image /Width 40 /Height 40 /ColorSpace /DeviceGray /BitsPerComponent 8 "
        b"/Length %d >>\nstream\n%s\nendstream" % (len(image), image)]))
    return path


def test_a_page_shows_its_crop_box_and_is_read_from_its_corner(settings, tmp_path):
    """pymupdf's test_2904.pdf, a journal's cover cut from its spread: the scanned region's box,
    in the PDF's user space, cropped nothing of the page's render and failed the document
    (OpenCV: an empty image), and the hidden back cover's text was read with the front's."""
    (left,) = extract.extract_file(spread_half_pdf(tmp_path / "left.pdf", "left"), settings).pages
    assert "Supplier keeps its records" in left.text and "Hidden" not in left.text, left.text
    (page,) = extract.extract_file(spread_half_pdf(tmp_path / "spread.pdf"), settings).pages
    assert (page.width, page.height) == (600, 700)
    assert "Supplier keeps its records" in page.text and "Hidden" not in page.text, page.text
    assert page.ocr_reason == "scanned_region"  # the visible image was read (it holds no text)
    (line,) = [b for b in page.blocks if "Supplier" in b.text]
    x0, top, x1, bottom = line.bbox
    assert 49 < x0 < 51 and 85 < top < bottom < 105 and x1 < 600, line.bbox  # 650 - 600; 800 - 700, 14 pt


def test_a_crop_box_reaching_past_the_media_box_shows_the_media_box(settings, tmp_path):
    """A CropBox larger than the MediaBox shows no more than it (PDFium renders the two's
    intersection): boxes stay where the render has them."""
    content = b"BT /F1 14 Tf 1 0 0 1 50 700 Tm (The Supplier keeps its records for ten years.) Tj ET"
    pdf = helvetica_pdf(tmp_path / "wide-crop.pdf", content, b"/MediaBox [0 0 612 792] /CropBox [-20 -20 700 800]")
    (page,) = extract.extract_file(pdf, settings).pages
    ((x0, top, _, _),) = [b.bbox for b in page.blocks]
    assert (page.width, page.height) == (612, 792) and 49 < x0 < 51 and 75 < top < 92, (x0, top)


def test_a_table_on_a_cropped_page_is_found_where_its_text_is(settings, tmp_path):
    """pdfplumber places a table from the MediaBox's top-left corner, PDFium's text from the
    CropBox's: on a page cropped off the MediaBox's top the table's rows were read twice, as
    the table and as lines outside it."""
    (page,) = extract.extract_file(grid_pdf(tmp_path / "spread.pdf", 30, spread=True), settings).pages
    (table,) = [b for b in page.blocks if b.kind == "table"]
    assert all(f"row{i}" in table.text for i in range(0, 30, 10))
    assert not any(f"row{i}" in b.text for b in page.blocks if b.kind != "table" for i in range(0, 30, 10))
    assert 0 <= table.bbox[0] and table.bbox[2] <= page.width and 0 <= table.bbox[1] < table.bbox[3] <= page.height


TURNED_PARAGRAPHS = [["The Supplier keeps its records for ten years after the end of the contract.",
                      "Each party may audit the records of the other once a year on thirty days notice."],
                     ["A second paragraph starts here after a blank line between the two of them.",
                      "It has two lines so that the reader can tell where the paragraph breaks."]]


def turned_text_pdf(path: Path, rotate: int, turn: int) -> Path:
    """Two paragraphs drawn turned ``turn`` degrees counter-clockwise on a page shown turned
    ``rotate`` degrees clockwise (its /Rotate): a landscape page when the two are equal, a table
    set sideways on a portrait page, a page drawn upside down, a page shown on its side."""
    lines = [line for paragraph in TURNED_PARAGRAPHS for line in [*paragraph, ""]]
    cos, sin = {0: (1, 0), 90: (0, 1), 180: (-1, 0), 270: (0, -1)}[turn]
    about = 306  # turned about the page's middle (306, 306 + 90): it stays on the page
    content = "\n".join([f"{cos} {sin} {-sin} {cos} {about - cos * about + sin * (about + 90)} "
                         f"{about + 90 - sin * about - cos * (about + 90)} cm",
                         "BT /F1 11 Tf 14 TL 60 520 Td", *(f"({line}) '" for line in lines), "ET"]).encode()
    return helvetica_pdf(path, content, b"/MediaBox [0 0 612 792] /Rotate %d" % rotate)


def shown_ink(pdf: Path) -> tuple[float, float, float, float]:
    """The box of the dark pixels of the page as PDFium shows it, in points from its top-left."""
    import numpy as np
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        pixels = document[0].render(scale=1, grayscale=True).to_numpy()
    finally:
        document.close()
    ys, xs = np.nonzero((pixels[..., 0] if pixels.ndim == 3 else pixels) < 128)
    return float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)


@pytest.mark.parametrize("rotate, turn", [(0, 90), (0, 180), (0, 270), (90, 90), (270, 270), (90, 0), (180, 0),
                                          (270, 180)])
def test_text_is_read_the_way_it_stands_and_placed_where_the_page_shows_it(settings, tmp_path, rotate, turn):
    """A landscape page, a table set sideways on a portrait page, a page shown on its side:
    PDFium gives boxes in the PDF's user space and orders a line's pieces as the page is shown,
    so turned text came out a paragraph a line, its lines backwards, or a letter a line as
    vertical CJK, its boxes off the page."""
    pdf = turned_text_pdf(tmp_path / f"turned-{rotate}-{turn}.pdf", rotate, turn)
    (page,) = extract.extract_file(pdf, settings).pages
    assert page.direction == "horizontal" and page.rotation == (turn - rotate) % 360
    assert [block.text.splitlines() for block in page.blocks] == TURNED_PARAGRAPHS
    boxes = [block.bbox for block in page.blocks]
    union = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))
    assert all(abs(a - b) < 3 for a, b in zip(union, shown_ink(pdf))), (union, shown_ink(pdf))


def test_text_objects_drawn_turned_are_read_each_on_its_own_line(settings, tmp_path):
    """pypdf's AutoCad_Diagram.pdf: a landscape drawing whose labels and torque table are each a
    text object drawn turned; PDFium joins such objects into one line wherever they lie ("and
    fasten the screen clamp. Screen Inner ring Align REMARKS: Gland sizes / torque")."""
    items = [(322, 1186, "and fasten the screen clamp."), (682, 977, "Screen"), (494, 871, "Inner ring"),
             (308, 469, "REMARKS:"), (279, 469, "Gland sizes / torque"),
             (250, 430, "Thread (M) Range (mm) Torque (NM)"), (237, 430, "M20x1.5 8.0 - 15.0"),
             (222, 430, "M25x1.5 12.5 - 20.5 11")]
    content = "\n".join(f"BT /F1 100 Tf 0 -0.12 0.12 0 {x} {y} Tm ({text}) Tj ET" for x, y, text in items).encode()
    pdf = helvetica_pdf(tmp_path / "drawing.pdf", content, b"/MediaBox [0 0 842 1191] /Rotate 270")
    (page,) = extract.extract_file(pdf, settings).pages
    assert sorted(page.text.splitlines()) == sorted(text for _, _, text in items), page.text


def shown_turned(pdf: Path, path: Path, rotate: int) -> Path:
    """``pdf`` with its first page's /Rotate set to ``rotate``."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        document[0].set_rotation(rotate)
        document.save(path)
    finally:
        document.close()
    return path


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_a_scanned_region_on_a_turned_page_is_cut_from_where_the_page_shows_it(settings, tmp_path, rotate):
    """The region's box was placed in user space and cut from the render as shown: a page on its
    side failed the whole document (OpenCV: an empty image), one upside down lost the scan."""
    pdf = shown_turned(KINDS / "mixed-page.pdf", tmp_path / f"mixed-{rotate}.pdf", rotate)
    (page,) = extract.extract_file(pdf, settings).pages
    assert page.ocr_reason == "scanned_region" and [b.method for b in page.blocks] == ["text_layer", "ocr"]
    assert scan_pages.cer(truth(KINDS / "mixed-page.pdf"), page.text) <= 1.0


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_a_table_on_a_turned_page_is_read_in_rows_as_its_text_stands(settings, tmp_path, rotate):
    """pdfplumber reads a table as the page is shown: a table on a page shown on its side came
    out in columns with its words backwards, or a partial table (its open sides run down the
    page as shown), and its rows again as lines (their boxes in another frame than the table's)."""
    rows = [("Package", "Architecture:", "Multi-Arch:", "Contents"),
            ("libfoo1", "any", "same", "shared library"),
            ("libfoo1-dbg", "any", "same", "debugging symbols"),
            ("libfoo-dev", "any", "same", "development files")]
    pdf = shown_turned(ruled_table_pdf(tmp_path / "table.pdf", rows), tmp_path / f"table-{rotate}.pdf", rotate)
    (page,) = extract.extract_file(pdf, settings).pages
    (table,) = [b for b in page.blocks if b.kind == "table"]
    assert table.text.splitlines() == [" | ".join(row) for row in rows]
    assert page.text.count("debugging symbols") == 1 and [b.kind for b in page.blocks] == ["text", "table", "text"]
    assert 0 <= table.bbox[0] < table.bbox[2] <= page.width and 0 <= table.bbox[1] < table.bbox[3] <= page.height


def test_glyphs_flipped_in_their_font_and_drawn_turned_back_are_read_upright(tmp_path):
    """Tax forms draw their text in a Type 3 font whose matrix turns its glyphs upside down, with
    a text matrix that turns them back; PDFium's angle sees only the text matrix. The text steps
    right, against the baseline that angle gives: the page is read as it is shown."""
    import pypdfium2 as pdfium

    from pipeline.extraction.frame import upright_turn

    glyph = b"600 0 0 0 500 700 d1 0 0 500 700 re f"
    content = b"BT /F1 12 Tf -1 0 0 -1 60 700 Tm (aaaa aaa aaaaa aa aaaa) Tj ET"
    one_font_pdf(tmp_path / "flipped.pdf", content, b"/MediaBox [0 0 612 792]", [
        b"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 500 700] /FontMatrix [-0.001 0 0 -0.001 0 0] "
        b"/CharProcs << /a 6 0 R >> /Encoding << /Type /Encoding /Differences [97 /a] >> "
        b"/FirstChar 97 /LastChar 97 /Widths [600] >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(glyph), glyph)])
    document = pdfium.PdfDocument(tmp_path / "flipped.pdf")
    try:
        textpage = document[0].get_textpage()
        left, _, right, _ = textpage.get_charbox(0)
        assert textpage.get_charbox(1)[0] > right and textpage.get_text_range().startswith("aaaa")  # steps right
        assert upright_turn(textpage, 0) == 0
    finally:
        document.close()


def test_a_table_crossing_the_crop_box_is_read_for_the_part_shown(settings, tmp_path):
    """pymupdf's test_2904.pdf: pdfplumber's cells read the text the CropBox hides (a journal's
    spine, from the other half of its spread) into the cover's title: "Journal Journal of
    Feline of Feline"."""
    ops = ["0.5 w"]
    for i in range(4):
        ops += [f"700 {500 + 30 * i} m 1000 {500 + 30 * i} l S", f"{700 + 100 * i} 500 m {700 + 100 * i} 590 l S"]
    ops += ["BT /F1 10 Tf 1 0 0 1 720 570 Tm (hidden-spine) Tj 1 0 0 1 860 570 Tm (Supplier) Tj",
            "1 0 0 1 920 570 Tm (Term) Tj 1 0 0 1 860 540 Tm (Acme) Tj 1 0 0 1 920 540 Tm (ten) Tj ET"]
    pdf = helvetica_pdf(tmp_path / "cut.pdf", "\n".join(ops).encode(),
                        b"/MediaBox [0 0 1680 850] /CropBox [840 0 1680 850]")
    (page,) = extract.extract_file(pdf, settings).pages
    (table,) = [b for b in page.blocks if b.kind == "table"]
    assert "Supplier" in table.text and "Acme" in table.text
    assert "hidden" not in page.text and table.bbox[0] >= 0, (page.text, table.bbox)

def test_a_grid_too_big_for_the_table_finder_is_read_as_text(settings, tmp_path):
    """pdfplumber compares every crossing of rulings with every other: a 256 x 256 font
    table of pdfcpu's samples kept it over a minute on one page. Past MAX_CROSSINGS the page
    is read as text lines; a grid under it is still a table."""
    (big,) = extract.extract_file(grid_pdf(tmp_path / "big.pdf", 150), settings).pages
    assert tables.ruling_crossings(pdfium_document(tmp_path / "big.pdf")[0][0]) == 151 * 151 > tables.MAX_CROSSINGS
    assert (big.method, big.ocr_reason) == ("text_layer", None)
    assert "pdfplumber" not in big.engine and all(b.kind == "text" for b in big.blocks)
    assert "Register of processing activities" in big.text and all(f"row{i}" in big.text for i in range(0, 150, 10))
    (small,) = extract.extract_file(grid_pdf(tmp_path / "small.pdf", 30), settings).pages
    assert "pdfplumber" in small.engine and any(b.kind == "table" for b in small.blocks)


def test_a_cell_spanning_columns_is_one_cell_and_an_empty_cell_stays(settings, tmp_path):
    """A form's section title spans its table's columns: pdfplumber gives the places it
    covers as no cell (None), which were written as empty cells, " |  |  | " by the dozen on
    the forms of the library corpus (DD Form 293: 1,092 such places beside 63 cells of text).
    A cell that is there and empty keeps its place."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["pdf.fonttype"] = 42
    from matplotlib import pyplot as plt
    from matplotlib.lines import Line2D

    rows = [("SECTION 1: SUPPLIER",), ("Name", "ACME Logistik GmbH", "Country", "Germany"),
            ("VAT ID", "", "Registered", "yes")]
    figure = plt.figure(figsize=(8.27, 11.69))
    columns, top, pitch = [0.1, 0.3, 0.6, 0.75, 0.9], 0.85, 0.03
    for r, row in enumerate(rows):
        for x, cell in zip(columns, row):
            figure.text(x + 0.01, top - (r + 0.7) * pitch, cell, fontsize=9, family="DejaVu Sans")
    for r in range(len(rows) + 1):
        figure.add_artist(Line2D([columns[0], columns[-1]], [top - r * pitch] * 2, linewidth=0.6, color="black"))
    bottom = top - len(rows) * pitch
    for x in columns:
        upper = top if x in (columns[0], columns[-1]) else top - pitch  # the title row spans them all
        figure.add_artist(Line2D([x, x], [bottom, upper], linewidth=0.6, color="black"))
    path = tmp_path / "form-table.pdf"
    figure.savefig(path, format="pdf")
    plt.close(figure)
    (page,) = extract.extract_file(path, settings).pages
    (table,) = [b for b in page.blocks if b.kind == "table"]
    assert table.text.splitlines() == ["SECTION 1: SUPPLIER", "Name | ACME Logistik GmbH | Country | Germany",
                                       "VAT ID |  | Registered | yes"]


# a paragraph of lines ending in hyphens of every kind, set ragged as a word processor sets them
HYPHENATED = ["The model was trained zero-", "shot on the corpus, and its zero-shot results are given.",
              "Run apt-get source first; then apt-", "get fetches the package. Arbeitnehmer-",
              "und Arbeitgeberanteile werden gezahlt. Das kann vor-", "kommen, sagt die PostScript Referenz. Post-",
              "Script ist eine Sprache. Debian-", "Paketarchiv."]
HYPHENS_DECIDED = ["zero-shot on the corpus", "then apt-get fetches", "Arbeitnehmer- und Arbeitgeberanteile",
                   "Das kann vorkommen,", "PostScript ist", "Debian-Paketarchiv."]


def test_line_end_hyphens_are_decided_by_the_documents_words(tmp_path, settings):
    """A hyphen at a line end is a broken word or a compound's own hyphen: the document's other
    words decide ("zero-shot" and "apt-get" stay hyphenated, "PostScript" is joined), a hyphen
    before "und" leaves a compound's part out, and otherwise a break between lower-case letters
    joins its word. The same on the text layer (PDFium's marks) and on the page's scan (the
    OCR's "-" at a line end, its next line kept in the paragraph though the line is short)."""
    ops = ["BT /F1 11 Tf 14 TL 72 760 Td", *(f"({line}) Tj T*" for line in HYPHENATED), "ET"]
    pdf = helvetica_pdf(tmp_path / "hyphens.pdf", "\n".join(ops).encode(), b"/MediaBox [0 0 612 792]")
    document, _ = pdfium_document(pdf)
    document[0].render(scale=300 / 72, grayscale=True).to_pil().save(tmp_path / "hyphens.png", dpi=(300, 300))
    document.close()
    for path, method in [(pdf, "text_layer"), (tmp_path / "hyphens.png", "ocr")]:
        doc = extract.extract_file(path, settings)
        assert [p.method for p in doc.pages] == [method]
        text = " ".join(doc.pages[0].text.split())
        assert all(decided in text for decided in HYPHENS_DECIDED), (method, text)
        assert "\ufffe" not in text


def test_hyphens_a_producer_wrote_are_kept():
    """PDFium's line-end mark stays for the document to decide (pipeline.extraction.hyphens); a
    U+00AD drawn inside a line is the hyphen it shows ("Arabo-Latin", "non-existent")."""
    assert clean_text("vor\x02kommen") == "vor\ufffekommen"
    assert clean_text("Arabo\u00adLatin, non\u00adexistent") == "Arabo-Latin, non-existent"


@pytest.mark.parametrize(
    "name, reason",
    [
        ("corrupt.pdf", "corrupt_pdf"),
        ("encrypted.pdf", "encrypted_pdf"),
        ("zero-pages.pdf", "no_pages"),
        ("empty.pdf", "empty_file"),
        ("not-a-pdf.docx", "unsupported_format"),
        ("notes.txt", "unsupported_format"),
        ("missing.pdf", "missing_file"),
    ],
)
def test_bad_files_raise_document_error(settings, name, reason):
    with pytest.raises(DocumentError) as err:
        extract.extract_file(FIXTURES / name, settings)
    assert err.value.reason == reason


def test_bad_files_are_quarantined_and_the_batch_goes_on(settings, tmp_path):
    files = [FIXTURES / n for n in ("corrupt.pdf", "encrypted.pdf", "zero-pages.pdf", "en-born-digital.pdf")]
    manifest = discovery.write_manifest(settings, "extract-quarantine", "corpus_refresh",
                                    [discovery.source_document(f, settings, doc_id=f.stem) for f in files], [])
    results = {d.doc_id: run_stage(stage(EXTRACT), DocRef(batch_id=manifest.batch_id, doc_id=d.doc_id), settings)
               for d in manifest.documents}
    assert {k: (r.status, r.reason) for k, r in results.items()} == {
        "corrupt": ("quarantined", "corrupt_pdf"),
        "encrypted": ("quarantined", "encrypted_pdf"),
        "zero-pages": ("quarantined", "no_pages"),
        "en-born-digital": ("ok", None),
    }


def test_a_file_rewritten_after_discovery_is_quarantined_not_loaded_under_its_old_hash(settings, tmp_path):
    """A sync client or an editor saves a new version between discovery and extraction: the text
    read is not the content the manifest's sha256 names, so the document waits for the next
    refresh instead of loading under the wrong lineage; an unchanged file beside it is read."""
    import shutil

    policy, steady = tmp_path / "policy.pdf", tmp_path / "steady.pdf"
    text_pdf("Retention policy\nInvoices are kept for ten years.", policy)
    shutil.copy(FIXTURES / "en-born-digital.pdf", steady)
    manifest = discovery.write_manifest(settings, "extract-rewritten", "corpus_refresh",
                                        [discovery.source_document(f, settings, doc_id=f.stem) for f in (policy, steady)],
                                        [])
    found = policy.read_bytes()
    text_pdf("Retention policy\nInvoices are kept for eight years.", policy)  # saved again meanwhile
    results = {d.doc_id: run_stage(stage(EXTRACT), DocRef(batch_id=manifest.batch_id, doc_id=d.doc_id), settings)
               for d in manifest.documents}
    assert (results["policy"].status, results["policy"].reason) == ("quarantined", "source_changed")
    assert "policy.pdf changed while the batch read it" in results["policy"].detail
    assert results["steady"].status == "ok"

    # recorded as holding no known content: saved back as it was found, the file is read again
    from pipeline.batch import lifecycle
    from pipeline.batch.sync import plan_refresh
    from pipeline.stores.document_registry import DocumentRegistry

    lifecycle.finish_batch(manifest.batch_id, [results["policy"].model_dump()], {}, settings)
    row = DocumentRegistry(settings.document_registry_path).get("policy")
    assert (row.status, row.quarantine_reason, row.sha256) == ("quarantined", "source_changed", "")
    policy.write_bytes(found)
    plan = plan_refresh(settings, [discovery.found_file(policy)], [tmp_path])
    assert [d.doc_id for d in plan.todo] == ["policy"]


def test_cli_extract_json(settings, capsys):
    assert cli_main(["extract", str(KINDS / "mixed-page.pdf"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lang"] == "en" and out["lang_confidence"] > 0.85
    (page,) = out["pages"]
    assert page["lang"] == "en" and "removed" in out
    for block in page["blocks"]:
        assert {"text", "bbox", "direction", "method", "engine", "lang", "lang_confidence"} <= block.keys()
    assert [b["method"] for b in page["blocks"]] == ["text_layer", "ocr"]
    assert page["blocks"][1]["engine"].startswith("rapidocr")



def test_cli_extract_says_how_far_a_page_was_turned_to_read_it(settings, tmp_path, capsys):
    assert cli_main(["extract", str(turned_text_pdf(tmp_path / "sideways.pdf", 0, 90))]) == 0
    assert "page 1: text_layer horizontal" in (out := capsys.readouterr().out), out
    assert "2 block(s) en, read turned 90 degrees clockwise" in out, out

def test_table_rules_at_the_page_edge_do_not_fail_the_page(settings):
    """A real figure page (zhlineskip's Latinmetrics.pdf, texlive-lang-chinese 2022.20230122-1)
    whose rules start at the page's edge: the table crop once reached past the page and
    pdfplumber raised ValueError (so did 276-page debian-reference.de.pdf)."""
    (page,) = extract.extract_file(FIXTURES / "table-at-page-edge.pdf", settings).pages
    assert page.method == "text_layer" and "baseline" in page.text


@pytest.fixture
def pdf_passwords(settings, tmp_path, monkeypatch):
    """A private secrets folder whose ``pdf-passwords`` file the test writes."""
    monkeypatch.setattr(settings, "secrets_dir", tmp_path / "secrets")
    (tmp_path / "secrets").mkdir(mode=0o700)

    def write(*passwords: str):
        path = secrets.pdf_passwords_file(settings)
        path.write_text("".join(f"{p}\n" for p in passwords), encoding="utf-8")
        path.chmod(0o600)
        return path
    return write


def test_a_password_protected_pdf_opens_with_a_password_from_the_secrets_file(settings, pdf_passwords):
    """encrypted.pdf (RC4-128, user password "rosetta"): each password is tried in turn."""
    pdf_passwords("not-this-one", "", "rosetta")
    document = extract.extract_file(FIXTURES / "encrypted.pdf", settings)
    assert "Debian" in document.pages[0].text and document.pages[0].method == "text_layer"


def test_a_password_protected_pdf_says_where_its_password_goes(settings, pdf_passwords):
    with pytest.raises(DocumentError) as err:
        extract.extract_file(FIXTURES / "encrypted.pdf", settings)
    assert err.value.reason == "encrypted_pdf"
    assert f"encrypted.pdf is password-protected: add its password to {secrets.pdf_passwords_file(settings)}" \
        in err.value.detail
    pdf_passwords("wrong", "Rosetta")
    with pytest.raises(DocumentError) as err:
        extract.extract_file(FIXTURES / "encrypted.pdf", settings)
    assert "none of the 2 password(s) tried opens it" in err.value.detail


def test_a_password_file_others_can_read_is_refused(settings, pdf_passwords):
    pdf_passwords("rosetta").chmod(0o644)
    with pytest.raises(PermissionError, match="chmod 600"):
        extract.extract_file(FIXTURES / "encrypted.pdf", settings)


def test_a_password_protected_pdf_given_its_password_goes_through_the_stage_worker(settings, pdf_passwords):
    """Through run_stage (the isolated worker counts its pages for the deadline, then extracts)."""
    pdf_passwords("rosetta")
    manifest = discovery.write_manifest(settings, "extract-password", "corpus_refresh",
                                        [discovery.source_document(FIXTURES / "encrypted.pdf", settings)], [])
    (doc,) = manifest.documents
    result = run_stage(stage(EXTRACT), DocRef(batch_id=manifest.batch_id, doc_id=doc.doc_id), settings)
    assert (result.status, result.reason) == ("ok", None)


def test_a_pdf_encrypted_for_certificates_or_by_drm_says_no_password_opens_it(settings, pdf_passwords, tmp_path):
    """PDFium cannot open another security handler than the standard (password) one: the file
    is not corrupt, and asking for a password would send its owner looking for one."""
    pdf_passwords("rosetta")
    manifest = discovery.write_manifest(settings, "extract-pubsec", "corpus_refresh", [
        discovery.source_document(FIXTURES / "certificate-encrypted.pdf", settings)], [])
    (doc,) = manifest.documents
    result = run_stage(stage(EXTRACT), DocRef(batch_id=manifest.batch_id, doc_id=doc.doc_id), settings)
    assert (result.status, result.reason) == ("quarantined", "unsupported_encryption")
    assert "certificate-encrypted.pdf is encrypted for the holders of certain certificates" in result.detail
    assert "/Adobe.PubSec" in result.detail and "pdf-passwords" not in result.detail

    # The same file under a rights-management handler's name (same length: offsets unchanged).
    drm = tmp_path / "drm.pdf"
    drm.write_bytes((FIXTURES / "certificate-encrypted.pdf").read_bytes().replace(b"/Adobe.PubSec", b"/FileOpen.DRM"))
    with pytest.raises(DocumentError) as err:
        extract.extract_file(drm, settings)
    assert err.value.reason == "unsupported_encryption"
    assert "drm.pdf is encrypted with the security handler /FileOpen.DRM" in err.value.detail


def test_a_text_layer_with_characters_outside_the_bmp_is_read_not_ocred(settings, tmp_path):
    """PDFium gives a character outside the BMP (math italic, emoji, CJK Extension B as in
    𠮷野) two indices and its text range one character: the page's text no longer matched
    its indices and the whole page was OCRed as if it had no text layer."""
    clause = "Article 7. The liability of the supplier for each claim 𝑥 is limited to the price 𝑃 paid."
    path = text_pdf(f"{clause}\n" * 3, tmp_path / "math.pdf", family="DejaVu Serif")  # it has the glyphs
    page = extract.extract_file(path, settings).pages[0]
    assert (page.method, page.ocr_reason) == ("text_layer", None)
    assert " ".join(" ".join(b.text for b in page.blocks).split()) == " ".join([clause] * 3)


def test_a_code_mapped_past_unicode_does_not_fail_its_page(settings, tmp_path):
    """playa-pdf's utf8_tounicode.pdf: a Type 0 font whose codes are UTF-8 bytes; PDFium gives a
    code its maps leave unread as the code itself, past U+10FFFF, and sampling the page's glyphs
    for their turn failed the document ("Python int too large to convert to C int")."""
    space = b"2 begincodespacerange\n<00> <7F>\n<F0808080> <F4BFBFBF>\nendcodespacerange\n"
    encoding = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Utf8 def\n" + space +
                b"2 begincidchar\n<41> 1\n<f0a8a780> 2\nendcidchar\nendcmap CMapName currentdict /CMap "
                b"defineresource pop end end\n")
    to_unicode = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n" + space +
                  b"2 beginbfchar\n<41> <0041>\n<f0a8a780> <d862ddc0>\nendbfchar\nendcmap end end\n")
    content = b"BT /F1 24 Tf 72 700 Td <" + b"41" * 30 + b"f0a8a780" * 30 + b"> Tj ET"
    identity = b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >>"
    one_font_pdf(tmp_path / "utf8.pdf", content, b"/MediaBox [0 0 612 792]", [
        b"<< /Type /Font /Subtype /Type0 /BaseFont /Utf8 /Encoding 6 0 R /DescendantFonts [7 0 R] /ToUnicode 8 0 R >>",
        b"<< /Type /CMap /CMapName /Utf8 %s /Length %d >>\nstream\n%s\nendstream" % (identity, len(encoding),
                                                                                     encoding),
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Utf8 %s /DW 500 >>" % identity,
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(to_unicode), to_unicode)])
    (page,) = extract.extract_file(tmp_path / "utf8.pdf", settings).pages
    assert "A" * 30 in page.text.replace(" ", ""), page.text

def test_accents_drawn_apart_from_their_letters_are_put_back(settings):
    """LaTeX's OT1 fonts draw an accent as a glyph of its own over the letter (the capital's
    accent even lands at the end of the line in PDFium's order): the layer read
    "gew¨ohnlich", "informaci´on", "Fran¸cois", which neither lexical search nor the
    embedder knows."""
    page = extract.extract_file(FIXTURES / "ot1-accents.pdf", settings).pages[0]
    text = " ".join(" ".join(b.text for b in page.blocks).split())
    for words in ("Übermittlung personenbezogener Daten", "Die Gebühren für die Übermittlung der Daten sind gewöhnlich",
                  "Aufsichtsbehörde prüft", "sämtliche", "zurückzugeben oder zu löschen", "La información personal se "
                  "conservará en España durante el período", "La façade du bâtiment, l’élève et François."):
        assert words in text
    assert not set(text) & {"\u00a8", "\u00b4", "`", "\u02c6", "\u02dc", "\u00b8"}


def test_ligatures_named_by_their_parts_are_read_as_their_letters(settings):
    """A font whose encoding names its ligatures "f_i", "f_f_i" (LaTeX's libertine package),
    with no ToUnicode map: PDFium read each as its character code ("De\x0cnitions", "o\x0ece"),
    so "definition", "file" and "office" could not be found. The fixture's glyphs keep their
    place: the ligature's box holds its first letter, its block text all of them."""
    page = extract.extract_file(FIXTURES / "ligature-names.pdf", settings).pages[0]
    assert (page.method, page.ocr_reason) == ("text_layer", None)
    assert [b.text for b in page.blocks] == ["Definitions and scope of the file\n"
                                             "The officer files the definitive report with the office.\n"
                                             "Die Auflage ist in der Datei zu finden; die Definition gilt."]


def test_a_glyph_read_as_its_code_stays_where_its_fonts_do_not_agree_on_a_name():
    class Font:
        def __init__(self, names):
            self.names = names

        def to_unichr(self, code):
            return self.names[code]  # KeyError: pdfminer's PDFUnicodeNotDefined

    fonts = PageFonts(lambda: None)
    fonts._fonts = {"LinLibertineT": [Font({27: "fi"}), Font({27: "fi", 136: "•"})],
                    "LinBiolinumT": [Font({28: "ft"}), Font({28: "tt"})], "CMSY10": [Font({})]}
    assert fonts.text("LinLibertineT", 27) == "fi"  # one subset lacks the name, the other has it
    assert fonts.text("LinBiolinumT", 28) is None  # two fonts of that name, two answers
    assert fonts.text("CMSY10", 5) is None and fonts.text("Unknown", 27) is None


def _texts(page) -> list[str]:
    return [b.text for b in page.blocks]


def test_a_filled_forms_values_are_read_beside_its_text_layer(settings):
    """PDFium's text page reads the page's content only: the values of a filled form (a
    LibreOffice form, its text fields holding "Alice" and "Bob") were lost."""
    page = extract.extract_file(FIXTURES / "libreoffice-form.pdf", settings).pages[0]
    assert page.method == "text_layer"
    assert {"Alice", "Bob"} <= set(_texts(page)) and "First Name Last Name" in _texts(page)
    assert not any("Off" in text for text in _texts(page))  # check boxes: a state, not text


def test_form_values_are_read_from_their_fields_when_the_form_dictionary_is_gone(settings, tmp_path):
    """Widgets left without the /AcroForm that held them (a form half-flattened by some tool):
    no form environment, and each widget's own text value is read."""
    data = (FIXTURES / "libreoffice-form.pdf").read_bytes()
    assert data.count(b"/AcroForm") == 1
    path = tmp_path / "no-acroform.pdf"
    path.write_bytes(data.replace(b"/AcroForm", b"/AcroFxrm"))  # same length: the offsets hold
    page = extract.extract_file(path, settings).pages[0]
    assert {"Alice", "Bob"} <= set(_texts(page)) and not any("Off" in text for text in _texts(page))


def test_hidden_fields_and_values_the_page_already_shows_are_left_out_and_free_text_read(settings, tmp_path):
    import ctypes

    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    def wide(text: str):  # FPDF_WIDESTRING: UTF-16LE, NUL-terminated
        data = (text + "\0").encode("utf-16-le")
        return (ctypes.c_ushort * (len(data) // 2)).from_buffer_copy(data)

    pdf = pdfium.PdfDocument(FIXTURES / "libreoffice-form.pdf")
    pdf.init_forms()
    page = pdf[0]
    form, values = pdf.formenv.raw, {}
    for index in range(pdfium_c.FPDFPage_GetAnnotCount(page)):
        annot = pdfium_c.FPDFPage_GetAnnot(page, index)
        values[utf16_string(pdfium_c.FPDFAnnot_GetFormFieldValue, form, annot)] = annot
    pdfium_c.FPDFAnnot_SetFlags(values["Alice"], pdfium_c.FPDF_ANNOT_FLAG_PRINT | pdfium_c.FPDF_ANNOT_FLAG_HIDDEN)
    rect = pdfium_c.FS_RECTF()
    pdfium_c.FPDFAnnot_GetRect(values["Bob"], ctypes.byref(rect))
    printed = pdfium_c.FPDFPageObj_NewTextObj(pdf, b"Helvetica", 10.0)  # "Bob" printed into the content too
    pdfium_c.FPDFText_SetText(printed, wide("Bob"))
    pdfium_c.FPDFPageObj_Transform(printed, 1, 0, 0, 1, rect.left + 2, rect.bottom + 3)
    pdfium_c.FPDFPage_InsertObject(page, printed)
    pdfium_c.FPDFPage_GenerateContent(page)
    note = pdfium_c.FPDFPage_CreateAnnot(page, pdfium_c.FPDF_ANNOT_FREETEXT)
    pdfium_c.FPDFAnnot_SetRect(note, ctypes.byref(pdfium_c.FS_RECTF(300, 120, 500, 100)))
    pdfium_c.FPDFAnnot_SetStringValue(note, b"Contents", wide("Geprüft von der Rechtsabteilung"))
    pdfium_c.FPDFPage_CloseAnnot(note)
    path = tmp_path / "edited-form.pdf"
    pdf.save(path)
    page = extract.extract_file(path, settings).pages[0]
    text = "\n".join(_texts(page))
    assert "Alice" not in text and text.count("Bob") == 1
    assert "Geprüft von der Rechtsabteilung" in _texts(page)


def test_form_fields_are_drawn_for_the_ocr():
    """An OCRed page (a scanned form with fields typed in, a visible signature) is read from its
    render: with the document's form environment PDFium draws the fields' values, which this
    form (/NeedAppearances) leaves it to draw."""
    import pypdfium2 as pdfium

    def ink(pdf) -> int:
        gray = pdf[0].render(scale=2, grayscale=True).to_numpy()
        return int((gray[247:264, 240:320] < 160).sum())  # inside the "Alice" field's box

    assert ink(pdfium_document(FIXTURES / "libreoffice-form.pdf")[0]) > 50
    assert ink(pdfium.PdfDocument(FIXTURES / "libreoffice-form.pdf")) == 0


def test_text_by_index_keeps_one_character_per_pdfium_index(monkeypatch):
    import pypdfium2.raw as pdfium_c

    units = [ord("a"), 0xD842, 0xDFB7, ord("b"), 0, 0xDC00, ord("\r"), ord("\n")]  # 𠮷 as a pair; NUL; a lone half
    monkeypatch.setattr(pdfium_c, "FPDFText_GetUnicode", lambda textpage, k: units[k])
    text = text_by_index(None, len(units))
    assert text == f"a\U00020BB7{PAD}b\x00\ufffd\r\n" and len(text) == len(units)
    assert clean_text(text) == "a\U00020BB7b\ufffd\r\n"


def test_ocr_keeps_its_resolution_up_to_the_pixel_cap_and_fits_a_bigger_page_under_it(settings):
    assert scans.ocr_scale(595, 842, settings) == settings.extraction.ocr_dpi / 72  # A4
    side = 116.67 * 72  # ocrmypdf's hugemono.pdf: a 35000-pixel square at 300 dpi
    scale = scans.ocr_scale(side, side, settings)
    assert (side * scale) ** 2 == pytest.approx(settings.extraction.ocr_max_megapixels * 1e6)


def test_a_page_past_the_pixel_cap_is_read_at_the_resolution_that_fits(settings, monkeypatch):
    """image-only.pdf (436.8 x 90 pt, 0.68 megapixels at 300 dpi) under a cap of 0.2: rendered at
    162 dpi, and its three lines read as they do at full resolution."""
    monkeypatch.setattr(settings.extraction, "ocr_max_megapixels", 0.2)
    rendered = []

    def render_and_record(page, settings):
        gray, scale = scans.render_gray(page, settings)
        rendered.append((gray.size, scale))
        return gray, scale
    monkeypatch.setattr(extract, "render_gray", render_and_record)
    (page,) = extract.extract_file(FIXTURES / "image-only.pdf", settings).pages
    ((pixels, scale),) = rendered
    assert pixels == pytest.approx(0.2e6, rel=0.01) and scale * 72 == pytest.approx(162, abs=1)  # PDFium rounds up
    assert page.method == "ocr" and page.width == pytest.approx(436.8) and page.height == 90
    assert page.text.split() == (FIXTURES / "image-only.txt").read_text().split()
    assert all(0 <= b.bbox[0] < b.bbox[2] <= page.width and 0 <= b.bbox[1] < b.bbox[3] <= 90 for b in page.blocks)
