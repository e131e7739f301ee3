"""CLI commands for alignment: ``anchors fit|promote|audit|diff``, ``embed`` and ``eval``.

``register(subparsers)`` adds them to the ``rosetta`` parser (pipeline/cli/main.py). Every
command calls the functions the anchors DAG calls (pipeline/alignment).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.cli.tables import table as _table
from pipeline.config import get_settings


def _languages(settings, arg: str | None) -> list[str]:
    langs = arg.split(",") if arg else [lang for lang in settings.languages if lang != settings.reference_language]
    unknown = [lang for lang in langs if lang not in settings.languages or lang == settings.reference_language]
    if unknown:
        raise SystemExit(f"not a language to align: {', '.join(unknown)}")
    return langs


def realign_batch_id(lang: str, version: str) -> str:
    return f"realign-{lang}-v{version}-{time.strftime('%Y%m%dT%H%M%S')}"


def _promote_and_realign(settings, lang: str, version: str) -> dict[str, Any]:
    from pipeline.alignment.fitting import promote
    from pipeline.alignment.realign import realign_language

    outcome = promote(settings, lang, version)
    if outcome["promoted"]:
        outcome["realign"] = realign_language(settings, lang, realign_batch_id(lang, version))
    return outcome


def _print_outcome(outcome: dict[str, Any]) -> None:
    if not outcome["promoted"]:
        print(f"  {outcome['lang']} v{outcome['version']}: not promoted ({outcome['reason']})")
        return
    r = outcome["realign"]
    print(f"  {outcome['lang']} v{outcome['version']}: PROMOTED (was {outcome['replaced']}); re-alignment batch "
          f"{r['batch_id']}: {r['status']}, {r['chunks']} chunk(s) of {len(r['documents'])} document(s)"
          + (f", {len(r['skipped'])} skipped: {r['skipped']}" if r["skipped"] else ""))


def cmd_fit(args: argparse.Namespace) -> int:
    from pipeline.alignment.fitting import fit_candidate, gate

    settings = get_settings()
    results = []
    for lang in _languages(settings, args.lang):
        fitted = fit_candidate(settings, lang, args.anchors, args.alpha, args.max_train)
        decided = gate(settings, lang, fitted["version"])
        row = {**fitted, "decision": decided["decision"], "reason": decided["reason"]}
        if args.promote and decided["decision"] == "approved":
            row["promotion"] = _promote_and_realign(settings, lang, fitted["version"])
        results.append(row)
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=1, default=str))
        return 0
    rows = [{"lang": r["lang"], "version": r["version"], "anchors": r["anchor_set_version"], "alpha": r["alpha"],
             "train": r["train_pairs"], "acc1": f"{r['metrics']['identity']['acc1']:.4f} -> {r['metrics']['fitted']['acc1']:.4f}",
             "mrr": f"{r['metrics']['identity']['mrr']:.4f} -> {r['metrics']['fitted']['mrr']:.4f}",
             "decision": r["decision"]} for r in results]
    print("held-out split, identity -> fitted:")
    print(_table(rows, [("lang", "lang"), ("version", "version"), ("anchors", "anchors"), ("alpha", "alpha"),
                        ("train", "train pairs"), ("acc1", "accuracy@1"), ("mrr", "MRR"), ("decision", "decision")]))
    for r in results:
        print(f"  {r['lang']} v{r['version']}: {r['reason']}")
        if "promotion" in r:
            _print_outcome(r["promotion"])
    return 0


def cmd_promote(args: argparse.Namespace) -> int:
    from pipeline.alignment.maps import registered_model_name
    from pipeline.stores.tracking import configure_mlflow

    settings = get_settings()
    version = args.version
    if version is None:
        client = configure_mlflow(settings)
        found = client.search_model_versions(f"name='{registered_model_name(settings, args.lang)}'")
        if not found:
            raise SystemExit(f"no fitted version for {args.lang}: run `rosetta anchors fit --lang {args.lang}`")
        version = str(max(int(v.version) for v in found))
    outcome = _promote_and_realign(settings, args.lang, version)
    _print_outcome(outcome)
    return 0 if outcome["promoted"] or outcome["reason"] == "already production" else 1


def cmd_audit(args: argparse.Namespace) -> int:
    from pipeline.alignment.evaluation import audit

    if args.document:
        from pipeline.alignment.anchor_sets import anchor_sets_using

        found = anchor_sets_using(get_settings(), args.document)
        print(json.dumps(found, ensure_ascii=False, indent=1) if args.json else found["verdict"])
        return 0

    rows = audit(get_settings())
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    for row in rows:
        row["prod"] = "*" if row["production"] else ""
        row["acc1"] = f"{row['acc1_identity']} -> {row['acc1_fitted']}" if row.get("acc1_fitted") else None
        row["mrr"] = f"{row['mrr_identity']} -> {row['mrr_fitted']}" if row.get("mrr_fitted") else None
    print(_table(rows, [("lang", "lang"), ("version", "version"), ("prod", "prod"), ("anchor_set_version", "anchors"),
                        ("alpha", "alpha"), ("train_pairs", "train"), ("acc1", "held-out acc@1 (id -> fit)"),
                        ("mrr", "held-out MRR (id -> fit)"), ("mrr_production", "prod MRR"),
                        ("decision", "decision"), ("created", "created"), ("promoted_at", "promoted"),
                        ("chunks", "chunks in Weaviate")]))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from pipeline.alignment.anchor_sets import diff_anchor_sets, load_anchor_set

    settings = get_settings()
    old, new = load_anchor_set(settings, args.v1), load_anchor_set(settings, args.v2)
    diff = diff_anchor_sets(old, new)
    if args.json:
        print(json.dumps(diff, ensure_ascii=False, indent=1))
        return 0
    print(f"anchors {old.version} ({old.sha256[:12]}) -> {new.version} ({new.sha256[:12]}): "
          f"{len(diff['added'])} added, {len(diff['removed'])} removed, {len(diff['changed'])} changed")
    for row in diff["added"]:
        print(f"+ {row['id']}: {row['en']!r} = {row['text']!r} [{row['split']}]")
    for row in diff["removed"]:
        print(f"- {row['id']}: {row['en']!r} = {row['text']!r} [{row['split']}]")
    for row in diff["changed"]:
        changes = ", ".join(f"{k}: {v['old']!r} -> {v['new']!r}" for k, v in row.items() if isinstance(v, dict))
        print(f"~ {row['id']}: {changes}")
    return 0


# A set of texts whose median is this long is embedded as stored passages unless told: the
# golden set's query sets have medians of 2.5-17 words per language and type (32 at most for
# one query), its passage sets 58-71; e5 asks for the right prefix on each side
# (docs/benchmarks.md, "rosetta embed: questions or passages").
PASSAGE_SET_WORDS = 40


def reads_as_passages(texts: list[str], tokenization: str) -> bool:
    """Whether a set of texts given to ``rosetta embed`` without --queries/--passages is a set
    of passages: its median length in words (refusal.query_words: a CJK word two characters)."""
    from pipeline.retrieval.refusal import query_words

    return bool(texts) and float(np.median([query_words(t, tokenization) for t in texts])) >= PASSAGE_SET_WORDS


def cmd_embed(args: argparse.Namespace) -> int:
    """JSON lines {"text": ...} on stdin -> one vector per line, in input order, as .npy."""
    from pipeline.alignment.maps import load_production_map
    from pipeline.embedding.embedders import embedder_id, get_embedder

    settings = get_settings()
    if args.lang not in settings.languages:
        raise SystemExit(f"unknown language {args.lang!r}; configured: {', '.join(settings.languages)}")
    texts = []
    for number, line in enumerate(sys.stdin, 1):
        if line.strip():
            try:
                texts.append(json.loads(line)["text"])
            except (ValueError, KeyError, TypeError):
                raise SystemExit(f"stdin line {number}: expected a JSON object with a \"text\" field") from None
    embedder = get_embedder(settings.embedding.model, settings.embedding.batch_size)
    passages = args.passages or (not args.queries and reads_as_passages(texts, settings.languages[args.lang].tokenization))
    vectors = embedder.encode(texts, query=not passages)
    version = "raw"
    if not args.raw:
        alignment = load_production_map(settings, args.lang)
        vectors, version = alignment.apply(vectors), alignment.version
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.save(args.out, vectors.astype(np.float32), allow_pickle=False)
    told = " (--queries / --passages say it)" if not (args.queries or args.passages) else ""
    print(f"{len(texts)} vector(s) of {embedder.dimension} ({embedder_id(embedder)}, {args.lang}, "
          f"alignment {version}), embedded as {'passages' if passages else 'questions'}{told} -> {args.out}",
          file=sys.stderr)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """The five-language retrieval set (the default) goes to pipeline/cli/retrieval.py; an
    alignment golden set (English pool, e.g. gnome-help.json) is reported raw vs aligned."""
    from pipeline.alignment.evaluation import evaluate_golden
    from pipeline.cli import retrieval

    if not args.golden or "shared_acronyms" in json.loads(Path(args.golden).read_text(encoding="utf-8")):
        return retrieval.cmd_eval(args)
    settings = get_settings()
    versions = dict(v.split("=", 1) for v in args.version or [])
    result = evaluate_golden(settings, Path(args.golden) if args.golden else None, args.embedder, versions)
    if args.out:
        Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return 0
    print(f"golden set {result['golden_set']} (sha256 {result['golden_sha256'][:12]}), "
          f"{result['passages']} English passages")
    ok = True
    for embedder, per_lang in result["embedders"].items():
        print(f"\nembedder {embedder}")
        rows = []
        for lang, r in per_lang.items():
            ok = ok and r["within_tolerance"] and r["hit5_ok"]
            rows.append({"lang": lang, "n": r["queries"], "map": r["alignment_version"],
                         **{f"{w}_{m}": f"{r[w][m]:.3f}" for w in ("raw", "aligned") for m in ("hit1", "hit5", "mrr10")},
                         "lost": r["queries_lost"], "ok": "yes" if r["within_tolerance"] and r["hit5_ok"] else "NO"})
        print(_table(rows, [("lang", "query lang"), ("n", "queries"), ("map", "map"), ("raw_hit1", "raw hit@1"),
                            ("aligned_hit1", "aligned hit@1"), ("raw_hit5", "raw hit@5"), ("aligned_hit5", "aligned hit@5"),
                            ("raw_mrr10", "raw MRR@10"), ("aligned_mrr10", "aligned MRR@10"),
                            ("lost", "queries lost"), ("ok", "ok")]))
    return 0 if ok else 1


def register(subparsers) -> None:
    """Add ``anchors``, ``embed`` and ``eval`` to the rosetta command line."""
    p = subparsers.add_parser("anchors", help="alignment maps: fit, promote, audit, diff anchor sets")
    sub = p.add_subparsers(dest="anchors_command", required=True)

    q = sub.add_parser("fit", help="fit, evaluate and gate a new W per language (registered in MLflow)")
    q.add_argument("--lang", help="comma-separated languages (default: every non-reference language)")
    q.add_argument("--anchors", help="anchor set version (default: anchors.version in config)")
    q.add_argument("--alpha", type=float, action="append", help="alpha (repeat for a grid; default: config grid)")
    q.add_argument("--max-train", type=int, help="use only the first N training pairs")
    q.add_argument("--promote", action="store_true", help="promote approved versions and re-align Weaviate")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_fit)

    q = sub.add_parser("promote", help="make a version production (if it passes the gate) and re-align Weaviate")
    q.add_argument("lang")
    q.add_argument("version", nargs="?", help="model version (default: the latest fitted)")
    q.set_defaults(func=cmd_promote)

    q = sub.add_parser("audit", help="every version per language: anchors, figures, decision, dates, chunks")
    q.add_argument("--document", help="instead: the anchor sets holding rows built from this document (erasure)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_audit)

    q = sub.add_parser("diff", help="anchor rows added, removed or changed between two anchor set versions")
    q.add_argument("v1")
    q.add_argument("v2")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_diff)

    p = subparsers.add_parser("embed", help="JSON lines {\"text\": ...} on stdin -> vectors (.npy), input order")
    p.add_argument("--lang", required=True, help="language of the texts (selects the alignment map)")
    p.add_argument("--raw", action="store_true", help="raw embedder vectors, no alignment")
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--queries", action="store_true",
                      help="encode the texts as search questions, as `rosetta search` does")
    kind.add_argument("--passages", action="store_true",
                      help="encode the texts as stored passages (chunks), as the embed stage does; without either "
                           f"flag, a set whose median text has {PASSAGE_SET_WORDS} words or more is passages, "
                           "any other questions (the same for USE, different prefixes for e5)")
    p.add_argument("--out", required=True, help="output .npy file")
    p.set_defaults(func=cmd_embed)

    p = subparsers.add_parser("eval", help="retrieval on the five-language golden set (or raw vs aligned on an "
                                           "alignment golden set)")
    p.add_argument("--golden", help="golden set JSON (default: retrieval.golden_set in config; "
                                    "benchmarks/golden/gnome-help.json: the alignment regression check)")
    p.add_argument("--split", choices=["dev", "test", "all"], default="test", help="retrieval set: queries of this split")
    p.add_argument("--embedder", action="append", help="embedder name (repeat; default: the configured one)")
    p.add_argument("--version", action="append", metavar="LANG=VERSION",
                   help="evaluate this map version instead of production (repeat per language)")
    p.add_argument("--out", help="also write the figures as JSON here")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)
