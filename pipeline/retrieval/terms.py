"""A query's terms, and how much of them a chunk holds, weighed by their rarity.

The no-answer decision reads the coverage of the query by the best hit's passage
(refusal.py), each term weighed by its rarity among the candidates in the query's language,
so that "the", "der" or "安装" count little and "USB", "Festplatte" count much. The CJK
character ranges live here, for the copy test of the translation groups (fusion.py) too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

HAN_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kana and Han, as characters of a regex class
CJK_BIGRAMS_PER_WORD = 2
WORD_PREFIX = 5
_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(f"[{HAN_KANA}]+")


def terms(text: str, tokenization: str) -> set[str]:
    """A text's distinct terms: casefolded words cut to their first five characters (so
    "Programms" meets "Programm" and "ursprüngliche" meets "ursprünglichen": truncation
    stems European languages about as well as a stemmer does); for a CJK tokenizer,
    character bigrams of the CJK runs (a single character alone) plus the words of the
    other runs."""
    text = text.casefold()
    if tokenization == "word":
        return {w[:WORD_PREFIX] for w in _WORD.findall(text)}
    found: set[str] = set()
    for run in _CJK.findall(text):
        found.update({run} if len(run) == 1 else {run[i:i + 2] for i in range(len(run) - 1)})
    found.update(_WORD.findall(_CJK.sub(" ", text)))
    return found


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
