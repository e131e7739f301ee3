"""Scans that arrive as image files (PNG, JPEG, TIFF with one page per frame): decoded
with Pillow to 8-bit grayscale, brought to the OCR resolution and read by the same OCR
route as a scanned PDF page (pipeline.extraction.scans).

The resolution of an image, in this order:

1. ``metadata``: the file's own (PNG pHYs, JPEG JFIF or EXIF, TIFF XResolution with its
   unit), when it is a plausible scan resolution (50-2400 dpi) that makes the page at most
   ``MAX_PAGE_INCHES`` on its long side: software writes 72 or 96 dpi into images whose
   size says otherwise (an A4 page at 300 dpi tagged 72 dpi would be 49 inches tall).
2. ``page_size``: the image has the shape of an A4 or US Letter sheet (long/short side
   within ``SHEET_RATIO_TOLERANCE``): a flatbed or feeder scan of the whole sheet, so the
   long side is 297 mm or 11 in.
3. ``glyph_size``: otherwise (a crop, a photographed page) the median text line thickness
   of the OCR layout is taken for ``BODY_LINE_PT``, the line of body text set at 10-12 pt;
   if the page holds no text line, ``extraction.ocr_dpi`` is assumed.

The page is then resampled to ``extraction.ocr_dpi`` (the resolution scanned PDF pages are
rendered at, and the OCR was tuned on) when the two differ by more than ``RESAMPLE_MIN``, or
down to the resolution that keeps it within ``extraction.ocr_max_megapixels``, as a PDF page is
(pipeline.extraction.scans.ocr_scale).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import cv2
import numpy as np

from pipeline.contracts import DocumentError

# File signatures: the format is told from the bytes, never from the file name.
SIGNATURES = {b"\x89PNG\r\n\x1a\n": "PNG", b"\xff\xd8\xff": "JPEG", b"II*\x00": "TIFF", b"MM\x00*": "TIFF"}
MIN_DPI, MAX_DPI = 50.0, 2400.0
MAX_PAGE_INCHES = 17.0  # A3's long side is 16.5 in: a bigger "page" means the tag is wrong
SHEETS = {"A4": 297 / 25.4, "Letter": 11.0}  # long side in inches
SHEET_RATIOS = {"A4": 297 / 210, "Letter": 11.0 / 8.5}
SHEET_RATIO_TOLERANCE = 0.015
# Median thickness of a text line (or column) as laid out by pipeline.ocr.layout, in points,
# for body text: measured on rendered pages of known resolution (docs/extraction.md).
BODY_LINE_PT = 12.0
RESAMPLE_MIN = 0.05


@dataclass(frozen=True)
class ImagePage:
    gray: np.ndarray  # 8-bit grayscale at ``dpi``
    dpi: float  # after resampling: the OCR resolution, or the image's own if close to it
    source_dpi: float  # the image's resolution as found or estimated
    dpi_from: str  # metadata | page_size | glyph_size | assumed


def image_format(head: bytes) -> str | None:
    """'PNG', 'JPEG' or 'TIFF' from a file's first bytes, else None."""
    return next((name for magic, name in SIGNATURES.items() if head.startswith(magic)), None)


def metadata_dpi(info: dict, size: tuple[int, int]) -> float | None:
    """The image's own resolution when it is plausible for a scanned page (see above)."""
    dpi = info.get("dpi")
    try:
        x, y = (float(v) for v in dpi)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        return None
    if not (MIN_DPI <= x <= MAX_DPI and MIN_DPI <= y <= MAX_DPI) or abs(x - y) > 0.02 * max(x, y):
        return None
    return x if max(size) / x <= MAX_PAGE_INCHES else None


def sheet_dpi(size: tuple[int, int]) -> float | None:
    """The resolution of an image shaped like a whole A4 or Letter sheet."""
    long_px, short_px = max(size), min(size)
    if short_px == 0:
        return None
    for sheet, ratio in SHEET_RATIOS.items():
        if abs(long_px / short_px - ratio) <= SHEET_RATIO_TOLERANCE * ratio:
            return long_px / SHEETS[sheet]
    return None


