"""The chunk stage, semantic chunking: CleanedDocument + StructuredDocument -> ChunkedDocument.

See docs/chunking.md. In short:
1. Units. The content of each clause (or heading, or table) in one language is a *segment*
   (a language change, CleanedDocument.lang_spans, starts a new one; its chunks carry that
   language); its units are
   sentences (pipeline.text.sentences) or table rows. A heading, a caption or a bare clause
   number ("Article 1 / Subject-matter") is glued to the first sentence after it, so a
   clause number is never separated from its first sentence.
2. Packing. A segment that fits the language's budget (languages.<lang>.chunk_chars) is
   one chunk. A longer one is cut where the topic shifts: among the sentence boundaries
   that leave the chunk between 70 % of the budget and the budget, the one whose two
   neighbouring sentences are least similar (cosine of their embeddings) if that
   similarity is under chunking.similarity_threshold, else the last one (the chunk is
   filled). Only sentences next to candidate boundaries are embedded, in one batch.
   Tables are cut between rows only. A unit longer than the budget is a chunk on its own.
3. Tiny chunks (under chunking.min_chunk_chars) join a neighbour within the budget: the
   previous chunk when it is the same clause or an enclosing one (a proviso stays with
   its article), else the next one. Only then does a chunk cross a clause boundary, and
   never between two top-level clauses (two short articles stay two chunks) or into a
   table.

semantic_density: TF-IDF based, see ``semantic_densities``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

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
from pipeline.embedding.embedders import get_embedder
from pipeline.stages import CHUNK, LANGUAGE, STRUCTURE
from pipeline.text import sentences
from pipeline.text.clauses import ITEM_END
from pipeline.workspace import Workspace

CJK_LANGS = {"zh", "ja"}
SENTENCE_END = re.compile(r"[.!?。！？．…:：;；][\"'”’」』）)\]】》]*\s*$")
ROW = re.compile(r"\S[^\n]*+")  # a table row: a line with text
WORD = re.compile(r"\w{2,}")
WINDOW = 0.7  # a cut leaves a chunk of at least this fraction of the budget
SIMILARITY_CHARS = 120  # how much of a sentence is embedded to compare it with its neighbour

Span = tuple[int, int]


@dataclass
class Segment:
    """Consecutive content of one clause, one heading's text, or one table."""

    kind: str  # "TABLE", "HEADER" or the type of the segment's first element
    clause_id: str | None
    lang: str  # a segment is in one language (CleanedDocument.lang_spans); its chunks carry it
    units: list[Span] = field(default_factory=list)  # sentences (or rows); glued headings included
    headed: bool = False  # starts with a heading (chapter, section) glued to its first sentence


def segments(doc: CleanedDocument, structure: StructuredDocument) -> list[Segment]:
    """The document's segments in order, headings and bare clause numbers glued forward."""
    text = doc.text
    clause_at = {e.start: e for e in structure.elements if e.type == "CLAUSE"}
    raw: list[tuple[Segment, bool]] = []  # (segment, starts at a clause or heading)
    for element in structure.elements:
        if element.type == "CLAUSE":
            continue
        lang = doc.lang_at(element.start, element.end)
        if element.type == "TABLE":
            rows = [(element.start + m.start(), element.start + m.end())
                    for m in ROW.finditer(text[element.start:element.end])]
            raw.append((Segment("TABLE", element.clause_id, lang, rows), False))
            continue
        # a contents entry is one unit: its dot leader is no sentence end, its page number no sentence
        units = [(element.start, element.end)] if element.type == "TOC" \
            else sentences.split(text, element.start, element.end, lang)
        previous = raw[-1][0] if raw else None
        opens = element.type == "HEADER" or element.start in clause_at
        continues_toc = previous and previous.kind == element.type == "TOC"  # one TOC, packed like prose
        if previous and previous.lang == lang and (continues_toc or (
                previous.kind not in ("TABLE", "HEADER", "TOC") and element.type != "TOC"
                and previous.clause_id == element.clause_id and not opens)):
            previous.units.extend(units)
        else:
            raw.append((Segment(element.type, element.clause_id, lang, units), opens))

    result: list[Segment] = []
    pending: int | None = None  # start of a heading waiting for its first sentence
    pending_heading = False  # ... and whether a chapter/section heading is among it
    for segment, opens in raw:
        units = list(segment.units)
        clause = clause_at.get(units[0][0]) if units else None
        if pending is not None and units and segment.kind != "TABLE":
            units[0] = (pending, units[0][1])
            segment.headed = pending_heading
            pending = None
        if opens and segment.kind != "TABLE":
            # Leading units that do not end a sentence (number, title, caption) glue forward; an
            # item ("1. die Verwaltung ...,", "一　法令に基づく場合") is content of its own.
            while len(units) > 1 and _heading_part(text, units[0], clause):
                units[:2] = [(units[0][0], units[1][1])]
            if segment.kind == "HEADER" or (len(units) == 1 and _heading_part(text, units[0], clause)):
                pending_heading = segment.kind == "HEADER" or (pending is not None and pending_heading)
                pending = units[0][0] if units else pending
                continue
        if pending is not None:  # a heading right before a table stays a chunk of its own
            result.append(Segment("HEADER", None, segment.lang, [(pending, _end_before(text, units[0][0]))]))
            pending = None
        segment.units = units
        if units:
            result.append(segment)
    if pending is not None:
        result.append(Segment("HEADER", None, doc.lang_at(pending, len(text)), [(pending, len(text.rstrip()))]))
    return result


