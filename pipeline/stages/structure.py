"""The structure stage: CleanedDocument -> StructuredDocument.

A registry-driven tagger (the clause forms of pipeline.text.clauses). The cleaned text is cut into pieces:
tables (from extraction, kept whole), blank-line separated blocks, and inside a block
at every line that opens a registered form (and, for `inline` forms such as the
Japanese proviso ただし、, right after a sentence end). Each piece is then:
- a HEADER (chapter, section: its title is the rest of the line, or the next short line),
- a CLAUSE opening (the clause runs until the next clause or heading of the same or a
  lower level; CLAUSE_START/CLAUSE_END markers are therefore balanced and nested),
- a CAPTION such as （目的）, which becomes the title of the clause right after it,
- or content: PARAGRAPH, LIST or TABLE, carrying the id of its innermost clause.
Every element has its [start, end) span in the cleaned text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pipeline.config import Settings
from pipeline.contracts import (
    CleanedDocument,
    DocRef,
    Element,
    StageResult,
    StructuredDocument,
)
from pipeline.stages import LANGUAGE, STRUCTURE
from pipeline.text.clauses import ITEM_END, TITLE_MAX_CHARS, Match, match_line, next_subitem
from pipeline.text.toc import toc_lines
from pipeline.workspace import Workspace

LIST_ITEM = re.compile(r"^\s*+(?:[•●○■□◆◇▪‣∙·・\-*–]|\(?[a-zA-Z]\)|[a-z]\.|\d++\))\s+")
# A blank-line separated block, from its first to its last visible character (possessive runs:
# a long run of spaces is read once).
BLOCK = re.compile(r"\S[^\n]*+(?:\n[^\S\n]*+\S[^\n]*+)*+")
SENTENCE_END = tuple("。．.!?！？:：;；」』）)")
INLINE_WINDOW = 40  # an inline form (ただし、) is short: look only this far past each 。
SHORT_LINE = 0.6  # a line under this fraction of its block's longest line is not a wrap
ATTACHMENT_LEVEL = -1  # above every heading level a clause form has: an embedded file's name heads all of it
LIST_CLOSE = tuple(".!?。．！？")  # an item ending its list ("2. ... geregelt ist.") hands back to its clause


@dataclass
class Piece:
    start: int
    end: int
    match: Match | None
    table: bool = False
    toc: bool = False  # a table-of-contents line: never a clause


def _lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, offset = [], start
    for line in text[start:end].split("\n"):
        spans.append((offset, offset + len(line)))
        offset += len(line) + 1
    return spans


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _block_pieces(text: str, start: int, end: int, lang: str, toc: set[int]) -> list[Piece]:
    """A block cut where a line (or, for inline forms, a sentence) opens a form; each TOC line
    (by its start offset in ``toc``) is a piece of its own."""
    lines = _lines(text, start, end)
    longest = max(b - a for a, b in lines)
    cuts: list[tuple[int, Match | None]] = []
    previous: tuple[int, int] | None = None
    for a, b in lines:
        line = text[a:b]
        if a in toc or (previous is not None and previous[0] in toc):
            cuts.append((a, None))  # a TOC line stands alone, and so does what follows it
            previous = (a, b)
            continue
        prev = text[previous[0]:previous[1]].rstrip() if previous is not None else ""
        found = match_line(line, lang, paragraph_start=previous is None or prev.endswith(SENTENCE_END))
        if found and previous is not None and found.form.after_sentence:
            heading_before = cuts[-1][0] == previous[0] and cuts[-1][1] is not None and cuts[-1][1].form.title
            after_item = found.form.nested and ITEM_END.search(prev)
            if not (prev.endswith(SENTENCE_END) or len(prev) < SHORT_LINE * longest or heading_before or after_item):
                found = None  # a PDF line wrap that happens to start with "Section 2" or "§ 3"
        last = cuts[-1][1] if cuts else None
        closes_list = last is not None and last.form.nested and line.lstrip()[:1].isupper() and \
            text[previous[0]:previous[1]].rstrip().endswith(LIST_CLOSE) if previous is not None else False
        if found or previous is None or closes_list or (last and last.form.single_line and cuts[-1][0] == previous[0]):
            cuts.append((a, found))  # (the line after a single-line item, or after a list, starts a new piece)
        at = text.find("。", a, b) + 1
        while 0 < at < b:
            inline = match_line(text[at:min(b, at + INLINE_WINDOW)], lang, inline_only=True)
            if inline:
                cuts.append((at, inline))
            at = text.find("。", at, b) + 1
        previous = (a, b)
    pieces = []
    for (a, found), (b, _) in zip(cuts, [*cuts[1:], (end, None)]):
        a, b = _trim(text, a, b)
        if b > a:
            pieces.append(Piece(a, b, found, toc=a in toc))
    return pieces


def _pieces(doc: CleanedDocument) -> list[Piece]:
    text = doc.text
    tables = sorted((a, b) for a, b in doc.tables if 0 <= a < b <= len(text))
    lines = [(a, b) for a, b in _lines(text, 0, len(text)) if text[a:b].strip()]
    toc = {lines[i][0] for i in toc_lines([text[a:b] for a, b in lines], doc.lang)}
    pieces: list[Piece] = []
    position = 0
    for table_start, table_end in [*tables, (len(text), len(text))]:
        if table_start < position:
            continue  # overlapping table spans: the first one wins
        for m in BLOCK.finditer(text[position:table_start]):
            a, b = _trim(text, position + m.start(), position + m.end())
            pieces.extend(_block_pieces(text, a, b, doc.lang, toc))
        if table_end > table_start:
            a, b = _trim(text, table_start, table_end)
            if b > a:
                pieces.append(Piece(a, b, None, table=True))
        position = max(position, table_end)
    return pieces


def _title_line(text: str, piece: Piece, following: Piece | None, heading: bool) -> tuple[int, int] | None:
    """The span of the line right after a bare number ("Artikel 1" / "Gegenstand und Ziele"):
    the piece's second line, or the next piece when that is one short line. A clause's
    title never ends like a sentence (that is its first sentence); a chapter's may
    ("Einstieg, aber richtig!")."""
    first_end = piece.start + text[piece.start:piece.end].find("\n")
    if first_end >= piece.start:
        second_end = text.find("\n", first_end + 1, piece.end)
        candidate = (first_end + 1, piece.end if second_end < 0 else second_end)
    elif following is not None and not following.match and not following.table:
        candidate = (following.start, following.end)
    else:
        return None
    line = text[candidate[0]:candidate[1]].strip()
    if not any(c.isalnum() for c in line) or len(line) > TITLE_MAX_CHARS or LIST_ITEM.match(line) or \
            (line.endswith(SENTENCE_END) and not heading):
        return None
    return candidate


def _sequence_level(found: Match, open_clauses: list[Element]) -> int:
    """A sequence form's "N." continuing an open clause numbered N-1 takes that clause's level."""
    if found.form.sequence and found.number.isascii() and found.number.isdigit():
        previous = str(int(found.number) - 1)
        for clause in reversed(open_clauses):
            if clause.number == previous:
                return clause.level
    return found.level


def tag(doc: CleanedDocument) -> StructuredDocument:
    text = doc.text
    pieces = _pieces(doc)
    elements: list[Element] = []
    markers: list[tuple[int, str, str]] = []
    open_clauses: list[Element] = []  # stack, innermost last
    single_lines: set[str | None] = set()  # clauses of single_line forms: "一　…" holds its "イ　…" only
    counter = 0
    last_end = 0

    def current() -> str | None:
        return open_clauses[-1].clause_id if open_clauses else None

    def close_until(level: int, at: int) -> None:
        while open_clauses and open_clauses[-1].level >= level:
            clause = open_clauses.pop()
            clause.end = max(at, clause.start)
            markers.append((clause.end, "CLAUSE_END", clause.clause_id or ""))

    def content(start: int, end: int) -> None:
        start, end = _trim(text, start, end)
        if end > start:
            first_line = text[start:end].split("\n", 1)[0]
            kind = "LIST" if LIST_ITEM.match(first_line) else "PARAGRAPH"
            elements.append(Element(type=kind, start=start, end=end, clause_id=current()))  # type: ignore[arg-type]

    attachment_starts = {a.start for a in doc.attachments}
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        following = pieces[i + 1] if i + 1 < len(pieces) else None
        found = piece.match
        caption: Piece | None = None
        if letter := next_subitem(text[piece.start:piece.end], doc.lang, [c.number for c in open_clauses]):
            found = letter  # OCR read the next sub-item's letter as its look-alike (ニ as 二)
        opens = found.level if found and found.form.type == "CLAUSE" else None
        held = next((c for c in open_clauses if c.clause_id in single_lines), None)
        if held is not None and (opens is None or opens <= held.level):
            close_until(held.level, last_end)  # a single-line item holds only the clauses under it
        if piece.start in attachment_starts:
            # An embedded file's name line (pipeline.stages.language): no clause of the document
            # goes on into it, and its name heads its chunks, above its own headings.
            close_until(0, last_end)
            elements.append(Element(type="HEADER", start=piece.start, end=piece.end, level=ATTACHMENT_LEVEL,
                                    title=text[piece.start:piece.end].strip()))
            last_end = piece.end
            i += 1
            continue
        if piece.toc:
            # A contents line belongs to no clause: one opened by a contents entry the TOC
            # detector missed ("3. Arquitectura 2") ends here, or its span would hold TOC chunks
            # that name no clause (the QA gate's clause check failed manuals in the scale run).
            close_until(0, last_end)
            elements.append(Element(type="TOC", start=piece.start, end=piece.end))
            last_end = piece.end
            i += 1
            continue
        if piece.table:
            elements.append(Element(type="TABLE", start=piece.start, end=piece.end, clause_id=current()))
            last_end = piece.end
            i += 1
            continue
        if found and found.form.type == "CAPTION":
            if following and following.match and following.match.form.type == "CLAUSE":
                # （目的） then 第一条: the caption opens the clause and is its title.
                caption, piece, found = piece, following, following.match
                i += 1
                following = pieces[i + 1] if i + 1 < len(pieces) else None
            else:
                found = None
        if found is not None and found.form.nested and not open_clauses:
            found = None  # a lettered list outside any clause (a preamble's) stays a list
        if found is None:
            while open_clauses and open_clauses[-1].item and text[:last_end].rstrip().endswith(LIST_CLOSE):
                close_until(open_clauses[-1].level, last_end)  # the text after a list is its clause's again
            content(piece.start, piece.end)
            last_end = piece.end
            i += 1
            continue

        found.level = _sequence_level(found, open_clauses)
        close_until(found.level, last_end)
        start = caption.start if caption else piece.start
        title = found.title or (caption.match.title if caption and caption.match else None)
        end = piece.end
        title_span = _title_line(text, piece, following, found.form.type == "HEADER") if title is None and found.form.title else None
        if title_span:
            title = text[title_span[0]:title_span[1]].strip()
            if title_span[1] > piece.end:  # the title was the next piece
                end = title_span[1]
                i += 1
        if found.form.type == "HEADER":
            heading_end = title_span[1] if title_span else piece.start + len(text[piece.start:piece.end].split("\n", 1)[0].rstrip())
            elements.append(Element(type="HEADER", start=start, end=heading_end, level=found.level,
                                    number=found.number, title=title))
            content(heading_end, end)
        else:
            counter += 1
            clause = Element(type="CLAUSE", start=start, end=end, level=found.level, number=found.number, title=title,
                             clause_id=f"{doc.doc_id}:c{counter}", parent_id=current(),
                             item=found.form.nested or found.form.single_line)
            open_clauses.append(clause)
            elements.append(clause)

            markers.append((start, "CLAUSE_START", clause.clause_id or ""))
            if caption:
                content(caption.start, caption.end)
            content(piece.start, end)
            if found.form.single_line:
                single_lines.add(clause.clause_id)
        last_end = end
        i += 1
    close_until(0, last_end)
    elements.sort(key=lambda e: (e.start, {"HEADER": 0, "CLAUSE": 1}.get(e.type, 2)))
    markers.sort(key=lambda m: (m[0], 0 if m[1] == "CLAUSE_END" else 1))
    return StructuredDocument(doc_id=doc.doc_id, elements=elements, markers=markers)


def tree(structure: StructuredDocument) -> list[dict[str, Any]]:
    """The elements as a nested tree: headings hold what follows them up to the next
    heading of the same or a lower level, clauses hold their sub-clauses and content."""
    roots: list[dict[str, Any]] = []
    headings: list[tuple[int, dict[str, Any]]] = []  # open headings (level, node)
    clause_nodes: dict[str, dict[str, Any]] = {}

    def node(element: Element) -> dict[str, Any]:
        keys = ("type", "start", "end", "level", "number", "title")
        return {k: getattr(element, k) for k in keys if getattr(element, k) is not None} | {"children": []}

    def attach(item: dict[str, Any], parent_clause: str | None) -> None:
        if parent_clause in clause_nodes:
            clause_nodes[parent_clause]["children"].append(item)
        elif headings:
            headings[-1][1]["children"].append(item)
        else:
            roots.append(item)

    for element in structure.elements:
        item = node(element)
        if element.type == "HEADER":
            while headings and headings[-1][0] >= element.level:
                headings.pop()
            attach(item, None)
            headings.append((element.level, item))
        elif element.type == "CLAUSE":
            attach(item, element.parent_id)
            clause_nodes[element.clause_id or ""] = item
        else:
            attach(item, element.clause_id)
    return roots


def run(ref: DocRef, settings: Settings) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    cleaned = ws.read_model(ws.path(LANGUAGE, ref.doc_id), CleanedDocument)
    out = ws.write_model(ws.path(STRUCTURE, ref.doc_id), tag(cleaned))
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=STRUCTURE, output=str(out))
