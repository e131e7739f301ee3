"""Workspace retention: which files of old batches may go, and deleting them.

Every batch keeps each stage's file for every document it read (``<data_root>/batches/<id>/``,
about 37 KB a page): a scheduled refresh adds its pages every run and nothing else frees
them. A batch stays whole while it is in its *review window*: it finished less than
``retention.keep_days`` ago, or it is one of the newest ``retention.keep_batches`` batches
that loaded or rolled back (``rosetta qa reject`` can roll it back then). Past both, its
per-document files go, except those of documents that still need them:

- a document whose live chunks this batch loaded: re-alignment (``rosetta anchors promote``)
  applies a new map to the raw vectors its batch kept, and the QA view crops its source by
  the blocks its extraction found;
- a document that a batch still in its window re-processed or deleted: rolling that batch
  back would make an older version of it live again (only its manifest is read, so every
  expired batch keeps that document's files until the window closes).

The run logs (``settings.run_logs_path``: each `rosetta ingest` and `reprocess` run's Airflow
task log, which names every document it read) follow the same window: a log goes when it is
older than ``keep_days`` and not among the newest ``keep_batches``.

The batch files stay (manifest, summary, QA report, review and audit, promotion journal: the
audit trail, a few KB) except ``replaced_chunks.json``, the copy of what the batch replaced
(vectors included): past its window a batch can no longer be rolled back. ``pruned.json``
records what went and when. Running and stale batches are never touched, and the live
collection's write lock is held while the live chunks are read and the files deleted, so no
promotion or rollback changes which chunks are live in between.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pipeline.config import Settings
from pipeline.stages import DOCUMENT_STAGES
from pipeline.stores import vector_store
from pipeline.stores.document_registry import BatchRow, DocumentRegistry
from pipeline.stores.write_lock import WAIT_S, live_writes
from pipeline.workspace import QUARANTINE, Workspace, document_files

log = logging.getLogger(__name__)
progress = logging.getLogger("pipeline.progress")

FINISHED = ("promoted", "rolled_back", "empty", "nothing_to_do", "interrupted")
REVIEWABLE = ("promoted", "rolled_back")  # the batches keep_batches counts
DOCUMENT_FOLDERS = tuple(s.name for s in DOCUMENT_STAGES) + (QUARANTINE,)
REPLACED_CHUNKS = "replaced_chunks.json"
PRUNED = "pruned.json"


@dataclass
class BatchPrune:
    """What pruning does (or did) to one expired batch."""
    batch_id: str
    finished_at: str | None
    documents_removed: list[str] = field(default_factory=list)  # their files go
    documents_kept: dict[str, str] = field(default_factory=dict)  # doc_id -> why its files stay
    files: int = 0
    bytes: int = 0
    replaced_chunks: bool = False  # replaced_chunks.json goes (the batch can no longer be rolled back)


def _finished_at(row: BatchRow) -> datetime | None:
    return datetime.fromisoformat(row.finished_at) if row.finished_at else None


def in_window(settings: Settings, rows: list[BatchRow], now: datetime | None = None) -> tuple[list[BatchRow], list[BatchRow]]:
    """(batches in their review window or still running, finished batches past it)."""
    now = now or datetime.now(timezone.utc)
    oldest_kept = now - timedelta(days=settings.retention.keep_days)
    reviewable = [r for r in rows if r.status in REVIEWABLE]
    by_age = sorted(reviewable, key=lambda r: (r.started_at, r.batch_id))
    newest = {r.batch_id for r in by_age[max(0, len(by_age) - settings.retention.keep_batches):]}
    kept, expired = [], []
    for row in rows:
        finished = _finished_at(row)
        if row.status not in FINISHED or finished is None or finished > oldest_kept or row.batch_id in newest:
            kept.append(row)
        else:
            expired.append(row)
    return kept, expired


def pruned_record(ws: Workspace) -> dict[str, Any] | None:
    """The batch's pruned.json (when, which documents' files went or stayed), or None."""
    path = ws.batch_file(PRUNED)
    return ws.read_json(path) if path.exists() else None


def refuse_rollback_if_pruned(ws: Workspace) -> None:
    """Raise ValueError when the batch was pruned: what it replaced is no longer kept."""
    if record := pruned_record(ws):
        raise ValueError(f"batch {ws.batch_id} is past its review window (retention.keep_days, keep_batches) and "
                         f"was pruned at {record['at']}: the chunks it replaced are no longer kept, so it "
                         "cannot be rolled back; reprocess its documents (`rosetta reprocess`) to change them")


def _document_files(ws: Workspace) -> dict[str, list[Path]]:
    """The batch's per-document files by doc_id (the stage table's names); files of no
    document (an interrupted write's temp file) under the key ''."""
    names = {name: doc.doc_id for doc in (ws.read_manifest().documents if ws.manifest_path.exists() else [])
             for name in document_files(doc.doc_id)}
    found: dict[str, list[Path]] = {}
    for folder in DOCUMENT_FOLDERS:
        for path in sorted((ws.root / folder).glob("*")) if (ws.root / folder).is_dir() else []:
            if path.is_file():
                found.setdefault(names.get(f"{folder}/{path.name}", ""), []).append(path)
    return found


def _touched_by(ws: Workspace) -> set[str]:
    """Documents a batch re-processed or deleted (what its rollback would bring back)."""
    if not ws.manifest_path.exists():
        return set()
    manifest = ws.read_manifest()
    return {d.doc_id for d in manifest.documents} | {d.doc_id for d in manifest.deleted}


def plan(settings: Settings, now: datetime | None = None) -> list[tuple[BatchPrune, list[Path]]]:
    """What pruning would remove now: per expired batch with something left to remove, its
    summary and the files that go. Reads the live collection only when some expired batch
    still holds files."""
    registry = DocumentRegistry(settings.document_registry_path)
    kept, expired = in_window(settings, registry.batches(), now)
    candidates = []
    for row in expired:
        ws = Workspace(settings, row.batch_id)
        replaced = ws.batch_file(REPLACED_CHUNKS)
        if not any((ws.root / f).is_dir() for f in DOCUMENT_FOLDERS) and not replaced.exists():
            continue  # nothing left (pruning removes the folders it empties): no manifest read
        files = _document_files(ws)
        if files or replaced.exists():
            candidates.append((row, replaced, files))
    if not candidates:
        return []
    live: dict[str, set[str]] = {}  # batch_id -> documents whose live chunks it loaded
    for _, props in vector_store.live_chunks(settings, ["doc_id", "batch_id"]):
        live.setdefault(props["batch_id"], set()).add(props["doc_id"])
    reviewable = {doc for row in kept if row.status == "promoted"
                  for doc in _touched_by(Workspace(settings, row.batch_id))}
    plans = []
    for row, replaced, files in candidates:
        prune, removable = BatchPrune(row.batch_id, row.finished_at, replaced_chunks=replaced.exists()), []
        for doc_id, paths in sorted(files.items()):
            if doc_id in live.get(row.batch_id, ()):
                prune.documents_kept[doc_id] = "its chunks from this batch are live"
                continue
            if doc_id in reviewable:
                prune.documents_kept[doc_id] = "a batch in its review window re-processed or deleted it"
                continue
            if doc_id:
                prune.documents_removed.append(doc_id)
            removable += paths
        prune.files = len(removable)
        prune.bytes = sum(p.stat().st_size for p in removable) + (replaced.stat().st_size if prune.replaced_chunks else 0)
        if prune.files or prune.replaced_chunks:
            plans.append((prune, removable))
    return plans


def expired_logs(settings: Settings, now: datetime | None = None) -> list[tuple[Path, int]]:
    """The run logs past the review window, with their sizes: older than ``keep_days`` and not
    among the newest ``keep_batches``; never the newest, which a run may be writing now."""
    folder = settings.run_logs_path
    if not folder.is_dir():
        return []
    logs = sorted(((path, path.stat()) for path in folder.glob("*.log")), key=lambda log: log[1].st_mtime,
                  reverse=True)
    cutoff = ((now or datetime.now(timezone.utc)) - timedelta(days=settings.retention.keep_days)).timestamp()
    return [(path, stat.st_size) for path, stat in logs[max(1, settings.retention.keep_batches):]
            if stat.st_mtime < cutoff]


def prune(settings: Settings, dry_run: bool = False, wait_s: float = WAIT_S) -> dict[str, Any]:
    """Delete what ``plan`` finds, batch by batch (idempotent: a crash halfway is finished by
    the next run), and the expired run logs. Returns {"batches": [BatchPrune as dict], "files",
    "bytes", "logs": {"files", "bytes"}, "dry_run"}."""
    with live_writes(settings, "workspace pruning", wait_s=wait_s):
        planned = plan(settings)
        if not dry_run:
            for batch_prune, removable in planned:
                _apply(settings, batch_prune, removable)
    logs = expired_logs(settings)
    if not dry_run:
        for path, _ in logs:
            path.unlink(missing_ok=True)
    plans = [batch_prune for batch_prune, _ in planned]
    report = {"dry_run": dry_run, "batches": [asdict(p) for p in plans],
              "files": sum(p.files for p in plans), "bytes": sum(p.bytes for p in plans),
              "logs": {"files": len(logs), "bytes": sum(size for _, size in logs)}}
    verb = "would remove" if dry_run else "removed"
    if plans:
        progress.info("workspace retention: %s %d file(s), %.1f MB, of %d batch(es) past their review window",
                      verb, report["files"], report["bytes"] / 1e6, len(plans))
    if logs:
        progress.info("workspace retention: %s %d run log(s), %.1f MB, past their review window", verb, len(logs),
                      report["logs"]["bytes"] / 1e6)
    return report


def _apply(settings: Settings, batch_prune: BatchPrune, removable: list[Path]) -> None:
    ws = Workspace(settings, batch_prune.batch_id)
    for path in removable:
        path.unlink(missing_ok=True)
    for folder in DOCUMENT_FOLDERS:
        if (ws.root / folder).is_dir() and not any((ws.root / folder).iterdir()):
            (ws.root / folder).rmdir()
    # The record first: a crash between the two leaves a batch that says it cannot be rolled
    # back while its copy is still there, never one that would try without the copy.
    previous = pruned_record(ws) or {}
    removed = sorted({*previous.get("documents_removed", []), *batch_prune.documents_removed})
    ws.write_json(ws.batch_file(PRUNED), {"at": previous.get("at") or _now(), "last_at": _now(),
                                          "documents_removed": removed, "documents_kept": batch_prune.documents_kept})
    ws.batch_file(REPLACED_CHUNKS).unlink(missing_ok=True)
    progress.info("batch %s (finished %s): %d document(s)' files removed, %d kept, %.1f MB", batch_prune.batch_id,
                  batch_prune.finished_at, len(batch_prune.documents_removed), len(batch_prune.documents_kept), batch_prune.bytes / 1e6)


def prune_after_batch(settings: Settings) -> dict[str, Any] | None:
    """The retention a batch's finish applies: never waits for the live collection's lock
    and never fails the batch (the next batch, or ``rosetta prune``, tries again)."""
    try:
        return prune(settings, wait_s=0)
    except Exception as exc:  # noqa: BLE001 - housekeeping; the batch's outcome is already recorded
        log.warning("workspace retention skipped this time: %s: %s", type(exc).__name__, exc)
        return None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
