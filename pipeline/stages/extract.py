"""The extract stage: a source file -> pages of text blocks (ExtractedDocument).

Each page is read from its text layer (pipeline.extraction.pdf, with tables from
pipeline.extraction.tables), or, without one or with one that lies (pipeline.extraction.honesty),
rasterised and OCRed (pipeline.extraction.scans); a scanned region on a text-layer page is
OCRed too. PNG, JPEG and TIFF scans (pipeline.extraction.images) take the same OCR route. Each page records why it was OCRed (``Page.ocr_reason``). The
PDFs and scans embedded in a PDF follow its own pages, each page marked with its file
(pipeline.extraction.attachments). Once every page is read, the document's own words decide its
line-end hyphens (pipeline.extraction.hyphens). Bad files raise DocumentError with a
machine-readable reason.
"""

from __future__ import annotations

import logging
import tempfile
from importlib.metadata import version
from pathlib import Path

import numpy as np

from pipeline.config import Settings
from pipeline.contracts import Block, DocRef, DocumentError, DocumentInfo, ExtractedDocument, Page, StageResult
from pipeline.extraction import attachments
from pipeline.extraction.annotations import annotation_blocks
from pipeline.extraction.fonts import PageFonts
from pipeline.extraction.honesty import doubt, glyphs_read_as_spaces
from pipeline.extraction.hyphens import join_broken_words
from pipeline.extraction.images import image_pages
from pipeline.extraction.metadata import document_info
from pipeline.extraction.pdf import check_file, horizontal_blocks, insert_by_position, open_pdf, page_chars
from pipeline.extraction.scans import ocr_blocks, render_gray, scanned_regions
from pipeline.extraction.tables import MAX_CROSSINGS, page_tables, ruling_crossings
from pipeline.extraction.vertical import is_vertical_layer, vertical_blocks
from pipeline.ocr.page import PageOcr
from pipeline.progress import mark_page
from pipeline.stages import EXTRACT
from pipeline.stores import secrets
from pipeline.workspace import Workspace, sha256_file

log = logging.getLogger(__name__)


def extract_file(path: Path, settings: Settings, doc_id: str = "", sha256: str = "") -> ExtractedDocument:
    pages, info = _file_pages(path, settings, first_page_no=1, depth=0, max_pages=settings.extraction.max_pages)
    pages = join_broken_words(pages)  # every page read: the document's words decide its line-end hyphens
    if not any(b.text.strip() for p in pages for b in p.blocks):
        raise DocumentError("no_text", f"{path.name}: no text in the text layer and none found by OCR")
    engines = sorted({p.engine for p in pages} | {b.engine for p in pages for b in p.blocks if b.engine})
    return ExtractedDocument(doc_id=doc_id, source_path=str(path), sha256=sha256, pages=pages, engines=engines,
                             info=info)


def _file_pages(path: Path, settings: Settings, first_page_no: int, depth: int,
                max_pages: int) -> tuple[list[Page], DocumentInfo]:
    """A file's pages, numbered from ``first_page_no``, then those of the files embedded in it;
    and what the file says about itself."""
    file_format = check_file(path)
    if file_format != "PDF":
        return _image_pages(path, file_format, settings, first_page_no, max_pages), DocumentInfo()
    pages, embedded, info = _pdf_pages(path, settings, first_page_no, max_pages)
    if embedded:
        embedded = attachments.distinct(embedded, sha256_file(path))
    attached, infos = _attachment_pages(path, embedded, settings, first_page_no + len(pages), depth,
                                        max_pages - len(pages))
    return pages + attached, info.model_copy(update={"embedded": infos})


