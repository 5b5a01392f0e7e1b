#!/usr/bin/env bash
# Installs every Debian package that building, testing, benchmarking and fuzzing tfdiag need.
# Idempotent: packages already installed are skipped, and apt is not touched when none is missing.
# podman and mmdebstrap build the agent's image (`make image`), which tests/image_test.cc checks
# in `make test`.
# Usage: scripts/bootstrap.sh            (as root, or with sudo available)
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git
  rapidjson-dev libfmt-dev libcli11-dev zlib1g-dev
  libgtest-dev libgmock-dev
  prometheus-cpp-dev
  libbpf-dev clang llvm bpftool libelf-dev
  libimgui-dev libglfw3-dev libstb-dev xvfb xauth libgl1-mesa-dri
  libclang-rt-14-dev
  python3 gzip bc time
  libyaml-dev python3-yaml python3-jsonschema
  libabsl-dev libomp-dev
  libisal-dev
  libcurl4-openssl-dev prometheus victoria-metrics
  libprotobuf-dev protobuf-compiler
  podman mmdebstrap
  libsimdjson-dev
  libarchive-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "bootstrap: need root to install: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "bootstrap: done"
