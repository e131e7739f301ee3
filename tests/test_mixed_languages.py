"""Languages per block: a bilingual document is accepted and each chunk carries its own
language (through the real DAG into the real Weaviate); text the configured languages do
not cover is quarantined with the per-language shares.

The bilingual document is made from real parallel text: each page puts a page of the
English maint-guide and the same page of its Chinese translation side by side (the sample
corpus). The Norwegian text is apt's Norwegian Bokmål translation (/usr/share/locale/nb).
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from build_langid_set import read_mo
from test_language import document

from pipeline.contracts import DocumentError
from pipeline.stages import language
from pipeline.stores import vector_store
from pipeline.stores.document_registry import DocumentRegistry
from pipeline.workspace import doc_id_for

NORWEGIAN_MO = Path("/usr/share/locale/nb/LC_MESSAGES/apt.mo")


def side_by_side(left: Path, right: Path, out: Path, pages: int = 4) -> Path:
    """Each page: page i of ``left`` and page i of ``right`` next to each other."""
    a, b = pdfium.PdfDocument(left), pdfium.PdfDocument(right)
    merged = pdfium.PdfDocument.new()
    for i in range(pages):
        width, height = a[i].get_size()
        page = merged.new_page(2 * width, height)
        for source, x in ((a, 0.0), (b, width)):
            xobject = source.page_as_xobject(i, merged)
            placed = xobject.as_pageobject()
            placed.transform(pdfium.PdfMatrix().translate(x, 0))
            page.insert_obj(placed)
        page.gen_content()
    merged.save(out)
    return out


def norwegian_paragraphs(n: int = 6) -> list[str]:
    """Real Norwegian text: apt's longest Bokmål messages, a few per paragraph."""
    messages = sorted((m for m in read_mo(NORWEGIAN_MO).values() if len(m) > 60), key=len, reverse=True)
    return [" ".join(" ".join(m.split()) for m in messages[k::n][:3]) for k in range(n)]


ENGLISH = ("Debian's package system is one of the reasons it is a top-notch distribution. "
           "Each package declares what it depends on, and the tools install those first. "
           "Upgrades replace the files of a package in one step.")
GERMAN = ("Das Paketsystem ist einer der Gründe, warum Debian eine Distribution der Spitzenklasse ist. "
          "Jedes Paket nennt, wovon es abhängt, und die Werkzeuge installieren das zuerst. "
          "Ein Upgrade ersetzt die Dateien eines Pakets in einem Schritt.")


def test_mixed_configured_languages_are_accepted_per_block(settings):
    english, german = ENGLISH, GERMAN
    cleaned = language.clean_and_detect(document([[english, german, "make install"], [german, english]]), settings)
    assert cleaned.lang in ("en", "de") and cleaned.lang_confidence >= settings.language.min_confidence
    assert set(cleaned.lang_shares) == {"en", "de"}
    assert [cleaned.lang_at(s.start, s.end) for s in cleaned.lang_spans][:2] == ["en", "de"]
    command = cleaned.text.index("make install")
    assert cleaned.lang_at(command, command + 12) == "de"  # a short line keeps its neighbour's language


def test_a_heading_takes_the_language_of_the_short_paragraph_before_it(settings):
    # a partly translated manual (the sample corpus's Spanish maint-guide): an untranslated
    # English paragraph, a short Spanish one, then a Spanish heading too short to detect
    spanish_short = ("Como nuevo desarrollador, es aconsejable que adquieras experiencia con la "
                     "construcción de paquetes sencillos y se desaconseja construir paquetes complicados.")
    spanish_long = ("El sistema de paquetes es una de las razones por las que Debian es una distribución "
                    "excelente. Cada paquete declara de qué depende, y las herramientas lo instalan primero. "
                    "Una actualización reemplaza los archivos de un paquete en un solo paso.")
    cleaned = language.clean_and_detect(
        document([[ENGLISH, spanish_short, "Paquetes sencillos", spanish_long, ENGLISH, spanish_long]]), settings)
    heading = cleaned.text.index("Paquetes sencillos")
    assert cleaned.lang_at(heading, heading + 18) == "es"
    assert cleaned.lang_at(0, 20) == "en"


