"""Sentence splitting with exact character offsets, for all five languages.

Rule-based (the choice, per language, is measured in docs/benchmarks.md: on our gold
set these rules beat spaCy's sentencizer and the trained es/ja pipelines that install
offline, at a fraction of their cost). The rules that matter on legal and technical text:
- CJK terminators (。！？, and …… in Chinese and Japanese) end a sentence without a following space, but not inside
  brackets （…。以下同じ。） or quotes 「…。」と述べた; a closing quote after a terminator
  ends the sentence unless a particle (と, って, …) continues it;
- Latin terminators end one only before whitespace and a capital, digit, ¿/¡, an opening
  quote or CJK text; known abbreviations (e.g., z. B., Art., Sra., EE.UU.), initials,
  German ordinals (am 25. Mai, die 2. Auflage), decimals (3.5) and URLs never end one;
- a line break inside a block is a PDF line wrap, not a boundary, unless the next line
  starts a list item; a blank line always is one.
"""

from __future__ import annotations

import re

ABBREVIATIONS = {
    # en
    "e.g", "i.e", "etc", "cf", "vs", "mr", "mrs", "ms", "dr", "prof", "no", "nos", "art", "arts", "sec", "p", "pp",
    "fig", "approx", "inc", "ltd", "co", "corp", "jr", "sr", "st", "u.s", "u.k", "e.u", "al", "ed", "vol", "jan",
    "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "a.m", "p.m",
    # de
    "z.b", "z", "b", "d.h", "h", "u.a", "usw", "bzw", "ca", "vgl", "ggf", "evtl", "abs", "nr", "s", "bspw", "inkl",
    "zzgl", "gem", "lit", "str", "u.u", "o.ä", "i.d.r", "v.a", "insb", "rn", "ff", "std", "tsd", "mio", "mrd",
    # es
    "sra", "srta", "ud", "uds", "pág", "págs", "núm", "ej", "p.ej", "aprox", "dña", "d", "dto", "cía", "admón",
    "ee.uu", "apdo", "avda", "lic",
}
# German ordinals: "am 25. Mai", "die 2. Auflage", "vom 27. April 2016"
ORDINAL_BEFORE = {"am", "vom", "zum", "bis", "den", "dem", "der", "die", "das", "des", "im", "ab", "seit", "zur"}
MONTHS = {"januar", "februar", "märz", "april", "mai", "juni", "juli", "august", "september", "oktober", "november",
          "dezember"}
CJK_END = "。！？｡"
CLOSERS = "」』）)\"'”’“»》】"
OPENERS = {"（": "）", "(": ")", "「": "」", "『": "』", "【": "】", "《": "》", "“": "”"}
PARTICLES = "とっ、，。のをがはにでも"
LATIN_END = re.compile(r"[.!?]+[" + re.escape(CLOSERS) + r"]*")
LIST_START = re.compile(r"(?<![^\n])\s*+(?:[•●○■□◆◇▪‣∙·・\-*–]|\(?[a-zA-Z0-9]{1,3}[.)])\s")  # at a line start
# Lookbehinds and possessive runs: each is tried once per run, not from every position in it.
WORD_AT_END = re.compile(r"(?<![\w.])[\w.]++$")
WORD_AND_SPACE_AT_END = re.compile(r"(?<!\w)(\w++)\s++$")
SPACE_THEN_WORD = re.compile(r"(?<!\s)\s++(\w++)")
INITIALS = re.compile(r"(?<![\w.])(?:[^\W\d]\.)++[^\W\d]")
NEXT_VISIBLE = re.compile(r"\s++(\S)")
NEXT_STARTS = "¿¡\"'“„«(「『"


def _is_abbreviation(text: str, dot: int, lang: str | None) -> bool:
    """Whether the '.' at ``dot`` closes an abbreviation, an initial or a German ordinal."""
    m = WORD_AT_END.search(text, max(0, dot - 40), dot)
    if not m:
        return False
    word = m.group(0).lower()
    if word in ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or INITIALS.fullmatch(word):
        return True
    if lang == "de" and word.isdigit() and len(word) <= 2:
        before = WORD_AND_SPACE_AT_END.search(text, max(0, dot - 40), dot - len(word))
        after = SPACE_THEN_WORD.match(text, dot + 1, dot + 40)
        return bool((before and before.group(1).lower() in ORDINAL_BEFORE) or
                    (after and after.group(1).lower() in MONTHS))
    return False


def _bracketed(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Matched CJK/Latin bracket and quote pairs (open, close) in text[start:end]."""
    pairs, stack = [], []
    for i in range(start, end):
        ch = text[i]
        if ch in OPENERS:
            stack.append((ch, i))
        elif stack and ch == OPENERS[stack[-1][0]]:
            pairs.append((stack.pop()[1], i))
        elif ch == "\n" and text.startswith("\n\n", i):
            stack.clear()
    return pairs


def split(text: str, start: int = 0, end: int | None = None, lang: str | None = None) -> list[tuple[int, int]]:
    """Sentence spans (start, end) of text[start:end], offsets into ``text``, whitespace trimmed."""
    end = len(text) if end is None else end
    inside = [False] * (end - start)
    closes_at: set[int] = set()
    if any(c in text[start:end] for c in CJK_END):
        for a, b in _bracketed(text, start, end):
            for k in range(a + 1, b):
                inside[k - start] = True
            closes_at.add(b)
    cuts: list[int] = []
    i = start
    while i < end:
        ch = text[i]
        if ch in CJK_END or (text.startswith("……", i) and lang in ("zh", "ja")):
            j, outside = i, False
            while j < end and (text[j] in CJK_END + "…" or text[j] in CLOSERS and not inside[j - start]):
                outside = outside or (text[j] in CJK_END + "…" and not inside[j - start])
                j += 1
            if outside and not (ch == "…" and j < end and text[j] in PARTICLES):
                cuts.append(j)
            elif j < end and j - 1 in closes_at and not inside[j - 1 - start] and text[j] not in PARTICLES:
                cuts.append(j)  # 「来年の四月です。」本当ですか: the quote was a sentence
            i = j
            continue
        if ch in ".!?":
            m = LATIN_END.match(text, i, end)
            j = m.end() if m else i + 1
            nxt = NEXT_VISIBLE.match(text, j, end)
            if nxt and (nxt.group(1).isupper() or nxt.group(1).isdigit() or nxt.group(1) in NEXT_STARTS or
                        "\u3040" <= nxt.group(1) <= "\u9fff"):
                if not (ch == "." and j == i + 1 and _is_abbreviation(text, i, lang)):
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
