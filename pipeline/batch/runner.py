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
import os
import threading
import time
import traceback
from typing import Any

from pipeline.batch.isolation import Outcome, one_line, rss_mib, worker
from pipeline.config import Settings
from pipeline.contracts import DocRef, DocumentError, StageResult, StageTiming
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
    started = time.monotonic()
    outcome = _run(stage, ref, settings, last_try)
    if outcome.reason is None:
        result = outcome.result
    else:
        result = _quarantine(stage, ref, settings, outcome.reason, outcome.detail)
    spent = StageTiming(seconds=round(time.monotonic() - started, 3), peak_rss_mib=round(outcome.peak_rss_mib, 1))
    earlier = previous.timings if isinstance(previous, StageResult) else {}
    result = result.model_copy(update={"timings": {**earlier, stage.name: spent}})
    progress.info("%-9s %-36s %s", stage.name, ref.doc_id,
                  result.status if result.status == "ok" else f"QUARANTINED ({result.reason}: {result.detail})")
    return result


def _run(stage: Stage, ref: DocRef, settings: Settings, last_try: bool) -> Outcome:
    """The stage's result, or the quarantine reason and detail."""

    registry = DocumentRegistry(settings.document_registry_path)
    registry.beat(ref.batch_id)
    if settings.limits.isolate:
        outcome = worker().run(stage, ref, settings, alive=lambda: registry.beat(ref.batch_id))
    else:  # in this process: no deadline or memory cap
        try:
            outcome = Outcome(result=stage.load().run(ref, settings), peak_rss_mib=rss_mib(os.getpid()))
        except DocumentError as error:
            outcome = Outcome(reason=error.reason, detail=error.detail)
        except Exception as error:
            outcome = Outcome(reason="stage_error", detail=one_line(error), traceback=traceback.format_exc())
    if outcome.reason == "stage_error":
        log.warning("%s %s: %s\n%s", stage.name, ref.doc_id, outcome.detail, outcome.traceback)
        if not last_try:
            raise StageFailed(f"{stage.name} {ref.doc_id}: {outcome.detail}")
    return outcome


def _quarantine(stage: Stage, ref: DocRef, settings: Settings, reason: str, detail: str) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    source = ws.source_path(ref.doc_id)
    result = StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=stage.name, status="quarantined",
                         reason=reason, detail=detail)
    ws.write_json(ws.quarantine_path(ref.doc_id), {**result.model_dump(), "source_path": source})
    log.warning("QUARANTINE %s (%s): %s", source or ref.doc_id, reason, detail)
    return result


def run_step(stage: Stage, batch_id: str, upstream: Any, settings: Settings) -> dict[str, Any]:
    """Run one batch step (load, qa, promote) in this process; its output carries the wall
    seconds and peak resident memory of this step and the steps before it (``step_timings``)."""
    peak = [rss_mib(os.getpid())]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            peak[0] = max(peak[0], rss_mib(os.getpid()))

    sampler = threading.Thread(target=sample, daemon=True, name="rosetta-rss-sampler")
    sampler.start()
    started = time.monotonic()
    try:
        output = stage.load().run(batch_id, upstream, settings)
    finally:
        done.set()
        sampler.join()
    spent = StageTiming(seconds=round(time.monotonic() - started, 3),
                        peak_rss_mib=round(max(peak[0], rss_mib(os.getpid())), 1))
    earlier = upstream.get("step_timings", {}) if isinstance(upstream, dict) else {}
    return {**output, "step_timings": {**earlier, stage.name: spent.model_dump()}}


def process_document(ref: DocRef, settings: Settings) -> StageResult:
    """All per-document stages for one document, in order, as the DAG runs them."""
    previous: StageResult | DocRef = ref
    for stage in DOCUMENT_STAGES:
        previous = run_stage(stage, previous, settings)
    return previous  # type: ignore[return-value]
