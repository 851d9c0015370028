// What this build is: the version and the BLAS it runs on (for --version and run.json).
#pragma once

#include <string>

namespace attn {

std::string version();    // "1.0.0"
std::string blas_info();  // e.g. "OpenBLAS 0.3.21 NO_AFFINITY SKYLAKEX MAX_THREADS=64"

}  // namespace attn
