"""The loading and QA promise, proven against the real Weaviate server: a bad batch never
reaches the live collection, and no retry or crash duplicates or loses a chunk.

Batches are built with the real stage functions on real documents; bad chunks are
injected into the batch workspace between enrichment and loading. Each test works on
its own live collection, compared before/after by uuid, properties and vector.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import uuid as uuidlib
from pathlib import Path

import numpy as np
import pytest
from conftest import text_pdf

from pipeline.batch import discovery, recovery, review, runner
from pipeline.contracts import DocRef
from pipeline.publish import load, promote, qa
from pipeline.stores import embedded_server
from pipeline.stores import vector_store as store
from pipeline.stores.document_registry import DocumentRegistry
from pipeline.workspace import Workspace

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def live(settings, weaviate_server, monkeypatch):
    """A fresh live collection name for this test (staging names derive from it)."""
    name = f"FaultTest{uuidlib.uuid4().hex[:10]}"
    monkeypatch.setattr(settings.weaviate, "collection", name)
    yield name
    for collection in list(weaviate_server.collections.list_all()):
        if collection.startswith(name):
            weaviate_server.collections.delete(collection)


def stage_batch(settings, batch_id: str, files: dict[str, Path]) -> list[str]:
    """Run the six per-document stages of a batch for {doc_id: file}; returns the doc ids."""
    docs = [discovery.source_document(path, settings, doc_id=doc_id) for doc_id, path in files.items()]
    discovery.write_manifest(settings, batch_id, "corpus_refresh", docs, [])
    for doc in docs:
        result = runner.process_document(DocRef(batch_id=batch_id, doc_id=doc.doc_id), settings)
        assert result.status == "ok", result
    return [d.doc_id for d in docs]


def snapshot(client, settings) -> dict[str, tuple[dict, list[float]]]:
    if not client.collections.exists(settings.weaviate.collection):
        return {}
    return {u: (p, v) for u, p, v in store.iterate_objects(client.collections.get(settings.weaviate.collection))}


def assert_same(before: dict, after: dict) -> None:
    assert after.keys() == before.keys()
    for uuid, (props, vector) in before.items():
        assert after[uuid][0] == props
        np.testing.assert_allclose(after[uuid][1], vector, rtol=0, atol=1e-6)


def load_gate_decide(settings, batch_id: str, doc_ids: list[str]) -> dict:
    load.load_batch(batch_id, doc_ids, settings)
    report = qa.run_gate(batch_id, doc_ids, settings)
    if report["passed"]:
        promote.promote(batch_id, doc_ids, settings)
    else:
        promote.discard(batch_id, settings)
    return report


def inject_bad_chunks(settings, batch_id: str, doc_id: str) -> int:
    """Every chunk of the document becomes OCR garbage with a wrong language label."""
    ws = Workspace(settings, batch_id)
    path = ws.path("enrich", doc_id)
    objects = json.loads(path.read_text(encoding="utf-8"))
    for obj in objects:
        obj["properties"].update(text="@@ ## %% ~~ ^^ || ¦¦ §§ ¤¤ ©© ®® °° ±±", lang="zh")
    path.write_text(json.dumps(objects), encoding="utf-8")
    return len(objects)


@pytest.fixture
def en_pages(tmp_path) -> dict[str, Path]:
    return {"doc-en": FIXTURES / "en-born-digital.pdf"}


def test_failed_batch_is_rolled_back_completely(settings, live, weaviate_server, en_pages, sample_corpus):
    first = stage_batch(settings, "b1-good", en_pages)
    assert load_gate_decide(settings, "b1-good", first)["passed"]
    before = snapshot(weaviate_server, settings)
    assert before

    # b2 replaces doc-en and adds a German document, then carries bad chunks.
    second = stage_batch(settings, "b2-bad", {**en_pages, "doc-de": sample_corpus / "de" / "maint-guide.pdf"})
    inject_bad_chunks(settings, "b2-bad", "doc-de")
    report = load_gate_decide(settings, "b2-bad", second)

    assert not report["passed"] and report["failures"] > 0
    assert_same(before, snapshot(weaviate_server, settings))  # doc-en's old chunks are still there
    assert not weaviate_server.collections.exists(store.staging_name(settings, "b2-bad"))
    journal = Workspace(settings, "b2-bad").read_json(Workspace(settings, "b2-bad").batch_file("promotion.json"))
    assert journal["state"] == "rolled_back"
    assert "FAIL" in Workspace(settings, "b2-bad").batch_file("qa_report.txt").read_text()


def test_passing_replacement_leaves_no_old_chunk(settings, live, weaviate_server, en_pages):
    first = stage_batch(settings, "r1", en_pages)
    load_gate_decide(settings, "r1", first)
    old = set(snapshot(weaviate_server, settings))
    second = stage_batch(settings, "r2", en_pages)
    assert load_gate_decide(settings, "r2", second)["passed"]
    after = snapshot(weaviate_server, settings)
    assert not old & set(after)
    assert {p["batch_id"] for p, _ in after.values()} == {"r2"}
    staged = len(Workspace(settings, "r2").read_json(Workspace(settings, "r2").path("enrich", "doc-en")))
    assert len(after) == staged


def test_crash_between_qa_and_promotion_is_recovered_on_retry(settings, live, weaviate_server, en_pages, monkeypatch):
    first = stage_batch(settings, "c1", en_pages)
    load_gate_decide(settings, "c1", first)
    old = set(snapshot(weaviate_server, settings))
    second = stage_batch(settings, "c2", en_pages)
    load.load_batch("c2", second, settings)
    assert qa.run_gate("c2", second, settings)["passed"]

    real_delete = store.delete_uuids

    def crash(*args, **kwargs):
        raise RuntimeError("worker killed after writing the new chunks")

    monkeypatch.setattr(store, "delete_uuids", crash)
    with pytest.raises(RuntimeError, match="worker killed"):
        promote.promote("c2", second, settings)
    half = snapshot(weaviate_server, settings)
    assert old < set(half)  # new chunks written, old ones not yet removed: the crash point

    monkeypatch.setattr(store, "delete_uuids", real_delete)
    journal = promote.promote("c2", second, settings)  # the retry
    after = snapshot(weaviate_server, settings)
    assert journal["state"] == "promoted"
    assert not old & set(after)
    assert {p["batch_id"] for p, _ in after.values()} == {"c2"}
    assert len(after) == journal["added"]
    assert not weaviate_server.collections.exists(store.staging_name(settings, "c2"))


def test_a_promotion_during_an_erasure_waits_for_it(settings, live, weaviate_server, en_pages, monkeypatch):
    """An erasure copies the live collection away, drops it and copies it back: a batch
    promoted in between, the erasure's copy already read, would be dropped with it while the
    registry says loaded. The promotion waits for the erasure to finish instead."""
    from pipeline.batch import erasure

    load_gate_decide(settings, "e1", stage_batch(settings, "e1", en_pages))
    late = stage_batch(settings, "e2", {"doc-late": FIXTURES / "zh-small.pdf"})
    load.load_batch("e2", late, settings)
    assert qa.run_gate("e2", late, settings)["passed"]
    staged = len(list(store.iterate_objects(weaviate_server.collections.get(store.staging_name(settings, "e2")),
                                            include_vector=False)))

    copied, go = threading.Event(), threading.Event()
    real_ensure = store.ensure_collection

    def ensure_pausing_once_copied(client, settings_, name):
        # the erasure has read every live object and now makes the collection it copies them to
        if name.endswith("Rewrite") and threading.current_thread().name == "erasure":
            copied.set()
            assert go.wait(60)
        return real_ensure(client, settings_, name)

    monkeypatch.setattr(store, "ensure_collection", ensure_pausing_once_copied)
    erasing = threading.Thread(target=erasure.erase_from_weaviate, args=(settings, "doc-en"), name="erasure")
    erasing.start()
    assert copied.wait(60)
    promoting = threading.Thread(target=promote.promote, args=("e2", late, settings))
    promoting.start()
    time.sleep(2)
    assert promoting.is_alive(), "the promotion wrote while the erasure held the live collection"
    go.set()
    erasing.join(60)
    promoting.join(60)
    after = [p["doc_id"] for p, _ in snapshot(weaviate_server, settings).values()]
    assert after.count("doc-late") == staged > 0 and "doc-en" not in after


def test_a_writer_kept_waiting_too_long_says_who_holds_the_live_collection(settings):
    from pipeline.stores.write_lock import live_writes

    with live_writes(settings, "erasure of doc-x"):
        with pytest.raises(TimeoutError, match=r"promotion of batch b9: .*held by erasure of doc-x \(pid \d+"):
            with live_writes(settings, "promotion of batch b9", wait_s=0.3, poll_s=0.1):
                pass
    with live_writes(settings, "promotion of batch b9", wait_s=0.3):  # released: taken at once
        pass


def promote_a_replacement(settings, weaviate_server, en_pages, first: str, second: str) -> tuple[dict, dict]:
    """doc-en promoted in batch ``first``, then replaced by a promoted batch ``second`` that the
    registry records as its last: the live collection after ``first`` and ``second``'s QA report."""
    load_gate_decide(settings, first, stage_batch(settings, first, en_pages))
    before = snapshot(weaviate_server, settings)
    report = load_gate_decide(settings, second, stage_batch(settings, second, en_pages))
    assert report["passed"]
    DocumentRegistry(settings.document_registry_path).record_document("doc-en", str(en_pages["doc-en"]), status="loaded",
                                                                      last_batch=second)
    return before, report


