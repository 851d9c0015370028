#!/usr/bin/python3
"""Held-out check of the mla families (deepseek_v2, deepseek_v3, kimi_k2), run by hand as
heldout_folders.py is: folders with other seeds, shapes, layers, padding, containers and
config spellings than make_families_v3_mla.py's, written by its make_folder hooks, run through
the built attn-run and compared with its torch reference. Fails above 1e-5.
Usage: /usr/bin/python3 tests/golden/heldout_families_v3_mla.py (ATTN_BIN, HELDOUT_DIR as there)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heldout_folders as ho  # noqa: E402
import make_families_v3_mla  # noqa: E402,F401  (make_folders' hooks for the mla families)


def specs():
    return [
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


if __name__ == "__main__":
    ho.specs = specs
    ho.main()
