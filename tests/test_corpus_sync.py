"""Corpus sync against the real corpus_refresh DAG (dag.test), the real embedded Weaviate and a
real MLflow store: a moved folder keeps every chunk (same uuids, nothing re-embedded), a copy
is the same document, a deleted file's chunks leave at the next refresh and come back exactly
when that batch is rolled back, explicit paths delete nothing outside them, the valve
stops a refresh where most files vanished, and a file that cannot be read is quarantined
while the rest of the batch goes on.

The documents are real texts (tests/golden: GDPR, MPL, DSGVO, LOPDGDD, SCC), cut to their
first pages to keep the DAG runs short.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.batch.lifecycle import roll_back
from pipeline.contracts import BatchManifest
from pipeline.embedding.embedders import UniversalSentenceEncoder
from pipeline.stores import vector_store
from pipeline.stores.document_registry import DocumentRegistry
from pipeline.workspace import Workspace

from conftest import environment, text_pdf

GOLDEN = Path(__file__).parent / "golden"
LAYOUT = {"contracts/en-mpl.pdf": "en-mpl", "contracts/en-scc.pdf": "en-scc", "laws/de-dsgvo.pdf": "de-dsgvo",
          "laws/es-lopdgdd.pdf": "es-lopdgdd", "misc/en-gdpr.pdf": "en-gdpr"}


def live(client, settings) -> dict[str, tuple[dict, list[float]]]:
    if not client.collections.exists(settings.weaviate.collection):
        return {}
    return {u: (p, v) for u, p, v in vector_store.iterate_objects(client.collections.get(settings.weaviate.collection))}


def refresh(settings, **conf) -> tuple[str, str]:
    from rosetta_airflow.runner import run_dag

    return run_dag("corpus_refresh", {"paths": [], "force": False, **conf}, settings)


@pytest.fixture(scope="module")
def embed_calls():
    """Every call of the embedder in this process: dag.test runs the tasks here, and the stages
    run in-process too (limits.isolate off) so that the calls can be counted."""
    calls: list[int] = []
    original = UniversalSentenceEncoder.encode

    def counting(self, texts, query=False):
        calls.append(len(texts))
        return original(self, texts, query)

    UniversalSentenceEncoder.encode = counting
    with environment({"ROSETTA__LIMITS__ISOLATE": "false"}):
        yield calls
    UniversalSentenceEncoder.encode = original


@pytest.fixture(scope="module")
def corpus(settings, weaviate_server, embed_calls):
    source = settings.source_dir
    shutil.rmtree(source, ignore_errors=True)
    for relative, golden in LAYOUT.items():
        (source / relative).parent.mkdir(parents=True, exist_ok=True)
        text_pdf((GOLDEN / f"{golden}.txt").read_text(encoding="utf-8")[:2500], source / relative)
    run_id, state = refresh(settings)
    assert state == "success"
    assert embed_calls, "the embedder was not called in this process: the move test could not count calls"
    return source


def registry(settings) -> DocumentRegistry:
    return DocumentRegistry(settings.document_registry_path)


def doc_of(settings, path: Path) -> str:
    return registry(settings).find_by_path(str(path.resolve())).doc_id


def test_moving_a_folder_keeps_every_chunk_and_embeds_nothing(corpus, settings, weaviate_server, embed_calls):
    moved_ids = {doc_of(settings, corpus / "contracts" / n) for n in ("en-mpl.pdf", "en-scc.pdf")}
    before = live(weaviate_server, settings)
    calls = len(embed_calls)
    shutil.move(corpus / "contracts", corpus / "agreements")
    run_id, state = refresh(settings)
    assert state == "success"
    after = live(weaviate_server, settings)
    assert len(embed_calls) == calls  # nothing re-embedded
    assert after.keys() == before.keys() and len(after) == len(before)
    for uuid, (props, vector) in after.items():
        old_props, old_vector = before[uuid]
        assert vector == old_vector
        assert {k: v for k, v in props.items() if k != "source_path"} == \
               {k: v for k, v in old_props.items() if k != "source_path"}
        if props["doc_id"] in moved_ids:
            assert props["source_path"] == old_props["source_path"].replace("/contracts/", "/agreements/")
        else:
            assert props["source_path"] == old_props["source_path"]
    manifest = Workspace(settings, run_id).read_manifest()
    assert manifest.documents == [] and {m.doc_id for m in manifest.moved} == moved_ids
    for doc_id in moved_ids:
        assert all("/agreements/" in p for p in registry(settings).paths(doc_id))
    assert registry(settings).batch(run_id).status == "promoted"


def test_the_same_file_at_two_paths_is_one_document(corpus, settings, weaviate_server):
    before = live(weaviate_server, settings)
    shutil.copy(corpus / "laws" / "de-dsgvo.pdf", corpus / "misc" / "dsgvo-copy.pdf")
    run_id, state = refresh(settings)
    assert state == "success"
    assert live(weaviate_server, settings).keys() == before.keys()
    doc_id = doc_of(settings, corpus / "laws" / "de-dsgvo.pdf")
    assert doc_of(settings, corpus / "misc" / "dsgvo-copy.pdf") == doc_id
    out = subprocess.run([sys.executable, "-m", "pipeline.cli.main", "status", "--json"], capture_output=True,
                         text=True, env=os.environ.copy(), check=True).stdout
    documents = {d["doc_id"]: d for d in json.loads(out)["documents"]}
    assert len(documents) == len(LAYOUT)
    assert documents[doc_id]["paths"] == sorted(str(p.resolve()) for p in
                                                (corpus / "laws" / "de-dsgvo.pdf", corpus / "misc" / "dsgvo-copy.pdf"))
    assert documents[doc_id]["status"] == "loaded" and documents[doc_id]["chunks"] > 0
    assert documents[doc_id]["sha256"] and documents[doc_id]["last_batch"]


def test_a_deleted_file_leaves_at_the_next_refresh_and_rollback_restores_it(corpus, settings, weaviate_server):
    gone = corpus / "agreements" / "en-scc.pdf"
    doc_id = doc_of(settings, gone)
    before = live(weaviate_server, settings)
    gone.unlink()
    run_id, state = refresh(settings)
    assert state == "success"
    after = live(weaviate_server, settings)
    removed = {u for u, (p, _) in before.items() if p["doc_id"] == doc_id}
    assert removed and after.keys() == before.keys() - removed
    row = registry(settings).get(doc_id)
    assert (row.status, row.chunks, row.delete_reason) == ("deleted", 0, "source file gone")
    assert row.sha256 and row.deleted_at and registry(settings).paths(doc_id) == []

    journal = roll_back(run_id, "the file was removed by mistake", settings)
    assert journal["restored"] == len(removed)
    restored = live(weaviate_server, settings)
    assert restored.keys() == before.keys()
    for uuid, (props, vector) in before.items():
        assert restored[uuid] == (props, vector)  # uuids, properties and vectors equal
    row = registry(settings).get(doc_id)
    assert row.status == "loaded" and registry(settings).paths(doc_id) == [str(gone.resolve())]


def test_explicit_paths_delete_nothing_outside_them(corpus, settings, weaviate_server):
    outside = doc_of(settings, corpus / "laws" / "es-lopdgdd.pdf")
    aside = corpus.parent / "es-lopdgdd.pdf"
    shutil.move(corpus / "laws" / "es-lopdgdd.pdf", aside)
    inbox = corpus / "inbox"
    inbox.mkdir()
    shutil.copy(corpus / "misc" / "en-gdpr.pdf", inbox / "gdpr-again.pdf")
    run_id, state = refresh(settings, paths=[str(inbox)])
    assert state == "success"
    assert registry(settings).get(outside).status == "loaded"
    assert any(p["doc_id"] == outside for p, _ in live(weaviate_server, settings).values())
    manifest = Workspace(settings, run_id).read_manifest()
    assert manifest.deleted == [] and manifest.documents == []  # the inbox file is a copy: an alias
    shutil.move(aside, corpus / "laws" / "es-lopdgdd.pdf")
    shutil.rmtree(inbox)


def test_a_loaded_documents_file_that_cannot_be_read_is_tried_again_not_deleted(corpus, settings):
    """Discovery finds a file it cannot open without a hash (the test below runs that for real,
    as an unprivileged user): the refresh plans it again, to be quarantined as unreadable, and
    deletes nothing; the chunks of the version loaded before stay (promotion replaces only the
    documents a batch loads)."""
    from pipeline.batch.discovery import found_file, list_sources
    from pipeline.batch.sync import FoundFile, plan_refresh

    locked = {(corpus / "misc" / "en-gdpr.pdf").resolve(), (corpus / "laws" / "es-lopdgdd.pdf").resolve()}
    found = [f if Path(f.path) not in locked else FoundFile(f.path, "", f.size_bytes)
             for f in map(found_file, list_sources(settings))]
    plan = plan_refresh(settings, found, [settings.source_dir.resolve()])
    doc_ids = {doc_of(settings, path) for path in locked}
    # two files without a hash are two documents, not one content at two paths
    assert sorted((d.doc_id, d.sha256) for d in plan.todo) == sorted((doc_id, "") for doc_id in doc_ids)
    assert not doc_ids & {d.doc_id for d in plan.deleted} and plan.moved == []


def test_a_new_version_that_fails_leaves_the_loaded_one_searchable_and_says_so(corpus, settings, weaviate_server):
    """A file saved over with a broken version: quarantined with the reason, while the version
    loaded before stays live, and the registry counts its chunks and says it stays."""
    path = corpus / "misc" / "en-gdpr.pdf"
    doc_id, good = doc_of(settings, path), path.read_bytes()
    chunks = registry(settings).get(doc_id).chunks
    live_before = {u for u, (p, _) in live(weaviate_server, settings).items() if p["doc_id"] == doc_id}
    assert chunks and len(live_before) == chunks
    path.write_bytes(good[: len(good) // 3])  # a save cut short
    run_id, state = refresh(settings)
    assert state == "success"
    row = registry(settings).get(doc_id)
    assert (row.status, row.quarantine_reason, row.chunks) == ("quarantined", "corrupt_pdf", chunks)
    assert row.quarantine_detail.endswith(f"; the version loaded before stays searchable ({chunks} chunks)")
    assert {u for u, (p, _) in live(weaviate_server, settings).items() if p["doc_id"] == doc_id} == live_before
    path.write_bytes(good)
    assert refresh(settings)[1] == "success" and registry(settings).get(doc_id).status == "loaded"


def test_the_valve_stops_a_refresh_where_most_files_vanished(corpus, settings, weaviate_server):
    before = live(weaviate_server, settings)
    statuses = {d.doc_id: d.status for d in registry(settings).documents()}
    unmounted = corpus.parent / "unmounted"
    shutil.move(corpus, unmounted)
    corpus.mkdir()  # the mount point is still there, empty
    run_id, state = refresh(settings)
    assert state == "failed"
    batch = registry(settings).batch(run_id)
    assert batch.status == "stopped" and "max_deleted_fraction" in batch.summary["reason"]
    assert live(weaviate_server, settings).keys() == before.keys()
    assert {d.doc_id: d.status for d in registry(settings).documents()} == statuses

    run_id, state = refresh(settings, allow_mass_deletion=True)
    assert state == "success"
    manifest: BatchManifest = Workspace(settings, run_id).read_manifest()
    assert len(manifest.deleted) == sum(s == "loaded" for s in statuses.values())
    assert live(weaviate_server, settings) == {}
    corpus.rmdir()
    shutil.move(unmounted, corpus)


def test_a_refresh_reads_again_only_the_files_that_changed(settings, tmp_path, monkeypatch):
    """Discovery keeps each file's hash with its size and modification time: an unchanged share
    is not read again at each refresh (a daily refresh of a large share read all of it), a
    changed file is, and so is a file modified just before it was read (its time may not move
    on a second change); ``--force`` reads every file."""
    import time

    from pipeline.batch import discovery

    reads: list[str] = []
    sha256_file = discovery.sha256_file
    monkeypatch.setattr(discovery, "sha256_file", lambda path: reads.append(path.name) or sha256_file(path))
    registry = DocumentRegistry(tmp_path / "registry.sqlite")
    folder = tmp_path / "share"
    folder.mkdir()
    hour_ago = time.time() - 3600
    for name in ("a.pdf", "b.pdf", "c.pdf"):
        text_pdf(f"Policy {name}\nThe first version.", folder / name)
        os.utime(folder / name, (hour_ago, hour_ago))

    def refresh(rehash=False) -> dict[str, str]:
        reads.clear()
        paths = sorted(folder.iterdir())
        return {Path(f.path).name: f.sha256 for f in discovery.found_files(paths, registry, [folder], rehash)}

    first = refresh()
    assert sorted(reads) == ["a.pdf", "b.pdf", "c.pdf"]
    assert refresh() == first and reads == []
    text_pdf("Policy b.pdf\nThe second version, longer than the first.", folder / "b.pdf")  # saved just now
    second = refresh()
    assert reads == ["b.pdf"] and second["b.pdf"] != first["b.pdf"] and second["a.pdf"] == first["a.pdf"]
    assert refresh() == second and reads == ["b.pdf"]  # modified moments before it was read: read again
    assert refresh(rehash=True) == second and sorted(reads) == ["a.pdf", "b.pdf", "c.pdf"]
    (folder / "c.pdf").unlink()
    assert set(refresh()) == {"a.pdf", "b.pdf"} and str(folder / "c.pdf") not in registry.file_hashes()


UNREADABLE_BATCH = """
import json, sys
from pathlib import Path
from pipeline.batch.discovery import discover, reprocess_manifest
from pipeline.batch.runner import run_stage
from pipeline.config import get_settings
from pipeline.contracts import DocRef
from pipeline.stages import EXTRACT, stage

