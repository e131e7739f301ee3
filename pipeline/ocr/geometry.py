"""Page geometry for OCR: ink, rotation, writing direction, skew, and regions written
the other way.

- ``detect_direction``: rows vs columns of text, by OpenCV closing along x vs along y
  (Tesseract OSD cannot tell vertical from horizontal writing).
- ``deskew``: the angle (within +-MAX_SKEW_DEG) that makes the ink's row or column
  profile sharpest.
- ``islands``: regions written the other way from the page (a horizontal heading over
  vertical text), which are laid out and read on their own, in their direction.
- ``rotate90`` and ``unrotate_box``: turning a page by quarter turns, and mapping boxes on
  the turned page back to the page as given.

``Line`` is the unit the layout step finds and the readers read: a text line
(horizontal) or column (vertical) as a box on the oriented page.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from pipeline.contracts import Direction

MAX_SKEW_DEG = 3.5  # scans arrive up to +-3 deg off (the degradation suite's severe skew)
# A region of a page is read in the other direction only when closing along that
# direction leaves fewer than this share of the blobs closing along the page's does,
# and it holds at least this many glyph blobs (see islands).
REGION_DECISIVE = 0.5
REGION_MIN_GLYPHS = 5
GLYPH_BODY = 0.5  # of the glyph size (median component height): see glyph_bodies


@dataclass(frozen=True)
class Line:
    """A text line (horizontal) or column (vertical) found by the layout step."""

    box: tuple[int, int, int, int]  # x0, top, x1, bottom in pixels of the oriented page
    frame: int  # index of its text column / tier, in reading order
    starts_paragraph: bool


def binarise(gray: np.ndarray) -> np.ndarray:
    _, ink = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    return ink


def glyph_bodies(ink: np.ndarray, glyph: float) -> np.ndarray:
    """The ink of components at least GLYPH_BODY of the glyph size tall or wide: what the
    direction and the lines are judged on, without dots, specks and punctuation."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    size = np.maximum(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT])
    keep = (size >= GLYPH_BODY * glyph).astype(np.uint8) * 255
    keep[0] = 0
    return keep[labels]


def rotate90(image: np.ndarray, degrees: int) -> np.ndarray:
    """Turn clockwise by a multiple of 90 degrees (lossless)."""
    return np.ascontiguousarray(np.rot90(image, k=-(degrees // 90) % 4))


def unrotate_box(box: tuple[float, float, float, float], degrees: int, shape: tuple[int, int]) -> tuple[float, ...]:
    """Map a box on the page turned clockwise by ``degrees`` back to the input page.

    ``shape`` is (height, width) of the input page.
    """
    x0, y0, x1, y1 = box
    h, w = shape
    if degrees == 90:  # turned: (x, y) -> (h - y, x)
        return (y0, h - x1, y1, h - x0)
    if degrees == 180:
        return (w - x1, h - y1, w - x0, h - y0)
    if degrees == 270:  # turned: (x, y) -> (y, w - x)
        return (w - y1, x0, w - y0, x1)
    return (x0, y0, x1, y1)


def _axis_blobs(ink: np.ndarray, glyph: int | None = None) -> tuple[int, int]:
    """Blobs left after closing glyph gaps along x, and along y (see detect_direction);
    ``glyph``: the glyph size, by default the median height of the ink's components."""
    if glyph is None:
        count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
        sizes = stats[1:, cv2.CC_STAT_HEIGHT] if count > 1 else np.array([20])
        glyph = int(max(4, np.median(sizes)))
    gap = max(3, glyph // 2)
    horizontal = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (gap, 1)))
    vertical = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (1, gap)))
    return cv2.connectedComponents(horizontal, connectivity=8)[0], cv2.connectedComponents(vertical, connectivity=8)[0]


