#!/usr/bin/env python3
"""Line-end hyphens on real PDFs: how each one PDFium marks is decided (pipeline.extraction.hyphens),
and every decision that differs from the rule before the document's words were counted
(between two lower-case letters a broken word, else a hyphen; a hyphen PDFium did not mark,
shown ``-|``, was left as printed), to be read by hand.

Each PDF of the folders (its first 80 pages) is read by PDFium as the extract stage reads it
(``page_chars``, ``clean_text``); a page's text stands for its blocks. Prints the sites, how many
each step decided (the document's words, a conjunction, the lower-case rule), and each changed
decision with its file and count.

    .venv/bin/python benchmarks/bench_line_end_hyphens.py samples/robustness samples/library samples/pymupdf
    .venv/bin/python benchmarks/bench_line_end_hyphens.py samples/pdfcpu
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.contracts import Block, Page  # noqa: E402
from pipeline.extraction import hyphens  # noqa: E402
from pipeline.extraction.pdf import clean_text, page_chars, pdfium_document  # noqa: E402

OLD_LOWER = re.compile(r"[a-zà-ÿ]")  # the letters the rule before took for lower-case
MAX_PAGES = 80


def old_rule(left: str, right: str) -> str:
    joins = OLD_LOWER.fullmatch(left[-1]) and OLD_LOWER.fullmatch(right[0])
    return left + right if joins else f"{left}-{right}"


def step(left: str, right: str, words: Counter[str]) -> str:
    if words[hyphens.word_key(left + right)] != words[hyphens.word_key(f"{left}-{right}")]:
        return "words"
    return "conjunction" if right.lower() in hyphens.CONJUNCTIONS else "lower-case rule"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    files = sorted(p for folder in args.folders for p in folder.rglob("*") if p.suffix.lower() == ".pdf")
    steps, changed, unread = Counter(), Counter(), 0
    for number, path in enumerate(files, start=1):
        try:
            document, _ = pdfium_document(path)
            texts = [clean_text(page_chars(document[i]).text).replace("\r\n", "\n")
                     for i in range(min(len(document), MAX_PAGES))]
        except Exception:  # encrypted, broken: the extract stage's quarantine, not this count
            unread += 1
            continue
        pages = [Page(page_no=n, width=1, height=1, method="text_layer", engine="pdfium", direction="horizontal",
                      blocks=[Block(text=text, bbox=(0, 0, 1, 1))]) for n, text in enumerate(texts, start=1)]
        words = hyphens.words_written(pages)
        for text in texts:
            for match in hyphens.BREAK.finditer(text):
                left, right = match.group(1), match.group(2)
                steps[step(left, right, words)] += 1
                # a printed "-" PDFium did not mark (a glyph after it hidden) was left as it stood
                old = f"{left}-|{right}" if "\n" in match.group(0) else old_rule(left, right)
                new = hyphens.across_line_end(left, right, words)
                if new != old:
                    changed[f"{path.relative_to(path.parents[1])}: {old} -> {new}"] += 1
        if number % 100 == 0:
            print(f"{number}/{len(files)} files", file=sys.stderr)
    print(f"{len(files)} files ({unread} not read), {sum(steps.values())} line-end hyphens between letters")
    for name, count in steps.most_common():
        print(f"  decided by {name}: {count}")
    print(f"{sum(changed.values())} decisions changed, in {len({k.split(': ')[0] for k in changed})} files:")
    for site, count in sorted(changed.items()):
        print(f"  {count} x {site}")


if __name__ == "__main__":
    main()
