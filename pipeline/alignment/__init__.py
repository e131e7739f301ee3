"""Per-language alignment maps W_lang into the reference language's space: versioned anchor
sets, fitting, the promotion gate, re-alignment of live chunks, audit and evaluation.

    fit_candidate -> gate -> promote -> realign_language        (the anchors DAG, the CLI)

* ``maps``: AlignmentMap, the Procrustes fit, the maps in the MLflow model registry
  (``<prefix>-<lang>``, the ``production`` alias; identity when none is promoted).
* ``anchor_sets``: the versioned anchor sets, checked against their manifests, and their
  cached vectors.
* ``fitting``: fit a candidate on the training split, gate it on the held-out split,
  promote it.
* ``realign``: a promoted map applied to the raw vectors of the live chunks, as a batch of
  kind ``realign`` through the one batch lifecycle (pipeline.batch).
* ``evaluation``: audit of versions and live chunks, golden set evaluation, the run report.

Why a map must beat identity before it is used: with a multilingual embedder the raw
vectors are already aligned across languages, and an orthogonal Procrustes map fitted on
32-100 anchor pairs destroys cross-lingual retrieval (the Universal Sentence Encoder,
ja -> en held-out accuracy@1: 0.974 raw, 0.28 after a plain map on 32 anchors). Centring
plus a pull toward identity kept it. So a fitted map is only a candidate; it becomes
production only when it beats both identity and the current production map on its
anchor set's held-out split, and a rejected version stays in the registry with its
figures.
"""
