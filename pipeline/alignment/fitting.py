"""Fit a language's map on an anchor set, gate it against identity and production, promote it.

    fit_candidate -> gate -> promote

* ``fit_candidate`` fits W_lang on the training split (maps.fit_procrustes: centring and
  a pull toward identity), choosing alpha on the training split alone (an inner
  validation fifth of its concepts) and refitting on the whole split; it evaluates the
  map on the held-out split and registers it in MLflow as a version with decision
  ``candidate`` and its figures as tags.
* Evaluation: each held-out phrase in the language retrieves among all held-out English
  phrases; accuracy@1 and MRR for identity (raw vectors), the fitted map and production.
* ``gate`` approves a version only if it beats identity AND the current production map;
  a rejected version stays in the registry, tagged with its figures and the reason.
* ``promote`` moves the production alias to an approved version (gating again when
  production changed meanwhile); a rejected version never moves.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import pipeline_version
from pipeline.alignment.anchor_sets import AnchorSetError, anchor_vectors, load_anchor_set
from pipeline.alignment.maps import IDENTITY, AlignmentMap, fit_procrustes, load_map_version, registered_model_name
from pipeline.config import Settings
from pipeline.embedding.embedders import embedder_id, get_embedder
from pipeline.stores.tracking import configure_mlflow

log = logging.getLogger(__name__)
REJECTED, APPROVED, PROMOTED, CANDIDATE = "rejected", "approved", "promoted", "candidate"


def retrieval_metrics(queries: np.ndarray, candidates: np.ndarray) -> dict[str, float]:
    """Query i's right answer is candidate i: accuracy@1 and MRR over all candidates."""
    scores = queries @ candidates.T
    rank = (scores > np.diag(scores)[:, None]).sum(axis=1)
    return {"acc1": round(float((rank == 0).mean()), 4), "mrr": round(float((1.0 / (rank + 1)).mean()), 4)}


def _fit_map(lang: str, source: np.ndarray, target: np.ndarray, alpha: float) -> AlignmentMap:
    matrix, source_mean, target_mean = fit_procrustes(source, target, alpha)
    return AlignmentMap(lang=lang, version=CANDIDATE, anchor_set_version=None, matrix=matrix,
                        source_mean=source_mean, target_mean=target_mean)


def choose_alpha(lang: str, concepts: list[str], source: np.ndarray, target: np.ndarray,
                 alphas: list[float]) -> tuple[float, dict[str, float]]:
    """Alpha with the best MRR on an inner validation fifth of the training concepts
    (ties: the larger alpha, i.e. the map closer to identity)."""
    if len(alphas) == 1:
        return alphas[0], {}
    inner = np.array([int(hashlib.sha256(f"alpha:{c}".encode()).hexdigest()[:8], 16) % 5 == 0 for c in concepts])
    scores = {}
    for alpha in alphas:
        fitted = _fit_map(lang, source[~inner], target[~inner], alpha)
        scores[str(alpha)] = retrieval_metrics(fitted.apply(source[inner]), target[inner])["mrr"]
    best = max(alphas, key=lambda a: (scores[str(a)], a))
    return best, scores


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _ensure_registered_model(client, name: str) -> None:
    from mlflow.exceptions import MlflowException

    try:
        client.get_registered_model(name)
    except MlflowException:
        client.create_registered_model(name, description="Rosetta alignment map into the reference space "
                                                         "(pipeline/alignment); production = the alias in use")


