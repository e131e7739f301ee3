"""Files embedded in a PDF: a portfolio's documents (whose own page only says to open the
portfolio in Acrobat), the attachments an e-mail archived as PDF carries, a contract's
annexes. The extract stage reads those that are PDFs or scans as further pages of their
document (pipeline.stages.extract); the others (XML invoice data, office files) are named in
the log.

PDFium gives both kinds of embedded file: the document's EmbeddedFiles name tree and file
attachment annotations on its pages. The same bytes embedded twice, or the document's own
bytes (a hybrid PDF carrying its source), are read once or not at all.
"""

from __future__ import annotations

import ctypes
import hashlib
import re
from dataclasses import dataclass

from pipeline.extraction.annotations import page_annotations

MAX_DEPTH = 2  # a file attached to an attached file is read; one level further down is not
MAX_BYTES = 256 << 20  # a bigger embedded file (a video, a disk image) is named in the log, never loaded
UNSAFE_NAME = re.compile(r"[^\w.-]+")


@dataclass(frozen=True)
class EmbeddedFile:
    name: str
    size: int
    data: bytes | None  # None: past MAX_BYTES, not loaded

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data or b"").hexdigest()

    @property
    def file_name(self) -> str:
        """A name to write its bytes under: the embedded name, made safe, its suffix kept."""
        return UNSAFE_NAME.sub("_", self.name.rsplit("/", 1)[-1]).strip("._")[-100:] or "attachment"


def _embedded(attachment, fallback_name: str) -> EmbeddedFile:
    """The attachment's name and bytes (none where PDFium gives none), unless it is too big."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    size = ctypes.c_ulong()
    pdfium_c.FPDFAttachment_GetFile(attachment, None, 0, size)
    name = attachment.get_name() or fallback_name
    if size.value > MAX_BYTES:
        return EmbeddedFile(name, size.value, None)
    try:
        data = bytes(attachment.get_data())
    except pdfium.PdfiumError:  # an empty or unreadable stream
        data = b""
    return EmbeddedFile(name, size.value, data)


def document_files(pdf) -> list[EmbeddedFile]:
    """The files of the document's EmbeddedFiles name tree, in its order."""
    return [_embedded(pdf.get_attachment(index), f"attachment {index + 1}") for index in range(pdf.count_attachments())]


def annotation_files(pdf, page, page_no: int) -> list[EmbeddedFile]:
    """The files of the file attachment annotations on page ``page_no``."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    files = []
    for annotation in page_annotations(page):
        if pdfium_c.FPDFAnnot_GetSubtype(annotation) == pdfium_c.FPDF_ANNOT_FILEATTACHMENT:
            raw = pdfium_c.FPDFAnnot_GetFileAttachment(annotation)
            if raw:
                files.append(_embedded(pdfium.PdfAttachment(raw, pdf), f"attachment on page {page_no}"))
    return files


def distinct(files: list[EmbeddedFile], own_sha256: str) -> list[EmbeddedFile]:
    """``files`` less empty ones and copies of an earlier one's bytes or of the document's own
    (one too big to load is kept, to be named)."""
    seen = {own_sha256}
    kept = []
    for file in files:
        if file.data is None:
            kept.append(file)
        elif file.data and file.sha256 not in seen:
            seen.add(file.sha256)
            kept.append(file)
    return kept


def embedded_page_count(pdf, depth: int = 0) -> int:
    """Pages of the PDFs in the document's name tree, theirs included (for a deadline:
    annotations' files, which only a pass over the pages finds, are not counted)."""
    import pypdfium2 as pdfium

    if depth >= MAX_DEPTH:
        return 0
    count = 0
    for file in document_files(pdf):
        if not file.data:
            continue
        try:
            embedded = pdfium.PdfDocument(file.data)
        except pdfium.PdfiumError:
            continue  # not a PDF, or not one PDFium opens without a password
        try:
            count += len(embedded) + embedded_page_count(embedded, depth + 1)
        finally:
            embedded.close()
    return count


def embedded_data(pdf, name: str) -> bytes | None:
    """The bytes of the file embedded in ``pdf`` under ``name`` (a Page.attachment: "outer.pdf /
    inner.pdf" for a file embedded in an embedded file), or None when it is not there."""
    import pypdfium2 as pdfium

    outer, _, rest = name.partition(" / ")
    files = document_files(pdf) + [f for k in range(len(pdf)) for f in annotation_files(pdf, pdf[k], k + 1)]
    data = next((f.data for f in files if f.name == outer), None)
    if data is None or not rest:
        return data
    try:
        inner = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return None
    try:
        return embedded_data(inner, rest)
    finally:
        inner.close()
