#!/usr/bin/env python3
"""Translation groups on real chunks: what `rosetta search` lists under a hit, and what it shows
twice.

The golden set's pool holds whole sections, one passage each, so the grouping rule
(pipeline/retrieval/fusion.py) tuned there never met a section that the chunk stage cuts into
a different number of chunks per language. Here real documents go through extract, clean,
structure and chunk as a batch runs them, are embedded and aligned with the configured
embedder, and every chunk's first sentence and every section heading is asked (the vector
leg's 50 nearest chunks of the set, fused and grouped as search does). Three sets:

* ``tune``: the Debian New Maintainers' Guide in five languages, sections 2.3-3.4 (PDF pages
  15 to the page before chapter 4, which starts a page in each translation): the pages the
  rule was chosen on;
* ``measure``: the same guides' pages of the sample corpus (chapter 1 and sections 2.1-2.2),
  not looked at while choosing;
* ``legal``: the real licences of scripts/fetch_legal_texts.py. Two pairs translate each other
  (the Arphic and IPA font licences: en/zh, en/ja); the rest are licences that share topic and
  numbering but are no translations (GPL-3 section 5 and Mulan PSL's 第五条): what a rule
  that trusts numbers must not merge.

A chunk's section is its document's translation family and the number of the outermost
clause holding it (clauses.number_key). Printed per set, for the top five hits: translations
listed and how many are of another section (same family) or of another document family;
recall (of the languages that have a chunk of the shown section among the candidates, those
listed under the hit or under an earlier hit of that section); later duplicates (a hit
showing a section that an earlier hit already showed or listed, in another language and
from another document); and
copies (the same text in another document, ``fusion.is_copy``): listed under a hit, and
shown as a hit of their own below a hit that holds the text.

The documents of a set are paired as the load step pairs a batch (pipeline/retrieval/pairing.py);
``--unpaired`` groups them as chunks loaded before pairing (similarity alone), the baseline.

``--worst-case`` times the grouping alone on seventy chunks of one language from seventy
documents, close in meaning and sharing no text (one template filled seventy times: every
pair is checked for a copy), against the same chunks spread over five languages.

    .venv/bin/python benchmarks/bench_translation_groups.py [--sets tune measure legal] [--unpaired] [--worst-case]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from fetch_legal_texts import fetch as fetch_legal  # noqa: E402
from fetch_sample_corpus import package_file, unpack_documents, write_page_subset  # noqa: E402

from pipeline.config import Settings, get_settings  # noqa: E402
from pipeline.embedding.embedders import get_embedder  # noqa: E402
from pipeline.retrieval.evaluation import aligned, encode_cached  # noqa: E402
from pipeline.retrieval import pairing  # noqa: E402
from pipeline.retrieval.fusion import Candidate, FusionParams, fuse, group_translations, is_copy  # noqa: E402
from pipeline.retrieval.retriever import fusion_params  # noqa: E402
from pipeline.stages import chunk, extract, language, structure  # noqa: E402
from pipeline.text.clauses import number_key  # noqa: E402

# sections 2.3-3.4: chapter 4 starts page 23 in en and zh, page 25 in de, es and ja
TUNE_PAGES = {"en": (15, 22), "de": (15, 24), "es": (15, 24), "ja": (15, 24), "zh": (15, 22)}
LEGAL_FAMILIES = {"en-arphic-pl": "arphic", "zh-arphic-pl-simplified": "arphic", "zh-arphic-pl-traditional": "arphic",
                  "en-ipa-font-license": "ipa", "ja-ipa-font-license": "ipa"}
CANDIDATES = 50
TOP = 5
FIRST_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")


def guide_pdfs(pages: str, into: Path) -> dict[str, Path]:
    """The sample corpus's maint-guide PDFs (``measure``: its own pages) or their tuning pages."""
    manifest = json.loads((ROOT / "samples" / "manifest.json").read_text(encoding="utf-8"))
    guides = [d for d in manifest["documents"] if d["package"].startswith("maint-guide")]
    roots = unpack_documents({"documents": guides}, into / "debs", record=False)
    out = {}
    for doc in guides:
        first, last = doc["pages"] if pages == "measure" else TUNE_PAGES[doc["lang"]]
        out[f"maint-guide-{doc['lang']}"] = into / f"maint-guide-{doc['lang']}.pdf"
        write_page_subset(package_file(roots, doc, "pdf", "pdf_sha256", record=False), first, last,
                          out[f"maint-guide-{doc['lang']}"])
    return out


