"""Gemma 3n's text layers: modeling_gemma3n.Gemma3nTextAttention, configuration_gemma3n's
Gemma3nTextConfig; model_type gemma3n (Gemma3nForConditionalGeneration, the text model in
text_config under model.language_model.) and gemma3n_text (Gemma3nForCausalLM, model.layers.):
  * q_norm and k_norm Gemma3nRMSNorm over each head, x / sqrt(mean(x^2) + eps) * w (no Gemma
    "+1"), v_norm the same with with_scale=False (no weight), all before rope; scaling 1.0;
  * layer_types (default: every 5th layer full, the others sliding with sliding_window);
  * the full layers' rope rope_theta with rope_scaling, the sliding layers' rope_local_base_freq
    without (Gemma3nTextModel's rotary_emb_local);
  * num_kv_shared_layers: the last n layers reuse the keys and values of the last earlier layer
    of their type and have no k_proj, v_proj, k_norm (attn-run refuses them; none is run here)."""
from collections import OrderedDict

from .. import weights as W
from ..reference import Layer, QkNorm, Rope

MODEL_TYPES = ("gemma3n", "gemma3n_text")
TEXT_DEFAULTS = dict(  # Gemma3nTextConfig's class defaults for the keys the attention reads
    hidden_size=2048, num_attention_heads=8, num_key_value_heads=2, head_dim=256,
    num_hidden_layers=35, rms_norm_eps=1e-6, attention_bias=False, sliding_window=512,
    layer_types=None, rope_theta=1000000.0, rope_local_base_freq=10000.0, rope_scaling=None,
    num_kv_shared_layers=15, max_position_embeddings=32768)


def text_config(cfg):
    if cfg["model_type"] == "gemma3n":  # Gemma3nConfig: the text model in text_config
        cfg = cfg["text_config"]
    t = dict(TEXT_DEFAULTS, **cfg)
    if t["layer_types"] is None:
        t["layer_types"] = ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention"
                            for i in range(t["num_hidden_layers"])]
    return t


def num_layers(cfg):
    return text_config(cfg)["num_hidden_layers"]


def settings(cfg, layer):
    """What layer `layer` computes, as Gemma3nTextAttention.__init__ sets it up."""
    t = text_config(cfg)
    n = t["num_hidden_layers"]
    layer_type = t["layer_types"][layer]
    sliding = layer_type == "sliding_attention"
    first_shared = n - t["num_kv_shared_layers"]
    shared = layer >= first_shared > 0
    D = t["head_dim"]
    if sliding:
        rope = Rope(float(t["rope_local_base_freq"]), D, None, t["max_position_embeddings"])
    else:
        rope = Rope(float(t["rope_theta"]), D, t["rope_scaling"], t["max_position_embeddings"])
    prefix = ("model.language_model" if cfg["model_type"] == "gemma3n" else "model") + \
        f".layers.{layer}.self_attn."
    b = bool(t["attention_bias"])
    return Layer(t["hidden_size"], t["num_attention_heads"], t["num_key_value_heads"], D,
                 scale=1.0, window=t["sliding_window"] if sliding else None,
                 qk_norm=QkNorm("rms", t["rms_norm_eps"]), v_norm=t["rms_norm_eps"],
                 qkv_bias=b, o_bias=b, rope=rope, model_type="gemma3n_text", kind=layer_type,
                 runs=not shared, prefix=prefix)


def block(s, g):
    """Gemma3nTextDecoderLayer's tensors (AltUp's and LAuReL's too); layers sharing an earlier
    layer's K/V have no k_proj, v_proj, k_norm."""
    C, H, Hkv, D = s.C, s.H, s.Hkv, s.D
    sd = OrderedDict()
    block = s.prefix[:-len("self_attn.")]
    sd[block + "input_layernorm.weight"] = 1.0 + 0.1 * W.randn(g, C)
    w = OrderedDict()
    W.put(w, "q_proj", W.lin(g, H * D, C, s.qkv_bias))
    w["q_norm.weight"] = 1.0 + 0.3 * W.randn(g, D)
    if s.runs:
        W.put(w, "k_proj", W.lin(g, Hkv * D, C, s.qkv_bias))
        W.put(w, "v_proj", W.lin(g, Hkv * D, C, s.qkv_bias))
        w["k_norm.weight"] = 1.0 + 0.3 * W.randn(g, D)
    W.put(w, "o_proj", W.lin(g, C, H * D, s.o_bias))
    sd.update(W.prefixed(w, s.prefix))
    for n in ("post_attention_layernorm", "pre_feedforward_layernorm",
              "post_feedforward_layernorm"):
        sd[block + n + ".weight"] = W.ones(C)
    sd[block + "mlp.up_proj.weight"] = W.small(g, 8, C)
    sd[block + "altup.correction_coefs.weight"] = W.small(g, 4, 4)
    sd[block + "laurel.linear_left.weight"] = W.small(g, 4, C)
    return sd


