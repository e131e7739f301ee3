"""docker/compose.yaml agrees with the code's configuration: every ROSETTA__* variable is a
key of the config model, the URLs and ports point at services that listen there, the
Weaviate cluster matches the replication factor, and the workers, the stage containers
and the Celery/Postgres/Redis wiring use the names compose gives them."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker" / "compose.yaml"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def environment(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def substituted(value: str) -> str:
    """${VAR:-default} as compose resolves it with VAR unset; ${VAR} and ${VAR:?message} as if VAR=x."""
    return re.sub(r"\$\{(\w+)(?::([-?])([^}]*))?\}", lambda m: m.group(3) if m.group(2) == "-" else "x", value)


def published(entry: str) -> tuple[str, int, int]:
    """A ports entry ("[HOST_IP:]HOST:CONTAINER", variables resolved) as (host ip, host port, container port)."""
    *address, host, container = substituted(entry).split(":")
    return (address[0] if address else "0.0.0.0"), int(host), int(container)


def airflow_services(compose: dict) -> dict[str, dict]:
    return {name: s for name, s in compose["services"].items() if name.startswith("airflow-")}


def rosetta_settings(compose: dict):
    from pipeline.config import load_settings

    env = {k: substituted(v) for k, v in environment(compose["services"]["airflow-worker"]).items()}
    return load_settings({k: v for k, v in env.items() if k.startswith("ROSETTA")}), env


def model_has_key(path: list[str]) -> bool:
    from pydantic import BaseModel

    from pipeline.config import Settings

    node = Settings
    for part in path:
        if not (isinstance(node, type) and issubclass(node, BaseModel)) or part not in node.model_fields:
            return False
        node = node.model_fields[part].annotation
    return True


def code_environment_names() -> set[str]:
    """The ROSETTA_* variables the code reads (os.environ / environ lookups)."""
    names = set()
    for path in [*(ROOT / "pipeline").glob("*.py"), *(ROOT / "plugins").rglob("*.py")]:
        names |= set(re.findall(r"environ(?:\.get\(|\[)\"(ROSETTA_[A-Z_]+)\"", path.read_text()))
    return names


def test_the_services_of_a_scale_out_deployment(compose):
    services = set(compose["services"])
    assert {"postgres", "redis", "airflow-apiserver", "airflow-scheduler", "airflow-dag-processor",
            "airflow-worker", "weaviate-0", "weaviate-1", "weaviate-2", "mlflow", "mlflow-postgres"} <= services
    for name, service in airflow_services(compose).items():
        assert environment(service)["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor", name


def test_every_rosetta_variable_is_a_config_key(compose):
    known = code_environment_names()
    assert {"ROSETTA_HOME", "ROSETTA_CONFIG", "ROSETTA_PIPELINE_VERSION"} <= known
    for name, service in compose["services"].items():
        for key in environment(service):
            if key.startswith("ROSETTA__"):
                path = [part.lower() for part in key[len("ROSETTA__"):].split("__")]
                assert model_has_key(path), f"{name}: {key} is not a key of pipeline.config.Settings"
            elif key.startswith("ROSETTA"):
                assert key in known, f"{name}: the code never reads {key}"
    settings, _ = rosetta_settings(compose)  # and the values validate
    assert settings.execution.mode == "docker"


def test_urls_point_at_services_that_listen_there(compose):
    settings, _ = rosetta_settings(compose)
    services = compose["services"]
    weaviate = urlparse(settings.weaviate.url)
    node = services[weaviate.hostname]
    assert weaviate.port == int(node["command"][node["command"].index("--port") + 1])
    assert settings.weaviate.grpc_port == int(environment(node)["GRPC_PORT"])
    mlflow = urlparse(settings.mlflow.tracking_uri)
    assert re.search(rf"--port {mlflow.port}\b", services[mlflow.hostname]["command"])
    backend = re.search(r"--backend-store-uri (\S+)", services["mlflow"]["command"]).group(1)
    assert urlparse(backend).hostname == "mlflow-postgres"


def test_weaviate_cluster_matches_the_replication_factor(compose):
    settings, _ = rosetta_settings(compose)
    nodes = {name: environment(s) for name, s in compose["services"].items() if name.startswith("weaviate-")}
    assert len(nodes) == settings.weaviate.replication_factor == 3
    hostnames = [env["CLUSTER_HOSTNAME"] for env in nodes.values()]
    assert len(set(hostnames)) == len(hostnames)
    for name, env in nodes.items():
        assert set(env["RAFT_JOIN"].split(",")) == set(hostnames), name
        assert int(env["RAFT_BOOTSTRAP_EXPECT"]) == len(nodes), name
        assert int(env["REPLICATION_MINIMUM_FACTOR"]) <= settings.weaviate.replication_factor
        if "CLUSTER_JOIN" in env:
            host, port = env["CLUSTER_JOIN"].split(":")
            assert host in nodes and port == nodes[host]["CLUSTER_GOSSIP_BIND_PORT"], name


def test_workers_and_stage_containers_share_the_workspace_and_network(compose):
    settings, env = rosetta_settings(compose)
    volumes = compose["volumes"]
    [workspace_key] = [k for k, v in volumes.items() if (v or {}).get("name") == settings.containers.workspace_volume]
    assert compose["networks"]["default"]["name"] == settings.containers.network_mode
    assert settings.source_dir.is_relative_to(settings.data_root)  # the sources travel in the volume
    for name, service in airflow_services(compose).items():
        assert f"{workspace_key}:{settings.data_root}" in service["volumes"], name
        socket = urlparse(settings.containers.docker_url).path
        assert f"{socket}:{socket}" in service["volumes"], name


def test_airflow_reaches_postgres_and_redis(compose):
    _, env = rosetta_settings(compose)
    services = compose["services"]
    assert urlparse(env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]).hostname in services
    assert urlparse(env["AIRFLOW__CELERY__BROKER_URL"]).hostname == "redis"
    assert urlparse(env["AIRFLOW__CELERY__RESULT_BACKEND"].removeprefix("db+")).hostname == "postgres"
    api = urlparse(env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"])
    assert api.hostname == "airflow-apiserver"
    assert (api.port, api.port) in [published(p)[1:] for p in services["airflow-apiserver"]["ports"]]


def test_published_host_ports_are_unique(compose):
    ports = [published(p)[1] for s in compose["services"].values() for p in s.get("ports", [])]
    assert len(ports) == len(set(ports))
