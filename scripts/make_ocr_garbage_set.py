#!/usr/bin/env python3
"""Real OCR garbage, labelled: dusty scans of real text read by the pipeline's OCR route.

Paragraphs of the sample corpus's maint-guide (Debian's documentation, en/de/es; fetched
pinned by fetch_sample_corpus.py) are typeset as A4 pages (scan_pages.fill_page), given
the mild scanner look of render_scans plus heavy dust (dark specks and clusters of them,
as on a dirty platen), and read by pipeline.ocr.page.ocr_page with the configured
recogniser, exactly as pipeline/extraction/scans.py reads a scanned page. Each OCR line is
labelled against the printed text: ``garbage`` when no printed line is close to it
(difflib ratio < 0.5 to the best-matching stretch of the truth), i.e. it was read off dust.
Short dust reads ("g", "doep") can match some stretch by chance and count as readable:
the labels are conservative, so false alarms on that side are overstated.

Splits: ``tuning`` (English pages), ``measurement`` (German and Spanish pages, other dust
seeds): the detector in pipeline/publish/checks.py was tuned on the first only.

    .venv/bin/python scripts/make_ocr_garbage_set.py   # writes tests/fixtures/ocr_garbage.json
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import render_scans  # noqa: E402
import scan_pages  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "ocr_garbage.json"
PAGES = {"tuning": [("en", 1), ("en", 3), ("en", 5)], "measurement": [("de", 2), ("es", 4), ("de", 6)]}
HALF_PAGE = (2480, 1754)  # half an A4 page at 300 dpi: enough lines, half the OCR time


def paragraphs(lang: str, page_no: int) -> list[str]:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(str(ROOT / "samples" / "corpus" / lang / "maint-guide.pdf"))
    text = pdf[page_no].get_textpage().get_text_range()
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return [line for line in lines if len(line) > 25]


def dust(img: Image.Image, seed: int) -> Image.Image:
    """Dark specks of 3-14 px, some in clusters, over the page (a dirty scanner platen)."""
    rng = np.random.default_rng(seed)
    page = np.asarray(img).copy()
    h, w = page.shape
    yy, xx = np.mgrid[0:h, 0:w]
    centres = list(zip(rng.integers(0, h, 220), rng.integers(0, w, 220)))
    for cy, cx in list(centres[:40]):  # clusters: a few specks close together
        centres += [(cy + int(dy), cx + int(dx)) for dy, dx in rng.normal(0, 25, (6, 2))]
    for cy, cx in centres:
        r = rng.uniform(1.5, 7)
        y0, y1, x0, x1 = max(0, cy - 8), min(h, cy + 9), max(0, cx - 8), min(w, cx + 9)
        blob = (yy[y0:y1, x0:x1] - cy) ** 2 + (xx[y0:y1, x0:x1] - cx) ** 2 <= r * r
        page[y0:y1, x0:x1][blob] = rng.integers(10, 90)
    return Image.fromarray(page)


def label(line: str, truth: str) -> bool:
    """Garbage when nothing printed is close to it (the best-matching window of the truth)."""
    squeezed = "".join(line.split())
    if not squeezed:
        return True
    matcher = difflib.SequenceMatcher(None, squeezed, truth, autojunk=False)
    block = matcher.find_longest_match(0, len(squeezed), 0, len(truth))
    start = max(0, block.b - block.a)
    window = truth[start:start + len(squeezed)]
    return difflib.SequenceMatcher(None, squeezed, window, autojunk=False).ratio() < 0.5


def main() -> int:
    from pipeline.config import get_settings
    from pipeline.ocr.engines import recogniser
    from pipeline.ocr.page import ocr_page

    settings = get_settings()
    rec = recogniser(settings.extraction.ocr_engine, settings.extraction.paddleocr_model_dir)
    rows = []
    for split, pages in PAGES.items():
        for lang, page_no in pages:
            spec = scan_pages.PageSpec(lang=lang, layout="horizontal", size_pt=11, page_px=HALF_PAGE)
            img, used = scan_pages.fill_page(paragraphs(lang, page_no), spec)
            seed = page_no * 7919
            scan = dust(render_scans.scan_effects(img, seed), seed)
            result = ocr_page(np.asarray(scan), {}, rec)
            truth = "".join("".join(used).split())
            lines = [line for block in result.blocks for line in block.text.splitlines() if line.strip()]
            page_rows = [{"split": split, "lang": lang, "page": page_no, "text": line, "garbage": label(line, truth)}
                         for line in lines]
            rows += page_rows
            print(f"{split} {lang} p.{page_no}: {len(lines)} OCR line(s), "
                  f"{sum(r['garbage'] for r in page_rows)} garbage", flush=True)
    OUT.write_text(json.dumps(rows, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(rows)} line(s), {sum(r['garbage'] for r in rows)} garbage")
    return 0


if __name__ == "__main__":
    sys.exit(main())
