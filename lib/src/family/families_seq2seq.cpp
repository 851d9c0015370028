// The encoder-decoders (table.h): BART, mBART, Marian, M2M-100 (NLLB), NLLB-MoE
// and Whisper, each as its configuration_<type>.py and modeling_<type>.py in
// transformers read config.json. Their attention is BartAttention's (q_proj,
// k_proj, v_proj, out_proj; q scaled by head_dim^-0.5 before q k^T, the same
// scores as attn-run's scale); positions are embeddings added before the first
// layer (BART's learned ones at offset 2, Marian's and M2M-100's sinusoidal
// ones, Whisper's), so the layers have none. --layer N is encoder layer N; the
// decoder's causal self-attention and its cross-attention over the encoder's
// output are --decoder-layer N [--cross] (family_row.h DecoderRule).
#include "family/table.h"

namespace attn::family {

namespace {

// BartEncoderLayer / BartDecoderLayer: self_attn in both stacks, the decoder's
// encoder_attn (NLLB-MoE's cross_attention); the stacks' own layer and head
// counts, d_model wide; head_dim = d_model / heads. The prefixes of a
// <Family>ForConditionalGeneration first (model.encoder...), then a bare
// <Family>Model's.
DecoderRule bart_decoder(const char* cross = "encoder_attn") {
  DecoderRule d;
  d.self_prefixes = {"model.decoder.layers.{N}.self_attn.", "decoder.layers.{N}.self_attn."};
  d.cross_prefixes = {"model.decoder.layers.{N}." + std::string(cross) + ".",
                      "decoder.layers.{N}." + std::string(cross) + "."};
  d.encoder_layers_key = "encoder_layers";
  d.encoder_heads_key = "encoder_attention_heads";
  d.decoder_layers_key = "decoder_layers";
  d.decoder_heads_key = "decoder_attention_heads";
  return d;
}

// BartEncoderLayer (Marian's is a copy) is post-norm: self_attn_layer_norm(residual +
// self_attn(h)), nn.LayerNorm's eps 1e-5, outside BartAttention (the decoder's self-attention
// the same under its layer).
ResidualNormRule bart_post_norm(const char* module) {
  ResidualNormRule r;
  r.name = "self_attn_layer_norm.";
  r.eps_keys = {};
  r.eps = 1e-5;
  r.module = module;
  r.in_attention = false;
  return r;
}

// The configuration classes' defaults of the keys the rows read (BartConfig, MBartConfig,
// MarianConfig, M2M100Config, NllbMoeConfig: d_model 1024, 12 + 12 layers of 16 heads).
json large_defaults() {
  return {{"d_model", 1024},
          {"encoder_layers", 12},
          {"decoder_layers", 12},
          {"encoder_attention_heads", 16},
          {"decoder_attention_heads", 16}};
}

// MBart/M2M100/NllbMoe/WhisperEncoderLayer (and their decoder layers): nn.LayerNorm
// self_attn_layer_norm (eps 1e-5) before the self-attention (pre-norm).
InputNormRule seq2seq_pre_norm() { return layer_input("self_attn_layer_norm.", nullptr, 1e-5); }

}  // namespace

void add_seq2seq_rows(Table& t) {
  // modeling_bart.BartAttention: every projection with bias (bias=True), bidirectional in the
  // encoder.
  Row& bart = t.row("bart")
                  .at({"model.encoder.layers.{N}.self_attn.", "encoder.layers.{N}.self_attn."})
                  .bidirectional_attention()
                  .biases(fixed(true), fixed(true))
                  .with_decoder(bart_decoder())
                  .with_defaults(large_defaults());
  const Row base = bart;  // mBART, M2M-100, NLLB-MoE: pre-norm, otherwise BART's attention
  bart.with_residual_norm(bart_post_norm("BartEncoderLayer"))
      .with_input_norm(post_norm("post-norm: BartEncoderLayer's self_attn_layer_norm comes after "
                                 "its attention"));
  // MBartEncoderLayer: self_attn_layer_norm before the attention (pre-norm).
  t.row("mbart", base).with_input_norm(seq2seq_pre_norm());
  // MarianAttention is BartAttention, MarianEncoderLayer BartEncoderLayer (post-norm).
  t.row("marian", base)
      .with_residual_norm(bart_post_norm("MarianEncoderLayer"))
      .with_input_norm(post_norm("post-norm: MarianEncoderLayer's self_attn_layer_norm comes "
                                 "after its attention"));
  // M2M100Attention is BartAttention; M2M100EncoderLayer is pre-norm (NLLB-200's dense
  // checkpoints are this model_type).
  t.row("m2m_100", base).with_input_norm(seq2seq_pre_norm());
  // NllbMoeAttention is BartAttention; the decoder's cross-attention is `cross_attention`.
  t.row("nllb-moe", base)
      .with_decoder(bart_decoder("cross_attention"))
      .with_input_norm(seq2seq_pre_norm());
  // modeling_whisper.WhisperAttention: k_proj without bias (q_proj, v_proj, out_proj with),
  // in both stacks; pre-norm. WhisperConfig's defaults (whisper-tiny's sizes).
  t.row("whisper", base)
      .with_input_norm(seq2seq_pre_norm())
      .with_defaults({{"d_model", 384},
                      {"encoder_layers", 4},
                      {"decoder_layers", 4},
                      {"encoder_attention_heads", 6},
                      {"decoder_attention_heads", 6}});
}

}  // namespace attn::family
