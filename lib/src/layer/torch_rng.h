// PyTorch's CPU generator (1.13), bit for bit, for the seeded init
// (CONTRACT.md "Torch-compatible init order"): torch.manual_seed(seed), then
// tensor.uniform_ and tensor.normal_ on contiguous float32 tensors, in the
// order a module's constructor calls them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>

namespace attn::detail {

class TorchGenerator {
 public:
  // torch.manual_seed(seed): CPUGeneratorImpl::set_current_seed seeds its
  // mt19937 with the low 32 bits and forgets any cached normal sample.
  // std::mt19937 is specified to produce the standard MT19937 sequence, which
  // is what at::mt19937 produces.
  explicit TorchGenerator(std::uint64_t seed)
      : engine_(static_cast<std::uint32_t>(seed & 0xFFFFFFFFu)) {}

  // tensor.uniform_(from, to) on float32: out is n contiguous floats.
  void uniform(float* out, std::size_t n, double from, double to);

  // tensor.normal_(0, std) on float32 (a contiguous tensor of n elements), as
  // torch.nn.init.normal_ and xavier_normal_ call it.
  // n >= 16: ATen's normal_fill_AVX2, the kernel every AVX2 (and AVX-512)
  // x86-64 CPU runs (torch.__config__.show(): "CPU capability usage: AVX2");
  // n < 16: the serial at::normal_distribution<double>, whose second Box-Muller
  // value is cached in the generator for the next call.
  void normal(float* out, std::size_t n, double std);

 private:
  std::uint32_t random() { return static_cast<std::uint32_t>(engine_()); }
  std::uint64_t random64();   // CPUGeneratorImpl::random64: two draws, first high
  float uniform01_float();    // at::uniform_real_distribution<float>(0, 1)
  double uniform01_double();  // at::uniform_real_distribution<double>(0, 1)
  double normal_double();     // at::normal_distribution<double>(0, 1), with the cache

  std::mt19937 engine_;
  std::optional<double> next_double_normal_;  // CPUGeneratorImpl::next_double_normal_sample_
};

}  // namespace attn::detail
