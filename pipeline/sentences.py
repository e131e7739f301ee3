"""Rule-based sentence splitting with exact character offsets, for all five languages.

Rules that matter on legal and technical text: CJK terminators (。！？) end a sentence
without a following space; Latin terminators end one only before whitespace and a
capital, digit, ¿/¡ or an opening quote; known abbreviations (e.g., z.B., Art., Sra.),
single-letter initials, decimals (3.5) and URLs never end one; a line break inside a
block is a PDF line wrap, not a boundary, unless the next line starts a list item.
"""

from __future__ import annotations

import re

ABBREVIATIONS = {
    # en
    "e.g", "i.e", "etc", "cf", "vs", "mr", "mrs", "ms", "dr", "prof", "no", "nos", "art", "sec", "p", "pp",
    "fig", "approx", "inc", "ltd", "co", "corp", "jr", "sr", "st", "u.s", "u.k", "e.u", "al", "ed", "vol",
    # de
    "z.b", "d.h", "u.a", "usw", "bzw", "ca", "vgl", "ggf", "evtl", "abs", "nr", "s", "bspw", "inkl",
    "zzgl", "gem", "lit", "dr", "str", "u.u", "o.ä", "i.d.r", "v.a",
    # es
    "sra", "srta", "ud", "uds", "pág", "págs", "núm", "art", "arts", "ej", "p.ej", "aprox", "dña", "d",
    "dto", "cía", "admón", "ee.uu", "apdo",
}
CJK_END = "。！？｡"
CLOSERS = "」』）)\"'”’》】"
LATIN_END = re.compile(r"[.!?]+[" + re.escape(CLOSERS) + r"]*")
LIST_START = re.compile(r"\s*(?:[•●○■□◆◇▪‣∙·・\-*–]|\(?[a-zA-Z0-9]{1,3}[.)])\s")


def _is_abbreviation(text: str, dot: int) -> bool:
    """Whether the '.' at ``dot`` closes an abbreviation or an initial."""
    m = re.search(r"([\w.]+)$", text[:dot])
    if not m:
        return False
    word = m.group(1).lower()
    return word in ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or bool(re.fullmatch(r"(\w\.)+\w", word))


def split(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans (start, end) of text[start:end], offsets into ``text``, whitespace trimmed."""
    end = len(text) if end is None else end
    cuts: list[int] = []
    i = start
    while i < end:
        ch = text[i]
        if ch in CJK_END:
            j = i + 1
            while j < end and (text[j] in CJK_END or text[j] in CLOSERS):
                j += 1
            cuts.append(j)
            i = j
            continue
        if ch in ".!?":
            m = LATIN_END.match(text, i, end)
            j = m.end() if m else i + 1
            nxt = re.match(r"\s+(\S)", text[j:end])
            if nxt and (nxt.group(1).isupper() or nxt.group(1).isdigit() or nxt.group(1) in "¿¡\"'“„«(" or
                        "\u3040" <= nxt.group(1) <= "\u9fff"):
                if not (ch == "." and _is_abbreviation(text, i)):
                    cuts.append(j)
            i = j
            continue
        if ch == "\n":
            # A blank line ends a paragraph; a new list item starts a sentence.
            if text.startswith("\n\n", i) or LIST_START.match(text, i + 1, end):
                cuts.append(i)
        i += 1
    spans = []
    previous = start
    for cut in [*cuts, end]:
        a, b = previous, cut
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            spans.append((a, b))
        previous = cut
    return spans
