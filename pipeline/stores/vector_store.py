"""Weaviate: connection (embedded server by default, a URL for a real cluster), the chunk
collection's schema (the one place it is defined), and the staging/promotion moves that
make a batch all-or-nothing (docs/decisions.md section 3).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Iterator
from urllib.parse import urlparse

import weaviate
from weaviate.classes.config import Configure, DataType, Property
from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter, MetadataQuery
from weaviate.embedded import EmbeddedOptions
from weaviate.exceptions import WeaviateBaseError
from weaviate.util import generate_uuid5

from pipeline.config import Settings
from pipeline.stores import secrets
from pipeline.stores.embedded_server import (LOOPBACK, SERVER_FROM_PARENT_ENV, WeaviateUnavailable, embedded_binary_dir,
                                             embedded_binary_path, embedded_environment, node_environment,
                                             server_listening, wait_for_parent_server)
from pipeline.stores.lexical import lexical_properties, lexical_property, with_lexical

log = logging.getLogger(__name__)

# The chunk schema: (name, type). Lineage fields (docs/decisions.md section 1) are all required.
PROPERTIES: list[tuple[str, DataType]] = [
    ("text", DataType.TEXT),
    # its own language, then its document's main one (cleaned.lang): absent on chunks loaded before
    ("lang", DataType.TEXT), ("doc_lang", DataType.TEXT),
    ("lang_confidence", DataType.NUMBER),
    ("doc_id", DataType.TEXT),
    ("chunk_id", DataType.TEXT),
    ("chunk_index", DataType.INT),
    ("source_path", DataType.TEXT),
    ("page_start", DataType.INT),
    ("page_end", DataType.INT),
    # the embedded file the chunk is from ("" for the document's own pages) and its page in that
    # file (0 for none): page_start and page_end count the document's pages, then its files'
    ("attachment", DataType.TEXT),
    ("attachment_page", DataType.INT),
    ("char_start", DataType.INT), ("char_end", DataType.INT),
    ("structure_type", DataType.TEXT),
    ("clause_number", DataType.TEXT),
    ("clause_id", DataType.TEXT),
    ("clause_numbers", DataType.TEXT_ARRAY),  # every clause holding the chunk, outermost first
    ("clause_path", DataType.TEXT),  # the chunk's label, e.g. "§ 1 (2)" or "§ 1 (2)–(3)"
    ("heading_path", DataType.TEXT_ARRAY),
    ("prev_clause_id", DataType.TEXT),
    ("next_clause_id", DataType.TEXT),
    ("semantic_density", DataType.NUMBER),
    ("regulation_ids", DataType.TEXT_ARRAY),
    ("regulation_facts", DataType.TEXT),  # JSON: {id: {jurisdiction, effective_date, ...}}
    # its document's key, then those of the documents found to translate it when it was loaded
    # (pipeline/retrieval/pairing.py); absent on chunks loaded before pairing
    ("paired_documents", DataType.TEXT_ARRAY),
    # whether its document's sections in two languages translate each other (a leaflet, a
    # bilingual contract); absent on chunks loaded before
    ("translated_within", DataType.BOOL),
    # what its file says about itself (pipeline/stages/enrich.file_facts): title, author, date
    # (modified, else created), the signers of its file and of the embedded file it is in as they
    # state it (not verified), those signatures as JSON, whether it changed after any of them
    ("title", DataType.TEXT), ("author", DataType.TEXT), ("file_date", DataType.DATE),
    ("signed_by", DataType.TEXT_ARRAY),
    ("signatures", DataType.TEXT),
    ("changed_after_signing", DataType.BOOL),
    # lineage
    ("source_sha256", DataType.TEXT),
    ("pipeline_version", DataType.TEXT),
    ("extraction_method", DataType.TEXT),
    ("extraction_engines", DataType.TEXT_ARRAY),
    ("embedder", DataType.TEXT),
    ("alignment_version", DataType.TEXT),
    ("anchor_set_version", DataType.TEXT),
    ("batch_id", DataType.TEXT),
]
LINEAGE_FIELDS = ["doc_id", "source_sha256", "pipeline_version", "extraction_method", "extraction_engines",
                  "embedder", "alignment_version", "anchor_set_version", "batch_id"]
PROPERTY_NAMES = [name for name, _ in PROPERTIES]


def chunk_uuid(properties: dict[str, Any]) -> str:
    """Deterministic from the chunk's lineage: a retried load rewrites the same objects."""
    key = "|".join(str(properties[k]) for k in
                   ("doc_id", "source_sha256", "chunk_index", "pipeline_version", "embedder",
                    "alignment_version", "anchor_set_version", "batch_id"))
    return str(generate_uuid5(key))


