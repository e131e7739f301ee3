"""What a batch processes: the manifest.

``discover`` compares each source file's sha256 with the document registry so that a corpus
refresh only processes what changed, and records the documents that moved or vanished
(pipeline.batch.sync); ``reprocess_manifest`` makes a one-document batch. Writing the
manifest opens the batch in the registry.

Paths arrive here from DAG params, which whoever may trigger a DAG chooses: each is confined
to the source roots (``source_dir`` and ``allowed_source_roots``) after symlinks and ``..``
are resolved. The CLI's operator names paths freely: ``rosetta ingest``/``reprocess`` add them
to the roots of the run they start (pipeline/cli/dag_runs.py).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Iterable

from pipeline.batch.isolation import rss_mib
from pipeline.batch.recovery import recover, run_owner
from pipeline.batch.sync import (
    FoundFile,
    MassDeletion,
    check_deletions,
    fresh_doc_id,
    plan_refresh,
)
from pipeline.config import Settings
from pipeline.contracts import (
    BatchManifest,
    DeletedDocument,
    PathChange,
    SourceDocument,
    StageTiming,
)
from pipeline.stores.document_registry import GONE, DocumentRegistry, FileHash
from pipeline.workspace import Workspace, doc_id_for, sha256_file

log = logging.getLogger(__name__)
# A file modified this close before it was read may change again within its file system's
# timestamp granularity (2 s on FAT and some shares) without its modification time moving:
# it is read again next time rather than trusted.
UNSEEN_CHANGE_NS = 2_000_000_000


class PathNotAllowed(ValueError):
    """A path outside the source roots; the message names the path and the rule."""


def source_roots(settings: Settings) -> list[Path]:
    return [Path(root).expanduser().resolve() for root in (settings.source_dir, *settings.allowed_source_roots)]


def confined(path: str | Path, settings: Settings) -> Path:
    """``path`` with symlinks and ``..`` resolved, if that lies under a source root."""
    resolved = Path(path).expanduser().resolve()
    roots = source_roots(settings)
    if not any(resolved.is_relative_to(root) for root in roots):
        raise PathNotAllowed(f"{path}: refused: it resolves to {resolved}, outside the source roots "
                             f"({', '.join(map(str, roots))}); only files under source_dir or "
                             "allowed_source_roots may be ingested")
    return resolved


def list_sources(settings: Settings, paths: Iterable[str | Path] | None = None) -> list[Path]:
    """Files to consider: the given paths (files or folders), else the source folder; only
    what lies under the source roots (a symlink pointing out of them is skipped, with why)."""
    roots = [confined(p, settings) for p in paths] if paths else [settings.source_dir.expanduser().resolve()]
    found: set[Path] = set()
    for root in roots:
        if root.is_file():
            found.add(root)
        elif root.is_dir():
            for pattern in settings.source_globs:
                for path in root.glob(pattern):
                    if path.is_file() and not path.name.startswith("."):
                        try:
                            found.add(confined(path, settings))
                        except PathNotAllowed as refused:
                            log.warning("skipped %s", refused)
        else:
            raise FileNotFoundError(f"{root} does not exist")
    return sorted(found)


def found_file(path: Path) -> FoundFile | None:
    """A listed file with its content's hash; None when it went between listing and reading
    (a deletion the plan records as such). A file that is there but cannot be read (its
    permissions, an I/O error) is found with no hash (""): the extract stage quarantines it as
    ``unreadable``, naming the reason, the rest of the batch goes on, and the next refresh
    tries it again; it is no deletion, so a document loaded before keeps its chunks."""
    try:
        return FoundFile(str(path), sha256_file(path), path.stat().st_size)
    except FileNotFoundError:
        log.warning("%s went while the batch was being listed: not processed", path)
        return None
    except OSError as error:
        log.warning("%s cannot be read (%s): it will be quarantined as unreadable", path, error.strerror or error)
        size = path.stat().st_size if path.exists() else 0
        return FoundFile(str(path), "", size)


def found_files(paths: list[Path], registry: DocumentRegistry, roots: list[Path], rehash: bool) -> list[FoundFile]:
    """Each listed file with its hash (``found_file``). A file whose size and modification time
    are those it had when it was last read, well after it was last modified, keeps the hash it
    had: a refresh of an unchanged share reads no file again. ``rehash`` (``--force``) reads
    every file. What was read is remembered; entries of files gone from ``roots`` are dropped."""
    stored = registry.file_hashes()
    known = {} if rehash else stored
    found, hashed = [], {}
    for path in paths:
        try:
            stat = path.stat()
        except FileNotFoundError:
            log.warning("%s went while the batch was being listed: not processed", path)
            continue
        seen = known.get(str(path))
        if seen and (seen.size, seen.mtime_ns) == (stat.st_size, stat.st_mtime_ns) \
                and stat.st_mtime_ns < seen.hashed_at_ns - UNSEEN_CHANGE_NS:
            found.append(FoundFile(str(path), seen.sha256, stat.st_size))
            continue
        reading_started = time.time_ns()
        if (f := found_file(path)) is not None:
            found.append(f)
            if f.sha256:
                hashed[f.path] = FileHash(stat.st_size, stat.st_mtime_ns, f.sha256, reading_started)
    listed = {f.path for f in found}
    gone = [p for p in stored if p not in listed and any(Path(p).is_relative_to(root) for root in roots)]
    registry.remember_hashes(hashed, gone)
    return found


def source_document(path: Path, settings: Settings, doc_id: str | None = None) -> SourceDocument:
    """One document to reprocess; a file that cannot be read goes to the batch as discovery
    sends it (no hash: quarantined as unreadable by the extract stage)."""
    found = found_file(path)
    if found is None:
        raise ValueError(f"{path} went before it could be read")
    return SourceDocument(doc_id=doc_id or doc_id_for(path, settings.source_dir), source_path=found.path,
                          sha256=found.sha256, size_bytes=found.size_bytes)


def discover(settings: Settings, batch_id: str, paths: Iterable[str | Path] | None = None,
             force: bool = False, allow_mass_deletion: bool = False) -> BatchManifest:
    """Write the batch manifest: new and changed documents to process, unchanged skipped,
    moved ones (a path update) and vanished ones (a deletion) recorded for promotion.

    Stops with ``MassDeletion`` (the batch recorded as stopped, nothing changed) when more
    than sync.max_deleted_fraction of the known documents vanished, unless allowed.
    Idempotent: a retried discover task rewrites the same manifest. Batches a crash left
    behind are finished or undone first, so their documents count as not processed.
    """
    started = time.monotonic()
    recover(settings)
    roots = [confined(p, settings) for p in paths] if paths else [settings.source_dir.resolve()]
    found = found_files(list_sources(settings, paths), DocumentRegistry(settings.document_registry_path), roots, force)
    plan = plan_refresh(settings, found, roots, force)
    try:
        check_deletions(plan, settings, allow_mass_deletion)
    except MassDeletion as stop:
        registry = DocumentRegistry(settings.document_registry_path)
        registry.start_batch(batch_id, "corpus_refresh")
        registry.finish_batch(batch_id, "stopped", {"batch_id": batch_id, "status": "stopped", "reason": str(stop),
                                                    "vanished": [d.doc_id for d in plan.deleted]})
        log.error("batch %s stopped: %s", batch_id, stop)
        raise
    return write_manifest(settings, batch_id, "corpus_refresh", plan.todo, plan.skipped, plan.moved, plan.deleted,
                          plan.paths, started)


def reprocess_manifest(settings: Settings, batch_id: str, target: str) -> BatchManifest:
    """The manifest of a one-document batch; ``target`` is a doc_id or a file path (either
    way the file must lie under the source roots)."""
    recover(settings)
    registry = DocumentRegistry(settings.document_registry_path)
    known = registry.get(target)
    if known is not None and known.status in GONE:
        raise ValueError(f"document {target} was {known.status} ({known.deleted_at}: {known.delete_reason}); "
                         "ingest its file again to make a new document")
    if known is not None:
        existing = [p for p in [known.source_path, *registry.paths(known.doc_id)] if Path(p).is_file()]
        if not existing:
            raise ValueError(f"document {target}: none of its files exists any more ({known.source_path})")
        doc = source_document(confined(existing[0], settings), settings, doc_id=known.doc_id)
    elif Path(target).expanduser().is_file():
        path = confined(target, settings)
        by_path = registry.find_by_path(str(path))
        doc = source_document(path, settings, doc_id=by_path.doc_id if by_path else None)
        if by_path is None:  # new content: never the id of a forgotten document
            documents = {d.doc_id: d for d in registry.documents()}
            doc.doc_id = fresh_doc_id(doc.source_path, doc.sha256, settings, documents, set())
    else:
        raise ValueError(f"{target!r} is neither a known document id nor an existing file")
    return write_manifest(settings, batch_id, "reprocess", [doc], [])


def write_manifest(settings: Settings, batch_id: str, kind: str, todo: list[SourceDocument],
                   skipped: list[SourceDocument], moved: list[PathChange] | None = None,
                   deleted: list[DeletedDocument] | None = None,
                   paths: dict[str, list[str]] | None = None, started: float | None = None) -> BatchManifest:
    """Open the batch: its manifest in the workspace, its row and its documents in the registry.

    The documents to process get their paths now (``paths``, else the processed one); moves
    and deletions wait for promotion (lifecycle.finish_batch), so a rollback can undo them.
    ``started``: when discovery began (time.monotonic()), for the manifest's timing."""
    registry = DocumentRegistry(settings.document_registry_path)
    manifest = BatchManifest(batch_id=batch_id, kind=kind, documents=todo, skipped=skipped,  # type: ignore[arg-type]
                             moved=moved or [], deleted=deleted or [],
                             declared_pairs=registry.declarations(doc.doc_id for doc in todo))
    if started is not None:
        manifest.discovery = StageTiming(seconds=round(time.monotonic() - started, 3),
                                         peak_rss_mib=round(rss_mib(os.getpid()), 1))
    ws = Workspace(settings, batch_id)
    ws.write_model(ws.manifest_path, manifest)
    registry.start_batch(batch_id, kind, *run_owner())
    registry.open_documents(batch_id, [(doc.doc_id, doc.source_path, (paths or {}).get(doc.doc_id)) for doc in todo])
    log.info("batch %s: %d document(s) to process, %d unchanged and skipped, %d moved, %d deleted", batch_id,
             len(todo), len(skipped), len(manifest.moved), len(manifest.deleted))
    for doc in skipped:
        log.info("  skipped (unchanged): %s", doc.source_path)
    return manifest
