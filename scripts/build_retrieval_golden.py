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
* **no-answer traps** (``relevant`` null), of two kinds (``trap``):

  - ``absent``: the answer is in no passage. Headings and first sentences of the Debian New
    Maintainers' Guide (the sample corpus's packages, pinned in samples/manifest.json), in
    all five languages: how to build, check, upload and update a package, which the
    installation guide never explains. Left out: its chapter 1 (Debian's social dynamics,
    the tools and documents needed, where to ask for help: the guide's "What is Debian?" and
    "Further Reading and Information" answer those), chapter stubs (their body is a table of
    contents) and the title page, a heading that is a bare file name (``control``,
    ``install``: not a question), and a question the installation guide also asks. The
    traps nearest to a pool passage were read by hand: none is answered there
    (docs/benchmarks.md, "The traps"). These count toward the bar;
  - ``on_topic``: a tenth of the guide's sections (by the hash of their key) is left out of
    the pool and its queries kept. The guide says much twice (appendix A retells chapters
    4-6), so a look-alike section still in the pool often answers them: the hard case,
    reported apart (docs/benchmarks.md, "The traps");
* **questions** (``question``), written by hand in benchmarks/golden/install-guide-questions.json:
  what a user asks, in words of its own rather than the guide's (the first two kinds copy the
  guide, and tuned on them alone a retriever learns to trust a verbatim lexical match): a
  section asked for in all five languages, and ``absent`` questions on packaging (how to
  upload, what debian/changelog holds) that the guide never answers;
* **paraphrases** (``paraphrase``), written by hand in
  benchmarks/golden/install-guide-paraphrases.json: a section asked for as a user types a
  title or key words, in words of its own rather than the heading's (a heading query copies
  its heading, and a no-answer model fitted on those alone learns to expect that); and
  off-topic traps there (``absent``, keys ``off-topic/...``: cooking, contract law, iPhone backups, some with an
  acronym the guide uses in another sense), as titles and as questions: with on-topic traps
  alone nothing teaches a model that a far question has no answer;
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

from pipeline.retrieval.evaluation import ABSENT, ON_TOPIC
from pipeline.retrieval.refusal import is_question

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "golden" / "install-guide.json"
QUESTIONS = ROOT / "benchmarks" / "golden" / "install-guide-questions.json"
PARAPHRASES = ROOT / "benchmarks" / "golden" / "install-guide-paraphrases.json"
PACKAGE, VERSION = "installation-guide-amd64", "20230508+deb12u1"
DEB_SHA256 = "812c43e1dc906daf671e3efe953dc023205c238e5bd5a3021ce4ca142793573a"
LOCALES = {"en": "en", "de": "de", "es": "es", "ja": "ja", "zh": "zh_CN"}
CJK_LANGS = ("ja", "zh")
PASSAGE_CHARS = 600
TRAP_DOCUMENT = "maint-guide"
TRAP_MANIFEST = ROOT / "samples" / "manifest.json"  # pins the guide's packages for the sample corpus
TRAP_LOCALES = {"en": "en", "de": "de", "es": "es", "ja": "ja", "zh": "zh-cn"}  # html/<page>.<locale>.html
TRAP_PAGES_LEFT_OUT = ("index", "start")  # the title page; chapter 1, which the guide's own sections answer
NUMBER = re.compile(r"^\s*(?:[A-Z]\.)?[\d.]*\d\.?\s+|^\s*[A-Z]\.\d[\d.]*\.?\s+")
ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{1,6}\b")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÁÉÍÓÚÑÄÖÜ¿¡])|(?<=[。！？])")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def digest(text: str) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16)


class Sections(HTMLParser):
    """Anchor -> (heading, [paragraphs]) of one DocBook HTML page (``<a name>`` in HTML,
    ``<a id>`` in the XHTML the New Maintainers' Guide is built as)."""

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
        elif tag == "a" and self.in_heading and (attrs.get("name") or attrs.get("id")):
            anchor = attrs.get("name") or attrs["id"]
            self.current = self.sections.setdefault(anchor, {"heading": "", "paragraphs": []})
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


