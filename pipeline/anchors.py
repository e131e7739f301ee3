"""Versioned anchors, per-language alignment fits, the promotion gate, re-alignment, audit.

DESIGN.md section 7: with a multilingual embedder a plain Procrustes map on a few dozen
anchors destroys cross-lingual retrieval. So a fitted map W_lang is only ever a
*candidate*; it becomes the ``production`` alias of ``rosetta-align-<lang>`` only when
it beats both the identity map and the current production map on the anchor set's
held-out split. A rejected version stays in the registry, tagged with its figures.

    fit_candidate -> gate -> promote -> realign_language        (the anchors DAG, the CLI)

* Anchor sets live in ``anchors.root``/<version>/ (scripts/build_anchors.py): rows.jsonl
  plus a manifest with every row's sha256; ``load_anchor_set`` refuses a set whose rows
  do not match their manifest.
* Fitting (pipeline.alignment.fit_procrustes: centring + pull toward identity) chooses
  alpha on the training split alone (an inner validation fifth of the training
  concepts), then refits on the whole training split.
* Evaluation: each held-out phrase in the language retrieves among all held-out English
  phrases; accuracy@1 and MRR for identity (raw vectors), the fitted map and production.
* Re-alignment: the promoted map is applied to the raw vectors each loaded document's
  batch kept (``embed/<doc>.raw.npy``), as a new batch of kind ``realign`` through the
  normal staging load, QA gate and promotion, which replaces the old chunks.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import pipeline_version
from pipeline.alignment import (IDENTITY, AlignmentMap, configure_mlflow, fit_procrustes, load_map_version,
                                load_production_map, registered_model_name)
from pipeline.config import Settings, project_home
from pipeline.embedders import Embedder, embedder_id, get_embedder

log = logging.getLogger(__name__)
REJECTED, APPROVED, PROMOTED, CANDIDATE = "rejected", "approved", "promoted", "candidate"


# --- anchor sets ------------------------------------------------------------------------
class AnchorSetError(Exception):
    pass


@dataclass(frozen=True)
class AnchorSet:
    version: str
    path: Path
    manifest: dict[str, Any]
    rows: list[dict[str, Any]]

    @property
    def sha256(self) -> str:
        return self.manifest["set_sha256"]

    def pairs(self, lang: str, split: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["lang"] == lang and r["split"] == split]


def _resolve(path: str) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else project_home() / p


def anchors_root(settings: Settings) -> Path:
    return _resolve(settings.anchors.root)


def anchor_versions(settings: Settings) -> list[str]:
    """Anchor set versions present, oldest first (v2 before v10)."""
    root = anchors_root(settings)
    found = [p.name for p in root.iterdir() if (p / "manifest.json").exists()] if root.exists() else []
    return sorted(found, key=lambda v: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", v)])


def row_digest(row: dict[str, Any]) -> str:
    """Same definition as scripts/build_anchors.py."""
    text = "\t".join([row["id"], row["kind"], row["lang"], row["en"], row["text"], row["split"]])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_anchor_set(settings: Settings, version: str | None = None) -> AnchorSet:
    """An anchor set, every row checked against its manifest's sha256."""
    version = version or settings.anchors.version
    if version == "latest":
        versions = anchor_versions(settings)
        if not versions:
            raise AnchorSetError(f"no anchor set under {anchors_root(settings)}: run scripts/build_anchors.py")
        version = versions[-1]
    path = anchors_root(settings) / version
    if not (path / "manifest.json").exists():
        raise AnchorSetError(f"anchor set {version} not found under {anchors_root(settings)}")
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (path / "rows.jsonl").read_text(encoding="utf-8").splitlines() if line]
    expected = manifest["rows"]
    bad = [r["id"] for r in rows if expected.get(r["id"], {}).get("sha256") != row_digest(r)]
    missing = set(expected) - {r["id"] for r in rows}
    if bad or missing:
        raise AnchorSetError(f"anchor set {version} does not match its manifest: {len(bad)} changed row(s) "
                             f"(first {bad[:3]}), {len(missing)} missing row(s)")
    digest = hashlib.sha256("\n".join(row_digest(r) for r in rows).encode()).hexdigest()
    if digest != manifest["set_sha256"]:
        raise AnchorSetError(f"anchor set {version}: set sha256 {digest} != manifest {manifest['set_sha256']}")
    return AnchorSet(version=version, path=path, manifest=manifest, rows=rows)


