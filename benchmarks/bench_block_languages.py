#!/usr/bin/env python3
"""Language labels inside blocks, on real translated manuals: which language the chunks of a
translation carry where the translators left paragraphs in English.

The material: the Debian New Maintainers' Guide 1.2.53 as Debian ships it (the sample corpus's
packages, scripts/fetch_sample_corpus.py, sha256-checked), whole: the English guide and its
German, Spanish, Japanese and Chinese translations, each of which leaves some paragraphs, list
items and notes untranslated. Extraction sets two paragraphs at the same spacing in one block,
so an English paragraph and the Spanish one after it can reach the language stage as one.

The truth needs no language detector: a line of a translation (five words or more, mostly
letters, or any line with Han or kana) is English when its letters, spaces and punctuation
aside, occur in the English guide, and the translation's language otherwise. Each translation
goes through extract, language, structure and chunk; a line counts as labelled right when a
chunk holding it carries its language, and as unplaced when no chunk holds it whole (cut
between two chunks, or removed by cleaning). Weighted letters (a Han or kana character three).

Split by page: the guide's printed pages 1-8 (PDF pages 7-14, the sample corpus's, where the
rule was looked at and tuned) are ``tune``, the rest ``measure``. ``--manual edu`` measures on
a manual nothing was tuned on: the Debian Edu 12 manual (``debian-edu-doc-*``, the packages
scripts/build_edu_golden.py pins), every page ``measure``. Figures are printed, never
asserted; run it on two revisions to compare (docs/benchmarks.md gives the commands).

    .venv/bin/python benchmarks/bench_block_languages.py [--manual edu] [--time ROUNDS]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import build_edu_golden  # noqa: E402
import fetch_sample_corpus  # noqa: E402
from build_golden_set import fetch_deb  # noqa: E402

from pipeline.config import get_settings  # noqa: E402
from pipeline.stages import chunk, extract, language, structure  # noqa: E402
from pipeline.text.langid import CJK, KANA, NOT_LANGUAGE, weighted_letters  # noqa: E402

TUNE_PAGES = range(7, 15)  # PDF pages of printed pages 1-8: the sample corpus's subset
MIN_WORDS = 5
NOT_LETTERS = re.compile(r"[\W\d_]+")


def normalised(text: str) -> str:
    return NOT_LETTERS.sub("", text).lower()


def truth_lines(extracted, english: str, lang: str) -> list[tuple[int, str, str]]:
    """(page, line, its language) for each line a truth can be given."""
    lines = []
    for page in extracted.pages:
        for block in page.blocks:
            for line in block.text.splitlines():
                prose = NOT_LANGUAGE.sub(" ", line)  # a link's address is no English
                cjk = bool(CJK.search(prose) or KANA.search(prose))
                words = [w for w in prose.split() if sum(ch.isalpha() for ch in w) >= 2]
                letters = sum(ch.isalpha() for ch in prose)
                if not cjk and (len(words) < MIN_WORDS or letters < 0.7 * len("".join(prose.split()))):
                    continue  # a command, a path, a name: no language of its own
                key = normalised(line)
                if len(key) >= 15:
                    lines.append((page.page_no, line, "en" if key in english else lang))
    return lines


def maint_guide(tmp: Path) -> dict[str, Path]:
    """The New Maintainers' Guide's PDFs, per language, from the sample corpus's packages."""
    manifest = json.loads(fetch_sample_corpus.MANIFEST.read_text(encoding="utf-8"))
    roots = fetch_sample_corpus.unpack_documents(manifest, tmp, record=False)
    return {doc["lang"]: fetch_sample_corpus.package_file(roots, doc, "pdf", "pdf_sha256", record=False)
            for doc in manifest["documents"]}


def edu_manual(tmp: Path) -> dict[str, Path]:
    """The Debian Edu 12 manual's PDFs, per language (pinned .debs, sha256-checked)."""
    pdfs = {}
    for lang, (package, sha256) in build_edu_golden.PACKAGES.items():
        deb = fetch_deb(fetch_sample_corpus.DOWNLOADS, package, build_edu_golden.VERSION, sha256)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp / lang)], check=True)
        pdfs[lang] = tmp / lang / "usr/share/doc" / package / "debian-edu-bookworm-manual.pdf"
    return pdfs


MANUALS = {"maint-guide": (maint_guide, TUNE_PAGES), "edu": (edu_manual, range(0))}


