"""The typed contract between stages (docs/decisions.md section 2).

Every per-document stage is ``run(ref: DocRef, settings) -> StageResult``: it reads the
previous stage's file from the batch workspace and writes its own. What travels through
Airflow's XCom is ``StageResult.model_dump()``: ids, a status and a path, never content.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Status = Literal["ok", "quarantined"]
Direction = Literal["horizontal", "vertical"]


class DocumentError(Exception):
    """Bad input: the document goes to quarantine with this reason; the batch goes on."""

    def __init__(self, reason: str, detail: str = ""):
        self.reason = reason  # machine-readable, e.g. "corrupt_pdf"
        self.detail = detail  # for people
        super().__init__(f"{reason}: {detail}" if detail else reason)


class DocRef(BaseModel):
    batch_id: str
    doc_id: str


class StageTiming(BaseModel):
    """What one step cost: wall seconds, and the peak resident memory of the process that ran it."""

    seconds: float
    peak_rss_mib: float


class StageResult(BaseModel):
    batch_id: str
    doc_id: str
    stage: str
    status: Status = "ok"
    output: str | None = None
    reason: str | None = None
    detail: str | None = None
    timings: dict[str, StageTiming] = Field(default_factory=dict)  # this and the earlier stages of the document

    @property
    def ref(self) -> DocRef:
        return DocRef(batch_id=self.batch_id, doc_id=self.doc_id)


class SourceDocument(BaseModel):
    """One entry of a batch manifest: what the batch was asked to process."""

    doc_id: str
    source_path: str
    sha256: str
    size_bytes: int


class PathChange(BaseModel):
    """A document whose paths changed without its content changing (moved, renamed, copied):
    only its chunks' source_path is rewritten, in place, at promotion."""

    doc_id: str
    old_paths: list[str]
    new_paths: list[str]
    old_primary: str
    new_primary: str


class DeletedDocument(BaseModel):
    """A known document whose every file is gone: its chunks leave the live collection at
    promotion (kept in replaced_chunks.json for a rollback) and the registry keeps a tombstone."""

    doc_id: str
    sha256: str | None
    paths: list[str]
    status: str  # the registry status before the deletion, restored by a rollback
    reason: str


class BatchManifest(BaseModel):
    batch_id: str
    kind: Literal["corpus_refresh", "reprocess", "realign"]
    documents: list[SourceDocument]
    skipped: list[SourceDocument] = Field(default_factory=list)
    moved: list[PathChange] = Field(default_factory=list)
    deleted: list[DeletedDocument] = Field(default_factory=list)
    discovery: StageTiming | None = None  # what finding and hashing the files cost
    # what a user declared of its documents (``rosetta pairs --declare`` / ``--apart``): doc_id ->
    # {doc_id declared with it: whether they translate each other}; the load step takes it over
    # the evidence
    declared_pairs: dict[str, dict[str, bool]] = Field(default_factory=dict)


# --- extract ---------------------------------------------------------------------------
class Block(BaseModel):
    text: str
    bbox: tuple[float, float, float, float]  # x0, top, x1, bottom in PDF points
    direction: Direction = "horizontal"
    kind: Literal["text", "table"] = "text"
    method: Literal["text_layer", "ocr"] | None = None  # per block: a text-layer page can hold OCRed regions
    engine: str | None = None  # set where the block's engine differs from the page's (OCR)
    # why the text layer's rendering marks the block a watermark (pipeline.extraction.watermarks)
    watermark: str | None = None


class Page(BaseModel):
    page_no: int  # 1-based
    width: float
    height: float
    method: Literal["text_layer", "ocr"]
    engine: str  # e.g. "pdfplumber-0.11.10", "rapidocr-3.10.0", "tesseract-5.3.0:jpn_vert"
    direction: Direction
    blocks: list[Block]
    rotation: int = 0  # degrees clockwise the page as shown was turned to read it (OCR or text layer)
    # why (part of) the page was OCRed: no_text_layer, scanned_region, or the text layer's
    # lie (pipeline.extraction.honesty: cid_codes, private_use, replacement_chars, unmapped_glyphs,
    # control_characters, glyphs_as_spaces)
    ocr_reason: str | None = None
    # the embedded file this page is a page of (pipeline.extraction.attachments: its name, an
    # attachment's own attachment as "outer.pdf / inner.pdf"); None: a page of the document itself
    attachment: str | None = None

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.blocks if b.text)


SignatureAfter = Literal["nothing", "signing", "changes"]


class Signature(BaseModel):
    """A digital signature of a PDF (pipeline.extraction.metadata); whether its certificate
    deserves trust is not judged."""
    signer: str = ""  # the signing certificate's common name (else e-mail, else whole name); "" unread
    # the signed bytes hash to its digest and its value verifies with that certificate's key;
    # None: not told (no certificate inside, a timestamp token, an algorithm not read)
    intact: bool | None = None
    signed_at: str | None = None  # ISO 8601, from the signature dictionary's /M
    reason: str = ""
    kind: str = ""  # the SubFilter: adbe.pkcs7.detached, ETSI.CAdES.detached, ETSI.RFC3161 (a timestamp)
    # what the file gained after it (pipeline.extraction.revisions): "nothing"; "signing" (later
    # signatures, timestamps, validation data: what it signed reads as signed); "changes" (an
    # edit, a filled field, a new title, or unsigned bytes inside its span)
    after: SignatureAfter


class DocumentInfo(BaseModel):
    """What the file says about itself: its information dictionary and its signatures."""
    title: str = ""
    author: str = ""
    subject: str = ""
    created: str | None = None  # ISO 8601
    modified: str | None = None
    signatures: list[Signature] = Field(default_factory=list)  # signed fields, in the document's order
    # the same of each PDF embedded in it that says something of itself, by the name its pages
    # carry (Page.attachment: "outer.pdf / inner.pdf" for one inside another)
    embedded: dict[str, DocumentInfo] = Field(default_factory=dict)


