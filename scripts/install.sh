#!/usr/bin/env bash
# Install everything Rosetta needs on a Debian bookworm machine, reusing what is cached:
#   1. Debian packages (Tesseract + vertical models, CJK fonts, poppler; Redis and PostgreSQL for Celery)
#   2. the Python environment in .venv (pinned by requirements.txt, plus requirements-dev.txt's
#      test and benchmark tools) with rosetta installed
#   3. the Weaviate server, built from its Go module (version pinned in pipeline/defaults.yaml)
#   4. the sample corpus (Debian documentation PDFs, sha256-checked; scans rendered)
# Every step is skipped when its result is already there, so a second run takes seconds.
#   scripts/install.sh          everything
#   scripts/install.sh python   steps 1-2 only (what `make test-fast` needs)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
step() { printf '\n==> %s\n' "$*"; }

APT_PACKAGES=(
  tesseract-ocr tesseract-ocr-jpn tesseract-ocr-jpn-vert tesseract-ocr-chi-sim tesseract-ocr-chi-sim-vert
  tesseract-ocr-chi-tra tesseract-ocr-chi-tra-vert tesseract-ocr-deu tesseract-ocr-spa
  fonts-noto-cjk fonts-dejavu-core poppler-utils  # DejaVu: the Latin pages of the OCR degradation suite
  # containers (docker mode, image builds) with podman: no Docker engine is needed
  podman buildah debootstrap runc uidmap slirp4netns fuse-overlayfs netavark aardvark-dns
  # the QA review browser test (tests/test_qa_review_ui.py): headless Chromium and its driver
  chromium chromium-driver
  # Japanese TeX engines that typeset the vertical text-layer fixtures (scripts/make_vertical_text_pdfs.py)
  texlive-lang-japanese texlive-luatex texlive-latex-recommended
  # Airflow with the CeleryExecutor on one machine (scripts/airflow-celery.sh): broker and metadata DB
  redis-server postgresql
)

step "Debian packages"
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# The sample corpus is fetched with `apt-get download`, which needs package lists.
if [ ${#missing[@]} -gt 0 ] || ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then
  $SUDO apt-get update -q
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "all ${#APT_PACKAGES[@]} packages present"
fi

step "Python environment (.venv)"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=".venv/.requirements.sha256"
want="$(sha256sum requirements.txt requirements-dev.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements-dev.txt
  .venv/bin/pip install -q --no-deps -e .
  echo "$want" > "$stamp"
else
  echo "requirements unchanged since the last install"
fi

[ "${1:-all}" = python ] && exit 0

step "Weaviate server (built from its Go module)"
read -r WEAVIATE_VERSION WEAVIATE_BINARY < <(.venv/bin/python -c \
  "from pipeline.config import load_settings; from pipeline.stores.embedded_server import embedded_binary_path as p; s = load_settings(); print(s.weaviate.version, p(s))" 2>/dev/null)
if [ -x "$WEAVIATE_BINARY" ]; then
  echo "weaviate-server v$WEAVIATE_VERSION cached at $WEAVIATE_BINARY"
else
  command -v go >/dev/null || { echo "Go is needed to build Weaviate (https://go.dev/dl/); none on PATH" >&2; exit 1; }
  echo "building weaviate-server v$WEAVIATE_VERSION with $(go version) (takes ~6 min on 2 cores)"
  build_dir="$(mktemp -d)"
  # GOTOOLCHAIN=local: never fetch another Go; the pinned release builds with this one.
  GOBIN="$build_dir" GOTOOLCHAIN=local GOFLAGS=-mod=mod \
    go install "github.com/weaviate/weaviate/cmd/weaviate-server@v$WEAVIATE_VERSION"
  mkdir -p "$(dirname "$WEAVIATE_BINARY")"
  mv "$build_dir/weaviate-server" "$WEAVIATE_BINARY"
  rmdir "$build_dir"
  echo "installed $WEAVIATE_BINARY"
fi

step "Sample corpus"
.venv/bin/python scripts/fetch_sample_corpus.py