def _attachment_pages(path: Path, embedded: list[attachments.EmbeddedFile], settings: Settings, first_page_no: int,
                      depth: int, max_pages: int) -> tuple[list[Page], dict[str, DocumentInfo]]:
    """The pages of the PDFs and scans embedded in ``path``, each marked with its file's name,
    and what each embedded PDF says of itself (its title, its own signatures), by that name. An
    embedded file that cannot be read (another format, encrypted, broken, past the page limit)
    is named in the log and left out; the document goes on."""
    if embedded and depth >= attachments.MAX_DEPTH:
        log.warning("%s: %d embedded file(s) not read: files attached %d levels deep are not read",
                    path.name, len(embedded), depth + 1)
        return [], {}
    pages: list[Page] = []
    infos: dict[str, DocumentInfo] = {}
    with tempfile.TemporaryDirectory(prefix="rosetta-attachment-") as folder:
        for number, file in enumerate(embedded, start=1):
            if file.data is None:
                log.warning("%s: embedded file %s not read (too_big): %d MiB, past the %d MiB an embedded file may "
                            "have", path.name, file.name, file.size >> 20, attachments.MAX_BYTES >> 20)
                continue
            copy = Path(folder) / f"{number}-{file.file_name}"
            copy.write_bytes(file.data)
            try:
                part, info = _file_pages(copy, settings, first_page_no + len(pages), depth + 1, max_pages - len(pages))
            except DocumentError as exc:
                log.warning("%s: embedded file %s not read (%s): %s", path.name, file.name, exc.reason,
                            exc.detail.replace(copy.name, file.name))
                continue
            log.info("%s: embedded file %s read: %d page(s)", path.name, file.name, len(part))
            for page in part:
                page.attachment = file.name if page.attachment is None else f"{file.name} / {page.attachment}"
            pages += part
            infos |= {f"{file.name} / {name}": inner for name, inner in info.embedded.items()}
            own = info.model_copy(update={"embedded": {}})  # its files' facts are kept under their own names
            if own != DocumentInfo():
                infos[file.name] = own
    return pages, infos


def _pdf_pages(path: Path, settings: Settings, first_page_no: int,
               max_pages: int) -> tuple[list[Page], list[attachments.EmbeddedFile], DocumentInfo]:
    """The PDF's pages, the files embedded in it (its name tree's, then its pages' annotations')
    and its document information and signatures."""
    pdf, password = open_pdf(path, secrets.pdf_passwords(settings), secrets.pdf_passwords_file(settings))
    text_engine = f"pdfium-{version('pypdfium2')}"
    plumber: list = []  # opened once, on the first page: pdfminer reads its fonts' ToUnicode maps
    maps_read: dict = {}  # font object -> fonts.dropped_codes of its ToUnicode map, for every page
    try:
        n_pages = len(pdf)
        if n_pages == 0:
            raise DocumentError("no_pages", f"{path.name} has no pages")
        if n_pages > max_pages:
            raise DocumentError("too_many_pages", f"{path.name} has {n_pages} pages (max {max_pages})")
        embedded = attachments.document_files(pdf)
        pages = [_extract_page(pdf, index, first_page_no, path, settings, text_engine, plumber, maps_read, password,
                               embedded) for index in range(n_pages)]
        # the XMP metadata is read with the pdfminer document the fonts' maps opened, where they did
        return pages, embedded, document_info(pdf, path, password, plumber[0].doc if plumber else None)
    finally:
        pdf.close()
        for handle in plumber:
            try:
                handle.close()
            except Exception:  # pdfplumber builds every page to close them, and one it cannot
                handle.stream.close()  # build (no MediaBox) must not fail a page PDFium read


def _image_pages(path: Path, file_format: str, settings: Settings, first_page_no: int, max_pages: int) -> list[Page]:
    """A scan saved as an image: each page (TIFF frame) OCRed like a scanned PDF page."""
    pages = []
    extraction = settings.extraction
    for number, image in enumerate(image_pages(path, extraction.ocr_dpi, max_pages, extraction.ocr_max_megapixels),
                                   start=first_page_no):
        mark_page(number)
        scale = image.dpi / 72.0
        blocks, result = ocr_blocks(image.gray, scale, (0.0, 0.0), settings)
        log.info("%s: page %d OCR%s, %s image at %.0f dpi (%s) (%s, rotation %d)", path.name, number,
                 _cached(result), file_format, image.source_dpi, image.dpi_from, result.direction, result.rotation)
        pages.append(Page(page_no=number, width=image.gray.shape[1] / scale, height=image.gray.shape[0] / scale,
                          method="ocr", engine="+".join(result.engines) or "ocr", direction=result.direction,
                          blocks=blocks, rotation=result.rotation, ocr_reason="image_file"))
    return pages


def _cached(result: PageOcr) -> str:
    return " (read before: from the OCR cache)" if result.from_cache else ""


