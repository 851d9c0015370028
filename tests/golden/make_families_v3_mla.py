#!/usr/bin/python3
"""Hugging Face model folders of the families with DeepSeek's multi-head latent attention
(CONTRACT.md v3, issue 24): deepseek_v2 (DeepSeek-V2, V2-Lite with q_lora_rank null),
deepseek_v3 (DeepSeek-V3 / R1) and kimi_k2 (Kimi-K2's own model_type for the same architecture;
K2.5 nests it as kimi_k25's text_config).

Each folder tests/golden/folders/<name>/ is written by make_folders.py's make_folder (model/
with config.json in the family's own spelling and a whole tiny model under the real state_dict
names; layer<N>/ with case.json, input.npy and torch's expected context and maps), with the
three pieces make_folders.py knows per family supplied here for these two model_types:
  settings   config.json read as configuration_deepseek_v2.py / configuration_deepseek_v3.py
             read it (class defaults for missing keys; q_lora_rank null stays null; the
             softmax scale with yarn's mscale_all_dim as DeepseekV3Attention.__init__);
  weights    q_proj or q_a_proj + q_a_layernorm + q_b_proj, kv_a_proj_with_mqa,
             kv_a_layernorm, kv_b_proj, o_proj (biases as attention_bias says);
  attention  deepseek_mla.DeepseekMLA: modeling_deepseek_v3's forward (rope_interleave true:
             de-interleave then rotate_half; false: rotate_half) or modeling_deepseek_v2's
             (complex pairs), in float64 from the stored (rounded) weights.
The block's neighbours are a DeepSeek block's (norms, a dense MLP in the first
first_k_dense_replace layers, then routed experts, shared experts and the router).

Only this script's folders are rewritten (deterministic: fixed seeds).
Usage: /usr/bin/python3 tests/golden/make_families_v3_mla.py
"""
import os
import shutil
import sys
from collections import OrderedDict

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_folders as mf  # noqa: E402
from deepseek_mla import DeepseekMLA, mla_scaling  # noqa: E402
from make_positions import rope_params  # noqa: E402

MLA_TYPES = ("deepseek_v2", "deepseek_v3", "kimi_k2", "kimi_k25")

# The configuration classes' defaults for the keys read here (DeepseekV2Config, DeepseekV3Config).
CLASS_DEFAULTS = {
    "deepseek_v2": dict(hidden_size=4096, num_attention_heads=32, max_position_embeddings=2048,
                        q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                        qk_rope_head_dim=64, v_head_dim=128, rope_theta=10000.0,
                        attention_bias=False, first_k_dense_replace=0),
    "kimi_k2": None,  # Moonshot's configuration_deepseek.DeepseekV3Config: V3's defaults
    "deepseek_v3": dict(hidden_size=7168, num_attention_heads=128, max_position_embeddings=4096,
                        q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                        qk_rope_head_dim=64, v_head_dim=128, rope_theta=10000.0,
                        attention_bias=False, rope_interleave=True, first_k_dense_replace=3),
}

_settings, _weights, _attention, _neighbours = (mf.hf_settings, mf.attention_weights,
                                                mf.layer_attention, mf.block_neighbours)


def hf_settings(cfg, layer):
    if cfg.get("model_type") not in MLA_TYPES:
        return _settings(cfg, layer)
    if cfg["model_type"] == "kimi_k25":  # Kimi-K2.5's multimodal wrapper: the text model
        cfg = cfg["text_config"]
    mt = cfg["model_type"]
    c = dict(CLASS_DEFAULTS[mt] or CLASS_DEFAULTS["deepseek_v3"], **cfg)
    C, H = c["hidden_size"], c["num_attention_heads"]
    nope, rope, v = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    # rope_scaling (transformers 4.x), or v5's rope_parameters holding rope_theta too
    params = c.get("rope_parameters")
    theta = (params or {}).get("rope_theta", c.get("rope_theta", 10000.0))
    scaling = params if params is not None else c.get("rope_scaling")
    if scaling is not None and scaling.get("rope_type", scaling.get("type", "default")) == "default":
        scaling = None
    if mt == "deepseek_v2":
        form = "v2_complex"  # DeepseekV2's apply_rotary_emb: view_as_complex pairs
    else:
        form = "v3_interleave" if c.get("rope_interleave", True) else "v3_half"
    b = bool(c.get("attention_bias"))
    return dict(model_type=mt, C=C, H=H, Hkv=H, D=max(nope + rope, v),
                scale=mla_scaling(nope + rope, scaling), causal=True,
                rope=dict(theta=float(theta), R=rope, scaling=scaling,
                          mpe=c.get("max_position_embeddings")),
                window=None, softcap=None, qk_norm=None, sinks=False, alibi=None,
                layout="mla", qkv_bias=b, o_bias=b, prefix=f"model.layers.{layer}.self_attn.",
                mla=(c.get("q_lora_rank"), c["kv_lora_rank"], nope, rope, v), form=form,
                dense=layer < c.get("first_k_dense_replace", 0))


