"""forget_document: erase one document everywhere Rosetta copied it, on request.

Trigger with ``params.document`` = a document id or a path it is known by, and
``params.reason`` (kept in the erasure log). The work is pipeline.batch.erasure.forget, the
function ``rosetta forget`` calls.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import Param, dag, task
from rosetta_airflow import flow


@dag(
    dag_id="forget_document",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    default_args=flow.default_args(),
    tags=["rosetta", "erasure", "manual"],
    params={
        "document": Param(type="string", minLength=1, description="Document id or a path it is known by"),
        "reason": Param(type="string", minLength=1, description="Why it is erased (kept in the erasure log)"),
    },
)
def forget_document():
    @task
    def forget(params=None) -> dict:
        from pipeline.batch.erasure import forget as erase
        from pipeline.config import get_settings

        return erase(get_settings(), params["document"], params["reason"])

    forget()


forget_document()
