"""Page geometry: where a page's visible area lies in the PDF's user space, which way it is
shown (its /Rotate), and which way its text stands (the quarter turn that stands most of its
glyphs upright). Text is laid out as it stands; boxes go out as the page is shown.
"""

from __future__ import annotations

import math
import sys
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Box = tuple[float, float, float, float]
GLYPH_SAMPLE = 64  # glyphs whose angle decides which way up a page's text is read
UPRIGHT_TOLERANCE_DEGREES = 10.0  # a glyph turned further than this from a quarter turn votes for none
RTL = ("R", "AL")  # bidirectional classes of letters written right to left
VERTICAL_WRITING_SHARE = 4  # one in this many sampled glyphs stepping down upright: a vertical CJK page


@dataclass(frozen=True)
class PageFrame:
    """Where a page's visible area, its CropBox (what PDFium renders and a reader sees), lies in
    the PDF's user space, in which PDFium places text, images and annotations, and which way up
    its text stands. A page cut from a two-page spread, a print page inside its bleed, or a
    MediaBox not at 0,0 place them away from the page's own origin, and what lies outside the
    CropBox is not seen: a spread's other half, a printer's slug, text a sender "removed" by
    cropping.

    Two turns of that area: ``rotation``, the page's /Rotate, is how it is shown (PDFium renders
    it so, pdfplumber and the OCR place their boxes so); ``turn`` is how the text is read, the
    quarter turn that stands most of its glyphs upright (a landscape table set sideways on a
    portrait page, a page drawn upside down). Text is laid out in the read frame (``top_left``),
    and its boxes go out in the shown one (``shown``). Both count from the turned area's top-left
    corner, clockwise as /Rotate does."""
    left: float
    bottom: float
    right: float
    top: float
    media: Box  # the MediaBox (left, bottom, right, top)
    rotation: int = 0
    turn: int = 0

    @classmethod
    def of(cls, page) -> PageFrame:
        """The page's CropBox within its MediaBox (a CropBox reaching past it shows no more), read
        as it is shown until its glyphs say otherwise (``pdf.page_chars``)."""
        media, crop = _normalized(page.get_mediabox()), _normalized(page.get_cropbox())
        shown = (max(crop[0], media[0]), max(crop[1], media[1]), min(crop[2], media[2]), min(crop[3], media[3]))
        rotation = page.get_rotation() % 360
        return cls(*shown, media, rotation, rotation)

    @property
    def area(self) -> Box:
        return (self.left, self.bottom, self.right, self.top)

    @property
    def reading_turn(self) -> int:
        """Degrees clockwise the page as shown is turned to read it (``Page.rotation``)."""
        return (self.turn - self.rotation) % 360

    def top_left(self, left: float, bottom: float, right: float, top: float) -> Box:
        """A user-space box (PDFium's left, bottom, right, top) in the read frame."""
        return _turned((left, bottom, right, top), self.area, self.turn)

    def shown(self, box: Box) -> Box:
        """A box of the read frame where the page as shown has it."""
        if self.turn == self.rotation:
            return box
        return _turned(_unturned(box, self.area, self.turn), self.area, self.rotation)

    def shows(self, left: float, bottom: float, right: float, top: float) -> bool:
        """Whether any of a user-space box lies in the visible area."""
        return right > self.left and left < self.right and top > self.bottom and bottom < self.top

    def clipped(self, left: float, bottom: float, right: float, top: float) -> Box:
        """The visible part of a user-space box, still in user space."""
        return (max(left, self.left), max(bottom, self.bottom), min(right, self.right), min(top, self.top))

    @property
    def hides(self) -> bool:
        """Whether part of the page's MediaBox lies outside what it shows."""
        left, bottom, right, top = self.media
        return (self.left > left + 0.5 or self.bottom > bottom + 0.5 or self.right < right - 0.5
                or self.top < top - 0.5)

    @property
    def plumber_area(self) -> Box:
        """The visible area as pdfplumber places boxes (x0, top, x1, bottom from the shown
        MediaBox's top-left corner)."""
        return _turned(self.area, self.media, self.rotation)

    def plumber_user(self, box: Box) -> Box:
        """A pdfplumber box (x0, top, x1, bottom from the shown MediaBox's top-left corner) in user
        space."""
        return _unturned(box, self.media, self.rotation)

    def from_plumber(self, box: Box) -> Box:
        """A pdfplumber box in the read frame."""
        return self.top_left(*self.plumber_user(box))


def _normalized(box: Sequence[float]) -> Box:
    """A PDF rectangle by its lower-left and upper-right corners (any two opposite corners may
    define one)."""
    return (min(box[0], box[2]), min(box[1], box[3]), max(box[0], box[2]), max(box[1], box[3]))


