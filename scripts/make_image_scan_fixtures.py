#!/usr/bin/env python3
"""Write the image-file scan fixtures into tests/fixtures/images/: real text typeset by
scan_pages.py (small 300 dpi pages, mild scanner artefacts from render_scans.py), saved as

    en-scan.png          English, 10 pt, 8-gray palette PNG with its resolution (pHYs: 300 dpi)
    ja-scan-nodpi.jpg    vertical Japanese, 12 pt, JPEG quality 70 without a resolution (JFIF 0:1)
    de-scan-2pages.tif   German, 10 pt, a two-page bilevel TIFF (CCITT Group 4, as document
                         scanners and fax write it) at 300 dpi, other paragraphs per page
    truncated.png        the first half of en-scan.png: a file Pillow cannot decode

with their truth (NAME.txt: one paragraph per line, pages separated by a form feed line).
Paragraphs (of at most 160 characters) come from the pinned maint-guide packages
(scripts/fetch_doc_packages.py): de and ja from the 31st on, en from the 39th (prose; the
ones before are shell commands, too short for a language to be told per chunk).

    .venv/bin/python scripts/make_image_scan_fixtures.py
"""

from __future__ import annotations

import sys

import fetch_doc_packages as docs
import render_scans
import scan_pages
from make_test_fixtures import report_sizes
from scan_pages import PageSpec

OUT = docs.ROOT / "tests" / "fixtures" / "images"
SMALL = dict(page_px=(960, 820), margin_px=50)
SHORT = 160  # characters: paragraphs short enough for a small page
PAGE_BREAK = "\f"


def page(paragraphs: list[str], spec: PageSpec, seed: int):
    img, used = scan_pages.fill_page(paragraphs, spec)
    return render_scans.scan_effects(img, seed), used


def main() -> int:
    names = {"en": "maint-guide", "de": "maint-guide-de", "ja": "maint-guide-ja"}
    roots = docs.fetch(list(names.values()))
    package = {p.name: p for p in docs.PACKAGES}
    texts = {lang: [p for p in render_scans.read_paragraphs(roots[name] / package[name].text) if len(p) <= SHORT]
             for lang, name in names.items()}
    OUT.mkdir(parents=True, exist_ok=True)
    written = []

    png, used = page(texts["en"][38:], PageSpec("en", "horizontal", 10, "serif", **SMALL), 201)
    # 8 gray levels, as a scanner's compact PNG mode keeps the fixture small
    png.quantize(colors=8).save(OUT / "en-scan.png", dpi=(300, 300), optimize=True)
    truths = {"en-scan": [used]}
    jpg, used = page(texts["ja"][30:], PageSpec("ja", "vertical", 12, "serif", **SMALL), 202)
    jpg.save(OUT / "ja-scan-nodpi.jpg", quality=70)
    truths["ja-scan-nodpi"] = [used]
    first, used_1 = page(texts["de"][30:], PageSpec("de", "horizontal", 10, "serif", **SMALL), 203)
    rest = [p for p in texts["de"][30:] if p not in used_1]
    second, used_2 = page(rest, PageSpec("de", "horizontal", 10, "sans", **SMALL), 204)
    bilevel = [im.point(lambda v: 255 if v > 160 else 0).convert("1") for im in (first, second)]
    bilevel[0].save(OUT / "de-scan-2pages.tif", save_all=True, append_images=bilevel[1:], dpi=(300, 300),
                    compression="group4")
    truths["de-scan-2pages"] = [used_1, used_2]
    data = (OUT / "en-scan.png").read_bytes()
    (OUT / "truncated.png").write_bytes(data[:len(data) // 2])
    for name, pages in truths.items():
        (OUT / f"{name}.txt").write_text(f"\n{PAGE_BREAK}\n".join("\n".join(p) for p in pages) + "\n",
                                         encoding="utf-8")
    written = sorted(OUT.iterdir())
    return report_sizes(written)


if __name__ == "__main__":
    sys.exit(main())
