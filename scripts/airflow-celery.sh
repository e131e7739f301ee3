#!/usr/bin/env bash
# Airflow with the CeleryExecutor on this machine (docs/deploy.md, "Celery workers on one machine"):
# PostgreSQL (metadata DB and Celery results) and Redis (the broker), both from Debian packages,
# in their own folders and on 127.0.0.1 only; then `airflow db migrate`, the API server, the
# scheduler, the DAG processor and AIRFLOW_CELERY_WORKERS (2) Celery workers.
#   scripts/airflow-celery.sh start    # starts what is not running (a stopped or killed worker too)
#   scripts/airflow-celery.sh stop
#   scripts/airflow-celery.sh status   # exit status 0 when every process runs
#   scripts/airflow-celery.sh env      # the exports to use the `airflow` CLI against this set-up
# State (AIRFLOW_CELERY_DIR, default <data_root>/airflow-celery): postgres/ (its data folder),
# redis/, secrets/ (generated passwords and the connection URLs that hold them, mode 0600; Airflow
# reads them with *_CMD options, so no password is in a process's arguments or environment),
# logs/*.out, *.pid. Ports: AIRFLOW_CELERY_PG_PORT (5433), AIRFLOW_CELERY_REDIS_PORT (6380),
# AIRFLOW_CELERY_API_PORT (8090). Worker i is Celery node worker<i>@<host> and records that as its
# task instances' hostname. As root, PostgreSQL runs as the `postgres` user (it refuses root).
# Rosetta's settings (ROSETTA__*) and Airflow's (AIRFLOW__*) come from the caller's environment.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/airflow-secrets.sh
source "$ROOT/scripts/airflow-secrets.sh"
AIRFLOW="$ROOT/.venv/bin/airflow"
STATE="${AIRFLOW_CELERY_DIR:-$("$ROOT/.venv/bin/python" -c 'from pipeline.config import load_settings; print(load_settings().data_root)')/airflow-celery}"
PG_PORT="${AIRFLOW_CELERY_PG_PORT:-5433}"
REDIS_PORT="${AIRFLOW_CELERY_REDIS_PORT:-6380}"
API_PORT="${AIRFLOW_CELERY_API_PORT:-8090}"
WORKERS="${AIRFLOW_CELERY_WORKERS:-2}"
PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
AS_POSTGRES=()
[ "$(id -u)" -eq 0 ] && AS_POSTGRES=(runuser -u postgres --)
HOST="$(hostname -f 2>/dev/null || hostname)"
mkdir -p "$STATE/logs" "$STATE/redis"
(umask 077 && mkdir -p "$STATE/secrets")

secret() {  # a generated password, created once
  [ -s "$STATE/secrets/$1" ] || (umask 077 && head -c 24 /dev/urandom | base64 -w0 | tr '+/' '-_' > "$STATE/secrets/$1")
  cat "$STATE/secrets/$1"
}
write_secret() { (umask 077 && printf '%s' "$2" > "$STATE/secrets/$1"); }

export AIRFLOW__CORE__EXECUTOR=CeleryExecutor
export AIRFLOW__API__PORT="$API_PORT"
export AIRFLOW__CORE__EXECUTION_API_SERVER_URL="http://127.0.0.1:$API_PORT/execution/"
# Plain values would win over the *_CMD ones (e.g. the SQLite URL a test environment sets).
unset AIRFLOW__DATABASE__SQL_ALCHEMY_CONN AIRFLOW__CELERY__BROKER_URL AIRFLOW__CELERY__RESULT_BACKEND
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_CMD="cat $STATE/secrets/sql_alchemy_conn"
export AIRFLOW__CELERY__BROKER_URL_CMD="cat $STATE/secrets/broker_url"
export AIRFLOW__CELERY__RESULT_BACKEND_CMD="cat $STATE/secrets/result_backend"

running() { [ -f "$STATE/$1.pid" ] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }

