#!/usr/bin/env bash
# Files at the speed of the disk, and many inputs, on a
# GPT-2-small layer (C=768, H=12, torch MHA .npy weights), medians of REPS runs:
#  1. B=4, S=1024, causal, no maps: run.json's load_ms against a plain read of the same
#     bytes (cat of the weights and the input, warm page cache), write_ms against a plain
#     write of context.npy's bytes (no fsync, as write_ms has none: the commit syncs), and
#     the whole process (wall) against compute_ms + 40 ms.
#  2. B=1, S=4096, causal, with maps (an 805 MB attention.npy): the whole process against
#     compute_ms + the time dd needs to write the same bytes to the same disk, synced
#     (attn-run syncs its files before the commit renames them).
#  3. --input-list of 1,000 inputs of S=128 against one B=1000 batch of the same rows:
#     throughput ratio (target >= 0.80).
# Needs /usr/bin/python3 with numpy. Usage: [REPS=5] bench/bench_io.sh [build dir] [work dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(realpath "${1:-build}")/attn-run"
WORK="${2:-$(mktemp -d /var/tmp/attn-bench-io.XXXXXX)}"
REPS="${REPS:-5}"
PY=/usr/bin/python3
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

$PY - "$WORK" <<'PYEOF'
import json, os, sys
import numpy as np
w = sys.argv[1]
rng = np.random.default_rng(0)
os.makedirs(f"{w}/weights", exist_ok=True)
C = 768
for name, shape in {"in_proj_weight": (3 * C, C), "in_proj_bias": (3 * C,),
                    "out_proj.weight": (C, C), "out_proj.bias": (C,)}.items():
    np.save(f"{w}/weights/{name}.npy", (rng.standard_normal(shape) * 0.03).astype(np.float32))
json.dump({"attention": "causal", "hidden_size": C, "num_heads": 12, "weights": "weights",
           "layout": "torch_mha"}, open(f"{w}/config.json", "w"))
np.save(f"{w}/x_4x1024.npy", rng.standard_normal((4, 1024, C), dtype=np.float32))
np.save(f"{w}/x_4096.npy", rng.standard_normal((1, 4096, C), dtype=np.float32))
batch = rng.standard_normal((1000, 128, C), dtype=np.float32)
np.save(f"{w}/x_1000x128.npy", batch)
os.makedirs(f"{w}/list", exist_ok=True)
with open(f"{w}/list.txt", "w") as f:
    for i in range(1000):
        np.save(f"{w}/list/x{i:04d}.npy", batch[i])
        f.write(f"{w}/list/x{i:04d}.npy\n")
PYEOF
cd "$WORK"

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# Spans are read from bash's own clock (EPOCHREALTIME, seconds with
# microseconds): no process start (`date`, a subshell) lands inside a span.
span_ms() { awk "BEGIN {printf \"%.3f\", ($2 - $1) * 1000}"; }
timing() { $PY -c "import json,sys; print(json.load(open(sys.argv[1]))['timings'][sys.argv[2]])" "$@"; }

