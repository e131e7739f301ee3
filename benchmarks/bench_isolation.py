"""The cost of running per-document stages in a killable worker (limits.isolate) against
running them in this process, on the same documents in the same run.

    .venv/bin/python benchmarks/bench_isolation.py [FOLDER] [--repeats 1]

Each mode runs every document of FOLDER (default: the sample corpus) through the six
per-document stages (pipeline.batch.runner.process_document), in a fresh batch. The
isolated run includes the worker's start and its own model loading (fastText, USE,
rapidocr: loaded once per worker, not per call), as `rosetta ingest` pays them; the in-process
run loads its models in its first pass, so the in-process pass runs first. The ratio
(isolated / in-process) is what to read.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_all(settings, folder: Path, batch_id: str) -> tuple[float, dict[str, str]]:
    from pipeline.batch import discovery, runner
    from pipeline.contracts import DocRef

    manifest = discovery.write_manifest(settings, batch_id, "corpus_refresh",
                                        [discovery.source_document(p, settings)
                                         for p in discovery.list_sources(settings, [folder])], [])
    started = time.perf_counter()
    outcomes = {}
    for doc in manifest.documents:
        result = runner.process_document(DocRef(batch_id=batch_id, doc_id=doc.doc_id), settings)
        outcomes[doc.doc_id] = result.status if result.status == "ok" else f"{result.reason}"
        print(f"  {batch_id}: {Path(doc.source_path).name}: {outcomes[doc.doc_id]}", flush=True)
    return time.perf_counter() - started, outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=ROOT / "samples" / "corpus")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    os.environ["ROSETTA__DATA_ROOT"] = tempfile.mkdtemp(prefix="rosetta-bench-isolation-")
    from pipeline.batch.isolation import worker
    from pipeline.config import get_settings

    settings = get_settings()
    rows = []
    for repeat in range(args.repeats):
        for isolate in (False, True):
            settings.limits.isolate = isolate
            if isolate:
                worker().stop()  # every isolated pass pays a worker start, as a fresh `rosetta ingest` does
            seconds, outcomes = run_all(settings, args.folder, f"bench-{'isolated' if isolate else 'inproc'}-{repeat}")
            rows.append((isolate, seconds, outcomes))
            print(f"  pass {repeat + 1} {'isolated' if isolate else 'in-process'}: {seconds:.1f} s", flush=True)
    inproc = [s for isolate, s, _ in rows if not isolate]
    isolated = [s for isolate, s, _ in rows if isolate]
    same = all(o == rows[0][2] for _, _, o in rows)
    print(f"\n{len(rows[0][2])} document(s) of {args.folder}, {args.repeats} repeat(s); same outcomes: {same}")
    print(f"in-process: {min(inproc):.1f} s   isolated: {min(isolated):.1f} s   "
          f"ratio isolated/in-process: {min(isolated) / min(inproc):.2f}")


if __name__ == "__main__":
    main()
