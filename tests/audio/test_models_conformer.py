"""emberaudio.models.Conformer: torchaudio's state-dict keys (written out from torchaudio's
models/conformer.py), shapes, padding, gradients, eval determinism. Numbers against the same
layers built from torch.nn are in tests/interop/test_audio_conformer_torch.py."""

import numpy as np
import pytest

import ember
from emberaudio.models import Conformer

_LAYER_KEYS = [
    "ffn1.sequential.0.weight", "ffn1.sequential.0.bias", "ffn1.sequential.1.weight",
    "ffn1.sequential.1.bias", "ffn1.sequential.4.weight", "ffn1.sequential.4.bias",
    "self_attn_layer_norm.weight", "self_attn_layer_norm.bias", "self_attn.in_proj_weight",
    "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
    "conv_module.layer_norm.weight", "conv_module.layer_norm.bias",
    "conv_module.sequential.0.weight", "conv_module.sequential.0.bias",
    "conv_module.sequential.2.weight", "conv_module.sequential.2.bias",
    "conv_module.sequential.3.weight", "conv_module.sequential.3.bias",
    "conv_module.sequential.3.running_mean", "conv_module.sequential.3.running_var",
    "conv_module.sequential.3.num_batches_tracked",
    "conv_module.sequential.5.weight", "conv_module.sequential.5.bias",
    "ffn2.sequential.0.weight", "ffn2.sequential.0.bias", "ffn2.sequential.1.weight",
    "ffn2.sequential.1.bias", "ffn2.sequential.4.weight", "ffn2.sequential.4.bias",
    "final_layer_norm.weight", "final_layer_norm.bias"]


def test_state_dict_keys_and_shapes():
    model = Conformer(input_dim=8, num_heads=2, ffn_dim=12, num_layers=2,
                      depthwise_conv_kernel_size=5)
    state = model.state_dict()
    assert list(state) == [f"conformer_layers.{i}.{k}" for i in range(2) for k in _LAYER_KEYS]
    assert state["conformer_layers.0.self_attn.in_proj_weight"].shape == (24, 8)
    assert state["conformer_layers.0.conv_module.sequential.0.weight"].shape == (16, 8, 1)
    assert state["conformer_layers.0.conv_module.sequential.2.weight"].shape == (8, 1, 5)
    assert state["conformer_layers.0.ffn1.sequential.1.weight"].shape == (12, 8)
    group = Conformer(8, 2, 12, 1, 5, use_group_norm=True)
    keys = list(group.state_dict())
    assert "conformer_layers.0.conv_module.sequential.3.running_mean" not in keys
    assert len(keys) == len(_LAYER_KEYS) - 3
    with pytest.raises(ValueError, match="odd"):
        Conformer(8, 2, 12, 1, 4)


@pytest.mark.parametrize("convolution_first", [False, True])
def test_shapes_lengths_and_attention_padding(convolution_first):
    ember.manual_seed(0)
    model = Conformer(8, 2, 12, 2, 3, use_group_norm=False,
                      convolution_first=convolution_first).eval()
    x = ember.randn(3, 6, 8)
    lengths = ember.tensor([6, 4, 1])
    out, out_lengths = model(x, lengths)
    assert out.shape == (3, 6, 8) and out_lengths.tolist() == [6, 4, 1]
    # Padded frames are masked out of the attention; the convolution (kernel 3) is what
    # lets them leak, so with kernel 1 a padded item matches the item alone.
    model1 = Conformer(8, 2, 12, 2, 1, convolution_first=convolution_first).eval()
    alone, _ = model1(x[1:2, :4], ember.tensor([4]))
    noisy = x.clone()
    noisy[1, 4:] = 100.0
    batch, _ = model1(noisy, lengths)
    np.testing.assert_allclose(batch[1, :4].detach().numpy(), alone[0].detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="frames"):
        model(x, ember.tensor([5, 4, 1]))
    with pytest.raises(ValueError, match="lengths"):
        model(x, ember.tensor([6, 4]))


def test_gradients_flow_and_eval_is_deterministic():
    ember.manual_seed(0)
    model = Conformer(8, 2, 12, 2, 3, dropout=0.3)
    x = ember.randn(2, 5, 8, requires_grad=True)
    out, _ = model(x, ember.tensor([5, 3]))
    out.pow(2).sum().backward()
    assert x.grad is not None and float(x.grad.abs().sum()) > 0
    for name, p in model.named_parameters():
        assert p.grad is not None and bool(ember.isfinite(p.grad).all()), name
    model.eval()
    x = ember.randn(2, 5, 8)
    first, _ = model(x, ember.tensor([5, 3]))
    second, _ = model(x, ember.tensor([5, 3]))
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())
