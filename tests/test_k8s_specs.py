"""The kubernetes execution mode: the pod each stage's and batch step's task submits, rendered
without a cluster and validated against the Kubernetes API schema (kubernetes-validate's
offline JSON schemas, strict: no unknown fields), with the image, command, resources and
volumes the stage needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins"))  # Airflow's plugins folder (on sys.path under Airflow)
PREVIOUS = {"batch_id": "manual__2026-11-30T12:00:00.123456+00:00", "doc_id": "ja-maint-guide-1a2b3c4d"}


@pytest.fixture
def kube_settings(settings, monkeypatch):
    from pipeline.config import get_settings

    monkeypatch.setenv("ROSETTA__EXECUTION__MODE", "kubernetes")
    monkeypatch.setenv("ROSETTA__CONTAINERS__KUBERNETES__SOURCE_CLAIM", "rosetta-sources")
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


def _stages() -> list[str]:
    """Every stage that runs in a container: the per-document stages and the batch steps but finish."""
    from pipeline.stages import CONTAINER_STAGES

    return [s.name for s in CONTAINER_STAGES]


def is_batch_step(stage: str) -> bool:
    from pipeline.stages import stage as stage_named

    return stage_named(stage).kind == "batch"


def _schema_version() -> str:
    """The Kubernetes minor version the installed client (vNN = Kubernetes 1.NN) speaks."""
    from importlib.metadata import version

    return f"1.{version('kubernetes').split('.')[0]}.0"


def rendered(stage: str, settings) -> dict:
    """The pod of one document's stage, or of a batch step (no document)."""
    from kubernetes.client import ApiClient

    from rosetta_airflow.kubernetes_mode import render_pod

    doc_id = None if is_batch_step(stage) else PREVIOUS["doc_id"]
    return ApiClient().sanitize_for_serialization(render_pod(stage, settings, PREVIOUS["batch_id"], doc_id))


def stage_container(pod: dict) -> dict:
    [container] = [c for c in pod["spec"]["containers"] if c["name"] == "base"]
    return container


@pytest.mark.parametrize("stage", _stages())
def test_pod_spec_is_valid_against_the_api_schema(stage, kube_settings):
    import kubernetes_validate

    pod = rendered(stage, kube_settings)
    assert pod["apiVersion"] == "v1" and pod["kind"] == "Pod"
    kubernetes_validate.validate(pod, _schema_version(), strict=True)  # raises on any violation


@pytest.mark.parametrize("stage", _stages())
def test_pod_has_the_stage_image_command_resources_and_volumes(stage, kube_settings):
    from pipeline import pipeline_version

    settings = kube_settings
    pod = rendered(stage, settings)
    assert pod["metadata"]["namespace"] == settings.containers.kubernetes.namespace
    container = stage_container(pod)
    image = "batch" if is_batch_step(stage) else stage  # the batch steps share one image
    assert container["image"] == f"localhost/rosetta-{image}:{pipeline_version()}"
    assert container["command"] == ["/bin/sh", "-c"]
    document = [] if is_batch_step(stage) else ["--doc", PREVIOUS["doc_id"]]
    assert container["args"][1:] == ["rosetta", "stage", stage, "--batch", PREVIOUS["batch_id"], *document]
    wanted = settings.stage_resources(stage)
    assert container["resources"] == {"requests": {"cpu": wanted.cpu, "memory": wanted.memory},
                                      "limits": {"memory": wanted.memory}}
    claims = {v["name"]: v["persistentVolumeClaim"] for v in pod["spec"]["volumes"] if "persistentVolumeClaim" in v}
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert claims["workspace"]["claimName"] == settings.containers.kubernetes.workspace_claim
    assert mounts["workspace"]["mountPath"] == str(settings.data_root)
    assert claims["sources"] == {"claimName": "rosetta-sources", "readOnly": True}
    assert mounts["sources"] == {"name": "sources", "mountPath": str(settings.source_dir), "readOnly": True}
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["ROSETTA__DATA_ROOT"] == str(settings.data_root)
    assert {"configMapRef": {"name": settings.containers.kubernetes.env_config_map}} in container["envFrom"]
    # the result comes back through the XCom sidecar, which shares /airflow/xcom
    assert any(c["name"] == "airflow-xcom-sidecar" for c in pod["spec"]["containers"])


def test_pod_script_passes_ids_verbatim_and_keeps_the_last_line(kube_settings, tmp_path):
    """Run the pod's /bin/sh script with a stand-in entrypoint: the ids reach it unquoted and
    untouched, its last stdout line is what the sidecar reads, and a failure stays a failure."""
    from rosetta_airflow.kubernetes_mode import XCOM_FILE

    container = stage_container(rendered("chunk", kube_settings))
    assert container["command"] == ["/bin/sh", "-c"]
    script, *words = container["args"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "rosetta"
    fake.write_text('#!/bin/sh\necho "chunk: ok" >&2\necho "progress line"\n'
                    'python3 -c \'import json, sys; print(json.dumps(sys.argv[1:]))\' "$@"\n'
                    '[ -z "$FAIL" ] || exit 3\n')
    fake.chmod(0o755)
    result = tmp_path / "return.json"
    script = script.replace(XCOM_FILE, str(result))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    subprocess.run(["/bin/sh", "-c", script, *words], check=True, env=env)
    assert json.loads(result.read_text()) == words[1:]
    result.unlink()
    failed = subprocess.run(["/bin/sh", "-c", script, *words], env={**env, "FAIL": "1"})
    assert failed.returncode == 3 and not result.exists()


def test_every_stage_task_is_a_pod_in_kubernetes_mode(kube_settings):
    from airflow.dag_processing.dagbag import DagBag

    from pipeline.stages import BATCH_STEPS, DOCUMENT_STAGES, FINISH
    from rosetta_airflow.containers import image
    from rosetta_airflow.runner import prepare_airflow

    prepare_airflow()
    bag = DagBag(dag_folder=str(ROOT / "dags"))
    assert bag.import_errors == {}
    for dag_id in ("corpus_refresh", "reprocess_document"):
        dag = bag.get_dag(dag_id)
        for stage in (s.name for s in DOCUMENT_STAGES):
            task = dag.get_task(stage)
            assert task.operator_class.__name__ == "StagePodOperator", (dag_id, stage)
            assert task.partial_kwargs["image"] == image(stage, kube_settings)
        assert dag.get_task("extract").partial_kwargs["max_active_tis_per_dagrun"] == 2
        upstream = "enrich"
        for step in (s.name for s in BATCH_STEPS if s.name != FINISH):  # same task ids and trigger rules
            task = dag.get_task(step)
            assert type(task).__name__ == "BatchPodOperator" and task.stage == step, (dag_id, step)
            assert task.image == image(step, kube_settings) and task.trigger_rule == "none_failed"
            assert task.upstream_task_ids == {upstream}
            upstream = task.task_id
        assert dag.get_task("finish").upstream_task_ids == {upstream}
        assert type(dag.get_task("finish")).__name__ != "BatchPodOperator"  # bookkeeping stays in the worker