def api_key(settings: Settings) -> str | None:
    """The key a client presents: the configured one for a URL, the generated one for the
    embedded server."""
    if settings.weaviate.url:
        return settings.weaviate.api_key
    return secrets.local_secret(settings, secrets.WEAVIATE_API_KEY)


@contextmanager
def connect(settings: Settings) -> Iterator[weaviate.WeaviateClient]:
    """A client for the configured Weaviate: a URL, else the embedded server.

    If the embedded server is already running (started by another task or by
    ``embedded_server``), this connects to it; otherwise it starts one that lives as
    long as the client.
    """
    cfg = settings.weaviate
    key = api_key(settings)
    auth = weaviate.auth.AuthApiKey(key) if key else None
    if cfg.url:
        url = urlparse(cfg.url)
        try:
            client = weaviate.connect_to_custom(
                http_host=url.hostname, http_port=url.port or (443 if url.scheme == "https" else 80),
                http_secure=url.scheme == "https", grpc_host=url.hostname, grpc_port=cfg.grpc_port,
                grpc_secure=url.scheme == "https", auth_credentials=auth,
            )
        except WeaviateBaseError as exc:
            raise WeaviateUnavailable(f"Weaviate at {cfg.url} (gRPC port {cfg.grpc_port}) is unreachable: "
                                      f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}") from exc
    elif wait_for_parent_server(settings) or server_listening(settings):
        try:
            client = weaviate.connect_to_local(port=cfg.http_port, grpc_port=cfg.grpc_port, auth_credentials=auth)
        except WeaviateBaseError as exc:  # e.g. a server started with another secrets folder's key
            raise WeaviateUnavailable(
                f"the Weaviate already listening on {LOOPBACK}:{cfg.http_port} refused the key in "
                f"{secrets.secrets_folder(settings)}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}") from exc
    else:
        if not embedded_binary_path(settings).exists():
            raise RuntimeError(
                f"Weaviate server binary {embedded_binary_path(settings)} is missing: run `make install` "
                "(it builds the server from its Go module) or set ROSETTA__WEAVIATE__URL to a running server"
            )
        settings.weaviate_data_path.mkdir(parents=True, exist_ok=True)
        # connect_to_embedded takes no credentials: the same client, built with them
        client = weaviate.WeaviateClient(embedded_options=EmbeddedOptions(
            hostname=LOOPBACK, version=cfg.version, port=cfg.http_port, grpc_port=cfg.grpc_port,
            binary_path=str(embedded_binary_dir(settings)),
            persistence_data_path=str(settings.weaviate_data_path),
            additional_env_vars={**embedded_environment(settings), **node_environment(settings)},
        ), auth_client_secret=auth)
        try:
            client.connect()
        except Exception:
            client.close()  # stops a server that started but refused the client
            raise
    try:
        yield client
    finally:
        # The client stops its embedded server before closing its own connections, and the
        # server then waits some 4 s for them: close them first.
        server, client._connection.embedded_db = client._connection.embedded_db, None
        client.close()
        if server is not None:
            server.stop()


@contextmanager
def embedded_server_kept_up(settings: Settings) -> Iterator[None]:
    """Keep one embedded Weaviate up for a whole DAG run (its tasks then connect to it) instead
    of each task starting and stopping its own; nothing to do with a configured URL, or when
    the parent process keeps one up (SERVER_FROM_PARENT_ENV)."""
    if settings.weaviate.url or os.environ.get(SERVER_FROM_PARENT_ENV):
        yield
        return
    with connect(settings):
        yield


