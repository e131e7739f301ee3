"""The language-aware fusion rule and translation groups: pure functions over candidates.

Fusion (docs/retrieval.md): a candidate's score is its aligned-vector similarity to the
query, plus ``weight / (rank + offset)`` when the lexical leg found it at ``rank``. The
lexical leg only ever searches chunks in the query's language (their ``text_<lang>``
property) and requires a minimum of matching terms, so a shared acronym (USB, GDPR) in
another language's chunks cannot fill the list with confident wrong hits; the bonus falls
with the lexical rank and is bounded by the weight (the dev split, hand-written questions
included, chose 0.5 over 1.0: the lower lexical ranks weigh less against the vector order).

Groups: chunks of different languages and documents that translate each other collapse
into one hit, shown in the query's language when a member has it, else in the reference
language. Two chunks translate each other when their documents do (paired when loaded,
pipeline/retrieval/pairing.py; chunks loaded before pairing are taken on similarity alone),
they reach ``group_similarity`` in the aligned space, and either are each other's best match
(mutual best) or sit in clauses numbered alike (``Candidate.clause_key``: translated
documents keep their numbering). A copy of a member in another document (the same text in
the same language: a scan of a born-digital file, a paragraph left untranslated) collapses
into the hit too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cache
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from pipeline.retrieval.terms import HAN_KANA, coverage, held_terms, rarity
from pipeline.stores.lexical import searched_text, simplified
from pipeline.text.clauses import number_key


def document_key(properties: dict[str, Any]) -> str:
    """A document's content: its id and the first 16 hex digits of its source's sha256 (a
    reprocessed document is another content, and pairs made for the old one do not hold)."""
    return f"{properties.get('doc_id', '')}@{(properties.get('source_sha256') or '')[:16]}"


def key_doc_id(key: str) -> str:
    """The doc_id of a ``document_key`` (the part before its last "@")."""
    return key.rsplit("@", 1)[0]


# What ranking, grouping, the no-answer features, a search's scope (signed_by),
# `SearchResult.as_dict` and `rosetta eval` read of a candidate; a search fetches only these
# for its hundred-odd candidates (parsing every stored property cost more than ranking them,
# docs/benchmarks.md, "Search latency on the sample corpus") and every property for the
# chunks it shows (`Retriever.complete`)
CANDIDATE_PROPERTIES = ["text", "lang", "doc_lang", "doc_id", "source_sha256", "source_path", "paired_documents",
                        "translated_within", "chunk_id", "chunk_index", "page_start", "attachment", "attachment_page",
                        "heading_path", "clause_id", "clause_number", "clause_numbers", "title", "signatures",
                        "changed_after_signing", "signed_by", "file_date", "extraction_method"]


@dataclass
class Candidate:
    uuid: str
    properties: dict[str, Any]
    vector: np.ndarray  # aligned, unit norm
    similarity: float  # to the query vector
    vector_rank: int | None = None  # 0-based rank in the vector leg, None when only the lexical leg found it
    lexical_rank: int | None = None  # 0-based rank in the lexical leg, None when it did not find it
    score: float = 0.0
    part_similarities: tuple[float, ...] = ()  # a concatenated embedder's per-part cosines to the query
    # of the query's terms, the share (weighed by rarity) a lexical hit holds: ``weigh_lexical_hits``
    lexical_strength: float = 1.0

    @property
    def lang(self) -> str:
        return self.properties.get("lang", "")

    @property
    def doc_id(self) -> str:
        return self.properties.get("doc_id", "")

    @property
    def document_key(self) -> str:
        return document_key(self.properties)

    @property
    def paired_documents(self) -> tuple[str, ...]:
        """Its document's key and those of the documents found to translate it when it was
        loaded; empty for a chunk loaded before pairing."""
        return tuple(self.properties.get("paired_documents") or ())

    @property
    def clause_key(self) -> tuple[str, ...]:
        """The clauses holding the chunk, outermost first, numbered as a translation numbers
        them (``clauses.number_key``: "Artikel 5" and "第五条" are both "5"); empty outside any."""
        return tuple(number_key(n) for n in self.properties.get("clause_numbers") or ())


@dataclass
class Group:
    """One hit: the chunk shown, the translations collapsed under it, and copies of either
    in other documents."""

    shown: Candidate
    translations: list[Candidate] = field(default_factory=list)
    score: float = 0.0
    copies: list[Candidate] = field(default_factory=list)

    @property
    def members(self) -> list[Candidate]:
        return [self.shown, *self.translations, *self.copies]


@dataclass(frozen=True)
class FusionParams:
    lexical_weight: float
    lexical_rank_offset: int
    group_similarity: float
    # by query language, taken off the vector similarity of a chunk in the query's language: e5
    # puts a passage in the query's own language closer than its answer in another
    # (docs/retrieval.md, step 5); a language without one: 0
    same_language_penalty: Mapping[str, float] = field(default_factory=dict)
    # a statement's lexical hit (a heading, a sentence: the section's own words) takes
    # ``floor + (1 - floor) * strength ** power`` of its bonus (``Candidate.lexical_strength``);
    # floor 1: the whole bonus whatever it matches
    lexical_floor: float = 1.0
    lexical_power: float = 1.0
    # a question's lexical hits take the whole bonus, at this weight (None: ``lexical_weight``):
    # asked in the asker's own words, its answer shares few of them (docs/retrieval.md, step 5)
    question_lexical_weight: float | None = None

    @property
    def question_weight(self) -> float:
        """The weight of a question's whole bonus."""
        return self.lexical_weight if self.question_lexical_weight is None else self.question_lexical_weight


@cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


def term_weights(candidates: Sequence[Candidate], wanted: set[str], tokenization: str,
                 query_lang: str) -> dict[str, float]:
    """Each of the query's terms (``wanted``) weighed by its rarity among the candidates in the
    query's language: what the lexical bonus and the no-answer coverage both weigh by."""
    return rarity(wanted, (held_terms(searched_text(c.properties), tokenization)
                           for c in candidates if c.lang == query_lang))


def weigh_lexical_hits(candidates: list[Candidate], wanted: set[str], tokenization: str,
                       query_lang: str) -> None:
    """Set each lexical hit's ``lexical_strength``: the share of the query's terms
    (``wanted``) it holds, by ``term_weights`` (``terms.coverage``). Where the answer stands
    only in another language, the lexical leg ranks only wrong chunks, and its first took the
    whole bonus for sharing the query's common words (docs/retrieval.md, step 5)."""
    weights = term_weights(candidates, wanted, tokenization, query_lang)
    for c in candidates:
        if c.lexical_rank is not None:
            c.lexical_strength = (coverage(weights, held_terms(searched_text(c.properties), tokenization))
                                  if c.lang == query_lang else 0.0)


def fuse(candidates: list[Candidate], params: FusionParams, query_lang: str | None = None,
         question: bool = False) -> list[Candidate]:
    """Score every candidate (vector similarity, less the same-language penalty for a chunk in
    ``query_lang``, + the rank-weighted lexical bonus: a statement's weighed by what the hit
    matches, a question's whole), best first."""
    penalty = params.same_language_penalty.get(query_lang, 0.0) if query_lang else 0.0
    weight, floor = (params.question_weight, 1.0) if question else (params.lexical_weight, params.lexical_floor)
    for c in candidates:
        bonus = 0.0
        if c.lexical_rank is not None:
            share = floor + (1 - floor) * c.lexical_strength ** params.lexical_power
            bonus = share * weight / (c.lexical_rank + params.lexical_rank_offset)
        c.score = c.similarity - penalty * (c.lang == query_lang) + bonus
    return sorted(candidates, key=lambda c: (-c.score, c.uuid))


# A chunk is a copy of another when this share of the shorter one's word trigrams (a Han or
# kana character is a word) occurs in the other: half, so that a copy cut at other sentences
# or read by OCR counts (the sample corpus's ja scan against the born-digital guide: 0.56 with
# its misreadings), while two licences' clauses that say the same thing in their own words
# stay apart (MPL-2.0 1.13 and Apache-2.0's definitions: 0.37 at an aligned similarity of 0.93).
COPY_SHARE = 0.5
_TOKEN = re.compile(f"[{HAN_KANA}]|[^\\W{HAN_KANA}]+")


def _trigrams(text: str, lang: str) -> set[int]:
    """The text's word trigrams, each by its hash (a tuple is hashed again at every intersection).
    Chinese is read in simplified characters: the same regulation published in traditional and
    in simplified Chinese is one text (the Arphic licence's two Chinese editions: every clause a
    copy, none before)."""
    if lang == "zh":
        text = simplified(text)
    words = _TOKEN.findall(text.casefold())
    return {hash(tuple(words[i:i + 3])) for i in range(max(1, len(words) - 2))} if words else set()


def _shares_text(first: set[int], second: set[int]) -> bool:
    return bool(first and second) and len(first & second) >= COPY_SHARE * min(len(first), len(second))


def is_copy(a: Candidate, b: Candidate) -> bool:
    """Whether two chunks hold the same text (``COPY_SHARE`` of the shorter one's trigrams)."""
    return _shares_text(_trigrams(a.properties.get("text", ""), a.lang),
                        _trigrams(b.properties.get("text", ""), b.lang))


