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
        for name in ("summary.json", "qa_report.json"):
            if ws.batch_file(name).exists():
                mlflow.log_artifact(str(ws.batch_file(name)), artifact_path="batch")