def _heading_part(text: str, unit: Span, clause: Element | None) -> bool:
    """Whether a clause's (or heading's) leading unit is its number, title or caption, waiting for
    the first sentence: it ends no sentence and no list item ("1. die ...,", "一　...場合")."""
    line = text[unit[0]:unit[1]].strip()
    if SENTENCE_END.search(line) or ITEM_END.search(line):
        return False
    return clause is None or not clause.item or len(line) <= len(clause.number or "") + 2


def _end_before(text: str, offset: int) -> int:
    return len(text[:offset].rstrip())


def _pack(units: list[Span], budget: int, threshold: float,
          similarity: Callable[[list[int]], list[float | None]] | None) -> list[list[Span]]:
    """Greedy packing within the budget; each cut at the weakest known boundary of its
    window when that is under the threshold, else at the window's end (the chunk filled)."""
    groups = []
    i = 0
    while i < len(units):
        j = i
        while j + 1 < len(units) and units[j + 1][1] - units[i][0] <= budget:
            j += 1
        if j == len(units) - 1:
            groups.append(units[i:])
            break
        candidates = [k for k in range(i, j + 1) if units[k][1] - units[i][0] >= WINDOW * budget] or [j]
        cut = candidates[-1]
        if similarity is not None and len(candidates) > 1:
            known = [(score, -n) for n, score in enumerate(similarity(candidates)) if score is not None]
            if known and min(known)[0] < threshold:
                cut = candidates[-min(known)[1]]
        groups.append(units[i:cut + 1])
        i = cut + 1
    return groups


def _even_tail(groups: list[list[Span]], min_chars: int) -> list[list[Span]]:
    """Move whole lines from the next-to-last group into a last group under ``min_chars`` (a
    contents page's last entry alone, "5.7 docs . . . 35", is a chunk of four letters), while
    the donor keeps ``min_chars``; the moved lines came from within the budget, so they fit."""
    if len(groups) < 2:
        return groups
    *head, donor, tail = [list(g) for g in groups]
    while len(donor) > 1 and tail[-1][1] - tail[0][0] < min_chars and donor[-2][1] - donor[0][0] >= min_chars:
        tail.insert(0, donor.pop())
    return [*head, donor, tail]


def _boundary_units(segs: list[Segment], budget: Callable[[str], int]) -> list[Span]:
    """The sentences on both sides of the candidate boundaries of every window when each
    segment is simply filled to the budget: what the similarity cuts will look at."""
    needed: list[Span] = []
    for seg in segs:
        if seg.kind == "TABLE" or seg.units[-1][1] - seg.units[0][0] <= budget(seg.lang):
            continue
        def collect(candidates: list[int], units: list[Span] = seg.units) -> list[float | None]:
            needed.extend(units[k] for c in candidates for k in (c, c + 1))
            return [None] * len(candidates)
        _pack(seg.units, budget(seg.lang), 0.0, collect)
    return list(dict.fromkeys(needed))


def _sentence_vectors(doc: CleanedDocument, segs: list[Segment], budget: Callable[[str], int],
                      settings: Settings) -> dict[Span, np.ndarray]:
    """Embeddings of the sentences next to candidate boundaries, in one batch (per-call
    overhead dominates small batches). Windows are those of simply filled chunks; after a
    cut moves, a later window may hold sentences without a vector: they are not compared.
    A sentence's first SIMILARITY_CHARS characters stand for it. Segments that fit the
    budget need none."""
    units = _boundary_units(segs, budget)
    if not units:
        return {}
    embedder = get_embedder(settings.chunking.embedder, settings.embedding.batch_size)
    vectors = embedder.encode([doc.text[a:b][:SIMILARITY_CHARS] for a, b in units])
    return dict(zip(units, vectors))


