"""Batch bookkeeping shared by the DAGs and the CLI: discovery, the per-document stage
runner with quarantine, and the batch's end.

``discover`` compares each source file's sha256 with the registry so that a corpus
refresh only processes what changed. ``run_stage`` is the one place where a bad
document turns into a quarantine record while the rest of the batch goes on.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable

from pipeline.config import Settings
from pipeline.contracts import BatchManifest, DocRef, DocumentError, SourceDocument, StageResult
from pipeline.registry import Registry
from pipeline.workspace import Workspace, doc_id_for, sha256_file

log = logging.getLogger(__name__)
progress = logging.getLogger("pipeline.progress")  # one line per document per stage

MANIFEST = "manifest.json"


def list_sources(settings: Settings, paths: Iterable[str | Path] | None = None) -> list[Path]:
    """Files to consider: the given paths (files or folders), else the source folder."""
    roots = [Path(p) for p in paths] if paths else [settings.source_dir]
    found: set[Path] = set()
    for root in roots:
        root = root.expanduser().resolve()
        if root.is_file():
            found.add(root)
        elif root.is_dir():
            for pattern in settings.source_globs:
                found.update(p.resolve() for p in root.glob(pattern) if p.is_file() and not p.name.startswith("."))
        else:
            raise FileNotFoundError(f"{root} does not exist")
    return sorted(found)


def source_document(path: Path, settings: Settings, doc_id: str | None = None) -> SourceDocument:
    return SourceDocument(
        doc_id=doc_id or doc_id_for(path, settings.source_dir),
        source_path=str(path),
        sha256=sha256_file(path),
        size_bytes=path.stat().st_size,
    )


def discover(settings: Settings, batch_id: str, paths: Iterable[str | Path] | None = None,
             force: bool = False) -> BatchManifest:
    """Write the batch manifest: new and changed documents to process, unchanged skipped.

    Idempotent: a retried discover task rewrites the same manifest.
    """
    registry = Registry(settings.registry_path)
    todo: list[SourceDocument] = []
    skipped: list[SourceDocument] = []
    for path in list_sources(settings, paths):
        doc = source_document(path, settings)
        known = registry.get(doc.doc_id)
        if not force and known and known.sha256 == doc.sha256 and known.status in ("loaded", "quarantined"):
            skipped.append(doc)
        else:
            todo.append(doc)
    return write_manifest(settings, batch_id, "corpus_refresh", todo, skipped)


def reprocess_manifest(settings: Settings, batch_id: str, target: str) -> BatchManifest:
    """The manifest of a one-document batch; ``target`` is a doc_id or a file path."""
    registry = Registry(settings.registry_path)
    known = registry.get(target)
    if known is not None:
        doc = source_document(Path(known.source_path), settings, doc_id=known.doc_id)
    elif Path(target).expanduser().is_file():
        path = Path(target).expanduser().resolve()
        by_path = registry.find_by_path(str(path))
        doc = source_document(path, settings, doc_id=by_path.doc_id if by_path else None)
    else:
        raise ValueError(f"{target!r} is neither a known document id nor an existing file")
    return write_manifest(settings, batch_id, "reprocess", [doc], [])


def write_manifest(settings: Settings, batch_id: str, kind: str, todo: list[SourceDocument],
                   skipped: list[SourceDocument]) -> BatchManifest:
    manifest = BatchManifest(batch_id=batch_id, kind=kind, documents=todo, skipped=skipped)  # type: ignore[arg-type]
    ws = Workspace(settings, batch_id)
    ws.write_model(ws.batch_file(MANIFEST), manifest)
    registry = Registry(settings.registry_path)
    registry.start_batch(batch_id, kind)
    for doc in todo:
        registry.record_document(doc.doc_id, doc.source_path, last_batch=batch_id)
    log.info("batch %s: %d document(s) to process, %d unchanged and skipped", batch_id, len(todo), len(skipped))
    for doc in skipped:
        log.info("  skipped (unchanged): %s", doc.source_path)
    return manifest


def read_manifest(settings: Settings, batch_id: str) -> BatchManifest:
    ws = Workspace(settings, batch_id)
    return ws.read_model(ws.batch_file(MANIFEST), BatchManifest)


def quarantine_path(ws: Workspace, doc_id: str) -> Path:
    return ws.path("quarantine", doc_id)


def run_stage(stage: ModuleType, previous: StageResult | dict[str, Any] | DocRef, settings: Settings) -> StageResult:
    """Run one per-document stage; a DocumentError becomes a quarantine record.

    ``previous`` is the upstream stage's result (or the document's ref for the first
    stage). A quarantined document passes through every later stage untouched. Any other
    exception propagates, so Airflow retries the task (the stage is idempotent).
    """
    if isinstance(previous, dict):
        previous = StageResult.model_validate(previous) if "stage" in previous else DocRef.model_validate(previous)
    if isinstance(previous, StageResult) and previous.status == "quarantined":
        return previous
    ref = previous.ref if isinstance(previous, StageResult) else previous
    try:
        result = stage.run(ref, settings)
    except DocumentError as error:
        ws = Workspace(settings, ref.batch_id)
        source = next((d for d in read_manifest(settings, ref.batch_id).documents if d.doc_id == ref.doc_id), None)
        result = StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=stage.STAGE, status="quarantined",
                             reason=error.reason, detail=error.detail)
        ws.write_json(quarantine_path(ws, ref.doc_id), {**result.model_dump(),
                                                        "source_path": source.source_path if source else None})
        log.warning("QUARANTINE %s (%s): %s", source.source_path if source else ref.doc_id, error.reason, error.detail)
    progress.info("%-9s %-36s %s", stage.STAGE, ref.doc_id,
                  result.status if result.status == "ok" else f"QUARANTINED ({result.reason}: {result.detail})")
    return result


def finish_batch(batch_id: str, results: list[dict[str, Any]], outcome: dict[str, Any],
                 settings: Settings) -> dict[str, Any]:
    """Record each document's outcome and the batch's in the registry and in MLflow.

    Loaded documents get the sha256 of the version now live; a rolled-back batch leaves
    its documents' sha256 unchanged so the next refresh tries them again.
    """
    from pipeline.contracts import ChunkedDocument, CleanedDocument, EmbeddedDocument, ExtractedDocument

    ws = Workspace(settings, batch_id)
    manifest = read_manifest(settings, batch_id)
    registry = Registry(settings.registry_path)
    promoted = outcome.get("promotion", {}).get("state") == "promoted"
    sources = {d.doc_id: d for d in manifest.documents}
    documents, alignment_versions = [], {}
    for result in map(StageResult.model_validate, results):
        source = sources[result.doc_id]
        row: dict[str, Any] = {"doc_id": result.doc_id, "source_path": source.source_path}
        if result.status == "quarantined":
            row.update(status="quarantined", reason=result.reason, detail=result.detail)
            registry.record_document(result.doc_id, source.source_path, status="quarantined", sha256=source.sha256,
                                     quarantine_reason=result.reason, quarantine_detail=result.detail,
                                     last_batch=batch_id, chunks=0)
        else:
            extracted = ws.read_model(ws.path("extract", result.doc_id), ExtractedDocument)
            cleaned = ws.read_model(ws.path("language", result.doc_id), CleanedDocument)
            chunked = ws.read_model(ws.path("chunk", result.doc_id), ChunkedDocument)
            embedded = ws.read_model(ws.path("embed", result.doc_id), EmbeddedDocument)
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
        documents.append(row)
    status = "promoted" if promoted else ("rolled_back" if outcome.get("promotion") else "empty")
    if not results:
        status = "nothing_to_do"
    summary = {
        "batch_id": batch_id, "kind": manifest.kind, "status": status,
        "processed": len(results), "skipped_unchanged": len(manifest.skipped),
        "loaded": sum(d["status"] == "loaded" for d in documents),
        "quarantined": sum(d["status"] == "quarantined" for d in documents),
        "chunks": outcome.get("objects", 0), "qa_passed": outcome.get("qa_passed"),
        "qa_failure_rate": outcome.get("qa_failure_rate"), "alignment_versions": alignment_versions,
        "documents": documents,
    }
    ws.write_json(ws.batch_file("summary.json"), summary)
    registry.finish_batch(batch_id, status, summary)
    _log_batch_to_mlflow(batch_id, summary, ws, settings)
    progress.info("batch %s %s: %d processed, %d loaded, %d quarantined, %d unchanged skipped, %d chunk(s)",
             batch_id, status, summary["processed"], summary["loaded"], summary["quarantined"],
             summary["skipped_unchanged"], summary["chunks"])
    return summary


def _log_batch_to_mlflow(batch_id: str, summary: dict[str, Any], ws: Workspace, settings: Settings) -> None:
    """One MLflow run per batch: the audit of which alignment version produced which vectors."""
    import mlflow

    from pipeline import pipeline_version
    from pipeline.alignment import configure_mlflow

    configure_mlflow(settings)
    with mlflow.start_run(run_name=f"batch {batch_id}", tags={"rosetta.kind": "batch", "rosetta.batch_id": batch_id,
                                                              "rosetta.status": summary["status"]}):
        mlflow.log_params({"pipeline_version": pipeline_version(), "embedder": settings.embedding.model,
                           **{f"alignment_version.{lang}": v for lang, v in summary["alignment_versions"].items()}})
        mlflow.log_metrics({k: float(summary[k] or 0) for k in ("processed", "loaded", "quarantined", "chunks",
                                                                 "skipped_unchanged")})
        for name in ("summary.json", "qa_report.json"):
            if ws.batch_file(name).exists():
                mlflow.log_artifact(str(ws.batch_file(name)), artifact_path="batch")


def record_rollback(batch_id: str, journal: dict[str, Any], reason: str, settings: Settings) -> None:
    """After a promoted batch was rolled back: its documents are live again in their
    previous version (if they had one) or marked failed, so the next refresh retries them."""
    ws = Workspace(settings, batch_id)
    registry = Registry(settings.registry_path)
    backup_path = ws.batch_file("replaced_chunks.json")
    previous: dict[str, dict[str, Any]] = {}
    previous_chunks: Counter[str] = Counter()
    for obj in (ws.read_json(backup_path) if backup_path.exists() else []):
        previous[obj["properties"]["doc_id"]] = obj["properties"]
        previous_chunks[obj["properties"]["doc_id"]] += 1
    for doc in read_manifest(settings, batch_id).documents:
        row = registry.get(doc.doc_id)
        if row is None or row.last_batch != batch_id:
            continue  # a later batch owns this document now
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


# The per-document stages in pipeline order: the name the CLI, the DAG tasks and the
# images use -> the module under pipeline/ that implements it.
DOCUMENT_STAGES = {"extract": "extraction", "language": "language", "structure": "structure", "chunk": "chunking",
                   "embed": "embedding", "enrich": "loading"}


def process_document(ref: DocRef, settings: Settings) -> StageResult:
    """All per-document stages for one document, in order, as the DAG runs them."""
    import importlib

    previous: StageResult | DocRef = ref
    for module in DOCUMENT_STAGES.values():
        previous = run_stage(importlib.import_module(f"pipeline.{module}"), previous, settings)
    return previous  # type: ignore[return-value]


# --- the batch-level steps: load, QA gate, promotion -----------------------------------
# Each step's input is the previous step's output: an XCom for the in-process task, rebuilt
# from the batch workspace by ``rosetta stage load|qa|promote --batch B`` (a container).
def load_step(batch_id: str, results: list[dict[str, Any]], settings: Settings) -> dict[str, Any]:
    """Load the documents that came through every stage into the batch's staging collection."""
    from pipeline.loading import load_batch, loadable_doc_ids

    return {"results": results, **load_batch(batch_id, loadable_doc_ids(results), settings)}