def test_human_rejection_rolls_a_promoted_batch_back(settings, live, weaviate_server, en_pages):
    before, report = promote_a_replacement(settings, weaviate_server, en_pages, "h1", "h2")
    outcome = review.review("h2", [report["sample"][0]["chunk_id"]], "clause text truncated", settings)
    assert outcome["rolled_back"]
    assert_same(before, snapshot(weaviate_server, settings))
    row = DocumentRegistry(settings.document_registry_path).get("doc-en")
    assert row.status == "loaded" and row.last_batch == "h1"
    with pytest.raises(ValueError, match="not in batch"):
        review.review("h2", ["no-such-chunk"], "typo", settings)


def test_a_rejection_killed_half_way_through_its_rollback_is_finished_by_the_next_run(
        settings, live, weaviate_server, en_pages, monkeypatch):
    before, report = promote_a_replacement(settings, weaviate_server, en_pages, "k1", "k2")
    registry = DocumentRegistry(settings.document_registry_path)
    registry.start_batch("k2", "corpus_refresh")
    registry.finish_batch("k2", "promoted", {})

    real_insert = store.insert_objects

    def restore_half_then_die(collection, objects, settings_):
        real_insert(collection, objects[:max(1, len(objects) // 2)], settings_)
        raise RuntimeError("killed during the rollback")

    monkeypatch.setattr(store, "insert_objects", restore_half_then_die)
    with pytest.raises(RuntimeError, match="killed during the rollback"):
        review.review("k2", [report["sample"][0]["chunk_id"]], "clause text truncated", settings)
    assert registry.batch("k2").status == "rolling_back"
    assert "k2" in recovery.stale_batches(settings)  # `rosetta status` shows it meanwhile
    half = snapshot(weaviate_server, settings)
    assert half.keys() != before.keys()

    monkeypatch.setattr(store, "insert_objects", real_insert)
    actions = {done["batch_id"]: done["action"] for done in recovery.recover(settings)}
    assert actions["k2"] == "rollback finished"
    assert_same(before, snapshot(weaviate_server, settings))
    assert registry.batch("k2").status == "rolled_back"
    row = registry.get("doc-en")
    assert row.status == "loaded" and row.last_batch == "k1"


def test_an_embedded_data_folder_comes_up_on_another_port_with_what_it_holds(settings, weaviate_server, tmp_path):
    """weaviate-client names the embedded server's Raft node after its HTTP port, and the Raft
    state in the data folder knows only that name: started on another port (the port changed
    in the config, a benchmark drawing free ports), the server answered 503 until the start
    timed out. The name is kept beside the data (embedded_server.node_environment)."""
    from conftest import free_port

    def on_free_ports():
        cfg = settings.weaviate.model_copy(update={"http_port": free_port(), "grpc_port": free_port(), "url": None})
        return settings.model_copy(update={"weaviate": cfg, "data_root": tmp_path / "data"})

    first = on_free_ports()
    with store.connect(first) as client:
        client.collections.create("Probe")
        client.collections.get("Probe").data.insert({"text": "kept"})
    assert first.weaviate_node_name_path.read_text().strip() == f"Embedded_at_{first.weaviate.http_port}"
    second = on_free_ports()
    with store.connect(second) as client:
        assert [o.properties["text"] for o in client.collections.get("Probe").iterator()] == ["kept"]
    assert second.weaviate_node_name_path.read_text().strip() == f"Embedded_at_{first.weaviate.http_port}"


def test_a_task_waits_for_the_server_its_parent_is_starting_and_says_so_when_it_never_comes(settings, monkeypatch):
    """``rosetta ingest`` starts the embedded server beside its DAG runner: with
    SERVER_FROM_PARENT_ENV set, a task that needs Weaviate waits until the server's ports listen
    (opened here a second later) instead of starting a server of its own; a server that never
    comes fails the task with the port it waited on. `rosetta ingest` itself runs in
    test_security.py and test_crash_recovery.py."""
    import socket
    import threading

    from conftest import free_port

    monkeypatch.setenv(embedded_server.SERVER_FROM_PARENT_ENV, "1")
    cfg = settings.weaviate.model_copy(update={"http_port": free_port(), "grpc_port": free_port(), "url": None,
                                               "startup_timeout_s": 2})
    late = settings.model_copy(update={"weaviate": cfg})
    with pytest.raises(store.WeaviateUnavailable, match=f"not listening on 127.0.0.1:{cfg.http_port} after 2 s"):
        embedded_server.wait_for_parent_server(late)

    late.weaviate.startup_timeout_s = 60
    sockets = []

    def listen_later() -> None:
        time.sleep(1)
        for port in (cfg.http_port, cfg.grpc_port):
            s = socket.socket()
            s.bind(("127.0.0.1", port))
            s.listen()
            sockets.append(s)

    threading.Thread(target=listen_later).start()
    started = time.monotonic()
    assert embedded_server.wait_for_parent_server(late) and time.monotonic() - started >= 1
    for s in sockets:
        s.close()
    monkeypatch.delenv(embedded_server.SERVER_FROM_PARENT_ENV)
    assert not embedded_server.wait_for_parent_server(late)  # without the variable: nothing to wait for


def test_unreachable_weaviate_fails_clearly(settings, monkeypatch, en_pages):
    stage_batch(settings, "u1", en_pages)
    monkeypatch.setattr(settings.weaviate, "url", "http://127.0.0.1:9")
    with pytest.raises(store.WeaviateUnavailable, match="127.0.0.1:9.*unreachable"):
        load.load_batch("u1", ["doc-en"], settings)


def test_unreachable_weaviate_is_retried_by_airflow_and_batch_not_done(settings, monkeypatch, source_dir):
    """Through the DAG: load fails on every try, Airflow retries it, the batch stays undone."""
    from rosetta_airflow.runner import run_dag

    from pipeline.config import get_settings

    # content no other test here loads: the same content would be the same document (an alias)
    text_pdf((GOLDEN / "en-mpl.txt").read_text(encoding="utf-8")[:2000], source_dir / "unreachable.pdf")
    monkeypatch.setenv("ROSETTA__WEAVIATE__URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ROSETTA__AIRFLOW__RETRIES", "1")
    monkeypatch.setenv("ROSETTA__AIRFLOW__RETRY_DELAY_S", "1")
    get_settings.cache_clear()
    try:
        run_id, state = run_dag("corpus_refresh", {"paths": [str(source_dir)], "force": True}, get_settings())
    finally:
        get_settings.cache_clear()
    assert state == "failed"
    from airflow.models.dagrun import DagRun

    tries = {ti.task_id: ti.try_number for ti in DagRun.find(dag_id="corpus_refresh", run_id=run_id)[0].get_task_instances()}
    assert tries["load"] == 2  # the first try and one retry
    registry = DocumentRegistry(settings.document_registry_path)
    assert registry.batch(run_id).status == "running"  # never marked done
    assert registry.find_by_path(str((source_dir / "unreachable.pdf").resolve())).status != "loaded"


def free_ports_pair() -> int:
    """A port free with the next one: Raft's, and its RPC's one above it (Weaviate finds a
    node's RPC at its Raft port + 1)."""
    from conftest import free_port

    while True:
        port = free_port()
        with socket.socket() as above:
            try:
                above.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port


def _start_server(settings, binary: Path, data: Path, http_port: int, grpc_port: int,
                  ports: list[int]) -> subprocess.Popen:
    """The server as embedded mode configures it (API key, loopback, tokenizers), on ports of its own."""
    env = {**os.environ, **embedded_server.embedded_environment(settings), "PERSISTENCE_DATA_PATH": str(data),
           "GRPC_PORT": str(grpc_port), "CLUSTER_HOSTNAME": "fault-node", "CLUSTER_IN_LOCALHOST": "true",
           "CLUSTER_GOSSIP_BIND_PORT": str(ports[0]), "CLUSTER_DATA_BIND_PORT": str(ports[1]),
           "RAFT_PORT": str(ports[2]), "RAFT_INTERNAL_RPC_PORT": str(ports[2] + 1),
           "RAFT_BOOTSTRAP_EXPECT": "1", "RAFT_JOIN": f"fault-node:{ports[2]}"}
    log = data.parent / "weaviate-server.log"  # kept for the error below: a failed start says why
    with log.open("ab") as out:
        process = subprocess.Popen([str(binary), "--host", "127.0.0.1", "--port", str(http_port), "--scheme", "http"],
                                   env=env, stdout=out, stderr=subprocess.STDOUT)
    import urllib.request

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{http_port}/v1/.well-known/ready", timeout=1).status == 200:
                return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    tail = log.read_text(errors="replace").splitlines()[-5:]
    raise RuntimeError(f"weaviate did not start on port {http_port} (raft {ports[2]}); its log ends:\n" + "\n".join(tail))


@pytest.mark.integration  # starts a Weaviate server of its own
def test_server_killed_mid_load_then_retry_writes_every_chunk_once(settings, tmp_path, monkeypatch, en_pages):
    from conftest import free_port

    doc_ids = stage_batch(settings, "k1", en_pages)
    # Make the batch big enough to be interrupted: copies of the document under new ids.
    ws = Workspace(settings, "k1")
    objects = ws.read_json(ws.path("enrich", "doc-en"))
    embedded = ws.read_json(ws.path("embed", "doc-en"))
    for copy in range(1, 30):
        doc_id = f"doc-en-copy{copy}"
        copies = [{"uuid": store.chunk_uuid({**o["properties"], "doc_id": doc_id}),
                   "properties": {**o["properties"], "doc_id": doc_id}} for o in objects]
        ws.write_json(ws.path("enrich", doc_id), copies)
        ws.write_json(ws.path("embed", doc_id), embedded)
        doc_ids.append(doc_id)
    expected = {o[0] for o in load.batch_objects(ws, doc_ids)}

    http_port, grpc_port = free_port(), free_port()
    ports = [free_port(), free_port(), free_ports_pair()]
    binary = embedded_server.embedded_binary_path(settings)
    key = store.api_key(settings)  # the embedded server's key, which _start_server configures
    data = tmp_path / "weaviate-data"
    monkeypatch.setattr(settings.weaviate, "url", f"http://127.0.0.1:{http_port}")
    monkeypatch.setattr(settings.weaviate, "api_key", key)
    monkeypatch.setattr(settings.weaviate, "grpc_port", grpc_port)
    monkeypatch.setattr(settings.weaviate, "batch_size", 10)  # many small requests: time to interrupt them
    monkeypatch.setattr(settings.weaviate, "concurrent_requests", 1)
    monkeypatch.setattr(settings.weaviate, "collection", "KillTest")
    server = _start_server(settings, binary, data, http_port, grpc_port, ports)
    try:
        killed = threading.Event()

        def kill_when_half_loaded():
            import weaviate

            with weaviate.connect_to_local(port=http_port, grpc_port=grpc_port, auth_credentials=key) as client:
                name = store.staging_name(settings, "k1")
                while not killed.is_set():
                    try:
                        count = client.collections.get(name).aggregate.over_all(total_count=True).total_count
                    except weaviate.exceptions.WeaviateBaseError:
                        count = 0  # the staging collection is not there (or not queryable) yet
                    if count >= 20:
                        server.kill()
                        killed.set()
                        return
                    time.sleep(0.02)

        watcher = threading.Thread(target=kill_when_half_loaded, daemon=True)
        watcher.start()
        with pytest.raises(Exception):
            load.load_batch("k1", doc_ids, settings)
        assert killed.is_set(), "the load finished before the server could be killed"
        server.wait(timeout=10)

        server = _start_server(settings, binary, data, http_port, grpc_port, ports)
        load.load_batch("k1", doc_ids, settings)  # the retry
        import weaviate

        with weaviate.connect_to_local(port=http_port, grpc_port=grpc_port, auth_credentials=key) as client:
            staged = [u for u, _, _ in store.iterate_objects(client.collections.get(store.staging_name(settings, "k1")),
                                                               include_vector=False)]
        assert len(staged) == len(set(staged)) == len(expected)
        assert set(staged) == expected
    finally:
        server.kill()
        server.wait(timeout=10)


def test_collection_config_read_back_shows_pq_and_replication(settings, live, weaviate_server):
    store.live_collection(weaviate_server, settings)
    config = weaviate_server.collections.get(settings.weaviate.collection).config.get()
    quantizer = config.vector_config["default"].vector_index_config.quantizer
    assert type(quantizer).__name__ == "_PQConfig"
    assert quantizer.training_limit == settings.weaviate.pq_min_objects
    assert config.replication_config.factor == settings.weaviate.replication_factor
    collection = store.live_collection(weaviate_server, settings)
    assert collection.consistency_level.value == settings.weaviate.consistency_level


def test_reads_of_a_selection_past_the_servers_result_cap_miss_nothing(settings, weaviate_server, live, monkeypatch):
    """Filtered reads page by offset, which Weaviate caps (QUERY_MAXIMUM_RESULTS); past the cap
    they go document by document. The cap is lowered here so that a small collection crosses it:
    two versions of one document (as between a promotion's insert and its delete), another
    document, a third one left out, and a batch filter on top."""
    monkeypatch.setattr(store, "OFFSET_CAP", 40)
    collection = store.ensure_collection(weaviate_server, settings, live)
    rng = np.random.default_rng(7)
    objects = []
    for doc_id, batch_id, count in (("doc-a", "b1", 30), ("doc-a", "b2", 25), ("doc-b", "b2", 20), ("doc-c", "b2", 5)):
        for index in range(count):
            vector = rng.normal(size=512)
            properties = {"text": f"{doc_id} {batch_id} {index}", "lang": "en", "doc_id": doc_id, "chunk_index": index,
                          "chunk_id": f"{doc_id}:{index:04d}", "batch_id": batch_id}
            objects.append((str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"{doc_id}/{batch_id}/{index}")), properties,
                            (vector / np.linalg.norm(vector)).tolist()))
    store.insert_objects(collection, objects, settings)
    wanted = {u for u, p, _ in objects if p["doc_id"] in ("doc-a", "doc-b")}
    read = list(store.iterate_objects(collection, ["doc-a", "doc-b"], page_size=10))
    assert len(read) == len(wanted) == 75 and {u for u, _, _ in read} == wanted
    by_uuid = {u: v for u, _, v in objects}
    assert all(np.allclose(v, by_uuid[u], atol=1e-6) for u, _, v in read)
    of_b2 = {u for u, _, _ in store.iterate_objects(collection, ["doc-a", "doc-b"], include_vector=False,
                                                     page_size=10, filters=store.batch_filter("b2"))}
    assert of_b2 == {u for u, p, _ in objects if p["doc_id"] in ("doc-a", "doc-b") and p["batch_id"] == "b2"}
    assert len(store.list_uuids(collection, page_size=16)) == 80


def test_no_batch_joins_nor_query_reads_chunks_of_another_embedder(settings, weaviate_server, live, monkeypatch):
    """A live collection built with one embedder and a config naming another: their vectors do
    not compare, so loading a batch fails with what to do, before anything is written."""
    collection = store.ensure_collection(weaviate_server, settings, live)
    store.check_embedder(collection, settings)  # empty: any embedder may start it
    vector = np.ones(8) / np.sqrt(8)
    store.insert_objects(collection, [(str(uuidlib.uuid4()), {"text": "x", "lang": "en", "doc_id": "d",
                                                              "embedder": "an-older-embedder@1.0"}, vector.tolist())],
                         settings)
    with pytest.raises(ValueError, match="holds chunks embedded by 'an-older-embedder'.*rosetta ingest --force"):
        load.load_batch("other-embedder", [], settings)
    assert not weaviate_server.collections.exists(store.staging_name(settings, "other-embedder"))
    monkeypatch.setattr(settings.embedding, "model", "an-older-embedder")
    store.check_embedder(collection, settings)
