#!/usr/bin/env bash
# Whole-process comparison and peak memory at long contexts (the whole-process targets):
#  1. B=4, S=1024, C=768, H=12 causal, no maps: `attn-run` end to end (start, load,
#     compute, write context.npy) vs a Python script doing the same with PyTorch
#     (import torch, load the .npy weights and input, nn.MultiheadAttention, np.save).
#  2. S=16384 causal, no maps: attn-run's peak RSS.
#  3. S=8192 causal, H=12, with maps (a 3 GiB attention.npy): attn-run's peak RSS.
# Needs /usr/bin/python3 with numpy and torch (python3-numpy, python3-torch) for the
# inputs and the PyTorch side. Medians of REPS runs (default 5).
# Usage: bench/bench_process.sh [build dir, default build]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-build}/attn-run"
REPS="${REPS:-5}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
PY=/usr/bin/python3

$PY - "$WORK" <<'PYEOF'
import json, os, sys
import numpy as np, torch
w = sys.argv[1]
torch.manual_seed(0)
m = torch.nn.MultiheadAttention(768, 12, batch_first=True)
os.makedirs(f"{w}/weights")
for k, v in m.state_dict().items():
    np.save(f"{w}/weights/{k}.npy", v.numpy())
rng = np.random.default_rng(0)
np.save(f"{w}/x_4x1024.npy", rng.standard_normal((4, 1024, 768), dtype=np.float32))
np.save(f"{w}/x_16384.npy", rng.standard_normal((16384, 768), dtype=np.float32))
np.save(f"{w}/x_8192.npy", rng.standard_normal((8192, 768), dtype=np.float32))
cfg = {"attention": "causal", "hidden_size": 768, "num_heads": 12, "weights": "weights"}
json.dump(cfg, open(f"{w}/config.json", "w"))
PYEOF

cat > "$WORK/torch_job.py" <<'PYEOF'
import sys
import numpy as np
import torch
w = sys.argv[1]
torch.set_num_threads(2)
m = torch.nn.MultiheadAttention(768, 12, batch_first=True)
m.load_state_dict({k: torch.from_numpy(np.load(f"{w}/weights/{k}.npy"))
                   for k in m.state_dict()})
x = torch.from_numpy(np.load(f"{w}/x_4x1024.npy"))
mask = torch.ones(1024, 1024, dtype=torch.bool).triu(1)
with torch.inference_mode():
    out, _ = m(x, x, x, attn_mask=mask, need_weights=False)
np.save(f"{w}/torch_context.npy", out.numpy())
PYEOF

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
elapsed() { /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1; }

attn_s=() torch_s=()
for _ in $(seq "$REPS"); do
  attn_s+=("$(elapsed "$BIN" -q --config "$WORK/config.json" --input "$WORK/x_4x1024.npy" --no-attn --out-dir "$WORK/out" | cut -d' ' -f1)")
  torch_s+=("$(elapsed $PY "$WORK/torch_job.py" "$WORK" | cut -d' ' -f1)")
done
a=$(printf '%s\n' "${attn_s[@]}" | median)
t=$(printf '%s\n' "${torch_s[@]}" | median)
compute=$($PY -c "import json; print(json.load(open('$WORK/out/run.json'))['timings']['compute_ms'])")
$PY - "$WORK" <<'PYEOF'
import sys, numpy as np
w = sys.argv[1]
a, b = np.load(f"{w}/out/context.npy"), np.load(f"{w}/torch_context.npy")
print(f"check: attn-run vs PyTorch max diff {np.abs(a - b).max() / np.abs(b).max():.1e} of scale")
PYEOF
echo "whole process, B=4 S=1024 causal no maps: attn-run ${a} s, PyTorch script ${t} s," \
     "ratio $(awk "BEGIN {printf \"%.2f\", $a / $t}") (attn-run compute_ms ${compute})"

r=$(elapsed "$BIN" -q --config "$WORK/config.json" --input "$WORK/x_16384.npy" --no-attn --out-dir "$WORK/out16k")
echo "S=16384 causal no maps: ${r%% *} s, peak RSS $(( ${r##* } / 1024 )) MiB"
r=$(elapsed "$BIN" -q --config "$WORK/config.json" --input "$WORK/x_8192.npy" --out-dir "$WORK/out8k")
echo "S=8192 causal with maps: ${r%% *} s, peak RSS $(( ${r##* } / 1024 )) MiB," \
     "attention.npy $(( $(stat -c %s "$WORK/out8k/attention.npy") / 1048576 )) MiB"