def diff_anchor_sets(old: AnchorSet, new: AnchorSet) -> dict[str, list[dict[str, Any]]]:
    """Rows added, removed and changed (same id, other content) from ``old`` to ``new``."""
    before, after = {r["id"]: r for r in old.rows}, {r["id"]: r for r in new.rows}
    fields = ("en", "text", "split", "kind")
    return {
        "added": [after[i] for i in sorted(after.keys() - before.keys())],
        "removed": [before[i] for i in sorted(before.keys() - after.keys())],
        "changed": [{"id": i, "lang": after[i]["lang"],
                     **{f: {"old": before[i][f], "new": after[i][f]} for f in fields if before[i][f] != after[i][f]}}
                    for i in sorted(before.keys() & after.keys()) if row_digest(before[i]) != row_digest(after[i])],
    }


# --- vectors ----------------------------------------------------------------------------
def anchor_vectors(settings: Settings, anchors: AnchorSet, lang: str, embedder: Embedder) -> dict[str, np.ndarray]:
    """Raw vectors of a language's rows (``text``) and their English sides (``en``), in row
    order, cached under data_root by embedder and anchor set sha256."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", embedder_id(embedder))
    cache = settings.data_root / "anchor-cache" / safe / f"{anchors.sha256[:16]}-{lang}.npz"
    rows = [r for r in anchors.rows if r["lang"] == lang]
    if cache.exists():
        with np.load(cache) as arrays:
            if len(arrays["text"]) == len(rows):
                return {"text": arrays["text"], "en": arrays["en"]}
    vectors = {"text": embedder.encode([r["text"] for r in rows]), "en": embedder.encode([r["en"] for r in rows])}
    cache.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=cache.parent, suffix=".npz", delete=False) as tmp:
        np.savez(tmp, **vectors)
    Path(tmp.name).replace(cache)
    return vectors


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


# --- fit, gate, promote -----------------------------------------------------------------
def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _ensure_registered_model(client, name: str) -> None:
    from mlflow.exceptions import MlflowException

    try:
        client.get_registered_model(name)
    except MlflowException:
        client.create_registered_model(name, description="Rosetta alignment map into the reference space "
                                                         "(pipeline/anchors.py); production = the alias in use")


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


# --- re-alignment -----------------------------------------------------------------------
def _live_chunks(settings: Settings, props: list[str]):
    """(uuid, properties) of every live chunk, by cursor (no result-window limit)."""
    from pipeline import store

    with store.connect(settings) as client:
        if not client.collections.exists(settings.weaviate.collection):
            return
        collection = client.collections.get(settings.weaviate.collection)
        for obj in collection.iterator(return_properties=props):
            yield str(obj.uuid), obj.properties


def prepare_realignment(batch_id: str, sources: dict[str, str], alignment: AlignmentMap,
                        settings: Settings) -> list[str]:
    """Write a re-alignment batch's workspace: the documents' chunks again, with vectors
    re-aligned by ``alignment`` FROM THE RAW VECTORS kept by the batch that produced them
    (``sources``: doc_id -> that batch's id).

    The language, structure and chunk files are copied (the QA gate reads them); the
    objects are the loaded ones with alignment_version, anchor_set_version and batch_id
    restamped, so their uuids are new and loading.promote replaces the old chunks.
    Idempotent; returns the documents written.
    """
    from pipeline import store
    from pipeline.contracts import EmbeddedDocument
    from pipeline.loading import STAGE as OBJECTS
    from pipeline.workspace import Workspace

    ws = Workspace(settings, batch_id)
    written = []
    for doc_id, source_batch in sorted(sources.items()):
        source = Workspace(settings, source_batch)
        for stage in ("language", "structure", "chunk"):
            ws.write_json(ws.path(stage, doc_id), source.read_json(source.path(stage, doc_id)))
        embedded = source.read_model(source.path("embed", doc_id), EmbeddedDocument)
        raw = source.read_array(embedded.raw_vectors)
        raw_path = ws.write_array(ws.path("embed", doc_id, "raw.npy"), raw)
        aligned_path = ws.write_array(ws.path("embed", doc_id, "aligned.npy"), alignment.apply(raw))
        ws.write_model(ws.path("embed", doc_id), embedded.model_copy(update={
            "alignment_version": alignment.version, "anchor_set_version": alignment.anchor_set_version,
            "raw_vectors": str(raw_path), "aligned_vectors": str(aligned_path)}))
        objects = []
        for obj in source.read_json(source.path(OBJECTS, doc_id)):
            properties = {**obj["properties"], "alignment_version": alignment.version,
                          "anchor_set_version": alignment.anchor_set_version or "none", "batch_id": batch_id}
            objects.append({"uuid": store.chunk_uuid(properties), "properties": properties})
        if len(objects) != len(raw):
            raise RuntimeError(f"{doc_id}: batch {source_batch} has {len(objects)} chunk(s) but {len(raw)} raw vector(s)")
        ws.write_json(ws.path(OBJECTS, doc_id), objects)
        written.append(doc_id)
    return written


def realign_language(settings: Settings, lang: str, batch_id: str) -> dict[str, Any]:
    """Re-align every live chunk of ``lang`` not yet at the production version, from the
    stored raw vectors, as batch ``batch_id`` (kind ``realign``): staging load, QA gate,
    then promotion (old chunks replaced) or rollback."""
    from pipeline import store

    # One connection held for the whole batch: with the embedded server, every step's
    # own connect then reaches this server instead of starting and stopping another.
    with store.connect(settings):
        return _realign(settings, lang, batch_id)


def _realign(settings: Settings, lang: str, batch_id: str) -> dict[str, Any]:
    from pipeline.contracts import EmbeddedDocument
    from pipeline.loading import discard, load_batch
    from pipeline.loading import promote as promote_batch
    from pipeline.qa import run_gate
    from pipeline.registry import Registry
    from pipeline.workspace import Workspace

    alignment = load_production_map(settings, lang)
    stale: dict[str, set[str]] = {}
    for _, p in _live_chunks(settings, ["doc_id", "lang", "alignment_version", "batch_id"]):
        if p["lang"] == lang and p["alignment_version"] != alignment.version:
            stale.setdefault(p["doc_id"], set()).add(p["batch_id"])
    sources, skipped = {}, {}
    for doc_id, batches in sorted(stale.items()):
        if len(batches) != 1:
            skipped[doc_id] = f"chunks from {len(batches)} batches: reprocess the document"
            continue
        source = Workspace(settings, next(iter(batches)))
        embedded_path = source.path("embed", doc_id)
        if not embedded_path.exists():
            skipped[doc_id] = f"batch workspace {source.root} has no raw vectors"
            continue
        if source.read_model(embedded_path, EmbeddedDocument).lang != lang:
            continue  # a chunk labelled lang inside another language's document
        sources[doc_id] = source.batch_id
    summary: dict[str, Any] = {"batch_id": batch_id, "kind": "realign", "lang": lang,
                               "alignment_version": alignment.version,
                               "anchor_set_version": alignment.anchor_set_version, "documents": sorted(sources),
                               "skipped": skipped, "status": "nothing_to_do", "chunks": 0}
    if not sources:
        return summary
    registry = Registry(settings.registry_path)
    registry.start_batch(batch_id, "realign")
    ws = Workspace(settings, batch_id)
    ws.write_json(ws.batch_file("realign.json"), {**summary, "sources": sources})
    doc_ids = prepare_realignment(batch_id, sources, alignment, settings)
    loaded = load_batch(batch_id, doc_ids, settings)
    report = run_gate(batch_id, doc_ids, settings)
    if report["passed"]:
        outcome = promote_batch(batch_id, doc_ids, settings)
        for doc_id in doc_ids:
            known = registry.get(doc_id)
            registry.record_document(doc_id, known.source_path if known else "", last_batch=batch_id)
    else:
        outcome = discard(batch_id, settings)
    summary.update(status=outcome["state"], chunks=loaded["objects"], qa_passed=report["passed"],
                   qa_failure_rate=report["failure_rate"], replaced=outcome.get("replaced", 0))
    ws.write_json(ws.batch_file("summary.json"), summary)
    registry.finish_batch(batch_id, summary["status"], summary)
    if alignment.version != IDENTITY:
        client = configure_mlflow(settings)
        client.set_model_version_tag(registered_model_name(settings, lang), alignment.version,
                                     "last_realign", f"{batch_id}: {summary['status']}, {summary['chunks']} chunk(s)")
    log.info("realign %s -> %s: %s, %d chunk(s) of %d document(s)", lang, alignment.version, summary["status"],
             summary["chunks"], len(doc_ids))
    return summary


# --- audit ------------------------------------------------------------------------------
def chunk_counts(settings: Settings) -> dict[tuple[str, str], int]:
    """(lang, alignment_version) -> live chunks carrying it."""
    counts: dict[tuple[str, str], int] = {}
    for _, p in _live_chunks(settings, ["lang", "alignment_version"]):
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


# --- golden set evaluation --------------------------------------------------------------
def golden_path(settings: Settings) -> Path:
    return _resolve(settings.anchors.golden_set)


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
            raw = embedder.encode([q["text"] for q in queries])
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