def attention_weights(s, g):
    if s.get("layout") != "mla":
        return _weights(s, g)
    C, H = s["C"], s["H"]
    q_lora, kv_lora, nope, rope, v = s["mla"]
    b = s["qkv_bias"]
    norm = lambda n: 1.0 + 0.3 * torch.randn(n, generator=g, dtype=torch.float64)  # noqa: E731
    sd = OrderedDict()
    if q_lora is None:
        mf.put(sd, "q_proj", mf.lin(g, H * (nope + rope), C, False))
    else:
        mf.put(sd, "q_a_proj", mf.lin(g, q_lora, C, b))
        sd["q_a_layernorm.weight"] = norm(q_lora)
        mf.put(sd, "q_b_proj", mf.lin(g, H * (nope + rope), q_lora, False))
    mf.put(sd, "kv_a_proj_with_mqa", mf.lin(g, kv_lora + rope, C, b))
    sd["kv_a_layernorm.weight"] = norm(kv_lora)
    mf.put(sd, "kv_b_proj", mf.lin(g, H * (nope + v), kv_lora, False))
    mf.put(sd, "o_proj", mf.lin(g, C, H * v, s["o_bias"]))
    return sd


def layer_attention(s, sd, x, keep, pos):
    if s.get("layout") != "mla":
        return _attention(s, sd, x, keep, pos)
    q_lora, kv_lora, nope, rope, v = s["mla"]
    m = DeepseekMLA(s["C"], s["H"], q_lora, kv_lora, nope, rope, v, s["qkv_bias"]).double()
    m.load_state_dict({k: t for k, t in sd.items()})
    r = s["rope"]
    inv, att = rope_params(r["theta"], r["R"], r["mpe"], r["scaling"], int(pos.max()) + 1)
    B, S, _ = x.shape
    ok = mf.allowed_keys(B, S, True, None, keep)
    return m(x, pos, ok, (inv, att), s["scale"], s["form"])


def block_neighbours(mt, layer, C, g, small=4):
    if mt not in MLA_TYPES:
        return _neighbours(mt, layer, C, g, small)
    r = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64) * 0.1  # noqa: E731
    p = f"model.layers.{layer}."
    n = {p + "input_layernorm.weight": torch.ones(C, dtype=torch.float64),
         p + "post_attention_layernorm.weight": torch.ones(C, dtype=torch.float64)}
    if layer == 0:  # dense: first_k_dense_replace >= 1 in every folder below
        n[p + "mlp.up_proj.weight"] = r(small, C)
    else:  # DeepseekV2Moe / DeepseekV3MoE: router, experts, shared experts
        n[p + "mlp.gate.weight"] = r(2, C)
        n[p + "mlp.experts.0.up_proj.weight"] = r(small, C)
        n[p + "mlp.shared_experts.up_proj.weight"] = r(small, C)
    return n


mf.hf_settings, mf.attention_weights = hf_settings, attention_weights
mf.layer_attention, mf.block_neighbours = layer_attention, block_neighbours


def specs():
    return [
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


def main():
    n = 0
    for spec in specs():
        root = os.path.join(mf.OUT, spec["name"])
        if os.path.isdir(root):
            shutil.rmtree(root)
        mf.make_folder(spec)
        n += len(spec["layers"])
    print(f"wrote {len(specs())} model folders, {n} layer cases, to {mf.OUT}")


if __name__ == "__main__":
    main()
