"""Sign a PDF as a signing tool does, for the tests of pipeline/extraction/metadata.py: an
incremental update adds a signature field whose value holds a real CMS signature
(cryptography's PKCS7SignatureBuilder, the signer's certificate inside) over the whole file
but the signature's own hex string, and a document information dictionary. The signature
is detached (adbe.pkcs7.detached, SHA-256: poppler's pdfsig says "Signature is Valid"), or,
as older Acrobat signed, holds the file's SHA-1 digest as its content (adbe.pkcs7.sha1:
`openssl cms -verify` takes it and its content is that digest; pdfsig 22.12 reports a digest
mismatch for this SubFilter, as it hashes it its own way), or is a bare RSA value with the
certificate in /Cert (adbe.x509.rsa_sha1).
"""

from __future__ import annotations

import datetime
import hashlib
import re
from pathlib import Path

CONTENTS_SIZE = 8192  # bytes reserved for the signature (hex: twice as many digits)
BYTE_RANGE = b"/ByteRange [0 0000000000 0000000000 0000000000]"


def _pdf_string(text: str) -> bytes:
    return b"<FEFF" + text.encode("utf-16-be").hex().upper().encode() + b">"


def _update(pdf: bytes, objects: dict[int, bytes], trailer: bytes = b"") -> bytes:
    """``pdf`` with an incremental update: ``objects`` (number -> dictionary) appended, an xref
    section for them, a trailer pointing back at the previous xref."""
    last = pdf[pdf.rindex(b"trailer"):]
    root = re.search(rb"/Root\s*(\d+\s+\d+\s+R)", last).group(1)  # type: ignore[union-attr]
    size = int(re.search(rb"/Size\s*(\d+)", last).group(1))  # type: ignore[union-attr]
    previous = int(re.search(rb"startxref\s+(\d+)", last).group(1))  # type: ignore[union-attr]
    out = bytearray(pdf if pdf.endswith(b"\n") else pdf + b"\n")
    xref = b"xref\n"
    for number, body in sorted(objects.items()):
        xref += b"%d 1\n%010d 00000 n \n" % (number, len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    start = len(out)
    size = max(size, max(objects) + 1)
    out += xref + b"trailer\n<</Size %d/Root %s/Prev %d%s>>\nstartxref\n%d\n%%%%EOF\n" % (
        size, root, previous, trailer, start)
    return bytes(out)


def _new_numbers(pdf: bytes, count: int) -> list[int]:
    size = int(re.search(rb"/Size\s*(\d+)", pdf[pdf.rindex(b"trailer"):]).group(1))  # type: ignore[union-attr]
    return list(range(size, size + count))


def _catalog(pdf: bytes) -> tuple[int, bytes]:
    """The catalog's object number and its newest dictionary."""
    last = pdf[pdf.rindex(b"trailer"):]
    root = int(re.search(rb"/Root\s*(\d+)\s+\d+\s+R", last).group(1))  # type: ignore[union-attr]
    *_, newest = re.finditer(rb"(?<![0-9])%d 0 obj\s*(<<.*?>>)\s*endobj" % root, pdf, re.S)
    return root, newest.group(1)


def _certificate(name: str, rsa_key: bool = False):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(65537, 2048) if rsa_key else ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Rosetta tests")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now)
                   .not_valid_after(now + datetime.timedelta(days=30)).sign(key, hashes.SHA256()))
    return certificate, key


