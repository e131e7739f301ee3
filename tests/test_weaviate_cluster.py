"""A three-node Weaviate cluster on this machine (scripts/weaviate-cluster.sh), every chunk on
all three nodes (replication factor 3) and read and written at QUORUM: a node killed in the
middle of a batch's load loses and duplicates nothing, the QA gate and promotion work with it
down, and once it is back, reads at QUORUM are right, also when they need its answer.

Real servers, real documents through the real stages; compared with the objects the batch's
workspace says it loads (uuids, properties, vectors). Slow: `make test-scale`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import test_loading_faults as faults
from weaviate.exceptions import WeaviateBaseError

from pipeline.publish import load, promote, qa
from pipeline.stores import vector_store as store
from pipeline.workspace import Workspace

pytestmark = [pytest.mark.scale, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "weaviate-cluster.sh"


def free_base_port() -> int:
    """A base port whose 30 ports (three nodes, ten each) are all free."""
    for base in range(20100, 60000, 100):
        free = True
        for port in range(base, base + 30):
            with socket.socket() as s:
                free = s.connect_ex(("127.0.0.1", port)) != 0
            if not free:
                break
        if free:
            return base
    raise RuntimeError("no 30 free ports in a row")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The script's three nodes, on free ports and in a temporary folder; stopped at the end."""
    import weaviate_cluster

    env = {**os.environ, "WEAVIATE_CLUSTER_BASE_PORT": str(free_base_port()),
           "WEAVIATE_CLUSTER_DIR": str(tmp_path_factory.mktemp("weaviate-cluster"))}
    script = lambda *args: subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=180)  # noqa: E731
    started = script("start")
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert started.stdout.count("cluster says HEALTHY") == 3, started.stdout
        os.environ.update({k: env[k] for k in ("WEAVIATE_CLUSTER_BASE_PORT", "WEAVIATE_CLUSTER_DIR")})
        yield script, weaviate_cluster
    finally:
        print(script("stop").stdout)
        for key in ("WEAVIATE_CLUSTER_BASE_PORT", "WEAVIATE_CLUSTER_DIR"):
            os.environ.pop(key, None)


@pytest.fixture
def on_cluster(settings, cluster, monkeypatch):
    """Rosetta's settings pointed at the cluster as `scripts/weaviate-cluster.sh env` says."""
    _, weaviate_cluster = cluster
    for key, value in weaviate_cluster.client_environment(settings, weaviate_cluster.nodes(settings)).items():
        field = key.removeprefix("ROSETTA__WEAVIATE__").lower()
        monkeypatch.setattr(settings.weaviate, field, type(getattr(settings.weaviate, field) or "")(value))
    monkeypatch.setattr(settings.weaviate, "collection", "ClusterTest")
    return settings


