#!/usr/bin/env bash
# Installs the Debian packages relpos needs, only those missing. Idempotent; safe to re-run.
# Run as root (or with sudo available). Used by `make build`, `make run`, `make test`.
# RELPOS_MPI=1 adds Open MPI for the data-parallel build (`make mpi`, docs/distributed.md); nothing else
# needs it.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config ninja-build
  xtensor-dev xtl-dev libxsimd-dev libxtensor-blas-dev libopenblas-dev
  catch2 libfmt-dev libyaml-cpp-dev libcli11-dev
  libsentencepiece-dev zlib1g-dev nlohmann-json3-dev libboost-math-dev
  gnuplot-nox
  python3-jinja2 python3-yaml
)
if [ "${RELPOS_MPI:-0}" = 1 ]; then
  PKGS+=(libopenmpi-dev openmpi-bin)
fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "relpos: installing missing Debian packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "relpos: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "relpos: packages installed."
