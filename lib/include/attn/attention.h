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
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "attn/digest.h"
#include "attn/layer_weights.h"
#include "attn/linear.h"
#include "attn/masks.h"
#include "attn/positions.h"
#include "attn/scores.h"
#include "attn/tensor.h"

namespace attn {

// The tensors of one forward pass. Letters: L queries, T keys (T = L for
// self-attention), Ck and Cv the key and value source widths.
struct ForwardInputs {
  const Tensor* x = nullptr;          // (B, L, C) queries (and keys and values for self-attention)
  const Tensor* key = nullptr;        // (B, T, Ck) cross-attention keys, or nullptr = x
  const Tensor* value = nullptr;      // (B, T, Cv), or nullptr = key
  const Mask* key_padding = nullptr;  // (B, T), 1 = padded key, or nullptr
  const PositionIds* positions = nullptr;  // (B, L) for rope and alibi, or nullptr = 0..L-1
  const ScoreMask* attn_mask = nullptr;    // resolved for (B, H, L, T), or nullptr
};

// Keys each map row holds: T, plus one for bias_kv and one for zero_attn
// (torch MHA appends them after the T keys; masks treat them as allowed).
std::size_t map_keys(const Weights& w, const AttentionSpec& spec, std::size_t T);

// Receives the softmax weights block by block, so maps of any size can go
// straight to a file: rows [i0, i0 + n) of the (L, T') map of batch b, head h,
// as n x T' floats row-major (T' = map_keys(...): S for self-attention).
// Within (B, H, L, T') those rows are contiguous.
// Called concurrently from worker threads for different blocks: thread-safe.
class AttentionSink {
 public:
  virtual ~AttentionSink() = default;
  virtual void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                          const float* rows) = 0;
  // What this sink (and any it forwards to) needs: by default the rows. A
  // chain needing no rows is handed digests instead (attn/digest.h): the
  // forward pass then streams, and calls write_digests for every block
  // where it called write_rows (write_rows still comes for a block whose
  // scores are not finite, under --allow-nonfinite).
  virtual DigestRequest digest_request() const { return {}; }
  virtual void write_digests(std::size_t /*b*/, std::size_t /*h*/, std::size_t /*i0*/,
                             const RowDigests& /*d*/) {}
  // With a request's key_rows, after each block's write_digests: the block's
  // per-key sums over its counted rows (attn/digest.h). Sinks that forward
  // digests forward these too.
  virtual void write_key_sums(std::size_t /*b*/, std::size_t /*h*/, const KeySums& /*k*/) {}
};

// Collects the maps in memory: a (B, H, L, T) tensor (T = L by default).
class TensorSink : public AttentionSink {
 public:
  TensorSink(std::size_t B, std::size_t H, std::size_t L, std::size_t T = 0)
      : maps({B, H, L, T ? T : L}), H_(H), L_(L), T_(T ? T : L) {}
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override {
    std::copy(rows, rows + n * T_, maps.data.begin() + ((b * H_ + h) * L_ + i0) * T_);
  }
  Tensor maps;

 private:
  std::size_t H_, L_, T_;
};

// torch's average_attn_weights=True: receives every head's rows and hands
// `next` the mean over heads, as head 0 of a (B, 1, L, T') map (so `next` is
// built for one head). Deterministic: the H heads of a block are summed in
// head order once all have arrived (the forward pass hands them out
// consecutively, so few blocks wait at once). Thread-safe.
class HeadMeanSink : public AttentionSink {
 public:
  HeadMeanSink(std::size_t H, std::size_t T, AttentionSink& next);
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;

 private:
  struct Pending {
    std::vector<float> rows;  // (H, n, T')
    std::size_t arrived = 0;
  };
  std::size_t H_, T_;
  AttentionSink& next_;
  std::mutex mutex_;
  std::map<std::pair<std::size_t, std::size_t>, Pending> pending_;  // (b, i0) -> heads so far
};

// --save: the forward pass's intermediates as TransformerLens names
// them, handed over as they are made (CONTRACT.md "(v4) Comparisons,
// statistics, intermediates"), so none is ever held whole. Every call but
// write_scores comes on the calling thread, once per chunk of batch rows
// [b0, b0 + nb), in batch order; write_scores comes from the workers
// (thread-safe, as AttentionSink::write_rows).
class IntermediateSink {
 public:
  virtual ~IntermediateSink() = default;
  // Which calls the sink wants: k and v rows make the projection keep them
  // row-major (not the fast path straight into panels); scores make every
  // block compute its score rows.
  virtual bool wants_keys_values() const = 0;
  virtual bool wants_scores() const = 0;
  // After qk_norm, rope and the temperature (hook_q, hook_k, hook_v): q of
  // batch b0 + b, query i, head h at q[(b*L + i)*ld_q + h*D]; k and v of key
  // t (t < T, the real keys), KV head g at k[(b*T' + t)*ld_kv + g*D] (nullptr
  // unless wants_keys_values).
  virtual void write_qkv(std::size_t b0, std::size_t nb, std::size_t L, const float* q,
                         std::size_t ld_q, std::size_t T, std::size_t T_ext, const float* k,
                         const float* v, std::size_t ld_kv) = 0;
  // hook_attn_scores: rows [i0, i0 + n) of batch b, head h, n x T' floats:
  // scale, softcap and the biases applied, -inf where a key is not allowed.
  virtual void write_scores(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                            const float* rows) = 0;
  // hook_z: each head's weighted values (after the gate, the input of the
  // output projection): batch b0 + b, query i, head h at y[(b*L + i)*ld_y + h*Dz].
  virtual void write_z(std::size_t b0, std::size_t nb, std::size_t L, const float* y,
                       std::size_t ld_y) = 0;
};

