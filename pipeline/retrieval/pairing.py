"""Which documents translate each other, decided when a batch is loaded.

One chunk pair's cosine cannot tell a translation from a document that says the same thing:
licences of one kind define, grant and disclaim alike (Apache-2.0's definitions against Mulan
PSL's at 0.84, where the Arphic licence's own Chinese translation sits at 0.83-0.86). Whole
documents can. The chunks of a translation are each other's best match across the two
documents, many of them, packed in the stretch of text they cover; a look-alike matches a few
chunks scattered over a longer text (docs/benchmarks.md, "Translation pairs of documents").

``PairEvidence`` reads that from two documents' aligned chunk vectors. ``pair_batch`` runs at
load time: for every document of the batch it finds candidate documents among the live
collection and the batch (other-language neighbours of a sample of its chunks, at the group
bar or above), weighs each candidate's evidence, and returns the keys of those that
translate it. The load step stores them on every chunk of the document
(``paired_documents``, its own key first), and search lists as translations only chunks of
paired documents (``fusion.group_translations``). What a user declared (``rosetta pairs
--declare`` / ``--apart``) stands over the evidence: a translation too far from its original
for the bar (a traditional-Chinese edition), a look-alike the rule lets in. A key names the
document's content (``fusion.document_key``: doc_id and source sha256), so a reprocessed
document is paired afresh and a stale key matches nothing.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Callable, Iterable

import numpy as np

from pipeline.retrieval.fusion import document_key

log = logging.getLogger(__name__)

# Chosen on the New Maintainers' Guide's tuning pages (ten translation pairs: share of the
# smaller document 0.55-0.90, density 0.33-0.69) and on the real licences that look alike
# without translating each other (at most 0.56 and 0.20 with three matches or more; with two,
# at most 0.22 of the smaller document): docs/benchmarks.md.
SHARE_OF_SMALLER = 0.4
DENSITY = 0.25
SAMPLED_CHUNKS = 16  # per document, evenly spread, asked for their other-language neighbours
NEIGHBOURS = 5  # per sampled chunk
# documents weighed per document, the most often met first; each met by two samples at least
# (a one-chunk document has one sample)
CANDIDATES = 10


@dataclass(frozen=True)
class PairEvidence:
    """How two documents' chunks match: ``matched`` chunk pairs are each other's best match
    across the two documents at the group bar or above."""

    matched: int
    share_of_smaller: float  # matched / the smaller document's chunks
    density: float  # matched / the longer of the two stretches (first to last matched chunk) they span

    @property
    def translation(self) -> bool:
        # two matches at least, unless a document has a single chunk: one pair is no more than
        # what search sees of one chunk pair
        return (self.matched >= 2 or self.share_of_smaller == 1.0) \
            and self.share_of_smaller >= SHARE_OF_SMALLER and self.density >= DENSITY


def evidence(first: np.ndarray, second: np.ndarray, bar: float) -> PairEvidence:
    """The evidence of two documents, each given as its aligned unit chunk vectors in chunk order."""
    if not len(first) or not len(second):
        return PairEvidence(0, 0.0, 0.0)
    similarity = first @ second.T
    best_in_second, best_in_first = similarity.argmax(axis=1), similarity.argmax(axis=0)
    matched = [(i, int(j)) for i, j in enumerate(best_in_second)
               if best_in_first[j] == i and similarity[i, j] >= bar]
    if not matched:
        return PairEvidence(0, 0.0, 0.0)
    rows, columns = zip(*matched)
    span = max(max(rows) - min(rows), max(columns) - min(columns)) + 1
    return PairEvidence(len(matched), len(matched) / min(len(first), len(second)), len(matched) / span)


@dataclass
class LoadedDocument:
    """A document of the batch: its key, its aligned chunk vectors and their languages, in
    chunk order."""

    key: str
    vectors: np.ndarray
    langs: list[str]


def documents_of(objects: Iterable[tuple[str, dict[str, Any], list[float]]]) -> dict[str, LoadedDocument]:
    """The batch's objects (uuid, properties, aligned vector) as documents, by key."""
    rows: dict[str, list[tuple[int, str, list[float]]]] = {}
    for _, properties, vector in objects:
        rows.setdefault(document_key(properties), []).append(
            (properties.get("chunk_index") or 0, properties.get("lang", ""), vector))
    out = {}
    for key, chunks in rows.items():
        chunks.sort(key=lambda row: row[0])
        out[key] = LoadedDocument(key, np.asarray([v for _, _, v in chunks], dtype=np.float32),
                                  [lang for _, lang, _ in chunks])
    return out


def sampled(count: int) -> np.ndarray:
    return np.unique(np.linspace(0, count - 1, num=min(count, SAMPLED_CHUNKS)).round().astype(int))


