// The modes of attn-run, one file each (CLI11 example style).
#pragma once

#include "options.h"

namespace app {

int run_forward(const Options& opt);       // the forward pass (run_forward.cpp)
int run_dump_weights(const Options& opt);  // --dump-weights (dump_weights.cpp)

}  // namespace app
