"""emberaudio's wav2vec 2.0 encoder against the same computation written in plain torch
(torch.nn.functional on the model's state dict), and its weight norm against
torch.nn.utils.parametrizations.weight_norm."""

import numpy as np
import pytest

import ember
from emberaudio import models

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _torch_forward(state, x, lengths, conv_config, heads, layer_norm_first, mode):
    """wav2vec2's forward pass in plain torch, from the parameter names alone."""
    s = {k: torch.from_numpy(v.numpy().copy()) for k, v in state.items()}
    h = x[:, None]
    for i, (channels, kernel, stride) in enumerate(conv_config):
        p = f"feature_extractor.conv_layers.{i}."
        h = F.conv1d(h, s[p + "conv.weight"], s.get(p + "conv.bias"), stride=stride)
        if mode == "group_norm" and i == 0:
            h = F.group_norm(h, channels, s[p + "layer_norm.weight"], s[p + "layer_norm.bias"])
        elif mode == "layer_norm":
            h = F.layer_norm(h.transpose(1, 2), (channels,), s[p + "layer_norm.weight"],
                             s[p + "layer_norm.bias"]).transpose(1, 2)
        h = F.gelu(h)
        lengths = torch.clamp(torch.div(lengths - kernel, stride, rounding_mode="floor") + 1,
                              min=0)
    h = h.transpose(1, 2)
    p = "encoder.feature_projection."
    h = F.linear(F.layer_norm(h, h.shape[-1:], s[p + "layer_norm.weight"],
                              s[p + "layer_norm.bias"]), s[p + "projection.weight"],
                 s[p + "projection.bias"])
    n, t, d = h.shape
    pad = torch.arange(t)[None] >= lengths[:, None]
    h = h.masked_fill(pad[..., None], 0.0)
    mask = (-10000.0 * pad[:, None, None, :].float()).expand(n, 1, t, t)
    p = "encoder.transformer."
    g, v = s[p + "pos_conv_embed.conv.parametrizations.weight.original0"], \
        s[p + "pos_conv_embed.conv.parametrizations.weight.original1"]
    weight = torch._weight_norm(v, g, 2)
    kernel = weight.shape[-1]
    pos = F.conv1d(h.transpose(1, 2), weight, s[p + "pos_conv_embed.conv.bias"],
                   padding=kernel // 2, groups=d // weight.shape[1])
    if kernel % 2 == 0:
        pos = pos[..., :-1]
    h = h + F.gelu(pos).transpose(1, 2)

    def norm(h, name):
        return F.layer_norm(h, (d,), s[name + ".weight"], s[name + ".bias"])

    if not layer_norm_first:
        h = norm(h, p + "layer_norm")
    i = 0
    while f"{p}layers.{i}.layer_norm.weight" in s:
        q = f"{p}layers.{i}."

        def lin(h, name, q=q):
            return F.linear(h, s[q + name + ".weight"], s[q + name + ".bias"])

        def attention(h, q=q):
            split = [lin(h, f"attention.{k}_proj").view(n, t, heads, d // heads).transpose(1, 2)
                     for k in "qkv"]
            out = F.scaled_dot_product_attention(*split, attn_mask=mask)
            return lin(out.transpose(1, 2).reshape(n, t, d), "attention.out_proj")

        def ff(h, q=q):
            return lin(F.gelu(lin(h, "feed_forward.intermediate_dense")),
                       "feed_forward.output_dense")

        if layer_norm_first:
            h = h + attention(norm(h, q + "layer_norm"))
            h = h + ff(norm(h, q + "final_layer_norm"))
        else:
            h = norm(h + attention(h), q + "layer_norm")
            h = norm(h + ff(h), q + "final_layer_norm")
        i += 1
    if layer_norm_first:
        h = norm(h, p + "layer_norm")
    return F.linear(h, s["aux.weight"], s["aux.bias"]), lengths


@pytest.mark.parametrize("mode, bias, layer_norm_first", [("group_norm", False, False),
                                                          ("layer_norm", True, True)])
def test_wav2vec2_matches_plain_torch(mode, bias, layer_norm_first):
    conv = [(8, 10, 5), (8, 3, 2), (8, 2, 2)]
    ember.manual_seed(1)
    model = models.wav2vec2_model(mode, conv, bias, 16, 0.0, 4, 2, 2, 2, 0.0, 32, 0.0, 0.0,
                                  layer_norm_first, 0.0, 6).eval()
    with ember.no_grad():  # a magnitude that is not the initial norm
        model.encoder.transformer.pos_conv_embed.conv.parametrizations["weight"].original0.mul_(
            0.5)
    x = np.random.default_rng(0).standard_normal((2, 400)).astype(np.float32)
    lengths = np.array([400, 250])
    with ember.no_grad():
        got, got_lengths = model(ember.from_numpy(x), ember.from_numpy(lengths))
    with torch.no_grad():
        expected, expected_lengths = _torch_forward(
            model.state_dict(), torch.from_numpy(x), torch.from_numpy(lengths), conv, 2,
            layer_norm_first, mode)
    assert got_lengths.tolist() == expected_lengths.tolist() == [19, 12]
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)


def test_weight_norm_keys_match_torch_parametrizations():
    conv = torch.nn.utils.parametrizations.weight_norm(
        torch.nn.Conv1d(8, 8, 4, padding=2, groups=2), name="weight", dim=2)
    ours = models.wav2vec2_model("group_norm", [(8, 10, 5)], False, 8, 0.0, 4, 2, 1, 2, 0.0, 8,
                                 0.0, 0.0, False, 0.0, None)
    prefix = "encoder.transformer.pos_conv_embed.conv."
    our_keys = {k[len(prefix):]: v for k, v in ours.state_dict().items() if k.startswith(prefix)}
    theirs = conv.state_dict()
    assert list(our_keys) == list(theirs)
    assert all(tuple(our_keys[k].shape) == tuple(v.shape) for k, v in theirs.items())


def test_wavlm_attention_matches_plain_torch():
    from emberaudio.models.wav2vec2.wavlm_attention import WavLMSelfAttention
    ember.manual_seed(0)
    ours = WavLMSelfAttention(8, 2, has_relative_attention_bias=True, num_buckets=16,
                              max_distance=20).eval()
    with ember.no_grad():
        ours.gru_rel_pos_const.mul_(0.3)
    s = {k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()}
    x = np.random.default_rng(0).standard_normal((2, 30, 8)).astype(np.float32)
    pad = np.zeros((2, 30), bool)
    pad[1, 20:] = True
    with ember.no_grad():
        got, bias = ours(ember.from_numpy(x), key_padding_mask=ember.from_numpy(pad))
    # Reference: buckets by the formula, gate, additive -inf padding, torch's attention.
    rel = torch.arange(30)[None] - torch.arange(30)[:, None]
    half, exact = 8, 4
    a = rel.abs()
    large = exact + (torch.log(a.clamp(min=1).float() / exact) / np.log(20 / exact)
                     * (half - exact)).long()
    buckets = (rel > 0).long() * half + torch.where(a < exact, a, large.clamp(max=half - 1))
    position = s["rel_attn_embed.weight"][buckets].permute(2, 0, 1)[None].repeat(2, 1, 1, 1)
    xt = torch.from_numpy(x)
    q = xt.view(2, 30, 2, 4).permute(0, 2, 1, 3)
    gate_a, gate_b = torch.sigmoid(F.linear(q, s["gru_rel_pos_linear.weight"],
                                            s["gru_rel_pos_linear.bias"]).view(
        2, 2, 30, 2, 4).sum(-1)).chunk(2, -1)
    mask = (gate_a * (gate_b * s["gru_rel_pos_const"] - 1.0) + 2.0) * position
    mask = mask + torch.zeros(2, 1, 1, 30).masked_fill(torch.from_numpy(pad)[:, None, None],
                                                       float("-inf"))
    qkv = F.linear(xt, s["attention.in_proj_weight"], s["attention.in_proj_bias"]).chunk(3, -1)
    q, k, v = (t.reshape(2, 30, 2, 4).transpose(1, 2) for t in qkv)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    expected = F.linear(out.transpose(1, 2).reshape(2, 30, 8), s["attention.out_proj.weight"],
                        s["attention.out_proj.bias"])
    np.testing.assert_allclose(bias.numpy(), position.numpy(), rtol=1e-6)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
