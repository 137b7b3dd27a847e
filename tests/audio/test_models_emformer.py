"""emberaudio.models.Emformer, RNNT and RNNTBeamSearch: torchaudio's state-dict keys (written
out from torchaudio's models/emformer.py and rnnt.py), the attention mask against a
query-by-query reference, whole-utterance forward against segment-by-segment streaming,
padding, the LSTM and joiner against closed forms, beam search on a model with known
probabilities. Numbers against torchaudio are in tests/interop/test_audio_models_torchaudio.py.
"""

import math

import numpy as np
import pytest

import ember
from emberaudio.models import RNNT, Emformer, RNNTBeamSearch, emformer_rnnt_model
from emberaudio.models.rnnt import _CustomLSTM, _Joiner, _TimeReduction


def _np(t):
    return t.detach().numpy()

_LAYER_KEYS = ["attention.emb_to_key_value.weight", "attention.emb_to_key_value.bias",
               "attention.emb_to_query.weight", "attention.emb_to_query.bias",
               "attention.out_proj.weight", "attention.out_proj.bias",
               "pos_ff.0.weight", "pos_ff.0.bias", "pos_ff.1.weight", "pos_ff.1.bias",
               "pos_ff.4.weight", "pos_ff.4.bias", "layer_norm_input.weight",
               "layer_norm_input.bias", "layer_norm_output.weight", "layer_norm_output.bias"]


def _emformer(mem=0, dtype=ember.float64, **kwargs):
    ember.manual_seed(0)
    kwargs = {"left_context_length": 3, "right_context_length": 2, **kwargs}
    return Emformer(8, 2, 16, 2, 4, max_memory_size=mem, **kwargs).eval().to(dtype)


def _rnnt_kwargs(**overrides):
    kwargs = dict(input_dim=6, encoding_dim=8, num_symbols=5, segment_length=4,
                  right_context_length=2, time_reduction_input_dim=4, time_reduction_stride=2,
                  transformer_num_heads=2, transformer_ffn_dim=8, transformer_num_layers=2,
                  transformer_dropout=0.0, transformer_activation="gelu",
                  transformer_left_context_length=3, transformer_max_memory_size=0,
                  transformer_weight_init_scale_strategy="depthwise",
                  transformer_tanh_on_mem=True, symbol_embedding_dim=8, num_lstm_layers=2,
                  lstm_layer_norm=True, lstm_layer_norm_epsilon=1e-3, lstm_dropout=0.0)
    kwargs.update(overrides)
    return kwargs


def test_emformer_state_dict_keys_and_shapes():
    state = _emformer().state_dict()
    assert list(state) == [f"emformer_layers.{i}.{k}" for i in range(2) for k in _LAYER_KEYS]
    assert state["emformer_layers.0.attention.emb_to_key_value.weight"].shape == (16, 8)
    assert state["emformer_layers.1.pos_ff.1.weight"].shape == (16, 8)
    assert state["emformer_layers.1.pos_ff.4.weight"].shape == (8, 16)


