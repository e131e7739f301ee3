"""Layout of a page by projection profiles: text frames, lines (or columns) in reading
order, paragraph starts, and the crops the recogniser reads.

Horizontal pages split into text columns at blank gutters, then into lines; vertical
pages split into tiers at blank bands (two-tier 段組 pages), then into columns read right
to left. Lines become paragraph blocks at indents and short last lines.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipeline.contracts import Direction
from pipeline.ocr.geometry import Line, binarise, glyph_bodies
from pipeline.ocr.noise import glyph_size

# A row (column) of pixels with less ink than this share of a typical text row does not
# join two frames: see _frames.
FRAME_SPARSE = 0.1
# White margin around a line (column) crop for the recogniser, as a share of the line's
# thickness. The recogniser scales every crop to 48 px high, so a wider margin means
# smaller glyphs and fewer pixels along the line: 0.35 (from a fixed 6 px, ~0.13 of a
# 10-18 pt line) cut its CPU time by a fifth on the 28 benchmark pages at a slightly
# lower mean CER (0.65 -> 0.57 %), and left 14 tuning pages from other paragraphs at
# the same mean CER (1.41 -> 1.40 %); 0.5 cost Latin pages accuracy (0.1 -> 0.4 %).
CROP_PAD = 0.35
# A line (column) holds at least one glyph body (geometry.glyph_bodies) and runs from its
# first to its last body, so that dots and specks beside a line (left near text by
# pipeline.ocr.noise) neither make lines of their own nor stretch a line along its
# length; punctuation within PUNCT_REACH (of the glyph size, or of the line's thickness where
# that is more: a 。 centred in its cell) past a line's last glyph
# joins it again (。」.” at a line end, and chains of it: ...).
PUNCT_REACH = 0.6
# Blank bands at least SECTION_GAP glyphs high cut a horizontal page into parts with their
# own text columns (see _sections), when a part with more columns than the page is at least
# SECTION_MIN glyphs high (three lines or more) and its columns as wide: the gaps of a
# display formula (6.4 glyphs high on the formula fixture), a form's "Name ... Date" line or
# the dust left in a margin are no columns.
SECTION_GAP = 1.0
SECTION_MIN = 8.0
# A run of ink across the lines wider than this many times the median one is split where
# its glyph bodies leave a gap (see _split_wide).
WIDE_RUN = 1.6
# A run thicker than TALL_RUN glyphs holds more than one line when its ink count dips
# under LINE_SPARSE of its median row between parts at least a glyph thick (see
# _split_sparse): where one line's descenders meet the next one's ascenders, 8-14 % of the
# median on a paragraph set solid, 1-3 % on the 1871 Senate document.
TALL_RUN = 2.5
LINE_SPARSE = 0.2


def _runs(profile: np.ndarray, min_gap: int) -> list[tuple[int, int]]:
    """Runs of True in a 1-D profile, bridging gaps shorter than ``min_gap``."""
    idx = np.flatnonzero(profile)
    if idx.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(idx) > min_gap)
    starts = np.concatenate(([idx[0]], idx[breaks + 1]))
    ends = np.concatenate((idx[breaks], [idx[-1]])) + 1
    return list(zip(starts.tolist(), ends.tolist()))


def _merge_thin(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Fold slivers (accents, dots, dust) into the nearest real run."""
    if not runs:
        return runs
    typical = float(np.median([b - a for a, b in runs]))
    real = [r for r in runs if r[1] - r[0] >= 0.4 * typical]
    out = [list(r) for r in real]
    for a, b in runs:
        if b - a >= 0.4 * typical or not out:
            continue
        nearest = min(out, key=lambda r: min(abs(a - r[1]), abs(r[0] - b)))
        if min(abs(a - nearest[1]), abs(nearest[0] - b)) < 0.6 * typical:
            nearest[0], nearest[1] = min(nearest[0], a), max(nearest[1], b)
    return [tuple(r) for r in out]  # type: ignore[misc]


