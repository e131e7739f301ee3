"""Results kept as one file each, named by a hash of what produced them: the embedding cache
(pipeline/embedding/cache.py) and the OCR cache (pipeline/ocr/cache.py).

A file is written to a temporary name (a leading dot) and renamed, so the stages' worker
processes and containers share a cache on any volume that renames atomically, with no lock
(SQLite's locking is not to be trusted on a shared volume or PVC; docs/deploy.md). Reading a
file touches it; ``trim`` deletes the least recently used past a size. A cache that cannot be
read or written is the caller's to skip with a warning: what it holds can always be computed.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

progress = logging.getLogger("pipeline.progress")


class FileCache:
    def __init__(self, root: Path, suffix: str):
        self.root = root
        self.suffix = suffix

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}{self.suffix}"

    def read(self, key: str) -> bytes | None:
        path = self.path(key)
        try:
            data = path.read_bytes()
            os.utime(path)  # used now: the trim keeps the most recently used
        except FileNotFoundError:
            return None
        return data

    def write(self, key: str, data: bytes) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=self.suffix)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def trim(folder: Path, max_mb: float, what: str) -> int:
    """Delete the least recently used files under ``folder`` past ``max_mb`` (down to nine
    tenths of it, so that each batch does not trim again); returns how many went. A temporary
    file a killed writer left behind goes by its age like the rest (one being written is the
    newest, and its writer's rename fails with a warning if it goes)."""
    files = []
    for path in folder.rglob("*"):
        try:
            stat = path.stat()
        except FileNotFoundError:  # trimmed or written over meanwhile
            continue
        if path.is_file():
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
    progress.info("%s: %d file(s) past its %g MB removed, the least recently used", what, removed, max_mb)
    return removed
