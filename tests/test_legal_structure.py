"""Legal structure survives cleaning, and tables of contents stay out of the clause tree.

Every registered clause form is tried (from the example line the registry keeps with it): as a
heading at the top of each page with its number changing, and as the same line in the body of
every page. Neither is running matter; a running header that repeats one § exactly is.
"""

from __future__ import annotations

import pytest

from pipeline.contracts import Block, ExtractedDocument, Page
from pipeline.text import cleaning
from pipeline.text.clauses import forms, match_line, number_key

PAGES = 10
BODY = "The parties agree to the terms below and keep them in force for the whole term."
HEIGHT = 842


def page(page_no: int, blocks: list[tuple[str, float]]) -> Page:
    """A page of blocks (text, top in points), each 14 pt per line."""
    return Page(page_no=page_no, width=595, height=HEIGHT, method="text_layer", engine="test", direction="horizontal",
                blocks=[Block(text=t, bbox=(50, top, 545, top + 14 * (t.count("\n") + 1))) for t, top in blocks])


def document(pages: list[Page]) -> ExtractedDocument:
    return ExtractedDocument(doc_id="d", source_path="/x/d.pdf", sha256="s", engines=["test"], pages=pages)


@pytest.mark.parametrize("form", forms(), ids=lambda f: f.id)
def test_every_form_matches_its_example(form):
    for number in (1, 7, 12):
        found = match_line(form.example_line(number), form.langs[0])
        assert found is not None and found.form.id == form.id, form.example_line(number)


@pytest.mark.parametrize("form", forms(), ids=lambda f: f.id)
def test_no_heading_of_a_registered_form_is_removed_by_cleaning(settings, form):
    """A numbered heading opening each page (its numbers fold to one line) and the same
    heading repeated in the body of every page are both kept. (A form without a number, such
    as a caption, repeated exactly at the top of every page is a running header: not tried.)"""
    pages = []
    for n in range(1, PAGES + 1):
        heading = form.example_line(n % 12 + 1) if "{" in form.example else BODY
        body_repeat = form.example_line(3)
        pages.append(page(n, [("Acme Corp. Master Agreement", 30), (heading, 70), (BODY, 100),
                              (body_repeat, 300), (BODY, 330), (f"Page {n} of {PAGES}", 800)]))
    kept, removed = cleaning.clean_pages(document(pages), settings)
    removed_lines = {(r.text, r.reason) for r in removed}
    assert ("Acme Corp. Master Agreement", "running_header_footer") in removed_lines
    assert not [r for r in removed if match_line(r.text, form.langs[0])], removed_lines
    kept_lines = [line for _, blocks in kept for text, _ in blocks for line in text.splitlines()]
    assert kept_lines.count(form.example_line(3)) >= PAGES


@pytest.mark.parametrize("form", [f for f in forms() if "{" in f.example], ids=lambda f: f.id)
def test_a_heading_drawn_like_a_watermark_is_still_kept(settings, form):
    """The rendering's verdict never removes structure: a heading of a registered form in a
    block the extraction marked as a watermark (a grey, turned title) stays."""
    pages = [page(n, [(form.example_line(n), 70), (f"{BODY} {chr(64 + n)}", 100)]) for n in range(1, 4)]
    for p in pages:
        p.blocks[0] = p.blocks[0].model_copy(update={"watermark": "diagonal 45°, light 0.83", "method": "text_layer"})
    kept, removed = cleaning.clean_pages(document(pages), settings)
    assert removed == []


def test_a_running_header_repeating_the_current_paragraph_is_removed_with_its_position(settings):
    running = "§ 1 Name, Rechtsform, Sitz des Vereins"
    pages = [page(n, [(running, 30), (f"({n}) {BODY}", 100), (str(n), 800)]) for n in range(1, 5)]
    pages[0].blocks.insert(1, Block(text=running, bbox=(50, 80, 545, 94)))  # the heading itself, in the body
    kept, removed = cleaning.clean_pages(document(pages), settings)
    headers = [r for r in removed if r.reason == "running_header_footer"]
    assert [r.page_no for r in headers] == [1, 2, 3, 4]
    assert all(r.line_no == 0 and r.bbox == (50, 30, 545, 44) for r in headers)
    assert [t for t, _ in kept[0][1]][0] == running  # the body heading stays


