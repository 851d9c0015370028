// How many CPUs this process may use: what --threads defaults to.
#pragma once

namespace attn {

// The CPUs of the affinity mask (taskset, a cpuset, a Slurm job's cores),
// lowered to the CPU quota of the process's cgroup and its ancestors
// (cgroup v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us: a
// container's --cpus, a Slurm node's cgroup), rounded up; at least 1. Read
// once a process. (std::thread::hardware_concurrency counts the machine's.)
int available_cpus();

}  // namespace attn
