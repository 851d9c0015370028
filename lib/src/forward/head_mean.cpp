// torch's average_attn_weights=True as a sink (attention.h's HeadMeanSink):
// attn_output_weights.mean(dim=1) of F.multi_head_attention_forward.
//
// Letters: H heads, T' keys of a map row, n rows of a block.
#include <cstring>

#include "attn/attention.h"

namespace attn {

HeadMeanSink::HeadMeanSink(std::size_t H, std::size_t T, AttentionSink& next)
    : H_(H), T_(T), next_(next) {}

void HeadMeanSink::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                              const float* rows /* (n, T') */) {
  std::vector<float> block;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Pending& p = pending_[{b, i0}];
    if (p.rows.empty()) p.rows.resize(H_ * n * T_);
    std::memcpy(p.rows.data() + h * n * T_, rows, n * T_ * sizeof(float));
    if (++p.arrived < H_) return;
    block = std::move(p.rows);
    pending_.erase({b, i0});
  }
  // Every head is in: sum in head order (the same result whatever the
  // threads did), then divide, as torch's mean does.
  std::vector<float> mean(block.begin(), block.begin() + n * T_);
  for (std::size_t k = 1; k < H_; ++k) {
    const float* src = block.data() + k * n * T_;
    for (std::size_t j = 0; j < n * T_; ++j) mean[j] += src[j];
  }
  for (float& v : mean) v /= float(H_);
  next_.write_rows(b, 0, i0, n, mean.data());
}

}  // namespace attn
