"""The batch's end: its outcome in the document registry and in MLflow, and the rollback of a
promoted batch.

The lifecycle every batch goes through, in-process (``publish_batch``, used by re-alignment
and the tests) or as Airflow tasks (plugins/rosetta_airflow/flow.py) with the same functions:

    manifest (pipeline.batch.discovery) -> load -> qa -> promote or discard -> finish_batch
    later, if a reviewer rejects it: roll_back

A corpus refresh's moves and deletions ride on the same journal: promotion applies them to
the live collection, finish_batch to the registry, roll_back undoes both.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from pipeline.batch import retention
from pipeline.batch.runner import run_step
from pipeline.config import Settings
from pipeline.contracts import (
    BatchManifest,
    ChunkedDocument,
    CleanedDocument,
    EmbeddedDocument,
    ExtractedDocument,
    StageResult,
)
from pipeline.publish import promote
from pipeline.stages import CHUNK, EMBED, EXTRACT, LANGUAGE, LOAD, PROMOTE, QA, stage
from pipeline.stores import file_cache, tracking
from pipeline.stores.document_registry import GONE, DocumentRegistry
from pipeline.workspace import Workspace

log = logging.getLogger(__name__)
progress = logging.getLogger("pipeline.progress")


def publish_batch(batch_id: str, results: list[dict[str, Any]], settings: Settings) -> dict[str, Any]:
    """load -> qa -> promote or discard -> finish, in this process; returns the batch summary.

    ``results`` are the per-document stages' last results (the manifest is written already).
    """
    loaded = run_step(stage(LOAD), batch_id, results, settings)
    checked = run_step(stage(QA), batch_id, loaded, settings)
    outcome = run_step(stage(PROMOTE), batch_id, checked, settings)
    return finish_batch(batch_id, outcome["results"], outcome, settings)


def finish_batch(batch_id: str, results: list[dict[str, Any]], outcome: dict[str, Any],
                 settings: Settings) -> dict[str, Any]:
    """Record each document's outcome and the batch's in the registry and in MLflow.

    Loaded documents get the sha256 of the version now live; a rolled-back batch leaves
    its documents' sha256 unchanged so the next refresh tries them again.
    """
    ws = Workspace(settings, batch_id)
    manifest = ws.read_manifest()
    registry = DocumentRegistry(settings.document_registry_path)
    promoted = outcome.get("promotion", {}).get("state") == "promoted"
    sources = {d.doc_id: d for d in manifest.documents}
    documents, alignment_versions = [], {}
    for result in map(StageResult.model_validate, results):
        source = sources[result.doc_id]
        row: dict[str, Any] = {"doc_id": result.doc_id, "source_path": source.source_path}
        if result.status == "quarantined":
            # a new version that fails leaves the version loaded before live (promotion replaces
            # only the documents a batch loads): its chunks are counted, and said to stay
            earlier = registry.get(result.doc_id)
            live = earlier.chunks if earlier and earlier.status in ("loaded", "quarantined") and earlier.chunks else 0
            detail = result.detail + (f"; the version loaded before stays searchable ({live} chunks)" if live else "")
            row.update(status="quarantined", reason=result.reason, detail=detail)
            held = source.sha256
            if result.reason == "source_changed":
                # a file rewritten while it was read: what it holds now is unknown, so the next refresh
                # reads it again whatever its content (a file saved back as found is not skipped)
                held = ""
                registry.remember_hashes({}, gone=[source.source_path])
            registry.record_document(result.doc_id, source.source_path, status="quarantined", sha256=held,
                                     quarantine_reason=result.reason, quarantine_detail=detail,
                                     last_batch=batch_id, chunks=live)
        else:
            extracted = ws.read_model(ws.path(EXTRACT, result.doc_id), ExtractedDocument)
            cleaned = ws.read_model(ws.path(LANGUAGE, result.doc_id), CleanedDocument)
            chunked = ws.read_model(ws.path(CHUNK, result.doc_id), ChunkedDocument)
            embedded = ws.read_model(ws.path(EMBED, result.doc_id), EmbeddedDocument)
            alignment_versions[cleaned.lang] = embedded.alignment_version
            status = "loaded" if promoted else "failed"
            fields = dict(status=status, lang=cleaned.lang, lang_confidence=cleaned.lang_confidence,
                          pages=len(extracted.pages), extraction="+".join(cleaned.extraction_methods),
                          chunks=len(chunked.chunks), last_batch=batch_id, quarantine_reason=None,
                          quarantine_detail=None if promoted else "batch rolled back by the QA gate")
            if promoted:
                fields["sha256"] = source.sha256
            registry.record_document(result.doc_id, source.source_path, **fields)
            row.update(status=status, lang=cleaned.lang, lang_confidence=cleaned.lang_confidence,
                       pages=len(extracted.pages), extraction=fields["extraction"], chunks=len(chunked.chunks))
            if cleaned.left_out:  # sections in languages not configured, not loaded
                row["left_out"] = cleaned.left_out
        documents.append(row)
    if promoted:
        _record_sync(manifest, registry)
    status = "promoted" if promoted else ("rolled_back" if outcome.get("promotion") else "empty")
    if not results and not manifest.moved and not manifest.deleted:
        status = "nothing_to_do"
    summary = {
        "batch_id": batch_id, "kind": manifest.kind, "status": status,
        "processed": len(results), "skipped_unchanged": len(manifest.skipped),
        "loaded": sum(d["status"] == "loaded" for d in documents),
        "quarantined": sum(d["status"] == "quarantined" for d in documents),
        "moved": [m.doc_id for m in manifest.moved], "deleted": [d.doc_id for d in manifest.deleted],
        "chunks": outcome.get("objects", 0), "qa_passed": outcome.get("qa_passed"),
        "qa_failure_rate": outcome.get("qa_failure_rate"), "alignment_versions": alignment_versions,
        "stages": stage_costs(manifest, results, outcome), "documents": documents,
    }
    ws.write_json(ws.batch_file("summary.json"), summary)
    registry.finish_batch(batch_id, status, summary)
    tracking.log_batch(batch_id, summary, ws, settings)
    progress.info("batch %s %s: %d processed, %d loaded, %d quarantined, %d unchanged skipped, %d chunk(s)",
             batch_id, status, summary["processed"], summary["loaded"], summary["quarantined"],
             summary["skipped_unchanged"], summary["chunks"])
    retention.prune_after_batch(settings)  # older batches past their review window
    for name, (folder, max_mb) in settings.caches.items():
        try:
            file_cache.trim(folder, max_mb, name)
        except OSError as exc:  # housekeeping: the batch's outcome is recorded, the next finish trims
            log.warning("%s not trimmed this time: %s", name, exc)
    return summary


def stage_costs(manifest: BatchManifest, results: list[dict[str, Any]], outcome: dict[str, Any]) -> dict[str, Any]:
    """Per stage, in order: wall seconds summed over the documents (or the step's once), the
    largest peak resident memory of the process that ran it, and how many runs that was."""
    costs: dict[str, dict[str, Any]] = {}

    def add(name: str, timing: dict[str, float]) -> None:
        cost = costs.setdefault(name, {"seconds": 0.0, "peak_rss_mib": 0.0, "runs": 0})
        cost["seconds"] = round(cost["seconds"] + timing["seconds"], 3)
        cost["peak_rss_mib"] = max(cost["peak_rss_mib"], timing["peak_rss_mib"])
        cost["runs"] += 1

    if manifest.discovery is not None:
        add("discover", manifest.discovery.model_dump())
    for result in results:
        for name, timing in result.get("timings", {}).items():
            add(name, timing if isinstance(timing, dict) else timing.model_dump())
    for name, timing in outcome.get("step_timings", {}).items():
        add(name, timing)
    return costs


def _record_sync(manifest: BatchManifest, registry: DocumentRegistry) -> None:
    """A promoted batch's moves and deletions, in the registry (their chunks moved at promotion)."""
    for move in manifest.moved:
        registry.set_paths(move.doc_id, move.new_paths, move.new_primary)
    for gone in manifest.deleted:
        registry.mark_deleted(gone.doc_id, gone.reason)
        progress.info("deleted %s (%s): %s", gone.doc_id, gone.reason, ", ".join(gone.paths))


def _undo_sync(manifest: BatchManifest, registry: DocumentRegistry) -> None:
    """A rolled-back batch's moves and deletions, undone where no later change took over."""
    for move in manifest.moved:
        if registry.paths(move.doc_id) == sorted(move.new_paths):
            registry.set_paths(move.doc_id, move.old_paths, move.old_primary)
    for gone in manifest.deleted:
        row = registry.get(gone.doc_id)
        if row is not None and row.status == "deleted":
            registry.restore(gone.doc_id, gone.status, gone.paths, row.source_path)


def roll_back(batch_id: str, reason: str, settings: Settings) -> dict[str, Any]:
    """Undo a batch in Weaviate (promoted or not) and in the registry; returns the journal.
    The batch is ``rolling_back`` in the registry meanwhile, so that a rollback killed half-way
    is finished by the next run's recovery (``batch.recovery``)."""
    retention.refuse_rollback_if_pruned(Workspace(settings, batch_id))
    registry = DocumentRegistry(settings.document_registry_path)
    batch = registry.batch(batch_id)
    registry.finish_batch(batch_id, "rolling_back", {**(batch.summary if batch else {}), "rollback_reason": reason})
    journal = promote.rollback_promoted(batch_id, settings)
    _record_rollback(batch_id, journal, reason, settings)
    return journal


def _record_rollback(batch_id: str, journal: dict[str, Any], reason: str, settings: Settings) -> None:
    """After a promoted batch was rolled back: its documents are live again in their
    previous version (if they had one) or marked failed, so the next refresh retries them."""
    ws = Workspace(settings, batch_id)
    registry = DocumentRegistry(settings.document_registry_path)
    backup_path = ws.batch_file("replaced_chunks.json")
    previous: dict[str, dict[str, Any]] = {}
    previous_chunks: Counter[str] = Counter()
    for obj in (ws.read_json(backup_path) if backup_path.exists() else []):
        previous[obj["properties"]["doc_id"]] = obj["properties"]
        previous_chunks[obj["properties"]["doc_id"]] += 1
    manifest = ws.read_manifest()
    if journal.get("after_promotion"):
        _undo_sync(manifest, registry)
    for doc in manifest.documents:
        row = registry.get(doc.doc_id)
        if row is None or row.last_batch != batch_id or row.status in GONE:
            continue  # a later batch owns this document now, or it was deleted or forgotten since
        if doc.doc_id in previous:
            old = previous[doc.doc_id]
            registry.record_document(doc.doc_id, doc.source_path, status="loaded", sha256=old["source_sha256"],
                                     last_batch=old["batch_id"], chunks=previous_chunks[doc.doc_id],
                                     quarantine_reason=None,
                                     quarantine_detail=f"batch {batch_id} rolled back ({reason})")
        else:
            registry.record_document(doc.doc_id, doc.source_path, status="failed", sha256=None, chunks=0,
                                     quarantine_reason="rolled_back", quarantine_detail=reason)
    batch = registry.batch(batch_id)
    summary = {**(batch.summary if batch else {}), "rollback": journal, "rollback_reason": reason}
    registry.finish_batch(batch_id, "rolled_back", summary)
