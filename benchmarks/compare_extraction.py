#!/usr/bin/env python3
"""What an extraction change changes: every PDF of the folders through the extract stage
(``extract_file``), its text written as JSON lines, and with ``--compare`` a comparison of two
such runs (two checkouts of the code, on the same files).

Per run: each file's outcome (or quarantine reason), pages OCRed, seconds and text. The
comparison prints the files whose text or outcome changed, with the words (counted per
word) each lost and gained, and totals: files changed, files whose words changed, control
characters, table cell separators, characters, and the document time of both runs (read the
ratio: run both on the same quiet machine, one after the other).

    git worktree add /tmp/before <rev>
    PYTHONPATH=/tmp/before ROSETTA_HOME=$PWD .venv/bin/python benchmarks/compare_extraction.py \
        samples/robustness --out /tmp/before.jsonl                  # the code of <rev>
    .venv/bin/python benchmarks/compare_extraction.py samples/robustness --out /tmp/after.jsonl
    .venv/bin/python benchmarks/compare_extraction.py --compare /tmp/before.jsonl /tmp/after.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import time
from collections import Counter
from pathlib import Path

WORD = re.compile(r"\w+")
CONTROL = re.compile(r"[\x01-\x08\x0b\x0c\x0e-\x1f]")


def run(folders: list[Path], out: Path) -> None:
    logging.disable(logging.WARNING)
    from pipeline.config import load_settings
    from pipeline.contracts import DocumentError
    from pipeline.stages.extract import extract_file

    settings = load_settings()
    files = sorted(p.resolve() for folder in folders for p in folder.rglob("*") if p.suffix.lower() == ".pdf")
    with out.open("w", encoding="utf-8") as sink:
        for number, path in enumerate(files, start=1):
            started = time.perf_counter()
            try:
                doc = extract_file(path, settings)
                row = {"text": "\n\n".join(p.text for p in doc.pages), "reason": None,
                       "ocr_pages": sum(p.method == "ocr" for p in doc.pages)}
            except DocumentError as exc:
                row = {"text": "", "reason": exc.reason, "ocr_pages": 0}
            row = {"file": str(path), "seconds": round(time.perf_counter() - started, 3), **row}
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            print(f"[{number}/{len(files)}] {path.name}: {row['reason'] or 'read'} ({row['seconds']:.1f} s)", flush=True)


def compare(before_path: Path, after_path: Path) -> None:
    def load(path: Path) -> dict[str, dict]:
        return {row["file"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}

    before, after = load(before_path), load(after_path)
    common = sorted(before.keys() & after.keys())
    changed = worded = 0
    totals = Counter()
    for name in common:
        old, new = before[name], after[name]
        for side, row in (("before", old), ("after", new)):
            totals[f"controls {side}"] += len(CONTROL.findall(row["text"]))
            totals[f"separators {side}"] += row["text"].count(" | ")
            totals[f"characters {side}"] += len(row["text"])
            totals[f"seconds {side}"] += row["seconds"]
        if (old["text"], old["reason"]) == (new["text"], new["reason"]):
            continue
        changed += 1
        lost = Counter(WORD.findall(old["text"])) - Counter(WORD.findall(new["text"]))
        gained = Counter(WORD.findall(new["text"])) - Counter(WORD.findall(old["text"]))
        worded += bool(lost or gained)
        print(f"{Path(name).name}: {old['reason'] or 'read'} -> {new['reason'] or 'read'}, OCR pages "
              f"{old['ocr_pages']} -> {new['ocr_pages']}; lost {sum(lost.values())} words "
              f"{dict(lost.most_common(6))}, gained {sum(gained.values())} {dict(gained.most_common(6))}")
    print(f"\n{len(common)} files in both runs: {changed} changed, {worded} of them in their words")
    for what in ("controls", "separators", "characters", "seconds"):
        print(f"{what}: {totals[f'{what} before']:,.0f} -> {totals[f'{what} after']:,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
    elif args.folders and args.out:
        run(args.folders, args.out)
    else:
        parser.error("give folders and --out, or --compare BEFORE AFTER")


if __name__ == "__main__":
    main()