def staging_prefix(settings: Settings) -> str:
    return f"{settings.weaviate.collection}Staging_"


def staging_name(settings: Settings, batch_id: str) -> str:
    return f"{staging_prefix(settings)}{hashlib.sha1(batch_id.encode()).hexdigest()[:12]}"


_MIGRATED: set[tuple[int, str]] = set()


def collection(client: weaviate.WeaviateClient, settings: Settings, name: str):
    """A collection handle that reads and writes at weaviate.consistency_level (QUORUM: with
    replication factor 3, right while one node is down)."""
    return client.collections.get(name).with_consistency_level(consistency(settings))


def ensure_collection(client: weaviate.WeaviateClient, settings: Settings, name: str):
    """Create the collection with the one schema if it does not exist (else migrate it once
    per process and client); return it, at the configured consistency level."""
    if client.collections.exists(name):
        existing = collection(client, settings, name)
        if (id(client), name) not in _MIGRATED:
            add_missing_properties(existing)
            migrate_lexical(existing, settings)
            _MIGRATED.add((id(client), name))
        return existing
    cfg = settings.weaviate
    if name.startswith(staging_prefix(settings)):
        # A staging collection is searched only by the QA gate's few self-hit queries: an exact
        # (flat) index costs nothing to build, where HNSW costs as much as the live insert.
        index = Configure.VectorIndex.flat()
    else:
        quantizer = Configure.VectorIndex.Quantizer.pq(training_limit=cfg.pq_min_objects) if cfg.pq_enabled else None
        index = Configure.VectorIndex.hnsw(quantizer=quantizer)
    client.collections.create(
        name,
        properties=[Property(name=n, data_type=t, skip_vectorization=True) for n, t in PROPERTIES]
        + lexical_properties(settings),
        vector_config=Configure.Vectors.self_provided(vector_index_config=index),
        replication_config=Configure.replication(factor=cfg.replication_factor),
    )
    return collection(client, settings, name)


def add_missing_properties(collection) -> list[str]:
    """Add the schema properties a collection made before them lacks (no backfill: an absent
    value is what those chunks were loaded with). Returns the names added."""
    present = {p.name for p in collection.config.get().properties}
    missing = [(n, t) for n, t in PROPERTIES if n not in present]
    for name, data_type in missing:
        collection.config.add_property(Property(name=name, data_type=data_type, skip_vectorization=True))
    if missing:
        log.info("%s: added %s", collection.name, [n for n, _ in missing])
    return [n for n, _ in missing]


def migrate_lexical(collection, settings: Settings) -> int:
    """Add the lexical properties a collection made before them lacks, and backfill them
    (each object of those languages rewritten with its vector; same uuid). Returns the
    number of objects rewritten."""
    present = {p.name for p in collection.config.get().properties}
    missing = [p for p in lexical_properties(settings) if p.name not in present]
    if not missing:
        return 0
    for prop in missing:
        collection.config.add_property(prop)
    langs = {lang for lang in settings.languages if lexical_property(settings, lang) in {p.name for p in missing}}
    objects = [(u, p, v) for u, p, v in iterate_objects(collection) if p.get("lang") in langs]
    insert_objects(collection, objects, settings)
    log.info("%s: added %s, backfilled %d object(s)", collection.name, [p.name for p in missing], len(objects))
    return len(objects)


def consistency(settings: Settings):
    from weaviate.classes.config import ConsistencyLevel

    return getattr(ConsistencyLevel, settings.weaviate.consistency_level)


def live_collection(client: weaviate.WeaviateClient, settings: Settings):
    return ensure_collection(client, settings, settings.weaviate.collection)


