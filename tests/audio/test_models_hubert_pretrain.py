"""emberaudio.models.HuBERTPretrainModel: torchaudio's state-dict keys, the span masks
(counts, lengths, padding, spacing), the logits against NumPy cosine similarities, the
frames split into masked and unmasked, the feature-gradient scaling, the presets' settings.
"""

import numpy as np
import pytest

import ember
from emberaudio import models
from emberaudio.models.wav2vec2 import hubert_pretrain as hp


def _np(t):
    return t.detach().numpy()


def _kwargs(**overrides):
    kwargs = dict(extractor_mode="group_norm", extractor_conv_layer_config=[(8, 10, 5),
                                                                            (8, 3, 2)],
                  extractor_conv_bias=False, encoder_embed_dim=8,
                  encoder_projection_dropout=0.0, encoder_pos_conv_kernel=4,
                  encoder_pos_conv_groups=2, encoder_num_layers=1, encoder_num_heads=2,
                  encoder_attention_dropout=0.0, encoder_ff_interm_features=12,
                  encoder_ff_interm_dropout=0.0, encoder_dropout=0.0,
                  encoder_layer_norm_first=False, encoder_layer_drop=0.0, mask_prob=0.5,
                  mask_selection="static", mask_other=0.0, mask_length=3,
                  no_mask_overlap=False, mask_min_space=1, mask_channel_prob=0.0,
                  mask_channel_selection="static", mask_channel_other=0.0,
                  mask_channel_length=2, no_mask_channel_overlap=False,
                  mask_channel_min_space=1, skip_masked=False, skip_nomask=False,
                  num_classes=6, final_dim=4, feature_grad_mult=None)
    kwargs.update(overrides)
    return kwargs


def _model(**overrides):
    ember.manual_seed(0)
    return models.hubert_pretrain_model(**_kwargs(**overrides))


def test_state_dict_keys_and_shapes():
    state = _model().state_dict()
    w2v = models.wav2vec2_model(**{k: v for k, v in _kwargs().items()
                                   if k.startswith(("extractor", "encoder"))},
                                aux_num_out=None).state_dict()
    assert list(state) == [f"wav2vec2.{k}" for k in w2v] + [
        "mask_generator.mask_embedding", "logit_generator.label_embeddings",
        "logit_generator.final_proj.weight", "logit_generator.final_proj.bias"]
    assert state["mask_generator.mask_embedding"].shape == (8,)
    assert state["logit_generator.label_embeddings"].shape == (6, 4)
    assert state["logit_generator.final_proj.weight"].shape == (4, 8)


def test_forward_splits_the_valid_frames():
    model = _model()
    waveforms = ember.randn(2, 800)
    labels = ember.randint(0, 6, (2, 79))          # 800 samples -> 159 -> 79 frames
    ember.manual_seed(1)
    logit_m, logit_u, penalty = model(waveforms, labels, ember.tensor([800, 600]))
    valid = 79 + 59                                # 600 samples -> 119 -> 59 frames
    assert logit_m.shape[1] == logit_u.shape[1] == 7   # the label and the 6 classes
    assert logit_m.shape[0] + logit_u.shape[0] == valid
    assert logit_m.shape[0] > 0
    features, _ = model.wav2vec2.feature_extractor(waveforms, None)
    assert penalty.item() == pytest.approx(float((_np(features) ** 2).mean()), rel=1e-5)
    with pytest.raises(ValueError, match="length of label"):
        model(waveforms, labels[:, :70])


def test_without_masking_every_frame_is_unmasked():
    model = _model(mask_prob=0.0)
    logit_m, logit_u, _ = model(ember.randn(1, 800), ember.randint(0, 6, (1, 79)))
    assert logit_m.shape == (0, 7) and logit_u.shape == (79, 7)


def test_logits_against_numpy():
    ember.manual_seed(0)
    embeddings = ember.randn(5, 3)
    proj = ember.randn(4, 3)
    target = ember.tensor([0, 2, 2, 4])
    got = _np(hp._compute_logits(proj, target, embeddings))
    e, x = _np(embeddings), _np(proj)

    def cos(a, b):
        return (a * b).sum(-1) / np.maximum(np.linalg.norm(a, axis=-1)
                                            * np.linalg.norm(b, axis=-1), 1e-8)

    expected = np.empty((4, 6), dtype=np.float32)
    for i in range(4):
        expected[i, 0] = cos(x[i], e[target[i].item()]) / 0.1
        for c in range(5):
            expected[i, c + 1] = -np.inf if c == target[i].item() else cos(x[i], e[c]) / 0.1
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_mask_indices_static_spans():
    ember.manual_seed(0)
    mask = _np(hp._compute_mask_indices((4, 60), None, 0.5, 5, min_masks=2))
    counts = mask.sum(1)
    assert np.all(counts == counts[0]) and counts[0] >= 5
    # about mask_prob of the frames before overlaps: 6 spans of 5, so at most 30
    assert counts[0] <= 30


