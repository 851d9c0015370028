// The neuron view's q and k (neuron_capture.h).
//
// Letters: L queries, T keys, H heads, Hkv key/value heads, D head size, K
// heads drawn.
#include "pictures/neuron_capture.h"

#include <algorithm>
#include <cstring>

#include "pictures/plot.h"

namespace app {

void NeuronCapture::write_qkv(std::size_t b0, std::size_t nb, std::size_t L, const float* q_rows,
                              std::size_t ld_q, std::size_t T, std::size_t T_ext,
                              const float* k_rows, const float* v, std::size_t ld_kv) {
  if (next_) next_->write_qkv(b0, nb, L, q_rows, ld_q, T, T_ext, k_rows, v, ld_kv);
  if (b_ < b0 || b_ >= b0 + nb || !k_rows) return;
  const std::size_t b = b_ - b0;
  q = attn::Tensor({L, H_, D_});
  k = attn::Tensor({T, Hkv_, D_});
  for (std::size_t i = 0; i < L; ++i)
    std::memcpy(q.ptr() + i * H_ * D_, q_rows + (b * L + i) * ld_q, H_ * D_ * sizeof(float));
  for (std::size_t j = 0; j < T; ++j)
    std::memcpy(k.ptr() + j * Hkv_ * D_, k_rows + (b * T_ext + j) * ld_kv,
                Hkv_ * D_ * sizeof(float));
}

void attach_neuron(MapPicture& pic, const NeuronCapture& cap, double scale) {
  pic.neuron_q = pic.neuron_k = attn::Tensor();
  if (cap.q.data.empty()) return;
  const std::size_t L = cap.q.shape[0], H = cap.q.shape[1], D = cap.q.shape[2];
  const std::size_t T = cap.k.shape[0], Hkv = cap.k.shape[1], K = pic.heads.size();
  if (pic.mean_of > 0 || pic.L != L || pic.T != T || L > kMaxPageCells || T > kMaxPageCells ||
      !pic.query_numbers.empty() || !pic.key_numbers.empty()) {
    pic.neuron_note =
        "no neuron view: it needs one cell per token (at most 1,024 tokens, no --queries or "
        "--keys crop, no --average-heads, no extra key columns)";
    return;
  }
  if (K * (L + T) * D > kMaxNeuronFloats) {
    pic.neuron_note = "no neuron view: q and k of the drawn heads are too large for the page";
    return;
  }
  pic.neuron_q = attn::Tensor({K, L, D});
  pic.neuron_k = attn::Tensor({K, T, D});
  for (std::size_t c = 0; c < K; ++c) {
    const std::size_t h = pic.heads[c], g = h / (H / Hkv);
    for (std::size_t i = 0; i < L; ++i)
      std::copy_n(cap.q.ptr() + (i * H + h) * D, D, pic.neuron_q.ptr() + (c * L + i) * D);
    for (std::size_t j = 0; j < T; ++j)
      std::copy_n(cap.k.ptr() + (j * Hkv + g) * D, D, pic.neuron_k.ptr() + (c * T + j) * D);
  }
  pic.neuron_scale = scale;
}

}  // namespace app
