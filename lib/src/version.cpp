#include "attn/version.h"

#include <cblas.h>

namespace attn {

std::string version() { return ATTN_VERSION; }

std::string blas_info() {
  const char* config = openblas_get_config();
  return config ? config : "unknown BLAS";
}

}  // namespace attn
