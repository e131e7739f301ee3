"""What a PDF says about itself (pipeline/extraction/metadata.py): its title, author and
dates, and its signatures: who signed (the signing certificate's subject), when, why,
whether the signed bytes are intact, and what the file gained after each signature (later
signatures and validation data, or changes).
The signed files are signed for real (tests/pdf_signing.py: a detached CMS signature
poppler's pdfsig validates)."""

from __future__ import annotations

import shutil

import pytest

from conftest import text_pdf
from pdf_signing import (
    add_empty_signature_field,
    add_validation_data,
    add_xmp_metadata,
    change_after_signing,
    edit_page_after_signing,
    redraw,
    sign_pdf,
)
from pipeline.extraction.metadata import _SignerInfo, intact, iso_date, read_signature
from pipeline.extraction.revisions import after_signature
from pipeline.stages import extract

AGREEMENT = """Confidentiality Agreement
1. The receiving party keeps the disclosed information secret and uses it only to evaluate
the proposed cooperation. 2. This agreement ends three years after its signature.
"""


@pytest.mark.parametrize("value, expected", [
    ("D:20261203101500+01'00'", "2026-12-03T10:15:00+01:00"),
    ("D:20211127204103Z", "2021-11-27T20:41:03Z"),
    ("D:20160728141406", "2016-07-28T14:14:06"),
    ("D:2019", "2019-01-01T00:00:00"),
    ("D:20191345000000", None),  # month 13
    ("Mon Dec 1 2025", None), ("", None),
])
def test_pdf_dates_read_as_iso(value, expected):
    assert iso_date(value) == expected


def test_a_signed_pdf_names_its_signer_time_reason_and_title(settings, tmp_path):
    path = sign_pdf(text_pdf(AGREEMENT, tmp_path / "nda.pdf"), "Erika Mustermann", "Einverstanden",
                    "D:20261203101500+01'00'", title="Vertraulichkeitsvereinbarung", author="Rechtsabteilung")
    info = extract.extract_file(path, settings).info
    assert (info.title, info.author) == ("Vertraulichkeitsvereinbarung", "Rechtsabteilung")
    (signature,) = info.signatures
    assert signature.signer == "Erika Mustermann" and signature.reason == "Einverstanden"
    assert signature.signed_at == "2026-12-03T10:15:00+01:00" and signature.kind == "adbe.pkcs7.detached"
    assert signature.after == "nothing" and signature.intact

    # saved again after signing: the signature still holds for what it signed
    changed = change_after_signing(shutil.copy(path, tmp_path / "edited.pdf"), "Edited after signing")
    info = extract.extract_file(changed, settings).info
    assert info.title == "Edited after signing" and info.signatures[0].after == "changes"
    assert info.signatures[0].intact


@pytest.mark.parametrize("sub_filter, rsa_pss", [("adbe.pkcs7.detached", False), ("adbe.pkcs7.detached", True),
                                                  ("adbe.pkcs7.sha1", False), ("adbe.x509.rsa_sha1", False)])
def test_a_pdf_edited_inside_its_signed_bytes_is_no_longer_intact(settings, tmp_path, sub_filter, rsa_pss):
    """As older Acrobat signed too: adbe.pkcs7.sha1 signs the file's SHA-1 digest, which it
    holds inside; adbe.x509.rsa_sha1 is a bare RSA value, its certificate in /Cert. And an RSA
    key signing with RSASSA-PSS, its hash and salt in the algorithm's parameters (it had been
    left unchecked: intact None)."""
    path = sign_pdf(text_pdf(AGREEMENT, tmp_path / "nda.pdf"), "Erika Mustermann", "Einverstanden",
                    "D:20261203101500+01'00'", author="Rechtsabteilung", sub_filter=sub_filter, rsa_pss=rsa_pss)
    assert extract.extract_file(path, settings).info.signatures[0].intact
    data = path.read_bytes()
    author = "Rechtsabteilung".encode("utf-16-be").hex().upper().encode()
    forged = author.replace(b"0052", b"0046", 1)  # R -> F, in place: the file's structure holds
    path.write_bytes(data.replace(author, forged))
    info = extract.extract_file(path, settings).info
    assert info.author == "Fechtsabteilung"
    (signature,) = info.signatures
    assert signature.signer == "Erika Mustermann" and signature.after == "nothing" and signature.intact is False


def test_validation_data_and_a_second_signer_appended_are_no_change_an_edit_between_them_is(settings, tmp_path):
    """PAdES B-LT appends a DSS dictionary after the signature, and a second signer appends
    their own signature: what the first signed still reads as signed. They had been flagged
    as changes after signing, as any appended bytes were."""
    first = sign_pdf(text_pdf(AGREEMENT, tmp_path / "nda.pdf"), "Erika Mustermann", "Einverstanden",
                     "D:20261203101500+01'00'", title="Vertraulichkeitsvereinbarung")
    long_term = add_validation_data(shutil.copy(first, tmp_path / "b-lt.pdf"))
    (signature,) = extract.extract_file(long_term, settings).info.signatures
    assert signature.after == "signing" and signature.intact
    countersigned = sign_pdf(shutil.copy(long_term, tmp_path / "both.pdf"), "Juan Pérez", "De acuerdo",
                             "D:20261204120000+01'00'", title="Vertraulichkeitsvereinbarung")
    info = extract.extract_file(countersigned, settings).info
    assert [(s.signer, s.after, s.intact) for s in info.signatures] == [
        ("Erika Mustermann", "signing", True), ("Juan Pérez", "nothing", True)]

    # the page drawn over between the two signatures: the first signer never signed it
    edited = edit_page_after_signing(shutil.copy(first, tmp_path / "amended.pdf"))
    assert extract.extract_file(edited, settings).info.signatures[0].after == "changes"
    countersigned = sign_pdf(edited, "Juan Pérez", "De acuerdo", "D:20261204120000+01'00'")
    info = extract.extract_file(countersigned, settings).info
    assert [s.after for s in info.signatures] == ["changes", "nothing"]


@pytest.mark.parametrize("appearance_elsewhere, after", [(False, "signing"), (True, "changes")])
def test_a_signature_fields_box_redrawn_is_signing_unless_the_drawing_is_used_elsewhere(
        settings, tmp_path, appearance_elsewhere, after):
    """A field's appearance stream redrawn after a signature changes only that box, unless
    the same stream is named elsewhere in the file (pyHanko's "sneaky" test files)."""
    path = text_pdf(AGREEMENT, tmp_path / "nda.pdf")
    appearance = add_empty_signature_field(path, appearance_elsewhere)
    sign_pdf(path, "Erika Mustermann", "Einverstanden", "D:20261203101500+01'00'", title="NDA")
    (signature,) = extract.extract_file(redraw(path, appearance), settings).info.signatures
    assert (signature.signer, signature.intact, signature.after) == ("Erika Mustermann", True, after)


def test_unsigned_bytes_inside_the_signed_span_are_a_change():
    """A signature's ranges must leave out its own value only (pyHanko's coverage anomalies)."""
    data = b"%PDF-1.7 signed <0a1b2c> signed too %%EOF\n"
    hole, after = data.index(b"<"), data.index(b">") + 1
    assert after_signature(data, [(0, hole), (after, len(data) - after)]) == "nothing"
    assert after_signature(data, [(0, hole - 3), (after, len(data) - after)]) == "changes"
    assert after_signature(data, [(0, hole), (after, 10)]) == "changes"  # stops short: unparsed bytes follow
    assert after_signature(data, [(0, len(data))]) == "changes"


def test_a_title_kept_in_xmp_only_is_read_and_the_info_dictionary_comes_first(settings, tmp_path):
    """PDF 2.0 deprecates the Info dictionary: a writer may keep the title, the authors and the
    dates in the XMP metadata alone (pdfcpu's PDF 2.0 samples: "A simple PDF 2.0 example file")."""
    xmp = ('xmp:ModifyDate="2026-12-02T09:00:00.25+01:00"><dc:title><rdf:Alt><rdf:li xml:lang="de">'
           'Vertraulichkeitsvereinbarung</rdf:li><rdf:li xml:lang="x-default">Confidentiality Agreement</rdf:li>'
           '</rdf:Alt></dc:title><dc:creator><rdf:Seq><rdf:li>Legal</rdf:li><rdf:li>Erika Mustermann</rdf:li>'
           '</rdf:Seq></dc:creator><xmp:CreateDate>2026-12-01</xmp:CreateDate>')
    path = add_xmp_metadata(text_pdf(AGREEMENT, tmp_path / "nda.pdf"), xmp)
    info = extract.extract_file(path, settings).info
    assert (info.title, info.author) == ("Confidentiality Agreement", "Legal; Erika Mustermann")
    # the date matplotlib's Info dictionary gives stands; the one it does not, from the XMP
    assert info.created != "2026-12-01T00:00:00" and info.modified == "2026-12-02T09:00:00+01:00"
    signed = sign_pdf(path, "Erika Mustermann", "Einverstanden", "D:20261203101500+01'00'", title="NDA")
    assert extract.extract_file(signed, settings).info.title == "NDA"  # the Info dictionary's, where it has one
    assert extract.extract_file(add_xmp_metadata(text_pdf(AGREEMENT, tmp_path / "u.pdf"), '><dc:title><rdf:Alt>'
                                                 '<rdf:li xml:lang="x-default">Untitled</rdf:li></rdf:Alt></dc:title>'),
                                settings).info.title == ""  # a writer's placeholder is no title


def test_an_unsigned_pdf_has_no_signatures_and_a_broken_signature_no_signer(settings, tmp_path):
    info = extract.extract_file(text_pdf(AGREEMENT, tmp_path / "plain.pdf"), settings).info
    assert info.signatures == [] and info.title == ""
    assert read_signature(b"\x30\x03\x02\x01\x01", b"") == ("", None)
    assert read_signature(b"not a signature", b"") == ("", None)


def test_rosetta_extract_prints_the_signature(settings, tmp_path, capsys):
    from pipeline.cli.main import main as cli_main

    path = sign_pdf(text_pdf(AGREEMENT, tmp_path / "nda.pdf"), "Erika Mustermann", "Einverstanden",
                    "D:20261203101500+01'00'")
    assert cli_main(["extract", str(path)]) == 0
    assert ("signed by Erika Mustermann at 2026-12-03T10:15:00+01:00 (adbe.pkcs7.detached): intact; its "
            "certificate's trust not judged") in capsys.readouterr().out


def test_a_key_cryptography_cannot_take_leaves_the_signature_unchecked_not_the_document_unsigned():
    """It raised out of the signature's reading, and the document's signatures were all lost."""
    from cryptography.exceptions import UnsupportedAlgorithm

    class Certificate:  # a certificate whose key uses a curve the library does not support
        def public_key(self):
            raise UnsupportedAlgorithm("curve brainpoolP512t1 is not supported")

    info = _SignerInfo(Certificate(), "sha256", None, None, "1.2.840.10045.4.3.2", b"sig", False)
    assert intact(info, b"signed bytes") is None
