"""emberaudio.functional's non-filter ops against closed forms, SciPy and librosa."""

import numpy as np
import pytest

import ember
import emberaudio.functional as F
from ember.autograd import gradcheck

RNG = np.random.default_rng(3)


def _t(array, dtype=ember.float64, grad=False):
    return ember.tensor(np.asarray(array), dtype=dtype, requires_grad=grad)


def test_amplitude_to_db_and_back():
    x = RNG.uniform(1e-3, 10.0, (2, 3, 5, 7))
    db = F.amplitude_to_DB(_t(x), 10.0, 1e-10, 0.0).numpy()
    np.testing.assert_allclose(db, 10 * np.log10(x))
    np.testing.assert_allclose(F.DB_to_amplitude(_t(db), 1.0, 1.0).numpy(), x)
    np.testing.assert_allclose(F.DB_to_amplitude(_t(db), 1.0, 0.5).numpy(), np.sqrt(x))
    capped = F.amplitude_to_DB(_t(x), 20.0, 1e-10, 0.0, top_db=10.0).numpy()
    peak = (20 * np.log10(x)).max(axis=(1, 2, 3), keepdims=True)
    np.testing.assert_allclose(capped, np.maximum(20 * np.log10(x), peak - 10.0))
    assert gradcheck(lambda v: F.amplitude_to_DB(v, 10.0, 1e-10, 0.5), (_t(x[0, 0], grad=True),))


def test_mu_law_round_trip_and_closed_form():
    x = np.linspace(-1, 1, 513, dtype=np.float32)
    codes = F.mu_law_encoding(ember.from_numpy(x), 256)
    assert codes.dtype == ember.int64 and int(codes.min()) == 0 and int(codes.max()) == 255
    mu = 255.0
    expected = ((np.sign(x) * np.log1p(mu * np.abs(x)) / np.log1p(mu) + 1) / 2 * mu + 0.5)
    np.testing.assert_array_equal(codes.numpy(), expected.astype(np.int64))
    decoded = F.mu_law_decoding(codes, 256).numpy()
    assert decoded.dtype == np.float32
    assert np.abs(decoded - x).max() < 0.02


def test_melscale_fbanks_matches_librosa():
    librosa = pytest.importorskip("librosa")
    for htk, norm in ((True, None), (False, "slaney")):
        ours = F.melscale_fbanks(257, 0.0, 8000.0, 40, 16000, norm=norm,
                                 mel_scale="htk" if htk else "slaney").numpy()
        theirs = librosa.filters.mel(sr=16000, n_fft=512, n_mels=40, fmin=0.0, fmax=8000.0,
                                     htk=htk, norm=norm).T
        np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-5)


def test_melscale_fbanks_shapes_warning_and_errors():
    fb = F.melscale_fbanks(201, 0.0, 8000.0, 40, 16000)
    assert fb.shape == (201, 40) and fb.dtype == ember.float32
    assert float(fb.max()) <= 1.0 and float(fb.min()) == 0.0
    with pytest.warns(UserWarning, match="all zero values"):
        F.melscale_fbanks(10, 0.0, 8000.0, 64, 16000)
    with pytest.raises(ValueError, match="norm must be one of"):
        F.melscale_fbanks(10, 0.0, 8000.0, 4, 16000, norm="area")
    with pytest.raises(ValueError, match="mel_scale"):
        F.melscale_fbanks(10, 0.0, 8000.0, 4, 16000, mel_scale="mel")


def test_linear_fbanks_triangles():
    fb = F.linear_fbanks(9, 0.0, 4000.0, 3, 8000).numpy()  # bins every 500 Hz
    # filter centres at 1000, 2000, 3000 Hz with half-width 1000 Hz
    np.testing.assert_allclose(fb[:, 0], [0, 0.5, 1, 0.5, 0, 0, 0, 0, 0], atol=1e-6)
    np.testing.assert_allclose(fb[:, 2], [0, 0, 0, 0, 0, 0.5, 1, 0.5, 0], atol=1e-6)


