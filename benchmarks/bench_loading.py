"""Load throughput of Rosetta's loader against a plain weaviate-client batch insert of the
same objects, in the same run on the same server, and the QA gate's overhead.

    .venv/bin/python benchmarks/bench_loading.py [--objects 10000] [--repeats 2]

Objects are real chunk texts and properties from the sample corpus (cycled to the wanted
count with distinct uuids and documents) with 512-d unit vectors. Rosetta's loader is
pipeline.stores.vector_store.insert_objects (per-object error checks, bounded retries) into a
collection made by pipeline.stores.vector_store.ensure_collection; the baseline is
``collection.batch.fixed_size`` with the same batch size into a collection with the same
schema. Runs alternate to spread machine noise; the ratio is what to read.
The gate's overhead is pipeline.publish.qa.run_gate on a staged batch of that many chunks,
reported as a fraction of Rosetta's load time, and so are the load step's pairing of translations
(pipeline.publish.load.with_partners) for a new batch of as many chunks against that collection,
and retention's read of every live chunk's document and batch with that collection as the live
one (pipeline.batch.retention.plan, at each batch's finish while an expired batch holds files).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    data_root = Path(tempfile.mkdtemp(prefix="rosetta-bench-"))
    os.environ.update({"ROSETTA__DATA_ROOT": str(data_root), "ROSETTA__WEAVIATE__HTTP_PORT": "8181",
                       "ROSETTA__WEAVIATE__GRPC_PORT": "50181"})
    from pipeline.batch import discovery, runner
    from pipeline.publish import qa
    from pipeline.stages import EMBED, LANGUAGE, STRUCTURE
    from pipeline.stores import vector_store as store
    from pipeline.config import load_settings
    from pipeline.contracts import DocRef
    from pipeline.workspace import Workspace

    settings = load_settings()

    # Real chunks: run the stages on the English and German guides once.
    batch_id = "bench-source"
    docs = [discovery.source_document(ROOT / "samples/corpus" / lang / "maint-guide.pdf", settings, doc_id=f"d-{lang}")
            for lang in ("en", "de")]
    discovery.write_manifest(settings, batch_id, "corpus_refresh", docs, [])
    for doc in docs:
        runner.process_document(DocRef(batch_id=batch_id, doc_id=doc.doc_id), settings)
    from pipeline.publish.load import batch_objects, with_partners

    real = batch_objects(Workspace(settings, batch_id), [d.doc_id for d in docs])
    rng = np.random.default_rng(7)
    source_of: dict[str, str] = {}  # synthetic doc id -> the real document its chunks come from

    def make_objects(tag: str) -> list[tuple[str, dict, list[float]]]:
        objects = []
        for i in range(args.objects):
            _, props, _ = real[i % len(real)]
            doc_id = f"{tag}-{props['doc_id']}-{i // 100}"
            source_of[doc_id] = props["doc_id"]
            props = {**props, "doc_id": doc_id, "chunk_index": i, "batch_id": tag}
            vector = rng.standard_normal(512).astype(np.float32)
            objects.append((store.chunk_uuid(props), props, (vector / np.linalg.norm(vector)).tolist()))
        return objects

    rosetta_rates, plain_rates = [], []
    with store.connect(settings) as client:
        for repeat in range(args.repeats):
            for kind in ("plain", "rosetta") if repeat % 2 == 0 else ("rosetta", "plain"):
                name = f"Bench{kind.title()}{repeat}"
                objects = make_objects(name)
                collection = store.ensure_collection(client, settings, name)
                started = time.perf_counter()
                if kind == "rosetta":
                    store.insert_objects(collection, objects, settings)
                else:
                    with collection.batch.fixed_size(batch_size=settings.weaviate.batch_size) as batch:
                        for uuid, props, vector in objects:
                            batch.add_object(properties=props, vector=vector, uuid=uuid)
                elapsed = time.perf_counter() - started
                count = collection.aggregate.over_all(total_count=True).total_count
                assert count == len(objects), f"{name}: {count} of {len(objects)} objects"
                (rosetta_rates if kind == "rosetta" else plain_rates).append(len(objects) / elapsed)
                print(f"{kind:8s} repeat {repeat}: {len(objects) / elapsed:8.0f} objects/s ({elapsed:.1f} s)")
                if kind == "plain":
                    client.collections.delete(name)

        # QA gate overhead on the last Rosetta collection, as a staged batch.
        gate_batch = f"BenchRosetta{args.repeats - 1}"
        staged = client.collections.get(gate_batch)
        ws = Workspace(settings, "bench-gate")
        staging = store.staging_name(settings, "bench-gate")
        if client.collections.exists(staging):
            client.collections.delete(staging)
        store.ensure_collection(client, settings, staging)
        objects = [(u, {**p, "batch_id": "bench-gate"}, v) for u, p, v in store.iterate_objects(staged)]
        started = time.perf_counter()
        store.insert_objects(client.collections.get(staging), objects, settings)
        load_s = time.perf_counter() - started
        # The gate reads the workspace files of the documents behind sampled chunks.
        source = Workspace(settings, batch_id)
        for doc_id in {p["doc_id"] for _, p, _ in objects}:
            for stage in (LANGUAGE, STRUCTURE, EMBED):
                ws.write_json(ws.path(stage, doc_id), source.read_json(source.path(stage, source_of[doc_id])))
        started = time.perf_counter()
        report = qa.run_gate("bench-gate", sorted({p["doc_id"] for _, p, _ in objects}), settings)
        gate_s = time.perf_counter() - started
        # Pairing a new batch of as many chunks against that collection as the live one.
        batch = make_objects("BenchPairing")
        started = time.perf_counter()
        with_partners(batch, staged, settings)
        pairing_s = time.perf_counter() - started
        # Retention's read at a batch's finish, with that collection as the live one: every
        # live chunk's document and batch (pipeline.batch.retention.plan).
        as_live = settings.model_copy(update={"weaviate": settings.weaviate.model_copy(update={"collection": gate_batch})})
        started = time.perf_counter()
        live = sum(1 for _ in store.live_chunks(as_live, ["doc_id", "batch_id"]))
        retention_s = time.perf_counter() - started
        assert live == args.objects, f"read {live} of {args.objects} live chunks"
        for name in (gate_batch, staging):
            client.collections.delete(name)

    ratio = np.median(rosetta_rates) / np.median(plain_rates)
    print(f"\nRosetta loader: {np.median(rosetta_rates):.0f} objects/s, plain client batch: "
          f"{np.median(plain_rates):.0f} objects/s, ratio {ratio:.2f}")
    print(f"QA gate on {len(objects)} chunks ({report['sample_size']} sampled): {gate_s:.1f} s = "
          f"{gate_s / load_s:.0%} of the load's {load_s:.1f} s")
    print(f"Pairing {len(batch)} chunks of {len({p['doc_id'] for _, p, _ in batch})} documents against "
          f"{len(objects)} live chunks: {pairing_s:.1f} s = {pairing_s / load_s:.0%} of the load's {load_s:.1f} s")
    print(f"Retention's read of {live} live chunks' documents and batches: {retention_s:.1f} s = "
          f"{retention_s / load_s:.0%} of the load's {load_s:.1f} s")


if __name__ == "__main__":
    main()
