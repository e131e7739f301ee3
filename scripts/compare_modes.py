"""Run a corpus through corpus_refresh in the local and the docker execution mode and
compare what Weaviate holds afterwards (`make demo-docker`; figures in docs/deploy.md).

Each mode gets a fresh data root (its own registry, MLflow store, Airflow DB and embedded
Weaviate). Chunks are matched on (doc_id, chunk_index) and must have the same properties
except batch_id (each run is its own batch) and vectors equal within --atol; the chunk
uuids, which include the batch id, are not compared. The return values (XComs) of the batch
steps (the stage table's batch steps) must be equal too, once the names each
run gives its batch (run id, data root, staging collection) are replaced by placeholders.

    scripts/compare_modes.py [CORPUS] [--docker-url unix:///path/podman.sock] [--keep DIR]

The stage images must exist for the current pipeline version (`make images`), built from
the same code as the one this runs (a checkout others edit meanwhile gives differences
that are not the mode's), and the Docker API socket must be up (`scripts/podman-setup.sh
start` here).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

import numpy as np

from pipeline.stages import BATCH_STEPS

ROOT = Path(__file__).resolve().parents[1]
IGNORED = {"batch_id"}
BATCH_TASKS = tuple(step.name for step in BATCH_STEPS)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mode_environment(mode: str, corpus: Path, data_root: Path, docker_url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSETTA__")}
    env.update({
        "ROSETTA__EXECUTION__MODE": mode,
        "ROSETTA__DATA_ROOT": str(data_root),
        "ROSETTA__SOURCE_DIR": str(corpus),  # document ids are relative to it
        "ROSETTA__WEAVIATE__HTTP_PORT": str(free_port()),
        "ROSETTA__WEAVIATE__GRPC_PORT": str(free_port()),
        "ROSETTA__AIRFLOW__RETRIES": "0",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{data_root / 'airflow.db'}",
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(data_root / "airflow-logs"),
    })
    if docker_url:
        env["ROSETTA__CONTAINERS__DOCKER_URL"] = docker_url
    return env


def dump(out: Path) -> None:
    """(in a child process with a mode's environment) every live object, keyed by doc and chunk."""
    from pipeline.stores import vector_store
    from pipeline.config import load_settings

    settings = load_settings()
    objects = {}
    with vector_store.connect(settings) as client:
        collection = client.collections.get(settings.weaviate.collection)
        for _, properties, vector in vector_store.iterate_objects(collection):
            objects[f"{properties['doc_id']}#{properties['chunk_index']}"] = {"properties": properties, "vector": vector}
    out.write_text(json.dumps(objects, ensure_ascii=False))


def run_mode(mode: str, corpus: Path, data_root: Path, docker_url: str | None) -> tuple[dict, float]:
    env = mode_environment(mode, corpus, data_root, docker_url)
    started = time.monotonic()
    ingest = subprocess.run([sys.executable, "-m", "pipeline.cli.main", "ingest", str(corpus)], env=env,
                            capture_output=True, text=True)
    elapsed = time.monotonic() - started
    print(f"--- {mode} mode: rosetta ingest {corpus} ({elapsed:.0f} s)")
    print("\n".join(line for line in ingest.stdout.splitlines() if not line.startswith("  ")))
    if ingest.returncode != 0:
        print(ingest.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"{mode} mode ingest failed (exit {ingest.returncode}); task logs under {data_root}/logs")
    out = data_root / "objects.json"
    subprocess.run([sys.executable, __file__, "--dump", str(out)], env=env, check=True)
    return json.loads(out.read_text()), elapsed


def batch_xcoms(data_root: Path) -> dict[str, object]:
    """The batch tasks' return values of the one run in this data root's Airflow DB, with the
    run id, the data root and the staging collection name as placeholders."""
    from pipeline.workspace import safe_name

    with closing(sqlite3.connect(data_root / "airflow.db")) as db:
        rows = db.execute("SELECT task_id, run_id, value FROM xcom WHERE key = 'return_value' AND map_index = -1 "
                          f"AND task_id IN ({', '.join('?' * len(BATCH_TASKS))})", BATCH_TASKS).fetchall()
    texts = {task_id: (run_id, value) for task_id, run_id, value in rows}
    if set(texts) != set(BATCH_TASKS):
        raise SystemExit(f"{data_root}: return values of {sorted(set(BATCH_TASKS) - set(texts))} are missing")
    staging = json.loads(texts["load"][1])["staging_collection"]
    values = {}
    for task_id, (run_id, value) in texts.items():
        for name, placeholder in ((str(data_root), "<data_root>"), (safe_name(run_id), "<batch>"), (run_id, "<batch>"),
                                  (staging, "<staging>")):
            value = value.replace(name, placeholder)
        values[task_id] = json.loads(value)
    return values


def compare(local: dict, docker: dict, atol: float) -> list[str]:
    problems = []
    for key in sorted(set(local) ^ set(docker)):
        problems.append(f"{key}: only in {'local' if key in local else 'docker'} mode")
    max_diff = 0.0
    for key in sorted(set(local) & set(docker)):
        a, b = local[key], docker[key]
        for name in sorted((set(a["properties"]) | set(b["properties"])) - IGNORED):
            if a["properties"].get(name) != b["properties"].get(name):
                problems.append(f"{key}: {name} differs: {a['properties'].get(name)!r:.80} != "
                                f"{b['properties'].get(name)!r:.80}")
        diff = float(np.max(np.abs(np.asarray(a["vector"]) - np.asarray(b["vector"]))))
        max_diff = max(max_diff, diff)
        if diff > atol:
            problems.append(f"{key}: vectors differ by {diff:.2e}")
    print(f"max |vector difference| over {len(set(local) & set(docker))} matched chunk(s): {max_diff:.3e}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", default=str(ROOT / "samples" / "corpus"))
    parser.add_argument("--docker-url", help="the Docker API socket (default: containers.docker_url)")
    parser.add_argument("--atol", type=float, default=1e-6, help="largest vector difference accepted")
    parser.add_argument("--keep", help="keep both data roots under this folder (default: a temporary one)")
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dump:
        dump(Path(args.dump))
        return 0

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="rosetta-modes-"))
    results = {}
    for mode in ("local", "docker"):
        shutil.rmtree(work / mode, ignore_errors=True)
        results[mode] = run_mode(mode, Path(args.corpus).resolve(), work / mode, args.docker_url)
    (local, local_s), (docker, docker_s) = results["local"], results["docker"]
    by_lang = {}
    for obj in docker.values():
        by_lang[obj["properties"]["lang"]] = by_lang.get(obj["properties"]["lang"], 0) + 1
    print(f"\nlocal: {len(local)} object(s) in {local_s:.0f} s; docker: {len(docker)} object(s) in {docker_s:.0f} s; "
          f"per language: {dict(sorted(by_lang.items()))}")
    problems = compare(local, docker, args.atol)
    xcoms = {mode: batch_xcoms(work / mode) for mode in ("local", "docker")}
    differing = [task_id for task_id in BATCH_TASKS if xcoms["local"][task_id] != xcoms["docker"][task_id]]
    print(f"return values of {', '.join(BATCH_TASKS)} (run names as placeholders): "
          f"{'different for ' + ', '.join(differing) if differing else 'equal'}")
    problems += [f"the return value of {task_id} differs: {json.dumps(xcoms['local'][task_id]):.300} != "
                 f"{json.dumps(xcoms['docker'][task_id]):.300}" for task_id in differing]
    for problem in problems[:50]:
        print("MISMATCH", problem)
    if not args.keep:
        shutil.rmtree(work)
    if problems or not local:
        print(f"FAILED: {len(problems)} mismatch(es)" if problems else "FAILED: nothing was loaded")
        return 1
    print(f"SAME: {len(docker)} Weaviate object(s), properties equal (all but batch_id), vectors within {args.atol}; "
          "batch tasks' return values equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
