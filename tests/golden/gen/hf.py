"""Reading a config.json as transformers' configuration classes read it (what the families' files
share): class defaults for the keys a config.json leaves out, the sizes under their several
spellings, the rope of rope_theta / rope_scaling (transformers 4.x) or rope_parameters (v5, flat
or per layer type), and layer_types."""
from .reference import Layer, Rope


def get(cfg, key, default=None):
    """cfg[key], or the config class's default when config.json leaves it out (null stays None)."""
    return cfg[key] if key in cfg else default


def first(cfg, *keys):
    return next(cfg[k] for k in keys if k in cfg)


def with_defaults(cfg, defaults):
    return dict(defaults, **cfg)


def decoder(cfg, mt, layer, prefix="model.layers.{}.self_attn.", out="o_proj", bias_key=None,
            **kw):
    """A LlamaAttention-like layer: q_proj, k_proj, v_proj and `out`; sizes from hidden_size /
    n_embd / n_embed / d_model, num_attention_heads / n_head / n_heads, num_key_value_heads (or
    as many as the query heads), head_dim (or C // H); scale 1 / sqrt(D), causal; biases as
    bias_key says."""
    C = first(cfg, "hidden_size", "n_embd", "n_embed", "d_model")
    H = first(cfg, "num_attention_heads", "n_head", "n_heads")
    Hkv = get(cfg, "num_key_value_heads") or H
    D = get(cfg, "head_dim") or C // H
    b = bool(get(cfg, bias_key, False)) if bias_key else False
    kw.setdefault("qkv_bias", b)
    kw.setdefault("o_bias", b)
    return Layer(C, H, Hkv, D, names=("q_proj", "k_proj", "v_proj", out), model_type=mt,
                 prefix=prefix.format(layer), **kw)


def rope(cfg, D, theta, fraction=1.0, scaling=None, params=None, style="half"):
    """The layer's rope: theta and rope_scaling, or transformers v5's rope_parameters (rope_theta,
    rope_type, partial_rotary_factor inside); a "default" rope_type is no scaling; Phi-3's
    original_max_position_embeddings joins its longrope scaling."""
    if params is not None:
        theta = params.get("rope_theta", theta)
        scaling = None if params.get("rope_type", "default") == "default" else params
        fraction = params.get("partial_rotary_factor", fraction)
    if scaling is not None and scaling.get("rope_type", scaling.get("type")) == "default":
        scaling = None
    if scaling is not None and "original_max_position_embeddings" in cfg:  # Phi-3 longrope
        scaling = dict(scaling, original_max_position_embeddings=cfg[
            "original_max_position_embeddings"])
    return Rope(float(theta), int(D * fraction), scaling, get(cfg, "max_position_embeddings"),
                style)


def v5_params(cfg, layer_type="full_attention"):
    """transformers v5's rope_parameters: flat, or one entry per layer type."""
    p = get(cfg, "rope_parameters")
    if p is not None and "rope_theta" not in p and layer_type in p:
        p = p[layer_type]
    return p


def sliding(cfg, layer, default):
    """layer_types[layer] == "sliding_attention" when config.json has layer_types, else the
    family's own rule (`default`)."""
    types = get(cfg, "layer_types")
    if types:
        return types[layer] == "sliding_attention"
    return default


def rope_scaling(cfg):
    """config.json's rope_scaling, None for a "default" one."""
    scaling = cfg.get("rope_scaling")
    if scaling is not None and scaling.get("rope_type", scaling.get("type")) == "default":
        return None
    return scaling


def sizes(cfg):
    """(C, H, Hkv, D) under hidden_size / n_embd and num_attention_heads / n_head;
    num_key_value_heads null or missing: as many as the query heads; D = C // H."""
    C = first(cfg, "hidden_size", "n_embd")
    H = first(cfg, "num_attention_heads", "n_head")
    return C, H, cfg.get("num_key_value_heads") or H, C // H
