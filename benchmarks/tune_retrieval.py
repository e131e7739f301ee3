#!/usr/bin/env python3
"""Tune the retriever on the golden set's dev split only (the test split is never read here).

For each embedder: the dev queries go through both legs once per lexical minimum match
(the Weaviate calls), then every fusion setting is re-ranked offline; printed per setting:
hybrid hit@5 per query language, the lowest language, MRR@10, and vector-only for
reference. The best setting: the highest lowest-language hit@5, then MRR@10. Then the
translation-group similarity (best F1 of the translations listed under a hit: precision =
same section, recall = of that section's other-language passages among the candidates) and
the no-answer models (pipeline/retrieval/refusal.py), one per query form (question or
statement): each fitted on the dev split's answerable queries and ``absent`` traps (their
answer is in no passage) of its form, its bar the highest that costs each query type of the
form (heading, first sentence, paraphrase, question) at most five points of its answerable
queries' hit@5; the ``on_topic`` traps (sections cut from the pool,
often answered by a look-alike) are only reported at those bars.

    .venv/bin/python benchmarks/tune_retrieval.py [--embedder NAME ...] [--no-answer-only]
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
    ON_TOPIC,
    QueryRun,
    encode_cached,
    golden_path,
    leg,
    load_pool,
    section_rank,
    trap_kind,
)
from pipeline.retrieval.fusion import FusionParams
from pipeline.retrieval.refusal import QUERY_FORMS, NoAnswerModel, features, fit, query_form
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


def no_answer_rows(retriever: Retriever, runs: list[QueryRun], params: FusionParams,
                   ) -> tuple[list[tuple[str, str, dict[str, float], bool, bool]], list[tuple[str, dict[str, float]]]]:
    """Per dev query but the on-topic traps: its form (question or statement), its type
    (heading, paraphrase...), the no-answer model's features, whether it has an answer in the
    pool, and whether the hybrid retriever finds it in the top five; and the on-topic traps'
    forms and features apart."""
    rows, on_topic = [], []
    for run in runs:
        groups = retriever.rank([*run.candidates], run.query_lang, params)
        tokenization = retriever.settings.languages[run.query_lang].tokenization
        values = features(run.query["text"], run.query_lang, tokenization, groups, run.candidates)
        form, relevant = query_form(run.query["text"]), run.query["relevant"]
        if trap_kind(run.query) == ON_TOPIC:
            on_topic.append((form, values))
        else:
            rows.append((form, run.query["type"], values, relevant is not None,
                         relevant is not None and section_rank(groups, relevant) < 5))
    return rows, on_topic


def refusal_curve(scores: np.ndarray, answerable: np.ndarray, correct: np.ndarray, bars: np.ndarray,
                  ) -> list[tuple[float, float, float]]:
    """Per bar on ``scores``: (bar, traps refused, answerable hit@5 past the bar)."""
    return [(float(bar), float((scores[~answerable] < bar).mean()), float((correct & (scores >= bar))[answerable].mean()))
            for bar in bars]


def choose_no_answer(rows: list[tuple[str, str, dict[str, float], bool, bool]],
                     on_topic: list[tuple[str, dict[str, float]]], max_loss: float = 0.05, min_type: int = 20) -> dict:
    """Per query form, fit the no-answer model on that form's dev rows; its bar: the highest
    that costs each query type of the form (of ``min_type`` answerable queries or more) at
    most ``max_loss`` of its answerable queries' hit@5: over the form as a whole, the many
    headings that copy their section's words would let a bar refuse the paraphrased ones
    (docs/benchmarks.md, "Paraphrased headings and off-topic traps"). Prints each
    model's curve and, for comparison, the curve of a bar on the best hit's vector similarity
    alone; reports the traps refused and the hit@5 served over both forms, and the on-topic
    traps refused, at the chosen bars."""
    chosen: dict[str, NoAnswerModel] = {}
    for form in QUERY_FORMS:
        mine = [(t, f, a, c) for fm, t, f, a, c in rows if fm == form]
        types = np.array([t for t, _, _, _ in mine])
        answerable = np.array([a for _, _, a, _ in mine])
        correct = np.array([c for _, _, _, c in mine])
        weights, bias = fit([f for _, f, _, _ in mine], answerable)
        model = NoAnswerModel(weights, bias, 0.0)
        probability = np.array([model.probability(f) for _, f, _, _ in mine])
        similarity = np.array([f["similarity"] for _, f, _, _ in mine])
        unbarred = float(correct[answerable].mean())
        counted = [t for t in sorted(set(types[answerable])) if (answerable & (types == t)).sum() >= min_type]
        bar = 0.0
        curve = refusal_curve(probability, answerable, correct, np.round(np.arange(0.0, 1.0, 0.01), 2))
        for b, _, _ in curve:
            lost = correct & (probability < b)  # found, and refused at this bar
            if any(lost[answerable & (types == t)].mean() > max_loss for t in counted):
                break
            bar = b
        print(f"  {form}s ({answerable.sum()} answerable, {(~answerable).sum()} absent traps): no-answer model "
              f"{weights} bias {bias}; answerable hit@5 without a bar {unbarred:.3f}")
        for label, points in (("model probability", curve[::5] + [c for c in curve if c[0] == bar]),
                              ("similarity alone", refusal_curve(similarity, answerable, correct,
                                                                 np.round(np.arange(0.1, 0.65, 0.05), 2)))):
            print(f"    {label}: " + "; ".join(f"{b:.2f}: refused {r:.3f} served {s:.3f}" for b, r, s in points))
        chosen[form] = NoAnswerModel(weights, bias, bar)
    answered = np.array([chosen[form].answers(f) for form, _, f, _, _ in rows])
    answerable = np.array([a for _, _, _, a, _ in rows])
    correct = np.array([c for _, _, _, _, c in rows])
    on_topic_refused = float(np.mean([not chosen[form].answers(f) for form, f in on_topic])) if on_topic else None
    return {**{form: {"weights": m.weights, "bias": m.bias, "below": m.below} for form, m in chosen.items()},
            "dev_traps_refused": round(float((~answered[~answerable]).mean()), 4),
            "dev_served_hit5": round(float((correct & answered)[answerable].mean()), 4),
            "dev_on_topic_refused": None if on_topic_refused is None else round(on_topic_refused, 4)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", action="append")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-answer-only", action="store_true",
                        help="keep the embedder's configured fusion and group settings; fit the no-answer models alone")
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
            vectors = encode_cached(settings, embedder, [q["text"] for q in queries], query=True)
            if args.no_answer_only:
                params = retriever.fusion
                runs = dev_runs(retriever, queries, vectors, retriever.lexical_min_match)
                report[name] = {"no_answer": choose_no_answer(*no_answer_rows(retriever, runs, params)),
                                "dev": figures(retriever, runs, params, "hybrid")}
                print(f"  chosen: {report[name]}")
                continue
            runs = {m: dev_runs(retriever, queries, vectors, m) for m in MIN_MATCH}
            group = retriever.fusion.group_similarity  # as tuned before (or the configured embedder's)
            base = FusionParams(0.0, 1, group)
            print(f"\n{name}: vector only {figures(retriever, runs[1], base, 'vector')}")
            rows = []
            for weight, offset, m in itertools.product(WEIGHTS, OFFSETS, MIN_MATCH):
                f = figures(retriever, runs[m], FusionParams(weight, offset, group), "hybrid")
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
            report[name] = {"lexical_weight": weight, "lexical_rank_offset": offset, "lexical_min_match": m,
                            "group_similarity": group,
                            "no_answer": choose_no_answer(*no_answer_rows(retriever, runs[m], params)),
                            "dev": figures(retriever, runs[m], params, "hybrid")}
            print(f"  chosen: {report[name]}")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
