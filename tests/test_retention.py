"""Workspace retention (pipeline.batch.retention) against the real Weaviate: batches past their
review window lose the files no live chunk and no rollback still needs, and nothing else."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import text_pdf
from pipeline.batch import discovery, lifecycle, retention, review, runner
from pipeline.cli import corpus as cli_corpus
from pipeline.cli.main import main as rosetta
from pipeline.contracts import DocRef, EmbeddedDocument
from pipeline.stages import EMBED, EXTRACT
from pipeline.stores import vector_store
from pipeline.stores.document_registry import DocumentRegistry
from pipeline.workspace import Workspace

TEXTS = {
    "doc-a": "Article 1. The supplier shall deliver the goods within thirty days of the order. "
             "Late delivery entitles the buyer to a reduction of the price by one percent per week.",
    "doc-b": "Section 2. Personal data collected under this agreement is stored in the European Union "
             "and deleted twelve months after the end of the contract unless the law requires otherwise.",
    "doc-c": "Clause 3. Either party may terminate this agreement with ninety days' written notice. "
             "Termination does not affect the rights and obligations accrued before it takes effect.",
}


@pytest.fixture
def documents(tmp_path):
    return {doc_id: text_pdf(f"{text}\n\n{text}", tmp_path / f"{doc_id}.pdf") for doc_id, text in TEXTS.items()}


def publish(settings, batch_id: str, files: dict) -> dict:
    """One whole corpus-refresh batch of ``files`` ({doc_id: path}), as the DAG runs it."""
    DocumentRegistry(settings.document_registry_path).start_batch(batch_id, "corpus_refresh")
    docs = [discovery.source_document(path, settings, doc_id=doc_id) for doc_id, path in files.items()]
    discovery.write_manifest(settings, batch_id, "corpus_refresh", docs, [])
    results = [runner.process_document(DocRef(batch_id=batch_id, doc_id=d.doc_id), settings).model_dump()
               for d in docs]
    return lifecycle.publish_batch(batch_id, results, settings)


def live(client, settings) -> dict[str, tuple[str, str]]:
    objects = vector_store.iterate_objects(client.collections.get(settings.weaviate.collection), include_vector=False)
    return {uuid: (p["doc_id"], p["batch_id"]) for uuid, p, _ in objects}


def document_files(settings, batch_id: str, doc_id: str) -> list[str]:
    root = Workspace(settings, batch_id).root
    return sorted(str(p.relative_to(root)) for p in root.glob(f"*/{doc_id}.*"))


def test_batches_past_their_window_keep_only_what_live_chunks_and_rollbacks_need(
        settings, weaviate_server, documents, monkeypatch, capsys):
    monkeypatch.setattr(settings.retention, "keep_days", 0)  # every finished batch is past the days
    monkeypatch.setattr(settings.retention, "keep_batches", 2)
    monkeypatch.setattr(cli_corpus, "get_settings", lambda: settings)
    a, b, c = ({k: documents[k]} for k in ("doc-a", "doc-b", "doc-c"))

    assert publish(settings, "p1", {**a, **b})["status"] == "promoted"
    assert publish(settings, "p2", a)["status"] == "promoted"  # doc-a again: p1's doc-a chunks replaced
    assert publish(settings, "p3", c)["status"] == "promoted"
    before = live(weaviate_server, settings)
    assert set(before.values()) == {("doc-a", "p2"), ("doc-b", "p1"), ("doc-c", "p3")}

    # p3's finish pruned p1 (past both bounds; p2 and p3 are the two newest): doc-a's files stay,
    # because p2, still in its window, re-processed it (its rollback would bring p1's doc-a back),
    # doc-b's because its live chunks are p1's; only the copy of what p1 replaced went.
    p1 = Workspace(settings, "p1")
    pruned = json.loads(p1.batch_file("pruned.json").read_text())
    assert pruned["documents_removed"] == []
    assert set(pruned["documents_kept"]) == {"doc-a", "doc-b"}
    assert not p1.batch_file("replaced_chunks.json").exists()
    assert document_files(settings, "p1", "doc-a") and document_files(settings, "p1", "doc-b")

    # One batch in the window: p1's doc-a is needed by nothing now, p2's doc-a is live.
    monkeypatch.setattr(settings.retention, "keep_batches", 1)
    assert rosetta(["prune", "--dry-run", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["dry_run"] and document_files(settings, "p1", "doc-a")  # nothing deleted yet
    by_batch = {b["batch_id"]: b for b in planned["batches"]}
    assert by_batch["p1"]["documents_removed"] == ["doc-a"]
    assert set(by_batch["p1"]["documents_kept"]) == {"doc-b"}
    assert by_batch["p2"]["documents_removed"] == [] and by_batch["p2"]["replaced_chunks"]
    a_files = document_files(settings, "p1", "doc-a")
    assert by_batch["p1"]["files"] == len(a_files)
    assert by_batch["p1"]["bytes"] == sum((p1.root / f).stat().st_size for f in a_files)

    assert rosetta(["prune"]) == 0
    out = capsys.readouterr().out
    assert "p1" in out and "p2" in out and "can no longer be rolled back" in out
    assert document_files(settings, "p1", "doc-a") == []
    assert {f.split("/")[0] for f in document_files(settings, "p1", "doc-b")} >= {EXTRACT, EMBED, "enrich"}
    assert document_files(settings, "p2", "doc-a") and document_files(settings, "p3", "doc-c")
    assert Workspace(settings, "p3").batch_file("replaced_chunks.json").exists()  # still in its window
    for batch_id in ("p1", "p2"):  # the audit trail stays
        ws = Workspace(settings, batch_id)
        assert ws.manifest_path.exists() and ws.batch_file("qa_report.json").exists()
        assert ws.batch_file("summary.json").exists() and ws.batch_file("promotion.json").exists()

    # What re-alignment reads of a live document pruned around is whole: its raw vectors,
    # one per live chunk.
    embedded = p1.read_model(p1.path(EMBED, "doc-b"), EmbeddedDocument)
    raw = np.load(embedded.raw_vectors)
    assert raw.shape[0] == sum(1 for doc, batch in before.values() if (doc, batch) == ("doc-b", "p1"))

    monkeypatch.setattr("pipeline.cli.main.get_settings", lambda: settings)
    assert rosetta(["status", "p1"]) == 0
    assert "past its review window): 1 document(s)' files removed, 1 kept" in capsys.readouterr().out
    assert live(weaviate_server, settings) == before  # pruning never touches Weaviate
    assert retention.prune(settings)["batches"] == []  # idempotent: nothing left to remove

    # Past its window a batch cannot be rolled back, and says why before anything is recorded.
    p2 = Workspace(settings, "p2")
    sample = p2.read_json(p2.batch_file("qa_report.json"))["sample"]
    with pytest.raises(ValueError, match="past its review window"):
        review.review("p2", [sample[0]["chunk_id"]], "wrong clause", settings)
    assert not Workspace(settings, "p2").batch_file("qa_review.json").exists()
    assert DocumentRegistry(settings.document_registry_path).batch("p2").status == "promoted"
    assert live(weaviate_server, settings) == before


def test_running_batches_and_batches_in_their_window_are_never_pruned(settings, monkeypatch):
    registry = DocumentRegistry(settings.document_registry_path)
    for batch_id, status in (("w1-old", "promoted"), ("w2-running", None), ("w3-new", "rolled_back"),
                             ("w4-empty", "nothing_to_do")):
        registry.start_batch(batch_id, "corpus_refresh")
        if status:
            registry.finish_batch(batch_id, status, {})
    rows = [r for r in registry.batches() if r.batch_id[0] == "w"]
    assert len(rows) == 4

    monkeypatch.setattr(settings.retention, "keep_days", 30)
    monkeypatch.setattr(settings.retention, "keep_batches", 0)
    assert not retention.in_window(settings, rows)[1]  # all finished moments ago

    monkeypatch.setattr(settings.retention, "keep_days", 0)
    monkeypatch.setattr(settings.retention, "keep_batches", 5)  # more than there are
    assert {r.batch_id for r in retention.in_window(settings, rows)[0]} == {"w1-old", "w2-running", "w3-new"}
    monkeypatch.setattr(settings.retention, "keep_batches", 1)
    kept, expired = retention.in_window(settings, rows)
    # the newest batch that loaded or rolled back stays; a batch with nothing to do does not count
    assert {r.batch_id for r in kept} == {"w2-running", "w3-new"}
    assert {r.batch_id for r in expired} == {"w1-old", "w4-empty"}


def test_run_logs_past_the_window_go_and_the_newest_stays(settings, weaviate_server, monkeypatch, capsys):
    """Each `rosetta ingest` leaves its Airflow task log, which names every document it read: a
    daily refresh would keep them forever. They follow the batches' window; the newest (a run
    may be writing it) always stays."""
    import os
    import time

    monkeypatch.setattr(cli_corpus, "get_settings", lambda: settings)
    folder = settings.run_logs_path
    folder.mkdir(parents=True, exist_ok=True)
    day = 86400
    ages = {"20260101T000000-ingest.log": 90, "20260301T000000-reprocess.log": 40, "20260320T000000-ingest.log": 35,
            "20260410T000000-ingest.log": 5, "notes.txt": 400}  # not a run log: left alone
    for name, days in ages.items():
        (folder / name).write_text(f"{name}: batch of docs\n" * 100)
        os.utime(folder / name, (time.time() - days * day,) * 2)
    monkeypatch.setattr(settings.retention, "keep_days", 30)
    monkeypatch.setattr(settings.retention, "keep_batches", 3)
    assert [p.name for p, _ in retention.expired_logs(settings)] == ["20260101T000000-ingest.log"]
    monkeypatch.setattr(settings.retention, "keep_days", 0)  # every log is past the days ...
    monkeypatch.setattr(settings.retention, "keep_batches", 0)  # ... and none is kept by number: the newest stays
    expected = ["20260320T000000-ingest.log", "20260301T000000-reprocess.log", "20260101T000000-ingest.log"]
    assert [p.name for p, _ in retention.expired_logs(settings)] == expected
    monkeypatch.setattr(settings.retention, "keep_days", 30)

    assert rosetta(["prune", "--dry-run"]) == 0
    assert "would free 0.0 MB in 3 run log(s) past their review window" in capsys.readouterr().out
    assert len(list(folder.iterdir())) == 5
    report = retention.prune(settings)
    assert report["logs"]["files"] == 3 and report["logs"]["bytes"] == sum(
        len(f"{name}: batch of docs\n") * 100 for name in expected)
    assert sorted(p.name for p in folder.iterdir()) == ["20260410T000000-ingest.log", "notes.txt"]
