// The explorer's neuron view (bertviz's): for one (query, key) pair, q and k
// per dimension and their products. With --plot FILE.html and --save q,k the
// forward pass's q and k of the drawn batch entry are kept here (after the
// norms and rope, as --save writes them) and handed to the page.
//
// Letters: L queries, T keys, H heads, Hkv key/value heads, D head size, K
// heads drawn.
#pragma once

#include <cstddef>
#include <vector>

#include "attn/attention.h"
#include "attn/tensor.h"

namespace app {

struct MapPicture;

// Keeps q (L, H, D) and k (T, Hkv, D) of batch entry `b`; every call goes on
// to `next` (the saved files), when given.
class NeuronCapture : public attn::IntermediateSink {
 public:
  NeuronCapture(std::size_t b, std::size_t H, std::size_t Hkv, std::size_t D,
                attn::IntermediateSink* next)
      : b_(b), H_(H), Hkv_(Hkv), D_(D), next_(next) {}
  bool wants_keys_values() const override { return true; }
  bool wants_scores() const override { return next_ && next_->wants_scores(); }
  void write_qkv(std::size_t b0, std::size_t nb, std::size_t L, const float* q, std::size_t ld_q,
                 std::size_t T, std::size_t T_ext, const float* k, const float* v,
                 std::size_t ld_kv) override;
  void write_scores(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                    const float* rows) override {
    if (next_) next_->write_scores(b, h, i0, n, rows);
  }
  void write_z(std::size_t b0, std::size_t nb, std::size_t L, const float* y,
               std::size_t ld_y) override {
    if (next_) next_->write_z(b0, nb, L, y, ld_y);
  }

  attn::Tensor q;  // (L, H, D) of batch entry b
  attn::Tensor k;  // (T, Hkv, D)

 private:
  std::size_t b_, H_, Hkv_, D_;
  attn::IntermediateSink* next_;
};

// Most floats of q and k the page carries (K * (L + T) * D): past it, no
// neuron view (the page stays small enough for a browser).
constexpr std::size_t kMaxNeuronFloats = std::size_t(2) << 20;

// The picture's neuron data from the capture, for its drawn heads
// (pic.heads, the model's head numbers): q (K, L, D) and the k its KV head
// (h / (H / Hkv)) holds, (K, T, D), with the scores' scale. Nothing (and a
// reason in pic.neuron_note) when the page's cells are not one token each
// (past kMaxPageCells tokens, cropped, averaged, extra key columns) or past
// kMaxNeuronFloats.
void attach_neuron(MapPicture& pic, const NeuronCapture& cap, double scale);

}  // namespace app
