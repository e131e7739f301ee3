#!/usr/bin/env python3
"""Write the small page-kind fixtures of the extraction tests into tests/fixtures/kinds/.

One small (about 8 x 7 cm, 300 dpi) image-only page per kind, typeset by scan_pages.py
from real paragraphs of the pinned maint-guide packages (scripts/fetch_doc_packages.py),
each with its truth (.txt, one paragraph per line):

    ja-vertical, zh-tw-vertical-2tier, zh-cn-vertical, de-horizontal, en-two-column,
    es-horizontal-rot90, ja-vertical-rot180, zh-cn-horizontal-rot270, zh-tw-vertical-code,
    ja-vertical-heading

the statute pages ja-statute-horizontal and ja-statute-vertical (paragraphs and items of a
Japanese statute, scripts/fetch_legal_texts.py ``fetch_statute``, from its tuning split),
and mixed-page.pdf: a born-digital page (Helvetica text layer, English) with a scanned
grayscale region (the en image-only fixture) pasted below the text; its truth is
mixed-page.txt (text layer lines, then the scan's paragraph).

    .venv/bin/python scripts/make_page_kind_fixtures.py
"""

from __future__ import annotations

import ctypes
import io
import re
import sys
import textwrap
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

import fetch_doc_packages as docs
import render_scans
import scan_pages
from fetch_legal_texts import fetch_statute
from make_test_fixtures import report_sizes
from scan_pages import PageSpec

OUT = docs.ROOT / "tests" / "fixtures" / "kinds"
SMALL = dict(page_px=(960, 820), margin_px=50)
KINDS = [
    ("ja-vertical", PageSpec("ja", "vertical", 12, "serif", **SMALL), 0),
    ("zh-tw-vertical-2tier", PageSpec("zh-tw", "vertical-2tier", 10, "sans", **SMALL), 3),
    ("zh-cn-vertical", PageSpec("zh-cn", "vertical", 12, "sans", **SMALL), 6),
    ("de-horizontal", PageSpec("de", "horizontal", 10, "serif", **SMALL), 0),
    ("en-two-column", PageSpec("en", "two-column", 8, "sans", **SMALL), 4),
    ("es-horizontal-rot90", PageSpec("es", "horizontal", 10, "sans", rotate=90, **SMALL), 2),
    ("ja-vertical-rot180", PageSpec("ja", "vertical", 12, "serif", rotate=180, **SMALL), 0),
    ("zh-cn-horizontal-rot270", PageSpec("zh-cn", "horizontal", 11, "serif", rotate=270, **SMALL), 9),
    # code in vertical Chinese: upright full-width $ ( / that PP-OCR reads sideways
    ("zh-tw-vertical-code", PageSpec("zh-tw", "vertical", 12, "sans", **SMALL), 108),
    # a horizontal heading over vertical text: each block read in its own direction
    ("ja-vertical-heading", PageSpec("ja", "vertical-heading", 11, "serif", **SMALL), 20),
]
# a statute's 項 and 号 lines, each number set apart by a full-width space (from 第三条 ２ on)
STATUTE_KINDS = [("ja-statute-horizontal", PageSpec("ja", "horizontal", 10, "sans", **SMALL)),
                 ("ja-statute-vertical", PageSpec("ja", "vertical", 11, "serif", **SMALL))]
STATUTE_FIRST = "２　次に掲げる命令等を定める行為については"
SHORT = 160  # characters: paragraphs short enough for a small page


def mixed_page(lines: list[str], scan_pdf: Path, out: Path) -> None:
    """A4 page: Helvetica lines at the top, the scan's image placed below them."""
    pdf = pdfium.PdfDocument.new()
    page = pdf.new_page(595, 842)
    y = 790
    for line in lines:
        text = pdfium_c.FPDFPageObj_NewTextObj(pdf.raw, b"Helvetica", ctypes.c_float(11))
        units = memoryview(line.encode("utf-16-le")).cast("H")
        pdfium_c.FPDFText_SetText(text, (ctypes.c_ushort * (len(units) + 1))(*units, 0))
        pdfium_c.FPDFPageObj_Transform(text, 1, 0, 0, 1, 56, y)
        pdfium_c.FPDFPage_InsertObject(page.raw, text)
        y -= 15
    source = pdfium.PdfDocument(scan_pdf)
    image = next(source[0].get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]))
    width_px, height_px = image.get_px_size()
    placed = pdfium.PdfImage.new(pdf)
    placed.load_jpeg(io.BytesIO(bytes(image.get_data(decode_simple=False))), inline=True)
    w, h = width_px * 72 / 300, height_px * 72 / 300
    placed.set_matrix(pdfium.PdfMatrix(w, 0, 0, h, 56, y - 30 - h))
    page.insert_obj(placed)
    page.gen_content()
    buffer = io.BytesIO()
    pdf.save(buffer, version=17)
    # PDFium stamps the save time and a random file ID; fixed ones keep reruns byte-identical
    data = re.sub(rb"/CreationDate\(D:\d{14}", b"/CreationDate(D:20260101000000", buffer.getvalue())
    data = re.sub(rb"/ID\[<[0-9A-F]+><[0-9A-F]+>\]", b"/ID[<%s><%s>]" % ((b"0" * 32,) * 2), data)
    out.write_bytes(data)


def main() -> int:
    roots = docs.fetch([p.name for p in docs.PACKAGES if p.text])
    texts = {p.lang: render_scans.read_paragraphs(roots[p.name] / p.text) for p in docs.PACKAGES if p.text}
    OUT.mkdir(parents=True, exist_ok=True)
    written = []
    for seed, (name, spec, first) in enumerate(KINDS):
        short = [p for p in texts[spec.lang] if len(p) <= SHORT][first:]
        used = scan_pages.render_page(short, spec, OUT / f"{name}.pdf", seed=100 + seed)
        (OUT / f"{name}.txt").write_text("\n".join(used) + "\n", encoding="utf-8")
        written += [OUT / f"{name}.pdf", OUT / f"{name}.txt"]
    statute = fetch_statute()
    first = next(i for i, line in enumerate(statute) if line.startswith(STATUTE_FIRST))
    for seed, (name, spec) in enumerate(STATUTE_KINDS):
        used = scan_pages.render_page(statute[first:], spec, OUT / f"{name}.pdf", seed=200 + seed)
        (OUT / f"{name}.txt").write_text("\n".join(used) + "\n", encoding="utf-8")
        written += [OUT / f"{name}.pdf", OUT / f"{name}.txt"]
    fixtures = docs.ROOT / "tests" / "fixtures"
    en_lines = textwrap.wrap([p for p in texts["en"] if len(p) > 300][0], 90)[:6]
    mixed_page(en_lines, fixtures / "image-only.pdf", OUT / "mixed-page.pdf")
    scan_truth = (fixtures / "image-only.txt").read_text(encoding="utf-8")
    (OUT / "mixed-page.txt").write_text("\n".join(en_lines) + "\n" + scan_truth, encoding="utf-8")
    written += [OUT / "mixed-page.pdf", OUT / "mixed-page.txt"]
    return report_sizes(written)


if __name__ == "__main__":
    sys.exit(main())
