"""Stage 2, extraction: a source file -> pages of text blocks (ExtractedDocument).

Pages with a usable text layer are read with pdfplumber (vertical CJK text layers in
column order, DESIGN.md section 5); pages without one are rasterised with pypdfium2 and
OCRed (pipeline.ocr). Bad files raise DocumentError with a machine-readable reason.
"""

from __future__ import annotations

import logging
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np

from pipeline.config import Settings
from pipeline.contracts import (
    Block,
    DocRef,
    DocumentError,
    ExtractedDocument,
    Page,
    StageResult,
)
from pipeline.batch import read_manifest
from pipeline.ocr import ocr_page
from pipeline.workspace import Workspace

STAGE = "extract"
log = logging.getLogger(__name__)


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


def _is_vertical_layer(chars: list[dict]) -> bool:
    """True when consecutive characters mostly step downwards in the same column."""
    down = right = 0
    for a, b in zip(chars, chars[1:]):
        size = max(a["size"], 1.0)
        dx, dy = b["x0"] - a["x0"], b["top"] - a["top"]
        if abs(dx) < 0.5 * size and 0 < dy < 2 * size:
            down += 1
        elif abs(dy) < 0.5 * size and 0 < dx < 2 * size:
            right += 1
    return down > 2 * right


def _vertical_blocks(chars: list[dict]) -> list[Block]:
    """Columns right to left, each top to bottom (extract_text reads across columns)."""
    columns: list[list[dict]] = []
    for ch in sorted(chars, key=lambda c: (-c["x0"], c["top"])):
        if columns and abs(columns[-1][0]["x0"] - ch["x0"]) < 0.5 * max(ch["size"], 1.0):
            columns[-1].append(ch)
        else:
            columns.append([ch])
    blocks = []
    for column in columns:
        column.sort(key=lambda c: c["top"])
        text = "".join(c["text"] for c in column).strip()
        if text:
            blocks.append(
                Block(
                    text=text,
                    bbox=(
                        min(c["x0"] for c in column),
                        min(c["top"] for c in column),
                        max(c["x1"] for c in column),
                        max(c["bottom"] for c in column),
                    ),
                    direction="vertical",
                )
            )
    return blocks


def _horizontal_blocks(page) -> list[Block]:
    """Text lines grouped into paragraph blocks by vertical gaps; tables kept whole."""
    tables = page.find_tables()
    table_boxes = [t.bbox for t in tables]
    blocks: list[Block] = []
    current: list[dict] = []

    def inside_table(line: dict) -> bool:
        return any(x0 <= line["x0"] and line["x1"] <= x1 + 1 and top <= line["top"] and line["bottom"] <= bottom + 1
                   for x0, top, x1, bottom in table_boxes)

    def flush() -> None:
        if current:
            blocks.append(
                Block(
                    text="\n".join(l["text"] for l in current),
                    bbox=(
                        min(l["x0"] for l in current),
                        current[0]["top"],
                        max(l["x1"] for l in current),
                        current[-1]["bottom"],
                    ),
                )
            )
            current.clear()

    for line in page.extract_text_lines(return_chars=False, strip=True, x_tolerance=1.5):
        if inside_table(line):
            continue
        if current:
            height = max(current[-1]["bottom"] - current[-1]["top"], 1.0)
            if line["top"] - current[-1]["bottom"] > 0.8 * height:
                flush()
        current.append(line)
    flush()
    for table in tables:
        rows = [" | ".join((cell or "").replace("\n", " ") for cell in row) for row in table.extract()]
        text = "\n".join(r for r in rows if r.strip(" |"))
        if text:
            blocks.append(Block(text=text, bbox=table.bbox, kind="table"))
    blocks.sort(key=lambda b: (b.bbox[1], b.bbox[0]))
    return blocks


def _ocr_page(pdf, index: int, settings: Settings) -> tuple[list[Block], str, str]:
    scale = settings.extraction.ocr_dpi / 72.0
    bitmap = pdf[index].render(scale=scale, grayscale=True)
    gray = np.ascontiguousarray(bitmap.to_numpy()[..., 0] if bitmap.to_numpy().ndim == 3 else bitmap.to_numpy())
    vertical_models = {lang: entry.tesseract_vertical for lang, entry in settings.languages.items() if entry.tesseract_vertical}
    result, direction = ocr_page(gray, vertical_models)
    blocks = [
        Block(text=line.text, bbox=tuple(v / scale for v in line.bbox), direction=direction)  # type: ignore[arg-type]
        for line in result.lines
    ]
    return blocks, result.engine, direction


def extract_file(path: Path, settings: Settings, doc_id: str = "", sha256: str = "") -> ExtractedDocument:
    import pdfplumber
    import pypdfium2 as pdfium
    from pdfminer.pdfdocument import PDFPasswordIncorrect

    _check_file(path)
    text_engine = f"pdfplumber-{version('pdfplumber')}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plumber = pdfplumber.open(path)
            n_pages = len(plumber.pages)
    except PDFPasswordIncorrect as exc:
        raise DocumentError("encrypted_pdf", f"{path.name} is password-protected") from exc
    except Exception as exc:  # pdfminer raises many types for broken files
        raise DocumentError("corrupt_pdf", f"{path.name} cannot be parsed: {type(exc).__name__}: {exc}") from exc
    if n_pages == 0:
        raise DocumentError("no_pages", f"{path.name} has no pages")
    if n_pages > settings.extraction.max_pages:
        raise DocumentError("too_many_pages", f"{path.name} has {n_pages} pages (max {settings.extraction.max_pages})")

    pages: list[Page] = []
    engines: set[str] = set()
    raster = None
    try:
        for index, page in enumerate(plumber.pages):
            try:
                chars = [c for c in page.chars if c["text"].strip()]
            except Exception as exc:
                raise DocumentError("corrupt_pdf", f"{path.name} page {index + 1}: {type(exc).__name__}: {exc}") from exc
            if len(chars) >= settings.extraction.min_text_layer_chars:
                vertical = _is_vertical_layer(chars)
                blocks = _vertical_blocks(chars) if vertical else _horizontal_blocks(page)
                method, engine, direction = "text_layer", text_engine, ("vertical" if vertical else "horizontal")
            else:
                if raster is None:
                    raster = pdfium.PdfDocument(path)
                blocks, engine, direction = _ocr_page(raster, index, settings)
                method = "ocr"
            engines.add(engine)
            pages.append(
                Page(page_no=index + 1, width=float(page.width), height=float(page.height), method=method,
                     engine=engine, direction=direction, blocks=blocks)
            )
            log.info("%s: page %d/%d %s (%s, %s)", path.name, index + 1, n_pages, method, direction, engine)
    finally:
        plumber.close()
        if raster is not None:
            raster.close()
    if not any(b.text.strip() for p in pages for b in p.blocks):
        raise DocumentError("no_text", f"{path.name}: no text in the text layer and none found by OCR")
    return ExtractedDocument(doc_id=doc_id, source_path=str(path), sha256=sha256, pages=pages, engines=sorted(engines))


def run(ref: DocRef, settings: Settings) -> StageResult:
    """Extract one document of a batch into ``<batch>/extract/<doc_id>.json``."""
    ws = Workspace(settings, ref.batch_id)
    source = next(d for d in read_manifest(settings, ref.batch_id).documents if d.doc_id == ref.doc_id)
    document = extract_file(Path(source.source_path), settings, doc_id=source.doc_id, sha256=source.sha256)
    out = ws.write_model(ws.path(STAGE, ref.doc_id), document)
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=STAGE, output=str(out))
