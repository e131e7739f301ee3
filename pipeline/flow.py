"""The TaskFlow graph both ingestion DAGs share: seven stages after a manifest task.

    docs = <manifest task>                      # list of {"batch_id", "doc_id"}
    extract -> language -> structure -> chunk -> embed -> enrich   (.expand() per document)
    load -> qa_gate -> promote_or_rollback -> finish               (once per batch)

Tasks are thin: each calls the stage function in pipeline/ and passes ids and paths on.
Heavy imports happen inside tasks, so parsing a DAG file stays cheap.

Where a per-document stage or a batch step (load, QA gate, promotion) runs comes from config
(``execution.mode``, ``containers.stages``): in-process (``local``), or its image through the
operator of the ``docker`` or ``kubernetes`` mode (plugins/rosetta_operators). ``finish``
(registry and MLflow bookkeeping) runs in the worker in every mode. The task ids and XComs
are the same in every mode, so the DAG files never change between deployments.
"""

from __future__ import annotations

from datetime import timedelta
from types import ModuleType
from typing import Any

from airflow.sdk import XComArg, get_current_context, task
from airflow.sdk.exceptions import AirflowFailException
from airflow.task.trigger_rule import TriggerRule

from pipeline.config import get_settings


def default_args() -> dict[str, Any]:
    cfg = get_settings().airflow
    return {"retries": cfg.retries, "retry_delay": timedelta(seconds=cfg.retry_delay_s)}


def batch_id() -> str:
    return get_current_context()["run_id"]


def _stage(module_name: str) -> ModuleType:
    import importlib

    return importlib.import_module(f"pipeline.{module_name}")


def _run_stage(module_name: str, previous: dict[str, Any]) -> dict[str, Any]:
    from pipeline.batch import run_stage

    return run_stage(_stage(module_name), previous, get_settings()).model_dump()


@task(max_active_tis_per_dagrun=2)
def extract(previous: dict[str, Any]) -> dict[str, Any]:
    return _run_stage("extraction", previous)


@task
def language(previous: dict[str, Any]) -> dict[str, Any]:
    return _run_stage("language", previous)


@task
def structure(previous: dict[str, Any]) -> dict[str, Any]:
    return _run_stage("structure", previous)


@task
def chunk(previous: dict[str, Any]) -> dict[str, Any]:
    return _run_stage("chunking", previous)


@task
def embed(previous: dict[str, Any]) -> dict[str, Any]:
    return _run_stage("embedding", previous)


@task
def enrich(previous: dict[str, Any]) -> dict[str, Any]:
    return _run_stage("loading", previous)


@task(trigger_rule=TriggerRule.NONE_FAILED)
def load(results: list[dict[str, Any]] | None) -> dict[str, Any]:
    from pipeline.batch import load_step

    return load_step(batch_id(), list(results or []), get_settings())


@task(trigger_rule=TriggerRule.NONE_FAILED)
def qa_gate(loaded: dict[str, Any]) -> dict[str, Any]:
    from pipeline.batch import qa_step

    return qa_step(batch_id(), loaded, get_settings())


@task(trigger_rule=TriggerRule.NONE_FAILED)
def promote_or_rollback(checked: dict[str, Any]) -> dict[str, Any]:
    from pipeline.batch import promote_step

    return promote_step(batch_id(), checked, get_settings())


@task(trigger_rule=TriggerRule.NONE_FAILED)
def finish(outcome: dict[str, Any]) -> dict[str, Any]:
    from pipeline.batch import finish_batch

    summary = finish_batch(batch_id(), outcome["results"], outcome, get_settings())
    if summary["status"] == "rolled_back":
        raise AirflowFailException(f"batch {batch_id()} failed the QA gate and was rolled back: "
                                   f"failure rate {outcome['qa_failure_rate']:.1%}")
    return summary


# The per-document stages in order, each with its in-process task.
DOCUMENT_STAGES = [("extract", extract), ("language", language), ("structure", structure), ("chunk", chunk),
                   ("embed", embed), ("enrich", enrich)]
# The batch-level steps a container can run (`rosetta stage NAME --batch B`), each with its
# in-process task; `finish` stays in the worker (docs/deploy.md).
BATCH_STEPS = [("load", load), ("qa", qa_gate), ("promote", promote_or_rollback)]


def _container_kwargs(local_task: Any) -> dict[str, Any]:
    """The in-process task's arguments (extract's concurrency cap, a trigger rule) for its operator."""
    return {k: v for k, v in local_task.kwargs.items() if k != "task_id"}


def _stage_task(name: str, local_task: Any) -> Any:
    """The stage's in-process task, or its container operator in the docker/kubernetes mode
    (with the same task arguments, e.g. extract's max_active_tis_per_dagrun)."""
    settings = get_settings()
    if settings.execution.mode == "local":
        return local_task
    from rosetta_operators import containerized, stage_operator  # plugins/: on sys.path under Airflow

    if not containerized(name, settings):
        return local_task
    return stage_operator(name, settings, **_container_kwargs(local_task))


def _batch_task(name: str, local_task: Any, upstream: XComArg) -> XComArg:
    """The batch step after ``upstream``: its in-process task, or in the docker/kubernetes mode
    its container operator, which rebuilds its input from the batch workspace (same task id,
    trigger rule and returned dict)."""
    settings = get_settings()
    if settings.execution.mode != "local":
        from rosetta_operators import batch_operator, containerized

        if containerized(name, settings):
            operator = batch_operator(name, settings, task_id=local_task.kwargs["task_id"],
                                      **_container_kwargs(local_task))
            upstream >> operator
            return XComArg(operator)
    return local_task(upstream)


def stages(docs) -> Any:
    """Wire the seven stages after a task that returns the batch's document refs."""
    previous = docs
    for name, local_task in DOCUMENT_STAGES:
        mapped = _stage_task(name, local_task).expand(previous=previous)
        previous = mapped if isinstance(mapped, XComArg) else XComArg(mapped)  # an operator's return value
    for name, local_task in BATCH_STEPS:
        previous = _batch_task(name, local_task, previous)
    return finish(previous)