def chunks_of(pdfs: dict[str, Path], settings: Settings) -> list[dict]:
    found = []
    for name, pdf in pdfs.items():
        cleaned = language.clean_and_detect(extract.extract_file(pdf, settings, doc_id=name), settings)
        for c in chunk.chunk_document(cleaned, structure.tag(cleaned), settings).chunks:
            found.append({**c.model_dump(), "doc_id": name, "chunk_index": int(c.chunk_id.rsplit(":", 1)[1])})
        print(f"  {name}: {sum(c['doc_id'] == name for c in found)} chunks", flush=True)
    return found


def queries_of(chunks: list[dict]) -> list[dict]:
    asked, headings = [], set()
    for c in chunks:
        first = FIRST_SENTENCE.split(c["text"].strip())[0][:200]
        if len(first) > 8:
            asked.append({"text": first, "lang": c["lang"]})
        heading = (c["heading_path"] or [""])[-1]
        if heading and (c["lang"], heading) not in headings:
            headings.add((c["lang"], heading))
            asked.append({"text": heading, "lang": c["lang"]})
    return asked


def family_of(c: Candidate, family: dict[str, str]) -> str:
    return family.get(c.doc_id, c.doc_id)


def section(c: Candidate, family: dict[str, str]) -> tuple[str, str] | None:
    numbers = c.properties.get("clause_numbers")
    return (family_of(c, family), number_key(numbers[0])) if numbers else None


def score(chunks: list[dict], settings: Settings, family: dict[str, str], paired: bool = True) -> dict[str, float]:
    embedder = get_embedder(settings.embedding.model, settings.embedding.batch_size)
    params = fusion_params(settings, embedder.name)
    vectors = aligned(settings, embedder, encode_cached(settings, embedder, [c["text"] for c in chunks]),
                      [c["lang"] for c in chunks])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    if paired:  # as the load step pairs a batch of these documents
        chunks = [p for _, p, _ in pairing.with_partners([(str(i), c, vectors[i]) for i, c in enumerate(chunks)],
                                                           params.group_similarity)]
    asked = queries_of(chunks)
    query_vectors = aligned(settings, embedder, encode_cached(settings, embedder, [q["text"] for q in asked], query=True),
                            [q["lang"] for q in asked])
    n = dict.fromkeys(("hits", "listed", "other_section", "other_document", "available", "covered", "duplicates",
                       "copies_listed", "copies_shown"), 0)
    for q, vector in zip(asked, query_vectors):
        similarity = vectors @ vector
        candidates = [Candidate(uuid=str(i), properties=chunks[i], vector=vectors[i], similarity=float(similarity[i]),
                                vector_rank=rank)
                      for rank, i in enumerate(np.argsort(-similarity)[:CANDIDATES])]
        covered: dict[tuple[str, str], set[str]] = {}  # section -> languages shown or listed so far
        shown_in: dict[tuple[str, str], str] = {}  # section -> the language of the hit that first held it
        held_by: dict[tuple[str, str], set[str]] = {}  # section -> the documents of the chunks that held it
        earlier: list[Candidate] = []  # the members of the hits above
        for group in group_translations(fuse(candidates, params), q["lang"], settings.reference_language, params, TOP):
            n["copies_listed"] += len(group.copies)
            n["copies_shown"] += any(m.lang == group.shown.lang and m.doc_id != group.shown.doc_id
                                     and is_copy(m, group.shown) for m in earlier)
            earlier += group.members
            for t in group.translations:
                n["listed"] += 1
                same_family = family_of(t, family) == family_of(group.shown, family)
                n["other_document"] += not same_family
                n["other_section"] += same_family and section(t, family) != section(group.shown, family)
            key = section(group.shown, family)
            if key is not None:
                n["hits"] += 1
                # another part of a document that holds two languages (the Spanish guide's
                # English paragraphs) is another passage, not the section again
                n["duplicates"] += (key in shown_in and shown_in[key] != group.shown.lang
                                    and group.shown.doc_id not in held_by[key])
                there = {c.lang for c in candidates if section(c, family) == key} - {group.shown.lang}
                listed = covered.get(key, set()) | {t.lang for t in group.translations if section(t, family) == key}
                n["available"] += len(there)
                n["covered"] += len(there & listed)
            for m in group.members:
                if section(m, family) is not None:
                    covered.setdefault(section(m, family), set()).add(m.lang)
                    shown_in.setdefault(section(m, family), group.shown.lang)
                    held_by.setdefault(section(m, family), set()).add(m.doc_id)
    return {"queries": len(asked), **n, "recall": n["covered"] / max(n["available"], 1)}


