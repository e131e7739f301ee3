"""The QA gate's sampling plan: how many chunks to check and how many may fail.

A single sampling plan (n, c) per batch of N chunks: draw n chunks without replacement,
accept the batch when at most c of them fail. Its operating characteristic (OC), the
probability of acceptance when D of the N chunks are bad, is hypergeometric. The plan is
the smallest n (never under the design's qa.sample_per_thousand per 1000, at least
qa.min_sample) with a c such that

- a batch with qa.accept_quality (1 %) bad chunks passes with >= 1 - qa.producer_risk, and
- a batch with qa.reject_quality (10 %) bad chunks fails with >= 1 - qa.consumer_risk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pipeline.config import Settings

OC_RATES = (0.0, 0.01, 0.02, 0.05, 0.10, 0.15, 0.20)


@dataclass(frozen=True)
class SamplingPlan:
    total: int  # N, chunks in the batch
    sample_size: int  # n
    acceptance_number: int  # c: the batch passes with at most c failing sampled chunks
    accept_quality: float
    reject_quality: float

    def passes(self, failures: int) -> bool:
        return failures <= self.acceptance_number

    def bad_count(self, rate: float) -> int:
        """Bad chunks in the batch at ``rate``: up to the accepted quality, the most that keep
        the share at or under it; above, the fewest that bring it to at least ``rate``."""
        return _at_most(self.total, rate) if rate <= self.accept_quality else _at_least(self.total, rate)

    def acceptance_probability(self, bad: int) -> float:
        return acceptance_probability(self.total, bad, self.sample_size, self.acceptance_number)

    def oc_table(self, rates: tuple[float, ...] = OC_RATES) -> list[tuple[float, int, float]]:
        """(rate of bad chunks, bad chunks in the batch, probability the batch passes)."""
        return [(r, self.bad_count(r), self.acceptance_probability(self.bad_count(r))) for r in rates]


# 1e-9 absorbs float noise (0.1 * 30 is 3.0000000000000004).
def _at_most(total: int, rate: float) -> int:
    return math.floor(total * rate + 1e-9)


def _at_least(total: int, rate: float) -> int:
    return min(total, math.ceil(total * rate - 1e-9))


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def acceptance_probability(total: int, bad: int, n: int, c: int) -> float:
    """P(at most c bad chunks among n drawn without replacement from total, bad of them bad)."""
    if n == 0:
        return 1.0
    low, high = max(0, n - (total - bad)), min(n, bad)
    denominator = _log_comb(total, n)
    p = sum(math.exp(_log_comb(bad, k) + _log_comb(total - bad, n - k) - denominator)
            for k in range(low, min(c, high) + 1))
    return min(1.0, p)


def minimum_sample(total: int, settings: Settings) -> int:
    """The design's floor: qa.sample_per_thousand per 1000 chunks, at least qa.min_sample."""
    return min(total, max(settings.qa.min_sample, math.ceil(total * settings.qa.sample_per_thousand / 1000)))


def plan(total: int, settings: Settings) -> SamplingPlan:
    """The smallest sample (not under the design's floor) meeting both stated risks."""
    q = settings.qa
    good, bad = _at_most(total, q.accept_quality), _at_least(total, q.reject_quality)
    for n in range(minimum_sample(total, settings), total + 1):
        # The producer's side rises with c: take the smallest c that passes good batches...
        c = next(c for c in range(n + 1) if acceptance_probability(total, good, n, c) >= 1 - q.producer_risk)
        # ...and keep it if bad batches still fail often enough.
        if acceptance_probability(total, bad, n, c) <= q.consumer_risk:
            return SamplingPlan(total, n, c, q.accept_quality, q.reject_quality)
    # Full inspection: exact, so a batch passes with at most the good share bad.
    return SamplingPlan(total, total, good, q.accept_quality, q.reject_quality)


def describe(p: SamplingPlan) -> str:
    """The plan and its OC table, for `rosetta qa plan` and the QA report."""
    lines = [f"batch of {p.total} chunk(s): sample {p.sample_size}, pass with at most {p.acceptance_number} failing",
             f"  designed: <= {p.accept_quality:.0%} bad passes, >= {p.reject_quality:.0%} bad fails",
             "  bad chunks   in batch   P(pass)"]
    lines += [f"  {rate:>9.0%}   {bad:>8}   {prob:7.1%}" for rate, bad, prob in p.oc_table()]
    return "\n".join(lines)
