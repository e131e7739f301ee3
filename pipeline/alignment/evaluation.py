"""What is live and how well it retrieves: the audit of every map version, the golden set
evaluation, and the anchors run's report.

* ``audit``: per language, every registered version (and identity) with its anchor set,
  held-out figures, gate decision, dates and the number of live chunks that carry it.
* ``evaluate_golden``: cross-lingual retrieval on the golden set (queries in de/es/zh/ja
  against the English passage pool), raw against aligned query vectors.
* ``report``: the anchors run's outcomes and the audit, logged to MLflow.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.alignment.anchor_sets import resolve_path
from pipeline.alignment.fitting import REJECTED, production_version
from pipeline.alignment.maps import IDENTITY, load_map_version, load_production_map, registered_model_name
from pipeline.config import Settings
from pipeline.embedding.embedders import embedder_id, get_embedder
from pipeline.stores.tracking import configure_mlflow

log = logging.getLogger(__name__)


def chunk_counts(settings: Settings) -> dict[tuple[str, str], int]:
    """(lang, alignment_version) -> live chunks carrying it."""
    from pipeline.stores.vector_store import live_chunks  # the Weaviate client: not needed by evaluate_golden

    counts: dict[tuple[str, str], int] = {}
    for _, p in live_chunks(settings, ["lang", "alignment_version"]):
        key = (p["lang"], p["alignment_version"])
        counts[key] = counts.get(key, 0) + 1
    return counts


def audit(settings: Settings, counts: dict[tuple[str, str], int] | None = None) -> list[dict[str, Any]]:
    """Per language, every registered version (+ identity) with its anchor set, figures,
    decision, dates and the number of live chunks that carry it."""
    from mlflow.exceptions import MlflowException

    client = configure_mlflow(settings)
    counts = chunk_counts(settings) if counts is None else counts
    rows = []
    for lang in settings.languages:
        name = registered_model_name(settings, lang)
        current = production_version(settings, lang) if lang != settings.reference_language else IDENTITY
        try:
            versions = sorted(client.search_model_versions(f"name='{name}'"), key=lambda v: int(v.version))
        except MlflowException:
            versions = []
        rows.append({"lang": lang, "version": IDENTITY, "anchor_set_version": "-", "decision": "baseline",
                     "production": current == IDENTITY, "chunks": counts.get((lang, IDENTITY), 0)})
        for v in versions:
            t = v.tags
            rows.append({
                "lang": lang, "version": str(v.version), "anchor_set_version": t.get("anchor_set_version"),
                "anchor_set_sha256": t.get("anchor_set_sha256"), "embedder": t.get("embedder"),
                "alpha": t.get("alpha"), "train_pairs": t.get("train_pairs"),
                "acc1_identity": t.get("heldout_acc1_identity"), "acc1_fitted": t.get("heldout_acc1_fitted"),
                "mrr_identity": t.get("heldout_mrr_identity"), "mrr_fitted": t.get("heldout_mrr_fitted"),
                "mrr_production": t.get("heldout_mrr_production"), "decision": t.get("decision"),
                "reason": t.get("decision_reason"), "pipeline_version": t.get("pipeline_version"),
                "created": datetime.fromtimestamp(v.creation_timestamp / 1000, timezone.utc).isoformat(timespec="seconds"),
                "promoted_at": t.get("promoted_at"), "superseded_at": t.get("superseded_at"),
                "production": current == str(v.version), "chunks": counts.get((lang, str(v.version)), 0)})
        known = {r["version"] for r in rows if r["lang"] == lang}
        for (count_lang, version), n in sorted(counts.items()):
            if count_lang == lang and version not in known:
                rows.append({"lang": lang, "version": version, "decision": "unknown to this registry",
                             "production": False, "chunks": n})
    return rows


def golden_path(settings: Settings) -> Path:
    return resolve_path(settings.anchors.golden_set)


def _golden_metrics(ranks: np.ndarray) -> dict[str, float]:
    return {"hit1": round(float((ranks < 1).mean()), 4), "hit5": round(float((ranks < 5).mean()), 4),
            "mrr10": round(float(np.where(ranks < 10, 1.0 / (ranks + 1), 0.0).mean()), 4),
            "hits1": int((ranks < 1).sum()), "hits5": int((ranks < 5).sum())}


def evaluate_golden(settings: Settings, golden: Path | None = None, embedders: list[str] | None = None,
                    versions: dict[str, str] | None = None) -> dict[str, Any]:
    """Cross-lingual retrieval on the golden set: each query (de/es/zh/ja) searches the
    whole English passage pool; hit@1, hit@5 and MRR@10 with raw and with aligned query
    vectors (the production map, or ``versions[lang]``), per embedder and language.

    ``within_tolerance``: aligned loses at most one query in 25 against raw, at hit@1
    and at hit@5. A map fitted for another embedder is not applied (aligned = raw).
    """
    golden = golden or golden_path(settings)
    data = json.loads(golden.read_text(encoding="utf-8"))
    passage_index = {p["id"]: i for i, p in enumerate(data["passages"])}
    langs = sorted({q["lang"] for q in data["queries"]})
    result: dict[str, Any] = {"golden_set": str(golden), "golden_sha256": hashlib.sha256(golden.read_bytes()).hexdigest(),
                              "passages": len(data["passages"]), "embedders": {}}
    for name in embedders or [settings.embedding.model]:
        embedder = get_embedder(name, settings.embedding.batch_size)
        pool = embedder.encode([p["text"] for p in data["passages"]])
        per_lang = {}
        for lang in langs:
            queries = [q for q in data["queries"] if q["lang"] == lang]
            raw = embedder.encode([q["text"] for q in queries], query=True)
            alignment = load_map_version(settings, lang, versions[lang]) if versions and lang in versions \
                else load_production_map(settings, lang)
            applicable = alignment.embedder is None or alignment.embedder.split("@")[0] == embedder.name
            aligned = alignment.apply(raw) if applicable else raw
            relevant = np.array([passage_index[q["relevant"]] for q in queries])
            figures = {}
            for which, vectors in (("raw", raw), ("aligned", aligned)):
                scores = vectors @ pool.T
                ranks = (scores > scores[np.arange(len(queries)), relevant][:, None]).sum(axis=1)
                figures[which] = _golden_metrics(ranks)
            allowed = len(queries) / 25
            lost = max(figures["raw"]["hits1"] - figures["aligned"]["hits1"],
                       figures["raw"]["hits5"] - figures["aligned"]["hits5"])
            per_lang[lang] = {"queries": len(queries), "alignment_version": alignment.version if applicable else IDENTITY,
                              "anchor_set_version": alignment.anchor_set_version if applicable else None,
                              **figures, "queries_lost": int(lost), "within_tolerance": lost <= allowed,
                              "hit5_ok": figures["aligned"]["hit5"] >= 0.90}
        result["embedders"][embedder_id(embedder)] = per_lang
    return result


def report(settings: Settings, run_id: str, outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """The anchors run's report: each language's fit, decision and re-alignment, plus the
    audit, logged to MLflow (run tagged rosetta.kind=anchors_report, report.json)."""
    import mlflow

    summary = {"run_id": run_id, "languages": outcomes, "audit": audit(settings)}
    configure_mlflow(settings)
    with mlflow.start_run(run_name=f"anchors {run_id}", tags={"rosetta.kind": "anchors_report"}):
        mlflow.log_metrics({"promoted": sum(bool(o.get("promoted")) for o in outcomes),
                            "rejected": sum(o.get("decision") == REJECTED for o in outcomes),
                            "realigned_chunks": sum(o.get("realign", {}).get("chunks", 0) for o in outcomes)})
        mlflow.log_dict(summary, "report.json")
    for o in outcomes:
        log.info("%s v%s: %s%s", o["lang"], o["version"], o["decision"],
                 f", re-aligned {o['realign']['chunks']} chunk(s) ({o['realign']['status']})" if o.get("realign") else "")
    return summary
