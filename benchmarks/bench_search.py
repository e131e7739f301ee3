#!/usr/bin/env python3
"""Search latency on the sample corpus: the retriever (hybrid, groups, bar) against the vector
leg alone (what `rosetta search` did before), same queries, same process, same server.

The sample corpus (maint-guide in en, de, es, ja, zh) is ingested first through the real
corpus_refresh DAG into a scratch data root (skipped when ``--data-root`` already holds it).
Queries: the golden set's short queries in five languages (``--queries`` of them, both
splits; nothing is tuned here), each asked once per mode, modes alternating. Per query the
whole path is timed: language detection, embedding, alignment, the Weaviate calls, fusion
and grouping. Printed: p50/p95/mean ms per mode and the ratio; times are never asserted.

    .venv/bin/python benchmarks/bench_search.py --queries 300
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_ingest import copy_sources, free_port, sources

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--data-root", type=Path, help="a data root that already holds the sample corpus")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-search-"))
    data_root = args.data_root or scratch / "data"
    os.environ["ROSETTA__DATA_ROOT"] = str(data_root)
    os.environ.setdefault("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", f"sqlite:///{data_root / 'airflow.db'}")
    for key in ("ROSETTA__WEAVIATE__HTTP_PORT", "ROSETTA__WEAVIATE__GRPC_PORT"):  # never another user's server
        os.environ.setdefault(key, str(free_port()))
    from pipeline.cli.dag_runs import run_dag
    from pipeline.config import get_settings
    from pipeline.retrieval import Retriever
    from pipeline.retrieval.evaluation import golden_path
    from pipeline.stores import vector_store

    settings = get_settings()
    with vector_store.connect(settings) as client:
        if not client.collections.exists(settings.weaviate.collection):
            source = copy_sources(sources(ROOT / "samples" / "corpus", scans=False), scratch / "source")
            run_id, state = run_dag("corpus_refresh", {"paths": [str(source)], "force": False}, settings)
            print(f"ingested the sample corpus: {run_id} {state}")
        chunks = len(vector_store.live_collection(client, settings))
        golden = json.loads(golden_path(settings).read_text(encoding="utf-8"))
        queries = [q["text"] for q in golden["queries"]][:: max(1, len(golden["queries"]) // args.queries)][: args.queries]
        retriever = Retriever(settings, client)
        for lang in settings.languages:
            retriever.align(retriever.embedder.encode(["warm-up"]), lang)  # maps and encoder loaded once
        times: dict[str, list[float]] = {"vector": [], "hybrid": []}
        for query in queries:
            for mode in ("vector", "hybrid"):
                started = time.perf_counter()
                retriever.search(query, mode=mode)
                times[mode].append((time.perf_counter() - started) * 1000)
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(queries)} queries, {chunks} chunks in the live collection")
    for mode, ms in times.items():
        print(f"{mode}: p50 {np.percentile(ms, 50):.0f} ms, p95 {np.percentile(ms, 95):.0f} ms, mean {np.mean(ms):.0f} ms")
    print(f"ratio hybrid / vector (mean): {np.mean(times['hybrid']) / np.mean(times['vector']):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
