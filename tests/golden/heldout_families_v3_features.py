#!/usr/bin/python3
"""Held-out check of the v3 gated / qk_norm-kind / chunked families, run by hand (not in ctest,
whose fixtures it must not resemble): folders with other seeds, shapes, layers, padding,
containers and config spellings than make_families_v3_features.py's (class defaults left out,
text-only model types without their wrapper, explicit no_rope_layers, an int
attn_temperature_tuning, layer_types instead of a pattern, ...), written by that script's
writer, run through the built attn-run (--config case.json, and --model/--layer when unpadded)
and compared with its torch reference. Prints the worst relative error per folder; fails above
1e-5. Usage: /usr/bin/python3 tests/golden/heldout_families_v3_features.py
(ATTN_BIN=path/to/attn-run, default build/attn-run; HELDOUT_DIR=where the folders go)."""
import os
import sys

WT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(WT, "tests", "golden"))
import heldout_folders as ho  # noqa: E402  (its runner: ATTN_BIN, HELDOUT_DIR)
import make_families_v3_features as v3  # noqa: E402


def specs():
    return [
        # Qwen3-Next with the class defaults: full_attention_interval 4, partial rotary 0.25,
        # head_dim given; attention_bias on (q_proj's bias holds the gate's too).
        dict(name="qwen3_next_defaults", seed=201, container="shards2", dtype="f32",
             layers=[3, 7], B=3, S=9, pad="right",
             config={"model_type": "qwen3_next", "hidden_size": 24, "num_attention_heads": 6,
                     "num_key_value_heads": 3, "head_dim": 8, "num_hidden_layers": 8,
                     "attention_bias": True, "rope_theta": 5000.0}),
        # Qwen3.5 as a text-only checkpoint (Qwen3_5ForCausalLM: model.layers., no wrapper),
        # full_attention_interval 3 and transformers v4's rope_theta.
        dict(name="qwen3_5_text", seed=202, container="safetensors", dtype="bf16", layers=[2],
             S=8, pad="left",
             config={"model_type": "qwen3_5_text", "hidden_size": 16, "num_attention_heads": 2,
                     "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 3,
                     "full_attention_interval": 3, "rope_theta": 1000000.0,
                     "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-5}),
        # Cohere without use_qk_norm (Command R), bias on.
        dict(name="cohere_plain", seed=203, container="bin", dtype="f32", layers=[1], B=2, S=6,
             config={"model_type": "cohere", "hidden_size": 24, "num_attention_heads": 3,
                     "num_hidden_layers": 2, "attention_bias": True, "rope_theta": 75000.0}),
        # Cohere 2 with layer_types instead of the pattern.
        dict(name="cohere2_types", seed=204, container="safetensors", dtype="f16",
             layers=[0, 1], B=2, S=9, pad="left",
             config={"model_type": "cohere2", "hidden_size": 32, "num_attention_heads": 2,
                     "num_key_value_heads": 2, "num_hidden_layers": 3, "sliding_window": 4,
                     "layer_types": ["full_attention", "sliding_attention",
                                     "sliding_attention"]}),
        # StableLM defaults (partial 0.25 of 16 = 4) with its per-head norms, no q/k/v bias.
        dict(name="stablelm_defaults", seed=205, container="safetensors", dtype="f32",
             layers=[0], B=2, S=7, pad="right",
             config={"model_type": "stablelm", "hidden_size": 48, "num_attention_heads": 3,
                     "num_key_value_heads": 1, "num_hidden_layers": 1, "qk_layernorm": True}),
        # Llama 4 text-only (Llama4ForCausalLM): explicit no_rope_layers, no chunking
        # (attention_chunk_size null), temperature tuning written as an int, no qk norm.
        dict(name="llama4_text", seed=206, container="safetensors", dtype="f32",
             layers=[0, 1], S=9,
             config={"model_type": "llama4_text", "hidden_size": 16, "num_attention_heads": 4,
                     "num_key_value_heads": 1, "head_dim": 4, "num_hidden_layers": 3,
                     "no_rope_layers": [0, 1, 1], "attention_chunk_size": None,
                     "use_qk_norm": False, "attn_temperature_tuning": 4, "floor_scale": 2,
                     "attn_scale": 0.5, "rope_theta": 10000.0}),
        # Llama 4 chunked layers with padding (chunk 4 over 10 tokens) and L2 norms.
        dict(name="llama4_chunked", seed=207, container="safetensors", dtype="bf16",
             layers=[2], B=2, S=10, pad="left",
             config={"model_type": "llama4_text", "hidden_size": 16, "num_attention_heads": 2,
                     "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 4,
                     "attention_chunk_size": 4, "rope_theta": 500000.0}),
    ]


def main():
    ho.fresh_out()
    worst = {}
    for spec in specs():
        v3.write_folder(spec, ho.OUT, verbose=False)
        name = spec["name"]
        for layer in spec["layers"]:
            d = os.path.join(ho.OUT, name, f"layer{layer}")
            runs = [["--config", os.path.join(d, "case.json")]]
            if not os.path.exists(os.path.join(d, "attention_mask.npy")):
                runs.append(["--model", os.path.join(ho.OUT, name, "model"), "--layer", str(layer),
                             "--input", os.path.join(d, "input.npy")])
            ho.check_runs(worst, name, f"layer {layer}", d, runs)
    ho.report(worst)


if __name__ == "__main__":
    main()
