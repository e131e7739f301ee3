"""The lexical leg's copies of a chunk's text: one property per language (``text_<lang>``,
``text_<lang>_folded`` where its accents are folded), tokenized for that language
(languages.<lang>.tokenization; docs/retrieval.md), written beside each object by
``pipeline.stores.vector_store.insert_objects`` and searched by ``pipeline.retrieval.retriever``'s
BM25 leg.
"""

from __future__ import annotations

from typing import Any

from weaviate.classes.config import Configure, DataType, Property, Tokenization

from pipeline.config import Settings

# The lexical properties of word-tokenized languages (en, de, es) fold accents, and Weaviate
# folds the query searched in them alike: a question typed without its accents ("proteccion de
# datos", "Gebuhren", "Strasse") finds the words (pipeline.retrieval.terms.plain on our side)
FOLDED_TOKENIZATIONS = frozenset({"word"})


def lexical_property(settings: Settings, lang: str) -> str:
    """The per-language copy of a chunk's text that search's lexical leg reads, tokenized for
    that language (languages.<lang>.tokenization; docs/retrieval.md). A property's analyzer
    cannot change, so a folded copy has a name of its own: a collection made before folding
    gets it added and backfilled (``migrate_lexical``)."""
    folded = settings.languages[lang].tokenization in FOLDED_TOKENIZATIONS
    return f"text_{lang}_folded" if folded else f"text_{lang}"


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
    return {**properties, lexical_property(settings, lang): searched_text(properties)}
