#!/usr/bin/env python3
"""Can a per-language map lift `rosetta embed`'s short cross-lingual queries? Measured, not assumed.

The retrieval golden set's de/es/ja/zh queries (headings, first sentences) against its English
passages alone, by vector, as `rosetta eval` reports "cross-lingual" (hit@5 per language, per
query type, and the English queries by type: no translation at all). Each variant maps the
query vectors (and, where it says so, the English passages too):

* ``identity``: the raw embedder vectors (what ships while no map beats identity);
* ``language-mean shift``: ``x - mean_lang + mean_en``, the family the fitted maps belong to
  (pipeline/alignment/maps.py) at W = I;
* ``centred``: every language's vectors minus its own mean (queries ``x - mean_lang``,
  passages ``p - mean_en``), then re-normalised: per-language mean-centring, known to help
  language neutrality (Libovický et al. 2020);
* ``centred queries only``: the queries centred, the passages raw;
* ``Procrustes on centred anchors, alpha A``: W fitted on the centred training anchors with
  the pull toward identity (maps.fit_procrustes), both sides centred;
* ``query map fitted on the dev split, alpha A``: a map fitted on the golden dev split's own
  query -> passage pairs per language: in-domain short -> long pairs, the best case for a
  query-side map for short texts (one fitted on the anchor sources could only do worse). Not
  a shippable map (it is fitted on the golden set); it bounds what such a map can do.

Means and anchor maps come from the anchor set's training split (anchors.version). Every
variant is scored on the dev split (where a choice would be made) and on the test split.
``--passage-headings`` encodes each English passage with its heading glued in front, as the
chunk stage glues a heading to its first sentence (the set keeps it out of the text).

    .venv/bin/python benchmarks/bench_alignment_maps.py [--passage-headings] [--out figures.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.alignment.anchor_sets import anchor_vectors, load_anchor_set
from pipeline.alignment.maps import fit_procrustes
from pipeline.config import get_settings
from pipeline.embedding.embedders import get_embedder
from pipeline.retrieval.evaluation import QUERY_TYPES, encode_cached, golden_path

ALPHAS = (0.0, 0.01, 0.1)
QUERY_MAP_ALPHAS = (0.01, 0.1, 1.0)
SPLITS = ("dev", "test")

QueryMap = Callable[[np.ndarray, str], np.ndarray]


def normalise(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def hit5(queries: dict[str, tuple[list[dict], np.ndarray]], passages: np.ndarray, index: dict[str, int],
         query_map: QueryMap, reference: str) -> dict[str, float]:
    """hit@5 per query language and per query type (the reference language's own queries by type)."""
    out = {}
    for lang, (chosen, vectors) in queries.items():
        scores = query_map(vectors, lang) @ passages.T
        relevant = np.array([index[q["relevant"]] for q in chosen])
        hits = (scores > scores[np.arange(len(chosen)), relevant][:, None]).sum(axis=1) < 5
        if lang != reference:
            out[lang] = float(hits.mean())
        for kind in QUERY_TYPES:
            of_kind = np.array([q["type"] == kind for q in chosen])
            out.setdefault(f"{'same language ' if lang == reference else ''}{kind}", []).append(hits[of_kind])
    for key, value in out.items():
        if isinstance(value, list):
            out[key] = float(np.concatenate(value).mean())
    out["mean"] = float(np.mean([out[lang] for lang in queries if lang != reference]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--passage-headings", action="store_true",
                        help="encode each English passage with its heading in front, as a chunk starts")
    args = parser.parse_args()
    settings = get_settings()
    reference = settings.reference_language
    embedder = get_embedder(settings.embedding.model, settings.embedding.batch_size)
    golden = json.loads(golden_path(settings).read_text(encoding="utf-8"))
    english = [p for p in golden["passages"] if p["lang"] == reference]
    index = {p["section"]: i for i, p in enumerate(english)}
    passages = encode_cached(settings, embedder, [f"{p['heading']}\n\n{p['text']}" if args.passage_headings
                                                  else p["text"] for p in english])
    langs = [lang for lang in settings.languages if lang != reference]

    anchors = load_anchor_set(settings, None)
    train: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for lang in langs:
        vectors = anchor_vectors(settings, anchors, lang, embedder)
        rows = np.array([r["split"] == "train" for r in anchors.rows if r["lang"] == lang])
        train[lang] = (vectors["text"][rows], vectors["en"][rows])
    mean = {lang: x.mean(axis=0) for lang, (x, _) in train.items()}
    mean[reference] = np.mean([y.mean(axis=0) for _, y in train.values()], axis=0)

    queries = {split: {} for split in SPLITS}
    for split in SPLITS:
        for lang in [reference, *langs]:
            chosen = [q for q in golden["queries"] if q["split"] == split and q["lang"] == lang and q["relevant"] in index]
            queries[split][lang] = (chosen, encode_cached(settings, embedder, [q["text"] for q in chosen], query=True))

    centred_passages = normalise(passages - mean[reference])
    variants: dict[str, tuple[QueryMap, np.ndarray]] = {
        "identity": (lambda v, lang: v, passages),
        "language-mean shift": (lambda v, lang: normalise(v - mean[lang] + mean[reference]), passages),
        "centred": (lambda v, lang: normalise(v - mean[lang]), centred_passages),
        "centred queries only": (lambda v, lang: normalise(v - mean[lang]), passages),
    }
    for alpha in ALPHAS:
        w = {lang: fit_procrustes(x - mean[lang], y - mean[reference], alpha)[0] for lang, (x, y) in train.items()}
        w[reference] = np.eye(embedder.dimension, dtype=np.float32)
        variants[f"Procrustes on centred anchors, alpha {alpha}"] = (
            lambda v, lang, w=w: normalise((v - mean[lang]) @ w[lang]), centred_passages)
    for alpha in QUERY_MAP_ALPHAS:
        fitted = {}
        for lang, (chosen, vectors) in queries["dev"].items():
            fitted[lang] = fit_procrustes(vectors, passages[[index[q["relevant"]] for q in chosen]], alpha)
        variants[f"query map fitted on the dev split, alpha {alpha}"] = (
            lambda v, lang, f=fitted: normalise((v - f[lang][1]) @ f[lang][0] + f[lang][2]), passages)

    report = {}
    for name, (query_map, pool) in variants.items():
        report[name] = {split: hit5(queries[split], pool, index, query_map, reference) for split in SPLITS}
        print(f"{name}: " + "; ".join(
            f"{split} mean {f['mean']:.3f} (" + ", ".join(f"{k} {v:.3f}" for k, v in f.items() if k != "mean") + ")"
            for split, f in report[name].items()), flush=True)
    shippable = [n for n in report if "dev split" not in n]
    best = max(shippable, key=lambda n: report[n]["dev"]["mean"])
    print(f"best on dev (anchor-fitted variants): {best}, test mean {report[best]['test']['mean']:.3f}")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
