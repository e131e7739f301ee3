"""Which documents a search looks in: `rosetta search --in PATH --signed-by NAME`, the API's
``Scope``.

A compliance team asks of one folder of contracts, of one regulation, or of what one person
signed. Paths are matched against the document registry, every path a document is known by
(a copy's too), so a file, a folder and a glob pattern all work and a match is exact; a
pattern is read relative to the source folder (as search shows a hit's file) and relative to
the working directory. Signers are Weaviate's filter on the chunks' ``signed_by``: every word
of the name, in any case, among the names of its file's signers (docs/retrieval.md,
"Searching some documents").
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

from weaviate.classes.query import Filter

from pipeline.config import Settings


@dataclass(frozen=True)
class Scope:
    paths: tuple[str, ...] = ()  # files, folders or fnmatch patterns ("*" crosses folders); any of them
    signed_by: str = ""  # a signer's name, or some of its words


@dataclass(frozen=True)
class ScopeFilter:
    """A resolved scope: the Weaviate filter every leg of a search takes, and the documents it
    may return (None: any), which candidates are held to exactly."""
    where: Filter | None
    doc_ids: frozenset[str] | None


def _forms(pattern: str, settings: Settings) -> list[str]:
    """The absolute patterns one given pattern stands for; a folder stands for all under it."""
    given = Path(pattern).expanduser()
    bases = [given] if given.is_absolute() else [settings.source_dir / given, Path.cwd() / given]
    forms = []
    for base in bases:
        text = os.path.normpath(base.absolute())
        forms += [text, text.rstrip(os.sep) + os.sep + "*"]
    return forms


def documents_at(patterns: tuple[str, ...], settings: Settings) -> frozenset[str]:
    """The documents known by a path one of ``patterns`` matches; ValueError naming the patterns
    that match none (a typo should not search everything or nothing in silence)."""
    from pipeline.stores.document_registry import DocumentRegistry

    owners = DocumentRegistry(settings.document_registry_path).path_owners()
    found: set[str] = set()
    for pattern in patterns:
        forms = _forms(pattern, settings)
        matched = {doc_id for path, doc_id in owners.items()
                   if any(fnmatch.fnmatchcase(os.path.normpath(path), form) for form in forms)}
        if not matched:
            raise ValueError(f"--in {pattern}: no document Rosetta holds is at that path "
                             f"(read from {settings.source_dir} and from {Path.cwd()}; `rosetta status` lists them)")
        found |= matched
    return frozenset(found)


def resolve(scope: Scope | None, settings: Settings) -> ScopeFilter:
    if scope is None or not (scope.paths or scope.signed_by.strip()):
        return ScopeFilter(None, None)
    parts = []
    doc_ids = documents_at(scope.paths, settings) if scope.paths else None
    if doc_ids is not None:
        parts.append(Filter.by_property("doc_id").contains_any(sorted(doc_ids)))
    if scope.signed_by.strip():
        parts.append(Filter.by_property("signed_by").contains_any([scope.signed_by.strip()]))
    return ScopeFilter(Filter.all_of(parts) if len(parts) > 1 else parts[0], doc_ids)
