// A map file streamed block by block as the forward pass computes it
// (attention.npy, --save's scores.npy): BlockWriter, so the compute threads
// only copy their block. The file is (B, H', L', S') row-major, so block
// (b, h, i0) of n rows starts at row (b*H' + h)*L' + i0.
#pragma once

#include <cstddef>

#include "attn/attention.h"
#include "attn/output.h"

namespace attn::detail {

class MapFileSink : public AttentionSink {
 public:
  MapFileSink(OutputDir& out, int handle, std::size_t H, std::size_t L, std::size_t T)
      : writer_(out, handle), H_(H), L_(L), T_(T) {}
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override {
    writer_.write(((b * H_ + h) * L_ + i0) * T_ * sizeof(float), rows, n * T_ * sizeof(float));
  }
  void finish() { writer_.finish(); }

 private:
  BlockWriter writer_;
  std::size_t H_, L_, T_;  // H', L', S'
};

}  // namespace attn::detail
