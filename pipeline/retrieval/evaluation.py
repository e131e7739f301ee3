"""Retrieval on the five-language golden set (scripts/build_retrieval_golden.py), against the
real Weaviate: the set's pool is loaded into its own collection, then every query of a split
goes through the retriever exactly as ``rosetta search`` runs it.

Reported per embedder, per query language and per query type (heading, first sentence,
with a shared acronym): hit@1, hit@5 and MRR@10 of the vector leg alone and of the hybrid
retriever (a hit: the passage shown belongs to the query's section; translations collapsed
into one hit count once), the share of answerable queries the no-answer model lets through
(``served``: hit@5 counting a refused answerable query as a miss), the share of no-answer
traps refused (``absent`` traps, whose answer is in no passage: the bar; ``on_topic`` traps,
sections cut from the pool that a look-alike section may still answer: reported apart), the
time per query, and cross-lingual retrieval of the raw embedder
vectors: de/es/zh/ja queries against the English passages alone (what ``rosetta embed``
vectors give a caller who searches by vector). ``across_languages``: every query again, its
own language's passages taken out of its candidates (a corpus that holds the answer only in
other languages, and traps that must be refused across languages too).
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from weaviate.util import generate_uuid5

from pipeline.alignment.anchor_sets import resolve_path
from pipeline.alignment.maps import load_production_map
from pipeline.config import Settings
from pipeline.embedding.embedders import Embedder, embedder_id, get_embedder
from pipeline.retrieval.fusion import Candidate, FusionParams, Group
from pipeline.retrieval.refusal import NoAnswerDecision
from pipeline.retrieval.retriever import Retriever
from pipeline.stores import vector_store

MODES = ("vector", "hybrid")
QUERY_TYPES = ("heading", "first_sentence", "question", "paraphrase")
ABSENT, ON_TOPIC = "absent", "on_topic"  # a trap's kind (scripts/build_retrieval_golden.py)


def trap_kind(query: dict[str, Any]) -> str | None:
    """None for an answerable query; sets built before the kinds (install-guide-v1.json) cut
    every trap from the pool, so a trap without one is on topic."""
    return None if query["relevant"] is not None else query.get("trap", ON_TOPIC)


@dataclass
class QueryRun:
    """One query's legs, kept so that fusion settings can be re-ranked without Weaviate."""

    query: dict[str, Any]
    query_lang: str
    candidates: list[Candidate]
    seconds: float  # detect + embed + both legs + fusion + groups
    vector: np.ndarray  # the aligned query vector (asked again by ``across_languages``; read by the no-answer decision)


def golden_path(settings: Settings) -> Path:
    return resolve_path(settings.retrieval.golden_set)


def encode_cached(settings: Settings, embedder: Embedder, texts: list[str], query: bool = False) -> np.ndarray:
    """Raw vectors of ``texts`` (as questions when ``query``), cached under data_root by
    embedder, kind and the texts' sha256."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", embedder_id(embedder))
    key = hashlib.sha256(("query\n" * query + "\n\x00".join(texts)).encode("utf-8")).hexdigest()[:16]
    cache = settings.data_root / "eval-cache" / safe / f"{key}.npy"
    if cache.exists():
        return np.load(cache)
    vectors = embedder.encode(texts, query)
    cache.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=cache.parent, suffix=".npy", delete=False) as tmp:
        np.save(tmp, vectors)
    Path(tmp.name).replace(cache)
    return vectors


def aligned(settings: Settings, embedder: Embedder, vectors: np.ndarray, langs: list[str]) -> np.ndarray:
    """Each row mapped by its language's production map (identity for another embedder's map)."""
    out = vectors.copy()
    for lang in set(langs):
        rows = [i for i, lang_i in enumerate(langs) if lang_i == lang]
        alignment = load_production_map(settings, lang)
        if alignment.embedder is None or alignment.embedder.split("@")[0] == embedder.name:
            out[rows] = alignment.apply(vectors[rows])
    return out


def passage_uuid(passage: dict[str, Any]) -> str:
    """A golden passage's uuid in the pool (``load_pool``)."""
    return str(generate_uuid5(passage["id"]))


