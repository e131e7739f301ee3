"""The embed stage, embedding and alignment: ChunkedDocument -> EmbeddedDocument (+ two .npy).

Raw vectors are kept next to the aligned ones so that a newly promoted W_lang can be
applied later without re-extracting or re-embedding.
"""

from __future__ import annotations

import logging

from pipeline.alignment.maps import AlignmentMap, load_production_map
from pipeline.config import Settings
from pipeline.contracts import ChunkedDocument, DocRef, EmbeddedDocument, StageResult
from pipeline.embedding.cache import VectorCache
from pipeline.embedding.embedders import embedder_id, get_embedder
from pipeline.stages import CHUNK, EMBED
from pipeline.workspace import Workspace

log = logging.getLogger(__name__)


_maps: dict[tuple[str, str, str], AlignmentMap] = {}  # (MLflow store, batch, lang): this process's batch


def batch_map(settings: Settings, batch_id: str, lang: str) -> AlignmentMap:
    """The production map of ``lang`` as this process first found it for the batch: one
    registry look-up per language and batch instead of one per document (each costs several
    MLflow store queries). A map promoted mid-batch is used from the next batch on."""
    key = (settings.mlflow_tracking_uri, batch_id, lang)
    if key not in _maps:
        if any(k[:2] != key[:2] for k in _maps):
            _maps.clear()
        _maps[key] = load_production_map(settings, lang)
    return _maps[key]


def warm(settings: Settings) -> None:
    """Load the embedder's weights and import MLflow (2 s) before the first document needs
    them; MLflow's store is opened then, by one process only (a new sqlite store migrates
    itself on first open)."""
    get_embedder(settings.embedding.model, settings.embedding.batch_size).encode(["Rosetta"])
    import mlflow  # noqa: F401


def run(ref: DocRef, settings: Settings) -> StageResult:
    ws = Workspace(settings, ref.batch_id)
    chunked = ws.read_model(ws.path(CHUNK, ref.doc_id), ChunkedDocument)
    embedder = get_embedder(settings.embedding.model, settings.embedding.batch_size)
    # a chunk whose text was embedded before (reprocessed, a clause repeated) is not encoded again
    cache = VectorCache(settings.embedding_cache_path, embedder, enabled=settings.embedding.cache_mb > 0)
    raw = cache.encode([c.text for c in chunked.chunks])
    log.info("%s: %d chunk(s) embedded, %d of them found in the embedding cache", ref.doc_id, len(chunked.chunks),
             cache.hits)
    # each chunk is aligned with its own language's map (a mixed document has several)
    maps = {lang: batch_map(settings, ref.batch_id, lang) for lang in {chunked.lang, *(c.lang for c in chunked.chunks)}}
    aligned = raw.copy()
    for lang, alignment in maps.items():
        rows = [i for i, c in enumerate(chunked.chunks) if c.lang == lang]
        if rows:
            aligned[rows] = alignment.apply(raw[rows])
    raw_path = ws.write_array(ws.path(EMBED, ref.doc_id, "raw.npy"), raw)
    aligned_path = ws.write_array(ws.path(EMBED, ref.doc_id, "aligned.npy"), aligned)
    main = maps[chunked.lang]
    embedded = EmbeddedDocument(
        doc_id=ref.doc_id, lang=chunked.lang, embedder=embedder_id(embedder), dimension=embedder.dimension,
        alignment_version=main.version, anchor_set_version=main.anchor_set_version,
        alignment_versions={lang: m.version for lang, m in maps.items()},
        raw_vectors=str(raw_path), aligned_vectors=str(aligned_path),
    )
    out = ws.write_model(ws.path(EMBED, ref.doc_id), embedded)
    return StageResult(batch_id=ref.batch_id, doc_id=ref.doc_id, stage=EMBED, output=str(out))
