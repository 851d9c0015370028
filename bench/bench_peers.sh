#!/usr/bin/env bash
# attn-run side by side with its peers on one GPT-2-small layer (C=768, H=12, biases), in one run:
#   attn-run     cold compute (run.json compute_ms of a whole `attn-run` process) and warm
#                compute (bench_forward, the library in a loop)
#   ONNX Runtime com.microsoft.Attention and MatMul + com.microsoft.MultiHeadAttention graphs
#                (bench/ort/make_graphs.py), warm, onnxruntime-node on the CPU
#   PyTorch      nn.MultiheadAttention eager, warm
#   T_min        the layer's FLOPs / the OpenBLAS sgemm rate measured now (4096^3; each rate
#                here is the best of three measurements)
#   T_own        the layer's FLOPs / the rate of attn-run's own GEMM (attn::linear) on the
#                layer's Q|K|V projection at B*S = 4096, measured now: where xsimd has
#                16 lanes that GEMM outruns OpenBLAS, so T_min is no longer the limit
#   T_peak       the layer's FLOPs / the machine's FMA peak (registers only, every thread,
#                measured now): no implementation on this machine can be faster; half of
#                ORT's time below T_peak is out of reach
# Every peer's output is checked against attn-run's context before its time counts.
# Sets itself up when something is missing: python3-onnx/torch/numpy from Debian, and
# onnxruntime-node from npm into bench/ort/node_modules (--ignore-scripts: its install script
# only fetches GPU parts). All peers use THREADS threads (default: every core).
# Then a Llama-3-8B-shaped layer from a BF16 model folder against ORT's GroupQueryAttention and
# PyTorch (below; LLAMA_S="" skips it).
# Usage: [REPS=5] [THREADS=N] [SHAPES="4x1024x1 1x4096x1 4x1024x0"] [LLAMA_S=2048] [TORCH=0]
#        [RESULTS=file] bench/bench_peers.sh [build dir]
#   a shape is BxSxCAUSAL; SHAPES="" skips GPT-2; TORCH=0 skips PyTorch (minutes a run at long S);
#   RESULTS appends name=value lines (the rates and each shape's medians) for bench_targets.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
REPS="${REPS:-5}"
THREADS="${THREADS:-$(nproc)}"
SHAPES="${SHAPES-4x1024x1 4x1024x0}"
TORCH="${TORCH:-1}"
RESULTS="${RESULTS:-/dev/null}"
PY=/usr/bin/python3
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

source scripts/apt_packages.sh
ensure_packages python3-onnx python3-torch python3-numpy
command -v node >/dev/null && command -v npm >/dev/null || ensure_packages nodejs npm
if [[ ! -d bench/ort/node_modules/onnxruntime-node ]]; then
  (cd bench/ort && npm install --ignore-scripts --no-audit --no-fund >/dev/null 2>&1) ||
    { echo "bench_peers: npm install onnxruntime-node failed" >&2; exit 1; }
fi
[[ -x "$BUILD/attn-run" && -x "$BUILD/bench/bench_forward" ]] ||
  { echo "bench_peers: build $BUILD with -DATTN_BUILD_BENCH=ON first (scripts/setup.sh)" >&2; exit 1; }

$PY - "$WORK" <<'PYEOF'
import json, os, sys
import numpy as np, torch
w = sys.argv[1]
torch.manual_seed(0)
m = torch.nn.MultiheadAttention(768, 12, batch_first=True)
os.makedirs(f"{w}/weights")
for k, v in m.state_dict().items():
    np.save(f"{w}/weights/{k}.npy", v.numpy())
for causal in (0, 1):
    cfg = {"attention": "causal" if causal else "multi", "hidden_size": 768, "num_heads": 12,
           "weights": "weights", "layout": "torch_mha"}
    json.dump(cfg, open(f"{w}/config_{causal}.json", "w"))
PYEOF
for causal in 0 1; do
  mkdir -p "$WORK/graphs_$causal"
  $PY bench/ort/make_graphs.py "$WORK/weights" 12 "$causal" "$WORK/graphs_$causal"
done

