#!/usr/bin/env python3
"""Chinese questions in traditional characters against simplified passages, and back: three
sets for `rosetta eval --golden` (docs/benchmarks.md, "Traditional Chinese queries").

The pool is the Debian New Maintainers' Guide (the sample corpus's document, pinned in
samples/manifest.json), each section's body in en, de, es, ja and zh (zh_CN, simplified), as
scripts/build_retrieval_golden.py cuts the installation guide's. The queries are the Chinese
headings and first sentences of its sections: ``maint-guide-traditional.json`` takes them from
the guide's zh_TW translation (maint-guide-zh-tw, traditional characters and Taiwan's words:
套件 for 软件包, 檔案 for 文件), ``maint-guide-simplified.json`` from the zh_CN one the pool
holds, the same sections: what a reader of simplified Chinese finds, to hold the traditional
figures against. ``maint-guide-traditional-pool.json`` turns it round: the pool's Chinese is
the zh_TW edition, the queries the zh_CN ones. Split by section (the golden set's hash): dev
for any choice, test read only.

    .venv/bin/python benchmarks/traditional_chinese_queries.py /tmp/maint-guide
    .venv/bin/rosetta eval --golden /tmp/maint-guide/maint-guide-traditional.json --split test
    .venv/bin/rosetta eval --golden /tmp/maint-guide/maint-guide-simplified.json --split test
    .venv/bin/rosetta eval --golden /tmp/maint-guide/maint-guide-traditional-pool.json --split test
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from build_golden_set import fetch_deb  # noqa: E402
from build_retrieval_golden import (TRAP_PAGES_LEFT_OUT, digest, passage, pool_passages,  # noqa: E402
                                    read_html, section_queries, trap_packages, trap_sections)

TRADITIONAL = {"package": "maint-guide-zh-tw", "version": "1.2.53",
               "deb_sha256": "5f70f36f239c6378ef01215e7ba530d236ce0987a6d235e2b70ef089ae9823c8"}


def traditional_sections(deb: Path) -> dict[str, dict]:
    """The zh_TW guide's sections, keyed and left out as ``trap_sections`` keys the others."""
    sections = read_html(deb, "usr/share/doc/*/html/*.zh-tw.html")
    return {f"maint-guide/{key}": section for key, section in sections.items()
            if key.split("#")[0] not in TRAP_PAGES_LEFT_OUT and key.split("#")[0] != key.split("#")[1]}


def golden(name: str, passages: list[dict], queries: list[dict], source: dict) -> dict:
    return {"name": name, "source": source, "construction": "benchmarks/traditional_chinese_queries.py",
            "reference_language": "en", "passages": passages,
            "queries": [{"id": f"{q['section']}:{q['lang']}:{q['type']}", "lang": q["lang"], "type": q["type"],
                         "acronym": False, "text": q["text"], "relevant": q["section"],
                         "split": "dev" if digest("split:" + q["section"]) % 2 == 0 else "test"} for q in queries],
            "shared_acronyms": []}  # no query is flagged: the key marks a retrieval set for `rosetta eval`


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder for the three sets")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "rosetta" / "anchor-debs")
    args = parser.parse_args()
    packages = trap_packages()
    by_lang = trap_sections({lang: fetch_deb(args.cache, p["package"], p["version"], p["deb_sha256"])
                             for lang, p in packages.items()})
    traditional = traditional_sections(fetch_deb(args.cache, TRADITIONAL["package"], TRADITIONAL["version"],
                                                 TRADITIONAL["deb_sha256"]))
    english = by_lang["en"]
    keys = sorted(k for k, s in english.items() if s["paragraphs"] and len(passage(s["paragraphs"], "en")) >= 80)
    source = {"packages": {**packages, "zh_TW": TRADITIONAL}, "pages": "usr/share/doc/*/html/*.html"}
    taiwan = {**by_lang, "zh": traditional}
    args.out.mkdir(parents=True, exist_ok=True)
    for name, pooled_from, asked_from in (("simplified", by_lang, by_lang), ("traditional", by_lang, taiwan),
                                          ("traditional-pool", taiwan, by_lang)):
        passages = pool_passages(pooled_from, keys)
        pooled = {p["section"] for p in passages if p["lang"] == "zh"}  # a query asks for a section its language holds
        asked = [q for q in section_queries(asked_from, keys) if q["lang"] == "zh" and q["section"] in pooled]
        texts = [q["text"] for q in asked]
        queries = [q for q in asked if texts.count(q["text"]) == 1]  # a text two sections share is ambiguous
        built = golden(f"maint-guide-{name}", passages, queries, source)
        out = args.out / f"{built['name']}.json"
        out.write_text(json.dumps(built, ensure_ascii=False), encoding="utf-8")
        tested = sum(q["split"] == "test" for q in built["queries"])
        print(f"{out}: {len(passages)} passages, {len(queries)} Chinese queries ({tested} test)")


if __name__ == "__main__":
    main()
