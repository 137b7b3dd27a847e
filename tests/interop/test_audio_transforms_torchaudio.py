"""emberaudio.transforms against torchaudio.transforms (float32), and state-dict keys.

Runs where torchaudio is installed (`nox -s audio_torchaudio`); skipped elsewhere.
"""

import numpy as np
import pytest

import ember
import emberaudio.transforms as ET

torch = pytest.importorskip("torch")
torchaudio = pytest.importorskip("torchaudio")
TT = torchaudio.transforms

RNG = np.random.default_rng(99)
WAVE = RNG.uniform(-0.8, 0.8, (2, 3, 900)).astype(np.float32)
SPEC = RNG.uniform(0.0, 3.0, (2, 201, 40)).astype(np.float32)

# (id, class name, constructor args, inputs)
CASES = [
    ("AmplitudeToDB", "AmplitudeToDB", (), {}, (SPEC,)),
    ("AmplitudeToDB_mag", "AmplitudeToDB", ("magnitude", 40.0), {}, (SPEC,)),
    ("MelScale", "MelScale", (), {"n_mels": 40}, (SPEC,)),
    ("MelScale_slaney", "MelScale", (), {"n_mels": 23, "sample_rate": 8000, "f_min": 30.0,
                                         "norm": "slaney", "mel_scale": "slaney"}, (SPEC,)),
    ("MuLawEncoding", "MuLawEncoding", (), {}, (WAVE,)),
    ("MuLawDecoding", "MuLawDecoding", (64,), {},
     (RNG.integers(0, 64, (3, 50)).astype(np.float32),)),
    ("Resample", "Resample", (44100, 16000), {}, (WAVE,)),
    ("Resample_kaiser", "Resample", (16000, 24000, "sinc_interp_kaiser", 8, 0.95, 10.0), {},
     (WAVE,)),
    ("Fade_linear", "Fade", (100, 200), {}, (WAVE,)),
    ("Fade_exponential", "Fade", (100, 200, "exponential"), {}, (WAVE,)),
    ("Fade_logarithmic", "Fade", (100, 200, "logarithmic"), {}, (WAVE,)),
    ("Fade_quarter_sine", "Fade", (100, 200, "quarter_sine"), {}, (WAVE,)),
    ("Fade_half_sine", "Fade", (100, 200, "half_sine"), {}, (WAVE,)),
    ("Vol_amplitude", "Vol", (1.7,), {}, (WAVE,)),
    ("Vol_db", "Vol", (-3.0, "db"), {}, (WAVE,)),
    ("Vol_power", "Vol", (2.0, "power"), {}, (WAVE,)),
    ("ComputeDeltas", "ComputeDeltas", (), {}, (SPEC,)),
    ("SlidingWindowCmn", "SlidingWindowCmn", (20, 5, False, True), {}, (SPEC,)),
    ("Preemphasis", "Preemphasis", (), {}, (WAVE,)),
    ("Deemphasis", "Deemphasis", (0.8,), {}, (WAVE,)),
    ("AddNoise", "AddNoise", (), {}, (WAVE[0], WAVE[1], np.array([3.0, 5.0, 8.0], np.float32))),
    ("Convolve_same", "Convolve", ("same",), {}, (WAVE, WAVE[..., :31])),
    ("Loudness", "Loudness", (8000,), {}, (RNG.uniform(-0.5, 0.5, (2, 4000)).astype(np.float32),)),
    ("Speed", "Speed", (16000, 0.9), {}, (WAVE,)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_transform_matches_torchaudio(case):
    _, name, args, kwargs, inputs = case
    ours = getattr(ET, name)(*args, **kwargs)
    theirs = getattr(TT, name)(*args, **kwargs)
    out = ours(*(ember.from_numpy(x.copy()) for x in inputs))
    ref = theirs(*(torch.from_numpy(x.copy()) for x in inputs))
    if isinstance(ref, tuple):
        out, ref = out[0], ref[0]
    assert tuple(out.shape) == tuple(ref.shape)
    assert str(out.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-4, atol=2e-5)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())


def test_resample_kernel_in_float64_like_torchaudio():
    ours = ET.Resample(22050, 16000, dtype=ember.float64)
    theirs = TT.Resample(22050, 16000, dtype=torch.float64)
    np.testing.assert_allclose(ours.kernel.numpy(), theirs.kernel.numpy(), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(ET.Resample(22050, 16000).kernel.numpy(),
                               TT.Resample(22050, 16000).kernel.numpy(), rtol=1e-6, atol=1e-7)


def test_rnnt_loss_module():
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((2, 5, 3, 4)).astype(np.float32)
    args = [np.array([[1, 2], [3, 1]], np.int32), np.array([5, 3], np.int32),
            np.array([2, 1], np.int32)]
    ours = ET.RNNTLoss(blank=0)(ember.from_numpy(logits), *(ember.from_numpy(a) for a in args))
    theirs = TT.RNNTLoss(blank=0)(torch.from_numpy(logits), *(torch.from_numpy(a) for a in args))
    assert float(ours) == pytest.approx(float(theirs), rel=1e-5)
