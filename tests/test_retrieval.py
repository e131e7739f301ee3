"""The retriever's rules (fusion, translation groups, the lexical minimum match), the golden
set's construction, and the schema migration of a collection made before the lexical leg
(against the real Weaviate)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from weaviate.classes.config import Configure, Property
from weaviate.classes.query import BM25Operator

from pipeline.retrieval.fusion import Candidate, FusionParams, fuse, group_translations
from pipeline.retrieval.retriever import min_match
from pipeline.stores import vector_store

PARAMS = FusionParams(lexical_weight=0.1, lexical_rank_offset=1, group_similarity=0.7)


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def candidate(uuid: str, lang: str, doc: str, vector: np.ndarray, similarity: float, lexical_rank=None) -> Candidate:
    return Candidate(uuid, {"lang": lang, "doc_id": doc}, vector, similarity, lexical_rank=lexical_rank)


def test_lexical_bonus_reorders_close_hits_but_cannot_lift_a_far_one():
    v = unit(1, 0, 0)
    close = [candidate("a", "de", "d", v, 0.62), candidate("b", "de", "d", v, 0.60, lexical_rank=0)]
    assert [c.uuid for c in fuse(close, PARAMS)] == ["b", "a"]
    far = [candidate("a", "de", "d", v, 0.62), candidate("b", "de", "d", v, 0.40, lexical_rank=0)]
    assert [c.uuid for c in fuse(far, PARAMS)] == ["a", "b"]
    without = FusionParams(0.0, 1, 0.7)
    assert [c.uuid for c in fuse(close, without)] == ["a", "b"]


def test_translations_collapse_and_show_the_query_language_else_the_reference():
    section, other = unit(1, 0.1, 0), unit(0, 1, 0.1)
    ranked = [candidate("en1", "en", "doc-en", section, 0.8), candidate("de1", "de", "doc-de", unit(1, 0.12, 0), 0.7),
              candidate("ja1", "ja", "doc-ja", unit(1, 0.09, 0.02), 0.69), candidate("en2", "en", "doc-en", other, 0.5)]
    groups = group_translations(fuse(ranked, PARAMS), "de", "en", PARAMS)
    assert [g.shown.uuid for g in groups] == ["de1", "en2"]
    assert sorted(t.uuid for t in groups[0].translations) == ["en1", "ja1"]
    assert groups[0].score == pytest.approx(0.8)
    spanish = group_translations(fuse(ranked, PARAMS), "es", "en", PARAMS)
    assert spanish[0].shown.uuid == "en1"


def test_look_alike_sections_do_not_merge():
    """A German chunk nearer to another English chunk than to the seed stays apart (mutual best),
    and chunks of the same document never group."""
    seed, twin = unit(1, 0.3, 0), unit(1, 0.2, 0)
    ranked = [candidate("en1", "en", "doc-en", seed, 0.9), candidate("en2", "en", "doc-en", twin, 0.85),
              candidate("de2", "de", "doc-de", unit(1, 0.19, 0), 0.8)]
    groups = group_translations(fuse(ranked, PARAMS), "en", "en", PARAMS)
    assert [sorted(c.uuid for c in g.members) for g in groups] == [["en1"], ["de2", "en2"]]


def test_minimum_match_is_capped_by_the_query():
    assert min_match("Auto mode", "word", 2) == 2
    assert min_match("Partitionierung", "word", 2) == 1
    assert min_match("自动化安装", "trigram", 2) == 2
    assert min_match("起動", "kagome_ja", 3) == 1


def test_golden_set_is_pinned_split_and_keeps_traps_out_of_the_pool(settings):
    from pipeline.retrieval.evaluation import golden_path

    path = golden_path(settings)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == settings.retrieval.golden_sha256
    data = json.loads(path.read_text(encoding="utf-8"))
    pool_sections = {p["section"] for p in data["passages"]}
    assert {p["lang"] for p in data["passages"]} == set(settings.languages)
    splits = {}
    for q in data["queries"]:
        assert splits.setdefault(q["relevant"] or q["id"].rsplit(":", 2)[0], q["split"]) == q["split"]
        if q["relevant"] is None:
            assert q["id"].rsplit(":", 2)[0] not in pool_sections
        else:
            assert q["relevant"] in pool_sections
    for split in ("dev", "test"):
        chosen = [q for q in data["queries"] if q["split"] == split]
        assert {q["lang"] for q in chosen} == set(settings.languages)
        assert {q["type"] for q in chosen} == {"heading", "first_sentence"}
        assert sum(q["relevant"] is None for q in chosen) >= 50 and sum(q["acronym"] for q in chosen) >= 50


def test_collection_made_before_the_lexical_leg_is_migrated_and_backfilled(settings, weaviate_server):
    name = "RosettaRetrievalLegacy"
    if weaviate_server.collections.exists(name):
        weaviate_server.collections.delete(name)
    weaviate_server.collections.create(
        name, properties=[Property(name=n, data_type=t) for n, t in vector_store.PROPERTIES],
        vector_config=Configure.Vectors.self_provided())
    legacy = weaviate_server.collections.get(name)
    rows = [("de", "Der grafische Installer startet von selbst."), ("ja", "システムが起動するとすぐにログインします。"),
            ("zh", "自动化安装程序的使用方法")]
    legacy.data.insert_many([vector_store.DataObject(properties={"text": t, "lang": lang}, vector=unit(i + 1, 1, 0).tolist())
                             for i, (lang, t) in enumerate(rows)])
    assert vector_store.migrate_lexical(legacy, settings) == 3
    names = {p.name for p in legacy.config.get().properties}
    assert {vector_store.lexical_property(lang) for lang in settings.languages} <= names
    for lang, query in (("de", "grafische Installer"), ("ja", "システム 起動"), ("zh", "自动化安装")):
        found = legacy.query.bm25(query=query, query_properties=[vector_store.lexical_property(lang)],
                                  operator=BM25Operator.or_(minimum_match=1))
        assert [o.properties["lang"] for o in found.objects] == [lang]
    assert vector_store.migrate_lexical(legacy, settings) == 0  # a second run has nothing to do
