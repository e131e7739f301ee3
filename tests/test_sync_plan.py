"""The corpus-sync plan (pipeline.batch.sync) and the registry migration, on the real SQLite
registry without Weaviate: what a refresh decides for new, unchanged, changed, moved, copied
and vanished files, the mass-deletion valve, and the scope of explicit paths."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from pipeline.batch.sync import DUPLICATE, VANISHED, FoundFile, MassDeletion, check_deletions, plan_refresh
from pipeline.stores import secrets
from pipeline.stores.document_registry import DocumentRegistry


@pytest.fixture
def registry(settings, tmp_path):
    settings.data_root = tmp_path / "data"
    settings.source_dir = tmp_path / "source"
    return DocumentRegistry(settings.document_registry_path)


def known(registry: DocumentRegistry, doc_id: str, path: Path, sha: str) -> None:
    registry.record_document(doc_id, str(path), status="loaded", sha256=sha, chunks=3)
    registry.add_path(doc_id, str(path))


def test_a_registry_from_before_paths_is_migrated_in_place(tmp_path):
    path = tmp_path / "registry.sqlite"
    with sqlite3.connect(path) as db:  # the schema the previous release wrote
        db.executescript("""
            CREATE TABLE documents (doc_id TEXT PRIMARY KEY, source_path TEXT NOT NULL, sha256 TEXT,
                status TEXT NOT NULL, lang TEXT, lang_confidence REAL, pages INTEGER, extraction TEXT,
                chunks INTEGER, last_batch TEXT, quarantine_reason TEXT, quarantine_detail TEXT,
                updated_at TEXT NOT NULL);
            CREATE TABLE batches (batch_id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL,
                started_at TEXT NOT NULL, finished_at TEXT, summary TEXT);
            INSERT INTO documents VALUES ('en-a-1234abcd', '/src/en/a.pdf', 'aa', 'loaded', 'en', 0.99, 2, 'text_layer',
                7, 'b1', NULL, NULL, '2026-01-01T00:00:00+00:00');
        """)
    registry = DocumentRegistry(path)
    row = registry.get("en-a-1234abcd")
    assert (row.doc_id, row.chunks, row.status, row.deleted_at) == ("en-a-1234abcd", 7, "loaded", None)
    assert registry.path_owners() == {"/src/en/a.pdf": "en-a-1234abcd"}
    assert registry.find_by_path("/src/en/a.pdf").doc_id == "en-a-1234abcd"
    DocumentRegistry(path)  # opening again migrates nothing twice
    assert registry.paths("en-a-1234abcd") == ["/src/en/a.pdf"]
    assert registry.declarations() == {}  # the declarations' table is new to it


def test_a_moved_file_keeps_its_document_and_only_changes_paths(settings, registry):
    src = settings.source_dir.resolve()
    known(registry, "doc-a", src / "old" / "a.pdf", "sha-a")
    plan = plan_refresh(settings, [FoundFile(str(src / "new" / "a.pdf"), "sha-a", 10)], [src])
    assert plan.todo == [] and plan.deleted == []
    assert [(m.doc_id, m.old_paths, m.new_paths, m.new_primary) for m in plan.moved] == [
        ("doc-a", [str(src / "old" / "a.pdf")], [str(src / "new" / "a.pdf")], str(src / "new" / "a.pdf"))]


def test_the_same_content_at_two_paths_is_one_document(settings, registry):
    src = settings.source_dir.resolve()
    found = [FoundFile(str(src / "x.pdf"), "sha-x", 10), FoundFile(str(src / "y" / "x-copy.pdf"), "sha-x", 10)]
    plan = plan_refresh(settings, found, [src])
    assert len(plan.todo) == 1
    doc_id = plan.todo[0].doc_id
    assert plan.paths[doc_id] == sorted(f.path for f in found)
    assert plan.skipped == [] and plan.moved == []  # the second path is an alias, processed once


def test_changed_content_is_a_new_version_and_new_content_a_new_document(settings, registry):
    src = settings.source_dir.resolve()
    known(registry, "doc-a", src / "a.pdf", "sha-a")
    plan = plan_refresh(settings, [FoundFile(str(src / "a.pdf"), "sha-a2", 10),
                                   FoundFile(str(src / "b.pdf"), "sha-b", 10)], [src])
    ids = {d.source_path: d.doc_id for d in plan.todo}
    assert ids[str(src / "a.pdf")] == "doc-a"
    assert ids[str(src / "b.pdf")] not in ("doc-a", "")
    assert plan.moved == [] and plan.deleted == []


def test_vanished_files_are_deleted_behind_the_valve(settings, registry):
    src = settings.source_dir.resolve()
    for name in "abcde":
        known(registry, f"doc-{name}", src / f"{name}.pdf", f"sha-{name}")
    kept = [FoundFile(str(src / f"{name}.pdf"), f"sha-{name}", 10) for name in "abcd"]
    plan = plan_refresh(settings, kept, [src])
    assert [(d.doc_id, d.reason, d.status) for d in plan.deleted] == [("doc-e", VANISHED, "loaded")]
    check_deletions(plan, settings, allow_mass_deletion=False)  # 1 of 5 = 20 %: at the limit, allowed
    plan = plan_refresh(settings, kept[:1], [src])
    assert len(plan.deleted) == 4
    with pytest.raises(MassDeletion, match=r"4 of 5 known documents \(80%\).*max_deleted_fraction"):
        check_deletions(plan, settings, allow_mass_deletion=False)
    check_deletions(plan, settings, allow_mass_deletion=True)


def test_explicit_paths_never_delete_outside_them(settings, registry):
    src = settings.source_dir.resolve()
    known(registry, "doc-a", src / "kept" / "a.pdf", "sha-a")
    known(registry, "doc-b", src / "inbox" / "b.pdf", "sha-b")
    plan = plan_refresh(settings, [FoundFile(str(src / "inbox" / "c.pdf"), "sha-c", 10)], [src / "inbox"])
    assert [d.doc_id for d in plan.deleted] == ["doc-b"]  # inside the given folder: its file is gone
    assert [d.source_path for d in plan.todo] == [str(src / "inbox" / "c.pdf")]


def test_a_duplicate_from_before_aliases_is_merged_not_counted_as_vanished(settings, registry):
    src = settings.source_dir.resolve()
    known(registry, "doc-a", src / "a.pdf", "sha-same")
    known(registry, "doc-b", src / "b.pdf", "sha-same")  # loaded twice by the path-based ids
    plan = plan_refresh(settings, [FoundFile(str(src / "a.pdf"), "sha-same", 10),
                                   FoundFile(str(src / "b.pdf"), "sha-same", 10)], [src])
    assert [(d.doc_id, d.reason) for d in plan.deleted] == [("doc-b", f"{DUPLICATE} doc-a")]
    assert [(m.doc_id, m.new_paths) for m in plan.moved] == [("doc-a", sorted([str(src / "a.pdf"), str(src / "b.pdf")]))]
    check_deletions(plan, settings, allow_mass_deletion=False)  # 1 of 2, but a merge, not a vanished file


def test_a_forgotten_documents_id_is_never_reused(settings, registry):
    src = settings.source_dir.resolve()
    plan = plan_refresh(settings, [FoundFile(str(src / "a.pdf"), "sha-a", 10)], [src])
    first = plan.todo[0].doc_id
    known(registry, first, src / "a.pdf", "sha-a")
    registry.forget(first, "test", {})
    again = plan_refresh(settings, [FoundFile(str(src / "a.pdf"), "sha-a", 10)], [src]).todo
    assert len(again) == 1 and again[0].doc_id != first
    row = registry.get(first)
    assert (row.status, row.source_path, row.sha256, row.delete_reason) == ("forgotten", "", None, "test")


def test_declared_translations_go_into_the_batch_manifest_and_leave_with_a_forgotten_document(settings, registry):
    """What a user declared (``rosetta pairs --declare / --apart``) is kept by doc_id, so it
    holds when a document is reprocessed or moved; each batch's manifest carries what was
    declared of its documents to the load step; forgetting a document drops its declarations."""
    from pipeline.batch.discovery import source_document, write_manifest

    src = settings.source_dir.resolve()
    src.mkdir(parents=True)
    for name in ("en", "de", "zh"):
        (src / f"{name}.pdf").write_bytes(name.encode())
        known(registry, f"doc-{name}", src / f"{name}.pdf", f"sha-{name}")
    registry.declare(["doc-en", "doc-zh"], True)
    registry.declare(["doc-en", "doc-de"], False)
    registry.declare(["doc-de", "doc-zh"], True)
    registry.declare(["doc-zh", "doc-de"], None)  # undeclared again, in either order
    manifest = write_manifest(settings, "batch-1", "reprocess", [source_document(src / "en.pdf", settings, "doc-en")], [])
    assert manifest.declared_pairs == {"doc-en": {"doc-zh": True, "doc-de": False}}
    registry.forget("doc-zh", "asked", {})
    assert registry.declarations() == {"doc-en": {"doc-de": False}, "doc-de": {"doc-en": False}}


def test_a_pdf_quarantined_for_its_password_is_tried_again_once_the_passwords_change(settings, registry, tmp_path,
                                                                                     monkeypatch):
    monkeypatch.setattr(settings, "secrets_dir", tmp_path / "secrets")
    src = settings.source_dir.resolve()
    for doc_id, reason in (("locked", "encrypted_pdf"), ("broken", "corrupt_pdf")):
        registry.record_document(doc_id, str(src / f"{doc_id}.pdf"), status="quarantined", sha256=f"sha-{doc_id}",
                                 quarantine_reason=reason)
        registry.add_path(doc_id, str(src / f"{doc_id}.pdf"))
    found = [FoundFile(str(src / f"{d}.pdf"), f"sha-{d}", 10) for d in ("locked", "broken")]

    def retried() -> list[str]:
        plan = plan_refresh(settings, found, [src])
        assert len(plan.todo) + len(plan.skipped) == 2
        return [d.doc_id for d in plan.todo]

    assert retried() == []  # no passwords file
    passwords = secrets.pdf_passwords_file(settings)
    passwords.parent.mkdir()
    passwords.write_text("rosetta\n")
    an_hour_ago = time.time() - 3600
    os.utime(passwords, (an_hour_ago, an_hour_ago))
    assert retried() == []  # the passwords were there when it was quarantined
    os.utime(passwords)
    assert retried() == ["locked"]  # a corrupt file stays skipped
