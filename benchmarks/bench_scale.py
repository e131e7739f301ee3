#!/usr/bin/env python3
"""The scale run: `rosetta ingest` over the 10,000-page corpus in batches, into one data root.

The corpus is scripts/scale_corpus.json (fetch it first); its files are taken in the order
of the sha256 of their paths, so every batch mixes manuals, languages and sizes, until
``--pages`` pages, and cut into batches of about ``--batch-pages`` pages. Each batch is one `rosetta
ingest FILE...` (the corpus_refresh DAG through dag.test, as a user runs it) into the same
data root, Airflow DB and embedded Weaviate data, so the registry and the live collection
grow as they would. Per batch it prints and appends to ``--out`` (JSON lines):

- pages, documents loaded and quarantined (with reasons), chunks, wall seconds, pages/s;
- time and peak resident memory per stage (the batch summary; documents summed);
- peak resident memory of each process kind, sampled every 0.5 s: the CLI, the DAG runner,
  the stage worker and the Weaviate server, and the server's memory at the end;
- the batch workspace's size, the data root's parts (Weaviate, registry, MLflow), and the
  run's XComs in the Airflow DB (count, total and largest value, per task).

``--resume`` skips the batches already in ``--out``; ``--batches 5,8`` runs only those batches
of the same plan (e.g. again, after a fix, the ones the QA gate rolled back). Times are printed,
never asserted.

    .venv/bin/python scripts/fetch_robustness_corpus.py --manifest scripts/scale_corpus.json --target samples/scale
    nice -n 10 .venv/bin/python benchmarks/bench_scale.py --pages 1000 --work /tmp/scale --out /tmp/scale.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from bench_ingest import free_port  # noqa: E402
from fetch_robustness_corpus import local_name  # noqa: E402

from pipeline.batch.isolation import rss_mib  # noqa: E402

RUN_ID = re.compile(r"DAG corpus_refresh run (\S+): (\w+)")


def corpus_files(manifest: Path, target: Path, pages: int) -> list[tuple[Path, int]]:
    """(file, pages) in the order of the sha256 of their paths (a fixed shuffle: any prefix
    mixes packages, languages and sizes) until ``pages`` pages."""
    packages = json.loads(manifest.read_text())["packages"]
    files = sorted(((pdf["path"], local_name(p["package"], pdf["path"], target), pdf["pages"])
                    for p in packages for pdf in p["pdfs"]), key=lambda f: hashlib.sha256(f[0].encode()).hexdigest())
    chosen, total = [], 0
    for _, path, count in files:
        if total >= pages:
            break
        chosen.append((path, count))
        total += count
    return chosen


def batches(files: list[tuple[Path, int]], batch_pages: int) -> list[list[tuple[Path, int]]]:
    out: list[list[tuple[Path, int]]] = [[]]
    for item in files:
        if out[-1] and sum(p for _, p in out[-1]) + item[1] > batch_pages:
            out.append([])
        out[-1].append(item)
    return out


def process_kind(pid: int) -> str | None:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    if "weaviate" in cmdline.split(" ")[0]:
        return "weaviate"
    if "multiprocessing" in cmdline:
        return "stage worker"
    if "rosetta_airflow.runner" in cmdline:
        return "runner"
    if "pipeline.cli.main" in cmdline:
        return "cli"
    return None


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        found += map(int, children)
        todo += map(int, children)
    return found


class MemoryWatch(threading.Thread):
    """Peak RSS per process kind in a process tree, and the Weaviate server's last sample."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peaks, self.weaviate_last = pid, {}, 0.0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            sums: dict[str, float] = {}
            for pid in [self.pid, *descendants(self.pid)]:
                kind = process_kind(pid)
                if kind:
                    sums[kind] = sums.get(kind, 0.0) + rss_mib(pid)
            for kind, value in sums.items():
                self.peaks[kind] = max(self.peaks.get(kind, 0.0), round(value))
            if sums.get("weaviate"):
                self.weaviate_last = round(sums["weaviate"])


def size_mib(path: Path) -> float:
    if path.is_file():
        return round(path.stat().st_size / 2**20, 1)
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1) if path.exists() else 0.0


def xcom_sizes(airflow_db: Path, run_id: str) -> dict[str, dict[str, int]]:
    with sqlite3.connect(airflow_db) as db:
        rows = db.execute("SELECT task_id, COUNT(*), SUM(LENGTH(value)), MAX(LENGTH(value)) FROM xcom "
                          "WHERE run_id = ? GROUP BY task_id", (run_id,)).fetchall()
    return {task: {"count": n, "bytes": total or 0, "largest": largest or 0} for task, n, total, largest in rows}


