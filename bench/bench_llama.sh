#!/usr/bin/env bash
# Issue 29's Llama layer: a Llama-3-8B-shaped attention layer (C=4096, H=32, Hkv=8, D=128,
# RoPE theta 5e5 with llama3 scaling, causal, B=1, S=2048) from a BF16 model folder with random
# weights (bench/make_llama_bench.py, in a temporary folder), run as `attn-run --model DIR
# --layer 0 --no-attn`: cold compute (run.json's compute_ms of a fresh process) against
#   T_min   the layer's FLOPs / the OpenBLAS sgemm rate (4096^3) measured in the same run
#   T_peak  the layer's FLOPs / the machine's FMA peak (registers only, every thread)
# (each rate the best of three measurements: a busy neighbour only ever lowers a rate).
# With a second build folder (e.g. main's, built apart), the two binaries run interleaved,
# alternating which goes first, so a burst from a neighbour on the shared host hits both alike;
# their contexts must agree within 1e-5 of the output's scale. Prints each binary's median,
# min and max of REPS cold runs, the median CPU time (user + sys) of its whole processes (which a
# neighbour's load does not stretch as it does the wall time), and the CPU with its vector width.
# Usage: [REPS=9] [S=2048] [THREADS=N] [QUIET_WAIT=30] bench/bench_llama.sh [build dir] [before build dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="$(realpath "${1:-build}")"
BEFORE="${2:+$(realpath "$2")}"
REPS="${REPS:-9}"
S="${S:-2048}"
THREADS="${THREADS:-$(nproc)}"
PY=/usr/bin/python3
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

for b in "$BUILD" ${BEFORE:+"$BEFORE"}; do
  [[ -x "$b/attn-run" && -x "$b/bench/bench_forward" ]] ||
    { echo "bench_llama: build attn-run and bench_forward in $b first (-DATTN_BUILD_BENCH=ON)" >&2; exit 1; }
done
$PY bench/make_llama_bench.py "$WORK/llama" "$S"

cpu=$(lscpu | sed -nE 's/^Model name: *//p' | head -1)
flags=$(lscpu | sed -nE 's/^Flags: *//p')
width="SSE (128-bit)"
grep -qw avx2 <<<"$flags" && width="AVX2 (256-bit)"
grep -qw avx512f <<<"$flags" && width="AVX-512 (512-bit)"

# Before each pair of runs and each rate measurement, up to QUIET_WAIT seconds (default 30;
# 0 = never) until the cores have been at least 90% idle for half a second: on a shared host,
# runs start in the neighbours' pauses.
QUIET_WAIT="${QUIET_WAIT:-30}"
idle_share() {  # idle share of every core over half a second, from /proc/stat
  local a b
  a=($(head -1 /proc/stat)); sleep 0.5; b=($(head -1 /proc/stat))
  awk -v i0="${a[4]}" -v i1="${b[4]}" -v t0="$(printf '%s+' "${a[@]:1}")0" \
      -v t1="$(printf '%s+' "${b[@]:1}")0" \
      'BEGIN {n = split(t0, x, "+"); split(t1, y, "+"); s = 0; for (k = 1; k <= n; k++) s += y[k] - x[k];
              print (s > 0) ? (i1 - i0) / s : 1}'
}
wait_quiet() {
  local t=0
  while (( t < QUIET_WAIT * 2 )) && awk -v f="$(idle_share)" 'BEGIN {exit !(f < 0.9)}'; do
    t=$((t + 1))
  done
}
rate=0 peak=0 lanes=""
best() { awk -v a="$1" -v b="$2" 'BEGIN {print (b > a) ? b : a}'; }
for _ in 1 2 3; do
  wait_quiet
  rates=$(OPENBLAS_NUM_THREADS=$THREADS "$BUILD/bench/bench_forward" --B 1 --S 128 --causal 1 \
            --maps 0 --reps 1 --no-validate --threads "$THREADS")
  rate=$(best "$rate" "$(grep 'OpenBLAS sgemm' <<<"$rates" | sed -E 's/.*: ([0-9.]+) GFLOP\/s.*/\1/')")
  peak_line=$(grep 'FMA peak' <<<"$rates")
  peak=$(best "$peak" "$(sed -E 's/.*: ([0-9.]+) GFLOP\/s.*/\1/' <<<"$peak_line")")
  lanes=$(sed -E 's/.*, ([0-9]+) lanes.*/\1/' <<<"$peak_line")