def sign_pdf(path: Path, signer: str, reason: str, signed_at: str, title: str = "", author: str = "",
             sub_filter: str = "adbe.pkcs7.detached", rsa_pss: bool = False) -> Path:
    """Sign ``path`` in place (``signed_at`` as a PDF date, "D:20261203101500+01'00'");
    ``rsa_pss``: an RSA key signing with RSASSA-PSS (as some qualified signature cards do)."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.serialization import pkcs7

    pdf = path.read_bytes()
    root, catalog = _catalog(pdf)
    page = re.search(rb"/Kids\s*\[\s*(\d+\s+\d+\s+R)", pdf).group(1)  # type: ignore[union-attr]
    signature, field, info = _new_numbers(pdf, 3)
    form = re.search(rb"/AcroForm<</Fields\[([^]]*)\]/SigFlags 3>>", catalog)  # a field signed before stays
    fields = form.group(1) + b" " if form else b""
    catalog = catalog.replace(form.group(0), b"") if form else catalog
    legacy = sub_filter == "adbe.x509.rsa_sha1"  # the certificate in /Cert, a bare RSA value in /Contents
    certificate, key = _certificate(signer, rsa_key=legacy or rsa_pss)
    cert = b"/Cert <" + certificate.public_bytes(serialization.Encoding.DER).hex().encode() + b">" if legacy else b""
    objects = {
        signature: b"<</Type/Sig/Filter/Adobe.PPKLite/SubFilter/" + sub_filter.encode() + b" " + BYTE_RANGE
                   + b"/Contents <" + b"0" * (2 * CONTENTS_SIZE) + b">/M(" + signed_at.encode() + b")/Reason"
                   + _pdf_string(reason) + cert + b">>",
        field: b"<</FT/Sig/T(Signature%d)/V %d 0 R/Type/Annot/Subtype/Widget/Rect[0 0 0 0]/F 132/P %s>>" % (
            field, signature, page),
        root: catalog[:-2] + b"/AcroForm<</Fields[%s%d 0 R]/SigFlags 3>>>>" % (fields, field),
        info: b"<</Title" + _pdf_string(title) + b"/Author" + _pdf_string(author) + b">>",
    }
    pdf = _update(pdf, objects, b"/Info %d 0 R" % info)
    hole = pdf.index(b"/Contents <", pdf.rindex(BYTE_RANGE)) + len(b"/Contents ")
    end = hole + 2 * CONTENTS_SIZE + 2
    byte_range = b"/ByteRange [0 %010d %010d %010d]" % (hole, end, len(pdf) - end)
    pdf = pdf.replace(BYTE_RANGE, byte_range)
    signed = pdf[:hole] + pdf[end:]
    if legacy:  # a DER OCTET STRING holding the PKCS#1 v1.5 value over SHA-1
        from cryptography.hazmat.primitives.asymmetric import padding

        value = key.sign(signed, padding.PKCS1v15(), hashes.SHA1())
        cms = b"\x04\x82" + len(value).to_bytes(2, "big") + value
    elif sub_filter == "adbe.pkcs7.sha1":  # the SHA-1 digest inside (the builder signs it with SHA-256)
        builder = pkcs7.PKCS7SignatureBuilder().set_data(hashlib.sha1(signed).digest())
        cms = builder.add_signer(certificate, key, hashes.SHA256()).sign(serialization.Encoding.DER,
                                                                        [pkcs7.PKCS7Options.Binary])
    else:
        from cryptography.hazmat.primitives.asymmetric import padding

        pss = padding.PSS(padding.MGF1(hashes.SHA256()), padding.PSS.DIGEST_LENGTH) if rsa_pss else None
        cms = (pkcs7.PKCS7SignatureBuilder().set_data(signed).add_signer(certificate, key, hashes.SHA256(),
                                                                        rsa_padding=pss)
               .sign(serialization.Encoding.DER, [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Binary]))
    digits = cms.hex().upper().encode()
    path.write_bytes(pdf[:hole + 1] + digits.ljust(2 * CONTENTS_SIZE, b"0") + pdf[end - 1:])
    return path


def change_after_signing(path: Path, title: str) -> Path:
    """An editor's save after the signature: a new information dictionary appended."""
    pdf = path.read_bytes()
    (info,) = _new_numbers(pdf, 1)
    path.write_bytes(_update(pdf, {info: b"<</Title" + _pdf_string(title) + b">>"}, b"/Info %d 0 R" % info))
    return path


def save_dates(path: Path, created: str, modified: str) -> Path:
    """An editor's save that states its dates on its own clock (PDF date strings, offset
    included): a new information dictionary appended."""
    pdf = path.read_bytes()
    (info,) = _new_numbers(pdf, 1)
    body = b"<</CreationDate (%s)/ModDate (%s)>>" % (created.encode(), modified.encode())
    path.write_bytes(_update(pdf, {info: body}, b"/Info %d 0 R" % info))
    return path


