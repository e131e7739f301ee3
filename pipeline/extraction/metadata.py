"""What a PDF says about itself: its document information (title, author, subject, dates) and
its digital signatures (who signed, when, why, and whether anything was appended after).

A compliance team asks of a contract who signed it and whether it changed since; the
answer travels with every chunk (pipeline.stages.enrich). A signature is read as the file
states it: the signer is the subject of the signing certificate the signature carries, the
time the signature dictionary's /M. Neither the certificate chain nor the digest is
verified: that is a validator's job (pyHanko, Acrobat), and the docs say so
(extraction.md, "Document information and signatures"). What is checked is the byte range:
a signature whose signed ranges stop short of the end of the file was followed by changes
(an incremental update: a later signature, a filled field, an edited page).
"""

from __future__ import annotations

import ctypes
import logging
import re
from pathlib import Path

from pipeline.contracts import DocumentInfo, Signature

log = logging.getLogger(__name__)

# D:YYYYMMDDHHmmSS, every part after the year optional, then Z or +HH'mm' / -HH'mm'
PDF_DATE = re.compile(r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz])|([+-])(\d{2})'?(\d{2})?'?)?")


def iso_date(value: str) -> str | None:
    """A PDF date string as ISO 8601 (with its offset where it gives one); None when it is no
    date (an empty /M, a producer's own format)."""
    match = PDF_DATE.match(value.strip())
    if not match:
        return None
    year, month, day, hour, minute, second, utc, sign, off_hour, off_minute = match.groups()
    stamp = f"{year}-{month or '01'}-{day or '01'}T{hour or '00'}:{minute or '00'}:{second or '00'}"
    if not (1 <= int(month or 1) <= 12 and 1 <= int(day or 1) <= 31 and int(hour or 0) < 24
            and int(minute or 0) < 60 and int(second or 0) < 61):
        return None
    if utc:
        return stamp + "Z"
    return stamp + (f"{sign}{off_hour}:{off_minute or '00'}" if sign else "")


def _tlv(data: bytes, pos: int) -> tuple[int, int, int, int]:
    """(tag, start, value start, end) of the DER object at ``pos``; ValueError past the data or
    on a BER indefinite length."""
    tag, length = data[pos], data[pos + 1]
    value = pos + 2
    if length & 0x80:
        size = length & 0x7F
        if not size:
            raise ValueError("indefinite length (BER)")
        length, value = int.from_bytes(data[value:value + size], "big"), value + size
    if value + length > len(data):
        raise ValueError("object runs past the data")
    return tag, pos, value, value + length


def _children(data: bytes, start: int, end: int) -> list[tuple[int, int, int, int]]:
    found = []
    while start < end:
        found.append(_tlv(data, start))
        start = found[-1][3]
    return found


def _signer_certificate(contents: bytes):
    """The certificate of the signer a CMS SignedData names (its first SignerInfo: issuer and
    serial number, or subject key identifier), among the certificates it carries; None
    when it carries none that matches."""
    from cryptography import x509

    _, _, value, end = _tlv(contents, 0)  # ContentInfo: contentType, [0] content
    explicit = _children(contents, value, end)[1]
    signed_data = _children(contents, explicit[2], explicit[3])[0]
    parts = _children(contents, signed_data[2], signed_data[3])
    certificates = []
    for _, start, _, stop in next((_children(contents, p[2], p[3]) for p in parts if p[0] == 0xA0), []):
        try:
            certificates.append(x509.load_der_x509_certificate(contents[start:stop]))
        except ValueError:  # an attribute certificate or a broken one: not the signer's
            continue
    signer_infos = _children(contents, parts[-1][2], parts[-1][3])
    sid = _children(contents, signer_infos[0][2], signer_infos[0][3])[1]
    if sid[0] == 0x80:  # [0] subjectKeyIdentifier
        key_id = contents[sid[2]:sid[3]]
        for cert in certificates:
            try:
                if cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest == key_id:
                    return cert
            except x509.ExtensionNotFound:
                continue
        return None
    issuer, serial = _children(contents, sid[2], sid[3])[:2]  # issuerAndSerialNumber
    number = int.from_bytes(contents[serial[2]:serial[3]], "big", signed=True)
    issued = contents[issuer[1]:issuer[3]]  # a serial number is unique for its issuer only
    return next((cert for cert in certificates
                 if cert.serial_number == number and cert.issuer.public_bytes() == issued), None)


