"""Run Rosetta's DAGs in-process with Airflow's ``dag.test()`` (used by the CLI and tests).

This is the real DAG, real task instances and XComs, without a scheduler: the way
``rosetta ingest`` and ``rosetta reprocess`` work on one machine. With a running
scheduler, trigger the same DAGs from the UI or ``airflow dags trigger`` instead.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from pipeline.config import Settings, project_home

log = logging.getLogger(__name__)


def airflow_environment() -> dict[str, str]:
    """The environment Airflow needs to find airflow.cfg, the DAGs and its metadata DB."""
    home = project_home()
    return {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW_CONFIG": str(home / "airflow.cfg"),
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
    }


def prepare_airflow() -> None:
    """Set the environment (before airflow is imported) and migrate the metadata DB once."""
    for key, value in airflow_environment().items():
        os.environ.setdefault(key, value)
    conn = os.environ.get("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN",
                          f"sqlite:///{os.environ['AIRFLOW_HOME']}/.airflow/airflow.db")
    database = Path(conn.removeprefix("sqlite:///")) if conn.startswith("sqlite:///") else None
    if database is None or not database.exists():
        if database is not None:
            database.parent.mkdir(parents=True, exist_ok=True)
        airflow = Path(sys.executable).with_name("airflow")
        migrated = subprocess.run([str(airflow), "db", "migrate"], capture_output=True, text=True, env=os.environ.copy())
        if migrated.returncode != 0:
            raise RuntimeError(f"airflow db migrate failed:\n{migrated.stderr[-2000:]}")


@contextmanager
def embedded_weaviate(settings: Settings) -> Iterator[None]:
    """Keep one embedded Weaviate up for a whole DAG run (tasks then connect to it)
    instead of each task starting and stopping its own."""
    if settings.weaviate.url:
        yield
        return
    from pipeline import store

    with store.connect(settings):
        yield


@contextmanager
def airflow_output_to(log_path: Path | None) -> Iterator[None]:
    """Send Airflow's (verbose) task output to a file; keep the pipeline's one-line
    progress messages on the terminal. ``None`` leaves everything on the terminal."""
    if log_path is None:
        yield
        return
    log_path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved_out, saved_err = os.dup(1), os.dup(2)
    terminal = os.fdopen(os.dup(saved_out), "w", buffering=1)
    handler = logging.StreamHandler(terminal)
    handler.setFormatter(logging.Formatter("  %(message)s"))
    handler.setLevel(logging.INFO)
    progress = logging.getLogger("pipeline.progress")
    progress.addHandler(handler)
    with open(log_path, "ab") as log_file:
        os.dup2(log_file.fileno(), 1)
        os.dup2(log_file.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved_out, 1)
            os.dup2(saved_err, 2)
            os.close(saved_out)
            os.close(saved_err)
            progress.removeHandler(handler)
            terminal.close()


def run_dag(dag_id: str, conf: dict[str, Any], settings: Settings, log_path: Path | None = None) -> tuple[str, str]:
    """Run one DAG to completion; returns (run_id, final state)."""
    prepare_airflow()
    from airflow.dag_processing.dagbag import DagBag

    with airflow_output_to(log_path):
        bag = DagBag(dag_folder=str(project_home() / "dags"))
        if bag.import_errors:
            raise RuntimeError(f"DAG import errors: {bag.import_errors}")
        with embedded_weaviate(settings):
            dag_run = bag.get_dag(dag_id).test(run_conf=conf)
    return dag_run.run_id, str(dag_run.state)
