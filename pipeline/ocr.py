"""OCR of one rasterised page: deskew, orientation, layout, then the engine measured best.

The steps, and the facts behind them (DESIGN.md section 5):

1. Deskew: the angle (within +-1.5 deg) that makes the ink's row or column profile
   sharpest.
2. Writing axis: OpenCV closing along x vs along y (rows vs columns of text); Tesseract
   OSD cannot tell vertical from horizontal writing.
3. Layout by projection profiles: horizontal pages split into text columns at blank
   gutters, then into lines; vertical pages split into tiers at blank bands (two-tier
   段組 pages), then into columns read right to left. Lines become paragraph blocks at
   indents and short last lines. A region written the other way (a horizontal heading
   over vertical text) is laid out and read on its own, in its direction (``islands``).
4. Orientation: 0 vs 180 by PP-OCR recognition confidence of a few sample lines read
   both ways. CJK text then asks Tesseract OSD for the glyph orientation, because a
   vertical page turned by 90 deg looks like a horizontal one, and vertical Japanese and
   Chinese must know which it is to pick their engines. (Latin text reads the same
   either way: a vertical column and a horizontal line turned by 90 deg give the
   recogniser the same image.)
5. Recognition: PP-OCR's recogniser from the rapidocr wheel on the line and column
   crops (no detector pass: the layout step found the lines, and the detector was 60 %
   of rapidocr's time; no angle classifier: ``use_cls`` flips lines); vertical Japanese
   with Tesseract ``jpn_vert --psm 5`` per tier (keeps ー 、。 and small kana that
   PP-OCR drops; whole-page --psm 5 fails on two-tier pages). Vertical Chinese columns
   that hold Latin are read by both: PP-OCR sees the column turned, so the upright
   full-width symbols of code (／ ＄ ＿ ＇ ：) reach it sideways and are dropped or
   misread, while Tesseract's ``chi_*_vert`` reads them upright; the two reads are
   merged character by character (``merge_reads``). Tesseract runs with
   OMP_THREAD_LIMIT=1 (its OpenMP threads cost four times the CPU here).

Boxes are returned in the pixel frame of the page as given (before any rotation).
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import subprocess
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

import cv2
import numpy as np
import yaml

from pipeline.config import project_home
from pipeline.contracts import Direction

log = logging.getLogger(__name__)

KANA = re.compile(r"[\u3040-\u30ff]")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
# Han, kana and CJK punctuation/brackets (not the full-width forms of ASCII)
CJK_TEXT = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\ufe10-\ufe4f]")
# A column with any of these (after NFKC) is read by Tesseract too: see merge_reads
LATIN_OR_SYMBOL = re.compile(r"[!-~]")
SAMPLE_LINES = 4
OSD_MIN_CONFIDENCE = 2.0  # below this, OSD's answer on part of a page is checked on all of it
MAX_SKEW_DEG = 1.5
# Width in pixels of a vertical column (its glyphs) handed to Tesseract's *_vert models.
# At 300 dpi a 10-18 pt column is 42-75 px; shrinking it (INTER_AREA, which also
# averages away scan noise) took 12 tuning pages (10-18 pt, serif/sans, one and two
# tiers, not the benchmark's pages) from 2.89 % to 1.74 % CER and cut Tesseract's time
# by a third; 18-28 px all gave 1.6-1.9 %, 14-16 px worse again. chi_*_vert reads the
# Latin columns of vertical Chinese at the same width.
VERT_COLUMN_PX = 20
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
# A region of a page is read in the other direction only when closing along that
# direction leaves fewer than this share of the blobs closing along the page's does,
# and it holds at least this many glyph blobs (see islands).
REGION_DECISIVE = 0.5
REGION_MIN_GLYPHS = 5
# Two reads of a vertical Chinese column are merged only when they agree on this share
# of their characters (difflib ratio): less means one of them misread the column.
MERGE_MIN_AGREEMENT = 0.6


@dataclass(frozen=True)
class Line:
    """A text line (horizontal) or column (vertical) found by the layout step."""

    box: tuple[int, int, int, int]  # x0, top, x1, bottom in pixels of the oriented page
    frame: int  # index of its text column / tier, in reading order
    starts_paragraph: bool


@dataclass(frozen=True)
class OcrBlock:
    text: str
    bbox: tuple[float, float, float, float]  # x0, top, x1, bottom in pixels of the input page
    engine: str
    direction: Direction = "horizontal"


@dataclass
class PageOcr:
    blocks: list[OcrBlock]
    direction: Direction
    rotation: int  # degrees clockwise the page was turned to read it: 0, 90, 180, 270
    engines: list[str] = field(default_factory=list)


# --- image geometry --------------------------------------------------------------------
def binarise(gray: np.ndarray) -> np.ndarray:
    _, ink = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    return ink


def rotate90(image: np.ndarray, degrees: int) -> np.ndarray:
    """Turn clockwise by a multiple of 90 degrees (lossless)."""
    return np.ascontiguousarray(np.rot90(image, k=-(degrees // 90) % 4))


def _unrotate_box(box: tuple[float, float, float, float], degrees: int, shape: tuple[int, int]) -> tuple[float, ...]:
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
    n_h, n_v = _axis_blobs(ink)
    return "vertical" if n_v < n_h * 0.8 else "horizontal"


def _other(direction: Direction) -> Direction:
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

    angles = np.arange(-MAX_SKEW_DEG, MAX_SKEW_DEG + 1e-6, 0.1)
    best = float(angles[int(np.argmax([sharpness(a) for a in angles]))])
    if abs(best) < 0.05:
        return gray
    h, w = gray.shape
    matrix = cv2.getRotationMatrix2D((w / 2, h / 2), best, 1.0)
    return cv2.warpAffine(gray, matrix, (w, h), flags=cv2.INTER_LINEAR, borderValue=255)


# --- layout ----------------------------------------------------------------------------
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


def _glyph_size(ink: np.ndarray) -> float:
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    heights = stats[1:, cv2.CC_STAT_HEIGHT]
    heights = heights[heights >= 5]
    return float(np.median(heights)) if heights.size else 20.0


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
    lines: list[Line] = []
    for f_index, (f0, f1) in enumerate(frames):
        band = ink[:, f0:f1] if frame_axis == 1 else ink[f0:f1, :]
        runs = _merge_thin(_runs(band.sum(axis=frame_axis) // 255 >= 2, 2))
        if direction == "vertical":
            runs = runs[::-1]  # columns right to left
        boxes = []
        for a, b in runs:
            strip = band[a:b, :] if frame_axis == 1 else band[:, a:b]
            along = np.flatnonzero(strip.sum(axis=1 - frame_axis))
            if along.size == 0:
                continue
            s, e = int(along[0]) + f0, int(along[-1]) + 1 + f0
            boxes.append((s, a, e, b) if direction == "horizontal" else (a, s, b, e))
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


def _crop(gray: np.ndarray, box: tuple[int, int, int, int], direction: Direction) -> np.ndarray:
    x0, y0, x1, y1 = box
    h, w = gray.shape
    pad = round(CROP_PAD * ((y1 - y0) if direction == "horizontal" else (x1 - x0)))
    crop = gray[max(0, y0 - pad):min(h, y1 + pad), max(0, x0 - pad):min(w, x1 + pad)]
    if direction == "vertical":
        crop = np.rot90(crop)  # as rapidocr does for tall boxes: top of the column to the left
    return cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_GRAY2BGR)


# --- engines ---------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _rapidocr():
    from rapidocr import RapidOCR

    # One onnxruntime thread: CPU time per page is what counts on a shared machine
    # (two threads cost 35 % more CPU for 15 % less wall time); scale by documents.
    return RapidOCR(params={"Global.use_cls": False, "Global.log_level": "error",
                            "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                            "EngineConfig.onnxruntime.inter_op_num_threads": 1})


def rapidocr_engine_name() -> str:
    return f"rapidocr-{version('rapidocr')}:PP-OCRv6-rec(use_cls=False)"


def recognise(crops: list[np.ndarray]) -> list[tuple[str, float]]:
    """PP-OCR recognition of line crops (text, confidence)."""
    if not crops:
        return []
    from rapidocr.ch_ppocr_rec import TextRecInput

    out = _rapidocr()._load_rec_model()(TextRecInput(img=crops))
    return [(t, float(s)) for t, s in zip(out.txts or (), out.scores)]


class OcrEngineError(RuntimeError):
    """The configured OCR engine cannot be loaded (package or model folder missing)."""


@dataclass(frozen=True)
class Recogniser:
    """A line recogniser: its lineage name and a function from crops to (text, confidence)."""

    name: str
    read: Callable[[list[np.ndarray]], list[tuple[str, float]]]


@lru_cache(maxsize=2)
def _paddleocr(model_dir: str) -> Recogniser:
    """PaddleOCR's TextRecognition on a local model folder, run by onnxruntime, offline.

    The folder is a PaddleOCR recognition model export: ``inference.onnx`` and the
    ``inference.yml`` that names the model (``Global.model_name``) and holds its
    character dictionary. PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK stops PaddleX from
    contacting model hosters at import; with a local ``model_dir`` nothing is downloaded.
    """
    folder = Path(model_dir)
    if not folder.is_absolute():
        folder = project_home() / folder
    missing = [n for n in ("inference.onnx", "inference.yml") if not (folder / n).is_file()]
    if missing:
        raise OcrEngineError(f"extraction.paddleocr_model_dir {folder}: {', '.join(missing)} not found "
                             f"(a PaddleOCR recognition model folder is needed)")
    os.environ["PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK"] = "True"
    try:
        from paddleocr import TextRecognition
    except ImportError as exc:
        raise OcrEngineError("extraction.ocr_engine is 'paddleocr' but the paddleocr package is not installed "
                             "(in its own environment: paddlex pins numpy, PyYAML and OpenCV below this "
                             "project's versions, see docs/extraction.md; or set extraction.ocr_engine: rapidocr)"
                             ) from exc
    with open(folder / "inference.yml", encoding="utf-8") as handle:
        model_name = yaml.safe_load(handle)["Global"]["model_name"]
    # one onnxruntime thread, as for rapidocr (PaddleX's default uses every core: 2x the CPU)
    model = TextRecognition(model_name=model_name, model_dir=str(folder), device="cpu", engine="onnxruntime",
                            engine_config={"intra_op_num_threads": 1, "inter_op_num_threads": 1})

    def read(crops: list[np.ndarray]) -> list[tuple[str, float]]:
        if not crops:
            return []
        results = model.predict(input=crops, batch_size=len(crops))
        return [(str(r["rec_text"]), float(r["rec_score"])) for r in results]

    return Recogniser(name=f"paddleocr-{version('paddleocr')}:{model_name}(onnxruntime)", read=read)


def recogniser(engine: str = "rapidocr", paddleocr_model_dir: str | None = None) -> Recogniser:
    """The line recogniser ``extraction.ocr_engine`` names (loaded once per process)."""
    if engine == "paddleocr":
        if not paddleocr_model_dir:
            raise OcrEngineError("extraction.ocr_engine 'paddleocr' needs extraction.paddleocr_model_dir")
        return _paddleocr(paddleocr_model_dir)
    return Recogniser(name=rapidocr_engine_name(), read=recognise)


@lru_cache(maxsize=1)
def tesseract_version() -> str:
    out = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, check=True)
    return (out.stdout or out.stderr).split()[1]


def _tesseract(image: np.ndarray, args: list[str]) -> str:
    ok, png = cv2.imencode(".png", image)
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    out = subprocess.run(["tesseract", "stdin", "stdout", *args], input=png.tobytes(), capture_output=True,
                         env=env, check=True)
    return out.stdout.decode("utf-8", "replace")


def osd_rotation(gray: np.ndarray) -> int | None:
    """Tesseract OSD: degrees clockwise to turn the page so its glyphs stand upright.

    OSD's time grows with the glyphs it sees, not the pixels: it reads the middle of the
    text area (60 % of its width and height: ~1.0 instead of ~1.4 CPU s, orientation
    right on all 29 CJK benchmark and tuning pages, confidence >= 8.8), and the whole
    page when that is too little to decide.
    """
    ink = binarise(gray)
    ys, xs = np.nonzero(ink)
    if ys.size == 0:
        return None
    cy, cx = (int(ys.min()) + int(ys.max())) // 2, (int(xs.min()) + int(xs.max())) // 2
    hy, hx = int(0.3 * (ys.max() - ys.min())), int(0.3 * (xs.max() - xs.min()))
    middle = gray[cy - hy:cy + hy, cx - hx:cx + hx]
    for region in ([middle] if min(middle.shape) >= 100 else []) + [gray]:
        small = cv2.resize(region, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
        try:
            report = _tesseract(small, ["--psm", "0"])
        except subprocess.CalledProcessError:  # too few glyphs for OSD
            continue
        match = re.search(r"Rotate: (\d+)\s+Orientation confidence: ([\d.]+)", report)
        if match and (float(match.group(2)) >= OSD_MIN_CONFIDENCE or region is gray):
            return int(match.group(1))
    return None


def spaced_tier(page: np.ndarray, columns: list[Line]) -> np.ndarray:
    """One tier's columns (right to left) redrawn one column-width apart, JPEG noise
    smoothed, scaled so a column is VERT_COLUMN_PX wide.

    Tesseract ``jpn_vert`` inserts stray kana and ticks between close columns and at
    JPEG ringing; isolating the columns and a 3x3 median took one page from 2.4 % to
    1.2 % CER. Scaling: see VERT_COLUMN_PX.
    """
    top = max(0, min(c.box[1] for c in columns) - 20)
    bottom = min(page.shape[0], max(c.box[3] for c in columns) + 20)
    strips = [page[top:bottom, max(0, c.box[0] - 8):c.box[2] + 8] for c in columns]
    gap = int(np.median([s.shape[1] for s in strips]))
    canvas = np.full((bottom - top, sum(s.shape[1] for s in strips) + gap * (len(strips) + 1)), 255, np.uint8)
    x = canvas.shape[1] - gap
    for strip in strips:
        canvas[:, x - strip.shape[1]:x] = strip
        x -= strip.shape[1] + gap
    scale = VERT_COLUMN_PX / float(np.median([c.box[2] - c.box[0] for c in columns]))
    return cv2.resize(cv2.medianBlur(canvas, 3), None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


def tesseract_columns(gray: np.ndarray, model: str) -> list[str]:
    """Tesseract vertical model (--psm 5) on one tier: its columns, right to left."""
    text = _tesseract(gray, ["-l", model, "--psm", "5"])
    return [c.replace(" ", "") for c in text.splitlines() if c.strip()]


def looks_japanese(text: str) -> bool:
    cjk = len(CJK.findall(text))
    return cjk > 0 and len(KANA.findall(text)) / cjk > 0.05


def cjk_script(text: str) -> str | None:
    """"ja" for text with kana, "zh" for other Han text, None for text without either."""
    if looks_japanese(text):
        return "ja"
    return "zh" if CJK.search(text) else None


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def merge_reads(turned: str, upright: str) -> str:
    """One vertical Chinese column from PP-OCR's read (``turned``: the column turned into a
    line) and Tesseract ``chi_*_vert``'s (``upright``).

    Where the reads differ (aligned ignoring case): Han and CJK punctuation from PP-OCR,
    which reads them better; Latin letters and digits from PP-OCR (Tesseract turns l
    into L, doubles letters and adds some after symbols); symbols from Tesseract, which
    sees them upright (PP-OCR drops ／ and ＿ and reads ＄ as s, ＇ as i, ： as .), in
    place of whatever PP-OCR read there.
    """
    def folded(text: str) -> list[str]:
        return [c.lower() if len(c.lower()) == 1 else c for c in text]

    out = []
    matcher = difflib.SequenceMatcher(None, folded(turned), folded(upright), autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        ours, theirs = turned[i1:i2], upright[j1:j2]
        symbols = "".join(c for c in theirs if not c.isalnum())
        if op == "equal" or not symbols or CJK_TEXT.search(ours + theirs) or _nfkc(ours) == _nfkc(theirs):
            out.append(ours)
        else:
            out.append(symbols)
    return "".join(out)


# --- the page --------------------------------------------------------------------------
def _sample_crops(page: np.ndarray, lines: list[Line], direction: Direction) -> list[np.ndarray]:
    """The first ~16 characters of the longest lines: enough to tell orientation and script."""
    def length(line: Line) -> int:
        return line.box[2] - line.box[0] if direction == "horizontal" else line.box[3] - line.box[1]

    crops = []
    for line in sorted(lines, key=length, reverse=True)[:SAMPLE_LINES]:
        x0, y0, x1, y1 = line.box
        thickness = (y1 - y0) if direction == "horizontal" else (x1 - x0)
        short = (x0, y0, min(x1, x0 + 16 * thickness), y1) if direction == "horizontal" else \
            (x0, y0, x1, min(y1, y0 + 16 * thickness))
        crops.append(_crop(page, short, direction))
    return crops


def _mean_score(results: list[tuple[str, float]]) -> float:
    return float(np.mean([s for _, s in results])) if results else 0.0


def _blocks(lines: list[Line], texts: list[str], engines: list[str], directions: list[Direction],
            rotation: int, shape: tuple[int, int]) -> list[OcrBlock]:
    """Paragraph blocks from lines (one text line per line or column, joined by newlines);
    ``engines`` and ``directions`` are per line (a block's lines share a frame, and so a
    direction); a block names the engines of its lines."""
    blocks: list[OcrBlock] = []
    group: list[tuple[Line, str, str, Direction]] = []

    def flush() -> None:
        if not group:
            return
        text = "\n".join(t for _, t, _, _ in group if t)
        if text.strip():
            boxes = np.array([line.box for line, _, _, _ in group])
            box = (*boxes[:, :2].min(axis=0).tolist(), *boxes[:, 2:].max(axis=0).tolist())
            engine = " + ".join(dict.fromkeys(e for _, _, e, _ in group))
            bbox = _unrotate_box(box, rotation, shape)  # type: ignore[arg-type]
            blocks.append(OcrBlock(text=text, bbox=bbox, engine=engine, direction=group[0][3]))
        group.clear()

    for line, text, engine, direction in zip(lines, texts, engines, directions):
        if group and (line.starts_paragraph or line.frame != group[-1][0].frame):
            flush()
        group.append((line, text.strip(), engine, direction))
    flush()
    return blocks


def _tesseract_engine(model: str) -> str:
    return f"tesseract-{tesseract_version()}:{model}:psm5"


def _vertical_tiers(page: np.ndarray, lines: list[Line], model: str,
                    wanted: list[int] | None = None) -> tuple[dict[int, str], set[int]]:
    """Tesseract's read of the columns ``wanted`` (indices into ``lines``; all by default),
    one tier at a time, and the tiers (frames) where it merged or split columns: such a
    tier's text comes back whole, as the read of its first column."""
    wanted = list(range(len(lines))) if wanted is None else wanted
    reads: dict[int, str] = {}
    unsplit: set[int] = set()
    for frame in sorted({lines[i].frame for i in wanted}):
        members = [i for i in wanted if lines[i].frame == frame]
        columns = tesseract_columns(spaced_tier(page, [lines[i] for i in members]), model)
        if len(columns) == len(members):
            reads.update(zip(members, columns))
        else:
            reads[members[0]] = "".join(columns)
            unsplit.add(frame)
    return reads, unsplit


