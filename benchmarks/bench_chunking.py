"""Structure + chunking throughput per language on the sample corpus, next to the stages
around it (extraction before, embedding of the chunks after), measured in one process.

For each document: extraction (text layer or OCR) and cleaning once; then structure.tag,
chunking.chunk_document and the configured embedder on the chunk texts (what the
embedding stage does), each the best of --repeat runs. Reported per language: pages,
sentences, chunks, seconds per stage, and chunks/s, sentences/s, pages/s of the chunker.

    .venv/bin/python benchmarks/bench_chunking.py [--corpus samples/corpus] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.config import get_settings  # noqa: E402
from pipeline.embedding.embedders import get_embedder  # noqa: E402
from pipeline.stages import chunk as chunking  # noqa: E402
from pipeline.stages import structure  # noqa: E402
from pipeline.stages.extract import extract_file  # noqa: E402
from pipeline.stages.language import clean_and_detect  # noqa: E402
from pipeline.text import sentences  # noqa: E402


def best_of(repeat: int, call):
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - started)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "samples" / "corpus")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    settings = get_settings()
    embedder = get_embedder(settings.embedding.model, settings.embedding.batch_size)
    embedder.encode(["warm-up"])
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for path in sorted(args.corpus.rglob("*.pdf")):
        started = time.perf_counter()
        extracted = extract_file(path, settings, doc_id=path.stem)
        extract_s = time.perf_counter() - started
        doc = clean_and_detect(extracted, settings)
        tag_s, tree = best_of(args.repeat, lambda: structure.tag(doc))
        chunk_s, chunked = best_of(args.repeat, lambda: chunking.chunk_document(doc, tree, settings))
        embed_s, _ = best_of(args.repeat, lambda: embedder.encode([c.text for c in chunked.chunks]))
        n_sentences = sum(len(sentences.split(doc.text, e.start, e.end, doc.lang))
                          for e in tree.elements if e.type in ("PARAGRAPH", "LIST", "HEADER"))
        row = totals["scan" if "ocr" in doc.extraction_methods else doc.lang]
        for key, value in (("docs", 1), ("pages", len(extracted.pages)), ("sentences", n_sentences),
                           ("chunks", len(chunked.chunks)), ("extract_s", extract_s), ("tag_s", tag_s),
                           ("chunk_s", chunk_s), ("embed_s", embed_s)):
            row[key] += value
        print(f"{path.relative_to(args.corpus)}: {doc.lang} extract {extract_s:.2f}s tag {tag_s:.3f}s "
              f"chunk {chunk_s:.2f}s embed {embed_s:.2f}s", file=sys.stderr)
    print("| lang | pages | sentences | chunks | extract s | tag s | chunk s | embed chunks s | "
          "chunker chunks/s | chunker sentences/s | chunker pages/s | extraction pages/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for lang, r in totals.items():
        work = r["tag_s"] + r["chunk_s"]
        print(f"| {lang} | {r['pages']:.0f} | {r['sentences']:.0f} | {r['chunks']:.0f} | {r['extract_s']:.2f} | "
              f"{r['tag_s']:.3f} | {r['chunk_s']:.2f} | {r['embed_s']:.2f} | {r['chunks'] / work:.0f} | "
              f"{r['sentences'] / work:.0f} | {r['pages'] / work:.1f} | {r['pages'] / r['extract_s']:.1f} |")


if __name__ == "__main__":
    main()