def add_validation_data(path: Path) -> Path:
    """What PAdES B-LT appends after a signature: a DSS dictionary holding a certificate (here
    a fresh one: nothing reads it), the catalog pointing at it, and a new document information
    dictionary that only moves ModDate and names the tool (as pyHanko saves)."""
    from cryptography.hazmat.primitives import serialization

    pdf = path.read_bytes()
    root, catalog = _catalog(pdf)
    certificate = _certificate("Validation data CA")[0].public_bytes(serialization.Encoding.DER)
    stream, dss, info = _new_numbers(pdf, 3)
    old_info = re.search(rb"/Info\s*(\d+)\s+\d+\s+R", pdf[pdf.rindex(b"trailer"):]).group(1)  # type: ignore
    info_dict = re.search(rb"(?<![0-9])%s 0 obj\s*<<(.*?)>>\s*endobj" % old_info, pdf, re.S).group(1)  # type: ignore
    objects = {
        stream: _stream(certificate),
        dss: b"<</Type/DSS/Certs[%d 0 R]>>" % stream,
        root: catalog[:-2] + b"/DSS %d 0 R>>" % dss,
        info: b"<<" + info_dict + b"/ModDate(D:20261204090000Z)/Producer(Rosetta tests)>>",
    }
    path.write_bytes(_update(pdf, objects, b"/Info %d 0 R" % info))
    return path


def edit_page_after_signing(path: Path) -> Path:
    """An editor's change of the page itself: a second content stream paints a box over it."""
    pdf = path.read_bytes()
    number = int(re.search(rb"/Kids\s*\[\s*(\d+)\s+\d+\s+R", pdf).group(1))  # type: ignore[union-attr]
    *_, page = re.finditer(rb"(?<![0-9])%d 0 obj\s*(<<.*?>>)\s*endobj" % number, pdf, re.S)
    contents = re.search(rb"/Contents\s*(\d+\s+\d+\s+R)", page.group(1))
    (stream,) = _new_numbers(pdf, 1)
    drawn = b"0 0 0 rg 72 700 300 40 re f"
    edited = page.group(1).replace(contents.group(0), b"/Contents[%s %d 0 R]" % (contents.group(1), stream))
    path.write_bytes(_update(pdf, {stream: _stream(drawn), number: edited}))
    return path


def _stream(content: bytes, attributes: bytes = b"") -> bytes:
    return b"<<%s/Length %d>>\nstream\n%s\nendstream" % (attributes, len(content), content)


def add_empty_signature_field(path: Path, appearance_elsewhere: bool = False) -> int:
    """A signature field waiting for its signer, drawn as an empty box (its appearance stream;
    ``appearance_elsewhere``: that stream named by the catalog too, so that redrawing it would
    change more than the field). Returns the appearance stream's object number."""
    pdf = path.read_bytes()
    root, catalog = _catalog(pdf)
    page = re.search(rb"/Kids\s*\[\s*(\d+\s+\d+\s+R)", pdf).group(1)  # type: ignore[union-attr]
    appearance, field = _new_numbers(pdf, 2)
    elsewhere = b"/Stamp %d 0 R" % appearance if appearance_elsewhere else b""
    path.write_bytes(_update(pdf, {
        appearance: _stream(b"0.5 w 0 0 100 20 re S", b"/Type/XObject/Subtype/Form/BBox[0 0 100 20]"),
        field: b"<</FT/Sig/T(Sig0)/Type/Annot/Subtype/Widget/Rect[72 72 172 92]/P %s/AP<</N %d 0 R>>>>" % (
            page, appearance),
        root: catalog[:-2] + b"/AcroForm<</Fields[%d 0 R]/SigFlags 3>>%s>>" % (field, elsewhere)}))
    return appearance


def redraw(path: Path, appearance: int) -> Path:
    """A later save that redraws an appearance stream in place (as a signer's tool draws the
    signature into its field's box)."""
    pdf = path.read_bytes()
    drawn = _stream(b"0 0 1 rg 0 0 100 20 re f", b"/Type/XObject/Subtype/Form/BBox[0 0 100 20]")
    info = re.findall(rb"/Info\s*(\d+\s+\d+\s+R)", pdf[pdf.rindex(b"trailer"):])
    path.write_bytes(_update(pdf, {appearance: drawn}, b"/Info " + info[-1] if info else b""))
    return path


def add_xmp_metadata(path: Path, description: str) -> Path:
    """The catalog's XMP metadata stream, holding one rdf:Description of ``description``'s
    properties (as PDF 2.0 writers keep a title there and no Info dictionary)."""
    pdf = path.read_bytes()
    root, catalog = _catalog(pdf)
    (metadata,) = _new_numbers(pdf, 1)
    xmp = ('<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
           '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" '
           'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/" '
           f'{description}</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>').encode()
    path.write_bytes(_update(pdf, {metadata: _stream(xmp, b"/Type/Metadata/Subtype/XML"),
                                   root: catalog[:-2] + b"/Metadata %d 0 R>>" % metadata}))
    return path