def live_chunks(settings: Settings, props: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(uuid, properties) of every live chunk, by cursor (no result-window limit); none without one."""
    with connect(settings) as client:
        if not client.collections.exists(settings.weaviate.collection):
            return
        for obj in collection(client, settings, settings.weaviate.collection).iterator(return_properties=props):
            yield str(obj.uuid), obj.properties


def check_embedder(collection, settings: Settings) -> None:
    """Raise when the collection holds chunks of another embedder than the configured one:
    their vectors cannot be compared with the configured embedder's (another space, often
    another dimension), so a batch must not be added to them nor a query asked of them."""
    stored = collection.query.fetch_objects(limit=1, return_properties=["embedder"]).objects
    name = (stored[0].properties.get("embedder") or "").split("@")[0] if stored else ""
    if name and name != settings.embedding.model:
        raise ValueError(f"collection {collection.name} holds chunks embedded by {name!r}, but embedding.model is "
                         f"{settings.embedding.model!r}: set weaviate.collection to a new collection and run "
                         "`rosetta ingest --force` on the corpus, or configure the embedder it was built with")


def insert_objects(collection, objects: list[tuple[str, dict[str, Any], list[float]]], settings: Settings) -> None:
    """Write objects in synchronous batches (weaviate.concurrent_requests in flight), every
    per-object error checked.

    Per-object errors (the client returns them, it does not raise) are retried up to
    weaviate.max_retries times; what is left fails the task with the objects and the
    reasons. A lost server raises at once (the client's background batcher would instead
    retry with backoff and block), so Airflow retries the task; uuids are deterministic,
    so a retry overwrites what the failed attempt wrote and nothing is doubled.
    """
    size = settings.weaviate.batch_size
    pending = objects
    reasons: list[str] = []

    def send(part: list[tuple[str, dict[str, Any], list[float]]]) -> list[tuple[tuple[str, dict, list[float]], str]]:
        result = collection.data.insert_many(
            [DataObject(properties=with_lexical(p, settings), uuid=u, vector=v) for u, p, v in part])
        return [(part[index], error.message) for index, error in result.errors.items()]

    for attempt in range(1, settings.weaviate.max_retries + 1):
        parts = [pending[i:i + size] for i in range(0, len(pending), size)]
        with ThreadPoolExecutor(max_workers=settings.weaviate.concurrent_requests) as pool:
            failed = [f for part_failures in pool.map(send, parts) for f in part_failures]
        if not failed:
            return
        reasons = sorted({message for _, message in failed})
        log.warning("attempt %d: %d object(s) failed (%s); retrying", attempt, len(failed), "; ".join(reasons[:3]))
        pending = [obj for obj, _ in failed]
    raise RuntimeError(f"{len(pending)} object(s) could not be written to {collection.name}: "
                       f"{'; '.join(reasons[:5])}; first ids: {[o[0] for o in pending[:5]]}")


def iterate_objects(collection, doc_ids: list[str] | None = None, include_vector: bool = True,
                    page_size: int = 500, filters=None) -> Iterator[tuple[str, dict[str, Any], list[float] | None]]:
    """All objects, or those of some documents (also matching ``filters``), with their vectors.

    Unfiltered reads page by uuid cursor. Weaviate's cursor does not combine with filters, and a filtered
    read pages by offset, which the server caps at QUERY_MAXIMUM_RESULTS (10,000 by default): a larger
    selection (a forced refresh of a big corpus, the rollback of a big batch) is read one document at a
    time, in windows of chunk_index (each version of a document numbers its chunks from 0). A doc_id filter
    matches words, not the whole id (stopword ``a`` dropped, ``doc-a`` is ``doc``): others' rows are left out.
    """
    if doc_ids is None:
        after = None
        while True:
            page = collection.query.fetch_objects(limit=page_size, after=after, include_vector=include_vector)
            yield from _rows(page.objects, include_vector)
            if len(page.objects) < page_size:
                return
            after = page.objects[-1].uuid
    if not doc_ids:
        return
    wanted = set(doc_ids)
    selected = Filter.by_property("doc_id").contains_any(doc_ids) & filters if filters is not None \
        else Filter.by_property("doc_id").contains_any(doc_ids)
    if collection.aggregate.over_all(filters=selected, total_count=True).total_count < OFFSET_CAP:
        for offset in range(0, OFFSET_CAP, page_size):
            page = collection.query.fetch_objects(filters=selected, limit=page_size, offset=offset,
                                                  include_vector=include_vector)
            yield from (row for row in _rows(page.objects, include_vector) if row[1].get("doc_id") in wanted)
            if len(page.objects) < page_size:
                return
    for doc_id in doc_ids:
        for low in itertools.count(0, page_size):
            window = (Filter.by_property("doc_id").equal(doc_id) & Filter.by_property("chunk_index").greater_or_equal(low)
                      & Filter.by_property("chunk_index").less_than(low + page_size))
            page = collection.query.fetch_objects(filters=window & filters if filters is not None else window,
                                                  limit=OFFSET_CAP, include_vector=include_vector)
            if not page.objects:
                break
            yield from (row for row in _rows(page.objects, include_vector) if row[1].get("doc_id") == doc_id)


OFFSET_CAP = 10_000  # Weaviate's default QUERY_MAXIMUM_RESULTS: offset + limit of one query


def _rows(objects, include_vector: bool) -> Iterator[tuple[str, dict[str, Any], list[float] | None]]:
    for obj in objects:  # replaced_chunks.json holds rows: a datetime would come back as str()'s text
        properties = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in obj.properties.items()}
        yield str(obj.uuid), properties, obj.vector.get("default") if include_vector and obj.vector else None


def list_uuids(collection, page_size: int = 2000) -> list[str]:
    """Every object's uuid, nothing else read (the client's cursor pages through them)."""
    pages = collection.iterator(include_vector=False, return_properties=["chunk_index"], cache_size=page_size)
    return [str(o.uuid) for o in pages]


def fetch_by_uuid(collection, uuids: list[str], page_size: int = 500,
                  include_vector: bool = True) -> Iterator[tuple[str, dict[str, Any], list[float] | None]]:
    """These objects with their properties and, unless told not to, their vectors (those that exist)."""
    for start in range(0, len(uuids), page_size):
        part = uuids[start:start + page_size]
        page = collection.query.fetch_objects(filters=Filter.by_id().contains_any(part), limit=len(part),
                                              include_vector=include_vector)
        yield from _rows(page.objects, include_vector)


def set_source_path(collection, doc_id: str, old_path: str, new_path: str, settings: Settings) -> int:
    """A moved document: its chunks at ``old_path`` get ``new_path``, rewritten in place (same
    uuids and vectors, nothing re-embedded); idempotent. Returns the chunks rewritten."""
    if old_path == new_path:
        return 0
    moved = [(u, {**p, "source_path": new_path}, v) for u, p, v in iterate_objects(collection, [doc_id])
             if p["doc_id"] == doc_id and p["source_path"] == old_path]  # the filter matches tokens only
    insert_objects(collection, moved, settings)
    return len(moved)


def staging_collections(client: weaviate.WeaviateClient, settings: Settings) -> list[str]:
    """The staging collections that exist (a batch's lives from its load to its promotion)."""
    return sorted(name for name in client.collections.list_all(simple=True) if name.startswith(staging_prefix(settings)))


def delete_document(collection, doc_id: str) -> int:
    """Delete every object of one document; returns how many there were."""
    uuids = [u for u, p, _ in iterate_objects(collection, [doc_id], include_vector=False) if p["doc_id"] == doc_id]
    delete_uuids(collection, uuids)
    return len(uuids)


def batch_filter(batch_id: str):
    return Filter.by_property("batch_id").equal(batch_id)


def delete_uuids(collection, uuids: list[str]) -> None:
    for start in range(0, len(uuids), 1000):
        part = uuids[start:start + 1000]
        result = collection.data.delete_many(where=Filter.by_id().contains_any(part))
        if result.failed:
            raise RuntimeError(f"{result.failed} object(s) could not be deleted from {collection.name}")


def search(client: weaviate.WeaviateClient, settings: Settings, vector: list[float], limit: int = 5,
           lang: str | None = None, collection_name: str | None = None) -> list[tuple[dict[str, Any], float, str]]:
    name = collection_name or settings.weaviate.collection
    if not client.collections.exists(name):
        return []
    live = collection(client, settings, name)
    filters = Filter.by_property("lang").equal(lang) if lang else None
    result = live.query.near_vector(near_vector=vector, limit=limit, filters=filters,
                                    return_metadata=MetadataQuery(distance=True))
    return [(dict(o.properties), 1.0 - float(o.metadata.distance), str(o.uuid)) for o in result.objects]