def test_mask_indices_respect_padding():
    ember.manual_seed(0)
    padding = ember.arange(40).expand(3, 40) >= ember.tensor([40, 25, 12])[:, None]
    mask = _np(hp._compute_mask_indices((3, 40), padding, 0.6, 3, min_masks=1))
    assert not np.any(mask & _np(padding))
    assert np.all(mask.sum(1) == mask.sum(1)[0]) and mask.sum() > 0


def test_mask_indices_without_overlap_keep_spans_apart():
    ember.manual_seed(0)
    for _ in range(5):
        mask = _np(hp._compute_mask_indices((1, 80), None, 0.3, 4, min_masks=2,
                                            no_overlap=True, min_space=2))[0]
        edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(int), [0]])))
        starts, ends = edges[::2], edges[1::2]
        assert np.all(ends - starts == 4)                    # whole spans, none merged
        assert np.all(starts[1:] - ends[:-1] >= 2)


@pytest.mark.parametrize("kind", ["uniform", "normal", "poisson"])
def test_mask_indices_other_length_distributions(kind):
    ember.manual_seed(0)
    mask = _np(hp._compute_mask_indices((2, 50), None, 0.4, 3, kind, 1.0, min_masks=1))
    assert mask.sum(1)[0] == mask.sum(1)[1] > 0
    with pytest.raises(ValueError, match="unknown mask selection"):
        hp._compute_mask_indices((2, 50), None, 0.4, 3, "gamma")


def test_mask_generator_uses_the_embedding_and_zeroes_channels():
    ember.manual_seed(0)
    generator = hp.MaskGenerator(6, 0.5, "static", 0.0, 3, False, 1, 0.5, "static", 0.0, 2,
                                 False, 1)
    x = ember.randn(2, 30, 6) + 10                   # no zeros of its own
    out, mask = generator(x, None)
    out, mask = _np(out), _np(mask)
    embedding = _np(generator.mask_embedding)
    masked_rows = out[mask]
    zero = masked_rows == 0                          # masked channels win over the embedding
    np.testing.assert_allclose(np.where(zero, 0, masked_rows),
                               np.where(zero, 0, np.broadcast_to(embedding, masked_rows.shape)))
    channels_zeroed = (out == 0).all(1)              # (batch, channels)
    assert channels_zeroed.any()
    kept = ~mask[:, :, None] & ~channels_zeroed[:, None, :]
    np.testing.assert_allclose(out[kept], _np(x)[kept])


def test_feature_grad_mult_scales_the_feature_extractor_gradient():
    grads = []
    for mult in (None, 0.25):
        model = _model(feature_grad_mult=mult)
        ember.manual_seed(5)
        logit_m, logit_u, pen = model(ember.randn(1, 800), ember.randint(0, 6, (1, 79)))
        (logit_m.logsumexp(-1).sum() + logit_u.logsumexp(-1).sum() + pen).backward()
        grads.append(_np(model.wav2vec2.feature_extractor.conv_layers[0].conv.weight.grad))
        final = model.logit_generator.final_proj.weight.grad
        assert final is not None and np.abs(_np(final)).sum() > 0
    np.testing.assert_allclose(grads[1], 0.25 * grads[0], rtol=1e-4, atol=1e-7)
    with pytest.raises(ValueError, match="feature_grad_mult"):
        _model(feature_grad_mult=1.5)


@pytest.mark.parametrize("name, expected", [
    ("hubert_pretrain_base", dict(extractor_mode="group_norm", encoder_embed_dim=768,
                                  encoder_num_layers=12, final_dim=256, num_classes=100,
                                  feature_grad_mult=0.1, encoder_layer_drop=0.05,
                                  encoder_layer_norm_first=False)),
    ("hubert_pretrain_large", dict(extractor_mode="layer_norm", encoder_embed_dim=1024,
                                   encoder_num_layers=24, final_dim=768, num_classes=500,
                                   feature_grad_mult=None, encoder_layer_norm_first=True)),
    ("hubert_pretrain_xlarge", dict(extractor_mode="layer_norm", encoder_embed_dim=1280,
                                    encoder_num_layers=48, encoder_ff_interm_features=5120,
                                    final_dim=1024, num_classes=500)),
])
def test_presets(monkeypatch, name, expected):
    seen = {}
    monkeypatch.setattr(hp, "hubert_pretrain_model", lambda **kw: seen.update(kw))
    getattr(hp, name)()
    assert {k: seen[k] for k in expected} == expected
    assert (seen["mask_prob"], seen["mask_length"], seen["mask_selection"]) == (0.8, 10,
                                                                                "static")
    assert seen["extractor_conv_layer_config"] is None
