#!/usr/bin/env bash
# The README's test command: installs what the tool and its tests need (only
# what is missing), builds everything in ./build (Release: the tool, the tests
# and the benchmarks) and runs the whole test suite.
# Usage: scripts/test.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/apt_packages.sh
ensure_packages "${TOOL_PACKAGES[@]}" "${TEST_PACKAGES[@]}"

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_TESTS=ON -DATTN_BUILD_BENCH=ON >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
