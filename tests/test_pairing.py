"""Translation pairs of documents (pipeline/retrieval/pairing.py): the evidence that tells a
translation from a look-alike, the batch's pairing, the load step's pairing against the real
Weaviate live collection, and what search lists once documents are paired."""

from __future__ import annotations

import argparse
import os
import socket

import numpy as np
import pytest
from weaviate.util import generate_uuid5

from pipeline.retrieval import pairing
from pipeline.retrieval.fusion import Candidate, FusionParams, document_key, fuse, group_translations
from pipeline.stores import vector_store

BAR = 0.83
rng = np.random.default_rng(7)


def unit_rows(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def document(count: int) -> np.ndarray:
    """A document's chunk vectors: unrelated to each other (near-orthogonal in 64 dimensions)."""
    return unit_rows(rng.standard_normal((count, 64)))


def translated(original: np.ndarray, noise: float = 0.15) -> np.ndarray:
    """Each chunk's translation: its vector moved a little (cosine about 0.98)."""
    return unit_rows(original + noise / np.sqrt(original.shape[1]) * rng.standard_normal(original.shape))


def look_alike(original: np.ndarray, length: int, at: dict[int, int]) -> np.ndarray:
    """A longer document of its own, a few chunks of which say what ``original``'s chunks say
    (``at``: its position -> the original's chunk)."""
    rows = document(length)
    for mine, theirs in at.items():
        rows[mine] = translated(original[theirs:theirs + 1])[0]
    return rows


def test_a_translation_is_told_from_a_look_alike_by_whole_documents():
    original = document(12)
    full = pairing.evidence(original, translated(original), BAR)
    assert full.translation and full.matched == 12 and full.density == 1.0
    # an excerpt (chapter 2 of the original): all of it matched, packed in its stretch
    excerpt = pairing.evidence(original, translated(original[4:8]), BAR)
    assert excerpt.translation and excerpt.share_of_smaller == 1.0
    # a licence of its own that says three things the original says, far apart: the same
    # chunk-pair cosines as the translation, too few and too scattered
    alike = pairing.evidence(original, look_alike(original, 30, {0: 0, 14: 5, 29: 11}), BAR)
    assert alike.matched == 3 and not alike.translation
    assert alike.density < pairing.DENSITY
    # a short look-alike: three of its nine chunks match, packed (share of the smaller too low)
    short = pairing.evidence(original, look_alike(original, 9, {0: 2, 1: 3, 2: 4}), BAR)
    assert short.matched == 3 and short.share_of_smaller < pairing.SHARE_OF_SMALLER and not short.translation
    # one matched chunk pair is no more evidence than search has, unless a document is that chunk
    assert not pairing.evidence(original, look_alike(original, 2, {0: 3}), BAR).translation
    assert pairing.evidence(original, translated(original[3:4]), BAR).translation
    assert not pairing.evidence(original, document(12), BAR).translation


def objects_of(doc_id: str, sha: str, lang: str, vectors: np.ndarray) -> list[tuple[str, dict, list[float]]]:
    rows = [{"doc_id": doc_id, "source_sha256": sha, "lang": lang, "chunk_index": i, "text": f"{doc_id} chunk {i}"}
            for i in range(len(vectors))]
    return [(str(generate_uuid5(f"{doc_id}@{sha}:{p['chunk_index']}")), p, v.tolist()) for p, v in zip(rows, vectors)]


def guide_translation_and_look_alike() -> list[tuple[str, dict, list[float]]]:
    """An English guide, its German translation and a Chinese licence that says three of its
    things far apart, each at /corpus/<doc_id>.pdf."""
    original = document(12)
    objects = (objects_of("guide-en", "a" * 64, "en", original)
               + objects_of("guide-de", "b" * 64, "de", translated(original))
               + objects_of("licence-zh", "c" * 64, "zh", look_alike(original, 30, {0: 0, 14: 5, 29: 11})))
    for _, properties, _ in objects:
        properties["source_path"] = f"/corpus/{properties['doc_id']}.pdf"
    return objects


def test_a_batch_pairs_its_translations_and_leaves_look_alikes_alone():
    original = document(12)
    objects = (objects_of("guide-en", "a" * 64, "en", original)
               + objects_of("guide-de", "b" * 64, "de", translated(original))
               + objects_of("licence-zh", "c" * 64, "zh", look_alike(original, 30, {0: 0, 14: 5, 29: 11}))
               + objects_of("notice-ja", "d" * 64, "ja", translated(original[3:4])))  # one chunk, one sample
    paired = {p["doc_id"]: p["paired_documents"] for _, p, _ in pairing.with_partners(objects, BAR)}
    en, de, zh, ja = (document_key({"doc_id": d, "source_sha256": s * 64}) for d, s in
                      (("guide-en", "a"), ("guide-de", "b"), ("licence-zh", "c"), ("notice-ja", "d")))
    assert paired == {"guide-en": [en, de, ja], "guide-de": [de, en, ja], "licence-zh": [zh], "notice-ja": [ja, de, en]}


def test_a_document_whose_sections_translate_each_other_is_told_from_one_with_untranslated_paragraphs():
    """A leaflet (one text in English, German and Japanese, one section after another) translates
    itself; a German manual that left paragraphs in English does not, even where one of them
    has a German counterpart."""
    text = document(4)
    leaflet = pairing.LoadedDocument("leaflet@x", np.vstack([text, translated(text), translated(text)]),
                                     ["en"] * 4 + ["de"] * 4 + ["ja"] * 4)
    assert pairing.translates_itself(leaflet, BAR)
    german = document(12)
    manual = pairing.LoadedDocument("manual@y", np.vstack([german[:5], look_alike(german, 3, {1: 6}), german[5:]]),
                                    ["de"] * 5 + ["en"] * 3 + ["de"] * 7)
    assert not pairing.translates_itself(manual, BAR)
    # one paragraph left in English, translated in the German text too (the sample corpus's
    # German guide): one chunk pair, no translated document
    quoted = pairing.LoadedDocument("manual@z", np.vstack([german, translated(german[6:7])]), ["de"] * 12 + ["en"])
    assert not pairing.translates_itself(quoted, BAR)
    # the load step marks every chunk of the leaflet, none of another document
    sections = objects_of("leaflet", "e" * 64, "en", np.vstack([text, translated(text)]))
    for _, properties, _ in sections[4:]:
        properties["lang"] = "de"
    within = {p["doc_id"]: p["translated_within"]
              for _, p, _ in pairing.with_partners(sections + objects_of("manual", "f" * 64, "de", german), BAR)}
    assert within == {"leaflet": True, "manual": False}


def test_the_load_step_pairs_a_new_document_with_its_translation_in_the_live_collection(settings, weaviate_server):
    """The real server: the batch's German guide finds its English original among the live
    chunks (other-language neighbours, then all its chunks read back), not the Chinese
    look-alike, nor the older version of itself that the batch replaces."""
    from pipeline.publish.load import with_partners

    name = "RosettaPairingLive"
    if weaviate_server.collections.exists(name):
        weaviate_server.collections.delete(name)
    live = vector_store.ensure_collection(weaviate_server, settings, name)
    original = document(12)
    vector_store.insert_objects(live, objects_of("guide-en", "a" * 64, "en", original)
                                + objects_of("licence-zh", "c" * 64, "zh", look_alike(original, 30, {0: 0, 14: 5, 29: 11}))
                                + objects_of("guide-de", "0" * 64, "de", translated(original)), settings)
    batch = objects_of("guide-de", "b" * 64, "de", translated(original))
    paired = {tuple(p["paired_documents"]) for _, p, _ in with_partners(batch, live, settings)}
    assert paired == {("guide-de@" + "b" * 16, "guide-en@" + "a" * 16)}
    weaviate_server.collections.delete(name)


def chunk(uuid: str, lang: str, doc: str, vector: np.ndarray, similarity: float, paired: list[str] | None) -> Candidate:
    properties = {"lang": lang, "doc_id": doc, "source_sha256": doc * 4}
    if paired is not None:
        properties["paired_documents"] = [document_key(properties), *paired]
    return Candidate(uuid, properties, vector, similarity)


def test_search_lists_only_chunks_of_paired_documents():
    """The Arphic licence's Chinese translation joins the English clause it translates; Mulan
    PSL's clause, as close to it, does not: its document was weighed at load and found no
    translation. Chunks loaded before pairing still group on similarity alone."""
    params = FusionParams(lexical_weight=0.1, lexical_rank_offset=1, group_similarity=0.7)
    v = unit_rows(np.array([[1, 0, 0], [1, 0.1, 0], [1, 0, 0.1]], dtype=np.float32))
    arphic_zh = document_key({"doc_id": "arphic-zh", "source_sha256": "arphic-zh" * 4})
    arphic_en = document_key({"doc_id": "arphic-en", "source_sha256": "arphic-en" * 4})
    ranked = [chunk("en", "en", "arphic-en", v[0], 0.9, [arphic_zh]),
              chunk("mulan", "zh", "mulan", v[1], 0.85, []),
              chunk("zh", "zh", "arphic-zh", v[2], 0.8, [arphic_en])]
    groups = group_translations(fuse(ranked, params), "en", "en", params)
    assert [sorted(c.uuid for c in g.members) for g in groups] == [["en", "zh"], ["mulan"]]
    legacy = [chunk(c.uuid, c.lang, c.doc_id, c.vector, c.similarity, None) for c in ranked]
    groups = group_translations(fuse(legacy, params), "en", "en", params)
    assert [sorted(c.uuid for c in g.members) for g in groups] == [["en", "mulan"], ["zh"]]
    # paired by the later document alone (the earlier one was loaded before its translation)
    one_sided = [chunk("en", "en", "arphic-en", v[0], 0.9, []), ranked[1], ranked[2]]
    groups = group_translations(fuse(one_sided, params), "en", "en", params)
    assert [sorted(c.uuid for c in g.members) for g in groups] == [["en", "zh"], ["mulan"]]


def test_search_lists_a_leaflets_other_sections_under_the_one_shown():
    """Chunks of one document in two languages collapse into one hit where its sections translate
    each other, and stay two hits where they do not (a manual's untranslated paragraph)."""
    params = FusionParams(lexical_weight=0.1, lexical_rank_offset=1, group_similarity=0.7)
    v = unit_rows(np.array([[1, 0, 0], [1, 0.1, 0]], dtype=np.float32))
    for within, expected in ((True, [["de", "en"]]), (False, [["de"], ["en"]])):
        ranked = [chunk("de", "de", "leaflet", v[0], 0.9, []), chunk("en", "en", "leaflet", v[1], 0.85, [])]
        for candidate in ranked:
            candidate.properties["translated_within"] = within
        groups = group_translations(fuse(ranked, params), "de", "en", params)
        assert [sorted(c.uuid for c in g.members) for g in groups] == expected
        assert groups[0].shown.uuid == "de"


def test_a_collection_made_before_pairing_gets_the_property(settings, weaviate_server):
    name = "RosettaPairingLegacy"
    if weaviate_server.collections.exists(name):
        weaviate_server.collections.delete(name)
    from weaviate.classes.config import Configure, Property

    weaviate_server.collections.create(
        name, properties=[Property(name=n, data_type=t) for n, t in vector_store.PROPERTIES if n != "paired_documents"],
        vector_config=Configure.Vectors.self_provided())
    legacy = weaviate_server.collections.get(name)
    assert vector_store.add_missing_properties(legacy) == ["paired_documents"]
    assert vector_store.add_missing_properties(legacy) == []
    weaviate_server.collections.delete(name)


@pytest.mark.parametrize("count", [1, 5, 40])
def test_a_document_is_sampled_evenly_and_whole_when_short(count):
    rows = pairing.sampled(count)
    assert rows[0] == 0 and rows[-1] == count - 1 and len(rows) == min(count, pairing.SAMPLED_CHUNKS)


def test_a_collection_loaded_before_pairing_is_paired_in_place(settings, weaviate_server, capsys):
    """`rosetta pairs --refresh`: every live document weighed against the rest from its stored
    vectors, its chunks rewritten with their partners (same uuids, same vectors), and the
    listing that `rosetta pairs` prints."""
    from pipeline.cli.retrieval import cmd_pairs
    from pipeline.publish.load import live_pairs, pair_live_documents

    live = vector_store.ensure_collection(weaviate_server, settings, settings.weaviate.collection)
    legacy = guide_translation_and_look_alike()
    vector_store.insert_objects(live, legacy, settings)
    assert [(r["document"], r["partners"], r["weighed"]) for r in live_pairs(settings)] == [
        ("/corpus/guide-de.pdf", [], False), ("/corpus/guide-en.pdf", [], False), ("/corpus/licence-zh.pdf", [], False)]
    # one document at a time against the rest of the live collection, then all three as one group
    assert pair_live_documents(settings, group=1) == {"documents": 3, "paired": 2, "chunks": 54}
    assert pair_live_documents(settings) == {"documents": 3, "paired": 2, "chunks": 54}
    assert [(r["document"], r["partners"], r["weighed"]) for r in live_pairs(settings)] == [
        ("/corpus/guide-de.pdf", ["/corpus/guide-en.pdf"], True), ("/corpus/guide-en.pdf", ["/corpus/guide-de.pdf"], True),
        ("/corpus/licence-zh.pdf", [], True)]
    stored = {u: v for u, _, v in vector_store.iterate_objects(live)}
    assert stored.keys() == {u for u, _, _ in legacy}
    assert all(np.allclose(stored[u], v, atol=1e-6) for u, _, v in legacy)
    assert cmd_pairs(argparse.Namespace(refresh=False, json=False)) == 0
    assert capsys.readouterr().out.splitlines() == [
        "[de] /corpus/guide-de.pdf", "    = /corpus/guide-en.pdf", "[en] /corpus/guide-en.pdf",
        "    = /corpus/guide-de.pdf", "[zh] /corpus/licence-zh.pdf", "3 document(s), 2 paired with a translation"]


def test_what_a_user_declared_stands_over_the_evidence():
    """A translation too far from its original for the bar is declared one; a translation the
    user knows is another edition is declared apart: neither is weighed."""
    en, de, zh = (document_key({"doc_id": d, "source_sha256": s * 64}) for d, s in
                  (("guide-en", "a"), ("guide-de", "b"), ("licence-zh", "c")))
    declared = {frozenset((en, zh)): True, frozenset((en, de)): False}
    paired = {p["doc_id"]: p["paired_documents"]
              for _, p, _ in pairing.with_partners(guide_translation_and_look_alike(), BAR, declared=declared)}
    assert paired == {"guide-en": [en, zh], "guide-de": [de], "licence-zh": [zh, en]}


def live_guides(settings, weaviate_server, registry) -> None:
    """The module's live collection holding the English guide, its German translation and the
    Chinese look-alike licence, each known to the registry by its path."""
    if weaviate_server.collections.exists(settings.weaviate.collection):
        weaviate_server.collections.delete(settings.weaviate.collection)
    live = vector_store.ensure_collection(weaviate_server, settings, settings.weaviate.collection)
    vector_store.insert_objects(live, pairing.with_partners(guide_translation_and_look_alike(), BAR), settings)
    for doc_id in ("guide-en", "guide-de", "licence-zh"):
        registry.record_document(doc_id, f"/corpus/{doc_id}.pdf", status="loaded")
        registry.add_path(doc_id, f"/corpus/{doc_id}.pdf")


def test_rosetta_pairs_declares_translations_and_documents_apart(settings, weaviate_server, capsys):
    """`rosetta pairs --declare / --apart / --undeclare` against the real server: the
    declaration is kept in the registry and the live chunks of those documents are rewritten
    at once; dropping it gives the decision back to the vectors."""
    from pipeline.cli.retrieval import cmd_pairs
    from pipeline.publish.load import live_pairs
    from pipeline.stores.document_registry import DocumentRegistry

    registry = DocumentRegistry(settings.document_registry_path)
    live_guides(settings, weaviate_server, registry)

    def pairs() -> list[tuple[str, list[str], list[str]]]:
        return [(r["document"], r["partners"], r["declared"]) for r in live_pairs(settings, registry.declarations())]

    def command(**given) -> int:
        return cmd_pairs(argparse.Namespace(**{"refresh": False, "json": False, "declare": None, "apart": None,
                                               "undeclare": None, **given}))

    assert pairs() == [("/corpus/guide-de.pdf", ["/corpus/guide-en.pdf"], []),
                       ("/corpus/guide-en.pdf", ["/corpus/guide-de.pdf"], []), ("/corpus/licence-zh.pdf", [], [])]
    assert command(declare=["/corpus/licence-zh.pdf", "guide-en"]) == 0  # a path or a doc_id
    assert command(apart=["/corpus/guide-en.pdf", "/corpus/guide-de.pdf"]) == 0
    assert registry.declarations() == {"guide-en": {"licence-zh": True, "guide-de": False},
                                       "licence-zh": {"guide-en": True}, "guide-de": {"guide-en": False}}
    assert pairs() == [("/corpus/guide-de.pdf", [], []),
                       ("/corpus/guide-en.pdf", ["/corpus/licence-zh.pdf"], ["/corpus/licence-zh.pdf"]),
                       ("/corpus/licence-zh.pdf", ["/corpus/guide-en.pdf"], ["/corpus/guide-en.pdf"])]
    capsys.readouterr()
    assert command() == 0
    assert capsys.readouterr().out.splitlines()[:4] == [
        "[de] /corpus/guide-de.pdf", "[en] /corpus/guide-en.pdf", "    = /corpus/licence-zh.pdf (declared)",
        "[zh] /corpus/licence-zh.pdf"]
    # a refresh keeps what was declared
    assert command(refresh=True) == 0
    assert pairs()[1] == ("/corpus/guide-en.pdf", ["/corpus/licence-zh.pdf"], ["/corpus/licence-zh.pdf"])
    assert command(undeclare=["guide-en", "guide-de", "licence-zh"]) == 0
    assert registry.declarations() == {}
    assert pairs() == [("/corpus/guide-de.pdf", ["/corpus/guide-en.pdf"], []),
                       ("/corpus/guide-en.pdf", ["/corpus/guide-de.pdf"], []), ("/corpus/licence-zh.pdf", [], [])]
    with pytest.raises(ValueError, match="nowhere.pdf: not a document Rosetta holds"):
        command(declare=["guide-en", "/corpus/nowhere.pdf"])
    with pytest.raises(ValueError, match="name two documents or more"):
        command(declare=["guide-en", "/corpus/guide-en.pdf"])
    registry.start_batch("batch-running", "corpus_refresh", os.getpid(), socket.gethostname())
    with pytest.raises(RuntimeError, match="batch batch-running is running"):
        command(apart=["guide-en", "guide-de"])
    registry.finish_batch("batch-running", "promoted", {})
    assert registry.declarations() == {}


def test_the_load_step_takes_the_manifests_declarations_for_live_documents(settings, weaviate_server):
    """A reprocessed German guide, declared apart from the live English one and a translation
    of the live Chinese licence: the load step reads both live keys and takes the declaration."""
    from pipeline.publish.load import with_partners
    from pipeline.stores.document_registry import DocumentRegistry

    live_guides(settings, weaviate_server, DocumentRegistry(settings.document_registry_path))
    live = vector_store.live_collection(weaviate_server, settings)
    # a one-chunk edition of the German guide, of a chunk the Chinese licence does not say too
    german = next(v for _, p, v in vector_store.iterate_objects(live, ["guide-de"]) if p["chunk_index"] == 3)
    batch = objects_of("guide-de", "d" * 64, "de", np.asarray([german]))
    declared = {"guide-de": {"guide-en": False, "licence-zh": True, "never-loaded": True}}
    paired = {tuple(p["paired_documents"]) for _, p, _ in with_partners(batch, live, settings, declared)}
    assert paired == {("guide-de@" + "d" * 16, "licence-zh@" + "c" * 16)}
    assert {tuple(p["paired_documents"]) for _, p, _ in with_partners(batch, live, settings)} == {
        ("guide-de@" + "d" * 16, "guide-en@" + "a" * 16)}