def test_han_and_full_width_page_numbers_fold_to_one_running_line(settings):
    pages = [page(n, [(f"個人情報保護法　第{cjk}頁", 30), (f"{BODY} {chr(65 + n)}", 100)])
             for n, cjk in enumerate(["一", "二", "三", "四", "五"], start=1)]
    _, removed = cleaning.clean_pages(document(pages), settings)
    assert [r.reason for r in removed] == ["running_header_footer"] * 5


TOC_DE = """Inhaltsverzeichnis
§ 1 Name, Rechtsform, Sitz des Vereins . . . . . . . . . . 1
§ 2 Zweck des Vereins . . . . . . . . . . . . . . . . . . 1
§ 6 Erwerb der Mitgliedschaft . . . . . . . . . . . . . . 3

§ 1 Name, Rechtsform, Sitz des Vereins
(1) Der Verein führt den Namen „Rosetta“.
(2) Er hat seinen Sitz in Berlin.

§ 2 Zweck des Vereins
Der Verein verfolgt ausschließlich gemeinnützige Zwecke."""

TOC_EN = """Contents
4.9 Main building script 25
4.9.1 debian/rules and DEB_BUILD_OPTIONS 26
4.9.2 debian/rules and Rules-Requires-Root 27

4.9 Main building script
This file must be an executable makefile."""


@pytest.mark.parametrize("text, lang, clauses", [(TOC_DE, "de", ["§ 1", "(1)", "(2)", "§ 2"]),
                                                 (TOC_EN, "en", ["4.9"])])
def test_table_of_contents_lines_are_a_toc_element_and_never_clauses(text, lang, clauses):
    from pipeline.stages import structure
    from test_structure import cleaned

    tagged = structure.tag(cleaned(text, lang))
    found = [e.number for e in tagged.elements if e.type == "CLAUSE"]
    assert found == clauses
    tocs = [text[e.start:e.end] for e in tagged.elements if e.type == "TOC"]
    assert len(tocs) == 3 and all(e.clause_id is None for e in tagged.elements if e.type == "TOC")


def test_statute_running_heads_leave_the_text_and_absaetze_nest_under_their_paragraph(settings):
    """KOMA-Script's scrjura example (a club's statutes, 4 pages, tests/fixtures copy of
    scripts/fetch_legal_texts.py's de-scrjura-satzung): each page's running head repeats the
    heading of the § it starts in; it is removed as running matter, the heading itself stays; the
    Absätze "(1)", "(2) 1Der Verein ..." (with sentence numbers) are sub-clauses of their §, and
    each chunk carries its full path."""
    from pathlib import Path

    from pipeline.stages import chunk, extract, language, structure

    pdf = Path(__file__).parent / "fixtures" / "de-scrjura-satzung.pdf"
    cleaned = language.clean_and_detect(extract.extract_file(pdf, settings, doc_id="satzung"), settings)
    heads = [(r.page_no, r.text) for r in cleaned.removed if r.reason == "running_header_footer"]
    assert heads == [(2, "§ 1 Name, Rechtsform, Sitz des Vereins"), (3, "§ 6 Erwerb der Mitgliedschaft"),
                     (4, "§ 8a Ergänzung zur Mitgliederversammlung")]
    tagged = structure.tag(cleaned)
    paragraphs = {e.clause_id: e for e in tagged.elements if e.type == "CLAUSE"}
    top = [e.number for e in paragraphs.values() if e.parent_id is None]
    assert top == ["§ 1", "§ 2", "§ 3", "§ 6", "§ 6a", "§ 7", "§ 8", "§ 8a", "§ 9"]
    absatz_2 = next(e for e in paragraphs.values() if cleaned.text[e.start:].startswith("(2) 1Der Verein"))
    assert absatz_2.number == "(2)" and paragraphs[absatz_2.parent_id].number == "§ 1"
    chunks = chunk.chunk_document(cleaned, tagged, settings).chunks
    assert sum(c.text.count("§ 1 Name, Rechtsform, Sitz des Vereins") for c in chunks) == 1
    holding_2 = next(c for c in chunks if c.text.startswith("(2) 1Der Verein"))
    # (3) is one short sentence, joined to (2): the label names both
    assert holding_2.clause_numbers == ["§ 1"] and holding_2.clause_path == "§ 1 (2)–(3)"
    assert next(c for c in chunks if "(1) Der Verein führt" in c.text).clause_path == "§ 1 (1)"