settings = get_settings()
manifest = discover(settings, "perm-batch")
results = {d.doc_id: run_stage(stage(EXTRACT), DocRef(batch_id="perm-batch", doc_id=d.doc_id), settings)
           for d in manifest.documents}
again = reprocess_manifest(settings, "perm-again", sys.argv[1]).documents[0]  # `rosetta reprocess FILE`
print(json.dumps({"found": {d.source_path: d.sha256 for d in manifest.documents},
                  "results": {k: [r.status, r.reason, r.detail] for k, r in results.items()},
                  "reprocessed": [Path(again.source_path).name, again.sha256]}))
"""


def test_a_file_that_cannot_be_read_is_quarantined_and_the_batch_goes_on():
    """A file whose permissions keep the pipeline out (a share's restricted folder): discovery
    lists it without a hash instead of failing the refresh, and the extract stage quarantines it
    as unreadable, naming it and the reason, while the file beside it is read. Run as an
    unprivileged user (root reads any file): the real permission check, the real stages."""
    import tempfile

    data_root = Path(tempfile.mkdtemp(prefix="rosetta-perm-"))  # outside pytest's 0700 root
    try:
        source = data_root / "source"
        source.mkdir()
        text_pdf("Section 1 Scope\nThis policy applies to every contract the company signs.", source / "open.pdf")
        text_pdf("Section 1 Salaries\nThe salary bands are reviewed every year.", source / "restricted.pdf")
        for folder in (data_root, source):
            folder.chmod(0o777)
        (source / "open.pdf").chmod(0o644)
        (source / "restricted.pdf").chmod(0o000)
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        env = {**os.environ, "ROSETTA__DATA_ROOT": str(data_root), "ROSETTA__SOURCE_DIR": str(source),
               "ROSETTA__SECRETS_DIR": str(data_root / "secrets"), "HOME": str(data_root),
               "ROSETTA__LIMITS__ISOLATE": "false", "PYTHONPATH": str(Path(__file__).parent.parent)}
        run = subprocess.run([*as_nobody, sys.executable, "-c", UNREADABLE_BATCH, str(source / "restricted.pdf")],
                             capture_output=True, text=True, env=env, cwd=data_root, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        report = json.loads(run.stdout.strip().splitlines()[-1])
        hashes = {Path(path).name: sha for path, sha in report["found"].items()}
        assert hashes["restricted.pdf"] == "" and len(hashes["open.pdf"]) == 64
        outcomes = {doc_id.split("-")[0]: result for doc_id, result in report["results"].items()}
        assert outcomes["open"][0] == "ok"
        status, reason, detail = outcomes["restricted"]
        assert (status, reason) == ("quarantined", "unreadable") and "restricted.pdf" in detail
        assert "Permission denied" in detail
        assert "restricted.pdf cannot be read (Permission denied)" in run.stderr
        assert report["reprocessed"] == ["restricted.pdf", ""]  # a one-document batch sends it on the same way
    finally:
        shutil.rmtree(data_root, ignore_errors=True)