done
flops=$($PY -c "
S, C, H, Hkv, D = $S, 4096, 32, 8, 128
proj = 2.0 * S * C * (H + 2 * Hkv) * D + 2.0 * S * H * D * C   # q|k|v and o_proj
att = 4.0 * H * S * S * D / 2                                  # q k^T and p v, causal half
print(proj + att)")
tmin=$(awk "BEGIN {printf \"%.1f\", $flops / ($rate * 1e9) * 1e3}")
tpeak=$(awk "BEGIN {printf \"%.1f\", $flops / ($peak * 1e9) * 1e3}")
echo "machine: $cpu, $(nproc) cores, $width; attn-run built for $lanes float lanes; threads $THREADS"
echo "Llama-3-8B-shaped layer, BF16 folder, B=1 S=$S causal: $(awk "BEGIN {printf \"%.1f\", $flops / 1e9}") GFLOP;" \
  "OpenBLAS sgemm $rate GFLOP/s -> T_min $tmin ms; FMA peak $peak GFLOP/s -> T_peak $tpeak ms"

declare -A cold load cpu
run_one() {  # $1 = name, $2 = build dir
  local out="$WORK/out_$1"
  /usr/bin/time -f "%U %S" -o "$WORK/time.txt" "$2/attn-run" -q --model "$WORK/llama" --layer 0 \
    --input "$WORK/llama/input.npy" --no-attn --threads "$THREADS" --out-dir "$out" >/dev/null
  read -r c l < <($PY -c "import json; t = json.load(open('$out/run.json'))['timings']; print(t['compute_ms'], t['load_ms'])")
  cold[$1]+="$c "
  load[$1]+="$l "
  cpu[$1]+="$(awk '{print ($1 + $2) * 1000}' "$WORK/time.txt") "
}
names=(after) dirs=("$BUILD")
[[ -n "$BEFORE" ]] && names=(before after) dirs=("$BEFORE" "$BUILD")
for i in "${!names[@]}"; do  # warm the page cache, unmeasured
  "${dirs[$i]}/attn-run" -q --model "$WORK/llama" --layer 0 --input "$WORK/llama/input.npy" \
    --no-attn --threads "$THREADS" --out-dir "$WORK/warm" >/dev/null
done
for r in $(seq "$REPS"); do
  wait_quiet
  if (( r % 2 )); then order=("${!names[@]}"); else order=($(printf '%s\n' "${!names[@]}" | sort -r)); fi
  for i in "${order[@]}"; do run_one "${names[$i]}" "${dirs[$i]}"; done
done
if [[ -n "$BEFORE" ]]; then
  $PY - "$WORK/out_before/context.npy" "$WORK/out_after/context.npy" <<'PYEOF'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
err = np.abs(a - b).max() / np.abs(a).max()
print(f"contexts: before and after agree within {err:.1e} of the output's scale")
if not err <= 1e-5:
    sys.exit("bench_llama: the two builds' contexts differ")
PYEOF
fi
printf '%-8s %10s %10s %10s %11s %10s %12s\n' build "median ms" "min ms" "max ms" "med/T_min" \
  "load ms" "CPU ms"
stats() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)], a[1], a[NR]}'; }
declare -A med
for n in "${names[@]}"; do
  read -r m lo hi < <(stats <<<"${cold[$n]}")
  med[$n]=$m
  lm=$(stats <<<"${load[$n]}" | cut -d' ' -f1)
  cm=$(stats <<<"${cpu[$n]}" | cut -d' ' -f1)
  printf '%-8s %10.1f %10.1f %10.1f %11.3f %10.1f %12.0f\n' "$n" "$m" "$lo" "$hi" \
    "$(awk "BEGIN {print $m / $tmin}")" "$lm" "$cm"
done
if [[ -n "$BEFORE" ]]; then
  # Each repetition's pair ran back to back: its ratio cancels most of a neighbour's load.
  read -r pm plo phi < <(paste <(tr ' ' '\n' <<<"${cold[after]}" | grep .) \
                               <(tr ' ' '\n' <<<"${cold[before]}" | grep .) |
                         awk '{print $1 / $2}' | stats)
  read -r cpm cplo cphi < <(paste <(tr ' ' '\n' <<<"${cpu[after]}" | grep .) \
                                  <(tr ' ' '\n' <<<"${cpu[before]}" | grep .) |
                            awk '{print $1 / $2}' | stats)
  echo "after / before: medians $(awk "BEGIN {printf \"%.3f\", ${med[after]} / ${med[before]}}");" \
    "per back-to-back pair: median $(printf '%.3f' "$pm"), min $(printf '%.3f' "$plo"), max $(printf '%.3f' "$phi");" \
    "process CPU time per pair: median $(printf '%.3f' "$cpm"), min $(printf '%.3f' "$cplo"), max $(printf '%.3f' "$cphi")"
fi
echo "(cold compute of $REPS fresh processes each, interleaved; T_min $tmin ms, T_peak $tpeak ms)"