def signer_name(contents: bytes) -> str:
    """The subject of the signing certificate of a PKCS#7 / CMS signature (a document
    timestamp's: the time stamping authority's): its common name, else its e-mail address,
    else the whole name. "" when the signature does not carry its signer's certificate or
    cannot be parsed."""
    from cryptography.x509.oid import NameOID

    try:
        certificate = _signer_certificate(contents)
    except (ValueError, IndexError) as exc:  # not DER CMS: the signer stays unread
        log.debug("signature not parsed: %s", exc)
        return ""
    if certificate is None:
        return ""
    subject = certificate.subject
    for oid in (NameOID.COMMON_NAME, NameOID.EMAIL_ADDRESS):
        found = subject.get_attributes_for_oid(oid)
        if found:
            return str(found[0].value)
    return subject.rfc4514_string()


def _bytes(getter, handle) -> bytes:
    size = getter(handle, None, 0)
    if size <= 0:
        return b""
    buffer = ctypes.create_string_buffer(size)
    getter(handle, buffer, size)
    return buffer.raw


def signatures(pdf, path: Path) -> list[Signature]:
    """The document's signed signature fields, in its order (an empty field is none)."""
    import pypdfium2.raw as pdfium_c

    found = []
    file_size = path.stat().st_size
    for index in range(pdfium_c.FPDF_GetSignatureCount(pdf.raw)):
        handle = pdfium_c.FPDF_GetSignatureObject(pdf.raw, index)
        contents = _bytes(pdfium_c.FPDFSignatureObj_GetContents, handle)
        if not contents.strip(b"\0"):
            continue  # a field waiting for its signature
        count = pdfium_c.FPDFSignatureObj_GetByteRange(handle, None, 0)
        ranges = (ctypes.c_int * max(count, 1))()
        pdfium_c.FPDFSignatureObj_GetByteRange(handle, ranges, count)
        byte_range = list(ranges)[:count]
        # the signed ranges are [start, length] pairs; the last one should reach the end of the file
        covered = bool(byte_range) and len(byte_range) % 2 == 0 and byte_range[-2] + byte_range[-1] >= file_size
        reason = _bytes(pdfium_c.FPDFSignatureObj_GetReason, handle)
        found.append(Signature(
            signer=signer_name(contents),
            signed_at=iso_date(_bytes(pdfium_c.FPDFSignatureObj_GetTime, handle).rstrip(b"\0").decode("latin-1")),
            reason=reason.decode("utf-16-le", "replace").rstrip("\0") if reason else "",
            kind=_bytes(pdfium_c.FPDFSignatureObj_GetSubFilter, handle).rstrip(b"\0").decode("latin-1"),
            covers_to_end=covered))
    return found


def document_info(pdf, path: Path) -> DocumentInfo:
    """The PDF's document information and signatures; what cannot be read is left empty (a
    broken info dictionary does not stop the document)."""
    try:
        meta = pdf.get_metadata_dict(skip_empty=True)
    except Exception as exc:  # a broken info dictionary: the text is what matters
        log.warning("%s: document information not read: %s", path.name, exc)
        meta = {}
    try:
        signed = signatures(pdf, path)
    except Exception as exc:  # a broken signature dictionary: named, the document goes on
        log.warning("%s: signatures not read: %s: %s", path.name, type(exc).__name__, exc)
        signed = []
    meta = {key: value.replace("\0", "").strip() for key, value in meta.items()}  # "aspect\0": a C string kept whole
    return DocumentInfo(title=meta.get("Title", ""), author=meta.get("Author", ""),
                        subject=meta.get("Subject", ""), created=iso_date(meta.get("CreationDate", "")),
                        modified=iso_date(meta.get("ModDate", "")), signatures=signed)