def section_queries(by_lang: dict[str, dict[str, dict]], keys: list[str]) -> list[dict]:
    """Heading and first-sentence queries of the sections ``keys`` in every language that has
    them, short enough; an untranslated heading or sentence in a translation is not a query
    in that language."""
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
    english_texts = {c["text"] for c in candidates if c["lang"] == "en"}
    return [c for c in candidates if c["lang"] == "en" or c["text"] not in english_texts]


def hand_written(path: Path, kind: str, keys: list[str], cut: set[str]) -> list[dict]:
    """The queries written by hand in ``path``: ``answerable`` ones name a pool section (of
    type ``kind``), ``absent`` ones a key of their own (a ``question`` when they have a
    question's form, else of type ``kind``)."""
    written = json.loads(path.read_text(encoding="utf-8"))
    unknown = [q["section"] for q in written["answerable"] if q["section"] not in keys or q["section"] in cut]
    if unknown:
        raise ValueError(f"{path}: sections not in the pool: {unknown}")
    return ([{"lang": lang, "type": kind, "text": text, "section": q["section"]}
             for q in written["answerable"] for lang, text in q["queries"].items()]
            + [{"lang": lang, "type": "question" if is_question(text) else kind, "text": text,
                "section": q["key"]} for q in written["absent"] for lang, text in q["queries"].items()])


def names_a_topic(heading: str, lang: str) -> bool:
    """A heading that says something: two words apart, or a CJK character. The New
    Maintainers' Guide heads many sections with a bare file name (``control``, ``install``,
    ``package.cron.*``), which asks nothing an installation guide could be said not to answer."""
    return bool(CJK.search(heading)) if lang in CJK_LANGS else len(heading.split()) >= 2


