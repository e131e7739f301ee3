"""What OCR costs as a page grows: one PDF page rendered to several sizes (megapixels) and
read by the OCR route (pipeline.extraction.scans.ocr_blocks), each size in a fresh process so
that its peak resident memory is its own.

    .venv/bin/python benchmarks/bench_page_size.py [PDF] [--page 1] [--megapixels 8.7 35 70 140]

Prints, per size, the peak memory and the seconds, and their ratios to the first size (the
A4 page at 300 dpi is 8.7 megapixels). A bigger page costs memory in proportion to its pixels
whatever it shows, so the page here stands for a poster or a drawing of that size; what to
read is memory per megapixel against the stage worker's cap (limits.rss_mib), which sets
extraction.ocr_max_megapixels (docs/extraction.md, "Pages too big to read at full resolution").
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(pdf: Path, page_no: int, megapixels: float) -> dict:
    """In this process: render the page to ``megapixels`` and OCR it."""
    import pypdfium2 as pdfium

    from pipeline.config import get_settings
    from pipeline.extraction.scans import ocr_blocks

    settings = get_settings()
    document = pdfium.PdfDocument(pdf)
    page = document[page_no - 1]
    width, height = page.get_size()
    scale = math.sqrt(megapixels * 1e6 / (width * height))
    started = time.perf_counter()
    pixels = page.render(scale=scale, grayscale=True).to_numpy()
    gray = pixels[..., 0].copy() if pixels.ndim == 3 else pixels.copy()
    del pixels
    blocks, _ = ocr_blocks(gray, scale, (0.0, 0.0), settings)
    return {"megapixels": gray.size / 1e6, "dpi": scale * 72, "seconds": time.perf_counter() - started,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "characters": sum(len(b.text) for b in blocks)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pdf", nargs="?", type=Path, default=ROOT / "samples" / "corpus" / "en" / "maint-guide.pdf")
    parser.add_argument("--page", type=int, default=1)
    parser.add_argument("--megapixels", type=float, nargs="+", default=[8.7, 35.0, 70.0, 140.0])
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # the child's run
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.pdf, args.page, args.megapixels[0])))
        return 0
    rows = []
    for megapixels in args.megapixels:
        child = subprocess.run([sys.executable, __file__, str(args.pdf), "--page", str(args.page), "--megapixels",
                                str(megapixels), "--one"], capture_output=True, text=True, cwd=ROOT)
        if child.returncode:
            print(f"{megapixels:g} MP: failed (exit {child.returncode}): {child.stderr.strip()[-500:]}", flush=True)
            continue
        rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
        row = rows[-1]
        print(f"{row['megapixels']:6.1f} MP ({row['dpi']:4.0f} dpi): peak {row['peak_mib']:6.0f} MiB, "
              f"{row['seconds']:6.1f} s, {row['characters']} characters", flush=True)
    if not rows:
        return 1
    base = rows[0]
    print(f"\nagainst {base['megapixels']:.1f} MP: megapixels / peak memory / seconds; peak MiB per megapixel above it")
    for row in rows:
        above = (row["peak_mib"] - base["peak_mib"]) / max(row["megapixels"] - base["megapixels"], 1e-9)
        print(f"  {row['megapixels'] / base['megapixels']:5.1f}x / {row['peak_mib'] / base['peak_mib']:5.2f}x / "
              f"{row['seconds'] / base['seconds']:5.2f}x" + (f"; {above:.0f} MiB/MP" if row is not base else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
