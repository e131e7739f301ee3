#!/usr/bin/env python3
"""Scan-like pages for the OCR degradation suite: real text, a committed tuning /
measurement split, and nine kinds of scan damage at three severities.

Text: body paragraphs of Debian Reference 2.100 in ja, zh-cn, zh-tw, en, de, es
(sha256-pinned in scripts/fetch_doc_packages.py; no OCR choice before this suite was
made on them). Each prose paragraph belongs to one split by a hash of its text
(``split_of``), so a tuning page and a measurement page never share a paragraph. The
pages (kind, size, face, and the paragraph indices each holds) are written once into
benchmarks/degradation_manifest.json and read back from there (``--write-manifest``
rebuilds it; the bench re-checks each page's text against the manifest's hash).

Page kinds: ja/zh-cn/zh-tw vertical and ja/zh-cn/zh-tw/en/de/es horizontal, 12-16 pt,
serif and sans (Noto Serif/Sans CJK JP/SC/TC; DejaVu Serif/Sans for en/de/es), typeset
by scan_pages.fill_page at 300 dpi with render_scans.scan_effects (the clean scan).

Degradations (``degrade``; own numpy/OpenCV code, deterministic per seed), severities
mild / moderate / severe:

    dust          isolated dark specks of 1-3 px: 150 / 500 / 1500 per megapixel
    salt_pepper   pixels set to black or white: 0.2 / 1 / 3 %
    skew          1 / 2 / 3 degrees (sign by seed)
    jpeg          JPEG quality 60 / 45 / 30
    resolution    downsampled to 200 / 150 / 100 dpi (the PDF says so; OCR renders at 300)
    illumination  paper darkened towards one corner to 0.75 / 0.55 / 0.4 of its tone
    bleed         the mirrored page showing through at 15 / 25 / 40 % of ink contrast
    fax           bilevel: 300 dpi / 200 x 200 dpi / 200 x 100 dpi (fax standard) + noise
    blur          Gaussian sigma 1.0 / 1.5 / 2.2 px

    .venv/bin/python scripts/degrade_pages.py --write-manifest
    .venv/bin/python scripts/degrade_pages.py --out /tmp/pages --kinds ja-vertical --degradations dust
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

import fetch_doc_packages as docs
import render_scans
import scan_pages
from scan_pages import PageSpec

MANIFEST = docs.ROOT / "benchmarks" / "degradation_manifest.json"
KINDS = ["ja-vertical", "zh-cn-vertical", "zh-tw-vertical", "ja-horizontal", "zh-cn-horizontal",
         "zh-tw-horizontal", "en-horizontal", "de-horizontal", "es-horizontal"]
DEGRADATIONS = ["dust", "salt_pepper", "skew", "jpeg", "resolution", "illumination", "bleed", "fax", "blur"]
SEVERITIES = ["mild", "moderate", "severe"]
# (size pt, face) of a kind's pages, in order; --pages N takes the first N
PAGE_STYLES = [(12, "serif"), (14, "sans"), (16, "serif"), (13, "sans")]
PAGES_PER_KIND = len(PAGE_STYLES)
LATIN_FACES = {"serif": "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
               "sans": "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"}
PROSE_MIN_CHARS = 40
LEVEL = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass(frozen=True)
class Page:
    id: str
    split: str  # "tune" or "measure"
    kind: str  # e.g. "ja-vertical"
    size_pt: float
    face: str
    paragraphs: tuple[int, ...]  # indices into prose_paragraphs(lang)
    sha256: str  # of the truth (paragraphs joined by newlines)

    @property
    def lang(self) -> str:
        return self.kind.rsplit("-", 1)[0]

    @property
    def spec(self) -> PageSpec:
        return PageSpec(self.lang, self.kind.rsplit("-", 1)[1], self.size_pt, self.face)


def split_of(paragraph: str) -> str:
    return "tune" if zlib.crc32(paragraph.encode("utf-8")) % 2 == 0 else "measure"


def prose_paragraphs(lang: str) -> list[str]:
    """Debian Reference body paragraphs that read as prose (no table rows or rules)."""
    pkg = next(p for p in docs.REFERENCE_PACKAGES if p.lang == lang)
    paragraphs = render_scans.read_paragraphs(docs.fetch_one(pkg) / pkg.text)
    return [p for p in paragraphs if len(p) >= PROSE_MIN_CHARS and not p.startswith(("+", "|")) and "---" not in p]


def typeset(page_spec: PageSpec, paragraphs: list[str]) -> tuple[Image.Image, list[str]]:
    """scan_pages.fill_page, with DejaVu faces for Latin-script pages."""
    if page_spec.lang in ("en", "de", "es"):
        original = scan_pages.font_for
        path = LATIN_FACES[page_spec.face]
        scan_pages.font_for = lambda s: render_scans.ImageFont.truetype(path, round(s.size_pt * render_scans.DPI / 72))
        try:
            return scan_pages.fill_page(paragraphs, page_spec)
        finally:
            scan_pages.font_for = original
    return scan_pages.fill_page(paragraphs, page_spec)


def build_manifest() -> dict:
    pages = []
    for k_index, kind in enumerate(KINDS):
        lang = kind.rsplit("-", 1)[0]
        prose = prose_paragraphs(lang)
        for split in ("tune", "measure"):
            pool = [i for i, p in enumerate(prose) if split_of(p) == split]
            for n, (size, face) in enumerate(PAGE_STYLES):
                # spread a kind's pages over the document; vertical and horizontal pages of a
                # language start at different places
                start = (len(pool) * (2 * n + (k_index >= 3))) // (2 * PAGES_PER_KIND)
                spec = PageSpec(lang, kind.rsplit("-", 1)[1], size, face)
                _, used = typeset(spec, [prose[i] for i in pool[start:]])
                indices: list[int] = []
                for i in pool[start:]:  # fill_page keeps an in-order subsequence
                    if len(indices) < len(used) and prose[i] == used[len(indices)]:
                        indices.append(i)
                truth = "\n".join(prose[i] for i in indices)
                pages.append(Page(f"{split}-{kind}-{size}pt-{face}", split, kind, size, face, tuple(indices),
                                  hashlib.sha256(truth.encode("utf-8")).hexdigest()))
    sources = {p.name: {"version": p.version, "sha256": p.sha256} for p in docs.REFERENCE_PACKAGES}
    return {"about": "OCR degradation suite pages (scripts/degrade_pages.py): split by paragraph, "
                     "crc32(text) even = tune, odd = measure",
            "sources": sources, "prose_min_chars": PROSE_MIN_CHARS,
            "pages": [p.__dict__ | {"paragraphs": list(p.paragraphs)} for p in pages]}


def load_pages(split: str | None = None) -> list[Page]:
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    pages = [Page(**(p | {"paragraphs": tuple(p["paragraphs"])})) for p in data["pages"]]
    return [p for p in pages if split is None or p.split == split]


def clean_scan(page: Page, prose: list[str]) -> tuple[np.ndarray, list[str]]:
    """The page typeset and scanned cleanly (grayscale, 300 dpi), and its truth."""
    truth = [prose[i] for i in page.paragraphs]
    if hashlib.sha256("\n".join(truth).encode("utf-8")).hexdigest() != page.sha256:
        raise ValueError(f"{page.id}: its paragraphs are not the manifest's (text changed?)")
    img, used = typeset(page.spec, truth)
    if used != truth:
        raise ValueError(f"{page.id}: {len(used)} of {len(truth)} paragraphs fit the page")
    seed = zlib.crc32(page.id.encode())
    return np.asarray(render_scans.scan_effects(img, seed), dtype=np.uint8), truth


def _specks(shape: tuple[int, int], count: int, rng: np.random.Generator) -> np.ndarray:
    """A mask of ``count`` specks of 1-3 px (squares, bars and corners)."""
    mask = np.zeros(shape, np.uint8)
    ys, xs = rng.integers(0, shape[0] - 3, count), rng.integers(0, shape[1] - 3, count)
    hs, ws = rng.integers(1, 4, count), rng.integers(1, 4, count)
    for y, x, h, w in zip(ys, xs, hs, ws):
        mask[y:y + h, x:x + w] = 1
    return mask


def degrade(gray: np.ndarray, degradation: str, severity: str, seed: int) -> tuple[np.ndarray, int]:
    """The page damaged one way (8-bit grayscale) and its resolution in dpi."""
    rng = np.random.default_rng(seed)
    level = LEVEL[severity]
    out = gray.astype(np.float32)
    h, w = gray.shape
    dpi = render_scans.DPI
    if degradation == "dust":
        count = int((150, 500, 1500)[level] * h * w / 1e6)
        mask = _specks((h, w), count, rng).astype(bool)
        out[mask] = rng.uniform(10, 90, int(mask.sum()))
    elif degradation == "salt_pepper":
        share = (0.002, 0.01, 0.03)[level]
        hit = rng.random((h, w)) < share
        out[hit] = np.where(rng.random(int(hit.sum())) < 0.5, 0, 255)
    elif degradation == "skew":
        angle = (1.0, 2.0, 3.0)[level] * (1 if rng.random() < 0.5 else -1)
        matrix = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
        out = cv2.warpAffine(out, matrix, (w, h), flags=cv2.INTER_CUBIC, borderValue=render_scans.PAPER)
    elif degradation == "jpeg":
        ok, data = cv2.imencode(".jpg", gray, [cv2.IMWRITE_JPEG_QUALITY, (60, 45, 30)[level]])
        out = cv2.imdecode(data, cv2.IMREAD_GRAYSCALE).astype(np.float32)
    elif degradation == "resolution":
        dpi = (200, 150, 100)[level]
        out = cv2.resize(out, (w * dpi // render_scans.DPI, h * dpi // render_scans.DPI), interpolation=cv2.INTER_AREA)
    elif degradation == "illumination":
        darkest = (0.75, 0.55, 0.4)[level]
        cy, cx = rng.choice([0, h]), rng.choice([0, w])
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        distance = np.hypot(yy - cy, xx - cx) / np.hypot(h, w)  # 0 at the dark corner, 1 across
        out = out * (darkest + (1 - darkest) * np.clip(distance * 1.4, 0, 1))
    elif degradation == "bleed":
        strength = (0.15, 0.25, 0.4)[level]
        back = cv2.GaussianBlur(np.ascontiguousarray(gray[:, ::-1]), (0, 0), 1.5).astype(np.float32)
        back = np.roll(back, int(rng.integers(15, 40)), axis=0)
        out = np.minimum(out, 255 - strength * (255 - back))
    elif degradation == "fax":
        fx, fy = ((1, 1), (2 / 3, 2 / 3), (2 / 3, 1 / 3))[level]
        small = cv2.resize(out, None, fx=fx, fy=fy, interpolation=cv2.INTER_AREA)
        small = small + rng.normal(0, 12, small.shape)
        bilevel = np.where(small < 150, 0.0, 255.0).astype(np.float32)
        out = cv2.resize(bilevel, (w, h), interpolation=cv2.INTER_NEAREST)
        if level == 2:
            out[rng.random((h, w)) < 0.0005] = 0
    elif degradation == "blur":
        out = cv2.GaussianBlur(out, (0, 0), (1.0, 1.5, 2.2)[level])
    elif degradation != "clean":
        raise ValueError(f"unknown degradation {degradation!r}")
    return np.clip(out, 0, 255).astype(np.uint8), dpi


def save_pdf(gray: np.ndarray, dpi: int, path: Path, bilevel: bool = False) -> None:
    """Image-only PDF page at ``dpi`` (bilevel pages as 1-bit images, like fax and
    black-and-white scans; others JPEG at quality 90 so the damage is the degradation's)."""
    img = Image.fromarray(gray)
    options = {"quality": 90}
    if bilevel:
        img, options = img.convert("1", dither=Image.Dither.NONE), {}
    buffer = io.BytesIO()
    img.save(buffer, "PDF", resolution=dpi, creationDate=None, modDate=None, **options)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write-manifest", action="store_true", help=f"rebuild {MANIFEST.name}")
    ap.add_argument("--out", type=Path, help="write degraded PDFs and truths here")
    ap.add_argument("--split", choices=("tune", "measure"), default="tune")
    ap.add_argument("--kinds", nargs="+", default=KINDS, choices=KINDS)
    ap.add_argument("--degradations", nargs="+", default=["clean", *DEGRADATIONS], choices=["clean", *DEGRADATIONS])
    ap.add_argument("--severities", nargs="+", default=SEVERITIES, choices=SEVERITIES)
    ap.add_argument("--pages", type=int, default=1, help="pages per kind")
    args = ap.parse_args(argv)
    if args.write_manifest:
        MANIFEST.write_text(json.dumps(build_manifest(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {MANIFEST}")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for kind in args.kinds:
            prose = prose_paragraphs(kind.rsplit("-", 1)[0])
            for page in [p for p in load_pages(args.split) if p.kind == kind][:args.pages]:
                gray, truth = clean_scan(page, prose)
                (args.out / f"{page.id}.txt").write_text("\n".join(truth) + "\n", encoding="utf-8")
                for degradation in args.degradations:
                    for severity in (["-"] if degradation == "clean" else args.severities):
                        seed = zlib.crc32(f"{page.id}/{degradation}/{severity}".encode())
                        image, dpi = degrade(gray, degradation, severity if severity != "-" else "mild", seed)
                        name = page.id + ("" if degradation == "clean" else f"-{degradation}-{severity}")
                        save_pdf(image, dpi, args.out / f"{name}.pdf", bilevel=degradation == "fax")
                        print(args.out / f"{name}.pdf")
    return 0


if __name__ == "__main__":
    sys.exit(main())
