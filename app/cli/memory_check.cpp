#include "cli/memory_check.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "attn/error.h"
#include "attn/weights.h"

namespace app {

std::size_t mul_sat(std::size_t a, std::size_t b) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a)
    return std::numeric_limits<std::size_t>::max();
  return a * b;
}

std::size_t memory_limit() {
  std::size_t limit = std::numeric_limits<std::size_t>::max();
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) limit = mul_sat(std::size_t(pages), std::size_t(page));
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit rl {};
    if (::getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < limit)
      limit = std::size_t(rl.rlim_cur);
  }
  // Test hook: ATTN_TEST_MEMORY_LIMIT=<bytes> lowers the limit as `ulimit -v`
  // does, for the sanitizer build, whose shadow memory cannot be mapped under
  // an address-space limit.
  if (const char* test_limit = std::getenv("ATTN_TEST_MEMORY_LIMIT")) {
    const unsigned long long v = std::strtoull(test_limit, nullptr, 10);
    if (v > 0 && v < limit) limit = std::size_t(v);
  }
  return limit;
}

namespace {
std::string gigabytes(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", double(bytes) / 1e9);
  return buf;
}
}  // namespace

void check_memory(std::size_t bytes, const std::string& culprit, const std::string& what) {
  const std::size_t limit = memory_limit();
  if (bytes <= limit) return;
  const bool saturated = bytes == std::numeric_limits<std::size_t>::max();
  throw attn::Error(attn::Exit::unavailable,
                    culprit + ": " + what + " needs " +
                        (saturated ? std::string("more than 2^64 bytes")
                                   : std::to_string(bytes) + " bytes (" + gigabytes(bytes) + ")") +
                        ", more than the " + std::to_string(limit) + " bytes (" + gigabytes(limit) +
                        ") this machine allows (physical memory, ulimit -v/-d)");
}

void check_init_memory(const attn::Config& cfg) {
  if (!cfg.init_seed || !cfg.layout) return;
  std::size_t bytes = 0;
  for (const auto& p : attn::expected_params(cfg, *cfg.layout)) {
    std::size_t n = sizeof(float);
    for (std::size_t d : p.shape) n = mul_sat(n, d);
    bytes = bytes + n < bytes ? std::numeric_limits<std::size_t>::max() : bytes + n;
  }
  check_memory(
      bytes, "hidden_size",
      "a seeded init of hidden_size " + std::to_string(cfg.hidden_size) + " (its parameters)");
}

}  // namespace app
