#!/usr/bin/python3
"""GGUF files of CONTRACT.md v3's families as llama.cpp's converter writes them (issue 25 item 3),
with torch's expected output; make_gguf.py runs this after its own files (same folder shape:
tests/golden/gguf/<name>/model.gguf and layer<N>/).

Each family's torch reference is its own generator's (make_families_v3_decoders, _features, _mla,
_encoders, _t5; make_folders for BERT): `settings` reads the Hugging Face config.json as the
family's configuration class does, the weights are drawn under the family's own state_dict names,
and the expected output is the family's attention on the dequantized GGUF tensors brought back to
those names. `to_gguf` does what llama.cpp's converter (conversion/<family>.py) does to them and
`from_gguf` undoes it; the metadata functions write what each converter class's
set_gguf_parameters writes.

Deterministic (fixed seeds). Usage: /usr/bin/python3 tests/golden/make_gguf.py (all files).
"""
import json
import os
import sys
from collections import OrderedDict

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from gguf_quants import ID  # noqa: E402
from gguf_write import GGUFWriter  # noqa: E402
import make_families_v3_decoders as dec  # noqa: E402
import make_families_v3_encoders as enc  # noqa: E402
import make_families_v3_features as feat  # noqa: E402
import make_families_v3_t5 as t5m  # noqa: E402
from make_folders import attention_weights as mf_attention_weights  # noqa: E402
from make_folders import hf_settings, layer_attention  # noqa: E402  (bound before dec.install)
from make_gguf import llama3_factors, permute, stored, unpermute  # noqa: E402

OUT = os.path.join(HERE, "gguf")

# ---- what the converters do to the families' tensors -------------------------------------------

# LlamaModel subclasses (and InternLM2's split wqkv): Q/K rows permuted for ggml's NORM rope.
PERMUTED_V3 = {"granite", "granitemoe", "smollm3", "internlm2"}
# Qwen3NextModel and its Qwen3.5 subclasses: every *norm.weight stored as 1 + w.
NORM_PLUS_ONE = {"qwen3next", "qwen35", "qwen35moe"}
# The names gguf-py's tensor map gives the families' attention tensors.
TO_GGUF = {"q_proj": "attn_q", "k_proj": "attn_k", "v_proj": "attn_v", "o_proj": "attn_output",
           "dense": "attn_output", "wo": "attn_output", "c_attn": "attn_qkv",
           "c_proj": "attn_output", "q_norm": "attn_q_norm", "k_norm": "attn_k_norm",
           "q_a_proj": "attn_q_a", "q_a_layernorm": "attn_q_a_norm", "q_b_proj": "attn_q_b",
           "kv_a_proj_with_mqa": "attn_kv_a_mqa", "kv_a_layernorm": "attn_kv_a_norm",
           "self.query": "attn_q", "self.key": "attn_k", "self.value": "attn_v",
           "output.dense": "attn_output", "output.LayerNorm": "attn_output_norm",
           "Wqkv": "attn_qkv", "Wo": "attn_output",
           "q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_o",
           "relative_attention_bias": "attn_rel_b"}
T5_TYPES = ("t5", "mt5", "umt5")


def t5_settings(cfg, layer):  # make_families_v3_t5.settings, with the keys make_v3 reads
    return dict(t5m.settings(cfg), Hkv=t5m.settings(cfg)["H"], rope=None, window=None,
                layer=layer)


def t5_layer_attention(s, sd, x, keep, pos):  # modeling_t5.T5Attention of an encoder block
    return t5m.t5_attention(s, sd, "", x, keep, table="relative_attention_bias.weight")


def t5_weights(s, g):
    """q, k, v, o of an encoder block (T5's init scales), its table in block 0 (UMT5: each)."""
    C, H, D = s["C"], s["H"], s["D"]
    r = lambda *shape, k=1.0: torch.randn(*shape, generator=g, dtype=torch.float64) * k  # noqa
    sd = OrderedDict((n + ".weight", r(H * D, C, k=C ** -0.5)) for n in ("q", "k", "v"))
    sd["o.weight"] = r(C, H * D, k=(H * D) ** -0.5)
    if s["layer"] == 0 or s["every_layer_table"]:
        sd["relative_attention_bias.weight"] = r(s["buckets"], H)
    return sd
MLA_TYPES = ("deepseek_v2", "deepseek_v3", "kimi_k2")
GEMMA4_TYPES = ("gemma4", "gemma4_text")


def mla():
    import make_families_v3_mla  # noqa: E402  (points make_folders' lookups at its own)
    return make_families_v3_mla


def gemma4():
    import make_families_v3_gemma4  # noqa: E402  (imported late, as mla())
    return make_families_v3_gemma4


def family_of(cfg):
    """(settings, layer_attention) of the generator that holds the family's reference."""
    mt = cfg["model_type"]
    if mt in dec.TYPES:
        return dec.settings, dec.layer_attention
    if mt in MLA_TYPES:
        return mla().hf_settings, mla().layer_attention
    if mt in enc.TYPES:
        return enc.encoder_settings, enc.layer_attention
    if mt in ("bert", "roberta"):
        return hf_settings, layer_attention
    if mt in T5_TYPES:
        return t5_settings, t5_layer_attention
    if mt in GEMMA4_TYPES:
        return gemma4().settings, gemma4().layer_attention
    return feat.settings, feat.layer_attention


