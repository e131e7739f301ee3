"""The per-document stage runner: the one place where a bad document turns into a quarantine
record while the rest of the batch goes on.

With ``limits.isolate`` (the default) each document-stage runs in a worker process under a
deadline and a memory cap (pipeline.batch.isolation). The outcomes:

- ``ok``: the stage's result;
- a ``DocumentError`` (bad input): quarantine with its reason, at once;
- past the deadline (``stage_timeout``) or the memory cap (``too_large``): quarantine at
  once; the same input would do the same again, so it is not retried;
- any other exception, or the worker's death (``stage_error``): on a try that is not the
  last, ``StageFailed`` is raised so Airflow retries the task (transient errors: a locked
  store, a full disk); on the last try the document is quarantined and the batch goes on.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from pipeline.config import Settings
from pipeline.contracts import DocRef, DocumentError, StageResult
from pipeline.stages import DOCUMENT_STAGES, Stage
from pipeline.stores.document_registry import DocumentRegistry
from pipeline.workspace import Workspace

log = logging.getLogger(__name__)
progress = logging.getLogger("pipeline.progress")  # one line per document per stage


class StageFailed(RuntimeError):
    """An unexpected error in one document's stage, raised on a try that is not the last."""


def run_stage(stage: Stage, previous: StageResult | dict[str, Any] | DocRef, settings: Settings,
              last_try: bool = True) -> StageResult:
    """Run one per-document stage; a rejected or failing document becomes a quarantine record.

    ``previous`` is the upstream stage's result (or the document's ref for the first
    stage). A quarantined document passes through every later stage untouched.
    ``last_try``: whether an unexpected error quarantines the document (True) or raises
    ``StageFailed`` so the caller retries (Airflow, before its last try).
    """
    if isinstance(previous, dict):
        previous = StageResult.model_validate(previous) if "stage" in previous else DocRef.model_validate(previous)
    if isinstance(previous, StageResult) and previous.status == "quarantined":
        return previous
    ref = previous.ref if isinstance(previous, StageResult) else previous
    reason, detail = _run(stage, ref, settings, last_try)
    if reason is None:
        result = detail
    else:
        result = _quarantine(stage, ref, settings, reason, detail)
    progress.info("%-9s %-36s %s", stage.name, ref.doc_id,
                  result.status if result.status == "ok" else f"QUARANTINED ({result.reason}: {result.detail})")
    return result


def _run(stage: Stage, ref: DocRef, settings: Settings, last_try: bool) -> tuple[str | None, Any]:
    """(None, result), or (quarantine reason, detail)."""
    from pipeline.batch.isolation import Outcome, one_line, worker

    registry = DocumentRegistry(settings.document_registry_path)
    registry.beat(ref.batch_id)
    if settings.limits.isolate:
        outcome = worker().run(stage, ref, settings, alive=lambda: registry.beat(ref.batch_id))
    else:  # in this process: no deadline or memory cap
        try:
            outcome = Outcome(result=stage.load().run(ref, settings))
        except DocumentError as error:
            outcome = Outcome(reason=error.reason, detail=error.detail)
        except Exception as error:
            outcome = Outcome(reason="stage_error", detail=one_line(error), traceback=traceback.format_exc())
    if outcome.reason == "stage_error":
        log.warning("%s %s: %s\n%s", stage.name, ref.doc_id, outcome.detail, outcome.traceback)
        if not last_try:
            raise StageFailed(f"{stage.name} {ref.doc_id}: {outcome.detail}")
    if outcome.reason is None:
        return None, outcome.result
    return outcome.reason, outcome.detail


def _quarantine(stage: Stage, ref: DocRef, settings: Settings, reason: str, detail: str) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    source = ws.source_path(ref.doc_id)
    result = StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=stage.name, status="quarantined",
                         reason=reason, detail=detail)
    ws.write_json(ws.quarantine_path(ref.doc_id), {**result.model_dump(), "source_path": source})
    log.warning("QUARANTINE %s (%s): %s", source or ref.doc_id, reason, detail)
    return result


def process_document(ref: DocRef, settings: Settings) -> StageResult:
    """All per-document stages for one document, in order, as the DAG runs them."""
    previous: StageResult | DocRef = ref
    for stage in DOCUMENT_STAGES:
        previous = run_stage(stage, previous, settings)
    return previous  # type: ignore[return-value]
