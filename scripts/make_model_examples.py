#!/usr/bin/env python3
"""Writes the shipped model-folder and checkpoint examples:

  data/tiny-llama/       a 2-layer Llama-shaped model folder as the Hugging Face hub publishes
                         one: config.json (model_type llama, GQA 4/2, head_dim 16, rope_theta
                         10000) and model.safetensors in bfloat16 under LlamaForCausalLM's real
                         state_dict names (embeddings, norms, MLP and lm_head included).
  data/tiny-llama-hidden.npy
                         hidden states for the tutorial's six-token sentence at layer 1's input
                         (after input_layernorm): what a user saves from any framework.
  data/raschka_mha.pt    torch.save of the Raschka MultiHeadAttention example's state_dict.

Run from anywhere: /usr/bin/python3 scripts/make_model_examples.py (python3-torch, python3-numpy).
"""
import json
import os
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from safetensors_write import save_safetensors  # noqa: E402

C, H, HKV, D, LAYERS, VOCAB, FF = 64, 4, 2, 16, 2, 32, 128


def tiny_llama():
    torch.manual_seed(2024)
    folder = os.path.join(ROOT, "data", "tiny-llama")
    os.makedirs(folder, exist_ok=True)
    config = {"architectures": ["LlamaForCausalLM"], "attention_bias": False,
              "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2, "head_dim": D,
              "hidden_act": "silu", "hidden_size": C, "initializer_range": 0.02,
              "intermediate_size": FF, "max_position_embeddings": 128, "mlp_bias": False,
              "model_type": "llama", "num_attention_heads": H, "num_hidden_layers": LAYERS,
              "num_key_value_heads": HKV, "rms_norm_eps": 1e-05, "rope_scaling": None,
              "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
              "transformers_version": "4.46.0", "use_cache": True, "vocab_size": VOCAB}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    w = {"model.embed_tokens.weight": torch.randn(VOCAB, C) * 0.5}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = 1 + 0.1 * torch.randn(C)
        w[p + "self_attn.q_proj.weight"] = torch.randn(H * D, C) / C ** 0.5
        w[p + "self_attn.k_proj.weight"] = torch.randn(HKV * D, C) / C ** 0.5
        w[p + "self_attn.v_proj.weight"] = torch.randn(HKV * D, C) / C ** 0.5
        w[p + "self_attn.o_proj.weight"] = torch.randn(C, H * D) / (H * D) ** 0.5
        w[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(C)
        w[p + "mlp.gate_proj.weight"] = torch.randn(FF, C) / C ** 0.5
        w[p + "mlp.up_proj.weight"] = torch.randn(FF, C) / C ** 0.5
        w[p + "mlp.down_proj.weight"] = torch.randn(C, FF) / FF ** 0.5
    w["model.norm.weight"] = torch.ones(C)
    w["lm_head.weight"] = torch.randn(VOCAB, C) * 0.1
    w = {k: v.to(torch.bfloat16) for k, v in w.items()}
    save_safetensors(os.path.join(folder, "model.safetensors"), w, {"format": "pt"})

    # Layer 1's input for the six tokens "Your journey starts with one step" (ids 3..8): the
    # embeddings through layer 0 would need its MLP and norms; a user saves these from their
    # framework. Here: embeddings, RMS-normalised with layer 1's input_layernorm, in float32.
    x = w["model.embed_tokens.weight"].float()[torch.arange(3, 9)]
    norm = w["model.layers.1.input_layernorm.weight"].float()
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * norm
    np.save(os.path.join(ROOT, "data", "tiny-llama-hidden.npy"), x.numpy().astype(np.float32))


def raschka_pt():
    # The same weights as data/raschka_mha/ (scripts/make_examples.py), as one torch.save file.
    src = os.path.join(ROOT, "data", "raschka_mha")
    sd = {}
    for name in sorted(os.listdir(src)):
        sd[name[:-4]] = torch.from_numpy(np.load(os.path.join(src, name)))
    torch.save(sd, os.path.join(ROOT, "data", "raschka_mha.pt"))


if __name__ == "__main__":
    tiny_llama()
    raschka_pt()
    print("wrote data/tiny-llama/, data/tiny-llama-hidden.npy, data/raschka_mha.pt")
