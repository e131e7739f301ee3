"""Scan damage removed before layout: uneven paper, impulse noise, bleed-through and
specks, each judged against the page's own ink, so that no layout step and no reader sees
them.

- Uneven paper (a shadow, a gradient, the page behind showing through): the page is
  divided by its paper tone, estimated by a max filter wider than a glyph stroke on a
  quarter-size copy (ink is dark, so the widest light value around a point is paper).
  Only when the tone varies (PAPER_SPREAD): a clean page is left as it is.
- Impulse noise (salt-and-pepper): a 3x3 median, only when many single pixels differ
  sharply from all their neighbours (IMPULSE_SHARE); strokes at 150-300 dpi are wider
  than 1 px.
- Bleed-through (the back of the sheet showing through as light strokes): ink is judged
  from its darkest pixels, so a light stroke that holds none (none of its pixels
  BLEED_DARK of the way from paper to the page's ink) is the back of the page and is
  painted white, together with light pixels further than BLEED_HALO from dark ink. Only on
  pages where such strokes are many (BLEED_SHARE of the dark ink): a blurred page's
  strokes keep dark cores and their halos. A light-grey watermark across a scanned page
  goes the same way, as a text layer's does (pipeline.extraction.watermarks tells it by
  its colour).
- Rulings and scan borders (a form's table rules, underlines, the dark edge of a
  photographed page): straight ink at least RULING_EM glyphs long, across or down, is
  painted white. A vertical rule runs through the gaps between lines and a border through
  every row and column, so that no line (or column) of the page's layout could be told
  from the next: a scanned German form with a ruled table read as "—", a photographed
  Senate document of 1871 as nothing. No stroke of a glyph is that long. So does a long thin
  stroke at a slant (a voided form crossed out corner to corner: ``slanted_rules``).
- Specks (dust, toner, clusters of them): ink components smaller than GLYPH_EM of the
  page's glyph size (the median height of its components) that stand apart from every
  larger component (further than NEAR_TEXT_EM of a glyph) are painted white. Dots that
  belong to text (periods, i-dots, umlauts, 、。) sit next to a glyph and stay, and so
  do all dots of at least DOT_PX (bigger than 1-3 px dust): the far comma of a German
  „, a period under a closing quote, the ticks of an upright ＂ in a column. A page
  left without glyph-sized ink holds no text (``clean_page`` returns None).
"""

from __future__ import annotations

import cv2
import numpy as np

from pipeline.ocr.geometry import binarise

PAPER_SPREAD = 24  # gray levels between the 5th and 95th percentile of the paper tone
IMPULSE_SHARE = 0.0005  # of the page's pixels: salt-and-pepper at 0.2 % gives 0.1 %
GLYPH_EM = 0.5  # a component at least this tall or wide is (the body of) a glyph
DOT_PX = 4  # punctuation and diacritics at 300 dpi are at least this big; dust (1-3 px) is smaller
NEAR_TEXT_EM = 0.5  # a comma after a letter at 10 pt sits 0.33 glyph away
MIN_GLYPH_PX = 8  # median component height: smaller is no text at the 300 dpi OCR renders at
MIN_GLYPHS = 3  # fewer glyph-sized components than this: no text on the page
INK_PERCENTILE = 0.5  # the page's ink tone: its darkest half percent (text covers 5-15 %)
MIN_CONTRAST = 64  # gray levels from that ink to paper: less, and there is no dark ink to judge by
BLEED_DARK = 0.5  # of the contrast from paper to ink: a stroke with no pixel this dark is light
BLEED_LIGHT = 0.15  # of that contrast: lighter than this is paper (mild bleed-through stays)
BLEED_MIN_PX = 20  # light strokes smaller than this are left (JPEG ringing, grain)
BLEED_SHARE = 0.1  # light strokes' area against the dark ink's: 0.2-0.6 with moderate
# bleed-through on the tuning pages, at most 0.04 with blur, 0 with any other damage
BLEED_HALO = 2  # px around dark ink that stay: antialiasing and blur of the stroke itself
RULING_EM = 5  # glyph heights; the rows of the scanned form's table (docs) are 7 apart
RULING_DRIFT = 1  # px a rule may step sideways within RULING_EM (a scan skewed by 0.5 deg)
SLANT_EM = 10  # glyph heights: straight ink this long at a slant is a cross-out or a slash
SLANT_MIN_DEGREES = 5  # from either axis; nearer is a rule of a skewed scan, found across and down
SLANT_STROKE_EM = 0.4  # a slanted rule is thinner than this; a title letter's stroke is not
SLANT_COVER = 0.9  # of the points along it that lie on ink: a line of text at a slant has gaps
SLANT_REACH = 6  # px: how far the quarter-size copy's line may lie from the stroke at full size
SLANT_GAP = 8  # px a slanted stroke may break off (a faint scan) and go on


