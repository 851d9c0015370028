// Plain row-major float32 tensors and byte masks: the values that flow
// between the library's stages. Kernels take raw pointers into these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace attn {

namespace detail {
// Memory for large buffers (lib/src/base/buffer.cpp): at least kHugeBytes are
// 2 MiB-aligned with transparent huge pages asked for (madvise), since a
// first touch of 4 KiB pages costs a fault each (about 6 us apiece on a VM:
// 9,000 of them for a 37 MB projection buffer); smaller ones come from new.
constexpr std::size_t kHugeBytes = std::size_t(2) << 20;
void* alloc_buffer(std::size_t bytes);
void free_buffer(void* p, std::size_t bytes) noexcept;
// The same from the forward pass's warm pool when it has room (memory
// faulted in ahead, lib/src/base/warm_pool.h), else alloc_buffer's.
void* alloc_warm(std::size_t bytes);
void free_warm(void* p, std::size_t bytes) noexcept;
}  // namespace detail

// The allocator of the library's float buffers: detail::alloc_buffer (with
// kWarm, detail::alloc_warm), and no zero-fill on resize (every buffer is
// written before it is read; a value given, as in Tensor(shape, fill), is
// still written).
template <class T, bool kWarm = false>
struct BufferAllocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = BufferAllocator<U, kWarm>;
  };
  BufferAllocator() = default;
  template <class U>
  BufferAllocator(const BufferAllocator<U, kWarm>&) noexcept {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    return static_cast<T*>(kWarm ? detail::alloc_warm(bytes) : detail::alloc_buffer(bytes));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (kWarm)
      detail::free_warm(p, n * sizeof(T));
    else
      detail::free_buffer(p, n * sizeof(T));
  }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-init: no zero-fill
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  friend bool operator==(const BufferAllocator&, const BufferAllocator&) { return true; }
  friend bool operator!=(const BufferAllocator&, const BufferAllocator&) { return false; }
};

// A float32 buffer: resize() leaves new elements unset.
using FloatBuffer = std::vector<float, BufferAllocator<float>>;
// The same in the forward pass's warm pool when it has room: its working buffers.
using WarmBuffer = std::vector<float, BufferAllocator<float, true>>;

// Row-major (C order) float32 array.
struct Tensor {
  std::vector<std::size_t> shape;
  FloatBuffer data;

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

// A row-major matrix viewed in place: (rows, cols), row stride cols.
struct MatrixRef {
  const float* data = nullptr;
  std::size_t rows = 0, cols = 0;
};

// Row-major boolean mask, one byte per element: 1 = true (masked), 0 = false.
struct Mask {
  std::vector<std::size_t> shape;
  std::vector<std::uint8_t> data;
};

// Row-major int64 array: position ids (CONTRACT.md v2 `positions`, (S,) or
// (B, S)), or with rope.mrope_section the three rows of mrope (time, height,
// width; (3, S) or (3, B, S), Hugging Face's get_rope_index). Resolved for a
// run: (B, S) or (3, B, S), so data's first B*S values are (B, S) positions
// in both (the time row: what alibi, relative biases and learned positions read).
struct PositionIds {
  std::vector<std::size_t> shape;
  std::vector<std::int64_t> data;
  // Values between a token's rows in data: B*S for (3, B, S), 0 for one row.
  std::size_t row_stride() const { return shape.size() == 3 ? shape[1] * shape[2] : 0; }
};

// Index of the first inf or NaN among v[0..n), or n when every value is
// finite: a branch-free pass on the exponent bits, block by block, which the
// compiler vectorizes (a branch per value is several times slower), and a
// value-by-value search only inside the block that has one.
std::size_t first_nonfinite(const float* v, std::size_t n);

// "(2, 6, 3)": shapes in messages, written as NumPy prints them.
std::string shape_str(const std::vector<std::size_t>& shape);

}  // namespace attn