def _turned(box: Box, area: Box, turn: int) -> Box:
    """A user-space box (left, bottom, right, top) from the top-left corner of ``area`` turned
    ``turn`` degrees clockwise."""
    left, bottom, right, top = box
    area_left, area_bottom, area_right, area_top = area
    if turn == 90:
        return (bottom - area_bottom, left - area_left, top - area_bottom, right - area_left)
    if turn == 180:
        return (area_right - right, bottom - area_bottom, area_right - left, top - area_bottom)
    if turn == 270:
        return (area_top - top, area_right - right, area_top - bottom, area_right - left)
    return (left - area_left, area_top - top, right - area_left, area_top - bottom)


def _unturned(box: Box, area: Box, turn: int) -> Box:
    """The user-space box (left, bottom, right, top) of a box in ``area`` turned ``turn``
    degrees clockwise (x0, top, x1, bottom from its top-left corner): ``_turned`` undone."""
    x0, y0, x1, y1 = box
    area_left, area_bottom, area_right, area_top = area
    if turn == 90:
        return (area_left + y0, area_bottom + x0, area_left + y1, area_bottom + x1)
    if turn == 180:
        return (area_right - x1, area_bottom + y0, area_right - x0, area_bottom + y1)
    if turn == 270:
        return (area_right - y1, area_top - x1, area_right - y0, area_top - x0)
    return (area_left + x0, area_top - y1, area_left + x1, area_top - y0)


def upright_turn(textpage, shown: int) -> int:
    """The quarter turn (degrees clockwise) of user space that stands most of the page's glyphs
    upright, from a sample of them; ``shown`` (the page's /Rotate) where no turn holds most
    (glyphs drawn diagonally, a watermark's, vote for none)."""
    import pypdfium2.raw as pdfium_c

    def letter(index: int) -> str:
        code = pdfium_c.FPDFText_GetUnicode(textpage, index)
        return chr(code) if code <= sys.maxunicode else ""  # a broken ToUnicode map gives any 32-bit value

    def drawn(index: int) -> bool:
        char = letter(index)
        return char > " " and not char.isspace() and pdfium_c.FPDFText_IsGenerated(textpage, index) != 1

    n = textpage.count_chars()
    votes: Counter[int] = Counter()
    columns: Counter[int] = Counter()
    voters = 0
    for index in (int(k) for k in np.linspace(0, n - 1, min(n, GLYPH_SAMPLE)).astype(int)) if n else ():
        if not drawn(index):
            continue
        voters += 1
        degrees = math.degrees(pdfium_c.FPDFText_GetCharAngle(textpage, index)) % 360
        quarter = round(degrees / 90) % 4
        if abs((degrees - quarter * 90 + 180) % 360 - 180) > UPRIGHT_TOLERANCE_DEGREES:
            continue
        turn = -quarter * 90 % 360  # PDFium's angle runs the other way from /Rotate
        step = _step(textpage, index) if index + 1 < n and drawn(index + 1) else None
        if step is not None and unicodedata.bidirectional(letter(index)) in RTL:
            step = (step + 180) % 360  # Arabic and Hebrew step left along their baseline
        if step == (turn + 180) % 360:
            # the text runs against its glyphs' baseline: glyphs flipped in their font (a Type 3
            # font's matrix, which PDFium's angle leaves out) drawn turned back upright
            turn = (turn + 180) % 360
        elif step == (turn + 270) % 360:
            columns[turn] += 1  # upright glyphs stepping down: CJK written vertically
        votes[turn] += 1
    # a vertical CJK page sets its Latin runs sideways, a quarter turn from its own glyphs (as
    # many as those on a page of code): its columns decide
    column_turn, column_count = columns.most_common(1)[0] if columns else (shown, 0)
    if column_count * VERTICAL_WRITING_SHARE >= voters > 0:
        return column_turn
    turn, count = votes.most_common(1)[0] if votes else (shown, 0)
    return turn if 2 * count > voters else shown


def _step(textpage, index: int) -> int | None:
    """Which way (degrees counter-clockwise, a quarter turn) the text steps from the glyph at
    ``index`` to the next, or None where it steps aslant or not at all."""
    left, bottom, right, top = textpage.get_charbox(index)
    next_left, next_bottom, next_right, next_top = textpage.get_charbox(index + 1)
    dx = (next_left + next_right - left - right) / 2
    dy = (next_bottom + next_top - bottom - top) / 2
    if abs(dx) > 2 * abs(dy):
        return 0 if dx > 0 else 180
    if abs(dy) > 2 * abs(dx):
        return 90 if dy > 0 else 270
    return None
