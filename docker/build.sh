#!/usr/bin/env bash
# Build the stage images (all, or the images named) with docker, or podman (ENGINE=podman):
# one image per docker/requirements/<image>.txt, which docker/requirements.py writes from the
# stage table (pipeline/stages/__init__.py); `batch` is the image of the batch steps.
#   docker/build.sh                      every stage, on the official python:3.11-slim-bookworm
#   ENGINE=podman BASE_IMAGE=localhost/rosetta-base docker/build.sh structure
# Names: $REGISTRY/$IMAGE_PREFIX<stage>:$TAG, TAG = the pipeline version (git-<commit>, or
# ROSETTA_PIPELINE_VERSION), which is what execution.mode docker/kubernetes runs by default.
# BUILD_CA_BUNDLE (podman): a CA bundle for pip behind a TLS-intercepting proxy, mounted into
# the build's RUN steps only.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENGINE="${ENGINE:-docker}"
BASE_IMAGE="${BASE_IMAGE:-docker.io/library/python:3.11-slim-bookworm}"
REGISTRY="${REGISTRY:-localhost}"
IMAGE_PREFIX="${IMAGE_PREFIX:-rosetta-}"
TAG="${TAG:-${ROSETTA_PIPELINE_VERSION:-git-$(git -C "$ROOT" rev-parse --short=12 HEAD)}}"
build_opts=(--network=host)
if [ -n "${BUILD_CA_BUNDLE:-}" ]; then
  [ "$ENGINE" = podman ] || { echo "BUILD_CA_BUNDLE needs ENGINE=podman (docker build has no -v)" >&2; exit 2; }
  build_opts+=(-v "$BUILD_CA_BUNDLE:/run/build-ca.crt:ro")
fi
STAGES=()
for file in "$ROOT"/docker/requirements/*.txt; do STAGES+=("$(basename "$file" .txt)"); done
[ $# -gt 0 ] && STAGES=("$@")

# A small build context (mtimes kept, so unchanged files hit the layer cache).
context="$(mktemp -d "${TMPDIR:-/tmp}/rosetta-context.XXXXXX")"
trap 'rm -rf "$context"' EXIT
cp -p "$ROOT/requirements.txt" "$ROOT/pyproject.toml" "$ROOT/README.md" "$context/"
mkdir -p "$context/docker"
cp -rp "$ROOT/docker/requirements" "$context/docker/"
(cd "$ROOT" && tar -c --exclude=__pycache__ --exclude='*.pyc' pipeline) | tar -x -C "$context"

for stage in "${STAGES[@]}"; do
  [ -f "$ROOT/docker/requirements/$stage.txt" ] || { echo "unknown stage $stage" >&2; exit 2; }
  image="$REGISTRY/$IMAGE_PREFIX$stage:$TAG"
  started=$(date +%s)
  "$ENGINE" build "${build_opts[@]}" -f "$ROOT/docker/Dockerfile" \
    --build-arg BASE_IMAGE="$BASE_IMAGE" --build-arg STAGE="$stage" --build-arg PIPELINE_VERSION="$TAG" \
    -t "$image" "$context" >"$context/build-$stage.log" 2>&1 \
    || { tail -40 "$context/build-$stage.log" >&2; echo "building $image failed" >&2; exit 1; }
  size=$("$ENGINE" image inspect --format '{{.Size}}' "$image")
  echo "$image  $((size / 1000000)) MB  built in $(( $(date +%s) - started )) s"
done
