"""OPT: modeling_opt.OPTAttention (q/k/v_proj and out_proj, biases as enable_bias; q scaled
before q k^T, the same numbers); learned positions outside. OPT-350m's post-norm
(do_layer_norm_before false): OPTDecoderLayer's self_attn_layer_norm(residual + attention) is
--with-residual-norm's LayerNorm."""
from .. import hf, plain
from .. import weights as W

MODEL_TYPES = ("opt",)
CLASS_DEFAULTS = dict(enable_bias=True)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    return hf.decoder(cfg, "opt", layer, prefix="model.decoder.layers.{}.self_attn.",
                      out="out_proj", bias_key="enable_bias")


def outside(cfg, s0, g):
    return {"model.decoder.embed_tokens.weight": W.outside_draws(g, s0.C)["opt"]}


def attention_weights(a, g):
    return W.decoder_attention(a, g, out="out_proj")


def neighbours(s, layer, g, small=4):
    """self_attn_layer_norm (its own generator): after the attention when do_layer_norm_before
    is false."""
    p = f"model.decoder.layers.{layer}."
    w, b = W.layer_norm_params(p + "self_attn_layer_norm.", s.C)
    return {p + "self_attn_layer_norm.weight": w, p + "self_attn_layer_norm.bias": b,
            p + "fc1.weight": W.small(g, small, s.C)}


NORM = dict(name="self_attn_layer_norm.", eps=1e-5)  # nn.LayerNorm's eps
FOLDERS = [
    dict(name="opt", seed=19, container="safetensors", dtype="f16", layers=[0, 1], B=2, S=7,
         pad="right",
         config={"architectures": ["OPTForCausalLM"], "model_type": "opt",
                 "do_layer_norm_before": True, "enable_bias": True, "ffn_dim": 8,
                 "hidden_size": 32, "max_position_embeddings": 64, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "vocab_size": 12, "word_embed_proj_dim": 32}),
    # OPT-350m's post-norm; unpadded, so it also runs as --model
    dict(name="opt_350m", seed=22, container="safetensors", dtype="f32", layers=[1], B=2, S=6,
         residual_norm=dict(NORM, layers=[1]),
         config={"_remove_final_layer_norm": False, "architectures": ["OPTForCausalLM"],
                 "model_type": "opt", "do_layer_norm_before": False, "enable_bias": True,
                 "ffn_dim": 8, "hidden_size": 32, "layer_norm_elementwise_affine": True,
                 "max_position_embeddings": 64, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "vocab_size": 12, "word_embed_proj_dim": 32}),
    # Layer 0 from token ids (--tokens): embed_tokens + embed_positions at p + 2, then
    # self_attn_layer_norm (do_layer_norm_before).
    dict(name="opt_tokens", seed=50, container="safetensors", dtype="f32", layers=[0], B=2, S=6,
         input_norm=dict(kind="layer", name="self_attn_layer_norm.", eps=1e-5, bias=True,
                         layers=[0]),
         tokens=dict(layers=[0], module="opt", word="model.decoder.embed_tokens.weight",
                     positions="model.decoder.embed_positions.weight", rows=66),
         config={"architectures": ["OPTForCausalLM"], "model_type": "opt",
                 "do_layer_norm_before": True, "enable_bias": True, "ffn_dim": 8,
                 "hidden_size": 32, "max_position_embeddings": 64, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "vocab_size": 12, "word_embed_proj_dim": 32}),
]

HELDOUT = [
    dict(name="opt", seed=118, container="safetensors", dtype="f32", layers=[1], B=2, S=9,
         pad="left", rename=[("model.decoder.", "decoder.")],
         config={"model_type": "opt", "enable_bias": False, "hidden_size": 48,
                 "num_attention_heads": 3, "num_hidden_layers": 2}),
    # OPTModel ("decoder." prefix) with OPT-350m's post-norm: do_layer_norm_before false
    dict(name="opt_350m", seed=128, container="safetensors", dtype="f16", layers=[0, 2], B=2,
         S=7, rename=[("model.decoder.", "decoder.")], residual_norm=dict(NORM, layers=[0, 2]),
         config={"model_type": "opt", "do_layer_norm_before": False, "hidden_size": 40,
                 "num_attention_heads": 5, "num_hidden_layers": 3}),
]

PLAIN = [
    dict(name="opt_f16", seed=1004, prefix="model.decoder.layers.1.self_attn.",
         block="model.decoder.layers.1.", C=12, H=3, Hkv=3, D=4, dtype="f16", causal=True,
         out="out_proj"),
]


def write_plain(out, case):
    plain.separate_case(out, case, biases=(True, True, True, True))
