"""Scanned content in a PDF: whole pages without a usable text layer, and large grayscale
or bilevel images with no text over them (a scanned region pasted into a born-digital
page). Both are rendered to grayscale with PDFium and OCRed (pipeline.ocr); their
blocks are marked ``method="ocr"``.
"""

from __future__ import annotations

import numpy as np

from pipeline.config import Settings
from pipeline.contracts import Block
from pipeline.extraction.images import within_megapixels
from pipeline.extraction.pdf import Chars
from pipeline.ocr.cache import PageCache
from pipeline.ocr.engines import recogniser
from pipeline.ocr.page import ocr_page

SCANNED_REGION_MIN_AREA = 0.05  # of the page: smaller images are figures, icons, logos


def scanned_regions(page, chars: Chars, width: float, height: float) -> list[tuple[float, float, float, float]]:
    """Large grayscale/bilevel images with no text layer over them (top-left origin boxes): the
    part of each that the page shows."""
    import pypdfium2.raw as pdfium_c

    regions = []
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2):
        bounds = obj.get_bounds()
        if not chars.frame.shows(*bounds):
            continue
        left, bottom, right, top = chars.frame.clipped(*bounds)
        if (right - left) * (top - bottom) < SCANNED_REGION_MIN_AREA * width * height:
            continue
        meta = obj.get_metadata()
        if meta.colorspace != pdfium_c.FPDF_COLORSPACE_DEVICEGRAY and meta.bits_per_pixel != 1:
            continue  # colour images are figures and screenshots, not scans
        if not chars.textpage.get_text_bounded(left, bottom, right, top).strip():
            regions.append(chars.frame.top_left(left, bottom, right, top))
    return regions


def ocr_scale(width_pt: float, height_pt: float, settings: Settings) -> float:
    """Pixels per point to OCR a page at: ``extraction.ocr_dpi``, or less where the page would
    pass ``extraction.ocr_max_megapixels`` (a poster, a drawing past A0, a banner: their text is
    large too), so that the render fits the stage worker's memory (docs/extraction.md)."""
    extraction = settings.extraction
    return within_megapixels(extraction.ocr_dpi / 72.0, width_pt, height_pt, extraction.ocr_max_megapixels)


def render_gray(page, settings: Settings, turn: int = 0) -> tuple[np.ndarray, float]:
    """The page as shown, or turned ``turn`` degrees more clockwise (as its text is read), in
    grayscale, and its pixels per point."""
    scale = ocr_scale(*page.get_size(), settings)
    pixels = page.render(scale=scale, grayscale=True, rotation=turn).to_numpy()
    return np.ascontiguousarray(pixels[..., 0] if pixels.ndim == 3 else pixels), scale


def ocr_blocks(gray: np.ndarray, scale: float, offset: tuple[float, float], settings: Settings):
    vertical_models = {lang: e.tesseract_vertical for lang, e in settings.languages.items() if e.tesseract_vertical}
    vertical_models |= {f"{lang}-Hant": e.tesseract_vertical_traditional
                        for lang, e in settings.languages.items() if e.tesseract_vertical_traditional}
    rec = recogniser(settings.extraction.ocr_engine, settings.extraction.paddleocr_model_dir)
    cache = PageCache(settings.ocr_cache_path, enabled=settings.extraction.ocr_cache_mb > 0)
    result = cache.read(gray, vertical_models, rec, lambda: ocr_page(gray, vertical_models, rec))
    blocks = [
        Block(text=b.text, bbox=(offset[0] + b.bbox[0] / scale, offset[1] + b.bbox[1] / scale,
                                 offset[0] + b.bbox[2] / scale, offset[1] + b.bbox[3] / scale),
              direction=b.direction, method="ocr", engine=b.engine)
        for b in result.blocks
    ]
    return blocks, result
