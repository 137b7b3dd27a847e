"""emberaudio.functional against torchaudio.functional on the same signals (float32).

Runs where torchaudio is installed (`nox -s audio_torchaudio`); skipped elsewhere.
"""

import math

import numpy as np
import pytest

import ember
import emberaudio.functional as EF

torch = pytest.importorskip("torch")
torchaudio = pytest.importorskip("torchaudio")
TF = torchaudio.functional

RNG = np.random.default_rng(1234)
WAVE = (RNG.uniform(-0.6, 0.6, (2, 3, 700))).astype(np.float32)
SPEC = RNG.uniform(0.0, 4.0, (2, 3, 20, 30)).astype(np.float32)
STEREO = (RNG.uniform(-0.6, 0.6, (2, 400))).astype(np.float32)


def _both(array):
    return ember.from_numpy(array.copy()), torch.from_numpy(array.copy())


def _numpy(result):
    if isinstance(result, tuple):
        return tuple(_numpy(r) for r in result)
    if result is None or isinstance(result, (int, float)):
        return result
    return result.detach().numpy() if hasattr(result, "detach") else np.asarray(result)


# (id, function name, input array, positional args after the input, keyword args)
CASES = [
    ("amplitude_to_DB", "amplitude_to_DB", SPEC, (10.0, 1e-10, 0.0), {}),
    ("amplitude_to_DB_top", "amplitude_to_DB", SPEC, (20.0, 1e-5, 0.3, 6.0), {}),
    ("DB_to_amplitude", "DB_to_amplitude", SPEC, (2.0, 0.5), {}),
    ("mu_law_decoding", "mu_law_decoding", np.arange(256, dtype=np.float32), (256,), {}),
    ("compute_deltas", "compute_deltas", SPEC, (), {}),
    ("compute_deltas_7", "compute_deltas", SPEC, (7,), {}),
    ("lfilter", "lfilter", WAVE, None, {}),
    ("lowpass", "lowpass_biquad", WAVE, (8000, 1000.0), {}),
    ("highpass", "highpass_biquad", WAVE, (8000, 500.0, 0.5), {}),
    ("allpass", "allpass_biquad", WAVE, (8000, 700.0), {}),
    ("bandpass", "bandpass_biquad", WAVE, (8000, 1200.0, 1.2), {}),
    ("bandpass_skirt", "bandpass_biquad", WAVE, (8000, 1200.0, 1.2, True), {}),
    ("bandreject", "bandreject_biquad", WAVE, (8000, 1500.0), {}),
    ("band", "band_biquad", WAVE, (8000, 900.0), {}),
    ("band_noise", "band_biquad", WAVE, (8000, 900.0, 0.9, True), {}),
    ("bass", "bass_biquad", WAVE, (8000, 6.0), {}),
    ("treble", "treble_biquad", WAVE, (8000, -4.0, 2500.0), {}),
    ("equalizer", "equalizer_biquad", WAVE, (8000, 1000.0, 5.0, 0.9), {}),
    ("deemph", "deemph_biquad", WAVE, (44100,), {}),
    ("riaa", "riaa_biquad", WAVE, (48000,), {}),
    ("contrast", "contrast", WAVE, (60.0,), {}),
    ("dcshift", "dcshift", WAVE, (0.5,), {}),
    ("dcshift_limit_pos", "dcshift", WAVE, (0.6, 0.05), {}),
    ("dcshift_limit_neg", "dcshift", WAVE, (-0.6, 0.05), {}),
    ("gain", "gain", WAVE, (3.5,), {}),
    ("overdrive", "overdrive", WAVE, (15, 30), {}),
    ("phaser", "phaser", WAVE[..., :300], (8000,), {}),
    ("phaser_triangle", "phaser", WAVE[..., :300], (8000, 0.5, 0.7, 2.0, 0.5, 1.0, False), {}),
    ("flanger", "flanger", STEREO, (8000,), {}),
    ("flanger_quadratic", "flanger", STEREO,
     (8000, 1.0, 3.0, 30.0, 60.0, 2.0, 50.0, "triangular", "quadratic"), {}),
    ("preemphasis", "preemphasis", WAVE, (), {}),
    ("deemphasis", "deemphasis", WAVE, (0.9,), {}),
    ("resample_down", "resample", WAVE, (44100, 16000), {}),
    ("resample_up", "resample", WAVE, (16000, 22050), {}),
    ("resample_kaiser", "resample", WAVE, (48000, 16000), {
        "resampling_method": "sinc_interp_kaiser", "lowpass_filter_width": 8,
        "rolloff": 0.9, "beta": 12.0}),
    ("resample_kaiser_default", "resample", WAVE, (8000, 12000),
     {"resampling_method": "sinc_interp_kaiser"}),
    ("speed", "speed", WAVE, (16000, 1.1), {}),
    ("loudness", "loudness", RNG.uniform(-0.5, 0.5, (2, 3, 4000)).astype(np.float32), (8000,),
     {}),
    ("sliding_window_cmn", "sliding_window_cmn", SPEC[0, 0], (), {}),
    ("sliding_window_cmn_center", "sliding_window_cmn", SPEC, (10, 5, True, True), {}),
    ("sliding_window_cmn_left", "sliding_window_cmn", SPEC, (8, 4, False, True), {}),
]


