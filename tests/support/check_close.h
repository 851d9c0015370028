// Asserting that a result matches a golden tensor: same shape, and the
// largest difference within `tol` of the expected tensor's scale (CONTRACT.md
// "Numerics": 1e-5), with the difference and both shapes in the report.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "attn/tensor.h"
#include "test_util.h"

namespace attn::test {

inline void check_close(const Tensor& got, const Tensor& want, const std::string& what,
                        double tol = 1e-5) {
  const Diff d = compare(got, want);
  INFO(what << ": " << describe(d) << ", shapes " << shape_str(got.shape) << " vs "
            << shape_str(want.shape));
  CHECK(d.shape_ok);
  CHECK(d.relative() <= tol);
}

}  // namespace attn::test