def test_create_dct_is_scipy_dct():
    fft = pytest.importorskip("scipy.fft")
    x = RNG.standard_normal((4, 40))
    for norm in ("ortho", None):
        dct = F.create_dct(13, 40, norm).to(ember.float64).numpy()
        np.testing.assert_allclose(x @ dct, fft.dct(x, norm=norm)[:, :13], rtol=1e-5,
                                   atol=1e-5)
    with pytest.raises(ValueError, match="ortho"):
        F.create_dct(13, 40, "backward")


def test_compute_deltas_of_a_ramp():
    ramp = np.tile(np.arange(20.0) * 0.5, (2, 3, 1))
    deltas = F.compute_deltas(_t(ramp), win_length=5).numpy()
    np.testing.assert_allclose(deltas[..., 2:-2], 0.5)
    assert deltas.shape == ramp.shape
    with pytest.raises(ValueError, match="greater than or equal to 3"):
        F.compute_deltas(_t(ramp), win_length=2)
    assert gradcheck(lambda v: F.compute_deltas(v), (_t(ramp[0, :1, :8], grad=True),))


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_convolve_matches_scipy(mode):
    signal = pytest.importorskip("scipy.signal")
    x = RNG.standard_normal((3, 40))
    y = RNG.standard_normal((1, 9))
    ours = F.convolve(_t(x), _t(y), mode).numpy()
    theirs = np.stack([signal.convolve(row, y[0], mode=mode) for row in x])
    np.testing.assert_allclose(ours, theirs, atol=1e-10)
    assert gradcheck(lambda a, b: F.convolve(a, b, mode),
                     (_t(x[:1, :10], grad=True), _t(y[:, :4], grad=True)))


def test_convolve_errors():
    with pytest.raises(ValueError, match="not broadcastable"):
        F.convolve(ember.zeros(2, 5), ember.zeros(3, 5))
    with pytest.raises(ValueError, match="Unrecognized mode"):
        F.convolve(ember.zeros(5), ember.zeros(5), "circular")


def test_add_noise_reaches_the_snr():
    wave = RNG.standard_normal((2, 500))
    noise = RNG.standard_normal((2, 500))
    snr = np.array([10.0, -5.0])
    noisy = F.add_noise(_t(wave), _t(noise), _t(snr)).numpy()
    added = noisy - wave
    measured = 10 * np.log10((wave ** 2).sum(-1) / (added ** 2).sum(-1))
    np.testing.assert_allclose(measured, snr)
    with pytest.raises(ValueError, match="leading dimensions"):
        F.add_noise(_t(wave), _t(noise), _t(10.0))
    with pytest.raises(ValueError, match="Length dimensions"):
        F.add_noise(_t(wave), _t(noise[:, :10]), _t(snr))


def test_resample_a_sine():
    t = np.arange(44100) / 44100
    tone = np.sin(2 * np.pi * 440 * t).astype(np.float32)
    out = F.resample(ember.from_numpy(tone), 44100, 16000)
    assert out.shape == (16000,) and out.dtype == ember.float32
    expected = np.sin(2 * np.pi * 440 * np.arange(16000) / 16000)
    assert np.abs(out.numpy()[200:-200] - expected[200:-200]).max() < 2e-3
    kaiser = F.resample(ember.from_numpy(tone), 44100, 16000,
                        resampling_method="sinc_interp_kaiser")
    assert np.abs(kaiser.numpy()[200:-200] - expected[200:-200]).max() < 2e-3


def test_resample_removes_what_the_new_rate_cannot_hold():
    t = np.arange(16000) / 16000
    high = np.sin(2 * np.pi * 6000 * t)
    out = F.resample(_t(high), 16000, 8000).numpy()
    assert np.abs(out[100:-100]).max() < 0.01


def test_resample_shapes_gradients_and_errors():
    x = _t(RNG.standard_normal((2, 3, 50)), grad=True)
    assert F.resample(x, 3, 2).shape == (2, 3, 34)
    assert F.resample(x, 5, 5) is x
    assert gradcheck(lambda v: F.resample(v, 4, 3, lowpass_filter_width=3), (x[:1, :1],))
    with pytest.raises(ValueError, match="positive"):
        F.resample(x, 0, 16000)
    with pytest.raises(ValueError, match="integer"):
        F.resample(x, 100.5, 16000)
    with pytest.raises(ValueError, match="Invalid resampling method"):
        F.resample(x, 2, 3, resampling_method="linear")
    with pytest.raises(TypeError, match="floating point"):
        F.resample(ember.zeros(10, dtype=ember.int64), 2, 3)
    with pytest.warns(UserWarning, match="deprecated"):
        F.resample(x, 2, 3, resampling_method="kaiser_window")


