#!/usr/bin/env python3
"""PDFs whose text layers lie, made from a real page of the sample corpus.

Page 4 of the Japanese maint-guide (samples/corpus/ja/maint-guide.pdf: Japanese text set in
VL-PGothic with Latin package names in Liberation fonts, every font a CID-keyed TrueType
font with Identity-H encoding) is cut out, and its Japanese font's Unicode map is broken the
ways real converters break it; the Latin fonts keep theirs:

    cjk-no-tounicode.pdf   the CJK font has no ToUnicode map: PDFium falls back to the glyph
                           ids, which read as control characters and stray scripts
    cjk-pua.pdf            its ToUnicode map sends every glyph to the Private Use Area
    cjk-to-spaces.pdf      its ToUnicode map sends every glyph to a space: the text layer
                           holds only the Latin parts of the page
    cid-codes.pdf          (built from text) a page whose text layer is pdfminer's
                           "(cid:NN)" placeholders, as a converter that met such a font wrote it
    cjk-miscounted.pdf     its ToUnicode map whole, but each block of 100 glyphs declared as
                           101 (pdfcpu declares one more than it writes): PDFium drops those
                           blocks and reads their glyphs as their ids, pdfminer reads them

The map is replaced by an incremental update (a new version of the map's object appended
with its own xref section), as a PDF editor would save it. Nothing here is committed: the
tests and docs/benchmarks.md build these files from the sample corpus.

    .venv/bin/python scripts/make_lying_pdfs.py OUT_DIR
"""

from __future__ import annotations

import re
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "samples" / "corpus" / "ja" / "maint-guide.pdf"
SOURCE_PAGE = 3  # 0-based: page 4, Japanese prose with Latin package names
CJK_FONT = b"VL-PGothic"


def cut_page(source: Path = SOURCE, index: int = SOURCE_PAGE) -> bytes:
    import io

    import pypdfium2 as pdfium

    src = pdfium.PdfDocument(source)
    out = pdfium.PdfDocument.new()
    out.import_pages(src, [index])
    buffer = io.BytesIO()
    out.save(buffer)
    return buffer.getvalue()


def _font_dict(pdf: bytes) -> re.Match[bytes]:
    """The Type0 font dictionary of the CJK font (PDFium writes each on one line)."""
    match = re.search(rb"<<[^<>]*/BaseFont/\w+\+" + CJK_FONT + rb"[^<>]*/Subtype/Type0[^<>]*>>", pdf)
    if not match:
        raise ValueError(f"no Type0 font {CJK_FONT.decode()} in the page")
    return match


def without_tounicode(pdf: bytes) -> bytes:
    """The CJK font's /ToUnicode key renamed in place (same length: offsets stay valid)."""
    font = _font_dict(pdf)
    return pdf[:font.start()] + font.group().replace(b"/ToUnicode", b"/ToUnicodX") + pdf[font.end():]


def replace_object(pdf: bytes, number: int, body: bytes) -> bytes:
    """An incremental update: a new version of object ``number``, an xref section for it, a
    trailer pointing back at the previous xref."""
    trailer = pdf[pdf.rindex(b"trailer"):]
    root = re.search(rb"/Root\s+(\d+\s+\d+\s+R)", trailer).group(1)  # type: ignore[union-attr]
    size = int(re.search(rb"/Size\s+(\d+)", trailer).group(1))  # type: ignore[union-attr]
    previous = int(re.search(rb"startxref\s+(\d+)", trailer).group(1))  # type: ignore[union-attr]
    pdf = pdf if pdf.endswith(b"\n") else pdf + b"\n"
    offset = len(pdf)
    obj = b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = b"xref\n%d 1\n%010d 00000 n \n" % (number, offset)
    tail = b"trailer\n<</Size %d/Root %s/Prev %d>>\nstartxref\n%d\n%%%%EOF\n" % (size, root, previous,
                                                                                 offset + len(obj))
    return pdf + obj + xref + tail


def _map_number(pdf: bytes) -> int:
    """The object number of the CJK font's ToUnicode map."""
    return int(re.search(rb"/ToUnicode\s+(\d+)\s+0\s+R", _font_dict(pdf).group()).group(1))  # type: ignore[union-attr]


def _cjk_map(pdf: bytes) -> tuple[int, bytes]:
    """The object number of the CJK font's ToUnicode map and the map (PDFium writes it
    Flate-compressed)."""
    number = _map_number(pdf)
    obj = re.search(rb"\n%d 0 obj\s*<<[^<>]*>>\s*stream\r?\n" % number, pdf)
    if not obj:
        raise ValueError(f"no stream object {number} for the ToUnicode map")
    return number, zlib.decompress(pdf[obj.end():pdf.index(b"endstream", obj.end())])


def _replace_map(pdf: bytes, number: int, cmap: bytes) -> bytes:
    data = zlib.compress(cmap)
    return replace_object(pdf, number, b"<</Length %d/Filter/FlateDecode>>stream\n" % len(data) + data +
                          b"\nendstream")


def with_miscounted_blocks(pdf: bytes) -> bytes:
    """The CJK font's own ToUnicode map, each bfchar block of 100 entries declared as 101."""
    number, cmap = _cjk_map(pdf)
    miscounted, blocks = re.subn(rb"(^|\n)100 beginbfchar", rb"\g<1>101 beginbfchar", cmap)
    if not blocks:
        raise ValueError("no bfchar block of 100 entries in the CJK font's map")
    return _replace_map(pdf, number, miscounted)


def with_cjk_map(pdf: bytes, target: str) -> bytes:
    """The CJK font's ToUnicode map replaced by one sending every glyph to ``target``:
    "pua" (U+E000 + glyph id) or "space"."""
    number = _map_number(pdf)
    lines = []
    for high in range(256):
        low, top = f"{high:02X}00", f"{high:02X}FF"
        lines.append(f"<{low}> <{top}> <{0xE000 + high * 256:04X}>" if target == "pua" else
                     f"<{low}> <{top}> [{' '.join(['<0020>'] * 256)}]")
    ranges = "".join(f"{len(chunk)} beginbfrange\n" + "\n".join(chunk) + "\nendbfrange\n"
                     for chunk in (lines[i:i + 100] for i in range(0, 256, 100)))
    cmap = ("/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
            "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
            "/CMapName /Adobe-Identity-UCS def /CMapType 2 def\n"
            "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n" + ranges +
            "endcmap CMapName currentdict /CMap defineresource pop end end\n").encode()
    return _replace_map(pdf, number, cmap)


def cid_codes_pdf(path: Path) -> Path:
    """A text-layer page of "(cid:NN)" placeholders between a few real words."""
    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import text_pdf

    words = [" ".join(f"(cid:{(7 * i + j) % 900 + 3})" for j in range(6)) for i in range(40)]
    return text_pdf("\n".join(f"Debian {w} maint-guide" for w in words), path)


def write_all(out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    page = cut_page()
    made = {"cjk-no-tounicode": without_tounicode(page), "cjk-pua": with_cjk_map(page, "pua"),
            "cjk-to-spaces": with_cjk_map(page, "space"), "cjk-miscounted": with_miscounted_blocks(page)}
    paths = {}
    for name, data in made.items():
        paths[name] = out_dir / f"{name}.pdf"
        paths[name].write_bytes(data)
    paths["honest"] = out_dir / "honest.pdf"
    paths["honest"].write_bytes(page)
    paths["cid-codes"] = cid_codes_pdf(out_dir / "cid-codes.pdf")
    return paths


if __name__ == "__main__":
    for name, path in write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "lying-pdfs")).items():
        print(f"  {name}: {path}")
