#!/usr/bin/env bash
# The README's Slurm job array on a real, single-node Slurm: writes a minimal
# cgroup-free slurm.conf (this host as the one node), starts munged, slurmctld
# and slurmd on private ports with every file in a temporary folder, runs the
# README's array script (`sbatch --wait`) over the example --input-list,
# checks every result folder, merges the shard summaries with
# --merge-shards, and stops the daemons.
# Usage: tests/slurm/test_slurm_array.sh ATTN_RUN_BINARY
# Exit 77 (skipped, with the reason) when not root, when a daemon is not
# installed, or when the daemons do not start.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
skip() { echo "skipping the Slurm test: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || skip "it starts munged, slurmctld and slurmd, which needs root"
for tool in munged munge slurmctld slurmd sbatch scontrol sinfo srun; do
  command -v "$tool" >/dev/null || PATH=$PATH:/usr/sbin command -v "$tool" >/dev/null ||
    skip "$tool is not installed (Debian: munge, slurmctld, slurmd, slurm-client; scripts/setup.sh)"
done
export PATH=$PATH:/usr/sbin

tmp=$(mktemp -d /tmp/attn-slurm.XXXXXX)
chmod 755 "$tmp"  # munged wants its socket's folders searchable
export SLURM_CONF=$tmp/slurm.conf
cleanup() {
  set +e
  scontrol shutdown >/dev/null 2>&1
  for pidfile in "$tmp/slurmd.pid" "$tmp/slurmctld.pid"; do
    [[ -s $pidfile ]] && kill "$(cat "$pidfile")" 2>/dev/null
  done
  sleep 1
  [[ -S $tmp/munge/socket ]] && munged --stop --socket="$tmp/munge/socket" >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT

# munge with its own key and socket, so a system munged (if any) is untouched.
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/out"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$tmp/munge/munge.key"
munged --force --socket="$tmp/munge/socket" --key-file="$tmp/munge/munge.key" \
  --log-file="$tmp/munge/munged.log" --pid-file="$tmp/munge/munged.pid" \
  --seed-file="$tmp/munge/munged.seed" ||
  skip "munged does not start: $(tail -n 3 "$tmp/munge/munged.log" 2>/dev/null)"
munge -S "$tmp/munge/socket" -n | unmunge -S "$tmp/munge/socket" >/dev/null ||
  skip "munge credentials do not round-trip"

node=$(hostname -s)
port=$((20000 + $$ % 20000))  # private ports: a real Slurm here keeps 6817/6818
cat >"$SLURM_CONF" <<CONF
ClusterName=attntest
SlurmctldHost=$node
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
NodeName=$node CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$SLURM_CONF" -c || skip "slurmctld does not start: $(tail -n 3 "$tmp/slurmctld.log")"
slurmd -f "$SLURM_CONF" || skip "slurmd does not start: $(tail -n 3 "$tmp/slurmd.log")"
for _ in $(seq 60); do
  [[ $(sinfo -h -o %T 2>/dev/null) == idle ]] && break
  sleep 1
done
[[ $(sinfo -h -o %T 2>/dev/null) == idle ]] ||
  skip "the node did not come up: $(sinfo -h 2>&1; tail -n 3 "$tmp/slurmd.log")"
echo "Slurm $(sinfo -V) up: node $node, ports $port/$((port + 1))"

# The README's job script, word for word but for its placeholders.
awk '/^A Slurm job array/ {found = 1} found && /^```sh$/ {body = 1; next}
     body && /^```$/ {exit} body {print}' "$src/README.md" >"$tmp/readme_job.sh"
grep -q '^srun build/attn-run' "$tmp/readme_job.sh" || fail "no Slurm job script found in README.md"
list=$src/docs/list_example/inputs.txt
sed -e "s|--array=0-15|--array=0-3|" -e "s|--cpus-per-task=8|--cpus-per-task=1|" \
    -e "s|build/attn-run|$bin|" -e "s|layer.json|$src/configs/warner_causal.json|" \
    -e "s|inputs.txt|$list|" -e "s|--out-dir results|--out-dir $tmp/out|" \
    "$tmp/readme_job.sh" >"$tmp/job.sh"
for placeholder in "--array=0-3" "--cpus-per-task=1" "$bin" "$tmp/out" "--shard"; do
  grep -qF -- "$placeholder" "$tmp/job.sh" || fail "the README's script changed: no $placeholder in it"
done
echo "--- the job (README.md's script with paths filled in):"
cat "$tmp/job.sh"

(cd "$tmp" && timeout 300 sbatch --wait -o "$tmp/slurm-%A_%a.out" "$tmp/job.sh") ||
  { tail -n 20 "$tmp"/slurm-*.out "$tmp/slurmctld.log" 2>/dev/null; fail "sbatch --wait"; }

# Every input of the list has its result folder; each shard its summary.
n=0
while read -r line; do
  [[ -z ${line// } || $line == \#* ]] && continue
  name=$(basename "$line" .npy)
  for f in context.npy attention.npy run.json; do
    [[ -s $tmp/out/$name/$f ]] || fail "no $name/$f"
  done
  n=$((n + 1))
done <"$list"
for k in 0 1 2 3; do
  [[ -s $tmp/out/batch-$k-of-4.json ]] || fail "no batch-$k-of-4.json"
done
"$bin" -q --merge-shards "$tmp/out" || fail "--merge-shards"
merged=$(grep -c '"index":' "$tmp/out/batch.json")
[[ $merged -eq $n ]] || fail "batch.json lists $merged inputs, the list has $n"
echo "ok: 4 array tasks wrote $n result folders; merged summary lists $n inputs"
