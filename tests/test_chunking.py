"""Chunk invariants, on the golden documents and on the whole sample corpus.

The corpus documents go through the real stages: extraction.extract_file ->
language.clean_and_detect -> structure.tag -> chunking.chunk_document.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.stages import chunk as chunking
from pipeline.stages import structure
from pipeline.text import sentences
from pipeline.contracts import ChunkedDocument, CleanedDocument, StructuredDocument
from test_structure import DOCUMENTS, cleaned, golden_document

ELEMENT_TYPES = {"HEADER", "CLAUSE", "PARAGRAPH", "LIST", "TABLE"}


def with_budget(settings, lang: str, chars: int):
    languages = dict(settings.languages)
    languages[lang] = languages[lang].model_copy(update={"chunk_chars": chars})
    return settings.model_copy(update={"languages": languages})


def check_chunks(doc: CleanedDocument, tree: StructuredDocument, result: ChunkedDocument, settings) -> None:
    text, chunks = doc.text, result.chunks
    budget = settings.languages[doc.lang].chunk_chars
    min_chars = settings.chunking.min_chunk_chars
    assert chunks, "no chunks"
    spans = [(c.start, c.end) for c in chunks]
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert end <= start, "chunks overlap or are out of order"
    clauses = {e.clause_id: e for e in tree.elements if e.type == "CLAUSE"}
    units = [u for seg in chunking.segments(doc, tree) for u in seg.units]

    def tiny(a: int, b: int) -> bool:
        """Under min_chunk_chars, or no sentence at all (headings, numbers, captions)."""
        return len(text[a:b].strip()) < min_chars or not any(
            chunking.SENTENCE_END.search(text[x:y]) for x, y in sentences.split(text, a, b, doc.lang))

    for c in chunks:
        assert c.text.strip(), "empty chunk"
        assert c.text == text[c.start:c.end], "offsets do not map back to the text"
        assert (c.doc_id, result.doc_id) == (doc.doc_id, doc.doc_id)
        # a chunk carries a language its text is in (CleanedDocument.lang_spans)
        assert c.lang in ({s.lang for s in doc.lang_spans if s.start < c.end and c.start < s.end} or {doc.lang})
        assert c.structure_type in ELEMENT_TYPES
        assert 1 <= c.page_start <= c.page_end
        assert 0.0 <= c.semantic_density <= 1.0
        if len(c.text) > budget:  # only a single indivisible unit (a long sentence or table row)
            assert sum(c.start <= a and b <= c.end for a, b in units) == 1, c.text[:80]
        if c.clause_id is not None:
            clause = clauses[c.clause_id]
            assert c.end <= clause.end and (clause.start <= c.start or tiny(c.start, clause.start))
            assert c.clause_number == clause.number and c.clause_numbers[-1] == clause.number
        for neighbour in (c.prev_clause_id, c.next_clause_id):
            assert neighbour is None or neighbour in clauses

    # every sentence of every content element is in exactly one chunk
    for e in tree.elements:
        if e.type in ("PARAGRAPH", "LIST", "HEADER"):
            for a, b in sentences.split(text, e.start, e.end, doc.lang):
                assert sum(s <= a and b <= t for s, t in spans) == 1, text[a:b][:80]

    # a clause number is in the chunk of its first sentence (or first list item: "1. ... Bundes,")
    for clause in clauses.values():
        first = next((s for e in tree.elements if e.type in ("PARAGRAPH", "LIST") and e.start >= clause.start
                      for s in sentences.split(text, e.start, e.end, doc.lang)
                      if chunking.SENTENCE_END.search(text[s[0]:s[1]]) or chunking.ITEM_END.search(text[s[0]:s[1]])),
                     None)
        if first is not None and first[1] <= clause.end:
            holder = next(c for c in chunks if c.start <= clause.start < c.end)
            assert first[1] <= holder.end, f"clause {clause.number} separated from its first sentence"

    # a chunk crosses clause boundaries only to take in tiny pieces: tiny clauses, or
    # headings and bare numbers (no sentence of their own) glued to the first sentence
    for c in chunks:
        cuts = sorted({c.start, c.end, *(offset for offset, _, _ in tree.markers if c.start < offset < c.end)})
        pieces = [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]
        assert sum(not tiny(a, b) for a, b in pieces) <= 1, f"{c.chunk_id} glues clauses that are not tiny"

    # tables are cut between rows only
    for e in tree.elements:
        if e.type == "TABLE":
            rows = {(e.start + m.start(), e.start + m.end()) for m in
                    re.finditer(r"[^\n]*\S[^\n]*", text[e.start:e.end])}
            for c in chunks:
                if e.start <= c.start < e.end:
                    assert c.start in {a for a, _ in rows} and c.end in {b for _, b in rows}, "table split mid-row"


@pytest.mark.parametrize("path", DOCUMENTS, ids=[p.stem for p in DOCUMENTS])
def test_golden_documents_chunk_invariants(path, settings):
    doc = golden_document(path)
    tree = structure.tag(doc)
    for budget in (settings.languages[doc.lang].chunk_chars, 150):
        adjusted = with_budget(settings, doc.lang, budget)
        check_chunks(doc, tree, chunking.chunk_document(doc, tree, adjusted), adjusted)


def chunks_of(path: Path, settings, budget: int | None = None):
    doc = golden_document(path)
    tree = structure.tag(doc)
    if budget:
        settings = with_budget(settings, doc.lang, budget)
    return doc, chunking.chunk_document(doc, tree, settings).chunks


def test_articles_are_chunks_with_their_numbers_and_neighbours(settings):
    doc, chunks = chunks_of(Path(__file__).parent / "golden" / "zh-pipl.txt", settings)
    by_number = {c.clause_number: c for c in chunks}
    article = by_number["第二十八条"]
    assert article.text.startswith("第二节 敏感个人信息的处理规则\n\n第二十八条 敏感个人信息是")
    assert article.heading_path == ["第二章 个人信息处理规则", "第二节 敏感个人信息的处理规则", "第二十八条"]
    assert article.clause_numbers == ["第二十八条"] and article.structure_type == "CLAUSE"
    assert article.next_clause_id is None and article.prev_clause_id is not None
    previous = next(c for c in chunks if c.clause_id == article.prev_clause_id)
    assert previous.clause_number == "第十三条" and previous.next_clause_id == article.clause_id
    assert all(len(c.text) <= 450 for c in chunks)


def test_proviso_stays_with_its_article(settings):
    _, chunks = chunks_of(Path(__file__).parent / "golden" / "ja-minpo.txt", settings, budget=150)
    holder = next(c for c in chunks if "ただし、単に権利を得" in c.text)
    assert "第五条　未成年者が法律行為をするには" in holder.text
    assert holder.clause_number == "第五条"


def test_article_heading_goes_with_its_first_paragraph(settings):
    _, chunks = chunks_of(Path(__file__).parent / "golden" / "en-gdpr.txt", settings)
    first = chunks[0]
    assert first.text.startswith("CHAPTER I\nGeneral provisions\n\nArticle 1\nSubject-matter and objectives\n1. This")
    assert first.clause_numbers == ["Article 1", "1"] and first.clause_number == "1"
    assert first.heading_path == ["CHAPTER I General provisions", "Article 1 Subject-matter and objectives", "1"]


def test_table_rows_are_never_split(settings):
    doc, chunks = chunks_of(Path(__file__).parent / "golden" / "es-lopdgdd.txt", settings, budget=120)
    tables = [c for c in chunks if c.structure_type == "TABLE"]
    assert len(tables) >= 2
    assert all(line.count(" | ") == 1 for c in tables for line in c.text.split("\n"))
    assert {c.clause_number for c in tables} == {"Artículo 78"}


def test_semantic_density_ranks_specific_text_above_boilerplate():
    texts = ["Debian package Debian package", "Debian package", "fine of EUR 20 million for infringements"]
    densities = chunking.semantic_densities(texts, "en")
    assert densities[2] > densities[0] and densities[2] > densities[1]
    assert chunking.semantic_densities(["个人信息", "个人信息保护", "罚款五千万元"], "zh")[2] == 1.0


@pytest.fixture(scope="module")
def corpus_documents(sample_corpus, settings):
    from pipeline.stages.extract import extract_file
    from pipeline.stages.language import clean_and_detect

    docs = []
    for path in sorted(sample_corpus.rglob("*.pdf")):
        doc = clean_and_detect(extract_file(path, settings, doc_id=path.stem), settings)
        docs.append(doc)
    return docs


def test_chunk_invariants_hold_on_the_sample_corpus(corpus_documents, settings):
    assert {d.lang for d in corpus_documents} == {"en", "de", "es", "zh", "ja"}
    for doc in corpus_documents:
        tree = structure.tag(doc)
        result = chunking.chunk_document(doc, tree, settings)
        check_chunks(doc, tree, result, settings)
        assert any(c.clause_number for c in result.chunks) or len(doc.text) < 2000


def test_empty_structure_is_no_crash(settings):
    doc = cleaned("Eine kurze Notiz ohne Gliederung.", "de")
    chunks = chunking.chunk_document(doc, structure.tag(doc), settings).chunks
    assert [c.text for c in chunks] == ["Eine kurze Notiz ohne Gliederung."]
    assert chunks[0].structure_type == "PARAGRAPH" and chunks[0].clause_id is None


TOC_JA = """目次

