// What this build is: its version (for --version and run.json; the BLAS it
// runs on is attn/linear.h's blas_info).
#pragma once

#include <string>

namespace attn {

std::string version();  // "1.0.0"

}  // namespace attn