def qa_step(batch_id: str, loaded: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """The QA gate on the staged batch; its verdict joins the load's outcome."""
    from pipeline.qa import run_gate

    report = run_gate(batch_id, loaded["documents"], settings)
    return {**loaded, "qa_passed": report["passed"], "qa_failure_rate": report["failure_rate"]}


def promote_step(batch_id: str, checked: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """Promote a batch that passed the QA gate, drop the staging collection of one that failed."""
    from pipeline.loading import discard, promote

    if checked["qa_passed"]:
        outcome = promote(batch_id, checked["documents"], settings)
    else:
        outcome = discard(batch_id, settings)
    return {**checked, "promotion": outcome}


def workspace_results(settings: Settings, batch_id: str) -> list[dict[str, Any]]:
    """What the per-document stages returned, in manifest order, from the workspace: a
    document's quarantine record, else its enrich output (``<batch>/enrich/<doc_id>.json``)."""
    from pipeline.loading import STAGE as ENRICH

    ws = Workspace(settings, batch_id)
    results = []
    for doc in read_manifest(settings, batch_id).documents:
        if quarantine_path(ws, doc.doc_id).exists():
            result = StageResult.model_validate(ws.read_json(quarantine_path(ws, doc.doc_id)))
        elif ws.path(ENRICH, doc.doc_id).exists():
            result = StageResult(batch_id=batch_id, doc_id=doc.doc_id, stage=ENRICH,
                                 output=str(ws.path(ENRICH, doc.doc_id)))
        else:
            raise RuntimeError(f"document {doc.doc_id} of batch {batch_id} has neither an {ENRICH} output "
                               "nor a quarantine record: its per-document stages have not all run")
        results.append(result.model_dump())
    return results


def workspace_loaded(settings: Settings, batch_id: str) -> dict[str, Any]:
    """What ``load_step`` returned: the loadable documents and their objects (distinct uuids,
    the count load_batch checked the staging collection against)."""
    from pipeline import store
    from pipeline.loading import STAGE as ENRICH
    from pipeline.loading import loadable_doc_ids

    ws = Workspace(settings, batch_id)
    results = workspace_results(settings, batch_id)
    doc_ids = loadable_doc_ids(results)
    uuids = {obj["uuid"] for doc_id in doc_ids for obj in ws.read_json(ws.path(ENRICH, doc_id))}
    return {"results": results, "staging_collection": store.staging_name(settings, batch_id),
            "objects": len(uuids), "documents": doc_ids}


def workspace_checked(settings: Settings, batch_id: str) -> dict[str, Any]:
    """What ``qa_step`` returned: the load's outcome and the verdict in ``<batch>/qa_report.json``."""
    ws = Workspace(settings, batch_id)
    report = ws.read_json(ws.batch_file("qa_report.json"))
    return {**workspace_loaded(settings, batch_id), "qa_passed": report["passed"],
            "qa_failure_rate": report["failure_rate"]}


# `rosetta stage NAME --batch B` for a batch-level step: (its input from the workspace, the step).
BATCH_STEPS = {
    "load": (workspace_results, load_step),
    "qa": (workspace_loaded, qa_step),
    "promote": (workspace_checked, promote_step),
}
