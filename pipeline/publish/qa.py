"""The qa step, the QA gate: a seeded sample of the staged batch, checked automatically.

Sample size: qa.sample_per_thousand per 1000 chunks, at least qa.min_sample, all when
fewer. Each sampled chunk must pass every check; the batch fails when the share of
failing chunks exceeds qa.max_failure_rate. The report (JSON + readable summary) goes to
``<batch>/qa_report.json`` and ``qa_report.txt``.
"""

from __future__ import annotations

import math
import random
from typing import Any, Callable

import numpy as np

from pipeline.config import Settings
from pipeline.contracts import CleanedDocument, EmbeddedDocument, StructuredDocument
from pipeline.publish import load
from pipeline.stages import EMBED, LANGUAGE, STRUCTURE
from pipeline.stores import vector_store
from pipeline.text.cleaning import is_garbage
from pipeline.text.langid import language_candidates
from pipeline.workspace import Workspace

Check = Callable[[dict[str, Any]], tuple[bool, str]]


def sample_size(total: int, settings: Settings) -> int:
    wanted = max(settings.qa.min_sample, math.ceil(total * settings.qa.sample_per_thousand / 1000))
    return min(total, wanted)


def draw_sample(uuids: list[str], settings: Settings, batch_id: str) -> list[str]:
    rng = random.Random(f"{settings.qa.seed}:{batch_id}")
    return sorted(rng.sample(sorted(uuids), sample_size(len(uuids), settings)))


class Checker:
    """The checks, with what they need from the workspace and the staging collection."""

    def __init__(self, ws: Workspace, settings: Settings, collection, dimension: int):
        self.ws, self.settings, self.collection, self.dimension = ws, settings, collection, dimension
        self._cleaned: dict[str, CleanedDocument] = {}

    def cleaned(self, doc_id: str) -> CleanedDocument:
        if doc_id not in self._cleaned:
            self._cleaned[doc_id] = self.ws.read_model(self.ws.path(LANGUAGE, doc_id), CleanedDocument)
        return self._cleaned[doc_id]

    def text_present(self, obj: dict[str, Any]) -> tuple[bool, str]:
        text = obj["properties"]["text"].strip()
        if not text:
            return False, "empty text"
        garbage = sum(is_garbage(line, self.settings.cleaning.garbage_max_symbol_ratio) for line in text.splitlines())
        return garbage <= len(text.splitlines()) / 2, f"{garbage} garbage line(s)"

    def language_agrees(self, obj: dict[str, Any]) -> tuple[bool, str]:
        """The label is among a fresh detection's top three: fastText's lite model splits
        its vote on technical English (fi 0.27, en 0.24 on a real chunk), while a wrong
        label (a Chinese chunk marked German) is nowhere near the top."""
        text, label = obj["properties"]["text"], obj["properties"]["lang"]
        letters = sum(ch.isalpha() for ch in text)
        if letters < 30:
            return True, f"too short to judge ({letters} letters)"
        candidates = language_candidates(text, self.settings, k=3)
        # Code and command lines inside a manual read as English; tolerate them there.
        ascii_heavy = sum(ch.isascii() for ch in text) > 0.6 * len(text)
        ok = label in candidates or (candidates[0] == "en" and ascii_heavy)
        return ok, f"label {label}, fresh detection {', '.join(candidates)}"

    def clause_markers_balanced(self, obj: dict[str, Any]) -> tuple[bool, str]:
        structure = self.ws.read_model(self.ws.path(STRUCTURE, obj["properties"]["doc_id"]), StructuredDocument)
        depth = 0
        for _, kind, _ in structure.markers:
            depth += 1 if kind == "CLAUSE_START" else -1
            if depth < 0:
                return False, "CLAUSE_END before its CLAUSE_START"
        return depth == 0, f"{len(structure.markers)} markers, final depth {depth}"

    def vector_sound(self, obj: dict[str, Any]) -> tuple[bool, str]:
        vector = np.asarray(obj["vector"], dtype=np.float64)
        norm = float(np.linalg.norm(vector)) if vector.size else 0.0
        ok = vector.shape == (self.dimension,) and bool(np.isfinite(vector).all()) and abs(norm - 1.0) < 1e-3
        return ok, f"dim {vector.size}, norm {norm:.4f}"

    def top_hit_is_self(self, obj: dict[str, Any]) -> tuple[bool, str]:
        hits = self.collection.query.near_vector(near_vector=obj["vector"], limit=3, return_metadata=["distance"])
        if not hits.objects:
            return False, "no hit"
        best = hits.objects[0]
        # Identical texts give identical vectors: a tie at distance ~0 counts as self.
        ok = str(best.uuid) == obj["uuid"] or (best.metadata.distance < 1e-5 and
                                               best.properties["text"] == obj["properties"]["text"])
        return ok, f"top hit {best.uuid} at distance {best.metadata.distance:.5f}"

    def lineage_complete(self, obj: dict[str, Any]) -> tuple[bool, str]:
        missing = [f for f in vector_store.LINEAGE_FIELDS if obj["properties"].get(f) in (None, "", [])]
        return not missing, f"missing {missing}" if missing else "complete"

    def offsets_map_back(self, obj: dict[str, Any]) -> tuple[bool, str]:
        p = obj["properties"]
        source = self.cleaned(p["doc_id"]).text[p["char_start"]:p["char_end"]]
        return source == p["text"], f"[{p['char_start']}:{p['char_end']}]"

    def all(self) -> dict[str, Check]:
        return {"text_present": self.text_present, "language_agrees": self.language_agrees,
                "clause_markers_balanced": self.clause_markers_balanced, "vector_sound": self.vector_sound,
                "top_hit_is_self": self.top_hit_is_self, "lineage_complete": self.lineage_complete,
                "offsets_map_back": self.offsets_map_back}


