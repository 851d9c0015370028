#!/usr/bin/python3
"""Held-out check of CONTRACT.md v3's encoder families, run by hand as heldout_folders.py (whose
runner it uses): folders with other seeds, shapes, layers, padding, containers, prefixes and config
spellings than make_families_v3_encoders.py's fixtures, against that script's torch reference.
Prints the worst relative error per folder; fails above 1e-5.
Usage: /usr/bin/python3 tests/golden/heldout_v3_encoders.py (ATTN_BIN, HELDOUT_DIR as there)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heldout_folders  # noqa: E402
import make_families_v3_encoders as enc  # noqa: E402


def specs():
    return [
        # XLMRobertaModel (no "roberta." prefix), key padding on the left, bf16, two shards
        dict(name="xlm_roberta_model", seed=401, container="shards2", dtype="bf16", layers=[2],
             B=3, S=9, pad="left", rename=[("roberta.", "")],
             residual_norm=dict(layers=[2], name="attention.output.LayerNorm.", eps=1e-12),
             config={"model_type": "xlm-roberta", "hidden_size": 48, "num_attention_heads": 6,
                     "num_hidden_layers": 3, "max_position_embeddings": 514}),
        # XLMRobertaForCausalLM: is_decoder makes the self-attention causal
        dict(name="xlm_roberta_decoder", seed=402, container="safetensors", dtype="f32",
             layers=[0], B=2, S=8, pad="right",
             config={"architectures": ["XLMRobertaForCausalLM"], "model_type": "xlm-roberta",
                     "hidden_size": 32, "is_decoder": True, "num_attention_heads": 2,
                     "num_hidden_layers": 1}),
        # ELECTRA generator (ElectraForMaskedLM), f16, left padding; no position_embedding_type
        dict(name="electra_generator", seed=403, container="safetensors", dtype="f16",
             layers=[0, 1], B=2, S=7, pad="left",
             config={"architectures": ["ElectraForMaskedLM"], "model_type": "electra",
                     "embedding_size": 8, "hidden_size": 16, "intermediate_size": 8,
                     "num_attention_heads": 1, "num_hidden_layers": 2}),
        # ElectraModel saved bare ("encoder.layer.N."), pytorch_model.bin
        dict(name="electra_model", seed=404, container="bin", dtype="f32", layers=[1], S=10,
             rename=[("electra.", "")],
             residual_norm=dict(layers=[1], name="attention.output.LayerNorm.", eps=1e-12),
             config={"model_type": "electra", "hidden_size": 40, "num_attention_heads": 5,
                     "num_hidden_layers": 2}),
        # DistilBertModel ("transformer.layer.N."), left padding, bf16; six layers
        dict(name="distilbert_model", seed=405, container="safetensors", dtype="bf16",
             layers=[1, 5], B=2, S=9, pad="left", rename=[("distilbert.", "")],
             residual_norm=dict(layers=[5], name="sa_layer_norm.", eps=1e-12),
             config={"model_type": "distilbert", "dim": 24, "n_heads": 3, "n_layers": 6, "hidden_dim": 8}),
        dict(name="distilbert_bin", seed=406, container="bin", dtype="f16", layers=[0], S=6,
             config={"model_type": "distilbert", "dim": 32, "n_heads": 8, "n_layers": 1}),
        # ViTModel (bare "encoder.layer.N."), qkv_bias false, sharded
        dict(name="vit_model", seed=407, container="shards2", dtype="f32", layers=[2], B=3, S=10,
             rename=[("vit.", "")],
             config={"model_type": "vit", "hidden_size": 48, "num_attention_heads": 3,
                     "num_hidden_layers": 3, "qkv_bias": False, "image_size": 6,
                     "patch_size": 2}),
        # ViT with a padded batch through attention_mask (attn-run's key padding on any encoder)
        dict(name="vit_padded", seed=408, container="safetensors", dtype="f16", layers=[0], B=2,
             S=7, pad="right",
             config={"model_type": "vit", "hidden_size": 16, "num_attention_heads": 2,
                     "num_hidden_layers": 1}),
        # CLIPTextModelWithProjection, bf16, defaults for what config.json leaves out (heads 8)
        dict(name="clip_text_proj", seed=409, container="safetensors", dtype="bf16",
             layers=[2], B=3, S=9, pad="right",
             config={"architectures": ["CLIPTextModelWithProjection"],
                     "model_type": "clip_text_model", "hidden_size": 64,
                     "num_hidden_layers": 3, "projection_dim": 8}),
        # CLIPModel whose text_config_dict (older saves) overrides text_config's heads
        dict(name="clip_dict", seed=410, container="shards2", dtype="f32", layers=[0, 1], B=2,
             S=8, pad="right",
             config={"architectures": ["CLIPModel"], "model_type": "clip",
                     "text_config": {"hidden_size": 32, "num_attention_heads": 8,
                                     "num_hidden_layers": 2},
                     "text_config_dict": {"hidden_size": 32, "num_attention_heads": 2,
                                          "num_hidden_layers": 2},
                     "vision_config": {"hidden_size": 16, "num_attention_heads": 2,
                                       "num_hidden_layers": 1}}),
        # CLIPVisionModel in pytorch_model.bin (f16), unbatched
        dict(name="clip_vision_bin", seed=411, container="bin", dtype="f16", layers=[1], S=10,
             unbatched=True,
             config={"architectures": ["CLIPVisionModel"], "model_type": "clip_vision_model",
                     "hidden_size": 40, "num_attention_heads": 5, "num_hidden_layers": 2}),
        # ModernBertModel saved bare ("layers.N.attn."), attention_bias, global every 2nd layer,
        # local_attention 6 (3 each side), left padding, f16
        dict(name="modernbert_model", seed=412, container="safetensors", dtype="f16",
             layers=[0, 3], B=2, S=11, pad="left", rename=[("model.", "")],
             config={"model_type": "modernbert", "attention_bias": True,
                     "global_attn_every_n_layers": 2, "global_rope_theta": 20000.0,
                     "hidden_size": 32, "local_attention": 6, "local_rope_theta": 500.0,
                     "max_position_embeddings": 128, "num_attention_heads": 2,
                     "num_hidden_layers": 4}),
        # ModernBERT with the class defaults for its pattern and bases (every 3rd global,
        # local_attention 128, thetas 160000 / 10000), sharded
        dict(name="modernbert_defaults", seed=413, container="shards2", dtype="f32",
             layers=[2, 3], S=12,
             config={"model_type": "modernbert", "hidden_size": 48, "num_attention_heads": 4,
                     "num_hidden_layers": 4}),
    ]


if __name__ == "__main__":
    enc.install()  # make_folders' helpers know the encoder families
    heldout_folders.specs = specs
    heldout_folders.main()
