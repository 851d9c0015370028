// OpenBLAS control and what the build runs on (blas_info): the thread-count
// guard that keeps BLAS single-threaded inside our workers (ARCHITECTURE.md: one threading layer)
// and lets the projection GEMMs use every thread. No-ops in builds whose own kernels replace every
// OpenBLAS call (kernels/micro.h's kCallsBlas).
//
// Note on speed: Debian's OpenBLAS 0.3.21 (DYNAMIC_ARCH) treats AMD Zen 4/5
// as "Haswell" (AVX2 kernels). Where the CPU executes AVX-512 at full width,
// OPENBLAS_CORETYPE=SkylakeX in the environment selects OpenBLAS's AVX-512
// sgemm (measured about 2x on the projections here). That is the user's
// choice: the library does not override OpenBLAS's kernel selection.
#include <cblas.h>

#include "attn/linear.h"
#include "kernels/kernels.h"
#include "kernels/micro.h"

// OpenBLAS's pthread build exports this (driver/others/blas_server.c): it
// stops the library's own worker threads; a later threaded call would start
// them again (never made here: every call runs with one OpenBLAS thread).
extern "C" int blas_thread_shutdown_(void);

namespace attn {

void use_own_threads_only() {
  // OpenBLAS starts (cores - 1) threads when it is loaded, and each spins on
  // sched_yield for about 0.1 s before it sleeps: at the start of a short
  // process that steals a core from the forward pass (a B=4, S=1024
  // GPT-2-small layer: cold compute 215 ms with them, 165 ms without). Every
  // build loads it, own kernels or not: --check-f64's float64 products
  // (gemm_f64_nt) are OpenBLAS's dgemm.
  openblas_set_num_threads(1);
  blas_thread_shutdown_();
}

std::string blas_info() {
  if constexpr (kernels::micro::kCallsBlas) {
    const char* config = openblas_get_config();
    return config ? config : "unknown BLAS";
  }
  // The depth slices chosen for this CPU (kernels.h depth_slicing), so a
  // report of a slow machine says which cut it ran.
  const kernels::DepthSlicing cut = kernels::depth_slicing();
  const std::string long_tasks =
      cut.long_tasks_above == kernels::DepthSlicing::kNever
          ? ""
          : "; projections past " + std::to_string(cut.long_tasks_above) + " in long tasks";
  return std::string("not used: attn-run's own GEMM kernels (") +
         kernels::micro::Batch::arch_type::name() + ", " + std::to_string(kernels::micro::kLanes) +
         " float lanes; depths past " + std::to_string(cut.above) + " in slices of " +
         std::to_string(cut.slice) + long_tasks + ")";
}

}  // namespace attn

namespace attn::kernels {

BlasThreads::BlasThreads(int n) : saved_(n) {
  if constexpr (micro::kCallsBlas) {
    saved_ = openblas_get_num_threads();
    if (n != saved_) openblas_set_num_threads(n);
  }
}

BlasThreads::~BlasThreads() {
  if constexpr (micro::kCallsBlas)
    if (openblas_get_num_threads() != saved_) openblas_set_num_threads(saved_);
}

void gemm_f64_nt(std::size_t M, std::size_t N, std::size_t K, const double* a, std::size_t lda,
                 const double* b, std::size_t ldb, double* c, std::size_t ldc) {
  if (M == 0 || N == 0) return;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(M), static_cast<int>(N),
              static_cast<int>(K), 1.0, a, static_cast<int>(lda), b, static_cast<int>(ldb), 0.0, c,
              static_cast<int>(ldc));
}

}  // namespace attn::kernels