def detect_direction(gray: np.ndarray) -> Direction:
    """Rows (horizontal) or columns (vertical) of text, by how glyphs merge when gaps close.

    Closing small gaps along the writing direction merges a line's glyphs into one
    blob; closing across it merges little. So the direction whose closing leaves fewer
    blobs is the writing direction.
    """
    ink = binarise(gray)
    if cv2.countNonZero(ink) == 0:
        return "horizontal"
    # on glyph bodies: specks left beside text are blobs both ways and blur the vote
    # (a dusty vertical Japanese page had been taken for horizontal: 96 % CER)
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    heights = stats[1:, cv2.CC_STAT_HEIGHT]
    heights = heights[heights >= 5]
    if heights.size:
        ink = glyph_bodies(ink, float(np.median(heights)))
    n_h, n_v = _axis_blobs(ink)
    return "vertical" if n_v < n_h * 0.8 else "horizontal"


def other_direction(direction: Direction) -> Direction:
    return "horizontal" if direction == "vertical" else "vertical"


def islands(page: np.ndarray, direction: Direction, lines: list[Line]) -> list[tuple[int, int, int, int]]:
    """Text regions written the other way from the page (a horizontal heading over
    vertical text, a vertical column beside horizontal text), as boxes on the page.

    Regions are the blobs left when ink is dilated by 1.5 em (an em: the median
    thickness of the page's ``lines``): the glyphs of a line and the lines of a
    paragraph merge (their gaps are under an em, a little more after 、), separate
    blocks do not (tiers, gutters and headings stand >= 2 em apart). A region is an
    island only when its own blob count says so clearly (REGION_DECISIVE) and it has
    enough glyphs to judge (REGION_MIN_GLYPHS): a page number or a two-character label
    keeps the page's direction.
    """
    ink = cv2.morphologyEx(binarise(page), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    if cv2.countNonZero(ink) == 0 or not lines:
        return []
    axis = 3 if direction == "horizontal" else 2
    em = max(4, int(np.median([l.box[axis] - l.box[axis - 2] for l in lines])))
    reach = em * 3 // 2
    count, _, stats, _ = cv2.connectedComponentsWithStats(cv2.dilate(ink, np.ones((reach, reach), np.uint8)))
    if count <= 2:  # one region: the page itself
        return []
    found = []
    for x, y, w, h, _ in stats[1:]:
        region = ink[y:y + h, x:x + w]
        n_h, n_v = _axis_blobs(region, em)
        if max(n_h, n_v) < REGION_MIN_GLYPHS:
            continue
        votes = (n_v / n_h) if direction == "horizontal" else (n_h / n_v)
        if votes < REGION_DECISIVE:
            found.append((int(x), int(y), int(x + w), int(y + h)))
    return found


def deskew(gray: np.ndarray, direction: Direction) -> np.ndarray:
    """Rotate by the small angle that makes the line profile sharpest (scan skew)."""
    ink = binarise(cv2.resize(gray, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA))
    axis = 1 if direction == "horizontal" else 0
    centre = (ink.shape[1] / 2, ink.shape[0] / 2)

    def sharpness(angle: float) -> float:
        turned = cv2.warpAffine(ink, cv2.getRotationMatrix2D(centre, angle, 1.0), ink.shape[::-1])
        return float(np.var(turned.sum(axis=axis, dtype=np.float64)))

    # coarse to fine: a line's profile stays sharp within ~1 deg of its angle
    coarse = np.arange(-MAX_SKEW_DEG, MAX_SKEW_DEG + 1e-6, 0.5)
    middle = float(coarse[int(np.argmax([sharpness(a) for a in coarse]))])
    fine = np.arange(middle - 0.4, middle + 0.4 + 1e-6, 0.1)
    best = float(fine[int(np.argmax([sharpness(a) for a in fine]))])
    if abs(best) < 0.05:
        return gray
    h, w = gray.shape
    matrix = cv2.getRotationMatrix2D((w / 2, h / 2), best, 1.0)
    return cv2.warpAffine(gray, matrix, (w, h), flags=cv2.INTER_LINEAR, borderValue=255)
