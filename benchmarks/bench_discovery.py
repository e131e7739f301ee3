#!/usr/bin/env python3
"""Discovery of an unchanged share: every file hashed again (the baseline, as `--force` does)
against the hashes discovery remembers (size and modification time unchanged), in one process.

Files of random bytes (discovery reads bytes, not PDFs), dated an hour ago, in a temporary
folder; the two ways alternate for ``--rounds`` rounds and the best of each is printed with the
ratio. Figures are printed, never asserted (docs/benchmarks.md).

    .venv/bin/python benchmarks/bench_discovery.py [--files 300] [--mb 1] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.batch.discovery import found_files  # noqa: E402
from pipeline.stores.document_registry import DocumentRegistry  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--mb", type=float, default=1.0, help="size of each file")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rosetta-discovery-") as tmp:
        share = Path(tmp) / "share"
        share.mkdir()
        hour_ago = time.time() - 3600
        for n in range(args.files):
            path = share / f"doc-{n:05d}.pdf"
            path.write_bytes(os.urandom(int(args.mb * 2**20)))
            os.utime(path, (hour_ago, hour_ago))
        registry = DocumentRegistry(Path(tmp) / "registry.sqlite")
        paths = sorted(share.iterdir())
        found_files(paths, registry, [share], rehash=True)  # remembered once, as a first refresh does
        best = {True: float("inf"), False: float("inf")}
        for r in range(args.rounds):
            for rehash in ((True, False) if r % 2 == 0 else (False, True)):
                started = time.perf_counter()
                found = found_files(paths, registry, [share], rehash=rehash)
                best[rehash] = min(best[rehash], time.perf_counter() - started)
                assert len(found) == args.files
    total = args.files * args.mb
    print(f"{args.files} files, {total:.0f} MB, best of {args.rounds}:")
    print(f"  every file read (--force): {best[True]:.3f} s ({total / best[True]:.0f} MB/s)")
    print(f"  remembered hashes:         {best[False]:.3f} s ({best[True] / best[False]:.0f}x faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
