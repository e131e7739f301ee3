"""OCR of one rasterised page: deskew, orientation, layout, then the engine measured best.

The steps, and the facts behind them (DESIGN.md section 5):

1. Deskew: the angle (within +-1.5 deg) that makes the ink's row or column profile
   sharpest.
2. Writing axis: OpenCV closing along x vs along y (rows vs columns of text); Tesseract
   OSD cannot tell vertical from horizontal writing.
3. Layout by projection profiles: horizontal pages split into text columns at blank
   gutters, then into lines; vertical pages split into tiers at blank bands (two-tier
   段組 pages), then into columns read right to left. Lines become paragraph blocks at
   indents and short last lines.
4. Orientation: 0 vs 180 by PP-OCR recognition confidence of a few sample lines read
   both ways. Text with kana then asks Tesseract OSD for the glyph orientation, because
   a vertical page turned by 90 deg looks like a horizontal one and Japanese must know
   which it is to pick its engine. (Chinese and Latin text read the same either way: a
   vertical column and a horizontal line turned by 90 deg give the recogniser the same
   image.)
5. Recognition: PP-OCR's recogniser from the rapidocr wheel on the line and column
   crops (no detector pass: the layout step found the lines, and the detector was 60 %
   of rapidocr's time; no angle classifier: ``use_cls`` flips lines); vertical Japanese
   with Tesseract ``jpn_vert --psm 5`` per tier (keeps ー 、。 and small kana that
   PP-OCR drops; whole-page --psm 5 fails on two-tier pages). Tesseract runs with
   OMP_THREAD_LIMIT=1 (its OpenMP threads cost four times the CPU here).

Boxes are returned in the pixel frame of the page as given (before any rotation).
"""

from __future__ import annotations

import os
import re
import subprocess
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

KANA = re.compile(r"[\u3040-\u30ff]")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
SAMPLE_LINES = 4
MAX_SKEW_DEG = 1.5
# Width in pixels of a vertical Japanese column (its glyphs) handed to Tesseract jpn_vert.
# At 300 dpi a 10-18 pt column is 42-75 px; shrinking it (INTER_AREA, which also
# averages away scan noise) took 12 tuning pages (10-18 pt, serif/sans, one and two
# tiers, not the benchmark's pages) from 2.89 % to 1.74 % CER and cut Tesseract's time
# by a third; 18-28 px all gave 1.6-1.9 %, 14-16 px worse again.
JPN_VERT_COLUMN_PX = 20
# A row (column) of pixels with less ink than this share of a typical text row does not
# join two frames: see _frames.
FRAME_SPARSE = 0.1


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


def detect_direction(gray: np.ndarray) -> Direction:
    """Rows (horizontal) or columns (vertical) of text, by how glyphs merge when gaps close.

    Closing small gaps along the writing direction merges a line's glyphs into one
    blob; closing across it merges little. So the direction whose closing leaves fewer
    blobs is the writing direction.
    """
    ink = binarise(gray)
    if cv2.countNonZero(ink) == 0:
        return "horizontal"
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    sizes = stats[1:, cv2.CC_STAT_HEIGHT] if count > 1 else np.array([20])
    glyph = int(max(4, np.median(sizes)))
    gap = max(3, glyph // 2)
    horizontal = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (gap, 1)))
    vertical = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (1, gap)))
    n_h = cv2.connectedComponents(horizontal, connectivity=8)[0]
    n_v = cv2.connectedComponents(vertical, connectivity=8)[0]
    return "vertical" if n_v < n_h * 0.8 else "horizontal"


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


