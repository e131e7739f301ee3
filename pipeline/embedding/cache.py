"""Passage vectors already computed, kept by embedder and text: a chunk whose exact text was
embedded before is not encoded again.

The configured embedder (USE + e5) encodes 4-9 passages a second on 2 cores, the bulk of a
born-digital document's ingestion, and much of what a batch embeds has been embedded before:
a document reprocessed or ingested again with ``--force`` after an upgrade (its chunks cut
as before), a new version of a contract that changes two clauses, the standard clauses and
the licence text many contracts repeat. One SQLite file per embedder and version under
``<data_root>/embedding-cache/`` holds each passage's raw vector by the sha256 of its text;
it is bounded by ``embedding.cache_mb`` (the least recently used go first; 0 turns it off)
and shared by the batch's worker processes (docs/architecture.md, "Embedding cache"). A
cache that cannot be opened or written is skipped with a warning: the vectors are computed.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from pipeline.embedding.embedders import Embedder, embedder_id

log = logging.getLogger(__name__)


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorCache:
    def __init__(self, folder: Path, embedder: Embedder, max_mb: int):
        self.embedder = embedder
        self.max_rows = max_mb * 2**20 // (embedder.dimension * 4 + 100)  # a row: the vector, its key and time
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", embedder_id(embedder))
        self.path = folder / f"{safe}.sqlite"
        self.hits = self.misses = 0

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """The cache's database, committed and closed after use (the batch's workers share it:
        WAL, and a minute's wait for another's write)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=60)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL, "
                       "used REAL NOT NULL)")
            db.execute("CREATE INDEX IF NOT EXISTS vectors_used ON vectors (used)")
            yield db
            db.commit()
        finally:
            db.close()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Raw passage vectors of ``texts``, as ``embedder.encode(texts)`` gives them, the
        ones known taken from the cache and the rest encoded (each distinct text once) and kept."""
        if self.max_rows <= 0 or not texts:
            return self.embedder.encode(texts)
        keys = [text_key(t) for t in texts]
        try:
            with self._connect() as db:
                known = self._read(db, sorted(set(keys)))
        except (sqlite3.Error, OSError) as exc:
            log.warning("embedding cache %s not read (%s): every passage is encoded", self.path, exc)
            return self.embedder.encode(texts)
        wanted = {key: text for key, text in zip(keys, texts) if key not in known}
        if wanted:
            encoded = self.embedder.encode(list(wanted.values()))
            known |= dict(zip(wanted, encoded))
            try:
                with self._connect() as db:
                    self._write(db, {key: known[key] for key in wanted})
            except (sqlite3.Error, OSError) as exc:
                log.warning("embedding cache %s not written (%s)", self.path, exc)
        self.hits += len(texts) - sum(1 for key in keys if key in wanted)
        self.misses += sum(1 for key in keys if key in wanted)
        return np.stack([known[key] for key in keys]).astype(np.float32, copy=False)

    def _read(self, db: sqlite3.Connection, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):  # SQLite's bound on a statement's parameters
            part = keys[start:start + 500]
            rows = db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})", part)
            for key, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                if vector.shape == (self.embedder.dimension,):
                    found[key] = vector
        if found:
            db.executemany("UPDATE vectors SET used = ? WHERE key = ?", [(time.time(), key) for key in found])
        return found

    def _write(self, db: sqlite3.Connection, vectors: dict[str, np.ndarray]) -> None:
        now = time.time()
        db.executemany("INSERT OR REPLACE INTO vectors (key, vector, used) VALUES (?, ?, ?)",
                       [(key, np.asarray(v, dtype=np.float32).tobytes(), now) for key, v in vectors.items()])
        (rows,) = db.execute("SELECT COUNT(*) FROM vectors").fetchone()
        if rows > self.max_rows:  # past its bound: the least recently used tenth beyond it goes
            drop = rows - self.max_rows + self.max_rows // 10
            db.execute("DELETE FROM vectors WHERE key IN (SELECT key FROM vectors ORDER BY used LIMIT ?)", (drop,))

