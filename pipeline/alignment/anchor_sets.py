"""Versioned anchor sets and their cached vectors.

An anchor set lives in ``anchors.root``/<version>/ (written by scripts/build_anchors.py):
``rows.jsonl`` (one translation pair per line: id, kind, lang, concept, en, text, split)
and ``manifest.json`` with every row's sha256 and the set's. ``load_anchor_set`` refuses a
set whose rows do not match their manifest, so a map's recorded anchor set version and
sha256 always name exactly the pairs it was fitted and evaluated on.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.config import Settings, project_home
from pipeline.embedding.embedders import Embedder, embedder_id


class AnchorSetError(Exception):
    pass


@dataclass(frozen=True)
class AnchorSet:
    version: str
    path: Path
    manifest: dict[str, Any]
    rows: list[dict[str, Any]]

    @property
    def sha256(self) -> str:
        return self.manifest["set_sha256"]

    def pairs(self, lang: str, split: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["lang"] == lang and r["split"] == split]


def resolve_path(path: str) -> Path:
    """A configured path: absolute as given, else relative to the project home."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else project_home() / p


def anchors_root(settings: Settings) -> Path:
    return resolve_path(settings.anchors.root)


def anchor_versions(settings: Settings) -> list[str]:
    """Anchor set versions present, oldest first (v2 before v10)."""
    root = anchors_root(settings)
    found = [p.name for p in root.iterdir() if (p / "manifest.json").exists()] if root.exists() else []
    return sorted(found, key=lambda v: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", v)])


def row_digest(row: dict[str, Any]) -> str:
    """Same definition as scripts/build_anchors.py."""
    text = "\t".join([row["id"], row["kind"], row["lang"], row["en"], row["text"], row["split"]])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_anchor_set(settings: Settings, version: str | None = None) -> AnchorSet:
    """An anchor set, every row checked against its manifest's sha256."""
    version = version or settings.anchors.version
    if version == "latest":
        versions = anchor_versions(settings)
        if not versions:
            raise AnchorSetError(f"no anchor set under {anchors_root(settings)}: run scripts/build_anchors.py")
        version = versions[-1]
    path = anchors_root(settings) / version
    if not (path / "manifest.json").exists():
        raise AnchorSetError(f"anchor set {version} not found under {anchors_root(settings)}")
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (path / "rows.jsonl").read_text(encoding="utf-8").splitlines() if line]
    expected = manifest["rows"]
    bad = [r["id"] for r in rows if expected.get(r["id"], {}).get("sha256") != row_digest(r)]
    missing = set(expected) - {r["id"] for r in rows}
    if bad or missing:
        raise AnchorSetError(f"anchor set {version} does not match its manifest: {len(bad)} changed row(s) "
                             f"(first {bad[:3]}), {len(missing)} missing row(s)")
    digest = hashlib.sha256("\n".join(row_digest(r) for r in rows).encode()).hexdigest()
    if digest != manifest["set_sha256"]:
        raise AnchorSetError(f"anchor set {version}: set sha256 {digest} != manifest {manifest['set_sha256']}")
    return AnchorSet(version=version, path=path, manifest=manifest, rows=rows)


def diff_anchor_sets(old: AnchorSet, new: AnchorSet) -> dict[str, list[dict[str, Any]]]:
    """Rows added, removed and changed (same id, other content) from ``old`` to ``new``."""
    before, after = {r["id"]: r for r in old.rows}, {r["id"]: r for r in new.rows}
    fields = ("en", "text", "split", "kind")
    return {
        "added": [after[i] for i in sorted(after.keys() - before.keys())],
        "removed": [before[i] for i in sorted(before.keys() - after.keys())],
        "changed": [{"id": i, "lang": after[i]["lang"],
                     **{f: {"old": before[i][f], "new": after[i][f]} for f in fields if before[i][f] != after[i][f]}}
                    for i in sorted(before.keys() & after.keys()) if row_digest(before[i]) != row_digest(after[i])],
    }


def anchor_vectors(settings: Settings, anchors: AnchorSet, lang: str, embedder: Embedder) -> dict[str, np.ndarray]:
    """Raw vectors of a language's rows (``text``) and their English sides (``en``), in row
    order, cached under data_root by embedder and anchor set sha256."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", embedder_id(embedder))
    cache = settings.data_root / "anchor-cache" / safe / f"{anchors.sha256[:16]}-{lang}.npz"
    rows = [r for r in anchors.rows if r["lang"] == lang]
    if cache.exists():
        with np.load(cache) as arrays:
            if len(arrays["text"]) == len(rows):
                return {"text": arrays["text"], "en": arrays["en"]}
    vectors = {"text": embedder.encode([r["text"] for r in rows]), "en": embedder.encode([r["en"] for r in rows])}
    cache.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=cache.parent, suffix=".npz", delete=False) as tmp:
        np.savez(tmp, **vectors)
    Path(tmp.name).replace(cache)
    return vectors


DOCUMENT_PROVENANCE = "document:"  # a row taken from an ingested document: "document:<doc_id>:..."


def anchor_sets_using(settings: Settings, doc_id: str) -> dict[str, Any]:
    """Which anchor sets hold rows built from an ingested document (for an erasure request).

    Every row's provenance is in its set's manifest: ``gettext:<package>=<version>:...``,
    ``curated:<glossary>:...`` or, for a row taken from an ingested document,
    ``document:<doc_id>:...``. Returns the affected sets with their row ids, and per set the
    kinds of sources it was built from, so the answer "none" is explicit about why."""
    affected: dict[str, list[str]] = {}
    sources: dict[str, dict[str, int]] = {}
    for version in anchor_versions(settings):
        manifest = json.loads((anchors_root(settings) / version / "manifest.json").read_text(encoding="utf-8"))
        kinds: dict[str, int] = {}
        for row_id, row in manifest["rows"].items():
            provenance = row.get("provenance", "")
            kind = provenance.split(":", 1)[0] or "unknown"
            kinds[kind] = kinds.get(kind, 0) + 1
            if provenance.startswith(f"{DOCUMENT_PROVENANCE}{doc_id}:") or provenance == f"{DOCUMENT_PROVENANCE}{doc_id}":
                affected.setdefault(version, []).append(row_id)
        sources[version] = kinds
    from_documents = [v for v, kinds in sources.items() if kinds.get(DOCUMENT_PROVENANCE.rstrip(":"))]
    if affected:
        verdict = f"anchor set(s) {', '.join(sorted(affected))} hold rows built from document {doc_id}: rebuild them"
    elif not from_documents:
        verdict = (f"no anchor set is built from ingested documents (their rows come from "
                   f"{', '.join(sorted({k for kinds in sources.values() for k in kinds}))} sources only): "
                   f"document {doc_id} is in none of them")
    else:
        verdict = f"anchor sets {', '.join(from_documents)} hold document rows, none from document {doc_id}"
    return {"doc_id": doc_id, "affected": affected, "sources": sources, "verdict": verdict}
