#!/usr/bin/env python3
"""The concatenated embedder's USE weight chosen per query language, and a question encoded
both ways: does either lift `rosetta embed`'s cross-lingual hit@5?

de/es/ja/zh golden-set queries against the English passages alone, by vector, heading-less
and as stored (heading first), as ``evaluation.cross_lingual`` ranks them. The query side
may weigh USE against e5 as it likes (a dot product of the two halves is the weighted mean of
the two cosines, whatever the passage's weights), so a weight per query language costs
nothing at search time; a second reading mixes e5's question and passage encodings of the
query. Each language's weight is chosen on the dev split, then the test split is read.

    .venv/bin/python benchmarks/bench_embed_weights.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.config import get_settings  # noqa: E402
from pipeline.embedding.embedders import MultilingualE5Small, UniversalSentenceEncoder, get_embedder  # noqa: E402
from pipeline.retrieval.evaluation import encode_cached, golden_path  # noqa: E402

WEIGHTS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)  # USE's; 0.1 is the configured concatenation's
CONFIGURED = 0.1
MIXES = (0.25, 0.5)  # share of e5's passage encoding in the query's e5 vector


def hit5(query_use, query_e5, pool, relevant, weight: float) -> float:
    scores = weight * (query_use @ pool["use"].T) + (1 - weight) * (query_e5 @ pool["e5"].T)
    ranks = (scores > scores[np.arange(len(relevant)), relevant][:, None]).sum(axis=1)
    return float((ranks < 5).mean())


def main() -> int:
    settings = get_settings()
    golden = json.loads(golden_path(settings).read_text(encoding="utf-8"))
    english = [p for p in golden["passages"] if p["lang"] == golden["reference_language"]]
    index = {p["section"]: i for i, p in enumerate(english)}
    use, e5 = get_embedder(UniversalSentenceEncoder.name), get_embedder(MultilingualE5Small.name)
    pools = {kind: {"use": encode_cached(settings, use, texts), "e5": encode_cached(settings, e5, texts)}
             for kind, texts in (("heading-less", [p["text"] for p in english]),
                                 ("as stored", [f"{p['heading']} {p['text']}" for p in english]))}
    chosen: dict[str, float] = {}
    for split in ("dev", "test"):
        print(f"== {split}")
        for lang in ("de", "es", "ja", "zh"):
            queries = [q for q in golden["queries"]
                       if q["split"] == split and q["lang"] == lang and q["relevant"] in index]
            texts, relevant = [q["text"] for q in queries], np.array([index[q["relevant"]] for q in queries])
            q_use, q_e5 = encode_cached(settings, use, texts, query=True), encode_cached(settings, e5, texts, query=True)
            as_passage = encode_cached(settings, e5, texts)
            bare = {w: hit5(q_use, q_e5, pools["heading-less"], relevant, w) for w in WEIGHTS}
            if split == "dev":
                chosen[lang] = max(WEIGHTS, key=lambda w: (bare[w], w == CONFIGURED))
            mixed = {}
            for share in MIXES:
                vectors = (1 - share) * q_e5 + share * as_passage
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                mixed[share] = hit5(q_use, vectors, pools["heading-less"], relevant, CONFIGURED)
            w = chosen[lang]
            print(f"{lang} ({len(queries)} queries): heading-less by USE weight "
                  + " ".join(f"{x:g}:{bare[x]:.3f}" for x in WEIGHTS)
                  + f"; chosen {w:g}: {bare[w]:.3f} (configured {bare[CONFIGURED]:.3f}), as stored "
                  f"{hit5(q_use, q_e5, pools['as stored'], relevant, w):.3f} "
                  f"({hit5(q_use, q_e5, pools['as stored'], relevant, CONFIGURED):.3f}); question and passage "
                  "encodings mixed " + " ".join(f"{s:g}:{mixed[s]:.3f}" for s in MIXES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