def _terms(text: str, lang: str) -> list[str]:
    if lang in CJK_LANGS:
        chars = [c for c in text if c.isalnum()]
        return [a + b for a, b in zip(chars, chars[1:])]
    return [w.lower() for w in WORD.findall(text)]


def semantic_densities(texts: list[str], lang: str | list[str]) -> list[float]:
    """Per chunk: the tf-weighted mean IDF of its terms over the document's chunks,
    divided by the largest IDF possible, log(1 + n_chunks); in [0, 1]. High when a chunk's
    vocabulary is specific to it, low for boilerplate repeated across the document.
    Terms are words (2+ characters) for space-separated languages and character bigrams
    for Chinese and Japanese (``lang``: the document's, or each text's)."""
    langs = [lang] * len(texts) if isinstance(lang, str) else lang
    term_lists = [_terms(t, text_lang) for t, text_lang in zip(texts, langs)]
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


def _ancestors(clauses: dict[str, Element], clause_id: str | None) -> list[str | None]:
    """The clause and the clauses around it, innermost first."""
    chain: list[str | None] = [clause_id]
    while clause_id in clauses and clauses[clause_id].parent_id:
        clause_id = clauses[clause_id].parent_id
        chain.append(clause_id)
    return chain


Draft = tuple[list[Segment], int, int]  # the segments a chunk holds, its start and end


def _merge_tiny(drafts: list[Draft], clauses: dict[str, Element], budget: Callable[[str], int],
                min_chars: int) -> list[Draft]:
    def ancestors(clause_id: str | None) -> list[str | None]:
        return _ancestors(clauses, clause_id)

    def joinable(a: list[Segment], b: list[Segment]) -> bool:
        """Never glue two top-level clauses (two articles), a table, or anything to the start
        of a new chapter or section, or text in another language, or text after contents (a
        clause would lose its number); parts of one clause may join."""
        if any(seg.kind == "TABLE" for seg in (*a, *b)) or b[0].headed or a[0].lang != b[0].lang \
                or (a[-1].kind == "TOC" and b[0].kind != "TOC"):
            return False
        roots = {ancestors(seg.clause_id)[-1] for seg in (*a, *b) if seg.clause_id}
        return len(roots) <= 1

    chunks = list(drafts)
    i = 0
    while i < len(chunks):
        segs, start, end = chunks[i]
        if end - start >= min_chars:
            i += 1
            continue
        prev = chunks[i - 1] if i > 0 and joinable(chunks[i - 1][0], segs) else None
        nxt = chunks[i + 1] if i + 1 < len(chunks) and joinable(segs, chunks[i + 1][0]) else None
        prev_fits = prev is not None and end - prev[1] <= budget(segs[0].lang)
        next_fits = nxt is not None and nxt[2] - start <= budget(segs[0].lang)
        if prev_fits and (prev[0][-1].clause_id in ancestors(segs[0].clause_id) or not next_fits):
            assert prev is not None
            chunks[i - 1:i + 1] = [(prev[0] + segs, prev[1], end)]
        elif next_fits:
            assert nxt is not None
            chunks[i:i + 2] = [(segs + nxt[0], start, nxt[2])]
        else:
            i += 1
    return chunks


def warm(settings: Settings) -> None:
    """Load the sentence encoder's weights before the first document needs them."""
    get_embedder(settings.chunking.embedder, settings.embedding.batch_size).encode(["Rosetta"])


