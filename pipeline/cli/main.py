"""The ``rosetta`` command line.

User commands: ingest, reprocess, status, search, demo, and per-stage commands on one
file (extract, chunk). ``rosetta stage NAME --batch B --doc D`` runs one stage of a
batch for one document (or all of them), ``rosetta stage load|qa|promote --batch B`` one
batch step: the container entrypoints, calling exactly the functions the DAG calls.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from pipeline.cli import anchors as cli_anchors
from pipeline.cli import corpus as cli_corpus
from pipeline.cli import qa_plan as cli_qa_plan
from pipeline.cli import retrieval as cli_retrieval
from pipeline.cli.corpus import corpus_status
from pipeline.cli.errors import run_reporting_errors
from pipeline.config import get_settings

# how `rosetta extract` tells what a file gained after a signature (Signature.after)
AFTER_SIGNATURE = {"nothing": "", "signing": ", followed only by later signatures or validation data",
                   "changes": ", the file changed after it"}

# Third-party deprecations printed on every run, none of them ours to fix: authlib (pulled in by
# the Weaviate client) on its own httpx import; mlflow's SQLAlchemy store on a loader strategy
# SQLAlchemy 2.1 deprecates. Filters cannot hold them: the Weaviate client's import resets the
# filters to "default" and authlib's puts "always" first for its own, so they are dropped at display.
KNOWN_WARNINGS = ("The httpx module is deprecated", "The ``noload`` loader strategy is deprecated")
_show_warning = warnings.showwarning


def _show_unless_known(message, category, filename, lineno, file=None, line=None) -> None:
    if not str(message).startswith(KNOWN_WARNINGS):
        _show_warning(message, category, filename, lineno, file, line)


warnings.showwarning = _show_unless_known


def _table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> str:
    widths = [max(len(title), *(len(str(r.get(key, ""))) for r in rows)) if rows else len(title) for key, title in columns]
    lines = ["  ".join(title.ljust(w) for (_, title), w in zip(columns, widths)),
             "  ".join("-" * w for w in widths)]
    for r in rows:
        lines.append("  ".join(str(r.get(key, "")).ljust(w) for (key, _), w in zip(columns, widths)))
    return "\n".join(lines)


# --- per-file stage commands -----------------------------------------------------------
def _local_pipeline(path: Path, upto: str) -> dict[str, Any]:
    """Run the stages up to ``upto`` on one file outside any batch (nothing is loaded)."""
    from pipeline.stages import chunk, extract, language, structure

    settings = get_settings()
    extracted = extract.extract_file(path, settings, doc_id=path.stem)
    out: dict[str, Any] = {"extracted": extracted}
    if upto == "extract":
        return out
    cleaned = language.clean_and_detect(extracted, settings)
    tree = structure.tag(cleaned)
    out.update(cleaned=cleaned, structure=tree, chunks=chunk.chunk_document(cleaned, tree, settings))
    return out


def cmd_extract(args: argparse.Namespace) -> int:
    from pipeline.contracts import DocumentError
    from pipeline.stages import language
    from pipeline.stages.language import detect_document
    from pipeline.text.block_languages import describe_shares
    from pipeline.text.cleaning import clean_pages
    from pipeline.text.langid import detect_block

    settings = get_settings()
    extracted = _local_pipeline(Path(args.file), "extract")["extracted"]
    kept, removed = clean_pages(extracted, settings)
    doc_lang, doc_conf = detect_document(kept, settings)
    pages = []
    for page, (_, kept_blocks) in zip(extracted.pages, kept):
        page_lang, page_conf = detect_document([(page.page_no, kept_blocks)], settings)
        blocks = []
        for block in page.blocks:
            lang, conf = detect_block(block.text, settings) if block.text.strip() else ("und", 0.0)
            blocks.append({**block.model_dump(), "method": block.method or page.method,
                           "engine": block.engine or page.engine, "lang": lang, "lang_confidence": round(conf, 4)})
        pages.append({"page_no": page.page_no, "attachment": page.attachment, "method": page.method, "engine": page.engine,
                      "direction": page.direction, "rotation": page.rotation, "ocr_reason": page.ocr_reason,
                      "lang": page_lang,
                      "lang_confidence": round(page_conf, 4), "blocks": blocks})
    try:  # what the language stage makes of it: loaded (perhaps in part) or quarantined
        cleaned = language.clean_and_detect(extracted, settings)
        outcome = {"loaded": True, "lang": cleaned.lang, "left_out": cleaned.left_out}
    except DocumentError as error:
        outcome = {"loaded": False, "reason": error.reason, "detail": error.detail}
    result = {"file": args.file, "lang": doc_lang, "lang_confidence": round(doc_conf, 4), "pages": pages,
              "info": extracted.info.model_dump(), "removed": [r.model_dump() for r in removed],
              "language_stage": outcome}
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print(f"{args.file}: {len(pages)} page(s), language {doc_lang} ({doc_conf:.2f})")
        for name, info in [("", extracted.info), *extracted.info.embedded.items()]:
            where = f"  {name}: " if name else "  "  # an embedded PDF's own title and signatures, by its name
            for label, value in (("title", info.title), ("author", info.author), ("created", info.created),
                                 ("modified", info.modified)):
                if value:
                    print(f"{where}{label}: {value}")
            for s in info.signatures:
                check = {True: "intact", False: "does NOT match the signed bytes", None: "not checked"}[s.intact]
                print(f"{where}signed by {s.signer or '(signer unread)'} at {s.signed_at or '(no time)'} ({s.kind}): "
                      f"{check}{AFTER_SIGNATURE[s.after]}; its certificate's trust not judged")
        for p in pages:
            part = f" ({p['attachment']})" if p["attachment"] else ""
            turned = f", read turned {p['rotation']} degrees clockwise" if p["rotation"] else ""
            print(f"  page {p['page_no']}{part}: {p['method']} {p['direction']} {p['engine']} {len(p['blocks'])} block(s) "
                  f"{p['lang']}{turned}")
        print(f"  removed {len(removed)} line(s) (headers/footers, page numbers, watermarks, OCR garbage)")
        if not outcome["loaded"]:
            print(f"  the language stage quarantines it ({outcome['reason']}): {outcome['detail']}")
        elif outcome["left_out"]:
            print(f"  the language stage loads its sections in configured languages, leaving out "
                  f"{describe_shares(outcome['left_out'])}")
    return 0


def cmd_chunk(args: argparse.Namespace) -> int:
    """The clause tree (elements nested, with spans), the markers and the chunks of one file."""
    from pipeline.stages import structure

    out = _local_pipeline(Path(args.file), "chunk")
    text, tagged = out["cleaned"].text, out["structure"]
    result = {"file": args.file, "lang": out["cleaned"].lang, "tree": structure.tree(tagged),
              "markers": tagged.markers, "chunks": [c.model_dump() for c in out["chunks"].chunks]}
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return 0

    def show(nodes: list[dict[str, Any]], depth: int) -> None:
        for node in nodes:
            if node["type"] in ("HEADER", "CLAUSE"):
                label = " ".join(str(node[k]) for k in ("number", "title") if node.get(k))
                print(f"{'  ' * depth}{node['type']} L{node['level']} {label} [{node['start']}:{node['end']}]")
                show(node["children"], depth + 1)
            elif node["type"] == "TABLE":
                print(f"{'  ' * depth}TABLE [{node['start']}:{node['end']}] {text[node['start']:node['end']].count(chr(10)) + 1} rows")

    show(result["tree"], 0)
    for c in out["chunks"].chunks:
        label = c.clause_number or c.structure_type
        print(f"{c.chunk_id} [{label}] p{c.page_start}-{c.page_end} {len(c.text)} chars {c.text[:60]!r}")
    return 0


def cmd_stage(args: argparse.Namespace) -> int:
    """Container entrypoint: one stage, one batch, one document or all of them; or one batch
    step, its input rebuilt from the batch workspace."""
    from pipeline.batch.runner import run_stage
    from pipeline.contracts import DocRef
    from pipeline.stages import stage
    from pipeline.workspace import Workspace

    settings = get_settings()
    spec = stage(args.name)
    if spec.kind == "batch":
        if args.doc:
            raise SystemExit(f"rosetta stage {args.name} is a batch step: it takes --batch only")
        module = spec.load()
        upstream = module.upstream_from_workspace(settings, args.batch)
        print(json.dumps(module.run(args.batch, upstream, settings)))  # last line: the XCom
        return 0
    doc_ids = [args.doc] if args.doc else [d.doc_id for d in Workspace(settings, args.batch).read_manifest().documents]
    results = []
    for doc_id in doc_ids:
        result = run_stage(spec, DocRef(batch_id=args.batch, doc_id=doc_id), settings)
        print(f"{args.name} {doc_id}: {result.status}" + (f" ({result.reason})" if result.reason else ""),
              file=sys.stderr)
        results.append(result.model_dump())
    print(json.dumps(results[0] if args.doc else results))  # last line: the XCom in docker mode
    return 0


# --- batch commands --------------------------------------------------------------------
def _print_batch(batch_id: str) -> None:
    from pipeline.batch.retention import pruned_record
    from pipeline.stores.document_registry import DocumentRegistry
    from pipeline.text.block_languages import describe_shares
    from pipeline.workspace import Workspace

    batch = DocumentRegistry(get_settings().document_registry_path).batch(batch_id)
    if batch is None:
        print(f"no batch {batch_id}")
        return
    s = batch.summary
    print(f"\nbatch {batch_id}: {batch.status} ({batch.kind}) - {s.get('processed', 0)} processed, "
          f"{s.get('loaded', 0)} loaded, {s.get('quarantined', 0)} quarantined, "
          f"{s.get('skipped_unchanged', 0)} unchanged and skipped, {s.get('chunks', 0)} chunk(s)")
    if s.get("qa_passed") is not None and s.get("processed"):
        print(f"QA gate: {'passed' if s['qa_passed'] else 'FAILED'} (failure rate {s['qa_failure_rate']:.1%})")
    if s.get("stages"):
        print("time per stage: " + ", ".join(f"{name} {cost['seconds']:.1f} s" for name, cost in s["stages"].items())
              + "; peak memory " + ", ".join(f"{name} {cost['peak_rss_mib']:.0f}" for name, cost in s["stages"].items())
              + " MiB")
    rows = []
    for d in s.get("documents", []):
        rows.append({"doc": Path(d["source_path"]).name, "lang": d.get("lang", "-"),
                     "conf": f"{d['lang_confidence']:.2f}" if d.get("lang_confidence") is not None else "-",
                     "pages": d.get("pages", "-"), "method": d.get("extraction", "-"), "chunks": d.get("chunks", 0),
                     "status": d["status"] + (f": {d['reason']}" if d.get("reason") else "")
                     + (f" (left out {describe_shares(d['left_out'])})" if d.get("left_out") else "")})
    if rows:
        print(_table(rows, [("doc", "document"), ("lang", "lang"), ("conf", "conf"), ("pages", "pages"),
                            ("method", "extraction"), ("chunks", "chunks"), ("status", "status")]))
    if s.get("skipped_unchanged"):
        print(f"{s['skipped_unchanged']} document(s) unchanged since their last batch: skipped")
    if s.get("moved") or s.get("deleted"):
        print(f"{len(s.get('moved', []))} document(s) moved (path updated), {len(s.get('deleted', []))} deleted")
    if s.get("reason"):
        print(s["reason"])
    if pruned := pruned_record(Workspace(get_settings(), batch_id)):
        print(f"workspace pruned at {pruned['at']} (past its review window): {len(pruned['documents_removed'])} "
              f"document(s)' files removed, {len(pruned['documents_kept'])} kept; it can no longer be rolled back")


def cmd_ingest(args: argparse.Namespace) -> int:
    from pipeline.cli.dag_runs import run_dag

    started = time.monotonic()
    settings = get_settings()
    log_path = None if args.verbose else _airflow_log(settings, "ingest")
    if log_path:
        print(f"running DAG corpus_refresh (Airflow task logs: {log_path})")
    run_id, state = run_dag("corpus_refresh", {"paths": [str(Path(p).resolve()) for p in args.paths],
                                               "force": args.force,
                                               "allow_mass_deletion": args.allow_mass_deletion}, settings, log_path)
    _print_batch(run_id)
    print(f"DAG corpus_refresh run {run_id}: {state} in {time.monotonic() - started:.0f} s")
    return 0 if state == "success" else 1


def _airflow_log(settings, name: str) -> Path:
    return settings.run_logs_path / f"{time.strftime('%Y%m%dT%H%M%S')}-{name}.log"


def cmd_reprocess(args: argparse.Namespace) -> int:
    from pipeline.cli.dag_runs import run_dag

    settings = get_settings()
    log_path = None if args.verbose else _airflow_log(settings, "reprocess")
    if log_path:
        print(f"running DAG reprocess_document (Airflow task logs: {log_path})")
    run_id, state = run_dag("reprocess_document", {"document": args.document}, settings, log_path)
    _print_batch(run_id)
    print(f"DAG reprocess_document run {run_id}: {state}")
    return 0 if state == "success" else 1


def cmd_status(args: argparse.Namespace) -> int:
    from pipeline.batch.recovery import stale_batches
    from pipeline.stores.document_registry import DocumentRegistry

    registry = DocumentRegistry(get_settings().document_registry_path)
    if args.json:
        print(json.dumps(corpus_status(registry), ensure_ascii=False, indent=1))
        return 0
    stale = stale_batches(get_settings())  # left by a killed run; the next run recovers them
    if args.batch_id:
        _print_batch(args.batch_id)
        return 0
    rows = [{"doc_id": d.doc_id, "lang": d.lang or "-", "chunks": d.chunks or 0,
             "status": d.status + (" (stale)" if d.status == "processing" and d.last_batch in stale else ""),
             "batch": d.last_batch or "-", "reason": d.quarantine_reason or ""} for d in registry.documents()]
    print("documents:")
    print(_table(rows, [("doc_id", "doc_id"), ("lang", "lang"), ("status", "status"), ("chunks", "chunks"),
                        ("batch", "last batch"), ("reason", "quarantine reason")]))
    batches = [{"batch": b.batch_id, "kind": b.kind, "started": b.started_at,
                "status": b.status + (f" (stale: {stale[b.batch_id]})" if b.batch_id in stale else ""),
                "processed": b.summary.get("processed", "-"), "loaded": b.summary.get("loaded", "-"),
                "quarantined": b.summary.get("quarantined", "-"), "skipped": b.summary.get("skipped_unchanged", "-")}
               for b in registry.batches()]
    print("\nbatches:")
    print(_table(batches, [("batch", "batch"), ("kind", "kind"), ("status", "status"), ("started", "started"),
                           ("processed", "processed"), ("loaded", "loaded"), ("quarantined", "quarantined"),
                           ("skipped", "skipped")]))
    return 0


# Questions whose answers are in the English guide (sections 2.1 and 1.1).
def cmd_qa_sample(args: argparse.Namespace) -> int:
    """The batch's QA sample, for a person to read."""
    from pipeline.workspace import Workspace

    ws = Workspace(get_settings(), args.batch_id)
    path = ws.batch_file("qa_report.json")
    if not path.exists():
        print(f"batch {args.batch_id} has no QA report (not loaded yet?)", file=sys.stderr)
        return 1
    report = ws.read_json(path)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return 0
    print(ws.batch_file("qa_report.txt").read_text(encoding="utf-8"))
    for item in report["sample"]:
        print(f"--- {item['chunk_id']} [{item['lang']}] {'passed' if item['passed'] else 'FAILED'} checks")
        print("    " + "\n    ".join(item["text"].splitlines()))
    print(f"\nreject chunks with: rosetta qa reject {args.batch_id} CHUNK_ID... --reason \"...\"")
    return 0


