"""The per-document stage runner: the one place where a bad document turns into a quarantine
record while the rest of the batch goes on.
"""

from __future__ import annotations

import logging
from typing import Any

from pipeline.config import Settings
from pipeline.contracts import DocRef, DocumentError, StageResult
from pipeline.stages import DOCUMENT_STAGES, Stage
from pipeline.workspace import Workspace

log = logging.getLogger(__name__)
progress = logging.getLogger("pipeline.progress")  # one line per document per stage


def run_stage(stage: Stage, previous: StageResult | dict[str, Any] | DocRef, settings: Settings) -> StageResult:
    """Run one per-document stage; a DocumentError becomes a quarantine record.

    ``previous`` is the upstream stage's result (or the document's ref for the first
    stage). A quarantined document passes through every later stage untouched. Any other
    exception propagates, so Airflow retries the task (the stage is idempotent).
    """
    if isinstance(previous, dict):
        previous = StageResult.model_validate(previous) if "stage" in previous else DocRef.model_validate(previous)
    if isinstance(previous, StageResult) and previous.status == "quarantined":
        return previous
    ref = previous.ref if isinstance(previous, StageResult) else previous
    try:
        result = stage.load().run(ref, settings)
    except DocumentError as error:
        ws = Workspace(settings, ref.batch_id)
        source = ws.source_path(ref.doc_id)
        result = StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=stage.name, status="quarantined",
                             reason=error.reason, detail=error.detail)
        ws.write_json(ws.quarantine_path(ref.doc_id), {**result.model_dump(), "source_path": source})
        log.warning("QUARANTINE %s (%s): %s", source or ref.doc_id, error.reason, error.detail)
    progress.info("%-9s %-36s %s", stage.name, ref.doc_id,
                  result.status if result.status == "ok" else f"QUARANTINED ({result.reason}: {result.detail})")
    return result


def process_document(ref: DocRef, settings: Settings) -> StageResult:
    """All per-document stages for one document, in order, as the DAG runs them."""
    previous: StageResult | DocRef = ref
    for stage in DOCUMENT_STAGES:
        previous = run_stage(stage, previous, settings)
    return previous  # type: ignore[return-value]