def hf_weights(cfg, s, layer, g):
    """The layer's attention tensors under the family's names (relative to s["prefix"])."""
    if cfg["model_type"] in dec.TYPES:
        return OrderedDict((k, v.numpy()) for k, v in dec.attention_weights(s, g).items())
    if cfg["model_type"] in MLA_TYPES:
        return OrderedDict((k, v.numpy()) for k, v in mla().attention_weights(s, g).items())
    if cfg["model_type"] in enc.TYPES:
        return OrderedDict((k, v.numpy()) for k, v in enc.attention_weights(s, g).items())
    if cfg["model_type"] in ("bert", "roberta"):
        return OrderedDict((k, v.numpy()) for k, v in mf_attention_weights(s, g).items())
    if cfg["model_type"] in T5_TYPES:
        return OrderedDict((k, v.numpy()) for k, v in t5_weights(s, g).items())
    p = s["prefix"]
    if cfg["model_type"] in GEMMA4_TYPES:  # the block's other tensors drawn too, not written
        return OrderedDict((k[len(p):], v.numpy()) for k, v in gemma4().layer_weights(s, g, 0).items()
                           if k.startswith(p))
    return OrderedDict((k[len(p):], v.numpy()) for k, v in feat.layer_weights(s, layer, g).items()
                       if k.startswith(p))


