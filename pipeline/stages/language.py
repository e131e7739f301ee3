"""The language stage: ExtractedDocument -> CleanedDocument.

Cleaning first (pipeline.text.cleaning), then a language per block (pipeline.text.block_languages):
each block keeps its own language in ``CleanedDocument.lang_spans``, the document its main
one. A document whose text the configured languages do not cover (below the confidence
threshold) loads its sections in configured languages, and names the languages it left out
(``CleanedDocument.left_out``); one without such a section is quarantined with the
per-language shares.
"""

from __future__ import annotations

import logging
from collections import Counter

from pipeline.config import Settings
from pipeline.contracts import (
    AttachmentSpan,
    CleanedDocument,
    DocRef,
    DocumentError,
    ExtractedDocument,
    LangSpan,
    PageSpan,
    RemovedSpan,
    StageResult,
)
from pipeline.extraction.tables import CELL_SEPARATOR
from pipeline.stages import EXTRACT, LANGUAGE
from pipeline.text.block_languages import (
    MIN_DETECT_LETTERS,
    BlockLanguages,
    Sections,
    configured_sections,
    describe_shares,
    label_blocks,
    language_parts,
)
from pipeline.text.cleaning import KeptBlock, clean_pages
from pipeline.text.garbage import is_ocr_garbage
from pipeline.text.langid import detect_block, weighted_letters
from pipeline.workspace import Workspace

log = logging.getLogger(__name__)


def detect_document(pages: list[tuple[int, list[KeptBlock]]], settings: Settings) -> tuple[str, float]:
    """The main language of kept pages and the configured languages' coverage of them."""
    found = label_blocks([text for _, blocks in pages for text, kind in blocks if kind == "text"], settings)
    return found.main, found.coverage


def readable(blocks: list[tuple[str, str]]) -> str:
    """The lines and table cells of all blocks as one text, without those no printed text
    would produce (a scan's junk text layer, which pdfplumber reads as a table of ". ." and
    "dP")."""
    items = (item for text, _ in blocks for line in text.splitlines() for item in line.split(CELL_SEPARATOR))
    return "\n".join(item for item in items if not is_ocr_garbage(item, latin_text=False))


def read_together(blocks: list[tuple[str, str]], settings: Settings) -> BlockLanguages:
    """The language of a document whose prose alone says none, read off its ``readable`` text,
    tables included: a form's labels, each too short to detect, or a price list that is one
    table (tables are left out of the vote otherwise, their numbers and codes mislead it).
    Every block with letters takes that language."""
    whole = label_blocks([readable(blocks)], settings)
    if whole.main == "und":
        return whole
    return BlockLanguages([whole.main if weighted_letters(text) else None for text, _ in blocks],
                          whole.main, whole.shares, whole.coverage)


def name_attachments(doc: ExtractedDocument, kept_pages: list[tuple[int, list[KeptBlock]]]) -> dict[int, int]:
    """Put a line naming each embedded file before its first kept block: a heading of its own
    in the text (the structure stage closes the document's clauses there), and what a reader
    searches for. The page_nos that start with such a line, each with its file's first page_no."""
    attachment_of = {page.page_no: page.attachment for page in doc.pages}
    first_page: dict[str, int] = {}
    for page in doc.pages:
        if page.attachment is not None:
            first_page.setdefault(page.attachment, page.page_no)
    current: str | None = None
    starts = {}
    for page_no, page_blocks in kept_pages:
        attachment = attachment_of.get(page_no)
        if page_blocks and attachment != current:
            current = attachment
            if attachment is not None:
                page_blocks.insert(0, (attachment, "text"))
                starts[page_no] = first_page[attachment]
    return starts


def keep_configured_sections(kept_pages: list[tuple[int, list[KeptBlock]]], sections: Sections,
                             attachment_starts: dict[int, int]) -> tuple[list[RemovedSpan], dict[str, float]]:
    """Keep in ``kept_pages`` (in place) the text ``configured_sections`` chose, and each embedded
    file's name line: the lines removed, and the share of the document's letters left out per
    language."""
    blocks = iter(zip(sections.kept, sections.dropped))
    removed: list[RemovedSpan] = []
    left_out: Counter[str] = Counter()
    for page_no, page_blocks in kept_pages:
        kept_blocks = []
        for index, (text, kind) in enumerate(page_blocks):
            kept, dropped = next(blocks)
            if index == 0 and page_no in attachment_starts:
                kept, dropped = text, []
            if kept is not None:
                kept_blocks.append((kept, kind))
            if dropped:
                removed.append(RemovedSpan(page_no=page_no, text="\n".join(line for line, _ in dropped),
                                           reason="other_language"))
            for line, language in dropped:
                left_out[language] += weighted_letters(line)
        page_blocks[:] = kept_blocks
    total = sum(weighted_letters(text) for _, page_blocks in kept_pages for text, _ in page_blocks)
    total = total + sum(left_out.values()) or 1
    return removed, {lang: round(n / total, 4) for lang, n in left_out.most_common() if n}


