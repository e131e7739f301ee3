"""Passage vectors already computed, kept by embedder and text: a chunk whose exact text was
embedded before is not encoded again.

The configured embedder (USE + e5) encodes 4-9 passages a second on 2 cores, the bulk of a
born-digital document's ingestion, and much of what a batch embeds has been embedded before:
a document reprocessed or ingested again with ``--force`` after an upgrade (its chunks cut
as before), a new version of a contract that changes two clauses, the standard clauses and
the licence text many contracts repeat. Each passage's raw vector is a file named by the
sha256 of its text under ``<data_root>/embedding-cache/<embedder>@<version>/``, shared by
the stage's worker processes and containers without a lock (pipeline/stores/file_cache.py).
Each batch's finish trims it to ``embedding.cache_mb``, the least recently used first (0
turns it off). A cache that cannot be read or written is skipped with a warning: the vectors
are computed (docs/architecture.md, "Caches").
"""

from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

import numpy as np

from pipeline.embedding.embedders import Embedder, embedder_id
from pipeline.stores.file_cache import FileCache

log = logging.getLogger(__name__)

SUFFIX = ".f32"  # the vector's float32 values, nothing else


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorCache:
    def __init__(self, folder: Path, embedder: Embedder, enabled: bool = True):
        self.embedder = embedder
        self.enabled = enabled
        self.root = folder / re.sub(r"[^A-Za-z0-9_.@+-]", "_", embedder_id(embedder))
        self.files = FileCache(self.root, SUFFIX)
        self.hits = 0

    def _read(self, key: str) -> np.ndarray | None:
        data = self.files.read(key)
        if data is None:
            return None
        vector = np.frombuffer(data, dtype=np.float32)
        return vector if vector.shape == (self.embedder.dimension,) else None

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
                    self.files.write(key, np.asarray(known[key], dtype=np.float32).tobytes())
            except OSError as exc:
                log.warning("embedding cache %s not written (%s)", self.root, exc)
        return np.stack([known[key] for key in keys]).astype(np.float32, copy=False)
