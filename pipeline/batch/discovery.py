"""What a batch processes: the manifest.

``discover`` compares each source file's sha256 with the document registry so that a corpus
refresh only processes what changed; ``reprocess_manifest`` makes a one-document batch.
Writing the manifest opens the batch in the registry.

Paths arrive here from DAG params, which whoever may trigger a DAG chooses: each is confined
to the source roots (``source_dir`` and ``allowed_source_roots``) after symlinks and ``..``
are resolved. The CLI's operator names paths freely: ``rosetta ingest``/``reprocess`` add them
to the roots of the run they start (pipeline/cli/dag_runs.py).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable

from pipeline.batch.recovery import recover, run_owner
from pipeline.config import Settings
from pipeline.contracts import BatchManifest, SourceDocument
from pipeline.stores.document_registry import DocumentRegistry
from pipeline.workspace import Workspace, doc_id_for, sha256_file

log = logging.getLogger(__name__)


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

    Idempotent: a retried discover task rewrites the same manifest. Batches a crash left
    behind are finished or undone first, so their documents count as not processed.
    """
    recover(settings)
    registry = DocumentRegistry(settings.document_registry_path)
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
    """The manifest of a one-document batch; ``target`` is a doc_id or a file path (either
    way the file must lie under the source roots)."""
    recover(settings)
    registry = DocumentRegistry(settings.document_registry_path)
    known = registry.get(target)
    if known is not None:
        doc = source_document(confined(known.source_path, settings), settings, doc_id=known.doc_id)
    elif Path(target).expanduser().is_file():
        path = confined(target, settings)
        by_path = registry.find_by_path(str(path))
        doc = source_document(path, settings, doc_id=by_path.doc_id if by_path else None)
    else:
        raise ValueError(f"{target!r} is neither a known document id nor an existing file")
    return write_manifest(settings, batch_id, "reprocess", [doc], [])


def write_manifest(settings: Settings, batch_id: str, kind: str, todo: list[SourceDocument],
                   skipped: list[SourceDocument]) -> BatchManifest:
    """Open the batch: its manifest in the workspace, its row and its documents in the registry."""
    manifest = BatchManifest(batch_id=batch_id, kind=kind, documents=todo, skipped=skipped)  # type: ignore[arg-type]
    ws = Workspace(settings, batch_id)
    ws.write_model(ws.manifest_path, manifest)
    registry = DocumentRegistry(settings.document_registry_path)
    registry.start_batch(batch_id, kind, *run_owner())
    for doc in todo:
        registry.record_document(doc.doc_id, doc.source_path, last_batch=batch_id)
    log.info("batch %s: %d document(s) to process, %d unchanged and skipped", batch_id, len(todo), len(skipped))
    for doc in skipped:
        log.info("  skipped (unchanged): %s", doc.source_path)
    return manifest