def differences(text: str, copy: str, lang: str) -> list[tuple[str, str]]:
    """Where a copy's words differ from the text's, inside the stretch both hold (a copy cut at
    other sentences differs in nothing there): pairs of (the text's words, the copy's), "" for
    words one of them lacks. Case, punctuation and spacing are no difference, nor are traditional
    and simplified Chinese characters (as ``_trigrams`` reads them). Two versions of a policy are
    each other's copy (most of their trigrams) and may differ in its one number that counts."""
    first, second = list(_TOKEN.finditer(text)), list(_TOKEN.finditer(copy))

    def words(found: list[re.Match[str]]) -> list[str]:
        folded = [m.group().casefold() for m in found]
        return [simplified(w) for w in folded] if lang == "zh" else folded

    ops = SequenceMatcher(None, words(first), words(second), autojunk=False).get_opcodes()
    while ops and ops[0][0] != "equal":
        ops.pop(0)
    while ops and ops[-1][0] != "equal":
        ops.pop()
    pairs = [(_span(text, first[i1:i2]), _span(copy, second[j1:j2])) for tag, i1, i2, j1, j2 in ops if tag != "equal"]
    return [(a, b) for a, b in pairs if "".join(a.split()) != "".join(b.split())]  # "Debian Buster" read as one word


def _span(text: str, found: list[re.Match[str]]) -> str:
    return " ".join(text[found[0].start():found[-1].end()].split()) if found else ""


def _later_version(c: Candidate, other: Candidate) -> bool:
    """Whether ``c`` is a later version of ``other``'s text: both files state a date
    (``file_date``), ``c``'s is the later, both were read from text layers (an OCR reading
    differs by its misreadings, and a later scan is no revision), and their words differ."""
    mine, theirs = c.properties.get("file_date"), other.properties.get("file_date")
    read = [x.properties.get("extraction_method") or "" for x in (c, other)]
    return (mine is not None and theirs is not None and mine > theirs and not any("ocr" in m for m in read)
            and bool(differences(other.properties.get("text", ""), c.properties.get("text", ""), c.lang)))


def _in_own_document(c: Candidate) -> bool:
    """Whether the chunk is in its document's main language (unknown for chunks loaded before
    ``doc_lang`` was stored: not told apart)."""
    return c.properties.get("doc_lang") == c.lang


def _stands_for(match: Candidate, seed: Candidate) -> bool:
    """Whether ``match`` counts as the seed for mutual best: the seed itself, or the chunk just
    before or after it in its document. Two translations rarely break a section into chunks at
    the same sentences: on the sample corpus the English chunk of maint-guide's section 1.1
    matches the German chunk after the seed a little better than the seed (0.882 against 0.877,
    USE 0.1 + e5 0.9), and strict mutual best listed no English translation."""
    if match is seed:
        return True
    index, seed_index = match.properties.get("chunk_index"), seed.properties.get("chunk_index")
    return (match.doc_id == seed.doc_id and index is not None and seed_index is not None
            and abs(index - seed_index) == 1)


def _may_translate(ranked: list[Candidate]) -> np.ndarray:
    """Whether each two candidates' documents may translate each other: one was paired with the
    other when loaded (it lists the other's key), or neither was paired (both loaded before
    pairing: similarity alone decides, as it did)."""
    paired: dict[str, set[str]] = {}
    for c in ranked:
        paired.setdefault(c.document_key, set(c.paired_documents))
    keys = list(paired)
    allowed = np.array([[(not paired[a] and not paired[b]) or b in paired[a] or a in paired[b] for b in keys]
                        for a in keys])
    index = {key: i for i, key in enumerate(keys)}
    rows = np.array([index[c.document_key] for c in ranked])
    return allowed[np.ix_(rows, rows)]


