"""Quote marks both readers drop in vertical Chinese columns (traditional pages' curly
quotes, simplified pages' corner quotes and upright ＂), found in the column image and
placed by the recogniser's character positions.

In the TC faces a vertical “ or ” is a pair of short slanted ticks side by side in an
otherwise blank character cell: “ at the end of its cell, against the glyph it opens (the
gap below the ticks is small, the one above most of a cell), ” at the start of its cell,
against the glyph it closes. PP-OCR (the column turned) and Tesseract ``chi_tra_vert``
both drop many of them (131 “ and 107 ” over the 76 zh-tw cells of the degradation
suite's tuning pages, 1-4, clean, mild and moderate). ``quote_ticks`` finds the pairs;
``place_quotes`` puts a quote into PP-OCR's read before the glyph an opening pair stands
against (after the one a closing pair stands against), chosen by the position at which
the recogniser emitted each character (its CTC time step, ``engines.recognise_placed``),
unless the read already holds a quote mark there.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipeline.ocr.geometry import binarise
from pipeline.ocr.layout import CROP_PAD

# A tick, in column widths (~ the em): 11 x 16 px at 14 pt, 300 dpi (0.2 x 0.29 em)
TICK_HEIGHT = (0.12, 0.45)
TICK_WIDTH = (0.08, 0.35)
# The two ticks of a pair: side by side (their rows overlap by this share of the shorter),
# at most this far apart, of about the same height
PAIR_OVERLAP = 0.6
PAIR_GAP = 0.2
PAIR_HEIGHT_RATIO = 1.6
# The blank side of the quote's cell: at least this much of an em without ink (or the
# column's end); the other side's gap is smaller
BLANK_SIDE = 0.45
DUST_AREA = 0.004  # components under this share of an em^2 are specks, not ink that fills a cell
# Quote marks a read may already hold near the ticks (within NEAR of the glyph it stands against)
QUOTE_MARKS = set("“”\"'‘’「」『』〝〞〟[]")
NEAR = 0.6
# What PP-OCR reads a pair of ticks as, at times, beside the quote mark itself: the slanted
# ticks of “ ” as the other quote, ' or ， (按下，確定“鍵), the upright bars of ＂ as = (turned)
TICK_READS = {"“": set("“”'，,"), "”": set("“”'，,"), '"': set("="), "＂": set("=")}
ENDS_BARS = "＂"  # upright bars at a column's head or foot: a " only where the read holds = or a quote
# |correlation of x and y| over a tick's pixels: a curly quote's ticks are slanted (0.85 at
# 14 pt sans), the bars of an upright ＂ are not (under 0.05)
SLANTED = 0.5
UPRIGHT = 0.25
# A corner quote (simplified pages): 0.68 x 0.38 em at 12 pt serif (its sides: at least
# the first, the longer within the two others), an outline (its ink under CORNER_FILL of
# its box, one hole), one quarter of the box all but blank
CORNER_SIZE = (0.25, 0.45, 0.85)
CORNER_FILL = 0.4
CORNER_BLANK = 0.04


def quote_ticks(column: np.ndarray) -> list[tuple[str, int, int]]:
    """The quote tick pairs in a column crop (8-bit gray, the column's ink box, top to
    bottom): (mark, top, bottom) of each, mark “ where slanted ticks stand against the
    glyph below them, ” where they stand against the one above, and " for two upright
    bars (a full-width ＂, set upright in the column)."""
    height, em = column.shape[:2]
    if em == 0 or height == 0:
        return []
    labels, stats, boxes = _components(column, em)
    ticks = [k for k, b in boxes.items() if TICK_HEIGHT[0] * em <= b[3] <= TICK_HEIGHT[1] * em
             and TICK_WIDTH[0] * em <= b[2] <= TICK_WIDTH[1] * em]
    found: list[tuple[str, int, int]] = []
    used: set[int] = set()
    for a in ticks:
        for b in ticks:
            if b <= a or a in used or b in used:
                continue
            (xa, ya, wa, ha), (xb, yb, wb, hb) = boxes[a], boxes[b]
            overlap = min(ya + ha, yb + hb) - max(ya, yb)
            gap = max(xa, xb) - min(xa + wa, xb + wb)
            if overlap < PAIR_OVERLAP * min(ha, hb) or gap > PAIR_GAP * em or \
                    max(ha, hb) > PAIR_HEIGHT_RATIO * min(ha, hb):
                continue
            top, bottom = min(ya, yb), max(ya + ha, yb + hb)
            others = [o for k, o in boxes.items() if k not in (a, b)]
            if any(o[1] < bottom and o[1] + o[3] > top for o in others):
                continue  # ink beside the ticks: part of a glyph
            above = top - max((o[1] + o[3] for o in others if o[1] + o[3] <= top), default=-em)
            below = min((o[1] for o in others if o[1] >= bottom), default=height + em) - bottom
            if max(above, below) < BLANK_SIDE * em:
                continue
            slants = [_slant(labels[y:y + h, x:x + w] == k) for k, (x, y, w, h) in ((a, boxes[a]), (b, boxes[b]))]
            if all(abs(r) >= SLANTED for r in slants) and slants[0] * slants[1] > 0:
                mark = "“" if below < above else "”"
            elif all(abs(r) <= UPRIGHT for r in slants):
                # at a column's ends only where the read holds a mark there (ENDS_BARS): the
                # two short bars atop 單 begin a column
                mark = '"' if em <= top and bottom <= height - em else ENDS_BARS
            else:
                continue
            found.append((mark, top, bottom))
            used |= {a, b}
    return sorted(found, key=lambda f: f[1])


def quote_corners(column: np.ndarray) -> list[tuple[str, int, int]]:
    """The corner quotes of a simplified page's column (its curly quotes are set as white
    corner brackets, 『 turned: ﹃ at the foot of its cell against the glyph it opens, ﹄ at
    the head of its cell after the glyph it closes): (mark, top, bottom), mark 『 for an
    outline ink along its top and right edges (its lower-left quarter blank), 』 for one
    along its left and bottom edges (upper-right blank), alone in its rows."""
    height, em = column.shape[:2]
    if em == 0 or height == 0:
        return []
    labels, stats, boxes = _components(column, em)
    found: list[tuple[str, int, int]] = []
    for k, (x, y, w, h) in boxes.items():
        if not (CORNER_SIZE[0] * em <= min(w, h) and CORNER_SIZE[1] * em <= max(w, h) <= CORNER_SIZE[2] * em) \
                or stats[k, 4] > CORNER_FILL * w * h:
            continue
        if any(o[1] < y + h and o[1] + o[3] > y for j, o in boxes.items() if j != k):
            continue  # ink beside it: part of a glyph
        mask = labels[y:y + h, x:x + w] == k
        if _holes(mask) != 1:
            continue  # a white corner is an outline (Ｌ and other corner-shaped glyphs are not)
        quarters = [np.count_nonzero(q) / stats[k, 4] for q in (mask[:h // 2, :w // 2], mask[:h // 2, w // 2:],
                                                                mask[h // 2:, :w // 2], mask[h // 2:, w // 2:])]
        blank = [i for i, q in enumerate(quarters) if q <= CORNER_BLANK]
        if len(blank) == 1 and blank[0] in (1, 2) and min(q for i, q in enumerate(quarters) if i != blank[0]) >= 0.1:
            found.append(("『" if blank[0] == 2 else "』", y, y + h))
    return found


def _components(column: np.ndarray, em: int) -> tuple[np.ndarray, np.ndarray, dict[int, tuple[int, ...]]]:
    """A column's ink components: labels, stats, and the boxes (x, y, w, h) of those that are
    no dust speck (DUST_AREA)."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(binarise(column).astype(np.uint8), connectivity=8)
    return labels, stats, {k: tuple(int(v) for v in stats[k, :4]) for k in range(1, count)
                           if stats[k, 4] >= DUST_AREA * em * em}


