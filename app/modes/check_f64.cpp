// --check-f64 against the run's own rows (check_f64.h).
#include "modes/check_f64.h"

#include <algorithm>
#include <cmath>

#include "attn/check_f64.h"
#include "attn/error.h"

namespace app {

F64CheckSink::F64CheckSink(std::size_t L, std::size_t T_row, std::vector<std::size_t> rows,
                           attn::AttentionSink* next)
    : Tr_(T_row), rows_(std::move(rows)), kept_(L, 0), next_(next) {
  for (std::size_t i : rows_) kept_.at(i) = 1;
}

void F64CheckSink::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                              const float* rows /* (n, T') */) {
  for (std::size_t r = 0; r < n; ++r)
    if (kept_[i0 + r]) {
      std::vector<float> row(rows + r * Tr_, rows + (r + 1) * Tr_);
      std::lock_guard<std::mutex> lock(mutex_);
      got_[{b, h, i0 + r}] = std::move(row);
    }
  if (next_) next_->write_rows(b, h, i0, n, rows);
}

const float* F64CheckSink::row(std::size_t b, std::size_t h, std::size_t i) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = got_.find({b, h, i});
  return it == got_.end() ? nullptr : it->second.data();
}

F64Check check_against_f64(const attn::Weights& w, const attn::AttentionSpec& spec,
                           const attn::RunInputs& in, const F64CheckSink& got,
                           const attn::Tensor& context, int threads) {
  const attn::ForwardInputs fi = in.forward_inputs();
  const std::size_t B = in.x.shape[0], L = in.x.shape[1], H = std::size_t(w.H);
  const std::size_t O = context.shape[2], T = L;
  const std::vector<std::size_t>& rows = got.rows();
  F64Check c;
  c.rows = B * rows.size();
  double ctx_err = 0, ctx_scale = 0;
  for (std::size_t b = 0; b < B; ++b) {
    const attn::F64Rows truth = attn::attention_rows_f64(w, spec, fi, b, rows, threads);
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t k = 0; k < rows.size(); ++k) {
        const float* p = got.row(b, h, rows[k]);
        if (!p)
          throw attn::Error(attn::Exit::software, "--check-f64: row " + std::to_string(rows[k]) +
                                                      " of head " + std::to_string(h) +
                                                      " was not captured");
        const double* q = truth.attention.data() + (h * rows.size() + k) * T;
        for (std::size_t j = 0; j < T; ++j)
          c.attention_max_abs = std::max(c.attention_max_abs, std::abs(double(p[j]) - q[j]));
      }
    for (std::size_t k = 0; k < rows.size(); ++k)
      for (std::size_t o = 0; o < O; ++o) {
        const double want = truth.context[k * O + o];
        const double have = double(context.data[(b * L + rows[k]) * O + o]);
        ctx_err = std::max(ctx_err, std::abs(have - want));
        ctx_scale = std::max(ctx_scale, std::abs(want));
      }
  }
  c.context_max_rel = ctx_scale > 0 ? ctx_err / ctx_scale : ctx_err;
  return c;
}

}  // namespace app
