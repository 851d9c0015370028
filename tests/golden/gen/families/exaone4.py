"""EXAONE 4: modeling_exaone4.Exaone4Attention: q/k/v/o_proj without biases, an RMSNorm per head
on q and k (x * w) before rope; a layer slides when config.layer_types says "sliding_attention"
(Exaone4Config.__post_init__: every sliding_window_pattern-th layer full when config.json lists
none), and ropes only when `self.sliding_window is None or self.is_sliding`: the full layers of a
hybrid model (sliding_window set) are NoPE. llama.cpp's exaone4 hard-codes the window (4096 unless the
file says; 3 sliding layers of 4 unless an integer pattern says: its loader skips the converter's
bool array) for the 64-layer model only; any other depth runs every layer full with rope there."""
from .. import gguf, hf
from ..reference import QkNorm

MODEL_TYPES = ("exaone4",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, rms_norm_eps=1e-5, sliding_window=4096,
                      sliding_window_pattern=4, layer_types=None, max_position_embeddings=2048,
                      num_key_value_heads=32)


def layer_types(cfg):
    if cfg["layer_types"]:
        return cfg["layer_types"]
    n = 0 if cfg["sliding_window"] is None else cfg["sliding_window_pattern"]
    return ["sliding_attention" if n and (i + 1) % n != 0 else "full_attention"
            for i in range(cfg["num_hidden_layers"])]


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "exaone4", layer)
    a = a.replace(qk_norm=QkNorm("rms", cfg["rms_norm_eps"]))
    sliding = layer_types(cfg)[layer] == "sliding_attention"
    window = cfg["sliding_window"]
    if window is None or sliding:
        a = a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                   params=hf.v5_params(cfg)))
    return a.replace(kind="sliding_attention" if sliding else "full_attention",
                     window=window if sliding else None)


def gguf_metadata(w, arch, cfg, n_layers):
    """Exaone4Model.set_gguf_parameters: TextModel's keys, vocab_size, the window and its
    per-layer pattern (from layer_types, else the pattern); its generate_extra_tensors writes
    llama3's rope_freqs.weight (gguf.write_by_family)."""
    gguf.text_model_metadata(w, arch, cfg, n_layers)
    w.add(arch + ".vocab_size", cfg["vocab_size"])
    if cfg.get("sliding_window") is not None:
        w.add(arch + ".attention.sliding_window", cfg["sliding_window"])
        w.add(arch + ".attention.sliding_window_pattern",
              [t == "sliding_attention" for t in layer_types(hf.with_defaults(cfg,
                                                                                CLASS_DEFAULTS))])


LLAMA3 = {"factor": 16.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
          "original_max_position_embeddings": 16, "rope_type": "llama3"}

EXAONE4 = {"architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4",
           "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2, "head_dim": 8,
           "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02,
           "intermediate_size": 8, "layer_types": ["sliding_attention", "sliding_attention",
                                                   "sliding_attention", "full_attention"],
           "max_position_embeddings": 256, "num_attention_heads": 4, "num_hidden_layers": 4,
           "num_key_value_heads": 2, "pad_token_id": 0, "rms_norm_eps": 1e-05,
           "rope_scaling": LLAMA3, "rope_theta": 1000000.0, "sliding_window": 3,
           "sliding_window_pattern": "LLLG", "tie_word_embeddings": False,
           "torch_dtype": "bfloat16", "transformers_version": "4.54.0", "use_cache": True,
           "vocab_size": 12}

FOLDERS = [
    # EXAONE-4.0-32B's spelling: layer_types and the "LLLG" pattern; a sliding layer with rope
    # (llama3-scaled, positions past the original 16) and a global NoPE one
    dict(name="exaone4", seed=511, container="safetensors", dtype="bf16", layers=[2, 3], B=2,
         S=8, pad="left", offset=20, config=EXAONE4),
]

HELDOUT = [
    # no layer_types: every 2nd layer full (sliding_window_pattern 2), NoPE there
    dict(name="exaone4_pattern", seed=611, container="safetensors", dtype="f32", layers=[0, 1],
         B=2, S=9, pad="right",
         config={"model_type": "exaone4", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "num_hidden_layers": 2, "sliding_window": 4,
                 "sliding_window_pattern": 2, "rope_theta": 10000.0}),
    # EXAONE-4.0-1.2B's kind: no window, every layer full with rope
    dict(name="exaone4_global", seed=612, container="safetensors", dtype="f32", layers=[1],
         B=1, S=8,
         config={"model_type": "exaone4", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 2, "sliding_window": None,
                 "layer_types": ["full_attention", "full_attention"], "rope_theta": 1e6}),
]

GGUF = [
    # the 64-layer (32B) depth: llama.cpp's window and the file's pattern; rope_freqs.weight
    dict(name="exaone4", arch="exaone4", seed=513, layers=[2, 3], S=9, metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "F16", "attn_output": "Q4_1"},
         config=dict(EXAONE4, num_hidden_layers=64, layer_types=None, sliding_window_pattern=4,
                     rope_scaling=dict(LLAMA3, original_max_position_embeddings=8))),
    # another depth: llama.cpp runs no window whatever the file says, rope on every layer
    dict(name="exaone4_swa_off", arch="exaone4", seed=514, layers=[0, 1], S=9,
         metadata=gguf_metadata,
         types={"attn_q": "F16", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "F16"},
         config=dict(EXAONE4, num_hidden_layers=2, layer_types=["sliding_attention",
                                                                 "full_attention"],
                     rope_scaling=None),
         runs_as={"sliding_window": None, "layer_types": None}),
]
