"""emberaudio.models.Conformer against the same layers assembled from torch.nn modules with
torchaudio's attribute names (so ember's state dict loads strictly into it)."""

import numpy as np
import pytest

import ember
from emberaudio.models import Conformer

torch = pytest.importorskip("torch")
nn = torch.nn


def _ffn(d, h):
    m = nn.Module()
    m.sequential = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, h), nn.SiLU(), nn.Dropout(0),
                                 nn.Linear(h, d), nn.Dropout(0))
    return m


def _torch_layer(d, ffn, heads, kernel, group_norm):
    layer = nn.Module()
    layer.ffn1 = _ffn(d, ffn)
    layer.self_attn_layer_norm = nn.LayerNorm(d)
    layer.self_attn = nn.MultiheadAttention(d, heads)
    conv = nn.Module()
    conv.layer_norm = nn.LayerNorm(d)
    conv.sequential = nn.Sequential(
        nn.Conv1d(d, 2 * d, 1), nn.GLU(dim=1),
        nn.Conv1d(d, d, kernel, padding=(kernel - 1) // 2, groups=d),
        nn.GroupNorm(1, d) if group_norm else nn.BatchNorm1d(d), nn.SiLU(),
        nn.Conv1d(d, d, 1), nn.Dropout(0))
    layer.conv_module = conv
    layer.ffn2 = _ffn(d, ffn)
    layer.final_layer_norm = nn.LayerNorm(d)
    return layer


def _torch_forward(layers, x, lengths, convolution_first):
    mask = torch.arange(x.shape[1])[None] >= lengths[:, None]
    x = x.transpose(0, 1)

    def conv(x, layer):
        y = layer.conv_module.layer_norm(x.transpose(0, 1)).transpose(1, 2)
        return x + layer.conv_module.sequential(y).transpose(1, 2).transpose(0, 1)

    for layer in layers:
        x = layer.ffn1.sequential(x) * 0.5 + x
        if convolution_first:
            x = conv(x, layer)
        y = layer.self_attn_layer_norm(x)
        x = layer.self_attn(y, y, y, key_padding_mask=mask, need_weights=False)[0] + x
        if not convolution_first:
            x = conv(x, layer)
        x = layer.ffn2.sequential(x) * 0.5 + x
        x = layer.final_layer_norm(x)
    return x.transpose(0, 1)


@pytest.mark.parametrize("group_norm, convolution_first", [(False, False), (True, True)])
def test_conformer_matches_torch_modules(group_norm, convolution_first):
    ember.manual_seed(0)
    ours = Conformer(8, 2, 12, 2, 3, use_group_norm=group_norm,
                     convolution_first=convolution_first)
    # Non-trivial batch-norm statistics, then inference mode.
    ours.train()
    ours(ember.randn(2, 6, 8), ember.tensor([6, 6]))
    ours.eval()
    theirs = nn.Module()
    theirs.conformer_layers = nn.ModuleList(
        _torch_layer(8, 12, 2, 3, group_norm) for _ in range(2))
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})
    theirs.eval()
    x = np.random.default_rng(0).standard_normal((3, 6, 8)).astype(np.float32)
    lengths = np.array([6, 4, 2])
    with ember.no_grad():
        got, _ = ours(ember.from_numpy(x), ember.from_numpy(lengths))
    with torch.no_grad():
        expected = _torch_forward(theirs.conformer_layers, torch.from_numpy(x),
                                  torch.from_numpy(lengths), convolution_first)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
