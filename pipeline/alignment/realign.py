"""Re-alignment: after a map is promoted, every live chunk of its language that carries
another alignment version gets the new map applied to the RAW vector its batch kept
(``embed/<doc>.raw.npy``), never to an already aligned one.

It is an ordinary batch of kind ``realign`` in the one batch lifecycle: a manifest
(pipeline.batch.discovery.write_manifest), then load -> QA gate -> promote or discard ->
finish (pipeline.batch.lifecycle.publish_batch). Promotion replaces the documents' old
chunks; a reviewer can still reject the promoted batch (``rosetta qa reject``), which
restores them. ``realign.json`` beside the manifest records the language, the map, the
source batch of each document and the documents skipped.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pipeline.alignment.maps import IDENTITY, AlignmentMap, load_production_map, registered_model_name
from pipeline.batch import lifecycle
from pipeline.batch.discovery import write_manifest
from pipeline.config import Settings
from pipeline.contracts import CleanedDocument, EmbeddedDocument, SourceDocument, StageResult
from pipeline.stages import CHUNK, EMBED, ENRICH, EXTRACT, LANGUAGE, STRUCTURE
from pipeline.stores import vector_store
from pipeline.stores.document_registry import DocumentRegistry
from pipeline.stores.tracking import configure_mlflow
from pipeline.workspace import Workspace

log = logging.getLogger(__name__)
KIND = "realign"
COPIED_STAGES = (EXTRACT, LANGUAGE, STRUCTURE, CHUNK)  # what load, QA and finish_batch read besides embed/enrich


def stale_sources(settings: Settings, lang: str, alignment: AlignmentMap) -> tuple[dict[str, str], dict[str, str]]:
    """The documents of ``lang`` whose live chunks carry another alignment version:
    doc_id -> the batch that loaded them (whose workspace has the raw vectors), and
    doc_id -> why a stale document cannot be re-aligned."""
    stale: dict[str, set[str]] = {}
    for _, p in vector_store.live_chunks(settings, ["doc_id", "lang", "alignment_version", "batch_id"]):
        if p["lang"] == lang and p["alignment_version"] != alignment.version:
            stale.setdefault(p["doc_id"], set()).add(p["batch_id"])
    sources, skipped = {}, {}
    for doc_id, batches in sorted(stale.items()):
        if len(batches) != 1:
            skipped[doc_id] = f"chunks from {len(batches)} batches: reprocess the document"
            continue
        source = Workspace(settings, next(iter(batches)))
        embedded_path = source.path(EMBED, doc_id)
        if not embedded_path.exists():
            skipped[doc_id] = f"batch workspace {source.root} has no raw vectors"
            continue
        if source.read_model(embedded_path, EmbeddedDocument).lang != lang:
            continue  # a chunk labelled lang inside another language's document
        sources[doc_id] = source.batch_id
    return sources, skipped


def source_document(settings: Settings, registry: DocumentRegistry, doc_id: str, source_batch: str) -> SourceDocument:
    """The manifest entry of a re-aligned document: the version now live, as the document
    registry records it (else as the source batch read it)."""
    known = registry.get(doc_id)
    if known is not None and known.sha256:
        source_path, sha256 = known.source_path, known.sha256
    else:
        source = Workspace(settings, source_batch)
        cleaned = source.read_model(source.path(LANGUAGE, doc_id), CleanedDocument)
        source_path, sha256 = cleaned.source_path, cleaned.sha256
    path = Path(source_path)
    return SourceDocument(doc_id=doc_id, source_path=source_path, sha256=sha256,
                          size_bytes=path.stat().st_size if path.is_file() else 0)


def prepare_realignment(batch_id: str, sources: dict[str, str], alignment: AlignmentMap,
                        settings: Settings) -> list[str]:
    """Write a re-alignment batch's workspace: the documents' chunks again, with vectors
    re-aligned by ``alignment`` FROM THE RAW VECTORS kept by the batch that produced them
    (``sources``: doc_id -> that batch's id).

    The extract, language, structure and chunk files are copied (the QA gate and
    finish_batch read them); the enrich objects are the loaded ones with
    alignment_version, anchor_set_version and batch_id restamped, so their uuids are new
    and promotion replaces the old chunks. Idempotent; returns the documents written.
    """
    ws = Workspace(settings, batch_id)
    written = []
    for doc_id, source_batch in sorted(sources.items()):
        source = Workspace(settings, source_batch)
        for stage in COPIED_STAGES:
            ws.write_json(ws.path(stage, doc_id), source.read_json(source.path(stage, doc_id)))
        embedded = source.read_model(source.path(EMBED, doc_id), EmbeddedDocument)
        raw = source.read_array(embedded.raw_vectors)
        raw_path = ws.write_array(ws.path(EMBED, doc_id, "raw.npy"), raw)
        aligned_path = ws.write_array(ws.path(EMBED, doc_id, "aligned.npy"), alignment.apply(raw))
        ws.write_model(ws.path(EMBED, doc_id), embedded.model_copy(update={
            "alignment_version": alignment.version, "anchor_set_version": alignment.anchor_set_version,
            "raw_vectors": str(raw_path), "aligned_vectors": str(aligned_path)}))
        objects = []
        for obj in source.read_json(source.path(ENRICH, doc_id)):
            properties = {**obj["properties"], "alignment_version": alignment.version,
                          "anchor_set_version": alignment.anchor_set_version or "none", "batch_id": batch_id}
            objects.append({"uuid": vector_store.chunk_uuid(properties), "properties": properties})
        if len(objects) != len(raw):
            raise RuntimeError(f"{doc_id}: batch {source_batch} has {len(objects)} chunk(s) but {len(raw)} raw vector(s)")
        ws.write_json(ws.path(ENRICH, doc_id), objects)
        written.append(doc_id)
    return written


def realign_language(settings: Settings, lang: str, batch_id: str) -> dict[str, Any]:
    """Re-align every live chunk of ``lang`` not yet at the production version, from the
    stored raw vectors, as batch ``batch_id`` (kind ``realign``): staging load, QA gate,
    then promotion (old chunks replaced) or rollback."""
    # One connection held for the whole batch: with the embedded server, every step's
    # own connect then reaches this server instead of starting and stopping another.
    with vector_store.connect(settings):
        return _realign(settings, lang, batch_id)


def _realign(settings: Settings, lang: str, batch_id: str) -> dict[str, Any]:
    alignment = load_production_map(settings, lang)
    sources, skipped = stale_sources(settings, lang, alignment)
    summary: dict[str, Any] = {"batch_id": batch_id, "kind": KIND, "lang": lang,
                               "alignment_version": alignment.version,
                               "anchor_set_version": alignment.anchor_set_version, "documents": sorted(sources),
                               "skipped": skipped, "status": "nothing_to_do", "chunks": 0}
    if not sources:
        return summary
    registry = DocumentRegistry(settings.document_registry_path)
    todo = [source_document(settings, registry, doc_id, batch) for doc_id, batch in sorted(sources.items())]
    write_manifest(settings, batch_id, KIND, todo, [])
    ws = Workspace(settings, batch_id)
    details = {k: summary[k] for k in ("batch_id", "lang", "alignment_version", "anchor_set_version", "documents",
                                       "skipped")}
    ws.write_json(ws.batch_file("realign.json"), {**details, "sources": sources})
    doc_ids = prepare_realignment(batch_id, sources, alignment, settings)
    results = [StageResult(batch_id=batch_id, doc_id=doc_id, stage=ENRICH, output=str(ws.path(ENRICH, doc_id)))
               .model_dump() for doc_id in doc_ids]
    published = lifecycle.publish_batch(batch_id, results, settings)
    promotion = ws.read_json(ws.batch_file("promotion.json"))
    summary.update(status=published["status"], chunks=published["chunks"], qa_passed=published["qa_passed"],
                   qa_failure_rate=published["qa_failure_rate"], replaced=promotion.get("replaced", 0))
    ws.write_json(ws.batch_file("realign.json"), {**details, "sources": sources, "status": summary["status"],
                                                  "chunks": summary["chunks"]})
    if alignment.version != IDENTITY:
        client = configure_mlflow(settings)
        client.set_model_version_tag(registered_model_name(settings, lang), alignment.version,
                                     "last_realign", f"{batch_id}: {summary['status']}, {summary['chunks']} chunk(s)")
    log.info("realign %s -> %s: %s, %d chunk(s) of %d document(s)", lang, alignment.version, summary["status"],
             summary["chunks"], len(doc_ids))
    return summary
