"""The language stage: ExtractedDocument -> CleanedDocument.

Cleaning first (pipeline.text.cleaning), then language detection per page
(pipeline.text.langid), voted per document by text length. A document below the confidence
threshold or in a language not configured is quarantined.
"""

from __future__ import annotations

from collections import Counter

from pipeline.config import Settings
from pipeline.contracts import (
    CleanedDocument,
    DocRef,
    DocumentError,
    ExtractedDocument,
    PageSpan,
    StageResult,
)
from pipeline.stages import EXTRACT, LANGUAGE
from pipeline.text.cleaning import KeptBlock, clean_pages
from pipeline.text.langid import detect_block
from pipeline.workspace import Workspace


def detect_document(pages: list[tuple[int, list[KeptBlock]]], settings: Settings) -> tuple[str, float]:
    """Vote of the pages' languages, each page weighing length x detection score.

    Confidence is the winner's share of all the evidence: a clean monolingual document
    scores near 1 even where code or tables lower single-page scores; a document whose
    pages disagree (mixed languages, OCR noise read as random languages) scores low.
    """
    evidence: Counter[str] = Counter()
    budget = settings.language.sample_chars
    for _, blocks in pages:
        paragraph = " ".join(text for text, kind in blocks if kind == "text")
        if len(paragraph.strip()) < 3:
            continue
        lang, score = detect_block(paragraph, settings)
        weight = min(len(paragraph), budget)
        evidence[lang] += weight * score
        budget -= weight
        if budget <= 0:
            break
    total = sum(evidence.values())
    if not total:
        return "und", 0.0
    lang, score = evidence.most_common(1)[0]
    return lang, score / total


def clean_and_detect(doc: ExtractedDocument, settings: Settings) -> CleanedDocument:
    kept_pages, removed = clean_pages(doc, settings)
    lang, confidence = detect_document(kept_pages, settings)
    name = doc.source_path.rsplit("/", 1)[-1]
    if lang == "und":
        raise DocumentError("no_text", f"{name}: no text left after removing running matter and garbage "
                                       f"({len(removed)} line(s) removed)")
    if lang not in settings.languages:
        raise DocumentError("unsupported_language",
                            f"{name}: detected language {lang!r} ({confidence:.2f}) is not configured "
                            f"({', '.join(settings.languages)})")
    if confidence < settings.language.min_confidence:
        raise DocumentError("low_language_confidence",
                            f"{name}: language {lang!r} at confidence {confidence:.2f} "
                            f"< {settings.language.min_confidence}")
    # Blocks and pages are joined by a blank line: paragraph boundaries survive as "\n\n".
    text_parts: list[str] = []
    spans: list[PageSpan] = []
    tables: list[tuple[int, int]] = []
    offset = 0
    for page_no, blocks in kept_pages:
        page_start: int | None = None
        for text, kind in blocks:
            if text_parts:
                offset += 2
            if page_start is None:
                page_start = offset
            if kind == "table":
                tables.append((offset, offset + len(text)))
            text_parts.append(text)
            offset += len(text)
        if page_start is not None:
            spans.append(PageSpan(page_no=page_no, start=page_start, end=offset))
    return CleanedDocument(
        doc_id=doc.doc_id, source_path=doc.source_path, sha256=doc.sha256, lang=lang,
        lang_confidence=round(confidence, 4), text="\n\n".join(text_parts), pages=spans, tables=tables, removed=removed,
        extraction_methods=sorted({p.method for p in doc.pages}), engines=doc.engines,
    )


def run(ref: DocRef, settings: Settings) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    extracted = ws.read_model(ws.path(EXTRACT, ref.doc_id), ExtractedDocument)
    cleaned = clean_and_detect(extracted, settings)
    out = ws.write_model(ws.path(LANGUAGE, ref.doc_id), cleaned)
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=LANGUAGE, output=str(out))
