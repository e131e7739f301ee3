"""The embedding cache (pipeline/embedding/cache.py): a passage whose exact text was embedded
before is not encoded again, with a counting fake embedder for the rules and the configured
embedder through the real embed stage."""

from __future__ import annotations

import logging

import numpy as np

from pipeline.contracts import Chunk, ChunkedDocument, DocRef, EmbeddedDocument
from pipeline.embedding.cache import VectorCache
from pipeline.embedding.embedders import get_embedder
from pipeline.stages import CHUNK, EMBED, embed
from pipeline.stores.file_cache import trim
from pipeline.workspace import Workspace


class Counting:
    """An embedder that says what it was asked to encode."""
    name, version, dimension = "counting", "1", 3

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: list[str], query: bool = False) -> np.ndarray:
        self.encoded += texts
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)


def test_known_texts_are_taken_from_the_cache_and_each_new_one_encoded_once(tmp_path):
    embedder = Counting()
    first = VectorCache(tmp_path, embedder).encode(["a clause", "b clause", "a clause"])
    assert embedder.encoded == ["a clause", "b clause"]  # the repeated clause once
    np.testing.assert_array_equal(first, embedder.encode(["a clause", "b clause", "a clause"]))

    embedder.encoded.clear()
    cache = VectorCache(tmp_path, embedder)  # another worker process, the same folder
    again = cache.encode(["b clause", "banana clause"])
    assert embedder.encoded == ["banana clause"] and cache.hits == 1
    np.testing.assert_array_equal(again[0], first[1])


def test_trimming_keeps_the_most_recently_used_within_the_bound(tmp_path):
    import os

    embedder = Counting()
    cache = VectorCache(tmp_path, embedder)
    cache.encode([f"clause {i}" for i in range(10)])
    for age, path in enumerate(sorted(cache.root.rglob("*.f32"))):  # written within the same second
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
    cache.encode(["clause 0"])  # used again: now the newest
    size = next(cache.root.rglob("*.f32")).stat().st_size
    assert trim(tmp_path, 10 * size / 2**20, "embedding cache") == 0
    assert trim(tmp_path, 9 * size / 2**20, "embedding cache") == 2  # down to nine tenths of the bound: eight kept
    embedder.encoded.clear()
    cache.encode([f"clause {i}" for i in range(10)])
    assert "clause 0" not in embedder.encoded and len(embedder.encoded) == 2
    # a temporary file a killed writer left goes by its age like the rest
    orphan = cache.root / "00" / ".tmp-left-by-a-killed-writer.f32"
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_bytes(b"\0" * size)
    os.utime(orphan, (1_000, 1_000))
    assert trim(tmp_path, 10 * size / 2**20, "embedding cache") == 2 and not orphan.exists()


def test_a_cache_that_cannot_be_opened_is_skipped_with_a_warning(tmp_path, caplog):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache's folder would be")
    embedder = Counting()
    with caplog.at_level(logging.WARNING):
        vectors = VectorCache(blocked, embedder).encode(["a clause"])
    assert vectors.shape == (1, 3) and embedder.encoded == ["a clause"]
    assert "embedding cache" in caplog.text and "not written" in caplog.text
    off = VectorCache(tmp_path / "off", embedder, enabled=False)
    assert off.encode(["a"]).shape == (1, 3) and not (tmp_path / "off").exists()


def test_the_embed_stage_reuses_the_vectors_of_chunks_embedded_before(settings, caplog):
    """The configured embedder, twice over the same document (a reprocessed one): the second
    run encodes nothing and stores the same raw vectors."""
    texts = ["Die Vereinbarung gilt zwei Jahre ab ihrer Unterzeichnung.",
             "Either party may end the agreement with three months' notice."]
    chunks = [Chunk(chunk_id=f"nda:{i}", doc_id="nda", lang=lang, text=text, start=0, end=len(text), page_start=1,
                    page_end=1, structure_type="PARAGRAPH") for i, (lang, text) in enumerate(zip(["de", "en"], texts))]
    runs = []
    for batch in ("cache-first", "cache-second"):
        ws = Workspace(settings, batch)
        ws.write_model(ws.path(CHUNK, "nda"), ChunkedDocument(doc_id="nda", lang="de", chunks=chunks))
        with caplog.at_level(logging.INFO, logger="pipeline.stages.embed"):
            embed.run(DocRef(batch_id=batch, doc_id="nda"), settings)
        embedded = ws.read_model(ws.path(EMBED, "nda"), EmbeddedDocument)
        runs.append(ws.read_array(embedded.raw_vectors))
    assert "nda: 2 chunk(s) embedded, 0 of them found" in caplog.text
    assert "nda: 2 chunk(s) embedded, 2 of them found" in caplog.text
    np.testing.assert_array_equal(runs[0], runs[1])
    dimension = get_embedder(settings.embedding.model, settings.embedding.batch_size).dimension
    assert runs[0].shape[1] == dimension and np.allclose(np.linalg.norm(runs[0], axis=1), 1.0, atol=1e-4)