def load_pool(client, settings: Settings, golden: dict[str, Any], sha256: str, embedder: Embedder) -> str:
    """The golden pool in its own collection (made once per set and embedder); its name."""
    name = f"{settings.weaviate.collection}Eval_{hashlib.sha1(f'{sha256}|{embedder_id(embedder)}'.encode()).hexdigest()[:12]}"
    passages = golden["passages"]
    if client.collections.exists(name):
        if len(client.collections.get(name)) == len(passages):
            return name
        client.collections.delete(name)
    langs = [p["lang"] for p in passages]
    vectors = aligned(settings, embedder, encode_cached(settings, embedder, [p["text"] for p in passages]), langs)
    objects = [(passage_uuid(p), {"text": p["text"], "lang": p["lang"], "doc_id": f"{golden['name']}-{p['lang']}",
                                              "chunk_id": p["id"], "source_path": p["section"],
                                              "heading_path": [p["heading"]]}, v.tolist())
               for p, v in zip(passages, vectors)]
    vector_store.insert_objects(vector_store.ensure_collection(client, settings, name), objects, settings)
    return name


def run_queries(retriever: Retriever, queries: list[dict[str, Any]]) -> Iterator[QueryRun]:
    for q in queries:
        started = time.perf_counter()
        lang = retriever.query_language(q["text"])
        vector = retriever.query_vector(q["text"], lang)
        candidates = retriever.candidates(q["text"], lang, vector)
        retriever.rank([*candidates], q["text"], lang)
        yield QueryRun(q, lang, candidates, time.perf_counter() - started, vector)


def across_languages(retriever: Retriever, run: QueryRun) -> QueryRun:
    """The run as a pool without the query's language gives it: the vector leg asked again over
    the chunks in other languages (the lexical leg reads the query's language only, so nothing
    of it). Not the first run's candidates less those in the query's language: the nearest
    fifty of a Chinese query are mostly Chinese, and the few left held the right section less
    often than a pool without Chinese gives (docs/benchmarks.md, "Across languages, asked
    again")."""
    return QueryRun(run.query, run.query_lang,
                    retriever.candidates(run.query["text"], run.query_lang, run.vector, other_than=run.query_lang),
                    run.seconds, run.vector)


def answer_elsewhere(retriever: Retriever, run: QueryRun, left_out: str) -> QueryRun:
    """The run as a corpus that holds the answer only in other languages gives it: the
    answer's passage in the query's language left out of both legs, every other passage of
    that language kept (a German question, German manuals on other topics, the regulation
    that answers it in English only); ``left_out``: that passage's uuid."""
    return QueryRun(run.query, run.query_lang,
                    retriever.candidates(run.query["text"], run.query_lang, run.vector, leave_out=left_out),
                    run.seconds, run.vector)


def answer_elsewhere_runs(retriever: Retriever, runs: list[QueryRun], passages: list[dict[str, Any]],
                          ) -> list[QueryRun]:
    """``answer_elsewhere`` for every answerable run whose answer has a passage in its language
    and one in another (a section only in the query's language has no answer left)."""
    uuids = {(p["section"], p["lang"]): passage_uuid(p) for p in passages}
    languages: dict[str, set[str]] = defaultdict(set)
    for p in passages:
        languages[p["section"]].add(p["lang"])
    return [answer_elsewhere(retriever, r, uuids[(r.query["relevant"], r.query["lang"])])
            for r in runs if (r.query["relevant"], r.query["lang"]) in uuids
            and languages[r.query["relevant"]] - {r.query["lang"]}]


def leg(candidates: list[Candidate], mode: str) -> list[Candidate]:
    """The candidates a mode ranks: vector-only drops the lexical leg's hits and bonus."""
    if mode == "hybrid":
        return candidates
    return [replace(c, lexical_rank=None, score=0.0) for c in candidates if c.vector_rank is not None]


def section_rank(groups: list[Group], relevant: str) -> int:
    """0-based rank of the first hit shown from the relevant section; 10**6 when absent."""
    return next((i for i, g in enumerate(groups) if g.shown.properties.get("source_path") == relevant), 10 ** 6)


