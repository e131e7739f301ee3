"""The retriever: query language, the vector leg, the lexical leg, fusion, groups, the bar.

``Retriever(settings, client).search(query)`` answers one question against the live
collection (or any collection with the chunk schema): it detects the query's language,
embeds the query and maps it with that language's production alignment map (the way that
language's chunks were mapped), asks Weaviate for the nearest chunks in any language, the
nearest in the other languages, and BM25 hits over the chunks in the query's language
only, fuses and groups them
(pipeline/retrieval/fusion.py), and answers "no passage found" when the no-answer model
(pipeline/retrieval/refusal.py) doubts that the best hit answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from weaviate.classes.query import BM25Operator, Filter, MetadataQuery

from pipeline.alignment.maps import AlignmentMap, load_production_map
from pipeline.config import EmbedderTuning, NoAnswerModels, Settings
from pipeline.embedding.embedders import Concatenated, get_embedder
from pipeline.retrieval.fusion import (
    CANDIDATE_PROPERTIES,
    Candidate,
    FusionParams,
    Group,
    differences,
    fuse,
    group_translations,
    weigh_lexical_hits,
)
from pipeline.retrieval.refusal import (
    QUERY_FORMS,
    NoAnswerDecision,
    NoAnswerModel,
    features,
    is_question,
    labels,
    read_passage,
)
from pipeline.retrieval.scope import Scope, ScopeFilter, file_day, resolve
from pipeline.retrieval.terms import terms
from pipeline.stores import vector_store
from pipeline.stores.lexical import lexical_property, lexical_text
from pipeline.text.langid import detect_block

Mode = Literal["hybrid", "vector"]


@dataclass
class SearchResult:
    query: str
    query_lang: str
    groups: list[Group]  # best first; empty when not answered
    answered: bool  # False: "no passage found", the no-answer model's probability is below its bar
    best_score: float  # the best hit's vector similarity
    answer_probability: float = 0.0  # P(the best hit answers), pipeline/retrieval/refusal.py

    def as_dict(self) -> dict[str, Any]:
        def chunk(c: Candidate) -> dict[str, Any]:
            p = c.properties
            # the file and its folder: translations are often one name in a folder per language
            source = "/".join(Path(p.get("source_path") or "").parts[-2:])
            # a chunk of an embedded file is cited as that file's page, under its document
            attachment = p.get("attachment") or None
            return {"lang": c.lang, "doc_id": c.doc_id, "source": f"{source} › {attachment}" if attachment else source,
                    "page": p.get("attachment_page") if attachment else p.get("page_start"), "attachment": attachment,
                    "clause": p.get("clause_number"), "chunk_id": p.get("chunk_id"), "title": p.get("title") or "",
                    "signatures": json.loads(p.get("signatures") or "[]"),
                    "changed_after_signing": p.get("changed_after_signing"), "date": _day_of(p.get("file_date")),
                    "similarity": round(c.similarity, 4)}

        def copy(c: Candidate, group: Group) -> dict[str, Any]:
            """A copy, with where its words differ from the member in its language it is closest
            to (another version of a policy, an OCR reading of the same page)."""
            text = c.properties.get("text", "")
            differs = min((differences(m.properties.get("text", ""), text, c.lang)
                           for m in [group.shown, *group.translations] if m.lang == c.lang), key=len, default=[])
            return {**chunk(c), "differs": [list(pair) for pair in differs]}

        return {"query": self.query, "query_lang": self.query_lang, "answered": self.answered,
                "best_score": round(self.best_score, 4), "answer_probability": round(self.answer_probability, 4),
                "hits": [{"score": round(g.score, 4), **chunk(g.shown), "text": g.shown.properties.get("text", ""),
                          "translations": [chunk(t) for t in g.translations],
                          "copies": [copy(c, g) for c in g.copies]}
                         for g in self.groups]}


def _day_of(stamp: Any) -> str | None:
    day = file_day(stamp)
    return day.isoformat() if day else None


def tuning(settings: Settings, embedder: str) -> EmbedderTuning:
    """The fusion settings tuned for ``embedder``; an embedder never tuned is ranked with the
    configured embedder's (and has no no-answer model: ``no_answer_model``)."""
    tuned = settings.retrieval.embedders
    return tuned.get(embedder) or tuned[settings.embedding.model]