def fit_candidate(settings: Settings, lang: str, anchor_version: str | None = None,
                  alphas: list[float] | None = None, max_train: int | None = None) -> dict[str, Any]:
    """Fit W_lang on the training split, evaluate it on the held-out split against
    identity, and register it as a new version (decision ``candidate``) with its figures.

    ``alphas`` overrides the configured grid (one value: no choice); ``max_train`` keeps
    only the first N training pairs (to show what too few anchors do).
    """
    import mlflow

    if lang == settings.reference_language or lang not in settings.languages:
        raise ValueError(f"{lang!r} is not a language to align (reference: {settings.reference_language})")
    anchors = load_anchor_set(settings, anchor_version)
    embedder = get_embedder(settings.embedding.model, settings.embedding.batch_size)
    vectors = anchor_vectors(settings, anchors, lang, embedder)
    lang_rows = [r for r in anchors.rows if r["lang"] == lang]
    train = np.array([r["split"] == "train" for r in lang_rows])
    train_idx = np.flatnonzero(train)[:max_train] if max_train else np.flatnonzero(train)
    x, y = vectors["text"][train_idx], vectors["en"][train_idx]
    grid = alphas if alphas is not None else settings.anchors.alphas
    alpha, alpha_scores = choose_alpha(lang, [lang_rows[i]["concept"] for i in train_idx], x, y, grid)
    fitted = _fit_map(lang, x, y, alpha)
    held_x, held_y = vectors["text"][~train], vectors["en"][~train]
    metrics = {"identity": retrieval_metrics(held_x, held_y), "fitted": retrieval_metrics(fitted.apply(held_x), held_y)}
    tags = {
        "anchor_set_version": anchors.version, "anchor_set_sha256": anchors.sha256,
        "embedder": embedder_id(embedder), "dimension": str(embedder.dimension), "alpha": str(alpha),
        "alpha_grid": json.dumps(grid), "train_pairs": str(len(train_idx)), "heldout_pairs": str(int((~train).sum())),
        "heldout_acc1_identity": str(metrics["identity"]["acc1"]), "heldout_mrr_identity": str(metrics["identity"]["mrr"]),
        "heldout_acc1_fitted": str(metrics["fitted"]["acc1"]), "heldout_mrr_fitted": str(metrics["fitted"]["mrr"]),
        "pipeline_version": pipeline_version(), "decision": CANDIDATE, "fitted_at": _now(),
    }
    client = configure_mlflow(settings)
    name = registered_model_name(settings, lang)
    with mlflow.start_run(run_name=f"align {lang} anchors {anchors.version}",
                          tags={"rosetta.kind": "alignment", "rosetta.lang": lang}) as run:
        mlflow.log_params({k: tags[k] for k in ("anchor_set_version", "anchor_set_sha256", "embedder", "dimension",
                                                "alpha", "train_pairs", "heldout_pairs", "pipeline_version")})
        mlflow.log_metrics({f"heldout_{m}_{which}": v for which, ms in metrics.items() for m, v in ms.items()})
        mlflow.log_metrics({f"alpha_inner_mrr_{a}": s for a, s in alpha_scores.items()})
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{lang}.npz"
            np.savez(path, matrix=fitted.matrix, source_mean=fitted.source_mean, target_mean=fitted.target_mean)
            mlflow.log_artifact(str(path), artifact_path="alignment")
        _ensure_registered_model(client, name)
        version = client.create_model_version(name, source=f"{run.info.artifact_uri}/alignment",
                                              run_id=run.info.run_id, tags=tags)
    log.info("%s v%s fitted on %d pairs (alpha %s): held-out acc@1 %.4f -> %.4f, MRR %.4f -> %.4f", name,
             version.version, len(train_idx), alpha, metrics["identity"]["acc1"], metrics["fitted"]["acc1"],
             metrics["identity"]["mrr"], metrics["fitted"]["mrr"])
    return {"lang": lang, "version": str(version.version), "anchor_set_version": anchors.version,
            "alpha": alpha, "train_pairs": len(train_idx), "metrics": metrics}


def production_version(settings: Settings, lang: str) -> str:
    """The version behind the production alias, or ``identity``."""
    from mlflow.exceptions import MlflowException

    client = configure_mlflow(settings)
    try:
        aliases = client.get_registered_model(registered_model_name(settings, lang)).aliases
    except MlflowException:
        return IDENTITY
    return str(aliases.get(settings.alignment.alias, IDENTITY))


