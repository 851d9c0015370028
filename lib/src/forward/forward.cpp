// The attention forward pass of CONTRACT.md "Scores, in order":
//   1-2. projections, then qk_norm and rope once per position, then k^T and
//        v packed per KV head for the tile products (forward/project.cpp);
//   3-8. per (batch, head, query block) tasks on the thread layer: score
//        tiles (kernels/score_tile.cpp) into a streaming online softmax, or exact
//        rows handed to the AttentionSink;
//   9.   heads concatenated, one GEMM for the output projection;
//   10.  with residual_norm, LayerNorm(output + input) (forward/residual_norm.cpp).
// Before step 1, with input_norm, the block's pre-attention norm of the input
// (forward/input_norm.cpp).
// Same math as torch.nn.MultiheadAttention, the tutorial modules and the
// Hugging Face families' eager attention (tests/support/reference.h).
//
// Letters: B batch, L queries, T keys (T' with torch MHA's extra keys), C
// hidden, H heads, Hkv key/value heads, D head size, O out size.
#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/error.h"
#include "forward/stages.h"
#include "kernels/kernels.h"
#include "kernels/row_digest.h"

namespace attn {
namespace {

using kernels::HeadView;
using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The unpadded key range of one batch row: [begin, end) holds every
// unpadded key; holes = some padded key lies inside it.
struct KeyRange {
  std::size_t begin = 0, end = 0;
  bool holes = false;
};

KeyRange key_range(const std::uint8_t* padding /* (T) or nullptr */, std::size_t T) {
  KeyRange kr{0, T, false};
  if (!padding) return kr;
  while (kr.begin < T && padding[kr.begin]) ++kr.begin;
  kr.end = kr.begin;
  for (std::size_t j = kr.begin; j < T; ++j)
    if (!padding[j]) kr.end = j + 1;
  for (std::size_t j = kr.begin; j < kr.end; ++j)
    if (padding[j]) kr.holes = true;
  return kr;
}

[[noreturn]] void bad_shape(const std::string& what, const std::string& expected,
                            const std::vector<std::size_t>& found) {
  throw Error(Exit::data, what + ": expected shape " + expected + ", found " + shape_str(found));
}

std::string dims(std::initializer_list<std::string> d) {
  std::string s = "(";
  for (const auto& x : d) s += (s.size() > 1 ? ", " : "") + x;
  return s + ")";
}

void check_inputs(const Weights& w, const AttentionSpec& spec, const ForwardInputs& in) {
  [[maybe_unused]] const Geometry g = w.geometry();
  // Contracts of the canonical form (geometry.h); loading and init guarantee them.
  assert(w.b_qkv.data.empty() || w.b_qkv.size() == g.qkv_rows());
  assert(g.Hkv > 0 && g.H % g.Hkv == 0);
  const std::string C = std::to_string(g.C);
  if (!in.x || in.x->ndim() != 3 || in.x->shape[2] != g.C || in.x->shape[0] == 0 ||
      in.x->shape[1] == 0)
    bad_shape("input", dims({"B", "S", C}) + " with B, S >= 1",
              in.x ? in.x->shape : std::vector<std::size_t>{});
  const std::size_t B = in.x->shape[0], L = in.x->shape[1];
  const Tensor* key = in.key ? in.key : in.x;
  if (!in.key && !w.fused_qkv())
    throw Error(Exit::data, "input: the layer projects keys from " + std::to_string(g.Ck) +
                                " and values from " + std::to_string(g.Cv) +
                                " features (kdim, vdim): give key_input and value_input");
  if (in.key && (in.key->ndim() != 3 || in.key->shape[0] != B || in.key->shape[1] == 0 ||
                 in.key->shape[2] != g.Ck))
    bad_shape("key_input", dims({std::to_string(B), "T", std::to_string(g.Ck)}) + " with T >= 1",
              in.key->shape);
  const std::size_t T = key->shape[1];
  if (in.value && (in.value->ndim() != 3 || in.value->shape[0] != B || in.value->shape[1] != T ||
                   in.value->shape[2] != g.Cv))
    bad_shape("value_input", dims({std::to_string(B), std::to_string(T), std::to_string(g.Cv)}),
              in.value->shape);
  if (in.value && !in.key) throw Error(Exit::data, "value_input: needs key_input");
  if (!in.value && in.key && g.Cv != g.Ck)
    throw Error(Exit::data, "kv_input: one source feeds keys and values, but kdim " +
                                std::to_string(g.Ck) + " != vdim " + std::to_string(g.Cv));
  if (in.key_padding && in.key_padding->shape != std::vector<std::size_t>{B, T})
    bad_shape("padding_mask", shape_str({B, T}), in.key_padding->shape);
  // (3, B, L): mrope's time, height and width rows, for a rope with sections.
  const bool mrope = spec.rope && !spec.rope->mrope_section.empty();
  if (in.positions && in.positions->shape != std::vector<std::size_t>{B, L} &&
      (!mrope || in.positions->shape != std::vector<std::size_t>{3, B, L}))
    bad_shape("positions", shape_str({B, L}) + (mrope ? " or " + shape_str({3, B, L}) : ""),
              in.positions->shape);
  if (in.attn_mask && (in.attn_mask->L != L || in.attn_mask->T != T))
    throw Error(Exit::data, "attn_mask: resolved for (" + std::to_string(in.attn_mask->L) + ", " +
                                std::to_string(in.attn_mask->T) +
                                "), the run has L = " + std::to_string(L) +
                                " queries and T = " + std::to_string(T) + " keys");
  if (spec.rope) {
    // A config's rotary_dim is checked as it is resolved (2..D, even); an odd
    // or empty one fails in rope_frequencies.
    assert(spec.rope->rotary_dim <= std::int64_t(g.D));
    if (in.key)
      throw Error(Exit::config,
                  "rope: needs self-attention (keys at the queries' positions), found a key input");
  }
  if (spec.sliding_window && *spec.sliding_window < 1)
    throw Error(Exit::config, "sliding_window: expected an integer > 0, found " +
                                  std::to_string(*spec.sliding_window));
  if (spec.attention_chunk && *spec.attention_chunk < 1)
    throw Error(Exit::config, "attention_chunk: expected an integer > 0, found " +
                                  std::to_string(*spec.attention_chunk));
  if (spec.alibi) {
    if (spec.alibi->slopes.size() != g.H)
      throw Error(Exit::config, "alibi: expected " + std::to_string(g.H) + " slopes, found " +
                                    std::to_string(spec.alibi->slopes.size()));
    if (in.key)
      throw Error(
          Exit::config,
          "alibi: needs self-attention (keys at the queries' positions), found a key input");
  }
  if (w.mla && (in.key || in.value))
    throw Error(Exit::config, "mla: needs self-attention, found a key input");
  if (w.mla && (spec.qk_norm || spec.add_zero_attn || !w.bias_k.data.empty()))
    throw Error(Exit::config, "mla: not with qk_norm, add_zero_attn or bias_kv");
  if (spec.qk_norm && spec.qk_norm->has_weight()) {
    const QkNormSpec& n = *spec.qk_norm;
    const bool rows = n.scope_all || n.per_head;
    const std::vector<std::size_t> q = n.per_head
                                           ? std::vector<std::size_t>{g.H, g.D}
                                           : std::vector<std::size_t>{rows ? g.q_rows() : g.D};
    const std::vector<std::size_t> k = n.per_head
                                           ? std::vector<std::size_t>{g.Hkv, g.D}
                                           : std::vector<std::size_t>{rows ? g.kv_rows() : g.D};
    if (w.q_norm.size() != Tensor::count(q) || w.k_norm.size() != Tensor::count(k))
      throw Error(Exit::data, "qk_norm: expected weights q_norm " + shape_str(q) + " and k_norm " +
                                  shape_str(k) + ", found " + shape_str(w.q_norm.shape) + " and " +
                                  shape_str(w.k_norm.shape));
    if (n.bias &&
        (w.q_norm_bias.size() != w.q_norm.size() || w.k_norm_bias.size() != w.k_norm.size()))
      throw Error(Exit::data, "qk_norm.bias: expected biases shaped as q_norm " + shape_str(q) +
                                  " and k_norm " + shape_str(k) + ", found " +
                                  shape_str(w.q_norm_bias.shape) + " and " +
                                  shape_str(w.k_norm_bias.shape));
  }
  if (spec.relative_bias) {
    const std::vector<std::size_t> shape = {std::size_t(spec.relative_bias->num_buckets), g.H};
    if (w.relative_bias.shape != shape)
      bad_shape("relative_bias: relative_attention_bias.weight", shape_str(shape),
                w.relative_bias.shape);
    if (in.key)
      throw Error(Exit::config,
                  "relative_bias: needs self-attention (keys at the queries' positions), found a "
                  "key input");
  }
  if (spec.disentangled) {
    const DisentangledSpec& d = *spec.disentangled;
    if (in.key)
      throw Error(Exit::config,
                  "disentangled: needs self-attention (relative positions of one sequence), found "
                  "a key input");
    const std::vector<std::size_t> table = {2 * std::size_t(d.span()), g.C};
    if (w.rel_embeddings.shape != table)
      bad_shape("disentangled: the relative embeddings", shape_str(table), w.rel_embeddings.shape);
    const std::vector<std::size_t> proj = {g.q_rows(), g.C};
    if (!d.share_att_key && d.c2p && w.pos_key_w.shape != proj)
      bad_shape("disentangled: pos_key_proj.weight", shape_str(proj), w.pos_key_w.shape);
    if (!d.share_att_key && d.p2c && w.pos_query_w.shape != proj)
      bad_shape("disentangled: pos_query_proj.weight", shape_str(proj), w.pos_query_w.shape);
  }
  if (spec.mask_padded_queries && in.key)
    throw Error(Exit::config,
                "mask_padded_queries: needs self-attention (the queries are the padded "
                "positions), found a key input");
  if (spec.attn_temperature && in.key)
    throw Error(Exit::config,
                "attn_temperature: needs self-attention (queries at positions), found a key input");
  if (spec.attention_chunk && in.key)
    throw Error(
        Exit::config,
        "attention_chunk: needs self-attention (chunks of one sequence), found a key input");
  if (spec.gate && (w.w_gate.shape != std::vector<std::size_t>{g.q_rows(), g.C} ||
                    (!w.b_gate.data.empty() && w.b_gate.size() != g.q_rows())))
    throw Error(Exit::data, "gate: expected weights w_gate " + shape_str({g.q_rows(), g.C}) +
                                " (the gate rows of q_proj), found " + shape_str(w.w_gate.shape));
  if (w.mla && w.w_out.shape != std::vector<std::size_t>{g.O, w.context_width()})
    bad_shape("o_proj.weight", shape_str({g.O, w.context_width()}), w.w_out.shape);
  if (spec.sinks && w.sinks.size() != g.H)
    throw Error(Exit::data, "sinks: expected one logit per head (" + std::to_string(g.H) +
                                "), found " + shape_str(w.sinks.shape));
  if (spec.input_norm && spec.input_norm->kind != InputNormKind::none) {
    if (in.key)
      throw Error(Exit::config,
                  "input_norm: needs self-attention (keys from the normed input), found a key "
                  "input");
    if (w.input_norm_weight.size() != g.C ||
        (!w.input_norm_bias.data.empty() && w.input_norm_bias.size() != g.C))
      throw Error(Exit::data, "input_norm: expected the norm's weight and bias (" + C +
                                  "), found " + shape_str(w.input_norm_weight.shape));
  }
  if (spec.residual_norm) {
    if (in.key)
      throw Error(Exit::config,
                  "residual_norm: needs self-attention (it adds the queries' input), found a key "
                  "input");
    if (g.O != g.C)
      throw Error(Exit::config, "residual_norm: adds the input (" + C +
                                    " features) to the output projection's " + std::to_string(g.O) +
                                    ": they must match");
    if (w.residual_norm_weight.size() != g.C ||
        (!w.residual_norm_bias.data.empty() && w.residual_norm_bias.size() != g.C))
      throw Error(Exit::data, "residual_norm: expected LayerNorm weight and bias (" + C +
                                  "), found " + shape_str(w.residual_norm_weight.shape));
  }
}

// T5's relative bias per head by relative position r = pos_k - pos_q over the
// run's range of r, cut to [-max_distance, max_distance] (every bucket past it
// is the last one): (H, hi - lo + 1), as compute_bias's table lookup
// relative_attention_bias(bucket) permuted to heads first.
struct RelativeBiasTable {
  std::vector<float> values;
  std::int64_t lo = 0, hi = 0;
  const float* head(std::size_t h) const { return values.data() + h * std::size_t(hi - lo + 1); }
};

RelativeBiasTable relative_bias_table(const Weights& w, const RelativeBiasSpec& spec,
                                      const PositionIds* positions, std::size_t L) {
  std::int64_t pmin = 0, pmax = std::int64_t(L) - 1;
  if (positions) {
    const auto [a, b] = std::minmax_element(positions->data.begin(), positions->data.end());
    pmin = *a, pmax = *b;
  }
  RelativeBiasTable t;
  t.hi = std::min(pmax - pmin, spec.max_distance);
  t.lo = -t.hi;
  const std::size_t H = std::size_t(w.H), n = std::size_t(t.hi - t.lo + 1);
  t.values.resize(H * n);
  for (std::int64_t r = t.lo; r <= t.hi; ++r) {
    const std::size_t bucket = std::size_t(relative_position_bucket(r, spec));
    for (std::size_t h = 0; h < H; ++h)
      t.values[h * n + std::size_t(r - t.lo)] = w.relative_bias.data[bucket * H + h];
  }
  return t;
}

// Under --allow-nonfinite, the attention output as torch's eager attention
// makes it: attn @ v multiplies every key's v by the key's weight, 0 where
// the key is masked, and 0 x NaN (or inf) is NaN, so a non-finite value in
// column d of any key's v makes column d of every query row's output NaN.
// The kernels skip the tiles a causal mask or a window leaves empty, and
// which tiles they skip depends on the build (the portable and the native
// kernels differ): this sets the rule for all of them. y (the heads' output,
// over q) is (nb, L, H*D), ld_q; v of batch bc, KV head g is packed (T', D).
void spread_nonfinite_values(const Geometry& g, const detail::Projected& p, std::size_t nb,
                             std::size_t L, std::size_t Tx, std::size_t D) {
  std::vector<unsigned char> bad(D);
  for (std::size_t bc = 0; bc < nb; ++bc)
    for (std::size_t kv = 0; kv < g.Hkv; ++kv) {
      const kernels::Panels& v = p.v_packed[bc * g.Hkv + kv];  // element (j, d) as below
      bool any = false;
      for (std::size_t d = 0; d < D; ++d) {
        const std::size_t c = v.col0 + d;
        const float* col = v.data + c / v.width * v.stride + c % v.width;
        bad[d] = 0;
        for (std::size_t j = 0; j < Tx && !bad[d]; ++j) bad[d] = !std::isfinite(col[j * v.width]);
        any = any || bad[d];
      }
      if (!any) continue;
      for (std::size_t h = 0; h < g.H; ++h) {
        if (g.kv_head(h) != kv) continue;
        for (std::size_t i = 0; i < L; ++i) {
          float* y = p.q + (bc * L + i) * p.ld_q + h * D;
          for (std::size_t d = 0; d < D; ++d)
            if (bad[d] && std::isfinite(y[d])) y[d] = std::numeric_limits<float>::quiet_NaN();
        }
      }
    }
}

}  // namespace

std::size_t map_keys(const Weights& w, const AttentionSpec& spec, std::size_t T) {
  return T + (w.bias_k.data.empty() ? 0 : 1) + (spec.add_zero_attn ? 1 : 0);
}

namespace {

ForwardStats forward_pass(const Weights& w, const AttentionSpec& spec, const ForwardInputs& given,
                          Tensor& context, const ForwardOptions& opt) {
  check_inputs(w, spec, given);
  const int threads = kernels::resolve_threads(opt.threads);
  // 0. input_norm: the residual stream through the block's norm, once per position.
  ForwardInputs in = given;
  Tensor normed;
  in.x = detail::input_norm_stage(w, spec, *given.x, context, normed, threads);
  const Geometry g = w.geometry();
  const std::size_t H = g.H, D = g.D, HD = g.q_rows(), O = g.O;
  ForwardStats stats;

  const std::size_t B = in.x->shape[0], L = in.x->shape[1];
  const std::size_t T = in.key ? in.key->shape[1] : L, Tx = map_keys(w, spec, T);
  // A chunk's normed rows are read only by its own projections, before its context rows are
  // written: with O == C (and no residual_norm, which reads them after the output projection)
  // the context takes their buffer, one fresh (B, L, C) buffer fewer (on a VM, fresh memory's
  // first touch costs up to 2 s per GB).
  if (!normed.data.empty() && O == g.C && !spec.residual_norm) {
    context.data.swap(normed.data);
    in.x = &context;
  }
  // One chunk (the whole batch at once) with y as wide as the context (O == H*D): q, then
  // y, live in the context's own buffer, `lead` rows past its start; the output projection
  // writes each slab of `lead` context rows over the slab before it, whose y rows it has
  // already read. The context then needs no fresh buffer besides q's.
  const std::size_t rows = B * L, lead = std::min(rows, detail::kChunkRows);
  const bool context_over_y = in.x != &context && detail::chunk_batch(L) >= B && w.has_out_proj &&
                              !w.mla && O == g.q_rows();
  context.shape = {B, L, O};
  context.data.resize((context_over_y ? lead + rows : rows) * O);

  std::vector<KeyRange> ranges(B);
  for (std::size_t b = 0; b < B; ++b)
    ranges[b] = key_range(in.key_padding ? in.key_padding->data.data() + b * T : nullptr, T);
  // alibi and the relative bias: the positions of queries and keys
  // (self-attention: the same).
  std::vector<std::int64_t> iota;
  const bool by_position = spec.alibi || spec.relative_bias || spec.disentangled;
  if (by_position && !in.positions) {
    iota.resize(L);
    for (std::size_t i = 0; i < L; ++i) iota[i] = std::int64_t(i);
  }

  // Chunks of batch rows, one after the other through every step: the
  // projection buffers hold one chunk and are reused (forward/stages.h).
  const std::size_t chunk = detail::chunk_batch(L);
  // Sinks that need no rows (top-k, summary) get digests of the streaming pass.
  const DigestRequest digest_req =
      opt.attention ? opt.attention->digest_request() : DigestRequest{};
  // Rows per task: longer blocks for long keys, unless a sink holds a block's
  // n x T' rows per worker (maps, head means; --key-stats' exponentials;
  // --save's scores): the run's peak memory would grow by that much again.
  const bool holds_rows = (opt.attention && (digest_req.rows || !digest_req.key_rows.empty())) ||
                          (opt.intermediates && opt.intermediates->wants_scores());
  // The scores' depth and the values' width: D each, but mla's zero columns
  // past Dqk and Dv (forward/mla.cpp) need not be read.
  const std::size_t D_qk = w.score_head_size(), D_v = w.value_head_size();
  const std::size_t qb = holds_rows ? kernels::kQueryBlock : kernels::query_block(T, D);
  const std::size_t n_blocks = (L + qb - 1) / qb;
  const int workers = static_cast<int>(std::min<std::size_t>(threads, chunk * H * n_blocks));
  std::vector<kernels::Scratch> scratch(static_cast<std::size_t>(workers));
  std::vector<std::vector<float>> map_rows(opt.attention ? workers : 0);
  std::vector<kernels::RowDigest> digests(opt.attention && !digest_req.rows ? workers : 0);
  if (!digest_req.key_rows.empty() && digest_req.key_rows.size() != L)
    throw Error(Exit::software, "key statistics: the sink counts " +
                                    std::to_string(digest_req.key_rows.size()) +
                                    " query rows, the run has " + std::to_string(L));
  std::vector<double> flops(static_cast<std::size_t>(workers), 0.0);
  std::vector<std::int64_t> masked(static_cast<std::size_t>(workers), 0);
  detail::Projected p;
  if (context_over_y) {
    p.q_into = context.ptr() + lead * O;
    p.q_into_cap = rows * HD;
  }
  // --save: k and v rows kept for the sink; each worker's score rows.
  IntermediateSink* saved = opt.intermediates;
  p.keep_rows = saved && saved->wants_keys_values();
  std::vector<std::vector<float>> saved_scores(saved && saved->wants_scores() ? workers : 0);
  RelativeBiasTable rel;
  if (spec.relative_bias) rel = relative_bias_table(w, *spec.relative_bias, in.positions, L);
  detail::DisentangledTerms dis;
  if (spec.disentangled) dis = detail::disentangled_terms(w, spec, in.positions, L, threads);
  // The scores' settings as the kernels take them: float32, 0 = none.
  const float scale = static_cast<float>(spec.scale);
  const float softcap = spec.softcap ? static_cast<float>(*spec.softcap) : 0.0f;
  const std::size_t window = spec.sliding_window ? std::size_t(*spec.sliding_window) : 0;
  const std::size_t attention_chunk = spec.attention_chunk ? std::size_t(*spec.attention_chunk) : 0;
  std::vector<float> slopes;  // (H)
  if (spec.alibi)
    for (double s : spec.alibi->slopes) slopes.push_back(static_cast<float>(s));

  for (std::size_t b0 = 0; b0 < B; b0 += chunk) {
    const std::size_t nb = std::min(chunk, B - b0);
    const auto t_project = Clock::now();
    // 1-2. q, k, v; qk_norm and rope in place, once per position.
    detail::project(w, spec, in, b0, nb, threads, p);
    detail::position_stage(w, spec, in, p, threads);
    if (spec.disentangled) detail::disentangled_rows(g, p, dis, threads);
    detail::pack_keys_values(g, p, threads);
    if (saved)  // hook_q, hook_k, hook_v: after the norms and positions
      saved->write_qkv(b0, nb, L, p.q, p.ld_q, T, Tx, p.keep_rows ? p.k : nullptr,
                       p.keep_rows ? p.v : nullptr, p.ld_kv);

    // 3-8. Tasks (b, h, query block); the largest causal blocks (last rows)
    // first so the dynamic schedule ends evenly. Head by head, so both
    // workers read one head's k and v while they are in cache (a Llama-3-8B-
    // shaped layer at S = 4096: its attention 430 -> 400 ms); but block by
    // block, every head's in turn, where the rows go to a sink: a head mean
    // waits for all H heads of a block, so few blocks wait at once.
    const bool heads_together = opt.attention && digests.empty();
    auto run_task = [&](std::size_t task, int worker) {
      const std::size_t heads = nb * H;
      const std::size_t blk = n_blocks - 1 - (heads_together ? task / heads : task % n_blocks);
      const std::size_t bh = heads_together ? task % heads : task / n_blocks;
      const std::size_t bc = bh / H, h = bh % H, b = b0 + bc;
      const std::size_t i0 = blk * qb, n = std::min(qb, L - i0);
      HeadView hv;
      // Query head h reads KV head h / (H / Hkv) (repeat_kv) in place: no copy per query head.
      hv.q = p.q + bc * L * p.ld_q + h * D;
      hv.kt = p.kt[bc * g.Hkv + g.kv_head(h)];
      hv.v = p.v_packed[bc * g.Hkv + g.kv_head(h)];
      hv.y = p.q + bc * L * p.ld_q + h * D;  // y overwrites this head's q rows: no extra buffer
      hv.ld_q = hv.ld_y = p.ld_q;
      hv.L = L;
      hv.T = T;
      hv.T_ext = Tx;
      hv.D = D_qk;
      hv.Dv = D_v;
      hv.scale = scale;
      hv.softcap = softcap;
      hv.causal = spec.causal;
      hv.window = window;
      hv.chunk = attention_chunk;
      if (spec.alibi) {
        hv.alibi = true;
        hv.alibi_slope = slopes[h];
      }
      if (by_position) {
        hv.pos_q = in.positions ? in.positions->data.data() + b * L : iota.data();
        hv.pos_k = hv.pos_q;
      }
      if (spec.relative_bias) {
        hv.rel_bias = rel.head(h);
        hv.rel_lo = rel.lo;
        hv.rel_hi = rel.hi;
        hv.rel_by_index = !in.positions;
      }
      if (spec.disentangled) {
        hv.c2p = dis.c2p.empty() ? nullptr : dis.c2p.data() + (bc * H + h) * L * dis.R2;
        hv.p2c = dis.p2c.empty() ? nullptr : dis.p2c.data() + (bc * H + h) * T * dis.R2;
        hv.dis_R2 = dis.R2;
        hv.dis_index = dis.index.data();
        hv.dis_lo = dis.lo;
      }
      hv.padding = in.key_padding ? in.key_padding->data.data() + b * T : nullptr;
      if (spec.mask_padded_queries) hv.query_padding = hv.padding;  // self-attention: T == L
      hv.key_begin = ranges[b].begin;
      hv.key_end = std::max(ranges[b].begin, ranges[b].end);
      hv.holes = ranges[b].holes;
      if (in.attn_mask) {
        const std::size_t off = in.attn_mask->row_offset(b, h, 0);
        if (in.attn_mask->additive)
          hv.mask_add = in.attn_mask->add.data() + off;
        else
          hv.mask_block = in.attn_mask->blocked.data() + off;
      }
      if (spec.sinks) {
        hv.has_sink = true;
        hv.sink = w.sinks.data[h];
      }
      hv.batch = b;
      hv.head = h;
      hv.check_overflow = opt.check_overflow;
      const kernels::KeySpan keys = kernels::block_keys(hv, i0, n);
      flops[worker] +=
          2.0 * double(n) * double(keys.end - keys.begin + (Tx - T)) * double(D_qk + D_v);

      auto& sc = scratch[static_cast<std::size_t>(worker)];
      if (!saved_scores.empty()) {  // hook_attn_scores, before y overwrites these q rows
        auto& rows = saved_scores[static_cast<std::size_t>(worker)];
        rows.resize(n * Tx);
        kernels::score_rows(hv, i0, n, rows.data());
        saved->write_scores(b, h, i0, n, rows.data());
      }
      if (!digests.empty()) {
        auto& digest = digests[static_cast<std::size_t>(worker)];
        digest.begin(digest_req, hv, i0, n);
        const std::size_t masked_here = kernels::attend_stream(hv, i0, n, sc, &digest);
        if (!digest.fallback) {
          masked[worker] += std::int64_t(masked_here);
          opt.attention->write_digests(b, h, i0,
                                       digest.finish(sc.m.data(), sc.l.data(), sc.allowed.data()));
          if (digest.key_rows) opt.attention->write_key_sums(b, h, digest.key_sums.result());
          return;
        }
      }
      if (opt.attention) {  // the rows, or a digest's block with a non-finite score
        auto& rows = map_rows[static_cast<std::size_t>(worker)];
        rows.resize(n * Tx);
        masked[worker] += std::int64_t(kernels::attend_maps(hv, i0, n, sc, rows.data()));
        opt.attention->write_rows(b, h, i0, n, rows.data());
      } else {
        masked[worker] += std::int64_t(kernels::attend_stream(hv, i0, n, sc));
      }
    };
    const auto t_attention = Clock::now();
    {
      kernels::BlasThreads blas(1);  // one threading layer: ours
      kernels::parallel_for(nb * H * n_blocks, threads, run_task);
    }
    const auto t_output = Clock::now();
    if (!opt.check_overflow) spread_nonfinite_values(g, p, nb, L, Tx, D);

    // The gate multiplies each head's context before the output projection.
    detail::apply_gate(g, p, threads);

    // 9. out = y Wo^T + bo   (B*L, O); y is read in place from the q columns.
    float* out = context.ptr() + b0 * L * O;
    if (D_v != D) {
      // mla: each head's context is Dv of the D columns: pack the heads' Dv
      // columns to the front of the row, as o_proj reads them.
      for (std::size_t r = 0; r < nb * L; ++r)
        for (std::size_t h = 1; h < H; ++h)
          std::memmove(p.q + r * p.ld_q + h * D_v, p.q + r * p.ld_q + h * D, D_v * sizeof(float));
    }
    // hook_z: each head's weighted values, as the output projection reads them.
    if (saved) saved->write_z(b0, nb, L, p.q, p.ld_q);
    if (w.has_out_proj) {
      const std::size_t K = w.context_width();  // H*D (H*Dv with mla)
      if (p.q == p.q_into) {                    // y lead rows past the context rows: slab over slab
        for (std::size_t r0 = 0; r0 < rows; r0 += lead)
          linear(p.q + r0 * p.ld_q, p.ld_q, std::min(lead, rows - r0), K, w.w_out, w.b_out,
                 out + r0 * O, O, threads);
      } else {
        linear(p.q, p.ld_q, nb * L, K, w.w_out, w.b_out, out, O, threads);
      }
      stats.flops += 2.0 * double(nb * L) * double(K) * double(O);
    } else {
      for (std::size_t r = 0; r < nb * L; ++r)
        std::copy(p.q + r * p.ld_q, p.q + r * p.ld_q + HD, out + r * O);
    }
    // 10. residual_norm: LayerNorm(out + x) (O == C, self-attention: checked).
    if (spec.residual_norm)
      detail::apply_residual_norm(w, spec.residual_norm->eps, in.x->ptr() + b0 * L * g.C, out,
                                  nb * L);
    stats.project_ms += ms_between(t_project, t_attention);
    stats.attention_ms += ms_between(t_attention, t_output);
    stats.output_ms += ms_between(t_output, Clock::now());
    if (opt.context_done) opt.context_done(b0, nb);
  }
  context.data.resize(rows * O);  // without the lead rows
  stats.flops += p.flops;
  for (double f : flops) stats.flops += f;
  for (std::int64_t m : masked) stats.fully_masked_rows += m;
  return stats;
}

}  // namespace

ForwardStats forward(const Weights& w, const AttentionSpec& spec, const ForwardInputs& in,
                     Tensor& context, const ForwardOptions& opt) {
  const ForwardStats stats = forward_pass(w, spec, in, context, opt);
  // The pass's buffers are back in the pool: their pages go back to the
  // system unless the next pass is to reuse them.
  if (!opt.keep_warm) detail::warm_release();
  return stats;
}

ForwardStats forward(const Weights& w, const AttentionSpec& spec, const Tensor& x,
                     const Mask* key_padding, Tensor& context, const ForwardOptions& opt) {
  ForwardInputs in;
  in.x = &x;
  in.key_padding = key_padding;
  return forward(w, spec, in, context, opt);
}

}  // namespace attn