def pair_batch(batch: dict[str, LoadedDocument], bar: float,
               live_neighbours: Callable[[np.ndarray, list[str]], list[list[str]]] | None = None,
               live_vectors: Callable[[str], np.ndarray] | None = None,
               declared: dict[frozenset[str], bool] | None = None) -> dict[str, list[str]]:
    """Every batch document's partners (keys of the documents that translate it), among the
    batch and, when given, the live collection: ``live_neighbours(vectors, langs)`` returns,
    for each vector, the keys of the live chunks nearest it in other languages than its own, at
    ``bar`` or above (only such chunks count as evidence, and a document no sample meets there
    is not read); ``live_vectors(key)`` that document's chunk vectors in chunk order.
    ``declared``: pairs of keys a user declared translations (True) or not (False), taken as
    they are, without weighing the evidence."""
    keys = list(batch)
    stacked = np.vstack([batch[k].vectors for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)
    owner = np.concatenate([[i] * len(batch[k].vectors) for i, k in enumerate(keys)]) if keys else np.zeros(0, int)
    langs = np.array([lang for k in keys for lang in batch[k].langs])
    samples = {k: sampled(len(batch[k].vectors)) for k in keys}
    asked = [(k, row) for k in keys for row in samples[k]]  # the whole batch's samples asked of live at once
    in_live = dict(zip(asked, live_neighbours(np.array([batch[k].vectors[row] for k, row in asked]),
                                              [batch[k].langs[row] for k, row in asked])
                       if live_neighbours is not None and asked else [[] for _ in asked]))
    decided: dict[frozenset[str], bool] = dict(declared or {})
    partners: dict[str, set[str]] = {k: set() for k in keys}
    for pair, translation in decided.items():
        for key in pair & partners.keys() if translation else ():
            partners[key] |= pair - {key}
    for index, key in enumerate(keys):
        document = batch[key]
        met: Counter[str] = Counter()
        rows = samples[key]
        scores = stacked @ document.vectors[rows].T  # the batch's chunks against the sample, one product
        for column, row in enumerate(rows):
            near = np.where((owner == index) | (langs == document.langs[row]), -np.inf, scores[:, column])
            nearest = np.argpartition(-near, NEIGHBOURS)[:NEIGHBOURS] if len(near) > NEIGHBOURS else range(len(near))
            met.update({keys[owner[j]] for j in nearest if near[j] >= bar} | set(in_live[(key, row)]) - {key})
        for other, times in met.most_common(CANDIDATES):
            if times < min(2, len(rows)) or frozenset((key, other)) in decided:
                continue
            if other in batch:
                vectors = batch[other].vectors
            elif live_vectors is not None:
                vectors = live_vectors(other)
            else:
                continue
            found_pair = evidence(document.vectors, vectors, bar)
            decided[frozenset((key, other))] = found_pair.translation
            if found_pair.translation:
                partners[key].add(other)
                if other in batch:
                    partners[other].add(key)
            log.debug("%s / %s: %s", key, other, found_pair)
    return {k: sorted(v) for k, v in partners.items()}


def translates_itself(document: LoadedDocument, bar: float) -> bool:
    """Whether a document's sections in two languages translate each other (a leaflet printing
    one text per market, a contract with its translation side by side): the evidence two
    documents would give (``evidence``), read between its chunks of each two languages, with
    the larger section matched as much as the smaller must be. A manual that left a paragraph
    in English gives none: that one chunk may match a chunk of the manual's, but the manual's
    language is not translated."""
    rows: dict[str, list[int]] = {}
    for row, lang in enumerate(document.langs):
        rows.setdefault(lang, []).append(row)
    for first, second in combinations(sorted(rows), 2):
        found = evidence(document.vectors[rows[first]], document.vectors[rows[second]], bar)
        if found.translation and found.matched >= SHARE_OF_SMALLER * max(len(rows[first]), len(rows[second])):
            return True
    return False


def with_partners(objects: list[tuple[str, dict[str, Any], Any]], bar: float,
                  live_neighbours: Callable[[np.ndarray, list[str]], list[list[str]]] | None = None,
                  live_vectors: Callable[[str], np.ndarray] | None = None,
                  declared: dict[frozenset[str], bool] | None = None) -> list[tuple[str, dict[str, Any], Any]]:
    """The objects (uuid, properties, aligned vector), each with ``paired_documents``: its
    document's key, then those of the documents that translate it (``pair_batch``), and
    ``translated_within``: whether its document's sections translate each other
    (``translates_itself``)."""
    documents = documents_of(objects)
    partners = pair_batch(documents, bar, live_neighbours, live_vectors, declared)
    within = {key: translates_itself(document, bar) for key, document in documents.items()}
    log.info("%d of %d document(s) translate another document, %d translate themselves",
             sum(bool(p) for p in partners.values()), len(partners), sum(within.values()))
    return [(u, {**p, "paired_documents": [document_key(p), *partners[document_key(p)]],
                 "translated_within": within[document_key(p)]}, v) for u, p, v in objects]
