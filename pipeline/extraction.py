"""Stage 2, extraction: a source file -> pages of text blocks (ExtractedDocument).

Text layers are read with PDFium's text page (pypdfium2): its C text extraction gives
reading-order lines with generated word spaces and character boxes at >100 pages/s,
where pdfplumber's ``extract_text`` reads ~8-14 pages/s on these machines. pdfplumber
is opened only for a page whose vector rulings look like a table (its table finder
keeps rows and cells). Vertical CJK text layers are recognised from the character boxes
and read column by column, right to left.

Pages without a usable text layer are rasterised (PDFium) and OCRed (pipeline.ocr); on
a page with a text layer, a large grayscale or bilevel image with no text over it (a
scanned region pasted into a born-digital page) is OCRed too, its blocks marked
``method="ocr"``. Bad files raise DocumentError with a machine-readable reason.
"""

from __future__ import annotations

import logging
import re
from importlib.metadata import version
from pathlib import Path

import numpy as np

from pipeline.batch import read_manifest
from pipeline.config import Settings
from pipeline.contracts import Block, DocRef, DocumentError, ExtractedDocument, Page, StageResult
from pipeline.ocr import ocr_page, recogniser
from pipeline.workspace import Workspace

STAGE = "extract"
log = logging.getLogger(__name__)

# PDFium marks a hyphen it removed at a line end as U+FFFE (and keeps U+00AD soft
# hyphens): a word split across lines ("vor\ufffekommen") is joined, a real compound
# hyphen before a capital or digit ("Debian\ufffePaketarchiv") is kept.
SOFT_HYPHEN = re.compile(r"(?<=[a-zà-ÿ])[\ufffe\u00ad\x02](?=[a-zà-ÿ])|[\u00ad]")
LINE_END_HYPHEN = re.compile(r"[\ufffe\x02]")
SCANNED_REGION_MIN_AREA = 0.05  # of the page: smaller images are figures, icons, logos


def _check_file(path: Path) -> None:
    if not path.exists():
        raise DocumentError("missing_file", f"{path} does not exist")
    if path.stat().st_size == 0:
        raise DocumentError("empty_file", f"{path} is empty (0 bytes)")
    with open(path, "rb") as handle:
        head = handle.read(1024)
    if b"%PDF-" not in head:
        kind = "a ZIP container (e.g. DOCX)" if head.startswith(b"PK") else "not a PDF"
        raise DocumentError("unsupported_format", f"{path.name} is {kind}; Rosetta reads PDF files")


def _open(path: Path):
    """The PDFium document, or the DocumentError that says why it cannot be read."""
    import pdfplumber
    import pypdfium2 as pdfium
    from pdfminer.pdfdocument import PDFPasswordIncorrect

    try:
        return pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        pdfium_error = exc
    # PDFium reports an empty page tree as a password error: ask pdfminer which it is.
    try:
        with pdfplumber.open(path) as plumber:
            n_pages = len(plumber.pages)
    except Exception as exc:  # pdfminer raises many types for broken files; pdfplumber wraps them
        causes = (exc, *exc.args, exc.__cause__, exc.__context__)
        if any(isinstance(c, PDFPasswordIncorrect) for c in causes):
            raise DocumentError("encrypted_pdf", f"{path.name} is password-protected") from exc
        raise DocumentError("corrupt_pdf", f"{path.name} cannot be parsed: {pdfium_error}") from exc
    if n_pages == 0:
        raise DocumentError("no_pages", f"{path.name} has no pages")
    if "password" in str(pdfium_error).lower():
        raise DocumentError("encrypted_pdf", f"{path.name} is password-protected")
    raise DocumentError("corrupt_pdf", f"{path.name} cannot be parsed: {pdfium_error}")


