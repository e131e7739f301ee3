#!/usr/bin/env bash
# Run Airflow's API server (UI), scheduler and DAG processor for Rosetta on 127.0.0.1.
#   scripts/airflow-local.sh start   # logs in .airflow/logs/*.out, UI on http://127.0.0.1:8080
#   scripts/airflow-local.sh stop
#   scripts/airflow-local.sh env     # print the exports to use `airflow` CLI commands by hand
# The JWT secret and the UI's passwords: scripts/airflow-secrets.sh (shared with airflow-celery.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/airflow-secrets.sh
source "$ROOT/scripts/airflow-secrets.sh"
STATE="$AIRFLOW_STATE"
AIRFLOW="$ROOT/.venv/bin/airflow"

case "${1:-}" in
  start)
    "$AIRFLOW" db migrate >"$STATE/logs/migrate.out" 2>&1
    for service in "api-server --host 127.0.0.1 --port 8080" "scheduler --skip-serve-logs" "dag-processor"; do
      name="${service%% *}"
      # shellcheck disable=SC2086
      nohup "$AIRFLOW" $service >"$STATE/logs/$name.out" 2>&1 &
      echo $! >"$STATE/$name.pid"
      echo "started airflow $name (pid $!, log $STATE/logs/$name.out)"
    done
    echo "UI: http://127.0.0.1:8080 (users admin and viewer; passwords in $PASSWORDS)"
    ;;
  stop)
    for name in api-server scheduler dag-processor; do
      if [ -f "$STATE/$name.pid" ]; then
        kill "$(cat "$STATE/$name.pid")" 2>/dev/null || true
        rm -f "$STATE/$name.pid"
        echo "stopped airflow $name"
      fi
    done
    ;;
  env)
    echo "export AIRFLOW_HOME='$AIRFLOW_HOME' AIRFLOW_CONFIG='$AIRFLOW_CONFIG' AIRFLOW__API_AUTH__JWT_SECRET='$AIRFLOW__API_AUTH__JWT_SECRET'"
    ;;
  *)
    echo "usage: $0 start|stop|env" >&2
    exit 2
    ;;
esac
