#!/usr/bin/env python3
"""Born-digital extraction speed and agreement: Rosetta vs pdftotext vs pdfplumber alone.

Reads every page of the Debian documentation PDFs pinned in scripts/fetch_doc_packages.py
(maint-guide in en, de, es, ja, zh-cn, zh-tw and the Debian Edu manual in de, es, ja:
705 pages), fetched and sha256-checked into samples/downloads/ if missing. In one run it
measures, per document and in total:

- Rosetta: ``extract.extract_file`` (the whole stage: blocks, boxes, tables);
- ``pdftotext`` (poppler, plain reading-order mode), CPU time of the subprocess;
- pdfplumber ``page.extract_text(x_tolerance=1.5)`` alone, nothing else;
- the honest-text-layer check (``pipeline.extraction.honesty``: ``doubt`` and
  ``glyphs_read_as_spaces``) alone, on every page's text layer: its share of Rosetta's
  extraction time;

and the CER of Rosetta's text against pdftotext's per page (whitespace ignored) on
horizontal pages. Speeds are CPU pages/s of this process (children for pdftotext);
times are printed, never asserted.

    .venv/bin/python benchmarks/bench_born_digital.py [--limit-docs N]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import fetch_doc_packages as docs  # noqa: E402
import scan_pages  # noqa: E402

from pipeline.extraction.honesty import doubt, glyphs_read_as_spaces  # noqa: E402
from pipeline.extraction.pdf import page_chars  # noqa: E402
from pipeline.stages import extract  # noqa: E402
from pipeline.config import load_settings  # noqa: E402


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pdftotext_pages(pdf: Path, n_pages: int) -> tuple[list[str], float]:
    start = children_cpu()
    out = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, check=True)
    pages = out.stdout.decode("utf-8").split("\f")[:n_pages]
    return pages, children_cpu() - start


def pdfplumber_pages(pdf: Path) -> float:
    import pdfplumber

    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pdfplumber.open(pdf) as doc:
            for page in doc.pages:
                page.extract_text(x_tolerance=1.5)
    return time.process_time() - start


def honesty_check_seconds(pdf: Path) -> float:
    """CPU time of the text-layer check alone over every page (the layers read untimed)."""
    import pypdfium2 as pdfium

    spent = 0.0
    with pdfium.PdfDocument(pdf) as document:
        for page in document:
            chars = page_chars(page)
            start = time.process_time()
            doubt(chars.text, chars.ink, glyphs_read_as_spaces(chars))
            spent += time.process_time() - start
    return spent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit-docs", type=int, help="only the first N documents (quick runs)")
    args = ap.parse_args(argv)
    settings = load_settings()
    roots = docs.fetch()
    pdfs = [(p.lang, roots[p.name] / rel) for p in docs.PACKAGES for rel in p.pdfs][: args.limit_docs]
    totals = {"pages": 0, "rosetta": 0.0, "pdftotext": 0.0, "pdfplumber": 0.0, "honesty": 0.0}
    edits = chars = 0
    worst: list[tuple[float, str, int]] = []
    print(f"{'document':52} {'pages':>5} {'rosetta p/s':>11} {'pdftotext p/s':>13} {'plumber p/s':>11} {'CER %':>6}")
    for lang, pdf in pdfs:
        start = time.process_time()
        doc = extract.extract_file(pdf, settings, doc_id=pdf.stem)
        rosetta = time.process_time() - start
        n = len(doc.pages)
        reference, poppler = pdftotext_pages(pdf, n)
        plumber = pdfplumber_pages(pdf)
        totals["honesty"] += honesty_check_seconds(pdf)
        d_edits = d_chars = 0
        for page, ref in zip(doc.pages, reference):
            if page.direction != "horizontal" or page.method != "text_layer":
                continue
            truth, hyp = scan_pages.normalise(ref), scan_pages.normalise(page.text)
            e = scan_pages.edit_distance(truth, hyp)
            d_edits, d_chars = d_edits + e, d_chars + len(truth)
            worst.append((100 * e / max(len(truth), 1), pdf.name, page.page_no))
        edits, chars = edits + d_edits, chars + d_chars
        for key, value in (("pages", n), ("rosetta", rosetta), ("pdftotext", poppler), ("pdfplumber", plumber)):
            totals[key] += value
        label = f"{lang}: {pdf.relative_to(docs.UNPACKED).parts[0]}/{pdf.name}"
        print(f"{label:52} {n:5d} {n / rosetta:11.1f} {n / poppler:13.1f} {n / plumber:11.1f} "
              f"{100 * d_edits / max(d_chars, 1):6.2f}")
    n = totals["pages"]
    print(f"{'TOTAL':52} {n:5d} {n / totals['rosetta']:11.1f} {n / totals['pdftotext']:13.1f} "
          f"{n / totals['pdfplumber']:11.1f} {100 * edits / max(chars, 1):6.2f}")
    print(f"Rosetta / pdfplumber-alone speed: {totals['pdfplumber'] / totals['rosetta']:.1f}x; "
          f"Rosetta / pdftotext: {totals['pdftotext'] / totals['rosetta']:.2f}x")
    print(f"text-layer check: {100 * totals['honesty'] / totals['rosetta']:.2f} % of Rosetta's extraction time "
          f"({1000 * totals['honesty'] / n:.3f} ms/page)")
    print("worst pages (CER %):", ", ".join(f"{name} p{no} {c:.1f}" for c, name, no in sorted(worst)[-5:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
