// available_cpus (cpus.h): the affinity mask and the cgroup's CPU quota.
//
// Test hook: ATTN_TEST_PROC_SELF=DIR reads DIR/cgroup and DIR/mountinfo in
// place of /proc/self's (a made-up cgroup tree, so the quota rules are
// tested without a cgroup of one's own).
#include "attn/cpus.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace attn {
namespace {

std::string proc_self() {
  const char* dir = std::getenv("ATTN_TEST_PROC_SELF");
  return dir && *dir ? dir : "/proc/self";
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  // More CPUs than a cpu_set_t holds: ask with a larger set.
  for (int n = 2048; n <= (1 << 20); n *= 2) {
    cpu_set_t* big = CPU_ALLOC(n);
    const std::size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, big);
    const bool ok = ::sched_getaffinity(0, size, big) == 0;
    const int count = ok ? CPU_COUNT_S(size, big) : 0;
    CPU_FREE(big);
    if (ok) return count;
  }
  return 0;
}

// CPUs a quota of `quota` per `period` gives (rounded up); none when unlimited.
double quota_cpus(const std::string& quota, const std::string& period) {
  if (quota.empty() || quota == "max" || quota[0] == '-') return 0;
  const double q = std::atof(quota.c_str()), p = std::atof(period.c_str());
  return q > 0 && p > 0 ? q / p : 0;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

struct Mount {
  std::string root, point;  // the hierarchy's folder mounted, and where
  bool v2 = false;
};

// The smallest quota on the way from `dir` (a cgroup's folder) up to its
// mount point; 0 when none.
double tightest_quota(const Mount& m, const std::string& cgroup) {
  std::string rel = cgroup;  // relative to the mount's root
  if (m.root != "/" && rel.compare(0, m.root.size(), m.root) == 0) rel = rel.substr(m.root.size());
  std::string dir = m.point + (rel == "/" ? std::string() : rel);
  double best = 0;
  for (;;) {
    double cpus = 0;
    if (m.v2) {
      const std::vector<std::string> f = split(first_line(dir + "/cpu.max"), ' ');
      if (f.size() == 2) cpus = quota_cpus(f[0], f[1]);
    } else {
      cpus =
          quota_cpus(first_line(dir + "/cpu.cfs_quota_us"), first_line(dir + "/cpu.cfs_period_us"));
    }
    if (cpus > 0 && (best == 0 || cpus < best)) best = cpus;
    if (dir.size() <= m.point.size()) break;
    dir = dir.substr(0, dir.rfind('/'));
    if (dir.size() < m.point.size()) break;
  }
  return best;
}

// The CPUs the cgroup's quota gives (0 when there is none).
double cgroup_cpus() {
  const std::string self = proc_self();
  // /proc/self/cgroup: "0::/path" (v2), "N:cpu,cpuacct:/path" (v1).
  std::string v2_path, v1_path;
  bool v1_found = false;
  std::ifstream cg(self + "/cgroup");
  for (std::string line; std::getline(cg, line);) {
    const std::size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) v2_path = path;
    for (const std::string& c : split(controllers, ','))
      if (c == "cpu") v1_path = path, v1_found = true;
  }
  // /proc/self/mountinfo: "id parent major:minor root point options - type source super".
  double best = 0;
  std::ifstream mi(self + "/mountinfo");
  for (std::string line; std::getline(mi, line);) {
    const std::vector<std::string> f = split(line, ' ');
    const auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || dash + 3 > f.end()) continue;
    const std::string& type = *(dash + 1);
    Mount m{f[3], f[4], type == "cgroup2"};
    double cpus = 0;
    if (m.v2 && !v2_path.empty()) {
      cpus = tightest_quota(m, v2_path);
    } else if (type == "cgroup" && v1_found) {
      const std::vector<std::string> opts = split(*(dash + 3), ',');
      if (std::find(opts.begin(), opts.end(), "cpu") != opts.end())
        cpus = tightest_quota(m, v1_path);
    }
    if (cpus > 0 && (best == 0 || cpus < best)) best = cpus;
  }
  return best;
}

}  // namespace

int available_cpus() {
  static const int cpus = [] {
    int n = affinity_cpus();
    if (n <= 0) n = int(std::thread::hardware_concurrency());
    const double quota = cgroup_cpus();
    if (quota > 0) n = n > 0 ? std::min(n, int(std::ceil(quota - 1e-9))) : int(std::ceil(quota));
    return std::max(1, n);
  }();
  return cpus;
}

}  // namespace attn
