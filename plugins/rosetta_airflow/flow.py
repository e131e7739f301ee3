"""The TaskFlow graph both ingestion DAGs share: the stage table's stages after a manifest task.

    docs = <manifest task>                      # list of {"batch_id", "doc_id"}
    extract -> language -> structure -> chunk -> embed -> enrich   (.expand() per document)
    load -> qa -> promote -> finish                                (once per batch)

Task ids are the stage names of pipeline.stages. Tasks are thin: each calls the stage's
function in pipeline/ and passes ids and paths on; heavy imports happen inside tasks, so
parsing a DAG file stays cheap. A task returns one XCom (``multiple_outputs=False``): with a
``dict`` return annotation TaskFlow would also push every key as an XCom of its own, ten
rows per task and the batch steps' document list twice.

Where a stage runs comes from config (``execution.mode``, ``containers.stages``): in-process
(``local``), or its image through the operator of the ``docker`` or ``kubernetes`` mode
(rosetta_airflow.operators). ``finish`` (registry and MLflow bookkeeping) runs in the worker
in every mode. The task ids and XComs are the same in every mode, so the DAG files never change
between deployments.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from airflow.sdk import XComArg, get_current_context, task
from airflow.sdk.exceptions import AirflowFailException
from airflow.task.trigger_rule import TriggerRule

from pipeline.config import get_settings
from pipeline.stages import BATCH_STEPS, DOCUMENT_STAGES, FINISH, Stage


def default_args() -> dict[str, Any]:
    cfg = get_settings().airflow
    return {"retries": cfg.retries, "retry_delay": timedelta(seconds=cfg.retry_delay_s)}


def batch_id() -> str:
    return get_current_context()["run_id"]


def last_try() -> bool:
    """Whether this is the task's last Airflow try: only then does an unexpected error in a
    document's stage quarantine the document instead of failing the try (pipeline.batch.runner)."""
    ti = get_current_context()["ti"]
    return ti.try_number > ti.max_tries


def document_task(stage: Stage):
    """The in-process task of a per-document stage: its StageResult dict for the next one."""

    @task(task_id=stage.name, multiple_outputs=False, **stage.task_args)
    def run_document_stage(previous: dict[str, Any]) -> dict[str, Any]:
        from pipeline.batch.runner import run_stage

        return run_stage(stage, previous, get_settings(), last_try=last_try()).model_dump()

    return run_document_stage


def batch_task(stage: Stage):
    """The in-process task of a batch step: the upstream step's dict in, its own out."""

    @task(task_id=stage.name, trigger_rule=TriggerRule.NONE_FAILED, multiple_outputs=False, **stage.task_args)
    def run_batch_step(upstream: Any) -> dict[str, Any]:
        from pipeline.batch.runner import run_step

        if not isinstance(upstream, dict):  # the mapped enrich results: a lazy XCom sequence
            upstream = list(upstream or [])
        return run_step(stage, batch_id(), upstream, get_settings())

    return run_batch_step


@task(task_id=FINISH, trigger_rule=TriggerRule.NONE_FAILED, multiple_outputs=False)
def finish(outcome: dict[str, Any]) -> dict[str, Any]:
    from pipeline.batch.lifecycle import finish_batch

    summary = finish_batch(batch_id(), outcome["results"], outcome, get_settings())
    if summary["status"] == "rolled_back":
        raise AirflowFailException(f"batch {batch_id()} failed the QA gate and was rolled back: "
                                   f"failure rate {outcome['qa_failure_rate']:.1%}")
    return summary


def _containerized(stage: Stage) -> bool:
    settings = get_settings()
    if settings.execution.mode == "local":
        return False
    from rosetta_airflow.containers import containerized

    return containerized(stage.name, settings)


def _document_step(stage: Stage, previous: XComArg) -> XComArg:
    """The stage mapped over the documents: in-process, or its container operator."""
    if _containerized(stage):
        from rosetta_airflow.operators import stage_operator

        mapped = stage_operator(stage.name, get_settings(), **stage.task_args).expand(previous=previous)
        return XComArg(mapped)  # the operator's return value
    return document_task(stage).expand(previous=previous)


def _batch_step(stage: Stage, upstream: XComArg) -> XComArg:
    """The batch step after ``upstream``: in-process, or its container operator, which rebuilds
    its input from the batch workspace (same task id, trigger rule and returned dict)."""
    if _containerized(stage):
        from rosetta_airflow.operators import batch_operator

        operator = batch_operator(stage.name, get_settings(), task_id=stage.name,
                                  trigger_rule=TriggerRule.NONE_FAILED, **stage.task_args)
        upstream >> operator
        return XComArg(operator)
    return batch_task(stage)(upstream)


def stages(docs: XComArg) -> Any:
    """Wire every stage after a task that returns the batch's document refs."""
    previous = docs
    for stage in DOCUMENT_STAGES:
        previous = _document_step(stage, previous)
    for stage in BATCH_STEPS:
        if stage.name != FINISH:
            previous = _batch_step(stage, previous)
    return finish(previous)
