#!/usr/bin/env bash
# Issue 9's load benchmark: one GPT-2-medium-shaped attention layer (h.12.attn.)
# out of a generated 24-layer .safetensors (bench/bench_load.py: F32 layers with
# their MLP, a BF16 embedding outside them) against the same layer in a file of
# its own. For each: peak RSS and wall time of the whole `attn-run` process
# (/usr/bin/time -v) and run.json's timings.load_ms; then a plain read of the
# layer's bytes from the big file (pread of its four spans, warm page cache).
# Medians of REPS runs (default 5); the page cache is warmed by one unmeasured run.
# With a bench build (-DATTN_BUILD_BENCH=ON), bench_load then times the pipeline
# alone in process (open + select, read_rows of the layer) against a plain pread.
# Targets: RSS(big) <= RSS(layer) + 32 MiB, wall(big) <= 1.5 x wall(layer).
# Usage: [REPS=5] [MLP=full|none] bench/bench_load.sh [build dir, default build] [data dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(realpath "${1:-build}")/attn-run"
DATA="${2:-/tmp/attn-bench-load}"
REPS="${REPS:-5}"
PY=/usr/bin/python3
if [ ! -f "$DATA/big.safetensors" ]; then
  $PY bench/bench_load.py "$DATA" --mlp "${MLP:-full}"
fi
cd "$DATA"

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

measure() {  # $1 = weights file; prints "rss_kib wall_s load_ms" medians
  local w="$1" rss=() wall=() load=()
  rm -rf out && "$BIN" --config config.json --weights "$w" --out-dir out -q  # warm
  for _ in $(seq "$REPS"); do
    rm -rf out
    /usr/bin/time -v "$BIN" --config config.json --weights "$w" --out-dir out -q 2>time.txt
    rss+=("$(awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}' time.txt)")
    wall+=("$(awk '/Elapsed \(wall clock\)/ {n=split($NF,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' time.txt)")
    load+=("$($PY -c 'import json;print(json.load(open("out/run.json"))["timings"]["load_ms"])')")
  done
  echo "$(printf '%s\n' "${rss[@]}" | median) $(printf '%s\n' "${wall[@]}" | median) $(printf '%s\n' "${load[@]}" | median)"
}

read -r big_rss big_wall big_load < <(measure big.safetensors)
read -r one_rss one_wall one_load < <(measure layer12.safetensors)
plain_ms=$($PY - "$REPS" <<'PYEOF'
import json, os, statistics, struct, sys, time
f = os.open("big.safetensors", os.O_RDONLY)
n = struct.unpack("<Q", os.pread(f, 8, 0))[0]
hdr = json.loads(os.pread(f, n, 8))
spans = [hdr["h.12.attn." + k]["data_offsets"] for k in
         ("c_attn.weight", "c_attn.bias", "c_proj.weight", "c_proj.bias")]
times = []
for _ in range(int(sys.argv[1]) + 1):
    t = time.perf_counter()
    for b, e in spans:
        buf = bytearray(e - b)
        os.preadv(f, [buf], 8 + n + b)
    times.append((time.perf_counter() - t) * 1000)
print("%.2f" % statistics.median(times[1:]))
PYEOF
)
size_mb=$(( $(stat -c %s big.safetensors) / 1000000 ))
echo "big.safetensors: ${size_mb} MB; layer file: $(( $(stat -c %s layer12.safetensors) / 1000 )) kB; medians of $REPS"
printf '%-22s %12s %10s %10s\n' "weights" "peak RSS MiB" "wall s" "load_ms"
printf '%-22s %12.1f %10.3f %10.1f\n' "big (h.12.attn.)" "$(echo "$big_rss/1024" | bc -l)" "$big_wall" "$big_load"
printf '%-22s %12.1f %10.3f %10.1f\n' "layer12 alone" "$(echo "$one_rss/1024" | bc -l)" "$one_wall" "$one_load"
echo "plain pread of the layer's bytes from big: ${plain_ms} ms"
echo "RSS difference: $(echo "($big_rss-$one_rss)/1024" | bc -l | xargs printf '%.1f') MiB (target <= 32); wall ratio: $(echo "$big_wall/$one_wall" | bc -l | xargs printf '%.2f') (target <= 1.5)"
# The pipeline alone, in process (built with -DATTN_BUILD_BENCH=ON).
if [ -x "$(dirname "$BIN")/bench/bench_load" ]; then
  "$(dirname "$BIN")/bench/bench_load" big.safetensors h.12.attn. "$REPS"
fi
