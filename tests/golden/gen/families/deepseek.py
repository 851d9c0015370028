"""DeepSeek's multi-head latent attention (reference.mla_attention, from transformers'
modeling_deepseek_v3.DeepseekV3Attention and modeling_deepseek_v2): deepseek_v2 (DeepSeek-V2,
V2-Lite with q_lora_rank null), deepseek_v3 (DeepSeek-V3 / R1) and kimi_k2 (Moonshot's own
model_type for the same architecture; Kimi-K2.5 nests it as kimi_k25's text_config).

config.json is read as configuration_deepseek_v2.py / _v3.py read it (class defaults; q_lora_rank
null stays null; rope_scaling, or v5's rope_parameters holding rope_theta too); the softmax scale
gains yarn's mscale_all_dim squared (DeepseekV3Attention.__init__); rope_interleave true (V3's
default): de-interleave then rotate_half; false: rotate_half; V2: complex pairs. The block's
neighbours are a DeepSeek block's (norms, a dense MLP in the first first_k_dense_replace layers,
then routed experts, shared experts and the router). llama.cpp's DeepseekV2Model splits kv_b_proj
into attn_k_b (H, kv_lora, nope) and attn_v_b (H, v, kv_lora) (older converters: attn_kv_b
whole) and writes the MLA sizes as *_mla keys."""
import math
from collections import OrderedDict

import numpy as np
import torch

from .. import gguf
from .. import weights as W
from ..reference import Layer, Mla, Rope

MODEL_TYPES = ("deepseek_v2", "deepseek_v3", "kimi_k2", "kimi_k25")
# The configuration classes' defaults for the keys read here (DeepseekV2Config, DeepseekV3Config;
# Moonshot's configuration_deepseek.DeepseekV3Config for kimi_k2: V3's).
CLASS_DEFAULTS = {
    "deepseek_v2": dict(hidden_size=4096, num_attention_heads=32, max_position_embeddings=2048,
                        q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                        qk_rope_head_dim=64, v_head_dim=128, rope_theta=10000.0,
                        attention_bias=False, first_k_dense_replace=0),
    "deepseek_v3": dict(hidden_size=7168, num_attention_heads=128, max_position_embeddings=4096,
                        q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                        qk_rope_head_dim=64, v_head_dim=128, rope_theta=10000.0,
                        attention_bias=False, rope_interleave=True, first_k_dense_replace=3),
}
CLASS_DEFAULTS["kimi_k2"] = CLASS_DEFAULTS["deepseek_v3"]


def yarn_get_mscale(scale=1, mscale=1):  # modeling_deepseek_v3.yarn_get_mscale
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def mla_scaling(qk_head_dim, rope_scaling):
    """DeepseekV3Attention.__init__'s self.scaling (V2 the same since transformers #47435)."""
    s = qk_head_dim ** -0.5
    if rope_scaling is not None:
        m_all = rope_scaling.get("mscale_all_dim", 0)
        if m_all:
            m = yarn_get_mscale(rope_scaling["factor"], m_all)
            s = s * m * m
    return s


def settings(cfg, layer):
    if cfg["model_type"] == "kimi_k25":  # Kimi-K2.5's multimodal wrapper: the text model
        cfg = cfg["text_config"]
    mt = cfg["model_type"]
    c = dict(CLASS_DEFAULTS[mt], **cfg)
    C, H = c["hidden_size"], c["num_attention_heads"]
    nope, rope, v = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    params = c.get("rope_parameters")
    theta = (params or {}).get("rope_theta", c.get("rope_theta", 10000.0))
    scaling = params if params is not None else c.get("rope_scaling")
    if scaling is not None and \
            scaling.get("rope_type", scaling.get("type", "default")) == "default":
        scaling = None
    if mt == "deepseek_v2":
        form = "v2_complex"  # DeepseekV2's apply_rotary_emb: view_as_complex pairs
    else:
        form = "v3_interleave" if c.get("rope_interleave", True) else "v3_half"
    b = bool(c.get("attention_bias"))
    return Layer(C, H, H, max(nope + rope, v), layout="mla",
                 scale=mla_scaling(nope + rope, scaling),
                 rope=Rope(float(theta), rope, scaling, c.get("max_position_embeddings")),
                 mla=Mla(c.get("q_lora_rank"), c["kv_lora_rank"], nope, rope, v, form),
                 qkv_bias=b, o_bias=b, model_type=mt, prefix=f"model.layers.{layer}.self_attn.")


