"""Every regular expression applied to document text runs in time linear in the line length.

A pattern that backtracks (nested quantifiers over overlapping classes, a search that rescans
a long run from every start) stalls a stage on one adversarial line: the GPL-2's ALL-CAPS
"11. BECAUSE THE PROGRAM IS LICENSED FREE OF CHARGE, ..." took the old English title-line form
11 minutes. Each pattern is timed on adversarial lines of growing length (16 ... 10,000
characters) against a trivial linear pattern on the same line in the same process; the ratio
must stay under a constant bound at every length, which only a linear pattern can do. No
absolute time is asserted.
"""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path
from types import ModuleType

import pytest

from pipeline.extraction import hyphens, pdf
from pipeline.ocr import page as ocr_page
from pipeline.publish import checks
from pipeline.stages import chunk, structure
from pipeline.stores import lexical
from pipeline.text import cleaning, clauses, garbage, langid, regulations, sentences

# Modules whose patterns run on document text. Their patterns are module-level constants
# (checked below), so the timing test sees all of them.
TEXT_MODULES: tuple[ModuleType, ...] = (cleaning, garbage, langid, sentences, clauses, regulations, structure,
                                        chunk, pdf, hyphens, ocr_page, checks, lexical)
# Fine steps at first: an exponential pattern only just past the bound at 16 characters (the
# old title-line form: about 200x) is past any bound at 24, where at 64 it would run for hours.
# Under load the 16-character ratio fell under the bound and the next length hung the suite.
LENGTHS = (16, 24, 32, 64, 256, 1024, 4096, 10_000)
# A linear pattern costs a bounded number of steps per character, so its time over the trivial
# scan's stays under a constant; quadratic ones reach ~n/10 at 10,000 characters, exponential
# ones pass it within the first lengths.
RATIO_BOUND = 150
TRIVIAL = re.compile(r"(?:\x00\x01|\x02\x03)")  # tried at every position, never matches

WORDS_CAPS = "BECAUSE THE PROGRAM IS LICENSED FREE OF CHARGE THERE IS NO WARRANTY FOR "
WORDS_TITLE = "Because The Program Is Licensed Free Of Charge There Is No Warranty For of the and "


