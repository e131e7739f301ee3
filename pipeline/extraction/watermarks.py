"""Watermarks told by how they are drawn, not by repeating: a line of the text layer is a
watermark when it is turned diagonally and light or large, or, drawn level, light and large and
laid over other text ("ENTWURF" in 72 pt grey at 45 degrees across the body). Repetition alone
proves nothing: "Artikel 1" ... "Artikel 30" open a page each. PDFium gives each character's
font size, matrix, angle and fill colour (with its opacity); the line's first visible character
speaks for the line.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

DIAGONAL_MIN_DEGREES = 10.0  # turned further than this from level and from upright
LIGHT_MIN = 0.6  # luminance on white paper once opacity is applied (black 0, white 1)
LARGE_RATIO = 2.0  # rendered size over the page's median line size


@dataclass(frozen=True)
class Look:
    size: float  # rendered size in points (font size times the text matrix's scale)
    degrees: float  # rotation, counter-clockwise
    lightness: float


def look(textpage, index: int) -> Look:
    """How PDFium draws the character at ``index``."""
    import pypdfium2.raw as pdfium_c

    matrix = pdfium_c.FS_MATRIX()
    scale = 1.0
    if pdfium_c.FPDFText_GetMatrix(textpage, index, ctypes.byref(matrix)):
        scale = math.sqrt(abs(matrix.a * matrix.d - matrix.b * matrix.c)) or 1.0
    size = pdfium_c.FPDFText_GetFontSize(textpage, index) * scale
    degrees = math.degrees(pdfium_c.FPDFText_GetCharAngle(textpage, index)) % 360
    rgba = [ctypes.c_uint() for _ in range(4)]
    lightness = 0.0
    if pdfium_c.FPDFText_GetFillColor(textpage, index, *[ctypes.byref(c) for c in rgba]):
        r, g, b, alpha = (c.value / 255 for c in rgba)
        luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
        lightness = luminance * alpha + (1 - alpha)
    return Look(size=size, degrees=degrees, lightness=lightness)


def _diagonal(line: Look) -> bool:
    return min(line.degrees % 90, 90 - line.degrees % 90) > DIAGONAL_MIN_DEGREES


def suspect(line: Look) -> bool:
    """Drawn turned or light: a line part drawn so is worth telling apart from the rest."""
    return _diagonal(line) or line.lightness >= LIGHT_MIN


def evidence(line: Look, median_size: float, over_text: bool) -> str | None:
    """Why the line's rendering marks it a watermark ("diagonal 45°, light 0.82, 5.9x body
    size"), or None when it does not."""
    diagonal = _diagonal(line)
    light = line.lightness >= LIGHT_MIN
    large = median_size > 0 and line.size >= LARGE_RATIO * median_size
    if not ((diagonal and (light or large)) or (light and large and over_text)):
        return None
    signs = [f"diagonal {round(line.degrees)}°" if diagonal else "",
             f"light {line.lightness:.2f}" if light else "",
             f"{line.size / median_size:.1f}x body size" if large else "", "over text" if over_text else ""]
    return ", ".join(s for s in signs if s)
