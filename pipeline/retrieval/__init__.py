"""Retrieval over the live collection in five languages (docs/retrieval.md).

The Python API::

    from pipeline.config import get_settings
    from pipeline.retrieval import search

    result = search("Wer ist der ursprüngliche Autor eines Programms?", get_settings())
    if result.answered:
        for hit in result.groups:           # one per passage, its translations collapsed under it
            print(hit.score, hit.shown.lang, hit.shown.properties["text"][:80],
                  [t.lang for t in hit.translations])

``Retriever(settings, client, collection)`` keeps the embedder and the alignment maps for
many questions (``rosetta eval``, the latency benchmark); ``fusion`` holds the pure rules.
"""

from pipeline.retrieval.retriever import Retriever, SearchResult, search

__all__ = ["Retriever", "SearchResult", "search"]
