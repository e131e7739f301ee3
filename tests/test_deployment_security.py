"""The production deployment is secure as shipped (docs/deploy.md, "Security"): docker/compose.yaml
takes every secret from the environment with no default, publishes only what users need on the
host's loopback, runs Weaviate with API keys and RBAC (its configuration started for real on the
server binary built here), MLflow and Airflow behind logins; the Kubernetes pods carry no secret
and open no port."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
import requests
import yaml
from test_compose import environment, published

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker" / "compose.yaml"
SECRET_WORDS = re.compile(r"PASSWORD|SECRET|_KEY\b|KEYS|TOKEN(?!IZER)", re.I)  # not ENABLE_TOKENIZER_*
# The only variables with a default: where ports are published and the container's user/group.
DEFAULTED = {"ROSETTA_PUBLISH_ADDR", "AIRFLOW_UID", "DOCKER_GID"}
WEAVIATE_NODES = ("weaviate-0", "weaviate-1", "weaviate-2")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def with_secrets(value: str) -> str:
    """Resolve ${VAR...} the way compose does with each required VAR set to "<VAR>"."""
    return re.sub(r"\$\{(\w+)(?::([-?])([^}]*))?\}",
                  lambda m: m.group(3) if m.group(2) == "-" else f"<{m.group(1)}>", value)


def test_every_secret_comes_from_the_environment_without_a_default():
    text = COMPOSE.read_text()
    variables = re.findall(r"(?<!\$)\$\{(\w+)(?::([-?]))?", text)
    defaulted = {name for name, kind in variables if kind == "-"}
    assert defaulted <= DEFAULTED, f"defaults for {defaulted - DEFAULTED}"
    unchecked = {name for name, kind in variables if not kind}
    assert unchecked <= {"ROSETTA_IMAGE_TAG"}  # required once already (x-rosetta-env), then reused
    assert "change-me" not in text and ":-}" not in text


def test_no_secret_is_written_into_the_file(compose):
    for name, service in compose["services"].items():
        for key, value in environment(service).items():
            if SECRET_WORDS.search(key):
                assert re.fullmatch(r"(\$\{\w+:\?[^}]*\},?)+", value), f"{name}: {key} is not a required variable"
            for url in re.findall(r"\w+(?:\+\w+)?://[^\s\"]+", with_secrets(value)):
                if "@" in url:  # credentials in a URL: the password is a required variable
                    password = url.split("://", 1)[1].split("@")[0].split(":", 1)[1]
                    assert re.fullmatch(r"<\w+>", password), f"{name}: {key} has a written password"
        postgres = environment(service).get("POSTGRES_PASSWORD")
        assert postgres is None or postgres.startswith("${"), name


def test_only_what_users_need_is_published_and_on_loopback_by_default(compose):
    ports = {(name, published(entry)) for name, service in compose["services"].items() for entry in service.get("ports", [])}
    assert {(name, container) for name, (_, _, container) in ports} == {
        ("airflow-apiserver", 8080), ("weaviate-0", 8080), ("weaviate-0", 50051), ("mlflow", 5000)}
    assert {ip for _, (ip, _, _) in ports} == {"127.0.0.1"}
    for name in ("postgres", "mlflow-postgres", "redis", "weaviate-1", "weaviate-2", "airflow-worker"):
        assert not compose["services"][name].get("ports"), name


def weaviate_env(compose: dict, node: str) -> dict[str, str]:
    return {k: with_secrets(v) for k, v in environment(compose["services"][node]).items()}


def keys_by_user(env: dict[str, str]) -> dict[str, str]:
    users = env["AUTHENTICATION_APIKEY_USERS"].split(",")
    keys = env["AUTHENTICATION_APIKEY_ALLOWED_KEYS"].split(",")
    assert len(users) == len(keys) == len(set(keys))
    return dict(zip(users, keys))


def test_weaviate_takes_api_keys_with_rbac_and_nothing_anonymous(compose):
    pipeline_key = with_secrets(environment(compose["services"]["airflow-worker"])["ROSETTA__WEAVIATE__API_KEY"])
    for node in WEAVIATE_NODES:
        env = weaviate_env(compose, node)
        assert env["AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED"] == "false", node
        assert env["AUTHENTICATION_APIKEY_ENABLED"] == "true" and env["AUTHORIZATION_RBAC_ENABLED"] == "true", node
        keys = keys_by_user(env)
        [writer] = env["EXPERIMENTAL_AUTHORIZATION_RBAC_ADMIN_USERS"].split(",")
        [reader] = env["EXPERIMENTAL_AUTHORIZATION_RBAC_READONLY_USERS"].split(",")
        assert keys[writer] == pipeline_key != keys[reader], node  # the pipeline writes with the writer key
        assert env["GO_PROFILING_DISABLE"] == "true" and env["CLUSTER_BASIC_AUTH_PASSWORD"].startswith("<"), node


def test_mlflow_and_airflow_ask_for_a_login(compose):
    services = compose["services"]
    mlflow = services["mlflow"]
    assert "--app-name basic-auth" in mlflow["command"]
    assert environment(mlflow)["MLFLOW_AUTH_ADMIN_PASSWORD"].startswith("${MLFLOW_ADMIN_PASSWORD:?")
    worker = environment(services["airflow-worker"])
    assert worker["MLFLOW_TRACKING_PASSWORD"] == environment(mlflow)["MLFLOW_AUTH_ADMIN_PASSWORD"]
    for name, service in services.items():
        if name.startswith("airflow-"):
            env = environment(service)
            assert env["AIRFLOW__CORE__AUTH_MANAGER"].endswith("FabAuthManager"), name
            assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS"] == "False", name
    assert '--password "$$AIRFLOW_ADMIN_PASSWORD"' in " ".join(services["airflow-init"]["command"])


def test_local_airflow_config_has_no_all_admins():
    import configparser

    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "airflow.cfg")
    assert cfg.getboolean("core", "simple_auth_manager_all_admins") is False
    assert cfg["core"]["simple_auth_manager_users"]
    assert not cfg.has_option("api_auth", "jwt_secret")  # generated by scripts/airflow-local.sh


@pytest.mark.integration
def test_compose_weaviate_configuration_refuses_strangers_for_real(compose, settings, tmp_path):
    """weaviate-0's environment from the compose file (its secrets set, one node, ports of our
    own) on the server binary built here: no key and a wrong key are refused over REST and gRPC,
    the read-only key reads but cannot write, the pipeline's key writes."""
    from conftest import free_port
    from test_security import SEARCH, grpc_error, refused_by_grpc

    from pipeline.stores.embedded_server import embedded_binary_path

    binary = embedded_binary_path(settings)
    if not binary.exists():
        pytest.fail(f"Weaviate binary {binary} missing: run `make install`")
    env = weaviate_env(compose, "weaviate-0")
    keys = keys_by_user(env)
    http, grpc_port, gossip, raft = free_port(), free_port(), free_port(), free_port()
    env.update(GRPC_PORT=str(grpc_port), CLUSTER_GOSSIP_BIND_PORT=str(gossip), CLUSTER_DATA_BIND_PORT=str(free_port()),
               RAFT_PORT=str(raft), RAFT_INTERNAL_RPC_PORT=str(raft + 1), RAFT_JOIN="node0", RAFT_BOOTSTRAP_EXPECT="1",
               REPLICATION_MINIMUM_FACTOR="1", PERSISTENCE_DATA_PATH=str(tmp_path / "data"),
               CLUSTER_BIND_ADDR="127.0.0.1", CLUSTER_IN_LOCALHOST="true", PATH="/usr/bin:/bin")
    with open(tmp_path / "server.log", "wb") as log:
        server = subprocess.Popen([str(binary), "--host", "127.0.0.1", "--port", str(http), "--scheme", "http"],
                                  env=env, stdout=subprocess.DEVNULL, stderr=log)
    base = f"http://127.0.0.1:{http}/v1"
    try:
        for _ in range(240):
            try:
                if requests.get(f"{base}/.well-known/ready", timeout=1).status_code == 200:
                    break
            except requests.ConnectionError:
                time.sleep(0.5)
            assert server.poll() is None, (tmp_path / "server.log").read_text()[-2000:]

        def as_user(user: str | None) -> dict[str, str]:
            return {"Authorization": f"Bearer {keys[user]}"} if user else {}

        collection = {"class": "SecurityCheck", "vectorizer": "none"}
        assert requests.get(f"{base}/schema", timeout=10).status_code == 401
        assert requests.get(f"{base}/schema", headers={"Authorization": "Bearer wrong"}, timeout=10).status_code == 401
        assert refused_by_grpc(grpc_error(grpc_port, SEARCH, None))
        assert refused_by_grpc(grpc_error(grpc_port, SEARCH, [("authorization", "Bearer wrong")]))
        # The first read a key may make waits for the lone node's Raft election (compose leaves
        # Raft's timeouts at 5x: about 8 s on loopback, over 10 on busy cores; "ready" comes first).
        assert requests.get(f"{base}/schema", headers=as_user("rosetta-search"), timeout=60).status_code == 200
        assert requests.post(f"{base}/schema", json=collection, headers=as_user("rosetta-search"),
                             timeout=10).status_code == 403
        assert requests.post(f"{base}/schema", json=collection, headers=as_user("rosetta-pipeline"),
                             timeout=30).status_code == 200
        assert not refused_by_grpc(grpc_error(grpc_port, SEARCH, [("authorization", f"Bearer {keys['rosetta-search']}")]))
    finally:
        server.terminate()
        server.wait(timeout=30)


