"""After a crash: the batches nobody runs any more, found and finished or undone.

A run can be killed at any point (kill -9 of ``rosetta ingest``, of its runner, of a
worker, a power cut). Its batch stays ``running`` in the registry and its documents
``processing``. Staleness rule (docs/architecture.md, "Recovery after a crash"):

- a batch run by one process for its whole life (``rosetta ingest``'s runner, which sets
  ``OWNER_ENV``) records that process's pid and host: on the same host the batch is stale
  as soon as that pid is gone;
- otherwise (tasks in separate processes under a scheduler) it is stale when no task of it
  has beaten for ``limits.stale_heartbeat_s`` (a running stage beats every
  ``isolation.HEARTBEAT_S`` seconds).

A batch whose rollback was cut short stays ``rolling_back`` and is stale too.

``recover`` runs at the start of every new batch (discovery). A rollback cut short is done
again (its plan is in the promotion journal). A stale batch whose
promotion journal says ``promoting`` or ``promoted`` is finished (the promotion is
idempotent), so the live collection never stays half-promoted; any other stale batch is
undone: its staging collection is dropped, its workspace removed, its ``processing``
documents marked ``failed`` (reason ``interrupted``) so the next refresh processes them
again, and the batch marked ``interrupted``.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pipeline.config import Settings
from pipeline.stores.document_registry import BatchRow, DocumentRegistry
from pipeline.workspace import Workspace

log = logging.getLogger(__name__)
OWNER_ENV = "ROSETTA_RUN_OWNER_PID"  # set by the process that runs a whole batch (rosetta_airflow.runner)


def run_owner() -> tuple[int | None, str]:
    """(pid, host) to record as a new batch's owner; pid None when tasks run in separate processes."""
    pid = os.environ.get(OWNER_ENV)
    return (int(pid) if pid else None), socket.gethostname()


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie, killed but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def stale_reason(batch: BatchRow, settings: Settings) -> str | None:
    """Why a ``running`` batch is stale (nobody runs it any more), or None while it runs."""
    if batch.status == "rolling_back":  # set for the duration of a rollback (lifecycle.roll_back)
        return "a rollback of it did not finish"
    if batch.status != "running":
        return None
    if batch.owner_pid and batch.owner_host == socket.gethostname():
        return None if _alive(batch.owner_pid) else f"its process {batch.owner_pid} on {batch.owner_host} is gone"
    if batch.heartbeat_at is None:
        return None
    silent = (datetime.now(timezone.utc) - datetime.fromisoformat(batch.heartbeat_at)).total_seconds()
    if silent > settings.limits.stale_heartbeat_s:
        return f"no sign of life for {silent:.0f} s (limit {settings.limits.stale_heartbeat_s} s)"
    return None


def stale_batches(settings: Settings) -> dict[str, str]:
    """batch_id -> why it is stale, for every stale batch."""
    registry = DocumentRegistry(settings.document_registry_path)
    return {b.batch_id: why for b in registry.batches() if (why := stale_reason(b, settings))}


def refuse_while_a_batch_runs(settings: Settings, what: str) -> None:
    """Raise when a batch runs now (``running`` and not stale): ``what`` rewrites live chunks
    outside a batch (an erasure copies the live collection away and back; ``rosetta pairs``
    rewrites chunks in place), and a promotion in between would be lost or interleaved."""
    stale = stale_batches(settings)
    running = [b.batch_id for b in DocumentRegistry(settings.document_registry_path).batches()
               if b.status == "running" and b.batch_id not in stale]
    if running:
        raise RuntimeError(f"{what} rewrites the live collection, and batch {', '.join(running)} is running (its "
                           "promotion could interleave with it); run it again once the batch has finished "
                           "(`rosetta status`)")


def recover(settings: Settings) -> list[dict[str, Any]]:
    """Finish or undo every stale batch; returns what was done, one dict per batch."""
    done = []
    for batch_id, why in stale_batches(settings).items():
        action = _finish_rollback(batch_id, settings) or _finish_promotion(batch_id, settings) \
            or _undo(batch_id, why, settings)
        log.warning("stale batch %s (%s): %s", batch_id, why, action)
        done.append({"batch_id": batch_id, "stale": why, "action": action})
    return done


def _finish_rollback(batch_id: str, settings: Settings) -> str | None:
    """A rollback killed half-way (a reviewer's rejection, a QA reject): done again from its
    journal, which fixed what to remove and restore before anything moved."""
    from pipeline.batch.lifecycle import roll_back

    batch = DocumentRegistry(settings.document_registry_path).batch(batch_id)
    if batch is None or batch.status != "rolling_back":
        return None
    roll_back(batch_id, (batch.summary or {}).get("rollback_reason", "interrupted rollback"), settings)
    return "rollback finished"


def _finish_promotion(batch_id: str, settings: Settings) -> str | None:
    """A batch killed during or after its promotion: the promotion is completed and the batch
    finished, as its own promote and finish tasks would have. None if it never began promoting."""
    from pipeline.batch.lifecycle import finish_batch
    from pipeline.publish import promote, qa
    from pipeline.stores import vector_store

    ws = Workspace(settings, batch_id)
    journal_path = ws.batch_file("promotion.json")
    journal = ws.read_json(journal_path) if journal_path.exists() else {}
    if journal.get("state") not in ("promoting", "promoted"):
        return None
    checked = qa.checked_from_workspace(settings, batch_id)
    if journal["state"] == "promoting":
        with vector_store.connect(settings) as client:
            staged = client.collections.exists(journal["staging"])
        if staged:
            journal = promote.promote(batch_id, checked["documents"], settings)
        else:  # dropped: the last move of a promotion, so only the journal's last line was lost
            journal = {**journal, "state": "promoted"}
            ws.write_json(journal_path, journal)
    finish_batch(batch_id, checked["results"], {**checked, "promotion": journal}, settings)
    return "promotion finished"


def _undo(batch_id: str, why: str, settings: Settings) -> str:
    from pipeline.stores import vector_store

    registry = DocumentRegistry(settings.document_registry_path)
    with vector_store.connect(settings) as client:
        staging = vector_store.staging_name(settings, batch_id)
        if client.collections.exists(staging):
            client.collections.delete(staging)
    retried = []
    for doc in registry.documents():
        if doc.last_batch == batch_id and doc.status == "processing":
            registry.record_document(doc.doc_id, doc.source_path, status="failed", quarantine_reason="interrupted",
                                     quarantine_detail=f"batch {batch_id} was interrupted ({why})")
            retried.append(doc.doc_id)
    shutil.rmtree(Workspace(settings, batch_id).root, ignore_errors=True)
    batch = registry.batch(batch_id)
    registry.finish_batch(batch_id, "interrupted", {**(batch.summary if batch else {}), "interrupted": why,
                                                   "documents_to_retry": retried})
    return f"undone: staging collection dropped, workspace removed, {len(retried)} document(s) to process again"
