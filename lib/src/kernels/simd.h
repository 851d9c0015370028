// xsimd, the kernels' one way in: GCC 12 reports a false -Wmaybe-uninitialized
// and -Wuninitialized inside its own AVX-512 intrinsics (their undefined
// pass-through, as xsimd 8.1 calls them, once inlined into the exp); they are
// silenced for these headers only. Clang has neither false warning, nor the
// first name.
#pragma once

#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop
