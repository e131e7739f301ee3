"""Retrieval over the live collection in five languages (docs/retrieval.md).

The Python API::

    from pipeline.config import get_settings
    from pipeline.retrieval import search

    result = search("Wer ist der ursprüngliche Autor eines Programms?", get_settings())
    if result.answered:
        for hit in result.groups:           # one per passage, its translations collapsed under it
            print(hit.score, hit.shown.lang, hit.shown.properties["text"][:80],
                  [t.lang for t in hit.translations])

    # some documents only: a folder, a file or a pattern, and/or a signer's name
    search("Kündigungsfrist", get_settings(), scope=Scope(paths=("contracts/",), signed_by="Mustermann"))

``Retriever(settings, client, collection)`` keeps the embedder and the alignment maps for
many questions (``rosetta eval``, the latency benchmark); ``fusion`` holds the pure rules.
"""

from pipeline.retrieval.retriever import Retriever, SearchResult, search
from pipeline.retrieval.scope import Scope

__all__ = ["Retriever", "Scope", "SearchResult", "search"]
