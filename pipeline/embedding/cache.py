"""Passage vectors already computed, kept by embedder and text: a chunk whose exact text was
embedded before is not encoded again.

The configured embedder (USE + e5) encodes 4-9 passages a second on 2 cores, the bulk of a
born-digital document's ingestion, and much of what a batch embeds has been embedded before:
a document reprocessed or ingested again with ``--force`` after an upgrade (its chunks cut
as before), a new version of a contract that changes two clauses, the standard clauses and
the licence text many contracts repeat. Each passage's raw vector is a file named by the
sha256 of its text under ``<data_root>/embedding-cache/<embedder>@<version>/``, written to a
temporary name and renamed: the stage's worker processes and containers share it on any
volume that renames atomically, with no lock (SQLite's locking is not to be trusted on a
shared volume or PVC; docs/deploy.md). Each batch's finish trims it to ``embedding.cache_mb``,
the least recently used first (0 turns it off). A cache that cannot be read or written is
skipped with a warning: the vectors are computed (docs/architecture.md, "Embedding cache").
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
from pathlib import Path

import numpy as np

from pipeline.embedding.embedders import Embedder, embedder_id

log = logging.getLogger(__name__)
progress = logging.getLogger("pipeline.progress")

SUFFIX = ".f32"  # the vector's float32 values, nothing else


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorCache:
    def __init__(self, folder: Path, embedder: Embedder, enabled: bool = True):
        self.embedder = embedder
        self.enabled = enabled
        self.root = folder / re.sub(r"[^A-Za-z0-9_.@+-]", "_", embedder_id(embedder))
        self.hits = 0

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}{SUFFIX}"

    def _read(self, key: str) -> np.ndarray | None:
        path = self.path(key)
        try:
            data = path.read_bytes()
            os.utime(path)  # used now: the trim keeps the most recently used
        except FileNotFoundError:
            return None
        vector = np.frombuffer(data, dtype=np.float32)
        return vector if vector.shape == (self.embedder.dimension,) else None

    def _write(self, key: str, vector: np.ndarray) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=SUFFIX)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(np.asarray(vector, dtype=np.float32).tobytes())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def encode(self, texts: list[str]) -> np.ndarray:
        """Raw passage vectors of ``texts``, as ``embedder.encode(texts)`` gives them: the known
        ones from the cache, the rest encoded (each distinct text once) and kept."""
        if not self.enabled or not texts:
            return self.embedder.encode(texts)
        keys = [text_key(t) for t in texts]
        known: dict[str, np.ndarray] = {}
        try:
            for key in dict.fromkeys(keys):
                if (vector := self._read(key)) is not None:
                    known[key] = vector
        except OSError as exc:
            log.warning("embedding cache %s not read (%s): every passage is encoded", self.root, exc)
            known.clear()
        wanted = {key: text for key, text in zip(keys, texts) if key not in known}
        self.hits = len(keys) - sum(1 for key in keys if key in wanted)
        if wanted:
            for key, vector in zip(wanted, self.embedder.encode(list(wanted.values()))):
                known[key] = vector
            try:
                for key in wanted:
                    self._write(key, known[key])
            except OSError as exc:
                log.warning("embedding cache %s not written (%s)", self.root, exc)
        return np.stack([known[key] for key in keys]).astype(np.float32, copy=False)


def trim(folder: Path, max_mb: float) -> int:
    """Delete the least recently used vectors under ``folder`` past ``max_mb`` (every
    embedder's together; down to nine tenths of it, so that each batch does not trim again);
    returns how many files went."""
    files = []
    for path in folder.rglob(f"*{SUFFIX}"):
        try:
            stat = path.stat()
        except FileNotFoundError:  # trimmed or written over meanwhile
            continue
        files.append((stat.st_mtime, stat.st_size, path))
    total, bound = sum(size for _, size, _ in files), max_mb * 2**20
    if total <= bound:
        return 0
    removed = 0
    for _, size, path in sorted(files):
        if total <= bound * 0.9:
            break
        path.unlink(missing_ok=True)
        total -= size
        removed += 1
    progress.info("embedding cache: %d vector(s) past its %g MB removed, the least recently used", removed, max_mb)
    return removed
