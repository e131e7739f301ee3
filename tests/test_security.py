"""Nothing open that should be closed (docs/deploy.md, "Security"): the embedded Weaviate
refuses requests without its key on every port it cannot keep on loopback, DAG params cannot
name files outside the source roots, generated secrets are private and never leak."""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import psutil
import pytest
import requests

from pipeline.batch import discovery
from pipeline.stores import embedded_server, secrets, vector_store

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
PDF = FIXTURES / "en-born-digital.pdf"
UNAUTHORIZED = (401, 403)


# --- probes --------------------------------------------------------------------------------
def grpc_error(port: int, method: str, metadata: list[tuple[str, str]] | None) -> str:
    """The error a unary gRPC call with an empty request gets ("" if it succeeds)."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(method, request_serializer=lambda b: b, response_deserializer=lambda b: b)
        try:
            call(b"", metadata=metadata, timeout=10)
            return ""
        except grpc.RpcError as error:
            return f"{error.code().name}: {error.details()}"


def refused_by_grpc(error: str) -> bool:
    return error.startswith("UNAUTHENTICATED") or "unauthorized" in error.lower()


SEARCH = "/weaviate.v1.Weaviate/Search"
REPLICATION = "/clusterapi.ReplicationService/CompareHashTreeRootsMulti"  # the cluster data port's gRPC


def assert_public_grpc_refuses_strangers(port: int, key: str) -> None:
    assert refused_by_grpc(grpc_error(port, SEARCH, None))
    assert refused_by_grpc(grpc_error(port, SEARCH, [("authorization", "Bearer not-the-key")]))
    # the key passes authentication (the empty request then fails for its own reason)
    assert not refused_by_grpc(grpc_error(port, SEARCH, [("authorization", f"Bearer {key}")]))


def assert_cluster_port_refuses_strangers(port: int, password: str) -> None:
    url = f"http://127.0.0.1:{port}/nodes/"
    assert requests.get(url, timeout=10).status_code in UNAUTHORIZED
    assert requests.get(url, auth=(embedded_server.EMBEDDED_USER, "not-the-password"), timeout=10).status_code in UNAUTHORIZED
    assert requests.get(url, auth=(embedded_server.EMBEDDED_USER, password), timeout=10).status_code not in UNAUTHORIZED
    assert refused_by_grpc(grpc_error(port, REPLICATION, None))


def listening(process: psutil.Process) -> list[tuple[str, int]]:
    return [(c.laddr.ip, c.laddr.port) for c in process.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]


def is_loopback(ip: str) -> bool:
    return ipaddress.ip_address(ip).is_loopback


def check_server_sockets(server: psutil.Process) -> dict[int, str]:
    """Every port the Weaviate server listens on beyond loopback is its gRPC or cluster data
    port, and refuses a request without (or with a wrong) key or password. Returns what each
    such port was found to be."""
    env = server.environ()
    key, password = env["AUTHENTICATION_APIKEY_ALLOWED_KEYS"], env["CLUSTER_BASIC_AUTH_PASSWORD"]
    assert env["AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED"] == "false" and env["GO_PROFILING_DISABLE"] == "true"
    exposed = {}
    for ip, port in listening(server):
        if is_loopback(ip):
            continue
        if port == int(env["GRPC_PORT"]):
            assert_public_grpc_refuses_strangers(port, key)
            exposed[port] = "grpc"
        elif port == int(env["CLUSTER_DATA_BIND_PORT"]):
            assert_cluster_port_refuses_strangers(port, password)
            exposed[port] = "cluster data"
        else:
            raise AssertionError(f"Weaviate listens on {ip}:{port}, neither loopback nor a port that asks for a key")
    return exposed


def server_process(http_port: int) -> psutil.Process:
    for process in psutil.process_iter():
        try:
            if ("127.0.0.1", http_port) in listening(process):
                return process
        except (psutil.AccessDenied, psutil.NoSuchProcess):
            continue
    raise AssertionError(f"nothing listens on 127.0.0.1:{http_port}")


# --- the embedded server -----------------------------------------------------------------
def test_embedded_weaviate_refuses_requests_without_its_key(settings, weaviate_server):
    key = vector_store.api_key(settings)
    schema = f"http://127.0.0.1:{settings.weaviate.http_port}/v1/schema"
    assert requests.get(schema, timeout=10).status_code in UNAUTHORIZED
    assert requests.get(schema, headers={"Authorization": "Bearer not-the-key"}, timeout=10).status_code in UNAUTHORIZED
    assert requests.get(schema, headers={"Authorization": f"Bearer {key}"}, timeout=10).status_code == 200
    assert_public_grpc_refuses_strangers(settings.weaviate.grpc_port, key)

    server = server_process(settings.weaviate.http_port)
    assert set(check_server_sockets(server).values()) <= {"grpc", "cluster data"}
    assert all(is_loopback(ip) for ip, port in listening(server) if port == settings.weaviate.http_port)
    assert weaviate_server.is_ready()  # the fixture's client holds the key the pipeline reads


def test_a_server_holding_another_key_is_refused_with_a_clear_error(settings, weaviate_server, tmp_path):
    other = settings.model_copy(update={"secrets_dir": tmp_path / "other"})
    with pytest.raises(vector_store.WeaviateUnavailable, match=r"refused the key in .*other") as refused:
        with vector_store.connect(other):
            pass
    assert vector_store.api_key(other) not in str(refused.value)
    assert vector_store.api_key(settings) not in str(refused.value)


def test_generated_secrets_are_private_stable_and_agree_under_concurrency(settings, tmp_path):
    local = settings.model_copy(update={"secrets_dir": tmp_path / "secrets"})
    values: list[str] = []
    threads = [threading.Thread(target=lambda: values.append(secrets.local_secret(local, "k"))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(values)) == 1 and len(values[0]) >= 40
    assert (tmp_path / "secrets" / "k").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "secrets").stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in (tmp_path / "secrets").iterdir()) == ["k"]  # no temp file left
    (tmp_path / "secrets" / "k").chmod(0o644)
    with pytest.raises(PermissionError, match="chmod 600"):
        secrets.local_secret(local, "k")


def test_a_configured_cluster_keeps_its_configured_key(settings):
    remote = settings.model_copy(deep=True)
    remote.weaviate.url, remote.weaviate.api_key = "https://weaviate.example:443", "configured-key"
    assert vector_store.api_key(remote) == "configured-key"


# --- paths from DAG params ---------------------------------------------------------------
@pytest.fixture
def roots(settings, tmp_path):
    """A source folder holding a PDF, a symlink out of it, and a PDF outside it."""
    source, outside = tmp_path / "source", tmp_path / "outside"
    source.mkdir()
    outside.mkdir()
    (source / "doc.pdf").write_bytes(PDF.read_bytes())
    (outside / "secret.pdf").write_bytes(PDF.read_bytes())
    (source / "link.pdf").symlink_to(outside / "secret.pdf")
    return settings.model_copy(update={"source_dir": source, "allowed_source_roots": []}), source, outside


def test_paths_are_confined_to_the_source_roots_after_resolving(roots):
    local, source, outside = roots
    assert discovery.confined(source / "doc.pdf", local) == (source / "doc.pdf").resolve()
    for escape in (outside / "secret.pdf", source / ".." / "outside" / "secret.pdf", source / "link.pdf"):
        with pytest.raises(discovery.PathNotAllowed) as refused:
            discovery.confined(escape, local)
        message = str(refused.value)
        assert "\n" not in message and str(escape) in message and "allowed_source_roots" in message
    # the symlink is skipped when its folder is scanned; an explicit allow-list admits the target
    assert discovery.list_sources(local) == [(source / "doc.pdf").resolve()]
    allowed = local.model_copy(update={"allowed_source_roots": [outside]})
    assert discovery.confined(source / "link.pdf", allowed) == (outside / "secret.pdf").resolve()


@pytest.mark.parametrize("dag_id", ["corpus_refresh", "reprocess_document"])
def test_dag_param_outside_the_source_roots_fails_with_the_rule(dag_id, settings, source_dir, capfd):
    from pipeline.stores.document_registry import DocumentRegistry
    from rosetta_airflow.runner import run_dag

    outside = source_dir.parent / f"outside-{dag_id}.pdf"  # next to the source folder, not in it
    outside.write_bytes(PDF.read_bytes())
    escape = f"{source_dir}/../{outside.name}"
    conf = {"paths": [escape], "force": True} if dag_id == "corpus_refresh" else {"document": escape}
    capfd.readouterr()
    run_id, state = run_dag(dag_id, conf, settings)
    assert state == "failed"
    task_output = "".join(capfd.readouterr())
    assert f"PathNotAllowed: {escape}: refused: it resolves to {outside}, outside the source roots" in task_output
    assert DocumentRegistry(settings.document_registry_path).find_by_path(str(outside)) is None


# --- rosetta ingest: its sockets, and no secret anywhere afterwards -----------------------
def descendants_listening(root: psutil.Process) -> dict[psutil.Process, list[tuple[str, int]]]:
    found = {}
    for process in [root, *root.children(recursive=True)]:
        try:
            if sockets := listening(process):
                found[process] = sockets
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def files_holding(folder: Path, needles: dict[str, str]) -> list[str]:
    hits = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.parent.name != "secrets":
            data = path.read_bytes()
            hits += [f"{name} in {path}" for name, value in needles.items() if value.encode() in data]
    return hits


@pytest.mark.integration  # a real rosetta ingest: Weaviate and Airflow
def test_ingest_opens_nothing_beyond_loopback_unguarded_and_leaks_no_secret(settings, tmp_path):
    from conftest import free_port

    data_root = tmp_path / "data"
    source = data_root / "source"
    source.mkdir(parents=True)
    (source / "guide.pdf").write_bytes(PDF.read_bytes())
    (source / "locked.pdf").write_bytes((FIXTURES / "encrypted.pdf").read_bytes())  # user password "rosetta"
    canaries = {"configured Weaviate key": "canary-weaviate-key-5f1c", "JWT secret": "canary-jwt-secret-9d2e",
                "PDF password tried": "canary-pdf-password-7a3b"}
    (data_root / "secrets").mkdir(mode=0o700)
    (data_root / "secrets" / secrets.PDF_PASSWORDS).write_text(f"{canaries['PDF password tried']}\nrosetta\n")
    (data_root / "secrets" / secrets.PDF_PASSWORDS).chmod(0o600)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "plugins")]),
           "ROSETTA__DATA_ROOT": str(data_root), "ROSETTA__SOURCE_DIR": str(source),
           "ROSETTA__SECRETS_DIR": str(data_root / "secrets"),
           "ROSETTA__WEAVIATE__HTTP_PORT": str(free_port()), "ROSETTA__WEAVIATE__GRPC_PORT": str(free_port()),
           "ROSETTA__WEAVIATE__API_KEY": canaries["configured Weaviate key"],  # unused by the embedded server
           "AIRFLOW__API_AUTH__JWT_SECRET": canaries["JWT secret"],
           "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{data_root / 'airflow.db'}",
           "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(data_root / "airflow-logs")}
    output = data_root / "cli-output.txt"
    with open(output, "wb") as sink:
        cli = psutil.Popen([sys.executable, "-m", "pipeline.cli.main", "ingest", str(source / "guide.pdf"),
                            str(source / "locked.pdf")],
                           env=env, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
        seen: dict[tuple[str, int], str] = {}
        while cli.poll() is None:
            for process, sockets in descendants_listening(cli).items():
                for ip, port in sockets:
                    if (ip, port) in seen:
                        continue
                    seen[(ip, port)] = "loopback" if is_loopback(ip) else ""
                    if not is_loopback(ip):  # probe it while the server is up
                        assert process.name().startswith("weaviate"), f"{process.name()} listens on {ip}:{port}"
                        kinds = check_server_sockets(process)  # raises for an unguarded port
                        seen.update({(ip, p): kind for p, kind in kinds.items()})
            time.sleep(0.2)
    log = output.read_text(errors="replace")
    assert cli.returncode == 0, log[-3000:]
    assert "promoted" in log and "2 loaded" in log, log[-3000:]  # the locked PDF opened with its password
    assert any(kind == "grpc" for kind in seen.values()), seen  # the server was watched while up
    assert all(kind in ("loopback", "grpc", "cluster data") for kind in seen.values()), seen

    generated = {"embedded Weaviate key": (data_root / "secrets" / secrets.WEAVIATE_API_KEY).read_text(),
                 "cluster password": (data_root / "secrets" / secrets.WEAVIATE_CLUSTER_PASSWORD).read_text()}
    needles = {**canaries, **generated}
    # the workspace, registry, MLflow store, Airflow's metadata DB (XComs) and task logs, the CLI's output
    assert {p.name for p in data_root.iterdir()} >= {"batches", "registry.sqlite", "mlflow.db", "airflow.db",
                                                    "airflow-logs", "cli-output.txt"}
    assert files_holding(data_root, needles) == []
    assert (data_root / "secrets").stat().st_mode & 0o077 == 0
