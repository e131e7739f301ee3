"""CLI commands for the corpus as a whole: ``forget`` (erasure on request), ``prune``
(workspace retention) and the machine-readable ``status --json``.

``register(subparsers)`` adds ``forget`` and ``prune`` to the ``rosetta`` parser
(pipeline/cli/main.py); ``forget`` calls the function the forget_document DAG calls
(pipeline.batch.erasure.forget), ``prune`` the one each batch's finish calls
(pipeline.batch.retention.prune).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from pipeline.cli.tables import table
from pipeline.config import get_settings
from pipeline.stores.document_registry import DocumentRegistry


def corpus_status(registry: DocumentRegistry) -> dict[str, Any]:
    """Every document (id, paths, sha256, status incl. deleted/forgotten, chunks, last batch)
    and every batch, for scripts."""
    owners = registry.path_owners()
    paths: dict[str, list[str]] = {}
    for path, doc_id in sorted(owners.items()):
        paths.setdefault(doc_id, []).append(path)
    documents = [{"doc_id": d.doc_id, "paths": paths.get(d.doc_id, []), "primary_path": d.source_path or None,
                  "sha256": d.sha256, "status": d.status, "chunks": d.chunks or 0, "last_batch": d.last_batch,
                  "lang": d.lang, "reason": d.delete_reason or d.quarantine_reason, "deleted_at": d.deleted_at,
                  "updated_at": d.updated_at} for d in registry.documents()]
    batches = [{"batch_id": b.batch_id, "kind": b.kind, "status": b.status, "started_at": b.started_at,
                "finished_at": b.finished_at,
                **{k: b.summary.get(k) for k in ("processed", "loaded", "quarantined", "skipped_unchanged", "chunks")},
                "moved": len(b.summary.get("moved", [])), "deleted": len(b.summary.get("deleted", [])),
                "reason": b.summary.get("reason") or b.summary.get("rollback_reason")} for b in registry.batches()]
    return {"documents": documents, "batches": batches}


def cmd_forget(args: argparse.Namespace) -> int:
    from pipeline.batch.erasure import forget

    try:
        report = forget(get_settings(), args.document, args.reason)
    except ValueError as exc:
        raise SystemExit(f"rosetta forget: {exc}") from None
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return 0
    w = report["weaviate"]
    print(f"forgot {report['doc_id']}: {sum(w['objects_deleted'].values())} object(s) deleted from Weaviate, "
          f"{len(w['objects_kept'])} collection(s) rewritten in {w['rewrite_s']:.1f} s; "
          f"{report['workspaces']['files_deleted']} workspace file(s) deleted, "
          f"{report['workspaces']['batch_files_rewritten']} batch file(s) rewritten, "
          f"{report['mlflow_runs_rewritten']} MLflow run(s) rewritten")
    print(f"anchors: {report['anchors']}")
    if report["source_file_still_present"]:
        print("warning: the source file is still in place; the next refresh ingests it again as a new document")
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    from pipeline.batch.retention import prune

    report = prune(get_settings(), dry_run=args.dry_run)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return 0
    verb = "would free" if args.dry_run else "freed"
    logs = report["logs"]
    if logs["files"]:
        print(f"{verb} {logs['bytes'] / 1e6:.1f} MB in {logs['files']} run log(s) past their review window")
    if not report["batches"]:
        print("nothing to prune: every batch is in its review window or holds only files still needed")
        return 0
    rows = [{**b, "removed": len(b["documents_removed"]), "kept": len(b["documents_kept"]),
             "mb": f"{b['bytes'] / 1e6:.1f}", "rollback": "copy removed" if b["replaced_chunks"] else "-"}
            for b in report["batches"]]
    print(table(rows, [("batch_id", "batch"), ("finished_at", "finished"), ("removed", "documents removed"),
                       ("kept", "kept (still needed)"), ("files", "files"), ("mb", "MB"),
                       ("rollback", "replaced chunks")]))
    print(f"\n{verb} {report['bytes'] / 1e6:.1f} MB in {report['files']} file(s) of {len(rows)} batch(es); "
          f"these batches {'could' if args.dry_run else 'can'} no longer be rolled back")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("forget", help="erase one document everywhere Rosetta copied it (erasure request)")
    p.add_argument("document", help="document id or a path it is known by")
    p.add_argument("--reason", required=True, help="why (kept in the erasure log)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_forget)

    p = subparsers.add_parser("prune", help="delete the workspace files of batches past their review window "
                                            "that no live chunk needs, and old run logs (each batch's finish "
                                            "does this too)")
    p.add_argument("--dry-run", action="store_true", help="show what would go, delete nothing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_prune)
