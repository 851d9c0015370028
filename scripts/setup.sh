#!/usr/bin/env bash
# Installs what attn-run needs from Debian 12's packages (only what is
# missing), then configures and builds it in ./build (Release).
# Usage: scripts/setup.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake g++ make libcli11-dev nlohmann-json3-dev libxtensor-dev xtl-dev libxsimd-dev
          libxtensor-blas-dev libopenblas-dev libspdlog-dev doctest-dev zlib1g-dev
          pkg-config libcairo2-dev)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)"
