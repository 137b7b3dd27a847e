"""emberaudio.models: shapes, parameter names and counts, gradients (torchaudio parity is in
tests/interop/test_audio_models_torchaudio.py)."""

import numpy as np
import pytest

import ember
from emberaudio.models import ConvTasNet, DeepSpeech, Wav2Letter, conv_tasnet_base


def _count(module):
    return sum(p.numel() for p in module.parameters())


def test_wav2letter_shapes_and_parameters():
    model = Wav2Letter(num_classes=29)
    out = model(ember.randn(2, 1, 8000))
    assert out.shape == (2, 29, 26)
    # log-probabilities over the classes
    np.testing.assert_allclose(out.detach().exp().sum(1).numpy(), 1.0, rtol=1e-5)
    keys = list(model.state_dict())
    assert keys[:4] == ["acoustic_model.0.0.weight", "acoustic_model.0.0.bias",
                        "acoustic_model.1.0.weight", "acoustic_model.1.0.bias"]
    assert keys[-1] == "acoustic_model.1.20.bias" and len(keys) == 24
    mfcc = Wav2Letter(num_classes=10, input_type="mfcc", num_features=13)
    assert mfcc(ember.randn(1, 13, 100)).shape == (1, 10, 51)
    assert list(mfcc.state_dict())[0] == "acoustic_model.0.weight"
    assert _count(mfcc) == (13 * 250 * 48 + 250 + 7 * (250 * 250 * 7 + 250)
                            + 250 * 2000 * 32 + 2000 + 2000 * 2000 + 2000 + 2000 * 10 + 10)
    with pytest.raises(ValueError, match="input_type"):
        Wav2Letter(input_type="spectrogram")


def test_deepspeech_shapes_keys_and_gradients():
    model = DeepSpeech(n_feature=12, n_hidden=16, n_class=5)
    x = ember.randn(3, 1, 9, 12, requires_grad=True)
    out = model(x)
    assert out.shape == (3, 9, 5)
    np.testing.assert_allclose(out.detach().exp().sum(-1).numpy(), 1.0, rtol=1e-5)
    out.sum().backward()
    assert x.grad is not None and model.bi_rnn.weight_hh_l0_reverse.grad is not None
    assert sorted(model.state_dict()) == sorted(
        [f"fc{i}.fc.{p}" for i in (1, 2, 3, 4) for p in ("weight", "bias")]
        + [f"bi_rnn.{w}_{k}_l0{s}" for w in ("weight", "bias") for k in ("ih", "hh")
           for s in ("", "_reverse")] + ["out.weight", "out.bias"])


def test_conv_tasnet_shapes_keys_and_gradients():
    model = ConvTasNet(num_sources=3, enc_kernel_size=8, enc_num_feats=16, msk_num_feats=8,
                       msk_num_hidden_feats=12, msk_num_layers=2, msk_num_stacks=2)
    for frames in (64, 67):  # 67 is padded to the strides and cut back
        x = ember.randn(2, 1, frames, requires_grad=True)
        out = model(x)
        assert out.shape == (2, 3, frames)
    out.sum().backward()
    assert x.grad.shape == x.shape
    keys = set(model.state_dict())
    assert "mask_generator.conv_layers.3.res_out.weight" not in keys  # the last block
    assert "mask_generator.conv_layers.2.res_out.weight" in keys
    assert "mask_generator.conv_layers.0.conv_layers.1.weight" in keys  # PReLU
    assert {"encoder.weight", "decoder.weight", "mask_generator.output_prelu.weight"} <= keys
    assert model.mask_generator.receptive_field == 3 + 2 * 2 + 2 * 1 + 2 * 2
    with pytest.raises(ValueError, match="channel==1"):
        model(ember.randn(2, 2, 64))
    with pytest.raises(ValueError, match="Unsupported activation"):
        ConvTasNet(msk_activate="tanh")


def test_conv_tasnet_base_size():
    model = conv_tasnet_base()
    assert isinstance(model.mask_generator.mask_activate, ember.nn.ReLU)
    assert _count(model) == 4_984_881  # torchaudio's CONVTASNET_BASE_LIBRI2MIX architecture
