"""docker mode: a stage's container through the Docker API (podman's socket here)."""

from __future__ import annotations

from typing import Any

from airflow.providers.docker.operators.docker import DockerOperator
from docker.types import Mount

from rosetta_operators import (ENTRYPOINT, container_environment, docker_mounts, last_json_line, passes_through,
                               source_path, stage_command)


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
        settings = get_settings()
        self.command = stage_command(self.stage, previous)
        self.mounts = [Mount(**mount) for mount in docker_mounts(settings, source_path(settings, previous))]
        self._private_environment = container_environment(settings)
        return last_json_line(super().execute(context))
