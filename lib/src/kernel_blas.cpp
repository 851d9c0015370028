// OpenBLAS control: the thread-count guard that keeps BLAS single-threaded
// inside our workers (ARCHITECTURE.md: one threading layer) and lets the
// projection GEMMs use every thread.
//
// Note on speed: Debian's OpenBLAS 0.3.21 (DYNAMIC_ARCH) treats AMD Zen 4/5
// as "Haswell" (AVX2 kernels). Where the CPU executes AVX-512 at full width,
// OPENBLAS_CORETYPE=SkylakeX in the environment selects OpenBLAS's AVX-512
// sgemm (measured about 2x on the projections here). That is the user's
// choice: the library does not override OpenBLAS's kernel selection.
#include <cblas.h>

#include "kernels.h"

namespace attn::kernels {

BlasThreads::BlasThreads(int n) : saved_(openblas_get_num_threads()) {
  if (n != saved_) openblas_set_num_threads(n);
}

BlasThreads::~BlasThreads() {
  if (openblas_get_num_threads() != saved_) openblas_set_num_threads(saved_);
}

}  // namespace attn::kernels
