"""A three-node Weaviate cluster on this machine, from the server binary `make install` builds
(the embedded server's), closed like it: API key, no anonymous access, gossip and Raft on
loopback, the cluster's data port behind a generated password (docs/deploy.md, "Security").

    scripts/weaviate-cluster.sh start [NODE...]   # every node, or some (a node that was stopped)
    scripts/weaviate-cluster.sh stop [NODE...]
    scripts/weaviate-cluster.sh status            # each node's process and readiness, the cluster's view
    eval "$(scripts/weaviate-cluster.sh env)"     # point rosetta at the cluster (replication factor 3)

Node i listens on 127.0.0.1 from WEAVIATE_CLUSTER_BASE_PORT + 10*i (default 8100): REST +0,
gRPC +1, gossip +2, cluster data +3, Raft +4, Raft RPC +5 (the server dials Raft + 1 when all
nodes share one host), profiling +6 (off). Its files live in <data_root>/weaviate-cluster/node<i>
(or WEAVIATE_CLUSTER_DIR): data, server.log, server.pid. The key and the cluster password are
the embedded server's (<data_root>/secrets).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.config import Settings, get_settings  # noqa: E402
from pipeline.stores import embedded_server, secrets  # noqa: E402

NODES = 3
LOOPBACK = embedded_server.LOOPBACK


@dataclass(frozen=True)
class Node:
    index: int
    base_port: int
    root: Path

    @property
    def name(self) -> str:
        return f"node{self.index}"

    def port(self, offset: int) -> int:
        return self.base_port + 10 * self.index + offset

    http_port = property(lambda self: self.port(0))
    grpc_port = property(lambda self: self.port(1))
    gossip_port = property(lambda self: self.port(2))
    data_port = property(lambda self: self.port(3))
    raft_port = property(lambda self: self.port(4))
    folder = property(lambda self: self.root / self.name)
    pid_file = property(lambda self: self.folder / "server.pid")
    log_file = property(lambda self: self.folder / "server.log")


def nodes(settings: Settings) -> list[Node]:
    base = int(os.environ.get("WEAVIATE_CLUSTER_BASE_PORT", "8100"))
    root = Path(os.environ.get("WEAVIATE_CLUSTER_DIR") or settings.data_root / "weaviate-cluster")
    return [Node(i, base, root) for i in range(NODES)]


def node_environment(settings: Settings, node: Node, cluster: list[Node]) -> dict[str, str]:
    """The embedded server's closed environment, plus this node's ports, data folder and the
    cluster it joins (every node votes in the first Raft election)."""
    return {
        **embedded_server.embedded_environment(settings),
        "PERSISTENCE_DATA_PATH": str(node.folder / "data"),
        "QUERY_DEFAULTS_LIMIT": "20",
        "CLUSTER_HOSTNAME": node.name,
        "CLUSTER_IN_LOCALHOST": "true",
        "CLUSTER_GOSSIP_BIND_PORT": str(node.gossip_port),
        "CLUSTER_DATA_BIND_PORT": str(node.data_port),
        **({"CLUSTER_JOIN": f"{LOOPBACK}:{cluster[0].gossip_port}"} if node.index else {}),
        "GRPC_PORT": str(node.grpc_port),
        "RAFT_PORT": str(node.raft_port),
        "RAFT_INTERNAL_RPC_PORT": str(node.raft_port + 1),
        "RAFT_JOIN": ",".join(f"{n.name}:{n.raft_port}" for n in cluster),
        "RAFT_BOOTSTRAP_EXPECT": str(len(cluster)),
        "PROFILING_PORT": str(node.port(6)),
    }


def client_environment(settings: Settings, cluster: list[Node]) -> dict[str, str]:
    """What points Rosetta at the cluster: node0's REST and gRPC, the key, every chunk on all
    three nodes (reads and writes at weaviate.consistency_level, QUORUM by default)."""
    return {"ROSETTA__WEAVIATE__URL": f"http://{LOOPBACK}:{cluster[0].http_port}",
            "ROSETTA__WEAVIATE__GRPC_PORT": str(cluster[0].grpc_port),
            "ROSETTA__WEAVIATE__API_KEY": secrets.local_secret(settings, secrets.WEAVIATE_API_KEY),
            "ROSETTA__WEAVIATE__REPLICATION_FACTOR": str(len(cluster))}


def pid(node: Node) -> int | None:
    """The node's server process, if it runs."""
    try:
        number = int(node.pid_file.read_text())
        os.kill(number, 0)
    except (FileNotFoundError, ValueError, ProcessLookupError):
        return None
    return number


