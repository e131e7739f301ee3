#!/usr/bin/env bash
# Containers without a Docker engine (docs/decisions.md section 4): podman + buildah as root, with
# their configuration and image storage under .containers/ (git-ignored, cacheable by CI).
#
#   scripts/podman-setup.sh env            print the exports that point podman at .containers/
#   scripts/podman-setup.sh base           make localhost/rosetta-base (debootstrap bookworm + python3) if missing
#   scripts/podman-setup.sh images [S...]  base, then the stage images (all, or the stages named) via docker/build.sh
#   scripts/podman-setup.sh start          start the Docker-compatible API socket (.containers/podman.sock)
#   scripts/podman-setup.sh stop           stop it
#
# Needs the Debian packages podman buildah debootstrap runc uidmap slirp4netns fuse-overlayfs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${ROSETTA_CONTAINERS_DIR:-$ROOT/.containers}"
BASE_IMAGE="localhost/rosetta-base"
SOCKET="${PODMAN_SOCKET:-$DIR/podman.sock}"   # start/stop: another path for a private service
PIDFILE="${SOCKET%.sock}.pid"

write_conf() {
  mkdir -p "$DIR/storage" "$DIR/run" "$DIR/tmp"
  # The folder ignores itself, so nothing in it is ever committed.
  [ -f "$DIR/.gitignore" ] || echo '*' > "$DIR/.gitignore"
  # crun fails here (cgroup hybrid mode) and setrlimit to the usual defaults is denied.
  cat > "$DIR/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"

[network]
network_backend = "netavark"
EOF
  cat > "$DIR/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$DIR/storage"
runroot = "$DIR/run"
EOF
}

export_env() {
  export CONTAINERS_CONF="$DIR/containers.conf"
  export CONTAINERS_STORAGE_CONF="$DIR/storage.conf"
  export TMPDIR="$DIR/tmp"
}

has_image() { podman image exists "$1"; }

make_base() {
  if has_image "$BASE_IMAGE"; then
    echo "$BASE_IMAGE present"
    return
  fi
  # No registry is reachable: the base is a minimal bookworm with Debian's python3 (3.11),
  # the same Python as the official python:3.11-slim-bookworm that users build on.
  local rootfs
  rootfs="$(mktemp -d "$DIR/tmp/rootfs.XXXXXX")"
  echo "debootstrap bookworm into $rootfs"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$rootfs" \
    http://deb.debian.org/debian >"$DIR/tmp/debootstrap.log" 2>&1 \
    || { tail -20 "$DIR/tmp/debootstrap.log" >&2; rm -rf "$rootfs"; exit 1; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE_IMAGE"
  rm -rf "$rootfs"
}

start_service() {
  if [ -S "$SOCKET" ] && [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    echo "podman service already listening on unix://$SOCKET"
    return
  fi
  rm -f "$SOCKET"
  # exec: the recorded pid is podman's own, not a wrapper shell's.
  nohup bash -c "exec podman system service --time=0 unix://$SOCKET" >"${SOCKET%.sock}.log" 2>&1 &
  echo $! > "$PIDFILE"
  for _ in $(seq 50); do
    [ -S "$SOCKET" ] && { echo "podman service listening on unix://$SOCKET (pid $(cat "$PIDFILE"))"; return; }
    sleep 0.2
  done
  echo "podman service did not start; see ${SOCKET%.sock}.log" >&2
  exit 1
}

stop_service() {
  if [ -f "$PIDFILE" ]; then
    kill "$(cat "$PIDFILE")" 2>/dev/null || true
    rm -f "$PIDFILE" "$SOCKET"
    echo "podman service stopped"
  fi
}

write_conf
export_env
case "${1:-}" in
  env)
    echo "export CONTAINERS_CONF=$CONTAINERS_CONF CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF TMPDIR=$TMPDIR"
    echo "export ROSETTA__CONTAINERS__DOCKER_URL=unix://$SOCKET"
    ;;
  base) make_base ;;
  images)
    shift
    make_base
    # pip inside the build trusts what pip trusts here (a proxy's CA, if any).
    ENGINE=podman BASE_IMAGE="$BASE_IMAGE" BUILD_CA_BUNDLE="${BUILD_CA_BUNDLE:-${PIP_CERT:-}}" \
      "$ROOT/docker/build.sh" "$@"
    ;;
  start) start_service ;;
  stop) stop_service ;;
  *) sed -n '2,11p' "$0" >&2; exit 2 ;;
esac