NESTED = {
    "de": ("""§ 1 Aufgaben des Vorstands
(1) Der Vorstand führt die Geschäfte des Vereins nach Maßgabe dieser Satzung und der Beschlüsse.
(2) Dem Vorstand obliegen insbesondere:
1. die Verwaltung des Vereinsvermögens und die Führung der Bücher über alle Einnahmen und Ausgaben,
2. die Vorbereitung der Mitgliederversammlung, insbesondere:
a) die Aufstellung der Tagesordnung mit allen Anträgen, die bis zum Stichtag eingegangen sind,
b) die Einberufung der Versammlung in Textform unter Einhaltung einer Frist von zwei Wochen;
3. die Ausführung der Beschlüsse der Mitgliederversammlung.
§ 1 Abs. 2 gilt für den Kassenwart entsprechend, soweit die Mitgliederversammlung nichts anderes bestimmt.
(3) Der Vorstand ist ehrenamtlich tätig.

§ 2 Mitgliederversammlung
Die Mitgliederversammlung tagt einmal im Jahr.
Art. 5 Abs. 1 der Satzung bleibt unberührt.""",
           ["§ 1", "§ 1 (1)", "§ 1 (2)", "§ 1 (2) 1", "§ 1 (2) 2", "§ 1 (2) 2 a)", "§ 1 (2) 2 b)", "§ 1 (2) 3",
            "§ 1 (3)", "§ 2"], "§ 1 (2) 2 a)", "a) die Aufstellung"),
    "es": ("""Artículo 5. Tratamiento de datos
1. El responsable tratará los datos personales de los interesados en las condiciones siguientes:
a) de forma lícita, leal y transparente en relación con el interesado y con sus derechos;
b) con fines determinados, explícitos y legítimos, sin tratarlos ulteriormente de manera incompatible.
2. Lo dispuesto en el apartado 1 no se aplicará a los tratamientos con fines de archivo.
Artículo 5, apartado 2, de la Ley Orgánica se aplicará igualmente a los ficheros públicos.
Apartado 3. Excepciones
Las excepciones se regirán por su normativa específica.
Artículo 6. Licitud del tratamiento""",
           ["Artículo 5", "Artículo 5 1", "Artículo 5 1 a)", "Artículo 5 1 b)", "Artículo 5 2", "Artículo 5 Apartado 3",
            "Artículo 6"], "Artículo 5 1 b)", "b) con fines"),
    "ja": ("""第十条　個人情報取扱事業者は、次に掲げる場合を除くほか、あらかじめ本人の同意を得ないで、個人データを第三者に提供してはならない。
一　法令に基づく場合であって、当該提供について所管する行政機関の長から求めがあったとき
二　人の生命、身体又は財産の保護のために必要がある場合であって、本人の同意を得ることが困難であるとき
２　前項の規定にかかわらず、次に掲げる場合には、当該個人データの提供を受ける者は、第三者に該当しないものとする。
一　個人情報取扱事業者が利用目的の達成に必要な範囲内において個人データの取扱いの全部又は一部を委託することに伴って当該個人データが提供される場合
第十一条　個人情報取扱事業者は、保有個人データに関する事項について、本人の知り得る状態に置かなければならない。""",
           ["第十条", "第十条 一", "第十条 二", "第十条 ２", "第十条 ２ 一", "第十一条"], "第十条 ２ 一", "一　個人情報取扱事業者が"),
    "zh": ("""第十三条　符合下列情形之一的，个人信息处理者方可处理个人信息：
（一）取得个人的同意，并且处理目的、处理方式和处理的个人信息种类已向个人明确告知，个人在充分知情的前提下自愿、明确作出；
（二）为订立、履行个人作为一方当事人的合同所必需，或者按照依法制定的劳动规章制度和依法签订的集体合同实施人力资源管理所必需；
依照本法其他有关规定，处理个人信息应当取得个人同意，但是有前款第二项至第七项规定情形的，不需取得个人同意。
第十四条　基于个人同意处理个人信息的，该同意应当由个人在充分知情的前提下自愿、明确作出。""",
           ["第十三条", "第十三条 （一）", "第十三条 （二）", "第十四条"], "第十三条 （二）", "（二）为订立"),
}