def ocr_page(gray: np.ndarray, vertical_models: dict[str, str], rec: Recogniser | None = None) -> PageOcr:
    """OCR one page (8-bit grayscale) with the engine measured best for its script and direction.

    ``vertical_models`` names the Tesseract vertical model per script: "ja", "zh"
    (simplified Chinese) and "zh-Hant" (traditional). ``rec`` reads the line crops;
    by default the PP-OCR recogniser from the rapidocr wheel.
    """
    rec = rec or recogniser()
    shape = gray.shape[:2]
    direction = detect_direction(gray)
    page = deskew(gray, direction)
    lines = layout(page, direction)
    if not lines:
        return PageOcr(blocks=[], direction=direction, rotation=0)
    sample = _sample_crops(page, lines, direction)
    upright = rec.read(sample)
    flipped = rec.read([np.ascontiguousarray(np.rot90(c, 2)) for c in sample])
    rotation = 0
    if _mean_score(flipped) > _mean_score(upright) + 0.05:
        rotation, upright = 180, flipped
    script = cjk_script("".join(t for t, _ in upright))
    if script in vertical_models:
        glyphs = osd_rotation(rotate90(page, rotation))
        if glyphs is not None:
            rotation = (rotation + glyphs) % 360
            if glyphs in (90, 270):
                direction = _other(direction)
    if rotation in (90, 270):  # the writing axis changed: deskew and lay out again
        page = deskew(rotate90(gray, rotation), direction)
        lines = layout(page, direction)
    elif rotation == 180:
        page = rotate90(page, 180)
        lines = layout(page, direction)
    regions = islands(page, direction, lines)
    if regions:  # the page's own layout without them
        main = page.copy()
        for x0, y0, x1, y1 in regions:
            main[y0:y1, x0:x1] = 255
        lines = layout(main, direction)
    reads = [(_read(page, lines, direction, script, vertical_models, rec), direction)]
    other = _other(direction)
    for number, (x0, y0, x1, y1) in enumerate(regions, start=1):
        inside = layout(np.ascontiguousarray(page[y0:y1, x0:x1]), other)
        placed = [Line(box=(l.box[0] + x0, l.box[1] + y0, l.box[2] + x0, l.box[3] + y0),
                       frame=1000 * number + l.frame, starts_paragraph=l.starts_paragraph) for l in inside]
        if placed:
            reads.append((_read(page, placed, other, script, vertical_models, rec), other))
    lines, texts, engines, directions = _in_reading_order(reads)
    blocks = _blocks(lines, texts, engines, directions, rotation, shape)
    used = [name for line_engines in engines for name in line_engines.split(" + ")]
    return PageOcr(blocks=blocks, direction=direction, rotation=rotation, engines=list(dict.fromkeys(used)))


