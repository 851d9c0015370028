#!/usr/bin/env python3
"""Save a Hugging Face model's per-layer inputs for `attn-run --layer all`.

Two ways. The residual stream, no hooks (`--residual`): transformers'
output_hidden_states, (L + 1, B, S, C) where entry i enters block i and the last is
after the final norm; `attn-run --layer all --residual` applies each block's own norm
and ignores the last entry. For a model whose attention sees something the block norm
does not give, the attention INPUTS, recorded by hooks:

The model runs with its fast attention (sdpa / flash, which return no maps); a torch
forward pre-hook on each attention module records the hidden_states it receives, i.e.
the input attn-run needs to recompute that layer's maps exactly (CONTRACT.md "(v3) Many
layers": a (layers, B, S, C) .npy, or a folder of layer_N.npy).

Attention modules are found by their state_dict names, as transformers names them:
  decoders  model.layers.N.self_attn            (Llama, Qwen2, Mistral, ...)
  encoders  bert.encoder.layer.N.attention.self (BERT, RoBERTa: ...attention.self)
  also      encoder.layer.N.attention.self      (a bare BertModel)

Usage (needs torch and transformers):
  python3 capture_hidden_states.py MODEL_DIR "some text" OUT.npy      # (layers, B, S, C)
  python3 capture_hidden_states.py MODEL_DIR "some text" OUT_DIR/     # OUT_DIR/layer_N.npy
then  attn-run --model MODEL_DIR --layer all --input OUT.npy --out-dir maps/
  python3 capture_hidden_states.py --residual MODEL_DIR "some text" HS.npy  # (L + 1, B, S, C)
then  attn-run --model MODEL_DIR --layer all --residual --input HS.npy --out-dir maps/
"""
import os
import re
import sys

import numpy as np
import torch

# layer index from an attention module's name, e.g. "model.layers.3.self_attn" -> 3
_ATTN_NAME = re.compile(r"(?:^|\.)(?:layers|layer|h)\.(\d+)\.(?:self_attn|attention\.self|attn)$")


def attention_modules(model):
    """[(layer index, module)] of the model's attention modules, by layer."""
    found = {}
    for name, module in model.named_modules():
        m = _ATTN_NAME.search(name)
        if m:
            found[int(m.group(1))] = module
    if not found:
        raise SystemExit("no attention modules named like model.layers.N.self_attn or "
                         "encoder.layer.N.attention.self in this model")
    return sorted(found.items())


def capture(model, *args, **kwargs):
    """Run model(*args, **kwargs); return [hidden_states (B, S, C) float32 numpy] per layer."""
    modules = attention_modules(model)
    seen = {}
    handles = []
    for index, module in modules:

        def hook(mod, hook_args, hook_kwargs, index=index):
            # hidden_states is the first positional argument or the keyword (HF passes both ways)
            x = hook_args[0] if hook_args else hook_kwargs["hidden_states"]
            seen[index] = x.detach().to(torch.float32).cpu().numpy()

        try:
            handles.append(module.register_forward_pre_hook(hook, with_kwargs=True))
        except TypeError:  # torch < 2.0: pre-hooks see no keywords; wrap forward instead
            handles.append(_wrap_forward(module, lambda a, k, index=index: hook(None, a, k, index)))
    try:
        with torch.no_grad():
            model(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
    missing = [i for i, _ in modules if i not in seen]
    if missing:
        raise SystemExit(f"layers {missing} were not run")
    return [seen[i] for i, _ in modules]


def residual_stream(model, *args, **kwargs):
    """Run model(*args, output_hidden_states=True, **kwargs); return its hidden_states, the
    residual stream entering each block and the final one, as float32 numpy (B, S, C) arrays:
    L + 1 of them, the layout `attn-run --layer all --residual` reads. No hooks."""
    with torch.no_grad():
        out = model(*args, output_hidden_states=True, **kwargs)
    states = out["hidden_states"] if isinstance(out, dict) else out.hidden_states
    if states is None:
        raise SystemExit("the model returned no hidden_states for output_hidden_states=True")
    return [h.detach().to(torch.float32).cpu().numpy() for h in states]


class _wrap_forward:
    """torch < 2.0 stand-in for a with_kwargs pre-hook: the module's forward, wrapped; remove()."""

    def __init__(self, module, record):
        self.module = module
        inner = module.forward

        def forward(*args, **kwargs):
            record(args, kwargs)
            return inner(*args, **kwargs)

        module.forward = forward

    def remove(self):
        del self.module.forward  # the instance attribute; the class's forward shows again


def save(layers, out):
    """A path ending in / (or an existing folder) gets layer_N.npy; otherwise one stacked .npy."""
    if out.endswith("/") or os.path.isdir(out):
        os.makedirs(out, exist_ok=True)
        for i, x in enumerate(layers):
            np.save(os.path.join(out, f"layer_{i}.npy"), x)
    else:
        np.save(out, np.stack(layers))  # (layers, B, S, C)


def main(argv):
    residual = len(argv) > 1 and argv[1] == "--residual"
    args = argv[2:] if residual else argv[1:]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    from transformers import AutoModel, AutoTokenizer  # only the command line needs them
    model_dir, text, out = args
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
    batch = tok([text], return_tensors="pt")
    save(residual_stream(model, **batch) if residual else capture(model, **batch), out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
