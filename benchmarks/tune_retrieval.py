#!/usr/bin/env python3
"""Tune the retriever on the golden set's dev split only (the test split is never read here).

For each embedder: the dev queries go through both legs once per lexical minimum match
(the Weaviate calls), then every fusion setting is re-ranked offline; printed per setting:
hybrid hit@5 per query language, the lowest language, MRR@10, and vector-only for
reference. The best setting: the highest lowest-language hit@5, then MRR@10. Then the
translation-group similarity (best F1 of the translations listed under a hit: precision =
same section, recall = of that section's other-language passages among the candidates) and
the no-answer bar on the top hit's vector similarity: the highest that costs at most five
points of the answerable queries' hit@5.

    .venv/bin/python benchmarks/tune_retrieval.py [--embedder NAME ...]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.config import get_settings
from pipeline.embedding.embedders import get_embedder
from pipeline.retrieval.evaluation import (
    QueryRun,
    encode_cached,
    golden_path,
    leg,
    load_pool,
    section_rank,
)
from pipeline.retrieval.fusion import FusionParams
from pipeline.retrieval.retriever import Retriever
from pipeline.stores import vector_store

WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
OFFSETS = (1, 3)
MIN_MATCH = (1, 2)
GROUP_SIMILARITY = (0.5, 0.6, 0.7, 0.8, 0.9)


def dev_runs(retriever: Retriever, queries: list[dict], vectors: np.ndarray, min_match: int) -> list[QueryRun]:
    runs = []
    for q, raw in zip(queries, vectors):
        lang = retriever.query_language(q["text"])
        vector = retriever.align(raw[None], lang)[0]
        runs.append(QueryRun(q, lang, retriever.candidates(q["text"], lang, vector, lexical_min_match=min_match), 0.0))
    return runs


def figures(retriever: Retriever, runs: list[QueryRun], params: FusionParams, mode: str) -> dict:
    per_lang: dict[str, list[int]] = {}
    for run in runs:
        if run.query["relevant"] is None:
            continue
        groups = retriever.rank(leg(run.candidates, mode), run.query_lang, params)
        per_lang.setdefault(run.query["lang"], []).append(section_rank(groups, run.query["relevant"]))
    hit5 = {lang: float(np.mean(np.array(r) < 5)) for lang, r in sorted(per_lang.items())}
    ranks = np.array([r for rs in per_lang.values() for r in rs], dtype=float)
    return {"hit5": hit5, "min_hit5": min(hit5.values()), "mrr10": float(np.where(ranks < 10, 1 / (ranks + 1), 0).mean())}


def group_quality(retriever: Retriever, runs: list[QueryRun], params: FusionParams) -> tuple[float, float]:
    """Precision (translations that are the shown chunk's section) and recall (of the shown
    chunk's section's other-language passages among the candidates, those collapsed under it)."""
    right = listed = available = 0
    for run in runs:
        for group in retriever.rank(run.candidates, run.query_lang, params)[:5]:
            section = group.shown.properties["source_path"]
            same = {c.uuid for c in run.candidates if c.properties["source_path"] == section} - {group.shown.uuid}
            right += sum(t.uuid in same for t in group.translations)
            listed += len(group.translations)
            available += len(same)
    return right / max(listed, 1), right / max(available, 1)


def best_bar(retriever: Retriever, runs: list[QueryRun], params: FusionParams, max_loss: float = 0.05,
             ) -> tuple[float, float, float]:
    """The highest bar on the top hit's vector similarity that costs at most ``max_loss`` of
    the answerable queries' hit@5; with the share of traps it refuses and hit@5 past it."""
    tops, correct, trap = [], [], []
    for run in runs:
        groups = retriever.rank(run.candidates, run.query_lang, params)
        tops.append(max(c.similarity for c in groups[0].members) if groups else 0.0)
        trap.append(run.query["relevant"] is None)
        correct.append(not trap[-1] and section_rank(groups, run.query["relevant"]) < 5)
    tops, correct, trap = np.array(tops), np.array(correct), np.array(trap)
    unbarred = correct[~trap].mean()
    chosen = (0.0, 0.0, float(unbarred))
    for bar in np.arange(0.0, 0.95, 0.01):
        served = float((correct & (tops >= bar))[~trap].mean())
        if served < unbarred - max_loss:
            break
        chosen = (round(float(bar), 2), float((tops[trap] < bar).mean()), served)
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", action="append")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = get_settings()
    path = golden_path(settings)
    data = json.loads(path.read_text(encoding="utf-8"))
    sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    queries = [q for q in data["queries"] if q["split"] == "dev"]
    report = {}
    with vector_store.connect(settings) as client:
        for name in args.embedder or [settings.embedding.model]:
            embedder = get_embedder(name, settings.embedding.batch_size)
            retriever = Retriever(settings, client, load_pool(client, settings, data, sha256, embedder), name)
            vectors = encode_cached(settings, embedder, [q["text"] for q in queries])
            runs = {m: dev_runs(retriever, queries, vectors, m) for m in MIN_MATCH}
            base = FusionParams(0.0, 1, settings.retrieval.group_similarity)
            print(f"\n{name}: vector only {figures(retriever, runs[1], base, 'vector')}")
            rows = []
            for weight, offset, m in itertools.product(WEIGHTS, OFFSETS, MIN_MATCH):
                f = figures(retriever, runs[m], FusionParams(weight, offset, settings.retrieval.group_similarity), "hybrid")
                rows.append(((f["min_hit5"], f["mrr10"]), weight, offset, m, f))
                print(f"  weight {weight} offset {offset} min_match {m}: min hit@5 {f['min_hit5']:.3f} "
                      f"MRR@10 {f['mrr10']:.3f} {json.dumps({k: round(v, 3) for k, v in f['hit5'].items()})}")
            (_, weight, offset, m, _) = max(rows, key=lambda r: r[0])
            groups = []
            for g in GROUP_SIMILARITY:
                f = figures(retriever, runs[m], FusionParams(weight, offset, g), "hybrid")
                precision, recall = group_quality(retriever, runs[m], FusionParams(weight, offset, g))
                f1 = 2 * precision * recall / max(precision + recall, 1e-9)
                groups.append((f1, g))
                print(f"  group_similarity {g}: min hit@5 {f['min_hit5']:.3f} MRR@10 {f['mrr10']:.3f}, "
                      f"translations listed: precision {precision:.3f} recall {recall:.3f}")
            group = max(groups)[1]
            params = FusionParams(weight, offset, group)
            bar, refused, served = best_bar(retriever, runs[m], params)
            report[name] = {"lexical_weight": weight, "lexical_rank_offset": offset, "lexical_min_match": m,
                            "group_similarity": group, "no_answer_below": bar, "dev_traps_refused": round(refused, 4),
                            "dev_served_hit5": round(served, 4), "dev": figures(retriever, runs[m], params, "hybrid")}
            print(f"  chosen: {report[name]}")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
