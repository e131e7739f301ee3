"""The extract stage: a source file -> pages of text blocks (ExtractedDocument).

Each page is read from its text layer (pipeline.extraction.pdf, with tables from
pipeline.extraction.tables), or, without one or with one that lies (pipeline.extraction.honesty),
rasterised and OCRed (pipeline.extraction.scans); a scanned region on a text-layer page is
OCRed too. PNG, JPEG and TIFF scans (pipeline.extraction.images) take the same OCR route. Each page records why it was OCRed (``Page.ocr_reason``). Bad
files raise DocumentError with a machine-readable reason.
"""

from __future__ import annotations

import logging
from importlib.metadata import version
from pathlib import Path

import numpy as np

from pipeline.config import Settings
from pipeline.contracts import Block, DocRef, DocumentError, ExtractedDocument, Page, StageResult
from pipeline.extraction.annotations import annotation_blocks
from pipeline.extraction.fonts import PageFonts
from pipeline.extraction.honesty import doubt, glyphs_read_as_spaces
from pipeline.extraction.images import image_pages
from pipeline.extraction.pdf import Chars, check_file, horizontal_blocks, insert_by_position, open_pdf
from pipeline.extraction.scans import ocr_blocks, render_gray, scanned_regions
from pipeline.extraction.tables import MAX_CROSSINGS, page_tables, ruling_crossings
from pipeline.extraction.vertical import is_vertical_layer, vertical_blocks
from pipeline.progress import mark_page
from pipeline.stages import EXTRACT
from pipeline.stores import secrets
from pipeline.workspace import Workspace

log = logging.getLogger(__name__)


def extract_file(path: Path, settings: Settings, doc_id: str = "", sha256: str = "") -> ExtractedDocument:
    file_format = check_file(path)
    pages = _pdf_pages(path, settings) if file_format == "PDF" else _image_pages(path, file_format, settings)
    if not any(b.text.strip() for p in pages for b in p.blocks):
        raise DocumentError("no_text", f"{path.name}: no text in the text layer and none found by OCR")
    engines = sorted({p.engine for p in pages} | {b.engine for p in pages for b in p.blocks if b.engine})
    return ExtractedDocument(doc_id=doc_id, source_path=str(path), sha256=sha256, pages=pages, engines=engines)


def _pdf_pages(path: Path, settings: Settings) -> list[Page]:
    pdf, password = open_pdf(path, secrets.pdf_passwords(settings), secrets.pdf_passwords_file(settings))
    text_engine = f"pdfium-{version('pypdfium2')}"
    plumber: list = []  # opened once, on the first page with table rulings or a glyph read as its code
    try:
        n_pages = len(pdf)
        if n_pages == 0:
            raise DocumentError("no_pages", f"{path.name} has no pages")
        if n_pages > settings.extraction.max_pages:
            raise DocumentError("too_many_pages", f"{path.name} has {n_pages} pages (max {settings.extraction.max_pages})")
        return [_extract_page(pdf, index, path, settings, text_engine, plumber, password)
                for index in range(n_pages)]
    finally:
        pdf.close()
        for handle in plumber:
            handle.close()


def _image_pages(path: Path, file_format: str, settings: Settings) -> list[Page]:
    """A scan saved as an image: each page (TIFF frame) OCRed like a scanned PDF page."""
    pages = []
    extraction = settings.extraction
    for number, image in enumerate(image_pages(path, extraction.ocr_dpi, extraction.max_pages,
                                               extraction.ocr_max_megapixels), start=1):
        mark_page(number)
        scale = image.dpi / 72.0
        blocks, result = ocr_blocks(image.gray, scale, (0.0, 0.0), settings)
        log.info("%s: page %d OCR, %s image at %.0f dpi (%s) (%s, rotation %d)", path.name, number, file_format,
                 image.source_dpi, image.dpi_from, result.direction, result.rotation)
        pages.append(Page(page_no=number, width=image.gray.shape[1] / scale, height=image.gray.shape[0] / scale,
                          method="ocr", engine="+".join(result.engines) or "ocr", direction=result.direction,
                          blocks=blocks, rotation=result.rotation, ocr_reason="image_file"))
    return pages