def metrics(ranks: list[int], served: list[bool]) -> dict[str, Any]:
    r = np.array(ranks, dtype=float)
    ok = np.array(served, dtype=bool)
    if not len(r):
        return {"queries": 0}
    return {"queries": len(r), "hit1": round(float((r < 1).mean()), 4), "hit5": round(float((r < 5).mean()), 4),
            "mrr10": round(float(np.where(r < 10, 1.0 / (r + 1), 0.0).mean()), 4),
            "served_hit5": round(float(((r < 5) & ok).mean()), 4)}


def answers(retriever: Retriever, run: QueryRun, groups: list[Group], candidates: list[Candidate],
            model: NoAnswerDecision | None) -> bool:
    """Whether search would answer (the no-answer model over the mode's own candidates;
    with no model fitted for the embedder, every query with a hit is answered)."""
    if model is None:
        return bool(groups)
    query = run.query["text"]
    return bool(groups) and model.answers(query, retriever.settings.languages[run.query_lang].tokenization,
                                          retriever.features(query, run.query_lang, groups, candidates, run.vector))


def score_runs(runs: list[QueryRun], retriever: Retriever, params: FusionParams, model: NoAnswerDecision | None,
               ) -> dict[str, Any]:
    """Per mode: figures per query language and per query type, no-answer refusals."""
    out: dict[str, Any] = {}
    for mode in MODES:
        ranks: dict[str, list[int]] = defaultdict(list)
        served: dict[str, list[bool]] = defaultdict(list)
        refused: dict[tuple[str, str], list[bool]] = defaultdict(list)
        for run in runs:
            candidates = leg(run.candidates, mode)
            groups = retriever.rank(candidates, run.query["text"], run.query_lang, params)
            answered = answers(retriever, run, groups, candidates, model)
            q = run.query
            keys = ["all", f"lang:{q['lang']}", f"type:{q['type']}"] + (["type:acronym"] if q["acronym"] else [])
            for key in keys:
                if trap_kind(q):
                    refused[(trap_kind(q), key)].append(not answered)
                else:
                    ranks[key].append(section_rank(groups, q["relevant"]))
                    served[key].append(answered)

        def share(kind: str, key: str) -> float | None:
            return round(float(np.mean(refused[(kind, key)])), 4) if refused[(kind, key)] else None

        def precision(key: str) -> float | None:
            # of the queries refused, the share that were traps (absent or on-topic: the pool
            # holds no section that answers either)
            right = sum(sum(refused[(kind, key)]) for kind in (ABSENT, ON_TOPIC))
            wrong = sum(not answered for answered in served[key])
            return round(right / (right + wrong), 4) if right + wrong else None

        out[mode] = {key: {**metrics(ranks[key], served[key]), "no_answer_refused": share(ABSENT, key),
                           "on_topic_refused": share(ON_TOPIC, key), "no_answer_precision": precision(key)}
                     for key in sorted(set(ranks) | {key for _, key in refused})}
    return out