def _crop(gray: np.ndarray, box: tuple[int, int, int, int], direction: Direction, pad: int = 6) -> np.ndarray:
    x0, y0, x1, y1 = box
    h, w = gray.shape
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
                             "(pip install 'paddleocr>=3.5' onnxruntime; or set extraction.ocr_engine: rapidocr)"
                             ) from exc
    with open(folder / "inference.yml", encoding="utf-8") as handle:
        model_name = yaml.safe_load(handle)["Global"]["model_name"]
    model = TextRecognition(model_name=model_name, model_dir=str(folder), device="cpu", engine="onnxruntime")

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
    """Tesseract OSD: degrees clockwise to turn the page so its glyphs stand upright."""
    small = cv2.resize(gray, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    try:
        report = _tesseract(small, ["--psm", "0"])
    except subprocess.CalledProcessError:  # too few glyphs for OSD
        return None
    match = re.search(r"Rotate: (\d+)", report)
    return int(match.group(1)) if match else None


def spaced_tier(page: np.ndarray, columns: list[Line]) -> np.ndarray:
    """One tier's columns (right to left) redrawn one column-width apart, JPEG noise
    smoothed, scaled so a column is JPN_VERT_COLUMN_PX wide.

    Tesseract ``jpn_vert`` inserts stray kana and ticks between close columns and at
    JPEG ringing; isolating the columns and a 3x3 median took one page from 2.4 % to
    1.2 % CER. Scaling: see JPN_VERT_COLUMN_PX.
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
    scale = JPN_VERT_COLUMN_PX / float(np.median([c.box[2] - c.box[0] for c in columns]))
    return cv2.resize(cv2.medianBlur(canvas, 3), None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


def tesseract_columns(gray: np.ndarray, model: str) -> list[str]:
    """Tesseract vertical model (--psm 5) on one tier: its columns, right to left."""
    text = _tesseract(gray, ["-l", model, "--psm", "5"])
    return [c.replace(" ", "") for c in text.splitlines() if c.strip()]


def looks_japanese(text: str) -> bool:
    cjk = len(CJK.findall(text))
    return cjk > 0 and len(KANA.findall(text)) / cjk > 0.05


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


def _blocks(lines: list[Line], texts: list[str], engine: str, rotation: int,
            shape: tuple[int, int]) -> list[OcrBlock]:
    """Paragraph blocks from lines (one text line per line or column, joined by newlines)."""
    blocks: list[OcrBlock] = []
    group: list[tuple[Line, str]] = []

    def flush() -> None:
        if not group:
            return
        text = "\n".join(t for _, t in group if t)
        if text.strip():
            box = (min(l.box[0] for l, _ in group), min(l.box[1] for l, _ in group),
                   max(l.box[2] for l, _ in group), max(l.box[3] for l, _ in group))
            blocks.append(OcrBlock(text=text, bbox=_unrotate_box(box, rotation, shape), engine=engine))  # type: ignore[arg-type]
        group.clear()

    for line, text in zip(lines, texts):
        if group and (line.starts_paragraph or line.frame != group[-1][0].frame):
            flush()
        group.append((line, text.strip()))
    flush()
    return blocks


def ocr_page(gray: np.ndarray, vertical_models: dict[str, str], rec: Recogniser | None = None) -> PageOcr:
    """OCR one page (8-bit grayscale) with the engine measured best for its script and direction.

    ``rec`` reads the line crops (horizontal text, vertical Chinese, the orientation
    sample); by default the PP-OCR recogniser from the rapidocr wheel.
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
    sample_text = "".join(t for t, _ in upright)
    japanese = "ja" in vertical_models and looks_japanese(sample_text)
    if japanese:
        glyphs = osd_rotation(rotate90(page, rotation))
        if glyphs is not None:
            rotation = (rotation + glyphs) % 360
            if glyphs in (90, 270):
                direction = "horizontal" if direction == "vertical" else "vertical"
    if rotation in (90, 270):  # the writing axis changed: deskew and lay out again
        page = deskew(rotate90(gray, rotation), direction)
        lines = layout(page, direction)
    elif rotation == 180:
        page = rotate90(page, 180)
        lines = layout(page, direction)
    if japanese and direction == "vertical":
        engine = f"tesseract-{tesseract_version()}:{vertical_models['ja']}:psm5"
        texts: list[str] = []
        for frame in sorted({l.frame for l in lines}):
            members = [l for l in lines if l.frame == frame]
            columns = tesseract_columns(spaced_tier(page, members), vertical_models["ja"])
            if len(columns) == len(members):
                texts += columns
            else:  # Tesseract merged or split columns: keep the tier as one paragraph
                texts += ["".join(columns)] + [""] * (len(members) - 1)
                lines = [l if l.frame != frame or l is members[0] else
                         Line(box=l.box, frame=l.frame, starts_paragraph=False) for l in lines]
    else:
        engine = rec.name
        texts = [t for t, _ in rec.read([_crop(page, l.box, direction) for l in lines])]
    blocks = _blocks(lines, texts, engine, rotation, shape)
    return PageOcr(blocks=blocks, direction=direction, rotation=rotation, engines=[engine])
