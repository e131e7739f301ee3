"""Stage 6, enrichment and loading.

Per document, ``run`` enriches chunks with the regulations they name
(pipeline.enrichment) and writes the Weaviate objects (properties + lineage + uuid) to
the workspace. Per batch, ``load_batch`` writes every object into the batch's staging
collection; after the QA gate, ``promote`` moves them into the live collection and
removes the replaced chunks of re-processed documents, or ``discard`` drops the staging
collection and leaves the live collection exactly as it was.

Promotion is journaled (``promotion.json``) and every step is idempotent, so a crash
between QA and promotion, or in the middle of it, is finished by a retry.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np

from pipeline import pipeline_version, store
from pipeline.config import Settings
from pipeline.contracts import ChunkedDocument, CleanedDocument, DocRef, EmbeddedDocument, StageResult
from pipeline.enrichment import find_regulations, regulation_facts
from pipeline.workspace import Workspace

STAGE = "enrich"
log = logging.getLogger(__name__)



def build_objects(cleaned: CleanedDocument, chunked: ChunkedDocument, embedded: EmbeddedDocument,
                  batch_id: str) -> list[dict[str, Any]]:
    """Weaviate objects (uuid + properties) for one document, in chunk order."""
    objects = []
    version = pipeline_version()
    for index, chunk in enumerate(chunked.chunks):
        reg_ids = find_regulations(chunk.text)
        properties = {
            "text": chunk.text, "lang": chunk.lang, "lang_confidence": cleaned.lang_confidence,
            "doc_id": chunk.doc_id, "chunk_id": chunk.chunk_id, "chunk_index": index,
            "source_path": cleaned.source_path, "page_start": chunk.page_start, "page_end": chunk.page_end,
            "char_start": chunk.start, "char_end": chunk.end, "structure_type": chunk.structure_type,
            "clause_number": chunk.clause_number or "", "clause_id": chunk.clause_id or "",
            "clause_numbers": chunk.clause_numbers,
            "heading_path": chunk.heading_path, "prev_clause_id": chunk.prev_clause_id or "",
            "next_clause_id": chunk.next_clause_id or "", "semantic_density": chunk.semantic_density,
            "regulation_ids": reg_ids,
            "regulation_facts": json.dumps(regulation_facts(reg_ids), ensure_ascii=False),
            "source_sha256": cleaned.sha256, "pipeline_version": version,
            "extraction_method": "+".join(cleaned.extraction_methods), "extraction_engines": cleaned.engines,
            "embedder": embedded.embedder, "alignment_version": embedded.alignment_version,
            "anchor_set_version": embedded.anchor_set_version or "none", "batch_id": batch_id,
        }
        objects.append({"uuid": store.chunk_uuid(properties), "properties": properties})
    return objects


def run(ref: DocRef, settings: Settings) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    cleaned = ws.read_model(ws.path("language", ref.doc_id), CleanedDocument)
    chunked = ws.read_model(ws.path("chunk", ref.doc_id), ChunkedDocument)
    embedded = ws.read_model(ws.path("embed", ref.doc_id), EmbeddedDocument)
    out = ws.write_json(ws.path(STAGE, ref.doc_id), build_objects(cleaned, chunked, embedded, ref.batch_id))
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=STAGE, output=str(out))


# --- loading --------------------------------------------------------------------------
def batch_objects(ws: Workspace, doc_ids: list[str]) -> list[tuple[str, dict[str, Any], list[float]]]:
    """(uuid, properties, aligned vector) of every object the batch loads."""
    objects = []
    for doc_id in doc_ids:
        embedded = ws.read_model(ws.path("embed", doc_id), EmbeddedDocument)
        vectors = np.load(embedded.aligned_vectors)
        for obj, vector in zip(ws.read_json(ws.path(STAGE, doc_id)), vectors, strict=True):
            objects.append((obj["uuid"], obj["properties"], vector.tolist()))
    return objects


def loadable_doc_ids(results: list[dict[str, Any]]) -> list[str]:
    return sorted(r["doc_id"] for r in results if r["status"] == "ok")


def load_batch(batch_id: str, doc_ids: list[str], settings: Settings) -> dict[str, Any]:
    """Write the batch's objects into its staging collection (idempotent: same uuids)."""
    ws = Workspace(settings, batch_id)
    objects = batch_objects(ws, doc_ids)
    name = store.staging_name(settings, batch_id)
    with store.connect(settings) as client:
        collection = store.ensure_collection(client, settings, name)
        store.insert_objects(collection, objects, settings)
        count = collection.aggregate.over_all(total_count=True).total_count
    if count != len({o[0] for o in objects}):
        raise RuntimeError(f"staging collection {name} holds {count} objects, expected {len(objects)}")
    log.info("batch %s: %d chunk(s) of %d document(s) loaded into %s", batch_id, count, len(doc_ids), name)
    return {"staging_collection": name, "objects": count, "documents": doc_ids}