def model(cfg, layers, g):
    sd, top = W.decoder_outside(layers[0], g)
    if cfg["model_type"] == "gemma3n":  # Gemma3nModel's audio and vision towers
        sd["model.vision_tower.timm_model.conv_stem.conv.weight"] = W.small(g, 4, 3)
        sd["model.audio_tower.conformer.0.attention.attn.q_proj.weight"] = W.small(g, 4, 4)
    for s in layers:
        sd.update(block(s, g))
    return sd


GEMMA_3N_E2B = {
    "architectures": ["Gemma3nForConditionalGeneration"], "model_type": "gemma3n",
    "audio_soft_tokens_per_image": 188, "boa_token_id": 256000, "boi_token_id": 255999,
    "eoa_token_id": 262272, "eoi_token_id": 262144, "image_token_id": 262145,
    "initializer_range": 0.02, "torch_dtype": "bfloat16", "transformers_version": "4.53.0.dev0",
    "vision_soft_tokens_per_image": 256,
    "text_config": {
        "model_type": "gemma3n_text", "activation_sparsity_pattern": [0.95, 0.95, 0, 0],
        "altup_active_idx": 0, "altup_coef_clip": 120.0, "altup_correct_scale": True,
        "altup_num_inputs": 4, "attention_bias": False, "attention_dropout": 0.0,
        "final_logit_softcapping": 30.0, "head_dim": 8, "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": 32, "hidden_size_per_layer_input": 4, "initializer_range": 0.02,
        "intermediate_size": [8, 8, 8, 8], "laurel_rank": 4,
        "layer_types": ["sliding_attention", "full_attention", "sliding_attention",
                        "full_attention"],
        "max_position_embeddings": 32768, "num_attention_heads": 4, "num_hidden_layers": 4,
        "num_key_value_heads": 2, "num_kv_shared_layers": 2, "query_pre_attn_scalar": 8,
        "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000.0, "rope_scaling": None,
        "rope_theta": 1000000.0, "sliding_window": 3, "torch_dtype": "bfloat16",
        "vocab_size": 12, "vocab_size_per_layer_input": 12}}

FOLDERS = [
    # google/gemma-3n-E2B-it's spelling, shrunk: a sliding layer (window 3, the local base) and a
    # full one; layers 2 and 3 share their keys and values (not run). The norms' missing "+1"
    # and the weightless v_norm each count.
    dict(name="gemma3n", seed=731, container="shards2", dtype="bf16", layers=[0, 1], B=2, S=8,
         pad="left", config=GEMMA_3N_E2B,
         input_norm=dict(kind="rms", name="input_layernorm.", eps=1e-6, layers=[1]),
         guards=({"v_norm": None}, {"qk_norm": QkNorm("rms", 1e-6, offset=1.0)})),
]

HELDOUT = [
    # Gemma3nForCausalLM's folder: model.layers., layer_types left out (every 5th full),
    # no sharing, linear rope_scaling on the full layer
    dict(name="gemma3n_text", seed=831, container="safetensors", dtype="f32", layers=[3, 4],
         B=2, S=7, pad="right",
         config={"model_type": "gemma3n_text", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "head_dim": 8, "num_hidden_layers": 5,
                 "num_kv_shared_layers": 0, "sliding_window": 4,
                 "rope_scaling": {"rope_type": "linear", "factor": 2.0}}),
]

VARIANTS = [
    # a sliding layer: window 4, rope theta 10000 (rope_local_base_freq), scale 1
    dict(name="gemma3n_v_norm_no_offset", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 10000.0}, scale=1.0, qk_norm=(1e-6, 0), v_norm=1e-6, window=4, S=9,
         seed=43, guards=({"v_norm": None}, {"qk_norm": QkNorm("rms", 1e-6, offset=1.0)})),
]
