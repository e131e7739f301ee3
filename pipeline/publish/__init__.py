"""Publishing a batch to Weaviate: the batch steps after the per-document stages.

    load (the staging collection) -> qa (the sampled gate) -> promote (into the live
    collection) or discard; a promoted batch can be rolled back exactly.

Each step's module has ``run(batch_id, upstream, settings) -> dict`` and
``upstream_from_workspace(settings, batch_id)`` (a container rebuilds its input from the batch
workspace). The registry and MLflow bookkeeping around them is pipeline.batch.lifecycle.
"""
