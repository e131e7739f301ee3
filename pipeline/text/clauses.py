"""The clause-form registry: the ways legal and technical texts open a clause or a heading
(第一条, § 3, Artículo 5, Section 1.1 ...), one entry per form in clause_forms.yaml (data, not
code). The structure stage tags with it; anything else that must recognise a clause heading
asks ``match_line`` too.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

FORMS_FILE = Path(__file__).with_name("clause_forms.yaml")
TITLE_MAX_CHARS = 120
ROMAN = ["", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"]
IROHA = ["", *"イロハニホヘトチリヌルヲワカヨタレソツネナラム"]  # 号の細分 in order, from 1
# What OCR reads for some of those letters: their Han or hiragana look-alikes (ニ as the numeral
# 二 opened an item where sub-item ニ stood, on a scanned statute's tuning page)
IROHA_READ_AS = {"ロ": "口", "ハ": "八", "ニ": "二", "ヘ": "へ", "ト": "卜", "チ": "千", "カ": "力", "タ": "夕"}
HAN = ["〇", "一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二"]
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
HAN_DIGITS = {**{digit: value for value, digit in enumerate(HAN[:10])}, "零": 0}
HAN_UNITS = {"十": 10, "百": 100, "千": 1000}
_HAN_NUMERAL = re.compile("[" + "".join(HAN_DIGITS) + "".join(HAN_UNITS) + "]+")
_NUMBER_CORE = re.compile(r"\d+(?:\.\d+)*[a-z]?")
FRAME = "* "  # the left edge of a plain-text box; its right edge is " *"
# The end of a list item that another follows ("1. die Bestellung des Vorstands," "a) ... und"):
# an item, not a title waiting for its sentence.
ITEM_END = re.compile(r"(?:[,;]|\b(?:und|oder|sowie|and|or|y|o|e|u))\s*$")
# What follows a clause number when the line cites that clause instead of opening it: "§ 3 Abs. 2
# gilt entsprechend", "Art. 5 Satz 1", "Artículo 5, apartado 2, de la Ley" (a lower-case word is
# one too: match_line checks that apart).
REFERENCE_TAIL = re.compile(r"(?:,|Abs\.|Absatz\b|Abs\b|Satz\b|S\.\s|Nr\.|Buchst\.|lit\.|UAbs\.|Unterabsatz\b"
                            r"|Halbsatz\b|Alt\.|Apartado\b|Párrafo\b|Letra\b|Paragraph\b)")


@dataclass(frozen=True)
class Form:
    id: str
    langs: tuple[str, ...]
    type: str  # CLAUSE, HEADER or CAPTION
    level: int | str
    base: int
    regex: re.Pattern[str]
    title: bool
    number: str | None
    inline: bool
    after_sentence: bool
    single_line: bool
    sequence: bool
    nested: bool  # an item ("a)", "1. die ..."): only inside an open clause, never a top-level one
    max_line_chars: int
    example: str  # a line the form opens; {n} {roman} {han} {fw} {letter} {iroha} stand for its number

    def example_line(self, number: int) -> str:
        return self.example.format(n=number, roman=ROMAN[number], han=HAN[number],
                                   fw=str(number).translate(FULLWIDTH), letter=chr(ord("a") + number - 1),
                                   iroha=IROHA[number])

    def level_of(self, number: str) -> int:
        return self.base + number.count(".") if self.level == "dotted" else int(self.level)


@lru_cache(maxsize=1)
def forms() -> tuple[Form, ...]:
    entries = yaml.safe_load(FORMS_FILE.read_text(encoding="utf-8"))
    return tuple(
        Form(id=e["id"], langs=tuple(e["langs"]), type=e["type"], level=e["level"], base=int(e.get("base", 1)),
             regex=re.compile(r"[ \t\u3000]*+(?:" + e["pattern"] + r")"), title=bool(e.get("title")),
             number=e.get("number"), inline=bool(e.get("inline")), after_sentence=bool(e.get("after_sentence")),
             single_line=bool(e.get("single_line")), sequence=bool(e.get("sequence")),
             nested=bool(e.get("nested")), max_line_chars=int(e.get("max_line_chars", 10_000)),
             example=e["example"])
        for e in entries
    )


@dataclass
class Match:
    form: Form
    number: str
    title: str | None
    level: int


def match_line(line: str, lang: str, inline_only: bool = False, paragraph_start: bool = False) -> Match | None:
    """The first registered form of ``lang`` that opens ``line``. With ``paragraph_start`` (the
    line opens its block or follows a sentence end) a title form's heading may run on into its
    first sentence on a line of any length: "Article 16 If you are able to adopt ... apt-" and the
    next printed line are one line once PDFium joins a line ending in a hyphen, and a text that is
    not wrapped holds a paragraph per line (a reference is still told by what follows the number)."""
    line = _unframed(line)
    for form in forms():
        if lang not in form.langs or (inline_only and not form.inline):
            continue
        run_on = paragraph_start and form.title and form.after_sentence
        if len(line) > form.max_line_chars and not run_on:
            continue
        m = form.regex.match(line)
        if m:
            rest = line[m.end():].strip(" .:：、-–—\t\u3000")
            if form.title and form.after_sentence and (rest[:1].islower() or REFERENCE_TAIL.match(rest)):
                continue  # "Section 6 states terms ...", "§ 3 Abs. 2 gilt ...": a reference in a sentence
            title = rest if form.title and rest and len(rest) <= TITLE_MAX_CHARS else None
            number = form.number or m.group(0).strip(" \t\u3000.、")
            if form.type == "CAPTION":
                number, title = "", m.group("num").strip()
            return Match(form=form, number=number, title=title, level=form.level_of(m.group("num")))
    return None


def next_subitem(line: str, lang: str, open_numbers: list[str | None]) -> Match | None:
    """The sub-item after the innermost open clause (the last of ``open_numbers``, a 号の細分 such
    as ハ) where ``line`` starts with that letter's look-alike (``IROHA_READ_AS``) and a space:
    under item 四, after its ハ, "二　許認可等の…" is sub-item ニ. Under item 一 it is item 二."""
    if not open_numbers or open_numbers[-1] not in IROHA[1:-1]:
        return None
    following = IROHA[IROHA.index(open_numbers[-1]) + 1]
    line = line.lstrip(" \t")
    if line[:1] != IROHA_READ_AS.get(following) or line[1:2] not in ("\u3000", " "):
        return None
    items = [n for n in open_numbers[:-1] if n and _HAN_NUMERAL.fullmatch(n)]
    if items and _HAN_NUMERAL.fullmatch(line[0]) and _han_value(line[0]) == _han_value(items[-1]) + 1:
        return None  # the next item's number
    form = next((f for f in forms() if f.id == "ja_subitem" and lang in f.langs), None)
    return None if form is None else Match(form=form, number=following, title=None, level=int(form.level))


def _unframed(line: str) -> str:
    """A line inside a plain-text box ("*  6. Disclaimer of Warranty  *", MPL-2.0) without its frame."""
    inner = line.strip()
    if len(inner) > 4 and inner.startswith(FRAME) and inner.endswith(FRAME[::-1]):
        return inner[len(FRAME):-len(FRAME)].strip()
    return line


@lru_cache(maxsize=1)
def _languages() -> tuple[str, ...]:
    return tuple(dict.fromkeys(lang for form in forms() for lang in form.langs))


def match_any(line: str) -> Match | None:
    """The first registered form of any language that opens ``line`` (cleaning runs before
    the document's language is known)."""
    for lang in _languages():
        found = match_line(line, lang)
        if found:
            return found
    return None


def _han_value(numeral: str) -> int:
    """一 1, 十 10, 十二 12, 二十三 23, 百五 105: the values CJK clause numbers are written with."""
    total = digit = 0
    for ch in numeral:
        if ch in HAN_UNITS:
            total += (digit or 1) * HAN_UNITS[ch]
            digit = 0
        else:
            digit = HAN_DIGITS[ch]
    return total + digit


def number_key(number: str) -> str:
    """A clause number as its translations print it alike: the Arabic number (dotted, with a
    letter after it) inside the form, else the label cased and unbracketed. "Article 1",
    "Artículo 1", "§ 1", "第一条" and "第１条" are all "1"; "2.3" stays "2.3", "§ 6a" is "6a",
    "(b)" and "b)" are "b"."""
    plain = unicodedata.normalize("NFKC", number).casefold()
    plain = _HAN_NUMERAL.sub(lambda m: str(_han_value(m.group())), plain)
    core = _NUMBER_CORE.search(plain)
    return core.group() if core else plain.strip(" ().°")
