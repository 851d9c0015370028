"""A Llama-3-8B-shaped attention layer as a Hugging Face model folder with random BF16 weights
(the Llama bench): config.json as Meta-Llama-3.1-8B's (hidden 4096, 32 heads, 8 KV heads,
head_dim 128, rope_theta 500000 with rope_scaling llama3: factor 8, low_freq_factor 1,
high_freq_factor 4, original_max_position_embeddings 8192), num_hidden_layers 1, and
model.safetensors holding layer 0's q/k/v/o_proj (84 MB in BF16); plus input.npy, a (1, S, 4096)
float32 hidden state. Weights are N(0, 1/C) as a trained layer's are roughly scaled, so scores
stay in a realistic range.
With --peers, also DIR/peers/: the same weights as float32 .npy ({q,k,v,o}_proj.npy, as stored:
(out, in)) and the rope's cos.npy and sin.npy (S, D/2) at positions 0..S-1, float64 angles of the
llama3-scaled frequencies rounded to float32 (as attn-run computes them), for the peers of
bench/bench_peers.sh (ONNX Runtime's GroupQueryAttention, PyTorch).
Usage: make_llama_bench.py DIR [S] [--peers]"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from safetensors_write import save_safetensors  # noqa: E402

C, H, HKV, D = 4096, 32, 8, 128


def llama3_inv_freq(theta=500000.0, factor=8.0, low=1.0, high=4.0, old_len=8192):
    """modeling_rope_utils._compute_llama3_parameters, in float64."""
    inv = 1.0 / theta ** (np.arange(0, D, 2, dtype=np.float64) / D)
    wavelen = 2 * np.pi / inv
    smooth = (old_len / wavelen - low) / (high - low)
    scaled = np.where(wavelen > old_len / low, inv / factor, inv)
    medium = (wavelen >= old_len / high) & (wavelen <= old_len / low)
    return np.where(medium, (1 - smooth) * inv / factor + smooth * inv, scaled)


def main():
    args = [a for a in sys.argv[1:] if a != "--peers"]
    out = args[0]
    S = int(args[1]) if len(args) > 1 else 2048
    os.makedirs(out, exist_ok=True)
    config = {
        "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
        "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": D, "hidden_act": "silu",
        "hidden_size": C, "initializer_range": 0.02, "intermediate_size": 14336,
        "max_position_embeddings": 131072, "mlp_bias": False, "model_type": "llama",
        "num_attention_heads": H, "num_hidden_layers": 1, "num_key_value_heads": HKV,
        "pretraining_tp": 1, "rms_norm_eps": 1e-05,
        "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "transformers_version": "4.46.0", "use_cache": True, "vocab_size": 128256}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    g = torch.Generator().manual_seed(0)
    std = C ** -0.5
    p = "model.layers.0.self_attn."
    shapes = {"q_proj": (H * D, C), "k_proj": (HKV * D, C), "v_proj": (HKV * D, C),
              "o_proj": (C, H * D)}
    tensors = {p + k + ".weight": (torch.randn(s, generator=g) * std).to(torch.bfloat16)
               for k, s in shapes.items()}
    save_safetensors(os.path.join(out, "model.safetensors"), tensors, {"format": "pt"})
    x = torch.randn(1, S, C, generator=g)
    np.save(os.path.join(out, "input.npy"), x.numpy())
    if "--peers" in sys.argv:
        peers = os.path.join(out, "peers")
        os.makedirs(peers, exist_ok=True)
        for k in shapes:
            np.save(os.path.join(peers, k + ".npy"), tensors[p + k + ".weight"].float().numpy())
        angles = np.arange(S, dtype=np.float64)[:, None] * llama3_inv_freq()[None, :]
        np.save(os.path.join(peers, "cos.npy"), np.cos(angles).astype(np.float32))
        np.save(os.path.join(peers, "sin.npy"), np.sin(angles).astype(np.float32))


if __name__ == "__main__":
    main()
