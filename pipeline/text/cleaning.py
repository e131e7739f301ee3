"""Cleaning extracted pages: running headers and footers, page numbers, repeated
watermarks and OCR garbage are removed, each removal recorded with its page and reason.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict

from pipeline.config import Settings
from pipeline.contracts import ExtractedDocument, RemovedSpan

FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
SPACES = re.compile(r"\s+")
DIGITS = re.compile(r"\d+")
NUMERIC_ONLY = re.compile(r"[\d.,:;%()\-–/+]+")
# Page-number lines in the five languages: "Page 3 of 10", "- 3 -", "Seite 3", "Página 3",
# "第3页", "第 3 頁", "3 / 10", "p. 3", bare numbers, roman numerals.
PAGE_NUMBER = re.compile(
    r"^\s*(?:"
    r"(?:page|seite|página|pagina|p\.|s\.|pág\.)\s*\d+(?:\s*(?:of|von|de|/)\s*\d+)?"
    r"|[-–—]\s*\d+\s*[-–—]"
    r"|第\s*\d+\s*[页頁]"
    r"|\d+\s*(?:/|of|von|de)\s*\d+"
    r"|\d+"
    r"|[ivxlcdm]+"
    r")\s*$",
    re.IGNORECASE,
)


def _normalise(line: str) -> str:
    """A line's identity across pages: digits folded, spaces squeezed."""
    line = unicodedata.normalize("NFKC", line).translate(FULLWIDTH_DIGITS)
    return DIGITS.sub("#", SPACES.sub(" ", line.strip().lower()))


def is_garbage(line: str, max_symbol_ratio: float) -> bool:
    stripped = line.replace(" ", "")
    if not stripped:
        return False
    letters = sum(1 for ch in stripped if ch.isalpha())
    if letters == 0:
        return len(stripped) >= 3 and not NUMERIC_ONLY.fullmatch(stripped)
    symbols = sum(1 for ch in stripped if not (ch.isalnum() or ch in ".,;:!?()[]\"'«»“”„-–—/%&§。、，．！？：；（）「」『』・ー〜"))
    return symbols / len(stripped) > max_symbol_ratio


KeptBlock = tuple[str, str]  # (text, kind) where kind is "text" or "table"


def clean_pages(doc: ExtractedDocument, settings: Settings) -> tuple[list[tuple[int, list[KeptBlock]]], list[RemovedSpan]]:
    """Each page's kept blocks (lines removed inside them), and what was removed with why."""
    cfg = settings.cleaning
    n_pages = len(doc.pages)
    edge_pages: dict[str, set[int]] = defaultdict(set)  # lines near the top/bottom of pages
    any_pages: dict[str, set[int]] = defaultdict(set)
    page_lines = {p.page_no: [l for b in p.blocks for l in b.text.splitlines() if l.strip()] for p in doc.pages}
    for page_no, lines in page_lines.items():
        for i, line in enumerate(lines):
            key = _normalise(line)
            any_pages[key].add(page_no)
            if i < 3 or i >= len(lines) - 3:
                edge_pages[key].add(page_no)

    def repeated(pages_seen: set[int], fraction: float) -> bool:
        return len(pages_seen) >= cfg.repeat_min_pages and len(pages_seen) >= fraction * n_pages

    removed: list[RemovedSpan] = []
    kept_pages: list[tuple[int, list[KeptBlock]]] = []
    for page in doc.pages:
        n_lines = len(page_lines[page.page_no])
        index = 0  # line index within the page, across blocks
        kept_blocks: list[KeptBlock] = []
        for block in page.blocks:
            kept: list[str] = []
            for line in (l for l in block.text.splitlines() if l.strip()):
                key = _normalise(line)
                at_edge = index < 3 or index >= n_lines - 3
                index += 1
                reason = None
                if block.kind == "table":
                    pass  # table cells repeat by nature (units, yes/no); keep them whole
                elif at_edge and PAGE_NUMBER.match(unicodedata.normalize("NFKC", line)):
                    reason = "page_number"
                elif at_edge and repeated(edge_pages[key], cfg.repeat_min_fraction):
                    reason = "running_header_footer"
                elif repeated(any_pages[key], max(cfg.repeat_min_fraction, 0.8)) and len(key) < 80:
                    reason = "watermark"  # the same short line in the body of nearly every page
                elif is_garbage(line, cfg.garbage_max_symbol_ratio):
                    reason = "ocr_garbage"
                if reason:
                    removed.append(RemovedSpan(page_no=page.page_no, text=line, reason=reason))  # type: ignore[arg-type]
                else:
                    kept.append(line.strip())
            if kept:
                kept_blocks.append(("\n".join(kept), block.kind))
        kept_pages.append((page.page_no, kept_blocks))
    return kept_pages, removed
