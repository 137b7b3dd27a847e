"""emberaudio.models' wav2vec 2.0 / HuBERT family: torchaudio's state-dict keys (written out
from torchaudio's wav2vec2/components.py), shapes, lengths, masking, gradients, eval
determinism. Numbers against torch are in tests/interop/test_audio_wav2vec2_torch.py."""

import numpy as np
import pytest

import ember
from emberaudio import models
from emberaudio.models.wav2vec2 import components

_SMALL_CONV = [(8, 10, 5), (8, 3, 2), (8, 2, 2)]


def _small(mode="group_norm", layer_norm_first=False, aux=5, bias=False, dropout=0.0):
    ember.manual_seed(0)
    return models.wav2vec2_model(mode, _SMALL_CONV, bias, 16, dropout, 4, 2, 2, 2, dropout, 32,
                                 dropout, dropout, layer_norm_first, 0.0, aux)


def _layer_keys(i):
    p = f"encoder.transformer.layers.{i}."
    return [p + name for name in (
        "attention.k_proj.weight", "attention.k_proj.bias", "attention.v_proj.weight",
        "attention.v_proj.bias", "attention.q_proj.weight", "attention.q_proj.bias",
        "attention.out_proj.weight", "attention.out_proj.bias", "layer_norm.weight",
        "layer_norm.bias", "feed_forward.intermediate_dense.weight",
        "feed_forward.intermediate_dense.bias", "feed_forward.output_dense.weight",
        "feed_forward.output_dense.bias", "final_layer_norm.weight", "final_layer_norm.bias")]


_ENCODER_KEYS = [
    "encoder.feature_projection.layer_norm.weight", "encoder.feature_projection.layer_norm.bias",
    "encoder.feature_projection.projection.weight", "encoder.feature_projection.projection.bias",
    "encoder.transformer.pos_conv_embed.conv.bias",
    "encoder.transformer.pos_conv_embed.conv.parametrizations.weight.original0",
    "encoder.transformer.pos_conv_embed.conv.parametrizations.weight.original1",
    "encoder.transformer.layer_norm.weight", "encoder.transformer.layer_norm.bias"]


def test_state_dict_keys_and_shapes_match_torchaudio():
    group = _small()
    keys = list(group.state_dict())
    assert keys == (["feature_extractor.conv_layers.0.layer_norm.weight",
                     "feature_extractor.conv_layers.0.layer_norm.bias",
                     "feature_extractor.conv_layers.0.conv.weight",
                     "feature_extractor.conv_layers.1.conv.weight",
                     "feature_extractor.conv_layers.2.conv.weight"]
                    + _ENCODER_KEYS + _layer_keys(0) + _layer_keys(1)
                    + ["aux.weight", "aux.bias"])
    state = group.state_dict()
    assert state["feature_extractor.conv_layers.0.conv.weight"].shape == (8, 1, 10)
    assert state["encoder.transformer.pos_conv_embed.conv.parametrizations.weight.original0"
                 ].shape == (1, 1, 4)
    assert state["encoder.transformer.pos_conv_embed.conv.parametrizations.weight.original1"
                 ].shape == (16, 8, 4)
    layer = list(_small("layer_norm", True, aux=None, bias=True).state_dict())
    assert layer[:4] == ["feature_extractor.conv_layers.0.layer_norm.weight",
                         "feature_extractor.conv_layers.0.layer_norm.bias",
                         "feature_extractor.conv_layers.0.conv.weight",
                         "feature_extractor.conv_layers.0.conv.bias"]
    assert len(layer) == 3 * 4 + len(_ENCODER_KEYS) + 2 * 16 and "aux.weight" not in layer


def test_hubert_base_is_wav2vec2_base_architecture_with_its_parameter_count():
    model = models.hubert_base()
    keys = list(model.state_dict())
    assert len(keys) == 3 + 6 + len(_ENCODER_KEYS) + 12 * 16
    assert keys[-1] == "encoder.transformer.layers.11.final_layer_norm.bias"
    conv = 512 * 10 + 2 * 512 + 4 * 512 * 512 * 3 + 2 * 512 * 512 * 2
    projection = 2 * 512 + 512 * 768 + 768
    pos_conv = 768 + 128 + 768 * 48 * 128
    layer = 4 * (768 * 768 + 768) + 2 * 768 * 2 + 768 * 3072 + 3072 + 3072 * 768 + 768
    assert sum(p.numel() for p in model.parameters()) == (
        conv + projection + pos_conv + 2 * 768 + 12 * layer) == 94_370_944
    assert model.encoder.transformer.layer_drop == 0.05
    assert model.encoder.transformer.layer_norm_first  # post-norm layers, norm first
    assert model.encoder.transformer.layers[0].feed_forward.intermediate_dropout.p == 0.0


