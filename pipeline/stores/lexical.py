"""The lexical leg's copies of a chunk's text: one property per language (``text_<lang>``, with
``_folded`` where its accents are folded, ``_umlauts`` where umlauts spelled out are read as
umlauts, ``_simplified`` where traditional Chinese is read as simplified), tokenized for that
language (languages.<lang>.tokenization; docs/retrieval.md), written beside each object by
``pipeline.stores.vector_store.insert_objects`` and searched by ``pipeline.retrieval.retriever``'s
BM25 leg.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from weaviate.classes.config import Configure, DataType, Property, Tokenization

from pipeline.config import Settings

# The lexical properties of word-tokenized languages (en, de, es) fold accents, and Weaviate
# folds the query searched in them alike: a question typed without its accents ("proteccion de
# datos", "Gebuhren", "Strasse") finds the words (pipeline.retrieval.terms.plain on our side)
FOLDED_TOKENIZATIONS = frozenset({"word"})
# The e of an umlaut spelled out: of ae and oe, and of ue unless a vowel or q stands before the u
# ("Feuer", "Quelle" keep theirs), as Lucene's German normalization reads them
SPELLED_OUT_E = re.compile(r"(?<=[ao])e|(?<=u)(?<![aeiouyqäöü]u)e", re.IGNORECASE)


def umlauts_read(text: str) -> str:
    """``text`` with its umlauts spelled out written as their base letters ("Gebuehren" ->
    "Gebuhren", "AENDERUNG" -> "ANDERUNG"): folding reads "Gebühren" so too, so the two
    spellings meet. A word with ae/oe/ue that is no umlaut ("aktuell" -> "aktull") reads so on
    both sides alike."""
    return SPELLED_OUT_E.sub("", text)


@cache
def _simplified():
    from opencc import OpenCC  # here: the enrich image imports this module for chunk ids and has no OpenCC

    return OpenCC("t2s")


def simplified(text: str) -> str:
    """Chinese text in simplified characters: traditional ones, and the phrases OpenCC's t2s
    knows, converted ("個人資料" -> "个人资料"); simplified text stays as it is."""
    return _simplified().convert(text)


def lexical_property(settings: Settings, lang: str) -> str:
    """The per-language copy of a chunk's text that search's lexical leg reads, tokenized for
    that language (languages.<lang>.tokenization; docs/retrieval.md). A property's analyzer
    cannot change, nor what is written into it, so each reading has a name of its own: a
    collection made before it gets it added and backfilled (``migrate_lexical``)."""
    entry = settings.languages[lang]
    folded = entry.tokenization in FOLDED_TOKENIZATIONS
    readings = [("_folded", folded), ("_umlauts", folded and entry.umlauts_spelled_out),
                ("_simplified", entry.traditional_read_as_simplified)]
    return f"text_{lang}" + "".join(suffix for suffix, read in readings if read)


def lexical_text(settings: Settings, lang: str, text: str) -> str:
    """A text as the lexical leg reads it in ``lang``: a chunk's as it is written into the
    property, a query's as it is searched."""
    entry = settings.languages[lang]
    if entry.umlauts_spelled_out and entry.tokenization in FOLDED_TOKENIZATIONS:
        text = umlauts_read(text)
    return simplified(text) if entry.traditional_read_as_simplified else text


def lexical_properties(settings: Settings) -> list[Property]:
    return [Property(name=lexical_property(settings, lang), data_type=DataType.TEXT, skip_vectorization=True,
                     index_filterable=False, tokenization=Tokenization(entry.tokenization),
                     text_analyzer=(Configure.text_analyzer(ascii_fold=True)
                                    if entry.tokenization in FOLDED_TOKENIZATIONS else None))
            for lang, entry in settings.languages.items()]


def searched_text(properties: dict[str, Any]) -> str:
    """What the lexical leg searches of a chunk, as a reader sees it: its headings and its text
    (a question often names the section, and the section's chunks may not repeat its heading)."""
    return "\n".join([*(properties.get("heading_path") or []), properties.get("text", "")])


def with_lexical(properties: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """The object's properties plus its ``searched_text`` in its language's lexical property."""
    lang = properties.get("lang")
    if lang not in settings.languages or not properties.get("text"):
        return properties
    return {**properties, lexical_property(settings, lang): lexical_text(settings, lang, searched_text(properties))}
