#!/usr/bin/env python3
"""Born-digital PDFs with vertical (tategaki) text layers, typeset by Japanese TeX engines
from real text, with their truth (one paragraph per line, a heading's line marked by ``# ``); and the CER Rosetta's extraction reaches on them.

Text: body paragraphs and section headings of the pinned maint-guide packages in ja,
zh-cn and zh-tw (scripts/fetch_doc_packages.py). Paragraphs whose ASCII TeX would change
(quotes and dashes it turns into typographic ones, its special characters) are left out,
so the truth is exactly the text that is printed. Each language's paragraphs are split in
two: the ``tuning`` half (the first) for working on the reader, the ``measurement`` half
(the second) for the committed fixtures and the figures in docs/benchmarks.md.

Page kinds, per language (Debian's texlive-lang-japanese, texlive-luatex):

    lualatex-1tier   LuaLaTeX + luatexja ``ltjtarticle`` (A5), Noto Serif CJK JP/SC/TC
                     embedded: a section heading, then paragraphs in one tier
    lualatex-2tier   the same in two tiers (``twocolumn``: 二段組, A4), two headings
    lualatex-numbered  (ja only) one A5 tier with its page number (12) set horizontally under it
    uplatex-1tier    (ja only) upLaTeX ``utarticle`` + dvipdfmx (A4): the classic Japanese
                     TeX route, with its non-embedded Ryumin-Light/GothicBBB-Medium CID fonts
                     and a content stream that is not in reading order

Punctuation takes its vertical forms (︒ ︑ ﹁ ﹂ ︵ ︶ in the text layer), ー its vertical
glyph; Latin words are set sideways.

    .venv/bin/python scripts/make_vertical_text_pdfs.py                 # fixtures (measurement half)
    .venv/bin/python scripts/make_vertical_text_pdfs.py --split tuning --out /tmp/vt-tuning
    .venv/bin/python scripts/make_vertical_text_pdfs.py --measure [DIR]   # CER per PDF
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import fetch_doc_packages as docs
import render_scans
import scan_pages

OUT = docs.ROOT / "tests" / "fixtures" / "vertical-layer"
PACKAGES = {"ja": "maint-guide-ja", "zh-cn": "maint-guide-zh-cn", "zh-tw": "maint-guide-zh-tw"}
FONTS = {"ja": "Noto Serif CJK JP", "zh-cn": "Noto Serif CJK SC", "zh-tw": "Noto Serif CJK TC"}
# ASCII that TeX prints as something else (’ ” – ¡ ...) or treats as markup
TEX_CHANGES = re.compile(r"[\\{}$&#^_%~<>|`'\"@]|--")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
HEADING = re.compile(r"^\s*\d+(?:\.\d+)+\.\s+(.+)$")
HEADING_MARK = "# "  # starts a heading's line in the truth files
# characters per page kind: one A5 tier holds ~520, two A4 tiers ~2400
BUDGET = {"lualatex-1tier": 480, "lualatex-2tier": 1500, "uplatex-1tier": 1500, "lualatex-numbered": 400}
FIRST_PAGE = 12  # the numbered page's number, set horizontally under the text


def texts(lang: str) -> tuple[list[str], list[str]]:
    """Printable paragraphs and section headings of a language's maint-guide."""
    import gzip

    package = next(p for p in docs.PACKAGES if p.name == PACKAGES[lang])
    path = docs.fetch([package.name])[package.name] / package.text
    paragraphs = [p for p in render_scans.read_paragraphs(path) if not TEX_CHANGES.search(p) and CJK.search(p)]
    lines = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    headings = list(dict.fromkeys(m.group(1).strip() for line in lines if (m := HEADING.match(line))
                                  and CJK.search(m.group(1)) and not TEX_CHANGES.search(m.group(1))))
    return paragraphs, headings