def _extract_page(pdf, index: int, path: Path, settings: Settings, text_engine: str, plumber: list,
                  password: str | None) -> Page:
    mark_page(index + 1)

    def plumber_page():
        if not plumber:
            import pdfplumber

            plumber.append(pdfplumber.open(path, password=password))
        return plumber[0].pages[index]

    try:
        page = pdf[index]
        width, height = page.get_size()
        chars = Chars(page.get_textpage(), height, PageFonts(lambda: plumber_page().page_obj))
    except Exception as exc:  # PDFium raises PdfiumError for a broken page
        raise DocumentError("corrupt_pdf", f"{path.name} page {index + 1}: {type(exc).__name__}: {exc}") from exc
    too_short = int(chars.ink.sum()) < settings.extraction.min_text_layer_chars
    ocr_reason = "no_text_layer" if too_short else doubt(chars.text, chars.ink, glyphs_read_as_spaces(chars))
    if ocr_reason:
        gray, scale = render_gray(page, settings)
        blocks, result = ocr_blocks(gray, scale, (0.0, 0.0), settings)
        log.info("%s: page %d OCR, %s, at %.0f dpi (%s, rotation %d)", path.name, index + 1, ocr_reason, scale * 72,
                 result.direction, result.rotation)
        return Page(page_no=index + 1, width=width, height=height, method="ocr",
                    engine="+".join(result.engines) or "ocr", direction=result.direction, blocks=blocks,
                    rotation=result.rotation, ocr_reason=ocr_reason)
    engine = text_engine
    if is_vertical_layer(chars):
        blocks, direction = vertical_blocks(chars), "vertical"
    else:
        tables = []
        crossings = ruling_crossings(page)
        if crossings > MAX_CROSSINGS:
            log.info("%s: page %d read as text lines: its rulings cross %d times (table finding stops at %d)",
                     path.name, index + 1, crossings, MAX_CROSSINGS)
        elif crossings:
            tables = page_tables(plumber_page())
            if tables:
                engine = f"{text_engine}+pdfplumber-{version('pdfplumber')}"
        blocks, direction = horizontal_blocks(chars, tables), "horizontal"
    regions = scanned_regions(page, chars, width, height)
    scanned: list[Block] = []
    if regions:
        gray, scale = render_gray(page, settings)
        for x0, top, x1, bottom in regions:
            crop = np.ascontiguousarray(gray[int(top * scale):int(bottom * scale), int(x0 * scale):int(x1 * scale)])
            scanned += ocr_blocks(crop, scale, (x0, top), settings)[0]
    form = pdf.formenv.raw if pdf.formenv else None
    blocks = insert_by_position(blocks, scanned + annotation_blocks(page, chars.textpage, form, height, regions))
    return Page(page_no=index + 1, width=width, height=height, method="text_layer", engine=engine,
                direction=direction, blocks=blocks, ocr_reason="scanned_region" if regions else None)  # type: ignore[arg-type]


def warm(settings: Settings) -> None:
    """Import the PDF readers before the first document needs them (pipeline.batch.isolation)."""
    import pdfplumber  # noqa: F401
    import pypdfium2  # noqa: F401


def run(ref: DocRef, settings: Settings) -> StageResult:
    """Extract one document of a batch into ``<batch>/extract/<doc_id>.json``."""
    ws = Workspace(settings, ref.batch_id)
    source = ws.source(ref.doc_id)
    if source is None:
        raise RuntimeError(f"document {ref.doc_id} is not in batch {ref.batch_id}'s manifest")
    document = extract_file(Path(source.source_path), settings, doc_id=source.doc_id, sha256=source.sha256)
    out = ws.write_model(ws.path(EXTRACT, ref.doc_id), document)
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=EXTRACT, output=str(out))
