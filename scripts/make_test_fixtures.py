#!/usr/bin/env python3
"""Write the small, committed test fixtures into tests/fixtures/ (each under 100 KiB).

All real content comes from the sha256-checked Debian packages listed in
samples/manifest.json (fetched into samples/downloads/ if needed):

    en-born-digital.pdf     2 pages cut from the English maint-guide PDF (text layer)
    corrupt.pdf             the same PDF truncated halfway (no xref, no trailer)
    empty.pdf               0 bytes
    zero-pages.pdf          a well-formed PDF whose page tree is empty (PDFium and
                            poppler both refuse to open it)
    encrypted.pdf           1 page, RC4-128 with user password "rosetta" (built by hand:
                            PDFium cannot write encrypted files)
    image-only.pdf          3 lines of English, no text layer            (+ .txt truth)
    ja-vertical-small.pdf   5 vertical Japanese columns, no text layer   (+ .txt truth)
    zh-small.pdf            5 lines of simplified Chinese, no text layer (+ .txt truth)
    not-a-pdf.docx          a minimal, valid Word document (a zip, not a PDF)
    notes.txt               plain English text

The three scans are 300 dpi and carry the same sentence in English, Japanese and Chinese.
Truth files hold one paragraph per line. Rerunning gives identical bytes.

    .venv/bin/python scripts/make_test_fixtures.py
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import sys
import tempfile
import textwrap
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import pypdfium2 as pdfium

import fetch_sample_corpus as corpus
import render_scans

FIXTURES = corpus.ROOT / "tests" / "fixtures"
MAX_BYTES = 100 * 1024
USER_PASSWORD = b"rosetta"
OWNER_PASSWORD = b"rosetta-owner"

# Paragraphs (by prefix) of each guide's plain-text version; same passage in each language.
EN_TEXT = "usr/share/doc/maint-guide/maint-guide.en.txt.gz"
JA_TEXT = "usr/share/doc/maint-guide-ja/maint-guide.ja.txt.gz"
ZH_TEXT = "usr/share/doc/maint-guide-zh-cn/maint-guide.zh-cn.txt.gz"
EN_SCAN = ["One thing is certain, though"]
JA_SCAN = ["ただ、確かなことが"]
ZH_SCAN = ["对于 Debian 软件包维护人员"]
EN_NOTES = ["Since this is a tutorial", "Here are some observations of Debian"]

# PDF standard security handler (ISO 32000-1, 7.6.3): padding for passwords.
PASSWORD_PAD = bytes.fromhex("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A")


def rc4(key: bytes, data: bytes) -> bytes:
    s = list(range(256))
    j = 0
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) % 256
        s[i], s[j] = s[j], s[i]
    out = bytearray()
    i = j = 0
    for byte in data:
        i = (i + 1) % 256
        j = (j + s[i]) % 256
        s[i], s[j] = s[j], s[i]
        out.append(byte ^ s[(s[i] + s[j]) % 256])
    return bytes(out)


def _md5_50(data: bytes) -> bytes:
    """MD5, then 50 more rounds of MD5 (revision 3 key strengthening)."""
    digest = hashlib.md5(data).digest()
    for _ in range(50):
        digest = hashlib.md5(digest).digest()
    return digest


def _rc4_20(key: bytes, data: bytes) -> bytes:
    """RC4 with the key, then 19 more passes with each key byte XOR the pass number."""
    for i in range(20):
        data = rc4(bytes(b ^ i for b in key), data)
    return data


def encrypted_pdf(lines: list[str]) -> bytes:
    """A one-page Helvetica PDF encrypted with revision 3, 128-bit RC4 (PDF 1.4)."""
    file_id = hashlib.md5(b"rosetta encrypted.pdf fixture").digest()
    permissions = -4  # all operations allowed once opened
    user = (USER_PASSWORD + PASSWORD_PAD)[:32]
    owner_entry = _rc4_20(_md5_50((OWNER_PASSWORD + PASSWORD_PAD)[:32]), user)  # algorithm 3
    key = _md5_50(user + owner_entry + struct.pack("<i", permissions) + file_id)  # algorithm 2
    user_entry = _rc4_20(key, hashlib.md5(PASSWORD_PAD + file_id).digest()) + bytes(16)  # algorithm 5

    def literal(text: str) -> str:
        return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"

    # WinAnsiEncoding is (nearly) cp1252, which also covers the guide's curly quotes.
    content = "BT /F1 11 Tf 14 TL 72 770 Td " + " T* ".join(f"{literal(line)} Tj" for line in lines) + " ET"
    # Streams (and strings) are encrypted with a key derived from the object number.
    stream = rc4(hashlib.md5(key + (5).to_bytes(3, "little") + bytes(2)).digest(), content.encode("cp1252"))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Filter /Standard /V 2 /R 3 /Length 128 /P %d /O <%s> /U <%s> >>"
        % (permissions, owner_entry.hex().encode(), user_entry.hex().encode()),
    ]
    file_id_hex = file_id.hex().encode()
    return assemble_pdf(objects, b" /Encrypt 6 0 R /ID [<%s><%s>]" % (file_id_hex, file_id_hex))


def assemble_pdf(objects: list[bytes], trailer: bytes = b"") -> bytes:
    """A PDF 1.4 file of ``objects``, numbered from 1 (the first is the catalog), with its
    cross-reference table; ``trailer`` adds entries to the trailer dictionary."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\n" % (len(objects) + 1, trailer)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def minimal_docx(paragraphs: list[str]) -> bytes:
    """A valid WordprocessingML package with fixed timestamps (so bytes are stable)."""
    ns = "http://schemas.openxmlformats.org"
    parts = {
        "[Content_Types].xml": (
            f'<Types xmlns="{ns}/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/word/document.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
        ),
        "_rels/.rels": (
            f'<Relationships xmlns="{ns}/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{ns}/officeDocument/2006/relationships/officeDocument" '
            'Target="word/document.xml"/></Relationships>'
        ),
        "word/document.xml": (
            f'<w:document xmlns:w="{ns}/wordprocessingml/2006/main"><w:body>'
            + "".join(f"<w:p><w:r><w:t>{escape(p)}</w:t></w:r></w:p>" for p in paragraphs)
            + "</w:body></w:document>"
        ),
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, xml in parts.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' + xml)
    return buf.getvalue()


def paragraphs(root: Path, path: str, prefixes: list[str]) -> list[str]:
    return render_scans.select_paragraphs(render_scans.read_paragraphs(root / path), prefixes)


def write_scan(name: str, text: list[str], *, lang: str, vertical: bool, seed: int, block_em: int) -> list[Path]:
    pdf, truth = FIXTURES / f"{name}.pdf", FIXTURES / f"{name}.txt"
    render_scans.render_scan(text, pdf, lang=lang, vertical=vertical, seed=seed, block_em=block_em)
    truth.write_text("\n".join(text) + "\n", encoding="utf-8")
    return [pdf, truth]


def write_fixtures(roots: dict[str, Path], en_pdf: Path) -> list[Path]:
    en, ja, zh = roots["maint-guide"], roots["maint-guide-ja"], roots["maint-guide-zh-cn"]
    files: dict[str, bytes] = {}

    # PDF pages 7-8 = printed pages 1-2, the start of chapter 1.
    born_digital = FIXTURES / "en-born-digital.pdf"
    corpus.write_page_subset(en_pdf, 7, 8, born_digital)
    data = born_digital.read_bytes()
    files["corrupt.pdf"] = data[: len(data) // 2]
    files["empty.pdf"] = b""
    files["zero-pages.pdf"] = corpus.pdf_bytes(pdfium.PdfDocument.new())

    en_scan = paragraphs(en, EN_TEXT, EN_SCAN)
    files["encrypted.pdf"] = encrypted_pdf([line for p in en_scan for line in textwrap.wrap(p, 88)])
    notes = paragraphs(en, EN_TEXT, EN_NOTES)
    files["not-a-pdf.docx"] = minimal_docx(notes)
    files["notes.txt"] = ("\n\n".join(textwrap.fill(p, 72) for p in notes) + "\n").encode()
    for name, content in files.items():
        (FIXTURES / name).write_bytes(content)

    return [
        born_digital,
        *(FIXTURES / name for name in files),
        *write_scan("image-only", en_scan, lang="en", vertical=False, seed=11, block_em=34),
        *write_scan(
            "ja-vertical-small", paragraphs(ja, JA_TEXT, JA_SCAN), lang="ja", vertical=True, seed=12, block_em=26
        ),
        *write_scan("zh-small", paragraphs(zh, ZH_TEXT, ZH_SCAN), lang="zh", vertical=False, seed=13, block_em=26),
    ]


def main() -> int:
    manifest = json.loads(corpus.MANIFEST.read_text(encoding="utf-8"))
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rosetta-fixtures-") as tmp:
        try:
            roots = corpus.unpack_documents(manifest, Path(tmp), record=False)
            en_doc = next(doc for doc in manifest["documents"] if doc["lang"] == "en")
            en_pdf = corpus.package_file(roots, en_doc, "pdf", "pdf_sha256", record=False)
        except corpus.FetchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        written = write_fixtures(roots, en_pdf)
    return report_sizes(written)


def report_sizes(written: list[Path]) -> int:
    """Print each fixture's size; 1 (an error) when one is over MAX_BYTES."""
    for path in written:
        size = path.stat().st_size
        print(f"  {path.relative_to(corpus.ROOT)}  {size:,} bytes")
        if size > MAX_BYTES:
            print(f"error: {path.name} is over {MAX_BYTES:,} bytes", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