Read = tuple[list[Line], list[str], list[str]]  # lines, their texts, their engines


def _read(page: np.ndarray, lines: list[Line], direction: Direction, script: str | None,
          vertical_models: dict[str, str], rec: Recogniser) -> Read:
    """Text of the lines (or columns) of one direction, by the engine for the script."""
    if script == "ja" and direction == "vertical" and "ja" in vertical_models:
        engines = [_tesseract_engine(vertical_models["ja"])] * len(lines)
        reads, unsplit = _vertical_tiers(page, lines, vertical_models["ja"])
        texts = [reads.get(i, "") for i in range(len(lines))]
        # a tier whose columns Tesseract merged or split is one paragraph
        lines = [Line(box=l.box, frame=l.frame, starts_paragraph=False) if l.frame in unsplit and i not in reads
                 else l for i, l in enumerate(lines)]
        return lines, texts, engines
    texts = [t for t, _ in rec.read([_crop(page, l.box, direction) for l in lines])]
    engines = [rec.name] * len(lines)
    if script == "zh" and direction == "vertical" and "zh" in vertical_models:
        texts, engines = _merge_vertical_chinese(page, lines, texts, engines, vertical_models)
    return lines, texts, engines


def _in_reading_order(reads: list[tuple[Read, Direction]]) -> tuple[list[Line], list[str], list[str], list[Direction]]:
    """The page's own lines in their order, each island's lines before the first of them
    that starts below the island (a heading before the body under it)."""
    (lines, texts, engines), direction = reads[0]
    out = [(l, t, e, direction) for l, t, e in zip(lines, texts, engines)]
    for (i_lines, i_texts, i_engines), i_direction in reads[1:]:
        bottom = max(l.box[3] for l in i_lines)
        at = next((k for k, (l, _, _, d) in enumerate(out) if d == direction and l.box[1] >= bottom), len(out))
        out[at:at] = [(l, t, e, i_direction) for l, t, e in zip(i_lines, i_texts, i_engines)]
    return [o[0] for o in out], [o[1] for o in out], [o[2] for o in out], [o[3] for o in out]


