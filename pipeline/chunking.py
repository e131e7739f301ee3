"""Stage 4, semantic chunking: CleanedDocument + StructuredDocument -> ChunkedDocument.

Sentences (pipeline.sentences) inside one structural segment (the content of one clause,
or a table) are merged greedily while the next sentence stays similar to the chunk
(cosine of embeddings >= similarity_threshold) and the chunk stays within the
language's character budget. Chunks never cross a clause boundary, except that a chunk
smaller than min_chunk_chars (a tiny clause, a lone heading) joins its successor.
Tables are split only between rows.

semantic_density: the mean IDF of a chunk's terms over the document's chunks, divided by
the largest possible IDF (log(1 + n_chunks)), in [0, 1]: high when the chunk's
vocabulary is specific to it, low for boilerplate. Terms are words for space-separated
languages and character bigrams for Chinese and Japanese.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from pipeline import sentences
from pipeline.config import Settings
from pipeline.contracts import (
    Chunk,
    ChunkedDocument,
    CleanedDocument,
    DocRef,
    Element,
    StageResult,
    StructuredDocument,
)
from pipeline.embedders import get_embedder
from pipeline.workspace import Workspace

STAGE = "chunk"
CJK_LANGS = {"zh", "ja"}


@dataclass
class Segment:
    """Consecutive content of one clause (or one table), chunked on its own."""

    kind: str  # "TABLE" or the first element's type
    clause_id: str | None
    heading_path: list[str]
    spans: list[tuple[int, int]] = field(default_factory=list)  # sentence (or row) spans


def _clause_label(element: Element) -> str:
    return " ".join(x for x in (element.number, element.title) if x)


def segments(doc: CleanedDocument, structure: StructuredDocument) -> list[Segment]:
    clauses = [e for e in structure.elements if e.type == "CLAUSE"]
    headers: list[tuple[int, str]] = []  # (level, text) of the open headings
    result: list[Segment] = []
    for element in structure.elements:
        if element.type == "CLAUSE":
            continue
        if element.type == "HEADER":
            while headers and headers[-1][0] >= element.level:
                headers.pop()
            headers.append((element.level, doc.text[element.start:element.end].strip()))
        open_clauses = sorted((c for c in clauses if c.start <= element.start < max(c.end, c.start + 1)),
                              key=lambda c: c.level)
        path = [h for _, h in headers] + [_clause_label(c) for c in open_clauses]
        if element.type == "TABLE":
            rows = [(m.start() + element.start, m.end() + element.start)
                    for m in re.finditer(r"[^\n]+", doc.text[element.start:element.end])]
            result.append(Segment("TABLE", element.clause_id, path, rows))
            continue
        spans = sentences.split(doc.text, element.start, element.end)
        previous = result[-1] if result else None
        if previous and previous.kind != "TABLE" and previous.clause_id == element.clause_id and element.type != "HEADER":
            previous.spans.extend(spans)
        else:
            result.append(Segment(element.type, element.clause_id, path, spans))
    return [s for s in result if s.spans]


def _merge(spans: list[tuple[int, int]], vectors: np.ndarray | None, budget: int, threshold: float,
           min_chars: int) -> list[list[tuple[int, int]]]:
    groups: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    centroid: np.ndarray | None = None
    for i, span in enumerate(spans):
        if current:
            size = span[1] - current[0][0]
            similar = True
            if vectors is not None and centroid is not None:
                similar = float(centroid @ vectors[i]) / max(float(np.linalg.norm(centroid)), 1e-12) >= threshold
            if size > budget or (not similar and current[-1][1] - current[0][0] >= min_chars):
                groups.append(current)
                current, centroid = [], None
        current.append(span)
        if vectors is not None:
            centroid = vectors[i].copy() if centroid is None else centroid + vectors[i]
    if current:
        groups.append(current)
    return groups


def _terms(text: str, lang: str) -> list[str]:
    if lang in CJK_LANGS:
        chars = [c for c in text if c.isalnum()]
        return [a + b for a, b in zip(chars, chars[1:])]
    return [w.lower() for w in re.findall(r"\w{2,}", text)]


def semantic_densities(texts: list[str], lang: str) -> list[float]:
    term_lists = [_terms(t, lang) for t in texts]
    n = len(texts)
    df = Counter(term for terms in term_lists for term in set(terms))
    top = math.log(1 + n) or 1.0
    densities = []
    for terms in term_lists:
        if not terms:
            densities.append(0.0)
            continue
        idf = [math.log(1 + n / df[t]) for t in terms]
        densities.append(round(min(1.0, sum(idf) / len(idf) / top), 4))
    return densities


def chunk_document(doc: CleanedDocument, structure: StructuredDocument, settings: Settings) -> ChunkedDocument:
    budget = settings.languages[doc.lang].chunk_chars
    cfg = settings.chunking
    segs = segments(doc, structure)
    text_spans = [s for seg in segs if seg.kind != "TABLE" for s in seg.spans]
    embedder = get_embedder(settings.embedding.model, settings.embedding.batch_size)
    vectors = embedder.encode([doc.text[a:b] for a, b in text_spans])
    vector_of = {span: vectors[i] for i, span in enumerate(text_spans)}

    drafts: list[tuple[Segment, int, int]] = []
    for seg in segs:
        seg_vectors = None if seg.kind == "TABLE" else np.array([vector_of[s] for s in seg.spans])
        threshold = -1.0 if seg.kind == "TABLE" else cfg.similarity_threshold
        for group in _merge(seg.spans, seg_vectors, budget, threshold, cfg.min_chunk_chars):
            drafts.append((seg, group[0][0], group[-1][1]))

    # A tiny chunk (lone heading, tiny clause) joins the next one when both fit the budget.
    merged: list[tuple[Segment, int, int]] = []
    for seg, start, end in drafts:
        if merged:
            prev_seg, prev_start, prev_end = merged[-1]
            if (prev_end - prev_start < cfg.min_chunk_chars and end - prev_start <= budget
                    and "TABLE" not in (seg.kind, prev_seg.kind)):
                merged[-1] = (prev_seg if prev_seg.clause_id else seg, prev_start, end)
                continue
        merged.append((seg, start, end))

    clause_order = [e.clause_id for e in structure.elements if e.type == "CLAUSE"]
    clause_numbers = {e.clause_id: e.number for e in structure.elements if e.type == "CLAUSE"}
    densities = semantic_densities([doc.text[a:b] for _, a, b in merged], doc.lang)
    chunks = []
    for index, ((seg, start, end), density) in enumerate(zip(merged, densities)):
        position = clause_order.index(seg.clause_id) if seg.clause_id in clause_order else None
        chunks.append(Chunk(
            chunk_id=f"{doc.doc_id}:{index:04d}", doc_id=doc.doc_id, lang=doc.lang, text=doc.text[start:end],
            start=start, end=end, page_start=doc.page_at(start), page_end=doc.page_at(max(start, end - 1)),
            structure_type="TABLE" if seg.kind == "TABLE" else ("CLAUSE" if seg.clause_id else seg.kind),  # type: ignore[arg-type]
            clause_number=clause_numbers.get(seg.clause_id), clause_id=seg.clause_id, heading_path=seg.heading_path,
            prev_clause_id=clause_order[position - 1] if position else None,
            next_clause_id=clause_order[position + 1] if position is not None and position + 1 < len(clause_order) else None,
            semantic_density=density,
        ))
    return ChunkedDocument(doc_id=doc.doc_id, lang=doc.lang, chunks=chunks)


def run(ref: DocRef, settings: Settings) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    cleaned = ws.read_model(ws.path("language", ref.doc_id), CleanedDocument)
    structure = ws.read_model(ws.path("structure", ref.doc_id), StructuredDocument)
    out = ws.write_model(ws.path(STAGE, ref.doc_id), chunk_document(cleaned, structure, settings))
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=STAGE, output=str(out))
