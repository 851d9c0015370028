// The config key "mla" (CONTRACT.md "(v3) More of the forward pass"):
// DeepSeek's multi-head latent attention, as modeling_deepseek_v2.py and
// modeling_deepseek_v3.py build their attention. Read by the key table
// (config/keys.cpp); checked here against the other keys (resolve_mla), and
// the softmax scale it implies.
//
// Letters: Rq q_lora_rank, Rkv kv_lora_rank, Dn qk_nope_head_dim, Dr
// qk_rope_head_dim, Dv v_head_dim, H heads.
#include <cmath>

#include "attn/error.h"
#include "config/internal.h"

namespace attn::config_detail {

void check_mla(MlaSpec& m, const json&, const std::string& at) {
  if (m.qk_rope_head_dim % 2 != 0)
    bad(at + ".qk_rope_head_dim",
        "rope rotates pairs of dimensions: expected an even number, found " +
            std::to_string(m.qk_rope_head_dim));
}

void resolve_mla(Config& c) {
  const MlaSpec& m = *c.mla;
  const std::string D = std::to_string(m.head_size());
  // q and k are Dn + Dr wide, v is Dv wide: the head size is their maximum.
  if (c.head_size_given && c.head_size != m.head_size())
    fail(c, "head_size",
         "with mla the head size is max(qk_nope_head_dim + qk_rope_head_dim, v_head_dim) = " + D +
             ", found head_size " + std::to_string(c.head_size) + ": leave head_size out");
  c.head_size = m.head_size();
  // kv_b_proj makes keys and values for every head (DeepseekV3Attention).
  if (c.num_kv_heads && *c.num_kv_heads != c.num_heads)
    fail(c, "num_kv_heads",
         "with mla every head has its own keys and values (kv_b_proj): expected num_heads " +
             std::to_string(c.num_heads) + " or nothing, found " + std::to_string(*c.num_kv_heads));
  if (!c.out_proj)
    fail(c, "out_proj", "mla's layer ends with o_proj (num_heads * v_head_dim to out_size)");
  const char* why = nullptr;
  if (c.cross()) why = c.kv_input.given() ? "kv_input" : "key_input";
  if (!why && (c.kdim_given || c.vdim_given)) why = c.kdim_given ? "kdim" : "vdim";
  if (!why && c.add_bias_kv) why = "add_bias_kv";
  if (!why && c.spec.add_zero_attn) why = "add_zero_attn";
  if (!why && c.spec.qk_norm) why = "qk_norm";
  if (why)
    fail(c, why,
         "not with mla (DeepSeek's self-attention projects q, k and v from the input through its "
         "own low-rank tensors)");
  if (c.layout && *c.layout != Layout::proj)
    fail(c, "layout",
         "mla reads its own tensors (q_proj or q_a_proj, q_a_layernorm, q_b_proj; "
         "kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj; o_proj): leave layout out or set "
         "\"proj\", found " +
             layout_name(*c.layout));
  if (c.init_seed)
    fail(c, "init",
         "mla is DeepSeek's attention, not a tutorial module with a seeded constructor: give "
         "\"weights\"");
  if (c.spec.rope && c.rotary_dim_given && c.spec.rope->rotary_dim != m.qk_rope_head_dim)
    fail(c, "rope.rotary_dim",
         "with mla rope rotates the qk_rope_head_dim part (" + std::to_string(m.qk_rope_head_dim) +
             "), found " + std::to_string(c.spec.rope->rotary_dim) + ": leave rotary_dim out");
}

double mla_scale(const Config& c) {
  const MlaSpec& m = *c.mla;
  double scale = 1.0 / std::sqrt(static_cast<double>(m.qk_head_dim()));
  // DeepseekV3Attention.__init__ (and DeepSeek-V2's, transformers #47435):
  // with rope scaling that has mscale_all_dim, the scale gains yarn's mscale
  // twice, yarn_get_mscale(factor, mscale_all_dim) = 0.1 * m * ln(factor) + 1
  // (1 for factor <= 1).
  const RopeScaling* s = c.spec.rope && c.spec.rope->scaling ? &*c.spec.rope->scaling : nullptr;
  if (s && s->mscale_all_dim && *s->mscale_all_dim != 0.0) {
    const double factor = s->factor.value_or(1.0);
    if (factor > 1.0) {
      const double ms = 0.1 * *s->mscale_all_dim * std::log(factor) + 1.0;
      scale *= ms * ms;
    }
  }
  return scale;
}

}  // namespace attn::config_detail
