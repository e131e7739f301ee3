"""What a reviewer sees of a batch (the Airflow "Rosetta QA" view reads it; pipeline/ never
imports Airflow): the batches with their status, a batch's QA sample with each chunk's
text, language, lineage, check verdicts and human verdicts, the audit trail, and for OCR
chunks the crop of the source page the chunk was read from.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from pipeline.batch import retention
from pipeline.config import Settings
from pipeline.contracts import ExtractedDocument, Page
from pipeline.stages import ENRICH, EXTRACT
from pipeline.stores import secrets, vector_store
from pipeline.stores.document_registry import DocumentRegistry
from pipeline.workspace import Workspace, sha256_file

CROP_DPI = 110
CROP_MAX_MEGAPIXELS = 25  # of the whole page rendered for a crop
CROP_MARGIN_PT = 12


def _read(ws: Workspace, name: str, default: Any) -> Any:
    path = ws.batch_file(name)
    return ws.read_json(path) if path.exists() else default


def batches(settings: Settings) -> list[dict[str, Any]]:
    """Every batch the registry knows, newest first, with its QA verdict and review state."""
    rows = []
    for row in DocumentRegistry(settings.document_registry_path).batches():
        ws = Workspace(settings, row.batch_id)
        report = _read(ws, "qa_report.json", None)
        rows.append({"batch_id": row.batch_id, "kind": row.kind, "status": row.status,
                     "started_at": row.started_at, "finished_at": row.finished_at,
                     "qa": None if report is None else ("passed" if report["passed"] else "failed"),
                     "sample_size": (report or {}).get("sample_size", 0),
                     "total_chunks": (report or {}).get("total_chunks", 0),
                     "reviewed": len(_read(ws, "qa_review.json", {}))})
    return sorted(rows, key=lambda r: r["started_at"], reverse=True)


def batch_sample(settings: Settings, batch_id: str) -> dict[str, Any] | None:
    """The batch's QA sample for review, or None when the batch has no QA report."""
    ws = Workspace(settings, batch_id)
    report = _read(ws, "qa_report.json", None)
    if report is None:
        return None
    verdicts = _read(ws, "qa_review.json", {})
    objects: dict[str, dict[str, Any]] = {}
    for doc_id in {item["doc_id"] for item in report["sample"]}:
        path = ws.path(ENRICH, doc_id)
        if path.exists():
            objects |= {o["uuid"]: o["properties"] for o in ws.read_json(path)}
    chunks = []
    for item in report["sample"]:
        props = objects.get(item["uuid"], {})
        lineage = {f: props.get(f) for f in vector_store.LINEAGE_FIELDS}
        chunks.append({**item, "text": props.get("text", item["text"]), "lineage": lineage,
                       "pages": (props.get("page_start"), props.get("page_end")),
                       "ocr": props.get("extraction_method") == "ocr" or "ocr" in str(props.get("extraction_method")),
                       "human": verdicts.get(item["chunk_id"])})
    registry_row = DocumentRegistry(settings.document_registry_path).batch(batch_id)
    return {"batch_id": batch_id, "status": registry_row.status if registry_row else "unknown",
            "report": {k: v for k, v in report.items() if k != "sample"}, "chunks": chunks,
            "audit": _read(ws, "qa_audit.json", []), "pruned": retention.pruned_record(ws)}


def _chunk_blocks(doc: ExtractedDocument, page_no: int, text: str) -> list[tuple[float, float, float, float]]:
    """The boxes of the page's blocks whose lines appear in the chunk's text."""
    page = next((p for p in doc.pages if p.page_no == page_no), None)
    if page is None:
        return []
    squeezed = "".join(text.split())
    return [b.bbox for b in page.blocks
            if any(len(line.strip()) > 3 and "".join(line.split()) in squeezed for line in b.text.splitlines())]


