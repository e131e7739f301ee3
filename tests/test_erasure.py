"""Erasure on request against the real Weaviate, Airflow (dag.test) and MLflow store: after
`rosetta forget`, no file under the data root (Weaviate's own files, the MLflow store and its
artifacts, the registry, every batch workspace, the logs) holds any sentence of the document;
no rollback or reprocess brings it back; ingesting the file again makes a new document. The
forget_document DAG does the same; `anchors audit --document` says which anchor sets used it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.batch.discovery import reprocess_manifest
from pipeline.batch.lifecycle import roll_back
from pipeline.stores import vector_store
from pipeline.stores.document_registry import DocumentRegistry

from conftest import text_pdf

GOLDEN = Path(__file__).parent / "golden"


def cli(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "pipeline.cli.main", *args], capture_output=True, text=True,
                          env=os.environ.copy(), check=True).stdout


def live_docs(client, settings) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    collection = client.collections.get(settings.weaviate.collection)
    for _, props, _ in vector_store.iterate_objects(collection, include_vector=False):
        found.setdefault(props["doc_id"], []).append(props["text"])
    return found


def paired_keys(client, settings, other_than: str = "") -> set[str]:
    """The document keys the live chunks (of documents other than ``other_than``) list as partners."""
    collection = client.collections.get(settings.weaviate.collection)
    return {key for _, props, _ in vector_store.iterate_objects(collection, include_vector=False)
            if props["doc_id"] != other_than for key in props.get("paired_documents") or ()}


def files_holding(settings, client, sentences: list[bytes]) -> dict[str, int]:
    """Every file under the data root and the Weaviate server's data folder (in the suite, the
    server shared by every module keeps its files under the first module's data root) holding
    one of the sentences, with how many. The source folder is the user's and is left out."""
    hits = {}
    roots = {"": settings.data_root, "weaviate/": client.rosetta_files}
    for prefix, root in roots.items():
        for path in root.rglob("*"):
            if path.is_file() and not path.is_relative_to(settings.source_dir) and \
                    not (prefix == "" and path.is_relative_to(client.rosetta_files)):
                data = path.read_bytes()
                if n := sum(s in data for s in sentences):
                    hits[prefix + str(path.relative_to(root))] = n
    return hits


@pytest.fixture(scope="module")
def ingested(settings, weaviate_server):
    from rosetta_airflow.runner import run_dag

    source = settings.source_dir
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    # Other tests load the same regulation into the shared server, whose files are searched:
    # every line of this document carries a mark of its own.
    subject = (GOLDEN / "en-gdpr.txt").read_text(encoding="utf-8")[:3000]
    subject = "\n".join(f"{line} (erased-subject)" if line.strip() else line for line in subject.splitlines())
    text_pdf(subject, source / "subject.pdf")
    text_pdf((GOLDEN / "de-dsgvo.txt").read_text(encoding="utf-8")[:3000], source / "other.pdf")
    _, state = run_dag("corpus_refresh", {"paths": [], "force": False}, settings)
    assert state == "success"
    registry = DocumentRegistry(settings.document_registry_path)
    target = registry.find_by_path(str((source / "subject.pdf").resolve())).doc_id
    # a second batch: its replaced_chunks.json keeps the first version's chunks for a rollback
    reprocessed, state = run_dag("reprocess_document", {"document": target}, settings)
    assert state == "success"
    texts = live_docs(weaviate_server, settings)[target]
    sentences = sorted({line.strip().encode() for t in texts for line in t.splitlines()
                        if len(line.strip()) >= 20 and "(erased-subject)" in line})
    return {"source": source, "target": target, "reprocessed": reprocessed, "sentences": sentences}


def test_after_forget_nothing_under_the_data_root_holds_its_text(ingested, settings, weaviate_server):
    sentences = ingested["sentences"]
    assert len(sentences) >= 10
    before = files_holding(settings, weaviate_server, sentences)
    # the search is real: Weaviate's files, the workspaces and the MLflow artifacts hold the text now
    assert any(p.startswith("weaviate/") for p in before) and any(p.startswith("batches/") for p in before)
    assert any(p.startswith("mlartifacts/") for p in before)
    chunks = len(live_docs(weaviate_server, settings)[ingested["target"]])
    # the German regulation was paired with it as its translation when loaded: its chunks name
    # the document by id and source sha256 prefix (pipeline/retrieval/pairing.py)
    key = f"{ingested['target']}@{DocumentRegistry(settings.document_registry_path).get(ingested['target']).sha256[:16]}"
    assert key in paired_keys(weaviate_server, settings, other_than=ingested["target"])
    assert list(settings.embedding_cache_path.rglob("*.f32"))  # its chunks' vectors, by their text's hash
    out = cli("forget", ingested["target"], "--reason", "data-subject erasure request #42", "--json")
    report = json.loads(out)
    assert sum(report["weaviate"]["objects_deleted"].values()) == chunks
    assert report["cache_files_deleted"]["embedding cache"] >= 1 and not settings.embedding_cache_path.exists()
    assert files_holding(settings, weaviate_server, sentences) == {}
    assert ingested["target"] not in live_docs(weaviate_server, settings)
    assert key not in paired_keys(weaviate_server, settings)
    assert [p for p in files_holding(settings, weaviate_server, [key.encode()]) if p.startswith(("weaviate/", "batches/"))] == []
    assert not [p for p in (settings.data_root / "batches").rglob(f"{ingested['target']}.*")]
    registry = DocumentRegistry(settings.document_registry_path)
    row = registry.get(ingested["target"])
    assert (row.status, row.source_path, row.sha256, row.chunks) == ("forgotten", "", None, 0)
    assert registry.paths(ingested["target"]) == []
    assert not [path for path in registry.file_hashes() if path.endswith("subject.pdf")]  # nor its file's hash
    log = registry.erasures()
    assert [(e["doc_id"], e["reason"]) for e in log] == [(ingested["target"], "data-subject erasure request #42")]
    status = {d["doc_id"]: d for d in json.loads(cli("status", "--json"))["documents"]}
    assert status[ingested["target"]]["status"] == "forgotten" and status[ingested["target"]]["paths"] == []


