// The dense products of the library (lib/src/kernels/linear.cpp,
// kernels/blas.cpp): torch.nn.Linear over raw rows, and the BLAS the build
// runs on. The kernels' public face: it sees tensor.h and nothing above it.
//
// Letters: M rows, K inputs, N outputs.
#pragma once

#include <cstddef>
#include <string>

#include "attn/tensor.h"

namespace attn {

// out = a W^T + b, same as torch.nn.Linear, as row slices on attn-run's own
// workers with OpenBLAS single-threaded (one threading layer). a: (M, K) with
// leading dimension lda; W: (N, K); bias: (N) or empty; out: (M, N) with
// leading dimension ldo. threads: 0 = the CPUs this process may use.
void linear(const float* a, std::size_t lda, std::size_t M, std::size_t K, const Tensor& W,
            const Tensor& bias, float* out, std::size_t ldo, int threads);
// The same with W viewed in place (N = W.rows, K = W.cols) and bias (N) or nullptr.
void linear(const float* a, std::size_t lda, std::size_t M, const MatrixRef& W, const float* bias,
            float* out, std::size_t ldo, int threads);

// For programs whose BLAS work is all attn-run's (the executable calls it
// first thing): OpenBLAS is set to one thread and its own worker threads are
// stopped. The forward pass never asks OpenBLAS for threads (its workers
// call it single-threaded), and OpenBLAS's idle threads would spin beside
// them for their first 0.1 s. Call before any other thread uses BLAS.
void use_own_threads_only();

// e.g. "OpenBLAS 0.3.21 NO_AFFINITY SKYLAKEX MAX_THREADS=64", or "not used: ..."
// when this build's own kernels replace every OpenBLAS call (--version, run.json).
std::string blas_info();

}  // namespace attn
