#!/usr/bin/env python3
"""Build the five-language retrieval golden set (benchmarks/golden/install-guide.json).

Source: the Debian Installation Guide (``installation-guide-amd64``, bookworm, pinned and
sha256-checked), written in English and translated into de, es, ja and zh_CN from one
DocBook source, so every translated HTML page carries the same section anchors
(``<a name="...">`` in each heading) as the English one. A section is keyed by its page
and anchor; its translations pair mechanically.

* **pool** (what is searched): each section's body in every language that translates it: its
  paragraphs after the heading, up to ``PASSAGE_CHARS`` (CJK: a third), the heading left
  out, so a heading query must find the body. Five translations of one passage sit in the
  pool side by side, and the guide's many look-alike sections (booting from USB, CD, the
  network; per-firmware variants) are its near-duplicates; each passage keeps its heading
  (``heading``), as a chunk keeps its ``heading_path``;
* **queries**, short, in all five languages: the section heading without its number
  (``heading``) and the first sentence of the body (``first_sentence``); a query holding a
  Latin acronym that occurs in at least three sections of the pool (USB, BIOS, DHCP...) is
  flagged ``acronym``: the trap where a lexical leg matches the acronym everywhere. A query
  text shared by two sections of its language is dropped (ambiguous);
* **no-answer traps**: a tenth of the sections (by the hash of their key) is left out of
  the pool; their queries must be refused;
* **split** by section (hash of the key): ``dev`` for every choice (fusion weights,
  thresholds, embedder) and ``test``, evaluated only.

A query is answered when a hit belongs to its section, in any language
(pipeline/retrieval/evaluation.py).

    .venv/bin/python scripts/build_retrieval_golden.py     # fetches the .deb (sha256-checked)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from html.parser import HTMLParser
from pathlib import Path

from build_golden_set import fetch_deb

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "golden" / "install-guide.json"
PACKAGE, VERSION = "installation-guide-amd64", "20230508+deb12u1"
DEB_SHA256 = "812c43e1dc906daf671e3efe953dc023205c238e5bd5a3021ce4ca142793573a"
LOCALES = {"en": "en", "de": "de", "es": "es", "ja": "ja", "zh": "zh_CN"}
CJK_LANGS = ("ja", "zh")
PASSAGE_CHARS = 600
NUMBER = re.compile(r"^\s*(?:[A-Z]\.)?[\d.]*\d\.?\s+|^\s*[A-Z]\.\d[\d.]*\.?\s+")
ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{1,6}\b")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÁÉÍÓÚÑÄÖÜ¿¡])|(?<=[。！？])")


def digest(text: str) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16)


class Sections(HTMLParser):
    """Anchor -> (heading, [paragraphs]) of one DocBook HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: dict[str, dict] = {}
        self.current: dict | None = None
        self.in_heading = self.in_paragraph = False
        self.skip_depth = 0
        self.buffer: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("h1", "h2", "h3", "h4") and "title" in (attrs.get("class") or ""):
            self.in_heading, self.buffer = True, []
        elif tag == "a" and self.in_heading and attrs.get("name"):
            self.current = self.sections.setdefault(attrs["name"], {"heading": "", "paragraphs": []})
        elif tag == "p" and self.current is not None and not self.in_heading:
            self.in_paragraph, self.buffer = True, []
        elif tag in ("pre", "table") and self.in_paragraph:
            self.skip_depth += 1

    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "h3", "h4") and self.in_heading:
            self.in_heading = False
            if self.current is not None and not self.current["heading"]:
                self.current["heading"] = " ".join("".join(self.buffer).split())
        elif tag == "p" and self.in_paragraph:
            self.in_paragraph = False
            text = " ".join("".join(self.buffer).split())
            if text and self.current is not None:
                self.current["paragraphs"].append(text)
        elif tag in ("pre", "table") and self.skip_depth:
            self.skip_depth -= 1

    def handle_data(self, data):
        if (self.in_heading or self.in_paragraph) and not self.skip_depth:
            self.buffer.append(data)


def read_sections(page: Path) -> dict[str, dict]:
    parser = Sections()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.sections


