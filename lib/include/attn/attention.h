// The attention forward pass over canonical weights.
//
// Letters: B batch, S sequence, C hidden, H heads, Hkv key/value heads,
// D head size, O out size.
// Equivalent to the tutorial modules (and torch.nn.MultiheadAttention; with
// Hkv < H, Hugging Face's grouped-query attention: query head h reads KV head
// h / (H / Hkv)):
//   qkv = x Wqkv^T + b                     (B, S, (H+2*Hkv)*D)
//   att = softmax(scale * q k^T + mask)    (B, H, S, S)
//   y   = (att v) concatenated over heads  (B, S, H*D)
//   out = y Wo^T + bo                      (B, S, O)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "attn/tensor.h"
#include "attn/weights.h"

namespace attn {

struct AttentionSpec {
  float scale = 1.0f;   // multiplies q k^T
  bool causal = false;  // mask keys after the query position
};

// Receives the softmax weights block by block, so maps of any size can go
// straight to a file: rows [i0, i0 + n) of the (S, S) map of batch b, head h,
// as n x S floats row-major. Within (B, H, S, S) those rows are contiguous.
// Called concurrently from worker threads for different blocks: thread-safe.
class AttentionSink {
 public:
  virtual ~AttentionSink() = default;
  virtual void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                          const float* rows) = 0;
};

// Collects the maps in memory: a (B, H, S, S) tensor.
class TensorSink : public AttentionSink {
 public:
  TensorSink(std::size_t B, std::size_t H, std::size_t S) : maps({B, H, S, S}), H_(H), S_(S) {}
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override {
    std::copy(rows, rows + n * S_, maps.data.begin() + ((b * H_ + h) * S_ + i0) * S_);
  }
  Tensor maps;

 private:
  std::size_t H_, S_;
};

struct ForwardOptions {
  // Where the softmax weights go, or nullptr to not produce them: then the
  // streaming path runs and never holds S x S weights.
  AttentionSink* attention = nullptr;
  int threads = 0;  // 0 = all cores
  // Scores or outputs that overflow float32 are an Error(Exit::data) naming
  // batch, head and query row (CONTRACT.md "Numerics"); off for inputs that
  // were let through non-finite on purpose (--allow-nonfinite).
  bool check_overflow = true;
};

struct ForwardStats {
  std::int64_t fully_masked_rows = 0;  // (b, h, query) rows with every key masked
  double flops = 0.0;                  // multiply-adds x2 actually computed
};

// x: (B, S, C) row-major. key_padding: (B, S) bytes, 1 = padded key, or
// nullptr. context: resized to (B, S, O).
// Runs on opt.threads workers (std::thread; OpenBLAS multi-threaded for the
// two projection GEMMs, single-threaded inside the workers; the previous
// OpenBLAS thread count is restored). Safe to call from several threads at
// once (results stay exact; OpenBLAS's thread count is process-wide, so
// concurrent calls may run each other's GEMMs with fewer threads). Memory
// besides x and context: the (B*S, (H+2*Hkv)*D) projection buffer, plus per worker
// a 128 x 256 score tile, or 128 x S rows when maps go to a sink.
// Exit::data when x is not (B, S, C) or the mask not (B, S); exceptions
// thrown by the sink reach the caller after every worker stopped.
ForwardStats forward(const Weights& w, const AttentionSpec& spec, const Tensor& x,
                     const Mask* key_padding, Tensor& context, const ForwardOptions& opt);

// out = a W^T + b, same as torch.nn.Linear, as row slices on attn-run's own
// workers with OpenBLAS single-threaded (one threading layer). a: (M, K) with
// leading dimension lda; W: (N, K); bias: (N) or empty; out: (M, N) with
// leading dimension ldo. threads: 0 = all cores.
void linear(const float* a, std::size_t lda, std::size_t M, std::size_t K, const Tensor& W,
            const Tensor& bias, float* out, std::size_t ldo, int threads);

// FLOPs of the dense forward pass (2 per multiply-add), counting causal
// score and P·V work halved (only the lower triangle is computed).
double forward_flops(const Weights& w, std::int64_t B, std::int64_t S, bool causal);

}  // namespace attn
