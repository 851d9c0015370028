#!/usr/bin/env bash
# One layer of a Llama-3-8B-shaped Q4_K_M GGUF (the GGUF bench): the file is
# written sparse (real header and tensor infos for 32 layers, token_embd and
# output; the data section a hole, so 5.2 GB cost no disk), then
# `attn-run --model FILE.gguf --layer 5` runs 16 tokens through layer 5; the
# load time (run.json) and peak RSS are printed beside the layer's own sizes:
# 23.5 MiB stored (Q4_K q/k/o, Q6_K v), 160 MiB as float32.
# Usage: bench/bench_gguf.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 bench/make_gguf_bench.py "$tmp/llama8b-q4_k_m.gguf"
/usr/bin/python3 -c "import numpy as np; np.save('$tmp/h.npy', (np.random.default_rng(0).standard_normal((16, 4096)) * 0.1).astype(np.float32))"
for run in 1 2 3; do
  /usr/bin/time -f "peak RSS %M KiB, wall %e s" "$build/attn-run" --model "$tmp/llama8b-q4_k_m.gguf" \
    --layer 5 --input "$tmp/h.npy" --no-attn -q -o "$tmp/o" 2>&1
  grep -E '"(load|compute)_ms"' "$tmp/o/run.json" | tr -d ' \n'; echo
done
