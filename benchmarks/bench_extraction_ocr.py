#!/usr/bin/env python3
"""OCR benchmark: CER and CPU s/page of Rosetta's extraction on scan-like page kinds.

Renders 28 image-only pages at 300 dpi (scripts/scan_pages.py) from real paragraphs of
the Debian New Maintainers' Guide in ja, zh-cn, zh-tw, en, de, es (pinned, sha256-
checked packages, scripts/fetch_doc_packages.py): vertical single- and two-tier,
horizontal, two-column, and pages turned by 90/180/270 degrees, at 10-18 pt in serif
and sans faces. Each page goes through ``extract.extract_file`` (the stage itself);
CER is against the printed paragraphs (NFKC, whitespace ignored); CPU is this process's
plus its children's (Tesseract) CPU seconds. Rotated pages are printed next to their
upright twin (same text, same seed). Figures are printed, never asserted.

    .venv/bin/python benchmarks/bench_extraction_ocr.py [--only KIND-SUBSTRING] [--keep DIR]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import fetch_doc_packages as docs  # noqa: E402
import render_scans  # noqa: E402
import scan_pages  # noqa: E402
from scan_pages import PageSpec  # noqa: E402

from pipeline.stages import extract  # noqa: E402
from pipeline.config import load_settings  # noqa: E402

# (spec, first paragraph index): each page takes whole paragraphs from that index on.
PAGES: list[tuple[PageSpec, int]] = [
    (PageSpec("ja", "vertical", 12, "serif"), 5),
    (PageSpec("ja", "vertical", 10, "sans"), 60),
    (PageSpec("ja", "vertical-2tier", 11, "serif"), 120),
    (PageSpec("zh-cn", "vertical", 12, "sans"), 5),
    (PageSpec("zh-cn", "vertical", 16, "serif"), 60),
    (PageSpec("zh-cn", "vertical-2tier", 11, "serif"), 120),
    (PageSpec("zh-tw", "vertical", 14, "serif"), 5),
    (PageSpec("zh-tw", "vertical", 12, "sans"), 60),
    (PageSpec("zh-tw", "vertical-2tier", 11, "sans"), 120),
    (PageSpec("ja", "horizontal", 12, "sans"), 30),
    (PageSpec("zh-cn", "horizontal", 12, "serif"), 30),
    (PageSpec("zh-tw", "horizontal", 18, "sans"), 30),
    (PageSpec("en", "horizontal", 11, "serif"), 5),
    (PageSpec("en", "horizontal", 18, "sans"), 60),
    (PageSpec("de", "horizontal", 12, "sans"), 5),
    (PageSpec("de", "horizontal", 10, "serif"), 60),
    (PageSpec("es", "horizontal", 12, "serif"), 5),
    (PageSpec("es", "horizontal", 14, "sans"), 60),
    (PageSpec("en", "two-column", 10, "serif"), 90),
    (PageSpec("de", "two-column", 10, "sans"), 90),
    (PageSpec("ja", "two-column", 10, "serif"), 90),
    (PageSpec("zh-cn", "two-column", 10, "sans"), 90),
    # rotated twins of pages above (same text and seed)
    (PageSpec("en", "horizontal", 11, "serif", 90), 5),
    (PageSpec("de", "horizontal", 12, "sans", 180), 5),
    (PageSpec("es", "horizontal", 12, "serif", 270), 5),
    (PageSpec("zh-cn", "horizontal", 12, "serif", 270), 30),
    (PageSpec("ja", "vertical", 12, "serif", 180), 5),
    (PageSpec("zh-tw", "vertical", 14, "serif", 90), 5),
]


def cpu_now() -> float:
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime


def group(spec: PageSpec) -> str:
    script = {"ja": "ja", "zh-cn": "zh-cn", "zh-tw": "zh-tw"}.get(spec.lang, "latin")
    return f"{spec.layout} {script}" + (" rotated" if spec.rotate else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="run only pages whose kind or language contains this")
    ap.add_argument("--keep", type=Path, help="keep the rendered PDFs and truths here")
    args = ap.parse_args(argv)
    settings = load_settings()
    roots = docs.fetch([p.name for p in docs.PACKAGES if p.text])
    texts = {p.lang: render_scans.read_paragraphs(roots[p.name] / p.text) for p in docs.PACKAGES if p.text}
    work = args.keep or Path(tempfile.mkdtemp(prefix="rosetta-ocr-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    from pipeline.ocr import engines

    engines._rapidocr()._load_rec_model()  # model loading is not per-page work
    rows = []
    upright: dict[tuple, float] = {}
    print(f"{'page':44} {'CER %':>6} {'CPU s':>6}  engine / rotation found")
    for seed, (spec, first) in enumerate(PAGES):
        if args.only and args.only not in f"{spec.lang} {spec.kind}":
            continue
        name = f"{spec.lang}-{spec.kind}-{spec.size_pt:g}pt-{spec.face}"
        pdf = work / f"{name}.pdf"
        twin = (spec.lang, spec.layout, spec.size_pt, spec.face, first)
        truth = scan_pages.render_page(texts[spec.lang][first:], spec, pdf, seed=zlib.crc32(repr(twin).encode()) % 1000)
        start = cpu_now()
        doc = extract.extract_file(pdf, settings, doc_id=name)
        cpu = cpu_now() - start
        page = doc.pages[0]
        error = scan_pages.cer("\n".join(truth), page.text)
        (work / f"{name}.txt").write_text("\n".join(truth) + "\n", encoding="utf-8")
        rows.append((spec, error, cpu))
        note = ""
        if spec.rotate:
            ref = upright.get(twin)
            note = f" (upright {ref:.2f}, diff {error - ref:+.2f})" if ref is not None else ""
        else:
            upright[twin] = error
        print(f"{name:44} {error:6.2f} {cpu:6.2f}  {page.engine} / {page.direction} rot {page.rotation}{note}")
    by_group: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for spec, error, cpu in rows:
        by_group[group(spec)].append((error, cpu))
    print(f"\n{'page kind':34} {'pages':>5} {'CER %':>6} {'max':>6} {'CPU s/page':>10}")
    for kind, values in sorted(by_group.items()):
        errors, cpus = [e for e, _ in values], [c for _, c in values]
        print(f"{kind:34} {len(values):5d} {sum(errors) / len(errors):6.2f} {max(errors):6.2f} "
              f"{sum(cpus) / len(cpus):10.2f}")
    if rows:
        print(f"{'ALL':34} {len(rows):5d} {sum(e for _, e, _ in rows) / len(rows):6.2f} "
              f"{max(e for _, e, _ in rows):6.2f} {sum(c for _, _, c in rows) / len(rows):10.2f}")
    print(f"pages and truths in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
