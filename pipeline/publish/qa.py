"""The qa step, the QA gate: a seeded sample of the staged batch, checked automatically.

The sample size n and the acceptance number c come from the sampling plan
(pipeline/publish/sampling.py, with its stated operating characteristic). Each sampled
chunk must pass every check; the batch fails when more than c sampled chunks fail. The
report (JSON + readable summary) goes to ``<batch>/qa_report.json`` and ``qa_report.txt``.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from pipeline.config import Settings
from pipeline.contracts import EmbeddedDocument
from pipeline.publish import load, sampling
from pipeline.publish.checks import Check, Checker
from pipeline.stages import EMBED
from pipeline.stores import vector_store
from pipeline.workspace import Workspace


def draw_sample(uuids: list[str], settings: Settings, batch_id: str) -> list[str]:
    rng = random.Random(f"{settings.qa.seed}:{batch_id}")
    return sorted(rng.sample(sorted(uuids), sampling.plan(len(uuids), settings).sample_size))


def _checked(checks: dict[str, Check], uuid: str, properties: dict[str, Any], vector) -> dict[str, Any]:
    """One chunk through every check: its verdicts and the sample item the report keeps."""
    obj = {"uuid": uuid, "properties": properties, "vector": vector}
    verdicts = {}
    for check_name, check in checks.items():
        try:
            ok, detail = check(obj)
        except Exception as exc:  # a check that crashes is a failed check, reported
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        verdicts[check_name] = {"passed": bool(ok), "detail": detail}
    return {"uuid": uuid, "doc_id": properties["doc_id"], "chunk_id": properties["chunk_id"],
            "lang": properties["lang"], "text": properties["text"][:300],
            "passed": all(v["passed"] for v in verdicts.values()), "checks": verdicts}


def check_chunks(batch_id: str, doc_ids: list[str], settings: Settings,
                 choose: Callable[[list[str]], list[str]]) -> tuple[int, list[dict[str, Any]]]:
    """(chunks staged, the checked items of the chunks ``choose`` picks from their uuids)."""
    ws = Workspace(settings, batch_id)
    dims = {ws.read_model(ws.path(EMBED, d), EmbeddedDocument).dimension for d in doc_ids}
    with vector_store.connect(settings) as client:
        collection = vector_store.collection(client, settings, vector_store.staging_name(settings, batch_id))
        # uuids first, then only the chosen objects with their vectors: a batch of 10,000 pages
        # is some 30,000 objects, over 500 MB as Python lists of floats
        uuids = vector_store.list_uuids(collection)
        chosen = choose(uuids)
        objects = {u: (p, v) for u, p, v in vector_store.fetch_by_uuid(collection, chosen)}
        checks = Checker(ws, settings, collection, dims.pop() if len(dims) == 1 else -1).all()
        return len(uuids), [_checked(checks, u, *objects[u]) for u in chosen]


def check_all(batch_id: str, doc_ids: list[str], settings: Settings) -> list[dict[str, Any]]:
    """Every staged chunk checked (for measuring the plan; the gate checks its sample only)."""
    return check_chunks(batch_id, doc_ids, settings, sorted)[1]


def run_gate(batch_id: str, doc_ids: list[str], settings: Settings) -> dict[str, Any]:
    """Check the staged batch; write and return the report (``passed`` says the verdict)."""
    ws = Workspace(settings, batch_id)
    name = vector_store.staging_name(settings, batch_id)
    if not doc_ids:
        report = {"batch_id": batch_id, "total_chunks": 0, "sample": [], "failures": 0, "failure_rate": 0.0,
                  "acceptance_number": 0, "passed": True, "note": "nothing to check"}
        return write_report(ws, report)
    total, sample = check_chunks(batch_id, doc_ids, settings, lambda uuids: draw_sample(uuids, settings, batch_id))
    failures = sum(not s["passed"] for s in sample)
    plan = sampling.plan(total, settings)
    report = {"batch_id": batch_id, "staging_collection": name, "total_chunks": total,
              "sample_size": len(sample), "seed": settings.qa.seed, "sample": sample, "failures": failures,
              "failure_rate": round(failures / len(sample), 4) if sample else 0.0,
              "acceptance_number": plan.acceptance_number, "passed": plan.passes(failures)}
    return write_report(ws, report)


def write_report(ws: Workspace, report: dict[str, Any]) -> dict[str, Any]:
    ws.write_json(ws.batch_file("qa_report.json"), report)
    lines = [f"QA gate for batch {report['batch_id']}: {'PASSED' if report['passed'] else 'FAILED'}",
             f"  {report.get('sample_size', 0)} of {report['total_chunks']} chunk(s) sampled, "
             f"{report['failures']} failed ({report['failure_rate']:.1%}); "
             f"the plan passes at most {report['acceptance_number']}"]
    for item in report["sample"]:
        failed = [f"{name} ({v['detail']})" for name, v in item["checks"].items() if not v["passed"]]
        verdict = "ok  " if item["passed"] else "FAIL"
        lines.append(f"  {verdict} {item['chunk_id']} [{item['lang']}]" + (f" failed: {'; '.join(failed)}" if failed else ""))
    ws.batch_file("qa_report.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return report


def run(batch_id: str, loaded: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """The QA gate on the staged batch; its verdict joins the load's outcome."""
    report = run_gate(batch_id, loaded["documents"], settings)
    return {**loaded, "qa_passed": report["passed"], "qa_failure_rate": report["failure_rate"]}


def upstream_from_workspace(settings: Settings, batch_id: str) -> dict[str, Any]:
    return load.loaded_from_workspace(settings, batch_id)


def checked_from_workspace(settings: Settings, batch_id: str) -> dict[str, Any]:
    """What ``run`` returned: the load's outcome and the verdict in qa_report.json."""
    ws = Workspace(settings, batch_id)
    report = ws.read_json(ws.batch_file("qa_report.json"))
    return {**load.loaded_from_workspace(settings, batch_id), "qa_passed": report["passed"],
            "qa_failure_rate": report["failure_rate"]}