def half(items: list[str], split: str) -> list[str]:
    return items[:len(items) // 2] if split == "tuning" else items[len(items) // 2:]


def take(paragraphs: list[str], budget: int, start: int) -> tuple[list[str], int]:
    """Whole paragraphs from ``start`` while they fit the budget (at least one)."""
    used, total, i = [], 0, start
    while i < len(paragraphs) and (not used or total + len(paragraphs[i]) <= budget):
        used.append(paragraphs[i])
        total += len(paragraphs[i])
        i += 1
    return used, i


def tex_source(kind: str, lang: str, parts: list[tuple[str, list[str]]]) -> str:
    body = "\n\n".join(f"\\section*{{{heading}}}\n\n" + "\n\n".join(paragraphs) for heading, paragraphs in parts)
    if kind.startswith("uplatex"):
        head = "\\documentclass[uplatex,a4paper]{utarticle}\n\\usepackage[T1]{fontenc}\n\\usepackage{lmodern}\n"
    else:
        options = "a4paper,twocolumn" if kind.endswith("2tier") else "a5paper"
        head = (f"\\documentclass[{options}]{{ltjtarticle}}\n\\usepackage{{luatexja-fontspec}}\n"
                f"\\setmainjfont{{{FONTS[lang]}}}\n\\setsansjfont{{{FONTS[lang].replace('Serif', 'Sans')}}}\n")
    style = f"\\pagestyle{{plain}}\\setcounter{{page}}{{{FIRST_PAGE}}}" if kind.endswith("numbered") else "\\pagestyle{empty}"
    return head + style + "\n\\begin{document}\n" + body + "\n\\end{document}\n"


def typeset(source: str, kind: str, out_pdf: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tex = Path(tmp) / "page.tex"
        tex.write_text(source, encoding="utf-8")
        steps = ([["uplatex", "-interaction=nonstopmode", "page.tex"], ["dvipdfmx", "page.dvi"]]
                 if kind.startswith("uplatex") else [["lualatex", "-interaction=nonstopmode", "page.tex"]])
        env = {"SOURCE_DATE_EPOCH": "1767225600", "FORCE_SOURCE_DATE": "1", "PATH": "/usr/bin:/bin"}
        for step in steps:
            run = subprocess.run(step, cwd=tmp, capture_output=True, text=True, env=env)
            if run.returncode != 0:
                raise RuntimeError(f"{' '.join(step)} failed:\n{run.stdout[-2000:]}")
        # LuaTeX hashes the job's path into the file ID: a fixed one keeps reruns byte-identical
        data = (Path(tmp) / "page.pdf").read_bytes()
        out_pdf.write_bytes(re.sub(rb"(?<=/ID \[ <)[0-9A-F]+> <[0-9A-F]+(?=> \])",
                                   lambda m: re.sub(rb"[0-9A-F]", b"0", m.group()), data))


def make(out: Path, split: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for lang in PACKAGES:
        paragraphs, headings = (half(items, split) for items in texts(lang))
        kinds = ["lualatex-1tier", "lualatex-2tier"] + (["uplatex-1tier", "lualatex-numbered"] if lang == "ja" else [])
        start = 0
        for number, kind in enumerate(kinds):
            n_headings = 2 if kind.endswith("2tier") or kind.startswith("uplatex") else 1
            parts = []
            for h in range(n_headings):
                used, start = take(paragraphs, BUDGET[kind] // n_headings, start)
                parts.append((headings[2 * number + h], used))
            name = f"{lang}-{kind}"
            typeset(tex_source(kind, lang, parts), kind, out / f"{name}.pdf")
            truth = [line for heading, used in parts for line in (f"{HEADING_MARK}{heading}", *used)]
            truth += [str(FIRST_PAGE)] if kind.endswith("numbered") else []
            (out / f"{name}.txt").write_text("\n".join(truth) + "\n", encoding="utf-8")
            written += [out / f"{name}.pdf", out / f"{name}.txt"]
            print(f"wrote {name}.pdf: {len(truth)} heading(s) and paragraph(s)")
    return written


def read_truth(pdf: Path) -> str:
    """The printed text of a fixture: its truth file without the heading marks."""
    lines = pdf.with_suffix(".txt").read_text(encoding="utf-8").splitlines()
    return "\n".join(line.removeprefix(HEADING_MARK) for line in lines)


def measure(folder: Path) -> int:
    from pipeline.config import get_settings
    from pipeline.stages.extract import extract_file

    settings = get_settings()
    print(f"{'pdf':32} {'pages':>5} {'chars':>6} {'CER %':>6} {'s':>6}")
    for pdf in sorted(folder.glob("*.pdf")):
        truth = read_truth(pdf)
        started = time.process_time()
        doc = extract_file(pdf, settings)
        seconds = time.process_time() - started
        text = "\n".join(p.text for p in doc.pages)
        print(f"{pdf.name:32} {len(doc.pages):5d} {len(scan_pages.normalise(truth)):6d} "
              f"{scan_pages.cer(truth, text):6.2f} {seconds:6.2f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--split", choices=["tuning", "measurement"], default="measurement")
    ap.add_argument("--measure", type=Path, nargs="?", const=OUT, help="print CER of the PDFs in this folder")
    args = ap.parse_args(argv)
    if args.measure:
        return measure(args.measure)
    make(args.out, args.split)
    return 0


if __name__ == "__main__":
    sys.exit(main())
