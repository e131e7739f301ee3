"""``rosetta qa plan [--chunks N]``: the QA gate's sampling plan and its operating
characteristic, for one batch size or a range of them. ``register(qa_subparsers)`` adds it
to ``rosetta qa`` (pipeline/cli/main.py)."""

from __future__ import annotations

import argparse

from pipeline.config import get_settings
from pipeline.publish import sampling

BATCH_SIZES = (20, 100, 500, 1000, 5000, 20000, 100000)


def cmd_plan(args: argparse.Namespace) -> int:
    settings = get_settings()
    if args.chunks is not None:
        print(sampling.describe(sampling.plan(args.chunks, settings)))
        return 0
    rates = sampling.OC_RATES
    print(f"QA sampling plans (designed: <= {settings.qa.accept_quality:.0%} bad passes with >= "
          f"{1 - settings.qa.producer_risk:.0%}, >= {settings.qa.reject_quality:.0%} bad fails with >= "
          f"{1 - settings.qa.consumer_risk:.0%}); P(pass) at each share of bad chunks:")
    print(f"{'chunks':>8} {'n':>5} {'c':>3}  " + " ".join(f"{r:>6.0%}" for r in rates))
    for total in BATCH_SIZES:
        p = sampling.plan(total, settings)
        print(f"{total:>8} {p.sample_size:>5} {p.acceptance_number:>3}  "
              + " ".join(f"{prob:>6.1%}" for _, _, prob in p.oc_table(rates)))
    print("one batch size in detail: rosetta qa plan --chunks N")
    return 0


def register(qa_subparsers) -> None:
    q = qa_subparsers.add_parser("plan", help="the QA sampling plan and its operating characteristic")
    q.add_argument("--chunks", type=int, help="batch size in chunks (default: a table of sizes)")
    q.set_defaults(func=cmd_plan)
