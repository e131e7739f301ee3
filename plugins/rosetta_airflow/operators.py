"""The operator of a stage under the configured execution mode (docker or kubernetes). The
operator modules are imported here only, so a ``local`` DAG parse never loads the Docker or
Kubernetes client."""

from __future__ import annotations

from pipeline.config import Settings
from rosetta_airflow.containers import docker_kwargs


def stage_operator(stage: str, settings: Settings, **task_kwargs):
    """The partial operator for ``stage`` under the configured mode; the caller ``.expand(previous=...)``s it."""
    if settings.execution.mode == "docker":
        from rosetta_airflow.docker_mode import StageDockerOperator

        return StageDockerOperator.partial(task_id=stage, stage=stage, **task_kwargs, **docker_kwargs(stage, settings))
    if settings.execution.mode == "kubernetes":
        from rosetta_airflow.kubernetes_mode import StagePodOperator, kubernetes_kwargs

        return StagePodOperator.partial(task_id=stage, stage=stage, **task_kwargs, **kubernetes_kwargs(stage, settings))
    raise ValueError(f"stage {stage} runs in-process in execution mode {settings.execution.mode!r}")


def batch_operator(step: str, settings: Settings, **task_kwargs):
    """The operator of a batch step (load, qa, promote) under the configured mode; the caller
    passes the task id and sets its upstream."""
    if settings.execution.mode == "docker":
        from rosetta_airflow.docker_mode import BatchDockerOperator

        return BatchDockerOperator(stage=step, **task_kwargs, **docker_kwargs(step, settings))
    if settings.execution.mode == "kubernetes":
        from rosetta_airflow.kubernetes_mode import BatchPodOperator, kubernetes_kwargs

        return BatchPodOperator(stage=step, **task_kwargs, **kubernetes_kwargs(step, settings))
    raise ValueError(f"step {step} runs in-process in execution mode {settings.execution.mode!r}")