def test_a_title_too_short_to_read_takes_the_language_of_what_it_opens(settings):
    """A notice in three languages, German the largest: its English title (19 letters, too
    few to detect) had taken the main language and was shown as German."""
    cleaned = language.clean_and_detect(document([["Notice to customers", ENGLISH, GERMAN, GERMAN]]), settings)
    assert cleaned.lang == "de" and cleaned.lang_at(0, 19) == "en"


# The Spanish maint-guide 1.2.53 (the sample corpus): an untranslated English paragraph and
# the Spanish one after it, which extraction sets as one block at the same line spacing.
UNTRANSLATED_THEN_SPANISH = (
    "The rewrite of this tutorial document with updated contents and more practical examples is available as Guide "
    "for Debian\nMaintainers (https://www.debian.org/doc/devel-manuals#debmake-doc) . Please use this new tutorial "
    "as the primary tutorial document.\n"
    "Este documento tratará de describir cómo se construye un paquete Debian GNU/Linux para el usuario común de "
    "Debian y para\nfuturos desarrolladores en un lenguaje informal, y con multitud de ejemplos. Hay un antiguo "
    "dicho romano que dice, «Longum\niter est per preaecepta, breve et efficax per exempla!» (¡Es un largo camino "
    "con la teoría, pero corto y eficiente con\nejemplos!).")
UNTRANSLATED_ITEMS = [  # list items the same guide leaves in English, each as short as a heading
    "fakeroot - this utility lets you emulate being root, which is necessary for some parts of the build process.",
    "gnupg - a tool that enables you to digitally sign packages.",
    "lintian - this is the Debian package checker, which lets you know of any common mistakes.",
]


def test_an_untranslated_paragraph_set_in_one_block_with_its_neighbour_is_its_own_paragraph(settings):
    spanish = "El sistema de paquetes es una de las razones por las que Debian es una distribución excelente."
    cleaned = language.clean_and_detect(document([[UNTRANSLATED_THEN_SPANISH, spanish]]), settings)
    english = cleaned.text.index("The rewrite")
    spanish = cleaned.text.index("Este documento")
    assert cleaned.text[spanish - 2:spanish] == "\n\n"  # two paragraphs now
    assert cleaned.lang_at(english, english + 100) == "en"
    assert cleaned.lang_at(spanish, spanish + 100) == "es"


def test_an_english_line_inside_a_spanish_paragraph_does_not_split_it(settings):
    block = ("Antes de empezar, debes asegurarte que tienes instalados algunos paquetes adicionales necesarios para\n"
             "el desarrollo. Consulta Debian Policy Manual, 7.7 Relationships between source and binary packages\n"
             "para los detalles; la lista no contiene los paquetes marcados como esenciales o requeridos, ya que\n"
             "se supone que ya los tienes instalados.")
    cleaned = language.clean_and_detect(document([[block]]), settings)
    assert cleaned.text == block and cleaned.lang == "es"


def test_short_untranslated_items_in_a_run_take_their_language(settings):
    """Each item alone is too short to leave the main language (a heading is as short); the
    run of them is an untranslated list."""
    spanish = ("Antes de empezar, debes asegurarte que tienes instalados algunos paquetes adicionales necesarios "
               "para el desarrollo. La lista no contiene los paquetes marcados como esenciales o requeridos.")
    # English under a fifth of the text: not one of the document's languages, whose short blocks keep theirs
    cleaned = language.clean_and_detect(document([[*[spanish] * 3, *UNTRANSLATED_ITEMS, *[spanish] * 3]]), settings)
    assert cleaned.lang_shares["en"] < 0.2
    for item in UNTRANSLATED_ITEMS:
        start = cleaned.text.index(item)
        assert cleaned.lang_at(start, start + len(item)) == "en"
    assert cleaned.lang == "es"


def test_titles_read_as_an_unconfigured_language_keep_the_documents(settings):
    """The German guide's link titles in » «: fastText reads them as French at 0.9; a run of
    short blocks leaves the main language only for a configured one."""
    titles = ["• »debian packages in git (https://honk.sigxcpu.org/piki/development/debian_packages_in_git/) «",
              "• »Using Git for Debian Packaging (http://www.eyrie.org/~eagle/notes/debian/git.html) «",
              "• »git-dpm: Debian packages in Git manager (http://git-dpm.alioth.debian.org/) «"]
    cleaned = language.clean_and_detect(document([[GERMAN, *titles, GERMAN]]), settings)
    assert {span.lang for span in cleaned.lang_spans} == {"de"}


