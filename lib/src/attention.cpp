// The attention forward pass: one GEMM for Q|K|V over all B*S rows, then
// per (batch, head, query block) tasks on the thread layer (streaming
// online softmax, or exact rows handed to the AttentionSink), then one GEMM
// for the output projection. Same math as torch.nn.MultiheadAttention and
// the tutorial modules (attn/attention.h; tests/support/reference.h).
//
// Letters: B batch, S sequence, C hidden, H heads, D head size, O out size.
#include "attn/attention.h"

#include <cblas.h>

#include <algorithm>
#include <cassert>
#include <memory>
#include <string>
#include <vector>

#include "attn/error.h"
#include "kernels.h"

namespace attn {
namespace {

using kernels::HeadView;

// The unpadded key range of one batch row: [begin, end) holds every
// unpadded key; holes = some padded key lies inside it.
struct KeyRange {
  std::size_t begin = 0, end = 0;
  bool holes = false;
};

KeyRange key_range(const std::uint8_t* padding /* (S) or nullptr */, std::size_t S) {
  KeyRange kr{0, S, false};
  if (!padding) return kr;
  while (kr.begin < S && padding[kr.begin]) ++kr.begin;
  kr.end = kr.begin;
  for (std::size_t j = kr.begin; j < S; ++j)
    if (!padding[j]) kr.end = j + 1;
  for (std::size_t j = kr.begin; j < kr.end; ++j)
    if (padding[j]) kr.holes = true;
  return kr;
}

void check_shapes(const Weights& w, const Tensor& x, const Mask* key_padding) {
  [[maybe_unused]] const Geometry g = w.geometry();
  // Contracts of the canonical form (geometry.h); loading and init guarantee them.
  assert(w.w_qkv.shape == (std::vector<std::size_t>{g.qkv_rows(), g.C}));
  assert(w.b_qkv.data.empty() || w.b_qkv.size() == g.qkv_rows());
  assert(g.Hkv > 0 && g.H % g.Hkv == 0);
  if (x.ndim() != 3 || x.shape[2] != static_cast<std::size_t>(w.C) || x.shape[1] == 0 ||
      x.shape[0] == 0)
    throw Error(Exit::data, "input: expected shape (B, S, " + std::to_string(w.C) +
                                ") with B, S >= 1, found " + shape_str(x.shape));
  if (key_padding && (key_padding->shape.size() != 2 || key_padding->shape[0] != x.shape[0] ||
                      key_padding->shape[1] != x.shape[1]))
    throw Error(Exit::data, "padding_mask: expected shape " +
                                shape_str({x.shape[0], x.shape[1]}) + ", found " +
                                shape_str(key_padding->shape));
}

}  // namespace

ForwardStats forward(const Weights& w, const AttentionSpec& spec, const Tensor& x,
                     const Mask* key_padding, Tensor& context, const ForwardOptions& opt) {
  check_shapes(w, x, key_padding);
  const std::size_t B = x.shape[0], S = x.shape[1], C = x.shape[2];
  const Geometry g = w.geometry();
  const std::size_t H = g.H, D = g.D, HD = g.q_rows(), ld = g.qkv_rows();
  const std::size_t O = g.O;
  const int threads = kernels::resolve_threads(opt.threads);
  ForwardStats stats;

  // qkv = x Wqkv^T + b   (B*S, (H+2*Hkv)*D); left uninitialized, every element is written.
  std::unique_ptr<float[]> qkv(new float[B * S * ld]);
  linear(x.ptr(), C, B * S, C, w.w_qkv, w.b_qkv, qkv.get(), ld, threads);
  stats.flops += 2.0 * double(B * S) * double(C) * double(ld);

  std::vector<KeyRange> ranges(B);
  for (std::size_t b = 0; b < B; ++b) {
    const std::uint8_t* pad = key_padding ? key_padding->data.data() + b * S : nullptr;
    ranges[b] = key_range(pad, S);
    // Rows with no allowed key: all rows when every key is padded; with the
    // causal mask, the rows before the first unpadded key (left padding).
    const std::size_t rows =
        ranges[b].begin >= ranges[b].end ? S : (spec.causal ? ranges[b].begin : 0);
    stats.fully_masked_rows += static_cast<std::int64_t>(rows * H);
  }

  // Tasks (b, h, query block); the largest causal blocks (last rows) first
  // so the dynamic schedule ends evenly.
  const std::size_t qb = kernels::kQueryBlock;
  const std::size_t n_blocks = (S + qb - 1) / qb;
  const std::size_t n_tasks = B * H * n_blocks;
  const int workers = static_cast<int>(std::min<std::size_t>(threads, n_tasks));
  std::vector<kernels::Scratch> scratch(static_cast<std::size_t>(workers));
  std::vector<std::vector<float>> map_rows(opt.attention ? workers : 0);
  std::vector<double> flops(static_cast<std::size_t>(workers), 0.0);

  auto run_task = [&](std::size_t task, int worker) {
    const std::size_t blk = n_blocks - 1 - task / (B * H);
    const std::size_t bh = task % (B * H), b = bh / H, h = bh % H;
    const std::size_t i0 = blk * qb, n = std::min(qb, S - i0);
    float* base = qkv.get() + b * S * ld;
    HeadView hv;
    // Query head h reads KV head h / (H / Hkv) (repeat_kv) in place: no copy per query head.
    hv.q = base + g.q_row0() + h * D;
    hv.k = base + g.k_row0() + g.kv_head(h) * D;
    hv.v = base + g.v_row0() + g.kv_head(h) * D;
    hv.y = base + h * D;  // y overwrites this head's q rows: O(S) memory, no extra buffer
    hv.ld = ld;
    hv.ld_y = ld;
    hv.S = S;
    hv.D = D;
    hv.scale = spec.scale;
    hv.causal = spec.causal;
    hv.padding = key_padding ? key_padding->data.data() + b * S : nullptr;
    hv.key_begin = ranges[b].begin;
    hv.key_end = std::max(ranges[b].begin, ranges[b].end);
    hv.holes = ranges[b].holes;
    hv.batch = b;
    hv.head = h;
    hv.check_overflow = opt.check_overflow;
    const std::size_t ke = spec.causal ? std::min(hv.key_end, i0 + n) : hv.key_end;
    flops[worker] += 4.0 * double(n) * double(ke > hv.key_begin ? ke - hv.key_begin : 0) * double(D);

    auto& sc = scratch[static_cast<std::size_t>(worker)];
    if (opt.attention) {
      auto& rows = map_rows[static_cast<std::size_t>(worker)];
      rows.resize(n * S);
      kernels::attend_maps(hv, i0, n, sc, rows.data());
      opt.attention->write_rows(b, h, i0, n, rows.data());
    } else {
      kernels::attend_stream(hv, i0, n, sc);
    }
  };
  {
    kernels::BlasThreads blas(1);  // one threading layer: ours
    kernels::parallel_for(n_tasks, threads, run_task);
  }
  for (double f : flops) stats.flops += f;

  // out = y Wo^T + bo   (B*S, O); y is read in place from the q columns.
  context.shape = {B, S, O};
  context.data.resize(B * S * O);
  if (w.has_out_proj) {
    linear(qkv.get(), ld, B * S, HD, w.w_out, w.b_out, context.ptr(), O, threads);
    stats.flops += 2.0 * double(B * S) * double(HD) * double(O);
  } else {
    for (std::size_t r = 0; r < B * S; ++r)
      std::copy(qkv.get() + r * ld, qkv.get() + r * ld + HD, context.ptr() + r * O);
  }
  return stats;
}

double forward_flops(const Weights& w, std::int64_t B, std::int64_t S, bool causal) {
  const Geometry g = w.geometry();
  const double rows = double(B) * double(S);
  const double HD = double(g.q_rows());
  const double O = w.has_out_proj ? double(g.O) : 0.0;
  const double proj = 2.0 * rows * double(g.C) * double(g.qkv_rows()) + 2.0 * rows * HD * O;
  // q k^T and P v: 2 GEMMs of S x S x D per (b, h), 2 FLOPs per multiply-add.
  double attend = 4.0 * double(B) * double(w.H) * double(S) * double(S) * double(w.D);
  if (causal) attend *= 0.5;
  return proj + attend;
}

}  // namespace attn
