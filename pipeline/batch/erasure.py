"""Erasure on request (``rosetta forget``, the ``forget_document`` DAG): one document removed
from everywhere Rosetta copied it, so that nothing under the data root holds its text.

    1. Weaviate: its objects leave the live and every staging collection, then each collection
       is rewritten (``rewrite_collection`` below), because the storage
       engine keeps deleted objects' bytes in older segments until compaction;
    2. every batch workspace: its per-stage files and vectors are deleted, and every batch
       file that mentions it (manifest, replaced_chunks.json, which a later rollback would
       restore from, QA report and review, summary, realign.json) is rewritten without it;
    3. MLflow: the batch runs' summary and QA report artifacts are re-logged, scrubbed;
    4. the run logs (Airflow task logs, ``settings.run_logs_path``): lines naming it are dropped;
    5. the embedding and OCR caches (pipeline/embedding/cache.py, pipeline/ocr/cache.py) are
       deleted whole: they keep vectors by their text's hash and page readings by the page's
       pixels, not by document, and cost only time to fill again;
    6. the registry: a contentless tombstone (id, when, why) and an erasure log entry.

Every step is idempotent: a crashed erasure is finished by running it again. The document's
source file is the user's and is never touched; while it stays in the source folder, the
next refresh ingests it again as a new document.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any

from pipeline.alignment.anchor_sets import anchor_sets_using
from pipeline.batch.recovery import refuse_while_a_batch_runs
from pipeline.config import Settings
from pipeline.publish import qa
from pipeline.retrieval.fusion import key_doc_id
from pipeline.stores import tracking, vector_store
from pipeline.stores.document_registry import DocumentRegistry, DocumentRow
from pipeline.stores.write_lock import live_writes
from pipeline.workspace import Workspace, document_files

log = logging.getLogger(__name__)
progress = logging.getLogger("pipeline.progress")


def resolve(registry: DocumentRegistry, target: str) -> DocumentRow:
    """The document a request names: a doc_id, or any path it is (or was last) known by."""
    row = registry.get(target)
    if row is None:
        path = str(Path(target).expanduser().resolve())
        row = registry.find_by_path(path) or next((d for d in registry.documents() if d.source_path == path), None)
    if row is None:
        raise ValueError(f"{target!r} is neither a known document id nor a known document path "
                         "(see `rosetta status`)")
    return row


def _scrub(value: Any, doc_id: str) -> tuple[Any, int]:
    """``value`` without anything that belongs to the document: objects carrying its doc_id
    (also as properties.doc_id), keys that are its id or its chunk ids, list items equal to
    its id or its document key (``fusion.document_key``, doc_id@sha256 prefix). Returns the
    scrubbed value and how many things were removed."""
    removed = 0

    def mine(item: Any) -> bool:
        if isinstance(item, str):  # its id, or its key in another chunk's paired_documents
            return item == doc_id or key_doc_id(item) == doc_id
        if isinstance(item, dict):
            return item.get("doc_id") == doc_id or (isinstance(item.get("properties"), dict)
                                                    and item["properties"].get("doc_id") == doc_id)
        return False

    def walk(node: Any) -> Any:
        nonlocal removed
        if isinstance(node, list):
            kept = [walk(item) for item in node if not mine(item)]
            removed += len(node) - len(kept)
            return kept
        if isinstance(node, dict):
            out = {}
            for key, item in node.items():
                if key == doc_id or key.startswith(f"{doc_id}:"):
                    removed += 1
                else:
                    out[key] = walk(item)
            return out
        return node

    return walk(value), removed


def erase_from_workspaces(settings: Settings, doc_id: str) -> dict[str, Any]:
    """Delete the document's files in every batch and rewrite the batch files naming it."""
    deleted, rewritten, touched = 0, 0, []
    batches = settings.data_root / "batches"
    names = {Path(name).name for name in document_files(doc_id)}
    for root in sorted(p for p in batches.iterdir() if p.is_dir()) if batches.exists() else []:
        for path in root.glob("*/*"):
            # its stage outputs, and the temp files of an interrupted atomic write
            if path.is_file() and (path.name in names or path.name.startswith(f".{doc_id}.")):
                path.unlink()
                deleted += 1
        ws = None
        for path in sorted(root.glob("*.json")):
            text = path.read_text(encoding="utf-8")
            if doc_id not in text:
                continue
            ws = ws or Workspace(settings, _batch_id(root))
            data, removed = _scrub(ws.read_json(path), doc_id)
            if path.name == "qa_report.json":
                qa.write_report(ws, {**data, "erased_samples": data.get("erased_samples", 0) + removed})
            else:
                ws.write_json(path, data)
            rewritten += 1
            touched.append(ws.batch_id)
    return {"files_deleted": deleted, "batch_files_rewritten": rewritten, "batches": sorted(set(touched))}


def _batch_id(root: Path) -> str:
    """The batch id a workspace folder belongs to (its manifest says; the folder name is a safe form)."""
    manifest = root / "manifest.json"
    if manifest.exists():
        return json.loads(manifest.read_text(encoding="utf-8"))["batch_id"]
    return root.name