def worst_case(repeat: int = 20) -> None:
    rng, words = random.Random(0), [f"w{i}" for i in range(3000)]
    centre = np.ones(512, dtype=np.float32)
    vectors = centre + 0.01 * np.random.default_rng(0).standard_normal((CANDIDATES + 20, 512)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)  # each pair at about 0.95
    texts = [" ".join(rng.choice(words) for _ in range(200)) for _ in vectors]
    params = FusionParams(0.1, 1, 0.83)

    def ms(langs: list[str]) -> float:
        ranked = [Candidate(str(i), {"lang": langs[i % len(langs)], "doc_id": f"d{i}", "text": text}, v, 0.9 - i / 1000)
                  for i, (v, text) in enumerate(zip(vectors, texts))]
        started = time.perf_counter()
        for _ in range(repeat):
            group_translations(ranked, "en", "en", params, 10)
        return (time.perf_counter() - started) / repeat * 1000

    one, five = ms(["en"]), ms(["en", "de", "es", "ja", "zh"])
    print(f"{len(vectors)} candidates: one language {one:.1f} ms, five languages {five:.1f} ms, ratio {one / five:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", choices=("tune", "measure", "legal"), default=["tune", "measure", "legal"])
    parser.add_argument("--worst-case", action="store_true", help="time the grouping alone (see above) and stop")
    parser.add_argument("--unpaired", action="store_true",
                        help="group as for chunks loaded before document pairing (similarity alone)")
    args = parser.parse_args()
    if args.worst_case:
        worst_case()
        return 0
    settings = get_settings()
    for name in args.sets:
        print(f"{name}:", flush=True)
        with tempfile.TemporaryDirectory(prefix="rosetta-groups-") as tmp:
            pdfs = fetch_legal() if name == "legal" else guide_pdfs(name, Path(tmp))
            chunks = chunks_of(pdfs, settings)
        family = LEGAL_FAMILIES if name == "legal" else dict.fromkeys(pdfs, "maint-guide")
        f = score(chunks, settings, family, paired=not args.unpaired)
        print(f"  {f['queries']} queries, {f['hits']} numbered hits in the top {TOP}: {f['listed']} translations listed, "
              f"{f['other_section']} of another section, {f['other_document']} of another document; "
              f"recall {f['recall']:.3f} ({f['covered']} of {f['available']} languages); "
              f"later duplicates {f['duplicates']}; copies listed {f['copies_listed']}, "
              f"a copy of a chunk above shown {f['copies_shown']} times", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