def raft_leader(settings, weaviate_cluster) -> str | None:
    """The Raft leader as node0 sees the cluster (None during an election)."""
    key = store.api_key(settings)
    node = weaviate_cluster.nodes(settings)[0]
    request = urllib.request.Request(f"http://127.0.0.1:{node.http_port}/v1/cluster/statistics",
                                     headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            stats = json.load(response)["statistics"]
    except urllib.error.HTTPError:  # a node that does not answer fails the whole request
        return None
    return next((s["name"] for s in stats if s["raft"].get("state") == "Leader"), None)


def wait_until_noticed(settings, weaviate_cluster, victim, timeout_s: float = 90) -> float:
    """Seconds until the others see the killed node as gone and a leader among themselves
    (the window in which a request may time out and its Airflow task is retried)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if (weaviate_cluster.cluster_view(settings).get(victim.name) != "HEALTHY"
                and raft_leader(settings, weaviate_cluster) not in (None, victim.name)):
            return time.monotonic() - started
        time.sleep(0.5)
    raise AssertionError(f"the cluster did not notice {victim.name} was gone within {timeout_s} s")


def same_objects(actual: dict[str, tuple[dict, list[float]]], reference: list[tuple[str, dict, list[float]]]) -> None:
    """Every reference object once, with its properties and vector, and nothing else."""
    assert sorted(actual) == sorted(u for u, _, _ in reference)
    for uuid, properties, vector in reference:
        got_properties, got_vector = actual[uuid]
        assert {k: got_properties.get(k) for k in properties} == properties, uuid
        np.testing.assert_allclose(got_vector, vector, rtol=0, atol=1e-6)


def read_all(client, settings, name: str) -> dict[str, tuple[dict, list[float]]]:
    collection = store.collection(client, settings, name)
    objects = list(store.iterate_objects(collection, page_size=50))
    assert len(objects) == len({u for u, _, _ in objects}), "a uuid came back twice"
    return {u: (p, v) for u, p, v in objects}


def test_the_cluster_refuses_requests_without_the_key(on_cluster, cluster):
    _, weaviate_cluster = cluster
    for node in weaviate_cluster.nodes(on_cluster):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{node.http_port}/v1/schema", timeout=10)
        assert refused.value.code == 401


def test_a_node_killed_mid_load_loses_and_duplicates_nothing(on_cluster, cluster, sample_corpus, monkeypatch):
    settings = on_cluster
    script, weaviate_cluster = cluster
    files = {f"doc-{lang}": sample_corpus / lang / "maint-guide.pdf" for lang in ("en", "de", "es", "ja")}
    doc_ids = faults.stage_batch(settings, "cluster-b1", files)
    reference = load.batch_objects(Workspace(settings, "cluster-b1"), doc_ids)
    assert len(reference) > 60

    # The Raft leader dies if it is not the node the client talks to (the harder case: the
    # schema changes of QA and promotion then need a new election), else node2.
    leader = raft_leader(settings, weaviate_cluster)
    victim = next(n for n in weaviate_cluster.nodes(settings) if n.name == (leader if leader != "node0" else "node2"))
    # Many small requests, one at a time: the node dies after the 4th of about 25.
    monkeypatch.setattr(settings.weaviate, "batch_size", 5)
    monkeypatch.setattr(settings.weaviate, "concurrent_requests", 1)
    with store.connect(settings) as client:
        data_class = type(store.ensure_collection(client, settings, "ClusterTestProbe").data)
        client.collections.delete("ClusterTestProbe")
    original, calls = data_class.insert_many, []

    def insert_many_then_kill(self, objects):
        result = original(self, objects)
        calls.append(len(objects))
        if len(calls) == 4:
            os.kill(weaviate_cluster.pid(victim), signal.SIGKILL)
        return result

    monkeypatch.setattr(data_class, "insert_many", insert_many_then_kill)
    try:
        loaded = load.load_batch("cluster-b1", doc_ids, settings)
        outcome = "the load went on"
    except WeaviateBaseError as error:
        # A request can hang until its deadline while the others elect a new leader: the load
        # task fails, and Airflow's retry loads the batch again (same uuids).
        assert len(calls) >= 4, error
        noticed = wait_until_noticed(settings, weaviate_cluster, victim)
        loaded = load.load_batch("cluster-b1", doc_ids, settings)
        outcome = f"the load failed ({str(error)[:80]}), the retry {noticed:.0f} s later went through"
    monkeypatch.setattr(data_class, "insert_many", original)
    assert weaviate_cluster.pid(victim) is None or not weaviate_cluster.ready(victim)
    assert len(calls) > 4, "the load ended before the node was killed"
    assert loaded["objects"] == len(reference)
    print(f"{victim.name} killed during the load: {outcome}; the others noticed it after "
          f"{wait_until_noticed(settings, weaviate_cluster, victim):.1f} s more")

    with store.connect(settings) as client:
        same_objects(read_all(client, settings, loaded["staging_collection"]), reference)

    report = qa.run_gate("cluster-b1", doc_ids, settings)  # one node still down
    assert report["passed"], report
    journal = promote.promote("cluster-b1", doc_ids, settings)
    assert journal["state"] == "promoted" and journal["added"] == len(reference)
    with store.connect(settings) as client:
        assert not client.collections.exists(loaded["staging_collection"])
        same_objects(read_all(client, settings, settings.weaviate.collection), reference)

    # The node comes back; QUORUM reads are right with all three, and with another node down,
    # when one of the two answers must come from the node that missed the batch.
    restarted = script("start", victim.name)
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    with store.connect(settings) as client:
        same_objects(read_all(client, settings, settings.weaviate.collection), reference)
        live = store.live_collection(client, settings)
        for uuid, properties, vector in reference:
            obj = live.query.fetch_object_by_id(uuid, include_vector=True)
            assert obj is not None and obj.properties["text"] == properties["text"], uuid
    other = next(n for n in weaviate_cluster.nodes(settings) if n.name not in ("node0", victim.name))
    script("stop", other.name)
    try:
        with store.connect(settings) as client:
            same_objects(read_all(client, settings, settings.weaviate.collection), reference)
    finally:
        assert script("start", other.name).returncode == 0