def read_html(deb: Path, pattern: str) -> dict[str, dict]:
    """``page#anchor`` -> section of the HTML pages ``pattern`` (a glob inside the package)."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        return {f"{page.stem.split('.')[0]}#{anchor}": section for page in sorted(Path(tmp).glob(pattern))
                for anchor, section in read_sections(page).items()}


def trap_sections(debs: dict[str, Path]) -> dict[str, dict[str, dict]]:
    """The New Maintainers' Guide's sections per language, keyed ``maint-guide/page#anchor``,
    less the pages left out and the chapter stubs (a chapter's anchor is its page's name)."""
    by_lang = {}
    for lang, deb in debs.items():
        sections = read_html(deb, f"usr/share/doc/*/html/*.{TRAP_LOCALES[lang]}.html")
        by_lang[lang] = {f"{TRAP_DOCUMENT}/{key}": section for key, section in sections.items()
                         if key.split("#")[0] not in TRAP_PAGES_LEFT_OUT and key.split("#")[0] != key.split("#")[1]}
    return by_lang


def pool_passages(by_lang: dict[str, dict[str, dict]], keys: list[str]) -> list[dict]:
    """Each section of ``keys``: its body in every language that translates it (a translation
    whose paragraphs are the English ones is not one), its heading kept apart."""
    english = by_lang["en"]
    passages = []
    for key in keys:
        for lang in LOCALES:
            section = by_lang[lang].get(key)
            if section and section["paragraphs"] and (lang == "en" or section["paragraphs"] != english[key]["paragraphs"]):
                passages.append({"id": f"{key}:{lang}", "section": key, "lang": lang,
                                 "heading": NUMBER.sub("", section["heading"]).strip(),
                                 "text": passage(section["paragraphs"], lang)})
    return passages


def shared_acronyms(passages: list[dict]) -> set[str]:
    """The Latin acronyms that occur in at least three sections of the pool: a query holding one
    is the trap where a lexical leg matches the acronym everywhere."""
    acronym_sections: dict[str, set[str]] = defaultdict(set)
    for p in passages:
        for acronym in ACRONYM.findall(p["text"]):
            acronym_sections[acronym].add(p["section"])
    return {a for a, sections in acronym_sections.items() if len(sections) >= 3}


def build(deb: Path, trap_debs: dict[str, Path]) -> dict:
    by_lang = {lang: read_html(deb, f"usr/share/doc/installation-guide-amd64/{locale}/*.html")
               for lang, locale in LOCALES.items()}
    english = by_lang["en"]
    keys = sorted(k for k, s in english.items() if s["paragraphs"] and len(passage(s["paragraphs"], "en")) >= 80)
    cut = {k for k in keys if digest("noanswer:" + k) % 10 == 0}
    passages = pool_passages(by_lang, [k for k in keys if k not in cut])
    shared = shared_acronyms(passages)
    traps = trap_sections(trap_debs)
    trap_keys = sorted(traps["en"])
    guide_queries = section_queries(by_lang, keys)
    trap_queries = [c for c in section_queries(traps, trap_keys)
                    if c["type"] != "heading" or names_a_topic(c["text"], c["lang"])]
    asked = Counter((c["lang"], c["text"]) for c in guide_queries)
    # two sections ask it: ambiguous (a trap the guide also asks is dropped, never the guide's query)
    unambiguous = [c for c in guide_queries if asked[(c["lang"], c["text"])] == 1]
    trap_asked = asked + Counter((c["lang"], c["text"]) for c in trap_queries)
    unambiguous += [c for c in trap_queries if trap_asked[(c["lang"], c["text"])] == 1]
    unambiguous += hand_written(QUESTIONS, "question", keys, cut) + hand_written(PARAPHRASES, "paraphrase", keys, cut)
    queries = []
    for c in unambiguous:
        key = c["section"]
        answerable = key in english and key not in cut
        queries.append({"id": f"{key}:{c['lang']}:{c['type']}", "lang": c["lang"], "type": c["type"],
                        "acronym": any(a in shared for a in ACRONYM.findall(c["text"])), "text": c["text"],
                        "relevant": key if answerable else None,
                        **({} if answerable else {"trap": ON_TOPIC if key in cut else ABSENT}),
                        "split": "dev" if digest("split:" + key) % 2 == 0 else "test"})
    return {
        "name": "install-guide",
        "source": {"package": PACKAGE, "version": VERSION, "deb_sha256": DEB_SHA256,
                   "pages": "usr/share/doc/installation-guide-amd64/{en,de,es,ja,zh_CN}/*.html",
                   "absent_traps": {"packages": trap_packages(), "pages": "usr/share/doc/*/html/*.html"}},
        "construction": "scripts/build_retrieval_golden.py (sections paired by page and heading anchor)",
        "reference_language": "en",
        "passages": passages,
        "queries": queries,
        "shared_acronyms": sorted(shared),
    }


def trap_packages() -> dict[str, dict[str, str]]:
    """The New Maintainers' Guide's package per language, as samples/manifest.json pins it."""
    documents = json.loads(TRAP_MANIFEST.read_text(encoding="utf-8"))["documents"]
    return {d["lang"]: {"package": d["package"], "version": d["version"], "deb_sha256": d["deb_sha256"]}
            for d in documents if d["package"].startswith(TRAP_DOCUMENT) and d["lang"] in LOCALES}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "rosetta" / "anchor-debs")
    args = parser.parse_args()
    trap_debs = {lang: fetch_deb(args.cache, d["package"], d["version"], d["deb_sha256"])
                 for lang, d in trap_packages().items()}
    golden = build(fetch_deb(args.cache, PACKAGE, VERSION, DEB_SHA256), trap_debs)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(golden, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    counts = Counter((q["split"], q.get("trap", "answerable")) for q in golden["queries"])
    print(f"{OUT.relative_to(ROOT)}: {len(golden['passages'])} passages, {len(golden['queries'])} queries ("
          + "; ".join(f"{split} " + ", ".join(f"{counts[(split, kind)]} {kind}" for kind in ("answerable", ABSENT, ON_TOPIC))
                      for split in ("dev", "test"))
          + f"), sha256 {hashlib.sha256(OUT.read_bytes()).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