def run_gate(batch_id: str, doc_ids: list[str], settings: Settings) -> dict[str, Any]:
    """Check the staged batch; write and return the report (``passed`` says the verdict)."""
    ws = Workspace(settings, batch_id)
    name = vector_store.staging_name(settings, batch_id)
    dims = {ws.read_model(ws.path(EMBED, d), EmbeddedDocument).dimension for d in doc_ids}
    with vector_store.connect(settings) as client:
        if not doc_ids:
            report = {"batch_id": batch_id, "total_chunks": 0, "sample": [], "failures": 0, "failure_rate": 0.0,
                      "threshold": settings.qa.max_failure_rate, "passed": True, "note": "nothing to check"}
            return write_report(ws, report)
        collection = client.collections.get(name)
        objects = {u: (p, v) for u, p, v in vector_store.iterate_objects(collection)}
        checker = Checker(ws, settings, collection, dims.pop() if len(dims) == 1 else -1)
        checks = checker.all()
        sample = []
        for uuid in draw_sample(list(objects), settings, batch_id):
            properties, vector = objects[uuid]
            obj = {"uuid": uuid, "properties": properties, "vector": vector}
            verdicts = {}
            for check_name, check in checks.items():
                try:
                    ok, detail = check(obj)
                except Exception as exc:  # a check that crashes is a failed check, reported
                    ok, detail = False, f"{type(exc).__name__}: {exc}"
                verdicts[check_name] = {"passed": bool(ok), "detail": detail}
            sample.append({"uuid": uuid, "doc_id": properties["doc_id"], "chunk_id": properties["chunk_id"],
                           "lang": properties["lang"], "text": properties["text"][:300],
                           "passed": all(v["passed"] for v in verdicts.values()), "checks": verdicts})
    failures = sum(not s["passed"] for s in sample)
    rate = failures / len(sample) if sample else 0.0
    report = {"batch_id": batch_id, "staging_collection": name, "total_chunks": len(objects),
              "sample_size": len(sample), "seed": settings.qa.seed, "sample": sample, "failures": failures,
              "failure_rate": round(rate, 4), "threshold": settings.qa.max_failure_rate,
              "passed": rate <= settings.qa.max_failure_rate}
    return write_report(ws, report)


def write_report(ws: Workspace, report: dict[str, Any]) -> dict[str, Any]:
    ws.write_json(ws.batch_file("qa_report.json"), report)
    lines = [f"QA gate for batch {report['batch_id']}: {'PASSED' if report['passed'] else 'FAILED'}",
             f"  {report.get('sample_size', 0)} of {report['total_chunks']} chunk(s) sampled, "
             f"{report['failures']} failed ({report['failure_rate']:.1%}; threshold {report['threshold']:.0%})"]
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
