"""Files embedded in a PDF (pipeline/extraction/attachments.py): a signed contract carrying
its annex as a PDF attachment, as portfolios and e-mails archived as PDF carry theirs.

The annex's pages are read after the contract's, each marked with the file's name; its
chunks carry that name and their page in the annex, and the contract's title and signer,
through the real corpus_refresh DAG into the real Weaviate, where a German question finds
the annex and cites it as such.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from conftest import text_pdf
from pdf_signing import add_validation_data, sign_pdf
from pipeline.contracts import Page
from pipeline.extraction.attachments import embedded_data
from pipeline.stages import extract
from pipeline.stages.chunk import chunk_document
from pipeline.stages.language import clean_and_detect
from pipeline.stages.structure import tag

CONTRACT = """Service Agreement between ACME Logistics Ltd and Borealis Freight GmbH
1. Subject of the agreement
The supplier carries the customer's goods between the warehouses named in the annex and keeps
them insured while they are in its care. The prices of each route are those of the annex.
2. Term and termination
The agreement runs for two years from its signature and may be ended by either party with
three months' notice to the end of a calendar quarter.
"""

ANNEX = """Anlage 1 – Preisblatt
Die Preise gelten je Palette und Strecke zuzüglich der gesetzlichen Umsatzsteuer.
Für die Strecke Hamburg–München berechnet der Auftragnehmer 84 Euro je Palette.
Für die Strecke Bremen–Stuttgart berechnet der Auftragnehmer 91 Euro je Palette.
Zuschläge für Gefahrgut werden gesondert nach der Gefahrgutklasse vereinbart.
Die Preise werden jährlich zum ersten Januar an den Dieselpreisindex angepasst.
Eine Anpassung wird dem Auftraggeber mindestens sechs Wochen vorher schriftlich mitgeteilt.
Wartezeiten an der Rampe von mehr als zwei Stunden werden mit 45 Euro je Stunde berechnet.
"""


def contract_with_annex(folder: Path) -> Path:
    """The contract with its two-page annex, signed on its own, attached twice (read once), and
    the invoice data as XML (a format Rosetta does not read); then signed, its validation data
    appended after the signature (PAdES B-LT)."""
    annex = sign_pdf(text_pdf(ANNEX, folder / "annex.pdf", lines_per_page=5), "Juan Pérez", "Preise geprüft",
                     "D:20261202090000+01'00'", title="Preisblatt 2027").read_bytes()
    contract = text_pdf(CONTRACT, folder / "contract-plain.pdf")
    pdf = pdfium.PdfDocument(contract)
    for name, data in [("Anlage_1_Preisblatt.pdf", annex), ("copy of the annex.pdf", annex),
                       ("factur-x.xml", b"<?xml version='1.0'?><invoice/>")]:
        pdf.new_attachment(name).set_data(data)  # raises PdfiumError where it fails
    out = folder / "contract.pdf"
    pdf.save(out)
    pdf.close()
    return add_validation_data(sign_pdf(out, "Erika Mustermann", "Vertragsabschluss", "D:20261203101500+01'00'",
                                        title="Service Agreement ACME – Borealis", author="ACME Legal"))


@pytest.fixture(scope="module")
def contract(tmp_path_factory) -> Path:
    return contract_with_annex(tmp_path_factory.mktemp("attachments"))


def test_embedded_pdfs_are_read_as_further_pages_of_their_document(contract, settings, caplog):
    caplog.set_level(logging.INFO, logger="pipeline.stages.extract")
    doc = extract.extract_file(contract, settings)
    assert [(p.page_no, p.attachment) for p in doc.pages] == [
        (1, None), (2, "Anlage_1_Preisblatt.pdf"), (3, "Anlage_1_Preisblatt.pdf")]
    assert "84 Euro je Palette" in doc.pages[1].text and "45 Euro je Stunde" in doc.pages[2].text
    assert "embedded file factur-x.xml not read (unsupported_format)" in caplog.text
    assert "copy of the annex" not in caplog.text  # the same bytes: read once, under its first name


def test_an_embedded_pdfs_own_title_and_signature_are_read_and_shown(contract, settings, capsys):
    from pipeline.cli.main import main as cli_main

    info = extract.extract_file(contract, settings).info
    assert [s.signer for s in info.signatures] == ["Erika Mustermann"]  # the document's own
    annex = info.embedded["Anlage_1_Preisblatt.pdf"]
    assert annex.title == "Preisblatt 2027" and [(s.signer, s.intact) for s in annex.signatures] == [("Juan Pérez", True)]
    assert list(info.embedded) == ["Anlage_1_Preisblatt.pdf"]  # its copy is read once; the XML says nothing
    assert cli_main(["extract", str(contract)]) == 0
    out = capsys.readouterr().out
    assert ("  Anlage_1_Preisblatt.pdf: signed by Juan Pérez at 2026-12-02T09:00:00+01:00 (adbe.pkcs7.detached): "
            "intact; its certificate's trust not judged") in out
    assert "followed only by later signatures or validation data" in out  # the contract's B-LT signature


def test_an_embedded_file_too_big_to_load_is_named_not_read(contract, settings, caplog, monkeypatch):
    """A video or disk image embedded in a PDF would pass the worker's memory cap: past
    MAX_BYTES a file is not loaded (here the cap is set under the annex's size)."""
    from pipeline.extraction import attachments

    monkeypatch.setattr(attachments, "MAX_BYTES", 1000)
    doc = extract.extract_file(contract, settings)
    assert [p.attachment for p in doc.pages] == [None]
    assert "embedded file Anlage_1_Preisblatt.pdf not read (too_big)" in caplog.text
    assert "embedded file copy of the annex.pdf not read (too_big)" in caplog.text


def test_an_embedded_file_heads_its_own_chunks(contract, settings):
    """No chunk holds text of two files, and none of the contract's clauses goes on into the annex."""
    cleaned = clean_and_detect(extract.extract_file(contract, settings, doc_id="contract"), settings)
    (annex,) = cleaned.attachments
    assert (annex.name, annex.first_page) == ("Anlage_1_Preisblatt.pdf", 2)
    assert cleaned.text[annex.start:].startswith("Anlage_1_Preisblatt.pdf\n\nAnlage 1")
    chunks = chunk_document(cleaned, tag(cleaned), settings).chunks
    own = [c for c in chunks if c.attachment is None]
    embedded = [c for c in chunks if c.attachment == "Anlage_1_Preisblatt.pdf"]
    assert own and embedded and len(own) + len(embedded) == len(chunks)
    assert all(c.end <= annex.start for c in own) and all(c.start >= annex.start for c in embedded)
    assert all(c.heading_path[0] == "Anlage_1_Preisblatt.pdf" and c.lang == "de" and not c.clause_id for c in embedded)
    assert embedded[0].attachment_page == 1 and embedded[-1].page_end == 3
    assert {c.attachment_page for c in embedded} <= {1, 2}


def test_an_annexs_clauses_are_not_the_neighbours_of_the_contracts(settings, tmp_path):
    """A contract's § 2 and its annex's own § 1: the next clause of the one is not the other."""
    contract = text_pdf("""Rahmenvertrag über Transportleistungen
§ 1 Gegenstand des Vertrags
Der Auftragnehmer befördert die Waren des Auftraggebers zwischen den in der Anlage genannten Lagern.
§ 2 Laufzeit und Kündigung
Der Vertrag läuft zwei Jahre und kann mit einer Frist von drei Monaten zum Quartalsende gekündigt werden.
""", tmp_path / "plain.pdf")
    annex = text_pdf("""Anlage 1 – Besondere Bedingungen
§ 1 Preise
Die Preise gelten je Palette und Strecke zuzüglich der gesetzlichen Umsatzsteuer und werden jährlich angepasst.
§ 2 Wartezeiten
Wartezeiten an der Rampe von mehr als zwei Stunden werden mit 45 Euro je Stunde berechnet.
""", tmp_path / "annex.pdf").read_bytes()
    pdf = pdfium.PdfDocument(contract)
    pdf.new_attachment("Anlage_1.pdf").set_data(annex)
    pdf.save(tmp_path / "contract.pdf")
    pdf.close()
    cleaned = clean_and_detect(extract.extract_file(tmp_path / "contract.pdf", settings, doc_id="c"), settings)
    structure = tag(cleaned)
    numbered = [(e.clause_id, e.number) for e in structure.elements if e.type == "CLAUSE"]
    assert [number for _, number in numbered] == ["§ 1", "§ 2", "§ 1", "§ 2"]
    contract_ids, annex_ids = {i for i, _ in numbered[:2]}, {i for i, _ in numbered[2:]}
    for chunk in chunk_document(cleaned, structure, settings).chunks:
        own = annex_ids if chunk.attachment else contract_ids
        assert {chunk.prev_clause_id, chunk.next_clause_id} - {None} <= own, chunk


def test_an_embedded_files_page_is_rendered_from_its_own_bytes(contract, settings):
    """The QA review's crop of an annex page: the page of the embedded file, not of its document."""
    from pipeline.batch.review_view import _attachment_page

    doc = extract.extract_file(contract, settings)
    pdf = pdfium.PdfDocument(contract)
    annex = embedded_data(pdf, "Anlage_1_Preisblatt.pdf")
    assert annex is not None and embedded_data(pdf, "missing.pdf") is None
    page: Page = doc.pages[2]  # the annex's second page, the document's third
    image = _attachment_page(contract, doc, page, 1.0, settings)
    expected = pdfium.PdfDocument(annex)[1].render(scale=1.0).to_pil()
    assert image is not None and image.tobytes() == expected.tobytes()


@pytest.mark.parametrize("asked, signer, found", [
    ("juan perez", "Juan Pérez", True),
    ("JUAN PÉREZ", "Juan Perez", True),
    ("lukasz", "Łukasz Żółkiewski", True),  # Ł is no L with a mark to NFKD
    ("soren kierkegaard", "Søren Kierkegaard", True),
    ("strasse", "Hans Straße", True),
    ("Mueller", "Dr. Jürgen Müller", True),  # ü written out, as German names often are
    ("Müller", "Juergen Mueller", True),  # ... and as a certificate's ASCII name spells it
    ("Muller", "Jürgen Müller", True),
    ("Muller", "Juergen Mueller", False),  # no vowel is taken out of a name that has it
    ("Michael", "Michał Nowak", False),
    ("Erika Pérez", "Erika Mustermann", False),  # every word, in one name
])
def test_a_signers_name_is_found_in_its_usual_spellings(asked, signer, found):
    from pipeline.retrieval.scope import is_named, words

    assert is_named(words(asked), signer) is found


def test_a_question_finds_the_annex_cited_as_its_own_page(contract, settings, weaviate_server):
    from pipeline.retrieval import Scope, search
    from rosetta_airflow.runner import run_dag

    settings.source_dir.mkdir(parents=True, exist_ok=True)
    (settings.source_dir / "contract.pdf").write_bytes(contract.read_bytes())
    run_id, state = run_dag("corpus_refresh", {"paths": [], "force": False}, settings)
    assert state == "success", run_id
    hit = search("Was kostet eine Palette von Hamburg nach München?", settings).as_dict()["hits"][0]
    assert "84 Euro je Palette" in hit["text"] and hit["lang"] == "de"
    assert hit["source"].endswith("contract.pdf › Anlage_1_Preisblatt.pdf") and hit["attachment"] == "Anlage_1_Preisblatt.pdf"
    assert hit["page"] == 1
    # the contract's own facts travel with its annex's chunks, and the annex's own signature with
    # them; validation data appended is no change
    assert hit["title"] == "Service Agreement ACME – Borealis" and hit["changed_after_signing"] is False
    assert [(s["signer"], s["intact"], s["after"], s["file"]) for s in hit["signatures"]] == [
        ("Erika Mustermann", True, "signing", ""), ("Juan Pérez", True, "nothing", "Anlage_1_Preisblatt.pdf")]
    # a search of what one person signed finds it; the annex's signer signed the annex only
    question = "Was kostet eine Palette von Hamburg nach München?"
    for signer in ("mustermann", "Juan Pérez", "JUAN PEREZ"):  # any case, with or without accents
        signed = search(question, settings, scope=Scope(signed_by=signer))
        assert signed.answered and signed.groups[0].shown.uuid == search(question, settings).groups[0].shown.uuid
    contract_only = search("How much notice ends the agreement?", settings).as_dict()["hits"][0]
    assert not contract_only["attachment"] and [s["signer"] for s in contract_only["signatures"]] == ["Erika Mustermann"]
    annex_only = search("How much notice ends the agreement?", settings, scope=Scope(signed_by="perez")).as_dict()
    assert all(h["attachment"] == "Anlage_1_Preisblatt.pdf" for h in annex_only["hits"])
    for nobody in ("Max Muster", "Erika Pérez"):  # the second: each word is some signer's, no name has both
        with pytest.raises(ValueError, match=f"--signed-by {nobody}: no document Rosetta holds was signed by that name"):
            search(question, settings, scope=Scope(signed_by=nobody))
