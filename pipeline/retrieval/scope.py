"""Which documents a search looks in: `rosetta search --in PATH --signed-by NAME --since DAY
--until DAY`, the API's ``Scope``.

A compliance team asks of one folder of contracts, of one regulation, of what one person
signed, or of what was issued in a period. Dates are the file's own (its last modification,
else its creation: ``file_date``), each read as the day it is on the file's own clock (a contract
saved at 08:30 in Tokyo on 1 March is of 1 March, though it is still 28 February in UTC; search
shows that day too), both ends inclusive; documents that state no date are outside any period.
Weaviate compares instants, so its filter takes a day more on each side (no UTC offset reaches a
day) and candidates are then held to the period by their own day. Paths are matched against
the document registry, every path a document is known by (a copy's too), so a file, a folder
and a glob pattern all work and a match is exact; a pattern is read relative to the source
folder (as search shows a hit's file) and relative to the working directory. Signers: every word of the name, in any
case and with or without its accents ("juan perez" for Juan Pérez, "lukasz" for Łukasz,
"mueller" for Müller and "Müller" for a certificate's Mueller), in one of the names of the
chunk's signers. The names the collection holds are read first (a name no signer has is an
error, as a path no document has is), and Weaviate's filter on ``signed_by`` takes those that
fit; it finds their words among all of a chunk's signers' names ("Erika Pérez" would take a
file Erika Mustermann and Juan Pérez signed), so candidates are held to one name each
(docs/retrieval.md, "Searching some documents").
"""

from __future__ import annotations

import fnmatch
import os
import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path

from weaviate.classes.aggregate import Metrics
from weaviate.classes.query import Filter

from pipeline.config import Settings
from pipeline.retrieval.terms import plain


MAX_SIGNERS = 100_000  # distinct signers' names read (without a limit Weaviate returns the most frequent few)


@dataclass(frozen=True)
class Scope:
    paths: tuple[str, ...] = ()  # files, folders or fnmatch patterns ("*" crosses folders); any of them
    signed_by: str = ""  # a signer's name, or some of its words
    since: date | None = None  # the file dated on or after this day
    until: date | None = None  # ... on or before this one


@dataclass(frozen=True)
class ScopeFilter:
    """A resolved scope: the Weaviate filter every leg of a search takes, and what candidates
    are held to exactly: the documents (None: any) and a signer's name's words."""
    where: Filter | None
    doc_ids: frozenset[str] | None
    signer_words: tuple[frozenset[str], ...] = ()  # each word's spellings
    since: date | None = None
    until: date | None = None

    def holds(self, properties: dict) -> bool:
        if self.doc_ids is not None and properties.get("doc_id") not in self.doc_ids:
            return False
        if self.since or self.until:
            day = file_day(properties.get("file_date"))
            if day is None or (self.since and day < self.since) or (self.until and day > self.until):
                return False
        return not self.signer_words or any(is_named(self.signer_words, name)
                                            for name in properties.get("signed_by") or [])


def file_day(stamp: datetime | str | None) -> date | None:
    """The day a file is dated, on its own clock: Weaviate gives ``file_date`` back with the
    offset it was stored with (a shown chunk's JSON, as text)."""
    if isinstance(stamp, str):
        stamp = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return stamp.date() if stamp else None


UMLAUTS_WRITTEN_OUT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue"})  # Müller as a certificate spells it: Mueller


def words(text: str) -> tuple[frozenset[str], ...]:
    """A name's words as Weaviate's word tokenizer cuts them (letters and digits), each as the
    spellings it may be written in: any case, without accents, and with ä ö ü also written out."""
    found = re.findall(r"[^\W_]+", unicodedata.normalize("NFC", text).casefold())
    return tuple(frozenset({plain(w), plain(w.translate(UMLAUTS_WRITTEN_OUT))}) for w in found)


def is_named(wanted: tuple[frozenset[str], ...], name: str) -> bool:
    """Whether ``name`` has every wanted word, in one of its spellings."""
    held = frozenset().union(*words(name))
    return all(spellings & held for spellings in wanted)


def signers_named(collection, name: str) -> list[str]:
    """The signers' names the collection holds that have every word of ``name``; ValueError
    when none has."""
    held = collection.aggregate.over_all(return_metrics=Metrics("signed_by").text(
        top_occurrences_value=True, limit=MAX_SIGNERS)).properties["signed_by"].top_occurrences
    wanted = words(name)
    named = sorted(o.value for o in held if is_named(wanted, o.value))
    if not named:
        raise ValueError(f"--signed-by {name}: no document Rosetta holds was signed by that name "
                         "(every word of it is looked for in one signer's name, in any case, with or without accents)")
    return named


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


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=timezone.utc)


# Weaviate's filter on the instant takes this much more on each side of a period: a day on a
# file's own clock starts and ends as many hours from its UTC namesake as the file's offset
# states (any hour up to 23 in a PDF's date syntax); ``ScopeFilter.holds`` keeps the period's own.
OFFSETS_REACH = timedelta(days=1)


def resolve(scope: Scope | None, settings: Settings, collection) -> ScopeFilter:
    """The scope over ``collection`` (which holds the signers' names)."""
    if scope is None or not (scope.paths or scope.signed_by.strip() or scope.since or scope.until):
        return ScopeFilter(None, None)
    if scope.since and scope.until and scope.since > scope.until:
        raise ValueError(f"--since {scope.since} is after --until {scope.until}: no day is in that period")
    parts = []
    if scope.since:
        parts.append(Filter.by_property("file_date").greater_or_equal(_day_start(scope.since) - OFFSETS_REACH))
    if scope.until:
        parts.append(Filter.by_property("file_date").less_than(
            _day_start(scope.until + timedelta(days=1)) + OFFSETS_REACH))
    doc_ids = documents_at(scope.paths, settings) if scope.paths else None
    if doc_ids is not None:
        parts.append(Filter.by_property("doc_id").contains_any(sorted(doc_ids)))
    if scope.signed_by.strip():
        parts.append(Filter.by_property("signed_by").contains_any(signers_named(collection, scope.signed_by)))
    return ScopeFilter(Filter.all_of(parts) if len(parts) > 1 else parts[0], doc_ids, words(scope.signed_by),
                       scope.since, scope.until)
