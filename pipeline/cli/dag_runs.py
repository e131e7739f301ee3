"""DAG runs from the command line, without importing Airflow here: ``rosetta ingest`` and
``rosetta reprocess`` start ``python -m rosetta_airflow.runner`` (plugins/), which runs the real
DAG with Airflow's ``dag.test()``, while this process keeps the embedded Weaviate up for it. The
server starts beside the runner, not before it: the runner's first seconds go to importing
Airflow, and its tasks wait for the server when they first need it.

Crash-only: on SIGTERM or Ctrl-C the runner's process group (the runner and its stage
worker) gets SIGTERM, then SIGKILL after ``GRACE_S``; nothing is cleaned up on the way out,
the next run recovers the batch (pipeline.batch.recovery). ``Interrupted`` tells the command.

The operator at the command line may name any file: the paths of the run's params join its
source roots (``allowed_source_roots``, through the child's environment). A DAG triggered
any other way stays confined to the configured roots (pipeline/batch/discovery.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from pipeline.batch.isolation import die_with_parent
from pipeline.cli.errors import Interrupted
from pipeline.config import Settings, project_home
from pipeline.stores.embedded_server import SERVER_FROM_PARENT_ENV
from pipeline.stores.vector_store import embedded_server_kept_up

GRACE_S = 5  # between SIGTERM and SIGKILL of the runner's process group


def _stop_group(child: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            return
        try:
            child.wait(timeout=GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def run_child(command: list[str], env: dict[str, str], beside: AbstractContextManager[Any] | None = None) -> int:
    """Run the runner in its own process group, inside ``beside`` (entered once the child has
    started); a SIGTERM or SIGINT here stops the whole group within seconds and raises
    ``Interrupted``."""
    # Its own group, so Ctrl-C reaches this process only; and it dies with this one (kill -9).
    child = subprocess.Popen(command, env=env, start_new_session=True, preexec_fn=die_with_parent)
    received: list[int] = []

    def on_signal(signum, frame) -> None:
        received.append(signum)
        _stop_group(child)

    saved = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        with beside or nullcontext():
            code = child.wait()
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        if child.poll() is None:  # an exception on the way: leave nothing behind
            _stop_group(child)
    if received:
        raise Interrupted(received[0])
    return code


def operator_roots(conf: dict[str, Any], settings: Settings) -> list[str]:
    """The configured extra roots plus the files and folders the operator named in ``conf``."""
    document = conf.get("document")  # a doc_id or a path
    named = [*conf.get("paths", []), *([document] if document and Path(document).exists() else [])]
    return [*map(str, settings.allowed_source_roots), *(str(Path(p).expanduser().resolve()) for p in named)]


def run_dag(dag_id: str, conf: dict[str, Any], settings: Settings, log_path: Path | None = None) -> tuple[str, str]:
    """Run one DAG to completion; returns (run_id, final state)."""
    env = os.environ.copy()
    env["ROSETTA__ALLOWED_SOURCE_ROOTS"] = json.dumps(operator_roots(conf, settings))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(project_home() / "plugins"), env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory(prefix="rosetta-dag-run-") as tmp:
        result = Path(tmp) / "result.json"
        command = [sys.executable, "-m", "rosetta_airflow.runner", dag_id, "--conf", json.dumps(conf),
                   "--result", str(result), *(["--log", str(log_path)] if log_path else [])]
        if not settings.weaviate.url:
            env[SERVER_FROM_PARENT_ENV] = "1"
        code = run_child(command, env, beside=embedded_server_kept_up(settings))
        if not result.exists():
            where = f"; task logs: {log_path}" if log_path else ""
            raise RuntimeError(f"DAG {dag_id} did not run to the end (runner exit status {code}){where}")
        outcome = json.loads(result.read_text())
    return outcome["run_id"], outcome["state"]