# attn-run -v's stage clocks: "projections P ms, attention A ms, output projection O ms" -> "P A O".
STAGES_RE='s/.*forward pass: projections ([0-9.]+) ms, attention ([0-9.]+) ms, output projection ([0-9.]+) ms.*/\1 \2 \3/p'
# The median of field $1 of the runs' stage clocks.
stage_ms() { printf '%s\n' "${stages[@]}" | cut -d' ' -f"$1" | median; }
# print_stages PEAK P_MS A_MS O_MS P_FLOPS A_FLOPS O_FLOPS: each stage against its share of T_peak.
print_stages() {
  awk -v peak="$1" -v p="$2" -v a="$3" -v o="$4" "BEGIN {
    tp = ($5) / peak / 1e6; ta = ($6) / peak / 1e6; to = ($7) / peak / 1e6
    printf \"  stages (-v, medians): projections %.1f ms (%.2f x its T_peak), attention %.1f ms (%.2f x), output projection %.1f ms (%.2f x)\\n\",
      p, p / tp, a, a / ta, o, o / to
  }"
}
# a / b to 2 decimals, or "-" where b is no figure (a peer skipped)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b + 0 > 0) printf "%.2f", a / b; else printf "-"}'; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# The rates T_min, T_own and T_peak divide by: the best of three measurements
# each. A busy neighbour on the shared host only ever lowers a rate, and a low
# rate would make the limit look easier than it is.
rate=0 own_rate=0 peak=0
best() { awk -v a="$1" -v b="$2" 'BEGIN {print (b > a) ? b : a}'; }
for _ in 1 2 3; do
  rates=$(OPENBLAS_NUM_THREADS=$THREADS "$BUILD/bench/bench_forward" --B 1 --S 128 --causal 1 \
            --maps 0 --reps 1 --no-validate --threads "$THREADS")
  gemm_line=$(grep 'OpenBLAS sgemm' <<<"$rates")
  rate=$(best "$rate" "$(sed -E 's/.*: ([0-9.]+) GFLOP\/s.*/\1/' <<<"$gemm_line")")
  own_rate=$(best "$own_rate" "$(sed -E 's/.*Q\|K\|V ([0-9.]+) .*/\1/' <<<"$gemm_line")")
  peak=$(best "$peak" "$(grep 'FMA peak' <<<"$rates" | sed -E 's/.*: ([0-9.]+) GFLOP\/s.*/\1/')")
done
echo "machine: $(nproc) cores, threads $THREADS; OpenBLAS sgemm 4096^3: $rate GFLOP/s;" \
  "attn::linear (Q|K|V at B*S=4096): $own_rate GFLOP/s; FMA peak: $peak GFLOP/s"
printf 'blas_rate=%s\nown_rate=%s\npeak=%s\n' "$rate" "$own_rate" "$peak" >> "$RESULTS"
[[ -z "$SHAPES" ]] ||
printf '%-16s %10s %10s %10s %10s %10s %8s %8s %8s %10s %10s %11s %10s\n' shape "attn cold" \
  "attn warm" "ORT Attn" "ORT MHA" "PyTorch" "T_min" "T_own" "T_peak" "cold/T_min" "cold/T_own" \
  "cold/T_peak" "cold/warm"
