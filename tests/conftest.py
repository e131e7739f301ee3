"""Shared fixtures: an isolated Rosetta environment (data root, Airflow DB, Weaviate ports)
per test session, and the real embedded Weaviate server for tests that load.

Nothing here fakes Weaviate, Airflow or MLflow: tests that claim to load use the
server built by `make install`.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SAMPLES = ROOT / "samples"
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "plugins"))  # rosetta_airflow, as Airflow puts its plugins folder on sys.path


# A test that asks for one of these needs the real Weaviate, Airflow or the sample corpus:
# it is marked ``integration`` and `make test-fast` leaves it out.
INTEGRATION_FIXTURES = {"weaviate_server", "sample_corpus", "source_dir", "dagbag", "docker_mode", "kube_settings"}


def pytest_collection_modifyitems(config, items):
    # The scale tests (a Weaviate cluster, Celery workers) take minutes each: `make test-scale`
    # runs them (-m scale); `make test` leaves them out.
    run_scale = "scale" in (config.getoption("-m") or "")
    for item in items:
        if INTEGRATION_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.integration)
        if item.get_closest_marker("scale") and not run_scale:
            item.add_marker(pytest.mark.skip(reason="a scale test: `make test-scale` runs it"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def environment(overrides: dict[str, str]) -> Iterator[None]:
    """Set environment variables (and re-read Rosetta's settings) for the duration."""
    from pipeline.config import get_settings

    saved = {k: os.environ.get(k) for k in overrides}
    os.environ.update(overrides)
    get_settings.cache_clear()
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        get_settings.cache_clear()


@pytest.fixture(scope="session")
def rosetta_env(tmp_path_factory):
    """Point Rosetta and Airflow at a fresh temporary data root with free Weaviate ports."""
    from pipeline.config import get_settings

    data_root = tmp_path_factory.mktemp("rosetta-data")
    overrides = {
        "ROSETTA__DATA_ROOT": str(data_root),
        "ROSETTA__SOURCE_DIR": str(data_root / "source"),
        # one secrets folder for the session: the shared Weaviate server keeps the key it started with
        "ROSETTA__SECRETS_DIR": str(data_root / "secrets"),
        "ROSETTA__WEAVIATE__HTTP_PORT": str(free_port()),
        "ROSETTA__WEAVIATE__GRPC_PORT": str(free_port()),
        "ROSETTA__AIRFLOW__RETRIES": "0",
        "AIRFLOW_HOME": str(ROOT),
        "AIRFLOW_CONFIG": str(ROOT / "airflow.cfg"),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{data_root / 'airflow.db'}",
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(data_root / "airflow-logs"),
        "MLFLOW_DISABLE_TELEMETRY": "true",
    }
    with environment(overrides):
        yield get_settings()


@pytest.fixture(scope="session")
def settings(rosetta_env):
    return rosetta_env


@pytest.fixture(scope="module", autouse=True)
def isolated_module(request, settings, tmp_path_factory):
    """Each test module gets its own data root (workspace, registry, MLflow store) and its
    own live Weaviate collection on the shared server, so one module's batches, promoted
    alignment maps or rollbacks never show up in another's assertions."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    root = tmp_path_factory.mktemp(f"data-{name}")
    collection = "Rosetta" + "".join(part.title() for part in name.split("_"))
    overrides = {"ROSETTA__DATA_ROOT": str(root), "ROSETTA__SOURCE_DIR": str(root / "source"),
                 "ROSETTA__WEAVIATE__COLLECTION": collection}
    saved = (settings.data_root, settings.source_dir, settings.weaviate.collection)
    settings.data_root, settings.source_dir, settings.weaviate.collection = root, root / "source", collection
    with environment(overrides):
        yield
    settings.data_root, settings.source_dir, settings.weaviate.collection = saved


@pytest.fixture(scope="session")
def weaviate_server(settings):
    """The real Weaviate server (embedded) for the whole session."""
    from pipeline.stores import vector_store
    from pipeline.stores.embedded_server import embedded_binary_path

    if not settings.weaviate.url and not embedded_binary_path(settings).exists():
        pytest.fail(f"Weaviate binary {embedded_binary_path(settings)} missing: run `make install`")
    with vector_store.connect(settings) as client:
        client.rosetta_files = settings.weaviate_data_path  # the embedded server's files: the first user's data root
        yield client


@pytest.fixture(scope="session")
def sample_corpus() -> Path:
    """The fetched sample corpus (fetched here if missing, with its sha256 checks)."""
    corpus = SAMPLES / "corpus"
    if not (corpus / ".fetched.json").exists():
        import subprocess

        subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch_sample_corpus.py")], check=True)
    return corpus


def sample_guides_in(source: Path, sample_corpus: Path, langs) -> Path:
    """An empty source folder holding the sample corpus's maint-guide in each of ``langs``."""
    shutil.rmtree(source, ignore_errors=True)
    for lang in langs:
        (source / lang).mkdir(parents=True)
        shutil.copy(sample_corpus / lang / "maint-guide.pdf", source / lang / "maint-guide.pdf")
    return source


@pytest.fixture
def source_dir(settings) -> Path:
    """The (empty) source folder corpus_refresh scans in tests."""
    path = settings.source_dir
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def text_pdf(text: str, path: Path, lines_per_page: int = 55, family: str | list[str] = "DejaVu Sans",
             metadata: dict | None = None) -> Path:
    """A born-digital PDF (real text layer, embedded TrueType font) of ``text``, one line
    per text line, wrapped at 95 characters: for documents only available as text.
    ``metadata``: its information dictionary, as matplotlib takes it (a datetime per date)."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["pdf.fonttype"] = 42  # TrueType: a text layer PDF readers can extract
    from matplotlib import pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    lines = [w for line in text.splitlines() for w in (textwrap.wrap(line, 95) or [""])]
    with PdfPages(path, metadata=metadata) as pdf:
        for start in range(0, len(lines), lines_per_page):
            figure = plt.figure(figsize=(8.27, 11.69))
            for row, line in enumerate(lines[start:start + lines_per_page]):
                figure.text(0.08, 0.95 - row * 0.0165, line, fontsize=9, family=family)
            pdf.savefig(figure)
            plt.close(figure)
    return path
