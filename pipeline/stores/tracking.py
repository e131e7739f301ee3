"""MLflow: the tracking store (sqlite + local artifacts by default, a server by URL) and the
model registry of the alignment maps. Every batch is a run: the audit trail of which alignment
version produced which vectors.
"""

from __future__ import annotations

import os
from typing import Any

from pipeline import pipeline_version
from pipeline.config import Settings
from pipeline.workspace import Workspace

BATCH_ARTIFACTS = ("summary.json", "qa_report.json")  # a batch's files each batch run holds


def configure_mlflow(settings: Settings):
    """Point MLflow at the configured store and return a client."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    import mlflow
    from mlflow.tracking import MlflowClient

    settings.data_root.mkdir(parents=True, exist_ok=True)
    mlflow.set_tracking_uri(settings.mlflow_tracking_uri)
    mlflow.set_registry_uri(settings.mlflow_tracking_uri)
    if mlflow.get_experiment_by_name(settings.mlflow.experiment) is None:
        artifact_location = None
        if not settings.mlflow.tracking_uri:
            artifact_location = settings.mlflow_artifact_root.as_uri()
        try:
            mlflow.create_experiment(settings.mlflow.experiment, artifact_location=artifact_location)
        except mlflow.exceptions.MlflowException:
            pass  # created concurrently by another task
    mlflow.set_experiment(settings.mlflow.experiment)
    return MlflowClient(tracking_uri=settings.mlflow_tracking_uri, registry_uri=settings.mlflow_tracking_uri)


def log_batch(batch_id: str, summary: dict[str, Any], ws: Workspace, settings: Settings) -> None:
    """One MLflow run per batch: the audit of which alignment version produced which vectors."""
    import mlflow

    configure_mlflow(settings)
    with mlflow.start_run(run_name=f"batch {batch_id}", tags={"rosetta.kind": "batch", "rosetta.batch_id": batch_id,
                                                              "rosetta.status": summary["status"]}):
        mlflow.log_params({"pipeline_version": pipeline_version(), "embedder": settings.embedding.model,
                           **{f"alignment_version.{lang}": v for lang, v in summary["alignment_versions"].items()}})
        mlflow.log_metrics({k: float(summary[k] or 0) for k in ("processed", "loaded", "quarantined", "chunks",
                                                                 "skipped_unchanged")})
        for name in BATCH_ARTIFACTS:
            if ws.batch_file(name).exists():
                mlflow.log_artifact(str(ws.batch_file(name)), artifact_path="batch")


def relog_batch_artifacts(settings: Settings, batch_ids: list[str]) -> int:
    """Log the batches' summary and QA report again over the copies their runs hold (after an
    erasure rewrote them); returns the runs rewritten."""
    if not batch_ids:
        return 0
    client = configure_mlflow(settings)
    experiment = client.get_experiment_by_name(settings.mlflow.experiment)
    rewritten = 0
    for batch_id in batch_ids:
        ws = Workspace(settings, batch_id)
        for run in client.search_runs([experiment.experiment_id], f"tags.`rosetta.batch_id` = '{batch_id}'"):
            for name in BATCH_ARTIFACTS:
                if ws.batch_file(name).exists():
                    client.log_artifact(run.info.run_id, str(ws.batch_file(name)), artifact_path="batch")
            rewritten += 1
    return rewritten
