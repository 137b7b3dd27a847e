"""OpInfos for ember.fft, stft/istft and the window functions: NumPy's pocketfft as
the reference (NumPy has no hfft2/hfftn: their definitions from irfftn are used),
gradcheck in float64. Complex inputs are built from real arrays inside the op and
complex outputs compared as (real, imag) pairs (the generic tests perturb real
inputs only)."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import FLOATING, OpInfo, SampleInput, arr

F = ember.fft
_NORMS = (None, "ortho", "forward")
_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _c(re, im):
    return ember.complex(re, im) if isinstance(re, ember.Tensor) else re + 1j * im


def _as_pairs(o):
    """A complex tensor (ember's or PyTorch's) or array as (real, imag) pairs."""
    if isinstance(o, ember.Tensor):
        return ember.view_as_real(o) if o.is_complex() else o
    if type(o).__module__.startswith("torch"):
        import torch

        return torch.view_as_real(o.resolve_conj()) if o.is_complex() else o
    o = np.asarray(o)
    return np.stack([o.real, o.imag], -1) if np.iscomplexobj(o) else o


def _np_name(name):
    return {"hfft2": "hfftn", "ihfft2": "ihfftn"}.get(name, name)


def _np_hfftn(x, s=None, axes=None, norm=None):
    return np.fft.irfftn(np.conj(x), s=s, axes=axes, norm=_SWAP[norm])


def _np_ihfftn(x, s=None, axes=None, norm=None):
    return np.conj(np.fft.rfftn(x, s=s, axes=axes, norm=_SWAP[norm]))


def _np_fn(name):
    if name in ("hfftn", "hfft2"):
        return _np_hfftn
    if name in ("ihfftn", "ihfft2"):
        return _np_ihfftn
    return getattr(np.fft, name)


def _one_d(name, real_input):
    """An OpInfo for a 1-d transform over (n, dim, norm) combinations."""
    cases = [(None, -1, None), (5, -1, "ortho"), (12, 0, "forward"), (None, 1, "backward"),
             (3, -1, None)]

    def samples(dtype, rng):
        for n, dim, norm in cases:
            kw = {"n": n, "dim": dim, "norm": norm}
            x = arr(rng, (4, 6), dtype)
            if real_input:
                yield SampleInput(x, (), kw, name=str(kw))
            else:
                yield SampleInput(x, (arr(rng, (4, 6), dtype),), kw, name=str(kw))

    fn = getattr(F, name)
    ref_fn = getattr(np.fft, name)
    if real_input:
        op = fn
        ref = lambda x, n, dim, norm: ref_fn(x, n=n, axis=dim, norm=norm)  # noqa: E731
        torch_op = lambda torch: getattr(torch.fft, name)  # noqa: E731
    else:
        op = lambda re, im, n, dim, norm: fn(_c(re, im), n=n, dim=dim, norm=norm)  # noqa: E731
        ref = lambda re, im, n, dim, norm: ref_fn(re + 1j * im, n=n, axis=dim,  # noqa: E731
                                                  norm=norm)
        torch_op = lambda torch: lambda re, im, n, dim, norm: getattr(torch.fft, name)(  # noqa: E731
            torch.complex(re, im), n=n, dim=dim, norm=norm)
    return OpInfo(f"fft.{name}", op, samples, ref=ref, torch_op=torch_op,
                  output_process=_as_pairs)


def _n_d(name, real_input, two_d):
    cases = [dict(), dict(s=(5, 4)), dict(norm="ortho"), dict(s=(3, -1), norm="forward")]
    if not two_d:
        cases += [dict(dim=(0, 2)), dict(s=(4, 3, 6), norm="ortho")]

    def samples(dtype, rng):
        for kw in cases:
            x = arr(rng, (3, 4, 5), dtype)
            if real_input:
                yield SampleInput(x, (), dict(kw), name=str(kw))
            else:
                yield SampleInput(x, (arr(rng, (3, 4, 5), dtype),), dict(kw), name=str(kw))

    fn = getattr(F, name)
    ref_fn = _np_fn(name)

    def np_kwargs(kw):
        kw = dict(kw)
        axes = kw.pop("dim", (-2, -1) if two_d else None)
        if axes is None and "s" in kw:
            axes = tuple(range(-len(kw["s"]), 0))
        if "s" in kw:  # -1 keeps the input's size (NumPy has no -1)
            kw["s"] = [v for v in kw["s"]]
        return axes, kw

    def fix_s(x, axes, kw, c2r):
        if "s" not in kw:
            return kw
        ax = axes if axes is not None else tuple(range(x.ndim))
        s = list(kw["s"])
        for i, v in enumerate(s):
            if v == -1:
                n = x.shape[ax[i]]
                s[i] = 2 * (n - 1) if c2r and i == len(s) - 1 else n
        return {**kw, "s": s}

    c2r = name.startswith(("irfft", "hfft"))
    if real_input:
        def op(x, **kw):
            return fn(x, **kw)

        def ref(x, **kw):
            axes, kw2 = np_kwargs(kw)
            return ref_fn(x, axes=axes, **fix_s(x, axes, kw2, c2r))

        def torch_op(torch):
            return getattr(torch.fft, name)
    else:
        def op(re, im, **kw):
            return fn(_c(re, im), **kw)

        def ref(re, im, **kw):
            axes, kw2 = np_kwargs(kw)
            x = re + 1j * im
            return ref_fn(x, axes=axes, **fix_s(x, axes, kw2, c2r))

        def torch_op(torch):
            return lambda re, im, **kw: getattr(torch.fft, name)(torch.complex(re, im), **kw)
    return OpInfo(f"fft.{name}", op, samples, ref=ref, torch_op=torch_op,
                  output_process=_as_pairs)


def _stft_samples(dtype, rng):
    win = np.hanning(8).astype(dtype)
    x = arr(rng, (2, 24), dtype)
    for i, kw in enumerate([dict(), dict(hop_length=3, center=False), dict(win_length=5),
                            dict(normalized=True, pad_mode="constant"), dict(onesided=False)]):
        w = win[:kw.get("win_length", 8)]
        yield SampleInput(x, (8,), {"window": w, "return_complex": True, **kw},
                          grad=i < 3, name=str(kw))
    yield SampleInput(x[0], (4,), {"return_complex": True}, name="1d, no window")


def _np_stft(x, n_fft, hop_length=None, win_length=None, window=None, center=True,
             pad_mode="reflect", normalized=False, onesided=None, return_complex=True):
    hop = n_fft // 4 if hop_length is None else hop_length
    wl = n_fft if win_length is None else win_length
    w = np.ones(wl) if window is None else window
    left = (n_fft - wl) // 2
    w = np.pad(w, (left, n_fft - wl - left))
    if center:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode=pad_mode)
    frames = np.lib.stride_tricks.sliding_window_view(x, n_fft, axis=-1)[..., ::hop, :] * w
    norm = "ortho" if normalized else "backward"
    onesided = True if onesided is None else onesided
    spec = np.fft.rfft(frames, norm=norm) if onesided else np.fft.fft(frames, norm=norm)
    return np.swapaxes(spec, -1, -2)


def _istft_samples(dtype, rng):
    win = np.hanning(8 + 1)[:8].astype(dtype)  # periodic Hann: overlap-adds to a constant
    x = arr(rng, (2, 20), dtype)
    for i, kw in enumerate([dict(), dict(length=14), dict(length=26), dict(normalized=True),
                            dict(hop_length=4)]):
        spec = _np_stft(x, 8, window=win, hop_length=kw.get("hop_length"),
                        normalized=kw.get("normalized", False))
        yield SampleInput(spec.real.astype(dtype), (spec.imag.astype(dtype), 8),
                          {"window": win, **kw}, grad=i in (0, 2), name=str(kw))


def _np_istft(re, im, n_fft, window, hop_length=None, length=None, normalized=False):
    spec = re + 1j * im
    hop = n_fft // 4 if hop_length is None else hop_length
    frames = np.fft.irfft(np.swapaxes(spec, -1, -2), n=n_fft,
                          norm="ortho" if normalized else "backward") * window
    T = frames.shape[-2]
    n = n_fft + hop * (T - 1)
    y = np.zeros(frames.shape[:-2] + (n,))
    env = np.zeros(n)
    for t in range(T):
        y[..., t * hop:t * hop + n_fft] += frames[..., t, :]
        env[t * hop:t * hop + n_fft] += window ** 2
    start = n_fft // 2
    end = n - n_fft // 2 if length is None else start + length
    out = y[..., start:min(end, n)] / env[start:min(end, n)]
    if end > n:
        out = np.concatenate([out, np.zeros(out.shape[:-1] + (end - n,))], -1)
    return out


def _window_op(name):
    fn = getattr(ember, name)

    def op(x, n, periodic, **kw):
        return fn(n, periodic, dtype=ember.float64, **kw) * x  # x carries the gradient path

    def ref(x, n, periodic, **kw):
        m = n + 1 if periodic else n
        k = np.arange(m)
        if n == 1:
            return np.ones(1) * x
        if name == "hann_window":
            w = 0.5 - 0.5 * np.cos(2 * np.pi * k / (m - 1))
        elif name == "hamming_window":
            w = 0.54 - 0.46 * np.cos(2 * np.pi * k / (m - 1))
        elif name == "blackman_window":
            w = np.blackman(m)
        elif name == "bartlett_window":
            w = np.bartlett(m)
        else:
            w = np.kaiser(m, kw.get("beta", 12.0))
        return w[:n] * x

    def samples(dtype, rng):
        for n, periodic in [(1, True), (5, True), (8, False), (7, False)]:
            yield SampleInput(arr(rng, (n,), dtype), (n, periodic), name=f"{n}-{periodic}")
        if name == "kaiser_window":
            yield SampleInput(arr(rng, (6,), dtype), (6, True), {"beta": 4.0})

    return OpInfo(name, op, samples, ref=ref,
                  torch_op=lambda torch: lambda x, n, periodic, **kw: getattr(torch, name)(
                      n, periodic, dtype=torch.float64, **kw) * x)


OPS = [
    *[_one_d(n, real) for n, real in [("fft", False), ("ifft", False), ("rfft", True),
                                      ("irfft", False), ("hfft", False), ("ihfft", True)]],
    *[_n_d(n, real, two) for n, real, two in [
        ("fft2", False, True), ("ifft2", False, True), ("rfft2", True, True),
        ("irfft2", False, True), ("hfft2", False, True), ("ihfft2", True, True),
        ("fftn", False, False), ("ifftn", False, False), ("rfftn", True, False),
        ("irfftn", False, False), ("hfftn", False, False), ("ihfftn", True, False)]],
    OpInfo("fft.fft_real_input", F.fft,
           lambda dtype, rng: iter([SampleInput(arr(rng, (3, 5), dtype))]),
           ref=np.fft.fft, torch_op=lambda torch: torch.fft.fft, output_process=_as_pairs),
    OpInfo("fft.fftshift", F.fftshift,
           lambda dtype, rng: iter([SampleInput(arr(rng, (4, 5), dtype)),
                                    SampleInput(arr(rng, (4, 5), dtype), (), {"dim": 1})]),
           ref=lambda x, dim=None: np.fft.fftshift(x, axes=dim),
           torch_op=lambda torch: torch.fft.fftshift),
    OpInfo("fft.ifftshift", F.ifftshift,
           lambda dtype, rng: iter([SampleInput(arr(rng, (4, 5), dtype)),
                                    SampleInput(arr(rng, (3, 5), dtype), (), {"dim": (0,)})]),
           ref=lambda x, dim=None: np.fft.ifftshift(x, axes=dim),
           torch_op=lambda torch: torch.fft.ifftshift),
    OpInfo("stft", ember.stft, _stft_samples, ref=_np_stft, torch_op=lambda torch: torch.stft,
           output_process=_as_pairs, method="stft"),
    OpInfo("istft", lambda re, im, n_fft, **kw: ember.istft(_c(re, im), n_fft, **kw),
           _istft_samples, ref=_np_istft,
           torch_op=lambda torch: lambda re, im, n_fft, **kw: torch.istft(
               torch.complex(re, im), n_fft, **kw)),
    *[_window_op(n) for n in ("hann_window", "hamming_window", "blackman_window",
                              "bartlett_window", "kaiser_window")],
]
for _op in OPS:
    _op.dtypes = FLOATING