class ExtractedDocument(BaseModel):
    doc_id: str
    source_path: str
    sha256: str
    pages: list[Page]
    engines: list[str]
    info: DocumentInfo = Field(default_factory=DocumentInfo)  # of the file itself, its attachments' in .embedded


# --- language (cleaning + detection) -----------------------------------------------------
class RemovedSpan(BaseModel):
    page_no: int
    text: str
    # other_language: outside the configured-language sections of a document in several languages
    reason: Literal["running_header_footer", "page_number", "watermark", "ocr_garbage", "other_language"]
    line_no: int | None = None  # the line's index on its page (0-based, across blocks)
    bbox: tuple[float, float, float, float] | None = None  # its block's box on the page


class PageSpan(BaseModel):
    page_no: int
    start: int
    end: int
    # how its text was read: text_layer, ocr, or both (a text-layer page with a scanned region);
    # empty in a workspace written before pages kept it
    methods: list[str] = Field(default_factory=list)


class LangSpan(BaseModel):
    start: int
    end: int
    lang: str


class AttachmentSpan(BaseModel):
    """An embedded file's part of a document's text: from the line naming it to the next part."""
    name: str
    start: int
    end: int
    first_page: int  # the page_no its first page has in the document


class CleanedDocument(BaseModel):
    doc_id: str
    source_path: str
    sha256: str
    lang: str  # the main language: the largest share of the text
    lang_confidence: float  # the configured languages' share of the detection evidence
    text: str  # cleaned text; pages joined with a blank line
    pages: list[PageSpan]
    tables: list[tuple[int, int]] = Field(default_factory=list)  # spans of TABLE blocks
    removed: list[RemovedSpan]
    extraction_methods: list[str]
    engines: list[str]
    lang_shares: dict[str, float] = Field(default_factory=dict)  # language -> share of the letters
    lang_spans: list[LangSpan] = Field(default_factory=list)  # runs of blocks in one language, in order
    attachments: list[AttachmentSpan] = Field(default_factory=list)  # embedded files read, in order
    # language -> share of the document's letters left out: sections in languages not configured
    # (pipeline.text.block_languages.configured_sections); empty when the text is loaded whole
    left_out: dict[str, float] = Field(default_factory=dict)
    info: DocumentInfo = Field(default_factory=DocumentInfo)

    def attachment_at(self, offset: int) -> AttachmentSpan | None:
        return next((a for a in self.attachments if a.start <= offset < a.end), None)

    def lang_at(self, start: int, end: int) -> str:
        """The language of most of [start, end); the main language where no span says."""
        overlap: dict[str, int] = {}
        for span in self.lang_spans:
            if span.start < end and start < span.end:
                overlap[span.lang] = overlap.get(span.lang, 0) + min(end, span.end) - max(start, span.start)
        return max(overlap, key=overlap.__getitem__) if overlap else self.lang

    def page_at(self, offset: int) -> int:
        for span in self.pages:
            if offset < span.end:
                return span.page_no
        return self.pages[-1].page_no if self.pages else 1


# --- structure -------------------------------------------------------------------------
ElementType = Literal["HEADER", "CLAUSE", "PARAGRAPH", "LIST", "TABLE", "TOC"]  # TOC: outside the clause tree


class Element(BaseModel):
    type: ElementType
    start: int
    end: int
    level: int = 0
    number: str | None = None  # clause number as written, e.g. "第一条", "§ 3", "1.2"
    title: str | None = None
    clause_id: str | None = None  # the clause this element belongs to (a CLAUSE: its own id)
    parent_id: str | None = None  # a CLAUSE: the id of the clause it is nested in
    item: bool = False  # a CLAUSE that is an item of a list ("a)", "1. die ...", 一　..., （一）)


class StructuredDocument(BaseModel):
    doc_id: str
    elements: list[Element]
    markers: list[tuple[int, str, str]]  # (offset, "CLAUSE_START"|"CLAUSE_END", clause_id)


# --- chunk -----------------------------------------------------------------------------
class Chunk(BaseModel):
    chunk_id: str
    doc_id: str
    lang: str
    text: str
    start: int
    end: int
    page_start: int
    page_end: int
    structure_type: ElementType
    clause_number: str | None = None  # the innermost clause holding the whole chunk
    clause_numbers: list[str] = Field(default_factory=list)  # every clause holding it, outermost first
    clause_path: str = ""  # its label: clause_numbers, then the sub-clauses it spans ("§ 1 (2)–(3)")
    clause_id: str | None = None
    heading_path: list[str] = Field(default_factory=list)
    prev_clause_id: str | None = None
    next_clause_id: str | None = None
    semantic_density: float = 0.0
    regulation_ids: list[str] = Field(default_factory=list)
    attachment: str | None = None  # the embedded file the chunk is from (None: the document itself)
    attachment_page: int | None = None  # ... and the page of that file it starts on


class ChunkedDocument(BaseModel):
    doc_id: str
    lang: str
    chunks: list[Chunk]


# --- embed (embedding + alignment) -------------------------------------------------------
class EmbeddedDocument(BaseModel):
    doc_id: str
    lang: str
    embedder: str  # name@version
    dimension: int
    alignment_version: str  # MLflow model version, or "identity" (of the main language)
    anchor_set_version: str | None
    raw_vectors: str  # path of the .npy, rows in chunk order
    aligned_vectors: str
    alignment_versions: dict[str, str] = Field(default_factory=dict)  # per chunk language (mixed documents)
