#!/usr/bin/env bash
# The first command of the README: installs what attn-run needs to run, from
# Debian 12's packages (only what is missing), and builds the tool and its
# picture module in ./build (Release). No test is built (scripts/test.sh
# installs the test tools and builds the tests).
# Usage: scripts/setup.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/apt_packages.sh
ensure_packages "${TOOL_PACKAGES[@]}"

# Ninja for a new build folder: it starts the executable's units beside the
# library's, where Makefiles wait for libattn.a (an existing folder keeps the
# generator it was made with).
generator=()
if [[ ! -f build/CMakeCache.txt ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_TESTS=OFF \
  -DATTN_BUILD_BENCH=OFF "$@" >/dev/null
cmake --build build -j"$(nproc)" --target attn-run