def passage(paragraphs: list[str], lang: str) -> str:
    limit = PASSAGE_CHARS // 3 if lang in CJK_LANGS else PASSAGE_CHARS
    kept: list[str] = []
    for paragraph in paragraphs:
        kept.append(paragraph)
        if sum(map(len, kept)) >= limit:
            break
    return " ".join(kept)[: limit * 2]


def first_sentence(paragraph: str) -> str:
    return SENTENCE_END.split(paragraph, maxsplit=1)[0].strip()


def short_enough(text: str, lang: str) -> bool:
    size = len(text) if lang in CJK_LANGS else len(text.split())
    return (2 <= size <= 60) if lang in CJK_LANGS else (1 <= size <= 30)


def build(deb: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        root = Path(tmp) / "usr/share/doc/installation-guide-amd64"
        by_lang = {lang: {f"{page.stem}#{anchor}": section for page in sorted((root / locale).glob("*.html"))
                          for anchor, section in read_sections(page).items()}
                   for lang, locale in LOCALES.items()}
    english = by_lang["en"]
    keys = sorted(k for k, s in english.items() if s["paragraphs"] and len(passage(s["paragraphs"], "en")) >= 80)
    no_answer = {k for k in keys if digest("noanswer:" + k) % 10 == 0}
    passages = []
    for key in keys:
        if key in no_answer:
            continue
        for lang in LOCALES:
            section = by_lang[lang].get(key)
            if section and section["paragraphs"] and (lang == "en" or section["paragraphs"] != english[key]["paragraphs"]):
                passages.append({"id": f"{key}:{lang}", "section": key, "lang": lang,
                                 "heading": NUMBER.sub("", section["heading"]).strip(),
                                 "text": passage(section["paragraphs"], lang)})
    acronym_sections: dict[str, set[str]] = defaultdict(set)
    for p in passages:
        for acronym in ACRONYM.findall(p["text"]):
            acronym_sections[acronym].add(p["section"])
    shared = {a for a, sections in acronym_sections.items() if len(sections) >= 3}
    candidates = []
    for key in keys:
        for lang in LOCALES:
            section = by_lang[lang].get(key)
            if not section or not section["paragraphs"]:
                continue
            for kind, text in (("heading", NUMBER.sub("", section["heading"]).strip()),
                               ("first_sentence", first_sentence(section["paragraphs"][0]))):
                if text and short_enough(text, lang):
                    candidates.append({"lang": lang, "type": kind, "text": text, "section": key})
    # an untranslated heading or sentence in a translation is not a query in that language
    english_texts = {c["text"] for c in candidates if c["lang"] == "en"}
    candidates = [c for c in candidates if c["lang"] == "en" or c["text"] not in english_texts]
    text_sections = Counter((c["lang"], c["text"]) for c in candidates)
    queries = []
    for c in candidates:
        if text_sections[(c["lang"], c["text"])] > 1:
            continue
        key = c["section"]
        queries.append({"id": f"{key}:{c['lang']}:{c['type']}", "lang": c["lang"], "type": c["type"],
                        "acronym": any(a in shared for a in ACRONYM.findall(c["text"])), "text": c["text"],
                        "relevant": None if key in no_answer else key,
                        "split": "dev" if digest("split:" + key) % 2 == 0 else "test"})
    return {
        "name": "install-guide",
        "source": {"package": PACKAGE, "version": VERSION, "deb_sha256": DEB_SHA256,
                   "pages": "usr/share/doc/installation-guide-amd64/{en,de,es,ja,zh_CN}/*.html"},
        "construction": "scripts/build_retrieval_golden.py (sections paired by page and heading anchor)",
        "reference_language": "en",
        "passages": passages,
        "queries": queries,
        "shared_acronyms": sorted(shared),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "rosetta" / "anchor-debs")
    args = parser.parse_args()
    golden = build(fetch_deb(args.cache, PACKAGE, VERSION, DEB_SHA256))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(golden, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    counts = Counter((q["split"], q["relevant"] is None) for q in golden["queries"])
    print(f"{OUT.relative_to(ROOT)}: {len(golden['passages'])} passages, {len(golden['queries'])} queries "
          f"(dev {counts[('dev', False)]} + {counts[('dev', True)]} no-answer, test {counts[('test', False)]} + "
          f"{counts[('test', True)]} no-answer), sha256 {hashlib.sha256(OUT.read_bytes()).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
