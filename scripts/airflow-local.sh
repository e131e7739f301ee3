#!/usr/bin/env bash
# Run Airflow's API server (UI), scheduler and DAG processor for Rosetta on 127.0.0.1.
#   scripts/airflow-local.sh start   # logs in .airflow/logs/*.out, UI on http://127.0.0.1:8080
#   scripts/airflow-local.sh stop
#   scripts/airflow-local.sh env     # print the exports to use `airflow` CLI commands by hand
# The three processes must share one JWT secret (else task workers are refused with
# "Signature verification failed"); it is generated once into .airflow/jwt_secret.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="$ROOT/.airflow"
mkdir -p "$STATE/logs"
[ -s "$STATE/jwt_secret" ] || (umask 077 && head -c 64 /dev/urandom | base64 -w0 > "$STATE/jwt_secret")

export AIRFLOW_HOME="$ROOT" AIRFLOW_CONFIG="$ROOT/airflow.cfg" MLFLOW_DISABLE_TELEMETRY=true
export AIRFLOW__API_AUTH__JWT_SECRET="$(cat "$STATE/jwt_secret")"
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
    echo "UI: http://127.0.0.1:8080 (admin password: $STATE/simple_auth_manager_passwords.json.generated or the api-server log)"
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