def glyph_dpi(gray: np.ndarray) -> float | None:
    """The resolution at which the page's median text line is BODY_LINE_PT thick."""
    from pipeline.ocr.geometry import detect_direction
    from pipeline.ocr.layout import layout

    direction = detect_direction(gray)
    lines = layout(gray, direction)
    if not lines:
        return None
    axis = (1, 3) if direction == "horizontal" else (0, 2)
    thickness = float(np.median([line.box[axis[1]] - line.box[axis[0]] for line in lines]))
    return float(np.clip(thickness * 72.0 / BODY_LINE_PT, MIN_DPI, MAX_DPI))


def to_gray(frame) -> np.ndarray:
    """8-bit grayscale; transparent parts on white paper."""
    from PIL import Image

    if frame.mode in ("RGBA", "LA", "PA") or (frame.mode == "P" and "transparency" in frame.info):
        rgba = frame.convert("RGBA")
        paper = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        frame = Image.alpha_composite(paper, rgba)
    elif frame.mode.startswith("I;16") or frame.mode == "I":
        values = np.asarray(frame, dtype=np.float64)
        top = max(float(values.max()), 1.0)
        return np.ascontiguousarray((values * (255.0 / top)).astype(np.uint8))
    return np.ascontiguousarray(np.asarray(frame.convert("L"), dtype=np.uint8))


def within_megapixels(scale: float, width: float, height: float, megapixels: float) -> float:
    """``scale`` (pixels a unit of ``width`` and ``height``), or the smaller one at which the
    page stays within ``megapixels``."""
    return min(scale, math.sqrt(megapixels * 1e6 / max(width * height, 1e-9)))


def at_resolution(gray: np.ndarray, dpi: float, target: float) -> tuple[np.ndarray, float]:
    if abs(dpi / target - 1.0) <= RESAMPLE_MIN:
        return gray, dpi
    factor = target / dpi
    size = (max(1, round(gray.shape[1] * factor)), max(1, round(gray.shape[0] * factor)))
    interpolation = cv2.INTER_AREA if factor < 1 else cv2.INTER_CUBIC
    return cv2.resize(gray, size, interpolation=interpolation), target


def page_resolution(gray: np.ndarray, info: dict) -> tuple[float | None, str]:
    size = (gray.shape[1], gray.shape[0])
    for dpi, rule in ((metadata_dpi(info, size), "metadata"), (sheet_dpi(size), "page_size")):
        if dpi:
            return dpi, rule
    dpi = glyph_dpi(gray)
    return (dpi, "glyph_size") if dpi else (None, "assumed")


def image_pages(path: Path, ocr_dpi: float, max_pages: int, max_megapixels: float) -> Iterator[ImagePage]:
    """Each page (frame) of an image file at the OCR resolution; a file Pillow cannot
    decode raises DocumentError ``corrupt_image`` naming the file, the page and why."""
    from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

    number = 0
    try:
        with Image.open(path) as image:
            if (n_pages := getattr(image, "n_frames", 1)) > max_pages:
                raise DocumentError("too_many_pages", f"{path.name} has {n_pages} pages (max {max_pages})")
            for number, frame in enumerate(ImageSequence.Iterator(image), start=1):
                frame.load()
                info = dict(frame.info)
                gray = to_gray(ImageOps.exif_transpose(frame))
                dpi, rule = page_resolution(gray, info)
                source = dpi or ocr_dpi
                inches = (gray.shape[1] / source, gray.shape[0] / source)
                gray, dpi_now = at_resolution(gray, source, within_megapixels(ocr_dpi, *inches, max_megapixels))
                yield ImagePage(gray=gray, dpi=dpi_now, source_dpi=source, dpi_from=rule)
    except Image.DecompressionBombError as exc:  # not corrupt: more pixels than Pillow decodes
        raise DocumentError("too_large", f"{path.name} is not decoded: {exc}") from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        where = f" page {number}" if number else ""
        raise DocumentError("corrupt_image", f"{path.name}{where} cannot be decoded: {exc}") from exc
