"""The normalization layers and the losses of ember.nn, without PyTorch.

Forward passes against NumPy references and closed forms; gradients against finite
differences in float64 (gradcheck for every layer and loss, gradgradcheck where the
backward is a dedicated node); the fused kernels against their pure-xp fallback; the
running statistics of batch and instance norm; errors, reprs and state_dict keys as
PyTorch's. tests/interop/test_nn_norm_loss_torch.py compares all of it with torch.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.nn._functional import _norm_kernels

RNG = np.random.default_rng(0)


def t64(a, requires_grad=True):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def arr(t):
    return t.detach().numpy()


def randn(*shape):
    return RNG.standard_normal(shape)


# ---------------------------------------------------------------------------
# NumPy references

def bn_ref(x, w=None, b=None, eps=1e-5, mean=None, var=None):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if mean is None:
        mean, var = x.mean(axes), x.var(axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y


def ln_ref(x, nd, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - nd, x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def gn_ref(x, G, w=None, b=None, eps=1e-5):
    N, C = x.shape[:2]
    xg = x.reshape(N, G, -1)
    y = ((xg - xg.mean(2, keepdims=True)) / np.sqrt(xg.var(2, keepdims=True) + eps))
    y = y.reshape(x.shape)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return y * (1 if w is None else w.reshape(shape)) + (0 if b is None else b.reshape(shape))


def log_softmax_ref(x, axis=1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


# ---------------------------------------------------------------------------
# normalization: forward against NumPy

@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6), (2, 3, 4, 5), (2, 3, 2, 3, 2)])
def test_batch_norm_forward_and_running_stats(shape):
    x = randn(*shape)
    w, b = RNG.uniform(0.5, 1.5, 3), randn(3)
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    y = F.batch_norm(t64(x, False), rm, rv, t64(w, False), t64(b, False), True, 0.3, 1e-4)
    np.testing.assert_allclose(arr(y), bn_ref(x, w, b, 1e-4), rtol=1e-10, atol=1e-12)
    axes = (0,) + tuple(range(2, x.ndim))
    np.testing.assert_allclose(arr(rm), 0.3 * x.mean(axes), rtol=1e-12)
    np.testing.assert_allclose(arr(rv), 0.7 + 0.3 * x.var(axes, ddof=1), rtol=1e-12)
    # evaluation: the given statistics
    m, v = randn(3), RNG.uniform(0.5, 2, 3)
    y = F.batch_norm(t64(x, False), t64(m, False), t64(v, False), t64(w, False), None, False)
    np.testing.assert_allclose(arr(y), bn_ref(x, w, None, 1e-5, m, v), rtol=1e-10)


def test_batchnorm_module_momentum_none_and_eval():
    bn = nn.BatchNorm1d(3, momentum=None, dtype=ember.float64)
    xs = [randn(4, 3) * (i + 1) + i for i in range(3)]
    for x in xs:
        bn(t64(x, False))
    assert int(bn.num_batches_tracked) == 3
    assert bn.num_batches_tracked.dtype == ember.int64
    # the cumulative average of the batches' statistics
    np.testing.assert_allclose(arr(bn.running_mean), np.mean([x.mean(0) for x in xs], 0))
    np.testing.assert_allclose(arr(bn.running_var),
                               np.mean([x.var(0, ddof=1) for x in xs], 0))
    bn.eval()
    x = randn(2, 3)
    np.testing.assert_allclose(arr(bn(t64(x, False))),
                               bn_ref(x, None, None, 1e-5, arr(bn.running_mean),
                                      arr(bn.running_var)) * 1 + 0, rtol=1e-10)
    # momentum 0.1, and no tracking: batch statistics in eval too, no buffers
    bn = nn.BatchNorm2d(2, track_running_stats=False).double().eval()
    x = randn(3, 2, 2, 2)
    np.testing.assert_allclose(arr(bn(t64(x, False))), bn_ref(x), rtol=1e-10)
    assert bn.running_mean is None and list(dict(bn.named_buffers())) == []
    bn = nn.BatchNorm1d(2).double()
    bn(t64(randn(5, 2), False))
    assert int(bn.num_batches_tracked) == 1
    bn.reset_running_stats()
    assert int(bn.num_batches_tracked) == 0 and arr(bn.running_var).tolist() == [1, 1]


@pytest.mark.parametrize("shape,nd", [((4, 5), 1), ((2, 3, 4), 2), ((2, 3, 4), 3), ((6,), 1)])
def test_layer_norm_forward(shape, nd):
    x = randn(*shape)
    ws = shape[len(shape) - nd:]
    w, b = RNG.uniform(0.5, 1.5, ws), randn(*ws)
    y = F.layer_norm(t64(x, False), ws, t64(w, False), t64(b, False), 1e-3)
    np.testing.assert_allclose(arr(y), ln_ref(x, nd, w, b, 1e-3), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(arr(F.layer_norm(t64(x, False), list(ws))), ln_ref(x, nd),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape,G", [((2, 4, 5), 2), ((3, 6, 2, 2), 3), ((2, 4), 4),
                                     ((2, 4, 3), 1)])
def test_group_norm_forward(shape, G):
    x = randn(*shape)
    C = shape[1]
    w, b = RNG.uniform(0.5, 1.5, C), randn(C)
    np.testing.assert_allclose(arr(F.group_norm(t64(x, False), G, t64(w, False),
                                                t64(b, False))),
                               gn_ref(x, G, w, b), rtol=1e-10, atol=1e-12)


def test_instance_norm_forward_and_running_stats():
    x = randn(3, 2, 5)
    ref = (x - x.mean(2, keepdims=True)) / np.sqrt(x.var(2, keepdims=True) + 1e-5)
    np.testing.assert_allclose(arr(F.instance_norm(t64(x, False))), ref, rtol=1e-10)
    rm, rv = ember.zeros(2, dtype=ember.float64), ember.ones(2, dtype=ember.float64)
    F.instance_norm(t64(x, False), rm, rv, momentum=0.5)
    np.testing.assert_allclose(arr(rm), 0.5 * x.mean(2).mean(0), rtol=1e-12)
    np.testing.assert_allclose(arr(rv), 0.5 + 0.5 * x.var(2, ddof=1).mean(0), rtol=1e-12)
    m = nn.InstanceNorm1d(2, affine=True, track_running_stats=True).double()
    m(t64(x, False))
    assert int(m.num_batches_tracked) == 0  # PyTorch's instance norm does not count
    m.eval()
    y = m(t64(x, False))
    np.testing.assert_allclose(arr(y), bn_ref(x, None, None, 1e-5, arr(m.running_mean),
                                              arr(m.running_var)), rtol=1e-10)
    # unbatched input (C, L)
    np.testing.assert_allclose(arr(nn.InstanceNorm1d(2)(t64(x[0], False))), ref[0], rtol=1e-10)


def test_rms_norm_and_local_response_norm_forward():
    x = randn(3, 4, 5)
    w = RNG.uniform(0.5, 1.5, 5)
    ref = x / np.sqrt((x * x).mean(-1, keepdims=True) + np.finfo(np.float64).eps) * w
    np.testing.assert_allclose(arr(F.rms_norm(t64(x, False), [5], t64(w, False))), ref,
                               rtol=1e-12)
    ref = x / np.sqrt((x * x).mean((1, 2), keepdims=True) + 0.1)
    np.testing.assert_allclose(arr(F.rms_norm(t64(x, False), (4, 5), eps=0.1)), ref,
                               rtol=1e-12)
    assert F.rms_norm(ember.tensor(x.astype(np.float32)), (5,)).dtype == ember.float32
    # local response norm: the window of `size` channels centered (size//2 before)
    size, alpha, beta, k = 3, 0.2, 0.6, 1.5
    sq = np.pad(x * x, ((0, 0), (size // 2, (size - 1) // 2), (0, 0)))
    div = sum(sq[:, i:i + 4] for i in range(size)) / size
    ref = x / (k + alpha * div) ** beta
    np.testing.assert_allclose(arr(F.local_response_norm(t64(x, False), size, alpha, beta, k)),
                               ref, rtol=1e-12)


def test_norm_float32_statistics_are_accurate():
    x = (RNG.standard_normal((4, 3, 1000)) * 0.01 + 1000).astype(np.float32)
    y = arr(F.batch_norm(ember.tensor(x), None, None, training=True))
    # y = x * scale + shift loses the low bits when |mean| >> std (PyTorch's form too:
    # its error here is 5e-3); the statistics themselves must be exact
    np.testing.assert_allclose(y, bn_ref(x.astype(np.float64)), atol=2e-2)
    y = arr(F.layer_norm(ember.tensor(x), (1000,)))
    np.testing.assert_allclose(y, ln_ref(x.astype(np.float64), 1), atol=2e-2)


# ---------------------------------------------------------------------------
# the fused kernels against the pure-xp fallback

@pytest.fixture
def fallback():
    _norm_kernels.FORCE_FALLBACK = True
    yield
    _norm_kernels.FORCE_FALLBACK = False


def _run_all(dtype):
    rng = np.random.default_rng(1)
    out = []
    C = 4
    w, b = ember.tensor(rng.uniform(0.5, 1.5, C).astype(dtype)), \
        ember.tensor(rng.standard_normal(C).astype(dtype))
    w.requires_grad_(True)
    b.requires_grad_(True)
    t = ember.tensor(np.array([[0, 1, 2, 3, -100], [3, 3, -100, 1, 0]]))
    fns = [
        lambda x: F.batch_norm(x, ember.zeros(C, dtype=x.dtype), ember.ones(C, dtype=x.dtype),
                               w, b, True),
        lambda x: F.batch_norm(x.reshape(10, 4), None, None, w, b, True),
        lambda x: F.batch_norm(x, ember.zeros(C, dtype=x.dtype) + 0.5,
                               ember.ones(C, dtype=x.dtype) * 2, w, b, False),
        lambda x: F.layer_norm(x, (5,), w.repeat(2)[:5], b.repeat(2)[:5]),
        lambda x: F.group_norm(x, 2, w, b),
        lambda x: F.cross_entropy(x, t, weight=w.detach(), label_smoothing=0.2),
        lambda x: F.cross_entropy(x.transpose(1, 2).reshape(10, 4), t.reshape(10),
                                  reduction="none"),
        # (N, C) batch norm and layer norm weight sums: tiles of 16 columns and a tail
        lambda x: F.batch_norm(x.reshape(2, 20), None, None, w.repeat(5), b.repeat(5), True),
        lambda x: F.batch_norm(x.reshape(1, 40).repeat(3, 1) * ember.arange(3.0).reshape(3, 1)
                               .to(x.dtype), None, None, w.repeat(10), None, True),
        lambda x: F.layer_norm(x.reshape(2, 20), (20,), w.repeat(5), b.repeat(5)),
        lambda x: F.layer_norm(x.reshape(1, 40), (40,), w.repeat(10), b.repeat(10)),
        lambda x: F.layer_norm(x.reshape(5, 8), (8,), w.repeat(2), b.repeat(2)),
    ]
    for fn in fns:
        x = ember.tensor(rng.standard_normal((2, 4, 5)).astype(dtype), requires_grad=True)
        y = fn(x)
        y.backward(ember.tensor(rng.standard_normal(tuple(y.shape)).astype(dtype)))
        out.append([arr(y), arr(x.grad), arr(w.grad) if w.grad is not None else None,
                    arr(b.grad) if b.grad is not None else None])
        w.grad = b.grad = None
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_match_fallback(dtype, fallback):
    fb = _run_all(dtype)
    _norm_kernels.FORCE_FALLBACK = False
    kn = _run_all(dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    for i, (a, b) in enumerate(zip(fb, kn, strict=True)):
        for j, (p, q) in enumerate(zip(a, b, strict=True)):
            if p is None or q is None:
                assert p is None and q is None, (i, j)
            else:
                np.testing.assert_allclose(q, p, err_msg=f"fn {i} item {j}", **tol)


def test_kernels_threaded_match_fallback():
    # every element count takes the OpenMP paths (when built with OpenMP)
    from ember._C import _loss_norm

    fb = None
    _norm_kernels.FORCE_FALLBACK = True
    try:
        fb = _run_all(np.float64)
    finally:
        _norm_kernels.FORCE_FALLBACK = False
    old = _loss_norm.set_parallel_threshold(1)
    try:
        kn = _run_all(np.float64)
    finally:
        _loss_norm.set_parallel_threshold(old)
    for a, b in zip(fb, kn, strict=True):
        for p, q in zip(a, b, strict=True):
            if p is not None:
                np.testing.assert_allclose(q, p, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opts", [dict(), dict(reduction="none"),
                                  dict(label_smoothing=0.3, reduction="sum"),
                                  dict(weight=True, ignore_index=2, label_smoothing=0.1)])
def test_cross_entropy_spatial_blocks_match_fallback(dtype, opts):
    # S = 300 rows per sample: the kernel's blocks of 128 rows and a partial one
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((2, 5, 20, 15)) * 3).astype(dtype)
    x[0, :, 0, 0] = [1e4, -1e4, 0, 3, 2]   # a huge logit: no overflow
    t = rng.integers(0, 5, (2, 20, 15))
    t[1, 3, :] = 2
    kw = dict(opts)
    if kw.pop("weight", False):
        kw["weight"] = ember.tensor(rng.uniform(0.5, 2, 5).astype(dtype))
    g = rng.standard_normal((2, 20, 15)).astype(dtype)
    res = []
    from ember._C import _loss_norm

    for ff, threshold in ((True, None), (False, None), (False, 1)):
        _norm_kernels.FORCE_FALLBACK = ff
        old = _loss_norm.set_parallel_threshold(threshold) if threshold else None
        try:
            e = ember.tensor(x, requires_grad=True)
            y = F.cross_entropy(e, ember.tensor(t), **kw)
            y.backward(ember.tensor(g) if y.dim() else None)
            res.append((arr(y), arr(e.grad)))
        finally:
            _norm_kernels.FORCE_FALLBACK = False
            if old is not None:
                _loss_norm.set_parallel_threshold(old)
    tol = dict(rtol=2e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-13)
    for got in res[1:]:
        np.testing.assert_allclose(got[0], res[0][0], **tol)
        np.testing.assert_allclose(got[1], res[0][1], **tol)
        assert np.isfinite(got[1]).all()


# ---------------------------------------------------------------------------
# gradcheck: every layer in float64

NORM_MODULES = [
    (lambda: nn.BatchNorm1d(3), (4, 3)),
    (lambda: nn.BatchNorm1d(3, affine=False), (2, 3, 3)),
    (lambda: nn.BatchNorm2d(2), (2, 2, 2, 3)),
    (lambda: nn.BatchNorm2d(2).eval(), (2, 2, 2, 3)),
    (lambda: nn.BatchNorm3d(2, momentum=None), (2, 2, 2, 1, 2)),
    (lambda: nn.InstanceNorm1d(2, affine=True), (2, 2, 4)),
    (lambda: nn.InstanceNorm2d(2), (2, 2, 2, 3)),
    (lambda: nn.InstanceNorm3d(2, affine=True), (1, 2, 2, 1, 2)),
    (lambda: nn.LayerNorm(4), (3, 4)),
    (lambda: nn.LayerNorm((2, 3), bias=False), (2, 2, 3)),
    (lambda: nn.GroupNorm(2, 4), (2, 4, 3)),
    (lambda: nn.GroupNorm(1, 2, affine=False), (2, 2, 2, 2)),
    (lambda: nn.RMSNorm(4), (3, 4)),
    (lambda: nn.RMSNorm((2, 2), eps=1e-3), (2, 2, 2)),
    (lambda: nn.LocalResponseNorm(3, alpha=0.5, beta=0.6), (2, 4, 3)),
]


@pytest.mark.parametrize("make,shape", NORM_MODULES, ids=[str(i) for i in range(len(NORM_MODULES))])
def test_norm_module_gradcheck(make, shape):
    m = make().double()
    params = list(m.parameters())
    with ember.no_grad():
        for p in params:
            p.copy_(ember.tensor(RNG.uniform(0.5, 1.5, tuple(p.shape))))
    x = t64(randn(*shape))
    # (in training the running statistics move at every call; the output does not
    # depend on them there)
    assert gradcheck(lambda x, *ps: m(x), (x, *params))
    assert gradgradcheck(lambda x, *ps: m(x), (x, *params))


# ---------------------------------------------------------------------------
# losses: forward against closed forms, gradcheck for each

def _pm1(shape):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


def _probs(shape, axis=1):
    return np.exp(log_softmax_ref(RNG.standard_normal(shape), axis))


def _cls(shape, C):
    return ember.tensor(RNG.integers(0, C, shape))


def test_regression_losses_forward():
    x, y = randn(3, 4), randn(3, 4)
    d = x - y
    X, Y = t64(x, False), t64(y, False)
    np.testing.assert_allclose(arr(F.l1_loss(X, Y)), np.abs(d).mean())
    np.testing.assert_allclose(arr(F.mse_loss(X, Y, reduction="sum")), (d * d).sum())
    np.testing.assert_allclose(arr(F.mse_loss(X, Y, reduction="none")), d * d)
    ad = np.abs(d)
    np.testing.assert_allclose(arr(F.smooth_l1_loss(X, Y, beta=0.5)),
                               np.where(ad < 0.5, 0.5 * d * d / 0.5, ad - 0.25).mean())
    np.testing.assert_allclose(arr(F.huber_loss(X, Y, delta=0.7, reduction="none")),
                               np.where(ad < 0.7, 0.5 * d * d, 0.7 * (ad - 0.35)))
    w = RNG.uniform(0.5, 2, (3, 4))
    np.testing.assert_allclose(arr(F.mse_loss(X, Y, weight=t64(w, False))),
                               (d * d * w).sum() / w.sum())


def test_classification_losses_forward():
    x = randn(5, 4)
    t = RNG.integers(0, 4, 5)
    t[1] = -100
    w = RNG.uniform(0.5, 2, 4)
    lp = log_softmax_ref(x)
    picked = -lp[np.arange(5), np.where(t < 0, 0, t)] * w[np.where(t < 0, 0, t)] * (t >= 0)
    X, T, W = t64(x, False), ember.tensor(t), t64(w, False)
    np.testing.assert_allclose(arr(F.cross_entropy(X, T, W)),
                               picked.sum() / (w[t[t >= 0]]).sum(), rtol=1e-12)
    np.testing.assert_allclose(arr(F.nll_loss(t64(lp, False), T, W, reduction="none")), picked,
                               rtol=1e-12)
    # label smoothing: the target mixes with the uniform distribution
    ls = 0.3
    tt = RNG.integers(0, 4, 5)
    q = np.full((5, 4), ls / 4)
    q[np.arange(5), tt] += 1 - ls
    np.testing.assert_allclose(arr(F.cross_entropy(X, ember.tensor(tt), label_smoothing=ls)),
                               -(q * lp).sum(1).mean(), rtol=1e-12)
    # probabilities as targets, extra dims
    x4 = randn(2, 3, 2, 2)
    p = _probs((2, 3, 2, 2))
    np.testing.assert_allclose(arr(F.cross_entropy(t64(x4, False), t64(p, False),
                                                   reduction="none")),
                               -(p * log_softmax_ref(x4)).sum(1), rtol=1e-12)
    t4 = RNG.integers(0, 3, (2, 2, 2))
    ref = -np.take_along_axis(log_softmax_ref(x4), t4[:, None], 1)[:, 0]
    np.testing.assert_allclose(arr(F.cross_entropy(t64(x4, False), ember.tensor(t4),
                                                   reduction="none")), ref, rtol=1e-12)
    # all targets ignored: 'mean' is nan (0 / 0), as PyTorch
    assert math.isnan(float(F.cross_entropy(X, ember.tensor(np.full(5, -100)))))


def test_binary_and_divergence_losses_forward():
    p, y = RNG.uniform(0.05, 0.95, (3, 4)), RNG.uniform(0, 1, (3, 4))
    ref = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    np.testing.assert_allclose(arr(F.binary_cross_entropy(t64(p, False), t64(y, False))),
                               ref.mean(), rtol=1e-12)
    z = randn(3, 4) * 30
    pw = np.array([1.0, 2.0, 0.5, 3.0])
    ref = pw * y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z)
    got = arr(F.binary_cross_entropy_with_logits(t64(z, False), t64(y, False),
                                                 pos_weight=t64(pw, False), reduction="none"))
    np.testing.assert_allclose(got, ref, rtol=1e-9)
    lq, pt = log_softmax_ref(randn(3, 4)), _probs((3, 4))
    np.testing.assert_allclose(arr(F.kl_div(t64(lq, False), t64(pt, False),
                                            reduction="batchmean")),
                               (pt * (np.log(pt) - lq)).sum() / 3, rtol=1e-12)
    np.testing.assert_allclose(arr(F.kl_div(t64(lq, False), t64(np.log(pt), False),
                                            reduction="sum", log_target=True)),
                               (pt * (np.log(pt) - lq)).sum(), rtol=1e-12)
    x, t = randn(3, 4), RNG.poisson(2, (3, 4)).astype(np.float64)
    st_ = np.where(t > 1, t * np.log(np.maximum(t, 1)) - t + 0.5 * np.log(2 * np.pi * t), 0)
    np.testing.assert_allclose(arr(F.poisson_nll_loss(t64(x, False), t64(t, False), full=True,
                                                      reduction="none")),
                               np.exp(x) - t * x + st_, rtol=1e-12)
    v = RNG.uniform(0.1, 2, (3, 1))
    mu, obs = randn(3, 4), randn(3, 4)
    np.testing.assert_allclose(arr(F.gaussian_nll_loss(t64(mu, False), t64(obs, False),
                                                       t64(v, False), full=True)),
                               (0.5 * (np.log(v) + (mu - obs) ** 2 / v)
                                + 0.5 * np.log(2 * np.pi)).mean(), rtol=1e-12)


def test_margin_losses_forward():
    x, y = randn(4, 5), _pm1((4, 5))
    np.testing.assert_allclose(arr(F.soft_margin_loss(t64(x, False), t64(y, False))),
                               np.log1p(np.exp(-y * x)).mean(), rtol=1e-12)
    m01 = (RNG.random((4, 5)) < 0.5).astype(np.float64)
    ls = -(m01 * np.log(1 / (1 + np.exp(-x))) + (1 - m01) * np.log(1 / (1 + np.exp(x))))
    np.testing.assert_allclose(arr(F.multilabel_soft_margin_loss(t64(x, False),
                                                                 t64(m01, False))),
                               ls.mean(1).mean(), rtol=1e-12)
    np.testing.assert_allclose(arr(F.hinge_embedding_loss(t64(x, False), t64(y, False), 0.5,
                                                          reduction="none")),
                               np.where(y == 1, x, np.maximum(0, 0.5 - x)))
    a, b, t = randn(6), randn(6), _pm1(6)
    np.testing.assert_allclose(arr(F.margin_ranking_loss(t64(a, False), t64(b, False),
                                                         t64(t, False), 0.3)),
                               np.maximum(0, -t * (a - b) + 0.3).mean())
    x1, x2, t = randn(4, 5), randn(4, 5), _pm1(4)
    cos = (x1 * x2).sum(1) / np.sqrt((x1 * x1).sum(1) * (x2 * x2).sum(1))
    np.testing.assert_allclose(arr(F.cosine_embedding_loss(t64(x1, False), t64(x2, False),
                                                           t64(t, False), 0.1, reduction="none")),
                               np.where(t == 1, 1 - cos, np.maximum(0, cos - 0.1)), rtol=1e-9)
    # multi-margin: sum over i != y of max(0, margin - x[y] + x[i])**p / C
    t = RNG.integers(0, 5, 4)
    xy = x[np.arange(4), t][:, None]
    z = np.maximum(0, 0.5 - xy + x) ** 2
    z[np.arange(4), t] = 0
    np.testing.assert_allclose(arr(F.multi_margin_loss(t64(x, False), ember.tensor(t), p=2,
                                                       margin=0.5, reduction="none")),
                               z.sum(1) / 5, rtol=1e-12)
    # multilabel margin: targets up to the first -1
    tg = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0], [4, -1, 2, 2, 2]])
    ref = []
    for i in range(4):
        js = list(itertools.takewhile(lambda v: v >= 0, tg[i]))
        s = sum(max(0, 1 - (x[i, j] - x[i, k])) for j in js for k in range(5) if k not in js)
        ref.append(s / 5)
    np.testing.assert_allclose(arr(F.multilabel_margin_loss(t64(x, False), ember.tensor(tg),
                                                            reduction="none")), ref, rtol=1e-12)
    an, po, ne = randn(4, 5), randn(4, 5), randn(4, 5)

    def d(u, v):
        return np.sqrt(((u - v + 1e-6) ** 2).sum(1))

    np.testing.assert_allclose(arr(F.triplet_margin_loss(t64(an, False), t64(po, False),
                                                         t64(ne, False), swap=True)),
                               np.maximum(0, d(an, po) - np.minimum(d(an, ne), d(po, ne)) + 1)
                               .mean(), rtol=1e-12)


def _ctc_brute(lp, target, blank):
    """-log of the sum over all alignments of length T that collapse to target."""
    T, C = lp.shape
    total = -np.inf
    for path in itertools.product(range(C), repeat=T):
        collapsed = [k for i, k in enumerate(path) if k != blank and (i == 0 or path[i - 1] != k)]
        if collapsed == list(target):
            total = np.logaddexp(total, sum(lp[i, k] for i, k in enumerate(path)))
    return -total


def test_ctc_loss_against_brute_force():
    T, N, C = 5, 3, 3
    lp = log_softmax_ref(randn(T, N, C), 2)
    targets = np.array([[1, 2], [1, 1], [2, 0]])
    il, tl = np.array([5, 4, 3]), np.array([2, 2, 1])
    got = arr(F.ctc_loss(t64(lp, False), ember.tensor(targets), ember.tensor(il),
                         ember.tensor(tl), reduction="none"))
    ref = [_ctc_brute(lp[:il[n], n], targets[n, :tl[n]], 0) for n in range(N)]
    np.testing.assert_allclose(got, ref, rtol=1e-10)
    got = F.ctc_loss(t64(lp, False), ember.tensor(targets), ember.tensor(il), ember.tensor(tl))
    np.testing.assert_allclose(arr(got), np.mean(np.array(ref) / tl), rtol=1e-10)
    # impossible alignment: inf, or 0 with zero_infinity
    lp2 = t64(lp[:2], False)
    tg = ember.tensor(np.array([[1, 1, 1]] * 3))
    assert math.isinf(float(F.ctc_loss(lp2, tg, (2, 2, 2), (3, 3, 3), reduction="sum")))
    assert float(F.ctc_loss(lp2, tg, (2, 2, 2), (3, 3, 3), zero_infinity=True)) == 0


_R = np.random.default_rng(42)
_T4 = ember.tensor(_R.integers(0, 5, 4))
_T23 = ember.tensor(_R.integers(0, 4, (2, 3)))
_T3 = ember.tensor(_R.integers(0, 4, 3))
_PM34 = t64(np.where(_R.random((3, 4)) < 0.5, -1.0, 1.0), False)
_PM4 = t64(np.where(_R.random(4) < 0.5, -1.0, 1.0), False)
_PM5 = t64(np.where(_R.random(5) < 0.5, -1.0, 1.0), False)
_M01 = t64(_R.random((3, 4)) < 0.5, False)
_POIS = t64(_R.poisson(2, (3, 4)), False)
_W4 = t64([1, 2, 3, 4.0], False)

LOSS_GRADCHECK = [
    ("l1", lambda x, y: F.l1_loss(x, y), [(3, 4), (3, 4)]),
    ("mse", lambda x, y: F.mse_loss(x, y, reduction="sum"), [(3, 4), (3, 4)]),
    ("mse_bcast", lambda x, y: F.mse_loss(x, y.reshape(1, 4).expand(3, 4)), [(3, 4), (4,)]),
    ("smooth_l1", lambda x, y: F.smooth_l1_loss(x, y, beta=0.5), [(3, 4), (3, 4)]),
    ("huber", lambda x, y: F.huber_loss(x, y, delta=0.4, reduction="none"), [(3, 4), (3, 4)]),
    ("ce", lambda x: F.cross_entropy(x, _T4), [(4, 5)]),
    ("ce_all", lambda x: F.cross_entropy(
        x, ember.tensor(np.array([[0, 3, -1], [2, 1, 1]])), weight=_W4, ignore_index=-1,
        label_smoothing=0.25, reduction="none"), [(2, 4, 3)]),
    ("ce_probs", lambda x, p: F.cross_entropy(x, F.softmax(p, 1), label_smoothing=0.1),
     [(3, 4, 2), (3, 4, 2)]),
    ("nll", lambda x: F.nll_loss(x, _T23, reduction="sum"), [(2, 4, 3)]),
    ("bce", lambda x, y: F.binary_cross_entropy(x.sigmoid(), y.sigmoid()), [(3, 4), (3, 4)]),
    ("bce_logits", lambda x, y, pw: F.binary_cross_entropy_with_logits(
        x, y.sigmoid(), pos_weight=pw), [(3, 4), (3, 4), (4,)]),
    ("kl", lambda x, y: F.kl_div(x, F.softmax(y, 1), reduction="batchmean"), [(3, 4), (3, 4)]),
    ("kl_log", lambda x, y: F.kl_div(x, y, log_target=True, reduction="sum"), [(3, 4), (3, 4)]),
    ("soft_margin", lambda x: F.soft_margin_loss(x, _PM34), [(3, 4)]),
    ("ml_soft_margin", lambda x: F.multilabel_soft_margin_loss(x, _M01, weight=_W4), [(3, 4)]),
    ("ml_margin", lambda x: F.multilabel_margin_loss(
        x, ember.tensor(np.array([[3, 0, -1, 1], [1, 2, 3, 0]]))), [(2, 4)]),
    ("multi_margin", lambda x: F.multi_margin_loss(x, _T3, p=2, weight=_W4), [(3, 4)]),
    ("hinge", lambda x: F.hinge_embedding_loss(x, _PM34, 0.5), [(3, 4)]),
    ("cos_emb", lambda a, b: F.cosine_embedding_loss(a, b, _PM4, -0.2), [(4, 3), (4, 3)]),
    ("margin_rank", lambda a, b: F.margin_ranking_loss(a, b, _PM5, 0.1), [(5,), (5,)]),
    ("triplet", lambda a, p, n: F.triplet_margin_loss(a, p, n, p=1.5, swap=True),
     [(3, 4), (3, 4), (3, 4)]),
    ("triplet_dist", lambda a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), margin=2.0),
     [(3, 4), (3, 4), (3, 4)]),
    ("poisson", lambda x, y: F.poisson_nll_loss(x, y.exp(), full=True), [(3, 4), (3, 4)]),
    ("poisson_lin", lambda x: F.poisson_nll_loss(x.exp(), _POIS, log_input=False), [(3, 4)]),
    ("gaussian", lambda x, y, v: F.gaussian_nll_loss(x, y, v.exp(), full=True),
     [(3, 4), (3, 4), (3,)]),
    ("ctc", lambda x: F.ctc_loss(F.log_softmax(x, 2), ember.tensor(np.array([[1, 2], [1, 1]])),
                                 (5, 4), (2, 2)), [(5, 2, 3)]),
    ("ctc_concat", lambda x: F.ctc_loss(F.log_softmax(x, 1), ember.tensor(np.array([2, 1])),
                                        (4,), (2,), blank=1, reduction="sum"), [(4, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", LOSS_GRADCHECK, ids=[c[0] for c in LOSS_GRADCHECK])
def test_loss_gradcheck(name, fn, shapes):
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    args = [t64(rng.standard_normal(s) + (0.3 if name.startswith("gaussian") else 0))
            for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(fn, args)


@pytest.mark.parametrize("name", ["ce", "ce_all", "nll", "bce", "kl"])
def test_loss_gradgradcheck(name):
    fn, shapes = {c[0]: c[1:] for c in LOSS_GRADCHECK}[name]
    rng = np.random.default_rng(3)
    assert gradgradcheck(fn, [t64(rng.standard_normal(s)) for s in shapes])


def test_loss_modules_forward_is_functional():
    x, y = t64(randn(3, 4), False), t64(RNG.uniform(0.1, 1, (3, 4)), False)
    t = _cls((3,), 4)
    pairs = [
        (nn.L1Loss(reduction="sum"), F.l1_loss(x, y, reduction="sum"), (x, y)),
        (nn.MSELoss(), F.mse_loss(x, y), (x, y)),
        (nn.CrossEntropyLoss(label_smoothing=0.1), F.cross_entropy(x, t, label_smoothing=0.1),
         (x, t)),
        (nn.NLLLoss(ignore_index=1), F.nll_loss(x, t, ignore_index=1), (x, t)),
        (nn.SmoothL1Loss(beta=0.3), F.smooth_l1_loss(x, y, beta=0.3), (x, y)),
        (nn.HuberLoss(delta=2.0), F.huber_loss(x, y, delta=2.0), (x, y)),
        (nn.KLDivLoss(reduction="sum"), F.kl_div(x, y, reduction="sum"), (x, y)),
    ]
    for m, ref, args in pairs:
        np.testing.assert_array_equal(arr(m(*args)), arr(ref))


# ---------------------------------------------------------------------------
# repr, state_dict keys, state dict loading

REPRS = [
    (lambda: nn.BatchNorm1d(4),
     "BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)",
     ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]),
    (lambda: nn.BatchNorm2d(3, momentum=None, affine=False),
     "BatchNorm2d(3, eps=1e-05, momentum=None, affine=False, bias=False, "
     "track_running_stats=True)", ["running_mean", "running_var", "num_batches_tracked"]),
    (lambda: nn.BatchNorm3d(2, track_running_stats=False),
     "BatchNorm3d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, "
     "track_running_stats=False)", ["weight", "bias"]),
    (lambda: nn.InstanceNorm1d(3),
     "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, "
     "track_running_stats=False)", []),
    (lambda: nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
     "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
     "track_running_stats=True)",
     ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]),
    (lambda: nn.LayerNorm((3, 4)), "LayerNorm((3, 4), eps=1e-05, elementwise_affine=True, "
     "bias=True)", ["weight", "bias"]),
    (lambda: nn.LayerNorm(5, bias=False), "LayerNorm((5,), eps=1e-05, elementwise_affine=True, "
     "bias=False)", ["weight"]),
    (lambda: nn.GroupNorm(2, 4), "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)",
     ["weight", "bias"]),
    (lambda: nn.RMSNorm(5), "RMSNorm((5,), eps=None, elementwise_affine=True)", ["weight"]),
    (lambda: nn.RMSNorm([2, 3], eps=1e-4, elementwise_affine=False),
     "RMSNorm((2, 3), eps=0.0001, elementwise_affine=False)", []),
    (lambda: nn.LocalResponseNorm(3), "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)",
     []),
    (lambda: nn.CrossEntropyLoss(), "CrossEntropyLoss()", []),
    (lambda: nn.CrossEntropyLoss(weight=ember.ones(3)), "CrossEntropyLoss()", ["weight"]),
    (lambda: nn.CTCLoss(), "CTCLoss()", []),
    (lambda: nn.BCEWithLogitsLoss(pos_weight=ember.ones(2)), "BCEWithLogitsLoss()",
     ["pos_weight"]),
]


@pytest.mark.parametrize("make,text,keys", REPRS, ids=[r[1].split("(")[0] + str(i)
                                                       for i, r in enumerate(REPRS)])
def test_repr_and_state_dict_keys(make, text, keys):
    m = make()
    assert repr(m) == text
    assert list(m.state_dict()) == keys


def test_norm_default_init_and_dtypes():
    bn = nn.BatchNorm2d(3)
    assert arr(bn.weight).tolist() == [1, 1, 1] and arr(bn.bias).tolist() == [0, 0, 0]
    assert bn.weight.dtype == ember.float32 and bn.num_batches_tracked.dtype == ember.int64
    ln = nn.LayerNorm(4, dtype=ember.float64)
    assert ln.weight.dtype == ember.float64 and arr(ln.weight).tolist() == [1] * 4
    assert nn.GroupNorm(2, 4).weight.shape == (4,)


def test_batchnorm_load_state_dict():
    src = nn.BatchNorm1d(3)
    src(ember.tensor(RNG.standard_normal((4, 3)).astype(np.float32)))
    dst = nn.BatchNorm1d(3)
    res = dst.load_state_dict(src.state_dict(), strict=True)
    assert not res.missing_keys and not res.unexpected_keys
    assert int(dst.num_batches_tracked) == 1
    np.testing.assert_array_equal(arr(dst.running_mean), arr(src.running_mean))
    sd = src.state_dict()
    del sd["running_var"]
    with pytest.raises(RuntimeError, match="Missing key"):
        dst.load_state_dict(sd, strict=True)


# ---------------------------------------------------------------------------
# errors: PyTorch's messages

def f32(*shape):
    return ember.tensor(RNG.standard_normal(shape).astype(np.float32))


ERRORS = [
    (lambda: F.batch_norm(f32(2, 3), None, None), RuntimeError,
     "running_mean must be defined in evaluation mode"),
    (lambda: F.batch_norm(f32(1, 3), None, None, training=True), ValueError,
     r"Expected more than 1 value per channel when training, got input size .*\[1, 3\]"),
    (lambda: F.batch_norm(f32(2, 3), None, None, f32(4), training=True), RuntimeError,
     "weight should contain 3 elements not 4"),
    (lambda: F.batch_norm(f32(2, 3), f32(2), f32(3), training=True), RuntimeError,
     "running_mean should contain 3 elements not 2"),
    (lambda: F.batch_norm(ember.tensor(np.ones((2, 3), np.int64)), None, None, training=True),
     NotImplementedError, "\"batch_norm\" not implemented for 'Long'"),
    (lambda: nn.BatchNorm2d(3)(f32(2, 3, 4)), ValueError, r"expected 4D input \(got 3D input\)"),
    (lambda: nn.BatchNorm1d(3)(f32(2, 3, 4, 5)), ValueError,
     r"expected 2D or 3D input \(got 4D input\)"),
    (lambda: F.instance_norm(f32(2, 3, 1)), ValueError,
     "Expected more than 1 spatial element when training"),
    (lambda: nn.InstanceNorm1d(3, affine=True)(f32(2, 4, 5)), ValueError,
     r"expected input's size at dim=1 to match num_features \(3\), but got: 4."),
    (lambda: F.layer_norm(f32(2, 3), (4,)), RuntimeError,
     r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], but got input of "
     r"size\[2, 3\]"),
    (lambda: F.layer_norm(f32(2, 3), (3,), f32(4)), RuntimeError,
     r"Expected weight to be of same shape as normalized_shape, but got weight of shape \[4\] "
     r"and normalized_shape = \[3\]"),
    (lambda: F.layer_norm(f32(2, 3), (3,), ember.ones(3, dtype=ember.float64)), RuntimeError,
     "mixed dtype"),
    (lambda: F.group_norm(f32(2, 3, 4), 2), RuntimeError,
     r"Expected number of channels in input to be divisible by num_groups, but got input of "
     r"shape \[2, 3, 4\] and num_groups=2"),
    (lambda: F.group_norm(f32(2, 4, 4), 2, f32(3)), RuntimeError,
     "Expected weight to be a vector of size equal to the number of channels in input"),
    (lambda: nn.GroupNorm(2, 3), ValueError,
     r"num_channels \(3\) must be divisible by num_groups \(2\)"),
    (lambda: F.rms_norm(f32(2, 3), (4,)), RuntimeError, r"expected input with shape \[\*4\]"),
    (lambda: F.local_response_norm(f32(2, 3), 2), ValueError,
     r"Expected 3D or higher dimensionality"),
    (lambda: F.cross_entropy(f32(3, 4), _cls((4,), 4)), ValueError,
     r"Expected input batch_size \(3\) to match target batch_size \(4\)."),
    (lambda: F.cross_entropy(f32(3, 4), ember.tensor(np.array([0, 1, 7]))), IndexError,
     "Target 7 is out of bounds."),
    (lambda: F.cross_entropy(f32(3, 4), ember.tensor(np.array([0, -1, 2]))), IndexError,
     "Target -1 is out of bounds."),
    (lambda: F.nll_loss(f32(3, 4), ember.tensor(np.array([0, 1, 4]))), IndexError,
     "Target 4 is out of bounds."),
    (lambda: F.cross_entropy(f32(3, 4), f32(3)), RuntimeError,
     "expected target dtype to be Long or Byte, but got Float"),
    (lambda: F.cross_entropy(f32(3, 4), _cls((3,), 4), weight=f32(3)), RuntimeError,
     "weight tensor should be defined either for all 4 classes or no classes but got weight "
     r"tensor of shape: \[3\]"),
    (lambda: F.cross_entropy(f32(3, 4), _cls((3,), 4), weight=ember.ones(4, dtype=ember.float64)),
     RuntimeError, "expected scalar type Float but found Double"),
    (lambda: F.cross_entropy(f32(3, 4, 5), _cls((3, 4), 4)), RuntimeError,
     r"Expected target size \[3, 5\], got \[3, 4\]"),
    (lambda: F.cross_entropy(f32(3, 4), _cls((3,), 4), label_smoothing=1.5), RuntimeError,
     r"label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    (lambda: F.cross_entropy(f32(3, 4), f32(3, 4), ignore_index=1), RuntimeError,
     "ignore_index is not supported for floating point target"),
    (lambda: F.cross_entropy(f32(3, 4), _cls((3,), 4), reduction="foo"), ValueError,
     "foo is not a valid value for reduction"),
    (lambda: F.nll_loss(f32(3, 4), _cls((3, 2), 4)), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    (lambda: F.nll_loss(f32(4), _cls((3,), 4)), ValueError,
     "For 1D input, 1D target must have size 1, but got target size: 3"),
    (lambda: F.binary_cross_entropy(f32(3), f32(4)), ValueError,
     r"Using a target size \(.*\[4\]\)\) that is different to the input size \(.*\[3\]\)\) "
     "is deprecated"),
    (lambda: F.binary_cross_entropy(f32(3) * 0 + 2, f32(3)), RuntimeError,
     "all elements of input should be between 0 and 1"),
    (lambda: F.binary_cross_entropy_with_logits(f32(3), f32(4)), ValueError,
     r"Target size \(.*\[4\]\)\) must be the same as input size \(.*\[3\]\)\)"),
    (lambda: F.kl_div(ember.tensor(np.ones(3, np.int64)), f32(3), reduction="sum"),
     RuntimeError, "kl_div: Integral inputs not supported."),
    (lambda: F.smooth_l1_loss(f32(3), f32(3), beta=-1.0), RuntimeError,
     "smooth_l1_loss does not support negative values for beta."),
    (lambda: F.huber_loss(f32(3), f32(3), delta=0.0), RuntimeError,
     "huber_loss does not support non-positive values for delta."),
    (lambda: F.multi_margin_loss(f32(3, 4), _cls((3,), 4), p=3), ValueError,
     "only p == 1 and p == 2 supported"),
    (lambda: F.multi_margin_loss(f32(3, 4), _cls((4,), 4)), RuntimeError,
     r"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
     r"samples \(batch size\). Expected target size \[3\], but got \[4\]."),
    (lambda: F.multi_margin_loss(f32(3, 4), _cls((3,), 4), weight=f32(3)), RuntimeError,
     r"inconsistent weight size, expected 4 but got \[3\]"),
    (lambda: F.multilabel_margin_loss(f32(3, 4), _cls((3, 3), 4)), RuntimeError,
     r"inconsistent target size: \[3, 3\] for input of size: \[3, 4\]"),
    (lambda: F.cosine_embedding_loss(f32(3, 4), f32(3, 4), f32(3, 2)), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    (lambda: F.cosine_embedding_loss(f32(3), f32(3), f32(3)), RuntimeError,
     r"1D target tensor expects 2D input tensors, but found inputs with sizes \[3\] and \[3\]."),
    (lambda: F.margin_ranking_loss(f32(3), f32(3, 1), f32(3)), RuntimeError,
     "margin_ranking_loss : All input tensors should have same dimension"),
    (lambda: F.triplet_margin_loss(f32(3), f32(3), f32(3), margin=0), ValueError,
     "margin must be greater than 0, got 0"),
    (lambda: F.triplet_margin_loss(f32(3), f32(3), f32(2, 3)), RuntimeError,
     "The anchor, positive, and negative tensors are expected to have the same number of "
     "dimensions, but got: anchor 1D, positive 1D, and negative 2D inputs"),
    (lambda: F.poisson_nll_loss(f32(3), f32(3), reduction="x"), ValueError,
     "x is not a valid value for reduction"),
    (lambda: F.gaussian_nll_loss(f32(3), f32(3), -f32(3).abs()), ValueError,
     "var has negative entry/entries"),
    (lambda: F.gaussian_nll_loss(f32(3, 4), f32(3, 4), f32(2, 4).abs()), ValueError,
     "var is of incorrect size"),
    (lambda: F.ctc_loss(f32(4, 2, 3), _cls((2, 2), 3), (4, 4), (2, 2), blank=5), RuntimeError,
     "blank must be in label range"),
    (lambda: F.ctc_loss(f32(4, 2, 3), _cls((2, 2), 3), (5, 4), (2, 2)), RuntimeError,
     r"Expected input_lengths to have value at most 4, but got value 5 \(while checking "
     r"arguments for ctc_loss_allocate_outputs\)"),
    (lambda: F.ctc_loss(f32(4, 2, 3), _cls((2, 2), 3), (4, 4), (3, 2)), RuntimeError,
     "Expected tensor to have size at least 3 at dimension 1, but got size 2 for argument #2 "
     "'targets'"),
    (lambda: F.ctc_loss(f32(4, 2, 3), _cls((2, 2), 3), (4,), (2, 2)), RuntimeError,
     "input_lengths must be of size batch_size"),
    (lambda: F.ctc_loss(f32(4, 2, 3, 1), _cls((2, 2), 3), (4, 4), (2, 2)), RuntimeError,
     "Expected 3-dimensional tensor, but got 5-dimensional tensor for argument #1 'log_probs'"),
    (lambda: nn.MultiMarginLoss(p=3), ValueError, "only p == 1 and p == 2 supported"),
    (lambda: nn.HuberLoss(delta="a"), TypeError, "delta must be a float or int"),
    (lambda: nn.TripletMarginLoss(margin=-1), ValueError,
     "TripletMarginLoss: expected margin to be greater than 0, got -1 instead"),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(fn, exc, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=match):
            fn()


def test_warnings():
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(f32(3, 4), f32(4))
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        F.l1_loss(f32(3), f32(3), size_average=False)
    with pytest.warns(UserWarning, match="'batchmean'"):
        F.kl_div(f32(3), f32(3))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(f32(2, 4, 5))


def test_running_stats_require_no_grad():
    rm = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument "
                                           "'running_mean'"):
        F.batch_norm(f32(2, 3), rm, ember.ones(3), training=True)


# ---------------------------------------------------------------------------
# hypothesis: shapes and values drawn for the fused kernels

@settings(max_examples=30, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=4, min_side=2, max_side=5),
                    elements=st.floats(-10, 10)),
       data=st.data())
def test_hypothesis_norms_and_cross_entropy(x, data):
    C = x.shape[1]
    X = t64(x, False)
    np.testing.assert_allclose(arr(F.batch_norm(X, None, None, training=True)), bn_ref(x),
                               rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(arr(F.layer_norm(X, x.shape[-1:])), ln_ref(x, 1), rtol=1e-7,
                               atol=1e-7)
    G = data.draw(st.sampled_from([g for g in range(1, C + 1) if C % g == 0]))
    np.testing.assert_allclose(arr(F.group_norm(X, G)), gn_ref(x, G), rtol=1e-7, atol=1e-7)
    t = data.draw(hnp.arrays(np.int64, (x.shape[0],) + x.shape[2:],
                             elements=st.integers(0, C - 1)))
    ref = -np.take_along_axis(log_softmax_ref(x), t[:, None], 1)[:, 0]
    got = F.cross_entropy(t64(x.astype(np.float32), False), ember.tensor(t), reduction="none")
    np.testing.assert_allclose(arr(got), ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(arr(F.cross_entropy(X, ember.tensor(t))), ref.mean(),
                               rtol=1e-10)