def attention_weights(a, g):
    """q_proj or q_a_proj + q_a_layernorm + q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm,
    kv_b_proj, o_proj; the norms near 1 (a lost norm weight shows)."""
    m, C, H, b = a.mla, a.C, a.H, a.qkv_bias
    sd = OrderedDict()
    if m.q_lora is None:
        W.put(sd, "q_proj", W.lin(g, H * (m.nope + m.rope), C, False))
    else:
        W.put(sd, "q_a_proj", W.lin(g, m.q_lora, C, b))
        sd["q_a_layernorm.weight"] = 1.0 + 0.3 * W.randn(g, m.q_lora)
        W.put(sd, "q_b_proj", W.lin(g, H * (m.nope + m.rope), m.q_lora, False))
    W.put(sd, "kv_a_proj_with_mqa", W.lin(g, m.kv_lora + m.rope, C, b))
    sd["kv_a_layernorm.weight"] = 1.0 + 0.3 * W.randn(g, m.kv_lora)
    W.put(sd, "kv_b_proj", W.lin(g, H * (m.nope + m.v), m.kv_lora, False))
    W.put(sd, "o_proj", W.lin(g, C, H * m.v, a.o_bias))
    return sd


def neighbours(s, layer, g, small=4):
    p = f"model.layers.{layer}."
    n = {p + "input_layernorm.weight": W.ones(s.C),
         p + "post_attention_layernorm.weight": W.ones(s.C)}
    if layer == 0:  # dense: first_k_dense_replace >= 1 in every folder below
        n[p + "mlp.up_proj.weight"] = W.small(g, small, s.C)
    else:  # DeepseekV2Moe / DeepseekV3MoE: router, experts, shared experts
        n[p + "mlp.gate.weight"] = W.small(g, 2, s.C)
        n[p + "mlp.experts.0.up_proj.weight"] = W.small(g, small, s.C)
        n[p + "mlp.shared_experts.up_proj.weight"] = W.small(g, small, s.C)
    return n


def to_gguf(spec, s, hf_sd):
    """DeepseekV2Model: kv_b_proj split per head, the k part transposed (converters before
    MLA absorption: attn_kv_b whole, s.extra["kv_b_whole"])."""
    out = OrderedDict()
    for name, t in hf_sd.items():
        if name.startswith("kv_b_proj.") and s.extra.get("kv_b_whole"):
            out["attn_kv_b." + name.rsplit(".", 1)[1]] = t
        elif name.startswith("kv_b_proj."):
            kv_b = t.reshape(s.H, s.mla.nope + s.mla.v, s.mla.kv_lora)
            out["attn_k_b.weight"] = np.ascontiguousarray(kv_b[:, :s.mla.nope].transpose(0, 2, 1))
            out["attn_v_b.weight"] = np.ascontiguousarray(kv_b[:, s.mla.nope:])
        else:
            out.update(gguf.to_gguf(spec, s, {name: t}))
    return out


def from_gguf(spec, s, names, back):
    sd = OrderedDict()
    for name in names:
        if name.startswith("kv_b_proj.") and s.extra.get("kv_b_whole"):
            sd[name] = torch.tensor(back["attn_kv_b." + name.rsplit(".", 1)[1]])
        elif name.startswith("kv_b_proj."):
            k_b, v_b = back["attn_k_b.weight"], back["attn_v_b.weight"]
            sd[name] = torch.tensor(np.concatenate([k_b.transpose(0, 2, 1), v_b], 1).reshape(
                -1, k_b.shape[1]))
        else:
            sd.update(gguf.from_gguf(spec, s, [name], back))
    return sd


