"""The promotion gate, re-alignment into Weaviate, lineage and audit, against the real
embedded Weaviate and MLflow (the sqlite store under data_root, and a real
`mlflow server` on 127.0.0.1)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest
from weaviate.classes.query import Filter

from pipeline.alignment import fitting
from pipeline.alignment.evaluation import audit
from pipeline.alignment.maps import IDENTITY, load_map_version, load_production_map, registered_model_name
from pipeline.alignment.realign import realign_language
from pipeline.cli.anchors import register
from pipeline.embedding.embedders import get_embedder
from pipeline.stores.tracking import configure_mlflow
from pipeline.workspace import Workspace

from conftest import FIXTURES, free_port

pytestmark = pytest.mark.slow
LANG = "ja"


def live(client, settings):
    return client.collections.get(settings.weaviate.collection)


def chunks(client, settings) -> list[tuple[str, dict, list[float]]]:
    return [(str(o.uuid), o.properties, o.vector["default"]) for o in live(client, settings).iterator(include_vector=True)]


@pytest.fixture(scope="module")
def loaded(settings, weaviate_server, sample_corpus, tmp_path_factory):
    """An English fixture and two pages of the Japanese maint-guide, through corpus_refresh."""
    from pipeline.cli.dag_runs import run_dag

    folder = tmp_path_factory.mktemp("anchors-docs")
    source = pdfium.PdfDocument(str(sample_corpus / "ja" / "maint-guide.pdf"))
    subset = pdfium.PdfDocument.new()
    subset.import_pages(source, [0, 1])
    subset.save(str(folder / "ja-maint-guide-p1-2.pdf"))
    run_id, state = run_dag("corpus_refresh", {"paths": [str(FIXTURES / "en-born-digital.pdf"),
                                                         str(folder / "ja-maint-guide-p1-2.pdf")], "force": True}, settings)
    assert state == "success", run_id
    before = chunks(weaviate_server, settings)
    assert {p["lang"] for _, p, _ in before} >= {"en", LANG}
    return before


def use_identity(settings) -> None:
    """Production back to identity (no alias), whatever an earlier test promoted."""
    if fitting.production_version(settings, LANG) != IDENTITY:
        configure_mlflow(settings).delete_registered_model_alias(registered_model_name(settings, LANG),
                                                                 settings.alignment.alias)


@pytest.fixture
def production_map(settings, loaded) -> str:
    """A fitted map in production (fitted and promoted here unless an earlier test did)."""
    current = fitting.production_version(settings, LANG)
    if current == IDENTITY:
        fitted = fitting.fit_candidate(settings, LANG)
        assert fitting.promote(settings, LANG, fitted["version"])["promoted"]
        current = fitted["version"]
    return current


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_gate_rejects_a_bad_map_and_promotes_a_good_one(settings, weaviate_server, loaded, capsys):
    use_identity(settings)
    ja_before = {u for u, p, _ in loaded if p["lang"] == LANG}

    # Too few anchors, no pull toward identity: rejected, production unchanged.
    bad = fitting.fit_candidate(settings, LANG, alphas=[0.0], max_train=32)
    assert bad["metrics"]["fitted"]["acc1"] < bad["metrics"]["identity"]["acc1"]
    assert fitting.gate(settings, LANG, bad["version"])["decision"] == fitting.REJECTED
    refused = fitting.promote(settings, LANG, bad["version"])
    assert not refused["promoted"] and "rejected" in refused["reason"]
    assert fitting.production_version(settings, LANG) == IDENTITY

    # Fitted on the whole training split with alpha chosen there: promoted, re-aligned.
    good = fitting.fit_candidate(settings, LANG)
    decided = fitting.gate(settings, LANG, good["version"])
    assert decided["decision"] == fitting.APPROVED, decided["reason"]
    assert fitting.promote(settings, LANG, good["version"])["promoted"]
    assert fitting.production_version(settings, LANG) == good["version"]
    outcome = realign_language(settings, LANG, f"realign-test-{LANG}")
    assert outcome["status"] == "promoted" and outcome["qa_passed"]
    assert outcome["chunks"] == len(ja_before) == outcome["replaced"]

    after = chunks(weaviate_server, settings)
    ja_after = {u: p for u, p, _ in after if p["lang"] == LANG}
    assert len(ja_after) == len(ja_before) and not set(ja_after) & ja_before  # new uuids, old chunks gone
    assert {p["alignment_version"] for p in ja_after.values()} == {good["version"]}
    assert {p["batch_id"] for p in ja_after.values()} == {f"realign-test-{LANG}"}
    en_before = {u for u, p, _ in loaded if p["lang"] == "en"}
    assert {u for u, p, _ in after if p["lang"] == "en"} == en_before  # other languages untouched

    # A second pass has nothing left to do.
    assert realign_language(settings, LANG, f"realign-test-{LANG}-again")["status"] == "nothing_to_do"

    rows = {r["version"]: r for r in audit(settings) if r["lang"] == LANG}
    assert rows[bad["version"]]["decision"] == fitting.REJECTED and rows[bad["version"]]["chunks"] == 0
    assert rows[good["version"]]["decision"] == fitting.PROMOTED and rows[good["version"]]["production"]
    assert rows[good["version"]]["chunks"] == len(ja_before) and rows[IDENTITY]["chunks"] == 0
    assert run_cli(["anchors", "audit"]) == 0
    printed = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [LANG, bad["version"]] in [line[:2] for line in printed]
    assert [LANG, good["version"], "*"] in [line[:3] for line in printed]


def test_lineage_every_chunk_names_the_map_and_anchor_set_that_produced_its_vector(settings, weaviate_server, loaded):
    client = configure_mlflow(settings)
    maps, counts = {}, {}
    for uuid, p, vector in chunks(weaviate_server, settings):
        assert p["alignment_version"] and p["anchor_set_version"], uuid
        key = (p["lang"], p["alignment_version"])
        counts[key] = counts.get(key, 0) + 1
        if p["alignment_version"] == IDENTITY:
            assert p["anchor_set_version"] == "none"
        else:
            tags = client.get_model_version(registered_model_name(settings, p["lang"]), p["alignment_version"]).tags
            assert p["anchor_set_version"] == tags["anchor_set_version"]
            assert p["embedder"] == tags["embedder"]
        # The stored vector is this map applied to the raw vector kept by the chunk's batch.
        if key not in maps:
            maps[key] = load_map_version(settings, p["lang"], p["alignment_version"])
        ws = Workspace(settings, p["batch_id"])
        raw = ws.read_array(ws.path("embed", p["doc_id"], "raw.npy"))[p["chunk_index"]]
        assert np.allclose(maps[key].apply(raw[None, :])[0], vector, atol=1e-5), uuid

    audit_counts = {(r["lang"], r["version"]): r["chunks"] for r in audit(settings) if r["chunks"]}
    assert audit_counts == counts
    collection = live(weaviate_server, settings)
    for (lang, version), n in counts.items():
        direct = collection.aggregate.over_all(total_count=True, filters=Filter.by_property("lang").equal(lang)
                                               & Filter.by_property("alignment_version").equal(version)).total_count
        assert direct == n


def test_the_anchors_dag_keeps_production_when_the_refit_is_no_better(settings, weaviate_server, production_map):
    """A refit on the same anchors equals production, so it does not beat it: rejected."""
    from pipeline.cli.dag_runs import run_dag

    current = production_map
    _, state = run_dag("anchors", {"languages": [LANG], "anchor_set": ""}, settings)
    assert state == "success"
    rows = [r for r in audit(settings) if r["lang"] == LANG]
    newest = max((r for r in rows if r["version"] != IDENTITY), key=lambda r: int(r["version"]))
    assert newest["decision"] == fitting.REJECTED and "does not beat production" in newest["reason"]
    assert fitting.production_version(settings, LANG) == current


def test_a_realign_batch_rejected_in_qa_review_restores_the_chunks_it_replaced(settings, weaviate_server, loaded,
                                                                               monkeypatch):
    """`rosetta qa reject` on a promoted re-alignment batch rolls it back like any batch:
    it has a manifest, so the registry is restored too, and nothing crashes."""
    from pipeline.batch.review import review
    from pipeline.stores.document_registry import DocumentRegistry

    before = {u: p for u, p, _ in chunks(weaviate_server, settings)}
    owners = {p["doc_id"]: p["batch_id"] for p in before.values() if p["lang"] == LANG}
    # A map no live chunk carries yet, made production directly: the live chunks are stale
    # whatever an earlier test promoted. The alias is put back afterwards.
    client, name = configure_mlflow(settings), registered_model_name(settings, LANG)
    previous = fitting.production_version(settings, LANG)
    fitted = fitting.fit_candidate(settings, LANG)
    client.set_registered_model_alias(name, settings.alignment.alias, fitted["version"])
    batch_id = f"realign-review-{LANG}-v{fitted['version']}"
    try:
        outcome = realign_language(settings, LANG, batch_id)
        assert outcome["status"] == "promoted" and outcome["kind"] == "realign", outcome
        assert outcome["chunks"] == sum(p["lang"] == LANG for p in before.values()) == outcome["replaced"]
        assert {p["batch_id"] for _, p, _ in chunks(weaviate_server, settings) if p["lang"] == LANG} == {batch_id}
        ws = Workspace(settings, batch_id)
        assert ws.read_manifest().kind == "realign"
        assert {d.doc_id for d in ws.read_manifest().documents} == set(owners)
        assert ws.read_json(ws.batch_file("realign.json"))["sources"] == owners
        report = ws.read_json(ws.batch_file("qa_report.json"))
        # One more rejection than the sampling plan accepts rolls the batch back.
        rejected = [s["chunk_id"] for s in report["sample"]][:report["acceptance_number"] + 1]
        verdict = review(batch_id, rejected, "test: wrong alignment", settings)
    finally:
        if previous == IDENTITY:
            client.delete_registered_model_alias(name, settings.alignment.alias)
        else:
            client.set_registered_model_alias(name, settings.alignment.alias, previous)

    assert verdict["rolled_back"] and verdict["rollback"]["restored"] == outcome["replaced"]
    after = {u: p for u, p, _ in chunks(weaviate_server, settings)}
    assert set(after) == set(before)  # the chunks the batch replaced are back, same uuids
    assert {u: p["alignment_version"] for u, p in after.items()} == {u: p["alignment_version"] for u, p in before.items()}
    registry = DocumentRegistry(settings.document_registry_path)
    assert registry.batch(batch_id).status == "rolled_back"
    for doc_id, batch in owners.items():
        row = registry.get(doc_id)
        assert row.status == "loaded" and row.last_batch == batch, row


@pytest.fixture
def mlflow_server(settings, weaviate_server, tmp_path):
    port = free_port()
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false", "MLFLOW_DISABLE_TELEMETRY": "true"}
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("mlflow")), "server", "--host", "127.0.0.1", "--port", str(port),
         "--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}", "--artifacts-destination",
         str(tmp_path / "artifacts"), "--workers", "1"],
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "server.log", "wb"))
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            if urllib.request.urlopen(f"{url}/health", timeout=1).status == 200:
                break
        except OSError:
            time.sleep(0.5)
        assert server.poll() is None, (tmp_path / "server.log").read_text()[-2000:]
    else:
        server.terminate()
        pytest.fail(f"mlflow server did not answer: {(tmp_path / 'server.log').read_text()[-2000:]}")
    remote = settings.model_copy(deep=True)
    remote.mlflow.tracking_uri = url
    yield remote, tmp_path / "artifacts"
    server.terminate()
    server.wait(timeout=30)


def test_registry_works_against_a_real_mlflow_server(mlflow_server):
    remote, artifacts = mlflow_server
    lang = "zh"
    assert fitting.production_version(remote, lang) == IDENTITY
    fitted = fitting.fit_candidate(remote, lang)
    assert fitting.gate(remote, lang, fitted["version"])["decision"] == fitting.APPROVED
    assert fitting.promote(remote, lang, fitted["version"])["promoted"]
    production = load_production_map(remote, lang)
    assert production.version == fitted["version"] and production.anchor_set_version == "v1"
    dimension = get_embedder(remote.embedding.model).dimension
    assert production.matrix.shape == (dimension, dimension)
    assert list(artifacts.rglob(f"{lang}.npz"))  # the matrix went through the server's artifact store
    rows = [r for r in audit(remote) if r["lang"] == lang]
    assert [r["version"] for r in rows] == [IDENTITY, fitted["version"]] and rows[1]["production"]
