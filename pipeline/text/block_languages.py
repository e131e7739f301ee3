"""Languages per block: each paragraph of a document labelled with its own language, the
document's main language, and how much of the text the configured languages cover.

A mixed document (a contract in English and Chinese side by side, a manual with long
English passages) is accepted when its languages are configured; what is quarantined is
text the configured languages do not cover. Smoothing keeps monolingual documents whole:
a block leaves the main language only when it is long enough to be a paragraph of its own
(``language.block_min_letters``) and clearly detected; a shorter block (a heading, a list
item, a code line) keeps its own reading only when that is one of the document's languages
(a fifth of the evidence or more), else it takes the label of the block before it, so
headings and command names do not flip.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pipeline.config import Settings
from pipeline.text.langid import CJK, KANA, detect_block

MIN_DETECT_LETTERS = 20  # fewer letters than this say nothing about a language
MIN_SWITCH_SCORE = 0.5  # a block leaves the main language only on a detection this sure
DOCUMENT_LANGUAGE_SHARE = 0.2  # of the detection evidence: a language the document is written in


@dataclass(frozen=True)
class BlockLanguages:
    labels: list[str | None]  # per block, in order; None for a block without letters
    main: str  # the largest share ("und" when nothing could be detected)
    shares: dict[str, float]  # language -> share of the document's letters, largest first
    coverage: float  # the configured languages' share of the detection evidence


def weighted_letters(text: str) -> int:
    """Letters, a Han or kana character counting three (it carries about a word's worth)."""
    cjk = len(CJK.findall(text)) + len(KANA.findall(text))
    return sum(ch.isalpha() for ch in text) + 2 * cjk


def label_blocks(texts: list[str], settings: Settings) -> BlockLanguages:
    letters = [weighted_letters(t) for t in texts]
    detected: list[tuple[str, float] | None] = [
        detect_block(t, settings) if n >= MIN_DETECT_LETTERS else None for t, n in zip(texts, letters)]
    evidence: Counter[str] = Counter()
    for found, n in zip(detected, letters):
        if found:
            evidence[found[0]] += n * found[1]
    if not evidence:
        return BlockLanguages([None] * len(texts), "und", {}, 0.0)
    main = evidence.most_common(1)[0][0]
    # the document's languages: a bilingual page, read in its columns' interleaved order,
    # has short items of both; a stray short line of another language is not one of them
    languages = {lang for lang, v in evidence.items() if v >= DOCUMENT_LANGUAGE_SHARE * sum(evidence.values())}
    labels: list[str | None] = []
    current = main  # the language of the last block long and clear enough to have its own
    previous = main  # the label of the last block with letters
    for found, n in zip(detected, letters):
        if found and n >= settings.language.block_min_letters and found[1] >= MIN_SWITCH_SCORE:
            current = found[0]
            labels.append(current)
        elif not n:
            labels.append(None)
        else:  # a heading, list item or code line: its own reading only in one of the document's
            # languages, else the block's before it (a Spanish heading after a short Spanish
            # paragraph that follows an untranslated English one is Spanish)
            labels.append(found[0] if found and found[0] in languages | {current} else previous)
        previous = labels[-1] or previous
    final: Counter[str] = Counter()
    text_letters: Counter[str] = Counter()
    for label, found, n in zip(labels, detected, letters):
        if label:
            text_letters[label] += n
            if found:
                final[label] += n * found[1]
    total, weight = sum(text_letters.values()), sum(final.values())
    shares = {lang: round(n / total, 4) for lang, n in text_letters.most_common()}
    coverage = sum(v for lang, v in final.items() if lang in settings.languages) / weight if weight else 0.0
    return BlockLanguages(labels, main, shares, coverage)


def describe_shares(shares: dict[str, float]) -> str:
    return ", ".join(f"'{lang}' {share:.0%}" for lang, share in shares.items())
