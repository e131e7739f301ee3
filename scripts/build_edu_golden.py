#!/usr/bin/env python3
"""Build a second five-language retrieval set from a manual no setting was tuned on
(benchmarks/golden/edu-manual.json).

Source: the Debian Edu 12 "Bookworm" manual (``debian-edu-doc-{en,de,es,ja,zh-cn}``, pinned
and sha256-checked), written in English and translated into the other four languages from one
DocBook source. Its anchors are generated (``idm18`` in English is ``idm20`` in German), so a
section is keyed by its heading's number (``3.1.1``), which every translation keeps; a heading
without a number (the title page) is left out.

Built as the installation guide's set is (scripts/build_retrieval_golden.py): each section's
body in every language that translates it, the heading left out, and its heading and first
sentence as queries in all five languages, an ambiguous query dropped. Every query is
``test``: the set measures, it never chooses. It holds no hand-written queries and no traps:
it asks what the installation guide's set cannot, whether the figures hold on a manual on
other subjects (school networks, thin clients, user accounts), and how many answerable
queries the no-answer models, fitted on the installation guide, refuse there.

    .venv/bin/python scripts/build_edu_golden.py      # fetches the .debs (sha256-checked)
    .venv/bin/python -m pipeline.cli.main eval --golden benchmarks/golden/edu-manual.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from build_golden_set import fetch_deb
from build_retrieval_golden import (ACRONYM, LOCALES, passage, pool_passages, read_sections, section_queries,
                                    shared_acronyms)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "golden" / "edu-manual.json"
VERSION = "2.12.23~deb12u1"
PACKAGES = {  # language -> (package, sha256 of its .deb)
    "en": ("debian-edu-doc-en", "0a985aebd07dd69ea1d22c767c410fbca429e7c9fa378024bcaf4fedeb09506a"),
    "de": ("debian-edu-doc-de", "8bf494be7b24baf3b84cf080421357a01938e0f643971d6fb58834612882f2bc"),
    "es": ("debian-edu-doc-es", "83f3c1bc05cf8bd2604df2d59e48f0b426744aee2820abae022c640891306742"),
    "ja": ("debian-edu-doc-ja", "ef8656af2240094faffc85144ce659eda1114df5a9da14580f4bfbe95fa505bf"),
    "zh": ("debian-edu-doc-zh-cn", "d98fa11ea24238d38631d756ab75144c3d97dbd2a2e5a0223f2f7d8d975ecff2"),
}
MANUAL = "debian-edu-bookworm-manual.html"
SECTION_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)*)\.?\s")


def numbered_sections(deb: Path) -> dict[str, dict]:
    """Section number (``3.1.1``) -> section of the manual's one HTML page."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        (page,) = Path(tmp).glob(f"usr/share/doc/*/{MANUAL}")
        sections = read_sections(page).values()
    return {match.group(1): section for section in sections if (match := SECTION_NUMBER.match(section["heading"]))}


def build(debs: dict[str, Path]) -> dict:
    by_lang = {lang: numbered_sections(deb) for lang, deb in debs.items()}
    english = by_lang["en"]
    keys = sorted((k for k, s in english.items() if s["paragraphs"] and len(passage(s["paragraphs"], "en")) >= 80),
                  key=lambda k: [int(n) for n in k.split(".")])
    passages = pool_passages(by_lang, keys)
    shared = shared_acronyms(passages)
    candidates = section_queries(by_lang, keys)
    asked = Counter((c["lang"], c["text"]) for c in candidates)
    queries = [{"id": f"{c['section']}:{c['lang']}:{c['type']}", "lang": c["lang"], "type": c["type"],
                "acronym": any(a in shared for a in ACRONYM.findall(c["text"])),
                "text": c["text"], "relevant": c["section"], "split": "test"}
               for c in candidates if asked[(c["lang"], c["text"])] == 1]
    return {
        "name": "edu-manual",
        "source": {"packages": {lang: {"package": package, "version": VERSION, "deb_sha256": sha256}
                                for lang, (package, sha256) in PACKAGES.items()},
                   "pages": f"usr/share/doc/debian-edu-doc-{{en,de,es,ja,zh-cn}}/{MANUAL}"},
        "construction": "scripts/build_edu_golden.py (sections paired by heading number)",
        "reference_language": "en",
        "passages": passages,
        "queries": queries,
        "shared_acronyms": sorted(shared),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "rosetta" / "anchor-debs")
    args = parser.parse_args()
    golden = build({lang: fetch_deb(args.cache, package, VERSION, sha256) for lang, (package, sha256) in PACKAGES.items()})
    OUT.write_text(json.dumps(golden, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    counts = Counter((q["lang"], q["type"]) for q in golden["queries"])
    print(f"{OUT.relative_to(ROOT)}: {len(golden['passages'])} passages, {len(golden['queries'])} queries ("
          + ", ".join(f"{lang} {counts[(lang, 'heading')]}+{counts[(lang, 'first_sentence')]}" for lang in LOCALES)
          + f" headings+first sentences), sha256 {hashlib.sha256(OUT.read_bytes()).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
