"""Human review of a batch's QA sample (``rosetta qa reject``, the Airflow "Rosetta QA"
view): a person's rejections count with the automatic checks' failures; past the sampling
plan's acceptance number the batch is rolled back, even after promotion. Every decision is
kept with who made it and when (``qa_review.json`` per chunk, ``qa_audit.json`` in order).
"""

from __future__ import annotations

import getpass
from datetime import datetime, timezone
from typing import Any

from pipeline.batch import lifecycle, retention
from pipeline.config import Settings
from pipeline.publish import qa
from pipeline.workspace import Workspace


def review(batch_id: str, chunk_ids: list[str], reason: str, settings: Settings, *,
           verdict: str = "rejected", reviewer: str | None = None) -> dict[str, Any]:
    """Record a person's verdict ("rejected" or "accepted") on sampled chunks; when the
    rejected and automatically failed chunks exceed the plan's acceptance number, roll the
    batch back (once)."""
    if verdict not in ("rejected", "accepted"):
        raise ValueError(f"verdict must be rejected or accepted, not {verdict!r}")
    if verdict == "rejected" and not reason.strip():
        raise ValueError("a rejection needs a reason")
    ws = Workspace(settings, batch_id)
    if verdict == "rejected":
        retention.refuse_rollback_if_pruned(ws)
    report = ws.read_json(ws.batch_file("qa_report.json"))
    sampled = {item["chunk_id"]: item for item in report["sample"]}
    unknown = [c for c in chunk_ids if c not in sampled]
    if unknown:
        raise ValueError(f"not in batch {batch_id}'s QA sample: {', '.join(unknown)} "
                         f"(see `rosetta qa sample {batch_id}`)")
    reviewer = reviewer or getpass.getuser()
    review_path, audit_path = ws.batch_file("qa_review.json"), ws.batch_file("qa_audit.json")
    verdicts = ws.read_json(review_path) if review_path.exists() else {}
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for chunk_id in chunk_ids:
        verdicts[chunk_id] = {"verdict": verdict, "reason": reason, "at": now, "by": reviewer}
    ws.write_json(review_path, verdicts)
    rejected = sorted(c for c, v in verdicts.items() if v["verdict"] == "rejected")
    failing = {c for c, item in sampled.items() if not item["passed"]} | set(rejected)
    already = bool(report.get("review", {}).get("rolled_back"))
    outcome: dict[str, Any] = {"batch_id": batch_id, "rejected": rejected, "failures": len(failing),
                               "failure_rate": round(len(failing) / len(sampled), 4) if sampled else 0.0,
                               "acceptance_number": report["acceptance_number"], "rolled_back": already}
    if already:
        outcome["rollback"] = report["review"].get("rollback")
    elif len(failing) > report["acceptance_number"]:
        journal = lifecycle.roll_back(batch_id, f"rejected in QA review by {reviewer}: {reason}", settings)
        outcome.update(rolled_back=True, rollback=journal)
    audit = ws.read_json(audit_path) if audit_path.exists() else []
    audit.append({"at": now, "by": reviewer, "verdict": verdict, "chunk_ids": list(chunk_ids), "reason": reason,
                  "rolled_back": outcome["rolled_back"] and not already})
    ws.write_json(audit_path, audit)
    report["review"] = outcome
    qa.write_report(ws, report)
    return outcome
