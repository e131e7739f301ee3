"""The batch workspace: ``<data_root>/batches/<batch_id>/<stage>/<doc_id>.<ext>``.

Stages talk to each other only through these files; XComs carry ids and paths.
Every write is atomic (temp file + rename), so a task killed mid-write leaves either
the old file or the new one, never half of one, and a retry simply overwrites.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel

from pipeline.config import Settings
from pipeline.contracts import BatchManifest, SourceDocument
from pipeline.stages import DOCUMENT_STAGES

Model = TypeVar("Model", bound=BaseModel)
QUARANTINE = "quarantine"  # the per-document folder of a batch's rejections (the stages' folders: pipeline.stages)


def document_files(doc_id: str) -> list[str]:
    """The files a document can have in a batch workspace, relative to it: each per-document
    stage's (the stage table's ``writes``) and its quarantine record."""
    return [pattern.format(doc=doc_id) for spec in DOCUMENT_STAGES for pattern in spec.writes] + [
        f"{QUARANTINE}/{doc_id}.json"]


def sha256_file(path: Path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()


def doc_id_for(source_path: Path, source_dir: Path) -> str:
    """A stable, filename-safe id from the document's path relative to the source folder."""
    try:
        relative = source_path.resolve().relative_to(source_dir.resolve())
    except ValueError:
        relative = source_path.resolve()
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", relative.with_suffix("").as_posix()).strip("-.")[:60]
    return f"{stem}-{hashlib.sha1(relative.as_posix().encode()).hexdigest()[:8]}"


def atomic_write_bytes(path: Path, payload: bytes) -> None:
    """Write ``path`` whole or not at all: a writer killed mid-write leaves the old file (or none)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Workspace:
    def __init__(self, settings: Settings, batch_id: str):
        if not re.fullmatch(r"[A-Za-z0-9_.:+-]+", batch_id):
            raise ValueError(f"batch id {batch_id!r} is not filename-safe")
        self.settings = settings
        self.batch_id = batch_id
        self.root = settings.data_root / "batches" / safe_name(batch_id)

    def path(self, stage: str, doc_id: str, ext: str = "json") -> Path:
        return self.root / stage / f"{doc_id}.{ext}"

    def batch_file(self, name: str) -> Path:
        return self.root / name

    def quarantine_path(self, doc_id: str) -> Path:
        return self.path(QUARANTINE, doc_id)

    @property
    def manifest_path(self) -> Path:
        return self.batch_file("manifest.json")

    def read_manifest(self) -> BatchManifest:
        """What the batch processes (written by pipeline.batch.discovery)."""
        return self.read_model(self.manifest_path, BatchManifest)

    def source(self, doc_id: str) -> SourceDocument | None:
        """The document's manifest entry: its source path and sha256."""
        return next((d for d in self.read_manifest().documents if d.doc_id == doc_id), None)

    def source_path(self, doc_id: str) -> str | None:
        source = self.source(doc_id)
        return source.source_path if source else None

    def write_model(self, path: Path, model: BaseModel) -> Path:
        atomic_write_bytes(path, model.model_dump_json(indent=1).encode("utf-8"))
        return path

    def read_model(self, path: Path | str, model_type: type[Model]) -> Model:
        return model_type.model_validate_json(Path(path).read_text(encoding="utf-8"))

    def write_json(self, path: Path, data: Any) -> Path:
        atomic_write_bytes(path, json.dumps(data, ensure_ascii=False, indent=1, default=str).encode("utf-8"))
        return path

    def read_json(self, path: Path | str) -> Any:
        return json.loads(Path(path).read_text(encoding="utf-8"))

    def write_array(self, path: Path, array: np.ndarray) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".npy")
        os.close(fd)
        try:
            np.save(tmp, array, allow_pickle=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    def read_array(self, path: Path | str) -> np.ndarray:
        return np.load(path, allow_pickle=False)


def safe_name(batch_id: str) -> str:
    """Airflow run ids hold ':' and '+'; keep folder names portable."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", batch_id)
