"""The stages as containers: Airflow operators per execution mode.

``rosetta_airflow.flow`` asks ``rosetta_airflow.operators`` for a per-document stage's task and
for a batch step's (load, qa, promote) when ``execution.mode`` is
``docker`` or ``kubernetes`` (``local`` keeps the in-process ``@task``), so the DAG files are
the same in every mode. A per-document operator runs the stage's image with the container
entrypoint ``rosetta stage NAME --batch B --doc D`` and returns its ``StageResult`` dict as the
XCom; a batch step runs ``rosetta stage NAME --batch B`` in the ``batch`` image, which rebuilds
the step's input from the batch workspace and prints the dict the in-process task returns.
Either way the XCom is exactly the in-process task's; inputs and outputs go through the
batch workspace.

* docker: ``DockerOperator`` against a Docker API socket (podman's here, docs/decisions.md section 4),
  the data root bound at the same path, the document's source file bound read-only, the
  host network (the stage reaches the worker's embedded Weaviate/MLflow on 127.0.0.1).
* kubernetes: ``KubernetesPodOperator`` with the stage's image, command, resources, the
  workspace PVC mounted at the data root (and the source PVC, if any) and the ROSETTA__*
  settings from a ConfigMap/Secret; the result comes back through the XCom sidecar.

A document an earlier stage quarantined passes through without starting a container, as
``pipeline.batch.runner.run_stage`` does in-process. Operator modules are imported here only, so a
``local`` DAG parse never loads the Docker or Kubernetes client.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pipeline import pipeline_version
from pipeline.config import Settings
from pipeline.stores.secrets import secrets_folder

ENTRYPOINT = ["rosetta", "stage"]



def image(stage: str, settings: Settings) -> str:
    """<registry>/<prefix><stage or batch>:<tag>; the tag defaults to the pipeline version, as
    `make images` tags."""
    from pipeline.stages import stage as stage_named

    cfg = settings.containers
    return f"{cfg.registry}/{cfg.image_prefix}{stage_named(stage).image}:{cfg.tag or pipeline_version()}"


def containerized(stage: str, settings: Settings) -> bool:
    """Whether this stage runs in a container under the configured execution mode."""
    if settings.execution.mode == "local":
        return False
    return settings.containers.stages is None or stage in settings.containers.stages


def stage_command(stage: str, batch_id: str, doc_id: str | None = None) -> list[str]:
    """The entrypoint for one document's stage, or (no document) for a batch step."""
    return [*ENTRYPOINT, stage, "--batch", batch_id, *(["--doc", doc_id] if doc_id else [])]


def source_path(settings: Settings, previous: dict[str, Any]) -> str | None:
    """The document's source file (the extract stage reads it)."""
    from pipeline.workspace import Workspace

    return Workspace(settings, previous["batch_id"]).source_path(previous["doc_id"])


def passes_through(previous: dict[str, Any]) -> bool:
    """A result (not a bare DocRef) of a quarantined document: later stages leave it alone."""
    return "stage" in previous and previous.get("status") == "quarantined"


def last_json_line(lines: list[str] | str | None) -> dict[str, Any]:
    """The StageResult the entrypoint prints as its last stdout line; stderr shares the stream
    (the stage worker's progress line can land right after the JSON, on the same line), so take
    the JSON object that opens the last line starting with one."""
    lines = [lines] if isinstance(lines, str) else list(lines or [])
    for line in reversed(lines):
        line = line.strip()
        if line.startswith("{"):
            return json.JSONDecoder().raw_decode(line)[0]
    raise ValueError(f"the stage printed no StageResult JSON line; last output: {lines[-5:]}")


MLFLOW_CREDENTIALS = ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN")


def container_environment(settings: Settings) -> dict[str, str]:
    """The worker's Rosetta settings for the container: every ROSETTA__* override plus the
    resolved paths (relative ones would resolve against the image's working folder)."""
    env = {k: v for k, v in os.environ.items() if k.startswith("ROSETTA__")}
    env.update(ROSETTA__DATA_ROOT=str(settings.data_root), ROSETTA__SOURCE_DIR=str(settings.source_dir),
               MLFLOW_DISABLE_TELEMETRY="true")
    env.pop("ROSETTA__EXECUTION__MODE", None)  # the container runs its stage in-process
    # The version the image is tagged with, stamped on every chunk: podman's layer cache can keep
    # an older build's ENV in an image retagged for unchanged code.
    env["ROSETTA_PIPELINE_VERSION"] = settings.containers.tag or pipeline_version()
    env.update({k: v for k, v in os.environ.items() if k in MLFLOW_CREDENTIALS})  # embed reads the registry
    if config_file := os.environ.get("ROSETTA_CONFIG"):
        env["ROSETTA_CONFIG"] = str(Path(config_file).resolve())
    return env


def docker_mounts(settings: Settings, source: str | None) -> list[dict[str, Any]]:
    """What a stage container mounts: the data root (a named volume where the workers keep it
    in one, else the host folder at the same path), the document's source file read-only
    unless it lies in the data root, the user config file, and containers.extra_mounts."""
    cfg = settings.containers
    data_root = str(settings.data_root)
    if cfg.workspace_volume:
        mounts = [dict(source=cfg.workspace_volume, target=data_root, type="volume", read_only=False)]
    else:
        mounts = [dict(source=data_root, target=data_root, type="bind", read_only=False)]
    if source and not Path(source).is_relative_to(settings.data_root):
        mounts.append(dict(source=source, target=source, type="bind", read_only=True))
    secrets = secrets_folder(settings)  # the embedded Weaviate's key, when kept outside the data root
    if secrets.exists() and not secrets.is_relative_to(settings.data_root):
        mounts.append(dict(source=str(secrets), target=str(secrets), type="bind", read_only=True))
    if config_file := os.environ.get("ROSETTA_CONFIG"):
        path = str(Path(config_file).resolve())
        mounts.append(dict(source=path, target=path, type="bind", read_only=True))
    for extra in cfg.extra_mounts:
        path = str(Path(extra).expanduser().resolve())
        mounts.append(dict(source=path, target=path, type="bind", read_only=False))
    return mounts


def docker_kwargs(stage: str, settings: Settings) -> dict[str, Any]:
    return dict(image=image(stage, settings), docker_url=settings.containers.docker_url,
                network_mode=settings.containers.network_mode, mount_tmp_dir=False, auto_remove="success")
