"""Gemma 4's text layers: modeling_gemma4.Gemma4TextAttention, configuration_gemma4's
Gemma4TextConfig; model_type gemma4 (Gemma4ForConditionalGeneration, the text model in
text_config under model.language_model.) and gemma4_text (Gemma4ForCausalLM, model.layers.):
  * layer_types: sliding_attention (sliding_window) and full_attention layers (default: every 6th
    full, the last one full);
  * per-layer sizes: a full layer's head size is global_head_dim (512 unless given); with
    attention_k_eq_v its KV heads are num_global_key_value_heads and it has no v_proj: the values
    are k_proj's output, taken before k_norm and rope;
  * q_norm and k_norm: Gemma4RMSNorm, x * pow(mean(x^2) + eps, -0.5) * w (no 1 + w), before
    rope; v_norm: the same without a weight, on every layer's values;
  * rope_parameters per layer type: sliding layers the default rope over head_dim; full layers
    "proportional" rope over the whole (global) head, the first int(p * D // 2) frequencies
    theta^(-2i/D) and zeros after;
  * scaling 1.0 (the q/k norms replace 1 / sqrt(D));
  * num_kv_shared_layers: the last n layers reuse the keys and values of the last earlier layer
    of their type and have no k_proj, v_proj, k_norm (attn-run refuses them; none is run here).
llama.cpp's Gemma4Model writes per-layer-type metadata and the full layers' proportional rope as
rope_freqs.weight divisors (1, then 1e30)."""
from collections import OrderedDict

import numpy as np

from .. import gguf
from .. import weights as W
from ..reference import Layer, QkNorm, Rope

MODEL_TYPES = ("gemma4", "gemma4_text")
TEXT_DEFAULTS = dict(  # Gemma4TextConfig's class defaults for the keys the attention reads
    hidden_size=2304, num_attention_heads=8, num_key_value_heads=4, head_dim=256,
    num_hidden_layers=30, rms_norm_eps=1e-6, attention_bias=False, sliding_window=512,
    layer_types=None, rope_parameters=None, use_bidirectional_attention=None,
    attention_k_eq_v=False, num_kv_shared_layers=0, max_position_embeddings=131072)