def gate(settings: Settings, lang: str, version: str) -> dict[str, Any]:
    """Decide a candidate: ``approved`` only if it beats identity AND the current
    production map on the held-out split of its anchor set (MRR higher by more than
    anchors.min_mrr_gain, accuracy@1 not lower); else ``rejected``. Tags the version."""
    client = configure_mlflow(settings)
    name = registered_model_name(settings, lang)
    tags = client.get_model_version(name, version).tags
    anchors = load_anchor_set(settings, tags["anchor_set_version"])
    if anchors.sha256 != tags["anchor_set_sha256"]:
        raise AnchorSetError(f"{name} v{version} was fitted on anchor set {anchors.version} "
                             f"sha256 {tags['anchor_set_sha256']}, which now reads {anchors.sha256}")
    embedder = get_embedder(settings.embedding.model, settings.embedding.batch_size)
    vectors = anchor_vectors(settings, anchors, lang, embedder)
    held = np.array([r["split"] == "heldout" for r in anchors.rows if r["lang"] == lang])
    current = production_version(settings, lang)
    fitted = {"acc1": float(tags["heldout_acc1_fitted"]), "mrr": float(tags["heldout_mrr_fitted"])}
    baselines = {IDENTITY: {"acc1": float(tags["heldout_acc1_identity"]), "mrr": float(tags["heldout_mrr_identity"])}}
    if current != IDENTITY:
        production_map = load_map_version(settings, lang, current)
        baselines["production"] = retrieval_metrics(production_map.apply(vectors["text"][held]), vectors["en"][held])
    beaten = {which: fitted["mrr"] > m["mrr"] + settings.anchors.min_mrr_gain and fitted["acc1"] >= m["acc1"]
              for which, m in baselines.items()}
    decision = APPROVED if all(beaten.values()) else REJECTED
    reason = "; ".join(f"{'beats' if ok else 'does not beat'} {which} (acc@1 {fitted['acc1']:.4f} vs "
                       f"{baselines[which]['acc1']:.4f}, MRR {fitted['mrr']:.4f} vs {baselines[which]['mrr']:.4f})"
                       for which, ok in beaten.items())
    update = {"decision": decision, "decision_reason": reason, "gated_at": _now(), "gated_against": current}
    if "production" in baselines:
        update.update(heldout_acc1_production=str(baselines["production"]["acc1"]),
                      heldout_mrr_production=str(baselines["production"]["mrr"]))
    for key, value in update.items():
        client.set_model_version_tag(name, version, key, value)
    log.info("%s v%s %s: %s", name, version, decision.upper(), reason)
    return {"lang": lang, "version": version, "decision": decision, "reason": reason, "production": current,
            "fitted": fitted, "baselines": baselines}


def promote(settings: Settings, lang: str, version: str) -> dict[str, Any]:
    """Move the production alias to an approved version. The gate runs again when
    production changed since the version was gated; a rejected version never moves."""
    client = configure_mlflow(settings)
    name = registered_model_name(settings, lang)
    tags = client.get_model_version(name, version).tags
    current = production_version(settings, lang)
    if current == version:
        return {"lang": lang, "version": version, "promoted": False, "reason": "already production"}
    if tags.get("decision") not in (APPROVED, REJECTED) or tags.get("gated_against") != current:
        tags = {**tags, "decision": gate(settings, lang, version)["decision"]}
    if tags["decision"] != APPROVED:
        return {"lang": lang, "version": version, "promoted": False,
                "reason": f"rejected by the gate: {client.get_model_version(name, version).tags.get('decision_reason')}"}
    client.set_registered_model_alias(name, settings.alignment.alias, version)
    for key, value in {"decision": PROMOTED, "promoted_at": _now(), "replaced": current}.items():
        client.set_model_version_tag(name, version, key, value)
    if current != IDENTITY:
        client.set_model_version_tag(name, current, "superseded_at", _now())
    log.info("%s: production %s -> v%s", name, current, version)
    return {"lang": lang, "version": version, "promoted": True, "replaced": current}