def deepseek2_metadata(w, arch, cfg, n_layers, old=False):  # DeepseekV2Model.set_gguf_parameters
    # old: as converters before MLA absorption (2025) wrote it: MHA sizes, attn_kv_b whole
    gguf.text_model_metadata(w, arch, cfg if old else dict(cfg, num_key_value_heads=1), n_layers)
    a = arch + "."
    kv_lora, nope, rope, v = (cfg[k] for k in ("kv_lora_rank", "qk_nope_head_dim",
                                               "qk_rope_head_dim", "v_head_dim"))
    w.add(a + "leading_dense_block_count", cfg["first_k_dense_replace"])
    w.add(a + "vocab_size", cfg["vocab_size"])
    if cfg.get("q_lora_rank") is not None:
        w.add(a + "attention.q_lora_rank", cfg["q_lora_rank"])
    w.add(a + "attention.kv_lora_rank", kv_lora)
    if old:
        w.add(a + "attention.key_length", nope + rope)
        w.add(a + "attention.value_length", v)
    else:
        w.add(a + "attention.key_length", kv_lora + rope)
        w.add(a + "attention.value_length", kv_lora)
        w.add(a + "attention.key_length_mla", nope + rope)
        w.add(a + "attention.value_length_mla", v)
    w.add(a + "expert_feed_forward_length", cfg["moe_intermediate_size"])
    w.add(a + "expert_count", cfg["n_routed_experts"])
    w.add(a + "expert_shared_count", cfg["n_shared_experts"])
    w.add(a + "rope.dimension_count", rope)
    sc = cfg["rope_scaling"]  # TextModel's yarn keys, then the mscale_all_dim multiplier
    w.add(a + "rope.scaling.type", "yarn")
    w.add(a + "rope.scaling.factor", float(sc["factor"]))
    w.add(a + "rope.scaling.original_context_length", sc["original_max_position_embeddings"])
    w.add(a + "rope.scaling.yarn_beta_fast", float(sc["beta_fast"]))
    w.add(a + "rope.scaling.yarn_beta_slow", float(sc["beta_slow"]))
    w.add(a + "rope.scaling.yarn_log_multiplier", 0.1 * sc["mscale_all_dim"])


def deepseek2_old_metadata(w, arch, cfg, n_layers):
    deepseek2_metadata(w, arch, cfg, n_layers, old=True)