for shape in $SHAPES; do
  IFS=x read -r B S causal <<<"$shape"
  $PY -c "import numpy as np; np.save('$WORK/x.npy', np.random.default_rng(1).standard_normal(($B, $S, 768), dtype=np.float32))"
  flops=$($PY -c "
B,S,C,c=$B,$S,768,$causal
att=4.0*B*12*S*S*64
print(2.0*B*S*C*3*C + 2.0*B*S*C*C + (att/2 if c else att))")
  tmin=$(awk "BEGIN {printf \"%.1f\", $flops / ($rate * 1e9) * 1e3}")
  town=$(awk "BEGIN {printf \"%.1f\", $flops / ($own_rate * 1e9) * 1e3}")
  tpeak=$(awk "BEGIN {printf \"%.1f\", $flops / ($peak * 1e9) * 1e3}")
  # Cold runs in three groups spread over the shape's other measurements, so a
  # burst from a neighbour on the shared host lands on a few of them, not all.
  cold=() stages=()
  # -v's "forward pass:" line: each stage's wall time (projections, attention, output).
  run_cold() {
    for _ in $(seq "$1"); do
      "$BUILD/attn-run" -v --config "$WORK/config_$causal.json" --input "$WORK/x.npy" --no-attn \
        --threads "$THREADS" --out-dir "$WORK/out" >/dev/null 2>"$WORK/gpt2_log.txt"
      cold+=("$($PY -c "import json; print(json.load(open('$WORK/out/run.json'))['timings']['compute_ms'])")")
      stages+=("$(sed -nE "$STAGES_RE" "$WORK/gpt2_log.txt")")
    done
  }
  run_cold $(((REPS + 2) / 3))
  warm_ms=$("$BUILD/bench/bench_forward" --B "$B" --S "$S" --causal "$causal" --maps 0 \
              --reps "$REPS" --no-gemm --no-validate --threads "$THREADS" |
            awk -v B="$B" -v S="$S" '$1==B && $2==S {print $5}')
  run_cold $(((REPS + 1) / 3))
  ort=()
  for g in attention mha; do
    out=$(node bench/ort/run_ort.js "$WORK/graphs_$causal/$g.onnx" "$WORK/x.npy" "$WORK/ort_$g.npy" \
            --threads "$THREADS" --reps "$REPS")
    ort+=("$($PY -c "import json,sys; print(json.loads(sys.argv[1])['median_ms'])" "$out")")
  done
  torch_ms=$($PY - "$WORK" "$B" "$S" "$causal" "$THREADS" "$REPS" "$TORCH" <<'PYEOF'
import sys, time
import numpy as np, torch
w, B, S, causal, threads, reps, run_torch = sys.argv[1], *map(int, sys.argv[2:])
torch.set_num_threads(threads)
reps = reps if run_torch else 0
m = torch.nn.MultiheadAttention(768, 12, batch_first=True).eval()
m.load_state_dict({k: torch.from_numpy(np.load(f"{w}/weights/{k}.npy")) for k in m.state_dict()})
x = torch.from_numpy(np.load(f"{w}/x.npy"))
mask = torch.ones(S, S, dtype=torch.bool).triu(1) if causal else None
ref = np.load(f"{w}/out/context.npy")
times = []
with torch.inference_mode():
    for r in range(reps + 1):
        t0 = time.perf_counter()
        y, _ = m(x, x, x, attn_mask=mask, need_weights=False)
        if r:
            times.append((time.perf_counter() - t0) * 1e3)
scale = np.abs(ref).max()
for name in ("torch", "ort_attention", "ort_mha") if run_torch else ("ort_attention", "ort_mha"):
    got = y.numpy() if name == "torch" else np.load(f"{w}/{name}.npy")
    err = np.abs(got - ref).max() / scale
    if err > 1e-4:
        sys.exit(f"bench_peers: {name} differs from attn-run by {err:.1e} of the output's scale")
print(sorted(times)[(len(times) - 1) // 2] if times else "nan")
PYEOF
)
  run_cold $((REPS / 3))
  cold_ms=$(printf '%s\n' "${cold[@]}" | median)
  printf '%-16s %10.1f %10.1f %10.1f %10.1f %10.1f %8.1f %8.1f %8.1f %10.2f %10.2f %11.2f %10.2f\n' \
    "B=$B S=$S $([[ $causal == 1 ]] && echo causal || echo bidir)" \
    "$cold_ms" "$warm_ms" "${ort[0]}" "${ort[1]}" "$torch_ms" "$tmin" "$town" "$tpeak" \
    "$(awk "BEGIN {print $cold_ms / $tmin}")" "$(awk "BEGIN {print $cold_ms / $town}")" \
    "$(awk "BEGIN {print $cold_ms / $tpeak}")" "$(awk "BEGIN {print $cold_ms / $warm_ms}")"
  printf 'gpt2_%s_cold=%s\ngpt2_%s_warm=%s\ngpt2_%s_tpeak=%s\ngpt2_%s_ort=%s\ngpt2_%s_torch=%s\n' \
    "$shape" "$cold_ms" "$shape" "$warm_ms" "$shape" "$tpeak" "$shape" \
    "$(printf '%s\n' "${ort[@]}" | sort -g | head -1)" "$shape" "$torch_ms" >> "$RESULTS"
  printf 'gpt2_%s_flops=%s\n' "$shape" "$flops" >> "$RESULTS"
  best_ort=$(printf '%s\n' "${ort[@]}" | sort -g | head -1)
  echo "  ratios: attn cold / ORT best $(awk "BEGIN {printf \"%.2f\", $cold_ms / $best_ort}"), attn cold / PyTorch $(ratio "$cold_ms" "$torch_ms"), ORT best / 2 / T_peak $(awk "BEGIN {printf \"%.2f\", $best_ort / 2 / $tpeak}") (below 1: half ORT's time is beyond the machine); outputs agree within 1e-4"
  # Each stage's median against its own share of T_peak (the terms of $flops above).
  [[ -z "${stages[0]}" ]] || print_stages "$peak" "$(stage_ms 1)" "$(stage_ms 2)" "$(stage_ms 3)" \
    "2.0 * $B * $S * 768 * 2304" "4.0 * $B * 12 * $S * $S * 64 / ($causal ? 2 : 1)" "2.0 * $B * $S * 768 * 768"
done
[[ -z "$SHAPES" ]] ||
  echo "(milliseconds, medians of $REPS runs; cold = a fresh attn-run process, warm = repeated calls)"

# The Llama layer (skipped with LLAMA_S=""): a Llama-3-8B-shaped layer (C=4096, H=32,
# Hkv=8, D=128, RoPE theta 5e5 with llama3 scaling, causal, B=1) from a BF16 model folder with
# random weights (bench/make_llama_bench.py), attn-run cold (`--model DIR --layer 0`) against
# ONNX Runtime's GroupQueryAttention (packed Q|K|V MatMul, do_rotary with the same cos/sin,
# then the output MatMul: bench/ort/make_llama_graph.py) and PyTorch eager (as
# modeling_llama's eager attention: rotate_half, repeat_kv, softmax in float32), each checked
# against attn-run's context. The before/after comparison of two builds is bench/bench_llama.sh.
LLAMA_S="${LLAMA_S-2048}"
if [[ -n "$LLAMA_S" ]]; then
  S=$LLAMA_S
  $PY bench/make_llama_bench.py "$WORK/llama" "$S" --peers
  $PY bench/ort/make_llama_graph.py "$WORK/llama/peers" 32 8 "$WORK/llama_gqa.onnx"
  flops=$($PY -c "S=$S; print(2.0*S*4096*(32+16)*128 + 2.0*S*4096*4096 + 4.0*32*S*S*128/2)")
  tmin=$(awk "BEGIN {printf \"%.1f\", $flops / ($rate * 1e9) * 1e3}")
  tpeak=$(awk "BEGIN {printf \"%.1f\", $flops / ($peak * 1e9) * 1e3}")
  cold=() stages=()
  run_llama() {
    for _ in $(seq "$1"); do
      "$BUILD/attn-run" -v --model "$WORK/llama" --layer 0 --input "$WORK/llama/input.npy" \
        --no-attn --threads "$THREADS" --out-dir "$WORK/out_llama" >/dev/null 2>"$WORK/llama_log.txt"
      cold+=("$($PY -c "import json; print(json.load(open('$WORK/out_llama/run.json'))['timings']['compute_ms'])")")
      stages+=("$(sed -nE "$STAGES_RE" "$WORK/llama_log.txt")")
    done
  }
  run_llama $(((REPS + 1) / 2))
  out=$(node bench/ort/run_ort.js "$WORK/llama_gqa.onnx" "$WORK/llama/input.npy" "$WORK/ort_gqa.npy" \
          --threads "$THREADS" --reps "$REPS")
  ort_ms=$($PY -c "import json,sys; print(json.loads(sys.argv[1])['median_ms'])" "$out")
  torch_ms=$($PY - "$WORK" "$THREADS" "$REPS" "$TORCH" <<'PYEOF'
import sys, time
import numpy as np, torch
w, threads, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) * int(sys.argv[4])
torch.set_num_threads(threads)
H, Hkv, D = 32, 8, 128
P = {k: torch.from_numpy(np.load(f"{w}/llama/peers/{k}.npy")) for k in
     ("q_proj", "k_proj", "v_proj", "o_proj", "cos", "sin")}
x = torch.from_numpy(np.load(f"{w}/llama/input.npy"))
S = x.shape[1]
cos, sin = torch.cat([P["cos"]] * 2, -1), torch.cat([P["sin"]] * 2, -1)  # (S, D)

def rotate_half(t):
    return torch.cat((-t[..., D // 2:], t[..., :D // 2]), dim=-1)

def layer(x):  # modeling_llama.LlamaAttention with eager_attention_forward
    q = (x @ P["q_proj"].T).view(1, S, H, D).transpose(1, 2)
    k = (x @ P["k_proj"].T).view(1, S, Hkv, D).transpose(1, 2)
    v = (x @ P["v_proj"].T).view(1, S, Hkv, D).transpose(1, 2)
    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
    k = k.repeat_interleave(H // Hkv, dim=1)  # repeat_kv
    v = v.repeat_interleave(H // Hkv, dim=1)
    s = (q @ k.transpose(2, 3)) * D ** -0.5
    s.masked_fill_(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
    p = torch.softmax(s, dim=-1, dtype=torch.float32)
    return (p @ v).transpose(1, 2).reshape(1, S, H * D) @ P["o_proj"].T

times = []
with torch.inference_mode():
    for r in range(reps + 1 if reps else 0):
        t0 = time.perf_counter()
        y = layer(x)
        if r:
            times.append((time.perf_counter() - t0) * 1e3)
ref = np.load(f"{w}/out_llama/context.npy")
scale = np.abs(ref).max()
peers = [("ort_gqa", np.load(f"{w}/ort_gqa.npy"))] + ([("torch", y.numpy())] if reps else [])
for name, got in peers:
    err = np.abs(got - ref).max() / scale
    if err > 1e-4:
        sys.exit(f"bench_peers: {name} differs from attn-run by {err:.1e} of the output's scale")
print(sorted(times)[(len(times) - 1) // 2] if times else "nan")
PYEOF
)
  run_llama $((REPS / 2))
  cold_ms=$(printf '%s\n' "${cold[@]}" | median)
  printf '%-24s %12s %12s %12s %9s %9s %11s %12s\n' shape "attn cold" "ORT GQA" "PyTorch" "T_min" \
    "T_peak" "cold/T_min" "cold/T_peak"
  printf '%-24s %12.1f %12.1f %12.1f %9.1f %9.1f %11.3f %12.3f\n' "Llama-3-8B S=$S causal" \
    "$cold_ms" "$ort_ms" "$torch_ms" "$tmin" "$tpeak" "$(awk "BEGIN {print $cold_ms / $tmin}")" \
    "$(awk "BEGIN {print $cold_ms / $tpeak}")"
  printf 'llama_%s_cold=%s\nllama_%s_tpeak=%s\nllama_%s_ort=%s\nllama_%s_torch=%s\n' "$S" "$cold_ms" \
    "$S" "$tpeak" "$S" "$ort_ms" "$S" "$torch_ms" >> "$RESULTS"
  printf 'llama_%s_flops=%s\n' "$S" "$flops" >> "$RESULTS"
  echo "  ratios: attn cold / ORT GQA $(awk "BEGIN {printf \"%.2f\", $cold_ms / $ort_ms}"), attn cold / PyTorch $(ratio "$cold_ms" "$torch_ms"); outputs agree within 1e-4 (BF16 weights, float32 compute)"
  # Each stage's median against its own share of T_peak (the terms of $flops above).
  [[ -z "${stages[0]}" ]] || print_stages "$peak" "$(stage_ms 1)" "$(stage_ms 2)" "$(stage_ms 3)" \
    "2.0 * $S * 4096 * 6144" "4.0 * 32 * $S * $S * 128 / 2" "2.0 * $S * 4096 * 4096"
  echo "(milliseconds, medians of $REPS runs; attn cold = a fresh attn-run process, the peers warm)"
fi
