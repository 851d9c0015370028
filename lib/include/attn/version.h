// What this build is: the version and the BLAS it runs on (for --version and run.json).
#pragma once

#include <string>

namespace attn {

std::string version();  // "1.0.0"
// e.g. "OpenBLAS 0.3.21 NO_AFFINITY SKYLAKEX MAX_THREADS=64", or "not used: ..."
// when this build's own kernels replace every OpenBLAS call.
std::string blas_info();

}  // namespace attn