FOLDERS = [
    # DeepSeek-V2-Lite as the hub has it: q_lora_rank null, yarn with mscale = mscale_all_dim
    # 0.707 (the rope's attention factor is 1, the softmax scale gains mscale^2).
    dict(name="deepseek_v2_lite", seed=51, container="safetensors", dtype="bf16",
         layers=[0, 2], B=2, S=7, pad="left",
         config={"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
                 "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV2Config",
                              "AutoModelForCausalLM": "modeling_deepseek.DeepseekV2ForCausalLM"},
                 "hidden_size": 32, "intermediate_size": 48, "moe_intermediate_size": 8,
                 "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4,
                 "n_routed_experts": 4, "n_shared_experts": 2, "num_experts_per_tok": 2,
                 "first_k_dense_replace": 1, "q_lora_rank": None, "kv_lora_rank": 16,
                 "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8,
                 "rope_theta": 10000, "max_position_embeddings": 2560,
                 "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40,
                                  "mscale": 0.707, "mscale_all_dim": 0.707,
                                  "original_max_position_embeddings": 64, "type": "yarn"},
                 "attention_bias": False, "attention_dropout": 0.0, "rms_norm_eps": 1e-06,
                 "hidden_act": "silu", "vocab_size": 12, "torch_dtype": "bfloat16",
                 "topk_method": "greedy", "scoring_func": "softmax"}),
    # DeepSeek-V3: q_a/q_b, v narrower than q.k, yarn factor 40 with mscale_all_dim 1,
    # rope_interleave left to its default (true); two shards.
    dict(name="deepseek_v3", seed=52, container="shards2", dtype="bf16", layers=[1, 2],
         B=2, S=8, pad="right", offset=30,
         config={"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
                 "hidden_size": 32, "intermediate_size": 48, "moe_intermediate_size": 8,
                 "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4,
                 "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2,
                 "n_group": 2, "topk_group": 1, "first_k_dense_replace": 1,
                 "q_lora_rank": 24, "kv_lora_rank": 16, "qk_nope_head_dim": 8,
                 "qk_rope_head_dim": 4, "v_head_dim": 6, "rope_theta": 10000,
                 "max_position_embeddings": 2560,
                 "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40,
                                  "mscale": 1.0, "mscale_all_dim": 1.0,
                                  "original_max_position_embeddings": 64, "type": "yarn"},
                 "attention_bias": False, "rms_norm_eps": 1e-06, "hidden_act": "silu",
                 "vocab_size": 12, "torch_dtype": "bfloat16", "topk_method": "noaux_tc",
                 "scoring_func": "sigmoid", "routed_scaling_factor": 2.5}),
    # Kimi-K2 as Moonshot ships it: model_type kimi_k2 (DeepseekV3ForCausalLM through
    # auto_map), rope_theta 50000, yarn factor 32 with beta_fast 1.
    dict(name="kimi_k2", seed=53, container="safetensors", dtype="bf16", layers=[1],
         B=1, S=9, unbatched=True,
         config={"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2",
                 "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV3Config",
                              "AutoModel": "modeling_deepseek.DeepseekV3Model"},
                 "hidden_size": 32, "intermediate_size": 48, "moe_intermediate_size": 8,
                 "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
                 "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2,
                 "first_k_dense_replace": 1, "q_lora_rank": 16, "kv_lora_rank": 12,
                 "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8,
                 "rope_theta": 50000.0, "max_position_embeddings": 2048,
                 "rope_scaling": {"beta_fast": 1.0, "beta_slow": 1.0, "factor": 32.0,
                                  "mscale": 1.0, "mscale_all_dim": 1.0,
                                  "original_max_position_embeddings": 64, "type": "yarn"},
                 "attention_bias": False, "rms_norm_eps": 1e-06, "vocab_size": 12,
                 "torch_dtype": "bfloat16"}),
    # As transformers v5 saves a DeepseekV3Config: rope_parameters (no scaling), head_dim
    # (= qk_rope_head_dim, not the head size), rope_interleave false, attention_bias true.
    dict(name="deepseek_v3_v5", seed=54, container="safetensors", dtype="f32", layers=[0],
         B=2, S=6, pad="left",
         config={"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
                 "hidden_size": 24, "intermediate_size": 48, "num_hidden_layers": 2,
                 "num_attention_heads": 3, "num_key_value_heads": 3, "head_dim": 4,
                 "first_k_dense_replace": 1, "q_lora_rank": 12, "kv_lora_rank": 10,
                 "qk_nope_head_dim": 6, "qk_rope_head_dim": 4, "v_head_dim": 12,
                 "rope_parameters": {"rope_theta": 1000.0, "rope_type": "default"},
                 "rope_interleave": False, "attention_bias": True,
                 "max_position_embeddings": 512, "rms_norm_eps": 1e-06,
                 "vocab_size": 12, "dtype": "float32"}),
    # Kimi-K2.5: the same text model nested as text_config of kimi_k25, its weights under
    # language_model. beside a vision tower's.
    dict(name="kimi_k25", seed=55, container="safetensors", dtype="bf16", layers=[0],
         B=2, S=7, pad="left", rename=[("model.", "language_model.model.")],
         config={"architectures": ["KimiK25ForConditionalGeneration"],
                 "model_type": "kimi_k25",
                 "vision_config": {"model_type": "kimi_vision", "hidden_size": 16},
                 "text_config": {
                     "model_type": "kimi_k2", "hidden_size": 32, "intermediate_size": 48,
                     "num_hidden_layers": 2, "num_attention_heads": 4,
                     "num_key_value_heads": 4, "first_k_dense_replace": 1,
                     "q_lora_rank": 16, "kv_lora_rank": 8, "qk_nope_head_dim": 4,
                     "qk_rope_head_dim": 4, "v_head_dim": 8, "rope_theta": 50000.0,
                     "max_position_embeddings": 2048,
                     "rope_scaling": {"beta_fast": 1.0, "beta_slow": 1.0, "factor": 64.0,
                                      "mscale": 1.0, "mscale_all_dim": 1.0,
                                      "original_max_position_embeddings": 32,
                                      "type": "yarn"},
                     "attention_bias": False, "rms_norm_eps": 1e-05, "vocab_size": 12}}),
]

