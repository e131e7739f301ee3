"""kubernetes mode: a stage's or a batch step's pod, with its image, command, resources and volumes."""

from __future__ import annotations

from typing import Any

from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from kubernetes.client import models as k8s

from pipeline.config import Settings
from rosetta_airflow.containers import image, passes_through, stage_command

XCOM_FILE = "/airflow/xcom/return.json"  # where the XCom sidecar reads the result


class StagePodOperator(KubernetesPodOperator):
    """One stage of one document in a pod; ``previous`` is the upstream XCom."""

    def __init__(self, *, stage: str, previous: dict[str, Any] | None = None, **kwargs):
        super().__init__(do_xcom_push=True, **kwargs)
        self.stage = stage
        self.previous = previous

    def for_command(self, words: list[str]) -> None:
        """The pod runs the entrypoint (words passed as positional parameters, never quoted
        into the script) and copies its last stdout line, the result, for the sidecar."""
        command = " ".join(f'"${i}"' for i in range(len(words)))
        self.arguments = [f"{command} > /tmp/result && tail -n 1 /tmp/result > {XCOM_FILE}", *words]

    def execute(self, context) -> dict[str, Any]:
        previous = dict(self.previous)
        if passes_through(previous):
            return previous
        return self.run_entrypoint(stage_command(self.stage, previous["batch_id"], previous["doc_id"]), context)

    def run_entrypoint(self, words: list[str], context) -> dict[str, Any]:
        self.for_command(words)
        return super().execute(context)


class BatchPodOperator(StagePodOperator):
    """A batch step (load, qa, promote) of the run's batch in a pod; its input comes from the
    batch workspace, not from the upstream XCom."""

    def execute(self, context) -> dict[str, Any]:
        return self.run_entrypoint(stage_command(self.stage, context["run_id"]), context)


def kubernetes_kwargs(stage: str, settings: Settings) -> dict[str, Any]:
    """Everything of a stage's pod except the document: image, command, resources, volumes."""
    cfg = settings.containers
    kube = cfg.kubernetes
    resources = settings.stage_resources(stage)
    volumes = [k8s.V1Volume(name="workspace", persistent_volume_claim=k8s.V1PersistentVolumeClaimVolumeSource(
        claim_name=kube.workspace_claim))]
    mounts = [k8s.V1VolumeMount(name="workspace", mount_path=str(settings.data_root))]
    if kube.source_claim:
        volumes.append(k8s.V1Volume(name="sources", persistent_volume_claim=k8s.V1PersistentVolumeClaimVolumeSource(
            claim_name=kube.source_claim, read_only=True)))
        mounts.append(k8s.V1VolumeMount(name="sources", mount_path=str(settings.source_dir), read_only=True))
    env_from = [k8s.V1EnvFromSource(config_map_ref=k8s.V1ConfigMapEnvSource(name=kube.env_config_map))]
    if kube.env_secret:
        env_from.append(k8s.V1EnvFromSource(secret_ref=k8s.V1SecretEnvSource(name=kube.env_secret, optional=True)))
    return dict(
        image=image(stage, settings), name=f"rosetta-{stage}", namespace=kube.namespace,
        cmds=["/bin/sh", "-c"], arguments=[], labels={"app.kubernetes.io/name": "rosetta", "rosetta/stage": stage},
        container_resources=k8s.V1ResourceRequirements(
            requests={"cpu": resources.cpu, "memory": resources.memory}, limits={"memory": resources.memory}),
        volumes=volumes, volume_mounts=mounts, env_from=env_from,
        env_vars={"ROSETTA__DATA_ROOT": str(settings.data_root), "ROSETTA__SOURCE_DIR": str(settings.source_dir)},
        service_account_name=kube.service_account, image_pull_policy=kube.image_pull_policy,
        startup_timeout_seconds=kube.startup_timeout_s, get_logs=True, on_finish_action="delete_succeeded_pod",
    )


def render_pod(stage: str, settings: Settings, batch_id: str, doc_id: str | None = None):
    """The V1Pod the kubernetes mode submits for one document's stage, or (no document) for a
    batch step (no cluster needed)."""
    operator = StagePodOperator(task_id=stage, stage=stage, **kubernetes_kwargs(stage, settings))
    operator.for_command(stage_command(stage, batch_id, doc_id))
    return operator.build_pod_request_obj(dry_run=True)