def flatten_paper(gray: np.ndarray) -> np.ndarray:
    """The page divided by its paper tone when that tone is uneven (see module doc)."""
    small = cv2.resize(gray, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    paper = cv2.dilate(small, np.ones((9, 9), np.uint8))  # 36 px at full size: wider than any stroke
    paper = cv2.blur(paper, (15, 15))
    low, high = np.percentile(paper, (5, 95))
    if high - low < PAPER_SPREAD:
        return gray
    paper = cv2.resize(paper, gray.shape[::-1], interpolation=cv2.INTER_LINEAR).astype(np.float32)
    return np.clip(gray.astype(np.float32) * (255.0 / np.maximum(paper, 1.0)), 0, 255).astype(np.uint8)


def clear_bleed_through(gray: np.ndarray) -> np.ndarray:
    """The page without light strokes that hold no dark ink (see module doc), when many."""
    ink = float(np.percentile(gray, INK_PERCENTILE))
    contrast = 255.0 - ink
    if contrast < MIN_CONTRAST:
        return gray
    dark = gray < ink + BLEED_DARK * contrast
    light = (gray < 255.0 - BLEED_LIGHT * contrast).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(light, connectivity=8)
    with_dark = np.zeros(count, bool)
    with_dark[np.unique(labels[dark])] = True
    area = stats[:, cv2.CC_STAT_AREA]
    stray = ~with_dark & (area >= BLEED_MIN_PX)
    stray[0] = False
    if area[stray].sum() < BLEED_SHARE * np.count_nonzero(dark):
        return gray
    halo = cv2.dilate(dark.astype(np.uint8), np.ones((2 * BLEED_HALO + 1,) * 2, np.uint8))
    page = gray.copy()
    page[stray[labels] | ((light > 0) & (halo == 0))] = 255
    return page


def clear_rulings(gray: np.ndarray) -> np.ndarray:
    """The page without straight ink of RULING_EM glyphs or more, across or down (see
    module doc); before bleed-through is judged, whose share of the dark ink a wide dark
    border would swamp."""
    ink = binarise(gray)
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    em = glyph_size(stats)
    if em < MIN_GLYPH_PX:
        return gray
    length, drift = int(RULING_EM * em), 2 * RULING_DRIFT + 1
    straight = np.zeros_like(ink)
    # No ink is straight for longer than the page, and OpenCV's opening costs the kernel's length
    # a pixel: a 30 x 42 inch page holding one frame (its "glyph" 8,172 px tall) took 73 s.
    if length <= ink.shape[1]:
        across = cv2.dilate(ink, np.ones((drift, 1), np.uint8))
        straight |= cv2.morphologyEx(across, cv2.MORPH_OPEN, np.ones((1, length), np.uint8))
    if length <= ink.shape[0]:
        down = cv2.dilate(ink, np.ones((1, drift), np.uint8))
        straight |= cv2.morphologyEx(down, cv2.MORPH_OPEN, np.ones((length, 1), np.uint8))
    rulings = ink & straight
    if length <= max(ink.shape):
        rulings |= slanted_rules(ink, em)
    if not rulings.any():
        return gray
    page = gray.copy()
    page[cv2.dilate(rulings, np.ones((3, 3), np.uint8)) > 0] = 255  # and their antialiased edges
    return page


def slanted_rules(ink: np.ndarray, em: float) -> np.ndarray:
    """The ink of straight strokes at a slant, SLANT_EM glyphs long or more and thinner than
    SLANT_STROKE_EM of a glyph: a cross over a voided page, a slash through a table's cell. Such
    a stroke joins every line it passes into one blob for the layout (a typed form crossed out
    corner to corner, pymupdf's test_3863.pdf: 48 letters and digits of its first page read,
    1,262 without the cross). Candidates come from a probabilistic Hough transform on a
    quarter-size copy (40 ms a page where the full size takes 0.6 s); each is fitted at full size
    to the ink crossing it every few px, and kept where that line runs on unbroken ink (a line of
    text at a slant does not) and the stroke is thin."""
    length = SLANT_EM * em
    small = (cv2.resize(ink, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA) > 63).astype(np.uint8)
    found = cv2.HoughLinesP(small, 1, np.pi / 360, threshold=int(length / 8), minLineLength=length / 4,
                            maxLineGap=2)
    rules = np.zeros_like(ink)
    if found is None:
        return rules
    near_ink = cv2.dilate(ink, np.ones((3, 3), np.uint8)) > 0
    for x0, y0, x1, y1 in found.reshape(-1, 4).astype(np.float64) * 4:
        if not SLANT_MIN_DEGREES < np.degrees(np.arctan2(abs(y1 - y0), abs(x1 - x0))) < 90 - SLANT_MIN_DEGREES:
            continue
        stroke = _fitted_stroke(ink, np.array([x0, y0]), np.array([x1, y1]), em)
        if stroke is None:
            continue
        start, end, width = stroke
        start, end = _traced(near_ink, start, end), _traced(near_ink, end, start)
        steps = np.linspace(0.0, 1.0, max(2, int(np.hypot(*(end - start)) / 2)))[:, None]
        xs, ys = np.rint(start + steps * (end - start)).astype(int).T
        inside = (xs >= 0) & (xs < ink.shape[1]) & (ys >= 0) & (ys < ink.shape[0])
        if inside.mean() < SLANT_COVER or near_ink[ys[inside], xs[inside]].mean() < SLANT_COVER:
            continue
        cv2.line(rules, tuple(np.rint(start).astype(int)), tuple(np.rint(end).astype(int)), 255,
                 thickness=int(width) + 3)
    return ink & rules


def _fitted_stroke(ink: np.ndarray, start: np.ndarray, end: np.ndarray,
                   em: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The line through the ink met crossing the segment ``start``-``end`` every 8 px (within
    SLANT_REACH px of it), with the segment's ends moved onto it, and the stroke's median width;
    None where no ink is met at most of those places, or the stroke is a glyph's (thick)."""
    direction = (end - start) / np.hypot(*(end - start))
    normal = np.array([-direction[1], direction[0]])
    points, widths = [], []
    places = np.linspace(0.0, 1.0, max(5, int(np.hypot(*(end - start)) / 8)))
    for t in places:
        offset, width = _stroke_across(ink, start + t * (end - start), normal, em)
        if width:
            points.append(start + t * (end - start) + offset * normal)
            widths.append(width)
    if len(points) < SLANT_COVER * len(places) or not np.median(widths) < SLANT_STROKE_EM * em:
        return None
    vx, vy, cx, cy = cv2.fitLine(np.array(points, np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
    along, centre = np.array([vx, vy]), np.array([cx, cy])
    on_line = [centre + float((p - centre) @ along) * along for p in (start, end)]
    return on_line[0], on_line[1], float(np.median(widths))


def _traced(near_ink: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """``end`` moved on beyond itself, away from ``start``, as far as the ink along the line goes
    (gaps of SLANT_GAP px allowed): the transform finds a long stroke in pieces where text crowds it."""
    direction = (end - start) / np.hypot(*(end - start))
    h, w = near_ink.shape
    reached, missed, step = end, 0, 0
    while missed * 2 <= SLANT_GAP:
        step += 1
        x, y = np.rint(end + 2 * step * direction).astype(int)
        if not (0 <= x < w and 0 <= y < h):
            break
        if near_ink[y, x]:
            reached, missed = end + 2 * step * direction, 0
        else:
            missed += 1
    return reached


def _stroke_across(ink: np.ndarray, middle: np.ndarray, normal: np.ndarray, em: float) -> tuple[float, int]:
    """The run of ink met crossing ``middle`` along ``normal`` nearest to it (within SLANT_REACH
    px): its centre's offset from ``middle`` and its width in px; (0, 0) when there is none."""
    h, w = ink.shape
    reach = SLANT_REACH + int(em)
    steps = np.arange(-reach, reach + 1)
    xs = np.rint(middle[0] + steps * normal[0]).astype(int)
    ys = np.rint(middle[1] + steps * normal[1]).astype(int)
    inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    on = np.zeros(len(steps), bool)
    on[inside] = ink[ys[inside], xs[inside]] > 0
    near = np.flatnonzero(on & (np.abs(steps) <= SLANT_REACH))
    if not near.size:
        return 0.0, 0
    start = end = near[np.argmin(np.abs(steps[near]))]
    while start > 0 and on[start - 1]:
        start -= 1
    while end < len(on) - 1 and on[end + 1]:
        end += 1
    return float(steps[start] + steps[end]) / 2, int(end - start + 1)


def remove_impulses(gray: np.ndarray) -> np.ndarray:
    """A 3x3 median when many single pixels stand out from all eight neighbours (a dust
    speck of 2-3 px does not count: the median would shrink the dots of text for it)."""
    ring = np.ones((3, 3), np.uint8)
    ring[1, 1] = 0
    value = gray.astype(np.int16)
    impulses = np.count_nonzero(value + 100 < cv2.erode(gray, ring)) + \
        np.count_nonzero(value - 100 > cv2.dilate(gray, ring))
    return cv2.medianBlur(gray, 3) if impulses > IMPULSE_SHARE * gray.size else gray


def glyph_size(stats: np.ndarray) -> float:
    """Median height of the ink components that are not specks (>= 5 px tall)."""
    heights = stats[1:, cv2.CC_STAT_HEIGHT]
    heights = heights[heights >= 5]
    return float(np.median(heights)) if heights.size else 0.0


def clean_page(gray: np.ndarray) -> np.ndarray | None:
    """The page without uneven paper, impulse noise, rulings, bleed-through and stray
    specks; None when what is left holds no glyph-sized ink (a page of noise, or a blank
    page)."""
    page = clear_bleed_through(clear_rulings(remove_impulses(flatten_paper(gray))))
    ink = binarise(page)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    if count <= 1:
        return None
    em = glyph_size(stats)
    if em < MIN_GLYPH_PX:
        return None
    size = np.maximum(stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT])
    glyphs = size >= GLYPH_EM * em
    if np.count_nonzero(glyphs) < MIN_GLYPHS:
        return None
    small = np.flatnonzero(~glyphs) + 1
    if small.size == 0:
        return page

    def near(keep: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """Which candidates have a pixel of their box within reach of a kept component."""
        kernel = np.ones((2 * max(3, int(NEAR_TEXT_EM * em)) + 1,) * 2, np.uint8)
        table = cv2.integral(cv2.dilate(keep[labels], kernel))
        x0, y0 = stats[candidates, cv2.CC_STAT_LEFT], stats[candidates, cv2.CC_STAT_TOP]
        x1, y1 = x0 + stats[candidates, cv2.CC_STAT_WIDTH], y0 + stats[candidates, cv2.CC_STAT_HEIGHT]
        return table[y1, x1] - table[y0, x1] - table[y1, x0] + table[y0, x0] > 0

    kept = np.concatenate(([0], glyphs)).astype(np.uint8)
    kept[small[near(kept, small)]] = 1
    # dots (bigger than dust) stay wherever they are: lines need a glyph body to exist
    # (pipeline.ocr.layout), so a dot alone makes none
    kept[small[size[small - 1] >= DOT_PX]] = 1
    is_stray = kept == 0
    is_stray[0] = False
    if not is_stray.any():
        return page
    page = page.copy()
    page[is_stray[labels]] = 255
    return page