HELDOUT = [
    # DeepSeek-V2 (not Lite): q_lora_rank set, attention_bias, yarn spelled rope_type,
    # pytorch_model.bin, right padding.
    dict(name="deepseek_v2_full", seed=301, container="bin", dtype="f32", layers=[1, 2],
         B=2, S=9, pad="right",
         config={"model_type": "deepseek_v2", "hidden_size": 40, "num_attention_heads": 5,
                 "num_hidden_layers": 3, "q_lora_rank": 20, "kv_lora_rank": 12,
                 "qk_nope_head_dim": 6, "qk_rope_head_dim": 2, "v_head_dim": 10,
                 "attention_bias": True, "first_k_dense_replace": 1,
                 "max_position_embeddings": 4096, "rope_theta": 20000.0,
                 "rope_scaling": {"rope_type": "yarn", "factor": 16.0, "mscale": 0.707,
                                  "mscale_all_dim": 0.707, "beta_fast": 32, "beta_slow": 1,
                                  "original_max_position_embeddings": 256}}),
    # DeepSeek-V3 family without rope scaling, rope_interleave false, no num_key_value_heads,
    # f16, unbatched, several layers.
    dict(name="deepseek_v3_plain", seed=302, container="safetensors", dtype="f16",
         layers=[0, 3], S=7, unbatched=True,
         config={"model_type": "deepseek_v3", "hidden_size": 24, "num_attention_heads": 2,
                 "num_hidden_layers": 4, "q_lora_rank": 8, "kv_lora_rank": 8,
                 "qk_nope_head_dim": 4, "qk_rope_head_dim": 6, "v_head_dim": 4,
                 "rope_interleave": False, "first_k_dense_replace": 1,
                 "max_position_embeddings": 128, "rope_theta": 10000}),
    # transformers v5's rope_parameters with yarn, q_lora_rank null, left padding, shards.
    dict(name="deepseek_v3_v5_yarn", seed=303, container="shards3", dtype="bf16",
         layers=[1], B=3, S=8, pad="left", offset=50,
         config={"model_type": "deepseek_v3", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 4, "head_dim": 8, "num_hidden_layers": 2,
                 "q_lora_rank": None, "kv_lora_rank": 16, "qk_nope_head_dim": 8,
                 "qk_rope_head_dim": 8, "v_head_dim": 8, "first_k_dense_replace": 1,
                 "max_position_embeddings": 8192,
                 "rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0,
                                     "factor": 8.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                                     "beta_fast": 32.0, "beta_slow": 1.0,
                                     "original_max_position_embeddings": 32}}),
    # Kimi-K2 under its own model_type, without num_key_value_heads, two shards, f16.
    dict(name="kimi_k2_plain", seed=304, container="shards2", dtype="f16", layers=[2],
         B=2, S=6, pad="right",
         config={"model_type": "kimi_k2", "hidden_size": 24, "num_attention_heads": 3,
                 "num_hidden_layers": 3, "q_lora_rank": 9, "kv_lora_rank": 7,
                 "qk_nope_head_dim": 5, "qk_rope_head_dim": 2, "v_head_dim": 3,
                 "first_k_dense_replace": 1, "max_position_embeddings": 1024,
                 "rope_theta": 50000.0,
                 "rope_scaling": {"type": "yarn", "factor": 32.0, "mscale": 1.0,
                                  "mscale_all_dim": 1.0, "beta_fast": 1.0, "beta_slow": 1.0,
                                  "original_max_position_embeddings": 16}}),
]

YARN_40 = {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707,
           "mscale_all_dim": 0.707, "original_max_position_embeddings": 64, "type": "yarn"}
V2_LITE = {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
           "hidden_size": 32, "intermediate_size": 48, "moe_intermediate_size": 8,
           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
           "n_routed_experts": 4, "n_shared_experts": 2, "num_experts_per_tok": 2,
           "first_k_dense_replace": 1, "q_lora_rank": None, "kv_lora_rank": 32,
           "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8,
           "rope_theta": 10000, "max_position_embeddings": 2560, "rope_scaling": YARN_40,
           "attention_bias": False, "rms_norm_eps": 1e-06, "vocab_size": 12}
