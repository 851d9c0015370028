"""Mistral 3 (Mistral3ForConditionalGeneration: Mistral Small 3.1 / 3.2, Magistral, Devstral
Small): Mistral3Config nests a mistral text model as text_config (model_type "mistral" when the
nested object leaves it out), its attention MistralAttention's; the language model's layers under
model.language_model (transformers 4.52 on) or language_model.model (the checkpoints saved
before)."""
from .. import hf
from .. import weights as W

MODEL_TYPES = ("mistral3",)
TEXT_DEFAULTS = dict(rope_theta=10000.0, sliding_window=4096)  # MistralConfig's


def settings(cfg, layer):
    text = dict(TEXT_DEFAULTS, **cfg["text_config"])
    a = hf.decoder(text, "mistral", layer, bias_key="attention_bias",
                   prefix="model.language_model.layers.{}.self_attn.")
    return a.replace(rope=hf.rope(text, a.D, text["rope_theta"],
                                  scaling=hf.get(text, "rope_scaling"), params=hf.v5_params(text)),
                     window=hf.get(text, "sliding_window"))


def num_layers(cfg):
    return cfg["text_config"]["num_hidden_layers"]


def model(cfg, layers, g):
    """Mistral3ForConditionalGeneration's tensors: the vision tower and projector (a few), the
    language model, lm_head."""
    s0 = layers[0]
    sd = {"model.vision_tower.patch_conv.weight": W.small(g, 8, 3, 2, 2),
          "model.vision_tower.transformer.layers.0.attention.q_proj.weight": W.small(g, 8, 8),
          "model.multi_modal_projector.linear_1.weight": W.small(g, s0.C, 8)}
    lm, _ = W.decoder_outside(s0, g)
    sd.update(lm)
    for i, s in enumerate(layers):
        sd.update(W.decoder_block(s, g, lambda b: W.prefixed(W.decoder_attention(s, g), s.prefix),
                                  lambda b: {b + "mlp.up_proj.weight": W.small(g, 4, s.C)}))
    sd["lm_head.weight"] = W.small(g, 12, s0.C)
    return sd


TEXT = {"attention_dropout": 0.0, "head_dim": 16, "hidden_act": "silu", "hidden_size": 32,
        "initializer_range": 0.02, "intermediate_size": 8, "max_position_embeddings": 131072,
        "model_type": "mistral", "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 1, "rms_norm_eps": 1e-05, "rope_theta": 1000000000.0,
        "sliding_window": None, "use_cache": True, "vocab_size": 12}

FOLDERS = [
    # Mistral-Small-3.1-24B-Instruct-2503's spelling: head_dim 16 (not C // H), GQA 4:1, no
    # window, the text model under model.language_model
    dict(name="mistral3", seed=711, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
         S=8, pad="left",
         config={"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
                 "image_token_index": 10, "multimodal_projector_bias": False,
                 "projector_hidden_act": "gelu", "spatial_merge_size": 2, "text_config": TEXT,
                 "torch_dtype": "bfloat16", "transformers_version": "4.52.0.dev0",
                 "vision_config": {"head_dim": 4, "hidden_size": 8, "image_size": 4,
                                   "model_type": "pixtral", "num_attention_heads": 2,
                                   "num_hidden_layers": 1, "patch_size": 2},
                 "vision_feature_layer": -1}),
]

HELDOUT = [
    # saved before transformers 4.52 (language_model.model.layers), text_config without its
    # model_type (mistral), MistralConfig's window for the keys left out
    dict(name="mistral3_old", seed=811, container="safetensors", dtype="f32", layers=[1], B=2,
         S=9, pad="right",
         rename=[("model.language_model.", "language_model.model."),
                 ("lm_head.", "language_model.lm_head.")],
         config={"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
                 "text_config": {"hidden_size": 32, "num_attention_heads": 4,
                                 "num_key_value_heads": 2, "num_hidden_layers": 2,
                                 "rope_theta": 10000.0, "sliding_window": 4},
                 "vision_config": {"model_type": "pixtral"}}),
]
