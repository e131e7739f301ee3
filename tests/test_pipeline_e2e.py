"""End to end: the real corpus_refresh and reprocess_document DAGs (dag.test) against the
real embedded Weaviate and a real MLflow store, asserting on what Weaviate holds.

The corpus is real: the Debian New Maintainers' Guide (8 pages each in en, de, ja), plus
a corrupt PDF, an empty file and a DOCX that must end in quarantine without stopping
the batch. maint-guide's sections are numbered alike in every language, which gives
the cross-lingual check its ground truth.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pipeline.embedding.embedders import get_embedder
from pipeline.stores import vector_store
from pipeline.stores.document_registry import DocumentRegistry
from pipeline.workspace import doc_id_for

from conftest import sample_guides_in, text_pdf

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"
LANGS = ["en", "de", "ja"]
REGULATION_DOC = "regs/es-lopdgdd.pdf"  # real LOPDGDD articles citing Reglamento (UE) 2016/679
BAD_INPUTS = {"corrupt.pdf": "corrupt_pdf", "empty.pdf": "empty_file", "not-a-pdf.docx": "unsupported_format"}


def live_objects(client, settings) -> dict[str, tuple[dict, list[float]]]:
    if not client.collections.exists(settings.weaviate.collection):
        return {}
    collection = client.collections.get(settings.weaviate.collection)
    return {u: (p, v) for u, p, v in vector_store.iterate_objects(collection)}


@pytest.fixture(scope="module")
def first_run(settings, weaviate_server, sample_corpus):
    from rosetta_airflow.runner import run_dag

    source = sample_guides_in(settings.source_dir, sample_corpus, LANGS)
    (source / "regs").mkdir()
    text_pdf((GOLDEN / "es-lopdgdd.txt").read_text(encoding="utf-8"), source / REGULATION_DOC)
    (source / "inbox").mkdir()
    for name in BAD_INPUTS:
        shutil.copy(FIXTURES / name, source / "inbox" / name)
    run_id, state = run_dag("corpus_refresh", {"paths": [], "force": False}, settings)
    return {"run_id": run_id, "state": state, "source": source}


def doc_id(settings, relative: str) -> str:
    return doc_id_for(settings.source_dir / relative, settings.source_dir)


def test_dag_run_succeeds_and_batch_is_promoted(first_run, settings):
    assert first_run["state"] == "success"
    batch = DocumentRegistry(settings.document_registry_path).batch(first_run["run_id"])
    assert batch.status == "promoted"
    assert batch.summary["loaded"] == len(LANGS) + 1
    assert batch.summary["quarantined"] == len(BAD_INPUTS)
    assert batch.summary["qa_passed"] is True


def test_bad_inputs_are_quarantined_with_reasons(first_run, settings, weaviate_server):
    registry = DocumentRegistry(settings.document_registry_path)
    for name, reason in BAD_INPUTS.items():
        row = registry.get(doc_id(settings, f"inbox/{name}"))
        assert row.status == "quarantined"
        assert row.quarantine_reason == reason
        assert name in row.quarantine_detail  # the reason names the file
    quarantined = {doc_id(settings, f"inbox/{n}") for n in BAD_INPUTS}
    assert not quarantined & {p["doc_id"] for p, _ in live_objects(weaviate_server, settings).values()}
    for name in BAD_INPUTS:  # source files are never modified or removed
        assert (first_run["source"] / "inbox" / name).read_bytes() == (FIXTURES / name).read_bytes()


def test_weaviate_holds_every_chunk_with_lineage(first_run, settings, weaviate_server):
    registry = DocumentRegistry(settings.document_registry_path)
    objects = live_objects(weaviate_server, settings)
    per_doc = Counter(p["doc_id"] for p, _ in objects.values())
    for lang in LANGS:
        row = registry.get(doc_id(settings, f"{lang}/maint-guide.pdf"))
        assert row.status == "loaded" and row.lang == lang and row.lang_confidence >= settings.language.min_confidence
        assert row.chunks > 10
        assert per_doc[row.doc_id] == row.chunks
    for uuid, (props, vector) in objects.items():
        for field in vector_store.LINEAGE_FIELDS:
            assert props[field] not in (None, "", []), f"{uuid} lacks {field}"
        assert props["batch_id"] == first_run["run_id"]
        assert props["embedder"].startswith(f"{settings.embedding.model}@")
        assert props["alignment_version"] == "identity"  # nothing promoted in MLflow yet
        assert props["text"].strip()
        assert 1 <= props["page_start"] <= props["page_end"] <= 8
        assert len(vector) == get_embedder(settings.embedding.model).dimension and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-3
        assert vector_store.chunk_uuid(props) == uuid


def test_structure_fields_are_stored_and_filterable(first_run, settings, weaviate_server):
    from weaviate.classes.query import Filter

    collection = weaviate_server.collections.get(settings.weaviate.collection)
    hits = collection.query.fetch_objects(filters=Filter.by_property("clause_number").equal("1.2"), limit=50).objects
    assert {h.properties["lang"] for h in hits} == set(LANGS)
    assert all(h.properties["structure_type"] == "CLAUSE" and h.properties["heading_path"] for h in hits)


def test_regulation_and_clause_filters(first_run, settings, weaviate_server):
    from weaviate.classes.query import Filter

    collection = weaviate_server.collections.get(settings.weaviate.collection)
    regulation_doc = doc_id(settings, REGULATION_DOC)
    gdpr = collection.query.fetch_objects(filters=Filter.by_property("regulation_ids").contains_any(["GDPR"]),
                                          limit=100).objects
    assert gdpr and {o.properties["doc_id"] for o in gdpr} == {regulation_doc}
    assert all("2016/679" in o.properties["text"] for o in gdpr)
    assert all(json.loads(o.properties["regulation_facts"])["GDPR"]["jurisdiction"] == "EU/EEA" for o in gdpr)
    article = collection.query.fetch_objects(
        filters=Filter.by_property("clause_number").equal("Artículo 1")
        & Filter.by_property("doc_id").equal(regulation_doc), limit=10).objects
    assert article and "Artículo 1. Objeto de la ley." in article[0].properties["text"]
    assert article[0].properties["lang"] == "es"


def test_cross_lingual_query_finds_the_same_section_in_english(first_run, settings, weaviate_server):
    """German and Japanese section openings, asked against English chunks only, should
    find the English chunk of the same numbered section."""
    collection = weaviate_server.collections.get(settings.weaviate.collection)
    objects = live_objects(weaviate_server, settings)
    english_sections = {p["clause_number"] for p, _ in objects.values() if p["lang"] == "en" and p["clause_number"]}
    for lang in ("de", "ja"):
        queries = {}
        for props, vector in objects.values():
            number = props["clause_number"]
            if props["lang"] == lang and number in english_sections and number not in queries:
                queries[number] = vector
        assert len(queries) >= 5
        found = 0
        for number, vector in queries.items():
            hits = vector_store.search(weaviate_server, settings, vector, limit=3, lang="en")
            found += any(h[0]["clause_number"] == number for h in hits)
        assert found / len(queries) >= 0.7, f"{lang}: {found}/{len(queries)} sections found in English"


def test_batch_is_recorded_in_mlflow(first_run, settings):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=settings.mlflow_tracking_uri)
    experiment = client.get_experiment_by_name(settings.mlflow.experiment)
    runs = client.search_runs([experiment.experiment_id], f"tags.`rosetta.batch_id` = '{first_run['run_id']}'")
    assert len(runs) == 1
    assert runs[0].data.metrics["loaded"] == len(LANGS) + 1
    assert runs[0].data.params["alignment_version.de"] == "identity"


def test_second_refresh_skips_unchanged_documents(first_run, settings, weaviate_server):
    from rosetta_airflow.runner import run_dag

    before = live_objects(weaviate_server, settings)
    run_id, state = run_dag("corpus_refresh", {"paths": [], "force": False}, settings)
    assert state == "success"
    batch = DocumentRegistry(settings.document_registry_path).batch(run_id)
    assert batch.summary["processed"] == 0
    assert batch.summary["skipped_unchanged"] == len(LANGS) + 1 + len(BAD_INPUTS)
    assert batch.status == "nothing_to_do"
    assert live_objects(weaviate_server, settings).keys() == before.keys()


def test_reprocess_replaces_only_that_documents_chunks(first_run, settings, weaviate_server):
    from rosetta_airflow.runner import run_dag

    target = doc_id(settings, "en/maint-guide.pdf")
    before = live_objects(weaviate_server, settings)
    # A new version of the English guide: its first two pages only.
    shutil.copy(FIXTURES / "en-born-digital.pdf", first_run["source"] / "en" / "maint-guide.pdf")
    run_id, state = run_dag("reprocess_document", {"document": target}, settings)
    assert state == "success"
    after = live_objects(weaviate_server, settings)
    untouched_before = {u for u, (p, _) in before.items() if p["doc_id"] != target}
    untouched_after = {u for u, (p, _) in after.items() if p["doc_id"] != target}
    assert untouched_before == untouched_after
    for uuid in untouched_after:
        assert after[uuid][0] == before[uuid][0]
    old = {u for u, (p, _) in before.items() if p["doc_id"] == target}
    new = {u for u, (p, _) in after.items() if p["doc_id"] == target}
    assert new and not (old & new)
    assert {p["batch_id"] for u, (p, _) in after.items() if u in new} == {run_id}
    assert max(p["page_end"] for u, (p, _) in after.items() if u in new) <= 2
    row = DocumentRegistry(settings.document_registry_path).get(target)
    assert row.chunks == len(new) and row.last_batch == run_id


def test_status_command_shows_documents_and_batches(first_run, settings):
    out = subprocess.run([sys.executable, "-m", "pipeline.cli.main", "status"], capture_output=True, text=True,
                         env=os.environ.copy(), check=True).stdout
    assert "quarantined" in out and "corrupt_pdf" in out and "loaded" in out
    assert first_run["run_id"] in out and "promoted" in out
