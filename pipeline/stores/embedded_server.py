"""The embedded Weaviate server: where its binary is, the closed environment it starts with, and
how a child process waits for the server its parent starts (docs/deploy.md, "Security").
pipeline.stores.vector_store connects to it; scripts/weaviate_cluster.py starts three of it.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from pathlib import Path

from pipeline.config import Settings
from pipeline.stores import secrets
from pipeline.workspace import atomic_write_bytes

# Tokenizers built into every Weaviate server; the others need ENABLE_TOKENIZER_<NAME> in its environment.
PLAIN_TOKENIZATIONS = {"word", "lowercase", "whitespace", "field", "trigram"}


class WeaviateUnavailable(RuntimeError):
    """The configured Weaviate cannot be reached; the task fails and Airflow retries it."""


LOOPBACK = "127.0.0.1"
EMBEDDED_USER = "rosetta"

# Set by a process that starts the embedded server beside its child rather than before it
# (``rosetta ingest`` and its DAG runner, which spends those seconds importing Airflow): the child
# waits for that server when it first needs it instead of starting one of its own.
SERVER_FROM_PARENT_ENV = "ROSETTA_WEAVIATE_FROM_PARENT"


def _listening(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def server_listening(settings: Settings) -> bool:
    """Whether a server listens on the configured REST and gRPC ports on loopback."""
    cfg = settings.weaviate
    return _listening(LOOPBACK, cfg.http_port) and _listening(LOOPBACK, cfg.grpc_port)


def embedded_binary_dir(settings: Settings) -> Path:
    return Path(settings.weaviate.binary_dir)


def embedded_binary_path(settings: Settings) -> Path:
    """Where weaviate-client's embedded mode looks for the server binary of this version."""
    version = settings.weaviate.version
    digest = hashlib.sha256(f"v{version}".encode()).hexdigest()
    return embedded_binary_dir(settings) / f"weaviate-v{version}-{digest}"


def tokenizer_env(settings: Settings) -> dict[str, str]:
    """What a Weaviate server's environment needs for the language table's tokenizers."""
    return {f"ENABLE_TOKENIZER_{entry.tokenization.upper()}": "true" for entry in settings.languages.values()
            if entry.tokenization not in PLAIN_TOKENIZATIONS}


def embedded_environment(settings: Settings) -> dict[str, str]:
    """The embedded server closed by default (docs/deploy.md, "Security"): API-key
    authentication with anonymous access off, profiling off, the cluster's gossip and Raft
    bound to loopback. Weaviate 1.39 binds gRPC and the cluster data port on every interface
    with no option to change it: gRPC takes the API key, the data port a generated password.
    Raft's timeouts at 1x, not 5x: a lone node on loopback waited 8 s for its own election at
    every start (docs/benchmarks.md). Plus the tokenizers the language table needs."""
    return {
        "RAFT_TIMEOUTS_MULTIPLIER": "1",
        "LOG_LEVEL": "error",
        "DISABLE_TELEMETRY": "true",
        "ENABLE_MODULES": "",
        "PERSISTENCE_DATA_PATH": str(settings.weaviate_data_path),
        "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "false",
        "AUTHENTICATION_APIKEY_ENABLED": "true",
        "AUTHENTICATION_APIKEY_ALLOWED_KEYS": secrets.local_secret(settings, secrets.WEAVIATE_API_KEY),
        "AUTHENTICATION_APIKEY_USERS": EMBEDDED_USER,
        "GO_PROFILING_DISABLE": "true",
        "CLUSTER_BIND_ADDR": LOOPBACK,
        "CLUSTER_ADVERTISE_ADDR": LOOPBACK,
        "CLUSTER_BASIC_AUTH_USERNAME": EMBEDDED_USER,
        "CLUSTER_BASIC_AUTH_PASSWORD": secrets.local_secret(settings, secrets.WEAVIATE_CLUSTER_PASSWORD),
        **tokenizer_env(settings),
    }


def node_environment(settings: Settings) -> dict[str, str]:
    """The embedded server's Raft node name, the same for its data folder at every start.
    weaviate-client names the node after the HTTP port (``Embedded_at_<port>``), and the Raft
    state in the data folder knows only the name it was made under: started on another port
    (``weaviate.http_port`` changed, or a benchmark drawing free ports), the server waited for
    a node that no longer exists and never came up. The first start's name is written
    beside the data (``Settings.weaviate_node_name_path``) and read at every later one; a
    folder without it was made under the client's naming at the current port."""
    path = settings.weaviate_node_name_path
    if path.exists():
        name = path.read_text(encoding="utf-8").strip()
    else:
        name = f"Embedded_at_{settings.weaviate.http_port}"
        atomic_write_bytes(path, f"{name}\n".encode("utf-8"))
    # RAFT_JOIN by name alone: the client picks the Raft port at each start
    return {"CLUSTER_HOSTNAME": name, "RAFT_JOIN": name}


def wait_for_parent_server(settings: Settings) -> bool:
    """With SERVER_FROM_PARENT_ENV set: wait until the parent's server listens (True), or raise."""
    if not os.environ.get(SERVER_FROM_PARENT_ENV):
        return False
    cfg = settings.weaviate
    give_up = time.monotonic() + cfg.startup_timeout_s
    while not server_listening(settings):
        if time.monotonic() > give_up:
            raise WeaviateUnavailable(f"the embedded Weaviate this process's parent starts is not listening on "
                                      f"{LOOPBACK}:{cfg.http_port} after {cfg.startup_timeout_s} s")
        time.sleep(0.1)
    return True
