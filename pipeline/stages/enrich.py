"""The enrich stage: ChunkedDocument + EmbeddedDocument -> the document's Weaviate objects.

Each chunk gets the regulations it names (pipeline.text.regulations) and its full lineage
(source sha256, pipeline version, engines, embedder, alignment and anchor set versions,
batch); its uuid is derived from that lineage, so a retry rewrites the same objects.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pipeline import pipeline_version
from pipeline.config import Settings
from pipeline.contracts import (
    Chunk,
    ChunkedDocument,
    CleanedDocument,
    DocRef,
    DocumentInfo,
    EmbeddedDocument,
    StageResult,
)
from pipeline.stages import CHUNK, EMBED, ENRICH, LANGUAGE
from pipeline.stores.vector_store import chunk_uuid
from pipeline.text.regulations import find_regulations, regulation_facts
from pipeline.workspace import Workspace


def file_date(info: DocumentInfo) -> str | None:
    """The date the file states, as Weaviate stores dates (RFC 3339): when it was last modified,
    else created; a stamp without an offset is read as UTC. None when it states none, or one
    no calendar has (a 31 February passes the PDF date syntax)."""
    stamp = info.modified or info.created
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if when.tzinfo else stamp + "Z"


def file_facts(info: DocumentInfo, attachment: str | None) -> dict[str, Any]:
    """What a chunk carries of the files it is in: its document's title, author and date, and
    the signatures of its document and of each embedded file it sits in ("a.pdf", then
    "a.pdf / b.pdf"), each named by its file ("" for the document's own)."""
    parts = attachment.split(" / ") if attachment else []
    files = [""] + [" / ".join(parts[:depth]) for depth in range(1, len(parts) + 1)]
    signatures = [(name, s) for name in files
                  for s in (info.signatures if not name else info.embedded.get(name, DocumentInfo()).signatures)]
    return {
        "title": info.title, "author": info.author, "file_date": file_date(info),
        "signed_by": [s.signer for _, s in signatures],
        "signatures": json.dumps([{"file": name, **s.model_dump()} for name, s in signatures], ensure_ascii=False),
        # an edit after any signature: what the file shows is not all that its signers signed
        "changed_after_signing": any(s.after == "changes" for _, s in signatures) if signatures else None,
    }


def extraction_method(cleaned: CleanedDocument, chunk: Chunk) -> str:
    """How the chunk's pages were read: "text_layer", "ocr", or "ocr+text_layer" where they
    differ or a text-layer page had a scanned region OCRed (a born-digital contract with a
    scanned signature page is text layer but for that page). The document's where its pages
    did not keep it (a workspace written before)."""
    pages = [span for span in cleaned.pages if chunk.page_start <= span.page_no <= chunk.page_end]
    if not pages or not all(span.methods for span in pages):
        return "+".join(cleaned.extraction_methods)
    return "+".join(sorted({method for span in pages for method in span.methods}))


def build_objects(cleaned: CleanedDocument, chunked: ChunkedDocument, embedded: EmbeddedDocument,
                  batch_id: str) -> list[dict[str, Any]]:
    """Weaviate objects (uuid + properties) for one document, in chunk order."""
    objects = []
    version = pipeline_version()
    for index, chunk in enumerate(chunked.chunks):
        reg_ids = find_regulations(chunk.text)
        properties = {
            "text": chunk.text, "lang": chunk.lang, "doc_lang": cleaned.lang, "lang_confidence": cleaned.lang_confidence,
            "doc_id": chunk.doc_id, "chunk_id": chunk.chunk_id, "chunk_index": index,
            "source_path": cleaned.source_path, "page_start": chunk.page_start, "page_end": chunk.page_end,
            "attachment": chunk.attachment or "", "attachment_page": chunk.attachment_page or 0,
            "char_start": chunk.start, "char_end": chunk.end, "structure_type": chunk.structure_type,
            "clause_number": chunk.clause_number or "", "clause_id": chunk.clause_id or "",
            "clause_numbers": chunk.clause_numbers, "clause_path": chunk.clause_path,
            "heading_path": chunk.heading_path, "prev_clause_id": chunk.prev_clause_id or "",
            "next_clause_id": chunk.next_clause_id or "", "semantic_density": chunk.semantic_density,
            "regulation_ids": reg_ids,
            "regulation_facts": json.dumps(regulation_facts(reg_ids), ensure_ascii=False),
            "source_sha256": cleaned.sha256, "pipeline_version": version,
            "extraction_method": extraction_method(cleaned, chunk), "extraction_engines": cleaned.engines,
            "embedder": embedded.embedder,
            "alignment_version": embedded.alignment_versions.get(chunk.lang, embedded.alignment_version),
            "anchor_set_version": embedded.anchor_set_version or "none", "batch_id": batch_id,
            **file_facts(cleaned.info, chunk.attachment),
        }
        objects.append({"uuid": chunk_uuid(properties), "properties": properties})
    return objects


def run(ref: DocRef, settings: Settings) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    cleaned = ws.read_model(ws.path(LANGUAGE, ref.doc_id), CleanedDocument)
    chunked = ws.read_model(ws.path(CHUNK, ref.doc_id), ChunkedDocument)
    embedded = ws.read_model(ws.path(EMBED, ref.doc_id), EmbeddedDocument)
    out = ws.write_json(ws.path(ENRICH, ref.doc_id), build_objects(cleaned, chunked, embedded, ref.batch_id))
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=ENRICH, output=str(out))