def test_norwegian_is_quarantined_with_shares(settings):
    with pytest.raises(DocumentError) as err:
        language.clean_and_detect(document([norwegian_paragraphs()]), settings)
    assert err.value.reason == "unsupported_language"
    assert "'no'" in err.value.detail and "cover 0%" in err.value.detail


def test_text_partly_uncovered_loads_its_configured_sections(settings):
    paragraphs = [ENGLISH] * 8 + norwegian_paragraphs(6)[:1]
    cleaned = language.clean_and_detect(document([paragraphs]), settings)
    assert cleaned.lang == "en" and cleaned.text.count(ENGLISH) == 8
    assert norwegian_paragraphs(6)[0] not in cleaned.text and set(cleaned.left_out) == {"no"}
    assert [(r.page_no, r.reason) for r in cleaned.removed] == [(1, "other_language")]
    whole = settings.model_copy(
        update={"language": settings.language.model_copy(update={"configured_sections": False})})
    with pytest.raises(DocumentError) as err:  # as before, where an operator wants such documents kept out
        language.clean_and_detect(document([paragraphs]), whole)
    assert err.value.reason == "low_language_confidence"
    assert "'en'" in err.value.detail and "'no'" in err.value.detail


def apt_messages(locale: str) -> list[str]:
    """apt's own translations of its longest messages (the same five in every language below),
    one line each: real text in the languages of a leaflet's markets."""
    catalogs = {loc: read_mo(APT_LOCALE / loc / "LC_MESSAGES" / "apt.mo") for loc in LEAFLET if loc != "en"}
    shared = sorted((m for m in catalogs["de"] if "%" not in m and 100 < len(m) < 400
                     and all(catalogs[loc].get(m, m) != m for loc in LEAFLET if loc != "en")), key=len, reverse=True)
    return [" ".join((m if locale == "en" else catalogs[locale][m]).split()) for m in shared[:5]]


APT_LOCALE = Path("/usr/share/locale")
LEAFLET = ["en", "de", "fr", "it", "es", "pt", "da", "nl", "ja"]  # a market order: English first


def test_a_leaflet_in_many_languages_loads_its_configured_sections(settings):
    """The same text once per market, as a safety leaflet or a declaration of conformity prints
    it: the configured languages cover less than half of it. Their sections are loaded, the
    French, Italian, Portuguese, Danish and Dutch ones left out and named, and nothing of them
    is in the text."""
    pages = [[name, "\n".join(apt_messages(loc)[:2]), "\n".join(apt_messages(loc)[2:])]
             for loc, name in zip(LEAFLET, ["English", "Deutsch", "Français", "Italiano", "Español", "Português",
                                            "Dansk", "Nederlands", "日本語"])]
    cleaned = language.clean_and_detect(document(pages), settings)
    for loc in LEAFLET:
        kept = [message in cleaned.text for message in apt_messages(loc)]
        assert all(kept) if loc in settings.languages else not any(kept), (loc, kept)
    assert {span.lang for span in cleaned.lang_spans} == {"en", "de", "es", "ja"}
    assert {"fr", "it", "pt", "da", "nl"} <= set(cleaned.left_out) and 0.4 < sum(cleaned.left_out.values()) < 0.7
    assert {r.page_no for r in cleaned.removed if r.reason == "other_language"} == {3, 4, 6, 7, 8}


def leaflet_pdf(path: Path) -> Path:
    """The leaflet as a PDF, about two languages a page."""
    from conftest import text_pdf

    return text_pdf("\n\n\n".join("\n\n".join(apt_messages(loc)) for loc in LEAFLET), path, lines_per_page=30,
                    family=["DejaVu Sans", "Noto Sans CJK JP"])  # the second for the Japanese


