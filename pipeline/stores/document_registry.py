"""The document registry: what Rosetta knows about every document and every batch (not to be
confused with MLflow's model registry of alignment maps, pipeline.stores.tracking).

A small SQLite file under data_root. ``documents`` holds one row per doc_id (primary source
path, sha256 of the version last processed, status, last batch, quarantine reason; for a
deleted or forgotten document when and why); ``document_paths`` every path a document is
known by (the same content at two paths is one document); ``batches`` one row per batch with
its outcome and summary; ``erasures`` the erasure log (``rosetta forget``); ``declared_pairs``
the documents a user declared translations of each other, or not (``rosetta pairs --declare``,
``--apart``), which the load step takes over the evidence. The registry is the
memory that lets a corpus refresh skip unchanged documents, follow moved ones and notice
deleted ones (docs/architecture.md, "The document lifecycle").
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import combinations
from pathlib import Path
from typing import Any, Iterable, Iterator

DocStatus = str  # "loaded" | "quarantined" | "processing" | "failed" | "deleted" | "forgotten"
GONE = ("deleted", "forgotten")  # tombstones: no chunks, no paths

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    source_path TEXT NOT NULL,
    sha256 TEXT,
    status TEXT NOT NULL,
    lang TEXT,
    lang_confidence REAL,
    pages INTEGER,
    extraction TEXT,
    chunks INTEGER,
    last_batch TEXT,
    quarantine_reason TEXT,
    quarantine_detail TEXT,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    summary TEXT
);
CREATE TABLE IF NOT EXISTS document_paths (
    path TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    added_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS declared_pairs (
    first_doc_id TEXT NOT NULL,
    second_doc_id TEXT NOT NULL,  -- first_doc_id < second_doc_id
    translation INTEGER NOT NULL,  -- 1: they translate each other; 0: they do not
    declared_at TEXT NOT NULL,
    PRIMARY KEY (first_doc_id, second_doc_id)
);
CREATE TABLE IF NOT EXISTS file_hashes (  -- what discovery read last, so an unchanged file is not read again
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    hashed_at_ns INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS erasures (
    doc_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    at TEXT NOT NULL,
    report TEXT NOT NULL
);
"""
# Columns added after the first release, created on open in older registries:
_ADDED_COLUMNS = {
    "documents": {"deleted_at": "TEXT", "delete_reason": "TEXT"},  # tombstones (deleted, forgotten)
    # who runs a batch, to tell a running batch from a stale one (pipeline.batch.recovery)
    "batches": {"owner_pid": "INTEGER", "owner_host": "TEXT", "heartbeat_at": "TEXT"},
}
SCHEMA_VERSION = 2  # 1: document_paths, tombstones, erasures; 2: batch owners



def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class DocumentRow:
    doc_id: str
    source_path: str
    sha256: str | None
    status: DocStatus
    lang: str | None
    lang_confidence: float | None
    pages: int | None
    extraction: str | None
    chunks: int | None
    last_batch: str | None
    quarantine_reason: str | None
    quarantine_detail: str | None
    updated_at: str
    deleted_at: str | None = None
    delete_reason: str | None = None


@dataclass(frozen=True)
class FileHash:
    size: int
    mtime_ns: int
    sha256: str
    hashed_at_ns: int  # when it was read: a file changed just before may have changed unseen since


@dataclass
class BatchRow:
    batch_id: str
    kind: str
    status: str
    started_at: str
    finished_at: str | None
    summary: dict[str, Any]
    owner_pid: int | None = None  # the process that runs the whole batch (rosetta ingest's runner), if one does
    owner_host: str | None = None
    heartbeat_at: str | None = None  # the last time one of its tasks started or ended


