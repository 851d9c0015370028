"""Apertus: modeling_apertus.ApertusAttention: LlamaAttention (q/k/v/o_proj with attention_bias)
with an RMSNorm per head on q and k (x * w) before rope; ApertusConfig's rope is llama3-scaled
(factor 8, original 8192, base 12000000) unless config.json says otherwise. llama.cpp's
ApertusModel is a LlamaModel with undo_permute false (apertus: NEOX rope, Q/K unpermuted),
llama3 as rope_freqs.weight."""
from .. import gguf, hf
from .. import weights as W
from ..reference import QkNorm

MODEL_TYPES = ("apertus",)
CLASS_DEFAULTS = dict(rope_theta=12000000.0, attention_bias=False, rms_norm_eps=1e-5,
                      max_position_embeddings=65536,
                      rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                    "original_max_position_embeddings": 8192,
                                    "low_freq_factor": 1.0, "high_freq_factor": 4.0})


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "apertus", layer, bias_key="attention_bias")
    return a.replace(qk_norm=QkNorm("rms", cfg["rms_norm_eps"]),
                     rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)))


def neighbours(s, layer, g, small=4):  # ApertusDecoderLayer: its own norm names, xIELU
    p = f"model.layers.{layer}."
    return {p + "attention_layernorm.weight": W.ones(s.C),
            p + "feedforward_layernorm.weight": W.ones(s.C),
            p + "mlp.act_fn.alpha_n": W.small(g, 1), p + "mlp.act_fn.alpha_p": W.small(g, 1),
            p + "mlp.up_proj.weight": W.small(g, small, s.C),
            p + "mlp.down_proj.weight": W.small(g, s.C, small)}


def gguf_metadata(w, arch, cfg, n_layers):
    """ApertusModel (a LlamaModel): TextModel's keys, vocab_size, rope.dimension_count."""
    gguf.text_model_metadata(w, arch, cfg, n_layers, llama_model=True)
    w.add(arch + ".vocab_size", cfg["vocab_size"])


LLAMA3 = {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
          "original_max_position_embeddings": 32, "rope_type": "llama3"}

APERTUS = {"architectures": ["ApertusForCausalLM"], "model_type": "apertus",
           "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 1,
           "eos_token_id": 68, "hidden_act": "xielu", "hidden_size": 32,
           "initializer_range": 0.02, "intermediate_size": 8, "max_position_embeddings": 256,
           "mlp_bias": False, "num_attention_heads": 4, "num_hidden_layers": 2,
           "num_key_value_heads": 2, "pad_token_id": 3, "rms_norm_eps": 1e-05,
           "rope_scaling": LLAMA3, "rope_theta": 12000000, "tie_word_embeddings": False,
           "torch_dtype": "bfloat16", "transformers_version": "4.56.0", "use_cache": True,
           "vocab_size": 12}

FOLDERS = [
    # Apertus-8B's spelling: llama3 rope (positions past the original 32), q/k norms per head
    dict(name="apertus", seed=541, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
         S=8, pad="right", offset=40, config=APERTUS),
]

HELDOUT = [
    # rope_scaling left out: ApertusConfig's llama3 (original 8192); attention_bias
    dict(name="apertus_defaults", seed=641, container="safetensors", dtype="f32", layers=[0],
         B=2, S=8, pad="left",
         config={"model_type": "apertus", "hidden_size": 32, "num_attention_heads": 4,
                 "num_hidden_layers": 1, "attention_bias": True}),
]

GGUF = [
    # ApertusModel: rope.dimension_count, llama3's rope_freqs.weight, NEOX unpermuted
    dict(name="apertus", arch="apertus", seed=543, layers=[1], S=9,
         metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q4_0", "attn_output": "Q8_0"},
         config=dict(APERTUS, num_key_value_heads=4,
                     rope_scaling=dict(LLAMA3, original_max_position_embeddings=4))),
]