def split_cost(documents: list, settings, rounds: int) -> tuple[float, float]:
    """The language stage over the same documents with ``language_parts`` and without (each block
    whole), alternating in this process: seconds per page without, and the ratio."""
    seconds = {True: 0.0, False: 0.0}
    split = language.language_parts
    try:
        for r in range(rounds):
            for on in ((True, False) if r % 2 == 0 else (False, True)):
                language.language_parts = split if on else (lambda text, _settings: [text])
                started = time.perf_counter()
                for document in documents:
                    language.clean_and_detect(document, settings)
                seconds[on] += time.perf_counter() - started
    finally:
        language.language_parts = split
    pages = rounds * sum(len(d.pages) for d in documents)
    return seconds[False] / pages, seconds[True] / seconds[False]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--manual", choices=list(MANUALS), default="maint-guide")
    parser.add_argument("--time", type=int, default=0, metavar="ROUNDS",
                        help="also time the language stage with and without splitting mixed blocks")
    args = parser.parse_args()
    fetch, tune_pages = MANUALS[args.manual]
    settings = get_settings()
    tally: dict[tuple[str, str], Counter] = defaultdict(Counter)
    documents = []
    with tempfile.TemporaryDirectory(prefix="rosetta-guides-") as tmp:
        pdfs = fetch(Path(tmp))
        guides = list(pdfs)
        english = normalised("\n".join(b.text for p in extract.extract_file(pdfs["en"], settings, doc_id="en").pages
                                       for b in p.blocks))
        for lang in [lang for lang in guides if lang != "en"]:
            extracted = extract.extract_file(pdfs[lang], settings, doc_id=lang)
            documents.append(extracted)
            cleaned = language.clean_and_detect(extracted, settings)
            chunks = chunk.chunk_document(cleaned, structure.tag(cleaned), settings).chunks
            keyed = [(normalised(c.text), c.lang) for c in chunks]
            mixed: Counter = Counter()
            for page_no, line, truth in truth_lines(extracted, english, lang):
                split = "tune" if page_no in tune_pages else "measure"
                counts = tally[(lang, split)]
                key, letters = normalised(line), weighted_letters(line)
                holding = [(i, chunk_lang) for i, (text, chunk_lang) in enumerate(keyed) if key in text]
                kind = "en" if truth == "en" else "own"
                counts[f"{kind}_letters"] += letters
                if not holding:
                    counts[f"{kind}_unplaced"] += letters
                    continue
                counts[f"{kind}_right"] += letters * any(chunk_lang == truth for _, chunk_lang in holding)
                for i, _ in holding[:1]:
                    mixed[(i, kind)] += letters
            for i in {i for i, _ in mixed}:
                if mixed[(i, "en")] >= 100 and mixed[(i, "own")] >= 100:
                    tally[(lang, "tune" if chunks[i].page_start in tune_pages else "measure")]["mixed_chunks"] += 1
            print(f"{lang}: {len(extracted.pages)} pages, {len(chunks)} chunks", flush=True)
    print("\n| guide | split | English letters labelled en | own letters labelled own | unplaced | chunks with "
          "both (100 letters each) |")
    print("|---|---|---|---|---|---|")
    for split in ("tune", "measure") if tune_pages else ("measure",):
        total = Counter()
        for lang in [lang for lang in guides if lang != "en"]:
            counts = tally[(lang, split)]
            total.update(counts)
            print(row(lang, split, counts))
        print(row("**all**", split, total))
    if args.time:
        per_page, ratio = split_cost(documents, settings, args.time)
        print(f"\nlanguage stage: {1000 * per_page:.1f} ms a page with blocks whole; with mixed blocks split "
              f"{ratio:.2f}x ({args.time} rounds, alternating)")
    return 0


def row(name: str, split: str, c: Counter) -> str:
    def share(kind: str) -> str:
        placed = c[f"{kind}_letters"] - c[f"{kind}_unplaced"]
        return f"{c[f'{kind}_right'] / placed:.3f} of {placed}" if placed else "-"

    unplaced = (c["en_unplaced"] + c["own_unplaced"]) / max(1, c["en_letters"] + c["own_letters"])
    return f"| {name} | {split} | {share('en')} | {share('own')} | {unplaced:.3f} | {c['mixed_chunks']} |"


if __name__ == "__main__":
    sys.exit(main())
