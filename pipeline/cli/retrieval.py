"""CLI commands for retrieval: ``search``, ``pairs`` (which documents translate each other, and
what a user declares of them),
and ``eval`` on the five-language golden set.

``register(subparsers)`` adds ``search`` and ``pairs`` to the ``rosetta`` parser (pipeline/cli/main.py);
``rosetta eval`` (pipeline/cli/anchors.py) hands a retrieval golden set to ``cmd_eval``.
Both call pipeline/retrieval, the same code as the Python API.
"""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path
from typing import Any

from pipeline.config import get_settings


def cmd_search(args: argparse.Namespace) -> int:
    from pipeline.retrieval import Scope, search

    scope = Scope(tuple(args.within or ()), args.signed_by or "", args.since, args.until)
    result = search(args.query, get_settings(), args.limit, args.lang, getattr(args, "mode", "hybrid"), scope)
    if args.json:
        print(json.dumps(result.as_dict(), ensure_ascii=False, indent=1))
        return 0
    shown = result.as_dict()
    print(f"query [{shown['query_lang']}]: {args.query}")
    if not result.answered:
        where = ("only the documents --in / --signed-by / --since / --until select"
                 if scope.paths or scope.signed_by or scope.since or scope.until
                 else "is anything loaded? see `rosetta status`")
        print(f"  no passage found (best similarity {shown['best_score']:.3f}, probability that it answers "
              f"{shown['answer_probability']:.2f}; {where})")
        return 0
    for i, hit in enumerate(shown["hits"], 1):
        snippet = " ".join(hit["text"].split())[:110]
        title = f" \"{hit['title']}\"" if hit["title"] else ""
        print(f"  {i}. {hit['score']:.3f} [{hit['lang']}] {hit['source']}{title}{_dated(hit)} p.{hit['page']}: {snippet}")
        if hit["signatures"]:
            signers = ", ".join((s["signer"] or "(signer unread)") + (f" ({s['file']})" if s.get("file") else "")
                                + (" (does NOT match the signed bytes)" if s["intact"] is False else "")
                                for s in hit["signatures"])
            changed = ", changed after it was signed" if hit["changed_after_signing"] else ""
            print(f"       signed by {signers}{changed}")
        for t in hit["translations"]:  # each with its own file's date: one language's version may be older
            print(f"       = [{t['lang']}] {t['source']}{_dated(t)} p.{t['page']} (similarity {t['similarity']:.3f})")
        for c in hit["copies"]:
            print(f"       ≈ [{c['lang']}] {c['source']}{_dated(c)} p.{c['page']} ({_sameness(c)}; "
                  f"similarity {c['similarity']:.3f})")
    return 0


def _dated(chunk: dict) -> str:
    return f" ({chunk['date']})" if chunk["date"] else ""


def _sameness(copy: dict) -> str:
    """A copy is the same text, or another version of it (a policy's, an OCR reading's): its
    first differences are shown."""
    differs = copy["differs"]
    if not differs:
        return "the same text"

    def words(text: str) -> str:
        return f"«{text[:40]}{'…' if len(text) > 40 else ''}»" if text else "—"

    shown = ", ".join(f"{words(ours)} → {words(theirs)}" for ours, theirs in differs[:2])
    return f"another version: {shown}" + (f" and {len(differs) - 2} more" if len(differs) > 2 else "")


# option -> what it declares (pipeline.stores.document_registry.declare) and how that reads
DECLARATIONS = {"declare": (True, "declared translations of each other"), "apart": (False, "declared apart"),
                "undeclare": (None, "left to their vectors")}


def _known_documents(given: list[str], registry) -> list[str]:
    """The doc_ids of the documents named (a file path or a doc_id), each one known and not gone."""
    from pipeline.stores.document_registry import GONE

    doc_ids = []
    for name in given:
        row = registry.get(name) or registry.find_by_path(str(Path(name).expanduser().resolve()))
        if row is None or row.status in GONE:
            raise ValueError(f"{name}: not a document Rosetta holds"
                             + (f" (it was {row.status})" if row else "; `rosetta ingest` it first"))
        doc_ids.append(row.doc_id)
    if len(set(doc_ids)) < 2:
        raise ValueError(f"{', '.join(given)}: name two documents or more (files or doc_ids)")
    return doc_ids


