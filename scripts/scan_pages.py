#!/usr/bin/env python3
"""Scan-like page kinds from real text, with ground truth, and the CER that scores them.

Extends render_scans.py (which typesets one A4 page, 12 pt) to the page kinds the OCR
benchmark and the page-kind test fixtures need:

    layout   vertical | vertical-2tier | horizontal | two-column | vertical-heading (a
             one-line horizontal heading across the top of a vertical page)
    lang     ja | zh-cn | zh-tw | en | de | es  (Noto CJK JP/SC/TC faces; their Latin
             glyphs serve the European languages)
    size_pt  any size; 10-18 pt in the benchmark
    face     serif | sans
    rotate   0 | 90 | 180 | 270 (degrees counter-clockwise, applied after typesetting)

Vertical pages read columns right to left; a two-tier vertical page (二段組) is read
tier by tier, top tier first. A two-column horizontal page is read left column first.
``fill_page`` takes whole paragraphs while they fit, so the truth is exactly what is
printed. Scan artefacts and the image-only PDF come from render_scans.

    .venv/bin/python scripts/scan_pages.py TEXT OUT.pdf --lang zh-tw --layout vertical-2tier
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

import render_scans
from render_scans import A4_PX, FONT_DIR, INK, PAGE_MARGIN_PX, Token

LAYOUTS = ("vertical", "vertical-2tier", "horizontal", "two-column", "vertical-heading")
FACE_FILES = {"serif": "NotoSerifCJK-Regular.ttc", "sans": "NotoSansCJK-Regular.ttc"}
FACE_INDEX = {"ja": 0, "zh-cn": 2, "zh-tw": 3, "en": 0, "de": 0, "es": 0}  # JP, SC, TC faces
TIER_GAP_EM = 2
GUTTER_EM = 2
ROTATIONS = {0: None, 90: Image.Transpose.ROTATE_90, 180: Image.Transpose.ROTATE_180,
             270: Image.Transpose.ROTATE_270}


@dataclass(frozen=True)
class PageSpec:
    lang: str
    layout: str
    size_pt: float = 12
    face: str = "serif"
    rotate: int = 0
    page_px: tuple[int, int] = A4_PX  # smaller pages make small test fixtures
    margin_px: int = PAGE_MARGIN_PX

    @property
    def vertical(self) -> bool:
        return self.layout.startswith("vertical")

    @property
    def kind(self) -> str:
        return self.layout + (f"-rot{self.rotate}" if self.rotate else "")


def font_for(spec: PageSpec) -> ImageFont.FreeTypeFont:
    px = round(spec.size_pt * render_scans.DPI / 72)
    return ImageFont.truetype(str(FONT_DIR / FACE_FILES[spec.face]), px, index=FACE_INDEX[spec.lang])


def _frames(spec: PageSpec, em: int) -> list[tuple[int, int, int, int]]:
    """Text frames (x0, y0, x1, y1) in reading order."""
    w, h = spec.page_px
    m = spec.margin_px
    if spec.layout == "vertical-2tier":
        tier = (h - 2 * m - TIER_GAP_EM * em) // 2
        return [(m, m, w - m, m + tier), (m, h - m - tier, w - m, h - m)]
    if spec.layout == "two-column":
        col = (w - 2 * m - GUTTER_EM * em) // 2
        return [(m, m, m + col, h - m), (w - m - col, m, w - m, h - m)]
    return [(m, m, w - m, h - m)]


def fill_page(paragraphs: Sequence[str], spec: PageSpec) -> tuple[Image.Image, list[str]]:
    """Typeset as many whole paragraphs as fit; returns the page and the paragraphs used."""
    if spec.layout == "vertical-heading":
        return _heading_page(paragraphs, spec)
    font = font_for(spec)
    em = font.size
    pitch = em * 7 // 4 if spec.vertical else em * 17 // 10
    indent = 0 if spec.lang in ("en", "de", "es") else em * (1 if spec.lang == "ja" else 2)
    frames = _frames(spec, em)
    # Every frame of a page has the same size: lines per frame, line length.
    x0, y0, x1, y1 = frames[0]
    length = (y1 - y0) if spec.vertical else (x1 - x0)
    per_frame = ((x1 - x0) if spec.vertical else (y1 - y0)) // pitch
    capacity = per_frame * len(frames)
    used: list[str] = []
    lines: list[list[Token]] = []
    for paragraph in paragraphs:
        try:
            more = render_scans.break_lines([render_scans.tokenize(paragraph, font, spec.vertical)], length, indent)
        except ValueError:  # a word longer than a line (e.g. a URL in a narrow column)
            continue
        if len(lines) + len(more) > capacity:
            break
        lines += more
        used.append(paragraph)
    if not used:
        raise ValueError(f"no paragraph fits a {spec.kind} page at {spec.size_pt} pt")
    img = Image.new("L", spec.page_px, 255)
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        fx0, fy0, fx1, fy1 = frames[i // per_frame]
        slot = i % per_frame
        offset = 0
        for tok in line:
            if spec.vertical:
                centre = fx1 - pitch * slot - pitch // 2
                draw.text((centre - em // 2, fy0 + offset), tok.text, font=font, fill=INK,
                          direction="ttb", features=["vert"])
            else:
                draw.text((fx0 + offset, fy0 + pitch * slot), tok.text, font=font, fill=INK)
            offset += tok.advance
    return img, used


def _heading_page(paragraphs: Sequence[str], spec: PageSpec) -> tuple[Image.Image, list[str]]:
    """A vertical page under a horizontal heading: the first paragraph of at least six
    characters that fits on one line runs across the top, the paragraphs after it are set
    vertically below, TIER_GAP_EM under the heading (a title over tategaki body text)."""
    font = font_for(spec)
    em, (w, h), m = font.size, spec.page_px, spec.margin_px
    fits = [i for i, p in enumerate(paragraphs) if len(p) >= 6
            and sum(t.advance for t in render_scans.tokenize(p, font, False)) <= w - 2 * m]
    if not fits:
        raise ValueError(f"no paragraph fits a one-line heading at {spec.size_pt} pt")
    first = fits[0]
    top = m + em * 17 // 10 + TIER_GAP_EM * em - m  # the body page's own margin follows
    body, used = fill_page(paragraphs[first + 1:], replace(spec, layout="vertical", page_px=(w, h - top)))
    img = Image.new("L", spec.page_px, 255)
    img.paste(body, (0, top))
    ImageDraw.Draw(img).text((m, m), paragraphs[first], font=font, fill=INK)
    return img, [paragraphs[first], *used]


def render_page(paragraphs: Sequence[str], spec: PageSpec, out_pdf: Path, seed: int) -> list[str]:
    """Write one image-only scan-like PDF page; returns the paragraphs it holds (the truth)."""
    img, used = fill_page(paragraphs, spec)
    scan = render_scans.scan_effects(img, seed)
    if ROTATIONS[spec.rotate] is not None:
        scan = scan.transpose(ROTATIONS[spec.rotate])
    render_scans.save_image_pdf(scan, out_pdf)
    return used


def normalise(text: str) -> str:
    """What CER compares: NFKC (full-width Latin = ASCII), whitespace removed."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row at a time."""
    if not a or not b:
        return max(len(a), len(b))
    bv = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    idx = np.arange(len(b) + 1)
    row = idx.copy()
    for i, ch in enumerate(a, start=1):
        cand = np.empty_like(row)
        cand[0] = i
        cand[1:] = np.minimum(row[1:] + 1, row[:-1] + (bv != ord(ch)))
        row = np.minimum.accumulate(cand - idx) + idx  # insertions: new[j] = min(new[j-1] + 1, cand[j])
    return int(row[-1])


def cer(truth: str, hypothesis: str) -> float:
    """Character error rate in percent, whitespace ignored."""
    t, h = normalise(truth), normalise(hypothesis)
    return 100.0 * edit_distance(t, h) / max(len(t), 1)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("text", type=Path, help="UTF-8 text, one paragraph per line")
    ap.add_argument("out", type=Path, help="output PDF")
    ap.add_argument("--lang", choices=sorted(FACE_INDEX), required=True)
    ap.add_argument("--layout", choices=LAYOUTS, required=True)
    ap.add_argument("--size-pt", type=float, default=12)
    ap.add_argument("--face", choices=sorted(FACE_FILES), default="serif")
    ap.add_argument("--rotate", type=int, choices=sorted(ROTATIONS), default=0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    paragraphs = [p for p in args.text.read_text(encoding="utf-8").splitlines() if p.strip()]
    spec = PageSpec(args.lang, args.layout, args.size_pt, args.face, args.rotate)
    used = render_page(paragraphs, spec, args.out, args.seed)
    print(f"wrote {args.out}: {len(used)} paragraph(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