def test_wav2vec2_base_configuration():
    model = models.wav2vec2_base(aux_num_out=7)
    assert isinstance(model.feature_extractor.conv_layers[0].layer_norm, ember.nn.GroupNorm)
    assert model.feature_extractor.conv_layers[1].layer_norm is None
    assert model.aux.weight.shape == (7, 768)
    transformer = model.encoder.transformer
    assert transformer.layer_drop == 0.1 and len(transformer.layers) == 12
    assert transformer.layers[0].feed_forward.intermediate_dropout.p == 0.1
    assert transformer.layers[0].attention.num_heads == 12


def test_output_shapes_and_lengths():
    model = _small().eval()
    out, lengths = model(ember.randn(3, 400), ember.tensor([400, 215, 9]))
    # 400 -> 79 -> 39 -> 19 frames; 215 -> 42 -> 20 -> 10; 9 (shorter than a kernel) -> 0
    assert out.shape == (3, 19, 5) and lengths.tolist() == [19, 10, 0]
    out, lengths = model(ember.randn(2, 400))
    assert out.shape == (2, 19, 5) and lengths is None
    features, lengths = model.extract_features(ember.randn(2, 400), num_layers=1)
    assert len(features) == 1 and features[0].shape == (2, 19, 16)
    assert len(model.extract_features(ember.randn(1, 400))[0]) == 2
    with pytest.raises(ValueError, match="num_layers"):
        model.extract_features(ember.randn(1, 400), num_layers=3)
    with pytest.raises(ValueError, match="2D"):
        model(ember.randn(1, 1, 400))
    with pytest.raises(ValueError, match="norm mode"):
        models.wav2vec2_model("batch_norm", None, False, 16, 0, 4, 2, 1, 2, 0, 8, 0, 0,
                              False, 0, None)
    with pytest.raises(ValueError, match="divisible"):
        components.SelfAttention(10, 3)


@pytest.mark.parametrize("layer_norm_first", [False, True])
def test_padding_does_not_change_the_valid_frames(layer_norm_first):
    # With the layer-norm extractor every frame sees only its own samples, so a padded batch
    # item matches the same audio alone on its valid frames.
    model = _small("layer_norm", layer_norm_first).eval()
    audio = ember.randn(1, 215)
    padded = ember.cat([audio, 3 * ember.randn(1, 185)], dim=1)
    alone, _ = model(audio)
    batch, lengths = model(ember.cat([padded, ember.randn(1, 400)]), ember.tensor([215, 400]))
    assert lengths.tolist() == [10, 19] and alone.shape[1] == 10
    np.testing.assert_allclose(batch[0, :10].detach().numpy(), alone[0].detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_gradients_flow_and_eval_is_deterministic():
    model = _small(dropout=0.2)
    out, _ = model(ember.randn(2, 400), ember.tensor([400, 300]))
    out.pow(2).mean().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and bool(ember.isfinite(p.grad).all()), name
    g = model.encoder.transformer.pos_conv_embed.conv.parametrizations["weight"].original0.grad
    assert float(g.abs().sum()) > 0
    model.eval()
    x = ember.randn(2, 400)
    first, _ = model(x)
    second, _ = model(x)
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())
    model.train()
    third, _ = model(x)
    assert not np.allclose(third.detach().numpy(), first.detach().numpy())


def test_weight_norm_parametrization_values():
    embed = components.ConvolutionalPositionalEmbedding(8, 4, 2)
    p = embed.conv.parametrizations["weight"]
    v = p.original1.detach().numpy()
    # Initialised so that the weight equals the conv's initial weight.
    np.testing.assert_allclose(p().detach().numpy(), v, rtol=1e-6)
    with ember.no_grad():
        p.original0.mul_(2.0)
    norm = np.sqrt((v ** 2).sum(axis=(0, 1), keepdims=True))
    np.testing.assert_allclose(p().detach().numpy(), 2 * norm * v / norm, rtol=1e-5)
    assert embed(ember.randn(2, 6, 8)).shape == (2, 6, 8)  # even kernel: one frame trimmed


