// --check-f64: the run's own weights of a few query rows (captured as the
// maps path hands them out) and its context rows against the float64 path
// of attn/check_f64.h.
//
// Letters: B batch, H heads, L queries, T' keys of a row, O out size.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "attn/attention.h"
#include "attn/run.h"

namespace app {

// Keeps the rows `rows` (of L) of every (b, h) and forwards every block to
// `next` (when given). Asks for rows: the run takes the maps path. Thread-safe.
class F64CheckSink : public attn::AttentionSink {
 public:
  F64CheckSink(std::size_t L, std::size_t T_row, std::vector<std::size_t> rows,
               attn::AttentionSink* next);
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;
  const std::vector<std::size_t>& rows() const { return rows_; }
  // Row i of (b, h): T' weights, or nullptr when not received.
  const float* row(std::size_t b, std::size_t h, std::size_t i) const;

 private:
  std::size_t Tr_;
  std::vector<std::size_t> rows_;
  std::vector<char> kept_;  // (L)
  attn::AttentionSink* next_;
  mutable std::mutex mutex_;
  std::map<std::tuple<std::size_t, std::size_t, std::size_t>, std::vector<float>> got_;
};

struct F64Check {
  std::size_t rows = 0;          // (batch, query) rows checked per head
  double attention_max_abs = 0;  // largest |p32 - p64| over the rows' weights
  double context_max_rel = 0;    // largest |y32 - y64| / max |y64| over the rows' outputs
};

// The captured rows and context (B, L, O) against the float64 path.
F64Check check_against_f64(const attn::Weights& w, const attn::AttentionSpec& spec,
                           const attn::RunInputs& in, const F64CheckSink& got,
                           const attn::Tensor& context, int threads);

}  // namespace app