def _journal(ws: Workspace) -> dict[str, Any]:
    path = ws.batch_file("promotion.json")
    return ws.read_json(path) if path.exists() else {}


def promote(batch_id: str, doc_ids: list[str], settings: Settings) -> dict[str, Any]:
    """Move the staged batch into the live collection; replace re-processed documents' chunks."""
    ws = Workspace(settings, batch_id)
    journal = _journal(ws)
    if journal.get("state") == "promoted":
        return journal
    name = store.staging_name(settings, batch_id)
    with store.connect(settings) as client:
        live = store.live_collection(client, settings)
        if not client.collections.exists(name):
            raise RuntimeError(f"staging collection {name} of batch {batch_id} is gone and the batch is not promoted")
        staged = list(store.iterate_objects(client.collections.get(name)))
        new_uuids = {uuid for uuid, _, _ in staged}
        backup_path = ws.batch_file("replaced_chunks.json")
        if not backup_path.exists():
            # What promotion will delete, saved before anything changes (used by `qa reject`).
            old = [(u, p, v) for u, p, v in store.iterate_objects(live, doc_ids) if u not in new_uuids]
            ws.write_json(backup_path, [{"uuid": u, "properties": p, "vector": v} for u, p, v in old])
        old_uuids = [o["uuid"] for o in ws.read_json(backup_path)]
        ws.write_json(ws.batch_file("promotion.json"), {"state": "promoting", "staging": name,
                                                        "added": len(new_uuids), "replaced": len(old_uuids)})
        store.insert_objects(live, staged, settings)
        store.delete_uuids(live, old_uuids)
        client.collections.delete(name)
    journal = {"state": "promoted", "staging": name, "added": len(new_uuids), "replaced": len(old_uuids)}
    ws.write_json(ws.batch_file("promotion.json"), journal)
    log.info("batch %s promoted: %d chunk(s) added, %d replaced chunk(s) removed", batch_id, len(new_uuids), len(old_uuids))
    return journal


def discard(batch_id: str, settings: Settings) -> dict[str, Any]:
    """Roll back a batch that was not promoted: drop its staging collection."""
    ws = Workspace(settings, batch_id)
    if _journal(ws).get("state") in ("promoting", "promoted"):
        raise RuntimeError(f"batch {batch_id} was already promoted; use `rosetta qa reject` to roll it back")
    name = store.staging_name(settings, batch_id)
    with store.connect(settings) as client:
        if client.collections.exists(name):
            client.collections.delete(name)
    journal = {"state": "rolled_back", "staging": name}
    ws.write_json(ws.batch_file("promotion.json"), journal)
    log.warning("batch %s rolled back: staging collection %s dropped, live collection untouched", batch_id, name)
    return journal


def rollback_promoted(batch_id: str, settings: Settings) -> dict[str, Any]:
    """Undo a promoted batch: its chunks leave the live collection and the chunks it
    replaced come back (same uuids, properties and vectors, from replaced_chunks.json).

    Chunks of this batch that a later batch has already replaced are not resurrected:
    only objects still stamped with this batch_id are removed, and a replaced chunk is
    restored only if its document has no newer chunks than this batch's. Idempotent.
    """
    ws = Workspace(settings, batch_id)
    journal = _journal(ws)
    if journal.get("state") == "rolled_back":
        return journal
    if journal.get("state") != "promoted":
        return discard(batch_id, settings)
    backup = ws.read_json(ws.batch_file("replaced_chunks.json"))
    with store.connect(settings) as client:
        live = store.live_collection(client, settings)
        current = [u for u, _, _ in store.iterate_objects(live, include_vector=False, filters=store.batch_filter(batch_id))]
        backup_docs = sorted({o["properties"]["doc_id"] for o in backup})
        superseded = {p["doc_id"] for _, p, _ in store.iterate_objects(live, backup_docs, include_vector=False)
                      if p["batch_id"] != batch_id}  # a later batch owns these documents now
        restore = [(o["uuid"], o["properties"], o["vector"]) for o in backup
                   if o["properties"]["doc_id"] not in superseded]
        ws.write_json(ws.batch_file("promotion.json"), {**journal, "state": "rolling_back"})
        store.insert_objects(live, restore, settings)
        store.delete_uuids(live, current)
    journal = {**journal, "state": "rolled_back", "after_promotion": True, "removed": len(current),
               "restored": len(restore)}
    ws.write_json(ws.batch_file("promotion.json"), journal)
    log.warning("promoted batch %s rolled back: %d chunk(s) removed, %d replaced chunk(s) restored",
                batch_id, len(current), len(restore))
    return journal
