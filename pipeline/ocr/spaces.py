"""The ideographic space after a line's number, which the recognisers drop.

Japanese statutes set a paragraph (項) or item (号) number apart from its text by a full-width
space ("２　前項の規定…", "一　法令　法律…"), and the clause tagger knows the number by that
space: "一般に" starts a sentence with the same character. PP-OCR and Tesseract's jpn_vert both
read such a line without it ("一法令法律…"), and PP-OCR reads ２ as "2". The page still shows the
space: CJK text sits on a grid of one-em cells, so a blank of at least MIN_GAP_EM between the
first glyphs and the next says that an empty cell stands there, and the distance from the
line's first ink to the ink after the blank says how many cells come before it. Where the read
starts with a number (NUMBER) that many cells long, the space goes back after it.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from pipeline.contracts import Direction
from pipeline.ocr.geometry import Line, binarise
from pipeline.text.clauses import FULLWIDTH, HAN, IROHA

IDEOGRAPHIC_SPACE = "\u3000"
# Within a line, glyphs of consecutive cells stand at most ~0.6 em apart (一 upright in a column,
# 0.45 em of bearing before and after it); an empty cell between them leaves at least one em.
MIN_GAP_EM = 0.85
MAX_CELLS = 3  # 二十一: the longest number counted
# A statute's paragraph (２, read as 2), item (十六) and sub-item (ロ) numbers
NUMBER = re.compile(f"[0-9０-９]{{1,2}}|[{''.join(HAN[1:11])}]{{1,3}}|[{''.join(IROHA[1:])}]")
MIN_INK_PX = 2  # pixels of ink across the line that count a step along it as ink (specks are fewer)
# A column's 一 (a flat stroke across it) reaches Tesseract's jpn_vert as a line along it.
BAR_READS = {"|", "丨", "ー", "-", "―", "—", "一"}
BAR_RATIO = 3


def restore_leading_spaces(page: np.ndarray, lines: list[Line], texts: list[str],
                           directions: list[Direction]) -> list[str]:
    """Each line's text (read in its direction) with the space after the number it starts
    with put back where the page shows one; ASCII digits of the number become full-width,
    as a cell holds one digit only so."""
    if not lines:
        return texts
    ink = binarise(page) > 0
    return [_restored(ink, line.box, text, direction) for line, text, direction in zip(lines, texts, directions)]


def _restored(ink: np.ndarray, box: tuple[int, int, int, int], text: str, direction: Direction) -> str:
    x0, y0, x1, y1 = box
    region = ink[y0:y1, x0:x1] if direction == "horizontal" else ink[y0:y1, x0:x1].T  # along the line: axis 1
    found = _cells_before_gap(region)
    if found is None:
        return text
    cells, first_ink = found
    number, rest = text[:cells], text[cells:]
    if rest[:1].isspace():  # read as a narrow space: the empty cell's
        rest = rest[1:]
    if cells == 1 and number in BAR_READS and _horizontal_bar(first_ink, transposed=direction == "vertical"):
        number = "一"
    if not NUMBER.fullmatch(number) or not rest or not _cell_character(rest[0]) or NUMBER.fullmatch(number + rest[0]):
        return text  # not a number, or one that goes on past the blank (二十 read before 一)
    return number.translate(FULLWIDTH) + IDEOGRAPHIC_SPACE + rest


def _cells_before_gap(region: np.ndarray) -> tuple[int, np.ndarray] | None:
    """How many cells stand before the line's first blank of MIN_GAP_EM or more, when that
    blank comes within MAX_CELLS cells of its first ink, and the ink before the blank; None
    if no such blank. ``region``: the line's ink, the line running along axis 1."""
    em = region.shape[0]
    along = region.sum(axis=0) >= MIN_INK_PX
    inked = np.flatnonzero(along)
    if em < 8 or inked.size < 2:
        return None
    gaps = np.flatnonzero(np.diff(inked) - 1 >= MIN_GAP_EM * em)
    if not gaps.size:
        return None
    cells = round((inked[gaps[0] + 1] - inked[0]) / em) - 1
    if not 1 <= cells <= MAX_CELLS:
        return None
    return cells, region[:, inked[0]:inked[gaps[0]] + 1]


def _horizontal_bar(glyph: np.ndarray, transposed: bool) -> bool:
    """Whether a cell's ink is one flat stroke as the page shows it (一), however it was read."""
    rows, cols = np.flatnonzero(glyph.any(axis=1)), np.flatnonzero(glyph.any(axis=0))
    height, width = (rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1) if rows.size else (0, 0)
    if transposed:
        height, width = width, height
    return width >= BAR_RATIO * height > 0


def _cell_character(ch: str) -> bool:
    """A character that fills one em cell of CJK text: an ideograph, kana, a full-width form."""
    return unicodedata.east_asian_width(ch) in ("W", "F") and not ch.isspace()