def test_speed_changes_length():
    x = ember.zeros(2, 1000)
    out, lengths = F.speed(x, 16000, 2.0, ember.tensor([1000, 600]))
    assert out.shape == (2, 500)
    assert lengths.tolist() == [500, 300]
    out, lengths = F.speed(x, 16000, 0.5)
    assert out.shape == (2, 2000) and lengths is None


def test_edit_distance():
    assert F.edit_distance("kitten", "sitting") == 3
    assert F.edit_distance(["the", "cat", "sat"], ["the", "cat"]) == 1
    assert F.edit_distance("", "abc") == 3
    assert F.edit_distance("same", "same") == 0


def test_detect_pitch_frequency_of_tones():
    rate = 16000
    t = np.arange(rate) / rate
    tones = np.stack([np.sin(2 * np.pi * f * t) for f in (200.0, 250.0)]).astype(np.float32)
    pitch = F.detect_pitch_frequency(ember.from_numpy(tones), rate).numpy()
    assert pitch.shape == (2, 85)  # 100 frames, less the median window's edges
    np.testing.assert_allclose(np.median(pitch, axis=-1), [200.0, 250.0], rtol=0.03)


def test_sliding_window_cmn():
    x = RNG.standard_normal((2, 50, 4)) * 3 + 5
    whole = F.sliding_window_cmn(_t(x), cmn_window=1000, center=True).numpy()
    np.testing.assert_allclose(whole, x - x.mean(axis=1, keepdims=True), atol=1e-10)
    scaled = F.sliding_window_cmn(_t(x), cmn_window=1000, center=True, norm_vars=True).numpy()
    np.testing.assert_allclose(scaled, (x - x.mean(1, keepdims=True)) / x.std(1, keepdims=True),
                               atol=1e-10)
    # a left window of 10 frames (at least min_cmn_window) at frame 30: frames 20..30
    left = F.sliding_window_cmn(_t(x), cmn_window=10, min_cmn_window=5).numpy()
    np.testing.assert_allclose(left[:, 30], x[:, 30] - x[:, 20:31].mean(1), atol=1e-10)
    assert F.sliding_window_cmn(_t(x[0])).shape == (50, 4)
    assert gradcheck(lambda v: F.sliding_window_cmn(v, 4, 2), (_t(x[0, :6, :2], grad=True),))


def test_mask_along_axis():
    ember.manual_seed(0)
    spec = ember.ones(3, 2, 20, 30)
    for axis in (2, 3):
        masked = F.mask_along_axis(spec, 10, 0.0, axis).numpy()
        zero = (masked == 0).all(axis=tuple(i for i in range(4) if i != axis))
        count = int(zero.sum())
        assert count < 10 and (masked == 0).sum() == count * spec.numel() // spec.shape[axis]
        if count:
            columns = np.flatnonzero(zero)
            assert columns[-1] - columns[0] + 1 == count  # one contiguous band
    iid = F.mask_along_axis_iid(spec, 15, -1.0, 3).numpy()
    per_example = (iid == -1).all(axis=2).sum(-1)
    assert per_example.shape == (3, 2) and (per_example < 15).all()
    with pytest.raises(ValueError, match="three dimensions"):
        F.mask_along_axis_iid(ember.ones(4, 5), 2, 0.0, 1)
    with pytest.raises(ValueError, match="Only Frequency and Time"):
        F.mask_along_axis(spec, 2, 0.0, 1)
    with pytest.raises(ValueError, match="p must be between"):
        F.mask_along_axis(spec, 2, 0.0, 2, p=1.5)
    assert F.mask_along_axis(spec, 10, 0.0, 3, p=0.01) is spec


