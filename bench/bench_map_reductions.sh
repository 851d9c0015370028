#!/usr/bin/env bash
# Issue 26's bench: a Llama-3-8B-shaped layer (bench/make_llama_layers.py: C 4096, 32 heads,
# 8 KV heads, BF16, causal) at S tokens (default 32768), without maps, with and without
# `--top-k 32 --summary`, interleaved REPS times: run.json's compute_ms, the process's wall and
# CPU time (user + sys, which other work on the machine does not stretch) and peak RSS.
# Usage: [S=32768] [REPS=2] bench/bench_map_reductions.sh [build dir] [data dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(realpath "${1:-build}")/attn-run"
S="${S:-32768}" REPS="${REPS:-2}"
DATA="${2:-/tmp/attn-bench-maps-$S}"
if [ ! -f "$DATA/x.npy" ]; then
  /usr/bin/python3 bench/make_llama_layers.py "$DATA" 1 "$S"
  /usr/bin/python3 -c "import numpy as np, sys; h = np.load(sys.argv[1] + '/hidden.npy', mmap_mode='r'); np.save(sys.argv[1] + '/x.npy', np.ascontiguousarray(h[0]))" "$DATA"
fi
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(grep -q avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2), $(nproc) cores; S = $S"
printf '%-4s %-32s %10s %10s %8s %10s\n' rep flags compute_ms wall_s cpu_s peak_MB
for r in $(seq "$REPS"); do
  for f in "--no-attn" "--no-attn --top-k 32 --summary"; do
    rm -rf "$DATA/o"
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S %M" -o "$DATA/time.txt" "$BIN" -q --model "$DATA/model" --layer 0 \
      --input "$DATA/x.npy" -o "$DATA/o" $f
    read -r wall user sys rss < "$DATA/time.txt"
    c=$(/usr/bin/python3 -c "import json,sys;print(round(json.load(open(sys.argv[1]))['timings']['compute_ms']))" "$DATA/o/run.json")
    printf '%-4s %-32s %10s %10s %8.1f %10d\n' "$r" "$f" "$c" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')" $((rss / 1024))
  done
done
rm -rf "$DATA/o"
