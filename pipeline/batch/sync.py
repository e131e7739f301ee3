"""Corpus sync: what a refresh does with each file it finds and each known path it no longer
finds (docs/architecture.md, "The document lifecycle").

A document's identity is its content: a file whose sha256 is already live belongs to that
document whatever its path (moved, renamed, or a second copy: one document, several paths),
and costs nothing but a path update. A known path whose content changed is a new version of
its document (same doc_id). New content gets a new doc_id, derived from its first path.
A live document none of whose paths holds it any more is deleted, unless too many vanish at
once (``sync.max_deleted_fraction``): an unmounted share looks exactly like mass deletion.

Only paths inside the scanned roots can vanish: ingesting explicit paths never deletes
anything outside them. An unchanged file is skipped, except a PDF quarantined for its password
before the PDF passwords file last changed: the next try may open it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pipeline.config import Settings
from pipeline.contracts import DeletedDocument, PathChange, SourceDocument
from pipeline.stores import secrets
from pipeline.stores.document_registry import GONE, DocumentRegistry, DocumentRow
from pipeline.workspace import doc_id_for

PROCESSED = ("loaded", "quarantined")  # statuses whose sha256 is the content Rosetta holds
VANISHED = "source file gone"
DUPLICATE = "same content as"


class MassDeletion(RuntimeError):
    """More known documents vanished than sync.max_deleted_fraction allows: the refresh stops."""


@dataclass
class FoundFile:
    path: str
    sha256: str  # "": the file is there but could not be read (discovery.found_file)
    size_bytes: int


@dataclass
class SyncPlan:
    todo: list[SourceDocument] = field(default_factory=list)
    skipped: list[SourceDocument] = field(default_factory=list)
    moved: list[PathChange] = field(default_factory=list)
    deleted: list[DeletedDocument] = field(default_factory=list)
    paths: dict[str, list[str]] = field(default_factory=dict)  # doc_id -> its paths after the refresh (todo docs)
    known: int = 0  # live documents before the refresh


def in_scope(path: str, roots: list[Path]) -> bool:
    candidate = Path(path)
    return any(candidate.is_relative_to(root) for root in roots)  # a file root: only itself


def fresh_doc_id(path: str, sha256: str, settings: Settings, documents: dict[str, DocumentRow],
                 taken: set[str]) -> str:
    """The id of new content: from its path as before (existing ids, hence chunk uuids, stay);
    where a live or forgotten document holds that id already, the content's hash is appended,
    so a forgotten document's id is never reused."""
    base = doc_id_for(Path(path), settings.source_dir)
    reusable = base not in documents or documents[base].status == "deleted"
    return base if reusable and base not in taken else f"{base}-{sha256[:12]}"


def passwords_changed_at(settings: Settings) -> datetime | None:
    """When the PDF passwords file last changed (None: there is none)."""
    path = secrets.pdf_passwords_file(settings)
    return datetime.fromtimestamp(int(path.stat().st_mtime), timezone.utc) if path.exists() else None


def waits_for_a_password(row: DocumentRow | None, passwords_at: datetime | None) -> bool:
    """A PDF quarantined for its password before the passwords file last changed: its bytes
    are unchanged, but the next try may open it."""
    return (row is not None and passwords_at is not None and row.status == "quarantined"
            and row.quarantine_reason == "encrypted_pdf" and passwords_at >= datetime.fromisoformat(row.updated_at))


