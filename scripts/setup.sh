#!/usr/bin/env bash
# Installs what attn-run needs from Debian 12's packages (only what is
# missing), then configures and builds it in ./build (Release).
# Usage: scripts/setup.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake g++ make libcli11-dev nlohmann-json3-dev libxtensor-dev xtl-dev libxsimd-dev
          libxtensor-blas-dev libopenblas-dev libspdlog-dev doctest-dev zlib1g-dev
          pkg-config libcairo2-dev)
# --plot: fontconfig finds a font for each script (Noto: CJK, Thai, Devanagari, ...);
# the browser test of --plot FILE.html loads the page in chromium.
PACKAGES+=(libfontconfig-dev fonts-dejavu-core fonts-noto-core fonts-noto-cjk chromium)

# The end-to-end tests' tools: a pseudo-terminal (script), the man page check
# (groff), the .deb (dpkg-dev's dpkg-shlibdeps) and a single-node Slurm
# (tests/slurm starts munged, slurmctld and slurmd itself when run as root);
# NumPy, which reads the .npz that --dump-weights FILE.npz writes (test_cli_dump);
# clang-format, which CI runs over the C++ (scripts/format_check.sh).
TEST_PACKAGES=(bsdutils groff-base man-db dpkg-dev munge slurmctld slurmd slurm-client
               python3-numpy clang-format)

source scripts/apt_packages.sh
ensure_packages "${PACKAGES[@]}" "${TEST_PACKAGES[@]}"

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)"
