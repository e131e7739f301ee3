#!/usr/bin/env python3
"""Embedders side by side: encode speed on this machine and cross-lingual retrieval on the
golden set's dev split, so an embedder is chosen by quality per second.

Per registered embedder (``--embedder``, default all), in one process: passages/s encoding
``--passages`` pool passages and queries/s encoding as many short queries one at a time
(as search does), timed fresh (no cache), each with its ratio to the first embedder; and
hit@5 / MRR@10 of de/es/zh/ja dev queries against the English passages alone, by vector
(production maps applied when fitted for that embedder), also by query type, and English
queries by type against the same passages (no translation: the bound for the rest). Times
are printed, never asserted.

    .venv/bin/python benchmarks/bench_embedders.py --passages 200
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.config import get_settings
from pipeline.embedding.embedders import EMBEDDERS, get_embedder
from pipeline.retrieval.evaluation import cross_lingual, golden_path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", action="append", choices=list(EMBEDDERS))
    parser.add_argument("--passages", type=int, default=200)
    args = parser.parse_args()
    settings = get_settings()
    golden = json.loads(golden_path(settings).read_text(encoding="utf-8"))
    dev = [q for q in golden["queries"] if q["split"] == "dev"]
    passages = [p["text"] for p in golden["passages"]][:: max(1, len(golden["passages"]) // args.passages)][: args.passages]
    queries = [q["text"] for q in dev][: args.passages]
    rows = []
    for name in args.embedder or list(EMBEDDERS):
        embedder = get_embedder(name, settings.embedding.batch_size)
        embedder.encode(["warm-up"])
        started = time.perf_counter()
        embedder.encode(passages)
        passage_rate = len(passages) / (time.perf_counter() - started)
        started = time.perf_counter()
        for query in queries:
            embedder.encode([query], query=True)
        query_ms = (time.perf_counter() - started) / len(queries) * 1000
        figures = cross_lingual(settings, golden, embedder, dev)
        hit5 = {lang: f["hit5"] for lang, f in figures.items() if len(lang) == 2}
        rows.append((name, passage_rate, query_ms, hit5, sum(hit5.values()) / len(hit5)))
        print(f"{name}: hit@5 by query type " + json.dumps({k: f["hit5"] for k, f in figures.items() if len(k) > 2}))
    base_rate, base_ms = rows[0][1], rows[0][2]
    for name, rate, ms, hit5, mean in rows:
        print(f"{name}: {rate:.1f} passages/s ({rate / base_rate:.2f}x), {ms:.0f} ms per query ({ms / base_ms:.2f}x); "
              f"dev cross-lingual hit@5 {json.dumps(hit5)} mean {mean:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