# --- text layer ------------------------------------------------------------------------
class _Chars:
    """A PDFium text page: its text, and character or line boxes (top-left origin, points).

    Boxes are read lazily: per line, PDFium's text rectangles (a few calls a line);
    per character only where needed (vertical layers), since one call per character is
    what costs time in Python.
    """

    VERTICAL_SAMPLE = 400  # characters looked at to tell a vertical layer

    def __init__(self, textpage, page_height: float):
        self.textpage = textpage
        self.height = page_height
        self.n = textpage.count_chars()
        text = textpage.get_text_range() if self.n else ""
        self.text = text if len(text) == self.n else ""  # indices must match characters
        self.ink = np.fromiter((not c.isspace() and c not in "\ufffe\x02" for c in self.text), dtype=bool,
                               count=len(self.text))

    def _top_left(self, left: float, bottom: float, right: float, top: float) -> tuple[float, float, float, float]:
        return (left, self.height - top, right, self.height - bottom)

    def char_boxes(self, idx: np.ndarray) -> np.ndarray:
        return np.array([self._top_left(*self.textpage.get_charbox(int(i))) for i in idx],
                        dtype=np.float64).reshape(-1, 4)

    def span_box(self, start: int, end: int) -> tuple[float, float, float, float]:
        rects = [self._top_left(*self.textpage.get_rect(i))
                 for i in range(self.textpage.count_rects(start, end - start))]
        return (min(r[0] for r in rects), min(r[1] for r in rects), max(r[2] for r in rects),
                max(r[3] for r in rects)) if rects else (0.0, 0.0, 0.0, 0.0)


def _clean_text(text: str) -> str:
    return LINE_END_HYPHEN.sub("-", SOFT_HYPHEN.sub("", text))


def _is_vertical_layer(chars: _Chars) -> bool:
    """True when consecutive characters mostly step downwards in the same column."""
    b = chars.char_boxes(np.flatnonzero(chars.ink)[:chars.VERTICAL_SAMPLE])
    if len(b) < 2:
        return False
    size = np.maximum(b[:-1, 3] - b[:-1, 1], 1.0)
    dx, dy = b[1:, 0] - b[:-1, 0], b[1:, 1] - b[:-1, 1]
    down = np.sum((np.abs(dx) < 0.5 * size) & (dy > 0) & (dy < 2 * size))
    right = np.sum((np.abs(dy) < 0.5 * size) & (dx > 0) & (dx < 2 * size))
    return bool(down > 2 * right)


def _vertical_blocks(chars: _Chars) -> list[Block]:
    """Columns right to left, each top to bottom (extract_text reads across columns)."""
    idx = np.flatnonzero(chars.ink)
    box = chars.char_boxes(idx)
    columns: list[list[int]] = []  # positions into idx / box
    for k in np.lexsort((box[:, 1], -box[:, 0])):
        size = max(box[k, 3] - box[k, 1], 1.0)
        if columns and abs(box[columns[-1][0], 0] - box[k, 0]) < 0.5 * size:
            columns[-1].append(int(k))
        else:
            columns.append([int(k)])
    blocks = []
    for column in columns:
        column.sort(key=lambda k: box[k, 1])
        text = "".join(chars.text[idx[k]] for k in column).strip()
        if text:
            b = box[column]
            blocks.append(Block(text=text, bbox=(float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()),
                                                 float(b[:, 3].max())), direction="vertical", method="text_layer"))
    return blocks


def _line_spans(chars: _Chars) -> list[tuple[int, int]]:
    """[start, end) character ranges of PDFium's lines (it ends each with CR LF)."""
    spans, start = [], 0
    for match in re.finditer(r"\r\n|\n", chars.text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(chars.text)))
    return [(a, b) for a, b in spans if chars.ink[a:b].any()]


def _horizontal_blocks(chars: _Chars, tables: list[tuple[tuple[float, float, float, float], str]]) -> list[Block]:
    """Lines grouped into paragraph blocks by vertical gaps and column jumps; tables whole."""
    def inside_table(box: tuple[float, float, float, float]) -> bool:
        return any(x0 - 1 <= box[0] and box[2] <= x1 + 1 and top - 1 <= box[1] and box[3] <= bottom + 1
                   for (x0, top, x1, bottom), _ in tables)

    blocks: list[Block] = []
    current: list[tuple[str, tuple[float, float, float, float]]] = []

    def flush() -> None:
        if current:
            boxes = [b for _, b in current]
            blocks.append(Block(text="\n".join(t for t, _ in current),
                                bbox=(min(b[0] for b in boxes), min(b[1] for b in boxes),
                                      max(b[2] for b in boxes), max(b[3] for b in boxes)),
                                method="text_layer"))
            current.clear()

    for a, b in _line_spans(chars):
        box = chars.span_box(a, b)
        if inside_table(box):
            continue
        text = _clean_text(chars.text[a:b]).strip()
        if current:
            prev = current[-1][1]
            height = max(prev[3] - prev[1], 1.0)
            jumped = box[1] < prev[1] - 0.5 * height or box[0] > prev[2] or box[2] < prev[0]
            if jumped or box[1] - prev[3] > 0.8 * height:
                flush()
        current.append((text, box))
    flush()
    return _insert_by_position(blocks, [Block(text=text, bbox=bbox, kind="table", method="text_layer")
                                        for bbox, text in tables])


