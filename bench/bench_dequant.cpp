// Issue 29 target 4's GGUF half: the dequantizers' rate in GB/s of float32
// output on one core, with a plain memset of the same output buffer beside
// them (the rate no dequantizer can pass: it only writes). The input is one
// Llama-3-8B q_proj's worth of blocks (4096 x 4096 elements, 64 MiB of
// float32 out, far past the caches, as when a layer loads) of random bytes
// with every 16-bit word's bit 14 cleared, so each fp16 / bf16 / e8m0 scale
// is finite and below 2 (random scales would include NaN and Inf).
// Prints per type the median and best of REPS passes.
// Usage: bench_dequant [--reps N] [--elements N]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/ggml_dequant.h"

namespace {

using Clock = std::chrono::steady_clock;
using attn::GgmlType;

struct Rate {
  double median, best;  // GB/s of float32 output
};

template <class F>
Rate time_passes(int reps, std::size_t out_bytes, F&& pass) {
  std::vector<double> gbs;
  pass();  // fault the pages in and warm the code
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    pass();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    gbs.push_back(double(out_bytes) / s / 1e9);
  }
  std::sort(gbs.begin(), gbs.end());
  return {gbs[gbs.size() / 2], gbs.back()};
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  std::size_t n = std::size_t(4096) * 4096;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
    if (a == "--elements") n = std::strtoull(argv[i + 1], nullptr, 10);
  }
  n -= n % 256;  // whole blocks of every type (the K-quants' 256 is the largest)
  std::vector<float> out(n);
  const std::size_t out_bytes = n * sizeof(float);

  const Rate ms = time_passes(reps, out_bytes, [&] {
    std::memset(out.data(), 0, out_bytes);
    asm volatile("" : : "r"(out.data()) : "memory");  // keep the stores
  });
  std::printf(
      "one core; %zu elements (%.0f MiB of float32 out); GB/s of float32 written, "
      "median and best of %d\n",
      n, double(out_bytes) / (1 << 20), reps);
  std::printf("%-8s %10s %10s %12s\n", "type", "median", "best", "memset/type");
  std::printf("%-8s %10.1f %10.1f %12s\n", "memset", ms.median, ms.best, "1.00");

  const GgmlType types[] = {GgmlType::q4_k,  GgmlType::q6_k, GgmlType::q5_k, GgmlType::q8_0,
                            GgmlType::q4_0,  GgmlType::q2_k, GgmlType::q3_k, GgmlType::iq4_xs,
                            GgmlType::mxfp4, GgmlType::bf16, GgmlType::f16};
  std::mt19937_64 rng(1);
  for (GgmlType t : types) {
    const auto id = static_cast<std::uint32_t>(t);
    const attn::GgmlTypeTraits* tr = attn::ggml_type_traits(id);
    const std::size_t bytes = n / tr->block_size * tr->block_bytes;
    std::vector<std::uint16_t> src((bytes + 1) / 2);
    for (auto& w : src) w = std::uint16_t(rng()) & 0xBFFF;  // finite scales below 2
    const Rate r = time_passes(reps, out_bytes, [&] {
      attn::kernels::dequantize_row(id, src.data(), out.data(), n);
      asm volatile("" : : "r"(out.data()) : "memory");
    });
    std::printf("%-8s %10.1f %10.1f %12.2f\n", tr->name, r.median, r.best, ms.median / r.median);
  }
  return 0;
}
