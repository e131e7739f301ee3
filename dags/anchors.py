"""anchors: the periodic refit of the alignment maps (schedule: anchors.schedule, monthly).

Per language (mapped tasks): fit W on the anchor set's training split and evaluate it on
the held-out split, gate it against identity and the current production map, promote
it if it beats both, and re-align that language's chunks in Weaviate from their stored
raw vectors (a ``realign`` batch through the staging load, QA gate and promotion); then
one report. A rejected map stays in MLflow with its figures; production is untouched.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import Param, dag, task
from airflow.task.trigger_rule import TriggerRule
from rosetta_airflow import flow

from pipeline.config import get_settings


@dag(
    dag_id="anchors",
    schedule=get_settings().anchors.schedule,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    default_args=flow.default_args(),
    tags=["rosetta", "alignment"],
    params={
        "languages": Param([], type="array", description="Languages to refit (default: every non-reference one)"),
        "anchor_set": Param("", type="string", description="Anchor set version (default: anchors.version)"),
    },
)
def anchors():
    @task
    def languages(params=None) -> list[str]:
        settings = get_settings()
        return list(params["languages"]) or [lang for lang in settings.languages if lang != settings.reference_language]

    @task(max_active_tis_per_dagrun=1)
    def fit_and_evaluate(lang: str, params=None) -> dict:
        from pipeline.alignment.fitting import fit_candidate

        return fit_candidate(get_settings(), lang, params["anchor_set"] or None)

    @task
    def gate(fitted: dict) -> dict:
        from pipeline.alignment.fitting import gate as run_gate

        return {**fitted, **run_gate(get_settings(), fitted["lang"], fitted["version"])}

    @task
    def promote(decided: dict) -> dict:
        from pipeline.alignment.fitting import APPROVED
        from pipeline.alignment.fitting import promote as promote_version

        if decided["decision"] != APPROVED:
            return {**decided, "promoted": False}
        return {**decided, **promote_version(get_settings(), decided["lang"], decided["version"])}

    @task(max_active_tis_per_dagrun=1)
    def realign(promoted: dict) -> dict:
        from pipeline.alignment.realign import realign_language

        if not promoted["promoted"]:
            return promoted
        batch = f"{flow.batch_id()}.realign-{promoted['lang']}"
        return {**promoted, "realign": realign_language(get_settings(), promoted["lang"], batch)}

    @task(trigger_rule=TriggerRule.NONE_FAILED)
    def report(outcomes: list[dict]) -> dict:
        from pipeline.alignment.evaluation import report as write_report

        return write_report(get_settings(), flow.batch_id(), list(outcomes))

    report(realign.expand(promoted=promote.expand(decided=gate.expand(fitted=fit_and_evaluate.expand(lang=languages())))))


anchors()