def erase_from_weaviate(settings: Settings, doc_id: str) -> dict[str, Any]:
    """Delete the document's objects from the live and every staging collection, then rewrite
    those collections so no segment keeps their bytes (nor its key, with its source's sha256
    prefix, in the chunks of the documents it was paired with)."""
    counts: dict[str, int] = {}
    started = time.monotonic()
    with live_writes(settings, f"erasure of {doc_id}"), vector_store.connect(settings) as client:
        names = [n for n in [settings.weaviate.collection] if client.collections.exists(n)]
        names += vector_store.staging_collections(client, settings)
        for name in names:
            counts[name] = vector_store.delete_document(vector_store.collection(client, settings, name), doc_id)
        deleted_at = time.monotonic()
        kept = {name: rewrite_collection(client, settings, name,
                                         settings.data_root / "erasure" / f"rewrite-{name}.json", doc_id)
                for name in names}
    return {"objects_deleted": counts, "objects_kept": kept, "delete_s": round(deleted_at - started, 2),
            "rewrite_s": round(time.monotonic() - deleted_at, 2)}


def erase_from_logs(settings: Settings, row: DocumentRow, paths: list[str]) -> int:
    """Drop the lines of the run logs (``settings.run_logs_path``) that name the document."""
    needles = [n for n in (row.doc_id, row.source_path, *paths) if n]
    dropped = 0
    for path in sorted(settings.run_logs_path.glob("*")) if settings.run_logs_path.exists() else []:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        kept = [line for line in lines if not any(n in line for n in needles)]
        if len(kept) != len(lines):
            path.write_text("".join(kept), encoding="utf-8")
            dropped += len(lines) - len(kept)
    return dropped


def forget(settings: Settings, target: str, reason: str) -> dict[str, Any]:
    """Erase one document everywhere (see the module docstring); returns the erasure report,
    which is also the erasure log entry (ids and counts, never content)."""
    if not reason.strip():
        raise ValueError("an erasure needs a reason (--reason)")
    registry = DocumentRegistry(settings.document_registry_path)
    row = resolve(registry, target)
    refuse_while_a_batch_runs(settings, f"forgetting {row.doc_id}")
    paths = registry.paths(row.doc_id)
    progress.info("forgetting %s (%s)", row.doc_id, reason)
    weaviate = erase_from_weaviate(settings, row.doc_id)
    progress.info("  Weaviate: %d object(s) deleted, %d collection(s) rewritten in %.1f s",
                  sum(weaviate["objects_deleted"].values()), len(weaviate["objects_kept"]), weaviate["rewrite_s"])
    workspaces = erase_from_workspaces(settings, row.doc_id)
    progress.info("  workspaces: %d file(s) deleted, %d batch file(s) rewritten", workspaces["files_deleted"],
                  workspaces["batch_files_rewritten"])
    runs = tracking.relog_batch_artifacts(settings, workspaces["batches"])
    log_lines = erase_from_logs(settings, row, paths)
    cached = {}
    for name, (folder, _) in settings.caches.items():
        cached[name] = sum(1 for f in folder.rglob("*") if f.is_file())
        shutil.rmtree(folder, ignore_errors=True)
        progress.info("  %s: %d file(s) deleted", name, cached[name])
    anchors = anchor_sets_using(settings, row.doc_id)
    still_there = [p for p in {row.source_path, *paths} if p and Path(p).exists()]
    report = {"doc_id": row.doc_id, "weaviate": weaviate, "workspaces": {**workspaces, "batches": len(workspaces["batches"])},
              "mlflow_runs_rewritten": runs, "log_lines_dropped": log_lines, "cache_files_deleted": cached,
              "anchor_sets_affected": anchors["affected"], "anchors": anchors["verdict"],
              "source_file_still_present": bool(still_there)}
    registry.forget(row.doc_id, reason, report)
    if still_there:
        log.warning("%s is forgotten, but its source file is still in place: the next refresh ingests it again "
                    "as a new document; remove the file to keep it out", row.doc_id)
    progress.info("  forgotten: registry row reduced to a tombstone; %s", anchors["verdict"])
    return report


def rewrite_collection(client, settings: Settings, name: str, journal: Path, doc_id: str) -> int:
    """Copy a collection's objects (uuids, properties, vectors) into a fresh collection, drop the
    old one, and copy them back under the old name; returns the objects kept. The copies leave
    the erased document's key out of every ``paired_documents``.

    Weaviate keeps a deleted object's bytes in older LSM segments and the write-ahead log until
    compaction; dropping the collection removes its files, so afterwards no bytes of deleted
    objects remain. ``journal`` records that the copy is complete, so a crash at any point is
    finished by a retry (a copy without a journal entry is incomplete and made again).
    """
    copy = f"{name}Rewrite"
    state = json.loads(journal.read_text()) if journal.exists() else {}
    if state.get("copied") == copy and not client.collections.exists(copy):
        journal.unlink()  # the previous attempt finished all but this
        return client.collections.get(name).aggregate.over_all(total_count=True).total_count
    if state.get("copied") != copy:
        if client.collections.exists(copy):
            client.collections.delete(copy)
        objects = [(u, _without_key(p, doc_id), v)
                   for u, p, v in vector_store.iterate_objects(client.collections.get(name))]
        vector_store.insert_objects(vector_store.ensure_collection(client, settings, copy), objects, settings)
        journal.parent.mkdir(parents=True, exist_ok=True)
        journal.write_text(json.dumps({"collection": name, "copied": copy, "objects": len(objects)}))
    kept = list(vector_store.iterate_objects(client.collections.get(copy)))
    if client.collections.exists(name):
        client.collections.delete(name)
    vector_store.insert_objects(vector_store.ensure_collection(client, settings, name), kept, settings)
    client.collections.delete(copy)
    journal.unlink()
    return len(kept)


def _without_key(properties: dict[str, Any], doc_id: str) -> dict[str, Any]:
    paired = properties.get("paired_documents")
    if not paired:
        return properties
    return {**properties, "paired_documents": [k for k in paired if key_doc_id(k) != doc_id]}