def cmd_pairs(args: argparse.Namespace) -> int:
    """Which live documents translate each other (what search lists under a hit); with
    --refresh, pair every live document afresh from its stored vectors; with --declare /
    --apart / --undeclare, record what a user knows of some documents and re-pair them."""
    from pipeline.batch.recovery import refuse_while_a_batch_runs
    from pipeline.publish.load import live_pairs, pair_live_documents
    from pipeline.stores.document_registry import DocumentRegistry

    settings = get_settings()
    registry = DocumentRegistry(settings.document_registry_path)
    option = next((name for name in DECLARATIONS if getattr(args, name, None)), None)
    if option is not None:
        doc_ids = _known_documents(getattr(args, option), registry)
        refuse_while_a_batch_runs(settings, f"rosetta pairs --{option}")
        translation, declared_as = DECLARATIONS[option]
        registry.declare(doc_ids, translation)
        summary = pair_live_documents(settings, report=print, declared=registry.declarations(doc_ids), only=doc_ids)
        print(f"{len(doc_ids)} document(s) {declared_as}; {summary['chunks']} live chunk(s) of "
              f"{summary['documents']} rewritten")
        return 0
    if args.refresh:
        refuse_while_a_batch_runs(settings, "rosetta pairs --refresh")
        summary = pair_live_documents(settings, report=print, declared=registry.declarations())
        print(f"{summary['chunks']} chunk(s) of {summary['documents']} document(s) rewritten")
        return 0
    rows = live_pairs(settings, registry.declarations())
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    for row in rows:
        print(f"[{row['lang']}] {row['document']}" + (" (its sections translate each other)"
                                                      if row["translated_within"] else ""))
        for partner in row["partners"]:
            print(f"    = {partner}" + (" (declared)" if partner in row["declared"] else ""))
    unweighed = sum(not row["weighed"] for row in rows)
    print(f"{len(rows)} document(s), {sum(bool(row['partners']) for row in rows)} paired with a translation"
          + (f"; {unweighed} loaded before pairing (`rosetta pairs --refresh` weighs them)" if unweighed else ""))
    return 0


def _row(name: str, figures: dict[str, Any]) -> dict[str, Any]:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    return {"name": name, "n": figures.get("queries", 0), "hit1": cell(figures.get("hit1")),
            "hit5": cell(figures.get("hit5")), "mrr10": cell(figures.get("mrr10")),
            "served": cell(figures.get("served_hit5")), "refused": cell(figures.get("no_answer_refused")),
            "on_topic": cell(figures.get("on_topic_refused")), "precision": cell(figures.get("no_answer_precision"))}


def cmd_eval(args: argparse.Namespace) -> int:
    """hit@1/5, MRR@10 per query language and type, vector vs hybrid, per embedder, the traps
    refused and the no-answer precision (the share of refusals that were traps); exit 1
    when the configured embedder misses a bar on the split (docs/retrieval.md)."""
    from pipeline.cli.tables import table
    from pipeline.retrieval.evaluation import evaluate_retrieval
    from pipeline.stores import vector_store

    settings = get_settings()
    with vector_store.connect(settings) as client:
        result = evaluate_retrieval(settings, client, Path(args.golden) if args.golden else None, args.embedder,
                                    args.split)
    if args.out:
        Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print(f"golden set {result['golden_set']} (sha256 {result['golden_sha256'][:12]}), split {result['split']}: "
              f"{result['queries']} queries, {result['passages']} passages in five languages")
        columns = [("name", "queries"), ("n", "n"), ("hit1", "hit@1"), ("hit5", "hit@5"), ("mrr10", "MRR@10"),
                   ("served", "hit@5 past the bar"), ("refused", "traps refused (absent)"),
                   ("on_topic", "on-topic traps refused"), ("precision", "no-answer precision")]
        for embedder, figures in result["embedders"].items():
            print(f"\nembedder {embedder}: {figures['ms_per_query']['mean']} ms per query "
                  f"(p95 {figures['ms_per_query']['p95']}), query language detected right "
                  f"{figures['language_detected']:.1%}"
                  + ("" if figures["no_answer"] else "; no no-answer model fitted for it: nothing refused"))
            for mode in ("vector", "hybrid"):
                print(f"{mode}:")
                print(table([_row(k, v) for k, v in figures[mode].items()], columns))
            print("across languages (each query's own language taken out of its candidates; its traps judged by "
                  "the across-languages models):")
            print(table([_row(k, v) for k, v in figures["across_languages"].items()], columns))
            print("the answer in other languages only (its passage in the query's language taken out, the "
                  "language's other passages kept), vector and hybrid:")
            for mode in ("vector", "hybrid"):
                print(table([_row(f"{mode} {k}", v) for k, v in figures["answer_elsewhere"][mode].items()
                             if k == "all" or k.startswith("lang:")], columns[:6]))
            print("cross-lingual by vector (as `rosetta embed` gives them), de/es/zh/ja queries against English "
                  "passages only; by type; English queries by type (no translation); and against the passages as "
                  "stored, heading first:")
            print(table([_row(k, v) for k, v in figures["cross_lingual"].items()], columns[:5]))
    checks = bars(result["embedders"][next(iter(result["embedders"]))])
    for name, ok in checks.items():
        print(f"bar {name}: {'not measured (the set holds no absent trap)' if ok is None else 'met' if ok else 'MISSED'}")
    return 0 if all(ok is not False for ok in checks.values()) else 1