def _reference_mask(T, S, R, L, M):
    """Query by query, key by key: who may attend to whom (True = masked)."""
    num_segs = math.ceil(T / S)
    use_mem = M > 0
    queries = [("rc", i) for i in range(num_segs) for _ in range(R)]
    queries += [("utt", t // S) for t in range(T)]
    queries += [("summary", i) for i in range(num_segs)] if use_mem else []
    keys = [("mem", j) for j in range(num_segs - 1)] if use_mem else []
    keys += [("rc", i) for i in range(num_segs) for _ in range(R)]
    keys += [("utt", t) for t in range(T)]
    mask = np.ones((len(queries), len(keys)), dtype=bool)
    for qi, (kind, seg) in enumerate(queries):
        for ki, (key_kind, value) in enumerate(keys):
            if key_kind == "mem":
                ok = kind != "summary" and max(seg - M, 0) <= value < seg
            elif key_kind == "rc":
                ok = value == seg
            else:
                ok = max(seg * S - L, 0) <= value < min((seg + 1) * S, T)
            mask[qi, ki] = not ok
    return mask


@pytest.mark.parametrize("T, S, R, L, M", [(12, 4, 2, 3, 0), (10, 4, 2, 3, 2), (7, 3, 1, 0, 1),
                                           (9, 4, 0, 5, 0), (5, 8, 3, 2, 3)])
def test_attention_mask_matches_the_reference(T, S, R, L, M):
    ember.manual_seed(0)
    model = Emformer(4, 1, 4, 1, S, left_context_length=L, right_context_length=R,
                     max_memory_size=M)
    got = model._attention_mask(T, "cpu").detach().numpy()
    np.testing.assert_array_equal(got, _reference_mask(T, S, R, L, M))


@pytest.mark.parametrize("mem", [0, 2])
def test_forward_equals_streaming_infer(mem):
    model = _emformer(mem)
    frames = 12
    x = ember.randn(2, frames + 2, 8, dtype=ember.float64)
    full, lengths = model(x, ember.tensor([frames, frames]))
    assert full.shape == (2, frames, 8) and lengths.tolist() == [frames, frames]
    states, outputs = None, []
    for start in range(0, frames, 4):
        out, out_lengths, states = model.infer(x[:, start:start + 6], ember.tensor([6, 6]),
                                               states)
        assert out_lengths.tolist() == [4, 4]
        outputs.append(out)
    np.testing.assert_allclose(_np(ember.cat(outputs, 1)), _np(full), atol=1e-12)
    # the state of each layer: memories, left-context keys and values, frames seen
    assert [tuple(s.shape) for s in states[0]] == [(mem, 2, 8), (3, 2, 8), (3, 2, 8), (1, 2)]
    assert states[0][3].tolist() == [[12, 12]]


def test_batch_elements_are_independent():
    model = _emformer(2)
    x = ember.randn(3, 14, 8, dtype=ember.float64)
    batched, _ = model(x, ember.tensor([12, 12, 12]))
    for b in range(3):
        alone, _ = model(x[b:b + 1], ember.tensor([12]))
        np.testing.assert_allclose(_np(batched[b]), _np(alone[0]), atol=1e-12)


def test_padded_frames_are_masked_out():
    # Element 1 has 5 valid frames. Frames 6, 7, 10 and 11 lie in no right-context block of a
    # valid segment (blocks: 4-5, 8-9, 12-13); only the padding mask hides them from frame 4.
    model = _emformer()
    x = ember.randn(2, 14, 8, dtype=ember.float64)
    lengths = ember.tensor([12, 5])
    before, _ = model(x, lengths)
    changed = x.clone()
    changed[1, [6, 7, 10, 11]] = 100.0
    after, _ = model(changed, lengths)
    np.testing.assert_allclose(_np(after[1, :5]), _np(before[1, :5]), atol=1e-12)
    assert not np.allclose(after[1, 5:].detach().numpy(), before[1, 5:].detach().numpy())


def test_emformer_gradients_reach_every_parameter():
    model = _emformer(2).train()
    x = ember.randn(2, 10, 8, dtype=ember.float64, requires_grad=True)
    out, _ = model(x, ember.tensor([8, 8]))
    out.square().sum().backward()
    assert x.grad is not None and np.isfinite(x.grad.detach().numpy()).all()
    for name, p in model.named_parameters():
        assert p.grad is not None and np.abs(p.grad.detach().numpy()).sum() > 0, name


def test_emformer_errors():
    with pytest.raises(ValueError, match="multiple of num_heads"):
        Emformer(6, 4, 8, 1, 4)
    with pytest.raises(ValueError, match="Unsupported activation"):
        Emformer(8, 2, 8, 1, 4, activation="tanh")
    with pytest.raises(ValueError, match="weight_init_scale_strategy"):
        Emformer(8, 2, 8, 1, 4, weight_init_scale_strategy="wide")
    model = _emformer()
    with pytest.raises(ValueError, match="expected size of 6"):
        model.infer(ember.randn(1, 5, 8, dtype=ember.float64), ember.tensor([5]))
    with pytest.raises(ValueError, match="right_context_length"):
        model(ember.randn(1, 2, 8, dtype=ember.float64), ember.tensor([0]))


def test_weight_init_strategy_scales_the_attention():
    ember.manual_seed(0)
    deep = Emformer(64, 2, 8, 4, 4)
    w = [deep.emformer_layers[i].attention.emb_to_query.weight.detach().numpy()
         for i in range(4)]
    bound = [math.sqrt(6 / 128) / math.sqrt(i + 1) for i in range(4)]  # xavier, gain 1/sqrt(l)
    for weights, b in zip(w, bound):
        assert np.abs(weights).max() <= b and np.abs(weights).max() > 0.8 * b


# -- RNNT -------------------------------------------------------------------------------------

def test_rnnt_state_dict_keys_and_shapes():
    ember.manual_seed(0)
    state = emformer_rnnt_model(**_rnnt_kwargs()).state_dict()
    expected = (["transcriber.input_linear.weight"]
                + [f"transcriber.transformer.emformer_layers.{i}.{k}" for i in range(2)
                   for k in _LAYER_KEYS]
                + ["transcriber.output_linear.weight", "transcriber.output_linear.bias",
                   "transcriber.layer_norm.weight", "transcriber.layer_norm.bias",
                   "predictor.embedding.weight", "predictor.input_layer_norm.weight",
                   "predictor.input_layer_norm.bias"]
                + [f"predictor.lstm_layers.{i}.{k}" for i in range(2)
                   for k in ("x2g.weight", "p2g.weight", "c_norm.weight", "c_norm.bias",
                             "g_norm.weight", "g_norm.bias")]
                + ["predictor.linear.weight", "predictor.linear.bias",
                   "predictor.output_layer_norm.weight", "predictor.output_layer_norm.bias",
                   "joiner.linear.weight", "joiner.linear.bias"])
    assert list(state) == expected
    assert state["transcriber.input_linear.weight"].shape == (4, 6)
    assert state["transcriber.output_linear.weight"].shape == (8, 8)   # 4 * stride 2 -> 8
    assert state["predictor.lstm_layers.0.x2g.weight"].shape == (32, 8)
    assert state["joiner.linear.weight"].shape == (5, 8)


def test_rnnt_base_architecture():
    ember.manual_seed(0)
    from emberaudio.models import emformer_rnnt_base

    model = emformer_rnnt_base(num_symbols=7)
    transformer = model.transcriber.transformer
    assert len(transformer.emformer_layers) == 20
    assert (transformer.segment_length, transformer.right_context_length,
            transformer.left_context_length, transformer.max_memory_size) == (4, 1, 30, 0)
    assert model.transcriber.input_linear.weight.shape == (128, 80)
    assert model.predictor.embedding.weight.shape == (7, 512)
    assert len(model.predictor.lstm_layers) == 3
    assert model.predictor.lstm_layers[0].c_norm.eps == 1e-3
    assert model.joiner.linear.weight.shape == (7, 1024)
    assert transformer.emformer_layers[0].attention.tanh_on_mem


def test_time_reduction():
    x = ember.arange(2 * 7 * 3, dtype=ember.float32).reshape(2, 7, 3)
    out, lengths = _TimeReduction(3)(x, ember.tensor([7, 5]))
    np.testing.assert_array_equal(out.detach().numpy(), x.detach().numpy()[:, :6].reshape(2, 2, 9))
    assert lengths.tolist() == [2, 1]


def test_custom_lstm_without_norms_is_an_lstm():
    ember.manual_seed(0)
    lstm = _CustomLSTM(3, 4)
    cell = ember.nn.LSTMCell(3, 4)
    with ember.no_grad():
        cell.weight_ih.copy_(lstm.x2g.weight)
        cell.bias_ih.copy_(lstm.x2g.bias)
        cell.weight_hh.copy_(lstm.p2g.weight)
        cell.bias_hh.zero_()
    x = ember.randn(5, 2, 3)
    out, (h, c) = lstm(x, None)
    state = (ember.zeros(2, 4), ember.zeros(2, 4))
    for t in range(5):
        state = cell(x[t], state)
        np.testing.assert_allclose(out[t].detach().numpy(), state[0].detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.detach().numpy(), state[1].detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    _, first_state = lstm(x[:3], None)
    rest, _ = lstm(x[3:], first_state)
    np.testing.assert_allclose(rest.detach().numpy(), out[3:].detach().numpy(), atol=1e-6)


def test_joiner_closed_form():
    ember.manual_seed(0)
    joiner = _Joiner(4, 3, activation="tanh")
    source, target = ember.randn(2, 5, 4), ember.randn(2, 3, 4)
    out, sl, tl = joiner(source, ember.tensor([5, 4]), target, ember.tensor([3, 1]))
    w, b = joiner.linear.weight.detach().numpy(), joiner.linear.bias.detach().numpy()
    expected = np.tanh(_np(source)[:, :, None] + _np(target)[:, None]) @ w.T + b
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    assert sl.tolist() == [5, 4] and tl.tolist() == [3, 1]
    with pytest.raises(ValueError, match="Unsupported activation"):
        _Joiner(4, 3, activation="gelu")


def test_rnnt_forward_and_methods_agree():
    ember.manual_seed(0)
    model = emformer_rnnt_model(**_rnnt_kwargs()).eval()
    sources = ember.randn(2, 14, 6)
    targets = ember.randint(0, 4, (2, 3))
    output, source_lengths, target_lengths, state = model(
        sources, ember.tensor([12, 12]), targets, ember.tensor([3, 2]))
    assert output.shape == (2, 6, 3, 5)
    assert source_lengths.tolist() == [6, 6] and target_lengths.tolist() == [3, 2]
    assert len(state) == 2 and [tuple(s.shape) for s in state[0]] == [(2, 8), (2, 8)]
    enc, enc_lengths = model.transcribe(sources, ember.tensor([12, 12]))
    pred, _, _ = model.predict(targets, ember.tensor([3, 2]), None)
    joined, _, _ = model.join(enc, enc_lengths, pred, ember.tensor([3, 2]))
    np.testing.assert_allclose(joined.detach().numpy(), output.detach().numpy(), atol=1e-6)
    # predicting token by token with the carried state gives the same encodings
    step_state, steps = None, []
    for u in range(3):
        out, _, step_state = model.predict(targets[:, u:u + 1], ember.tensor([1, 1]),
                                           step_state)
        steps.append(out)
    np.testing.assert_allclose(ember.cat(steps, 1).detach().numpy(), pred.detach().numpy(),
                               atol=1e-6)


def test_rnnt_streaming_transcription_equals_whole():
    ember.manual_seed(0)
    model = emformer_rnnt_model(**_rnnt_kwargs()).eval().double()
    sources = ember.randn(1, 14, 6, dtype=ember.float64)
    whole, _ = model.transcribe(sources, ember.tensor([12]))
    state, parts = None, []
    for start in range(0, 12, 4):
        out, lengths, state = model.transcribe_streaming(sources[:, start:start + 6],
                                                         ember.tensor([6]), state)
        assert lengths.tolist() == [2]
        parts.append(out)
    np.testing.assert_allclose(_np(ember.cat(parts, 1)), _np(whole), atol=1e-10)


# -- beam search --------------------------------------------------------------------------

def _constant_model(logits):
    """An RNN-T whose joint network outputs ``logits`` whatever its inputs."""
    ember.manual_seed(0)
    model = emformer_rnnt_model(**_rnnt_kwargs()).eval()
    with ember.no_grad():
        model.joiner.linear.weight.zero_()
        model.joiner.linear.bias.copy_(ember.tensor(logits))
    return model


def test_beam_search_one_frame_closed_form():
    logits = [0.5, 2.0, 1.0, -1.0, 1.5]               # blank = 4
    logp = np.log(np.exp(logits) / np.exp(logits).sum()).astype(np.float32)
    decoder = RNNTBeamSearch(_constant_model(logits), blank=4, step_max_tokens=1)
    with ember.no_grad():
        # 4 input frames -> 2 after the time reduction: one frame and one of right context
        hypos = decoder(ember.randn(4, 6), ember.tensor(2), 3)
    # One frame, at most one token: the blank alone (score p_blank, 1 token) or one of the
    # three best tokens then the blank (p_k + p_blank, 2 tokens), ranked by score / (len + 1).
    candidates = {(4,): logp[4]} | {(4, k): logp[k] + logp[4] for k in (1, 2, 0)}
    ranked = sorted(candidates, key=lambda t: candidates[t] / (len(t) + 1), reverse=True)[:3]
    assert [tuple(h[0]) for h in hypos] == ranked
    for h in hypos:
        assert h[3] == pytest.approx(float(candidates[tuple(h[0])]), abs=1e-5)
        assert h[1].shape == (1, 8) and len(h[2]) == 2


def test_beam_search_blank_dominant_emits_nothing():
    decoder = RNNTBeamSearch(_constant_model([-5.0, -5.0, -5.0, -5.0, 5.0]), blank=4)
    with ember.no_grad():
        hypos = decoder(ember.randn(1, 14, 6), ember.tensor([12]), 1)
    assert len(hypos) == 1 and hypos[0][0] == [4]
    # six frames of blank, each log(e^5 / (e^5 + 4 e^-5)) (float32 log-softmax)
    assert hypos[0][3] == pytest.approx(6 * math.log(np.exp(5) / (np.exp(5) + 4 * np.exp(-5))),
                                        abs=2e-6)


def test_beam_search_streaming_and_sort_key():
    ember.manual_seed(1)
    model = emformer_rnnt_model(**_rnnt_kwargs()).eval()
    decoder = RNNTBeamSearch(model, blank=4, hypo_sort_key=lambda h: h[3])
    with ember.no_grad():
        hypos = decoder(ember.randn(14, 6), ember.tensor(12), 3)
        assert 1 <= len(hypos) <= 3
        assert [h[3] for h in hypos] == sorted((h[3] for h in hypos), reverse=True)
        assert all(h[0][0] == 4 and h[3] <= 0 for h in hypos)
        streamed, state = decoder.infer(ember.randn(6, 6), ember.tensor(6), 3)
        more, state = decoder.infer(ember.randn(1, 6, 6), ember.tensor([6]), 3, state=state,
                                    hypothesis=streamed)
    # continuing a stream extends the previous hypotheses
    assert all(any(h[0][:len(p[0])] == p[0] for p in streamed) for h in more)
    with pytest.raises(ValueError, match="input must be of shape"):
        decoder(ember.randn(2, 14, 6), ember.tensor(12), 3)
    with pytest.raises(ValueError, match="length must be of shape"):
        decoder(ember.randn(14, 6), ember.tensor([12, 12]), 3)


def test_rnnt_class_is_exported():
    assert issubclass(RNNT, ember.nn.Module)
