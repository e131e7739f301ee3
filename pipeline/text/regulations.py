"""Regulation enrichment (the enrich stage): which regulations a chunk names, and their facts.

The regulations live in regulations.yaml (data, not code).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

REGULATIONS_FILE = Path(__file__).with_name("regulations.yaml")


@dataclass(frozen=True)
class AliasRule:
    regulation: str
    pattern: re.Pattern[str]
    literal: str  # a substring of every match (casefolded when the pattern ignores case): a cheap test first
    context: tuple[re.Pattern[str], ...] = ()  # non-empty => ambiguous: needs one of these in the chunk


CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _alias_pattern(alias: str) -> re.Pattern[str]:
    """CJK: a substring. Latin: a whole word or phrase; abbreviations (one word, or with
    digits) case-sensitive, multi-word names case-insensitive."""
    if CJK.search(alias):
        return re.compile(re.escape(alias))
    words = alias.split()
    flags = re.IGNORECASE if len(words) > 1 and not any(c.isdigit() for c in alias) else 0
    return re.compile(r"(?<![\w-])" + r"\s+".join(map(re.escape, words)) + r"(?![\w-])", flags)


def _rule(reg_id: str, alias: str, context: tuple[re.Pattern[str], ...] = ()) -> AliasRule:
    """The alias's rule; its literal is the alias's first word (all of a CJK alias), casefolded
    when the pattern ignores case."""
    pattern = _alias_pattern(alias)
    word = alias if CJK.search(alias) else alias.split()[0]
    return AliasRule(reg_id, pattern, word.casefold() if pattern.flags & re.IGNORECASE else word, context)


def _context_pattern(word: str) -> re.Pattern[str]:
    """A context word or phrase: a substring in CJK, else a whole word, any case."""
    if CJK.search(word):
        return re.compile(re.escape(word))
    return re.compile(r"(?<!\w)" + re.escape(word) + r"(?!\w)", re.IGNORECASE)


@lru_cache(maxsize=1)
def regulations() -> dict[str, dict[str, Any]]:
    entries = yaml.safe_load(REGULATIONS_FILE.read_text(encoding="utf-8"))
    return {e["id"]: e for e in entries}


@lru_cache(maxsize=1)
def _rules() -> tuple[AliasRule, ...]:
    rules = []
    for reg_id, entry in regulations().items():
        for alias in {*entry["aliases"], *entry["names"].values()}:
            rules.append(_rule(reg_id, alias))
        for amb in entry.get("ambiguous", []):
            rules.append(_rule(reg_id, amb["alias"], tuple(map(_context_pattern, amb["context"]))))
    return tuple(rules)


def find_regulations(text: str) -> list[str]:
    """Regulation ids named in ``text``; the longest alias wins where matches overlap
    (中国個人情報保護法 is PIPL, not APPI); an ambiguous alias counts only when one of its
    context words is in ``text`` too, and is otherwise left out."""
    folded = text.casefold()
    matches: list[tuple[int, int, str]] = []
    for rule in _rules():
        if rule.literal not in (folded if rule.pattern.flags & re.IGNORECASE else text):
            continue  # a substring test in C: most chunks name no regulation, and 133 scans cost
        if rule.context and not any(word.search(text) for word in rule.context):
            continue
        for m in rule.pattern.finditer(text):
            matches.append((m.start(), m.end(), rule.regulation))
    taken: list[tuple[int, int]] = []
    found: list[str] = []
    for start, end, reg_id in sorted(matches, key=lambda m: (-(m[1] - m[0]), m[0])):
        if any(start < e and s < end for s, e in taken):
            continue
        taken.append((start, end))
        if reg_id not in found:
            found.append(reg_id)
    return sorted(found)


def regulation_facts(ids: list[str]) -> dict[str, dict[str, str]]:
    regs = regulations()
    return {i: {k: regs[i][k] for k in ("jurisdiction", "effective_date", "scope", "penalty_provision")}
            | {"name": regs[i]["names"]["en"]} for i in ids}