def cmd_qa_reject(args: argparse.Namespace) -> int:
    from pipeline.batch.review import review

    outcome = review(args.batch_id, args.chunk_ids, args.reason, get_settings())
    print(f"recorded {len(outcome['rejected'])} rejection(s); {outcome['failures']} failing sampled chunk(s) "
          f"(the plan passes at most {outcome['acceptance_number']})")
    if outcome["rolled_back"]:
        r = outcome["rollback"]
        print(f"batch {args.batch_id} rolled back: {r.get('removed', 0)} chunk(s) removed, "
              f"{r.get('restored', 0)} replaced chunk(s) restored")
    return 0


DEMO_QUERIES = [
    ("ja", "Debian パッケージ作成の典型的な作業の流れ"),
    ("de", "Welche Pakete sollte ich vor dem Paketieren installieren?"),
]


def cmd_demo(args: argparse.Namespace) -> int:
    """The sample corpus through corpus_refresh, then two questions answered from English text."""
    from pipeline.stores.vector_store import embedded_server_kept_up

    settings = get_settings()
    parser = build_parser()  # each command's arguments as the user's own would be parsed, defaults and all
    with embedded_server_kept_up(settings):
        code = cmd_ingest(parser.parse_args([*(["-v"] if args.verbose else []), "ingest", str(settings.source_dir)]))
        for _, query in DEMO_QUERIES:
            print()
            cli_retrieval.cmd_search(parser.parse_args(["search", query, "--lang", "en", "--limit", "3"]))
    return code


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rosetta", description=__doc__.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="show pipeline logs")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="run the corpus_refresh DAG on files or folders")
    p.add_argument("paths", nargs="*", help="files or folders (default: the configured source folder)")
    p.add_argument("--force", action="store_true",
                   help="reprocess unchanged documents too (every file read and hashed again)")
    p.add_argument("--allow-mass-deletion", action="store_true",
                   help="delete vanished documents even past sync.max_deleted_fraction")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("reprocess", help="run the reprocess_document DAG on one document")
    p.add_argument("document", help="document id (see `rosetta status`) or file path")
    p.set_defaults(func=cmd_reprocess)

    p = sub.add_parser("status", help="documents and batches, or one batch in detail")
    p.add_argument("batch_id", nargs="?")
    p.add_argument("--json", action="store_true", help="documents (paths, sha256, status, chunks) and batches")
    p.set_defaults(func=cmd_status)

    cli_retrieval.register(sub)

    p = sub.add_parser("demo", help="ingest the sample corpus and ask two cross-lingual questions")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("extract", help="extraction (+ language, cleaning) of one file")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_extract)

    p = sub.add_parser("chunk", help="structure tree and chunks of one file")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_chunk)

    p = sub.add_parser("qa", help="human review of a batch's QA sample")
    qa_sub = p.add_subparsers(dest="qa_command", required=True)
    q = qa_sub.add_parser("sample", help="show the sampled chunks of a batch")
    q.add_argument("batch_id")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_qa_sample)
    q = qa_sub.add_parser("reject", help="reject sampled chunks; past the threshold the batch is rolled back")
    q.add_argument("batch_id")
    q.add_argument("chunk_ids", nargs="+", metavar="CHUNK_ID")
    q.add_argument("--reason", required=True)
    q.set_defaults(func=cmd_qa_reject)
    cli_qa_plan.register(qa_sub)

    cli_anchors.register(sub)
    cli_corpus.register(sub)

    from pipeline.stages import CONTAINER_STAGES

    p = sub.add_parser("stage", help="run one stage or batch step of a batch (container entrypoint)")
    p.add_argument("name", choices=[s.name for s in CONTAINER_STAGES])
    p.add_argument("--batch", required=True)
    p.add_argument("--doc", help="one document id (default: every document of the batch)")
    p.set_defaults(func=cmd_stage)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pipeline").setLevel(logging.INFO)
    for noisy in ("weaviate-client", "httpx", "alembic", "mlflow"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return run_reporting_errors(args.func, args)


if __name__ == "__main__":
    sys.exit(main())
