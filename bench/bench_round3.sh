#!/usr/bin/env bash
# Issue 29 ("Faster, round 3") in one run: every target's measurement, one after the other on
# the same machine, each by its own script (read them for what they time and check):
#   1, 3  bench_peers.sh        GPT-2-small B=4 S=1024 causal and the Llama-3-8B-shaped layer at
#                               S=2048: attn-run cold against T_min, T_peak, ONNX Runtime and
#                               PyTorch, every peer's output checked against attn-run's
#   2     bench_map_reductions  the Llama layer at S=2048 with the maps to disk and with
#                               --top-k 32 --summary, then at LONG_S (default 32768; LONG_S=""
#                               skips it: about 5 minutes a repetition) with --top-k 32 --summary
#   5     bench_layers.sh       --layer all over 32 Llama layers at S=2048 (writes a 2.7 GB folder)
#   4     bench_load_bf16.sh    one BF16 layer's load against a pread of its bytes (the folder of 5)
#         bench_dequant         the GGUF dequantizers' rate beside a memset
# Usage: [REPS=5] [LONG_S=32768] bench/bench_round3.sh [build dir]   (a -DATTN_BUILD_BENCH=ON build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="$(realpath "${1:-build}")"
REPS="${REPS:-5}"
LONG_S="${LONG_S-32768}"
for t in attn-run bench/bench_forward bench/bench_dequant; do
  [[ -x "$BUILD/$t" ]] || { echo "bench_round3: build $t in $BUILD first (-DATTN_BUILD_BENCH=ON)" >&2; exit 1; }
done
section() { printf '\n== %s ==\n' "$*"; }
section "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(grep -q avx512f /proc/cpuinfo && echo 'AVX-512, 16 float lanes' || echo 'AVX2, 8 float lanes'), $(nproc) cores; $(date -u '+%F %H:%M UTC')"
section "Targets 1 and 3: the Llama layer <= 1.1x T_min; GPT-2-small <= 1.15x T_min"
REPS="$REPS" SHAPES="4x1024x1" LLAMA_S=2048 bench/bench_peers.sh "$BUILD"
section "Target 2: maps to disk and --top-k 32 --summary at S=2048, <= 1.2x the run without maps"
MAPS=1 S=2048 REPS=3 bench/bench_map_reductions.sh "$BUILD"
if [[ -n "$LONG_S" ]]; then
  section "Target 2: --top-k 32 --summary at S=$LONG_S, <= 1.2x the run without maps"
  S="$LONG_S" REPS=2 bench/bench_map_reductions.sh "$BUILD"
fi
section "Target 5: --layer all over 32 layers at S=2048, total <= 1.1x the sum of the compute"
LAYERS=32 S=2048 REPS=2 bench/bench_layers.sh "$BUILD"
section "Target 4: one BF16 layer's load <= 1.2x a pread of its bytes"
bench/bench_load_bf16.sh "$BUILD"
section "Target 4: GGUF dequantization >= 2 GB/s of float32 a core"
"$BUILD/bench/bench_dequant"
