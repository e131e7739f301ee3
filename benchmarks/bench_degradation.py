#!/usr/bin/env python3
"""OCR degradation suite: CER and CPU s/page of Rosetta's extraction on damaged scans.

Pages come from benchmarks/degradation_manifest.json (scripts/degrade_pages.py: Debian
Reference 2.100 paragraphs, split into tuning and measurement pages by paragraph); each
is damaged by one degradation at one severity (or left clean), saved as an image-only
PDF and read by ``extract.extract_file`` (the stage itself). CER against the printed
paragraphs (NFKC, whitespace ignored); CPU = this process + its children (Tesseract).
``--reader detector`` reads the same rendered page with rapidocr's own pipeline
(detector boxes, then the recogniser, use_cls=False) instead, to compare layouts.
Figures are printed, never asserted. Runnable in parts, because it is slow:

    nice -n 10 .venv/bin/python benchmarks/bench_degradation.py --split measure --pages 1 (or 2-4) \\
        [--kinds ja-vertical ...] [--degradations dust ...] [--severities mild moderate] \\
        [--reader rosetta|detector] [--keep DIR] [--show-errors]
"""

from __future__ import annotations

import argparse
import difflib
import resource
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import degrade_pages as suite  # noqa: E402
import scan_pages  # noqa: E402

from pipeline.config import load_settings  # noqa: E402
from pipeline.stages import extract  # noqa: E402


def cpu_now() -> float:
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime


def detector_read(pdf: Path, settings) -> str:
    """rapidocr's own pipeline on the page as extraction renders it; lines in reading
    order (columns right to left when most boxes are tall)."""
    import pypdfium2 as pdfium

    from pipeline.extraction.scans import render_gray
    from pipeline.ocr.engines import detect_and_read

    gray, _ = render_gray(pdfium.PdfDocument(pdf)[0], settings)
    boxes, texts, _ = detect_and_read(gray)
    if not texts:
        return ""
    tall = sum((b[3] - b[1]) > (b[2] - b[0]) for b in boxes) > len(boxes) / 2
    order = sorted(range(len(texts)), key=(lambda i: (-boxes[i][2], boxes[i][1])) if tall
                   else (lambda i: (boxes[i][1], boxes[i][0])))
    return "\n".join(texts[i] for i in order)


def show_errors(truth: str, text: str) -> None:
    t, h = scan_pages.normalise(truth), scan_pages.normalise(text)
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, t, h, autojunk=False).get_opcodes():
        if op != "equal":
            print(f"      {op:7} {t[max(0, i1 - 4):i1]}[{t[i1:i2]}]{t[i2:i2 + 4]} -> [{h[j1:j2]}]")


def page_range(value: str) -> tuple[int, int]:
    """"3" -> pages 1-3, "2-4" -> pages 2-4 (1-based, inclusive)."""
    first, _, last = value.rpartition("-")
    return (int(first) if first else 1), int(last)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("tune", "measure"), default="measure")
    ap.add_argument("--kinds", nargs="+", default=suite.KINDS, choices=suite.KINDS)
    ap.add_argument("--degradations", nargs="+", default=["clean", *suite.DEGRADATIONS],
                    choices=["clean", *suite.DEGRADATIONS])
    ap.add_argument("--severities", nargs="+", default=suite.SEVERITIES, choices=suite.SEVERITIES)
    ap.add_argument("--pages", type=page_range, default=(1, 1),
                    help="pages of each kind: N (the first N of %d) or A-B" % suite.PAGES_PER_KIND)
    ap.add_argument("--reader", choices=("rosetta", "detector"), default="rosetta")
    ap.add_argument("--keep", type=Path, help="keep the degraded PDFs and truths here")
    ap.add_argument("--show-errors", action="store_true", help="print each page's differing spans")
    args = ap.parse_args(argv)
    settings = load_settings()
    work = args.keep or Path(tempfile.mkdtemp(prefix="rosetta-degradation-"))
    work.mkdir(parents=True, exist_ok=True)
    from pipeline.ocr import engines

    engines._rapidocr()._load_rec_model()  # model loading is not per-page work
    if args.reader == "detector":
        engines._rapidocr()._load_det_model()
    cells: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    cpus: dict[str, list[float]] = defaultdict(list)
    print(f"{'page':58} {'CER %':>6} {'CPU s':>6}")
    for kind in args.kinds:
        prose = suite.prose_paragraphs(kind.rsplit("-", 1)[0])
        first, last = args.pages
        for page in [p for p in suite.load_pages(args.split) if p.kind == kind][first - 1:last]:
            gray, truth = suite.clean_scan(page, prose)
            for degradation in args.degradations:
                for severity in (["-"] if degradation == "clean" else args.severities):
                    name = page.id + ("" if degradation == "clean" else f"-{degradation}-{severity}")
                    seed = zlib.crc32(f"{page.id}/{degradation}/{severity}".encode())
                    image, dpi = suite.degrade(gray, degradation, "mild" if severity == "-" else severity, seed)
                    pdf = work / f"{name}.pdf"
                    suite.save_pdf(image, dpi, pdf, bilevel=degradation == "fax")
                    start = cpu_now()
                    if args.reader == "detector":
                        text = detector_read(pdf, settings)
                    else:
                        text = extract.extract_file(pdf, settings, doc_id=name).pages[0].text
                    cpu = cpu_now() - start
                    error = scan_pages.cer("\n".join(truth), text)
                    cells[(kind, degradation, severity)].append(error)
                    cpus[kind].append(cpu)
                    print(f"{name:58} {error:6.2f} {cpu:6.2f}", flush=True)
                    if args.show_errors:
                        show_errors("\n".join(truth), text)
                    (work / f"{name}.out.txt").write_text(text, encoding="utf-8")
            (work / f"{page.id}.txt").write_text("\n".join(truth) + "\n", encoding="utf-8")
    columns = [("clean", "-")] + [(d, s) for d in args.degradations if d != "clean" for s in args.severities]
    print(f"\nmean CER % per page kind ({args.split} pages, reader {args.reader}); CPU s/page")
    print("| degradation | severity | " + " | ".join(args.kinds) + " |")
    print("|---|---|" + "---|" * len(args.kinds))
    for degradation, severity in columns:
        if not any((k, degradation, severity) in cells for k in args.kinds):
            continue
        values = [cells.get((k, degradation, severity)) for k in args.kinds]
        shown = [f"{sum(v) / len(v):.2f}" if v else "" for v in values]
        print(f"| {degradation} | {severity} | " + " | ".join(shown) + " |")
    shown = [f"{sum(cpus[k]) / len(cpus[k]):.2f}" if cpus[k] else "" for k in args.kinds]
    print("| CPU s/page | | " + " | ".join(shown) + " |")
    every = [c for k in args.kinds for c in cpus[k]]
    if every:
        print(f"pages read: {len(every)}, mean CPU {sum(every) / len(every):.2f} s/page; PDFs in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
