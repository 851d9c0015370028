#include "attn/version.h"

#include <cblas.h>

#include "kernel_micro.h"

namespace attn {

std::string version() { return ATTN_VERSION; }

std::string blas_info() {
  if constexpr (kernels::micro::kCallsBlas) {
    const char* config = openblas_get_config();
    return config ? config : "unknown BLAS";
  }
  return std::string("not used: attn-run's own GEMM kernels (") +
         kernels::micro::Batch::arch_type::name() + ", " + std::to_string(kernels::micro::kLanes) +
         " float lanes)";
}

}  // namespace attn
