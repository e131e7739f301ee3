"""Airflow with the CeleryExecutor on this machine (scripts/airflow-celery.sh: PostgreSQL, Redis,
the API server, the scheduler, the DAG processor and two Celery workers): corpus_refresh
triggered through the scheduler spreads its mapped tasks over both workers, and a run in which
one worker is killed in the middle of the batch completes through retries with the same chunks
in Weaviate as the clean run: same uuids (once the batch id in them is the clean run's), the
same properties but the batch id, the same vectors, nothing doubled.

Real processes throughout; the workers reach the embedded Weaviate this test process keeps up.
Slow (two DAG runs, a heartbeat timeout and a retry): `make test-scale`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import free_port, sample_guides_in

from pipeline.stores import vector_store as store

pytestmark = [pytest.mark.scale, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "airflow-celery.sh"
LANGS = ("en", "de", "es", "zh")
RUN_TIMEOUT_S = 1500


class Celery:
    """The script's set-up in a temporary folder, and SQL on its metadata DB."""

    def __init__(self, state: Path, env: dict[str, str]):
        self.state, self.env = state, env

    def script(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([str(SCRIPT), *args], env=self.env, capture_output=True, text=True, timeout=timeout)

    def airflow(self, *args: str) -> subprocess.CompletedProcess:
        command = f'eval "$({SCRIPT} env)" && exec {ROOT}/.venv/bin/airflow "$@"'
        return subprocess.run(["bash", "-c", command, "airflow", *args], env=self.env, capture_output=True,
                              text=True, timeout=300)

    def query(self, sql: str, **params) -> list[tuple]:
        from sqlalchemy import create_engine, text

        engine = create_engine((self.state / "secrets" / "sql_alchemy_conn").read_text())
        try:
            with engine.connect() as connection:
                return [tuple(row) for row in connection.execute(text(sql), params)]
        finally:
            engine.dispose()

    def task_instances(self, run_id: str) -> list[dict]:
        rows = self.query("SELECT task_id, map_index, try_number, state, hostname FROM task_instance "
                          "WHERE dag_id = 'corpus_refresh' AND run_id = :run_id", run_id=run_id)
        return [dict(zip(("task_id", "map_index", "try_number", "state", "hostname"), row)) for row in rows]

    def run_state(self, run_id: str) -> str | None:
        rows = self.query("SELECT state FROM dag_run WHERE dag_id = 'corpus_refresh' AND run_id = :run_id", run_id=run_id)
        return rows[0][0] if rows else None

    def trigger(self, run_id: str, conf: dict) -> None:
        done = self.airflow("dags", "trigger", "corpus_refresh", "--run-id", run_id, "--conf", json.dumps(conf))
        assert done.returncode == 0, done.stdout + done.stderr

    def wait(self, run_id: str, until=None) -> str:
        """Poll until the run ends (or ``until()`` is true); return its state."""
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while time.monotonic() < deadline:
            state = self.run_state(run_id)
            if state in ("success", "failed") or (until and until()):
                return state
            time.sleep(2)
        raise AssertionError(f"run {run_id} still {self.run_state(run_id)} after {RUN_TIMEOUT_S} s: "
                             f"{self.task_instances(run_id)}")

    def worker_pid(self, name: str) -> int:
        return int((self.state / f"{name}.pid").read_text())


@pytest.fixture(scope="module")
def celery(settings):
    # As root PostgreSQL runs as `postgres`, which must reach its folder: not under pytest's 0700 tmp.
    state = Path(tempfile.mkdtemp(prefix="rosetta-celery-"))
    state.chmod(0o755)
    env = {**os.environ, "AIRFLOW_CELERY_DIR": str(state),
           "AIRFLOW_CELERY_PG_PORT": str(free_port()), "AIRFLOW_CELERY_REDIS_PORT": str(free_port()),
           "AIRFLOW_CELERY_API_PORT": str(free_port()),
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "plugins"), os.environ.get("PYTHONPATH", "")]),
           # only the runs this test triggers; a killed task is noticed after 60 s, retried after 5
           "ROSETTA__AIRFLOW__CORPUS_REFRESH_SCHEDULE": "", "ROSETTA__ANCHORS__SCHEDULE": "",
           "ROSETTA__AIRFLOW__RETRIES": "2", "ROSETTA__AIRFLOW__RETRY_DELAY_S": "5",
           "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "60"}
    setup = Celery(state, env)
    try:
        started = setup.script("start")
        assert started.returncode == 0, started.stdout + started.stderr
        deadline = time.monotonic() + 300
        while not setup.query("SELECT 1 FROM serialized_dag WHERE dag_id = 'corpus_refresh'"):
            assert time.monotonic() < deadline, (state / "logs" / "dag-processor.out").read_text()[-3000:]
            time.sleep(2)
        status = setup.script("status")
        assert status.returncode == 0, status.stdout
        yield setup
    finally:
        print(setup.script("stop").stdout)
        subprocess.run(["rm", "-rf", str(state)], check=False)


