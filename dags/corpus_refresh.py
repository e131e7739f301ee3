"""corpus_refresh: the scheduled ingestion of new and changed documents.

Scans the configured source folder (or the paths given in ``params``), skips every
document whose sha256 is unchanged since it was last processed, and runs the stages of
pipeline.stages over the rest: one mapped task per document per stage, then load, the QA
gate and promotion once per batch. Moved files only get their path updated; documents whose
files are gone are deleted at promotion, unless too many vanished at once
(``sync.max_deleted_fraction``; ``allow_mass_deletion`` overrides).
"""

from __future__ import annotations

import pendulum
from airflow.sdk import Param, dag, task
from rosetta_airflow import flow

from pipeline.config import get_settings


@dag(
    dag_id="corpus_refresh",
    schedule=get_settings().airflow.corpus_refresh_schedule,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    default_args=flow.default_args(),
    tags=["rosetta", "ingestion"],
    params={
        "paths": Param([], type="array", description="Files or folders to ingest instead of the source folder"),
        "force": Param(False, type="boolean", description="Reprocess documents even when unchanged"),
        "allow_mass_deletion": Param(False, type="boolean",
                                     description="Delete vanished documents even past sync.max_deleted_fraction"),
    },
)
def corpus_refresh():
    @task
    def discover(params=None) -> list[dict]:
        from pipeline.batch.discovery import discover as discover_documents

        manifest = discover_documents(get_settings(), flow.batch_id(), params["paths"] or None, params["force"],
                                      params.get("allow_mass_deletion", False))
        return [{"batch_id": manifest.batch_id, "doc_id": d.doc_id} for d in manifest.documents]

    flow.stages(discover())


corpus_refresh()
