#!/usr/bin/env python3
"""Clause structure on real legal texts: recall and precision of clause starts and of clause
numbers per language, before and after cleaning.

The documents (scripts/fetch_legal_texts.py, pinned and sha256-checked) and their expected
top-level clause numbers (benchmarks/legal_gold.json, written by reading them) are split into
tune and measure. A predicted clause start is a top-level CLAUSE element (no parent clause);
a start is right when the gold list holds a clause with the same number not yet matched
(numbers matched as a multiset), so recall and precision of clause starts are those of their
numbers. "Before cleaning" tags the extracted text with nothing removed.

    .venv/bin/python benchmarks/bench_legal_structure.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from fetch_legal_texts import fetch  # noqa: E402

from pipeline.config import get_settings  # noqa: E402
from pipeline.contracts import CleanedDocument, PageSpan  # noqa: E402
from pipeline.stages import extract, language, structure  # noqa: E402

GOLD = Path(__file__).with_name("legal_gold.json")


def uncleaned(cleaned: CleanedDocument, extracted) -> CleanedDocument:
    text = "\n\n".join(b.text for p in extracted.pages for b in p.blocks)
    return cleaned.model_copy(update={"text": text, "pages": [PageSpan(page_no=1, start=0, end=len(text))],
                                      "tables": [], "removed": []})


def top_level_numbers(doc: CleanedDocument) -> list[str]:
    return [e.number or "" for e in structure.tag(doc).elements if e.type == "CLAUSE" and e.parent_id is None]


def score(found: list[str], gold: list[str]) -> dict[str, int]:
    return {"found": len(found), "gold": len(gold), "right": sum((Counter(found) & Counter(gold)).values())}


def main() -> int:
    settings = get_settings()
    gold = {k: v for k, v in json.loads(GOLD.read_text(encoding="utf-8")).items() if not k.startswith("_")}
    paths = fetch(list(gold))
    totals: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    for n, (name, entry) in enumerate(gold.items(), start=1):
        extracted = extract.extract_file(paths[name], settings, doc_id=name)
        cleaned = language.clean_and_detect(extracted, settings)
        for stage, doc in (("before", uncleaned(cleaned, extracted)), ("after", cleaned)):
            found = top_level_numbers(doc)
            result = score(found, entry["clauses"])
            totals[(entry["lang"], entry["split"], stage)].update(result | {"docs": 1})
            print(f"[{n}/{len(gold)}] {name} ({stage} cleaning): {result['right']}/{result['gold']} right, "
                  f"{result['found']} found: {' '.join(found)}", flush=True)
    print("\nlang  split    cleaning  docs  gold  found  recall  precision")
    for (lang, split, stage), t in sorted(totals.items()):
        print(f"{lang:<5} {split:<8} {stage:<9} {t['docs']:>4}  {t['gold']:>4}  {t['found']:>5}  {t['right'] / t['gold']:>6.3f}"
              f"  {t['right'] / max(1, t['found']):>9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
