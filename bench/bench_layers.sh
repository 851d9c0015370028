#!/usr/bin/env bash
# Issue 29 target 5: `--layer all` over a Llama-3-8B-shaped BF16 model folder
# (bench/make_llama_layers.py: LAYERS layers, causal, S tokens, B = 1). The next
# layer's weights and input load on a helper thread while a layer computes, so
# the run's total should stay within 1.1x of the sum of its layers' compute.
# Prints, per run: total wall (run.json timings.total_ms), the sum of the layers'
# compute_ms and load_ms, and total / compute; medians of REPS runs (after one
# warm-up run that fills the page cache). --no-attn: the maps are not written
# (the context is: LAYERS x S x 4096 floats).
# Usage: [LAYERS=32] [S=2048] [REPS=3] bench/bench_layers.sh [build dir] [data dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(realpath "${1:-build}")/attn-run"
DATA="${2:-/tmp/attn-bench-layers}"
LAYERS="${LAYERS:-32}" S="${S:-2048}" REPS="${REPS:-3}"
PY=/usr/bin/python3
if [ ! -f "$DATA/hidden.npy" ] || [ "$($PY -c "import numpy as np;print(np.load('$DATA/hidden.npy', mmap_mode='r').shape[:3])")" != "($LAYERS, 1, $S)" ]; then
  rm -rf "$DATA"
  $PY bench/make_llama_layers.py "$DATA" "$LAYERS" "$S"
fi
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(grep -q avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2), $(nproc) cores"
echo "model: $LAYERS Llama-3-8B-shaped layers (BF16, $(( $(stat -c %s "$DATA/model/model.safetensors") / 1000000 )) MB), input (${LAYERS}, 1, $S, 4096)"
run_once() {
  rm -rf "$DATA/out"
  "$BIN" -q --model "$DATA/model" --layer all --input "$DATA/hidden.npy" -o "$DATA/out" --no-attn
  $PY - "$DATA/out/run.json" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
c = sum(r["timings"]["compute_ms"] for r in j["runs"])
l = sum(r["timings"]["load_ms"] for r in j["runs"])
t = j["timings"]["total_ms"]
print("%.0f %.0f %.0f %.3f" % (t, c, l, t / c))
PYEOF
}
run_once >/dev/null  # warm the page cache
printf '%-6s %10s %12s %10s %14s\n' run total_ms compute_ms load_ms total/compute
for r in $(seq "$REPS"); do
  read -r t c l ratio < <(run_once)
  printf '%-6s %10s %12s %10s %14s\n' "$r" "$t" "$c" "$l" "$ratio"
done
rm -rf "$DATA/out"
