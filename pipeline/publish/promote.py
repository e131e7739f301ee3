"""The promote step: a batch that passed the QA gate moves from its staging collection into the
live collection (replacing the chunks of re-processed documents, removing those of deleted
documents, rewriting the source_path of moved ones in place); one that failed is discarded,
and the live collection stays exactly as it was. A promoted batch can be rolled back later
(``rollback_promoted``): its chunks leave, the chunks it replaced or deleted come back and
moved documents get their old path back.

Every move is journaled in ``promotion.json`` and idempotent, so a crash between QA and
promotion, or in the middle of it, is finished by a retry.
"""

from __future__ import annotations

import logging
from typing import Any

from pipeline.config import Settings
from pipeline.publish import qa
from pipeline.stores import vector_store
from pipeline.stores.write_lock import live_writes
from pipeline.workspace import Workspace

log = logging.getLogger(__name__)


def _journal(ws: Workspace) -> dict[str, Any]:
    path = ws.batch_file("promotion.json")
    return ws.read_json(path) if path.exists() else {}


def promote(batch_id: str, doc_ids: list[str], settings: Settings) -> dict[str, Any]:
    """Move the staged batch into the live collection; replace re-processed documents' chunks,
    remove deleted documents' chunks, give moved documents' chunks their new path."""
    ws = Workspace(settings, batch_id)
    journal = _journal(ws)
    if journal.get("state") == "promoted":
        return journal
    manifest = ws.read_manifest()
    removed_docs = sorted({*doc_ids, *(d.doc_id for d in manifest.deleted)})
    name = vector_store.staging_name(settings, batch_id)
    with live_writes(settings, f"promotion of batch {batch_id}"), vector_store.connect(settings) as client:
        live = vector_store.live_collection(client, settings)
        if not client.collections.exists(name):
            raise RuntimeError(f"staging collection {name} of batch {batch_id} is gone and the batch is not promoted")
        staged = list(vector_store.iterate_objects(vector_store.collection(client, settings, name)))
        new_uuids = {uuid for uuid, _, _ in staged}
        backup_path = ws.batch_file("replaced_chunks.json")
        if not backup_path.exists():
            # What promotion will delete, saved before anything changes (used by `qa reject`).
            old = [(u, p, v) for u, p, v in vector_store.iterate_objects(live, removed_docs) if u not in new_uuids]
            ws.write_json(backup_path, [{"uuid": u, "properties": p, "vector": v} for u, p, v in old])
        old_uuids = [o["uuid"] for o in ws.read_json(backup_path)]
        ws.write_json(ws.batch_file("promotion.json"), {"state": "promoting", "staging": name,
                                                        "added": len(new_uuids), "replaced": len(old_uuids)})
        vector_store.insert_objects(live, staged, settings)
        for move in manifest.moved:
            vector_store.set_source_path(live, move.doc_id, move.old_primary, move.new_primary, settings)
        vector_store.delete_uuids(live, old_uuids)
        client.collections.delete(name)
    journal = {"state": "promoted", "staging": name, "added": len(new_uuids), "replaced": len(old_uuids),
               "moved": len(manifest.moved), "deleted": len(manifest.deleted)}
    ws.write_json(ws.batch_file("promotion.json"), journal)
    log.info("batch %s promoted: %d chunk(s) added, %d replaced chunk(s) removed", batch_id, len(new_uuids), len(old_uuids))
    return journal


def discard(batch_id: str, settings: Settings) -> dict[str, Any]:
    """Roll back a batch that was not promoted: drop its staging collection."""
    ws = Workspace(settings, batch_id)
    if _journal(ws).get("state") in ("promoting", "promoted"):
        raise RuntimeError(f"batch {batch_id} was already promoted; use `rosetta qa reject` to roll it back")
    name = vector_store.staging_name(settings, batch_id)
    with vector_store.connect(settings) as client:
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
    restored only if its document has no newer chunks than this batch's. Idempotent, and
    safe to repeat after a crash in the middle: what to remove and restore is decided once,
    before anything moves, and kept in the journal (``rolling_back``), because a
    half-restored collection would make restored documents look superseded.
    """
    ws = Workspace(settings, batch_id)
    journal = _journal(ws)
    if journal.get("state") == "rolled_back":
        return journal
    if journal.get("state") not in ("promoted", "rolling_back"):
        return discard(batch_id, settings)
    backup = ws.read_json(ws.batch_file("replaced_chunks.json"))
    with live_writes(settings, f"rollback of batch {batch_id}"), vector_store.connect(settings) as client:
        live = vector_store.live_collection(client, settings)
        if journal["state"] == "promoted" or "restore" not in journal:
            journal = {**journal, "state": "rolling_back", **_rollback_plan(live, ws, batch_id, backup)}
            ws.write_json(ws.batch_file("promotion.json"), journal)
        wanted = set(journal["restore"])
        vector_store.insert_objects(live, [(o["uuid"], o["properties"], o["vector"]) for o in backup
                                           if o["uuid"] in wanted], settings)
        vector_store.delete_uuids(live, journal["remove"])
        for move in ws.read_manifest().moved:  # only chunks still at the path this batch gave them
            vector_store.set_source_path(live, move.doc_id, move.new_primary, move.old_primary, settings)
    removed, restored = journal.pop("remove"), journal.pop("restore")
    journal = {**journal, "state": "rolled_back", "after_promotion": True, "removed": len(removed),
               "restored": len(restored)}
    ws.write_json(ws.batch_file("promotion.json"), journal)
    log.warning("promoted batch %s rolled back: %d chunk(s) removed, %d replaced chunk(s) restored",
                batch_id, len(removed), len(restored))
    return journal


def _rollback_plan(live, ws: Workspace, batch_id: str, backup: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The uuids a rollback removes (this batch's chunks still live) and restores (replaced
    chunks of documents no later batch has taken over)."""
    batch_docs = [d.doc_id for d in ws.read_manifest().documents]  # the only documents it stamped
    remove = [u for u, _, _ in vector_store.iterate_objects(live, batch_docs, include_vector=False,
                                                            filters=vector_store.batch_filter(batch_id))]
    backup_docs = sorted({o["properties"]["doc_id"] for o in backup})
    superseded = {p["doc_id"] for _, p, _ in vector_store.iterate_objects(live, backup_docs, include_vector=False)
                  if p["batch_id"] != batch_id}  # a later batch owns these documents now
    return {"remove": remove, "restore": [o["uuid"] for o in backup if o["properties"]["doc_id"] not in superseded]}


def run(batch_id: str, checked: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """Promote a batch that passed the QA gate, drop the staging collection of one that failed."""
    if checked["qa_passed"]:
        outcome = promote(batch_id, checked["documents"], settings)
    else:
        outcome = discard(batch_id, settings)
    return {**checked, "promotion": outcome}


def upstream_from_workspace(settings: Settings, batch_id: str) -> dict[str, Any]:
    """What the qa step returned: the load's outcome and the verdict in qa_report.json."""
    return qa.checked_from_workspace(settings, batch_id)