def _wavlm(mode="layer_norm", layer_norm_first=True):
    ember.manual_seed(0)
    return models.wavlm_model(mode, _SMALL_CONV, False, 16, 0.0, 4, 2, 2, 2, 32, 128, 0.0, 32,
                              0.0, 0.0, layer_norm_first, 0.0, None)


def test_wavlm_keys_from_torchaudio():
    keys = list(_wavlm().state_dict())
    first = "encoder.transformer.layers.0.attention."
    second = "encoder.transformer.layers.1.attention."
    assert [k for k in keys if k.startswith(first)] == [first + k for k in (
        "gru_rel_pos_const", "rel_attn_embed.weight", "attention.in_proj_weight",
        "attention.in_proj_bias", "attention.out_proj.weight", "attention.out_proj.bias",
        "gru_rel_pos_linear.weight", "gru_rel_pos_linear.bias")]
    # Only the first layer owns the relative position embedding.
    assert second + "rel_attn_embed.weight" not in keys and second + "gru_rel_pos_const" in keys
    state = _wavlm().state_dict()
    assert state[first + "rel_attn_embed.weight"].shape == (32, 2)
    assert state[first + "gru_rel_pos_linear.weight"].shape == (8, 8)
    assert state[first + "gru_rel_pos_const"].shape == (1, 2, 1, 1)


def _buckets(offsets, num_buckets, max_distance):
    half = num_buckets // 2
    exact = half // 2
    out = []
    for r in offsets:
        base = half if r > 0 else 0
        a = abs(r)
        if a < exact:
            out.append(base + a)
        else:
            large = exact + int(np.log(a / exact) / np.log(max_distance / exact)
                                * (half - exact))
            out.append(base + min(large, half - 1))
    return out


def test_wavlm_relative_position_buckets():
    from emberaudio.models.wav2vec2.wavlm_attention import WavLMSelfAttention
    attention = WavLMSelfAttention(8, 2, has_relative_attention_bias=True, num_buckets=320,
                                   max_distance=800)
    offsets = list(range(-1000, 1001, 7)) + list(range(-90, 91))
    got = attention._relative_positions_bucket(ember.tensor(offsets)).tolist()
    assert got == _buckets(offsets, 320, 800)
    bias = attention.compute_bias(5, 7)
    assert bias.shape == (2, 5, 7)
    np.testing.assert_array_equal(
        bias[:, 1, 3].detach().numpy(),
        attention.rel_attn_embed.weight[_buckets([2], 320, 800)[0]].detach().numpy())


def test_wavlm_shapes_padding_and_gradients():
    model = _wavlm().eval()
    out, lengths = model(ember.randn(2, 400), ember.tensor([400, 215]))
    assert out.shape == (2, 19, 16) and lengths.tolist() == [19, 10]
    audio = ember.randn(1, 215)
    alone, _ = model(audio)
    batch, _ = model(ember.cat([ember.cat([audio, ember.randn(1, 185)], 1),
                                ember.randn(1, 400)]), ember.tensor([215, 400]))
    np.testing.assert_allclose(batch[0, :10].detach().numpy(), alone[0].detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    model.train()
    out, _ = model(ember.randn(2, 400))
    out.pow(2).mean().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and bool(ember.isfinite(p.grad).all()), name


def test_wavlm_base_parameter_count_and_presets():
    import inspect
    model = models.wavlm_base()
    # hubert_base's parameters, plus the relative position embedding (320 buckets x 12
    # heads) and, per layer, the gate (a 64 -> 8 linear and 12 constants).
    assert sum(p.numel() for p in model.parameters()) == (
        94_370_944 + 320 * 12 + 12 * (64 * 8 + 8 + 12))
    # per layer 7 attention entries (in_proj, out_proj, the gate) instead of 8 (q, k, v, out)
    assert len(model.state_dict()) == 210 + 1 - 12
    assert model.encoder.transformer.layers[0].attention.max_distance == 800
    assert inspect.signature(models.wavlm_large).parameters[
        "encoder_ff_interm_dropout"].default == 0.0
    assert inspect.signature(models.wav2vec2_xlsr_1b).parameters[
        "encoder_projection_dropout"].default == 0.1
