"""Vertical CJK text layers (tategaki) in reading order: tier by tier from the top, in each
tier the columns right to left, each column top to bottom.

From PDFium's character boxes alone (content-stream order is not trusted: pdfplumber's
``extract_text`` reads across the columns, and producers differ):

1. Horizontal runs: consecutive characters (in text order) stepping right on one baseline,
   wider than ``HORIZONTAL_MIN_EM`` (a heading set horizontally), or narrower with nothing
   above or below them (a page number); two digits set across inside a column (縦中横)
   stay part of it.
2. Tiers (段): the vertical characters' cells projected on the y axis; bands separated by
   more than ``TIER_GAP_EM`` of blank are tiers (a two-tier 二段組 page, a page number under
   the text). Glyph boxes would not do: under a ︒ or around 一 a column is blank for up to
   0.7 em, and a short column next to a long one left that blank across the tier.
3. Columns: in a tier, characters whose centres lie within ``COLUMN_GAP_EM`` of the next
   across x (punctuation in its vertical form sits in the upper right of its cell, a
   sideways Latin letter off the column's centre line; columns are >= 1.5 em apart).
4. Paragraphs: a column that starts below the tier's top edge (an indent, a heading) or
   follows a column that ended short starts a new block.

Punctuation in vertical presentation forms (︒ ︑ ︐ ﹁ ﹂ ︵ ︶, U+FE10-FE4F) reads as its
ordinary character (。 、 ， 「 」 （ ）): NFKC's, but full-width where NFKC gives ASCII;
ー stays ー.
"""

from __future__ import annotations

import unicodedata

import numpy as np

from pipeline.contracts import Block
from pipeline.extraction.hyphens import MARK, PDFIUM_MARKS
from pipeline.extraction.pdf import Chars

VERTICAL_SAMPLE = 400  # characters looked at to tell a vertical layer
HORIZONTAL_MIN_EM = 1.5
TIER_GAP_EM = 0.5
COLUMN_GAP_EM = 0.5
INDENT_EM = 0.5
SHORT_COLUMN = 0.7  # of the tier's height: a column ending above this ends its paragraph


def _horizontal_form(code: int) -> str:
    """A vertical presentation form's ordinary character: NFKC's, full-width where NFKC
    gives ASCII (︐ -> ， not ",", ︵ -> （), as CJK text sets it."""
    plain = unicodedata.normalize("NFKC", chr(code))
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in plain)


VERTICAL_FORMS = {c: _horizontal_form(c) for c in [*range(0xFE10, 0xFE1A), *range(0xFE30, 0xFE50)]
                  if unicodedata.normalize("NFKC", chr(c)) != chr(c)}


def is_vertical_layer(chars: Chars) -> bool:
    """True when consecutive characters mostly step downwards in the same column."""
    b = chars.char_boxes(np.flatnonzero(chars.ink)[:VERTICAL_SAMPLE])
    if len(b) < 2:
        return False
    size = np.maximum(b[:-1, 3] - b[:-1, 1], 1.0)
    dx, dy = b[1:, 0] - b[:-1, 0], b[1:, 1] - b[:-1, 1]
    down = np.sum((np.abs(dx) < 0.5 * size) & (dy > 0) & (dy < 2 * size))
    right = np.sum((np.abs(dy) < 0.5 * size) & (dx > 0) & (dx < 2 * size))
    return bool(down > 2 * right)


def _runs(mask: np.ndarray, bridge: int) -> list[tuple[int, int]]:
    """[start, end) runs of True, joining runs separated by <= ``bridge`` False cells."""
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(idx) > bridge + 1)
    return list(zip(np.r_[idx[0], idx[breaks + 1]].tolist(), (np.r_[idx[breaks], idx[-1]] + 1).tolist()))


def _horizontal_runs(box: np.ndarray, em: float) -> list[list[int]]:
    """Runs of consecutive characters stepping right on one line: wider than
    HORIZONTAL_MIN_EM, or narrower but with no other character within 1.5 em above or
    below them (a page number "12"; two digits set across inside a column stay in it)."""
    cx, cy = (box[:, 0] + box[:, 2]) / 2, (box[:, 1] + box[:, 3]) / 2
    step = (np.diff(cx) > 0) & (np.diff(cx) < 1.6 * em) & (np.abs(np.diff(cy)) < 0.35 * em)
    runs = []
    for a, b in _runs(step, 0):
        members = list(range(a, b + 1))
        x0, top, x1, bottom = box[members, 0].min(), box[members, 1].min(), box[members, 2].max(), box[members, 3].max()
        others = np.ones(len(box), dtype=bool)
        others[members] = False
        near = others & (box[:, 0] < x1) & (box[:, 2] > x0) & (box[:, 3] > top - 1.5 * em) & (box[:, 1] < bottom + 1.5 * em)
        if x1 - x0 >= HORIZONTAL_MIN_EM * em or not near.any():
            runs.append(members)
    return runs