def _lfilter_args(lib):
    a = lib.tensor([1.0, -1.2, 0.5])
    b = lib.tensor([0.3, 0.2, 0.1])
    return (a, b)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_torchaudio(case):
    _, name, array, args, kwargs = case
    ours_in, theirs_in = _both(np.ascontiguousarray(array))
    ours_args = _lfilter_args(ember) if args is None else args
    theirs_args = _lfilter_args(torch) if args is None else args
    ours = _numpy(getattr(EF, name)(ours_in, *ours_args, **kwargs))
    theirs = _numpy(getattr(TF, name)(theirs_in, *theirs_args, **kwargs))
    if isinstance(theirs, tuple):
        theirs = theirs[0]
        ours = ours[0]
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("kwargs", [
    dict(n_freqs=201, f_min=0.0, f_max=8000.0, n_mels=40, sample_rate=16000),
    dict(n_freqs=257, f_min=20.0, f_max=7600.0, n_mels=64, sample_rate=16000, norm="slaney",
         mel_scale="slaney"),
    dict(n_freqs=129, f_min=50.0, f_max=4000.0, n_mels=23, sample_rate=8000, norm="slaney"),
])
def test_melscale_fbanks(kwargs):
    np.testing.assert_allclose(EF.melscale_fbanks(**kwargs).numpy(),
                               TF.melscale_fbanks(**kwargs).numpy(), rtol=1e-4, atol=1e-6)


def test_linear_fbanks_and_create_dct():
    np.testing.assert_allclose(EF.linear_fbanks(101, 10.0, 3000.0, 12, 8000).numpy(),
                               TF.linear_fbanks(101, 10.0, 3000.0, 12, 8000).numpy(),
                               rtol=1e-5, atol=1e-6)
    for norm in (None, "ortho"):
        np.testing.assert_allclose(EF.create_dct(13, 40, norm).numpy(),
                                   TF.create_dct(13, 40, norm).numpy(), rtol=1e-5, atol=1e-6)


def test_mu_law_encoding_exact():
    x = np.linspace(-1, 1, 1001, dtype=np.float32)
    ours, theirs = _both(x)
    np.testing.assert_array_equal(EF.mu_law_encoding(ours, 256).numpy(),
                                  TF.mu_law_encoding(theirs, 256).numpy())


def test_lfilter_batched_and_unbatched_coefficients():
    a = np.array([[1.0, -0.5, 0.1], [1.0, 0.3, -0.2], [2.0, 0.1, 0.05]], dtype=np.float32)
    b = np.array([[0.4, 0.2, 0.1], [0.5, -0.2, 0.0], [1.0, 0.0, 0.3]], dtype=np.float32)
    for batching in (True, False):
        ours = EF.lfilter(ember.from_numpy(WAVE.copy()), ember.from_numpy(a),
                          ember.from_numpy(b), clamp=False, batching=batching)
        theirs = TF.lfilter(torch.from_numpy(WAVE.copy()), torch.from_numpy(a),
                            torch.from_numpy(b), clamp=False, batching=batching)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=2e-5)
    ours = EF.filtfilt(ember.from_numpy(WAVE.copy()), ember.from_numpy(a), ember.from_numpy(b))
    theirs = TF.filtfilt(torch.from_numpy(WAVE.copy()), torch.from_numpy(a), torch.from_numpy(b))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=2e-5)


