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


def test_norwegian_is_quarantined_with_shares(settings):
    with pytest.raises(DocumentError) as err:
        language.clean_and_detect(document([norwegian_paragraphs()]), settings)
    assert err.value.reason == "unsupported_language"
    assert "'no'" in err.value.detail and "cover 0%" in err.value.detail


def test_text_partly_uncovered_is_quarantined_with_shares(settings):
    paragraphs = [ENGLISH] * 8 + norwegian_paragraphs(6)[:1]
    with pytest.raises(DocumentError) as err:
        language.clean_and_detect(document([paragraphs]), settings)
    assert err.value.reason == "low_language_confidence"
    assert "'en'" in err.value.detail and "'no'" in err.value.detail


@pytest.fixture(scope="module")
def bilingual_run(settings, weaviate_server, sample_corpus, tmp_path_factory):
    from rosetta_airflow.runner import run_dag

    source = settings.source_dir
    shutil.rmtree(source, ignore_errors=True)
    (source / "mixed").mkdir(parents=True)
    pdf = side_by_side(sample_corpus / "en" / "maint-guide.pdf", sample_corpus / "zh" / "maint-guide.pdf",
                       source / "mixed" / "maint-guide.en-zh.pdf")
    run_id, state = run_dag("corpus_refresh", {"paths": [], "force": False}, settings)
    return {"run_id": run_id, "state": state, "doc_id": doc_id_for(pdf, source)}


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