def chunks_by_position(client, settings) -> dict[tuple[str, int], tuple[str, dict, list[float]]]:
    objects = list(store.iterate_objects(store.live_collection(client, settings)))
    assert len(objects) == len({u for u, _, _ in objects}), "a uuid came back twice"
    by_position = {(p["doc_id"], p["chunk_index"]): (u, p, v) for u, p, v in objects}
    assert len(by_position) == len(objects), "two objects hold the same chunk"
    for uuid, properties, _ in objects:
        assert uuid == store.chunk_uuid(properties)
    return by_position


def test_corpus_refresh_on_two_celery_workers_survives_a_killed_worker(celery, settings, weaviate_server,
                                                                       sample_corpus):
    sample_guides_in(settings.source_dir, sample_corpus, LANGS)
    worker = lambda ti: (ti["hostname"] or "").split("@")[0]  # noqa: E731  (worker<i>@<host>)

    started = time.monotonic()
    celery.trigger("celery-clean", {})
    assert celery.wait("celery-clean") == "success", celery.task_instances("celery-clean")
    clean_s = time.monotonic() - started
    tis = celery.task_instances("celery-clean")
    mapped = [ti for ti in tis if ti["map_index"] >= 0]
    assert len(mapped) == 6 * len(LANGS)
    assert {worker(ti) for ti in mapped} == {"worker1", "worker2"}, tis  # both ran document stages
    clean = chunks_by_position(weaviate_server, settings)
    assert {doc for doc, _ in clean} and len(clean) > 60

    # Again with force: every document reprocessed; worker2 killed (with its task) while it
    # runs one of them.
    started = time.monotonic()
    celery.trigger("celery-killed", {"force": True})
    victim: list[dict] = []

    def worker2_busy() -> bool:
        victim[:] = [ti for ti in celery.task_instances("celery-killed")
                     if ti["state"] == "running" and worker(ti) == "worker2" and ti["map_index"] >= 0]
        return bool(victim)

    assert celery.wait("celery-killed", until=worker2_busy) == "running", "the run ended before worker2 got a task"
    os.killpg(celery.worker_pid("worker2"), signal.SIGKILL)
    assert celery.wait("celery-killed") == "success", celery.task_instances("celery-killed")
    killed_s = time.monotonic() - started
    tis = {(ti["task_id"], ti["map_index"]): ti for ti in celery.task_instances("celery-killed")}
    retried = tis[(victim[0]["task_id"], victim[0]["map_index"])]
    assert retried["try_number"] >= 2 and worker(retried) == "worker1", retried
    print(f"clean run {clean_s:.0f} s; run with {victim[0]['task_id']}[{victim[0]['map_index']}] killed on "
          f"worker2 and retried on worker1: {killed_s:.0f} s; {len(clean)} chunks")

    after = chunks_by_position(weaviate_server, settings)
    assert after.keys() == clean.keys()
    for position, (uuid, properties, vector) in clean.items():
        new_uuid, new_properties, new_vector = after[position]
        assert new_properties["batch_id"] == "celery-killed"
        assert store.chunk_uuid({**new_properties, "batch_id": "celery-clean"}) == uuid
        assert {**new_properties, "batch_id": "celery-clean"} == properties
        np.testing.assert_allclose(new_vector, vector, rtol=0, atol=1e-6)
