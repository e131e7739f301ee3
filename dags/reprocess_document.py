"""reprocess_document: run one document through the seven stages again, on demand.

Trigger with ``params.document`` = a document id (see ``rosetta status``) or a file path.
The document's chunks in Weaviate are replaced only after the batch passes the QA gate.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import Param, dag, task
from rosetta_airflow import flow


@dag(
    dag_id="reprocess_document",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    default_args=flow.default_args(),
    tags=["rosetta", "ingestion", "manual"],
    params={"document": Param(type="string", minLength=1, description="Document id or source file path")},
)
def reprocess_document():
    @task
    def select(params=None) -> list[dict]:
        from pipeline.batch.discovery import reprocess_manifest
        from pipeline.config import get_settings

        manifest = reprocess_manifest(get_settings(), flow.batch_id(), params["document"])
        return [{"batch_id": manifest.batch_id, "doc_id": d.doc_id} for d in manifest.documents]

    flow.stages(select())


reprocess_document()