def to_gguf(arch, s, hf):
    """The converter's tensors (GGUF names without the blk.N. prefix) from the family's."""
    H, Hkv, D = s["H"], s["Hkv"], s["D"]
    out, norms = OrderedDict(), {}
    for name, t in hf.items():
        mod, kind = name.rsplit(".", 1)
        if arch == "internlm2" and mod == "wqkv":  # InternLM2Model.modify_tensors
            C = t.shape[1]
            qkv = t.reshape(Hkv, H // Hkv + 2, D, C)
            out["attn_q.weight"] = permute(qkv[:, :-2].reshape(-1, C), H)
            out["attn_k.weight"] = permute(qkv[:, -2].reshape(-1, C), Hkv)
            out["attn_v.weight"] = qkv[:, -1].reshape(-1, C)
            continue
        if mod == "kv_b_proj" and s.get("kv_b_whole"):  # converters before MLA absorption
            out["attn_kv_b." + kind] = t
            continue
        if mod == "kv_b_proj":  # DeepseekV2Model: kv_b split per head, the k part transposed
            _, kv_lora, nope, _, v = s["mla"]
            kv_b = t.reshape(H, nope + v, kv_lora)
            out["attn_k_b.weight"] = np.ascontiguousarray(kv_b[:, :nope].transpose(0, 2, 1))
            out["attn_v_b.weight"] = np.ascontiguousarray(kv_b[:, nope:])
            continue
        if ".norms." in mod:  # StableLMModel: q_layernorm.norms.{h} stacked as attn_q_norm (H, D)
            norms.setdefault(mod.split(".")[0], []).append(t)
            continue
        if arch in PERMUTED_V3 and mod in ("q_proj", "k_proj"):  # LlamaModel.permute
            t = permute(t, H if mod == "q_proj" else Hkv)
        if arch in NORM_PLUS_ONE and mod in ("q_norm", "k_norm"):  # Qwen3NextModel: norm + 1
            t = (t.astype(np.float32) + np.float32(1)).astype(np.float32)
        out[TO_GGUF[mod] + "." + kind] = t
    for which, rows in norms.items():
        out[("attn_q_norm" if which == "q_layernorm" else "attn_k_norm") + ".weight"] = np.stack(rows)
    return out


def from_gguf(arch, s, names, back):
    """The family's tensors (torch, float64) from the dequantized GGUF ones: to_gguf undone."""
    H, Hkv, D = s["H"], s["Hkv"], s["D"]
    sd = OrderedDict()
    for name in names:
        mod, kind = name.rsplit(".", 1)
        if arch == "internlm2" and mod == "wqkv":
            C = back["attn_q.weight"].shape[1]
            q = unpermute(back["attn_q.weight"], H).reshape(Hkv, H // Hkv, D, C)
            k = unpermute(back["attn_k.weight"], Hkv).reshape(Hkv, 1, D, C)
            v = back["attn_v.weight"].reshape(Hkv, 1, D, C)
            sd[name] = torch.tensor(np.concatenate([q, k, v], 1).reshape(-1, C))
            continue
        if mod == "kv_b_proj" and s.get("kv_b_whole"):
            sd[name] = torch.tensor(back["attn_kv_b." + kind])
            continue
        if mod == "kv_b_proj":
            k_b, v_b = back["attn_k_b.weight"], back["attn_v_b.weight"]
            sd[name] = torch.tensor(np.concatenate([k_b.transpose(0, 2, 1), v_b], 1).reshape(
                -1, k_b.shape[1]))
            continue
        if ".norms." in mod:
            which, _, h = mod.split(".")
            t = back[("attn_q_norm" if which == "q_layernorm" else "attn_k_norm") + ".weight"]
            sd[name] = torch.tensor(t[int(h)])
            continue
        t = back[TO_GGUF[mod] + "." + kind]
        if arch in PERMUTED_V3 and mod in ("q_proj", "k_proj"):
            t = unpermute(t, H if mod == "q_proj" else Hkv)
        if arch in NORM_PLUS_ONE and mod in ("q_norm", "k_norm"):
            t = t - 1.0  # Hugging Face's w of the (1 + w) norm
        sd[name] = torch.tensor(t)
    return sd


def text_model_metadata(w, arch, cfg, n_layers, llama_model=False):
    """TextModel.set_gguf_parameters (conversion/base.py); LlamaModel's rope.dimension_count."""
    a = arch + "."
    w.add("general.architecture", arch)
    w.add("general.name", "attn-run golden " + arch)
    w.add(a + "block_count", n_layers)
    get = lambda *keys: next((cfg[k] for k in keys if cfg.get(k) is not None), None)  # noqa
    if (n := get("max_position_embeddings", "n_ctx", "n_positions")) is not None:
        w.add(a + "context_length", n)
    C, H = get("hidden_size", "n_embd"), get("num_attention_heads", "n_head")
    w.add(a + "embedding_length", C)
    w.add(a + "feed_forward_length", get("intermediate_size", "n_inner") or 8)
    w.add(a + "attention.head_count", H)
    if (n := get("num_key_value_heads")) is not None:
        w.add(a + "attention.head_count_kv", n)
    rope_params = cfg.get("rope_parameters") or {}  # transformers v5 (TextModel.rope_parameters)
    if (t := rope_params.get("rope_theta", get("rope_theta"))) is not None:
        w.add(a + "rope.freq_base", float(t))
    if (e := get("rms_norm_eps", "norm_eps")) is not None:
        w.add(a + "attention.layer_norm_rms_epsilon", float(e))
    if (e := get("layer_norm_eps", "layer_norm_epsilon", "norm_epsilon")) is not None:
        w.add(a + "attention.layer_norm_epsilon", float(e))
    if (d := get("head_dim")) is not None:
        w.add(a + "attention.key_length", d)
        w.add(a + "attention.value_length", d)
    if llama_model:
        w.add(a + "rope.dimension_count", get("head_dim") or C // H)


def stablelm_metadata(w, arch, cfg, n_layers):  # StableLMModel.set_gguf_parameters
    a = arch + "."
    w.add("general.architecture", arch)
    w.add("general.name", "attn-run golden " + arch)
    w.add(a + "context_length", cfg["max_position_embeddings"])
    w.add(a + "embedding_length", cfg["hidden_size"])
    w.add(a + "block_count", n_layers)
    w.add(a + "feed_forward_length", cfg["intermediate_size"])
    D = cfg["hidden_size"] // cfg["num_attention_heads"]
    w.add(a + "rope.dimension_count", int(cfg["partial_rotary_factor"] * D))
    w.add(a + "attention.head_count", cfg["num_attention_heads"])
    w.add(a + "attention.head_count_kv", cfg["num_key_value_heads"])
    w.add(a + "use_parallel_residual", bool(cfg.get("use_parallel_residual", True)))
    w.add(a + "attention.layer_norm_epsilon", float(cfg["layer_norm_eps"]))


def starcoder_metadata(w, arch, cfg, n_layers):  # StarCoderModel.set_gguf_parameters
    a = arch + "."
    w.add("general.architecture", arch)
    w.add("general.name", "attn-run golden " + arch)
    w.add(a + "context_length", cfg["n_positions"])
    w.add(a + "embedding_length", cfg["n_embd"])
    w.add(a + "feed_forward_length", 4 * cfg["n_embd"])
    w.add(a + "block_count", n_layers)
    w.add(a + "attention.head_count", cfg["n_head"])
    w.add(a + "attention.head_count_kv", 1)  # whatever multi_query says
    w.add(a + "attention.layer_norm_epsilon", float(cfg.get("layer_norm_epsilon", 1e-5)))


def phi2_metadata(w, arch, cfg, n_layers):  # Phi2Model.set_gguf_parameters
    a = arch + "."
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    w.add("general.architecture", arch)
    w.add("general.name", "attn-run golden " + arch)
    w.add(a + "context_length", cfg["max_position_embeddings"])
    w.add(a + "embedding_length", C)
    w.add(a + "feed_forward_length", 4 * C)
    w.add(a + "block_count", n_layers)
    w.add(a + "attention.head_count", H)
    w.add(a + "attention.head_count_kv", H)
    w.add(a + "attention.layer_norm_epsilon", float(cfg["layer_norm_eps"]))
    w.add(a + "rope.dimension_count", int(cfg["partial_rotary_factor"] * C) // H)


def deepseek2_metadata(w, arch, cfg, n_layers, old=False):  # DeepseekV2Model.set_gguf_parameters
    # old: as converters before MLA absorption (2025) wrote it: MHA sizes, attn_kv_b whole
    text_model_metadata(w, arch, cfg if old else dict(cfg, num_key_value_heads=1), n_layers)
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


def bert_metadata(w, arch, cfg, n_layers):  # BertModel / ModernBertModel.set_gguf_parameters
    text_model_metadata(w, arch, cfg, n_layers)
    w.add(arch + ".attention.causal", False)
    w.add(arch + ".pooling_type", 2)  # CLS (sentence-transformers' modules.json)


def modernbert_metadata(w, arch, cfg, n_layers):
    bert_metadata(w, arch, cfg, n_layers)
    a = arch + "."
    w.add(a + "rope.freq_base", float(cfg["global_rope_theta"]))
    w.add(a + "rope.freq_base_swa", float(cfg["local_rope_theta"]))
    w.add(a + "attention.sliding_window", cfg["local_attention"])
    w.add(a + "attention.sliding_window_pattern", cfg["global_attn_every_n_layers"])
    w.add(a + "rope.scaling.type", "none")
    w.add(a + "vocab_size", cfg["vocab_size"])


def t5_metadata(w, arch, cfg, n_layers):  # T5Model.set_gguf_parameters
    a = arch + "."
    w.add("general.architecture", arch)
    w.add("general.name", "attn-run golden " + arch)
    w.add(a + "context_length", cfg.get("n_positions", 512))
    w.add(a + "embedding_length", cfg["d_model"])
    w.add(a + "feed_forward_length", cfg["d_ff"])
    w.add(a + "block_count", n_layers)
    w.add(a + "decoder_block_count", cfg.get("num_decoder_layers") or n_layers)
    w.add(a + "attention.head_count", cfg["num_heads"])
    w.add(a + "attention.key_length", cfg["d_kv"])
    w.add(a + "attention.value_length", cfg["d_kv"])
    w.add(a + "attention.layer_norm_epsilon", float(cfg["layer_norm_epsilon"]))
    w.add(a + "attention.relative_buckets_count", cfg["relative_attention_num_buckets"])
    w.add(a + "attention.layer_norm_rms_epsilon", float(cfg["layer_norm_epsilon"]))
    w.add(a + "decoder_start_token_id", 0)


def gemma4_metadata(w, arch, cfg, n_layers):
    """Gemma4Model.set_gguf_parameters over Gemma3Model's and TextModel's (conversion/gemma.py):
    key_length / value_length the full layers' head (global_head_dim), *_swa the sliding ones',
    head_count_kv one per layer when num_global_key_value_heads is set, the layer types as one
    bool per layer (true: sliding), rope.freq_base the full layers' theta and freq_base_swa the
    sliding ones', rope.dimension_count the whole full head (the fraction is rope_freqs.weight)."""
    t = gemma4().text_config(cfg)
    a = arch + "."
    w.add("general.architecture", arch)
    w.add("general.name", "attn-run golden " + arch)
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


def gemma4_rope_freqs(cfg):
    """Gemma4Model.generate_extra_tensors: the full layers' proportional rope as ggml divisors,
    1 for each of the int(D * p / 2) turned pairs and 1e30 for the others."""
    t = gemma4().text_config(cfg)
    D, p = t["global_head_dim"], t["rope_parameters"]["full_attention"]["partial_rotary_factor"]
    n_rot = int(D * p / 2)
    return np.array([1.0] * n_rot + [1e30] * (D // 2 - n_rot), np.float32)


def linear_attention_tensors(w, p, s, r):
    """A Qwen3-Next linear-attention layer's tensors as the converter names them (not read)."""
    C = s["C"]
    for name, shape in (("attn_qkv", (48, C)), ("attn_gate", (16, C)), ("ssm_out", (C, 16))):
        w.add_tensor(p + name + ".weight", shape, ID["F32"],
                     r(*shape).numpy().astype(np.float32).tobytes())
    w.add_tensor(p + "ssm_norm.weight", (16,), ID["F32"], np.ones(16, np.float32).tobytes())


def make_v3(spec):
    name, arch, cfg, types = spec["name"], spec["arch"], spec["config"], spec["types"]
    root = os.path.join(OUT, name)
    os.makedirs(root)
    g = torch.Generator().manual_seed(spec["seed"])
    rng = np.random.default_rng(spec["seed"])
    settings, attention = family_of(cfg)
    n_layers = next(cfg[k] for k in ("num_hidden_layers", "n_layer", "num_layers") if k in cfg)
    w = GGUFWriter(version=3)
    if spec.get("metadata"):
        spec["metadata"](w, arch, cfg, n_layers)
    else:
        text_model_metadata(w, arch, cfg, n_layers, arch in PERMUTED_V3)
    for key, value in spec.get("extra", {}).items():
        w.add(arch + "." + key, value)
    w.add("general.file_type", 1)
    s0 = settings(cfg, 0)
    C = s0["C"]
    r = lambda *shape: 0.3 * torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    w.add_tensor("token_embd.weight", (12, C), ID["F32"], r(12, C).numpy().astype(np.float32).tobytes())
    sc = cfg.get("rope_scaling") or {}
    if sc.get("rope_type") == "llama3":  # LlamaModel.generate_extra_tensors
        ff = llama3_factors(float(cfg["rope_theta"]), s0["D"], sc)
        w.add_tensor("rope_freqs.weight", ff.shape, ID["F32"], ff.tobytes())
    if arch == "gemma4":
        ff = gemma4_rope_freqs(cfg)
        w.add_tensor("rope_freqs.weight", ff.shape, ID["F32"], ff.tobytes())
    per_layer = {}
    blk = spec.get("blk", "blk.")
    for layer in range(n_layers):
        s = dict(settings(cfg, layer), **spec.get("converter", {}))
        p = f"{blk}{layer}."
        w.add_tensor(p + "attn_norm.weight", (C,), ID["F32"], np.ones(C, np.float32).tobytes())
        hf = hf_weights(cfg, s, layer, g)
        if not hf:  # Qwen3-Next's linear-attention layers: their own tensors, not read
            linear_attention_tensors(w, p, s, r)
        back = {}
        for gname, t in to_gguf(arch, s, hf).items():
            tname = types.get(gname.rsplit(".", 1)[0], "F32") if gname.endswith(".weight") \
                and t.ndim >= 2 and "norm" not in gname else "F32"
            raw, b = stored(tname, t.reshape(-1, t.shape[-1]) if t.ndim > 1 else t, rng)
            back[gname] = b.reshape(t.shape)
            w.add_tensor(p + gname, t.shape, ID[tname], raw)
        w.add_tensor(p + "ffn_norm.weight", (C,), ID["F32"], np.ones(C, np.float32).tobytes())
        w.add_tensor(p + "ffn_up.weight", (8, C), ID["F32"], r(8, C).numpy().astype(np.float32).tobytes())
        w.add_tensor(p + "ffn_down.weight", (C, 8), ID["F32"], r(C, 8).numpy().astype(np.float32).tobytes())
        per_layer[layer] = (s, from_gguf(arch, s, list(hf), back) if hf else None)
    if arch == "t5":  # T5Stack: block 0's table serves every block; the decoder's tensors
        table = per_layer[0][1]["relative_attention_bias.weight"]
        for layer, (s, lsd) in per_layer.items():
            lsd.setdefault("relative_attention_bias.weight", table)
        for tn, shape in (("attn_q", (C, C)), ("attn_o", (C, C)), ("cross_attn_q", (C, C)),
                          ("attn_rel_b", (s0["buckets"], s0["H"]))):
            w.add_tensor("dec.blk.0." + tn + ".weight", shape, ID["F32"],
                         r(*shape).numpy().astype(np.float32).tobytes())
    w.write(os.path.join(root, "model.gguf"))
    out = []
    for layer in spec["layers"]:
        s, lsd = per_layer[layer]
        B, S = 1, spec.get("S", 7)
        x = torch.randn(B, S, C, generator=g, dtype=torch.float64).float().double()
        pos = torch.arange(S).expand(B, S)
        with torch.no_grad():
            ctx, maps = attention(s, lsd, x, None, pos)
        d = os.path.join(root, f"layer{layer}")
        os.makedirs(os.path.join(d, "expected"))
        np.save(os.path.join(d, "input.npy"), x[0].float().numpy())
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump({"model": "../model.gguf", "layer": layer, "input": "input.npy"}, f, indent=1)
        np.save(os.path.join(d, "expected", "context.npy"), ctx[0].float().numpy())
        np.save(os.path.join(d, "expected", "attention.npy"), maps[0].float().numpy())
        out.append(f"layer {layer}: H {s['H']}/{s['Hkv']} D {s['D']}, window {s.get('window')}, "
                   f"rope {s['rope'] and (s['rope']['theta'], s['rope']['R'])}")
    size = os.path.getsize(os.path.join(root, "model.gguf"))
    print(f"{name:16s} {arch:8s} {size / 1024:6.1f} KB  " + ", ".join(
        f"{k}={v}" for k, v in types.items()))
    for o in out:
        print("    " + o)


def specs_v3():
    return [
        # StarCoder2 (starcoder2-3b's spelling): biases, NEOX rope; its 4096 window is not in the
        # file (the converter writes none, llama.cpp runs none) and longer than the input here.
        dict(name="starcoder2", arch="starcoder2", seed=31, layers=[0, 1],
             types={"attn_q": "Q8_0", "attn_k": "Q5_0", "attn_v": "F16", "attn_output": "BF16"},
             config={"architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2",
                     "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 64,
                     "norm_epsilon": 1e-05, "num_attention_heads": 4, "num_hidden_layers": 2,
                     "num_key_value_heads": 2, "rope_theta": 100000, "sliding_window": 4096,
                     "use_bias": True, "vocab_size": 12}),
        # Granite 3: a LlamaModel (Q/K permuted), attention_multiplier as attention.scale, MQA.
        dict(name="granite", arch="granite", seed=32, layers=[1],
             extra={"attention.scale": 0.125, "embedding_scale": 12.0, "residual_scale": 0.22,
                    "logit_scale": 8.0},
             types={"attn_q": "Q4_0", "attn_k": "Q8_0", "attn_v": "IQ4_NL", "attn_output": "F16"},
             config={"architectures": ["GraniteForCausalLM"], "model_type": "granite",
                     "attention_bias": False, "attention_multiplier": 0.125,
                     "embedding_multiplier": 12.0, "hidden_size": 32, "intermediate_size": 8,
                     "logits_scaling": 8.0, "max_position_embeddings": 64,
                     "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
                     "residual_multiplier": 0.22, "rms_norm_eps": 1e-05,
                     "rope_theta": 10000000.0, "vocab_size": 12}),
        # Granite MoE (GraniteMoeForCausalLM): Granite's attention, Q/K permuted.
        dict(name="granitemoe", arch="granitemoe", seed=50, layers=[0],
             extra={"attention.scale": 0.0625, "expert_count": 2, "expert_used_count": 1},
             types={"attn_q": "Q8_0", "attn_k": "Q4_K", "attn_v": "Q8_0", "attn_output": "Q6_K"},
             config={"architectures": ["GraniteMoeForCausalLM"], "model_type": "granite",
                     "attention_bias": False, "attention_multiplier": 0.0625,
                     "hidden_size": 256, "intermediate_size": 8, "max_position_embeddings": 64,
                     "num_attention_heads": 4, "num_hidden_layers": 1, "num_key_value_heads": 2,
                     "num_local_experts": 2, "num_experts_per_tok": 1, "rms_norm_eps": 1e-06,
                     "rope_theta": 10000.0, "vocab_size": 12}),
        # Qwen3-Next: gated q_proj, (1 + w) q/k norms stored with the 1 added, partial rotary,
        # full attention every 2nd layer (the others' tensors are the linear attention's).
        dict(name="qwen3_next", arch="qwen3next", seed=33, layers=[1, 3],
             extra={"full_attention_interval": 2, "rope.dimension_count": 4,
                    "ssm.conv_kernel": 4, "ssm.state_size": 16, "ssm.group_count": 1,
                    "ssm.time_step_rank": 2, "ssm.inner_size": 32},
             types={"attn_q": "Q8_0", "attn_k": "Q4_1", "attn_v": "BF16", "attn_output": "Q5_1"},
             config={"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
                     "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "head_dim": 16, "num_hidden_layers": 4, "full_attention_interval": 2,
                     "intermediate_size": 8, "vocab_size": 12, "max_position_embeddings": 256,
                     "rope_theta": 10000000, "partial_rotary_factor": 0.25,
                     "rms_norm_eps": 1e-06, "attention_bias": False,
                     "linear_conv_kernel_dim": 4, "linear_key_head_dim": 16,
                     "linear_value_head_dim": 16, "linear_num_key_heads": 1,
                     "linear_num_value_heads": 2, "num_experts": 0}),
        # Qwen3.5 (Qwen3_5ForCausalLM): as Qwen3-Next, MRoPE sections written (text positions).
        dict(name="qwen3_5", arch="qwen35", seed=49, layers=[1, 3], S=6,
             extra={"full_attention_interval": 2, "rope.dimension_count": 2,
                    "rope.dimension_sections": [1, 0, 0, 0], "ssm.conv_kernel": 4,
                    "ssm.state_size": 16, "ssm.group_count": 1, "ssm.time_step_rank": 2,
                    "ssm.inner_size": 32},
             types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "IQ4_NL", "attn_output": "F16"},
             config={"architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text",
                     "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 1,
                     "head_dim": 8, "num_hidden_layers": 4, "full_attention_interval": 2,
                     "layer_types": ["linear_attention", "full_attention"] * 2,
                     "intermediate_size": 8, "vocab_size": 12, "max_position_embeddings": 256,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000000,
                                         "partial_rotary_factor": 0.25,
                                         "mrope_section": [1, 0, 0],
                                         "mrope_interleaved": True},
                     "rms_norm_eps": 1e-06, "attention_bias": False,
                     "linear_num_key_heads": 1, "linear_num_value_heads": 2}),
        # Command R+ (CommandR2Model): per-head q/k LayerNorms, interleaved rope as NORM mode.
        dict(name="command_r", arch="command-r", seed=34, layers=[0, 1],
             extra={"logit_scale": 0.125, "rope.scaling.type": "none"},
             types={"attn_q": "Q8_0", "attn_k": "F16", "attn_v": "Q4_0", "attn_output": "Q8_0"},
             config={"architectures": ["CohereForCausalLM"], "model_type": "cohere",
                     "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "num_hidden_layers": 2, "intermediate_size": 8, "vocab_size": 12,
                     "max_position_embeddings": 256, "rope_theta": 8000000.0,
                     "layer_norm_eps": 1e-05, "use_qk_norm": True, "attention_bias": False,
                     "logit_scale": 0.125}),
        # Command R7B (Cohere2Model): sliding layers with rope, every 4th global without.
        dict(name="cohere2", arch="cohere2", seed=35, layers=[2, 3], S=8,
             extra={"logit_scale": 0.25, "attention.sliding_window": 3, "vocab_size": 12,
                    "rope.dimension_count": 8, "rope.scaling.type": "none"},
             types={"attn_q": "IQ4_NL", "attn_k": "Q8_0", "attn_v": "Q5_0", "attn_output": "F16"},
             config={"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2",
                     "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 1,
                     "head_dim": 8, "num_hidden_layers": 4, "sliding_window": 3,
                     "sliding_window_pattern": 4, "intermediate_size": 8, "vocab_size": 12,
                     "max_position_embeddings": 256, "rope_theta": 50000.0, "rotary_pct": 1.0,
                     "layer_norm_eps": 1e-05, "attention_bias": False, "logit_scale": 0.25}),
        # StableLM 2: q/k/v biases, per-head q/k LayerNorms (stacked), partial rotary 0.25.
        dict(name="stablelm", arch="stablelm", seed=36, layers=[0, 1],
             metadata=stablelm_metadata,
             types={"attn_q": "Q8_0", "attn_k": "Q5_1", "attn_v": "F16", "attn_output": "Q4_0"},
             config={"architectures": ["StableLmForCausalLM"], "model_type": "stablelm",
                     "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "num_hidden_layers": 2, "intermediate_size": 8, "vocab_size": 12,
                     "max_position_embeddings": 256, "rope_theta": 10000,
                     "partial_rotary_factor": 0.25, "use_qkv_bias": True, "qk_layernorm": True,
                     "layer_norm_eps": 1e-05, "use_parallel_residual": False}),
        # InternLM2: wqkv split into attn_q/k/v by KV group, Q/K permuted.
        dict(name="internlm2", arch="internlm2", seed=37, layers=[1],
             types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q4_1", "attn_output": "Q5_0"},
             config={"architectures": ["InternLM2ForCausalLM"], "model_type": "internlm2",
                     "auto_map": {
                         "AutoConfig": "configuration_internlm2.InternLM2Config",
                         "AutoModelForCausalLM": "modeling_internlm2.InternLM2ForCausalLM"},
                     "bias": False, "hidden_size": 64, "intermediate_size": 8,
                     "max_position_embeddings": 256, "num_attention_heads": 8,
                     "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-05,
                     "rope_scaling": None, "rope_theta": 1000000, "vocab_size": 12}),
        # SmolLM3: a LlamaModel (Q/K permuted); layer 3 has no rope (every 4th, hard-coded).
        dict(name="smollm3", arch="smollm3", seed=38, layers=[2, 3],
             types={"attn_q": "Q4_1", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "IQ4_NL"},
             config={"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3",
                     "attention_bias": False, "hidden_size": 32, "intermediate_size": 8,
                     "layer_types": ["full_attention"] * 4, "max_position_embeddings": 64,
                     "no_rope_layer_interval": 4, "no_rope_layers": [1, 1, 1, 0],
                     "num_attention_heads": 4, "num_hidden_layers": 4, "num_key_value_heads": 2,
                     "rms_norm_eps": 1e-06, "rope_theta": 5000000.0, "sliding_window": None,
                     "use_sliding_window": False, "vocab_size": 12}),
        # SantaCoder / StarCoder (GPT-BigCode, multi_query): c_attn as attn_qkv.
        dict(name="starcoder", arch="starcoder", seed=39, layers=[0, 1],
             metadata=starcoder_metadata, types={"attn_qkv": "Q8_0", "attn_output": "Q4_0"},
             config={"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode",
                     "layer_norm_epsilon": 1e-05, "multi_query": True, "n_embd": 32, "n_head": 4,
                     "n_inner": 8, "n_layer": 2, "n_positions": 64, "scale_attn_weights": True,
                     "vocab_size": 12}),
        # GPT-BigCode without multi_query: c_attn per head [q, k, v] (head_count_kv still 1).
        dict(name="starcoder_mha", arch="starcoder", seed=40, layers=[1],
             metadata=starcoder_metadata, types={"attn_qkv": "F16", "attn_output": "Q8_0"},
             config={"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode",
                     "multi_query": False, "n_embd": 32, "n_head": 2, "n_inner": 8,
                     "n_layer": 2, "n_positions": 64, "scale_attn_weights": True,
                     "vocab_size": 12}),
        # phi-2 (PhiForCausalLM): q/k/v_proj and dense with biases, partial rotary 0.4.
        dict(name="phi2", arch="phi2", seed=41, layers=[0, 1], metadata=phi2_metadata,
             types={"attn_q": "Q8_0", "attn_k": "Q4_0", "attn_v": "BF16", "attn_output": "Q5_1"},
             config={"architectures": ["PhiForCausalLM"], "model_type": "phi",
                     "hidden_size": 64, "intermediate_size": 8, "layer_norm_eps": 1e-05,
                     "max_position_embeddings": 64, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "num_key_value_heads": None,
                     "partial_rotary_factor": 0.4, "qk_layernorm": False, "rope_theta": 10000.0,
                     "vocab_size": 12}),
        # Llama 4 (Llama4ForCausalLM, chunk and temperature floor as llama.cpp hard-codes them):
        # rope layers with llama3 scaling (rope_freqs.weight) and L2 q/k norms, unpermuted;
        # layer 3 without rope, its queries' temperature 1 below 8192 positions.
        dict(name="llama4", arch="llama4", seed=42, layers=[1, 3], S=8,
             extra={"interleave_moe_layer_step": 1, "expert_feed_forward_length": 16,
                    "leading_dense_block_count": 0, "vocab_size": 12},
             types={"attn_q": "Q8_0", "attn_k": "Q5_1", "attn_v": "Q4_1", "attn_output": "BF16"},
             config={"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text",
                     "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "head_dim": 8, "num_hidden_layers": 4, "intermediate_size": 16,
                     "intermediate_size_mlp": 16, "num_local_experts": 1,
                     "num_experts_per_tok": 1, "interleave_moe_layer_step": 1,
                     "vocab_size": 12, "max_position_embeddings": 256,
                     "attention_chunk_size": 8192, "no_rope_layers": [1, 1, 1, 0],
                     "rope_theta": 500000.0,
                     "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                                      "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                      "original_max_position_embeddings": 16},
                     "use_qk_norm": True, "attn_temperature_tuning": True, "floor_scale": 8192,
                     "attn_scale": 0.1, "rms_norm_eps": 1e-05, "attention_bias": False}),
        # Llama 4 Maverick: 128 routed experts, use_qk_norm false (llama.cpp tells it by the
        # expert count), interleave_moe_layer_step 2.
        dict(name="llama4_maverick", arch="llama4", seed=52, layers=[1], S=7,
             extra={"interleave_moe_layer_step": 2, "expert_feed_forward_length": 16,
                    "expert_count": 128, "expert_used_count": 1,
                    "leading_dense_block_count": 0, "vocab_size": 12},
             types={"attn_q": "Q4_0", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "Q4_1"},
             config={"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text",
                     "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "head_dim": 8, "num_hidden_layers": 4, "intermediate_size": 16,
                     "intermediate_size_mlp": 16, "num_local_experts": 128,
                     "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
                     "vocab_size": 12, "max_position_embeddings": 256,
                     "attention_chunk_size": 8192, "no_rope_layers": [1, 1, 1, 0],
                     "rope_theta": 500000.0, "rope_scaling": None, "use_qk_norm": False,
                     "attn_temperature_tuning": True, "floor_scale": 8192, "attn_scale": 0.1,
                     "rms_norm_eps": 1e-05, "attention_bias": False}),
        # MobileLLM-R1 (Llama4ForCausalLM, every layer full attention with rope): the converter
        # writes attention.sliding_window 0, which llama.cpp reads as rope everywhere, unchunked.
        dict(name="llama4_mobilellm", arch="llama4", seed=53, layers=[3], S=9,
             extra={"attention.sliding_window": 0, "interleave_moe_layer_step": 1,
                    "expert_feed_forward_length": 16, "leading_dense_block_count": 0,
                    "vocab_size": 12},
             types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "F16", "attn_output": "Q8_0"},
             config={"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text",
                     "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 1,
                     "head_dim": 8, "num_hidden_layers": 4, "intermediate_size": 16,
                     "intermediate_size_mlp": 16, "num_local_experts": 0,
                     "interleave_moe_layer_step": 1, "vocab_size": 12,
                     "max_position_embeddings": 256, "attention_chunk_size": None,
                     "layer_types": ["full_attention"] * 4, "no_rope_layers": [1, 1, 1, 1],
                     "rope_theta": 500000.0, "rope_scaling": None, "use_qk_norm": True,
                     "rms_norm_eps": 1e-05, "attention_bias": False}),
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
             config={"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
                     "hidden_size": 32, "intermediate_size": 48, "moe_intermediate_size": 8,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
                     "n_routed_experts": 4, "n_shared_experts": 2, "num_experts_per_tok": 2,
                     "first_k_dense_replace": 1, "q_lora_rank": None, "kv_lora_rank": 32,
                     "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8,
                     "rope_theta": 10000, "max_position_embeddings": 2560,
                     "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40,
                                      "mscale": 0.707, "mscale_all_dim": 0.707,
                                      "original_max_position_embeddings": 64, "type": "yarn"},
                     "attention_bias": False, "rms_norm_eps": 1e-06, "vocab_size": 12}),
        # DeepSeek-V2-Lite as converters before MLA absorption wrote it (many hub files):
        # key_length / value_length the head sizes, attn_kv_b whole.
        dict(name="deepseek_v2_lite_old", arch="deepseek2", seed=51, layers=[1], S=7,
             metadata=lambda w, a, c, n: deepseek2_metadata(w, a, c, n, old=True),
             converter={"kv_b_whole": True},
             types={"attn_q": "Q4_0", "attn_kv_a_mqa": "Q8_0", "attn_kv_b": "Q8_0",
                    "attn_output": "Q8_0"},
             config={"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
                     "hidden_size": 32, "intermediate_size": 48, "moe_intermediate_size": 8,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
                     "n_routed_experts": 4, "n_shared_experts": 2, "num_experts_per_tok": 2,
                     "first_k_dense_replace": 1, "q_lora_rank": None, "kv_lora_rank": 32,
                     "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8,
                     "rope_theta": 10000, "max_position_embeddings": 2560,
                     "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40,
                                      "mscale": 0.707, "mscale_all_dim": 0.707,
                                      "original_max_position_embeddings": 64, "type": "yarn"},
                     "attention_bias": False, "rms_norm_eps": 1e-06, "vocab_size": 12}),
        # BERT (BertModel as sentence-transformers ship it): biases, bidirectional.
        dict(name="bert", arch="bert", seed=45, layers=[0, 1], S=7, metadata=bert_metadata,
             types={"attn_q": "Q8_0", "attn_k": "F16", "attn_v": "Q4_0", "attn_output": "Q8_0"},
             config={"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 32,
                     "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 8,
                     "max_position_embeddings": 512, "layer_norm_eps": 1e-12,
                     "position_embedding_type": "absolute", "type_vocab_size": 2,
                     "vocab_size": 12}),
        # ModernBERT-base's spelling: layer 0 global (160000), 1 local (|i - j| <= 4 // 2).
        dict(name="modernbert", arch="modern-bert", seed=46, layers=[0, 1], S=9,
             metadata=modernbert_metadata,
             types={"attn_qkv": "Q8_0", "attn_output": "Q5_1"},
             config={"architectures": ["ModernBertForMaskedLM"], "model_type": "modernbert",
                     "attention_bias": False, "global_attn_every_n_layers": 3,
                     "global_rope_theta": 160000.0, "hidden_activation": "gelu",
                     "hidden_size": 32, "intermediate_size": 8, "layer_norm_eps": 1e-05,
                     "local_attention": 4, "local_rope_theta": 10000.0,
                     "max_position_embeddings": 8192, "norm_eps": 1e-05,
                     "num_attention_heads": 4, "num_hidden_layers": 3, "vocab_size": 12}),
        # T5 (T5ForConditionalGeneration): encoder blocks as enc.blk.N., block 0's table.
        dict(name="t5", arch="t5", seed=47, layers=[0, 1], S=9, blk="enc.blk.",
             metadata=t5_metadata,
             types={"attn_q": "Q8_0", "attn_k": "Q4_1", "attn_v": "F16", "attn_o": "Q8_0"},
             config={"architectures": ["T5ForConditionalGeneration"], "model_type": "t5",
                     "d_model": 32, "d_kv": 8, "d_ff": 8, "num_heads": 4, "num_layers": 2,
                     "num_decoder_layers": 1, "relative_attention_num_buckets": 8,
                     "relative_attention_max_distance": 128, "layer_norm_epsilon": 1e-06,
                     "feed_forward_proj": "relu", "vocab_size": 12}),
        # Gemma 4 31B's shape, shrunk (Gemma4ForCausalLM's text config): k_eq_v on the full layers
        # (no attn_v; KV heads 2 -> 1 there, head_count_kv per layer), global_head_dim 16 beside
        # head_dim 8, the full layers' proportional rope (a quarter) as rope_freqs.weight.
        dict(name="gemma4", arch="gemma4", seed=54, layers=[0, 1], S=8,
             metadata=gemma4_metadata,
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
        dict(name="gemma4_e2b", arch="gemma4", seed=55, layers=[1, 2], S=9,
             metadata=gemma4_metadata,
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
        # UMT5: a table in every block.
        dict(name="umt5", arch="t5", seed=48, layers=[1], S=8, blk="enc.blk.",
             metadata=t5_metadata,
             types={"attn_q": "BF16", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_o": "F16"},
             config={"architectures": ["UMT5ForConditionalGeneration"], "model_type": "umt5",
                     "d_model": 32, "d_kv": 8, "d_ff": 8, "num_heads": 4, "num_layers": 2,
                     "num_decoder_layers": 1, "relative_attention_num_buckets": 16,
                     "relative_attention_max_distance": 128, "layer_norm_epsilon": 1e-06,
                     "feed_forward_proj": "gated-gelu", "vocab_size": 12}),
    ]


def main(out=OUT):
    """Writes specs_v3()'s files under `out` (make_gguf.py has wiped and refilled it)."""
    global OUT
    OUT = out
    dec.install()  # the v3 decoders' references beside make_folders' (after make_gguf's own)
    for spec in specs_v3():
        make_v3(spec)