DEFAULT_ROPE = {  # Gemma4TextConfig.__post_init__'s default_rope_params
    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
    "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                       "rope_theta": 1000000.0}}


def text_config(cfg):
    if cfg["model_type"] == "gemma4":  # Gemma4Config: the text model in text_config
        cfg = cfg["text_config"]
    t = dict(TEXT_DEFAULTS, **cfg)
    n = t["num_hidden_layers"]
    if t["layer_types"] is None:  # sliding_window_pattern 6: 5 sliding, then 1 full
        t["layer_types"] = ["sliding_attention" if (i + 1) % 6 else "full_attention"
                            for i in range(n)]
    t["layer_types"] = list(t["layer_types"])
    t["layer_types"][-1] = "full_attention"  # forced, with a warning
    if t["rope_parameters"] is None:
        t["rope_parameters"] = DEFAULT_ROPE
    t.setdefault("global_head_dim", 512)
    t.setdefault("num_global_key_value_heads", None)
    return t


def num_layers(cfg):
    return text_config(cfg)["num_hidden_layers"]


def settings(cfg, layer):
    """What layer `layer` computes, as Gemma4TextAttention.__init__ sets it up."""
    t = text_config(cfg)
    wrapped = cfg["model_type"] == "gemma4"
    n = t["num_hidden_layers"]
    layer_type = t["layer_types"][layer]
    sliding = layer_type == "sliding_attention"
    D = t["global_head_dim"] if not sliding and t["global_head_dim"] else t["head_dim"]
    k_eq_v = bool(t["attention_k_eq_v"]) and not sliding  # use_alternative_attention
    Hkv = t["num_global_key_value_heads"] if k_eq_v else t["num_key_value_heads"]
    first_shared = n - t["num_kv_shared_layers"]
    shared = layer >= first_shared >= 0 and t["num_kv_shared_layers"] > 0
    params = t["rope_parameters"][layer_type]
    scaling = None
    if params.get("rope_type", "default") == "proportional":  # head_dim_key="global_head_dim"
        scaling = {"rope_type": "proportional",
                   "partial_rotary_factor": params.get("partial_rotary_factor", 1.0),
                   "factor": params.get("factor", 1.0)}
    window = t["sliding_window"] if sliding else None
    causal = t["use_bidirectional_attention"] != "all"
    if not causal and window:  # __post_init__: (W // 2) + 1, exclusive bounds both sides
        window = window // 2 + 1
    prefix = ("model.language_model" if wrapped else "model") + f".layers.{layer}.self_attn."
    b = bool(t["attention_bias"])
    return Layer(t["hidden_size"], t["num_attention_heads"], Hkv, D, scale=1.0, causal=causal,
                 window=window, k_eq_v=k_eq_v, qk_norm=QkNorm("rms", t["rms_norm_eps"]),
                 v_norm=t["rms_norm_eps"], qkv_bias=b, o_bias=b,
                 rope=Rope(float(params["rope_theta"]), D, scaling, t["max_position_embeddings"]),
                 model_type="gemma4_text", kind=layer_type, runs=not shared, prefix=prefix)


def block(s, g, ple):
    """Gemma4TextDecoderLayer's tensors; layers sharing an earlier layer's K/V have no k_proj,
    v_proj, k_norm; ple: hidden_size_per_layer_input's gate and projection."""
    C, H, Hkv, D = s.C, s.H, s.Hkv, s.D
    sd = OrderedDict()
    block = s.prefix[:-len("self_attn.")]
    sd[block + "input_layernorm.weight"] = 1.0 + 0.1 * W.randn(g, C)
    w = OrderedDict()
    W.put(w, "q_proj", W.lin(g, H * D, C, s.qkv_bias))
    w["q_norm.weight"] = 1.0 + 0.3 * W.randn(g, D)
    if s.runs:
        w["k_norm.weight"] = 1.0 + 0.3 * W.randn(g, D)
        W.put(w, "k_proj", W.lin(g, Hkv * D, C, s.qkv_bias))
        if not s.k_eq_v:
            W.put(w, "v_proj", W.lin(g, Hkv * D, C, s.qkv_bias))
    W.put(w, "o_proj", W.lin(g, C, H * D, s.o_bias))
    sd.update(W.prefixed(w, s.prefix))
    for n in ("post_attention_layernorm", "pre_feedforward_layernorm",
              "post_feedforward_layernorm"):
        sd[block + n + ".weight"] = W.ones(C)
    sd[block + "mlp.gate_proj.weight"] = W.small(g, 8, C)
    sd[block + "mlp.up_proj.weight"] = W.small(g, 8, C)
    sd[block + "mlp.down_proj.weight"] = W.small(g, C, 8)
    sd[block + "layer_scalar"] = W.ones(1)
    if ple:
        sd[block + "per_layer_input_gate.weight"] = W.small(g, ple, C)
        sd[block + "per_layer_projection.weight"] = W.small(g, C, ple)
        sd[block + "post_per_layer_input_norm.weight"] = W.ones(C)
    return sd


def model(cfg, layers, g):
    sd, top = W.decoder_outside(layers[0], g)
    if cfg["model_type"] == "gemma4":  # Gemma4Model's vision tower and its embedder
        sd["model.vision_tower.encoder.layers.0.self_attn.q_proj.linear.weight"] = W.small(g, 8, 8)
        sd["model.embed_vision.embedding_projection.weight"] = W.small(g, layers[0].C, 8)
    ple = text_config(cfg).get("hidden_size_per_layer_input") or 0
    for s in layers:
        sd.update(block(s, g, ple))
    return sd


def gguf_weights(s, layer, g):  # the block drawn whole (without per-layer inputs)
    return W.under(block(s, g, 0), s.prefix)


def gguf_metadata(w, arch, cfg, n_layers):
    """Gemma4Model.set_gguf_parameters over Gemma3Model's and TextModel's (conversion/gemma.py):
    key_length / value_length the full layers' head (global_head_dim), *_swa the sliding ones',
    head_count_kv one per layer when num_global_key_value_heads is set, the layer types as one
    bool per layer (true: sliding), rope.freq_base the full layers' theta and freq_base_swa the
    sliding ones', rope.dimension_count the whole full head (the fraction is rope_freqs.weight)."""
    t = text_config(cfg)
    a = arch + "."
    gguf.general(w, arch)
    w.add(a + "block_count", n_layers)
    w.add(a + "context_length", t["max_position_embeddings"])
    w.add(a + "embedding_length", t["hidden_size"])
    w.add(a + "feed_forward_length", t.get("intermediate_size", 8))
    w.add(a + "attention.head_count", t["num_attention_heads"])
    swa = [lt == "sliding_attention" for lt in t["layer_types"]]
    if t["num_global_key_value_heads"] is not None:
        w.add(a + "attention.head_count_kv", [t["num_key_value_heads"] if s else
                                              t["num_global_key_value_heads"] for s in swa])
    else:
        w.add(a + "attention.head_count_kv", t["num_key_value_heads"])
    rp = t["rope_parameters"]
    w.add(a + "rope.freq_base", float(rp["full_attention"]["rope_theta"]))
    w.add(a + "rope.freq_base_swa", float(rp["sliding_attention"]["rope_theta"]))
    w.add(a + "attention.layer_norm_rms_epsilon", float(t["rms_norm_eps"]))
    w.add(a + "attention.sliding_window", t["sliding_window"])
    w.add(a + "attention.shared_kv_layers", t["num_kv_shared_layers"])
    w.add(a + "embedding_length_per_layer_input", t.get("hidden_size_per_layer_input") or 0)
    w.add(a + "attention.sliding_window_pattern", swa)
    w.add(a + "attention.key_length", t["global_head_dim"])
    w.add(a + "attention.value_length", t["global_head_dim"])
    w.add(a + "attention.key_length_swa", t["head_dim"])
    w.add(a + "attention.value_length_swa", t["head_dim"])
    w.add(a + "rope.dimension_count", t["global_head_dim"])
    w.add(a + "rope.dimension_count_swa", int(t["head_dim"] * (t.get("partial_rotary_factor")
                                                                 or 1.0)))
    if t.get("final_logit_softcapping"):
        w.add(a + "final_logit_softcapping", float(t["final_logit_softcapping"]))


def gguf_rope_freqs(cfg):
    """Gemma4Model.generate_extra_tensors: the full layers' proportional rope as ggml divisors,
    1 for each of the int(D * p / 2) turned pairs and 1e30 for the others."""
    t = text_config(cfg)
    D, p = t["global_head_dim"], t["rope_parameters"]["full_attention"]["partial_rotary_factor"]
    n_rot = int(D * p / 2)
    return np.array([1.0] * n_rot + [1e30] * (D // 2 - n_rot), np.float32)


FOLDERS = [
    # google/gemma-4-31B's shape, shrunk: k_eq_v on the full layers (KV heads 2 -> 1 there),
    # global_head_dim 16 beside head_dim 8, proportional rope (a quarter) on the full layers.
    dict(name="gemma4", seed=121, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
         S=8, pad="left",
         config={"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
                 "boi_token_id": 255999, "eoi_token_id": 258882, "image_token_id": 258880,
                 "audio_token_id": 258881, "initializer_range": 0.02, "tie_word_embeddings": True,
                 "text_config": {
                     "model_type": "gemma4_text", "hidden_size": 32, "intermediate_size": 8,
                     "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "num_global_key_value_heads": 1, "head_dim": 8, "global_head_dim": 16,
                     "attention_k_eq_v": True, "num_kv_shared_layers": 0, "sliding_window": 3,
                     "layer_types": ["sliding_attention", "full_attention", "sliding_attention",
                                     "full_attention"],
                     "rope_parameters": {
                         "full_attention": {"partial_rotary_factor": 0.25,
                                            "rope_theta": 1000000.0,
                                            "rope_type": "proportional"},
                         "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}},
                     "rms_norm_eps": 1e-06, "attention_bias": False, "attention_dropout": 0.0,
                     "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 262144,
                     "final_logit_softcapping": 30.0, "use_bidirectional_attention": "vision",
                     "vocab_size": 12, "vocab_size_per_layer_input": 12,
                     "hidden_size_per_layer_input": 0, "enable_moe_block": False,
                     "use_double_wide_mlp": False, "dtype": "bfloat16"},
                 "vision_config": {"model_type": "gemma4_vision", "hidden_size": 8,
                                   "num_hidden_layers": 1},
                 "audio_config": None, "transformers_version": "5.5.0"}),
    # google/gemma-4-E2B's shape as Gemma4ForCausalLM saves it: no k_eq_v (the full layers keep
    # num_key_value_heads and a v_proj, with global_head_dim), per-layer inputs, and the last
    # two layers sharing K/V (refused). rope_parameters left out: the class's defaults.
    dict(name="gemma4_text", seed=122, container="shards2", dtype="f32", layers=[1, 2], B=2,
         S=9, pad="right",
         config={"architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4_text",
                 "hidden_size": 32, "intermediate_size": 8, "num_hidden_layers": 5,
                 "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 8,
                 "global_head_dim": 16, "attention_k_eq_v": False, "num_kv_shared_layers": 2,
                 "sliding_window": 4,
                 "layer_types": ["sliding_attention", "sliding_attention", "full_attention",
                                 "sliding_attention", "full_attention"],
                 "rms_norm_eps": 1e-06, "hidden_activation": "gelu_pytorch_tanh",
                 "max_position_embeddings": 131072, "vocab_size": 12,
                 "vocab_size_per_layer_input": 12, "hidden_size_per_layer_input": 4,
                 "use_double_wide_mlp": True, "dtype": "bfloat16",
                 "transformers_version": "5.5.0"}),
]

HELDOUT = [
    # Gemma4ForCausalLM with k_eq_v and attention_bias, 6 layers of the default pattern
    # (layer 5 full), sliding_window left out (512), proportional rope with factor 2, p 0.5.
    dict(name="gemma4_text_k_eq_v", seed=301, container="bin", dtype="f16", layers=[2, 5],
         B=2, S=10, pad="left",
         config={"model_type": "gemma4_text", "hidden_size": 24, "num_attention_heads": 6,
                 "num_key_value_heads": 3, "num_global_key_value_heads": 2, "head_dim": 4,
                 "global_head_dim": 12, "num_hidden_layers": 6, "attention_k_eq_v": True,
                 "attention_bias": True, "rms_norm_eps": 1e-5,
                 "rope_parameters": {
                     "sliding_attention": {"rope_type": "default", "rope_theta": 5000.0},
                     "full_attention": {"rope_type": "proportional", "rope_theta": 50000.0,
                                        "partial_rotary_factor": 0.5, "factor": 2.0}}}),
    # Gemma 4's wrapper with global_head_dim null (the full layer keeps head_dim 8), no
    # k_eq_v, unpadded (also run as --model DIR --layer N), a window of 2.
    dict(name="gemma4_head_dim", seed=302, container="shards3", dtype="bf16", layers=[0, 2],
         B=1, S=7,
         config={"model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"],
                 "text_config": {
                     "model_type": "gemma4_text", "hidden_size": 16, "num_attention_heads": 2,
                     "num_key_value_heads": 1, "head_dim": 8, "global_head_dim": None,
                     "num_hidden_layers": 3, "sliding_window": 2,
                     "layer_types": ["sliding_attention", "sliding_attention",
                                     "full_attention"]},
                 "vision_config": {"model_type": "gemma4_vision"}}),
]

GGUF = [
    # Gemma 4 31B's shape, shrunk (Gemma4ForCausalLM's text config): k_eq_v on the full layers
    # (no attn_v; KV heads 2 -> 1 there, head_count_kv per layer), global_head_dim 16 beside
    # head_dim 8, the full layers' proportional rope (a quarter) as rope_freqs.weight.
    dict(name="gemma4", arch="gemma4", seed=54, layers=[0, 1], S=8, metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "Q4_1", "attn_v": "Q5_0", "attn_output": "Q8_0"},
         config={"architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4_text",
                 "hidden_size": 32, "intermediate_size": 8, "num_hidden_layers": 4,
                 "num_attention_heads": 4, "num_key_value_heads": 2,
                 "num_global_key_value_heads": 1, "head_dim": 8, "global_head_dim": 16,
                 "attention_k_eq_v": True, "num_kv_shared_layers": 0, "sliding_window": 3,
                 "layer_types": ["sliding_attention", "full_attention", "sliding_attention",
                                 "full_attention"],
                 "rope_parameters": {
                     "full_attention": {"partial_rotary_factor": 0.25,
                                        "rope_theta": 1000000.0,
                                        "rope_type": "proportional"},
                     "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}},
                 "rms_norm_eps": 1e-06, "attention_bias": False,
                 "max_position_embeddings": 262144, "final_logit_softcapping": 30.0,
                 "vocab_size": 12, "hidden_size_per_layer_input": 0}),
    # Gemma 4 E2B's shape: no k_eq_v (the full layers keep attn_v and num_key_value_heads),
    # the last two layers sharing K/V (shared_kv_layers 2: no attn_k / attn_v there), the
    # class's default ropes with other bases.
    dict(name="gemma4_e2b", arch="gemma4", seed=55, layers=[1, 2], S=9, metadata=gguf_metadata,
         types={"attn_q": "Q4_0", "attn_k": "Q8_0", "attn_v": "F16", "attn_output": "Q5_1"},
         config={"architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4_text",
                 "hidden_size": 32, "intermediate_size": 8, "num_hidden_layers": 5,
                 "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 8,
                 "global_head_dim": 16, "attention_k_eq_v": False,
                 "num_kv_shared_layers": 2, "sliding_window": 4,
                 "layer_types": ["sliding_attention", "sliding_attention", "full_attention",
                                 "sliding_attention", "full_attention"],
                 "rope_parameters": {
                     "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 500000.0,
                                        "rope_type": "proportional"},
                     "sliding_attention": {"rope_theta": 20000.0, "rope_type": "default"}},
                 "rms_norm_eps": 1e-06, "max_position_embeddings": 131072, "vocab_size": 12,
                 "hidden_size_per_layer_input": 4}),
    # The gemma4 spec again through llama.cpp's gguf-py: per-layer head_count_kv as an i32
    # array (ours: u32) (committed; rewritten by generate.py --gguf-py --fixtures).
    dict(name="gemma4_gguf_py", arch="gemma4", writer="gguf-py", of="gemma4", layers=[0, 1]),
]

VARIANTS = [
    # v_norm (no weight) on both; a global layer with k_eq_v (v is k_proj's output, before
    # k_norm and rope), proportional rope (a quarter of the pairs turn), scale 1, q/k norms
    # x * w; a sliding one with its own v_proj, default rope and a window.
    dict(name="gemma4_global_k_eq_v", writer="decoder", C=32, H=4, Hkv=1, D=16,
         rope_cfg={"theta": 1000000.0,
                   "scaling": {"rope_type": "proportional", "partial_rotary_factor": 0.25}},
         scale=1.0, qk_norm=(1e-6, 0), k_eq_v=True, v_norm=1e-6, offset=30, S=8, seed=16),
    dict(name="gemma4_sliding_v_norm", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 10000.0}, scale=1.0, qk_norm=(1e-6, 0), v_norm=1e-6, window=3, S=9,
         left=False, seed=17),
]