def _holes(mask: np.ndarray) -> int:
    """Blank regions a component's ink encloses."""
    blank = np.pad(~mask, 1, constant_values=True).astype(np.uint8)
    return cv2.connectedComponents(blank, connectivity=4)[0] - 2


def _slant(mask: np.ndarray) -> float:
    """The correlation of x and y over a stroke's pixels: +-1 a slanted line, 0 upright."""
    m = cv2.moments(mask.astype(np.uint8), binaryImage=True)
    spread = (m["mu20"] * m["mu02"]) ** 0.5
    return m["mu11"] / spread if spread else 0.0


def place_quotes(text: str, positions: list[float], ticks: list[tuple[str, int, int]], em: float) -> str:
    """PP-OCR's read of a column with the quotes of ``ticks`` (``quote_ticks``) put in.

    ``positions``: the column y (same frame as the ticks) at which each character of
    ``text`` was read. An opening quote goes before the character read nearest to the
    middle of the glyph cell below its ticks, a closing one (or ") after the character
    nearest to the cell above; none where the read holds a quote mark within NEAR of
    the ticks (each mark read answers one pair of ticks). A tick read (TICK_READS) near them
    becomes the mark, = too on simplified pages, where the merge would turn it into " only
    where Tesseract read no symbol (leaving it to the merge: 12 zh-cn tuning cells worse)."""
    if not ticks or len(positions) != len(text) or not text:
        return text
    marks = [i for i, ch in enumerate(text) if ch in QUOTE_MARKS | TICK_READS["“"] | TICK_READS['"']]
    inserts: list[tuple[int, str]] = []
    replaced: dict[int, str] = {}
    for mark, top, bottom in ticks:
        middle = (top + bottom) / 2
        read = [i for i in marks if abs(positions[i] - middle) <= NEAR * em]
        if read:
            at = min(read, key=lambda i: abs(positions[i] - middle))
            marks.remove(at)
            if text[at] in TICK_READS.get(mark, ()):
                replaced[at] = '"' if mark == ENDS_BARS else mark  # ticks read as the other quote, a comma or =
            continue
        opens = mark in "“『"
        if mark == ENDS_BARS:
            continue
        target = bottom + 0.5 * em if opens else top - 0.5 * em
        nearest = min(range(len(text)), key=lambda i: abs(positions[i] - target))
        if abs(positions[nearest] - target) > 1.5 * em:
            continue  # nothing read near the glyph the quote stands against
        inserts.append((nearest if opens else nearest + 1, mark))
    out = "".join(replaced.get(i, ch) for i, ch in enumerate(text))
    for at, mark in sorted(inserts, reverse=True):
        out = out[:at] + mark + out[at:]
    return out


