"""The load step: every object of the batch's loadable documents into its staging collection,
each with the documents that translate its own (pipeline/retrieval/pairing.py), found among the
live collection and the batch.

Idempotent: the uuids are deterministic, so a retried load overwrites what it wrote.
"""

from __future__ import annotations

import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any, Callable

import numpy as np
from weaviate.classes.query import Filter

from pipeline.config import Settings
from pipeline.contracts import EmbeddedDocument, StageResult
from pipeline.retrieval import pairing
from pipeline.retrieval.fusion import document_key, key_doc_id
from pipeline.retrieval.retriever import fusion_params
from pipeline.stages import EMBED, ENRICH
from pipeline.stores import vector_store
from pipeline.stores.write_lock import live_writes
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


def with_partners(objects: list[tuple[str, dict[str, Any], list[float]]], live, settings: Settings,
                  declared: dict[str, dict[str, bool]] | None = None) -> list[tuple[str, dict[str, Any], list[float]]]:
    """The objects with their partners (``pairing.with_partners``), in the batch or in ``live``
    (whose chunks of the batch's own documents, about to be replaced, are left out).
    ``declared``: doc_id -> {doc_id: translation}, what a user declared (the manifest's
    ``declared_pairs``); a declared document neither in the batch nor live is passed over (its
    own batch will read the declaration when it loads)."""
    batch_keys = {p["doc_id"]: document_key(p) for _, p, _ in objects}
    listed = ["doc_id", "source_sha256", "chunk_index"]

    def key_of(doc_id: str) -> str | None:
        if doc_id in batch_keys:
            return batch_keys[doc_id]
        return next((document_key(p) for _, p, _ in vector_store.iterate_objects(live, [doc_id], include_vector=False)),
                    None)

    declared_keys = {}
    for doc_id, others in (declared or {}).items():
        for other, translation in others.items():
            if doc_id in batch_keys and (other_key := key_of(other)) is not None:
                declared_keys[frozenset((batch_keys[doc_id], other_key))] = translation
    bar = fusion_params(settings, settings.embedding.model).group_similarity

    def nearest(vector: np.ndarray, lang: str) -> list[str]:
        # thrice as many: the old version of a batch document may hold some of the nearest
        found = live.query.near_vector(near_vector=vector.tolist(), limit=3 * pairing.NEIGHBOURS,
                                       distance=1 - bar, filters=Filter.by_property("lang").not_equal(lang),
                                       return_properties=listed)
        keys = [document_key(o.properties) for o in found.objects if o.properties.get("doc_id") not in batch_keys]
        return list(dict.fromkeys(keys))[:pairing.NEIGHBOURS]

    def live_neighbours(vectors: np.ndarray, langs: list[str]) -> list[list[str]]:
        # every sample of the batch, queries in flight together: 1.2 ms a query against 2.2 one
        # by one (docs/benchmarks.md)
        with ThreadPoolExecutor(max_workers=settings.weaviate.concurrent_requests) as pool:
            return list(pool.map(nearest, vectors, langs))

    @lru_cache(maxsize=64)  # an original is the candidate of each of its translations in the batch
    def live_vectors(key: str) -> np.ndarray:
        rows = sorted((p.get("chunk_index") or 0, v) for _, p, v in
                      vector_store.iterate_objects(live, [key_doc_id(key)]) if document_key(p) == key)
        return np.asarray([v for _, v in rows], dtype=np.float32)

    return pairing.with_partners(objects, bar, live_neighbours, live_vectors, declared_keys)


def pair_live_documents(settings: Settings, report: Callable[[str], None] = log.info, group: int = 50,
                        declared: dict[str, dict[str, bool]] | None = None,
                        only: list[str] | None = None) -> dict[str, int]:
    """Pair every document of the live collection (or those of ``only``, by doc_id) afresh
    from its stored vectors and what was ``declared`` of it, ``group`` documents at a time,
    each group as a batch against the rest, and rewrite their chunks' ``paired_documents`` in
    place (same uuid, same vector): how a collection loaded before pairing gets paired without
    embedding it again, and how a declaration takes effect. Idempotent; ``report`` gets a line
    per group."""
    with live_writes(settings, "rosetta pairs"), vector_store.connect(settings) as client:
        if not client.collections.exists(settings.weaviate.collection):
            return {"documents": 0, "paired": 0, "chunks": 0}
        live = vector_store.live_collection(client, settings)
        vector_store.check_embedder(live, settings)
        doc_ids = sorted({p["doc_id"] for _, p, _ in vector_store.iterate_objects(live, only, include_vector=False)})
        paired: set[str] = set()
        chunks = 0
        for start in range(0, len(doc_ids), group):
            objects = with_partners(list(vector_store.iterate_objects(live, doc_ids[start:start + group])),
                                    live, settings, declared)
            vector_store.insert_objects(live, objects, settings)
            paired |= {p["doc_id"] for _, p, _ in objects if len(p["paired_documents"]) > 1}
            chunks += len(objects)
            report(f"{min(start + group, len(doc_ids))} of {len(doc_ids)} document(s) weighed, "
                   f"{len(paired)} translate another")
    return {"documents": len(doc_ids), "paired": len(paired), "chunks": chunks}


def live_pairs(settings: Settings, declared: dict[str, dict[str, bool]] | None = None) -> list[dict[str, Any]]:
    """Every live document (its source path, key and most frequent chunk language), the source
    paths of the documents paired with it (``declared``: those of them a user declared, as in
    the registry's ``declarations``), whether it was weighed itself (False: loaded before
    pairing; a document loaded later may still have paired with it), and whether its sections
    translate each other (``translated_within``)."""
    found: dict[str, dict[str, Any]] = {}
    with vector_store.connect(settings) as client:
        if not client.collections.exists(settings.weaviate.collection):
            return []
        live = vector_store.live_collection(client, settings)
        for _, p, _ in vector_store.iterate_objects(live, include_vector=False):
            row = found.setdefault(document_key(p), {"document": p.get("source_path", ""), "key": document_key(p),
                                                     "langs": Counter(), "listed": p.get("paired_documents"),
                                                     "within": bool(p.get("translated_within"))})
            row["langs"][p.get("lang", "")] += 1
    # either side's list pairs two documents (a document loaded earlier does not list a later one)
    partners: dict[str, set[str]] = {key: set() for key in found}
    for key, row in found.items():
        for other in row["listed"] or ():
            if other != key and other in found:
                partners[key].add(other)
                partners[other].add(key)
    declared = declared or {}
    return [{"document": row["document"], "key": key, "lang": row["langs"].most_common(1)[0][0],
             "partners": sorted(found[k]["document"] for k in partners[key]),
             "declared": sorted(found[k]["document"] for k in partners[key]
                                if declared.get(key_doc_id(key), {}).get(key_doc_id(k))),
             "weighed": row["listed"] is not None, "translated_within": row["within"]}
            for key, row in sorted(found.items(), key=lambda item: item[1]["document"])]


def loadable_doc_ids(results: list[dict[str, Any]]) -> list[str]:
    return sorted(r["doc_id"] for r in results if r["status"] == "ok")


def load_batch(batch_id: str, doc_ids: list[str], settings: Settings) -> dict[str, Any]:
    """Write the batch's objects into its staging collection (idempotent: same uuids)."""
    ws = Workspace(settings, batch_id)
    objects = batch_objects(ws, doc_ids)
    name = vector_store.staging_name(settings, batch_id)
    with vector_store.connect(settings) as client:
        live = vector_store.live_collection(client, settings)
        vector_store.check_embedder(live, settings)
        objects = with_partners(objects, live, settings, ws.read_manifest().declared_pairs)
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
