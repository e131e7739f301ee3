#!/usr/bin/env python3
"""Write tests/fixtures/ligature-names.pdf: a page whose font names its ligatures by their parts.

LaTeX's libertine package names its ligature glyphs by the Adobe Glyph List's rule, "f_i",
"f_f_i", in each font's /Differences, and writes no ToUnicode map: PDFium reads such a glyph
as its character code ("de\\x1bnition"; pipeline.extraction.fonts). Those fonts are not
installed here, so this page is drawn with Computer Modern Roman (the AMS Type 1 cmr10, SIL
Open Font License) under another name, its "fi" and "ffi" glyphs renamed "f_i" and "f_f_i":
a real embedded Type 1 font whose encoding names the ligatures as libertine's does.

    .venv/bin/python scripts/make_ligature_fixture.py   # needs kpsewhich (TeX Live); same bytes each run
"""

from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from fontTools.misc.eexec import decrypt, encrypt
from fontTools.pens.recordingPen import RecordingPen
from fontTools.t1Lib import T1Font

from make_test_fixtures import FIXTURES, assemble_pdf, report_sizes

NAME = b"RosettaLigatures"
RENAMED = {b"fi": b"f_i", b"ffi": b"f_f_i"}
# Codes as OT1 puts the ligatures; the rest of the text is ASCII (StandardEncoding's names).
DIFFERENCES = {12: "f_i", 14: "f_f_i"}
LINES = [
    "Definitions and scope of the file",
    "The officer files the definitive report with the office.",
    "Die Auflage ist in der Datei zu finden; die Definition gilt.",
]


def pfb_segments(data: bytes) -> list[bytes]:
    out, at = [], 0
    while data[at + 1] != 3:
        size = struct.unpack("<I", data[at + 2:at + 6])[0]
        out.append(data[at + 6:at + 6 + size])
        at += 6 + size
    return out


def renamed_font() -> tuple[bytes, bytes]:
    source = subprocess.run(["kpsewhich", "cmr10.pfb"], capture_output=True, text=True, check=True).stdout.strip()
    clear, binary = pfb_segments(Path(source).read_bytes())[:2]
    plain, _ = decrypt(binary, 55665)
    for old, new in RENAMED.items():
        assert plain.count(b"/" + old + b" ") == 1, old
        plain = plain.replace(b"/" + old + b" ", b"/" + new + b" ")
    clear = clear.replace(b"/FontName /CMR10", b"/FontName /" + NAME)
    return clear, encrypt(plain, 55665)[0]


def glyph_name(code: int) -> str:
    from fontTools.encodings.StandardEncoding import StandardEncoding

    return DIFFERENCES.get(code) or StandardEncoding[code]


def pdf(clear: bytes, binary: bytes) -> bytes:
    with tempfile.NamedTemporaryFile(suffix=".pfb") as pfb:
        pfb.write(b"".join(struct.pack("<BBI", 0x80, kind, len(part)) + part
                           for kind, part in ((1, clear), (2, binary))) + b"\x80\x03")
        pfb.flush()
        glyphs = T1Font(pfb.name).getGlyphSet()
        widths = " ".join(str(_width(glyphs, glyph_name(c))) for c in range(128))
    content = b"BT /F1 12 Tf 72 720 Td 16 TL\n" + b"".join(
        b"(" + "".join(chr(code) for code in _codes(line)).encode("latin-1")
        .replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b") '\n" for line in LINES) + b"ET"
    differences = " ".join(f"{code} /{name}" for code, name in DIFFERENCES.items())
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> "
        b"/Contents 5 0 R >>",
        f"<< /Type /Font /Subtype /Type1 /BaseFont /{NAME.decode()} /FirstChar 0 /LastChar 127 "
        f"/Widths [{widths}] /FontDescriptor 6 0 R "
        f"/Encoding << /Type /Encoding /BaseEncoding /StandardEncoding /Differences [{differences}] >> >>".encode(),
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        f"<< /Type /FontDescriptor /FontName /{NAME.decode()} /Flags 34 /FontBBox [-40 -250 1009 750] "
        f"/ItalicAngle 0 /Ascent 694 /Descent -194 /CapHeight 683 /StemV 69 /FontFile 7 0 R >>".encode(),
        b"<< /Length %d /Length1 %d /Length2 %d /Length3 0 >>\nstream\n" % (len(clear) + len(binary), len(clear),
                                                                           len(binary))
        + clear + binary + b"\nendstream",
    ]
    return assemble_pdf(objects)


def _width(glyphs, name: str) -> int:
    if name not in glyphs:
        return 0
    glyph = glyphs[name]
    glyph.draw(RecordingPen())  # runs the charstring, which sets its width
    return round(glyph.width)


def _codes(line: str) -> list[int]:
    """The line's character codes, "ffi" and "fi" drawn as the ligature glyphs."""
    codes, at = [], 0
    while at < len(line):
        if line.startswith("ffi", at):
            codes.append(14)
            at += 3
        elif line.startswith("fi", at):
            codes.append(12)
            at += 2
        else:
            codes.append(ord(line[at]))
            at += 1
    return codes


def main() -> int:
    target = FIXTURES / "ligature-names.pdf"
    target.write_bytes(pdf(*renamed_font()))
    return report_sizes([target])


if __name__ == "__main__":
    sys.exit(main())
