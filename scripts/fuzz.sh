#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (-fsanitize=fuzzer,address,
# undefined; the library with fuzzer-no-link for coverage) in build-fuzz, then
# runs each for ${FUZZ_SECONDS:-60} seconds from its seed corpus
# (fuzz/corpus/<target>/ plus fuzz/regressions/<target>/). Zero findings are
# required: any crash, sanitizer report, timeout, leak or out-of-memory makes
# this script fail; the input is saved under build-fuzz/artifacts/<target>/
# (copy it to fuzz/regressions/<target>/ once fixed, so the replay test keeps
# it). Dictionaries fuzz/<target>.dict are used when present. New coverage
# inputs go to build-fuzz/work/<target>/, never to fuzz/corpus.
# Needs the build dependencies scripts/test.sh installs.
# Usage: [FUZZ_SECONDS=60] [FUZZ_TARGETS="npy npz safetensors index config pickle pt gguf"] [BUILD_JOBS=N] scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${FUZZ_SECONDS:-60}
read -r -a TARGETS <<<"${FUZZ_TARGETS:-npy npz safetensors index config pickle pt gguf}"
BUILD=build-fuzz

# clang and its runtime (libFuzzer, sanitizers) from Debian.
source scripts/apt_packages.sh
ensure_packages clang libclang-rt-14-dev

start=$(date +%s)
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link $SAN" -DCMAKE_C_FLAGS="$SAN" \
  -DATTN_BUILD_FUZZ=ON -DATTN_BUILD_TESTS=OFF -DATTN_BUILD_BENCH=OFF -DATTN_NATIVE=OFF >/dev/null
cmake --build "$BUILD" -j"${BUILD_JOBS:-$(nproc)}" --target "${TARGETS[@]/#/fuzz_}" >/dev/null

echo "fuzz: built in $(($(date +%s) - start)) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
total_runs=0
for t in "${TARGETS[@]}"; do
  work="$BUILD/work/$t" artifacts="$BUILD/artifacts/$t/" log="$BUILD/fuzz_$t.log"
  mkdir -p "$work" "$artifacts" "fuzz/regressions/$t"
  [[ -x "$BUILD/fuzz/fuzz_$t" ]] || { echo "fuzz: $BUILD/fuzz/fuzz_$t was not built" >&2; exit 2; }
  dict=()
  [[ -f "fuzz/$t.dict" ]] && dict=(-dict="fuzz/$t.dict")
  status=0
  "$BUILD/fuzz/fuzz_$t" "$work" "fuzz/corpus/$t" "fuzz/regressions/$t" "${dict[@]}" \
    -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts" >"$log" 2>&1 || status=$?
  # libFuzzer's last summary line: "Done 123456 runs in 60 second(s)".
  done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1 || true)
  runs=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\1/' <<<"$done_line")
  secs=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\2/' <<<"$done_line")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 || true)
  if [[ $status -ne 0 || -z $done_line ]]; then
    failed+=("$t")
    echo "fuzz_$t: FINDING (exit $status) after ${runs:-?} runs; log: $log; input(s):" >&2
    ls "$artifacts" >&2 || true
    grep -E 'ERROR: |runtime error|SUMMARY' "$log" | head -5 >&2 || true
  else
    total_runs=$((total_runs + runs))
    echo "fuzz_$t: $runs executions in $secs s, ${cov:-cov: ?}, no findings"
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#TARGETS[@]} targets, $total_runs executions, no findings"
