#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DATTN_SANITIZE=ON: -fsanitize=address,undefined -fno-sanitize-recover=all)
# in build-asan and runs the whole test suite there; any sanitizer report fails
# the test that triggered it, so this script fails. Needs the build
# dependencies scripts/setup.sh installs.
# Usage: [BUILD_JOBS=N] [CTEST_JOBS=N] scripts/sanitize.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=build-asan
start=$(date +%s)
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_SANITIZE=ON -DATTN_NATIVE=ON \
  -DATTN_BUILD_BENCH=OFF -DATTN_BUILD_TESTS=ON >/dev/null
cmake --build "$BUILD" -j"${BUILD_JOBS:-$(nproc)}" >/dev/null
built=$(date +%s)

# Every report is fatal; leaks count too. The test binaries spawn attn-run, which
# inherits these.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$BUILD" --output-on-failure -j"${CTEST_JOBS:-$(nproc)}" "$@"
echo "sanitize: build $((built - start)) s, tests $(($(date +%s) - built)) s"