def test_a_leaflet_pdf_loads_its_configured_sections(settings, tmp_path, capsys):
    """Through the real extraction; `rosetta extract` says what the language stage leaves out."""
    from pipeline.cli.main import main as cli_main
    from pipeline.stages import extract

    pdf = leaflet_pdf(tmp_path / "leaflet.pdf")
    cleaned = language.clean_and_detect(extract.extract_file(pdf, settings), settings)
    for loc in LEAFLET:
        kept = [m[:20] in cleaned.text for m in apt_messages(loc)]  # a message starts a line
        assert all(kept) if loc in settings.languages else not any(kept), (loc, kept)
    # what was left out is named as the sections were judged: a few Portuguese words read on
    # their own had been named 'es'
    assert set(cleaned.left_out) == {"fr", "it", "pt", "da", "nl"}
    assert cli_main(["extract", str(pdf)]) == 0
    printed = capsys.readouterr().out
    assert "loads its sections in configured languages, leaving out" in printed and "'fr'" in printed


def apt_catalog(locale: str) -> dict[str, str]:
    return read_mo(APT_LOCALE / locale / "LC_MESSAGES" / "apt.mo")


def short_messages(locales: list[str], count: int) -> list[str]:
    """apt's messages of 60-140 characters that every one of ``locales`` translates."""
    catalogs = [apt_catalog(loc) for loc in locales]
    return sorted((m for m in catalogs[0] if "%" not in m and 60 < len(m) < 140
                   and all(c.get(m, m) != m and len(c[m]) < 140 for c in catalogs)), key=len, reverse=True)[:count]


def test_short_paragraphs_in_other_languages_do_not_pass_for_the_main_one(settings):
    """A notice with one short paragraph per language: each too short to leave the main
    language's label, they were counted as English and loaded whole with it."""
    locales = ["da", "it", "fr", "nl", "pt", "pl", "sv"]
    english = short_messages(locales, 2)
    paragraphs = [" ".join(m.split()) for m in english] + [" ".join(apt_catalog(loc)[english[0]].split())
                                                           for loc in locales]
    cleaned = language.clean_and_detect(document([paragraphs]), settings)
    assert [p in cleaned.text for p in paragraphs] == [True, True] + [False] * len(locales)
    assert set(cleaned.left_out) == set(locales)


def test_a_paragraph_and_its_translation_one_after_the_other(settings):
    """English and Danish, paragraph by paragraph (a bilingual notice): every English paragraph
    read surely is kept, though only one of them reaches a section's 100 letters."""
    danish = apt_catalog("da")
    english = short_messages(["da"], 5)
    paragraphs = [" ".join(text.split()) for m in english for text in (m, danish[m])]
    cleaned = language.clean_and_detect(document([paragraphs]), settings)
    kept = [p in cleaned.text for p in paragraphs]
    assert not any(kept[1::2]) and sum(kept[0::2]) >= 4, kept


@pytest.mark.parametrize("locale", ["pt", "gl", "ca", "it", "nl"])
def test_a_document_in_a_neighbouring_language_stays_quarantined(settings, locale):
    """Portuguese and Galician read as Spanish, Dutch as German, a paragraph at a time: no section
    of such a document stands as Spanish or German (apt's own messages in the language)."""
    messages = sorted(read_mo(APT_LOCALE / locale / "LC_MESSAGES" / "apt.mo").values(), key=len, reverse=True)
    paragraphs = [" ".join(m.split()) for m in messages if "%" not in m][:40]
    with pytest.raises(DocumentError) as err:
        language.clean_and_detect(document([paragraphs[i:i + 8] for i in range(0, 40, 8)]), settings)
    assert err.value.reason == "unsupported_language"


@pytest.fixture(scope="module")
def bilingual_run(settings, weaviate_server, sample_corpus, tmp_path_factory):
    from rosetta_airflow.runner import run_dag

    source = settings.source_dir
    shutil.rmtree(source, ignore_errors=True)
    (source / "mixed").mkdir(parents=True)
    pdf = side_by_side(sample_corpus / "en" / "maint-guide.pdf", sample_corpus / "zh" / "maint-guide.pdf",
                       source / "mixed" / "maint-guide.en-zh.pdf")
    leaflet = leaflet_pdf(source / "mixed" / "leaflet.pdf")
    run_id, state = run_dag("corpus_refresh", {"paths": [], "force": False}, settings)
    return {"run_id": run_id, "state": state, "doc_id": doc_id_for(pdf, source),
            "leaflet_id": doc_id_for(leaflet, source)}


