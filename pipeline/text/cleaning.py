"""Cleaning extracted pages: running headers and footers, page numbers, watermarks and
garbage (symbol soup anywhere; OCR garbage in OCRed lines, pipeline.text.garbage) are removed,
each removal recorded with its page, line, block position and reason.

A watermark is told by its rendering (pipeline.extraction.watermarks marks the text layer's
blocks drawn turned, light, large, over the text); only in OCRed text, which has no rendering,
is a short line in the body of nearly every page taken for one by repeating.

Running matter behaves like it: the same text (numbers folded, Arabic, full-width and Han
alike) near the top or bottom of many pages, inside the page's edge band. Structure is not
running matter: a line a registered clause form opens (Article 7, § 3, 第七条) keeps its
number in its identity, so "Article 1" ... "Article 30" are thirty lines, not one repeated;
such a line in the body of a page is never removed, and at the page's edge only when it repeats
exactly (a running header naming the current §), or when it is a running head copying the heading
of the clause the page is in (KOMA-Script's "§ 6 Erwerb der Mitgliedschaft" above the page where
§ 6 begins): the same line again elsewhere in the document, the copy nearest the page's edge, at
the same place on many pages.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict

from pipeline.config import Settings
from pipeline.contracts import Block, ExtractedDocument, Page, RemovedSpan
from pipeline.text.clauses import match_any
from pipeline.text.garbage import is_ocr_garbage, is_symbol_soup
from pipeline.text.langid import CJK, KANA

FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
SPACES = re.compile(r"\s+")
DIGITS = re.compile(r"\d+")
POSITION_TOLERANCE = 6.0  # points: a running line keeps its place on the page to within this
HAN_NUMBER = re.compile(r"[〇零一二三四五六七八九十百千两兩]+")
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
    """A line's identity across pages: spaces squeezed, numbers folded (Arabic, full-width and
    Han numerals alike, so "- 3 -", "－３－" and "第三页" each repeat), except in a line a
    clause form opens: that line is its number."""
    folded = SPACES.sub(" ", unicodedata.normalize("NFKC", line).translate(FULLWIDTH_DIGITS).strip().lower())
    if match_any(line.strip()):
        return folded
    return HAN_NUMBER.sub("#", DIGITS.sub("#", folded))


def _edge_key(line: str, block: Block) -> str:
    """The identity of a line near a page's edge: a clause heading also by where it sits (a
    running header repeating the current § keeps its place; the § heading itself does not)."""
    key = _normalise(line)
    return f"{key}@{round(block.bbox[1] / POSITION_TOLERANCE)}" if match_any(line.strip()) else key


def _in_edge_band(block: Block, page: Page, band: float) -> bool:
    """Whether the block sits in the top or bottom ``band`` of the page (where running
    headers and footers live); a page without a size puts every block there."""
    if page.height <= 0:
        return True
    return block.bbox[1] <= band * page.height or block.bbox[3] >= (1 - band) * page.height


def _latin_script(doc: ExtractedDocument) -> bool:
    """Whether the document is written in Latin letters more than in Han and kana: OCR garbage
    is judged before the language is known, and Han read off dust is garbage only there."""
    text = "".join(page.text for page in doc.pages)
    cjk = len(CJK.findall(text)) + len(KANA.findall(text))
    return sum(ch.isascii() and ch.isalpha() for ch in text) > cjk


PageLines = dict[int, list[tuple[str, Block, bool]]]  # page -> its lines (text, block, in the edge band)


def _repeated(pages_seen: set[int], n_pages: int, fraction: float, min_pages: int) -> bool:
    return len(pages_seen) >= min_pages and len(pages_seen) >= fraction * n_pages


def _running_heads(page_lines: PageLines, fraction: float, min_pages: int) -> set[tuple[int, int]]:
    """(page, line index) of the running heads that copy a clause heading of the text: a clause
    line among a page's first or last three, in the edge band, whose text occurs again in the
    document, the copy nearest that edge, at a place where such copies sit on many pages."""
    keys_of = {page_no: [_normalise(line) for line, _, _ in lines] for page_no, lines in page_lines.items()}
    occurrences = Counter(key for keys in keys_of.values() for key in keys)
    slots: dict[int, set[int]] = defaultdict(set)
    candidates: list[tuple[int, int, int]] = []
    for page_no, lines in page_lines.items():
        keys = keys_of[page_no]
        for i, (line, block, in_band) in enumerate(lines):
            nearest_top = i < 3 and keys.index(keys[i]) == i
            nearest_bottom = i >= len(keys) - 3 and keys[::-1].index(keys[i]) == len(keys) - 1 - i
            if in_band and (nearest_top or nearest_bottom) and occurrences[keys[i]] >= 2 and match_any(line.strip()):
                slot = round(block.bbox[1] / POSITION_TOLERANCE)
                slots[slot].add(page_no)
                candidates.append((page_no, i, slot))
    return {(page_no, i) for page_no, i, slot in candidates
            if _repeated(slots[slot], len(page_lines), fraction, min_pages)}


KeptBlock = tuple[str, str]  # (text, kind) where kind is "text" or "table"


def clean_pages(doc: ExtractedDocument, settings: Settings) -> tuple[list[tuple[int, list[KeptBlock]]], list[RemovedSpan]]:
    """Each page's kept blocks (lines removed inside them), and what was removed with why."""
    cfg = settings.cleaning
    n_pages = len(doc.pages)
    edge_pages: dict[str, set[int]] = defaultdict(set)  # lines near the top/bottom of pages
    any_pages: dict[str, set[int]] = defaultdict(set)
    # per page: each non-blank line with whether its block sits in the page's edge band
    page_lines = {p.page_no: [(l, b, _in_edge_band(b, p, cfg.edge_band)) for b in p.blocks
                              for l in b.text.splitlines() if l.strip()] for p in doc.pages}
    for page_no, lines in page_lines.items():
        for i, (line, block, in_band) in enumerate(lines):
            any_pages[_normalise(line)].add(page_no)
            if (i < 3 or i >= len(lines) - 3) and in_band:
                edge_pages[_edge_key(line, block)].add(page_no)

    def repeated(pages_seen: set[int], fraction: float) -> bool:
        return _repeated(pages_seen, n_pages, fraction, cfg.repeat_min_pages)

    running_heads = _running_heads(page_lines, cfg.repeat_min_fraction, cfg.repeat_min_pages)
    latin = _latin_script(doc)

    removed: list[RemovedSpan] = []
    kept_pages: list[tuple[int, list[KeptBlock]]] = []
    for page in doc.pages:
        n_lines = len(page_lines[page.page_no])
        index = 0  # line index within the page, across blocks
        kept_blocks: list[KeptBlock] = []
        for block in page.blocks:
            kept: list[str] = []
            in_band = _in_edge_band(block, page, cfg.edge_band)
            for line in (l for l in block.text.splitlines() if l.strip()):
                key = _normalise(line)
                at_edge = (index < 3 or index >= n_lines - 3) and in_band
                line_no = index
                index += 1
                reason = None
                if block.kind == "table":
                    pass  # table cells repeat by nature (units, yes/no); keep them whole
                elif block.watermark and not match_any(line.strip()):
                    reason = "watermark"  # drawn like one (turned, light, large, over the text)
                elif at_edge and PAGE_NUMBER.match(unicodedata.normalize("NFKC", line)):
                    reason = "page_number"
                elif (at_edge and repeated(edge_pages[_edge_key(line, block)], cfg.repeat_min_fraction)) or \
                        (page.page_no, line_no) in running_heads:
                    reason = "running_header_footer"
                elif match_any(line.strip()):
                    pass  # structure in the body of a page: never running matter
                elif block.method != "text_layer" and repeated(any_pages[key], max(cfg.repeat_min_fraction, 0.8)) \
                        and len(key) < 80:
                    reason = "watermark"  # OCRed text has no rendering to tell: the same short line mid-page
                elif is_symbol_soup(line, cfg.garbage_max_symbol_ratio) or \
                        ((block.method or page.method) == "ocr" and is_ocr_garbage(line, latin)):
                    reason = "ocr_garbage"  # OCR garbage: specks, figures and formulas read as lines
                if reason:
                    removed.append(RemovedSpan(page_no=page.page_no, text=line, reason=reason,  # type: ignore[arg-type]
                                               line_no=line_no, bbox=block.bbox))
                else:
                    kept.append(line.strip())
            if kept:
                kept_blocks.append(("\n".join(kept), block.kind))
        kept_pages.append((page.page_no, kept_blocks))
    return kept_pages, removed