@pytest.mark.parametrize("lang", sorted(NESTED))
def test_items_nest_under_their_article_and_paragraph_and_chunks_carry_the_full_path(settings, lang):
    """Numbered and lettered items ("1.", "a)"), Spanish apartados, Japanese 項/号 (２, 一) and
    Chinese 项 (（一）) are levels under their article; a citation at a line start ("§ 1 Abs. 2
    gilt ...", "Artículo 5, apartado 2, de la Ley ...") opens nothing; a chunk inside an item is
    labelled with the whole path."""
    from pipeline.stages import chunk, structure
    from test_structure import cleaned

    text, paths, item_path, item_start = NESTED[lang]
    doc = cleaned(text, lang)
    tagged = structure.tag(doc)
    clauses = {e.clause_id: e for e in tagged.elements if e.type == "CLAUSE"}

    assert [" ".join(_chain(clauses, c)) for c in clauses.values()] == paths
    small = settings.model_copy(update={"chunking": settings.chunking.model_copy(update={"min_chunk_chars": 0})})
    chunks = chunk.chunk_document(doc, tagged, small).chunks
    assert next(c for c in chunks if c.text.startswith(item_start)).clause_path == item_path


def test_a_taiwan_statute_prints_its_articles_with_tiao_and_each_opens_its_clause():
    """Taiwan and Hong Kong print an article 條 where the mainland prints 条, and a branch
    article an amendment inserted 之一 (as Japan's の二): each opens its clause."""
    from pipeline.stages import structure
    from test_structure import cleaned

    text = """第 1 條　為規範個人資料之蒐集、處理及利用，以避免人格權受侵害，並促進個人資料之合理利用，特制定本法。
第 2 條　本法用詞，定義如下：
一、個人資料：指自然人之姓名、出生年月日、國民身分證統一編號、護照號碼、特徵、指紋。
第十九條之一　非公務機關保有個人資料檔案者，應採行適當之安全措施。"""
    tagged = structure.tag(cleaned(text, "zh"))
    assert [number_key(e.number) for e in tagged.elements if e.type == "CLAUSE"] == ["1", "2", "19"]


def _chain(clauses: dict, clause) -> list[str]:
    numbers = []
    while clause is not None:
        numbers.append(clause.number or "")
        clause = clauses.get(clause.parent_id)
    return numbers[::-1]


@pytest.mark.parametrize("line, lang", [("§ 3 Abs. 2 gilt entsprechend.", "de"), ("Art. 5 Satz 1 bleibt unberührt.", "de"),
                                        ("§ 12 Nr. 3 ist nicht anzuwenden.", "de"),
                                        ("Artículo 5, apartado 2, de la Ley Orgánica.", "es"),
                                        ("Apartado 2 del artículo 5 establece lo siguiente.", "es")])
def test_a_citation_at_a_line_start_is_no_clause(line, lang):
    assert match_line(line, lang) is None


def test_a_lettered_list_outside_any_clause_stays_a_list():
    from pipeline.stages import structure
    from test_structure import cleaned

    tagged = structure.tag(cleaned("Preamble of the parties:\na) the first party;\nb) the second party.\n\nArticle 1 Scope\n"
                                   "(a) This applies to all goods.\n", "en"))
    numbers = [(e.number, e.parent_id is None) for e in tagged.elements if e.type == "CLAUSE"]
    assert numbers == [("Article 1", True), ("(a)", False)]