def _tiers(box: np.ndarray, cells: np.ndarray, em: float) -> list[tuple[float, float]]:
    """y ranges of the bands of ink separated by more than TIER_GAP_EM of blank.

    Each character covers its cell along the column (the font's box, which leaves no gap
    between the characters of a column where the glyph box would: the blank under ︒ or
    around 一), cut to one em around its glyph (some fonts' cells are 1.4 em tall).
    """
    centre = (box[:, 1] + box[:, 3]) / 2
    y0 = np.maximum(np.minimum(cells[:, 1], box[:, 1]), centre - em / 2)
    y1 = np.minimum(np.maximum(cells[:, 3], box[:, 3]), centre + em / 2)
    cell = em / 8
    top = float(y0.min())
    covered = np.zeros(int((y1.max() - top) / cell) + 2, dtype=bool)
    for t, b in zip(((y0 - top) / cell).astype(int), np.ceil((y1 - top) / cell).astype(int)):
        covered[t:max(b, t + 1)] = True
    return [(top + a * cell, top + b * cell) for a, b in _runs(covered, int(TIER_GAP_EM * 8))]


def _columns(members: np.ndarray, box: np.ndarray, cells: np.ndarray, em: float) -> list[np.ndarray]:
    """Characters of one tier grouped into columns by the centres of their cells, right to
    left, each top to bottom."""
    cx = (cells[members, 0] + cells[members, 2]) / 2
    order = members[np.argsort(-cx, kind="stable")]
    split = np.flatnonzero(-np.diff(cx[np.argsort(-cx, kind="stable")]) > COLUMN_GAP_EM * em) + 1
    return [column[np.argsort(box[column, 1], kind="stable")] for column in np.split(order, split)]


def _text(column, idx: np.ndarray, chars: Chars) -> str:
    """A column's characters, with a space where the text layer had one between two of them.
    A hyphen PDFium took for a line-end break (its mark) stays for pipeline.extraction.hyphens
    to decide: inside the column as the mark, at its end (a word going on in the next column) as
    the "-" it was."""
    def marked(between: str) -> bool:
        return any(mark in between for mark in PDFIUM_MARKS)

    out = []
    for i, k in enumerate(column):
        between = chars.text[idx[column[i - 1]] + 1:idx[k]] if i else ""
        if marked(between):
            out.append(MARK)
        elif " " in between:
            out.append(" ")
        out.append(chars.span_text(idx[k], idx[k] + 1))
    last = column[-1]
    if last + 1 < len(idx) and marked(chars.text[idx[last] + 1:idx[last + 1]]):
        out.append("-")
    return "".join(out).replace("\x00", "").translate(VERTICAL_FORMS)  # U+0000: a glyph with no Unicode value


def _bbox(b: np.ndarray) -> tuple[float, float, float, float]:
    return (float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()), float(b[:, 3].max()))


def vertical_blocks(chars: Chars) -> list[Block]:
    """Paragraph blocks of a vertical layer in reading order (module docstring)."""
    idx = np.flatnonzero(chars.ink)
    box, cells = chars.char_boxes(idx), chars.char_boxes(idx, loose=True)
    if not len(box):
        return []
    em = float(np.median(np.maximum(box[:, 2] - box[:, 0], box[:, 3] - box[:, 1]))) or 1.0
    horizontal = _horizontal_runs(box, em)
    upright = np.ones(len(box), dtype=bool)
    for run in horizontal:
        upright[run] = False
    vertical = np.flatnonzero(upright)
    tiers = _tiers(box[vertical], cells[vertical], em) if vertical.size else []

    def band(b: np.ndarray) -> float:
        """The top of the tier an item lies in, or its own top outside every tier."""
        centre = float(b[:, 1].min() + b[:, 3].max()) / 2
        return next((t0 for t0, t1 in tiers if t0 <= centre <= t1), float(b[:, 1].min()))

    # items: (band, -x of the right edge, text, boxes, direction, starts a paragraph)
    items: list[tuple[float, float, str, np.ndarray, str, bool]] = []
    for run in horizontal:
        b = box[run]
        items.append((band(b), -float(b[:, 2].max()), _text(run, idx, chars), b, "horizontal", True))
    centre = (box[:, 1] + box[:, 3]) / 2
    for t0, t1 in tiers:
        members = vertical[(centre[vertical] >= t0) & (centre[vertical] <= t1)]
        if not members.size:
            continue
        columns = _columns(members, box, cells, em)
        start = min(float(box[c, 1].min()) for c in columns)
        end = max(float(box[c, 3].max()) for c in columns)
        previous_short = True
        for column in columns:
            b = box[column]
            indented = b[:, 1].min() - start > INDENT_EM * em
            items.append((t0, -float(b[:, 2].max()), _text(column, idx, chars), b, "vertical",
                          previous_short or indented))
            previous_short = b[:, 3].max() < start + SHORT_COLUMN * (end - start)
    items.sort(key=lambda item: (item[0], item[1]))
    blocks: list[Block] = []
    texts: list[str] = []
    boxes: list[np.ndarray] = []
    direction = ""

    def flush() -> None:
        if texts and "".join(texts).strip():
            blocks.append(Block(text="\n".join(texts), bbox=_bbox(np.vstack(boxes)), direction=direction,  # type: ignore[arg-type]
                                method="text_layer"))
        texts.clear()
        boxes.clear()

    for _, _, text, b, item_direction, new_paragraph in items:
        if new_paragraph or item_direction != direction:
            flush()
            direction = item_direction
        texts.append(text.strip())
        boxes.append(b)
    flush()
    return blocks