def test_every_public_name_is_documented():
    for name in F.__all__:
        assert getattr(F, name).__doc__, name


def _collapse(path, blank=0):
    out = []
    for i, p in enumerate(path):
        if p != blank and (i == 0 or p != path[i - 1]):
            out.append(p)
    return out


@pytest.mark.parametrize("targets", [[1, 2], [2, 2], [3]])
def test_forced_align_is_the_best_ctc_path(targets):
    import itertools

    log_probs = np.log(RNG.dirichlet(np.ones(4), size=6))  # 6 frames, 4 classes
    best = max((p for p in itertools.product(range(4), repeat=6)
                if _collapse(p) == targets),
               key=lambda p: log_probs[np.arange(6), p].sum())
    path, scores = F.forced_align(ember.from_numpy(log_probs[None].astype(np.float32)),
                                  ember.tensor([targets], dtype=ember.int32))
    assert _collapse(path[0].tolist()) == targets
    np.testing.assert_allclose(scores.numpy()[0], log_probs[np.arange(6), path[0].numpy()],
                               rtol=1e-6)
    assert scores.numpy().sum() == pytest.approx(log_probs[np.arange(6), best].sum(), rel=1e-5)
    spans = F.merge_tokens(path[0], scores[0].exp())
    assert [s.token for s in spans] == targets
    assert all(len(s) == s.end - s.start > 0 for s in spans)


def test_forced_align_errors():
    log_probs = ember.zeros(1, 3, 4)
    with pytest.raises(RuntimeError, match="too long for CTC"):
        F.forced_align(log_probs, ember.tensor([[1, 1, 2]]))
    with pytest.raises(ValueError, match="blank"):
        F.forced_align(log_probs, ember.tensor([[0, 1]]))
    with pytest.raises(ValueError, match="batch dimension"):
        F.forced_align(ember.zeros(2, 3, 4), ember.tensor([[1], [2]]))
    with pytest.raises(ValueError, match="1D"):
        F.merge_tokens(ember.zeros(2, 2), ember.zeros(4))


def _rnnt_brute_force(log_probs, labels, blank):
    """log P(labels) summed over every path of the (time, label) lattice."""
    frames, nodes = log_probs.shape[0], len(labels) + 1

    def paths(t, u):
        if t == frames - 1 and u == nodes - 1:
            return [log_probs[t, u, blank]]
        out = []
        if t < frames - 1:
            out += [log_probs[t, u, blank] + p for p in paths(t + 1, u)]
        if u < nodes - 1:
            out += [log_probs[t, u, labels[u]] + p for p in paths(t, u + 1)]
        return out

    return np.logaddexp.reduce(paths(0, 0))


def test_rnnt_loss_is_the_lattice_sum_and_differentiable():
    logits = RNG.standard_normal((2, 4, 3, 5))
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = np.array([[1, 3], [2, 0]])
    lengths = (ember.tensor([4, 3], dtype=ember.int32), ember.tensor([2, 1], dtype=ember.int32))
    losses = F.rnnt_loss(_t(logits), ember.tensor(targets, dtype=ember.int32), *lengths,
                         blank=0, reduction="none").numpy()
    expected = [-_rnnt_brute_force(log_probs[0], [1, 3], 0),
                -_rnnt_brute_force(log_probs[1, :3, :2], [2], 0)]
    np.testing.assert_allclose(losses, expected, rtol=1e-10)
    unfused = F.rnnt_loss(_t(log_probs), ember.tensor(targets, dtype=ember.int32), *lengths,
                          blank=0, reduction="sum", fused_log_softmax=False)
    assert float(unfused) == pytest.approx(sum(expected), rel=1e-10)
    x = _t(logits, grad=True)
    assert gradcheck(lambda v: F.rnnt_loss(v, ember.tensor(targets, dtype=ember.int32),
                                           *lengths, blank=0), (x,))
    with pytest.raises(ValueError, match="reduction"):
        F.rnnt_loss(x, ember.tensor(targets), *lengths, reduction="avg")
    with pytest.raises(ValueError, match="other than the blank"):
        F.rnnt_loss(x, ember.tensor([[0, 1], [1, 1]]), *lengths, blank=0)
