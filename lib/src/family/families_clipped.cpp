// Decoder language models whose attention clamps q, k and v or normalizes q
// and k after rope (table.h): OLMo (v1), OLMoE, Hunyuan (dense and MoE), DBRX, each
// as its configuration_<type>.py and modeling_<type>.py in transformers read
// config.json.
#include "family/hooks.h"
#include "family/table.h"

namespace attn::family {

namespace {

// OLMoE's clip_qkv clamps q and k after their norms (OlmoeAttention:
// q_norm(q_proj(x)), then clamp_), which attn-run's clip_qkv (right after the
// projections, before any norm) is not; the released checkpoints leave it null.
Refusal olmoe_clip_after_norm() {
  Refusal r;
  r.key = "clip_qkv";
  r.values = {};
  r.values_run = true;  // the values that run: none, so every set clip_qkv is refused
  r.why =
      "is {value}: OLMoE clamps q and k after their q_norm / k_norm (OlmoeAttention), "
      "attn-run's clip_qkv before them; set it to null, or run a plain --config";
  return r;
}

// HunYuanDenseV1Attention: RMSNorms over each head (query_layernorm,
// key_layernorm, x * w, eps rms_norm_eps) on the rotated q and k.
QkNormRule hunyuan_norm() {
  QkNormRule q = rms_norm("head", 0);
  q.after_rope = true;
  q.eps = 1e-5;
  return q;
}

// Tencent's Hunyuan config.json carries use_cla (cross-layer attention: every
// cla_share_factor-th layer's keys and values shared by the next ones), which
// the transformers models do not run; the released dense and A13B models set false.
Refusal hunyuan_cla() {
  Refusal r;
  r.key = "use_cla";
  r.values = {false};
  r.typed = true;
  r.why =
      "is {value}: cross-layer attention (keys and values shared across cla_share_factor "
      "layers) is not in transformers' Hunyuan, nor in attn-run";
  return r;
}

}  // namespace

void add_clipped_rows(Table& t) {
  // OlmoAttention: LlamaAttention whose q, k and v are clamped to [-clip_qkv, clip_qkv] right
  // after q_proj / k_proj / v_proj (clip_qkv null: none), then rope. Its blocks' norms are
  // OlmoLayerNorm, a LayerNorm without weight or bias. OlmoConfig's defaults.
  InputNormRule olmo_norm = post_norm("OlmoLayerNorm");
  olmo_norm.refused =
      "OLMo's input_layernorm is OlmoLayerNorm, a LayerNorm without weight or bias (eps "
      "1e-5), which attn-run's input_norm does not build";
  t.row("olmo")
      .with_embedding(word_embedding())
      .with_input_norm(olmo_norm)
      .bias("attention_bias", false)
      .clips_qkv("clip_qkv")
      .with_rope(10000.0)
      .with_defaults({{"hidden_size", 4096},
                      {"num_hidden_layers", 32},
                      {"num_attention_heads", 32},
                      {"max_position_embeddings", 2048}});
  // OlmoeAttention: OLMo 2's RMSNorms over all heads' q (H*D) and k (Hkv*D) before the head
  // view, x * w, then rope; clip_qkv, which it applies after the norms, is refused when set.
  // OlmoeConfig's defaults.
  t.row("olmoe")
      .with_embedding(word_embedding())
      .with_input_norm(rms_input("input_layernorm.", 0, "OlmoeRMSNorm", "rms_norm_eps", 1e-5))
      .bias("attention_bias", false)
      .with_qk_norm(rms_norm("all", 0))
      .with_rope(10000.0)
      .refuse(olmoe_clip_after_norm())
      .with_defaults({{"hidden_size", 2048},
                      {"num_hidden_layers", 16},
                      {"num_attention_heads", 16},
                      {"max_position_embeddings", 4096},
                      {"rms_norm_eps", 1e-5}});
  // HunYuanDenseV1Attention: LlamaAttention (head_dim from config.json, else C / H) whose q and
  // k go through rope and then query_layernorm / key_layernorm; rope_scaling's "dynamic" type
  // with an alpha is its NTK-alpha base (hooks::hunyuan_alpha_rope). HunYuanDenseV1Config's
  // defaults.
  t.row("hunyuan_v1_dense")
      .with_embedding(word_embedding())
      .with_input_norm(
          rms_input("input_layernorm.", 0, "HunYuanDenseV1RMSNorm", "rms_norm_eps", 1e-5))
      .rename("query_layernorm.", "q_norm.")
      .rename("key_layernorm.", "k_norm.")
      .bias("attention_bias", false)
      .with_qk_norm(hunyuan_norm())
      .with_rope(10000.0)
      .refuse(hunyuan_cla())
      .with_hook(hooks::hunyuan_alpha_rope)
      .with_defaults({{"hidden_size", 4096},
                      {"num_hidden_layers", 32},
                      {"num_attention_heads", 32},
                      {"max_position_embeddings", 2048},
                      {"rms_norm_eps", 1e-5}});
  // HunYuanMoEV1Attention: the dense model's attention (norms after rope, the NTK-alpha base
  // of Tencent's Hunyuan-A13B); experts in the MLP only. HunYuanMoEV1Config's defaults.
  t.row("hunyuan_v1_moe", t.of("hunyuan_v1_dense"))
      .with_input_norm(
          rms_input("input_layernorm.", 0, "HunYuanMoEV1RMSNorm", "rms_norm_eps", 1e-5));
  // DbrxAttention: Wqkv (no bias) yields [q (C) | k (Hkv*D) | v (Hkv*D)], clamped to
  // [-clip_qkv, clip_qkv] as a whole, then rotate_half rope; out_proj without bias; its
  // settings in attn_config (hooks::dbrx_attn_config). DbrxBlock's norm_attn_norm.norm_1 is an
  // nn.LayerNorm without bias (eps 1e-5); DbrxModel's wte under transformer. DbrxConfig's
  // defaults.
  t.row("dbrx")
      .at({"transformer.blocks.{N}.norm_attn_norm.attn.", "blocks.{N}.norm_attn_norm.attn."})
      .with_layout("fused")
      .biases(fixed(false), fixed(false))
      .with_embedding(word_embedding("wte.", 4))
      .with_input_norm(layer_input("norm_1.", nullptr, 1e-5, fixed(false)))
      .with_rope(10000.0)
      .with_hook(hooks::dbrx_attn_config)
      .with_defaults({{"d_model", 2048}, {"n_heads", 16}, {"n_layers", 24}});
}

}  // namespace attn::family
