"""Stage 3, structure: CleanedDocument -> StructuredDocument.

A registry-driven tagger (structure_patterns.yaml): each line is matched against the
forms registered for the document's language; a CLAUSE opens at its number and closes
before the next clause of the same or a higher level (or a higher-level HEADER), giving
balanced, nested CLAUSE_START/CLAUSE_END markers. Blocks become PARAGRAPH, LIST or
TABLE elements (tables come from extraction and are kept whole), each with the id of
the innermost clause that holds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from pipeline.config import Settings
from pipeline.contracts import CleanedDocument, DocRef, Element, StageResult, StructuredDocument
from pipeline.workspace import Workspace

STAGE = "structure"
PATTERNS_FILE = Path(__file__).with_name("structure_patterns.yaml")
LIST_ITEM = re.compile(r"^\s*(?:[•●○■□◆◇▪‣∙·・\-*–]|\(?[a-zA-Z]\)|[a-z]\.|\d+\))\s+")


@dataclass(frozen=True)
class Form:
    id: str
    langs: tuple[str, ...]
    type: str
    level: int | str
    regex: re.Pattern[str]
    title: bool
    max_line_chars: int

    def level_of(self, number: str) -> int:
        return 1 + number.count(".") if self.level == "dotted" else int(self.level)


@lru_cache(maxsize=1)
def forms() -> tuple[Form, ...]:
    entries = yaml.safe_load(PATTERNS_FILE.read_text(encoding="utf-8"))
    return tuple(
        Form(id=e["id"], langs=tuple(e["langs"]), type=e["type"], level=e["level"],
             regex=re.compile(r"\s*(?:" + e["pattern"] + r")"), title=bool(e.get("title")),
             max_line_chars=int(e.get("max_line_chars", 10_000)))
        for e in entries
    )


@dataclass
class Match:
    form: Form
    number: str
    title: str | None
    level: int


def match_line(line: str, lang: str) -> Match | None:
    for form in forms():
        if lang not in form.langs or len(line) > form.max_line_chars:
            continue
        m = form.regex.match(line)
        if m:
            rest = line[m.end():].strip(" .:：、-–—\t")
            title = rest if form.title and rest and len(rest) < 120 else None
            number = m.group(0).strip()
            return Match(form=form, number=number, title=title, level=form.level_of(m.group("num")))
    return None


def _blocks(text: str) -> list[tuple[int, int]]:
    """Spans of the blank-line separated blocks of the cleaned text."""
    spans = []
    for m in re.finditer(r"[^\n]+(?:\n[^\n]+)*", text):
        spans.append((m.start(), m.end()))
    return spans


def _split_at_clause_lines(text: str, start: int, end: int, lang: str) -> list[tuple[int, int]]:
    """A block whose inner line opens a clause is split there (clause numbers mid-block)."""
    cuts = [start]
    offset = start
    for line in text[start:end].split("\n"):
        if offset > start and match_line(line, lang):
            cuts.append(offset)
        offset += len(line) + 1
    cuts.append(end)
    return [(a, b if b == end else b - 1) for a, b in zip(cuts, cuts[1:])]


def tag(doc: CleanedDocument) -> StructuredDocument:
    text, lang = doc.text, doc.lang
    tables = set(map(tuple, doc.tables))
    elements: list[Element] = []
    markers: list[tuple[int, str, str]] = []
    open_clauses: list[Element] = []  # stack, innermost last
    counter = 0

    def close_until(level: int, at: int) -> None:
        while open_clauses and open_clauses[-1].level >= level:
            clause = open_clauses.pop()
            clause.end = at
            markers.append((at, "CLAUSE_END", clause.clause_id or ""))

    last_end = 0
    for block_start, block_end in _blocks(text):
        if (block_start, block_end) in tables:
            elements.append(Element(type="TABLE", start=block_start, end=block_end,
                                    clause_id=open_clauses[-1].clause_id if open_clauses else None))
            last_end = block_end
            continue
        for start, end in _split_at_clause_lines(text, block_start, block_end, lang):
            first_line = text[start:end].split("\n", 1)[0]
            found = match_line(first_line, lang)
            if found and found.form.type == "CLAUSE":
                close_until(found.level, last_end)
                counter += 1
                clause = Element(type="CLAUSE", start=start, end=end, level=found.level, number=found.number,
                                 title=found.title, clause_id=f"{doc.doc_id}:c{counter}")
                open_clauses.append(clause)
                elements.append(clause)
                markers.append((start, "CLAUSE_START", clause.clause_id or ""))
                body_type = "PARAGRAPH"
            elif found and found.form.type == "HEADER":
                # A heading ends every clause that is not above it.
                close_until(found.level, last_end)
                heading_end = start + len(first_line)
                elements.append(Element(type="HEADER", start=start, end=heading_end, level=found.level,
                                        number=found.number, title=found.title))
                if heading_end >= end:
                    last_end = end
                    continue
                start = heading_end + 1
                body_type = "PARAGRAPH"
            else:
                body_type = "LIST" if LIST_ITEM.match(first_line) else "PARAGRAPH"
            elements.append(Element(type=body_type, start=start, end=end,  # type: ignore[arg-type]
                                    clause_id=open_clauses[-1].clause_id if open_clauses else None))
            last_end = end
    close_until(0, last_end)
    elements.sort(key=lambda e: (e.start, 0 if e.type in ("HEADER", "CLAUSE") else 1))
    markers.sort(key=lambda m: (m[0], 0 if m[1] == "CLAUSE_END" else 1))
    return StructuredDocument(doc_id=doc.doc_id, elements=elements, markers=markers)


def run(ref: DocRef, settings: Settings) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    cleaned = ws.read_model(ws.path("language", ref.doc_id), CleanedDocument)
    out = ws.write_model(ws.path(STAGE, ref.doc_id), tag(cleaned))
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=STAGE, output=str(out))
