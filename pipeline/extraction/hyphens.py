"""Hyphens at line ends, decided for the whole document by the words it writes elsewhere.

A hyphen at the end of a printed line is either a break inside a word (TeX's "vor-kommen")
or a compound's own hyphen that a line end happens to fall on ("zero-shot", "apt-get",
"Debian-Paketarchiv"). PDFium takes every such hyphen for a break (it joins the lines and
marks the hyphen, ``MARK``); an OCR reads both kinds as "-" and a new line. Each is decided
once the document is read, in this order:

1. the document's own words: the form it writes more often elsewhere, joined ("PostScript")
   or hyphenated ("fine-tuning"), wins;
2. a hyphen before a conjunction stands for a compound's left-out part ("Arbeitnehmer- und
   Arbeitgeberanteile", "pre- and post-processing"): the hyphen stays, and a space after it;
3. otherwise between two lower-case letters a broken word ("vorkommen"), else a real
   hyphen ("Debian-Paketarchiv").
"""

from __future__ import annotations

import re
from collections import Counter

from pipeline.contracts import Block, Page

MARK = "\ufffe"  # a hyphen PDFium took for a line-end break (pipeline.extraction.pdf.clean_text)
PDFIUM_MARKS = MARK + "\x02"  # the mark as PDFium's text gives it (U+0002 in some builds)
# letters of alphabetic scripts: CJK text sets no hyphens at line ends, and an OCR's "-" between
# two ideographs is a long-vowel mark or a dash
LETTER = r"[^\W\d_\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
# from a word's start, possessive: a long run of letters is not rescanned from each of them
BREAK = re.compile(rf"(?<!{LETTER})({LETTER}++)(?:{MARK}|-\n)({LETTER}++)")
WORD = re.compile(rf"{LETTER}++(?:-{LETTER}++)*+")
# words after which a line-end hyphen leaves a compound's part out (en, de, es)
CONJUNCTIONS = frozenset({"and", "or", "nor", "und", "oder", "bzw", "sowie", "y", "o", "u", "e"})


def join_broken_words(pages: list[Page]) -> list[Page]:
    """The pages with every line-end hyphen (PDFium's ``MARK``, an OCR's "-" before a new line,
    between letters) decided: a word joined, or the hyphen kept; any other ``MARK`` becomes a
    hyphen."""
    def has_one(text: str) -> bool:
        return MARK in text or "-\n" in text

    if not any(has_one(block.text) for page in pages for block in page.blocks):
        return pages  # nothing to decide: the document's words need no counting
    words = words_written(pages)

    def resolved(block: Block) -> Block:
        if not has_one(block.text):
            return block
        text = BREAK.sub(lambda m: across_line_end(m.group(1), m.group(2), words), block.text).replace(MARK, "-")
        return block.model_copy(update={"text": text})

    return [page.model_copy(update={"blocks": [resolved(block) for block in page.blocks]}) for page in pages]


def across_line_end(left: str, right: str, words: Counter[str]) -> str:
    """The text of a word's two parts at a line-end hyphen, as the document's ``words`` decide."""
    joined, hyphenated = words[word_key(left + right)], words[word_key(f"{left}-{right}")]
    if joined != hyphenated:
        return left + right if joined > hyphenated else f"{left}-{right}"
    if right.lower() in CONJUNCTIONS:
        return f"{left}- {right}"
    return left + right if left[-1].islower() and right[0].islower() else f"{left}-{right}"


def words_written(pages: list[Page]) -> Counter[str]:
    """How often the document writes each word, and each pair of a hyphenated compound's
    neighbouring parts ("state-of-the-art" counts "state-of", "of-the", "the-art"), away from
    line-end hyphens."""
    words: Counter[str] = Counter()
    for page in pages:
        for block in page.blocks:
            for word in WORD.findall(BREAK.sub(" ", block.text)):
                words[word_key(word)] += 1
                parts = word.split("-")
                words.update(word_key(f"{a}-{b}") for a, b in zip(parts, parts[1:]) if len(parts) > 2)
    return words


def word_key(word: str) -> str:
    """A word as counted: its first letter's case, or an all-capitals word's, does not count
    (a sentence's first word, a heading in capitals); a capital inside it does ("Standard-Umgebung"
    is no "Standardumgebung")."""
    return word.lower() if word.isupper() else word[:1].lower() + word[1:]
