"""OCR engines behind one interface, and OpenCV text-direction detection.

The engine is chosen per page (and per tier of a vertical page) by script and direction,
following the CER measured on these machines (DESIGN.md section 5):
- horizontal text, any language: PP-OCR models shipped in the rapidocr wheel, with the
  orientation classifier off (``use_cls=True`` flips lines);
- vertical Japanese: Tesseract ``jpn_vert`` with ``--psm 5`` per tier (keeps ー 、。 and
  small kana that PP-OCR drops);
- vertical Chinese: PP-OCR again (3.0 % vs Tesseract's 7.4 %).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version

import cv2
import numpy as np

from pipeline.contracts import Direction

KANA = re.compile(r"[\u3040-\u30ff]")


@dataclass(frozen=True)
class OcrLine:
    text: str
    bbox: tuple[float, float, float, float]  # x0, top, x1, bottom in pixels


@dataclass(frozen=True)
class OcrResult:
    lines: list[OcrLine]
    engine: str


def _binarise(gray: np.ndarray) -> np.ndarray:
    _, ink = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    return ink


def detect_direction(gray: np.ndarray) -> Direction:
    """Vertical or horizontal writing, by how glyphs merge when gaps are closed.

    Closing small gaps along the writing direction merges a line's glyphs into one
    blob; closing across it merges little. So the direction whose closing leaves fewer,
    longer blobs is the writing direction.
    """
    ink = _binarise(gray)
    if cv2.countNonZero(ink) == 0:
        return "horizontal"
    # Glyph size estimate: median height of connected components.
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    sizes = stats[1:, cv2.CC_STAT_HEIGHT] if count > 1 else np.array([20])
    glyph = int(max(4, np.median(sizes)))
    gap = max(3, glyph // 2)
    horizontal = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (gap, 1)))
    vertical = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (1, gap)))
    n_h = cv2.connectedComponents(horizontal, connectivity=8)[0]
    n_v = cv2.connectedComponents(vertical, connectivity=8)[0]
    return "vertical" if n_v < n_h * 0.8 else "horizontal"


def split_tiers(gray: np.ndarray) -> list[tuple[int, int]]:
    """Row bands of a vertical page separated by wide blank horizontal gaps (two-tier layouts)."""
    ink = _binarise(gray)
    rows = ink.sum(axis=1) > 0
    height = len(rows)
    min_gap = max(20, height // 40)
    bands: list[tuple[int, int]] = []
    start = None
    blank = 0
    for y, has_ink in enumerate(rows):
        if has_ink:
            if start is None:
                start = y
            blank = 0
        elif start is not None:
            blank += 1
            if blank >= min_gap:
                bands.append((start, y - blank + 1))
                start, blank = None, 0
    if start is not None:
        bands.append((start, height))
    return [(a, b) for a, b in bands if b - a > 10] or [(0, height)]


@lru_cache(maxsize=1)
def _rapidocr():
    from rapidocr import RapidOCR

    return RapidOCR(params={"Global.use_cls": False, "Global.log_level": "error"})


def rapidocr_engine_name() -> str:
    return f"rapidocr-{version('rapidocr')}:PP-OCR(use_cls=False)"


def ocr_rapid(image: np.ndarray, direction: Direction) -> OcrResult:
    result = _rapidocr()(image, use_cls=False)
    lines: list[OcrLine] = []
    if result.txts:
        for text, box in zip(result.txts, result.boxes):
            xs, ys = [p[0] for p in box], [p[1] for p in box]
            lines.append(OcrLine(text=text, bbox=(min(xs), min(ys), max(xs), max(ys))))
    return OcrResult(lines=order_lines(lines, direction), engine=rapidocr_engine_name())


def order_lines(lines: list[OcrLine], direction: Direction) -> list[OcrLine]:
    """Reading order: rows top-down then left-right; columns right-left then top-down."""
    if direction == "vertical":
        return sorted(lines, key=lambda l: (-round(l.bbox[2] / 20), l.bbox[1]))
    return sorted(lines, key=lambda l: (round(l.bbox[1] / 15), l.bbox[0]))


@lru_cache(maxsize=1)
def tesseract_version() -> str:
    out = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, check=True)
    return (out.stdout or out.stderr).split()[1]


def ocr_tesseract_vertical(gray: np.ndarray, model: str) -> OcrResult:
    """Tesseract vertical model per tier: whole-page --psm 5 fails on two-tier pages."""
    import pytesseract

    lines: list[OcrLine] = []
    for top, bottom in split_tiers(gray):
        tier = gray[top:bottom]
        text = pytesseract.image_to_string(tier, lang=model, config="--psm 5")
        for column in text.splitlines():
            column = column.replace(" ", "").strip()
            if column:
                lines.append(OcrLine(text=column, bbox=(0.0, float(top), float(gray.shape[1]), float(bottom))))
    return OcrResult(lines=lines, engine=f"tesseract-{tesseract_version()}:{model}:psm5")


def looks_japanese(text: str) -> bool:
    cjk = sum(1 for ch in text if "\u3040" <= ch <= "\u9fff")
    return cjk > 0 and len(KANA.findall(text)) / cjk > 0.05


def ocr_page(gray: np.ndarray, vertical_models: dict[str, str]) -> tuple[OcrResult, Direction]:
    """OCR one rasterised page with the engine measured best for its script and direction."""
    direction = detect_direction(gray)
    rgb = cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR)
    first = ocr_rapid(rgb, direction)
    if direction == "vertical":
        text = "".join(l.text for l in first.lines)
        if looks_japanese(text) and "ja" in vertical_models:
            return ocr_tesseract_vertical(gray, vertical_models["ja"]), direction
    return first, direction
