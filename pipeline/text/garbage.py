"""Garbage lines: symbol soup anywhere, and the lines an OCR engine reads off dust, specks,
figures and wrecked print.

Cleaning removes both (OCR garbage from OCRed lines only: a text layer's formulas and code are
not dust), and the QA gate's ``text_present`` counts what is left, with the same rules.

The OCR rules were tuned on tests/fixtures/ocr_garbage.json's ``tuning`` split (English
pages) and are measured on its ``measurement`` split (German, Spanish) by
tests/test_qa_checks.py; the set is real output of the pipeline's OCR route on dusty scans
(scripts/make_ocr_garbage_set.py).
"""

from __future__ import annotations

import re

from pipeline.text.langid import CJK, KANA

NUMERIC_ONLY = re.compile(r"[\d.,:;%()\-–/+]+")
# Punctuation of ordinary text, not counted as symbols.
TEXT_PUNCTUATION = frozenset(".,;:!?()[]\"'«»“”„-–—/%&§。、，．！？：；（）「」『』・ー〜")
FRAGMENT = re.compile(r"^[^\W\d_]{1,2}$")
CJK_LINE_END = "。．，、）)」』】》！？：；"
WORD_BREAK = re.compile(r"[^\w]+")  # CJK text glues "imake(1)、xmkmf(1)" into one space-free token
PAGE_NUMBERS_TAIL = " \t\u00a0\u30000123456789,–-"  # "24, 410" after a dot leader
ADDRESS_LIKE = re.compile(r"[/@:]|\.\w")
LONG_NUMBER = re.compile(r"\d{12,}")


def without_leader(line: str) -> str:
    """The line without a closing dot leader and the page numbers after it (". . . . 24, 410"
    of a contents or index line); read from the right in one pass, where a pattern searched
    from every position of a long run of dots or spaces takes quadratic time."""
    start = len(line.rstrip(PAGE_NUMBERS_TAIL))
    dots = 0
    while start and (line[start - 1] == "." or line[start - 1].isspace()):
        start -= 1
        dots += line[start] == "."
    return line[:start] if dots >= 3 else line


def _letter_digit_switches(token: str) -> int:
    kinds = ["d" if ch.isdigit() else "a" for ch in token if ch.isalnum()]
    return sum(a != b for a, b in zip(kinds, kinds[1:]))


def is_symbol_soup(line: str, max_symbol_ratio: float) -> bool:
    """A line mostly of symbols ("~~|#@@^^%%"), or of three or more non-letters that are not a
    number, whatever read it."""
    stripped = line.replace(" ", "")
    if not stripped:
        return False
    letters = sum(1 for ch in stripped if ch.isalpha())
    if letters == 0:
        return len(stripped) >= 3 and not NUMERIC_ONLY.fullmatch(stripped)
    symbols = sum(1 for ch in stripped if not (ch.isalnum() or ch in TEXT_PUNCTUATION))
    return symbols / len(stripped) > max_symbol_ratio


def is_ocr_garbage(line: str, latin_text: bool) -> bool:
    """A line no printed text would produce, in a text of Latin script (``latin_text``) or not.
    A dot leader and the page numbers after it are layout (every single dot would count as a
    fragment), so a line is judged without them, unless nothing else is left ("...." stays
    garbage)."""
    if (body := without_leader(line)).strip():
        line = body
    squeezed = "".join(line.split())
    if not squeezed:
        return False
    cjk = len(CJK.findall(squeezed)) + len(KANA.findall(squeezed))
    if latin_text and cjk >= max(1, len(squeezed) // 3):
        return True  # Han/kana read off dust in a European text
    if len(squeezed) <= 3:
        # lone "8", "a", "日", "●": specks read as glyphs; not the wrapped tail of a CJK sentence
        # ("文档。") nor a short CJK heading ("定義", "目次")
        return not (cjk and (squeezed[-1] in CJK_LINE_END or cjk == len(squeezed) >= 2))
    if cjk >= len(squeezed) / 2 and len(set(squeezed)) <= len(squeezed) / 2:
        return True  # "ををを", "はには": a few glyphs repeated
    tokens = line.split()
    if len(tokens) >= 3 and sum(bool(FRAGMENT.match(t)) for t in tokens) / len(tokens) > 0.5:
        return True  # "hee ot e re e e eo": letter fragments, not words
    for token in tokens:
        if ADDRESS_LIKE.search(token):
            continue  # paths, URLs, addresses
        if any(len(word) >= 10 and _letter_digit_switches(word) >= 3 for word in WORD_BREAK.split(token)):
            return True  # "848m48日1TAE0512M020"
        capitals = sum(ch.isupper() for ch in token)  # str.isupper() is true of "(FPC)，也能够..."
        if LONG_NUMBER.fullmatch(token) or (len(token) >= 16 and capitals >= 0.8 * len(token)):
            return True  # "51152223132801523823", "M3NEEANNRSXAAMRAEZ"
    letters = sum(ch.isalpha() for ch in squeezed)
    return letters < len(squeezed) / 3 and not NUMERIC_ONLY.fullmatch(squeezed)
