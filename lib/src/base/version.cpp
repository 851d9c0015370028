#include "attn/version.h"

namespace attn {

std::string version() { return ATTN_VERSION; }

}  // namespace attn
