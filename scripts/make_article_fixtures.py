#!/usr/bin/env python3
"""Print a declaration-shaped document per language: a title, a preamble and 30 numbered
articles, each heading in its language's official style, each article's text real paragraphs
taken in order from the Debian New Maintainers' Guide in that language (the sample corpus's
text files, maint-guide*.txt.gz of the pinned packages in scripts/fetch_doc_packages.py).

The page is plain HTML printed by headless Chromium (A4, the browser's default margins, no
header/footer), as a browser prints a web page, with the headings drawn in the ways such pages
draw them: a plain paragraph, an <h3>, centred bold, bold at the start of the article's first
sentence ("Article 3 One thing is certain ..."). Articles 7, 13 and 19 begin a new page (the
heading is the page's first line, in the top band, where each page's heading sits at the same
place), and article 24's heading is pushed to the last line of its page (the bottom band): a
first print finds where it falls, a second adds the space above it.

    en "Article 1"   de "Artikel 1"   es "Artículo 1"   zh "第一条"   ja "第１条"   ja-kanji "第一条"

Written to tests/fixtures/articles/<name>.html (13-17 KB each; 6-7 pages once printed);
tests/test_printed_articles.py prints them with Chromium at test time (the printed CJK pages are
about 0.5 MB each: Chromium draws Noto CJK as Type 3 glyphs) and checks the layout above still
holds. Rerunning gives the same pages (the space above article 24 depends on the Chromium and font
versions; rerun this when the test says the heading moved).

    .venv/bin/python scripts/make_article_fixtures.py
"""

from __future__ import annotations

import gzip
import html
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pypdfium2 as pdfium

from fetch_doc_packages import PACKAGES, fetch_one

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "articles"
ARTICLES = 30
NEW_PAGE = (7, 13, 19)  # headings at the top of a page
PAGE_BOTTOM = 24  # heading on the last line of its page
INLINE = (3, 9, 16, 22, 28)  # heading and first sentence on one line
HAN = "〇一二三四五六七八九"


def han(n: int) -> str:
    tens, ones = divmod(n, 10)
    return ("" if tens == 0 else "十" if tens == 1 else HAN[tens] + "十") + (HAN[ones] if ones or not tens else "")


def full_width(n: int) -> str:
    return "".join(chr(ord(d) - ord("0") + ord("０")) for d in str(n))


# name: (package, lang, heading, preamble heading)
DOCUMENTS = {
    "en": ("maint-guide", "en", lambda n: f"Article {n}", "Preamble"),
    "de": ("maint-guide-de", "de", lambda n: f"Artikel {n}", "Präambel"),
    "es": ("maint-guide-es", "es", lambda n: f"Artículo {n}", "Preámbulo"),
    "zh": ("maint-guide-zh-cn", "zh-CN", lambda n: f"第{han(n)}条", "序言"),
    "ja": ("maint-guide-ja", "ja", lambda n: f"第{full_width(n)}条", "前文"),
    "ja-kanji": ("maint-guide-ja", "ja", lambda n: f"第{han(n)}条", "前文"),
}
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def paragraphs(package: str) -> tuple[str, list[str]]:
    """The guide's title and its prose paragraphs from chapter 1 on, in order: blocks indented
    by four spaces (not list items, commands or footnotes), lines joined as the text flows."""
    pkg = next(p for p in PACKAGES if p.name == package)
    text = gzip.decompress((fetch_one(pkg) / pkg.text).read_bytes()).decode("utf-8").replace("\xa0", " ")  # the text rendering indents with no-break spaces
    lines = text.splitlines()
    title = next(line.strip() for line in lines if line.strip())
    toc = next(i for i, line in enumerate(lines) if re.match(r"1\. \S", line))
    chapter = lines[toc][3:].strip()
    body = next(i for i in range(toc + 1, len(lines))
                if chapter in lines[i] and not lines[i].startswith(" "))
    found = []
    for block in re.split(r"\n\s*\n", "\n".join(lines[body + 1:])):
        rows = block.split("\n")
        if not all(re.match(r"    \S", r) for r in rows) or re.match(r"    (?:[*+$#^]|[0-9]+\.)", rows[0]):
            continue
        cjk = CJK.search(block) is not None
        joined = rows[0].strip()
        for row in rows[1:]:  # CJK lines join without a space, except between two Latin words
            row = row.strip()
            joined += " " + row if not cjk or re.search(r"[!-~]$", joined) and re.match(r"[!-~]", row) else row
        joined = re.sub(r" ?\^\[\d+\]", "", joined)
        if len(joined) >= (70 if cjk else 180):
            found.append(joined)
    return title, found


