#!/usr/bin/env bash
# Run Airflow's API server (UI), scheduler and DAG processor for Rosetta on 127.0.0.1.
#   scripts/airflow-local.sh start   # logs in .airflow/logs/*.out, UI on http://127.0.0.1:8080
#   scripts/airflow-local.sh stop
#   scripts/airflow-local.sh env     # print the exports to use `airflow` CLI commands by hand
# The three processes must share one JWT secret (else task workers are refused with
# "Signature verification failed"); it is generated once into .airflow/jwt_secret (mode 0600),
# as are the passwords of the UI's users (airflow.cfg's simple_auth_manager_users) into
# .airflow/simple_auth_manager_passwords.json, so Airflow never prints them to its log.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="$ROOT/.airflow"
mkdir -p "$STATE/logs"
[ -s "$STATE/jwt_secret" ] || (umask 077 && head -c 64 /dev/urandom | base64 -w0 > "$STATE/jwt_secret")
PASSWORDS="$STATE/simple_auth_manager_passwords.json"
(umask 077 && "$ROOT/.venv/bin/python" - "$ROOT/airflow.cfg" "$PASSWORDS" <<'PY'
import configparser, json, os, secrets, sys
cfg = configparser.ConfigParser(interpolation=None)
cfg.read(sys.argv[1])
users = [entry.split(":")[0] for entry in cfg["core"]["simple_auth_manager_users"].split(",")]
path = sys.argv[2]
passwords = json.load(open(path)) if os.path.exists(path) else {}
missing = {user: secrets.token_urlsafe(18) for user in users if user not in passwords}
if missing:  # a new user gets a password here, not one Airflow would print to its log
    with open(path + ".tmp", "w") as handle:
        json.dump({**passwords, **missing}, handle)
    os.replace(path + ".tmp", path)
PY
)
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
