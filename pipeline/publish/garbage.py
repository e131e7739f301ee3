"""OCR garbage: lines an OCR engine reads off dust, specks and wrecked print.

Tuned on tests/fixtures/ocr_garbage.json's ``tuning`` split (English pages) and measured on
its ``measurement`` split (German, Spanish) by tests/test_qa_checks.py; the set is real
output of the pipeline's OCR route on dusty scans (scripts/make_ocr_garbage_set.py).
"""

from __future__ import annotations

import re

from pipeline.text.langid import CJK

KANA = re.compile(r"[\u3040-\u30ff]")
LATIN_LANGS = {"en", "de", "es"}
FRAGMENT = re.compile(r"^[^\W\d_]{1,2}$")
CJK_LINE_END = "。．，、）)」』】》！？：；"
WORD_BREAK = re.compile(r"[^\w]+")  # CJK text glues "imake(1)、xmkmf(1)" into one space-free token
LEADER = re.compile(r"(?:\s*\.){3,}[\s\d,–-]*$")  # ". . . . 24, 410": a contents or index line's dots and pages


def _letter_digit_switches(token: str) -> int:
    kinds = ["d" if ch.isdigit() else "a" for ch in token if ch.isalnum()]
    return sum(a != b for a, b in zip(kinds, kinds[1:]))


def is_ocr_garbage(line: str, lang: str) -> bool:
    """A line no printed text would produce, for a chunk labelled ``lang``. A dot leader and
    the page numbers after it are layout (every single dot would count as a fragment), so a
    line is judged without them, unless nothing else is left ("...." stays garbage)."""
    if (body := LEADER.sub("", line)).strip():
        line = body
    squeezed = "".join(line.split())
    if not squeezed:
        return False
    cjk = len(CJK.findall(squeezed)) + len(KANA.findall(squeezed))
    if len(squeezed) <= 3:
        # lone "8", "a", "日", "●": specks read as glyphs; not the wrapped tail of a CJK sentence ("文档。")
        return not (cjk and squeezed[-1] in CJK_LINE_END)
    if lang in LATIN_LANGS and cjk >= max(1, len(squeezed) // 3):
        return True  # Han/kana read off dust in a European text
    if cjk >= len(squeezed) / 2 and len(set(squeezed)) <= len(squeezed) / 2:
        return True  # "ををを", "はには": a few glyphs repeated
    tokens = line.split()
    if len(tokens) >= 3 and sum(bool(FRAGMENT.match(t)) for t in tokens) / len(tokens) > 0.5:
        return True  # "hee ot e re e e eo": letter fragments, not words
    for token in tokens:
        if re.search(r"[/@:]|\.\w", token):
            continue  # paths, URLs, addresses
        if any(len(word) >= 10 and _letter_digit_switches(word) >= 3 for word in WORD_BREAK.split(token)):
            return True  # "848m48日1TAE0512M020"
        capitals = sum(ch.isupper() for ch in token)  # str.isupper() is true of "(FPC)，也能够..."
        if re.fullmatch(r"\d{12,}", token) or (len(token) >= 16 and capitals >= 0.8 * len(token)):
            return True  # "51152223132801523823", "M3NEEANNRSXAAMRAEZ"
    letters = sum(ch.isalpha() for ch in squeezed)
    return letters < len(squeezed) / 3 and not re.fullmatch(r"[\d.,:;%()\-–/+]+", squeezed)


def garbage_lines(text: str, lang: str) -> list[str]:
    return [line for line in text.splitlines() if is_ocr_garbage(line, lang)]