def _extract_page(pdf, index: int, first_page_no: int, path: Path, settings: Settings, text_engine: str,
                  plumber: list, maps_read: dict, password: str | None,
                  embedded: list[attachments.EmbeddedFile]) -> Page:
    page_no = first_page_no + index
    mark_page(page_no)

    def plumber_page():
        if not plumber:
            import pdfplumber

            plumber.append(pdfplumber.open(path, password=password))
        return plumber[0].pages[index]

    try:
        page = pdf[index]
        width, height = page.get_size()
        chars = page_chars(page, PageFonts(plumber_page, maps_read))
    except Exception as exc:  # PDFium raises PdfiumError for a broken page
        raise DocumentError("corrupt_pdf", f"{path.name} page {index + 1}: {type(exc).__name__}: {exc}") from exc
    embedded += attachments.annotation_files(pdf, page, index + 1)
    inked = int(chars.ink.sum())
    too_short = inked < settings.extraction.min_text_layer_chars
    ocr_reason = "no_text_layer" if too_short else doubt(chars.text, chars.ink, glyphs_read_as_spaces(chars))
    if ocr_reason:
        gray, scale = render_gray(page, settings)
        blocks, result = ocr_blocks(gray, scale, (0.0, 0.0), settings)
        read = sum(ch.isalnum() for block in blocks for ch in block.text)
        layer = sum(ch.isalnum() for ch in chars.text)
        # a page number, a title, "Anlage 3": a short layer the OCR reads no more of (it may read
        # nothing of a small "ii") is kept, unless the layer itself lies
        keep_layer = too_short and inked and read <= layer and not doubt(chars.text, chars.ink,
                                                                         glyphs_read_as_spaces(chars))
        if not keep_layer:
            log.info("%s: page %d OCR%s, %s, at %.0f dpi (%s, rotation %d)", path.name, index + 1, _cached(result),
                     ocr_reason, scale * 72, result.direction, result.rotation)
            return Page(page_no=page_no, width=width, height=height, method="ocr",
                        engine="+".join(result.engines) or "ocr", direction=result.direction, blocks=blocks,
                        rotation=result.rotation, ocr_reason=ocr_reason)
        log.info("%s: page %d keeps its short text layer (%d letters and digits; the OCR read %d)", path.name,
                 index + 1, layer, read)
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
            tables = page_tables(plumber_page(), chars)
            if tables:
                engine = f"{text_engine}+pdfplumber-{version('pdfplumber')}"
        blocks, direction = horizontal_blocks(chars, tables), "horizontal"
    regions = scanned_regions(page, chars, width, height)
    scanned: list[Block] = []
    if regions:
        gray, scale = render_gray(page, settings, chars.frame.reading_turn)
        for x0, top, x1, bottom in regions:
            crop = np.ascontiguousarray(gray[int(top * scale):int(bottom * scale), int(x0 * scale):int(x1 * scale)])
            scanned += ocr_blocks(crop, scale, (x0, top), settings)[0]
    form = pdf.formenv.raw if pdf.formenv else None
    blocks = insert_by_position(blocks, scanned + annotation_blocks(page, chars, form, regions))
    if chars.frame.reading_turn:  # laid out as the text reads; placed as the page is shown
        blocks = [block.model_copy(update={"bbox": chars.frame.shown(block.bbox)}) for block in blocks]
    return Page(page_no=page_no, width=width, height=height, method="text_layer", engine=engine,
                direction=direction, blocks=blocks, rotation=chars.frame.reading_turn,
                ocr_reason="scanned_region" if regions else None)  # type: ignore[arg-type]


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
    path = Path(source.source_path)
    document = extract_file(path, settings, doc_id=source.doc_id, sha256=source.sha256)
    # a file rewritten since the batch found it (a sync client, an editor saving): its text is
    # not the content the manifest names, and its chunks would carry the wrong sha256
    try:
        changed = bool(source.sha256) and sha256_file(path) != source.sha256
    except FileNotFoundError:
        raise DocumentError("missing_file", f"{path} went while the batch read it") from None
    if changed:
        raise DocumentError("source_changed", f"{path.name} changed while the batch read it; the next refresh "
                                              "reads the new version")
    out = ws.write_model(ws.path(EXTRACT, ref.doc_id), document)
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=EXTRACT, output=str(out))