def _insert_by_position(blocks: list[Block], extra: list[Block]) -> list[Block]:
    """Put tables and OCRed regions before the first text block below them, keeping the
    text layer's own (content-stream) reading order, which a sort would break on
    multi-column pages."""
    out = list(blocks)
    for block in sorted(extra, key=lambda b: b.bbox[1]):
        at = next((i for i, b in enumerate(out) if b.kind == "text" and b.method == "text_layer"
                   and b.bbox[1] > block.bbox[1]), len(out))
        out.insert(at, block)
    return out


def _has_rulings(page) -> bool:
    """Enough thin horizontal and vertical vector lines to be a ruled table."""
    import pypdfium2.raw as pdfium_c

    across = down = 0
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=2):
        x0, y0, x1, y1 = obj.get_bounds()
        w, h = x1 - x0, y1 - y0
        if h < 2 and w > 10:
            across += 1
        elif w < 2 and h > 5:
            down += 1
        if across >= 3 and down >= 2:
            return True
    return False


def _tables(plumber_page) -> list[tuple[tuple[float, float, float, float], str]]:
    tables = []
    for table in plumber_page.find_tables():
        table = _with_open_sides(plumber_page, table)
        rows = [" | ".join((cell or "").replace("\n", " ") for cell in row) for row in table.extract()]
        text = "\n".join(r for r in rows if r.strip(" |"))
        if text:
            tables.append((tuple(float(v) for v in table.bbox), text))
    return tables  # type: ignore[return-value]


def _with_open_sides(plumber_page, table):
    """The whole table where its outer columns have no vertical rules.

    Tables ruled only between columns (DocBook/dblatex output: full-width horizontal
    rules, vertical ones inside) are found by pdfplumber without their first and last
    columns; their rows then came out twice, as text lines and as a partial table (on
    the Debian manuals' table pages). The horizontal rules crossing the
    table show its real width: the table is found again in that box, with vertical
    lines at its two ends.
    """
    x0, top, x1, bottom = table.bbox
    rules = [e for e in plumber_page.horizontal_edges
             if top - 1 <= e["top"] <= bottom + 1 and e["x0"] < x1 and e["x1"] > x0]
    left, right = min([x0] + [e["x0"] for e in rules]), max([x1] + [e["x1"] for e in rules])
    if left > x0 - 2 and right < x1 + 2:
        return table
    region = plumber_page.crop((left - 1, top - 1, right + 1, bottom + 1))
    found = region.find_tables(table_settings={"explicit_vertical_lines": [left, right]})
    return max(found, key=lambda t: (t.bbox[2] - t.bbox[0]) * (t.bbox[3] - t.bbox[1]), default=table)


def _scanned_regions(page, chars: _Chars, width: float, height: float) -> list[tuple[float, float, float, float]]:
    """Large grayscale/bilevel images with no text layer over them (top-left origin boxes)."""
    import pypdfium2.raw as pdfium_c

    regions = []
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2):
        left, bottom, right, top = obj.get_bounds()
        if (right - left) * (top - bottom) < SCANNED_REGION_MIN_AREA * width * height:
            continue
        meta = obj.get_metadata()
        if meta.colorspace != pdfium_c.FPDF_COLORSPACE_DEVICEGRAY and meta.bits_per_pixel != 1:
            continue  # colour images are figures and screenshots, not scans
        box = (left, height - top, right, height - bottom)
        if not chars.textpage.get_text_bounded(left, bottom, right, top).strip():
            regions.append(box)
    return regions


# --- OCR ---------------------------------------------------------------------------------
def _render_gray(page, settings: Settings) -> tuple[np.ndarray, float]:
    scale = settings.extraction.ocr_dpi / 72.0
    pixels = page.render(scale=scale, grayscale=True).to_numpy()
    return np.ascontiguousarray(pixels[..., 0] if pixels.ndim == 3 else pixels), scale


