"""A query's terms, and how much of them a chunk holds, weighed by their rarity.

The no-answer decision reads the coverage of the query by the best hit's passage
(refusal.py), each term weighed by its rarity among the candidates in the query's language,
so that "the", "der" or "安装" count little and "USB", "Festplatte" count much. The CJK
character ranges live here, for the copy test of the translation groups (fusion.py) too.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import lru_cache

from pipeline.stores.lexical import FOLDED_TOKENIZATIONS, simplified, umlauts_read

HAN_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kana and Han, as characters of a regex class
CJK_BIGRAMS_PER_WORD = 2
WORD_PREFIX = 5
_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(f"[{HAN_KANA}]+")
# Letters NFKD does not take apart, and their plain spellings (Łukasz, Søren, Đorđe; casefolding
# already writes ß as ss)
PLAIN_LETTERS = {"ł": "l", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "æ": "ae", "œ": "oe", "ı": "i", "ħ": "h", "ŧ": "t"}
# the accented letters of the Latin, Greek and Cyrillic blocks, and the combining marks
_ACCENTED = [*range(0xC0, 0x250), *range(0x370, 0x500), *range(0x1E00, 0x2000)]


def _plain_table() -> dict[int, str | None]:
    """Each accented letter -> its letters without their marks (NFKD, marks dropped); a mark
    alone -> nothing. One table, so that folding a text is one ``str.translate``."""
    table: dict[int, str | None] = {ord(letter): spelled for letter, spelled in PLAIN_LETTERS.items()}
    for code in _ACCENTED:
        bare = "".join(c for c in unicodedata.normalize("NFKD", chr(code)) if not unicodedata.combining(c))
        if code not in table and bare != chr(code):
            table[code] = bare
    table.update(dict.fromkeys(range(0x300, 0x370)))
    return table


_PLAIN = _plain_table()


def plain(text: str) -> str:
    """Casefolded ``text`` without its accents ("protección" -> "proteccion", "Müller" ->
    "muller"), as Weaviate folds a folded lexical property and the query searched in it."""
    return text.casefold().translate(_PLAIN)


def terms(text: str, tokenization: str) -> set[str]:
    """A text's distinct terms: casefolded words cut to their first five characters (so
    "Programms" meets "Programm" and "ursprüngliche" meets "ursprünglichen": truncation
    stems European languages about as well as a stemmer does), without their accents as the
    lexical leg reads them (``plain``), umlauts spelled out read as umlauts ("Gebuehren" meets
    "Gebühren"; in every word-tokenized language, where a German name is written either way);
    for a CJK tokenizer, character bigrams of the CJK runs (a single character alone) plus the
    words of the other runs, traditional Chinese characters read as simplified ("資料" meets
    "资料"; in Japanese too, whose kanji then read alike on both sides)."""
    text = text.casefold()
    bare = _bare if tokenization in FOLDED_TOKENIZATIONS else str
    if tokenization == "word":
        return {bare(w[:WORD_PREFIX]) for w in _WORD.findall(umlauts_read(text))}
    text = simplified(text)
    found: set[str] = set()
    for run in _CJK.findall(text):
        found.update({run} if len(run) == 1 else {run[i:i + 2] for i in range(len(run) - 1)})
    found.update(bare(w) for w in _WORD.findall(_CJK.sub(" ", text)))
    return found


def _bare(word: str) -> str:
    """A casefolded word without its accents (``plain``); an ASCII word, most of them, as it is."""
    return word if word.isascii() else word.translate(_PLAIN)


@lru_cache(maxsize=4096)
def held_terms(text: str, tokenization: str) -> frozenset[str]:
    """``terms`` of a chunk's searched text, kept: fusion weighs a search's lexical hits by them,
    and its no-answer decision reads the same candidates' again."""
    return frozenset(terms(text, tokenization))


def word_count(found: set[str], tokenization: str) -> float:
    """Words in a set of terms (a CJK word is about two characters, hence two bigrams)."""
    return len(found) / (1 if tokenization == "word" else CJK_BIGRAMS_PER_WORD)


def rarity(wanted: set[str], sample: Iterable[set[str]]) -> dict[str, float]:
    """Each wanted term's weight: its inverse document frequency over ``sample`` (the terms
    of each candidate in the query's language)."""
    sample = list(sample)
    return {t: math.log((len(sample) + 1) / (sum(t in s for s in sample) + 0.5)) for t in wanted}


def coverage(weights: Mapping[str, float], found: set[str]) -> float:
    """The weighted share of the query's terms among ``found``."""
    total = sum(weights.values()) or 1.0
    return sum(w for t, w in weights.items() if t in found) / total