def ready(node: Node) -> bool:
    try:
        with urllib.request.urlopen(f"http://{LOOPBACK}:{node.http_port}/v1/.well-known/ready", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start(settings: Settings, names: list[str] | None = None, timeout_s: float = 120) -> list[Node]:
    """Start the named nodes (default: all) that are not running; wait until every node of
    the cluster answers ready. Returns the nodes started."""
    cluster = nodes(settings)
    binary = embedded_server.embedded_binary_path(settings)
    if not binary.exists():
        raise SystemExit(f"Weaviate server binary {binary} is missing: run `make install` (it builds it)")
    started = []
    for node in cluster:
        if (names and node.name not in names) or pid(node):
            continue
        (node.folder / "data").mkdir(parents=True, exist_ok=True)
        with open(node.log_file, "ab") as log:
            process = subprocess.Popen(
                [str(binary), "--host", LOOPBACK, "--port", str(node.http_port), "--scheme", "http",
                 "--read-timeout=600s", "--write-timeout=600s"],
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **node_environment(settings, node, cluster)},
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        node.pid_file.write_text(str(process.pid))
        started.append(node)
        print(f"started weaviate {node.name} (pid {process.pid}, REST {LOOPBACK}:{node.http_port}, "
              f"gRPC {node.grpc_port}, log {node.log_file})")
    deadline = time.monotonic() + timeout_s
    while not all(ready(n) for n in cluster if pid(n)):
        for node in started:
            if not pid(node):
                raise SystemExit(f"weaviate {node.name} exited at start; see {node.log_file}")
        if time.monotonic() > deadline:
            raise SystemExit(f"the cluster is not ready after {timeout_s:.0f} s; see {cluster[0].root}/node*/server.log")
        time.sleep(0.5)
    return started


def stop(settings: Settings, names: list[str] | None = None, sig: int = signal.SIGTERM, timeout_s: float = 30) -> None:
    """Stop the named nodes (default: all); SIGKILL after ``timeout_s``."""
    for node in nodes(settings):
        number = pid(node)
        if (names and node.name not in names) or not number:
            continue
        os.kill(number, sig)
        deadline = time.monotonic() + timeout_s
        while pid(node) and time.monotonic() < deadline:
            _reap(number)
            time.sleep(0.2)
        if pid(node):
            os.kill(number, signal.SIGKILL)
            while pid(node):
                _reap(number)
                time.sleep(0.1)
        node.pid_file.unlink(missing_ok=True)
        print(f"stopped weaviate {node.name} (pid {number})")


def _reap(number: int) -> None:
    """Collect a child's exit status (a server this process started), so its pid disappears."""
    try:
        os.waitpid(number, os.WNOHANG)
    except ChildProcessError:
        pass


def cluster_view(settings: Settings) -> dict[str, str]:
    """Each node's status as the first reachable node reports it (GET /v1/nodes)."""
    key = secrets.local_secret(settings, secrets.WEAVIATE_API_KEY)
    for node in nodes(settings):
        request = urllib.request.Request(f"http://{LOOPBACK}:{node.http_port}/v1/nodes",
                                         headers={"Authorization": f"Bearer {key}"})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return {n["name"]: n["status"] for n in json.load(response)["nodes"]}
        except (urllib.error.URLError, OSError):
            continue
    return {}


def status(settings: Settings) -> int:
    """Print each node's state; exit status 0 when all three run and the cluster sees them healthy."""
    view = cluster_view(settings)
    healthy = True
    for node in nodes(settings):
        number = pid(node)
        seen = view.get(node.name, "unknown")
        healthy &= bool(number) and ready(node) and seen == "HEALTHY"
        print(f"{node.name}: {'pid ' + str(number) if number else 'stopped'}, "
              f"{'ready' if number and ready(node) else 'not ready'}, REST {LOOPBACK}:{node.http_port}, "
              f"gRPC {node.grpc_port}; cluster says {seen}")
    return 0 if healthy else 1


def main(argv: list[str]) -> int:
    warnings.simplefilter("ignore", ResourceWarning)  # the servers outlive this command on purpose
    settings = get_settings()
    command, names = (argv[0] if argv else ""), argv[1:] or None
    if command == "start":
        start(settings, names)
        return status(settings)
    if command == "stop":
        stop(settings, names)
        return 0
    if command == "status":
        return status(settings)
    if command == "env":  # the key is read from its file when the line runs, never printed
        key_file = secrets.secrets_folder(settings) / secrets.WEAVIATE_API_KEY
        secrets.local_secret(settings, secrets.WEAVIATE_API_KEY)
        for name, value in client_environment(settings, nodes(settings)).items():
            print(f"export {name}=\"$(cat '{key_file}')\"" if name.endswith("API_KEY") else f"export {name}='{value}'")
        return 0
    print("usage: scripts/weaviate-cluster.sh start|stop [NODE...] | status | env", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
