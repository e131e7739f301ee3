"""Languages per block: each paragraph of a document labelled with its own language, the
document's main language, and how much of the text the configured languages cover.

A mixed document (a contract in English and Chinese side by side, a manual with long
English passages) is accepted when its languages are configured. Of a document they cover less
of (``language.min_confidence``: a leaflet printing one text for each of its markets), only
the sections in configured languages are kept (``configured_sections``); one without any is
quarantined. A block whose lines are in two configured languages (two paragraphs set as one)
is split first (``language_parts``). Smoothing keeps monolingual documents whole: a block
leaves the main language only when it is clearly detected and its run of such blocks holds
enough prose to be a paragraph (``clear_runs``); a shorter block (a heading, a list item, a
code line) keeps its own reading only when that is one of the document's languages (a
fifth of the evidence or more), else it takes the label of the block before it, so
headings and command names do not flip; at the top, where there is none before, the label
of the first block that has a reading (a title opens what follows it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import groupby

from pipeline.config import Settings
from pipeline.text.langid import (
    CJK,
    CJK_WEIGHT,
    CODE_WORD,
    KANA,
    NOT_LANGUAGE,
    SCRIPTS,
    detect_block,
    latin_letters,
    weighted_letters,
)

MIN_DETECT_LETTERS = 20  # fewer letters than this say nothing about a language
MIN_SWITCH_SCORE = 0.5  # a block leaves the main language only on a detection this sure
# ... and in a configured language, with its run of blocks (or a block's run of lines) this long:
# chosen on the tuning pages of benchmarks/bench_block_languages.py (the Debian New Maintainers'
# Guide's translations, their untranslated English sentences and list items); docs/benchmarks.md,
# "Untranslated paragraphs inside a translation"
RUN_MIN_LETTERS = 80
DOCUMENT_LANGUAGE_SHARE = 0.2  # of the detection evidence: a language the document is written in

# A section in a configured language, kept from a document the configured languages do not
# cover: this many weighted letters at least, read at this mean fastText score or above.
# Chosen on the tuning half of the mixed-language set (scripts/build_mixed_language_set.py):
# 94 % of the configured sections' letters kept, no document in a neighbouring language
# (Portuguese, Italian, Danish ...) loaded; docs/benchmarks.md, "Documents in several languages".
SECTION_MIN_LETTERS = 100
SECTION_MIN_SCORE = 0.7
# A configured language with this many sections or more must be read at SURE_SCORE on average
# (a Galician manual read as Spanish paragraph by paragraph, in the robustness corpus).
SCATTERED_SECTIONS = 3
SURE_SCORE = 0.9


@dataclass(frozen=True)
class BlockLanguages:
    labels: list[str | None]  # per block, in order; None for a block without letters
    main: str  # the largest share ("und" when nothing could be detected)
    shares: dict[str, float]  # language -> share of the document's letters, largest first
    coverage: float  # the configured languages' share of the detection evidence


def script_letters(text: str, lang: str) -> int:
    """The weighted letters of ``text`` written in ``lang``'s script (langid.SCRIPTS); all of
    them for a language outside the table."""
    script = SCRIPTS.get(lang)
    if script is None:
        return weighted_letters(text)
    if script == "latin":
        return latin_letters(text)
    return CJK_WEIGHT * (len(CJK.findall(text)) + (len(KANA.findall(text)) if script == "kana-han" else 0))


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
    clear = clear_runs(detected, texts, settings)
    for found, n, own in zip(detected, letters, clear):
        if own:
            current = found[0]
            labels.append(current)
        elif not n:
            labels.append(None)
        else:  # a heading, list item or code line: its own reading only in one of the document's
            # languages, else the block's before it (a Spanish heading after a short Spanish
            # paragraph that follows an untranslated English one is Spanish)
            labels.append(found[0] if found and found[0] in languages | {current} else previous)
        previous = labels[-1] or previous
    # blocks too short to read before the first that has a reading (a title, "Notice to
    # customers") open what follows them: its language, not the main one
    first_read = next((i for i, found in enumerate(detected) if found), None)
    if first_read:
        labels[:first_read] = [labels[first_read] if label else None for label in labels[:first_read]]
    final: Counter[str] = Counter()
    text_letters: Counter[str] = Counter()
    for label, found, n in zip(labels, detected, letters):
        if label:
            text_letters[label] += n
            if found:
                # a block read surely counts as its own language in the coverage, whatever its
                # label: a leaflet's short paragraphs in seven languages, each under a fifth of
                # the evidence, take the main language's label and were counted as covered
                final[found[0] if found[1] >= SECTION_MIN_SCORE else label] += n * found[1]
    total, weight = sum(text_letters.values()), sum(final.values())
    shares = {lang: round(n / total, 4) for lang, n in text_letters.most_common()}
    coverage = sum(v for lang, v in final.items() if lang in settings.languages) / weight if weight else 0.0
    return BlockLanguages(labels, main, shares, coverage)


def prose_letters(text: str) -> int:
    """Weighted letters of the words that are some language's: not links, mail addresses, paths
    or code (a list of file names that fastText reads as English is no English text)."""
    return sum(weighted_letters(word) for word in NOT_LANGUAGE.sub(" ", text).split() if not CODE_WORD.search(word))


def language_parts(text: str, settings: Settings) -> list[str]:
    """A block's runs of lines in different configured languages, each to be a paragraph of its own.

    Extraction joins two paragraphs set at the same spacing into one block, and a translated
    manual leaves some paragraphs in English: "The rewrite of this tutorial … | Este
    documento tratará …" was one block, labelled English whole, Spanish sentences and all.
    Each line is read; a line too short or unsure to read, or read as a language not
    configured (a line of link titles and section numbers is Finnish to fastText), goes with
    the run it continues; a run under ``RUN_MIN_LETTERS`` (a command name, an English title
    quoted in a Spanish paragraph) joins the run before it. The block is split only where
    every run left, read whole, is its own language at ``SECTION_MIN_SCORE``."""
    lines = text.split("\n")
    if len(lines) < 2 or prose_letters(text) < 2 * RUN_MIN_LETTERS:
        return [text]
    runs: list[tuple[str | None, list[str]]] = []
    for line in lines:
        found = detect_block(line, settings) if weighted_letters(line) >= MIN_DETECT_LETTERS else None
        language = found[0] if found and found[1] >= MIN_SWITCH_SCORE and found[0] in settings.languages else None
        if runs and (language is None or runs[-1][0] in (None, language)):
            runs[-1] = (runs[-1][0] or language, runs[-1][1] + [line])
        else:
            runs.append((language, [line]))
    while len(runs) > 1:
        short = next((i for i, (_, run_lines) in enumerate(runs)
                      if prose_letters("\n".join(run_lines)) < RUN_MIN_LETTERS), None)
        if short is None:
            break
        first = max(short - 1, 0)  # a short run joins the one before it; the first, the one after
        into = runs[short - 1 if short else 1][0]
        runs[first:first + 2] = [(into, runs[first][1] + runs[first + 1][1])]
        if first and runs[first - 1][0] == into:  # two runs of one language side by side again
            runs[first - 1:first + 1] = [(into, runs[first - 1][1] + runs[first][1])]
    if len(runs) == 1:
        return [text]
    parts = ["\n".join(run_lines) for _, run_lines in runs]
    for (language, _), part in zip(runs, parts):
        reading, score = detect_block(part, settings)
        if reading != language or score < SECTION_MIN_SCORE:
            return [text]
    return parts


def clear_runs(detected: list[tuple[str, float] | None], texts: list[str], settings: Settings) -> list[bool]:
    """Per block: whether it may leave the main language. A block read clearly (``MIN_SWITCH_SCORE``)
    in a configured language, in a run of blocks read clearly in it that holds ``RUN_MIN_LETTERS``
    of prose (``prose_letters``): one paragraph, or the short items of an untranslated English list in a
    Spanish manual, each of which alone is as short as a heading (a block too short to read
    does not break a run); and, as before runs were looked at, one block of
    ``language.block_min_letters`` in any language (the only way for a language not configured)."""
    clear = [False] * len(detected)
    run: list[int] = []

    def close() -> None:
        if run and detected[run[0]][0] in settings.languages \
                and sum(prose_letters(texts[i]) for i in run) >= RUN_MIN_LETTERS:
            for i in run:
                clear[i] = True
        for i in run:  # one long block, whatever its language: a run of titles in » « that
            # fastText reads as French is no French text
            clear[i] = clear[i] or weighted_letters(texts[i]) >= settings.language.block_min_letters
        run.clear()

    for i, found in enumerate(detected):
        if found is None:
            continue
        if found[1] < MIN_SWITCH_SCORE or (run and detected[run[-1]][0] != found[0]):
            close()
        if found[1] >= MIN_SWITCH_SCORE:
            run.append(i)
    close()
    return clear


def describe_shares(shares: dict[str, float]) -> str:
    """"'fr' 11%, 'de' <1%": a share under half a percent is there, not nothing."""
    return ", ".join(f"'{lang}' {share:.0%}" if f"{share:.0%}" != "0%" else f"'{lang}' <1%"
                     for lang, share in shares.items())


@dataclass
class _Unit:
    block: int  # index of the block it comes from
    text: str
    letters: int
    reading: tuple[str, float] | None  # what sections are judged by; None when too short to read
    language: str | None  # fastText's own reading, None when too short to read
    label: str | None = None  # the section it belongs to
    keep: bool = False


@dataclass(frozen=True)
class Sections:
    kept: list[str | None]  # per block: the text kept, None for a block of another language
    dropped: list[list[tuple[str, str]]]  # per block: (line or block left out, its language)


def _units(blocks: list[tuple[str, str]], settings: Settings) -> list[_Unit]:
    """Each text block read on its own (fastText's reading, without the configured runner-up a
    short text gets: a Galician line would pass for Spanish); a block of several lines read
    as no language surely (a page printing a sentence per language), or with a tenth of its
    letters in another script than its reading's (a Bengali form's labels above its English
    footer), as its lines; a table as one unit without letters."""
    def unit(i: int, text: str) -> _Unit:
        letters = weighted_letters(text)
        reading = detect_block(text, settings, prefer_configured=False) if letters >= MIN_DETECT_LETTERS else None
        language = reading[0] if reading else None
        if 2 * max(script_letters(text, lang) for lang in settings.languages) < letters:
            # mostly letters no configured language is written in, however short: a Bengali
            # form label, a glyph table fastText reads as English
            reading = ("und", 0.0)
        return _Unit(i, text, letters, reading, language)

    units = []
    for i, (text, kind) in enumerate(blocks):
        if kind != "text":
            units.append(_Unit(i, text, 0, None, None))
            continue
        whole = unit(i, text)
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1 and (whole.reading is None or whole.reading[1] < SECTION_MIN_SCORE
                               or 10 * script_letters(text, whole.reading[0]) < 9 * whole.letters):
            units += [unit(i, line) for line in lines]
        else:
            units.append(whole)
    return units


def _label_sections(units: list[_Unit]) -> None:
    """A unit read takes its reading; one too short to read the section of the next one read (a
    heading stands above its text); one without letters (a table, a number), and what is
    left at the end, the section of the one before."""
    following: str | None = None
    for unit in reversed(units):
        unit.label = unit.reading[0] if unit.reading else (following if unit.letters else None)
        following = unit.label or following
    preceding: str | None = None
    for unit in units:
        unit.label = unit.label or preceding
        preceding = unit.label


def _mean_score(units: list[_Unit]) -> float:
    read = [u for u in units if u.reading]
    return sum(u.letters * u.reading[1] for u in read) / max(1, sum(u.letters for u in read))


def configured_sections(blocks: list[tuple[str, str]], settings: Settings) -> Sections:
    """The text to keep of each block (text, kind) of a document in several languages: the
    sections written in a configured language, as a leaflet, a declaration of conformity or a
    manual prints one text for each of its markets; and what is left out, in the language
    it was read as (a line too short to read, that of the section it stands in).

    Each unit (``_units``) takes its own reading, not the document's smoothed label: here the
    next block is as likely to be in another language as in this one. A run of units in one
    configured language read at ``SECTION_MIN_SCORE`` on average is a section when it holds
    ``SECTION_MIN_LETTERS``: a Portuguese paragraph read as Spanish is short or unsure, a
    Spanish section neither. A language with a section keeps its shorter runs read so too (a
    paragraph, then its translation). A leaflet prints each language once, a manual once a
    chapter: a language with ``SCATTERED_SECTIONS`` sections or more between another language's
    text is that text misread, unless it was read surely (``SURE_SCORE``). What is kept must
    hold ``SECTION_MIN_LETTERS`` in all, or nothing is."""
    units = _units(blocks, settings)
    _label_sections(units)
    runs = [list(group) for _, group in groupby(units, key=lambda u: u.label)]
    read_runs = [run for run in runs if run[0].label in settings.languages and _mean_score(run) >= SECTION_MIN_SCORE]
    # a language with one section of SECTION_MIN_LETTERS keeps its shorter runs too (a
    # paragraph and its translation, one after the other)
    established = {run[0].label for run in read_runs if sum(u.letters for u in run) >= SECTION_MIN_LETTERS}
    kept_runs: dict[str, list[list[_Unit]]] = {}
    for run in read_runs:
        if run[0].label in established:
            kept_runs.setdefault(run[0].label, []).append(run)
    for lang_runs in kept_runs.values():
        sections = sum(sum(u.letters for u in run) >= SECTION_MIN_LETTERS for run in lang_runs)
        if sections < SCATTERED_SECTIONS or _mean_score([u for run in lang_runs for u in run]) >= SURE_SCORE:
            for unit in (u for run in lang_runs for u in run):
                unit.keep = True
    if sum(u.letters for u in units if u.keep) < SECTION_MIN_LETTERS:  # a font table's one English line
        for unit in units:
            unit.keep = False
    kept: list[list[str]] = [[] for _ in blocks]
    dropped: list[list[tuple[str, str]]] = [[] for _ in blocks]
    for unit in units:
        if unit.keep:
            kept[unit.block].append(unit.text)
        elif unit.text.strip():
            dropped[unit.block].append((unit.text, unit.language or unit.label or "und"))
    return Sections(["\n".join(parts) if parts else None for parts in kept], dropped)
