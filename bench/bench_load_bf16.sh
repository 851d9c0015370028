#!/usr/bin/env bash
# Issue 29 target 4: loading one BF16 Llama-3-8B-shaped layer (84 MB of BF16 to 168 MB of
# float32, with config.json and the safetensors index: run.json's load_ms of fresh processes)
# against a pread of the same bytes from the warm page cache into fresh memory. Uses
# bench/bench_layers.sh's folder (run that first), layer 5, a (16, 4096) input; medians of 9.
# Usage: bench/bench_load_bf16.sh [build dir] [data dir, default /tmp/attn-bench-layers]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(realpath "${1:-build}")/attn-run"
D="${2:-/tmp/attn-bench-layers}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 - "$D" "$TMP/x.npy" <<'PY'
import sys, numpy as np
h = np.load(sys.argv[1] + "/hidden.npy", mmap_mode="r")
np.save(sys.argv[2], np.ascontiguousarray(h[5, 0, :16]))
PY
for _ in 1 2 3 4 5 6 7 8 9; do
  rm -rf "$TMP/o"
  "$BIN" -q --model "$D/model" --layer 5 --input "$TMP/x.npy" -o "$TMP/o" --no-attn
  /usr/bin/python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['timings']['load_ms'])" "$TMP/o/run.json"
done | sort -n | awk '{a[NR]=$1} END {printf "attn-run load_ms: median %.1f (min %.1f, max %.1f)\n", a[int((NR+1)/2)], a[1], a[NR]}'
/usr/bin/python3 - "$D" <<'PY'
import json, os, statistics, struct, sys, time
f = os.open(sys.argv[1] + "/model/model.safetensors", os.O_RDONLY)
n = struct.unpack("<Q", os.pread(f, 8, 0))[0]
hdr = json.loads(os.pread(f, n, 8))
spans = [hdr[f"model.layers.5.self_attn.{k}_proj.weight"]["data_offsets"] for k in "qkvo"]
ts = []
for _ in range(10):
    t = time.perf_counter()
    for b, e in spans:
        buf = bytearray(e - b)
        os.preadv(f, [buf], 8 + n + b)
    ts.append((time.perf_counter() - t) * 1000)
ts = sorted(ts[1:])
print("pread of the layer's %d MB into fresh memory: median %.1f ms (min %.1f, max %.1f)"
      % (sum(e - b for b, e in spans) // 1000000, statistics.median(ts), ts[0], ts[-1]))
PY