start_postgres() {
  [ -n "$PG_BIN" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
  local data="$STATE/postgres" password
  password="$(secret postgres-password)"
  if [ ! -s "$data/PG_VERSION" ]; then
    mkdir -p "$data"
    local pwfile="$STATE/.initdb-password"  # read by initdb, removed at once
    (umask 077 && printf '%s\n' "$password" > "$pwfile")
    if [ ${#AS_POSTGRES[@]} -gt 0 ]; then
      chown postgres "$data" "$pwfile"
      "${AS_POSTGRES[@]}" test -x "$data" || {
        echo "$data: the postgres user cannot reach this folder (a parent is not searchable); set AIRFLOW_CELERY_DIR" >&2; exit 1; }
    fi
    "${AS_POSTGRES[@]}" "$PG_BIN/initdb" -D "$data" -U airflow --auth=scram-sha-256 --pwfile="$pwfile" \
      >"$STATE/logs/initdb.out" 2>&1 || { cat "$STATE/logs/initdb.out" >&2; exit 1; }
    rm -f "$pwfile"
  fi
  if ! "${AS_POSTGRES[@]}" "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    "${AS_POSTGRES[@]}" "$PG_BIN/pg_ctl" -D "$data" -w -t 60 -l "$data/server.log" \
      -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$data" start >/dev/null
    echo "started postgresql (127.0.0.1:$PG_PORT, data $data)"
  fi
  PGPASSWORD="$password" "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U airflow -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = 'airflow'" | grep -q 1 ||
    PGPASSWORD="$password" "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U airflow -d postgres -qc "CREATE DATABASE airflow"
  write_secret sql_alchemy_conn "postgresql+psycopg2://airflow:$password@127.0.0.1:$PG_PORT/airflow"
  write_secret result_backend "db+postgresql+psycopg2://airflow:$password@127.0.0.1:$PG_PORT/airflow"
}

start_redis() {
  local password
  password="$(secret redis-password)"
  write_secret broker_url "redis://:$password@127.0.0.1:$REDIS_PORT/0"
  running redis && return
  (umask 077 && cat > "$STATE/secrets/redis.conf" <<CONF
bind 127.0.0.1
port $REDIS_PORT
requirepass $password
dir $STATE/redis
save ""
appendonly no
daemonize yes
pidfile $STATE/redis.pid
logfile $STATE/logs/redis.out
CONF
)
  redis-server "$STATE/secrets/redis.conf"
  for _ in $(seq 50); do running redis && break; sleep 0.1; done
  echo "started redis (127.0.0.1:$REDIS_PORT, pid $(cat "$STATE/redis.pid"))"
}

start_airflow() {  # NAME ARGS...: in its own session, so stop ends its children too
  local name="$1"; shift
  running "$name" && return
  setsid nohup "$@" >"$STATE/logs/$name.out" 2>&1 < /dev/null &
  echo $! >"$STATE/$name.pid"
  echo "started airflow $name (pid $!, log $STATE/logs/$name.out)"
}

stop_process() {  # NAME: SIGTERM to its session, SIGKILL after 30 s
  running "$1" || { rm -f "$STATE/$1.pid"; return; }
  local pid
  pid="$(cat "$STATE/$1.pid")"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$STATE/$1.pid"
  echo "stopped $1"
}

components() { echo api-server scheduler dag-processor; for i in $(seq "$WORKERS"); do echo "worker$i"; done; }

case "${1:-}" in
  start)
    start_postgres
    start_redis
    "$AIRFLOW" db migrate >"$STATE/logs/migrate.out" 2>&1 || { tail -n 20 "$STATE/logs/migrate.out" >&2; exit 1; }
    start_airflow api-server "$AIRFLOW" api-server --host 127.0.0.1 --port "$API_PORT"
    start_airflow scheduler "$AIRFLOW" scheduler --skip-serve-logs
    start_airflow dag-processor "$AIRFLOW" dag-processor
    for i in $(seq "$WORKERS"); do
      # Several workers on one host: each its own Celery node name, recorded as its task
      # instances' hostname (rosetta_airflow.celery_hosts); no log server (logs are local files).
      # The solo pool (one task at a time, in the worker's own process): the prefork pool's
      # processes are daemonic, and a daemonic process may not start the child process each
      # document stage runs in (pipeline/batch/isolation.py). More parallelism: more workers.
      ROSETTA_CELERY_HOSTNAME="worker$i@$HOST" AIRFLOW__CORE__HOSTNAME_CALLABLE=rosetta_airflow.celery_hosts.task_hostname \
        AIRFLOW__CELERY__POOL=solo start_airflow "worker$i" "$AIRFLOW" celery worker --celery-hostname "worker$i@$HOST" \
        --concurrency 1 --skip-serve-logs
    done
    echo "UI: http://127.0.0.1:$API_PORT (users admin and viewer; passwords in $PASSWORDS)"
    ;;
  stop)
    for name in $(components | tac); do stop_process "$name"; done
    stop_process redis
    if [ -n "$PG_BIN" ] && [ -s "$STATE/postgres/PG_VERSION" ] &&
       "${AS_POSTGRES[@]}" "$PG_BIN/pg_ctl" -D "$STATE/postgres" status >/dev/null 2>&1; then
      "${AS_POSTGRES[@]}" "$PG_BIN/pg_ctl" -D "$STATE/postgres" -m fast -w stop >/dev/null
      echo "stopped postgresql"
    fi
    ;;
  status)
    status=0
    for name in redis $(components); do
      if running "$name"; then echo "$name: pid $(cat "$STATE/$name.pid")"; else echo "$name: stopped"; status=1; fi
    done
    if [ -s "$STATE/postgres/PG_VERSION" ] && "${AS_POSTGRES[@]}" "$PG_BIN/pg_ctl" -D "$STATE/postgres" status >/dev/null 2>&1; then
      echo "postgresql: running on 127.0.0.1:$PG_PORT"
    else
      echo "postgresql: stopped"; status=1
    fi
    exit $status
    ;;
  env)
    echo "unset AIRFLOW__DATABASE__SQL_ALCHEMY_CONN AIRFLOW__CELERY__BROKER_URL AIRFLOW__CELERY__RESULT_BACKEND"
    for name in AIRFLOW_HOME AIRFLOW_CONFIG AIRFLOW__CORE__EXECUTOR AIRFLOW__API__PORT AIRFLOW__CORE__EXECUTION_API_SERVER_URL \
                AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_CMD AIRFLOW__CELERY__BROKER_URL_CMD AIRFLOW__CELERY__RESULT_BACKEND_CMD; do
      echo "export $name='${!name}'"
    done
    echo "export AIRFLOW__API_AUTH__JWT_SECRET=\"\$(cat '$AIRFLOW_STATE/jwt_secret')\""
    ;;
  *)
    echo "usage: $0 start|stop|status|env" >&2
    exit 2
    ;;
esac
