// More decoders on the forward pass's existing features (table.h): StarCoder
// (gpt_bigcode), StarCoder2, Granite, Phi (1, 1.5, 2), GPT-J, InternLM2 and
// SmolLM3.
#include "family/hooks.h"
#include "family/table.h"

namespace attn::family {

namespace {

// PhiAttention with qk_layernorm: nn.LayerNorm(head_dim, eps=layer_norm_eps) with a bias on q
// and on k, shared by the heads, before rope.
QkNormRule phi_qk_layernorm() {
  QkNormRule q;
  q.kind = "layer";
  q.enable_key = "qk_layernorm";
  q.eps_keys = {"layer_norm_eps"};
  q.eps = 1e-5;
  q.bias = true;
  return q;
}

// Partial rotary as a count of dimensions (GPT-J's rotary_dim; null = the head).
RopeRule rotary_dims(const char* key, bool interleaved) {
  RopeRule r;
  r.fraction_keys = {};
  r.dims_key = key;
  r.interleaved = interleaved;
  return r;
}

// SmolLM3 / Llama 4: no_rope_layers, else no rope on every interval-th layer.
RopeRule no_rope_every(std::int64_t interval) {
  RopeRule r;
  r.no_rope_key = "no_rope_layers";
  r.no_rope_interval_key = "no_rope_layer_interval";
  r.no_rope_interval = interval;
  return r;
}

// SmolLM3Config: the layers without rope slide when use_sliding_window and
// sliding_window are set.
WindowRule sliding_where_no_rope() {
  WindowRule w;
  w.kind = WindowRule::no_rope;
  w.enable_key = "use_sliding_window";
  return w;
}

// modeling_gpt_bigcode.GPTBigCodeAttention: scores scaled by 1/sqrt(D) when
// scale_attn_weights (scale_attention_softmax_in_fp32 divides by layer + 1 and
// multiplies back: no change).
ScaleRule bigcode_scale() {
  ScaleRule s;
  s.enable_key = "scale_attn_weights";
  return s;
}

}  // namespace

void add_decoder_rows(Table& t) {
  t.row("gpt_bigcode")  // StarCoder, SantaCoder: c_attn an nn.Linear, multi_query by default
      .at({"transformer.h.{N}.attn.", "h.{N}.attn."})
      .with_layout("fused")
      .rename("c_attn.", "Wqkv.")
      .rename("c_proj.", "Wo.")
      .biases(fixed(true), fixed(true))
      .with_scale(bigcode_scale())
      .with_input_norm(layer_input("ln_1.", "layer_norm_epsilon", 1e-5))
      .with_embedding(learned_positions("wte.", "wpe."))  // GPTBigCodeModel: wte + wpe
      .with_hook(hooks::gpt_bigcode_heads);
  t.row("starcoder2")
      .bias("use_bias", true)
      .with_input_norm(layer_input("input_layernorm.", "norm_epsilon", 1e-5))
      .with_embedding(word_embedding())
      .with_rope(10000.0)
      .with_window(every_layer())  // sliding_window (null: none) on every layer
      .with_defaults({{"num_key_value_heads", 2}});
  t.row("granite")
      .bias("attention_bias", false)
      .with_rope(10000.0)
      .with_scale({ScaleRule::value_of_key, "attention_multiplier"})
      .with_embedding(times_multiplier("embedding_multiplier"))  // GraniteModel
      .with_defaults({{"attention_multiplier", 1.0}});
  t.row("phi")  // phi-1, phi-1.5, phi-2: q/k/v_proj and dense, all with bias
      .rename("dense.", "o_proj.")
      .rename("q_layernorm.", "q_norm.")
      .rename("k_layernorm.", "k_norm.")
      .biases(fixed(true), fixed(true))
      .with_input_norm(layer_input("input_layernorm.", "layer_norm_eps", 1e-5))
      .with_embedding(word_embedding())
      .with_rope(10000.0, rope_keys({"rope_theta"}, {"partial_rotary_factor"}, 0.5))
      .with_qk_norm(phi_qk_layernorm());
  t.row("gptj")
      .at({"transformer.h.{N}.attn.", "h.{N}.attn."})
      .biases(fixed(false), fixed(false))
      .with_input_norm(layer_input("ln_1.", "layer_norm_epsilon", 1e-5))
      .with_embedding(word_embedding("wte."))  // GPTJModel: wte alone
      .with_rope(10000.0, rotary_dims("rotary_dim", /*interleaved=*/true))
      .with_defaults({{"rotary_dim", 64}});
  // CodeGenAttention (modeling_codegen): GPT-J's attention (rotate_every_two over rotary_dim,
  // 1 / sqrt(D), no biases; CodeGenBlock's ln_1, CodeGenModel's wte) with one qkv_proj whose
  // rows come in mp_num = 4 groups of [q | v | k] (layout codegen), and out_proj.
  t.row("codegen", t.of("gptj")).with_layout("codegen");
  t.row("internlm2")  // wqkv per KV group [q..., k, v] (the falcon layout), wo
      .at({"model.layers.{N}.attention.", "layers.{N}.attention."})
      .with_layout("falcon")
      .rename("wqkv.", "query_key_value.")
      .rename("wo.", "dense.")
      .bias("bias", true)
      .with_input_norm(rms_input("attention_norm.", 0, "InternLM2RMSNorm"))
      .with_embedding(word_embedding("tok_embeddings."))
      .with_rope(10000.0);
  t.row("smollm3")  // every 4th layer without rope (no_rope_layers); those slide when enabled
      .bias("attention_bias", false)
      .with_rope(2000000.0, no_rope_every(4))
      .with_window(sliding_where_no_rope())
      .with_embedding(word_embedding())
      .with_defaults({{"num_key_value_heads", 4}});
}

}  // namespace attn::family