def _ocr_blocks(gray: np.ndarray, scale: float, offset: tuple[float, float], settings: Settings):
    vertical_models = {lang: e.tesseract_vertical for lang, e in settings.languages.items() if e.tesseract_vertical}
    vertical_models |= {f"{lang}-Hant": e.tesseract_vertical_traditional
                        for lang, e in settings.languages.items() if e.tesseract_vertical_traditional}
    rec = recogniser(settings.extraction.ocr_engine, settings.extraction.paddleocr_model_dir)
    result = ocr_page(gray, vertical_models, rec)
    blocks = [
        Block(text=b.text, bbox=(offset[0] + b.bbox[0] / scale, offset[1] + b.bbox[1] / scale,
                                 offset[0] + b.bbox[2] / scale, offset[1] + b.bbox[3] / scale),
              direction=b.direction, method="ocr", engine=b.engine)
        for b in result.blocks
    ]
    return blocks, result


def extract_file(path: Path, settings: Settings, doc_id: str = "", sha256: str = "") -> ExtractedDocument:
    _check_file(path)
    pdf = _open(path)
    text_engine = f"pdfium-{version('pypdfium2')}"
    try:
        n_pages = len(pdf)
        if n_pages == 0:
            raise DocumentError("no_pages", f"{path.name} has no pages")
        if n_pages > settings.extraction.max_pages:
            raise DocumentError("too_many_pages", f"{path.name} has {n_pages} pages (max {settings.extraction.max_pages})")
        plumber: list = []  # opened once, on the first page with table rulings
        pages = [_extract_page(pdf, index, path, settings, text_engine, plumber) for index in range(n_pages)]
    finally:
        pdf.close()
        for handle in plumber:
            handle.close()
    if not any(b.text.strip() for p in pages for b in p.blocks):
        raise DocumentError("no_text", f"{path.name}: no text in the text layer and none found by OCR")
    engines = sorted({p.engine for p in pages} | {b.engine for p in pages for b in p.blocks if b.engine})
    return ExtractedDocument(doc_id=doc_id, source_path=str(path), sha256=sha256, pages=pages, engines=engines)


def _extract_page(pdf, index: int, path: Path, settings: Settings, text_engine: str, plumber: list) -> Page:
    try:
        page = pdf[index]
        width, height = page.get_size()
        chars = _Chars(page.get_textpage(), height)
    except Exception as exc:  # PDFium raises PdfiumError for a broken page
        raise DocumentError("corrupt_pdf", f"{path.name} page {index + 1}: {type(exc).__name__}: {exc}") from exc
    if int(chars.ink.sum()) < settings.extraction.min_text_layer_chars:
        gray, scale = _render_gray(page, settings)
        blocks, result = _ocr_blocks(gray, scale, (0.0, 0.0), settings)
        log.info("%s: page %d OCR (%s, rotation %d)", path.name, index + 1, result.direction, result.rotation)
        return Page(page_no=index + 1, width=width, height=height, method="ocr",
                    engine="+".join(result.engines) or "ocr", direction=result.direction, blocks=blocks,
                    rotation=result.rotation)
    engine = text_engine
    if _is_vertical_layer(chars):
        blocks, direction = _vertical_blocks(chars), "vertical"
    else:
        tables = []
        if _has_rulings(page):
            if not plumber:
                import pdfplumber

                plumber.append(pdfplumber.open(path))
            tables = _tables(plumber[0].pages[index])
            if tables:
                engine = f"{text_engine}+pdfplumber-{version('pdfplumber')}"
        blocks, direction = _horizontal_blocks(chars, tables), "horizontal"
    regions = _scanned_regions(page, chars, width, height)
    if regions:
        gray, scale = _render_gray(page, settings)
        scanned: list[Block] = []
        for x0, top, x1, bottom in regions:
            crop = np.ascontiguousarray(gray[int(top * scale):int(bottom * scale), int(x0 * scale):int(x1 * scale)])
            scanned += _ocr_blocks(crop, scale, (x0, top), settings)[0]
        blocks = _insert_by_position(blocks, scanned)
    return Page(page_no=index + 1, width=width, height=height, method="text_layer", engine=engine,
                direction=direction, blocks=blocks)  # type: ignore[arg-type]


def run(ref: DocRef, settings: Settings) -> StageResult:
    """Extract one document of a batch into ``<batch>/extract/<doc_id>.json``."""
    ws = Workspace(settings, ref.batch_id)
    source = next(d for d in read_manifest(settings, ref.batch_id).documents if d.doc_id == ref.doc_id)
    document = extract_file(Path(source.source_path), settings, doc_id=source.doc_id, sha256=source.sha256)
    out = ws.write_model(ws.path(STAGE, ref.doc_id), document)
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=STAGE, output=str(out))