def page_html(name: str, spacer_pt: float = 0.0) -> str:
    package, lang, heading, preamble = DOCUMENTS[name]
    title, paras = paragraphs(package)
    cjk = name in ("zh", "ja", "ja-kanji")
    per_article = [2 if n % 4 == 0 else 1 for n in range(1, ARTICLES + 1)]
    out = [f"<h1 style=\"text-align: center\">{html.escape(title)}</h1>",
           f"<h2 style=\"text-align: center\">{html.escape(preamble)}</h2>"]
    out += [f"<p>{html.escape(p)}</p>" for p in paras[:3]]
    at = 3
    for n in range(1, ARTICLES + 1):
        head, texts = html.escape(heading(n)), [html.escape(p) for p in paras[at:at + per_article[n - 1]]]
        at += per_article[n - 1]
        style = "break-before: page; " if n in NEW_PAGE else ""
        if n == PAGE_BOTTOM and spacer_pt:
            style += f"padding-top: {spacer_pt:.1f}pt; "
        if n in INLINE:
            gap = "　" if cjk else " "
            out.append(f"<p style=\"{style}\"><b>{head}</b>{gap}{texts[0]}</p>")
            texts = texts[1:]
        elif n % 3 == 0:
            out.append(f"<p style=\"{style}text-align: center\"><b>{head}</b></p>")
        elif n % 3 == 1:
            out.append(f"<h3 style=\"{style}\">{head}</h3>")
        else:
            out.append(f"<p style=\"{style}\">{head}</p>")
        out += [f"<p>{t}</p>" for t in texts]
    return (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'</head><body>{"".join(out)}</body></html>')


def print_pdf(page: Path, out: Path) -> None:
    """An HTML file printed by headless Chromium as a browser prints a page (A4, default margins)."""
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    f"--print-to-pdf={out}", page.resolve().as_uri()], check=True, capture_output=True, timeout=300)


def line_boxes(pdf: Path) -> list[list[tuple[str, float, float]]]:
    """Per page, its text lines (text, top, bottom) in points from the page's top: PDFium's text
    rectangles grouped by the line they sit on."""
    doc = pdfium.PdfDocument(str(pdf))
    pages = []
    for page in doc:
        width, height, tp = page.get_width(), page.get_height(), page.get_textpage()
        rows: list[list[float]] = []
        for i in range(tp.count_rects()):
            _, bottom, _, top = tp.get_rect(i)
            row = next((r for r in rows if abs(r[0] - (height - top)) < 4 or abs(r[1] - (height - bottom)) < 4), None)
            if row is None:
                rows.append([height - top, height - bottom])
            else:
                row[0], row[1] = min(row[0], height - top), max(row[1], height - bottom)
        pages.append(sorted((tp.get_text_bounded(0, height - b, width, height - t).strip(), t, b) for t, b in rows))
        pages[-1].sort(key=lambda r: r[1])
    return pages


def make(name: str) -> tuple[Path, int]:
    """The page, printed twice: the second time with the space that puts PAGE_BOTTOM's heading
    on the last line of the page it falls on (checked)."""
    out = OUT / f"{name}.html"
    heading = DOCUMENTS[name][2](PAGE_BOTTOM)
    with tempfile.TemporaryDirectory() as tmp:
        pdf = Path(tmp) / f"{name}.pdf"
        out.write_text(page_html(name), encoding="utf-8")
        print_pdf(out, pdf)
        pages = line_boxes(pdf)
        lowest = max(r[2] for p in pages for r in p)  # the bottom of the lowest line: the content area's end
        where = next(r for p in pages for r in p if r[0].startswith(heading))
        out.write_text(page_html(name, lowest - where[2] - 1.0), encoding="utf-8")
        print_pdf(out, pdf)
        pages = line_boxes(pdf)
        page = next(p for p in pages if any(r[0].startswith(heading) for r in p))
        assert page[-1][0].startswith(heading), (name, page[-1])
        return out, len(pages)


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in DOCUMENTS:
        out, pages = make(name)
        print(f"  {out.relative_to(OUT.parent.parent.parent)}  {pages} pages printed  {out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