def source_crop(settings: Settings, batch_id: str, chunk_id: str) -> bytes | None:
    """PNG of the source page region the chunk came from (its blocks' union box), or None
    (no such chunk in the sample, or its source file is gone or changed). A PDF page is rendered, an
    image file's page (a TIFF frame) cut from the image, a page of an embedded file taken from that
    file's bytes, all at ``CROP_DPI`` or less where the page would pass ``CROP_MAX_MEGAPIXELS`` (a
    poster's crop need not render the poster)."""
    from pipeline.extraction.images import within_megapixels

    ws = Workspace(settings, batch_id)
    sample = batch_sample(settings, batch_id)
    chunk = next((c for c in (sample or {}).get("chunks", []) if c["chunk_id"] == chunk_id), None)
    if chunk is None or chunk["pages"][0] is None:
        return None
    doc = ws.read_model(ws.path(EXTRACT, chunk["doc_id"]), ExtractedDocument)
    page = next((p for p in doc.pages if p.page_no == chunk["pages"][0]), None)
    source = Path(doc.source_path)
    if page is None or not source.is_file() or (doc.sha256 and sha256_file(source) != doc.sha256):
        return None  # gone, or no longer the version the batch read: its crop would show another page
    boxes = _chunk_blocks(doc, page.page_no, chunk["text"])
    m = CROP_MARGIN_PT
    x0, top, x1, bottom = ((min(b[0] for b in boxes), min(b[1] for b in boxes),
                            max(b[2] for b in boxes), max(b[3] for b in boxes)) if boxes else (0, 0, page.width, page.height))
    region = (max(0.0, x0 - m), max(0.0, top - m), min(page.width, x1 + m), min(page.height, bottom + m))
    scale = within_megapixels(CROP_DPI / 72, page.width, page.height, CROP_MAX_MEGAPIXELS)
    if page.attachment:
        image = _attachment_page(source, doc, page, scale, settings)
        if image is None:
            return None
    else:
        image = _render(source, page, scale, settings)
    out = io.BytesIO()
    image.crop(tuple(int(v * scale) for v in region)).save(out, "PNG")
    return out.getvalue()


def _render(source: Path, page: Page, scale: float, settings: Settings):
    from pipeline.extraction.pdf import check_file

    return (_pdf_page if check_file(source) == "PDF" else _image_page)(source, page, scale, settings)


def _attachment_page(source: Path, doc: ExtractedDocument, page: Page, scale: float, settings: Settings):
    """A page of a file embedded in ``source``, rendered from that file's bytes (a copy in a
    temporary folder, numbered as in the file)."""
    import tempfile

    from pipeline.extraction.attachments import embedded_data
    from pipeline.extraction.pdf import pdfium_document

    pdf, _ = pdfium_document(source, secrets.pdf_passwords(settings))
    try:
        data = embedded_data(pdf, page.attachment or "")
    finally:
        pdf.close()
    if data is None:
        return None
    first = min(p.page_no for p in doc.pages if p.attachment == page.attachment)
    with tempfile.TemporaryDirectory(prefix="rosetta-attachment-") as folder:
        copy = Path(folder) / "embedded"
        copy.write_bytes(data)
        return _render(copy, page.model_copy(update={"page_no": page.page_no - first + 1}), scale, settings)


def _pdf_page(source: Path, page: Page, scale: float, settings: Settings):
    from pipeline.extraction.pdf import pdfium_document

    pdf, _ = pdfium_document(source, secrets.pdf_passwords(settings))
    try:
        return pdf[page.page_no - 1].render(scale=scale).to_pil()
    finally:
        pdf.close()


def _image_page(source: Path, page: Page, scale: float, settings: Settings):
    """An image file's page as the OCR saw it (EXIF orientation applied, 8-bit gray), ``scale``
    pixels a point: the page's size in points came from the same pixels."""
    from PIL import Image, ImageOps

    from pipeline.extraction.images import to_gray

    with Image.open(source) as image:
        image.seek(page.page_no - 1)
        gray = Image.fromarray(to_gray(ImageOps.exif_transpose(image)))
    return gray.resize((max(1, round(page.width * scale)), max(1, round(page.height * scale))),
                       Image.Resampling.LANCZOS)