def fusion_params(settings: Settings, embedder: str) -> FusionParams:
    t = tuning(settings, embedder)
    return FusionParams(t.lexical_weight, t.lexical_rank_offset, t.group_similarity, t.same_language_penalty,
                        t.lexical_floor, t.lexical_power, t.question_lexical_weight)


def no_answer_model(settings: Settings, embedder: str) -> NoAnswerDecision | None:
    """The no-answer models fitted for ``embedder``, one per query form (similarities have
    each embedder's own scale); None when the config has none."""
    if embedder not in settings.retrieval.embedders:
        return None
    forms = settings.retrieval.embedders[embedder].no_answer

    def models(section: NoAnswerModels) -> dict[str, NoAnswerModel]:
        return {form: NoAnswerModel(dict(m.weights), m.bias, m.below) for form in QUERY_FORMS
                for m in [getattr(section, form)]}

    return NoAnswerDecision(models(forms), forms.sentence_words, models(forms.across_languages))


def top_similarity(groups: list[Group]) -> float:
    """The best hit's vector similarity to the query (its closest member)."""
    return max(c.similarity for c in groups[0].members) if groups else 0.0


def min_match(query: str, tokenization: str, wanted: int) -> int:
    """Terms a lexical hit must match, at most what the query has (word-tokenized languages
    count words; CJK tokenizers cut about one term per two characters)."""
    terms = len(query.split()) if tokenization == "word" else len("".join(query.split())) // 2
    return max(1, min(wanted, terms))


LABELS_KEPT = 4096  # heading vectors a retriever keeps (about 15 MB with the concatenation)


