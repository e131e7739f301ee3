"""Stage images and the docker execution mode.

The slow test builds the base image and the structure stage's image with podman (each
only when missing or changed: images and layers are cached under .containers/), starts a
private podman API socket and runs reprocess_document on a real document with the
structure stage in its container (DockerOperator); the file the container wrote must be
byte-for-byte what the in-process stage writes from the same input, and what the batch steps'
container entrypoints rebuild from the workspace must be the XComs the in-process load and QA
gate passed on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.stages import CONTAINER_STAGES

ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "scripts" / "podman-setup.sh"
OCR_PACKAGES = ["rapidocr", "onnxruntime", "opencv-python-headless", "pdfplumber", "pypdfium2"]
STAGE = "structure"  # the lightest image: pydantic, PyYAML, numpy


def docker_requirements():
    """docker/requirements.py, the per-image requirements, as a module."""
    sys.path.insert(0, str(ROOT / "docker"))
    try:
        import requirements
    finally:
        sys.path.pop(0)
    return requirements


def test_stage_requirements_are_derived_from_the_pins():
    check = subprocess.run([sys.executable, str(ROOT / "docker" / "requirements.py"), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout


def test_ocr_dependencies_are_only_in_the_extract_image(settings):
    stage_requirements = docker_requirements()

    assert {p.stem for p in (ROOT / "docker" / "requirements").glob("*.txt")} == {s.image for s in CONTAINER_STAGES}
    for path in (ROOT / "docker" / "requirements").glob("*.txt"):
        names = {stage_requirements.canonical(line.split("==")[0]) for line in path.read_text().splitlines()
                 if line and not line.startswith("#")}
        ocr = names & set(OCR_PACKAGES)
        assert ocr == (set(OCR_PACKAGES) if path.stem == "extract" else set()), path.name
    assert [p.name for p in (ROOT / "docker" / "requirements").glob("*.apt")] == ["extract.apt"]


def image_site_packages(image: str, target: Path) -> Path:
    """``target`` filled with links to exactly the installed files of the image's requirements
    and their dependencies (``Requires-Dist`` without extras, as pip installs them), as a
    site-packages that holds nothing else."""
    from importlib import metadata

    from packaging.requirements import Requirement

    from pipeline.stages import images

    stage_requirements = docker_requirements()
    wanted, todo = set(), [stage_requirements.canonical(n) for n in images()[image]["requirements"]]
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        wanted.add(name)
        for line in metadata.requires(name) or []:
            needed = Requirement(line)
            if needed.marker is None or needed.marker.evaluate({"extra": ""}):
                todo.append(stage_requirements.canonical(needed.name))
    for name in wanted:
        installed = metadata.distribution(name)
        for file in installed.files or []:
            source = Path(installed.locate_file(file)).resolve()
            link = target / file
            if source.is_file() and not str(file).startswith(".."):  # scripts land outside site-packages
                link.parent.mkdir(parents=True, exist_ok=True)
                if not link.exists():
                    link.symlink_to(source)
    return target


@pytest.mark.parametrize("image", sorted({s.image for s in CONTAINER_STAGES}))
def test_each_image_imports_its_stage_modules_from_its_requirements_alone(image, tmp_path):
    """What each image installs is enough for its stages' modules: imported by an interpreter
    that sees the repository and only the image's distributions (no site-packages of its own),
    a module-level import of a package the image lacks fails here as it would in the container
    (the load step's fusion import once needed threadpoolctl, which the batch image lacked)."""
    site = image_site_packages(image, tmp_path / "site-packages")
    modules = [s.module for s in CONTAINER_STAGES if s.image == image]
    imported = subprocess.run([sys.executable, "-S", "-c", "".join(f"import {m}\n" for m in modules)],
                              capture_output=True, text=True, cwd=ROOT,
                              env={"PATH": os.environ["PATH"], "PYTHONPATH": f"{ROOT}:{site}", "HOME": str(tmp_path)})
    assert imported.returncode == 0, f"{image}: {imported.stderr[-1500:]}"


@pytest.fixture(scope="module")
def podman_socket(tmp_path_factory):
    """The structure image built (if missing) and a private podman API socket for this module.
    One pipeline version for the module, as `make demo-docker` pins it: the image tag is that
    version, and a commit made while the tests run must not send the DAG to another tag."""
    from pipeline import pipeline_version

    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (scripts/install.sh installs it)")
    pinned = pytest.MonkeyPatch()
    pinned.setenv("ROSETTA_PIPELINE_VERSION", pipeline_version())
    build = subprocess.run([str(SETUP), "images", STAGE], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    socket = tmp_path_factory.mktemp("podman") / "podman.sock"
    env = {**os.environ, "PODMAN_SOCKET": str(socket)}
    started = subprocess.run([str(SETUP), "start"], capture_output=True, text=True, env=env)
    assert started.returncode == 0, started.stdout + started.stderr
    yield socket
    subprocess.run([str(SETUP), "stop"], capture_output=True, text=True, env=env, check=True)
    pinned.undo()


@pytest.fixture
def docker_mode(settings, podman_socket, tmp_path, monkeypatch):
    """Settings of a docker-mode deployment running the structure stage in its container, with
    its own data root and embedded Weaviate (the session's stays untouched)."""
    from conftest import free_port
    from pipeline.config import get_settings

    for key, value in {
        "ROSETTA__EXECUTION__MODE": "docker",
        "ROSETTA__CONTAINERS__STAGES": f"[{STAGE}]",
        "ROSETTA__CONTAINERS__DOCKER_URL": f"unix://{podman_socket}",
        "ROSETTA__DATA_ROOT": str(tmp_path / "data"),
        "ROSETTA__SOURCE_DIR": str(tmp_path / "source"),
        "ROSETTA__WEAVIATE__HTTP_PORT": str(free_port()),
        "ROSETTA__WEAVIATE__GRPC_PORT": str(free_port()),
    }.items():
        monkeypatch.setenv(key, value)
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


@pytest.mark.slow
def test_structure_stage_in_its_container_equals_local(docker_mode, sample_corpus):
    from airflow.dag_processing.dagbag import DagBag

    from pipeline.batch.runner import run_stage
    from pipeline.contracts import DocRef
    from pipeline.stages import stage
    from pipeline.stores.document_registry import DocumentRegistry
    from pipeline.workspace import Workspace
    from rosetta_airflow.runner import prepare_airflow, run_dag

    settings = docker_mode
    document = settings.source_dir / "en" / "maint-guide.pdf"
    document.parent.mkdir(parents=True)
    shutil.copy(sample_corpus / "en" / "maint-guide.pdf", document)

    prepare_airflow()
    dag = DagBag(dag_folder=str(ROOT / "dags")).get_dag("reprocess_document")
    assert dag.get_task(STAGE).operator_class.__name__ == "StageDockerOperator"
    assert dag.get_task("chunk").operator_class.__name__ != "StageDockerOperator"  # the rest in-process

    run_id, state = run_dag("reprocess_document", {"document": str(document)}, settings)
    assert state == "success"
    [doc] = DocumentRegistry(settings.document_registry_path).batch(run_id).summary["documents"]
    assert doc["status"] == "loaded" and doc["chunks"] > 0

    ws = Workspace(settings, run_id)
    output = ws.path(STAGE, doc["doc_id"])
    from_container = output.read_bytes()
    local = run_stage(stage(STAGE), DocRef(batch_id=run_id, doc_id=doc["doc_id"]), settings)
    assert local.status == "ok" and Path(local.output) == output
    assert output.read_bytes() == from_container

    # `rosetta stage load|qa|promote --batch B` (a container) rebuilds its input from the workspace:
    # the same dicts as the in-process tasks' XComs, so downstream tasks see no difference.
    from pipeline.publish import load, promote, qa

    xcoms = without_timings(return_values("reprocess_document", run_id))
    assert xcoms["load"]["objects"] == doc["chunks"]
    assert without_timings(load.upstream_from_workspace(settings, run_id)) == xcoms["load"]["results"]
    assert without_timings(qa.upstream_from_workspace(settings, run_id)) == xcoms["load"]
    assert without_timings(promote.upstream_from_workspace(settings, run_id)) == xcoms["qa"]


def without_timings(value):
    """The value with the seconds and memory each step measured left out: they describe the run
    that produced the XComs, and a container's input rebuilt from the workspace cannot carry them
    (the batch summary then lacks them; every other field must be equal)."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in ("timings", "step_timings")}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def return_values(dag_id: str, run_id: str) -> dict[str, object]:
    """The run's unmapped tasks' return values, by task id, from Airflow's metadata DB."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.scalars(select(XComModel).where(XComModel.dag_id == dag_id, XComModel.run_id == run_id,
                                                       XComModel.key == "return_value", XComModel.map_index == -1))
        return {row.task_id: XComModel.deserialize_value(row) for row in rows}