def cross_lingual(settings: Settings, golden: dict[str, Any], embedder: Embedder, queries: list[dict[str, Any]],
                  ) -> dict[str, dict[str, Any]]:
    """Queries against the reference-language passages alone, by vector (aligned as served):
    per non-reference query language, per query type over those languages (``type:...``),
    and the reference language's own queries by type (``same language, type:...``: what the
    embedder gives with no translation at all, the bound for the rest). The set keeps a
    section's heading out of its passage; the chunk stage does not (a section's first chunk
    starts with its heading), so each query language is also ranked against the passages as
    stored, heading first (``as stored: <lang>``)."""
    reference = golden["reference_language"]
    english = [p for p in golden["passages"] if p["lang"] == reference]
    index = {p["section"]: i for i, p in enumerate(english)}

    asked = []  # per query language: its queries with a passage in the pool, their aligned vectors
    for lang in sorted({q["lang"] for q in queries}):
        chosen = [q for q in queries if q["lang"] == lang and q["relevant"] in index]
        raw = encode_cached(settings, embedder, [q["text"] for q in chosen], query=True)
        asked.append((chosen, aligned(settings, embedder, raw, [lang] * len(chosen))))

    def ranked_against(texts: list[str]) -> list[tuple[dict[str, Any], int]]:
        pool = aligned(settings, embedder, encode_cached(settings, embedder, texts), [reference] * len(texts))
        ranked = []
        for chosen, vectors in asked:
            scores = vectors @ pool.T
            relevant = np.array([index[q["relevant"]] for q in chosen])
            ranks = (scores > scores[np.arange(len(chosen)), relevant][:, None]).sum(axis=1)
            ranked += zip(chosen, ranks.tolist())
        return ranked

    ranked = ranked_against([p["text"] for p in english])
    stored = ranked_against([f"{p['heading']} {p['text']}" for p in english])
    out = {}
    for key, keep in ([(lang, lambda q, lang=lang: q["lang"] == lang)
                       for lang in sorted({q["lang"] for q, _ in ranked} - {reference})]
                      + [(f"type:{t}", lambda q, t=t: q["lang"] != reference and q["type"] == t) for t in QUERY_TYPES]
                      + [(f"same language, type:{t}", lambda q, t=t: q["lang"] == reference and q["type"] == t)
                         for t in QUERY_TYPES]):
        ranks = [r for q, r in ranked if keep(q)]
        out[key] = metrics(ranks, [True] * len(ranks))
    for lang in sorted({q["lang"] for q, _ in stored} - {reference}):
        ranks = [r for q, r in stored if q["lang"] == lang]
        out[f"as stored: {lang}"] = metrics(ranks, [True] * len(ranks))
    return out


def evaluate_retrieval(settings: Settings, client, golden: Path | None = None, embedders: list[str] | None = None,
                       split: str = "test", params: FusionParams | None = None,
                       model: NoAnswerDecision | None = None) -> dict[str, Any]:
    golden = golden or golden_path(settings)
    data = json.loads(golden.read_text(encoding="utf-8"))
    sha256 = hashlib.sha256(golden.read_bytes()).hexdigest()
    if golden.resolve() == golden_path(settings).resolve() and sha256 != settings.retrieval.golden_sha256:
        raise ValueError(f"{golden}: sha256 {sha256} is not the pinned retrieval.golden_sha256; "
                         "rebuild it with scripts/build_retrieval_golden.py or re-pin it on purpose")
    queries = [q for q in data["queries"] if split == "all" or q["split"] == split]
    result: dict[str, Any] = {"golden_set": str(golden), "golden_sha256": sha256, "split": split,
                              "passages": len(data["passages"]), "queries": len(queries), "embedders": {}}
    for name in embedders or [settings.embedding.model]:
        embedder = get_embedder(name, settings.embedding.batch_size)
        retriever = Retriever(settings, client, load_pool(client, settings, data, sha256, embedder), name)
        refusal = model or retriever.no_answer
        fusion = params or retriever.fusion
        runs = list(run_queries(retriever, queries))
        seconds = np.array([r.seconds for r in runs]) * 1000
        result["embedders"][embedder_id(embedder)] = {
            "fusion": vars(fusion),
            # None: no model fitted, nothing refused
            "no_answer": {**{form: vars(m) for form, m in refusal.models.items()},
                          "across_languages": {form: vars(m) for form, m in refusal.across_languages.items()}}
            if refusal else None,
            **score_runs(runs, retriever, fusion, refusal),
            "across_languages": score_runs([across_languages(retriever, r) for r in runs], retriever, fusion,
                                           refusal)["hybrid"],
            "answer_elsewhere": score_runs(answer_elsewhere_runs(retriever, runs, data["passages"]), retriever, fusion,
                                           refusal),
            "language_detected": round(float(np.mean([r.query_lang == r.query["lang"] for r in runs])), 4),
            "ms_per_query": {"mean": round(float(seconds.mean()), 1), "p95": round(float(np.percentile(seconds, 95)), 1)},
            "cross_lingual": cross_lingual(settings, data, embedder, queries),
        }
    return result