class DocumentRegistry:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.executescript(_SCHEMA)
            if db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                self._migrate(db)

    @staticmethod
    def _migrate(db: sqlite3.Connection) -> None:
        """A registry written by an older release: the added columns, and each document's one
        path as its first alias (doc_ids stay, so chunk uuids stay). Idempotent."""
        for table, added in _ADDED_COLUMNS.items():
            present = {r["name"] for r in db.execute(f"PRAGMA table_info({table})")}
            for column, kind in added.items():
                if column not in present:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        db.execute("INSERT OR IGNORE INTO document_paths (path, doc_id, added_at) "
                   "SELECT source_path, doc_id, updated_at FROM documents WHERE status NOT IN ('deleted', 'forgotten')")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # Short-lived connections: Airflow tasks may run in separate processes.
        db = sqlite3.connect(self.path, timeout=30)
        db.row_factory = sqlite3.Row
        try:
            with db:
                yield db
        finally:
            db.close()

    # --- documents -------------------------------------------------------------------
    def get(self, doc_id: str) -> DocumentRow | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return DocumentRow(**row) if row else None

    def find_by_path(self, source_path: str) -> DocumentRow | None:
        """The document known by this path (any of its aliases)."""
        with self._connect() as db:
            row = db.execute("SELECT d.* FROM documents d JOIN document_paths p ON p.doc_id = d.doc_id "
                             "WHERE p.path = ?", (source_path,)).fetchone()
        return DocumentRow(**row) if row else None

    def paths(self, doc_id: str) -> list[str]:
        with self._connect() as db:
            rows = db.execute("SELECT path FROM document_paths WHERE doc_id = ? ORDER BY path", (doc_id,)).fetchall()
        return [r["path"] for r in rows]

    def path_owners(self) -> dict[str, str]:
        """Every known path -> the document it belongs to."""
        with self._connect() as db:
            return {r["path"]: r["doc_id"] for r in db.execute("SELECT path, doc_id FROM document_paths")}

    def set_paths(self, doc_id: str, paths: list[str], primary: str) -> None:
        """The document's aliases become exactly ``paths`` (a path moves from any other owner)."""
        with self._connect() as db:
            db.execute("DELETE FROM document_paths WHERE doc_id = ?", (doc_id,))
            for path in paths:
                db.execute("INSERT INTO document_paths (path, doc_id, added_at) VALUES (?, ?, ?) "
                           "ON CONFLICT(path) DO UPDATE SET doc_id = excluded.doc_id", (path, doc_id, _now()))
            db.execute("UPDATE documents SET source_path = ?, updated_at = ? WHERE doc_id = ?", (primary, _now(), doc_id))

    def add_path(self, doc_id: str, path: str) -> None:
        with self._connect() as db:
            db.execute("INSERT INTO document_paths (path, doc_id, added_at) VALUES (?, ?, ?) "
                       "ON CONFLICT(path) DO UPDATE SET doc_id = excluded.doc_id", (path, doc_id, _now()))

    def mark_deleted(self, doc_id: str, reason: str) -> None:
        """A tombstone for a document whose files are gone: doc id, sha256, last path, when, why."""
        with self._connect() as db:
            db.execute("DELETE FROM document_paths WHERE doc_id = ?", (doc_id,))
            db.execute("UPDATE documents SET status = 'deleted', chunks = 0, deleted_at = ?, delete_reason = ?, "
                       "updated_at = ? WHERE doc_id = ?", (_now(), reason, _now(), doc_id))

    def restore(self, doc_id: str, status: str, paths: list[str], primary: str) -> None:
        """Undo ``mark_deleted`` (a rollback of the batch that deleted the document)."""
        with self._connect() as db:
            db.execute("UPDATE documents SET status = ?, deleted_at = NULL, delete_reason = NULL, updated_at = ? "
                       "WHERE doc_id = ?", (status, _now(), doc_id))
        self.set_paths(doc_id, paths, primary)

    def forget(self, doc_id: str, reason: str, report: dict[str, Any]) -> None:
        """Erase the document's row down to a contentless tombstone (id, when, why), drop its
        paths and its entries in every batch summary, log the erasure; freed pages are
        overwritten (secure_delete) and the file is vacuumed, so no old bytes remain."""
        now = _now()
        with self._connect() as db:
            db.execute("PRAGMA secure_delete = ON")
            db.execute("DELETE FROM file_hashes WHERE path IN (SELECT path FROM document_paths WHERE doc_id = ?) "
                       "OR sha256 = (SELECT sha256 FROM documents WHERE doc_id = ?)", (doc_id, doc_id))
            db.execute("DELETE FROM document_paths WHERE doc_id = ?", (doc_id,))
            db.execute("DELETE FROM declared_pairs WHERE ? IN (first_doc_id, second_doc_id)", (doc_id,))
            db.execute("UPDATE documents SET source_path = '', sha256 = NULL, status = 'forgotten', lang = NULL, "
                       "lang_confidence = NULL, pages = NULL, extraction = NULL, chunks = 0, "
                       "quarantine_reason = NULL, quarantine_detail = NULL, deleted_at = ?, delete_reason = ?, "
                       "updated_at = ? WHERE doc_id = ?", (now, reason, now, doc_id))
            for row in db.execute("SELECT batch_id, summary FROM batches WHERE summary LIKE ?",
                                  (f"%{doc_id}%",)).fetchall():
                summary = json.loads(row["summary"])
                summary["documents"] = [d for d in summary.get("documents", []) if d.get("doc_id") != doc_id]
                db.execute("UPDATE batches SET summary = ? WHERE batch_id = ?",
                           (json.dumps(summary, ensure_ascii=False), row["batch_id"]))
            db.execute("INSERT INTO erasures (doc_id, reason, at, report) VALUES (?, ?, ?, ?)",
                       (doc_id, reason, now, json.dumps(report, ensure_ascii=False)))
        with self._connect() as db:
            db.isolation_level = None  # VACUUM cannot run inside a transaction
            db.execute("VACUUM")

    # --- file hashes (pipeline.batch.discovery) -------------------------------------------
    def file_hashes(self) -> dict[str, FileHash]:
        with self._connect() as db:
            return {r["path"]: FileHash(r["size"], r["mtime_ns"], r["sha256"], r["hashed_at_ns"])
                    for r in db.execute("SELECT * FROM file_hashes")}

    def remember_hashes(self, hashed: dict[str, FileHash], gone: Iterable[str] = ()) -> None:
        """Record files just hashed, and drop the entries of paths no longer found."""
        with self._connect() as db:
            db.executemany("DELETE FROM file_hashes WHERE path = ?", [(path,) for path in gone])
            db.executemany("INSERT OR REPLACE INTO file_hashes VALUES (?, ?, ?, ?, ?)",
                           [(path, h.size, h.mtime_ns, h.sha256, h.hashed_at_ns) for path, h in hashed.items()])

    # --- declared translations ----------------------------------------------------------
    def declare(self, doc_ids: list[str], translation: bool | None) -> None:
        """Every two of ``doc_ids`` translate each other (True), do not (False), or are left to
        the evidence again (None: their declarations dropped)."""
        now = _now()
        with self._connect() as db:
            for first, second in combinations(sorted(set(doc_ids)), 2):
                if translation is None:
                    db.execute("DELETE FROM declared_pairs WHERE first_doc_id = ? AND second_doc_id = ?", (first, second))
                else:
                    db.execute("INSERT INTO declared_pairs (first_doc_id, second_doc_id, translation, declared_at) "
                               "VALUES (?, ?, ?, ?) ON CONFLICT(first_doc_id, second_doc_id) DO UPDATE SET "
                               "translation = excluded.translation, declared_at = excluded.declared_at",
                               (first, second, int(translation), now))

    def declarations(self, doc_ids: Iterable[str] | None = None) -> dict[str, dict[str, bool]]:
        """doc_id -> {doc_id declared with it: whether they translate each other}, for the
        given documents (every declaration when None)."""
        with self._connect() as db:
            rows = db.execute("SELECT first_doc_id, second_doc_id, translation FROM declared_pairs").fetchall()
        wanted = None if doc_ids is None else set(doc_ids)
        out: dict[str, dict[str, bool]] = {}
        for row in rows:
            for mine, other in ((row["first_doc_id"], row["second_doc_id"]), (row["second_doc_id"], row["first_doc_id"])):
                if wanted is None or mine in wanted:
                    out.setdefault(mine, {})[other] = bool(row["translation"])
        return out

    def erasures(self) -> list[dict[str, Any]]:
        with self._connect() as db:
            rows = db.execute("SELECT * FROM erasures ORDER BY at").fetchall()
        return [{**dict(r), "report": json.loads(r["report"])} for r in rows]

    def documents(self) -> list[DocumentRow]:
        with self._connect() as db:
            rows = db.execute("SELECT * FROM documents ORDER BY source_path").fetchall()
        return [DocumentRow(**r) for r in rows]

    def record_document(self, doc_id: str, source_path: str, **fields: Any) -> None:
        """Insert or update one document; only the given fields change."""
        fields = {**fields, "source_path": source_path, "updated_at": _now()}
        existing = self.get(doc_id)
        with self._connect() as db:
            if existing is None:
                fields.setdefault("status", "processing")
                cols = ["doc_id", *fields]
                db.execute(
                    f"INSERT INTO documents ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                    [doc_id, *fields.values()],
                )
            else:
                assignments = ", ".join(f"{k} = ?" for k in fields)
                db.execute(f"UPDATE documents SET {assignments} WHERE doc_id = ?", [*fields.values(), doc_id])

    def open_documents(self, batch_id: str, documents: list[tuple[str, str, list[str] | None]]) -> None:
        """The documents a new batch processes, in one transaction: each (doc_id, source path,
        its paths after the refresh or None for just that one) gets the batch as its last,
        a new one the status ``processing``. What ``record_document`` and ``set_paths`` /
        ``add_path`` do one document at a time (a transaction each: slow for thousands)."""
        now = _now()
        with self._connect() as db:
            for doc_id, source_path, paths in documents:
                db.execute("INSERT INTO documents (doc_id, source_path, status, last_batch, updated_at) "
                           "VALUES (?, ?, 'processing', ?, ?) ON CONFLICT(doc_id) DO UPDATE SET "
                           "source_path = excluded.source_path, last_batch = excluded.last_batch, "
                           "updated_at = excluded.updated_at", (doc_id, source_path, batch_id, now))
                if paths is not None:
                    db.execute("DELETE FROM document_paths WHERE doc_id = ?", (doc_id,))
                for path in paths if paths is not None else [source_path]:
                    db.execute("INSERT INTO document_paths (path, doc_id, added_at) VALUES (?, ?, ?) "
                               "ON CONFLICT(path) DO UPDATE SET doc_id = excluded.doc_id", (path, doc_id, now))

    # --- batches ---------------------------------------------------------------------
    def start_batch(self, batch_id: str, kind: str, owner_pid: int | None = None, owner_host: str | None = None) -> None:
        now = _now()
        with self._connect() as db:
            db.execute(
                "INSERT INTO batches (batch_id, kind, status, started_at, owner_pid, owner_host, heartbeat_at) "
                "VALUES (?, ?, 'running', ?, ?, ?, ?) ON CONFLICT(batch_id) DO UPDATE SET status = 'running', "
                "finished_at = NULL, owner_pid = excluded.owner_pid, owner_host = excluded.owner_host, "
                "heartbeat_at = excluded.heartbeat_at",
                (batch_id, kind, now, owner_pid, owner_host, now),
            )

    def beat(self, batch_id: str) -> None:
        """A running batch is alive: one of its tasks starts or ends now."""
        with self._connect() as db:
            db.execute("UPDATE batches SET heartbeat_at = ? WHERE batch_id = ? AND status = 'running'",
                       (_now(), batch_id))

    def finish_batch(self, batch_id: str, status: str, summary: dict[str, Any]) -> None:
        with self._connect() as db:
            db.execute(
                "UPDATE batches SET status = ?, finished_at = ?, summary = ? WHERE batch_id = ?",
                (status, _now(), json.dumps(summary, ensure_ascii=False), batch_id),
            )

    def batch(self, batch_id: str) -> BatchRow | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM batches WHERE batch_id = ?", (batch_id,)).fetchone()
        return self._batch_row(row) if row else None

    def batches(self) -> list[BatchRow]:
        with self._connect() as db:
            rows = db.execute("SELECT * FROM batches ORDER BY started_at, batch_id").fetchall()
        return [self._batch_row(r) for r in rows]

    @staticmethod
    def _batch_row(row: sqlite3.Row) -> BatchRow:
        data = dict(row)
        data["summary"] = json.loads(data["summary"]) if data["summary"] else {}
        return BatchRow(**data)
