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
STRAY_SCRIPT_BLOCKS = 3  # glyph ids land in many unrelated 256-code-point blocks; a real script in one or two

# Code points a text in the configured languages (and its symbols) is made of: Latin, Greek
# and Cyrillic (formulas, names), punctuation, symbols, arrows and box drawing, CJK, kana,
# hangul, and compatibility and full-width forms.
EXPECTED = np.array([(0x20, 0x52F), (0x1E00, 0x1EFF), (0x2000, 0x2BFF), (0x2E80, 0x9FFF), (0xAC00, 0xD7AF),
                     (0xF900, 0xFAFF), (0xFB00, 0xFB06), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF),
                     (0x1D400, 0x1D7FF), (0x1F000, 0x1FAFF), (0x20000, 0x3134F)], dtype=np.uint32)


def code_points(text: str, ink: np.ndarray) -> np.ndarray:
    """The visible characters of a text layer as code points (``ink`` masks the text)."""
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    return points[ink] if len(ink) == len(points) else points


def doubt(text: str, ink: np.ndarray) -> str | None:
    """Why the page's text layer cannot be trusted, or None when it reads as text.

    ``cid_codes``: pdfminer's placeholders for unmapped glyphs; ``private_use``: Private
    Use Area code points; ``replacement_chars``: U+FFFD; ``unmapped_glyphs``: control
    characters, or letters scattered over unrelated scripts (glyph ids read as text).
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
    if len(stray) > limit and (controls or len(np.unique(stray >> 8)) >= STRAY_SCRIPT_BLOCKS):
        return "unmapped_glyphs"
    return None