def run_batch(files: list[Path], work: Path, env: dict[str, str]) -> dict:
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "pipeline.cli.main", "ingest", *map(str, files)], cwd=ROOT,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watch = MemoryWatch(child.pid)
    watch.start()
    output = child.communicate()[0]
    watch.done.set()
    watch.join()
    seconds = time.monotonic() - started
    found = RUN_ID.search(output)
    if found is None:
        raise SystemExit(f"ingest failed (exit status {child.returncode}):\n{output[-4000:]}")
    run_id, state = found.groups()
    data = work / "data"
    row = sqlite3.connect(data / "registry.sqlite").execute(
        "SELECT summary FROM batches WHERE batch_id = ?", (run_id,)).fetchone()
    summary = json.loads(row[0]) if row and row[0] else {}
    reasons: dict[str, int] = {}
    for doc in summary.get("documents", []):
        if doc["status"] == "quarantined":
            reasons[doc["reason"]] = reasons.get(doc["reason"], 0) + 1
    batch_dir = next((p for p in (data / "batches").iterdir() if p.name == re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)),
                     None)
    return {"run_id": run_id, "state": state, "seconds": round(seconds, 1), "documents": len(files),
            "loaded": summary.get("loaded"), "quarantined": reasons, "chunks": summary.get("chunks"),
            "qa_passed": summary.get("qa_passed"), "stages": summary.get("stages", {}),
            "process_peak_rss_mib": watch.peaks, "weaviate_rss_mib_at_end": watch.weaviate_last,
            "workspace_mib": size_mib(batch_dir) if batch_dir else 0.0,
            "data_root_mib": {"weaviate": size_mib(data / "weaviate"), "registry": size_mib(data / "registry.sqlite"),
                              "mlflow": size_mib(data / "mlflow.db"), "batches": size_mib(data / "batches")},
            "xcom": xcom_sizes(work / "airflow.db", run_id), "airflow_db_mib": size_mib(work / "airflow.db")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", type=Path, default=ROOT / "scripts" / "scale_corpus.json")
    parser.add_argument("--corpus", type=Path, default=ROOT / "samples" / "scale")
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--batch-pages", type=int, default=1000)
    parser.add_argument("--work", type=Path, required=True, help="data root, Airflow DB and logs of the run")
    parser.add_argument("--out", type=Path, required=True, help="one JSON line per batch")
    parser.add_argument("--resume", action="store_true", help="skip the batches already in --out")
    parser.add_argument("--batches", type=lambda v: {int(n) for n in v.split(",")},
                        help="run only these batch numbers of the plan, e.g. 5,8")
    args = parser.parse_args()
    plan = batches(corpus_files(args.manifest, args.corpus.resolve(), args.pages), args.batch_pages)
    missing = [str(f) for b in plan for f, _ in b if not f.exists()]
    if missing:
        raise SystemExit(f"{len(missing)} corpus file(s) missing, e.g. {missing[0]}: run "
                         "scripts/fetch_robustness_corpus.py --manifest scripts/scale_corpus.json --target samples/scale")
    done = {json.loads(line)["batch"] for line in args.out.read_text().splitlines() if line.strip()} \
        if args.resume and args.out.exists() else set()
    if not args.resume:
        args.out.write_text("")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'plugins'}", "ROSETTA_HOME": str(ROOT),
           "ROSETTA__DATA_ROOT": str(work / "data"), "ROSETTA__SOURCE_DIR": str(args.corpus.resolve()),
           "ROSETTA__WEAVIATE__HTTP_PORT": str(free_port()), "ROSETTA__WEAVIATE__GRPC_PORT": str(free_port()),
           "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{work / 'airflow.db'}",
           "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(work / "airflow-logs"), "MLFLOW_DISABLE_TELEMETRY": "true"}
    total_pages = sum(p for b in plan for _, p in b)
    print(f"{total_pages} pages in {sum(map(len, plan))} files, {len(plan)} batch(es); work folder {work}", flush=True)
    for number, batch in enumerate(plan):
        if number in done or (args.batches is not None and number not in args.batches):
            continue
        pages = sum(p for _, p in batch)
        result = {"batch": number, "pages": pages, **run_batch([f for f, _ in batch], work, env)}
        result["pages_per_s"] = round(pages / result["seconds"], 3)
        with args.out.open("a") as out:
            out.write(json.dumps(result) + "\n")
        stages = ", ".join(f"{k} {v['seconds']:.0f} s/{v['peak_rss_mib']:.0f} MiB" for k, v in result["stages"].items())
        print(f"batch {number}: {pages} pages, {result['documents']} files, {result['state']}, {result['seconds']:.0f} s "
              f"({result['pages_per_s']:.2f} pages/s), {result['chunks']} chunks, loaded {result['loaded']}, "
              f"quarantined {result['quarantined']}; stages: {stages}; peak RSS {result['process_peak_rss_mib']}; "
              f"Weaviate at end {result['weaviate_rss_mib_at_end']} MiB; workspace {result['workspace_mib']} MiB; "
              f"data root {result['data_root_mib']}; XCom {result['xcom']}", flush=True)
    summarize(args.out)
    return 0


def summarize(out: Path) -> None:
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    pages, seconds = sum(r["pages"] for r in rows), sum(r["seconds"] for r in rows)
    print(f"\n{len(rows)} batches, {pages} pages, {seconds:.0f} s: {pages / seconds:.2f} pages/s end to end; "
          f"{sum(r['chunks'] or 0 for r in rows)} chunks")
    stages: dict[str, dict[str, float]] = {}
    for r in rows:
        for name, cost in r["stages"].items():
            entry = stages.setdefault(name, {"seconds": 0.0, "peak_rss_mib": 0.0})
            entry["seconds"] += cost["seconds"]
            entry["peak_rss_mib"] = max(entry["peak_rss_mib"], cost["peak_rss_mib"])
    print("| stage | seconds | share | peak RSS MiB |\n|---|---|---|---|")
    busy = sum(s["seconds"] for s in stages.values()) or 1.0
    for name, s in stages.items():
        print(f"| {name} | {s['seconds']:.0f} | {s['seconds'] / busy:.0%} | {s['peak_rss_mib']:.0f} |")
    last = rows[-1]
    peaks = {k: max(r["process_peak_rss_mib"].get(k, 0) for r in rows) for k in last["process_peak_rss_mib"]}
    print(f"peak RSS per process: {peaks}; Weaviate after the last batch {last['weaviate_rss_mib_at_end']} MiB; "
          f"data root {last['data_root_mib']} MiB; largest XCom {max(x['largest'] for r in rows for x in r['xcom'].values())} "
          f"bytes; Airflow DB {last['airflow_db_mib']} MiB")


if __name__ == "__main__":
    sys.exit(main())