def test_bilingual_document_is_loaded_with_per_chunk_languages(bilingual_run, settings, weaviate_server):
    assert bilingual_run["state"] == "success"
    row = DocumentRegistry(settings.document_registry_path).get(bilingual_run["doc_id"])
    assert row.status == "loaded" and row.lang in ("en", "zh")
    collection = weaviate_server.collections.get(settings.weaviate.collection)
    chunks = [p for _, p, _ in vector_store.iterate_objects(collection) if p["doc_id"] == bilingual_run["doc_id"]]
    langs = Counter(p["lang"] for p in chunks)
    assert set(langs) == {"en", "zh"} and min(langs.values()) >= 5, langs
    for props in chunks:  # each chunk's label is its text's: the Chinese page's have Chinese in them
        han = sum("\u4e00" <= ch <= "\u9fff" for ch in props["text"])
        letters = sum(ch.isascii() and ch.isalpha() for ch in props["text"])
        if props["lang"] == "zh":
            assert han >= 2, props["text"][:80]
        else:
            assert han <= 0.1 * letters, props["text"][:80]


def test_a_leaflet_loads_its_configured_sections_and_names_what_it_left_out(bilingual_run, settings,
                                                                           weaviate_server):
    collection = weaviate_server.collections.get(settings.weaviate.collection)
    chunks = [p for _, p, _ in vector_store.iterate_objects(collection) if p["doc_id"] == bilingual_run["leaflet_id"]]
    assert {p["lang"] for p in chunks} == {"en", "de", "es", "ja"}
    text = "\n".join(p["text"] for p in chunks)
    assert not any(m[:20] in text for loc in ("fr", "it", "pt", "da", "nl") for m in apt_messages(loc))
    registry = DocumentRegistry(settings.document_registry_path)
    assert registry.get(bilingual_run["leaflet_id"]).status == "loaded"
    (row,) = [d for d in registry.batches()[-1].summary["documents"] if d["doc_id"] == bilingual_run["leaflet_id"]]
    assert {"fr", "it", "pt", "da", "nl"} <= set(row["left_out"])


def test_a_german_question_finds_the_leaflets_german_section_with_its_other_sections_under_it(
        bilingual_run, settings, weaviate_server):
    from pipeline.retrieval import search

    result = search("Warum konnten einige Pakete nicht installiert werden?", settings)
    first = result.groups[0]
    assert first.shown.doc_id == bilingual_run["leaflet_id"] and first.shown.lang == "de"
    assert sorted((t.doc_id, t.lang) for t in first.translations) == [
        (bilingual_run["leaflet_id"], lang) for lang in ("en", "es", "ja")]
    from pipeline.publish.load import live_pairs

    within = {row["key"].rsplit("@", 1)[0]: row["translated_within"] for row in live_pairs(settings)}
    assert within[bilingual_run["leaflet_id"]]


def test_short_labels_in_another_script_do_not_join_a_configured_section(settings):
    """A form in Russian with an English footer (pdfcpu's form demos in 30 languages): a label
    too short to read would join the English text below it as a heading does; written in a
    script no configured language uses, it is read as no configured language, whatever its
    length."""
    russian = apt_catalog("ru")
    english = short_messages(["ru"], 4)
    labels = [label for label in sorted(russian.values(), key=len) if 6 < len(label) < 16 and label.isalpha()][:4]
    blocks = [" ".join(russian[m].split()) for m in english]  # the form's text
    for label, message in zip(labels, english):
        blocks += [label, " ".join(message.split())]  # a label above an English line
    cleaned = language.clean_and_detect(document([blocks]), settings)
    assert not any("\u0400" <= ch <= "\u04ff" for ch in cleaned.text), cleaned.text
    assert sum(" ".join(m.split()) in cleaned.text for m in english) >= 3


def test_a_share_under_half_a_percent_is_named_as_such():
    """The 23-language Declaration page left out "'de' 0%": a few German words, not none."""
    from pipeline.text.block_languages import describe_shares

    assert describe_shares({"fr": 0.1139, "de": 0.003, "it": 0.0051}) == "'fr' 11%, 'de' <1%, 'it' 1%"