def _fill(unit: str, n: int, prefix: str = "", suffix: str = "") -> str:
    body = (unit * (n // max(1, len(unit)) + 1))[: max(0, n - len(prefix) - len(suffix))]
    return prefix + body + suffix


ATTACKS: dict[str, callable] = {
    # the GPL-2 line, and title-case words, each ending where a title line may not (",")
    "caps_words": lambda n: _fill(WORDS_CAPS, n, "11. ", ","),
    "caps_run": lambda n: _fill("ABCDEFGHIJKLMNOPQRSTUVWXYZ", n, "11. ", ","),
    "title_words": lambda n: _fill(WORDS_TITLE, n, "3. ", ";"),
    "digits_dots": lambda n: _fill("1.", n, "", "x,"),
    "dotted_numbers": lambda n: _fill("1.1.", n, "1.1 ", "。"),
    "digits": lambda n: _fill("1", n, "", "x"),
    "spaces": lambda n: _fill(" ", n, "", "x"),
    "dot_separators": lambda n: _fill(". ", n, "", "x"),
    "leader_dots": lambda n: _fill(" .", n, "§ 6 Erwerb", " 3x"),
    "dashes": lambda n: _fill("-", n, "", "x"),
    "ideographic_spaces": lambda n: _fill("\u3000", n, "２", "。"),
    "cjk_numerals": lambda n: _fill("一二三四五六七八九十百千〇零", n, "第", "x"),
    "cjk_paren": lambda n: _fill("（一", n, "", "x"),
    "fullwidth_digits": lambda n: _fill("１２３４５６７８９０", n, "第", "x"),
    "sentence_ends": lambda n: _fill("第一条。ただし", n, "", "x"),
    "commas_cjk": lambda n: _fill("，  ", n, "1.1 Debian", "x"),
    "parens": lambda n: _fill("(1)", n, "", "x"),
    "section_signs": lambda n: _fill("§ ", n, "", "x"),
    "letters": lambda n: _fill("a", n, "Cláusula ", "_"),
    "word_no_at": lambda n: _fill("a.", n, "", "b"),
    "slashes": lambda n: _fill("/a", n, "", " "),
    "url_like": lambda n: _fill("www.a", n, "http://", " "),
    "mixed_punct": lambda n: _fill("(a) 1. ", n, "", "x"),
}


def _text_patterns() -> dict[str, tuple[re.Pattern[str], bool]]:
    """Name -> (pattern, whether it is also searched: module patterns are timed under match and
    search alike, the clause forms under match, the way clauses.match_line applies them)."""
    found: dict[str, tuple[re.Pattern[str], bool]] = {}
    for module in TEXT_MODULES:
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                found[f"{module.__name__}.{name}"] = (value, True)
    for form in clauses.forms():
        found[f"clause form {form.id}"] = (form.regex, False)
    for rule in regulations._rules():
        found[f"regulation alias {rule.pattern.pattern}"] = (rule.pattern, True)
    return found


def _best_of(action, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def worst_ratio(pattern: re.Pattern[str], attack, searched: bool = True) -> tuple[float, int]:
    """The largest time(pattern) / time(trivial scan) over the lengths, and at which length;
    stops at the first length past the bound (an exponential pattern never reaches 10,000)."""
    worst = (0.0, 0)
    for n in LENGTHS:
        line = attack(n)
        apply = (lambda: (pattern.match(line), pattern.search(line))) if searched else (lambda: pattern.match(line))
        ratio = 0.0
        for repeats in (3, 7):  # a ratio past the bound is measured again, longer: the machine is shared
            trivial = _best_of(lambda: TRIVIAL.search(line), repeats)
            ratio = _best_of(apply, repeats) / max(trivial, 1e-7)
            if ratio <= RATIO_BOUND or ratio > 100 * RATIO_BOUND:
                break
        worst = max(worst, (ratio, n))
        if ratio > RATIO_BOUND:
            break
    return worst


@pytest.mark.parametrize("name", sorted(_text_patterns()))
def test_text_pattern_runs_in_linear_time(name):
    pattern, searched = _text_patterns()[name]
    slow = {}
    for attack_name, attack in ATTACKS.items():
        ratio, n = worst_ratio(pattern, attack, searched)
        if ratio > RATIO_BOUND:
            slow[attack_name] = f"{ratio:.0f}x the trivial scan at {n} chars"
    assert slow == {}, f"{name} ({pattern.pattern!r}) backtracks: {slow}"


# Known backtracking patterns: the old English title-line form (exponential) and the old
# mail-address part of langid.NOT_LANGUAGE (quadratic under search).
OLD_TITLE_LINE = re.compile(r"[ \t\u3000]*(?:(?P<num>\d{1,2})\.\s+(?=(?:[A-Z][\w'’-]*\s*|(?:of|for|and|the|to|a|an|"
                            r"in|on|or|by|with|not)\s+)+\.?\s*$))")
OLD_MAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")


@pytest.mark.parametrize("pattern, attack, searched", [(OLD_TITLE_LINE, "caps_words", False),
                                                       (OLD_MAIL, "word_no_at", True)])
def test_the_timing_check_catches_backtracking(pattern, attack, searched):
    assert worst_ratio(pattern, ATTACKS[attack], searched)[0] > RATIO_BOUND


def test_text_modules_keep_their_patterns_as_module_constants():
    """An inline re.search(r"...") in a text module would escape the timing test."""
    inline = []
    for module in TEXT_MODULES:
        source = Path(module.__file__).read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and \
                    node.func.attr in ("search", "match", "fullmatch", "finditer", "findall", "sub", "split") and \
                    node.args and isinstance(node.args[0], ast.Constant):
                inline.append(f"{module.__name__}:{node.lineno}")
    assert inline == []


def test_gpl2_all_caps_clause_is_no_title_line_and_title_lines_still_are():
    line = "11. BECAUSE THE PROGRAM IS LICENSED FREE OF CHARGE, THERE IS NO WARRANTY FOR THE PROGRAM, TO THE"
    found = clauses.match_line(line, "en")
    assert found is None or found.form.id != "en_numbered_heading"
    assert clauses.match_line("3. Protecting Users' Legal Rights From Anti-Circumvention Law.", "en").number == "3"


def test_gpl2_pdf_goes_through_structure_and_chunk(settings):
    """The real GPL-2 (appendix F of Debian's installation guide, 4 pages) end to end: its
    ALL-CAPS sections 11 and 12 once stalled the structure stage; all 13 sections come out as
    clause chunks."""
    from pipeline.stages import chunk, extract, language, structure

    pdf = Path(__file__).parent / "fixtures" / "en-gpl2.pdf"
    cleaned = language.clean_and_detect(extract.extract_file(pdf, settings, doc_id="en-gpl2"), settings)
    tagged = structure.tag(cleaned)
    chunks = chunk.chunk_document(cleaned, tagged, settings).chunks
    assert cleaned.lang == "en" and len(chunks) >= 13
    assert {str(n) for n in range(13)} <= {c.clause_number for c in chunks}
    assert any(c.text.startswith("11. BECAUSE THE PROGRAM IS LICENSED FREE OF CHARGE") for c in chunks)
