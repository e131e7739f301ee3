#!/usr/bin/env python3
"""End-to-end ingestion throughput: this tree against a baseline commit, same pages, same run.

Each run is `rosetta ingest` (the corpus_refresh DAG through dag.test, its own data root,
Airflow DB and embedded Weaviate on free ports) of born-digital PDFs: the sample corpus's
maint-guide excerpts (en, de, es, ja, zh; 40 pages), or with ``--full-guides`` the five
complete guides from their pinned packages (scripts/fetch_doc_packages.py; 333 pages). As
in the issue's measure (a refresh of an existing data root), each run's data root is first
warmed up by ingesting one small other PDF (the Airflow DB, the MLflow store and Weaviate's
files then exist; not timed). With ``--again`` the timed run is a second ingestion of the
same files with ``--force`` (a refresh after an upgrade: every document read and embedded
again, what the embedding and OCR caches serve). With ``--scans`` the files are the sample
corpus's scanned PDFs instead (scans/: vertical Japanese and Chinese, every page OCRed). The
baseline is the commit given by ``--base``, exported
with ``git archive`` (no worktree) and run the same way. Runs alternate (baseline first,
then this tree, repeated) to spread the machine's noise; printed: wall seconds and
pages/s per run, the medians and their ratio, and per task (stage) the median
wall seconds summed over its mapped instances, read from each run's Airflow DB. Times are
printed, never asserted.

    .venv/bin/python benchmarks/bench_ingest.py --base 5c51cc5 --repeats 2 [--full-guides | --scans] [--again]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LANGS = ("en", "de", "es", "ja", "zh")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


WARM_UP = ROOT / "tests" / "fixtures" / "en-born-digital.pdf"
FULL_GUIDES = {"en": "maint-guide", "de": "maint-guide-de", "es": "maint-guide-es", "ja": "maint-guide-ja",
               "zh": "maint-guide-zh-cn"}


def full_guides(target: Path) -> Path:
    """The five complete maint-guide PDFs of the pinned packages, as <target>/<lang>/maint-guide.pdf."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from fetch_doc_packages import PACKAGES, fetch

    roots = fetch(list(FULL_GUIDES.values()))
    for lang, name in FULL_GUIDES.items():
        package = next(p for p in PACKAGES if p.name == name)
        (target / lang).mkdir(parents=True)
        shutil.copy(roots[name] / package.pdfs[0], target / lang / "maint-guide.pdf")
    return target


def sources(corpus: Path, scans: bool) -> list[Path]:
    """The PDFs a run ingests: the maint-guide in each language, or the corpus's scans."""
    return sorted((corpus / "scans").glob("*.pdf")) if scans else [corpus / lang / "maint-guide.pdf" for lang in LANGS]


def pages(files: list[Path]) -> int:
    import pypdfium2

    return sum(len(pypdfium2.PdfDocument(path)) for path in files)


def export(commit: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def copy_sources(files: list[Path], source: Path) -> Path:
    """The files, each in a folder named as the one it came from (en/, de/ ... or scans/)."""
    for path in files:
        (source / path.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, source / path.parent.name / path.name)
    return source


def task_seconds(airflow_db: Path, output: str) -> dict[str, float]:
    """Wall seconds per task id summed over its mapped instances in the run that printed
    ``output``, from its Airflow DB (the same measure for any commit, whatever its batch
    summary records)."""
    run_id = re.search(r"DAG corpus_refresh run (\S+):", output).group(1)  # type: ignore[union-attr]
    with sqlite3.connect(airflow_db) as db:
        rows = db.execute("SELECT task_id, SUM((julianday(end_date) - julianday(start_date)) * 86400) "
                          "FROM task_instance WHERE run_id = ? GROUP BY task_id", (run_id,)).fetchall()
    return {task: round(seconds or 0.0, 2) for task, seconds in rows}


def ingest(tree: Path, files: list[Path], scratch: Path, again: bool = False) -> tuple[float, dict[str, float]]:
    data = scratch / "data"
    source = copy_sources(files, scratch / "source")
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'plugins'}", "ROSETTA_HOME": str(tree),
           "ROSETTA__DATA_ROOT": str(data), "ROSETTA__SOURCE_DIR": str(source),
           "ROSETTA__WEAVIATE__HTTP_PORT": str(free_port()), "ROSETTA__WEAVIATE__GRPC_PORT": str(free_port()),
           "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{scratch / 'airflow.db'}",
           "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(scratch / "airflow-logs"), "MLFLOW_DISABLE_TELEMETRY": "true"}
    (scratch / "warm-up").mkdir()
    warm_up = shutil.copy(WARM_UP, scratch / "warm-up" / WARM_UP.name)
    for paths in ([warm_up], [source], *([["--force", source]] if again else [])):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "pipeline.cli.main", "ingest", *map(str, paths)], cwd=tree,
                              env=env, capture_output=True, text=True, check=False)  # a failure is shown below
        seconds = time.monotonic() - started
        verdict = re.search(r"QA gate: FAILED.*", done.stdout)
        if verdict:  # all the work was done: its time counts, and the verdict is shown
            print(f"  {tree.name}: the QA gate rolled the batch back: {verdict.group(0)}", flush=True)
        elif done.returncode != 0:
            raise SystemExit(f"ingest in {tree} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return seconds, task_seconds(scratch / "airflow.db", done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="5c51cc5", help="baseline commit")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--corpus", type=Path, default=ROOT / "samples" / "corpus")
    files_group = parser.add_mutually_exclusive_group()
    files_group.add_argument("--full-guides", action="store_true", help="the complete guides (333 pages)")
    files_group.add_argument("--scans", action="store_true", help="the corpus's scanned PDFs, every page OCRed")
    parser.add_argument("--again", action="store_true", help="time a second, forced ingestion of the same files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        if args.full_guides:
            args.corpus = full_guides(Path(tmp) / "full-guides")
        files = sources(args.corpus, args.scans)
        total = pages(files)
        trees = {"baseline": export(args.base, Path(tmp) / "baseline"), "this tree": ROOT}
        seconds: dict[str, list[float]] = {name: [] for name in trees}
        tasks: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for repeat in range(args.repeats):
            for name, tree in trees.items():
                scratch = Path(tmp) / f"{name.replace(' ', '-')}-{repeat}"
                s, per_task = ingest(tree, files, scratch, args.again)
                seconds[name].append(s)
                tasks[name].append(per_task)
                print(f"repeat {repeat} {name}: {s:.1f} s, {total / s:.2f} pages/s; task seconds {per_task}", flush=True)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    for name, median in medians.items():
        print(f"{name}: median {median:.1f} s, {total / median:.2f} {'scanned' if args.scans else 'born-digital'} "
              f"pages/s ({total} pages)")
    print(f"ratio this tree / baseline (pages/s): {medians['baseline'] / medians['this tree']:.2f}")
    print("\n| task | baseline s (median) | this tree s (median) | ratio |\n|---|---|---|---|")
    for task in tasks["baseline"][0]:
        base = statistics.median(run.get(task, 0.0) for run in tasks["baseline"])
        this = statistics.median(run.get(task, 0.0) for run in tasks["this tree"])
        print(f"| {task} | {base:.1f} | {this:.1f} | {base / this if this else float('nan'):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
