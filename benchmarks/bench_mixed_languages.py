#!/usr/bin/env python3
"""What the language stage loads of documents in several languages, on real Debian text.

The set (scripts/build_mixed_language_set.py, pinned by benchmarks/mixed_language_manifest.json):
``multilingual`` documents, one package description in every language that translates it (3 to
16 of 23, English and an unconfigured one among them), ``foreign`` ones, five descriptions in
one unconfigured language (Portuguese, Italian, Danish, Slovak ...), and ``configured`` ones in
en, de, es, ja or zh; every paragraph labelled with its language. Each document goes through
``pipeline.stages.language.clean_and_detect`` (one block per paragraph, eight blocks a page)
with ``language.configured_sections`` on and off (off: a document the configured languages
cover less than ``language.min_confidence`` of is quarantined whole, as before), and prints:

- documents loaded, per kind (in part: with other-language sections left out);
- configured letters kept: of the letters of paragraphs in a configured language, the share in
  the loaded text (a paragraph counts when its text is there);
- other letters kept: of the loaded text's paragraphs, the share of letters in another language
  (in part: of the documents loaded in part, those whose other-language sections were left out;
  the rest are documents the configured languages cover, loaded whole as before);
- foreign documents loaded (any text of a document in an unconfigured language loaded).

Rules are chosen on ``--split tune`` only; ``measure`` is the other half. Figures are printed,
never asserted.

    .venv/bin/python benchmarks/bench_mixed_languages.py [--split measure] [--show 10]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import build_mixed_language_set  # noqa: E402

from pipeline.config import load_settings  # noqa: E402
from pipeline.contracts import Block, DocumentError, ExtractedDocument, Page  # noqa: E402
from pipeline.stages.language import clean_and_detect  # noqa: E402
from pipeline.text.langid import weighted_letters  # noqa: E402

BLOCKS_PER_PAGE = 8


def extracted(document: dict) -> ExtractedDocument:
    blocks = [b["text"] for b in document["blocks"]]
    pages = [blocks[i:i + BLOCKS_PER_PAGE] for i in range(0, len(blocks), BLOCKS_PER_PAGE)]
    return ExtractedDocument(
        doc_id=document["name"], source_path=f"/mixed/{document['name']}.pdf", sha256="0" * 64, engines=["ddtp"],
        pages=[Page(page_no=n + 1, width=595, height=842, method="text_layer", engine="ddtp", direction="horizontal",
                    blocks=[Block(text=t, bbox=(0, 0, 1, 1)) for t in page]) for n, page in enumerate(pages)])


def run(documents: list[dict], settings, show: int) -> dict[str, Counter]:
    tally: dict[str, Counter] = {}
    shown = 0
    for document in documents:
        counts = tally.setdefault(document["kind"], Counter())
        counts["documents"] += 1
        try:
            cleaned = clean_and_detect(extracted(document), settings)
            text, partly = cleaned.text, bool(cleaned.left_out)
        except DocumentError:
            text, partly = None, False
        counts["loaded"] += text is not None
        counts["partly"] += partly
        leaked = []
        for block in document["blocks"]:
            n = weighted_letters(block["text"])
            configured = block["lang"] in settings.languages
            counts["configured_letters"] += n * configured
            kept = text is not None and block["text"] in text
            counts["configured_kept"] += n * (configured and kept)
            counts["kept_letters"] += n * kept
            counts["other_kept"] += n * (kept and not configured)
            counts["partly_letters"] += n * (kept and partly)
            counts["partly_other"] += n * (kept and partly and not configured)
            if kept and not configured:
                leaked.append(block)
        counts["foreign_loaded"] += document["kind"] == "foreign" and text is not None
        if leaked and shown < show:
            shown += 1
            print(f"  other language kept in {document['name']} ({document['kind']}): "
                  + "; ".join(f"[{b['lang']}] {b['text'][:70]}" for b in leaked[:3]))
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=["tune", "measure"], default="tune")
    parser.add_argument("--show", type=int, default=0, help="print up to N documents that kept another language")
    args = parser.parse_args()
    documents = [d for d in build_mixed_language_set.load() if d["split"] == args.split]
    settings = load_settings()
    off = settings.model_copy(update={"language": settings.language.model_copy(update={"configured_sections": False})})
    print(f"{len(documents)} documents ({args.split}): " + ", ".join(
        f"{kind} {n}" for kind, n in Counter(d['kind'] for d in documents).items()))
    results = {}
    for label, config in (("quarantine whole (off)", off), ("configured sections (on)", settings)):
        started = time.perf_counter()
        results[label] = run(documents, config, args.show if config is settings else 0)
        results[label]["seconds"] = Counter(elapsed=time.perf_counter() - started)
    print(f"\n| {'':24} | {'kind':12} | loaded (in part) | configured letters kept | other letters kept "
          f"(in part) | foreign loaded |")
    print(f"|{'-' * 26}|{'-' * 14}|------------------|-------------------------|------------------------------|"
          f"----------------|")
    for label, tally in results.items():
        for kind in ("multilingual", "foreign", "configured"):
            c = tally.get(kind)
            if not c:
                continue
            configured = c["configured_kept"] / c["configured_letters"] if c["configured_letters"] else float("nan")
            other = c["other_kept"] / c["kept_letters"] if c["kept_letters"] else 0.0
            partly = c["partly_other"] / c["partly_letters"] if c["partly_letters"] else 0.0
            loaded = f"{c['loaded']}/{c['documents']} ({c['partly']})"
            print(f"| {label:24} | {kind:12} | {loaded:16} | {configured:23.3f} | {other:12.3f} ({partly:.3f}){'':8} | "
                  f"{c['foreign_loaded'] if kind == 'foreign' else '':>14} |")
    seconds = {label: tally["seconds"]["elapsed"] for label, tally in results.items()}
    ratio = seconds["configured sections (on)"] / seconds["quarantine whole (off)"]
    print(f"\ntime on/off: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