def bars(figures: dict[str, Any]) -> dict[str, bool | None]:
    """The bars of docs/retrieval.md on one embedder's figures; None: the set cannot measure
    it (a set without absent traps, such as the manual not tuned on)."""
    refused = figures["hybrid"]["all"]["no_answer_refused"]
    langs = [k for k in figures["hybrid"] if k.startswith("lang:")]
    # the bar reads the passages without their headings (the stricter view; "as stored" is reported beside it)
    cross = [v["hit5"] for k, v in figures["cross_lingual"].items()
             if not k.startswith(("type:", "same language", "as stored"))]
    return {
        "hybrid hit@5 >= 0.92 in every query language": all(figures["hybrid"][k]["hit5"] >= 0.92 for k in langs),
        "hybrid never below vector-only": all(figures["hybrid"][k]["hit5"] >= figures["vector"][k]["hit5"] for k in langs),
        "no-answer traps refused >= 90 %": None if refused is None else refused >= 0.90,
        "cross-lingual mean hit@5 >= 0.90, none below 0.85": bool(cross) and sum(cross) / len(cross) >= 0.90
        and min(cross) >= 0.85,
    }


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: not a day (YYYY-MM-DD)") from None


def register(subparsers) -> None:
    """Add ``search`` and ``pairs`` to the rosetta command line."""
    p = subparsers.add_parser("search", help="top passages for a question in any language, translations collapsed")
    p.add_argument("query")
    p.add_argument("--lang", help="only chunks in this language")
    p.add_argument("--in", dest="within", action="append", metavar="PATH",
                   help="only documents at this file, folder or pattern (relative to the source folder or "
                        "the working directory; repeat for more)")
    p.add_argument("--signed-by", metavar="NAME", help="only documents (or embedded files) one of whose signers' "
                                                       "names holds these words, in any case, with or without accents")
    p.add_argument("--since", type=_day, metavar="YYYY-MM-DD",
                   help="only documents whose file is dated (last modified, else created) on or after this day")
    p.add_argument("--until", type=_day, metavar="YYYY-MM-DD", help="... on or before this day")
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--mode", choices=["hybrid", "vector"], default="hybrid", help="vector: the vector leg alone")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_search)
    p = subparsers.add_parser("pairs", help="which loaded documents translate each other (search lists them together)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--refresh", action="store_true",
                      help="pair every live document afresh from its stored vectors (no re-embedding)")
    what.add_argument("--declare", nargs="+", metavar="DOCUMENT",
                      help="these documents (files or doc_ids) translate each other, whatever their vectors say")
    what.add_argument("--apart", nargs="+", metavar="DOCUMENT",
                      help="these documents do not translate each other, however alike their vectors")
    what.add_argument("--undeclare", nargs="+", metavar="DOCUMENT",
                      help="drop what was declared of these documents; their vectors decide again")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_pairs)