def _split_wide(runs: list[tuple[int, int]], bodies: np.ndarray) -> list[tuple[int, int]]:
    """Runs more than WIDE_RUN times the median run apart where their glyph bodies are:
    specks and dots left in the gutter between two columns (or lines) joined them into
    one run, read as nothing (a dusty zh-cn tuning page lost two columns: 13 % CER)."""
    if len(runs) < 3:
        return runs
    typical = float(np.median([b - a for a, b in runs]))
    out: list[tuple[int, int]] = []
    for a, b in runs:
        parts = _runs(bodies[a:b], 2) if b - a > WIDE_RUN * typical else []
        if len(parts) < 2:
            out.append((a, b))
            continue
        cuts = [a] + [a + (p1 + q0) // 2 for (_, p1), (q0, _) in zip(parts, parts[1:])] + [b]
        out += list(zip(cuts, cuts[1:]))
    return out


def _split_sparse(runs: list[tuple[int, int]], profile: np.ndarray, glyph: float) -> list[tuple[int, int]]:
    """Runs still thicker than TALL_RUN glyphs after ``_split_wide`` (their glyph bodies do
    not part) cut in the middle of each stretch with under LINE_SPARSE of their median ink:
    in a paragraph set solid one line's descenders reach the rows of the next one's
    ascenders, and across a 2,000 px column no row is empty, so the whole paragraph came
    out as one run the recogniser reads as nothing (a photographed Senate document of 1871:
    12 of 19 blocks lost)."""
    out: list[tuple[int, int]] = []
    for a, b in runs:
        if b - a <= TALL_RUN * glyph:
            out.append((a, b))
            continue
        counts = profile[a:b]
        sparse = counts < LINE_SPARSE * float(np.median(counts[counts > 0]))
        cuts = [a]
        for s, e in _runs(sparse, 1):
            cut = a + (s + e) // 2
            if cut - cuts[-1] >= glyph and b - cut >= glyph:  # not a heading's descenders
                cuts.append(cut)
        out += list(zip(cuts, cuts[1:] + [b]))
    return out


def _glyph_size(ink: np.ndarray) -> float:
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    return glyph_size(stats) or 20.0  # 20: a page of specks only


def _reach_out(inked: np.ndarray, first: int, last: int, reach: int) -> tuple[int, int]:
    """From the first and last glyph body out to ink that follows in steps of at most
    ``reach`` (a chain of dots: "..." past a column's last glyph)."""
    for position in inked[inked > last]:
        if position - last > reach:
            break
        last = int(position)
    for position in inked[inked < first][::-1]:
        if first - position > reach:
            break
        first = int(position)
    return first, last


def _frames(profile: np.ndarray, breadth: int, glyph: float) -> list[tuple[int, int]]:
    """Text frames (tiers of a vertical page, text columns of a horizontal one) along
    the frame axis, from the ink count per row (or column) of pixels.

    Frames are separated by a band of >= 2 glyphs without text. A band that holds only
    sparse ink (< FRAME_SPARSE of a typical row: the punctuation hanging past a tier's
    last character, a ragged line end) still separates two dense frames; that ink
    belongs to the frame before it, because text runs from a frame's start edge, which
    is aligned, to its end edge, which is ragged or overhung.
    """
    min_count = max(4, int(0.003 * breadth))
    frames = _runs(profile >= min_count, int(2 * glyph))
    inked = profile[profile >= min_count]
    if not frames or inked.size == 0:
        return frames
    dense = profile >= max(min_count, FRAME_SPARSE * float(np.median(inked)))
    out: list[tuple[int, int]] = []
    for f0, f1 in frames:
        cores = _runs(dense[f0:f1], int(2 * glyph))
        starts = [f0] + [f0 + a for a, _ in cores[1:]]
        out += list(zip(starts, starts[1:] + [f1]))
    return out


Section = tuple[int, int, list[tuple[int, int]]]  # rows from, to; its frames (text columns)


def _sections(ink: np.ndarray, frames: list[tuple[int, int]], glyph: float) -> list[Section]:
    """A horizontal page cut across at blank bands of SECTION_GAP glyphs or more, each part
    with its own text columns, where some part of SECTION_MIN glyphs or more has more
    columns than the whole page: a title or an introduction across the page over two
    columns leaves no gutter from top to bottom, and the columns were read across, line by
    line (OCRmyPDF's scanned brochure). Neighbouring parts with the same columns are one
    part (a gap that happens to cross both columns must not make the reader go back and
    forth). Otherwise the page as a whole, [(0, height, frames)]."""
    height, width = ink.shape
    whole = [(0, height, frames)]
    rows = ink.sum(axis=1) // 255
    parts = _runs(rows >= max(4, int(0.003 * width)), int(SECTION_GAP * glyph))
    if len(parts) < 2:
        return whole
    sections: list[Section] = []
    for r0, r1 in parts:  # a part's columns need as much ink as the page's (dust is no column)
        columns = _frames(ink[r0:r1].sum(axis=0) // 255, height, glyph)
        if sections and _same_columns(sections[-1][2], columns):
            r0 = sections.pop()[0]
            columns = _frames(ink[r0:r1].sum(axis=0) // 255, height, glyph)
        sections.append((r0, r1, columns))
    wide = [[c for c in columns if c[1] - c[0] >= SECTION_MIN * glyph] for _, _, columns in sections]
    return sections if any(len(w) > len(frames) and r1 - r0 >= SECTION_MIN * glyph
                           for (r0, r1, _), w in zip(sections, wide)) else whole


def _same_columns(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> bool:
    return len(a) == len(b) and all(a0 < b1 and b0 < a1 for (a0, a1), (b0, b1) in zip(a, b))


def layout(gray: np.ndarray, direction: Direction) -> list[Line]:
    """Lines (or columns) in reading order, grouped into frames, with paragraph starts."""
    ink = binarise(gray)
    ink = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))  # scanner dust
    if cv2.countNonZero(ink) == 0:
        return []
    glyph = _glyph_size(ink)
    # Frame axis: horizontal pages split into text columns (across x), vertical pages
    # into tiers (across y); lines then stack across the other axis.
    frame_axis = 1 if direction == "horizontal" else 0
    frames = _frames(ink.sum(axis=1 - frame_axis) // 255, ink.shape[1 - frame_axis], glyph)
    sections = _sections(ink, frames, glyph) if direction == "horizontal" else [(0, ink.shape[0], frames)]
    bodies = glyph_bodies(ink, glyph)
    reach = int(PUNCT_REACH * glyph)
    lines: list[Line] = []
    placed = [(r0, r1, f0, f1) for r0, r1, section_frames in sections for f0, f1 in section_frames]
    for f_index, (r0, r1, f0, f1) in enumerate(placed):
        band = ink[r0:r1, f0:f1] if frame_axis == 1 else ink[f0:f1, :]
        body_band = bodies[r0:r1, f0:f1] if frame_axis == 1 else bodies[f0:f1, :]
        profile = band.sum(axis=frame_axis) // 255
        runs = _split_sparse(_split_wide(_merge_thin(_runs(profile >= 2, 2)), body_band.sum(axis=frame_axis) > 0),
                             profile, glyph)
        if direction == "vertical":
            runs = runs[::-1]  # columns right to left
        boxes = []
        for a, b in runs:
            strip = band[a:b, :] if frame_axis == 1 else band[:, a:b]
            body_strip = body_band[a:b, :] if frame_axis == 1 else body_band[:, a:b]
            along = np.flatnonzero(body_strip.sum(axis=1 - frame_axis))
            if along.size == 0:
                continue
            # from the first to the last glyph, and the punctuation just past them
            # and of the line's thickness (its em): a 。 centred in its own cell (traditional
            # Chinese, across and down) starts 0.3-0.4 em past the glyph before it, beyond
            # 0.6 of the median component (a part of a Han glyph)
            span = max(reach, int(PUNCT_REACH * (b - a)))
            s, e = _reach_out(np.flatnonzero(strip.sum(axis=1 - frame_axis)), int(along[0]), int(along[-1]), span)
            s, e = s + f0, e + 1 + f0
            boxes.append((s, a + r0, e, b + r0) if direction == "horizontal" else (a, s, b, e))
        if not boxes:
            continue
        start = min(b[0] if direction == "horizontal" else b[1] for b in boxes)
        end = max(b[2] if direction == "horizontal" else b[3] for b in boxes)
        em = float(np.median([(b[3] - b[1]) if direction == "horizontal" else (b[2] - b[0]) for b in boxes]))
        previous_short = True
        for box in boxes:
            s, e = (box[0], box[2]) if direction == "horizontal" else (box[1], box[3])
            indented = s - start > 0.6 * em
            lines.append(Line(box=box, frame=f_index, starts_paragraph=previous_short or indented))
            previous_short = e < start + 0.7 * (end - start)
    return lines


def line_crop(gray: np.ndarray, box: tuple[int, int, int, int], direction: Direction) -> np.ndarray:
    x0, y0, x1, y1 = box
    h, w = gray.shape
    pad = round(CROP_PAD * ((y1 - y0) if direction == "horizontal" else (x1 - x0)))
    crop = gray[max(0, y0 - pad):min(h, y1 + pad), max(0, x0 - pad):min(w, x1 + pad)]
    if direction == "vertical":
        crop = np.rot90(crop)  # as rapidocr does for tall boxes: top of the column to the left
    return cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_GRAY2BGR)