def test_no_rollback_or_reprocess_brings_it_back(ingested, settings, weaviate_server):
    roll_back(ingested["reprocessed"], "a rollback after the erasure", settings)
    assert ingested["target"] not in live_docs(weaviate_server, settings)
    assert DocumentRegistry(settings.document_registry_path).get(ingested["target"]).status == "forgotten"
    with pytest.raises(ValueError, match="forgotten"):
        reprocess_manifest(settings, "erasure-reprocess", ingested["target"])


def test_ingesting_the_file_again_makes_a_new_document(ingested, settings, weaviate_server):
    from rosetta_airflow.runner import run_dag

    run_id, state = run_dag("corpus_refresh", {"paths": [], "force": False}, settings)
    assert state == "success"
    registry = DocumentRegistry(settings.document_registry_path)
    fresh = registry.find_by_path(str((ingested["source"] / "subject.pdf").resolve()))
    assert fresh.doc_id != ingested["target"] and fresh.status == "loaded" and fresh.last_batch == run_id
    assert len(live_docs(weaviate_server, settings)[fresh.doc_id]) == fresh.chunks > 0


def test_an_erasure_waits_for_a_running_batch(ingested, settings, weaviate_server):
    """The erasure copies the live collection away and back; a batch promoted in between
    would lose its chunks. While a batch runs (its owner process alive), forgetting is
    refused before anything is touched, and goes through once the batch has finished."""
    from pipeline.batch.erasure import forget

    registry = DocumentRegistry(settings.document_registry_path)
    path = (ingested["source"] / "other.pdf").resolve()
    doc_id = registry.find_by_path(str(path)).doc_id
    chunks = len(live_docs(weaviate_server, settings)[doc_id])
    registry.start_batch("erasure-beside-a-batch", "corpus_refresh", os.getpid(), socket.gethostname())
    try:
        with pytest.raises(RuntimeError, match="batch erasure-beside-a-batch is running"):
            forget(settings, str(path), "sent by mistake")
        assert len(live_docs(weaviate_server, settings)[doc_id]) == chunks > 0
        assert registry.get(doc_id).status == "loaded"
    finally:
        registry.finish_batch("erasure-beside-a-batch", "nothing_to_do", {})


def test_the_forget_document_dag_erases_a_document(ingested, settings, weaviate_server):
    from rosetta_airflow.runner import run_dag

    path = (ingested["source"] / "other.pdf").resolve()
    doc_id = DocumentRegistry(settings.document_registry_path).find_by_path(str(path)).doc_id
    _, state = run_dag("forget_document", {"document": str(path), "reason": "sent by mistake"}, settings)
    assert state == "success"
    assert doc_id not in live_docs(weaviate_server, settings)
    assert not [p for p in (settings.data_root / "batches").rglob(f"{doc_id}.*")]
    assert DocumentRegistry(settings.document_registry_path).get(doc_id).status == "forgotten"


def test_anchor_audit_says_no_anchor_set_is_built_from_documents(ingested, settings):
    out = cli("anchors", "audit", "--document", ingested["target"], "--json")
    found = json.loads(out)
    assert found["affected"] == {}
    assert found["sources"] and all("document" not in kinds for kinds in found["sources"].values())
    assert "no anchor set is built from ingested documents" in found["verdict"]


def test_a_backup_of_another_documents_chunks_loses_the_erased_documents_key():
    """replaced_chunks.json of a later batch may hold a partner's chunks, which list the erased
    document's key (doc_id and source sha256 prefix) among their translations."""
    from pipeline.batch.erasure import _scrub

    backup = [{"uuid": "u1", "properties": {"doc_id": "other", "paired_documents": ["other@aa", "subject@bb"]}},
              {"uuid": "u2", "properties": {"doc_id": "subject", "paired_documents": ["subject@bb"]}}]
    scrubbed, removed = _scrub(backup, "subject")
    assert scrubbed == [{"uuid": "u1", "properties": {"doc_id": "other", "paired_documents": ["other@aa"]}}]
    assert removed == 2
