"""Run Rosetta's DAGs in-process with Airflow's ``dag.test()`` (the tests, and ``rosetta
ingest``/``reprocess``, which start ``python -m rosetta_airflow.runner DAG_ID ...``).

This is the real DAG, real task instances and XComs, without a scheduler: the way Rosetta
runs on one machine. With a running scheduler, trigger the same DAGs from the UI or
``airflow dags trigger`` instead.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from pipeline.batch.recovery import OWNER_ENV
from pipeline.config import Settings, get_settings, project_home

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
    from pipeline.batch.isolation import worker
    from pipeline.stages import DOCUMENT_STAGES
    from pipeline.stores.vector_store import embedded_server_kept_up

    os.environ[OWNER_ENV] = str(os.getpid())  # this process runs the whole batch: its pid tells it is alive
    with airflow_output_to(log_path):
        if settings.limits.isolate:  # the stage worker loads the models on the other core while Airflow starts
            worker().warm(list(DOCUMENT_STAGES), settings)
        from airflow.dag_processing.dagbag import DagBag

        bag = DagBag(dag_folder=str(project_home() / "dags"))
        if bag.import_errors:
            raise RuntimeError(f"DAG import errors: {bag.import_errors}")
        # While the documents' stages run in the stage worker this process mostly waits: it
        # imports MLflow (2 s) for the finish task meanwhile.
        threading.Thread(target=importlib.import_module, args=("mlflow",), daemon=True).start()
        with embedded_server_kept_up(settings):
            dag_run = bag.get_dag(dag_id).test(run_conf=conf)
    return dag_run.run_id, str(dag_run.state)


def main(argv: list[str] | None = None) -> int:
    """``python -m rosetta_airflow.runner DAG_ID --conf JSON --result FILE [--log FILE]``: the
    run's id and state go to the result file as JSON."""
    parser = argparse.ArgumentParser(prog="rosetta_airflow.runner")
    parser.add_argument("dag_id")
    parser.add_argument("--conf", default="{}")
    parser.add_argument("--result", required=True, type=Path)
    parser.add_argument("--log", type=Path, help="Airflow's task output goes here (default: the terminal)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pipeline").setLevel(logging.INFO)
    run_id, state = run_dag(args.dag_id, json.loads(args.conf), get_settings(), args.log)
    args.result.write_text(json.dumps({"run_id": run_id, "state": state}))
    return 0


if __name__ == "__main__":
    code = main()
    # Everything is written (the run in Airflow's DB, the result file). The interpreter's teardown
    # of Airflow's heap (the execution API, the ORM, gRPC) is 3 s of native code per run on 2
    # cores that nothing needs: flush the logs and leave. The stage worker dies with this process.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