def _merge_vertical_chinese(page: np.ndarray, lines: list[Line], texts: list[str], engines: list[str],
                            vertical_models: dict[str, str]) -> tuple[list[str], list[str]]:
    """Columns whose PP-OCR read holds Latin, read again by Tesseract and merged
    (``merge_reads``); a column where the two reads share too little is left as PP-OCR
    read it."""
    from pipeline.language import chinese_forms

    forms = chinese_forms("".join(texts))
    model = vertical_models.get("zh-Hant", vertical_models["zh"]) if forms == "traditional" else vertical_models["zh"]
    latin = [i for i, t in enumerate(texts) if LATIN_OR_SYMBOL.search(_nfkc(t))]
    if not latin:
        return texts, engines
    texts, engines = list(texts), list(engines)
    try:
        reads, unsplit = _vertical_tiers(page, lines, model, latin)
    except (OSError, subprocess.CalledProcessError) as exc:  # no tesseract, or no such model
        stderr = getattr(exc, "stderr", b"") or b""
        log.warning("Tesseract %s unavailable (%s %s): vertical Chinese kept as PP-OCR read it",
                    model, exc, stderr.decode("utf-8", "replace").strip())
        return texts, engines
    for i, upright in reads.items():
        agreement = difflib.SequenceMatcher(None, _nfkc(texts[i]), _nfkc(upright), autojunk=False).ratio()
        if lines[i].frame not in unsplit and agreement >= MERGE_MIN_AGREEMENT:
            texts[i] = merge_reads(texts[i], upright)
            engines[i] = f"{engines[i]} + {_tesseract_engine(model)}"
    return texts, engines
