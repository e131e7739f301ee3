# Sourced by scripts/airflow-local.sh and scripts/airflow-celery.sh (with ROOT set): what every
# Airflow process of this checkout shares. The project's airflow.cfg (unless AIRFLOW_HOME and
# AIRFLOW_CONFIG say otherwise). One JWT secret (else task workers are refused
# with "Signature verification failed"), generated once into .airflow/jwt_secret (mode 0600), and
# the passwords of the UI's users (airflow.cfg's simple_auth_manager_users), generated into
# .airflow/simple_auth_manager_passwords.json, so Airflow never prints them to its log.
export AIRFLOW_HOME="${AIRFLOW_HOME:-$ROOT}" AIRFLOW_CONFIG="${AIRFLOW_CONFIG:-$ROOT/airflow.cfg}"
AIRFLOW_STATE="$ROOT/.airflow"
mkdir -p "$AIRFLOW_STATE/logs"
[ -s "$AIRFLOW_STATE/jwt_secret" ] || (umask 077 && head -c 64 /dev/urandom | base64 -w0 > "$AIRFLOW_STATE/jwt_secret")
PASSWORDS="$AIRFLOW_STATE/simple_auth_manager_passwords.json"
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
export AIRFLOW__API_AUTH__JWT_SECRET="$(cat "$AIRFLOW_STATE/jwt_secret")"