struct ForwardOptions {
  // Where the softmax weights go, or nullptr to not produce them: then the
  // streaming path runs and never holds S x S weights.
  AttentionSink* attention = nullptr;
  int threads = 0;  // 0 = the CPUs this process may use (attn/cpus.h)
  // Scores or outputs that overflow float32 are an Error(Exit::data) naming
  // batch, head and query row (CONTRACT.md "Numerics"); off for inputs that
  // were let through non-finite on purpose (--allow-nonfinite).
  bool check_overflow = true;
  // Called on the calling thread each time the context rows of batch entries
  // [b0, b0 + nb) are final, before the next chunk starts (chunks run in
  // batch order): a caller can write them out while the rest is computed.
  // Empty: not called.
  std::function<void(std::size_t b0, std::size_t nb)> context_done;
  // --save: where q, k, v, the scores and z go, or nullptr.
  IntermediateSink* intermediates = nullptr;
  // After the pass, keep the pages of its buffers in the warm pool
  // (prefault_forward) for the next pass, instead of giving them back to the
  // system: for many passes in a row (--input-list), at the cost of holding
  // them while the outputs are written.
  bool keep_warm = false;
};

struct ForwardStats {
  std::int64_t fully_masked_rows = 0;  // (b, h, query) rows with every key masked
  double flops = 0.0;                  // multiply-adds x2 actually computed
  // Wall time of the pass's stages over all its chunks, in milliseconds: the
  // projections with their norms, positions and packing (steps 1-2), the
  // attention tasks (3-8), then the gate, the output projection and the
  // residual norm (9-10). Before the first chunk: input_norm, masks, the
  // relative-position tables (not counted here).
  double project_ms = 0.0, attention_ms = 0.0, output_ms = 0.0;
};

// The forward pass of CONTRACT.md "Scores, in order" over `in`; context is
// resized to (B, L, O). Runs on opt.threads workers (std::thread; OpenBLAS
// single-threaded inside them: one threading layer). Safe to call from
// several threads at once (results stay exact; OpenBLAS's thread count is
// process-wide). The batch runs in chunks of about 1024 query rows (whole
// batch rows), one after the other through every step. Memory besides the
// inputs and context: one chunk's projections (rows x (H+2*Hkv)*D for
// self-attention; rows x H*D plus its keys x 2*Hkv*D for cross-attention),
// plus per worker a 128 x 256 score tile, or 128 x T' rows when maps go to a
// sink. Exit::data when a tensor's shape does not fit the weights or
// each other; exceptions thrown by the sink reach the caller after every
// worker stopped. in.x may be &context when O == C and there is no residual
// norm: the input's rows are then overwritten (by the input norm in place,
// and by the context rows once their chunk is projected).
ForwardStats forward(const Weights& w, const AttentionSpec& spec, const ForwardInputs& in,
                     Tensor& context, const ForwardOptions& opt);

// Self-attention without the v2 inputs: x (B, S, C), key_padding (B, S) or nullptr.
ForwardStats forward(const Weights& w, const AttentionSpec& spec, const Tensor& x,
                     const Mask* key_padding, Tensor& context, const ForwardOptions& opt);

// Sets aside the memory a forward pass of this geometry on `threads`
// workers (0 = every core) over queries of length L (0 when not known yet)
// works in: one chunk's q and k and v panels (max(L, 1024) query rows,
// self-attention's shape) and each worker's projection buffers, and faults
// it in on a thread of its own (base/warm_pool.h), so the pass finds it
// ready. Call it before loading the weights and inputs, whose reading hides
// the faults (10 us per 4 KiB page on a VM). Once per process, at most 1 GiB,
// and none under an address-space limit (ulimit -v); every later pass reuses
// the memory. A pass that needs more takes the rest as before.
void prefault_forward(const Geometry& g, int threads, std::size_t L);

// FLOPs of the dense forward pass (2 per multiply-add), counting causal
// score and P·V work halved (only the lower triangle is computed).
double forward_flops(const Weights& w, std::int64_t B, std::int64_t S, bool causal);

}  // namespace attn