class Retriever:
    def __init__(self, settings: Settings, client, collection: str | None = None, embedder: str | None = None):
        self.settings = settings
        # a collection made before a lexical property was (re)defined gets it, once per process
        self.collection = vector_store.ensure_collection(client, settings, collection or settings.weaviate.collection)
        self.embedder = get_embedder(embedder or settings.embedding.model, settings.embedding.batch_size)
        self._maps: dict[str, AlignmentMap] = {}
        self.fusion = fusion_params(settings, self.embedder.name)
        self.lexical_min_match = tuning(settings, self.embedder.name).lexical_min_match
        self.no_answer = no_answer_model(settings, self.embedder.name)
        self._label_vectors: dict[tuple[str, str], np.ndarray] = {}  # (label, lang): aligned, oldest first

    def query_language(self, query: str) -> str:
        lang, _ = detect_block(query, self.settings, query=True)
        return lang if lang in self.settings.languages else self.settings.reference_language

    def align(self, raw: np.ndarray, lang: str) -> np.ndarray:
        """Raw query vectors mapped like that language's chunks (its production map)."""
        if lang not in self._maps:
            self._maps[lang] = load_production_map(self.settings, lang)
        return self._maps[lang].apply(raw)

    def query_vector(self, query: str, lang: str) -> np.ndarray:
        return self.align(self.embedder.encode([query], query=True), lang)[0]

    def candidates(self, query: str, query_lang: str, vector: np.ndarray, mode: Mode = "hybrid",
                   lang: str | None = None, lexical_min_match: int | None = None,
                   other_than: str | None = None, leave_out: str | None = None,
                   scope: ScopeFilter | None = None) -> list[Candidate]:
        """The vector leg's nearest chunks (any language, then the other languages than the
        query's; or ``lang`` alone) joined with the lexical leg's hits over chunks in the
        query's language. ``rosetta eval``'s views of other corpora: ``other_than``, the
        vector leg alone over the chunks in other languages than this one (a corpus without
        the query's language); ``leave_out``, both legs without the chunk of this uuid (a
        corpus without the answer's passage in the query's language); ``scope``, both legs
        over some documents only (pipeline/retrieval/scope.py)."""
        r = self.settings.retrieval
        scope = scope or ScopeFilter(None, None)
        limits = [f for f in (scope.where, None if leave_out is None else Filter.by_id().not_equal(leave_out))
                  if f is not None]
        every = Filter.all_of(limits) if len(limits) > 1 else limits[0] if limits else None
        found: dict[str, Candidate] = {}

        def in_scope(obj) -> bool:
            return scope.holds(obj.properties)

        def add_nearest(filters, limit: int) -> None:
            """The nearest chunks under ``filters`` (and the scope and ``leave_out``), each ranked
            after those found before it: a later call's new chunks are farther than every earlier one's."""
            if every is not None:
                filters = every if filters is None else filters & every
            nearest = self.collection.query.near_vector(near_vector=vector.tolist(), limit=limit, filters=filters,
                                                        include_vector=True, return_properties=CANDIDATE_PROPERTIES)
            for obj in filter(in_scope, nearest.objects):
                if str(obj.uuid) not in found:
                    found[str(obj.uuid)] = self._candidate(obj, vector)
                    found[str(obj.uuid)].vector_rank = len(found) - 1

        add_nearest(Filter.by_property("lang").equal(lang) if lang
                    else Filter.by_property("lang").not_equal(other_than) if other_than else None,
                    r.vector_candidates)
        if r.other_language_candidates and lang is None and other_than is None:
            # a query's nearest fifty are mostly its own language's chunks, and the answer that
            # stands only in another language is often past them (docs/retrieval.md, step 3)
            add_nearest(Filter.by_property("lang").not_equal(query_lang), r.other_language_candidates)
        if mode == "hybrid" and other_than is None and lang in (None, query_lang):
            tokenization = self.settings.languages[query_lang].tokenization
            wanted = self.lexical_min_match if lexical_min_match is None else lexical_min_match
            lexical = self.collection.query.bm25(
                query=lexical_text(self.settings, query_lang, query),
                query_properties=[lexical_property(self.settings, query_lang)],
                limit=r.lexical_candidates,
                operator=BM25Operator.or_(minimum_match=min_match(query, tokenization, wanted)),
                filters=every, include_vector=True, return_properties=CANDIDATE_PROPERTIES,
                return_metadata=MetadataQuery(score=True))
            for rank, obj in enumerate(filter(in_scope, lexical.objects)):
                found.setdefault(str(obj.uuid), self._candidate(obj, vector)).lexical_rank = rank
            weigh_lexical_hits(list(found.values()), terms(query, tokenization), tokenization, query_lang)
        return list(found.values())

    def _candidate(self, obj, query_vector: np.ndarray) -> Candidate:
        vector = np.asarray(obj.vector["default"], dtype=np.float32)
        parts = (self.embedder.part_similarities(vector, query_vector)
                 if isinstance(self.embedder, Concatenated) else ())
        return Candidate(uuid=str(obj.uuid), properties=dict(obj.properties), vector=vector,
                         similarity=float(vector @ query_vector), part_similarities=parts)

    def rank(self, candidates: list[Candidate], query: str, query_lang: str, params: FusionParams | None = None,
             limit: int = 10) -> list[Group]:
        params = params or self.fusion
        return group_translations(fuse(candidates, params, query_lang, is_question(query)), query_lang,
                                  self.settings.reference_language, params, limit)

    def heading_similarity(self, groups: list[Group], query_lang: str, vector: np.ndarray) -> float:
        """The query's similarity to the best hit's heading (``refusal.labels`` of its
        ``refusal.read_passage``), each label embedded as a query in its passage's language
        and mapped like that language's chunks; labels repeat across questions, so the last
        ``LABELS_KEPT`` vectors are kept."""
        if not groups:
            return 0.0
        passage = read_passage(groups[0], query_lang)
        lang, names = passage.lang, labels(passage)
        wanted = [label for label in names if (label, lang) not in self._label_vectors]
        if wanted:
            for label, raw in zip(wanted, self.embedder.encode(wanted, query=True)):
                self._label_vectors[(label, lang)] = self.align(raw[None], lang)[0]
        similarity = max(float(self._label_vectors[(label, lang)] @ vector) for label in names)
        while len(self._label_vectors) > LABELS_KEPT:  # a long-lived retriever over a large corpus
            del self._label_vectors[next(iter(self._label_vectors))]
        return similarity

    def features(self, query: str, query_lang: str, groups: list[Group], candidates: list[Candidate],
                 vector: np.ndarray) -> dict[str, float]:
        """The no-answer decision's inputs (``refusal.features``) for a query of this vector."""
        return features(query, query_lang, self.settings.languages[query_lang].tokenization, groups, candidates,
                        self.heading_similarity(groups, query_lang, vector))

    def judge(self, query: str, query_lang: str, groups: list[Group], candidates: list[Candidate],
              vector: np.ndarray) -> tuple[float, float]:
        """P(the best hit answers the question) and the bar it must reach: the reading of the
        no-answer model for the query's form (refusal.py)."""
        if self.no_answer is None:
            raise ValueError(f"retrieval.embedders has no tuning for embedder {self.embedder.name!r}: fit one on "
                             f"the golden set's dev split (benchmarks/tune_retrieval.py --embedder {self.embedder.name}) "
                             "and add it to the config")
        tokenization = self.settings.languages[query_lang].tokenization
        values = self.features(query, query_lang, groups, candidates, vector)
        model = self.no_answer.model(query, tokenization, values)
        return model.probability(values), model.below

    def search(self, query: str, limit: int = 5, lang: str | None = None, mode: Mode = "hybrid",
               scope: Scope | None = None) -> SearchResult:
        """One question; ``scope``: some documents only (pipeline/retrieval/scope.py)."""
        where = resolve(scope, self.settings, self.collection)
        query_lang = self.query_language(query)
        vector = self.query_vector(query, query_lang)
        candidates = self.candidates(query, query_lang, vector, mode, lang, scope=where)
        groups = self.rank([*candidates], query, query_lang, limit=max(limit, 2))  # the runner-up is a feature
        probability, bar = self.judge(query, query_lang, groups, candidates, vector)
        answered = bool(groups) and probability >= bar
        shown = self.complete(groups[:limit]) if answered else []
        return SearchResult(query=query, query_lang=query_lang, groups=shown,
                            answered=answered, best_score=top_similarity(groups), answer_probability=probability)

    def complete(self, groups: list[Group]) -> list[Group]:
        """``groups`` with every stored property of their chunks (candidates carry only
        ``CANDIDATE_PROPERTIES``), in one call for all of them."""
        members = {c.uuid: c for g in groups for c in g.members}
        for uuid, properties, _ in vector_store.fetch_by_uuid(self.collection, list(members), include_vector=False):
            members[uuid].properties = properties
        return groups


def search(query: str, settings: Settings, limit: int = 5, lang: str | None = None,
           mode: Mode = "hybrid", scope: Scope | None = None) -> SearchResult:
    """One question against the live collection (connects to the configured Weaviate)."""
    with vector_store.connect(settings) as client:
        if not client.collections.exists(settings.weaviate.collection):
            return SearchResult(query=query, query_lang=lang or "", groups=[], answered=False, best_score=0.0)
        # migrates a collection made before the lexical leg; refuses one of another embedder
        vector_store.check_embedder(vector_store.live_collection(client, settings), settings)
        return Retriever(settings, client).search(query, limit, lang, mode, scope)
