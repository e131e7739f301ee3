"""The document registry: what Rosetta knows about every document and every batch (not to be
confused with MLflow's model registry of alignment maps, pipeline.stores.tracking).

A small SQLite file under data_root. ``documents`` holds one row per doc_id (source
path, sha256 of the version last processed, status, last batch, quarantine reason);
``batches`` one row per batch with its outcome and summary. The registry is the memory
that lets a corpus refresh skip unchanged documents.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

DocStatus = str  # "loaded" | "quarantined" | "processing" | "failed"

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
"""
# Added after the first release: who runs a batch, for telling a running batch from a stale
# one (pipeline.batch.recovery). Older registries get them on open.
_BATCH_OWNER_COLUMNS = {"owner_pid": "INTEGER", "owner_host": "TEXT", "heartbeat_at": "TEXT"}


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
            present = {row["name"] for row in db.execute("PRAGMA table_info(batches)")}
            for column, kind in _BATCH_OWNER_COLUMNS.items():
                if column not in present:
                    db.execute(f"ALTER TABLE batches ADD COLUMN {column} {kind}")

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
        with self._connect() as db:
            row = db.execute("SELECT * FROM documents WHERE source_path = ?", (source_path,)).fetchone()
        return DocumentRow(**row) if row else None

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
