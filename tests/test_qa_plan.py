"""The QA gate's sampling plan keeps its stated operating characteristic: the plan's own
arithmetic, and a simulation on a real staged batch (real stages, real Weaviate staging
collection, the real checks) with known-bad chunks injected at 0-20 %."""

from __future__ import annotations

import json
import random
import uuid as uuidlib
from pathlib import Path

import pytest
from scipy.stats import hypergeom

from pipeline.cli.main import main as rosetta
from pipeline.publish import load, qa, sampling
from pipeline.stores import vector_store as store
from test_loading_faults import stage_batch

FIXTURES = Path(__file__).parent / "fixtures"
TRIALS = 1500  # per rate: the observed pass rate's standard error is at most 1.3 points


@pytest.mark.parametrize("total", [1, 5, 19, 60, 100, 250, 1000, 4321, 20000, 150000])
def test_plan_meets_the_stated_risks_and_the_design_floor(settings, total):
    p = sampling.plan(total, settings)
    q = settings.qa
    assert p.sample_size >= sampling.minimum_sample(total, settings)
    good, bad = p.bad_count(q.accept_quality), p.bad_count(q.reject_quality)
    assert good / total <= q.accept_quality and bad / total >= q.reject_quality
    assert p.acceptance_probability(good) >= 1 - q.producer_risk
    assert p.acceptance_probability(bad) <= q.consumer_risk


def test_acceptance_probability_is_the_hypergeometric_cdf():
    for total, bad, n, c in [(1000, 100, 60, 2), (57, 6, 23, 0), (20000, 200, 100, 3), (19, 2, 15, 0)]:
        expected = hypergeom(total, bad, n).cdf(c)
        assert sampling.acceptance_probability(total, bad, n, c) == pytest.approx(expected, abs=1e-9)


def test_the_old_plan_would_have_failed_the_stated_risk(settings):
    """5 of 1000 with no failure allowed passes a 10 %-bad batch 59 % of the time."""
    assert sampling.acceptance_probability(1000, 100, 5, 0) > 0.5
    assert sampling.plan(1000, settings).acceptance_probability(100) <= settings.qa.consumer_risk


def test_rosetta_qa_plan_prints_the_plan_and_its_oc_table(settings, capsys):
    assert rosetta(["qa", "plan", "--chunks", "1000"]) == 0
    out = capsys.readouterr().out
    p = sampling.plan(1000, settings)
    assert f"sample {p.sample_size}, pass with at most {p.acceptance_number} failing" in out
    assert f"{p.acceptance_probability(100):.1%}" in out
    assert rosetta(["qa", "plan"]) == 0
    assert "20000" in capsys.readouterr().out


def ocr_garbage_lines() -> list[str]:
    rows = json.loads((FIXTURES / "ocr_garbage.json").read_text(encoding="utf-8"))
    return [r["text"] for r in rows if r["garbage"]]


def verdicts(settings, batch_id: str, doc_ids: list[str]) -> dict[str, bool]:
    """Every staged chunk through every check, as the gate checks its sample."""
    return {item["uuid"]: item["passed"] for item in qa.check_all(batch_id, doc_ids, settings)}


def test_simulated_pass_rates_match_the_oc_table(settings, weaviate_server, sample_corpus, monkeypatch):
    monkeypatch.setattr(settings.weaviate, "collection", f"PlanSim{uuidlib.uuid4().hex[:8]}")
    batch_id = "plan-sim"
    doc_ids = stage_batch(settings, batch_id, {"sim-en": sample_corpus / "en" / "maint-guide.pdf",
                                               "sim-de": sample_corpus / "de" / "maint-guide.pdf"})
    load.load_batch(batch_id, doc_ids, settings)
    staging = weaviate_server.collections.get(store.staging_name(settings, batch_id))
    clean = verdicts(settings, batch_id, doc_ids)
    assert all(clean.values()), [u for u, ok in clean.items() if not ok]  # a real manual passes every check
    total = len(clean)
    plan = sampling.plan(total, settings)

    # Known-bad chunks: the first k of a fixed permutation get real OCR garbage as text.
    order = sorted(clean)
    random.Random(7).shuffle(order)
    most = plan.bad_count(max(sampling.OC_RATES))
    garbage = ocr_garbage_lines()
    rng = random.Random(11)
    for uuid in order[:most]:
        staging.data.update(uuid=uuid, properties={"text": "\n".join(rng.sample(garbage, 6))})
    dirty = verdicts(settings, batch_id, doc_ids)
    assert not any(dirty[u] for u in order[:most])  # every injected chunk fails a check

    rows = []
    for rate, bad, expected in plan.oc_table():
        chunk_passes = {u: (dirty[u] if i < bad else clean[u]) for i, u in enumerate(order)}
        passed = sum(plan.passes(sum(not chunk_passes[u] for u in qa.draw_sample(order, settings, f"{batch_id}-{t}")))
                     for t in range(TRIALS))
        rows.append((rate, bad, expected, passed / TRIALS))
    print(f"\n{total} chunks, n={plan.sample_size}, c={plan.acceptance_number}")
    for rate, bad, expected, observed in rows:
        print(f"  {rate:4.0%} ({bad:3} bad): table {expected:6.1%}, observed {observed:6.1%}")
    assert all(abs(observed - expected) <= 0.05 for _, _, expected, observed in rows), rows

    # The gate itself, end to end at the top rate, decides as the simulation counts.
    report = qa.run_gate(batch_id, doc_ids, settings)
    assert report["sample_size"] == plan.sample_size and report["acceptance_number"] == plan.acceptance_number
    failing_in_sample = sum(not dirty[item["uuid"]] for item in report["sample"])
    assert report["failures"] == failing_in_sample and report["passed"] == plan.passes(failing_in_sample)
    weaviate_server.collections.delete(store.staging_name(settings, batch_id))
