"""The load step: every object of the batch's loadable documents into its staging collection.

Idempotent: the uuids are deterministic, so a retried load overwrites what it wrote.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from pipeline.config import Settings
from pipeline.contracts import EmbeddedDocument, StageResult
from pipeline.stages import EMBED, ENRICH
from pipeline.stores import vector_store
from pipeline.workspace import Workspace

log = logging.getLogger(__name__)


def batch_objects(ws: Workspace, doc_ids: list[str]) -> list[tuple[str, dict[str, Any], list[float]]]:
    """(uuid, properties, aligned vector) of every object the batch loads."""
    objects = []
    for doc_id in doc_ids:
        embedded = ws.read_model(ws.path(EMBED, doc_id), EmbeddedDocument)
        vectors = np.load(embedded.aligned_vectors)
        for obj, vector in zip(ws.read_json(ws.path(ENRICH, doc_id)), vectors, strict=True):
            objects.append((obj["uuid"], obj["properties"], vector.tolist()))
    return objects


def loadable_doc_ids(results: list[dict[str, Any]]) -> list[str]:
    return sorted(r["doc_id"] for r in results if r["status"] == "ok")


def load_batch(batch_id: str, doc_ids: list[str], settings: Settings) -> dict[str, Any]:
    """Write the batch's objects into its staging collection (idempotent: same uuids)."""
    ws = Workspace(settings, batch_id)
    objects = batch_objects(ws, doc_ids)
    name = vector_store.staging_name(settings, batch_id)
    with vector_store.connect(settings) as client:
        vector_store.check_embedder(vector_store.live_collection(client, settings), settings)
        collection = vector_store.ensure_collection(client, settings, name)
        vector_store.insert_objects(collection, objects, settings)
        count = collection.aggregate.over_all(total_count=True).total_count
    if count != len({o[0] for o in objects}):
        raise RuntimeError(f"staging collection {name} holds {count} objects, expected {len(objects)}")
    log.info("batch %s: %d chunk(s) of %d document(s) loaded into %s", batch_id, count, len(doc_ids), name)
    return {"staging_collection": name, "objects": count, "documents": doc_ids}


def run(batch_id: str, results: list[dict[str, Any]], settings: Settings) -> dict[str, Any]:
    """Load the documents that came through every stage; ``results`` are the enrich results."""
    return {"results": results, **load_batch(batch_id, loadable_doc_ids(results), settings)}


def upstream_from_workspace(settings: Settings, batch_id: str) -> list[dict[str, Any]]:
    """What the per-document stages returned, in manifest order: a document's quarantine
    record, else its enrich output."""
    ws = Workspace(settings, batch_id)
    results = []
    for doc in ws.read_manifest().documents:
        if ws.quarantine_path(doc.doc_id).exists():
            result = StageResult.model_validate(ws.read_json(ws.quarantine_path(doc.doc_id)))
        elif ws.path(ENRICH, doc.doc_id).exists():
            result = StageResult(batch_id=batch_id, doc_id=doc.doc_id, stage=ENRICH,
                                 output=str(ws.path(ENRICH, doc.doc_id)))
        else:
            raise RuntimeError(f"document {doc.doc_id} of batch {batch_id} has neither an {ENRICH} output "
                               "nor a quarantine record: its per-document stages have not all run")
        results.append(result.model_dump())
    return results


def loaded_from_workspace(settings: Settings, batch_id: str) -> dict[str, Any]:
    """What ``run`` returned: the loadable documents and their objects (distinct uuids, the
    count load_batch checked the staging collection against)."""
    ws = Workspace(settings, batch_id)
    results = upstream_from_workspace(settings, batch_id)
    doc_ids = loadable_doc_ids(results)
    uuids = {obj["uuid"] for doc_id in doc_ids for obj in ws.read_json(ws.path(ENRICH, doc_id))}
    return {"results": results, "staging_collection": vector_store.staging_name(settings, batch_id),
            "objects": len(uuids), "documents": doc_ids}
