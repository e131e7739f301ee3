"""Crash-only runs: a real ``rosetta ingest`` killed with SIGKILL on its process group while a
given stage runs, then run again, against the real Weaviate and Airflow. Afterwards nothing is
duplicated or lost: the live chunks equal those of an uninterrupted run of the same files (by
document, chunk index and text: uuids carry the batch id, so they differ between runs), no
staging collection is left and every document is loaded. Meanwhile ``rosetta status`` shows
the killed batch as stale.

The whole matrix (a kill in each of the 9 stages before ``finish``) takes about 10 minutes on
2 shared cores at load 4-7 (50-85 s a kill, 50 s for the uninterrupted run), 27 minutes at
load 10-15. It is part of ``make test``;
``make test-crash`` runs it alone.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.stages import DOCUMENT_STAGES, LOAD, PROMOTE, QA, STAGES
from pipeline.stores import vector_store
from pipeline.stores.document_registry import DocumentRegistry

from conftest import FIXTURES, ROOT

DOCUMENTS = ("en-born-digital.pdf", "zh-small.pdf")
KILL_AT = [s.name for s in STAGES if s.name != "finish"]


def case_env(settings, name: str, source: Path) -> dict[str, str]:
    path = os.pathsep.join([str(ROOT), str(ROOT / "plugins"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "ROSETTA__DATA_ROOT": str(settings.data_root / name),
            "ROSETTA__SOURCE_DIR": str(source), "ROSETTA__WEAVIATE__COLLECTION": f"RosettaCrash{name.title()}"}


def rosetta(env: dict[str, str], *argv: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pipeline.cli.main", *argv], cwd=ROOT, env=env,
                            start_new_session=True, text=True, **popen)


def live_chunks(client, collection: str) -> list[tuple[str, int, str]]:
    if not client.collections.exists(collection):
        return []
    return sorted((p["doc_id"], p["chunk_index"], p["text"]) for _, p, _ in
                  vector_store.iterate_objects(client.collections.get(collection), include_vector=False))


def staging_left(client, collection: str) -> list[str]:
    return [name for name in client.collections.list_all() if name.startswith(f"{collection}Staging_")]


def under_way(stage: str, root: Path, client, collection: str) -> bool:
    """Whether the run has reached ``stage`` (its first output exists)."""
    batches = root / "batches"
    if stage in {s.name for s in DOCUMENT_STAGES}:
        return any(batches.glob(f"*/{stage}/*.json"))
    if stage == LOAD:
        return bool(staging_left(client, collection))
    return any(batches.glob("*/" + {QA: "qa_report.json", PROMOTE: "promotion.json"}[stage]))


@pytest.fixture(scope="module")
def source(settings, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("crash-source")
    for name in DOCUMENTS:
        shutil.copy(FIXTURES / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def uninterrupted(settings, weaviate_server, source) -> list[tuple[str, int, str]]:
    env = case_env(settings, "reference", source)
    assert rosetta(env, "ingest", stdout=subprocess.DEVNULL).wait(timeout=900) == 0
    chunks = live_chunks(weaviate_server, env["ROSETTA__WEAVIATE__COLLECTION"])
    assert chunks
    return chunks


@pytest.mark.parametrize("stage", KILL_AT)
def test_a_run_killed_during_a_stage_is_resumed_without_loss_or_duplicates(stage, settings, weaviate_server,
                                                                            source, uninterrupted):
    env = case_env(settings, stage, source)
    root, collection = Path(env["ROSETTA__DATA_ROOT"]), env["ROSETTA__WEAVIATE__COLLECTION"]
    run = rosetta(env, "ingest", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    give_up = time.monotonic() + 900
    while run.poll() is None and not under_way(stage, root, weaviate_server, collection):
        assert time.monotonic() < give_up, f"the run never reached {stage}"
        time.sleep(0.05)
    assert run.poll() is None, f"the run ended before {stage} could be interrupted"
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()

    for _ in range(10):  # the runner dies with its parent a moment after it (PR_SET_PDEATHSIG)
        shown = rosetta(env, "status", stdout=subprocess.PIPE).communicate(timeout=300)[0]
        if "stale" in shown:
            break
        time.sleep(1)
    assert "running (stale: its process" in shown  # the killed batch, until the next run recovers it

    again = rosetta(env, "ingest", stdout=subprocess.DEVNULL)
    assert again.wait(timeout=900) == 0
    chunks = live_chunks(weaviate_server, collection)
    assert chunks == uninterrupted  # same documents, chunk indexes and texts, nothing twice
    assert staging_left(weaviate_server, collection) == []
    registry = DocumentRegistry(root / "registry.sqlite")
    assert {Path(d.source_path).name: d.status for d in registry.documents()} == dict.fromkeys(DOCUMENTS, "loaded")
    assert [b.status for b in registry.batches() if b.status == "running"] == []
