// OpenBLAS control: the thread-count guard that keeps BLAS single-threaded
// inside our workers (ARCHITECTURE.md: one threading layer), and the choice
// of OpenBLAS's AVX-512 kernels on CPUs its dynamic dispatch misses.
//
// Why: Debian's OpenBLAS 0.3.21 (DYNAMIC_ARCH) classifies AMD Zen 4/5 as
// "Haswell" and runs the AVX2 sgemm kernel, although these CPUs execute
// AVX-512; its "SkylakeX" kernel is about twice as fast here (measured
// 212 vs 106 GFLOP/s per core on the Q|K|V projection). OpenBLAS only reads
// its OPENBLAS_CORETYPE variable while initializing, so we re-run that
// initialization once, before our first BLAS call. A user's own
// OPENBLAS_CORETYPE, or ATTN_BLAS_KEEP_CORE=1, leaves the choice alone.
#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "kernels.h"

extern "C" {
// Exported by OpenBLAS's DYNAMIC_ARCH builds (driver/others/dynamic.c).
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}

namespace attn::kernels {
namespace {

bool cpu_has_avx512() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

void choose_core() {
  if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit) return;  // not a DYNAMIC_ARCH build
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("ATTN_BLAS_KEEP_CORE")) return;
  const char* core = openblas_get_corename();
  if (!core || !cpu_has_avx512()) return;
  const std::string name = core;
  if (name != "Haswell" && name != "Zen" && name != "haswell" && name != "zen") return;
  // Runs before any of our BLAS calls (std::call_once below); the variable
  // is removed again so child processes choose for themselves.
  setenv("OPENBLAS_CORETYPE", "SKYLAKEX", 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace

void prepare_blas() {
  static std::once_flag once;
  std::call_once(once, choose_core);
}

BlasThreads::BlasThreads(int n) : saved_(openblas_get_num_threads()) {
  if (n != saved_) openblas_set_num_threads(n);
}

BlasThreads::~BlasThreads() {
  if (openblas_get_num_threads() != saved_) openblas_set_num_threads(saved_);
}

}  // namespace attn::kernels
