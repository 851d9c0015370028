#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DATTN_SANITIZE=ON: -fsanitize=address,undefined -fno-sanitize-recover=all)
# in build-asan and runs the whole test suite there; any sanitizer report fails
# the test that triggered it, so this script fails. Needs the build
# dependencies scripts/test.sh installs.
# Usage: [BUILD_JOBS=N] [CTEST_JOBS=N] scripts/sanitize.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=build-asan
start=$(date +%s)
# Debug keeps assert() on; -O1 (the level ASan's docs recommend) and -g1 (line
# tables: enough for symbolized reports) keep both the build and the run short.
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DATTN_SANITIZE=ON -DATTN_NATIVE=ON \
  -DATTN_BUILD_BENCH=OFF -DATTN_BUILD_TESTS=ON >/dev/null
if ! cmake --build "$BUILD" -j"${BUILD_JOBS:-$(nproc)}" >"$BUILD/build.log" 2>&1; then
  tail -50 "$BUILD/build.log" >&2
  echo "sanitize: the build failed (whole log: $BUILD/build.log)" >&2
  exit 1
fi
built=$(date +%s)

# Every report is fatal; leaks count too. The test binaries spawn attn-run, which
# inherits these.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$BUILD" --output-on-failure -j"${CTEST_JOBS:-$(nproc)}" "$@"
echo "sanitize: build $((built - start)) s, tests $(($(date +%s) - built)) s"
