"""Alignment maps and anchor sets without Weaviate: the Procrustes fit, the retrieval
metrics, anchor set integrity and diff, the trap of docs/decisions.md section 7 on the real
anchors, and `rosetta embed`."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import shutil

import numpy as np
import pytest

from pipeline.alignment import anchor_sets
from pipeline.alignment.evaluation import golden_path
from pipeline.alignment.fitting import choose_alpha, retrieval_metrics
from pipeline.alignment.maps import AlignmentMap, fit_procrustes, load_production_map
from pipeline.cli.anchors import register
from pipeline.embedding.embedders import get_embedder


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_procrustes_recovers_a_rotation_with_offsets():
    rng = np.random.default_rng(0)
    source = unit(rng.normal(size=(400, 16))) + 0.3
    rotation, _ = np.linalg.qr(rng.normal(size=(16, 16)))
    target = (source - source.mean(0)) @ rotation + 1.0
    matrix, source_mean, target_mean = fit_procrustes(source, target, alpha=0.0)
    assert np.allclose(matrix @ matrix.T, np.eye(16), atol=1e-5)
    assert np.allclose(matrix, rotation, atol=1e-4)
    assert np.allclose(source_mean, source.mean(0), atol=1e-6) and np.allclose(target_mean, target.mean(0), atol=1e-6)


def test_a_strong_pull_toward_identity_gives_identity():
    rng = np.random.default_rng(1)
    source, target = rng.normal(size=(50, 8)), rng.normal(size=(50, 8))
    matrix, _, _ = fit_procrustes(source, target, alpha=1e6)
    assert np.allclose(matrix, np.eye(8), atol=1e-4)


def test_map_output_is_unit_length_and_identity_copies():
    rng = np.random.default_rng(2)
    vectors = unit(rng.normal(size=(5, 8))).astype(np.float32)
    matrix, source_mean, target_mean = fit_procrustes(vectors, vectors[::-1].copy(), alpha=0.1)
    fitted = AlignmentMap("de", "1", "v1", matrix, source_mean, target_mean)
    assert np.allclose(np.linalg.norm(fitted.apply(vectors), axis=1), 1.0, atol=1e-5)
    identity = AlignmentMap("de", "identity", None)
    copied = identity.apply(vectors)
    assert np.array_equal(copied, vectors) and copied is not vectors


def test_retrieval_metrics():
    candidates = np.eye(3, dtype=np.float32)
    queries = np.array([[1, 0, 0], [0, 0.4, 0.6], [0, 0, 1]], dtype=np.float32)  # query 1 ranks second
    assert retrieval_metrics(queries, candidates) == {"acc1": round(2 / 3, 4), "mrr": round((1 + 0.5 + 1) / 3, 4)}


def test_anchor_set_v1_is_complete_and_verified(settings):
    anchors = anchor_sets.load_anchor_set(settings, "v1")
    for lang in ("de", "es", "zh", "ja"):
        rows = [r for r in anchors.rows if r["lang"] == lang]
        assert sum(r["kind"] == "glossary" for r in rows) >= 150
        assert sum(r["kind"] == "phrase" for r in rows) >= 1000
        assert len({r["en"] for r in rows}) == len(rows)  # deduplicated
        held = [r for r in rows if r["split"] == "heldout"]
        assert 0.1 < len(held) / len(rows) < 0.3
        for r in rows:  # the fixed, content-based split rule
            expected = int(hashlib.sha256(f"heldout:{r['concept']}".encode()).hexdigest()[:8], 16) % 5 == 0
            assert (r["split"] == "heldout") == expected
    assert all(r["id"] in anchors.manifest["rows"] and anchors.manifest["rows"][r["id"]]["provenance"] for r in anchors.rows)


def write_version(root, name: str, rows: list[dict]) -> None:
    """An anchor set folder whose manifest matches its rows (as scripts/build_anchors.py writes it)."""
    folder = root / name
    folder.mkdir(parents=True)
    rows = sorted(rows, key=lambda r: r["id"])
    (folder / "rows.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    digests = [anchor_sets.row_digest(r) for r in rows]
    manifest = {"version": name, "set_sha256": hashlib.sha256("\n".join(digests).encode()).hexdigest(),
                "rows": {r["id"]: {"sha256": d, "provenance": "test"} for r, d in zip(rows, digests)}}
    (folder / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")


@pytest.fixture
def anchor_root(settings, tmp_path):
    local = settings.model_copy(deep=True)
    local.anchors.root = str(tmp_path / "anchors")
    return local, tmp_path / "anchors"


def test_tampered_rows_are_refused(settings, anchor_root):
    local, root = anchor_root
    shutil.copytree(anchor_sets.anchors_root(settings) / "v1", root / "v1")
    rows = (root / "v1" / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    row = json.loads(rows[10])
    row["text"] += " (edited)"
    rows[10] = json.dumps(row, ensure_ascii=False)
    (root / "v1" / "rows.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(anchor_sets.AnchorSetError, match="1 changed row"):
        anchor_sets.load_anchor_set(local, "v1")


def test_diff_lists_changed_rows(settings, anchor_root, capsys):
    local, root = anchor_root
    rows = anchor_sets.load_anchor_set(settings, "v1").rows[:20]
    write_version(root, "v1", rows)
    changed = [dict(r) for r in rows[1:]]
    changed[0]["text"] = "neu formuliert"
    changed.append({**rows[0], "id": "glossary:new:de", "concept": "glossary:new", "en": "new", "text": "neu"})
    write_version(root, "v2", changed)
    assert anchor_sets.anchor_versions(local) == ["v1", "v2"]
    assert anchor_sets.load_anchor_set(local, "latest").version == "v2"
    diff = anchor_sets.diff_anchor_sets(anchor_sets.load_anchor_set(local, "v1"), anchor_sets.load_anchor_set(local, "v2"))
    assert [r["id"] for r in diff["removed"]] == [rows[0]["id"]]
    assert [r["id"] for r in diff["added"]] == ["glossary:new:de"]
    assert diff["changed"] == [{"id": rows[1]["id"], "lang": rows[1]["lang"],
                                "text": {"old": rows[1]["text"], "new": "neu formuliert"}}]


def test_the_trap_few_anchors_without_regularisation_destroy_retrieval(settings):
    """docs/decisions.md section 7 on the real anchors: plain Procrustes on 32 pairs collapses
    held-out accuracy; the regularised fit on the training split does not."""
    anchors = anchor_sets.load_anchor_set(settings, "v1")
    rows = [r for r in anchors.rows if r["lang"] == "ja"]
    vectors = anchor_sets.anchor_vectors(settings, anchors, "ja", get_embedder(settings.embedding.model))
    train = np.array([r["split"] == "train" for r in rows])
    x, y, held_x, held_y = vectors["text"][train], vectors["en"][train], vectors["text"][~train], vectors["en"][~train]
    identity = retrieval_metrics(held_x, held_y)
    few = AlignmentMap("ja", "c", None, *fit_procrustes(x[:32], y[:32], alpha=0.0))
    assert retrieval_metrics(few.apply(held_x), held_y)["acc1"] < identity["acc1"] / 2
    alpha, scores = choose_alpha("ja", [r["concept"] for r in np.array(rows)[train]], x, y, settings.anchors.alphas)
    assert set(scores) == {str(a) for a in settings.anchors.alphas}
    good = AlignmentMap("ja", "c", None, *fit_procrustes(x, y, alpha))
    assert retrieval_metrics(good.apply(held_x), held_y)["acc1"] >= identity["acc1"]


def run_cli(argv: list[str], stdin: str = "", monkeypatch=None) -> int:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return args.func(args)


def test_embed_command_writes_vectors_in_input_order(settings, tmp_path, monkeypatch):
    texts = ["Datenschutz-Folgenabschätzung", "Recht auf Löschung", "Verantwortlicher"]
    stdin = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts)
    assert run_cli(["embed", "--lang", "de", "--raw", "--out", str(tmp_path / "raw.npy")], stdin, monkeypatch) == 0
    assert run_cli(["embed", "--lang", "de", "--out", str(tmp_path / "aligned.npy")], stdin, monkeypatch) == 0
    raw, aligned = np.load(tmp_path / "raw.npy"), np.load(tmp_path / "aligned.npy")
    embedder = get_embedder(settings.embedding.model)
    expected = np.vstack([embedder.encode([t], query=True) for t in texts])  # short: questions
    assert raw.shape == (3, embedder.dimension) and np.allclose(raw, expected, atol=1e-5)
    assert run_cli(["embed", "--lang", "de", "--raw", "--passages", "--out", str(tmp_path / "stored.npy")], stdin,
                   monkeypatch) == 0
    assert np.allclose(np.load(tmp_path / "stored.npy"), embedder.encode(texts), atol=1e-5)
    assert np.allclose(aligned, load_production_map(settings, "de").apply(raw), atol=1e-6)
    # a set of passages (median 40 words or more) is embedded as the embed stage stores them,
    # unless --queries says otherwise
    body = ("Hat eine Form der Verarbeitung, insbesondere bei Verwendung neuer Technologien, aufgrund der Art, "
            "des Umfangs, der Umstände und der Zwecke der Verarbeitung voraussichtlich ein hohes Risiko für die "
            "Rechte und Freiheiten natürlicher Personen zur Folge, so führt der Verantwortliche vorab eine "
            "Abschätzung der Folgen der vorgesehenen Verarbeitungsvorgänge für den Schutz personenbezogener "
            "Daten durch. Für die Untersuchung mehrerer ähnlicher Verarbeitungsvorgänge mit ähnlich hohen "
            "Risiken kann eine einzige Abschätzung vorgenommen werden.")
    sections = [f"{t}. {body}" for t in texts]
    long_stdin = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in sections)
    assert run_cli(["embed", "--lang", "de", "--raw", "--out", str(tmp_path / "sections.npy")], long_stdin,
                   monkeypatch) == 0
    assert np.allclose(np.load(tmp_path / "sections.npy"), embedder.encode(sections), atol=1e-5)
    assert run_cli(["embed", "--lang", "de", "--raw", "--queries", "--out", str(tmp_path / "asked.npy")], long_stdin,
                   monkeypatch) == 0
    assert np.allclose(np.load(tmp_path / "asked.npy"), embedder.encode(sections, query=True), atol=1e-5)
    assert not np.allclose(embedder.encode(sections, query=True), embedder.encode(sections), atol=1e-3)


def test_eval_command_on_a_small_golden_set(settings, tmp_path, monkeypatch, capsys):
    golden = json.loads(golden_path(settings).read_text(encoding="utf-8"))
    queries = [q for q in golden["queries"] if q["lang"] in ("de", "ja")][:16]
    relevant = {q["relevant"] for q in queries}
    small = {"passages": [p for p in golden["passages"] if p["id"] in relevant] + golden["passages"][:30],
             "queries": queries}
    small["passages"] = list({p["id"]: p for p in small["passages"]}.values())
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(small, ensure_ascii=False), encoding="utf-8")
    code = run_cli(["eval", "--golden", str(path), "--json"], "", monkeypatch)
    result = json.loads(capsys.readouterr().out)
    per_lang = result["embedders"][next(iter(result["embedders"]))]
    assert set(per_lang) == {"de", "ja"}
    for figures in per_lang.values():
        assert figures["queries"] == 8
        assert 0 <= figures["raw"]["hit1"] <= figures["raw"]["hit5"] <= 1
    assert code == (0 if all(f["within_tolerance"] and f["hit5_ok"] for f in per_lang.values()) else 1)