def test_lfilter_gradients_match():
    x = RNG.uniform(-0.5, 0.5, (2, 200))
    a = np.array([1.0, -0.6, 0.2])
    b = np.array([0.5, 0.3, -0.1])
    grads = []
    for lib in (ember, torch):
        xs = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in (x, a, b)]
        out = EF.lfilter(*xs, clamp=False) if lib is ember else TF.lfilter(*xs, clamp=False)
        (out * lib.tensor(np.cos(np.arange(200)), dtype=lib.float64)).sum().backward()
        grads.append([t.grad.detach().numpy() for t in xs])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_convolve(mode):
    x = RNG.standard_normal((2, 1, 50)).astype(np.float32)
    y = RNG.standard_normal((1, 3, 13)).astype(np.float32)
    for first, second in ((x, y), (y, x)):
        ours = EF.convolve(ember.from_numpy(first), ember.from_numpy(second), mode)
        theirs = TF.convolve(torch.from_numpy(first), torch.from_numpy(second), mode)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-5)


def test_add_noise_with_lengths():
    wave = RNG.standard_normal((3, 100)).astype(np.float32)
    noise = RNG.standard_normal((3, 100)).astype(np.float32)
    snr = np.array([10.0, 0.0, -3.0], dtype=np.float32)
    lengths = np.array([100, 60, 20])
    ours = EF.add_noise(*(ember.from_numpy(v) for v in (wave, noise, snr, lengths)))
    theirs = TF.add_noise(*(torch.from_numpy(v) for v in (wave, noise, snr, lengths)))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-5)


def test_detect_pitch_frequency():
    t = np.arange(8000) / 8000
    tone = np.stack([np.sin(2 * math.pi * 220 * t), np.sin(2 * math.pi * 440 * t)])
    tone = tone.astype(np.float32)
    ours = EF.detect_pitch_frequency(ember.from_numpy(tone), 8000)
    theirs = TF.detect_pitch_frequency(torch.from_numpy(tone), 8000)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5)


def test_edit_distance():
    for a, b in (("kitten", "sitting"), (["a", "b", "c"], ["a", "c"]), ("", "abc")):
        assert EF.edit_distance(a, b) == TF.edit_distance(a, b)


@pytest.mark.parametrize("seed", range(6))
def test_forced_align_and_merge_tokens(seed):
    rng = np.random.default_rng(seed)
    frames, classes = 40, 6
    logits = rng.standard_normal((1, frames, classes)).astype(np.float32) * 3
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = rng.integers(1, classes, (1, 7)).astype(np.int32)
    if seed % 2:
        targets[0, 3] = targets[0, 2]  # a repeat
    ours = EF.forced_align(ember.from_numpy(log_probs), ember.from_numpy(targets))
    theirs = TF.forced_align(torch.from_numpy(log_probs), torch.from_numpy(targets))
    np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
    np.testing.assert_allclose(ours[1].numpy(), theirs[1].numpy(), rtol=1e-6)
    our_spans = EF.merge_tokens(ours[0][0], ours[1][0].exp())
    their_spans = TF.merge_tokens(theirs[0][0], theirs[1][0].exp())
    assert [(s.token, s.start, s.end) for s in our_spans] == [
        (s.token, s.start, s.end) for s in their_spans]
    np.testing.assert_allclose([s.score for s in our_spans], [s.score for s in their_spans],
                               rtol=1e-5)


@pytest.mark.parametrize("fused, clamp, reduction", [(True, -1, "mean"), (False, -1, "none"),
                                                      (True, 0.05, "sum")])
def test_rnnt_loss(fused, clamp, reduction):
    rng = np.random.default_rng(11)
    logits = rng.standard_normal((3, 6, 4, 5)).astype(np.float32)
    if not fused:
        logits = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = rng.integers(1, 5, (3, 3)).astype(np.int32)
    logit_lengths = np.array([6, 4, 5], dtype=np.int32)
    target_lengths = np.array([3, 2, 0], dtype=np.int32)
    outs, grads = [], []
    for lib, fn in ((ember, EF.rnnt_loss), (torch, TF.rnnt_loss)):
        x = lib.tensor(logits, requires_grad=True)
        loss = fn(x, *(lib.tensor(v) for v in (targets, logit_lengths, target_lengths)),
                  blank=0, clamp=clamp, reduction=reduction,
                  fused_log_softmax=fused)
        loss.sum().backward()
        outs.append(loss.detach().numpy())
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-6)