def clean_and_detect(doc: ExtractedDocument, settings: Settings) -> CleanedDocument:
    kept_pages, removed = clean_pages(doc, settings)
    for _, page_blocks in kept_pages:  # two paragraphs in two languages that extraction set as one block
        page_blocks[:] = [(part, kind) for text, kind in page_blocks
                          for part in (language_parts(text, settings) if kind == "text" else [text])]
    attachment_starts = name_attachments(doc, kept_pages)
    blocks = [(text, kind) for _, page_blocks in kept_pages for text, kind in page_blocks]
    found = label_blocks([text if kind == "text" else "" for text, kind in blocks], settings)
    if found.main == "und":
        found = read_together(blocks, settings)
    name = doc.source_path.rsplit("/", 1)[-1]
    if found.main == "und":
        letters = weighted_letters(readable(blocks))
        if removed or not letters:
            raise DocumentError("no_text", f"{name}: no text left after removing running matter and garbage "
                                           f"({len(removed)} line(s) removed)")
        raise DocumentError("no_text", f"{name}: too little text to tell its language ({letters} letter(s) "
                                       f"in readable lines, fewer than {MIN_DETECT_LETTERS})")
    left_out: dict[str, float] = {}
    if found.coverage < settings.language.min_confidence:
        reason = "unsupported_language" if found.main not in settings.languages else "low_language_confidence"
        coverage = (f"the configured languages ({', '.join(settings.languages)}) cover {found.coverage:.0%} of the "
                    f"text < {settings.language.min_confidence:.0%}; shares {describe_shares(found.shares)}")
        sections = configured_sections(blocks, settings) if settings.language.configured_sections else None
        if sections is None or not any(sections.kept):
            raise DocumentError(reason, f"{name}: {coverage}")
        other_language, left_out = keep_configured_sections(kept_pages, sections, attachment_starts)
        removed += other_language
        blocks = [(text, kind) for _, page_blocks in kept_pages for text, kind in page_blocks]
        found = label_blocks([text if kind == "text" else "" for text, kind in blocks], settings)
        if found.coverage < settings.language.min_confidence:  # short lines of the other language swept in
            raise DocumentError(reason, f"{name}: {coverage}; its sections in configured languages cover "
                                        f"{found.coverage:.0%} of themselves")
        log.warning("%s: %s; loaded its sections in configured languages, left out %s", name, coverage,
                    describe_shares(left_out))
    # Blocks and pages are joined by a blank line: paragraph boundaries survive as "\n\n".
    methods = {p.page_no: sorted({p.method} | {b.method for b in p.blocks if b.method}) for p in doc.pages}
    text_parts: list[str] = []
    spans: list[PageSpan] = []
    tables: list[tuple[int, int]] = []
    lang_spans: list[LangSpan] = []
    labels = iter(found.labels)
    offset = 0
    attachments: list[AttachmentSpan] = []
    for page_no, page_blocks in kept_pages:
        page_start: int | None = None
        for text, kind in page_blocks:
            if text_parts:
                offset += 2
            if page_start is None:
                page_start = offset
                if page_no in attachment_starts:
                    if attachments:
                        attachments[-1].end = offset
                    attachments.append(AttachmentSpan(name=text, start=offset, end=0,
                                                      first_page=attachment_starts[page_no]))
            if kind == "table":
                tables.append((offset, offset + len(text)))
            lang = next(labels) or found.main
            if lang_spans and lang_spans[-1].lang == lang:
                lang_spans[-1].end = offset + len(text)
            else:
                lang_spans.append(LangSpan(start=offset, end=offset + len(text), lang=lang))
            text_parts.append(text)
            offset += len(text)
        if page_start is not None:
            spans.append(PageSpan(page_no=page_no, start=page_start, end=offset, methods=methods[page_no]))
    if attachments:
        attachments[-1].end = offset
    return CleanedDocument(
        doc_id=doc.doc_id, source_path=doc.source_path, sha256=doc.sha256, lang=found.main,
        lang_confidence=round(found.coverage, 4), lang_shares=found.shares, lang_spans=lang_spans,
        text="\n\n".join(text_parts), pages=spans, tables=tables, removed=removed, attachments=attachments,
        left_out=left_out, info=doc.info,
        extraction_methods=sorted({p.method for p in doc.pages}), engines=doc.engines,
    )


def warm(settings: Settings) -> None:
    """Load fastText and the Han character sets before the first document needs them."""
    detect_block("Rosetta 文書の言語", settings)


def run(ref: DocRef, settings: Settings) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    extracted = ws.read_model(ws.path(EXTRACT, ref.doc_id), ExtractedDocument)
    cleaned = clean_and_detect(extracted, settings)
    out = ws.write_model(ws.path(LANGUAGE, ref.doc_id), cleaned)
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=LANGUAGE, output=str(out))