def restore_quotes(page: np.ndarray, boxes: list[tuple[int, int, int, int]], texts: list[str],
                   positions: list[list[float]], traditional: bool = True) -> tuple[list[str], list[str]]:
    """PP-OCR's reads of a traditional page's columns (``boxes``, x0, top, x1, bottom in
    ``page``) with the quotes whose ticks they dropped put in, and the curly quotes each
    column's ticks show, in order; ``positions``: each character's place along its
    column crop (``layout.line_crop``), 0-1. On simplified pages (not ``traditional``) only
    the upright ＂: their curly quotes are set as corners, which PP-OCR reads (『』)."""
    out, shown = [], []
    for (x0, y0, x1, y1), text, places in zip(boxes, texts, positions):
        column = page[y0:y1, x0:x1]
        ticks = ([t for t in quote_ticks(column) if traditional or t[0] in ('"', ENDS_BARS)] +
                 ([] if traditional else quote_corners(column))) if places else []
        if ticks:
            pad = round(CROP_PAD * (x1 - x0))
            top, bottom = max(0, y0 - pad), min(page.shape[0], y1 + pad)
            text = place_quotes(text, [top + p * (bottom - top) - y0 for p in places], ticks, float(x1 - x0))
        out.append(text)
        shown.append("".join(mark for mark, _, _ in ticks if mark in "“”\"＂").replace(ENDS_BARS, '"'))
    return out, shown


def turn_as_ticks(text: str, shown: str) -> str:
    """A column's read with its quotes (“ ” ") made the ones its ticks show (``shown``, in
    order), where it holds as many as the ticks: after the merge, Tesseract's direction
    stood against PP-OCR's (確定”鍵 read 確定“鍵 by chi_tra_vert), and a curly quote PP-OCR
    read as " stood (config”。 read config"。)."""
    if not shown or sum(ch in "“”\"" for ch in text) != len(shown):
        return text
    marks = iter(shown)
    return "".join(next(marks) if ch in "“”\"" else ch for ch in text)
