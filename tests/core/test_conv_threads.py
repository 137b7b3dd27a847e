"""Convolutions computed per sample (NOTE [ Pointwise convolutions ] in
ember.nn._functional.conv) and over ranges of the batch on ember's threads (NOTE
[ Convolutions on several threads ] in ember._backend._cpu_conv), against the one-call
im2col path and NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._backend import _cpu_conv, _cpu_threads
from ember.autograd import gradcheck
from ember.nn._functional import conv as C

RNG = np.random.default_rng(0)


def _run(x, w, b, **kw):
    """(y, gx, gw, gb) of conv2d with a fixed output gradient."""
    xt = ember.tensor(x, requires_grad=True)
    wt = ember.tensor(w, requires_grad=True)
    bt = ember.tensor(b, requires_grad=True) if b is not None else None
    y = F.conv2d(xt, wt, bt, **kw)
    g = np.random.default_rng(1).standard_normal(y.shape).astype(x.dtype)
    y.backward(ember.tensor(g))
    return (y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(),
            bt.grad.numpy() if bt is not None else None), g


def _reference_1x1(x, w, b, g):
    """y, gx, gw of a 1x1 convolution in NumPy."""
    n, c = x.shape[:2]
    cout = w.shape[0]
    x3 = x.reshape(n, c, -1)
    w2 = w.reshape(cout, c)
    y = np.einsum("oc,ncp->nop", w2, x3)
    if b is not None:
        y = y + b[:, None]
    g3 = g.reshape(n, cout, -1)
    gx = np.einsum("oc,nop->ncp", w2, g3).reshape(x.shape)
    gw = np.einsum("nop,ncp->oc", g3, x3).reshape(w.shape)
    return y.reshape(g.shape), gx, gw


@pytest.fixture
def split(monkeypatch):
    """Every batch of two or more samples split over two threads."""
    monkeypatch.setattr(_cpu_conv, "_THREADED_MIN_WORK", 1)
    monkeypatch.setattr(_cpu_conv, "_THREADED_MIN_CHANNELS", 1)
    old = ember.get_num_threads()
    ember.set_num_threads(2)
    yield
    ember.set_num_threads(old)


def _count_pool_runs(monkeypatch):
    calls = []
    run = _cpu_threads._pool.run
    monkeypatch.setattr(_cpu_threads._pool, "run", lambda fns: calls.append(len(fns)) or run(fns))
    return calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_pointwise_matches_numpy(dtype, bias):
    x = RNG.standard_normal((3, 5, 16, 14)).astype(dtype)  # 224 positions: per sample
    w = RNG.standard_normal((7, 5, 1, 1)).astype(dtype)
    b = RNG.standard_normal(7).astype(dtype) if bias else None
    assert C._pointwise(C._Geometry(2, (1, 1), (1, 1), (0, 0), (1, 1), 1), 224)
    (y, gx, gw, gb), g = _run(x, w, b)
    ry, rgx, rgw = _reference_1x1(x, w, b, g)
    tol = dict(rtol=1e-5, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y, ry, **tol)
    np.testing.assert_allclose(gx, rgx, **tol)
    np.testing.assert_allclose(gw, rgw, **tol)
    if bias:
        np.testing.assert_allclose(gb, g.sum(axis=(0, 2, 3)), **tol)


def test_pointwise_against_im2col(monkeypatch):
    x = RNG.standard_normal((4, 6, 16, 16)).astype(np.float32)
    w = RNG.standard_normal((5, 6, 1, 1)).astype(np.float32)
    b = RNG.standard_normal(5).astype(np.float32)
    per_sample, _ = _run(x, w, b)
    monkeypatch.setattr(C, "_POINTWISE_MIN_POSITIONS", 1 << 40)
    one_gemm, _ = _run(x, w, b)
    for a, r in zip(per_sample, one_gemm, strict=True):
        np.testing.assert_allclose(a, r, rtol=1e-5, atol=1e-5)


def test_pointwise_is_not_taken_with_stride_padding_groups_or_few_positions():
    geo = C._Geometry
    assert not C._pointwise(geo(2, (1, 1), (2, 2), (0, 0), (1, 1), 1), 400)
    assert not C._pointwise(geo(2, (1, 1), (1, 1), (1, 1), (1, 1), 1), 400)
    assert not C._pointwise(geo(2, (1, 1), (1, 1), (0, 0), (1, 1), 2), 400)
    assert not C._pointwise(geo(2, (3, 3), (1, 1), (0, 0), (1, 1), 1), 400)
    assert not C._pointwise(geo(2, (1, 1), (1, 1), (0, 0), (1, 1), 1), 49)


def test_pointwise_gradcheck():
    x = ember.tensor(RNG.standard_normal((2, 3, 16, 13)), requires_grad=True)  # 208 positions
    w = ember.tensor(RNG.standard_normal((4, 3, 1, 1)), requires_grad=True)
    b = ember.tensor(RNG.standard_normal(4), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b), (x, w, b))


def test_pointwise_empty_batch_and_non_contiguous_input():
    w = RNG.standard_normal((4, 3, 1, 1)).astype(np.float32)
    (y, gx, gw, _), _ = _run(np.zeros((0, 3, 16, 16), np.float32), w, None)
    assert y.shape == (0, 4, 16, 16) and gx.shape == (0, 3, 16, 16)
    np.testing.assert_array_equal(gw, np.zeros_like(w))
    x = RNG.standard_normal((2, 16, 16, 3)).astype(np.float32).transpose(0, 3, 1, 2)
    with ember.no_grad():
        y = F.conv2d(ember.tensor(x), ember.tensor(w)).numpy()
    np.testing.assert_allclose(y, np.einsum("oc,nchw->nohw", w[:, :, 0, 0], x), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("n", [2, 3, 7])
@pytest.mark.parametrize("shape", [
    ((6, 16, 16), (5, 6, 1, 1), {}),                             # pointwise
    ((6, 9, 11), (5, 6, 3, 3), {"stride": 2, "padding": 1}),    # im2col
    ((6, 9, 11), (5, 6, 1, 1), {"stride": 2}),                  # im2col, 1x1 stride 2
    ((3, 12, 12), (8, 3, 5, 5), {"padding": 2}),                 # im2col, chunked below
])
@pytest.mark.parametrize("chunk_bytes", [1, 8 << 20])
def test_batch_ranges_on_two_threads(split, monkeypatch, n, shape, chunk_bytes):
    # each range's rows of the output and the input gradient are its own, the weight
    # gradient is summed per range, then in range order: the one-thread result to rounding
    # (OpenBLAS rounds a GEMM's columns by where they fall in its blocks, so the same sample
    # in a shorter product may differ in the last bit), and the same every time
    monkeypatch.setattr(_cpu_conv.TUNING, "conv_chunk_bytes", chunk_bytes)
    monkeypatch.setattr(_cpu_conv.TUNING, "winograd", False)
    xs, ws, kw = shape
    x = RNG.standard_normal((n,) + xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    b = RNG.standard_normal(ws[0]).astype(np.float32)
    calls = _count_pool_runs(monkeypatch)
    several, _ = _run(x, w, b, **kw)
    assert calls == [2, 2]  # forward, backward: one range per thread
    again, _ = _run(x, w, b, **kw)
    ember.set_num_threads(1)
    one, _ = _run(x, w, b, **kw)
    assert calls == [2, 2, 2, 2]
    for a, r, s in zip(several, one, again, strict=True):
        np.testing.assert_allclose(a, r, rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(a, s)


def test_small_convolutions_stay_on_one_thread(monkeypatch):
    old = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        calls = _count_pool_runs(monkeypatch)
        _run(RNG.standard_normal((4, 3, 8, 8)).astype(np.float32),
             RNG.standard_normal((4, 3, 3, 3)).astype(np.float32), None, padding=1)
        assert calls == []
    finally:
        ember.set_num_threads(old)


def test_batch_ranges_rule(monkeypatch):
    monkeypatch.setattr(_cpu_threads, "available_threads", lambda: 2)
    big = _cpu_conv._THREADED_MIN_WORK
    assert _cpu_conv.batch_ranges(8, big, 64) == [(0, 4), (4, 8)]
    assert _cpu_conv.batch_ranges(8, big - 1, 64) == [(0, 8)]
    assert _cpu_conv.batch_ranges(8, big, _cpu_conv._THREADED_MIN_CHANNELS - 1) == [(0, 8)]
    assert _cpu_conv.batch_ranges(1, big, 64) == [(0, 1)]
    assert _cpu_conv.batch_ranges(0, big, 64) == [(0, 0)]
    monkeypatch.setattr(_cpu_threads, "available_threads", lambda: 1)
    assert _cpu_conv.batch_ranges(8, big, 64) == [(0, 8)]


def test_a_worker_error_reaches_the_caller(split):
    from ember.nn._functional import _kernels as K

    def part(lo, hi):
        if lo:
            raise ValueError("from the second range")

    x = np.zeros((4, 1), np.float32)
    with pytest.raises(ValueError, match="second range"):
        K.run_parts(x, part, K.batch_ranges(x, 4, 1 << 40, 64))
