"""The Winograd F(2x2, 3x3) path of 3x3 stride-1 convolutions (see NOTE [ Winograd
convolution ] in ember._C._conv) against the im2col path, and its dispatch conditions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
import ember.nn.functional as F
from ember._backend import cpu
from ember.autograd import gradcheck, gradgradcheck
from ember.nn._functional import _kernels as K
from ember.nn._functional import conv as C

T = cpu.tuning  # the CPU's convolution tuning (ember._backend._cpu_conv)

RNG = np.random.default_rng(0)

TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-11, atol=1e-11)}


@pytest.fixture
def always_winograd(monkeypatch):
    """Winograd on for every eligible convolution, whatever its size."""
    monkeypatch.setattr(T, "winograd", True)
    monkeypatch.setattr(T, "winograd_pays", lambda c, cout, out_sp: True)


def _run(x, w, b, padding, winograd, transpose=False):
    """(y, gx, gw, gb) of a conv2d (or conv_transpose2d) with or without Winograd."""
    old = T.winograd
    T.winograd = winograd
    try:
        xt = ember.tensor(x, requires_grad=True)
        wt = ember.tensor(w, requires_grad=True)
        bt = ember.tensor(b, requires_grad=True) if b is not None else None
        fn = F.conv_transpose2d if transpose else F.conv2d
        y = fn(xt, wt, bt, padding=padding)
        g = np.cos(np.arange(y.numel(), dtype=np.float64)).reshape(tuple(y.shape))
        y.backward(ember.tensor(g.astype(x.dtype)))
        grads = (xt.grad, wt.grad, bt.grad if bt is not None else None)
        return (y.detach().numpy(),) + tuple(
            None if gr is None else gr.numpy() for gr in grads)
    finally:
        T.winograd = old


def _compare(x, w, b, padding, transpose=False):
    tol = TOL[x.dtype.type]
    wino = _run(x, w, b, padding, True, transpose)
    ref = _run(x, w, b, padding, False, transpose)
    for got, want in zip(wino, ref, strict=True):
        if want is None:
            assert got is None
            continue
        assert got.dtype == want.dtype and got.shape == want.shape
        scale = max(1.0, float(np.abs(want).max(initial=0.0)))
        np.testing.assert_allclose(got / scale, want / scale, **tol)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 5), cout=st.integers(1, 5),
       h=st.integers(1, 9), w=st.integers(1, 9), padding=st.sampled_from([0, 1, 2]),
       dtype=st.sampled_from([np.float32, np.float64]), bias=st.booleans())
def test_winograd_matches_im2col(n, c, cout, h, w, padding, dtype, bias):
    if h + 2 * padding < 3 or w + 2 * padding < 3:
        return
    old = T.winograd_pays
    T.winograd_pays = lambda *a: True
    try:
        x = RNG.standard_normal((n, c, h, w)).astype(dtype)
        wt = RNG.standard_normal((cout, c, 3, 3)).astype(dtype)
        b = RNG.standard_normal(cout).astype(dtype) if bias else None
        _compare(x, wt, b, padding)
    finally:
        T.winograd_pays = old


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 16, 24, 7, 5), (3, 32, 16, 8, 8), (1, 20, 20, 4, 4),
                                   (2, 17, 19, 11, 6), (5, 16, 16, 3, 3)])
@pytest.mark.parametrize("padding", [0, 1])
def test_winograd_layer_shapes(always_winograd, dtype, shape, padding):
    n, c, cout, h, w = shape
    x = RNG.standard_normal((n, c, h, w)).astype(dtype)
    wt = RNG.standard_normal((cout, c, 3, 3)).astype(dtype)
    _compare(x, wt, None, padding)


def test_winograd_chunks(always_winograd, monkeypatch):
    # several chunks of the batch: the weight gradient adds up the chunks' GEMMs
    monkeypatch.setattr(T, "winograd_chunk_bytes", 1)
    x = RNG.standard_normal((5, 6, 7, 9))
    w = RNG.standard_normal((4, 6, 3, 3))
    _compare(x, w, RNG.standard_normal(4), 1)


@pytest.mark.parametrize("chunk_bytes", [1, 4 << 20])
@pytest.mark.parametrize("n", [2, 3, 7])
def test_winograd_on_several_threads(always_winograd, monkeypatch, n, chunk_bytes):
    # NOTE [ Convolutions on several threads ]: ranges of the batch on the pool, chunked or not;
    # the one-thread result to rounding (a range's GEMMs are shorter, and OpenBLAS rounds a
    # column by where it falls in its blocks; the weight gradient is summed per range)
    from ember._backend import _cpu_conv, _cpu_threads

    monkeypatch.setattr(T, "winograd_chunk_bytes", chunk_bytes)
    x = RNG.standard_normal((n, 6, 7, 9)).astype(np.float32)
    w = RNG.standard_normal((4, 6, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    one = _run(x, w, b, 1, True)
    calls = []
    run = _cpu_threads._pool.run
    monkeypatch.setattr(_cpu_threads._pool, "run", lambda fns: calls.append(len(fns)) or run(fns))
    monkeypatch.setattr(_cpu_conv, "_THREADED_MIN_WORK", 1)
    monkeypatch.setattr(_cpu_conv, "_THREADED_MIN_CHANNELS", 1)
    old = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        several = _run(x, w, b, 1, True)
    finally:
        ember.set_num_threads(old)
    assert calls == [2, 2]  # the forward, then the backward: one range per thread
    for a, r in zip(several, one, strict=True):
        np.testing.assert_allclose(a, r, rtol=1e-5, atol=1e-5)
    _compare(x, w, b, 1)  # and against im2col


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_winograd_transposed(always_winograd, dtype):
    # conv_transpose2d with stride 1 runs the Winograd input gradient as its forward
    x = RNG.standard_normal((2, 5, 6, 7)).astype(dtype)
    w = RNG.standard_normal((5, 3, 3, 3)).astype(dtype)
    for padding in (0, 1, 2):
        _compare(x, w, RNG.standard_normal(3).astype(dtype), padding, transpose=True)


@pytest.mark.parametrize("padding", [0, 1, 2])
def test_winograd_gradcheck(always_winograd, padding):
    x = ember.tensor(RNG.standard_normal((2, 3, 5, 6)), requires_grad=True)
    w = ember.tensor(RNG.standard_normal((4, 3, 3, 3)), requires_grad=True)
    b = ember.tensor(RNG.standard_normal(4), requires_grad=True)

    def fn(x, w, b):
        return F.conv2d(x, w, b, padding=padding)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_winograd_runs(always_winograd, monkeypatch):
    calls = []
    for name in ("conv2d_winograd_forward", "conv2d_winograd_backward"):
        real = getattr(K, name)

        def spy(*a, _real=real, _name=name):
            calls.append(_name)
            return _real(*a)

        monkeypatch.setattr(K, name, spy)
    x = ember.tensor(RNG.standard_normal((2, 3, 6, 6)).astype(np.float32), requires_grad=True)
    w = ember.tensor(RNG.standard_normal((4, 3, 3, 3)).astype(np.float32), requires_grad=True)
    F.conv2d(x, w, padding=1).sum().backward()
    assert set(calls) == {"conv2d_winograd_forward", "conv2d_winograd_backward"}


def test_winograd_is_a_cpu_kernel_with_its_tuning():
    # the kernel and its thresholds live with the CPU backend (NOTE [ Kernels by name ])
    from ember._backend import _cpu_conv

    x32 = np.zeros((2, 16, 8, 8), np.float32)
    assert cpu.has_kernel("conv2d_winograd_forward", x32)
    assert not cpu.has_kernel("conv2d_winograd_forward", x32.astype(np.float16))
    assert T is _cpu_conv.TUNING and T.winograd_pays is _cpu_conv.winograd_pays
    generic = ember._backend._base.Tuning()
    assert not generic.winograd and not generic.winograd_pays(64, 64, (32, 32))
    assert T.conv_chunk_bytes < generic.conv_chunk_bytes  # the CPU chunks for its cache


def _geo(kernel=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=1, nd=2):
    return C._Geometry(nd, kernel, stride, padding, dilation, groups)


def test_winograd_dispatch():
    x32 = np.zeros((32, 64, 32, 32), np.float32)
    # the ResNet layers with many channels
    for c, hw in ((64, 32), (128, 16), (256, 8), (512, 4)):
        assert C._use_winograd(np.zeros((2, c, hw, hw), np.float32), _geo(), c, c, (hw, hw))
    assert C._use_winograd(x32.astype(np.float64), _geo(), 64, 64, (32, 32))
    # not: the first layer (3 channels), a tiny output, other geometries and dtypes
    assert not C._use_winograd(np.zeros((2, 3, 32, 32), np.float32), _geo(), 3, 64, (32, 32))
    assert not C._use_winograd(x32, _geo(), 64, 64, (2, 2))
    assert not C._use_winograd(x32, _geo(stride=(2, 2)), 64, 64, (16, 16))
    assert not C._use_winograd(x32, _geo(dilation=(2, 2)), 64, 64, (30, 30))
    assert not C._use_winograd(x32, _geo(groups=2), 64, 64, (32, 32))
    assert not C._use_winograd(x32, _geo(kernel=(5, 5)), 64, 64, (30, 30))
    assert not C._use_winograd(x32, _geo(kernel=(1, 1)), 64, 64, (32, 32))
    assert not C._use_winograd(x32, _geo(kernel=(3,), stride=(1,), padding=(1,),
                                         dilation=(1,), nd=1), 64, 64, (32,))
    assert not C._use_winograd(x32, _geo(kernel=(3, 3, 3), stride=(1, 1, 1),
                                         padding=(1, 1, 1), dilation=(1, 1, 1), nd=3),
                               64, 64, (4, 32, 32))
    assert not C._use_winograd(x32.astype(np.float16), _geo(), 64, 64, (32, 32))
    assert not C._use_winograd(np.zeros((2, 64, 32, 32), np.int64), _geo(), 64, 64, (32, 32))


def test_winograd_dispatch_switches(monkeypatch):
    x32 = np.zeros((32, 64, 32, 32), np.float32)
    monkeypatch.setattr(T, "winograd", False)
    assert not C._use_winograd(x32, _geo(), 64, 64, (32, 32))
    monkeypatch.setattr(T, "winograd", True)
    monkeypatch.setattr(K, "FORCE_FALLBACK", True)
    assert not C._use_winograd(x32, _geo(), 64, 64, (32, 32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_winograd_kernel_adjoints(dtype):
    # <T x, v> = <x, T^* v> for the input and output transforms
    n, c, h, w, p = 2, 3, 7, 6, 1
    oh, ow = h + 2 * p - 2, w + 2 * p - 2
    tiles = ((oh + 1) // 2, (ow + 1) // 2)
    t = tiles[0] * tiles[1]
    x = RNG.standard_normal((n, c, h, w)).astype(dtype)
    v = RNG.standard_normal((16, c, n, t)).astype(dtype)
    tv = K.winograd_input(x, np.empty_like(v), (p, p), tiles)
    ax = K.winograd_input_adjoint(v, np.zeros_like(x), (p, p), tiles)
    np.testing.assert_allclose(np.sum(tv * v), np.sum(x * ax), rtol=1e-4)
    g = RNG.standard_normal((n, c, oh, ow)).astype(dtype)
    ty = K.winograd_output(v, np.empty_like(g))
    ag = K.winograd_output_adjoint(g, np.empty_like(v))
    np.testing.assert_allclose(np.sum(ty * g), np.sum(v * ag), rtol=1e-4)


_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)
_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)


def _tile_array(shape, dtype, gap):
    """A tile array whose 16 positions lie ``gap`` elements apart, as conv.py makes them."""
    size = int(np.prod(shape[1:]))
    return np.zeros((16, size + gap), dtype)[:, :size].reshape(shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("h, w, p", [(7, 6, 1), (5, 9, 0), (1, 1, 2), (12, 3, 2), (33, 34, 1),
                                     (4, 4, 1), (3, 17, 1)])
@pytest.mark.parametrize("gap", [0, 16])
def test_winograd_kernels_match_numpy(dtype, h, w, p, gap):
    # each transform against its definition, tile by tile, on planes of odd and even sizes
    n, c = 2, 3
    oh, ow = h + 2 * p - 2, w + 2 * p - 2
    th, tw = (oh + 1) // 2, (ow + 1) // 2
    x = RNG.standard_normal((n, c, h, w)).astype(dtype)
    xp = np.zeros((n, c, 2 * th + 2, 2 * tw + 2))
    xp[:, :, p:p + h, p:p + w] = x[:, :, :2 * th + 2 - p, :2 * tw + 2 - p]
    d = np.stack([xp[:, :, 2 * i:2 * i + 4, 2 * j:2 * j + 4] for i in range(th)
                  for j in range(tw)], 2)                                  # (n, c, T, 4, 4)
    want_v = np.einsum("ab,nctbd,ed->aecnt", _BT, d, _BT).reshape(16, c, n, th * tw)
    v = K.winograd_input(x, _tile_array((16, c, n, th * tw), dtype, gap), (p, p), (th, tw))
    np.testing.assert_allclose(v, want_v, rtol=1e-5, atol=1e-5)

    m = RNG.standard_normal((16, c, n, th * tw)).astype(dtype)
    m4 = m.reshape(4, 4, c, n, th, tw).astype(np.float64)
    y = np.einsum("ai,ijcnhw,bj->cnhawb", _AT, m4, _AT).reshape(c, n, 2 * th, 2 * tw)
    want_y = y[:, :, :oh, :ow].transpose(1, 0, 2, 3)
    mg = _tile_array(m.shape, dtype, gap)
    mg[...] = m
    got_y = K.winograd_output(mg, np.full((n, c, oh, ow), np.nan, dtype))
    np.testing.assert_allclose(got_y, want_y, rtol=1e-5, atol=1e-5)

    # the adjoints, through the dense matrices of the forward maps
    g = RNG.standard_normal((n, c, oh, ow)).astype(dtype)
    got = K.winograd_output_adjoint(g, _tile_array(m.shape, dtype, gap))
    back = np.zeros((c, n, 2 * th, 2 * tw))
    back[:, :, :oh, :ow] = g.transpose(1, 0, 2, 3)
    b6 = back.reshape(c, n, th, 2, tw, 2)
    want = np.einsum("ai,cnhawb,bj->ijcnhw", _AT, b6, _AT).reshape(16, c, n, th * tw)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    gx = np.full((n, c, h, w), 0.5, dtype)
    K.winograd_input_adjoint(mg, gx, (p, p), (th, tw))
    dv = m.reshape(4, 4, c, n, th * tw).astype(np.float64)
    dd = np.einsum("ab,aecnt,ed->nctbd", _BT, dv, _BT)                    # (n, c, T, 4, 4)
    gp = np.zeros_like(xp)
    for i in range(th):
        for j in range(tw):
            gp[:, :, 2 * i:2 * i + 4, 2 * j:2 * j + 4] += dd[:, :, i * tw + j]
    want_gx = 0.5 + gp[:, :, p:p + h, p:p + w]
    np.testing.assert_allclose(gx, want_gx[:, :, :h, :w], rtol=1e-5, atol=1e-5)


def test_winograd_kernel_errors():
    x = np.zeros((1, 2, 4, 4), np.float32)
    with pytest.raises(TypeError, match="float32 or float64"):
        K.winograd_input(x, np.zeros((16, 2, 1, 4), np.float64), (1, 1), (2, 2))
    with pytest.raises(ValueError, match="tiles must have shape"):
        K.winograd_input(x, np.zeros((16, 2, 1, 5), np.float32), (1, 1), (2, 2))
    with pytest.raises(ValueError, match="C-contiguous"):
        K.winograd_input(x.transpose(0, 1, 3, 2), np.zeros((16, 2, 1, 4), np.float32),
                         (1, 1), (2, 2))
    with pytest.raises(ValueError, match="must not overlap"):
        buf = np.zeros(200, np.float32)
        K.winograd_input(buf[:32].reshape(1, 2, 4, 4), buf[16:144].reshape(16, 2, 1, 4),
                         (1, 1), (2, 2))
    ro = np.zeros((16, 2, 1, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        K.winograd_input(x, ro, (1, 1), (2, 2))


def test_winograd_half_gradients(always_winograd):
    # float16 runs in float32 (the backward on the Winograd path); the gradients round back
    x = ember.tensor(RNG.standard_normal((2, 4, 6, 6)).astype(np.float16), requires_grad=True)
    w = ember.tensor(RNG.standard_normal((3, 4, 3, 3)).astype(np.float16), requires_grad=True)
    F.conv2d(x, w, padding=1).sum().backward()
    assert x.grad.dtype == ember.float16 and w.grad.dtype == ember.float16
    x64 = ember.tensor(x.detach().numpy().astype(np.float64), requires_grad=True)
    w64 = ember.tensor(w.detach().numpy().astype(np.float64), requires_grad=True)
    F.conv2d(x64, w64, padding=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy().astype(np.float64), x64.grad.numpy(), rtol=1e-2,
                               atol=1e-2)
    np.testing.assert_allclose(w.grad.numpy().astype(np.float64), w64.grad.numpy(), rtol=1e-2,
                               atol=1e-1)
