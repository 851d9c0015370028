#!/usr/bin/python3
"""Held-out check of the mla families (deepseek_v2, deepseek_v3), run by hand as
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
    ]


if __name__ == "__main__":
    ho.specs = specs
    ho.main()
