// The score terms of a config (CONTRACT.md "(v2) New keys", "Positions",
// "(v3) More of the forward pass") checked against the sizes and each other
// once every key is read (the key table, config/keys.cpp, reads them), and the
// defaults that depend on other keys: alibi's slopes, relative_bias's
// direction. Rope is config/rope.cpp's, the key and value sources
// config/sources.cpp's.
#include <cmath>

#include "attn/positions.h"
#include "config/internal.h"
#include "config/json.h"

namespace attn::config_detail {
namespace {

void resolve_relative_bias(Config& c) {
  RelativeBiasSpec& r = *c.spec.relative_bias;
  if (!c.relative_bias_bidirectional_given) r.bidirectional = !c.spec.causal;
  // T5's rule needs at least one exact bucket per side (max_exact = buckets
  // per side / 2 >= 1) and a log range past it (log(max_distance / max_exact) > 0).
  const std::int64_t min_buckets = r.bidirectional ? 4 : 2;
  if (r.num_buckets < min_buckets || r.num_buckets > kMaxSize)
    fail(c, "relative_bias.num_buckets",
         "expected an integer in " + int_text(min_buckets) + ".." + int_text(kMaxSize) + " (" +
             (r.bidirectional ? "bidirectional: half the buckets per side, " : "") +
             "half of a side's buckets exact), found " + int_text(r.num_buckets));
  const std::int64_t max_exact = (r.bidirectional ? r.num_buckets / 2 : r.num_buckets) / 2;
  if (r.max_distance <= max_exact || r.max_distance > kMaxContext)
    fail(c, "relative_bias.max_distance",
         "expected an integer in " + int_text(max_exact + 1) + ".." + int_text(kMaxContext) +
             " (past the " + int_text(max_exact) + " exact buckets), found " +
             int_text(r.max_distance));
  if (c.cross())
    fail(c, cross_key(c),
         "cross-attention takes no relative_bias (T5's EncDecAttention has none: the keys have "
         "no positions of the queries' sequence), found relative_bias");
}

}  // namespace

void check_qk_norm(QkNormSpec& q, const json& o, const std::string& at) {
  if (q.kind == QkNormKind::l2) {
    for (const char* k : {"weight_offset", "per_head", "bias"})
      if (o.contains(k))
        bad(at + "." + k, std::string("qk_norm kind \"l2\" has no weight (x * rsqrt(mean(x^2) + "
                                      "eps), Llama 4): leave ") +
                              k + " out");
  }
  if (q.bias && q.kind != QkNormKind::layer)
    bad(at + ".bias", "a bias belongs to qk_norm kind \"layer\" (LayerNorm), found kind \"" +
                          std::string(q.kind == QkNormKind::rms ? "rms" : "l2") + "\"");
  if (q.per_head && q.scope_all)
    bad(at + ".per_head",
        "per-head weights (H, D) norm each head: they need scope \"head\", found \"all\"");
}

void resolve_score_keys(Config& c) {
  AttentionSpec& s = c.spec;
  if (c.mla && s.clip_qkv)
    fail(c, "clip_qkv", "mla's q, k and v come from its latent projections: not with clip_qkv");
  if (c.mla && (s.v_norm || c.k_eq_v))
    fail(c, s.v_norm ? "v_norm" : "k_eq_v",
         "mla builds v from its latent (kv_b_proj): not with v_norm or k_eq_v");
  if (s.sliding_window && *s.sliding_window < 1)
    fail(c, "sliding_window",
         "expected an integer > 0 (W: keys with i - W < j), found " + int_text(*s.sliding_window));
  if (s.softcap && (!(*s.softcap > 0.0) || !std::isfinite(static_cast<float>(*s.softcap))))
    fail(c, "softcap",
         "expected a number > 0 that float32 holds, found " + json(*s.softcap).dump());
  if (c.attention_mask.given() && (!c.padding_mask_path.empty() || c.padding_mask_inline))
    fail(c, "attention_mask",
         "attention_mask (Hugging Face's: 1 = attend) and padding_mask (torch's: "
         "true = padded) both mask keys: give one of them");
  if (s.attention_chunk && *s.attention_chunk < 1)
    fail(c, "attention_chunk",
         "expected an integer > 0 (n: query i sees key j when i // n == j // n), found " +
             int_text(*s.attention_chunk));
  resolve_sources(c);
  if (s.rope) resolve_rope(c);
  if (s.alibi) {
    // Given, one per head; else BLOOM's and MPT's formula with max_bias.
    std::vector<double>& slopes = s.alibi->slopes;
    if (!c.alibi_slopes_given)
      slopes = alibi_slopes(static_cast<std::size_t>(c.num_heads), s.alibi->max_bias);
    else if (static_cast<std::int64_t>(slopes.size()) != c.num_heads)
      fail(c, "alibi.slopes",
           "expected one slope per head (num_heads " + int_text(c.num_heads) + "), found " +
               std::to_string(slopes.size()));
  }
  if (s.relative_bias) resolve_relative_bias(c);
  if (s.disentangled) {
    if (c.cross())
      fail(c, cross_key(c),
           "cross-attention takes no disentangled terms (DeBERTa's relative positions are of "
           "one sequence), found disentangled");
    if (c.mla) fail(c, "disentangled", "mla's keys have no k_proj rows: not with mla");
  }
  if (s.mask_padded_queries && c.cross())
    fail(c, cross_key(c),
         "mask_padded_queries masks the padded positions of the queries' own sequence: "
         "self-attention only");
  // An embedding's learned positions read them too (--tokens: position_ids).
  const bool learned = c.embedding && !c.embedding->positions.empty();
  if (c.positions.given() && !s.rope && !s.alibi && !s.relative_bias && !s.attn_temperature &&
      !s.disentangled && !learned)
    fail(c, "positions",
         "position ids are read by rope, alibi, relative_bias, attn_temperature, disentangled "
         "and an embedding's learned positions (--tokens), and none of them is set (absolute "
         "position embeddings are added before the attention layer)");
  if (!c.kv_labels.empty() && !c.cross())
    fail(c, "kv_labels",
         "kv_labels name the keys of cross-attention (kv_input or key_input); "
         "without one the keys are the tokens: use labels");
  if (c.add_bias_kv && c.layout && *c.layout != Layout::torch_mha)
    fail(c, "add_bias_kv",
         "bias_k and bias_v are torch.nn.MultiheadAttention's: add_bias_kv needs "
         "layout torch_mha, found layout " +
             layout_name(*c.layout));
}

}  // namespace attn::config_detail
