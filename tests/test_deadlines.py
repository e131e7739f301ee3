"""No document can stall or crash a batch: a per-document stage runs in a worker process that
is killed past its deadline or memory cap, and an unexpected error quarantines the document
on the last try. Unit tests through run_stage, then the real corpus_refresh DAG (dag.test)
against the real Weaviate with a hanging, a memory-eating and a crashing document among a
good one.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

from pipeline.batch.discovery import source_document, write_manifest
from pipeline.batch.isolation import worker
from pipeline.batch.lifecycle import stage_costs
from pipeline.batch.runner import StageFailed, run_stage
from pipeline.contracts import DocRef
from pipeline.stages import EXTRACT, LANGUAGE, stage
from pipeline.stores.document_registry import DocumentRegistry
from pipeline.workspace import Workspace

from conftest import FIXTURES, environment

FAULTY_EXTRACT = dataclasses.replace(stage(EXTRACT), module="fault_stages")


@pytest.fixture
def limited(settings):
    """Settings with short limits (the worker's models are not needed by the faulty stage)."""
    copy = settings.model_copy(deep=True)
    copy.limits.base_s, copy.limits.per_page_s, copy.limits.rss_mib = 4, 1, 1500
    return copy


def document(settings, tmp_path: Path, name: str, batch_id: str) -> DocRef:
    path = tmp_path / name
    shutil.copy(FIXTURES / "en-born-digital.pdf", path)
    manifest = write_manifest(settings, batch_id, "corpus_refresh", [source_document(path, settings)], [])
    return DocRef(batch_id=batch_id, doc_id=manifest.documents[0].doc_id)


def test_a_stage_spinning_in_native_code_is_stopped_at_its_deadline(limited, tmp_path):
    ref = document(limited, tmp_path, "hang.pdf", "deadline-hang")
    result = run_stage(FAULTY_EXTRACT, ref, limited)
    assert result.status == "quarantined" and result.reason == "stage_timeout"
    # base 4 s + 1 s per page x 2 pages; the page the stage had reached is named
    assert result.detail == "extract ran past its deadline of 6 s (2 pages), stopped at page 2"
    record = Workspace(limited, ref.batch_id).read_json(Workspace(limited, ref.batch_id).quarantine_path(ref.doc_id))
    assert record["reason"] == "stage_timeout" and record["source_path"].endswith("hang.pdf")
    assert worker().pid is None  # killed; the next call starts a fresh one


def test_a_stage_eating_memory_is_stopped_at_the_cap(limited, tmp_path):
    # a deadline far off, so that only the cap can stop it: on a loaded machine filling
    # 1500 MiB (a fresh worker first) once took past the 6 s of the fixture's limits
    limited.limits.base_s = 60
    ref = document(limited, tmp_path, "hog.pdf", "deadline-hog")
    result = run_stage(FAULTY_EXTRACT, ref, limited)
    assert result.status == "quarantined" and result.reason == "too_large"
    assert result.detail.startswith("extract used more than 1500 MiB of memory")
    assert result.timings[EXTRACT].peak_rss_mib > 1500  # the summary shows what the document cost


def test_an_unexpected_error_is_retried_then_quarantined_on_the_last_try(limited, tmp_path):
    ref = document(limited, tmp_path, "crash.pdf", "deadline-crash")
    with pytest.raises(StageFailed, match="ValueError: Bounding box"):
        run_stage(FAULTY_EXTRACT, ref, limited, last_try=False)
    assert not Workspace(limited, ref.batch_id).quarantine_path(ref.doc_id).exists()
    result = run_stage(FAULTY_EXTRACT, ref, limited, last_try=True)
    assert result.reason == "stage_error"
    assert result.detail.startswith("ValueError: Bounding box (0, 0, 612, 800) is not fully within parent page")
    assert "fault_stages.py:" in result.detail  # where it was raised
    assert "\n" not in result.detail


def test_a_killed_worker_costs_one_document_and_the_next_one_runs(limited, tmp_path):
    hanging = document(limited, tmp_path, "hang.pdf", "deadline-killed")
    limited.limits.base_s = 120

    running = worker()  # this thread's worker: the one run_stage uses

    def kill_worker_once_busy() -> None:
        give_up = time.monotonic() + 120
        while running.pid is None and time.monotonic() < give_up:
            time.sleep(0.1)
        time.sleep(1)
        os.kill(running.pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_worker_once_busy)
    killer.start()
    result = run_stage(FAULTY_EXTRACT, hanging, limited)
    killer.join()
    assert result.reason == "stage_error"
    assert result.detail == "extract: the stage worker died (signal SIGKILL)"
    good = document(limited, tmp_path, "good.pdf", "deadline-after-kill")
    assert run_stage(FAULTY_EXTRACT, good, limited).status == "ok"


def test_a_warmed_up_worker_runs_the_stage_it_warmed_and_a_failed_warm_up_costs_nothing(limited, tmp_path):
    """``rosetta ingest`` starts the worker with a warm-up while Airflow starts: the models load
    in the worker that then runs the stages; a warm-up that fails leaves the stage to meet (and
    report) the error itself."""
    running = worker()
    running.stop()
    running.warm([FAULTY_EXTRACT], limited)
    good = document(limited, tmp_path, "good.pdf", "warm-up")
    assert run_stage(FAULTY_EXTRACT, good, limited).status == "ok"
    assert (limited.data_root / f"warmed-{running.pid}").exists()  # in the worker that ran the stage

    running.stop()
    (limited.data_root / "warm-fails").touch()
    running.warm([FAULTY_EXTRACT], limited)
    again = document(limited, tmp_path, "good-again.pdf", "warm-up-failed")
    assert run_stage(FAULTY_EXTRACT, again, limited).status == "ok"
    assert not (limited.data_root / f"warmed-{running.pid}").exists()


def test_in_process_mode_quarantines_the_same_way(limited, tmp_path):
    limited.limits.isolate = False
    ref = document(limited, tmp_path, "crash.pdf", "in-process-crash")
    result = run_stage(FAULTY_EXTRACT, ref, limited)
    assert result.reason == "stage_error" and result.detail.startswith("ValueError: Bounding box")


def test_the_dag_finishes_and_loads_the_good_document(settings, weaviate_server, source_dir, monkeypatch):
    """The real corpus_refresh DAG with a faulty extract stage: three documents are
    quarantined with their reasons, the good one is loaded and the run succeeds."""
    from rosetta_airflow import flow
    from rosetta_airflow.runner import run_dag

    from pipeline.stores import vector_store

    for name in ("good.pdf", "hang.pdf", "hog.pdf", "crash.pdf"):
        # distinct bytes after %%EOF: the same content at four paths would be one document
        (source_dir / name).write_bytes((FIXTURES / "en-born-digital.pdf").read_bytes() + f"\n% {name}\n".encode())
    monkeypatch.setattr(flow, "DOCUMENT_STAGES", tuple(
        FAULTY_EXTRACT if s.name == EXTRACT else s for s in flow.DOCUMENT_STAGES))
    with environment({"ROSETTA__LIMITS__BASE_S": "25", "ROSETTA__LIMITS__PER_PAGE_S": "1",
                      "ROSETTA__LIMITS__RSS_MIB": "2500"}):
        run_id, state = run_dag("corpus_refresh", {"paths": [], "force": False}, settings)
    assert state == "success"
    registry = DocumentRegistry(settings.document_registry_path)
    by_name = {Path(d.source_path).name: d for d in registry.documents() if d.last_batch == run_id}
    assert by_name["good.pdf"].status == "loaded" and by_name["good.pdf"].chunks > 0
    assert {n: (d.status, d.quarantine_reason) for n, d in by_name.items() if n != "good.pdf"} == {
        "hang.pdf": ("quarantined", "stage_timeout"), "hog.pdf": ("quarantined", "too_large"),
        "crash.pdf": ("quarantined", "stage_error")}
    live = vector_store.live_collection(weaviate_server, settings)
    docs = {p["doc_id"] for _, p, _ in vector_store.iterate_objects(live, include_vector=False)}
    assert docs == {by_name["good.pdf"].doc_id}


def test_each_stage_records_its_time_and_peak_memory(settings, tmp_path):
    """The timings travel with the document's results and add up in the batch summary."""
    ref = document(settings, tmp_path, "good.pdf", "timings")
    extracted = run_stage(stage(EXTRACT), ref, settings)
    cleaned = run_stage(stage(LANGUAGE), extracted, settings)
    assert list(cleaned.timings) == [EXTRACT, LANGUAGE]
    # the worker holds PDFium and fastText: far more than an empty interpreter's ~10 MiB
    assert all(t.seconds > 0 and t.peak_rss_mib > 40 for t in cleaned.timings.values())
    manifest = Workspace(settings, ref.batch_id).read_manifest()
    load_step = {"seconds": 1.5, "peak_rss_mib": 300.0}
    costs = stage_costs(manifest, [cleaned.model_dump(), cleaned.model_dump()], {"step_timings": {"load": load_step}})
    assert list(costs) == [EXTRACT, LANGUAGE, "load"]
    assert costs[EXTRACT] == {"seconds": round(2 * cleaned.timings[EXTRACT].seconds, 3),
                              "peak_rss_mib": cleaned.timings[EXTRACT].peak_rss_mib, "runs": 2}
    assert costs["load"] == {**load_step, "runs": 1}