def group_translations(ranked: list[Candidate], query_lang: str, reference_lang: str, params: FusionParams,
                       max_groups: int | None = None) -> list[Group]:
    """Collapse translations in a ranked list into groups, in rank order of their best member
    (the first ``max_groups`` groups).

    The best remaining candidate seeds a group; for every other language, one remaining
    candidate of another document that may translate the seed's (``_may_translate``), or of
    the seed's own where its sections translate each other (``translated_within``), joins
    when its similarity to the seed reaches ``group_similarity`` and
    - its clauses are numbered as the seed's (the most similar such candidate): translated
      documents keep their numbering, and cut a section into chunks at different sentences, so
      that the chunk most similar to the seed is often a neighbour of its translation; else
    - it is the most similar, and the seed is its own best match among the remaining candidates
      of the seed's language (mutual best: two sections that merely look alike do not merge), or
      a chunk next to the seed in its document is (``_stands_for``).
    The other chunks of the sections numbered as the seed's, in the languages the hit lists
    rather than shows, seed no hit of their own (they would show that section again in
    another language), nor do the shown section's own chunks in another language (a passage
    its document left untranslated); a later hit may still list them. Last, a remaining chunk of another
    document in a member's language that reaches ``group_similarity`` to it and holds the
    same text (``is_copy``) joins as a copy: it would show that text again. Of a text and its
    copies, the one in a document written in its language stands in the group, shown or listed
    as the translation (``_in_own_document``), and of two versions of the shown text (copies
    whose words differ), the one of the latest dated file is shown.
    """
    if not ranked:
        return []
    vectors = np.stack([c.vector for c in ranked])
    # A 70x512 product: on a busy 2-core machine a second BLAS thread makes it 100x slower (66 ms vs 0.5).
    with _blas().limit(limits=1, user_api="blas"):
        similarity = vectors @ vectors.T
    langs = np.array([c.lang for c in ranked])
    docs = np.array([c.doc_id for c in ranked])
    clause_ids = np.array([c.properties.get("clause_id") or "" for c in ranked])
    translatable = _may_translate(ranked)
    keys = [c.clause_key for c in ranked]
    # each candidate's trigrams once: seventy chunks of one template in one language are all
    # each other's copy candidates (84 ms a search recomputed per pair, 12 ms so;
    # benchmarks/bench_translation_groups.py --worst-case)
    trigrams = cache(lambda i: _trigrams(ranked[i].properties.get("text", ""), ranked[i].lang))
    free = np.ones(len(ranked), dtype=bool)
    seeds = np.ones(len(ranked), dtype=bool)  # False: its section is a hit already, shown in another language
    groups: list[Group] = []
    for seed in range(len(ranked)):
        if max_groups is not None and len(groups) >= max_groups:
            break
        if not free[seed] or not seeds[seed]:
            continue
        free[seed] = False
        members = [seed]
        close = similarity[seed] >= params.group_similarity
        # another document, or this one where its sections translate each other (a leaflet)
        other_document = (docs != docs[seed]) | bool(ranked[seed].properties.get("translated_within"))
        for lang in dict.fromkeys(langs.tolist()):
            pool = free & (langs == lang) & other_document & translatable[seed]
            if lang == langs[seed] or not pool.any():
                continue
            alike = [j for j in np.flatnonzero(pool & close) if keys[j] == keys[seed]] if keys[seed] else []
            if alike:
                best = max(alike, key=lambda j: similarity[seed, j])
            else:
                best = int(np.argmax(np.where(pool, similarity[seed], -np.inf)))
                rivals = (free | (np.arange(len(ranked)) == seed)) & (langs == langs[seed]) & translatable[best]
                if not close[best] or not _stands_for(
                        ranked[int(np.argmax(np.where(rivals, similarity[best], -np.inf)))], ranked[seed]):
                    continue
            members.append(int(best))
            free[best] = False
        chosen = next((m for m in members if langs[m] == query_lang), None)
        if chosen is None:
            chosen = next((m for m in members if langs[m] == reference_lang), seed)
        for m in [m for m in members if langs[m] != langs[chosen] and clause_ids[m] and keys[m] == keys[seed]]:
            seeds[(docs == docs[m]) & (clause_ids == clause_ids[m])] = False
        if clause_ids[chosen]:  # a passage left untranslated in the shown section (English in the German guide)
            seeds[(docs == docs[chosen]) & (clause_ids == clause_ids[chosen]) & (langs != langs[chosen])] = False
        copies: list[int] = []
        for m in members:
            for j in np.flatnonzero(free & (langs == langs[m]) & (docs != docs[m])
                                    & (similarity[m] >= params.group_similarity)):
                if _shares_text(trigrams(m), trigrams(j)):
                    copies.append(int(j))
                    free[j] = False
        # the copy in a document written in its language is the original (the English guide's
        # paragraph, not the one the Spanish guide left in English): shown, or listed as the
        # translation, and the others listed as its copies
        for k, m in enumerate(members):
            original = next((j for j in copies if langs[j] == langs[m] and _in_own_document(ranked[j])
                             and not _in_own_document(ranked[m])), None)
            if original is not None:
                copies = [m if j == original else j for j in copies]
                members[k] = original
                chosen = original if m == chosen else chosen
        listed = [m for m in members if m != chosen]
        # of two versions of a text (a policy and its revision), the latest dated file's is shown
        latest = max((j for j in copies if langs[j] == langs[chosen] and _later_version(ranked[j], ranked[chosen])
                      and _in_own_document(ranked[j]) == _in_own_document(ranked[chosen])),
                     key=lambda j: ranked[j].properties["file_date"], default=None)
        if latest is not None:
            copies = [chosen if j == latest else j for j in copies]
            chosen = latest
        groups.append(Group(shown=ranked[chosen], translations=[ranked[m] for m in listed],
                            score=ranked[seed].score, copies=[ranked[j] for j in copies]))
    return groups