def chunk_document(doc: CleanedDocument, structure: StructuredDocument, settings: Settings) -> ChunkedDocument:
    def budget(lang: str) -> int:  # a passage in an unconfigured language is cut like the main one
        return settings.languages[lang if lang in settings.languages else doc.lang].chunk_chars

    cfg = settings.chunking
    segs = segments(doc, structure)
    vectors = _sentence_vectors(doc, segs, budget, settings)

    def similarity(units: list[Span], candidates: list[int]) -> list[float | None]:
        return [float(vectors[units[c]] @ vectors[units[c + 1]])
                if units[c] in vectors and units[c + 1] in vectors else None for c in candidates]

    drafts: list[Draft] = []
    for seg in segs:
        compare = None if seg.kind == "TABLE" else (lambda candidates, units=seg.units: similarity(units, candidates))
        groups = _pack(seg.units, budget(seg.lang), cfg.similarity_threshold, compare)
        if seg.kind == "TOC":
            groups = _even_tail(groups, cfg.min_chunk_chars)
        for group in groups:
            drafts.append(([seg], group[0][0], group[-1][1]))
    clauses = {e.clause_id: e for e in structure.elements if e.type == "CLAUSE" and e.clause_id}
    merged = _merge_tiny(drafts, clauses, budget, cfg.min_chunk_chars)
    densities = semantic_densities([doc.text[a:b] for _, a, b in merged], [segs[0].lang for segs, _, _ in merged])
    chunks = []
    for index, ((segs, start, end), density) in enumerate(zip(merged, densities)):
        attachment = doc.attachment_at(start)
        # the text of the file the chunk is in: its neighbouring clauses are that file's
        own_file = ((attachment.start, attachment.end) if attachment
                    else (0, doc.attachments[0].start if doc.attachments else len(doc.text)))
        context = _context(structure, clauses, doc.text, segs, start, own_file)
        kinds = {seg.kind for seg in segs}
        page_start = doc.page_at(start)
        chunks.append(Chunk(
            chunk_id=f"{doc.doc_id}:{index:04d}", doc_id=doc.doc_id, lang=segs[0].lang, text=doc.text[start:end],
            start=start, end=end, page_start=page_start, page_end=doc.page_at(max(start, end - 1)),
            structure_type="TABLE" if kinds == {"TABLE"} else ("CLAUSE" if context["clause_id"] else segs[-1].kind),  # type: ignore[arg-type]
            semantic_density=density, attachment=attachment.name if attachment else None,
            attachment_page=page_start - attachment.first_page + 1 if attachment else None, **context,
        ))
    return ChunkedDocument(doc_id=doc.doc_id, lang=doc.lang, chunks=chunks)


def _label(element: Element, text: str) -> str:
    if element.type == "HEADER":
        return " ".join(x for x in (element.number, element.title) if x) or text[element.start:element.end].strip()
    return " ".join(x for x in (element.number, element.title) if x)


def _context(structure: StructuredDocument, clauses: dict[str, Element], text: str, segs: list[Segment],
             start: int, own_file: tuple[int, int]) -> dict:
    """Clause, heading path and neighbouring clauses of a chunk made of ``segs``: its
    clause is the innermost one holding all of its segments (headings glued to a clause's
    first sentence belong to that clause); its neighbours lie in the same file (``own_file``,
    a span of the text: the document's own pages, or one embedded file's)."""
    chains = [_ancestors(clauses, seg.clause_id)[::-1] if seg.clause_id else [] for seg in segs]
    common: list[str] = []
    if chains:
        for level in zip(*chains):
            if len(set(level)) > 1:
                break
            common.append(level[0] or "")
    holding = [clauses[c] for c in common]
    innermost = holding[-1] if holding else None
    # the sub-clauses a chunk spans below its innermost clause, as a range: "§ 1 (2)–(3)"
    spanned = list(dict.fromkeys(chain[len(common)] for chain in chains if len(chain) > len(common)))
    path = [c.number or "" for c in holding]
    if len(spanned) > 1:
        path.append(f"{clauses[spanned[0]].number}–{clauses[spanned[-1]].number}")
    anchor = innermost.start if innermost else start
    headers: list[Element] = []
    for element in structure.elements:
        if element.start > max(anchor, start):
            break
        if element.type == "HEADER":
            while headers and headers[-1].level >= element.level:
                headers.pop()
            headers.append(element)
    prev_clause = next_clause = None
    if innermost is not None:
        order = list(clauses.values())
        related = {c.clause_id for c in order if innermost.start <= c.start and c.end <= innermost.end} | set(common)
        # neighbours: the nearest clauses outside this one at its level or above (第十二条 and
        # 第十四条 for 第十三条, not 第十二条's last item)
        others = [c for c in order if c.clause_id not in related and c.level <= innermost.level
                  and own_file[0] <= c.start < own_file[1]]
        prev_clause = next((c.clause_id for c in reversed(others) if c.start < innermost.start), None)
        next_clause = next((c.clause_id for c in others if c.start > innermost.start), None)
    return {
        "clause_id": innermost.clause_id if innermost else None,
        "clause_number": innermost.number if innermost else None,
        "clause_numbers": [c.number or "" for c in holding],
        "clause_path": " ".join(path),
        "heading_path": [_label(h, text) for h in headers] + [_label(c, text) for c in holding],
        "prev_clause_id": prev_clause,
        "next_clause_id": next_clause,
    }


def run(ref: DocRef, settings: Settings) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    cleaned = ws.read_model(ws.path(LANGUAGE, ref.doc_id), CleanedDocument)
    structure = ws.read_model(ws.path(STRUCTURE, ref.doc_id), StructuredDocument)
    out = ws.write_model(ws.path(CHUNK, ref.doc_id), chunk_document(cleaned, structure, settings))
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=CHUNK, output=str(out))
