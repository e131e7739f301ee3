"""What a PDF says about itself: its document information (title, author, subject, dates) and
its digital signatures (who signed, when, why, whether the signed bytes are intact, and
what was appended after).

A compliance team asks of a contract who signed it and whether it changed since; the
answer travels with every chunk (pipeline.stages.enrich). The signer is the subject of the
signing certificate the signature carries, the time the signature dictionary's /M. Checked:
that the signed byte ranges hash to the signature's digest and that the signature value
verifies with that certificate's key (``intact``), and what the file gained after those
ranges (pipeline.extraction.revisions: later signatures and validation data, or changes).
Not judged: whether the certificate deserves trust (its chain, its revocation): that needs
the team's trust anchors and a validator (pyHanko, Acrobat); extraction.md, "Document
information and signatures".
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.contracts import DocumentInfo, Signature
from pipeline.extraction.revisions import after_signature, form_fields

log = logging.getLogger(__name__)

# D:YYYYMMDDHHmmSS, every part after the year optional, then Z or +HH'mm' / -HH'mm'
PDF_DATE = re.compile(r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz])|([+-])(\d{2})'?(\d{2})?'?)?")
# XMP's dates: ISO 8601, each part after the year optional, fractions of a second dropped
XMP_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?)?)?"
                      r"(?:([Zz])|([+-])(\d{2}):(\d{2}))?$")


def iso_date(value: str) -> str | None:
    """A PDF date string (or XMP's ISO 8601) as ISO 8601 (with its offset where it gives one);
    None when it is no date (an empty /M, a producer's own format)."""
    match = PDF_DATE.match(value.strip()) or XMP_DATE.match(value.strip())
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


OID_MESSAGE_DIGEST = "1.2.840.113549.1.9.4"
OID_RSASSA_PSS = "1.2.840.113549.1.1.10"  # its parameters name the hash, the mask's hash and the salt
DIGESTS = {"1.3.14.3.2.26": "sha1", "2.16.840.1.101.3.4.2.4": "sha224", "2.16.840.1.101.3.4.2.1": "sha256",
           "2.16.840.1.101.3.4.2.2": "sha384", "2.16.840.1.101.3.4.2.3": "sha512",
           "2.16.840.1.101.3.4.2.8": "sha3_256", "2.16.840.1.101.3.4.2.9": "sha3_384",
           "2.16.840.1.101.3.4.2.10": "sha3_512", "2.16.840.1.101.3.4.2.12": "shake256"}


def _oid(data: bytes) -> str:
    first, rest, value = data[0], [], 0
    for byte in data[1:]:
        value = value << 7 | byte & 0x7F
        if not byte & 0x80:
            rest.append(value)
            value = 0
    return ".".join(str(n) for n in (min(first // 40, 2), first - 40 * min(first // 40, 2), *rest))


@dataclass(frozen=True)
class _SignerInfo:
    certificate: Any  # the signer's x509 certificate, None when the signature does not carry it
    digest: str  # hashlib's name for the digest algorithm; "" for one not in DIGESTS
    signed_attributes: bytes | None  # DER, as the SET the signature value signs; None: it signs the data
    message_digest: bytes | None  # the signed attributes' digest of the data
    signature_algorithm: str  # its OID
    signature: bytes
    # the content signed inside the signature, where it is not the file's bytes: a timestamp
    # token's TSTInfo, adbe.pkcs7.sha1's SHA-1 digest of the file; None for a detached signature
    content: bytes | None
    # RSASSA-PSS's parameters (hash, mask generation's hash, salt length); None for another algorithm
    pss: tuple[str, str, int] | None = None


def _pss_parameters(data: bytes, identifier: tuple[int, int, int, int]) -> tuple[str, str, int]:
    """RSASSA-PSS-params (RFC 4055): [0] hashAlgorithm, [1] maskGenAlgorithm (MGF1 and its
    hash), [2] saltLength; each left out means its default: SHA-1, MGF1 with SHA-1, 20."""
    digest, mask, salt = "sha1", "sha1", 20
    parts = _children(data, identifier[2], identifier[3])
    for tag, _, value, end in _children(data, parts[1][2], parts[1][3]) if len(parts) > 1 else []:
        inner = _children(data, value, end)[0]
        if tag == 0xA0:
            digest = DIGESTS.get(_oid(data[slice(*_children(data, inner[2], inner[3])[0][2:])]), "")
        elif tag == 0xA1:  # MGF1's own parameter: the hash's AlgorithmIdentifier
            mgf_hash = _children(data, inner[2], inner[3])[1]
            mask = DIGESTS.get(_oid(data[slice(*_children(data, mgf_hash[2], mgf_hash[3])[0][2:])]), "")
        elif tag == 0xA2:
            salt = int.from_bytes(data[inner[2]:inner[3]], "big")
    return digest, mask, salt


def _signer_info(contents: bytes) -> _SignerInfo:
    """The first SignerInfo of a CMS SignedData, with the certificate it names (by issuer and
    serial number, a serial being unique per issuer only, or by subject key identifier) among
    those it carries. ValueError or IndexError where it is no DER CMS."""
    from cryptography import x509

    _, _, value, end = _tlv(contents, 0)  # ContentInfo: contentType, [0] content
    explicit = _children(contents, value, end)[1]
    signed_data = _children(contents, explicit[2], explicit[3])[0]
    parts = _children(contents, signed_data[2], signed_data[3])  # version, digests, content, [0] certs, ...
    content = None
    encapsulated = _children(contents, parts[2][2], parts[2][3])  # eContentType, [0] EXPLICIT eContent
    if len(encapsulated) > 1:
        octets = _children(contents, encapsulated[1][2], encapsulated[1][3])[0]
        content = contents[octets[2]:octets[3]] if octets[0] == 0x04 else b""  # b"": BER pieces, not read
    certificates = []
    for _, start, _, stop in next((_children(contents, p[2], p[3]) for p in parts if p[0] == 0xA0), []):
        try:
            certificates.append(x509.load_der_x509_certificate(contents[start:stop]))
        except ValueError:  # an attribute certificate or a broken one: not the signer's
            continue
    signer = _children(contents, *_children(contents, parts[-1][2], parts[-1][3])[0][2:])
    sid, digest_algorithm = signer[1], signer[2]
    certificate = None
    if sid[0] == 0x80:  # [0] subjectKeyIdentifier
        for cert in certificates:
            try:
                if cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest == \
                        contents[sid[2]:sid[3]]:
                    certificate = cert
            except x509.ExtensionNotFound:
                continue
    else:
        issuer, serial = _children(contents, sid[2], sid[3])[:2]  # issuerAndSerialNumber
        number = int.from_bytes(contents[serial[2]:serial[3]], "big", signed=True)
        certificate = next((cert for cert in certificates if cert.serial_number == number
                            and cert.issuer.public_bytes() == contents[issuer[1]:issuer[3]]), None)
    attributes, message_digest = None, None
    rest = signer[3:]
    if rest[0][0] == 0xA0:  # [0] IMPLICIT signedAttrs: signed as a SET
        attributes = b"\x31" + contents[rest[0][1] + 1:rest[0][3]]
        for attribute in _children(contents, rest[0][2], rest[0][3]):
            kind, values = _children(contents, attribute[2], attribute[3])
            if _oid(contents[kind[2]:kind[3]]) == OID_MESSAGE_DIGEST:
                digest_value = _children(contents, values[2], values[3])[0]
                message_digest = contents[digest_value[2]:digest_value[3]]
        rest = rest[1:]
    algorithm, signature = rest[0], rest[1]

    def algorithm_oid(identifier: tuple[int, int, int, int]) -> str:  # AlgorithmIdentifier: OID, parameters
        oid = _children(contents, identifier[2], identifier[3])[0]
        return _oid(contents[oid[2]:oid[3]])

    pss = _pss_parameters(contents, algorithm) if algorithm_oid(algorithm) == OID_RSASSA_PSS else None
    return _SignerInfo(certificate, DIGESTS.get(algorithm_oid(digest_algorithm), ""), attributes, message_digest,
                       algorithm_oid(algorithm), contents[signature[2]:signature[3]], content, pss)


def _digest(name: str, data: bytes) -> bytes:
    return hashlib.shake_256(data).digest(64) if name == "shake256" else hashlib.new(name, data).digest()


def _content_covers(content: bytes, kind: str, signed: bytes) -> bool | None:
    """Whether the content signed inside a signature stands for the file's signed bytes:
    adbe.pkcs7.sha1 signs their SHA-1 digest, a document timestamp (ETSI.RFC3161) a TSTInfo
    whose message imprint is their digest; None for another content."""
    if kind == "adbe.pkcs7.sha1":
        return content == hashlib.sha1(signed).digest()
    if kind == "ETSI.RFC3161":  # TSTInfo: version, policy, messageImprint {algorithm, hashedMessage}, ...
        _, _, value, end = _tlv(content, 0)
        imprint = _children(content, value, end)[2]
        algorithm, hashed = _children(content, imprint[2], imprint[3])[:2]
        oid = _children(content, algorithm[2], algorithm[3])[0]
        name = DIGESTS.get(_oid(content[oid[2]:oid[3]]))
        return None if name is None else content[hashed[2]:hashed[3]] == _digest(name, signed)
    return None


def intact(info: _SignerInfo, signed: bytes, kind: str = "") -> bool | None:
    """Whether the signed bytes hash to the signature's digest (for a signature whose content
    is inside it, ``_content_covers``; ``kind`` is its SubFilter) and the signature value checks
    with the key of the certificate it carries; None where that cannot be told here (no
    certificate, a content not read, an algorithm not read). Whether that certificate
    deserves trust is not judged."""
    from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa

    if info.certificate is None or not info.digest:
        return None
    if info.content is not None:
        covers = _content_covers(info.content, kind, signed) if info.content else None
        if not covers:
            return covers
        signed = info.content  # what the signature value signs
    digest = _digest(info.digest, signed)
    if info.signed_attributes is not None and info.message_digest != digest:
        return False
    message = signed if info.signed_attributes is None else info.signed_attributes
    algorithm = getattr(hashes, info.digest.upper(), None) if info.digest != "shake256" else None
    try:
        key = info.certificate.public_key()
        if isinstance(key, (ed25519.Ed25519PublicKey, ed448.Ed448PublicKey)):
            key.verify(info.signature, message)
        elif isinstance(key, rsa.RSAPublicKey) and info.pss is not None:
            digest_name, mask_name, salt = info.pss
            digest, mask = getattr(hashes, digest_name.upper(), None), getattr(hashes, mask_name.upper(), None)
            if digest is None or mask is None:
                return None
            key.verify(info.signature, message, padding.PSS(padding.MGF1(mask()), salt), digest())
        elif isinstance(key, rsa.RSAPublicKey) and algorithm and info.signature_algorithm != OID_RSASSA_PSS:
            key.verify(info.signature, message, padding.PKCS1v15(), algorithm())
        elif isinstance(key, ec.EllipticCurvePublicKey) and algorithm:
            key.verify(info.signature, message, ec.ECDSA(algorithm()))
        else:
            return None
    except InvalidSignature:
        return False
    except (UnsupportedAlgorithm, ValueError, TypeError) as exc:  # a key or curve cryptography does not take
        log.debug("signature value not checked: %s: %s", type(exc).__name__, exc)
        return None
    return True


def _name(certificate) -> str:
    """A certificate subject's common name, else its e-mail address, else the whole name."""
    from cryptography.x509.oid import NameOID

    for oid in (NameOID.COMMON_NAME, NameOID.EMAIL_ADDRESS):
        found = certificate.subject.get_attributes_for_oid(oid)
        if found:
            return str(found[0].value)
    return certificate.subject.rfc4514_string()


def read_signature(contents: bytes, signed: bytes, kind: str = "") -> tuple[str, bool | None]:
    """The signer of a PKCS#7 / CMS signature over ``signed`` (a document timestamp's: the
    time stamping authority), "" when the signature does not carry its certificate; and
    whether it is intact (``intact``; ``kind``: its SubFilter). ("", None) for what is no DER
    CMS."""
    try:
        info = _signer_info(contents)
        return (_name(info.certificate) if info.certificate is not None else ""), intact(info, signed, kind)
    except (ValueError, IndexError) as exc:
        log.debug("signature not parsed: %s", exc)
        return "", None


def _x509_certificate(path: Path, contents: bytes):
    """The signer's certificate of an adbe.x509.rsa_sha1 signature: the /Cert entry (a string,
    or an array whose first string is the signer's) of the signature dictionary whose
    /Contents are ``contents``, read with pdfminer (PDFium does not give it); None if absent."""
    from cryptography import x509
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import resolve1

    with path.open("rb") as stream:
        for _, field, _ in form_fields(PDFDocument(PDFParser(stream))):
            value = resolve1(field.get("V"))
            if isinstance(value, dict) and resolve1(value.get("Contents")) == contents:
                certificate = resolve1(value.get("Cert"))
                if isinstance(certificate, list) and certificate:
                    certificate = resolve1(certificate[0])
                return x509.load_der_x509_certificate(certificate) if isinstance(certificate, bytes) else None
    return None


def read_x509_signature(path: Path, contents: bytes, signed: bytes) -> tuple[str, bool | None]:
    """adbe.x509.rsa_sha1: /Contents is the bare PKCS#1 signature value (a DER OCTET STRING)
    over the SHA-1 digest of the signed bytes, and the certificate sits in /Cert; its value
    is checked as a CMS signature without signed attributes is (``intact``)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric import rsa

    try:
        certificate = _x509_certificate(path, contents)
        tag, _, value, end = _tlv(contents, 0)
        rsa_key = certificate is not None and isinstance(certificate.public_key(), rsa.RSAPublicKey)
    except (ValueError, IndexError, TypeError, UnsupportedAlgorithm) as exc:  # pdfminer's errors are ValueErrors too
        log.debug("adbe.x509.rsa_sha1 signature not read: %s: %s", type(exc).__name__, exc)
        return "", None
    if certificate is None:
        return "", None
    if tag != 0x04 or not rsa_key:
        return _name(certificate), None
    return _name(certificate), intact(_SignerInfo(certificate, "sha1", None, None, "", contents[value:end], None),
                                      signed)


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
    data = b""
    for index in range(pdfium_c.FPDF_GetSignatureCount(pdf.raw)):
        handle = pdfium_c.FPDF_GetSignatureObject(pdf.raw, index)
        contents = _bytes(pdfium_c.FPDFSignatureObj_GetContents, handle)
        if not contents.strip(b"\0"):
            continue  # a field waiting for its signature
        data = data or path.read_bytes()
        count = pdfium_c.FPDFSignatureObj_GetByteRange(handle, None, 0)
        ranges = (ctypes.c_int * max(count, 1))()
        pdfium_c.FPDFSignatureObj_GetByteRange(handle, ranges, count)
        pairs = list(zip(ranges[0:count:2], ranges[1:count:2]))  # [start, length] pairs
        kind = _bytes(pdfium_c.FPDFSignatureObj_GetSubFilter, handle).rstrip(b"\0").decode("latin-1")
        signed = b"".join(data[start:start + n] for start, n in pairs)
        signer, whole = (read_x509_signature(path, contents, signed) if kind == "adbe.x509.rsa_sha1"
                         else read_signature(contents, signed, kind))
        reason = _bytes(pdfium_c.FPDFSignatureObj_GetReason, handle)
        found.append(Signature(
            signer=signer, intact=whole, kind=kind,
            signed_at=iso_date(_bytes(pdfium_c.FPDFSignatureObj_GetTime, handle).rstrip(b"\0").decode("latin-1")),
            reason=reason.decode("utf-16-le", "replace").rstrip("\0") if reason else "",
            after=after_signature(data, pairs) if count % 2 == 0 else "changes"))
    return found


# XMP's namespaces, and the Info entries the XMP properties stand in for
XMP_NAMESPACES = {"dc": "http://purl.org/dc/elements/1.1/", "xmp": "http://ns.adobe.com/xap/1.0/",
                  "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#"}
XMP_PROPERTIES = {"Title": "dc:title", "Author": "dc:creator", "Subject": "dc:description",
                  "CreationDate": "xmp:CreateDate", "ModDate": "xmp:ModifyDate"}
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
PLACEHOLDER_TITLES = {"untitled", "untitled document"}  # what writers put where no title was given


def xmp_info(document) -> dict[str, str]:
    """The Info entries the catalog's XMP metadata stream gives (``XMP_PROPERTIES``; dates as
    ISO 8601), read from the file's pdfminer ``document``: PDF 2.0 deprecates the Info
    dictionary, and some writers keep the title there only. A property may be an attribute of
    an rdf:Description or an element, its value a language alternative (the x-default one, else
    the first), a list (joined by "; ") or text."""
    from xml.etree import ElementTree

    from pdfminer.pdftypes import PDFStream, resolve1

    metadata = resolve1(document.catalog.get("Metadata"))
    if not isinstance(metadata, PDFStream):
        return {}
    root = ElementTree.fromstring(metadata.get_data().strip(b"\0 \t\r\n"))
    rdf = "{%s}" % XMP_NAMESPACES["rdf"]
    found: dict[str, str] = {}
    for entry, name in XMP_PROPERTIES.items():
        prefix, local = name.split(":")
        tag = "{%s}%s" % (XMP_NAMESPACES[prefix], local)
        for description in root.iter(rdf + "Description"):
            value = description.get(tag)
            element = description.find(tag)
            if value is None and element is not None:
                items = element.findall(f"{rdf}Alt/{rdf}li") or element.findall(f"{rdf}Seq/{rdf}li") or \
                    element.findall(f"{rdf}Bag/{rdf}li")
                if any(item.get(XML_LANG) == "x-default" for item in items):
                    items = [item for item in items if item.get(XML_LANG) == "x-default"]
                elif items and element.find(f"{rdf}Alt") is not None:
                    items = items[:1]
                value = "; ".join((item.text or "").strip() for item in items) if items else element.text
            if value and value.strip():
                found[entry] = value.strip()
                break
    return found


def _xmp_of(path: Path, password: str | None, miner) -> dict[str, str]:
    """``xmp_info`` of the file, from its pdfminer document ``miner`` where one is open
    (extraction's pdfplumber handle), else from one opened here."""
    if miner is not None:
        return xmp_info(miner)
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser

    with path.open("rb") as stream:
        return xmp_info(PDFDocument(PDFParser(stream), password or ""))


def document_info(pdf, path: Path, password: str | None = None, miner=None) -> DocumentInfo:
    """The PDF's document information (the Info dictionary, the XMP metadata where it lacks
    an entry) and signatures; what cannot be read is left empty (a broken info dictionary does
    not stop the document). ``miner``: the file's pdfminer document, where one is open."""
    try:
        meta = pdf.get_metadata_dict(skip_empty=True)
    except Exception as exc:  # a broken info dictionary: the text is what matters
        log.warning("%s: document information not read: %s", path.name, exc)
        meta = {}
    meta = {key: value.replace("\0", "").strip() for key, value in meta.items()}  # "aspect\0": a C string kept whole
    if any(not meta.get(entry) for entry in XMP_PROPERTIES):
        try:
            meta = {**_xmp_of(path, password, miner), **{key: value for key, value in meta.items() if value}}
        except Exception as exc:  # a broken metadata stream, XML that does not parse: Info alone
            log.warning("%s: XMP metadata not read: %s: %s", path.name, type(exc).__name__, exc)
    if meta.get("Title", "").lower() in PLACEHOLDER_TITLES:
        meta["Title"] = ""
    try:
        signed = signatures(pdf, path)
    except Exception as exc:  # a broken signature dictionary: named, the document goes on
        log.warning("%s: signatures not read: %s: %s", path.name, type(exc).__name__, exc)
        signed = []
    return DocumentInfo(title=meta.get("Title", ""), author=meta.get("Author", ""),
                        subject=meta.get("Subject", ""), created=iso_date(meta.get("CreationDate", "")),
                        modified=iso_date(meta.get("ModDate", "")), signatures=signed)