@pytest.mark.parametrize("fixture, watermark, headings", [
    ("en-ipa-watermarked.pdf", "CONFIDENTIAL", [f"Article {n}" for n in range(1, 6)]),
    ("ja-ipa-watermarked.pdf", "社外秘", ["第1条", "第２条", "第３条", "第４条", "第５条"])])
def test_a_drawn_watermark_is_removed_by_its_rendering_and_article_headings_stay(settings, fixture, watermark, headings):
    """The IPA font licence (en, ja) printed by Chromium with a grey, translucent watermark
    turned 45 degrees over every page, each article opening a page at the same place
    (scripts/fetch_legal_texts.py WATERMARKED). PDFium reads the watermark into the last line it
    crosses; the extraction cuts it off by its rendering, cleaning removes it with its reason
    and place, and every article heading stays a clause."""
    from pathlib import Path

    from pipeline.stages import extract, language, structure

    extracted = extract.extract_file(Path(__file__).parent / "fixtures" / fixture, settings, doc_id="wm")
    marked = [(p.page_no, b.text, b.watermark) for p in extracted.pages for b in p.blocks if b.watermark]
    assert [(n, text) for n, text, _ in marked] == [(p.page_no, watermark) for p in extracted.pages]
    assert all("diagonal" in why and "light" in why for _, _, why in marked)
    cleaned = language.clean_and_detect(extracted, settings)
    assert {(r.text, r.reason) for r in cleaned.removed} == {(watermark, "watermark")}
    assert all(r.bbox is not None and r.line_no is not None for r in cleaned.removed)
    assert watermark not in cleaned.text
    top = [e.number for e in structure.tag(cleaned).elements if e.type == "CLAUSE" and e.parent_id is None]
    assert top == headings


def test_repetition_alone_makes_no_watermark_of_a_text_layer_line(settings):
    """The same short line in the body of every page, drawn like the text around it, stays
    (only OCRed text, which has no rendering, is judged by repetition)."""
    pages = [page(n, [(f"{BODY} {chr(64 + n)}", 100), ("Subject to the conditions below.", 300)]) for n in range(1, 11)]
    for p in pages:
        p.blocks = [b.model_copy(update={"method": "text_layer"}) for b in p.blocks]
    kept, removed = cleaning.clean_pages(document(pages), settings)
    assert removed == []
    ocr = [p.model_copy(update={"blocks": [b.model_copy(update={"method": "ocr"}) for b in p.blocks]}) for p in pages]
    _, removed = cleaning.clean_pages(document(ocr), settings)
    assert {(r.text, r.reason) for r in removed} == {("Subject to the conditions below.", "watermark")}


RUN_ON = ("You can contribute in various ways:\n\n"
          "Article 16 If you are able to adopt the package, get the sources (with something like aptget source "
          "packagename) and examine them. This document unfortunately doesn't\n"
          "include comprehensive information about adopting packages.\n\n"
          "Article 17 Keep reading, though.")


def test_a_heading_running_on_into_a_long_first_line_still_opens_its_article():
    """PDFium joins a printed line ending in a hyphen ("apt-") to the next, so a heading set at
    the start of its first sentence can open a line longer than the form's max_line_chars; where
    that line opens a paragraph it is still the article. A long line that cites an article, or
    one that continues a sentence, still opens nothing."""
    from pipeline.stages import structure
    from test_structure import cleaned

    def top(text: str) -> list[str]:
        return [e.number for e in structure.tag(cleaned(text, "en")).elements if e.type == "CLAUSE"]

    assert len(RUN_ON.split("\n")[2]) > 100
    assert top(RUN_ON) == ["Article 16", "Article 17"]
    cited = RUN_ON.replace("Article 16 If you", "Article 16 of the licence says that if you")
    assert top(cited) == ["Article 17"]
    wrapped = RUN_ON.replace("ways:\n\nArticle 16", "ways described in\nArticle 16")
    assert top(wrapped) == ["Article 17"]