4.1 control . . . . . . . . . . . . . . . . . . . . . . . . . . . . 19

4.2 copyright . . . . . . . . . . . . . . . . . . . . . . . . . . . . 23

4.3 changelog . . . . . . . . . . . . . . . . . . . . . . . . . . . . 24

4.4 rules . . . . . . . . . . . . . . . . . . . . . . . . . . . . 25

4.4.1 rules ファイルのターゲット . . . . . . . . . . . . . . . . . . . . . . . . . . . . 25

5.5 dirs . . . . . . . . . . . . . . . . . . . . . . . . . . . . 34

5.7 docs . . . . . . . . . . . . . . . . . . . . . . . . . . . . 35

4.1 control
このファイルには dpkg や dselect、apt-get などのパッケージ管理ツールが使う様々な値が書かれています。"""


def test_a_contents_page_is_packed_into_chunks_not_one_chunk_per_entry(settings):
    """The ja maint-guide's contents page made one chunk per line ("4.1 control . . . 19"):
    chunks of a few Latin letters labelled ja, which the QA gate's language check rejects (it
    rolled the complete guides back). The PDF's text has each entry as a paragraph of its own;
    consecutive contents lines are one segment, packed to the budget like prose."""
    doc = cleaned(TOC_JA, "ja")
    chunks = chunking.chunk_document(doc, structure.tag(doc), settings).chunks
    tocs = [c for c in chunks if c.structure_type == "TOC"]
    assert tocs[0].text.startswith("目次\n\n4.1 control") and "5.7 docs" in tocs[-1].text
    # whole entries, each chunk several of them, none under the minimum (the last entry too)
    assert all(c.text.count(" . . . ") >= 2 and len(c.text) >= settings.chunking.min_chunk_chars for c in tocs)
    assert all(re.search(r"\d$", c.text) for c in tocs)
    body = next(c for c in chunks if "パッケージ管理ツール" in c.text)  # the clause keeps its number
    assert body.text.startswith("4.1 control\n") and body.clause_number == "4.1" and body.structure_type == "CLAUSE"
