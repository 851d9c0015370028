#!/usr/bin/env bash
# A Llama-3-8B-shaped layer (bench/make_llama_layers.py:
# C 4096, 32 heads, 8 KV heads, BF16, causal) at S tokens (default 32768), without maps
# (`--no-attn`), with `--no-attn --top-k 32 --summary`, and with MAPS=1 also with the maps
# written to disk (attention.npy, 32 x S x S floats: 512 MB at S = 2048), interleaved REPS
# times: run.json's compute_ms, the process's wall and CPU time (user + sys, which other work on
# the machine does not stretch) and peak RSS. Ends with each set's medians over the run
# without maps (target: <= 1.2x).
# STATS=1 adds `--no-attn --key-stats --head-stats` (per-key and per-head statistics).
# Usage: [S=32768] [REPS=2] [MAPS=0|1] [STATS=0|1] [RESULTS=file] bench/bench_map_reductions.sh [build dir] [data dir]
#   RESULTS appends name=value lines (each set's median compute_ms) for bench_targets.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(realpath "${1:-build}")/attn-run"
S="${S:-32768}" REPS="${REPS:-2}" MAPS="${MAPS:-0}"
DATA="${2:-/tmp/attn-bench-maps-$S}"
if [ ! -f "$DATA/x.npy" ]; then
  /usr/bin/python3 bench/make_llama_layers.py "$DATA" 1 "$S"
  /usr/bin/python3 -c "import numpy as np, sys; h = np.load(sys.argv[1] + '/hidden.npy', mmap_mode='r'); np.save(sys.argv[1] + '/x.npy', np.ascontiguousarray(h[0]))" "$DATA"
fi
sets=("--no-attn" "--no-attn --top-k 32 --summary")
[[ "${STATS:-0}" == 1 ]] && sets+=("--no-attn --key-stats --head-stats")
[[ "$MAPS" == 1 ]] && sets+=("")  # the maps to disk
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(grep -q avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2), $(nproc) cores; S = $S"
printf '%-4s %-32s %10s %10s %8s %10s\n' rep flags compute_ms wall_s cpu_s peak_MB
rows="$(mktemp)"
trap 'rm -f "$rows"; rm -rf "$DATA/o"' EXIT
for r in $(seq "$REPS"); do
  for f in "${sets[@]}"; do
    rm -rf "$DATA/o"
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S %M" -o "$DATA/time.txt" "$BIN" -q --model "$DATA/model" --layer 0 \
      --input "$DATA/x.npy" -o "$DATA/o" $f
    read -r wall user sys rss < "$DATA/time.txt"
    c=$(/usr/bin/python3 -c "import json,sys;print(round(json.load(open(sys.argv[1]))['timings']['compute_ms']))" "$DATA/o/run.json")
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')
    name="${f:-(maps to disk)}"
    printf '%-4s %-32s %10s %10s %8.1f %10d\n' "$r" "$name" "$c" "$wall" "$cpu" $((rss / 1024))
    printf '%s\t%s\t%s\t%s\n' "$name" "$c" "$cpu" "$rss" >> "$rows"
  done
done
/usr/bin/python3 - "$rows" "$S" "${RESULTS:-/dev/null}" <<'PYEOF'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    name, c, cpu, rss = line.rstrip("\n").split("\t")
    by.setdefault(name, []).append((float(c), float(cpu), float(rss)))
med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in by.items()}
# Each rep runs every set in turn: a set's ratio to the run without maps is the median of
# the reps' own ratios, so a change of the host's speed between reps moves both sides.
base_runs = by["--no-attn"]
ratio = {k: [statistics.median(x[i] / b[i] for x, b in zip(v, base_runs)) for i in range(3)]
         for k, v in by.items()}
keys = {"--no-attn": "noattn", "--no-attn --top-k 32 --summary": "topk", "(maps to disk)": "maps",
        "--no-attn --key-stats --head-stats": "stats"}
with open(sys.argv[3], "a") as results:
    for k, (c, cpu, rss) in med.items():
        results.write(f"llama_{sys.argv[2]}_{keys[k]}={c}\nllama_{sys.argv[2]}_{keys[k]}_rss_mb={rss / 1024:.0f}\n")
        results.write(f"llama_{sys.argv[2]}_{keys[k]}_ratio={ratio[k][0]}\n"
                      f"llama_{sys.argv[2]}_{keys[k]}_rss_ratio={ratio[k][2]}\n")
for k, (c, cpu, rss) in ratio.items():
    if k != "--no-attn":
        print(f"{k}: compute {c:.2f}x, CPU time {cpu:.2f}x, peak RSS {rss:.2f}x the run without "
              f"maps (medians of {len(by[k])} reps' ratios)")
PYEOF
