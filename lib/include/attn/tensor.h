// Plain row-major float32 tensors and byte masks: the values that flow
// between the library's stages. Kernels take raw pointers into these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// Row-major (C order) float32 array.
struct Tensor {
  std::vector<std::size_t> shape;
  std::vector<float> data;

  Tensor() = default;
  explicit Tensor(std::vector<std::size_t> shape_, float fill = 0.0f)
      : shape(std::move(shape_)), data(count(shape), fill) {}

  std::size_t size() const { return data.size(); }
  std::size_t ndim() const { return shape.size(); }
  bool empty() const { return data.empty() && shape.empty(); }
  float* ptr() { return data.data(); }
  const float* ptr() const { return data.data(); }

  static std::size_t count(const std::vector<std::size_t>& s) {
    std::size_t n = 1;
    for (std::size_t d : s) n *= d;
    return n;
  }
};

// Row-major boolean mask, one byte per element: 1 = true (masked), 0 = false.
struct Mask {
  std::vector<std::size_t> shape;
  std::vector<std::uint8_t> data;
};

// Row-major int64 array: position ids (CONTRACT.md v2 `positions`, (S,) or (B, S)).
struct PositionIds {
  std::vector<std::size_t> shape;
  std::vector<std::int64_t> data;
};

// "(2, 6, 3)": shapes in messages, written as NumPy prints them.
std::string shape_str(const std::vector<std::size_t>& shape);

}  // namespace attn
