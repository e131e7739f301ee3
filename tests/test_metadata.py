"""What a PDF says about itself (pipeline/extraction/metadata.py): its title, author and
dates, and its signatures: who signed (the signing certificate's subject), when, why,
whether the signed bytes are intact, and whether the file changed after the last signature.
The signed files are signed for real (tests/pdf_signing.py: a detached CMS signature
poppler's pdfsig validates)."""

from __future__ import annotations

import shutil

import pytest

from conftest import text_pdf
from pdf_signing import change_after_signing, sign_pdf
from pipeline.extraction.metadata import _SignerInfo, intact, iso_date, read_signature
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
    assert signature.covers_to_end and signature.intact

    # saved again after signing: the signature still holds for what it signed
    changed = change_after_signing(shutil.copy(path, tmp_path / "edited.pdf"), "Edited after signing")
    info = extract.extract_file(changed, settings).info
    assert info.title == "Edited after signing" and not info.signatures[0].covers_to_end
    assert info.signatures[0].intact


@pytest.mark.parametrize("sub_filter", ["adbe.pkcs7.detached", "adbe.pkcs7.sha1", "adbe.x509.rsa_sha1"])
def test_a_pdf_edited_inside_its_signed_bytes_is_no_longer_intact(settings, tmp_path, sub_filter):
    """As older Acrobat signed too: adbe.pkcs7.sha1 signs the file's SHA-1 digest, which it
    holds inside; adbe.x509.rsa_sha1 is a bare RSA value, its certificate in /Cert."""
    path = sign_pdf(text_pdf(AGREEMENT, tmp_path / "nda.pdf"), "Erika Mustermann", "Einverstanden",
                    "D:20261203101500+01'00'", author="Rechtsabteilung", sub_filter=sub_filter)
    assert extract.extract_file(path, settings).info.signatures[0].intact
    data = path.read_bytes()
    author = "Rechtsabteilung".encode("utf-16-be").hex().upper().encode()
    forged = author.replace(b"0052", b"0046", 1)  # R -> F, in place: the file's structure holds
    path.write_bytes(data.replace(author, forged))
    info = extract.extract_file(path, settings).info
    assert info.author == "Fechtsabteilung"
    (signature,) = info.signatures
    assert signature.signer == "Erika Mustermann" and signature.covers_to_end and signature.intact is False


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