# --- Kubernetes pods ---------------------------------------------------------------------
def test_stage_pods_carry_no_secret_and_open_no_port(settings, monkeypatch):
    from pipeline.config import get_settings
    from pipeline.stages import CONTAINER_STAGES
    from test_k8s_specs import rendered, stage_container

    monkeypatch.setenv("ROSETTA__EXECUTION__MODE", "kubernetes")
    monkeypatch.setenv("ROSETTA__WEAVIATE__API_KEY", "canary-pod-key-41d7")  # the worker's key
    get_settings.cache_clear()
    try:
        kube = get_settings()
        for stage in (s.name for s in CONTAINER_STAGES):
            pod = rendered(stage, kube)
            assert "canary-pod-key-41d7" not in json.dumps(pod), stage
            spec = pod["spec"]
            assert not spec.get("hostNetwork") and not spec.get("hostPID") and not spec.get("hostIPC"), stage
            for container in spec["containers"]:
                assert not container.get("ports"), (stage, container["name"])
            env_from = stage_container(pod)["envFrom"]
            assert {"secretRef": {"name": kube.containers.kubernetes.env_secret, "optional": True}} in env_from
            assert not [e for e in stage_container(pod)["env"] if SECRET_WORDS.search(e["name"])], stage
    finally:
        get_settings.cache_clear()
