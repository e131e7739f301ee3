"""Human review of a batch's QA sample (``rosetta qa reject``): a person's rejections count
with the automatic checks' failures; past the threshold the batch is rolled back, even after
promotion.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pipeline.batch import lifecycle
from pipeline.config import Settings
from pipeline.publish import qa
from pipeline.workspace import Workspace


def review(batch_id: str, chunk_ids: list[str], reason: str, settings: Settings) -> dict[str, Any]:
    """Record a person's rejection of sampled chunks; past the threshold, roll the batch back.

    The failures are the sampled chunks that failed an automatic check or were rejected by a
    reviewer; more than the plan's acceptance number rolls the batch back. Verdicts
    accumulate in ``qa_review.json``.
    """
    ws = Workspace(settings, batch_id)
    report = ws.read_json(ws.batch_file("qa_report.json"))
    sampled = {item["chunk_id"]: item for item in report["sample"]}
    unknown = [c for c in chunk_ids if c not in sampled]
    if unknown:
        raise ValueError(f"not in batch {batch_id}'s QA sample: {', '.join(unknown)} "
                         f"(see `rosetta qa sample {batch_id}`)")
    review_path = ws.batch_file("qa_review.json")
    verdicts = ws.read_json(review_path) if review_path.exists() else {}
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for chunk_id in chunk_ids:
        verdicts[chunk_id] = {"verdict": "rejected", "reason": reason, "at": now}
    ws.write_json(review_path, verdicts)
    failing = {c for c, item in sampled.items() if not item["passed"]} | set(verdicts)
    rate = len(failing) / len(sampled) if sampled else 0.0
    outcome: dict[str, Any] = {"batch_id": batch_id, "rejected": sorted(verdicts), "failures": len(failing),
                               "failure_rate": round(rate, 4), "acceptance_number": report["acceptance_number"],
                               "rolled_back": False}
    if len(failing) > report["acceptance_number"]:
        journal = lifecycle.roll_back(batch_id, f"rejected in QA review: {reason}", settings)
        outcome.update(rolled_back=True, rollback=journal)
    report["review"] = outcome
    qa.write_report(ws, report)
    return outcome
