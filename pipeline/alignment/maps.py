"""Per-language alignment maps W_lang into the reference language's space, from MLflow.

A map is ``x -> normalise((x - source_mean) @ W + target_mean)``: orthogonal Procrustes
with centring and a pull toward identity (docs/decisions.md section 7). Each language has one
registered model ``<prefix>-<lang>`` in MLflow; the pipeline uses the version behind the
``production`` alias and stamps every chunk with it. With no promoted version (or for
the reference language) the identity map is used and stamped ``identity``: a
multilingual embedder is already aligned, and identity is the baseline every fitted map
must beat before it is promoted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.config import Settings
from pipeline.stores.tracking import configure_mlflow

IDENTITY = "identity"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AlignmentMap:
    lang: str
    version: str  # MLflow model version, or "identity"
    anchor_set_version: str | None
    matrix: np.ndarray | None = None
    source_mean: np.ndarray | None = None
    target_mean: np.ndarray | None = None
    embedder: str | None = None  # name@version the map was fitted for (None: identity, any embedder)

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        if self.matrix is None:
            return vectors.astype(np.float32, copy=True)
        mapped = (vectors - self.source_mean) @ self.matrix + self.target_mean
        return (mapped / np.maximum(np.linalg.norm(mapped, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def fit_procrustes(source: np.ndarray, target: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W = U Vᵀ from SVD(XᵀY + αN·I) on centred anchors; alpha=0 is plain Procrustes."""
    source_mean, target_mean = source.mean(axis=0), target.mean(axis=0)
    x, y = source - source_mean, target - target_mean
    m = x.T @ y + alpha * len(x) * np.eye(x.shape[1], dtype=x.dtype)
    u, _, vt = np.linalg.svd(m)
    return (u @ vt).astype(np.float32), source_mean.astype(np.float32), target_mean.astype(np.float32)


def registered_model_name(settings: Settings, lang: str) -> str:
    return f"{settings.alignment.registered_model_prefix}-{lang}"


def load_production_map(settings: Settings, lang: str) -> AlignmentMap:
    """The map behind the production alias, or identity when none was promoted.

    A map fitted for another embedder than the configured one is never applied: its
    input space is not this embedder's, so identity is used (and stamped) instead.
    """
    if lang == settings.reference_language:
        return AlignmentMap(lang=lang, version=IDENTITY, anchor_set_version=None)
    from mlflow.exceptions import MlflowException

    client = configure_mlflow(settings)
    try:
        model_version = client.get_model_version_by_alias(registered_model_name(settings, lang), settings.alignment.alias)
    except MlflowException:
        return AlignmentMap(lang=lang, version=IDENTITY, anchor_set_version=None)
    embedder = model_version.tags.get("embedder", "")
    if embedder.split("@")[0] != settings.embedding.model:
        log.warning("production map %s v%s was fitted for %s, not %s: using identity",
                    model_version.name, model_version.version, embedder, settings.embedding.model)
        return AlignmentMap(lang=lang, version=IDENTITY, anchor_set_version=None)
    return load_map_version(settings, lang, str(model_version.version))


def load_map_version(settings: Settings, lang: str, version: str) -> AlignmentMap:
    """One registered version of a language's map (``identity`` gives the identity map)."""
    if version == IDENTITY:
        return AlignmentMap(lang=lang, version=IDENTITY, anchor_set_version=None)
    client = configure_mlflow(settings)
    model_version = client.get_model_version(registered_model_name(settings, lang), version)
    local = Path(client.download_artifacts(model_version.run_id, f"alignment/{lang}.npz"))
    with np.load(local) as arrays:
        return AlignmentMap(
            lang=lang,
            version=str(model_version.version),
            anchor_set_version=model_version.tags.get("anchor_set_version"),
            matrix=arrays["matrix"],
            source_mean=arrays["source_mean"],
            target_mean=arrays["target_mean"],
            embedder=model_version.tags.get("embedder"),
        )
