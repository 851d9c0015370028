#!/usr/bin/env python3
"""scripts/capture_hidden_states.py's hooks on small torch models named as transformers names
them (model.layers.N.self_attn; bert.encoder.layer.N.attention.self). Each model records the
input its attention modules really received; the hooks must return exactly those, in layer
order, and the saved .npy / layer_N.npy must hold them. Exit 77 (ctest SKIP) without torch."""
import os
import sys
import tempfile

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError:
    print("torch or numpy missing: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import capture_hidden_states as cap  # noqa: E402


class Attn(nn.Module):  # stands for a fast (sdpa) attention: returns no map
    def __init__(self, c, log):
        super().__init__()
        self.q = nn.Linear(c, c)
        self.log = log

    def forward(self, hidden_states, attention_mask=None):
        self.log.append(hidden_states.detach().clone())
        return torch.tanh(self.q(hidden_states))


class DecoderLayer(nn.Module):  # as LlamaDecoderLayer: norm, then self_attn, residual
    def __init__(self, c, log):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(c)
        self.self_attn = Attn(c, log)

    def forward(self, x):
        return x + self.self_attn(hidden_states=self.input_layernorm(x))  # by keyword


class Decoder(nn.Module):
    def __init__(self, c, n, log):
        super().__init__()
        self.model = nn.Module()
        self.model.layers = nn.ModuleList(DecoderLayer(c, log) for _ in range(n))

    def forward(self, x):
        for layer in self.model.layers:
            x = layer(x)
        return x


class BertAttention(nn.Module):  # attention.self, attention.output as modeling_bert
    def __init__(self, c, log):
        super().__init__()
        self.self = Attn(c, log)
        self.output = nn.Linear(c, c)

    def forward(self, x):
        return nn.functional.layer_norm(self.output(self.self(x)) + x, x.shape[-1:])  # positional


class Encoder(nn.Module):
    def __init__(self, c, n, log):
        super().__init__()
        self.bert = nn.Module()
        self.bert.encoder = nn.Module()
        self.bert.encoder.layer = nn.ModuleList(nn.Module() for _ in range(n))
        for layer in self.bert.encoder.layer:
            layer.attention = BertAttention(c, log)

    def forward(self, x):
        for layer in self.bert.encoder.layer:
            x = layer.attention(x)
        return x


class WithHiddenStates(Decoder):  # as a transformers model: output_hidden_states=True
    def forward(self, x, output_hidden_states=False):
        states = [x]
        for layer in self.model.layers:
            x = layer(x)
            states.append(x)
        states[-1] = nn.functional.layer_norm(x, x.shape[-1:])  # the final norm
        return {"last_hidden_state": states[-1],
                "hidden_states": tuple(states) if output_hidden_states else None}


def check_residual(x, n):
    """residual_stream: the L + 1 entries the model returns, in order, float32; saved stacked."""
    model = WithHiddenStates(8, n, [])
    got = cap.residual_stream(model, x)
    with torch.no_grad():
        want = model(x, output_hidden_states=True)["hidden_states"]
    assert len(got) == n + 1, len(got)
    for g, w in zip(got, want):
        assert g.dtype == np.float32 and np.array_equal(g, w.numpy())
    assert np.array_equal(got[0], x.numpy())  # entry 0 enters block 0
    with tempfile.TemporaryDirectory() as d:
        cap.save(got, os.path.join(d, "hs.npy"))
        assert np.load(os.path.join(d, "hs.npy")).shape == (n + 1,) + tuple(x.shape)
    try:
        cap.residual_stream(Decoder(8, n, []), x)  # no output_hidden_states argument
    except TypeError:
        pass
    else:
        raise AssertionError("a model without output_hidden_states accepted")


def check(model, log, x, n):
    got = cap.capture(model, x)
    assert len(got) == n and len(log) == n, (len(got), len(log))
    for i, (g, want) in enumerate(zip(got, log)):
        assert g.shape == tuple(x.shape), (i, g.shape)
        assert np.array_equal(g, want.numpy()), f"layer {i} differs"
    # the captured inputs differ per layer (else the test could not tell layers apart)
    assert not np.array_equal(got[0], got[1])
    with tempfile.TemporaryDirectory() as d:
        stacked = os.path.join(d, "h.npy")
        cap.save(got, stacked)
        a = np.load(stacked)
        assert a.shape == (n,) + tuple(x.shape) and a.dtype == np.float32
        assert np.array_equal(a[n - 1], log[n - 1].numpy())
        cap.save(got, os.path.join(d, "layers") + "/")
        for i in range(n):
            one = np.load(os.path.join(d, "layers", f"layer_{i}.npy"))
            assert np.array_equal(one, log[i].numpy())


def main():
    torch.manual_seed(0)
    x = torch.randn(2, 5, 8)  # (B, S, C)
    log = []
    check(Encoder(8, 3, log), log, x, 3)
    log = []
    check(Decoder(8, 4, log), log, x, 4)
    check_residual(x, 3)
    # a model without attention modules named as transformers names them is refused
    try:
        cap.capture(nn.Sequential(nn.Linear(8, 8)), x)
    except SystemExit as e:
        assert "no attention modules" in str(e)
    else:
        raise AssertionError("unnamed model accepted")
    # the hooks are gone afterwards: a second run records nothing new through them
    log.clear()
    model = Decoder(8, 2, log)
    cap.capture(model, x)
    assert "forward" not in vars(model.model.layers[0].self_attn)
    print("capture_hidden_states: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