# 1. Load, write and the whole process at B=4, S=1024.
walls=() loads=() computes=() writes=() reads=() plain_writes=()
ctx_bytes=$((4 * 1024 * 768 * 4 + 128))
"$BIN" -q --config config.json --input x_4x1024.npy --no-attn --out-dir out1 >/dev/null  # warm-up
for _ in $(seq "$REPS"); do
  t0=$EPOCHREALTIME
  "$BIN" -q --config config.json --input x_4x1024.npy --no-attn --out-dir out1 >/dev/null
  t1=$EPOCHREALTIME
  walls+=("$(span_ms "$t0" "$t1")")
  loads+=("$(timing out1/run.json load_ms)")
  computes+=("$(timing out1/run.json compute_ms)")
  writes+=("$(timing out1/run.json write_ms)")
  t0=$EPOCHREALTIME
  cat weights/*.npy x_4x1024.npy >/dev/null
  t1=$EPOCHREALTIME
  reads+=("$(span_ms "$t0" "$t1")")
  rm -f plain.bin
  t0=$EPOCHREALTIME
  head -c "$ctx_bytes" /dev/zero >plain.bin
  t1=$EPOCHREALTIME
  plain_writes+=("$(span_ms "$t0" "$t1")")
done
m() { printf '%s\n' "$@" | median; }
wall=$(m "${walls[@]}") load=$(m "${loads[@]}") compute=$(m "${computes[@]}")
write=$(m "${writes[@]}") read=$(m "${reads[@]}") pwrite=$(m "${plain_writes[@]}")
echo "1. B=4 S=1024 causal, no maps (ms, medians of $REPS):"
printf '   load_ms %.1f vs plain read %.1f (%.2fx, target <= 2)\n' "$load" "$read" \
  "$(awk "BEGIN {print $load / $read}")"
printf '   write_ms %.1f vs plain write %.1f (%.2fx, target <= 2)\n' "$write" "$pwrite" \
  "$(awk "BEGIN {print $write / $pwrite}")"
printf '   whole process %.1f vs compute_ms %.1f + 40 = %.1f (%s)\n' "$wall" "$compute" \
  "$(awk "BEGIN {print $compute + 40}")" \
  "$(awk "BEGIN {print ($wall <= $compute + 40) ? \"met\" : \"missed\"}")"
rm -rf out1 plain.bin

# 2. Maps at B=1, S=4096: the process against compute + dd of the same bytes.
walls=() computes=() dds=()
maps_bytes=$((12 * 4096 * 4096 * 4 + 128))
for _ in $(seq "$REPS"); do
  rm -rf out2 plain.bin
  sync
  t0=$EPOCHREALTIME
  "$BIN" -q --config config.json --input x_4096.npy --out-dir out2 >/dev/null
  t1=$EPOCHREALTIME
  walls+=("$(span_ms "$t0" "$t1")")
  computes+=("$(timing out2/run.json compute_ms)")
  rm -rf out2
  sync
  t0=$EPOCHREALTIME
  dd if=/dev/zero of=plain.bin bs=4M count=$((maps_bytes / 4194304 + 1)) conv=fsync status=none
  t1=$EPOCHREALTIME
  dds+=("$(span_ms "$t0" "$t1")")
done
wall=$(m "${walls[@]}") compute=$(m "${computes[@]}") dd_ms=$(m "${dds[@]}")
echo "2. B=1 S=4096 causal with maps ($((maps_bytes / 1000000)) MB attention.npy):"
printf '   whole process %.0f vs compute_ms %.0f + dd %.0f = %.0f (%.2fx)\n' "$wall" "$compute" \
  "$dd_ms" "$(awk "BEGIN {print $compute + $dd_ms}")" \
  "$(awk "BEGIN {print $wall / ($compute + $dd_ms)}")"
rm -rf out2 plain.bin

# 3. Many inputs: --input-list of 1,000 against one B=1000 batch. Each rep
# writes new folders and none is deleted until the end: ext4 skips inodes
# freed in the last minute when it makes new ones, so creating 3,000 files
# right after an `rm -rf` of 3,000 costs several times more (a property of
# the file system, not of attn-run).
lists=() batches=()
for rep in $(seq "$REPS"); do
  t0=$EPOCHREALTIME
  "$BIN" -q --config config.json --input-list list.txt --no-attn --out-dir "out3_$rep" >/dev/null
  t1=$EPOCHREALTIME
  lists+=("$(span_ms "$t0" "$t1")")
  t0=$EPOCHREALTIME
  "$BIN" -q --config config.json --input x_1000x128.npy --no-attn --out-dir "out4_$rep" >/dev/null
  t1=$EPOCHREALTIME
  batches+=("$(span_ms "$t0" "$t1")")
done
list_ms=$(m "${lists[@]}") batch_ms=$(m "${batches[@]}")
echo "3. 1,000 inputs of S=128, causal, no maps:"
printf '   --input-list %.0f ms vs one B=1000 batch %.0f ms: throughput %.2f of the batch'"'"'s (target >= 0.80)\n' \
  "$list_ms" "$batch_ms" "$(awk "BEGIN {print $batch_ms / $list_ms}")"
