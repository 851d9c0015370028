"""A DeepSeek multi-head latent attention (mla) layer as a Hugging Face model folder with random
BF16 weights: config.json as DeepSeek-V2-Lite's attention (hidden 2048, 16 heads, q_lora_rank
null: q_proj, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128, yarn
rope scaling with factor 40), or with --q-lora R DeepSeek-V3's q_a_proj / q_a_layernorm /
q_b_proj of rank R at the same width; num_hidden_layers 1, model.safetensors holding layer 0's
attention weights and its input_layernorm; plus input.npy, a (1, S, 2048) float32 hidden state.
Weights are N(0, 1/fan_in), the norms' weights 1 (kv_a) and about 1 (q_a).
Usage: make_mla_bench.py DIR [S] [--q-lora R]
Then: build/attn-run -v --model DIR --layer 0 --input DIR/input.npy --no-attn -o OUT"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from safetensors_write import save_safetensors  # noqa: E402

C, H, RKV, DN, DR, DV = 2048, 16, 512, 128, 64, 128


def main():
    args = sys.argv[1:]
    rq = 0
    if "--q-lora" in args:
        i = args.index("--q-lora")
        rq = int(args[i + 1])
        del args[i:i + 2]
    out = args[0]
    S = int(args[1]) if len(args) > 1 else 4096
    os.makedirs(out, exist_ok=True)
    config = {
        "architectures": ["DeepseekV3ForCausalLM" if rq else "DeepseekV2ForCausalLM"],
        "model_type": "deepseek_v3" if rq else "deepseek_v2",
        "hidden_size": C, "intermediate_size": 10944, "moe_intermediate_size": 1408,
        "num_hidden_layers": 1, "num_attention_heads": H, "num_key_value_heads": H,
        "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
        "n_group": 1, "topk_group": 1, "first_k_dense_replace": 1,
        "q_lora_rank": rq or None, "kv_lora_rank": RKV, "qk_nope_head_dim": DN,
        "qk_rope_head_dim": DR, "v_head_dim": DV, "rope_theta": 10000,
        "max_position_embeddings": 163840,
        "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707,
                         "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096,
                         "type": "yarn"},
        "attention_bias": False, "attention_dropout": 0.0, "rms_norm_eps": 1e-06,
        "hidden_act": "silu", "vocab_size": 102400, "torch_dtype": "bfloat16"}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    g = torch.Generator().manual_seed(0)
    p = "model.layers.0.self_attn."
    shapes = {"kv_a_proj_with_mqa": (RKV + DR, C), "kv_b_proj": (H * (DN + DV), RKV),
              "o_proj": (C, H * DV)}
    if rq:
        shapes.update({"q_a_proj": (rq, C), "q_b_proj": (H * (DN + DR), rq)})
    else:
        shapes["q_proj"] = (H * (DN + DR), C)
    tensors = {p + k + ".weight": (torch.randn(s, generator=g) * s[1] ** -0.5).to(torch.bfloat16)
               for k, s in shapes.items()}
    tensors[p + "kv_a_layernorm.weight"] = torch.ones(RKV, dtype=torch.bfloat16)
    if rq:
        tensors[p + "q_a_layernorm.weight"] = (1 + 0.1 * torch.randn(rq, generator=g)).to(
            torch.bfloat16)
    tensors["model.layers.0.input_layernorm.weight"] = torch.ones(C, dtype=torch.bfloat16)
    save_safetensors(os.path.join(out, "model.safetensors"), tensors, {"format": "pt"})
    x = torch.randn(1, S, C, generator=g)
    np.save(os.path.join(out, "input.npy"), x.numpy())


if __name__ == "__main__":
    main()
