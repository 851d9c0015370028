#!/usr/bin/env bash
# The portable build (-DATTN_NATIVE=OFF: the .deb's; OpenBLAS multiplies, its kernels chosen at
# run time) on the tests its code paths change: the kernels, the attention against the plain
# reference, the golden sets against PyTorch, and the statistics' bits for any --threads.
# scripts/test.sh tests the machine's widest kernels only; CI runs this after it (about 2.5
# minutes on 2 cores, 7 tests). Usage: scripts/test_portable.sh [extra ctest options]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/apt_packages.sh
ensure_packages "${TOOL_PACKAGES[@]}" "${TEST_PACKAGES[@]}"

tests=(test_kernels test_attention test_key_stats test_head_stats test_golden test_golden_folders
       test_golden_variants)
cmake -S . -B build-portable -DCMAKE_BUILD_TYPE=Release -DATTN_NATIVE=OFF -DATTN_BUILD_TESTS=ON \
  -DATTN_BUILD_BENCH=OFF >/dev/null
cmake --build build-portable -j"$(nproc)" --target "${tests[@]}" >/dev/null
ctest --test-dir build-portable --output-on-failure -j"$(nproc)" \
  -R "^($(IFS='|'; echo "${tests[*]}"))\$" "$@"
