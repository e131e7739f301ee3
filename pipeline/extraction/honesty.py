"""Does a page's text layer say what the page shows? A cheap check of the characters PDFium
read, so that a lying layer is OCRed instead of chunked as if it were text.

A CID-keyed font without a usable Unicode map is what makes a layer lie: PDFium then falls
back to the glyph ids, which read as control characters and letters of unrelated scripts
(Sinhala, Malayalam, Ethiopic... on a Japanese page), a converter's map may send every glyph
to the Private Use Area or to U+FFFD, and pdfminer-based converters write "(cid:NN)" into
the text they pass on. Each is a share of the page's visible characters, counted on the
code points with numpy: no extra PDFium call, so honest born-digital pages pay next to
nothing (docs/benchmarks.md).
"""

from __future__ import annotations

import re

import numpy as np

CID_CODE = re.compile(r"\(cid:\d+\)")
MAX_SHARE = 0.1  # of a page's visible characters; a few symbols from a PUA icon font stay under it
MIN_COUNT = 10  # and never fewer than this many characters
CONTROL_MIN = 3  # C1 controls or noncharacters: a stray one is a font's glitch, three an encoding without a map
MIN_INK_PT = 0.5  # a glyph box lower or narrower than this has no outline
STRAY_SCRIPT_BLOCKS = 3  # glyph ids land in many unrelated 256-code-point blocks; a real script in one or two

# Code points a text in the configured languages (and its symbols) is made of: Latin, Greek
# and Cyrillic (formulas, names), punctuation, symbols, arrows and box drawing, CJK, kana,
# hangul, and compatibility and full-width forms.
EXPECTED = np.array([(0x20, 0x7E), (0xA0, 0x52F), (0x1E00, 0x1EFF), (0x2000, 0x2BFF), (0x2E80, 0x9FFF), (0xAC00, 0xD7AF),
                     (0xF900, 0xFAFF), (0xFB00, 0xFB06), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF),
                     (0x1D400, 0x1D7FF), (0x1F000, 0x1FAFF), (0x20000, 0x3134F)], dtype=np.uint32)


def _scattered_over_scripts(points: np.ndarray, stray: np.ndarray, n_stray: int) -> bool:
    """Whether the stray characters are glyph ids rather than text in a script outside
    EXPECTED: a word of Arabic, Hebrew or Thai keeps to its script's block, while glyph ids
    jump from block to block, so many of them share their block with neither neighbour."""
    block = points >> 8
    same = block[1:] == block[:-1]
    scattered = stray & ~np.r_[False, same] & ~np.r_[same, False]
    return (np.count_nonzero(scattered) > max(MIN_COUNT, MAX_SHARE * n_stray)
            and len(np.unique(block[scattered])) >= STRAY_SCRIPT_BLOCKS)


def code_points(text: str, ink: np.ndarray) -> np.ndarray:
    """The visible characters of a text layer as code points (``ink`` masks the text)."""
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    return points[ink] if len(ink) == len(points) else points


def glyphs_read_as_spaces(chars) -> float:
    """How many glyphs, in ems, the text layer reads as spaces although they leave ink.

    A Unicode map that sends glyphs to a space leaves PDFium one space character per run of
    such glyphs, with the glyph's own outline box; a real space glyph has no outline (PDFium
    gives it a box a thousandth of the font size high) and a word gap PDFium inserts is
    marked generated. Each inked space counts the run up to the next character on its line.
    Only the page's spaces cost a PDFium call (docs/benchmarks.md).
    """
    import pypdfium2.raw as pdfium_c

    points = np.frombuffer(chars.text.encode("utf-32-le"), dtype=np.uint32)
    if not len(points):
        return 0.0
    textpage, ems = chars.textpage, 0.0
    # U+FFFE: PDFium's soft-hyphen marker; U+FFFF: the second index of a character outside the BMP (pdf.PAD)
    for k in np.flatnonzero(~chars.ink & (points >= 0x20) & ~np.isin(points, (0xFFFE, 0xFFFF))).tolist():
        if pdfium_c.FPDFText_IsGenerated(textpage, k):
            continue
        left, bottom, right, top = textpage.get_charbox(k)
        if right - left < MIN_INK_PT or top - bottom < MIN_INK_PT:
            continue
        size = max(pdfium_c.FPDFText_GetFontSize(textpage, k), 1.0)
        run = right - left
        if k + 1 < len(points):
            next_left, next_bottom, _, _ = textpage.get_charbox(k + 1)
            if abs(next_bottom - bottom) < size and next_left > left:
                run = max(run, next_left - left)
        ems += run / size
    return ems


def doubt(text: str, ink: np.ndarray, blanked_ems: float = 0.0) -> str | None:
    """Why the page's text layer cannot be trusted, or None when it reads as text.

    ``cid_codes``: pdfminer's placeholders for unmapped glyphs; ``private_use``: Private
    Use Area code points; ``replacement_chars``: U+FFFD; ``unmapped_glyphs``: control
    characters, or letters scattered over unrelated scripts (glyph ids read as text);
    ``control_characters``: C1 controls or noncharacters, which no text holds (a font
    encoding read as Latin-1, e.g. Greek in an LGR font: "Proairetik\x88");
    ``glyphs_as_spaces``: ``blanked_ems`` (glyphs_read_as_spaces) beyond the share.
    """
    points = code_points(text, ink)
    n = len(points)
    if n == 0:
        return None
    limit = max(MIN_COUNT, MAX_SHARE * n)
    cid = CID_CODE.findall(text)
    if len(cid) >= 3 and sum(map(len, cid)) > limit:
        return "cid_codes"
    if np.count_nonzero(((points >= 0xE000) & (points <= 0xF8FF)) | (points >= 0xF0000)) > limit:
        return "private_use"
    if np.count_nonzero(points == 0xFFFD) > limit:
        return "replacement_chars"
    expected = np.zeros(n, dtype=bool)
    for low, high in EXPECTED:
        expected |= (points >= low) & (points <= high)
    stray = points[~expected]
    controls = np.count_nonzero(stray < 0x20)
    if len(stray) > limit and (controls or _scattered_over_scripts(points, ~expected, len(stray))):
        return "unmapped_glyphs"
    impossible = np.count_nonzero(((points >= 0x80) & (points <= 0x9F)) | ((points >= 0xFDD0) & (points <= 0xFDEF))
                                  | ((points & 0xFFFE) == 0xFFFE))
    if impossible >= CONTROL_MIN:
        return "control_characters"
    if blanked_ems > max(MIN_COUNT, MAX_SHARE * (n + blanked_ems)):
        return "glyphs_as_spaces"
    return None
