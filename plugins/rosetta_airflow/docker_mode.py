"""docker mode: a stage's or a batch step's container through the Docker API (podman's socket here)."""

from __future__ import annotations

from typing import Any

from airflow.providers.docker.operators.docker import DockerOperator
from docker.types import Mount

from rosetta_airflow.containers import (
    ENTRYPOINT,
    container_environment,
    docker_mounts,
    last_json_line,
    passes_through,
    source_path,
    stage_command,
)


class StageDockerOperator(DockerOperator):
    """One stage of one document in a container; ``previous`` is the upstream XCom."""

    def __init__(self, *, stage: str, previous: dict[str, Any] | None = None, **kwargs):
        super().__init__(command=[*ENTRYPOINT, stage], xcom_all=True, **kwargs)
        self.stage = stage
        self.previous = previous

    def execute(self, context) -> dict[str, Any]:
        from pipeline.config import get_settings

        previous = dict(self.previous)
        if passes_through(previous):
            return previous
        command = stage_command(self.stage, previous["batch_id"], previous["doc_id"])
        return self.run_entrypoint(command, source_path(get_settings(), previous), context)

    def run_entrypoint(self, command: list[str], source: str | None, context) -> dict[str, Any]:
        """Run ``command`` in the image with the workspace (and ``source``) mounted; its last JSON line."""
        from pipeline.config import get_settings

        settings = get_settings()
        self.command = command
        self.mounts = [Mount(**mount) for mount in docker_mounts(settings, source)]
        self._private_environment = container_environment(settings)
        return last_json_line(super().execute(context))


class BatchDockerOperator(StageDockerOperator):
    """A batch step (load, qa, promote) of the run's batch in a container; its input comes
    from the batch workspace, not from the upstream XCom."""

    def execute(self, context) -> dict[str, Any]:
        return self.run_entrypoint(stage_command(self.stage, context["run_id"]), None, context)