GGUF = [
    # DeepSeek-V3 (q_a/q_b, v narrower than q.k, yarn factor 40): kv_b_proj split into
    # attn_k_b (H, Rkv, Dn) and attn_v_b (H, Dv, Rkv); the MLA sizes as *_mla keys.
    dict(name="deepseek_v3", arch="deepseek2", seed=43, layers=[1, 2], S=8,
         metadata=deepseek2_metadata,
         types={"attn_q_a": "Q8_0", "attn_q_b": "Q4_0", "attn_kv_a_mqa": "Q8_0",
                "attn_k_b": "F16", "attn_v_b": "Q5_0", "attn_output": "BF16"},
         config={"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
                 "hidden_size": 32, "intermediate_size": 48, "moe_intermediate_size": 8,
                 "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4,
                 "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2,
                 "first_k_dense_replace": 1, "q_lora_rank": 32, "kv_lora_rank": 32,
                 "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 6,
                 "rope_theta": 10000, "max_position_embeddings": 2560,
                 "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40,
                                  "mscale": 1.0, "mscale_all_dim": 1.0,
                                  "original_max_position_embeddings": 64, "type": "yarn"},
                 "attention_bias": False, "rms_norm_eps": 1e-06, "vocab_size": 12}),
    # DeepSeek-V2-Lite: q_proj (q_lora_rank null), mscale = mscale_all_dim 0.707.
    dict(name="deepseek_v2_lite", arch="deepseek2", seed=44, layers=[0], S=7,
         metadata=deepseek2_metadata,
         types={"attn_q": "Q8_0", "attn_kv_a_mqa": "Q4_1", "attn_v_b": "Q8_0",
                "attn_output": "F16"},
         config=V2_LITE),
    # DeepSeek-V2-Lite as converters before MLA absorption wrote it (many hub files):
    # key_length / value_length the head sizes, attn_kv_b whole.
    dict(name="deepseek_v2_lite_old", arch="deepseek2", seed=51, layers=[1], S=7,
         metadata=deepseek2_old_metadata, converter={"kv_b_whole": True},
         types={"attn_q": "Q4_0", "attn_kv_a_mqa": "Q8_0", "attn_kv_b": "Q8_0",
                "attn_output": "Q8_0"},
         config=V2_LITE),
]

# DeepSeek-V3 (and Kimi-K2): q_a/q_b, yarn whose mscale_all_dim enters the scale,
# rope_interleave; V2-Lite: q_proj (q_lora_rank null), V2's complex rope, v wider than q.k.
VARIANT_YARN = {"theta": 10000.0, "max_position_embeddings": 2048,
                "scaling": {"type": "yarn", "factor": 40.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                            "beta_fast": 32, "beta_slow": 1,
                            "original_max_position_embeddings": 64}}
VARIANT_LITE = {"theta": 10000.0, "max_position_embeddings": 2048,
                "scaling": {"type": "yarn", "factor": 40.0, "mscale": 0.707,
                            "mscale_all_dim": 0.707, "beta_fast": 32, "beta_slow": 1,
                            "original_max_position_embeddings": 64}}
VARIANTS = [
    dict(name="deepseek_v3_mla_yarn", writer="mla", C=32, H=4, q_lora=24, kv_lora=16, nope=8,
         rope_dim=4, v=6, form="v3_interleave", rope_cfg=VARIANT_YARN,
         scale=mla_scaling(12, VARIANT_YARN["scaling"]), offset=90, S=8),
    dict(name="deepseek_v2_lite_mla", writer="mla", C=32, H=4, q_lora=None, kv_lora=16, nope=6,
         rope_dim=4, v=12, form="v2_complex", rope_cfg=VARIANT_LITE,
         scale=mla_scaling(10, VARIANT_LITE["scaling"]), bias=True, left=False, seed=1),
    dict(name="deepseek_v3_mla_half_rope", writer="mla", C=32, H=2, q_lora=12, kv_lora=8, nope=4,
         rope_dim=8, v=8, form="v3_half", rope_cfg={"theta": 5000.0}, scale=mla_scaling(12, None),
         seed=2),
]