def plan_refresh(settings: Settings, found: list[FoundFile], roots: list[Path], force: bool = False) -> SyncPlan:
    """Decide, for every file found and every known path in scope, what the refresh does."""
    registry = DocumentRegistry(settings.document_registry_path)
    documents = {d.doc_id: d for d in registry.documents()}
    live = {doc_id: d for doc_id, d in documents.items() if d.status not in GONE}
    owners = {path: doc_id for path, doc_id in registry.path_owners().items() if doc_id in live}
    before: dict[str, set[str]] = {doc_id: set() for doc_id in live}
    for path, doc_id in owners.items():
        before[doc_id].add(path)
    after = {doc_id: set(paths) for doc_id, paths in before.items()}
    holder: dict[str, str] = {}  # content -> the document holding it (the first id, if loaded twice before)
    for doc_id, d in sorted(live.items()):
        if d.sha256 and d.status in PROCESSED:
            holder.setdefault(d.sha256, doc_id)
    content = {f.path: f.sha256 for f in found}
    passwords_at = passwords_changed_at(settings)
    plan = SyncPlan(known=len(live))
    todo: dict[str, SourceDocument] = {}

    def assign(path: str, doc_id: str) -> None:
        if path in owners and owners[path] != doc_id:
            after[owners[path]].discard(path)
        after.setdefault(doc_id, set()).add(path)

    for f in sorted(found, key=lambda f: f.path):
        source = SourceDocument(doc_id="", source_path=f.path, sha256=f.sha256, size_bytes=f.size_bytes)
        owner = owners.get(f.path)
        if f.sha256 and f.sha256 in holder:  # content Rosetta holds (or takes in this batch): unchanged or moved
            doc_id = holder[f.sha256]
            assign(f.path, doc_id)
            if doc_id in todo:
                continue
            if force or waits_for_a_password(live.get(doc_id), passwords_at):
                todo[doc_id] = source.model_copy(update={"doc_id": doc_id})
            else:
                plan.skipped.append(source.model_copy(update={"doc_id": doc_id}))
            continue
        owner_kept_elsewhere = owner is not None and bool(live[owner].sha256) and any(
            content.get(p) == live[owner].sha256 for p in before[owner] if p != f.path)
        if owner is not None and owner not in todo and not owner_kept_elsewhere:
            doc_id = owner  # a new version of a known document
        else:
            doc_id = fresh_doc_id(f.path, f.sha256, settings, documents, set(todo))
        todo[doc_id] = source.model_copy(update={"doc_id": doc_id})
        if f.sha256:  # a file that could not be read ("") holds no content another path could share
            holder[f.sha256] = doc_id
        assign(f.path, doc_id)

    gained = {doc_id for doc_id in after if after[doc_id] - before.get(doc_id, set())}
    for doc_id, paths in after.items():
        for path in sorted(paths):
            # a path in scope that was not found is gone; one outside stays unless the document moved
            if path not in content and (in_scope(path, roots) or (doc_id in gained and not Path(path).exists())):
                paths.discard(path)
    for doc_id in sorted(live):
        old, new, row = before[doc_id], after[doc_id], live[doc_id]
        if doc_id in todo:
            plan.paths[doc_id] = sorted(new)
        elif not new and old:
            # every path now holds another document's content: a duplicate (from before paths were
            # aliases) merged into that document, not a vanished file
            merged_into = sorted({holder[content[p]] for p in old if p in content})
            reason = f"{DUPLICATE} {', '.join(merged_into)}" if all(p in content for p in old) else VANISHED
            plan.deleted.append(DeletedDocument(doc_id=doc_id, sha256=row.sha256, paths=sorted(old),
                                                status=row.status, reason=reason))
        elif new != old:
            primary = row.source_path if row.source_path in new else min(new)
            plan.moved.append(PathChange(doc_id=doc_id, old_paths=sorted(old), new_paths=sorted(new),
                                         old_primary=row.source_path, new_primary=primary))
    for doc_id in todo:
        plan.paths.setdefault(doc_id, sorted(after[doc_id]))
    plan.todo = list(todo.values())
    return plan


def check_deletions(plan: SyncPlan, settings: Settings, allow_mass_deletion: bool) -> None:
    """The safety valve: refuse to delete more than sync.max_deleted_fraction of the known documents."""
    limit = settings.sync.max_deleted_fraction
    vanished = [d for d in plan.deleted if d.reason == VANISHED]
    if allow_mass_deletion or not vanished or not plan.known:
        return
    fraction = len(vanished) / plan.known
    if fraction > limit:
        raise MassDeletion(
            f"{len(vanished)} of {plan.known} known documents ({fraction:.0%}) vanished from the source, more "
            f"than sync.max_deleted_fraction ({limit:.0%}): is the source folder mounted? Nothing was deleted; "
            "if the files really are gone, run again with allow_mass_deletion (rosetta ingest --allow-mass-deletion)")
