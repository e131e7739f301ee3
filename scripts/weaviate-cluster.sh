#!/usr/bin/env bash
# A three-node Weaviate cluster on 127.0.0.1 from the server `make install` builds
# (scripts/weaviate_cluster.py says how; docs/deploy.md, "A Weaviate cluster on one machine").
#   scripts/weaviate-cluster.sh start [NODE...]   # node0 node1 node2 by default; waits until ready
#   scripts/weaviate-cluster.sh stop [NODE...]
#   scripts/weaviate-cluster.sh status            # exit status 0 when all three are healthy
#   eval "$(scripts/weaviate-cluster.sh env)"     # ROSETTA__WEAVIATE__* for rosetta and Airflow
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$ROOT/.venv/bin/python" -W ignore::DeprecationWarning "$ROOT/scripts/weaviate_cluster.py" "$@"
