"""Convolution, pooling and fold/unfold layers of ember.nn, without PyTorch.

Forward passes are checked against NumPy references written with explicit loops over
kernel taps and windows; gradients with finite differences in float64 (gradcheck for
every layer, gradgradcheck for the convolutions' recorded backward); the error messages
and the repr/state_dict of the modules against PyTorch 2.13's (as strings).
tests/interop/test_nn_conv_pool_torch.py compares the same layers with torch.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.nn._functional import _kernels as K

RNG = np.random.default_rng(0)


def t64(a, requires_grad=True):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def arr(t):
    return t.detach().numpy()


def rand(*shape):
    return RNG.standard_normal(shape)


# ---------------------------------------------------------------------------------------
# NumPy references

def _tup(v, nd):
    return (v,) * nd if isinstance(v, int) else tuple(v)


def conv_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1, pad_hi=None):
    """Direct convolution: one einsum per kernel tap."""
    nd = x.ndim - 2
    s, d = _tup(stride, nd), _tup(dilation, nd)
    lo = _tup(padding, nd)
    hi = lo if pad_hi is None else pad_hi
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(lo, hi, strict=False)))
    n, c = x.shape[:2]
    cout, cg = w.shape[:2]
    ks = w.shape[2:]
    out_sp = [(xp.shape[2 + i] - d[i] * (ks[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    og = cout // groups
    y = np.zeros((n, cout, *out_sp))
    for k in itertools.product(*(range(kk) for kk in ks)):
        sl = tuple(slice(k[i] * d[i], k[i] * d[i] + (out_sp[i] - 1) * s[i] + 1, s[i])
                   for i in range(nd))
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            wk = w[(slice(g * og, (g + 1) * og), slice(None)) + k]
            y[:, g * og:(g + 1) * og] += np.einsum(
                "oc,nc...->no...", wk, patch[:, g * cg:(g + 1) * cg])
    if b is not None:
        y += b.reshape((1, -1) + (1,) * nd)
    return y


def conv_transpose_ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1,
                       dilation=1):
    """Transposed convolution by scattering every input position's kernel."""
    nd = x.ndim - 2
    s, p, op, d = (_tup(v, nd) for v in (stride, padding, output_padding, dilation))
    n, cin = x.shape[:2]
    og = w.shape[1]
    ig = cin // groups
    ks = w.shape[2:]
    in_sp = x.shape[2:]
    full = [(in_sp[i] - 1) * s[i] + d[i] * (ks[i] - 1) + 1 + op[i] for i in range(nd)]
    y = np.zeros((n, og * groups, *full))
    for k in itertools.product(*(range(kk) for kk in ks)):
        sl = tuple(slice(k[i] * d[i], k[i] * d[i] + (in_sp[i] - 1) * s[i] + 1, s[i])
                   for i in range(nd))
        for g in range(groups):
            wk = w[(slice(g * ig, (g + 1) * ig), slice(None)) + k]
            y[(slice(None), slice(g * og, (g + 1) * og)) + sl] += np.einsum(
                "co,nc...->no...", wk, x[:, g * ig:(g + 1) * ig])
    crop = tuple(slice(p[i], full[i] - p[i]) for i in range(nd))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * nd)
    return y


def _pool_out(size, k, s, p, d, ceil_mode):
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def max_pool_ref(x, k, s, p, d, ceil_mode):
    """(values, flat indices) of max pooling, PyTorch's loop (NaN wins, first max)."""
    nd = x.ndim - 2
    sp = x.shape[2:]
    outs = [_pool_out(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nd)]
    vals = np.empty(x.shape[:2] + tuple(outs))
    idx = np.empty(x.shape[:2] + tuple(outs), np.int64)
    for nc in itertools.product(range(x.shape[0]), range(x.shape[1])):
        plane = x[nc]
        for o in itertools.product(*(range(v) for v in outs)):
            best, bi = -np.inf, None
            for kk in itertools.product(*(range(v) for v in k)):
                pos = [o[i] * s[i] - p[i] + kk[i] * d[i] for i in range(nd)]
                if not all(0 <= pos[i] < sp[i] for i in range(nd)):
                    continue
                v = plane[tuple(pos)]
                flat = int(np.ravel_multi_index(pos, sp))
                if bi is None:
                    bi = flat
                if v > best or np.isnan(v):
                    best, bi = v, flat
            if bi is None:  # no input position in the window: PyTorch's first-tap index
                first = [o[i] * s[i] - p[i] for i in range(nd)]
                first = [f + -(-max(-f, 0) // d[i]) * d[i] for i, f in enumerate(first)]
                bi = sum(f * math.prod(sp[i + 1:]) for i, f in enumerate(first))
            vals[nc + o], idx[nc + o] = best, bi
    return vals, idx


def avg_pool_ref(x, k, s, p, ceil_mode, count_include_pad, divisor_override=None):
    nd = x.ndim - 2
    sp = x.shape[2:]
    outs = [_pool_out(sp[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(nd)]
    y = np.empty(x.shape[:2] + tuple(outs))
    for o in itertools.product(*(range(v) for v in outs)):
        start = [o[i] * s[i] - p[i] for i in range(nd)]
        end = [min(start[i] + k[i], sp[i] + p[i]) for i in range(nd)]
        pool = math.prod(end[i] - start[i] for i in range(nd))
        start = [max(v, 0) for v in start]
        end = [min(end[i], sp[i]) for i in range(nd)]
        sl = tuple(slice(a, b) for a, b in zip(start, end, strict=False))
        win = x[(slice(None), slice(None)) + sl]
        count = math.prod(b - a for a, b in zip(start, end, strict=False))
        div = divisor_override or (pool if count_include_pad else count)
        y[(slice(None), slice(None)) + o] = win.sum(axis=tuple(range(2, 2 + nd))) / div
    return y


def adaptive_ref(x, outs, op):
    nd = x.ndim - 2
    sp = x.shape[2:]
    y = np.empty(x.shape[:2] + tuple(outs))
    for o in itertools.product(*(range(v) for v in outs)):
        sl = tuple(slice((o[i] * sp[i]) // outs[i], -((-(o[i] + 1) * sp[i]) // outs[i]))
                   for i in range(nd))
        y[(slice(None), slice(None)) + o] = op(x[(slice(None), slice(None)) + sl],
                                                axis=tuple(range(2, 2 + nd)))
    return y


def unfold_ref(x, k, d, p, s):
    n, c, h, w = x.shape
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.empty((n, c, k[0], k[1], oh, ow))
    for i, j in itertools.product(range(k[0]), range(k[1])):
        cols[:, :, i, j] = xp[:, :, i * d[0]:i * d[0] + (oh - 1) * s[0] + 1:s[0],
                              j * d[1]:j * d[1] + (ow - 1) * s[1] + 1:s[1]]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


# ---------------------------------------------------------------------------------------
# convolution forward

CONV_CASES = [
    # nd, x shape, w shape, kwargs
    (1, (2, 4, 11), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    (1, (2, 3, 9), (4, 3, 2), dict(dilation=3)),
    (2, (2, 4, 7, 8), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                         groups=2)),
    (2, (2, 4, 6, 6), (4, 1, 3, 3), dict(padding=1, groups=4)),  # depthwise
    (2, (1, 3, 5, 5), (2, 3, 1, 1), dict()),
    (3, (1, 2, 4, 5, 4), (4, 2, 2, 3, 2), dict(stride=(1, 2, 1), padding=(1, 0, 1))),
    (3, (2, 4, 3, 4, 4), (2, 2, 2, 2, 2), dict(groups=2, dilation=(1, 2, 1))),
]


@pytest.mark.parametrize("nd,xs,ws,kw", CONV_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_forward_matches_reference(nd, xs, ws, kw, dtype):
    x, w, b = rand(*xs), rand(*ws), rand(ws[0])
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    y = fn(ember.tensor(x.astype(dtype)), ember.tensor(w.astype(dtype)),
           ember.tensor(b.astype(dtype)), **kw)
    assert y.dtype == ember.tensor(x.astype(dtype)).dtype
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(arr(y), conv_ref(x, w, b, **kw), rtol=tol, atol=tol)


@pytest.mark.parametrize("k,dil", [((3, 3), (1, 1)), ((2, 4), (1, 1)), ((2, 3), (3, 2))])
def test_conv_padding_same_and_valid(k, dil):
    x, w = rand(2, 3, 7, 6), rand(4, 3, *k)
    y = F.conv2d(t64(x, False), t64(w, False), padding="same", dilation=dil)
    total = [d * (kk - 1) for d, kk in zip(dil, k, strict=False)]
    lo = [t // 2 for t in total]
    hi = [t - a for t, a in zip(total, lo, strict=False)]
    assert tuple(y.shape) == (2, 4, 7, 6)
    np.testing.assert_allclose(arr(y), conv_ref(x, w, padding=lo, dilation=dil, pad_hi=hi),
                               atol=1e-10)
    y = F.conv2d(t64(x, False), t64(w, False), padding="valid", dilation=dil)
    np.testing.assert_allclose(arr(y), conv_ref(x, w, dilation=dil), atol=1e-10)


def test_conv_unbatched_and_empty_batch():
    x, w = rand(3, 6, 5), rand(2, 3, 3, 2)
    y = F.conv2d(t64(x, False), t64(w, False), padding=1)
    np.testing.assert_allclose(arr(y), conv_ref(x[None], w, padding=1)[0], atol=1e-10)
    y = F.conv2d(t64(np.zeros((0, 3, 6, 5)), False), t64(w, False))
    assert tuple(y.shape) == (0, 2, 4, 4)


CONVT_CASES = [
    (1, (2, 4, 5), (4, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    (1, (1, 4, 4), (4, 1, 2), dict(stride=3, groups=2, dilation=2, output_padding=2)),
    (2, (2, 4, 3, 4), (4, 2, 3, 2), dict(stride=(2, 1), padding=(1, 0), groups=2)),
    (2, (1, 2, 3, 3), (2, 3, 2, 2), dict(stride=2, dilation=(2, 1), output_padding=1)),
    (3, (1, 2, 2, 3, 2), (2, 2, 2, 2, 2), dict(stride=2, padding=(0, 1, 0))),
]


@pytest.mark.parametrize("nd,xs,ws,kw", CONVT_CASES)
def test_conv_transpose_forward_matches_reference(nd, xs, ws, kw):
    x, w = rand(*xs), rand(*ws)
    b = rand(ws[1] * kw.get("groups", 1))
    fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
    y = fn(t64(x, False), t64(w, False), t64(b, False), **kw)
    np.testing.assert_allclose(arr(y), conv_transpose_ref(x, w, b, **kw), atol=1e-10)


def test_conv_transpose_is_the_adjoint_of_conv():
    x, w = rand(2, 3, 7, 6), rand(4, 3, 3, 2)
    g = rand(2, 4, 4, 4)
    y = conv_ref(x, w, stride=2, padding=1)
    assert y.shape == g.shape
    xt = F.conv_transpose2d(t64(g, False), t64(w, False), stride=2, padding=1)
    assert tuple(xt.shape) == x.shape
    np.testing.assert_allclose((y * g).sum(), (x * arr(xt)).sum(), rtol=1e-10)


def test_conv_half_precision_runs_in_float32():
    x, w = rand(1, 2, 5, 5), rand(3, 2, 3, 3)
    y = F.conv2d(ember.tensor(x.astype(np.float16)), ember.tensor(w.astype(np.float16)))
    assert y.dtype == ember.float16
    np.testing.assert_allclose(arr(y).astype(np.float64), conv_ref(x, w), atol=0.05, rtol=0.02)


# ---------------------------------------------------------------------------------------
# convolution gradients

@pytest.mark.parametrize("nd,xs,ws,kw", [CONV_CASES[0], CONV_CASES[2], CONV_CASES[3],
                                         CONV_CASES[5]])
def test_conv_gradcheck(nd, xs, ws, kw):
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    x, w, b = t64(rand(*xs)), t64(rand(*ws)), t64(rand(ws[0]))
    assert gradcheck(lambda x, w, b: fn(x, w, b, **kw), (x, w, b))


@pytest.mark.parametrize("nd,xs,ws,kw", [CONVT_CASES[0], CONVT_CASES[2], CONVT_CASES[4]])
def test_conv_transpose_gradcheck(nd, xs, ws, kw):
    fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
    b = t64(rand(ws[1] * kw.get("groups", 1)))
    x, w = t64(rand(*xs)), t64(rand(*ws))
    assert gradcheck(lambda x, w, b: fn(x, w, b, **kw), (x, w, b))


def test_conv_gradgradcheck():
    x, w, b = t64(rand(1, 2, 5, 4)), t64(rand(4, 1, 2, 3)), t64(rand(4))
    assert gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1,
                                                  groups=2), (x, w, b))
    x, w = t64(rand(1, 2, 3, 2)), t64(rand(2, 2, 2, 2))
    assert gradgradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2, output_padding=1),
                         (x, w))


@pytest.mark.parametrize("chunk", [1, 8000])
def test_conv_in_batch_chunks(chunk, monkeypatch):
    # the batch goes through im2col/GEMM in chunks: one sample at a time, then a few
    from ember._backend import cpu

    x, w, b = rand(5, 4, 6, 5), rand(6, 2, 3, 2), rand(6)
    kw = dict(stride=(1, 2), padding=1, groups=2)
    y_ref = conv_ref(x, w, b, **kw)
    g = rand(*y_ref.shape)

    def grads():
        xt, wt, bt = t64(x), t64(w), t64(b)
        y = F.conv2d(xt, wt, bt, **kw)
        y.backward(t64(g, False))
        yt = F.conv_transpose2d(t64(g, False), wt, None, output_padding=(0, 1), **kw)
        return arr(y), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy(), arr(yt)

    whole = grads()
    monkeypatch.setattr(cpu.tuning, "conv_chunk_bytes", chunk)
    chunked = grads()
    np.testing.assert_allclose(chunked[0], y_ref, atol=1e-10)
    for a, c in zip(whole, chunked, strict=True):
        np.testing.assert_allclose(c, a, atol=1e-10)
    assert gradcheck(lambda x, w: F.conv2d(x, w, None, **kw), (t64(x[:3]), t64(w)))


@pytest.mark.parametrize("need_x", [False, True])
def test_conv_kept_patches(need_x, monkeypatch):
    # a small forward keeps its patch matrix for the weight gradient: the same gradients
    # as rebuilding it, also for a second backward (retain_graph) and under create_graph
    from ember._backend import cpu

    x, w, b = rand(3, 4, 7, 6), rand(6, 2, 3, 2), rand(6)
    kw = dict(stride=(2, 1), padding=1, groups=2)
    g = rand(*conv_ref(x, w, b, **kw).shape)

    def grads(twice=False):
        xt, wt, bt = t64(x, need_x), t64(w), t64(b)
        y = F.conv2d(xt, wt, bt, **kw)
        kept = y.grad_fn._cols is not None
        y.backward(t64(g, False), retain_graph=twice)
        if twice:
            y.backward(t64(g, False))
        out = [wt.grad.numpy(), bt.grad.numpy()] + ([xt.grad.numpy()] if need_x else [])
        return kept, out

    kept, a = grads()
    assert kept
    _, a2 = grads(twice=True)
    monkeypatch.setattr(cpu.tuning, "conv_keep_bytes", 0)
    kept, c = grads()
    assert not kept
    for u, v, v2 in zip(a, c, a2, strict=True):
        np.testing.assert_allclose(u, v, atol=1e-12)
        np.testing.assert_allclose(v2, 2 * v, atol=1e-12)
    monkeypatch.setattr(cpu.tuning, "conv_keep_bytes", 8 << 20)
    assert gradgradcheck(lambda x, w: F.conv2d(x, w, None, **kw), (t64(x[:2]), t64(w)))


@pytest.mark.parametrize("nd,xs,ws,kw", [CONV_CASES[0], CONV_CASES[2], CONV_CASES[5]])
def test_conv_pure_array_path(nd, xs, ws, kw, monkeypatch):
    # the xp (CuPy-compatible) im2col/col2im give the compiled kernels' results
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    x, w = rand(*xs), rand(*ws)

    def run():
        xt, wt = t64(x), t64(w)
        y = fn(xt, wt, **kw)
        y.sum().backward()
        return arr(y), xt.grad.numpy(), wt.grad.numpy()

    compiled = run()
    monkeypatch.setattr(K, "FORCE_FALLBACK", True)
    for a, b in zip(run(), compiled, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-12)
    xu = rand(2, 3, 5, 6)
    cols = F.unfold(t64(xu, False), (2, 3), 2, 1, (2, 1))
    np.testing.assert_allclose(arr(cols), unfold_ref(xu, (2, 3), (2, 2), (1, 1), (2, 1)),
                               atol=1e-12)


def test_conv_grad_without_input_grad():
    x = t64(rand(2, 3, 5, 5), requires_grad=False)
    w = t64(rand(4, 3, 3, 3))
    F.conv2d(x, w).sum().backward()
    g = np.ones((2, 4, 3, 3))
    expect = np.stack([np.stack([
        sum(g[n, o] * x.numpy()[n, c, i:i + 3, j:j + 3] for n in range(2)).sum()
        for i in range(3) for j in range(3)]).reshape(3, 3) for c in range(3)
        for o in range(4)]).reshape(3, 4, 3, 3).transpose(1, 0, 2, 3)
    np.testing.assert_allclose(w.grad.numpy(), expect, atol=1e-10)


# ---------------------------------------------------------------------------------------
# pooling

MAXPOOL_CASES = [
    (1, (2, 3, 11), dict(kernel_size=3, stride=2, padding=1)),
    (1, (1, 2, 9), dict(kernel_size=2, dilation=3, ceil_mode=True)),
    (2, (2, 3, 7, 8), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1),
                           ceil_mode=True)),
    (2, (1, 2, 9, 9), dict(kernel_size=3, stride=2, padding=1, dilation=2)),
    (3, (1, 2, 5, 4, 5), dict(kernel_size=2, stride=(2, 1, 2), padding=1, ceil_mode=True)),
]


@pytest.mark.parametrize("nd,xs,kw", MAXPOOL_CASES)
@pytest.mark.parametrize("fallback", [False, True])
def test_max_pool_matches_reference(nd, xs, kw, fallback, monkeypatch):
    monkeypatch.setattr(K, "FORCE_FALLBACK", fallback)
    x = rand(*xs)
    x.reshape(-1)[::7] = x.reshape(-1)[1]  # ties: the first maximum wins
    fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nd - 1]
    y, i = fn(t64(x, False), return_indices=True, **kw)
    k = _tup(kw["kernel_size"], nd)
    s = _tup(kw.get("stride", k), nd)
    p, d = _tup(kw.get("padding", 0), nd), _tup(kw.get("dilation", 1), nd)
    ry, ri = max_pool_ref(x, k, s, p, d, kw.get("ceil_mode", False))
    np.testing.assert_array_equal(arr(y), ry)
    np.testing.assert_array_equal(i.numpy(), ri)
    assert i.dtype == ember.int64


@pytest.mark.parametrize("fallback", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_nan_and_inf(fallback, dtype, monkeypatch):
    monkeypatch.setattr(K, "FORCE_FALLBACK", fallback)
    x = np.array([[[1.0, np.nan, 3.0, np.nan, -np.inf, -np.inf, 2.0, 5.0, 5.0, -np.inf,
                   -np.inf, -np.inf]]], dtype)
    y, i = F.max_pool1d(ember.tensor(x), 3, return_indices=True)
    ry, ri = max_pool_ref(x.astype(np.float64), (3,), (3,), (0,), (1,), False)
    np.testing.assert_array_equal(arr(y), ry.astype(dtype))
    np.testing.assert_array_equal(i.numpy(), ri)
    np.testing.assert_array_equal(i.numpy(), [[[1, 3, 7, 9]]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,ceil", [((3, 4, 8, 10), False), ((2, 3, 9, 7), False),
                                        ((2, 3, 9, 7), True)])
def test_max_pool_2x2_fast_path(dtype, shape, ceil):
    # MaxPool2d(2) takes a dedicated 2x2/stride-2 kernel when its windows lie inside the
    # plane: ties, NaN (the last one wins) and -inf windows as the reference
    x = RNG.integers(-2, 3, size=shape).astype(dtype)
    x[RNG.random(shape) < 0.1] = np.nan
    x[RNG.random(shape) < 0.15] = -np.inf
    x[0, 0, :2, :2] = -np.inf
    y, i = F.max_pool2d(ember.tensor(x), 2, return_indices=True, ceil_mode=ceil)
    ry, ri = max_pool_ref(x.astype(np.float64), (2, 2), (2, 2), (0, 0), (1, 1), ceil)
    np.testing.assert_array_equal(arr(y), ry.astype(dtype))
    np.testing.assert_array_equal(i.numpy(), ri)


def test_max_pool_window_without_input():
    # padding with dilation: a window can hold no input position (PyTorch returns -inf with
    # an index outside the plane, and no gradient flows)
    x = ember.tensor([[[[1.0, 2.0]]]], requires_grad=True)
    y, i = F.max_pool2d(x, 2, 1, 1, 2, True, return_indices=True)
    assert arr(y).tolist() == [[[[-math.inf, -math.inf]]]]
    assert i.numpy().tolist() == [[[[3, 2]]]]
    y.sum().backward()
    assert x.grad.numpy().tolist() == [[[[0.0, 0.0]]]]


@pytest.mark.parametrize("nd,xs,kw", MAXPOOL_CASES[::2])
@pytest.mark.parametrize("fallback", [False, True])
def test_max_pool_gradcheck(nd, xs, kw, fallback, monkeypatch):
    monkeypatch.setattr(K, "FORCE_FALLBACK", fallback)
    fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nd - 1]
    x = t64(RNG.permutation(math.prod(xs)).reshape(xs) / 10)  # distinct values
    assert gradcheck(lambda x: fn(x, **kw), (x,))
    assert gradgradcheck(lambda x: fn(x, **kw), (x,))


AVGPOOL_CASES = [
    (1, (2, 3, 11), dict(kernel_size=3, stride=2, padding=1)),
    (1, (1, 2, 10), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True,
                         count_include_pad=False)),
    (2, (2, 3, 7, 8), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1),
                           ceil_mode=True)),
    (2, (1, 2, 7, 7), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    (2, (1, 2, 6, 6), dict(kernel_size=2, divisor_override=3)),
    (3, (1, 2, 5, 4, 5), dict(kernel_size=2, stride=(2, 1, 2), padding=1, ceil_mode=True,
                              count_include_pad=False)),
    (3, (1, 1, 4, 4, 4), dict(kernel_size=3, padding=1, divisor_override=5)),
]


@pytest.mark.parametrize("nd,xs,kw", AVGPOOL_CASES)
@pytest.mark.parametrize("fallback", [False, True])
def test_avg_pool_matches_reference(nd, xs, kw, fallback, monkeypatch):
    monkeypatch.setattr(K, "FORCE_FALLBACK", fallback)
    x = rand(*xs)
    fn = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[nd - 1]
    y = fn(t64(x, False), **kw)
    k = _tup(kw["kernel_size"], nd)
    s = _tup(kw.get("stride", k), nd)
    ref = avg_pool_ref(x, k, s, _tup(kw.get("padding", 0), nd), kw.get("ceil_mode", False),
                       kw.get("count_include_pad", True), kw.get("divisor_override"))
    np.testing.assert_allclose(arr(y), ref, atol=1e-12)


@pytest.mark.parametrize("nd,xs,kw", AVGPOOL_CASES[::2])
@pytest.mark.parametrize("fallback", [False, True])
def test_avg_pool_gradcheck(nd, xs, kw, fallback, monkeypatch):
    monkeypatch.setattr(K, "FORCE_FALLBACK", fallback)
    fn = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[nd - 1]
    assert gradcheck(lambda x: fn(x, **kw), (t64(rand(*xs)),))
    assert gradgradcheck(lambda x: fn(x, **kw), (t64(rand(*xs)),))


def test_avg_pool_integer_input():
    x = np.arange(-8, 8).reshape(1, 1, 4, 4)
    y = F.avg_pool2d(ember.tensor(x), 2)
    assert y.dtype == ember.int64
    np.testing.assert_array_equal(y.numpy(), np.trunc(avg_pool_ref(x, (2, 2), (2, 2), (0, 0),
                                                                    False, True)))


@pytest.mark.parametrize("nd,xs,outs", [
    (1, (2, 3, 10), (4,)), (1, (1, 2, 5), (7,)), (2, (2, 2, 7, 9), (3, 4)),
    (2, (1, 1, 5, 5), (5, 2)), (3, (1, 2, 5, 4, 6), (2, 3, 4))])
@pytest.mark.parametrize("fallback", [False, True])
def test_adaptive_pools_match_reference(nd, xs, outs, fallback, monkeypatch):
    monkeypatch.setattr(K, "FORCE_FALLBACK", fallback)
    x = RNG.permutation(math.prod(xs)).reshape(xs) / 7.0
    avg = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[nd - 1]
    mx = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[nd - 1]
    size = outs[0] if nd == 1 else outs
    np.testing.assert_allclose(arr(avg(t64(x, False), size)), adaptive_ref(x, outs, np.mean),
                               atol=1e-12)
    y, i = mx(t64(x, False), size, return_indices=True)
    np.testing.assert_array_equal(arr(y), adaptive_ref(x, outs, np.max))
    flat = x.reshape(x.shape[:2] + (-1,))
    np.testing.assert_array_equal(np.take_along_axis(flat, i.numpy().reshape(
        x.shape[:2] + (-1,)), axis=2).reshape(y.shape), arr(y))
    x64 = t64(x)
    assert gradcheck(lambda x: avg(x, size), (x64,))
    assert gradcheck(lambda x: mx(x, size), (x64,))


def test_adaptive_pool_none_and_int_sizes():
    x = rand(1, 2, 6, 5)
    y = F.adaptive_avg_pool2d(t64(x, False), (3, None))
    np.testing.assert_allclose(arr(y), adaptive_ref(x, (3, 5), np.mean), atol=1e-12)
    y = F.adaptive_max_pool2d(t64(x, False), 2)
    np.testing.assert_array_equal(arr(y), adaptive_ref(x, (2, 2), np.max))
    y = nn.AdaptiveAvgPool2d(1)(t64(x[0], False))
    np.testing.assert_allclose(arr(y), x[0].mean(axis=(1, 2), keepdims=True), atol=1e-12)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_inverts_max_pool(nd):
    xs = (2, 3) + (6, 5, 4)[:nd]
    x = t64(RNG.permutation(math.prod(xs)).reshape(xs) / 3.0)
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nd - 1]
    unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[nd - 1]
    y, i = pool(x, 2, return_indices=True)
    u = unpool(y, i, 2, output_size=xs[2:])
    assert tuple(u.shape) == xs
    ref = np.zeros(xs).reshape(2, 3, -1)
    np.put_along_axis(ref, i.numpy().reshape(2, 3, -1), arr(y).reshape(2, 3, -1), axis=2)
    np.testing.assert_array_equal(arr(u), ref.reshape(xs))
    assert gradcheck(lambda y: unpool(y, i, 2, output_size=xs[2:]), (y.detach()
                                                                      .requires_grad_(),))


@pytest.mark.parametrize("p", [1.0, 2.0, 3])
def test_lp_pool(p):
    x = np.abs(rand(2, 3, 6, 7)) + 0.1
    y = F.lp_pool2d(t64(x, False), p, (2, 3), stride=2)
    ref = avg_pool_ref(x ** p, (2, 3), (2, 2), (0, 0), False, True) * 6
    np.testing.assert_allclose(arr(y), ref ** (1 / p), rtol=1e-10)
    x1 = np.abs(rand(2, 3, 9)) + 0.1
    ref = avg_pool_ref(x1 ** p, (3,), (3,), (0,), False, True) * 3
    np.testing.assert_allclose(arr(F.lp_pool1d(t64(x1, False), p, 3)), ref ** (1 / p),
                               rtol=1e-10)
    x3 = np.abs(rand(1, 2, 4, 4, 4)) + 0.1
    ref = avg_pool_ref(x3 ** p, (2,) * 3, (2,) * 3, (0,) * 3, False, True) * 8
    np.testing.assert_allclose(arr(F.lp_pool3d(t64(x3, False), p, 2)), ref ** (1 / p),
                               rtol=1e-10)
    assert gradcheck(lambda x: F.lp_pool2d(x, p, 2), (t64(x),))


def test_lp_pool_infinite_norm_is_max_pool():
    x = rand(1, 2, 6)
    np.testing.assert_array_equal(arr(F.lp_pool1d(t64(x, False), math.inf, 2)),
                                  np.abs(x).reshape(1, 2, 3, 2).max(-1))


# ---------------------------------------------------------------------------------------
# fold / unfold

@pytest.mark.parametrize("k,d,p,s", [((2, 3), (1, 1), (0, 0), (1, 1)),
                                     ((3, 2), (2, 1), (1, 2), (2, 1)),
                                     ((1, 1), (1, 1), (0, 0), (2, 3))])
def test_unfold_and_fold(k, d, p, s):
    x = rand(2, 3, 7, 8)
    cols = F.unfold(t64(x, False), k, dilation=d, padding=p, stride=s)
    ref = unfold_ref(x, k, d, p, s)
    np.testing.assert_allclose(arr(cols), ref, atol=1e-12)
    # fold is the adjoint of unfold
    g = rand(*ref.shape)
    back = F.fold(t64(g, False), (7, 8), k, dilation=d, padding=p, stride=s)
    np.testing.assert_allclose((ref * g).sum(), (x * arr(back)).sum(), rtol=1e-10)
    assert gradcheck(lambda x: F.unfold(x, k, d, p, s), (t64(rand(1, 2, 7, 8)),))
    assert gradcheck(lambda c: F.fold(c, (7, 8), k, d, p, s), (t64(rand(1, *ref.shape[1:])),))


def test_fold_of_unfold_counts_overlaps():
    x = np.ones((1, 1, 4, 4))
    y = F.fold(F.unfold(t64(x, False), 2), (4, 4), 2)
    np.testing.assert_array_equal(arr(y)[0, 0], [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2],
                                                 [1, 2, 2, 1]])
    assert tuple(F.unfold(t64(rand(3, 4, 4), False), 2).shape) == (12, 9)
    assert tuple(F.fold(t64(rand(12, 9), False), 4, 2).shape) == (3, 4, 4)


# ---------------------------------------------------------------------------------------
# hypothesis

@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 2), g=st.sampled_from([1, 2]), cg=st.integers(1, 3),
       og=st.integers(1, 2), h=st.integers(1, 7), w=st.integers(1, 7), kh=st.integers(1, 3),
       kw=st.integers(1, 3), s=st.integers(1, 3), p=st.integers(0, 2), d=st.integers(1, 2),
       seed=st.integers(0, 2 ** 16))
def test_conv2d_hypothesis(n, g, cg, og, h, w, kh, kw, s, p, d, seed):
    rng = np.random.default_rng(seed)
    if h + 2 * p < d * (kh - 1) + 1 or w + 2 * p < d * (kw - 1) + 1:
        return
    x = rng.standard_normal((n, g * cg, h, w))
    wt = rng.standard_normal((g * og, cg, kh, kw))
    y = F.conv2d(t64(x, False), t64(wt, False), None, s, p, d, g)
    np.testing.assert_allclose(arr(y), conv_ref(x, wt, None, s, p, d, g), atol=1e-10)
    k = (kh, kw)
    if p <= min(kh, kw) // 2:
        y, i = F.max_pool2d(t64(x, False), k, s, p, d, True, return_indices=True)
        ry, ri = max_pool_ref(x, k, (s, s), (p, p), (d, d), True)
        np.testing.assert_array_equal(arr(y), ry)
        np.testing.assert_array_equal(i.numpy(), ri)
        y = F.avg_pool2d(t64(x, False), k, s, p, True, False)
        np.testing.assert_allclose(arr(y), avg_pool_ref(x, k, (s, s), (p, p), True, False),
                                   atol=1e-12)


# ---------------------------------------------------------------------------------------
# modules

MODULES = [
    (lambda: nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), (2, 4, 9)),
    (lambda: nn.Conv2d(2, 4, (3, 2), padding="same", padding_mode="reflect"), (1, 2, 5, 6)),
    (lambda: nn.Conv2d(2, 2, 3, padding=2, padding_mode="circular", groups=2, bias=False),
     (1, 2, 4, 5)),
    (lambda: nn.Conv2d(2, 3, 2, padding=1, padding_mode="replicate", dilation=2), (2, 4, 4)),
    (lambda: nn.Conv3d(2, 2, 2, padding="valid"), (1, 2, 3, 4, 3)),
    (lambda: nn.ConvTranspose1d(2, 4, 3, stride=2, output_padding=1, groups=2), (1, 2, 4)),
    (lambda: nn.ConvTranspose2d(2, 3, (2, 3), stride=2, padding=(1, 0), dilation=(1, 2)),
     (1, 2, 3, 3)),
    (lambda: nn.ConvTranspose3d(2, 2, 2, stride=(1, 2, 1)), (1, 2, 2, 2, 2)),
    (lambda: nn.MaxPool1d(3, 2, 1), (2, 2, 7)),
    (lambda: nn.MaxPool2d(2, ceil_mode=True), (1, 2, 5, 5)),
    (lambda: nn.MaxPool3d(2, padding=1, dilation=(1, 2, 1)), (1, 1, 4, 5, 4)),
    (lambda: nn.AvgPool1d(3, 2, 1, count_include_pad=False), (2, 2, 7)),
    (lambda: nn.AvgPool2d(3, 2, 1, ceil_mode=True), (1, 2, 6, 5)),
    (lambda: nn.AvgPool3d(2, divisor_override=3), (1, 1, 4, 4, 4)),
    (lambda: nn.AdaptiveAvgPool1d(3), (2, 2, 7)),
    (lambda: nn.AdaptiveAvgPool2d((2, 3)), (1, 2, 5, 7)),
    (lambda: nn.AdaptiveAvgPool3d((2, None, 1)), (1, 1, 3, 4, 5)),
    (lambda: nn.AdaptiveMaxPool1d(3), (2, 2, 7)),
    (lambda: nn.AdaptiveMaxPool2d((2, 3)), (1, 2, 5, 7)),
    (lambda: nn.AdaptiveMaxPool3d(2), (1, 1, 3, 4, 5)),
    (lambda: nn.LPPool1d(2, 3), (2, 2, 7)),
    (lambda: nn.LPPool2d(1.5, 2, stride=1), (1, 2, 4, 4)),
    (lambda: nn.LPPool3d(2, 2), (1, 1, 4, 4, 4)),
    (lambda: nn.Unfold((2, 3), padding=1, stride=2), (1, 2, 5, 6)),
    (lambda: nn.Fold((4, 5), 2), (1, 8, 12)),
]


@pytest.mark.parametrize("make,shape", MODULES)
def test_module_gradcheck(make, shape):
    m = make().double()
    params = list(m.parameters())
    x = RNG.permutation(math.prod(shape)).reshape(shape) / math.prod(shape) + 0.5
    inputs = (t64(x),) + tuple(params)

    def fn(x, *ps):
        return m(x)

    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_modules(nd):
    pool = (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d)[nd - 1](2, return_indices=True)
    unpool = (nn.MaxUnpool1d, nn.MaxUnpool2d, nn.MaxUnpool3d)[nd - 1](2)
    xs = (1, 2) + (4, 6, 4)[:nd]
    x = t64(RNG.permutation(math.prod(xs)).reshape(xs))
    y, i = pool(x)
    u = unpool(y, i)
    assert tuple(u.shape) == xs
    assert gradcheck(lambda y: unpool(y, i), (y.detach().requires_grad_(),))
    u = unpool(y, i, output_size=[1, 2] + [v + 1 for v in xs[2:]])
    assert tuple(u.shape[2:]) == tuple(v + 1 for v in xs[2:])


def test_conv_transpose_output_size():
    m = nn.ConvTranspose2d(3, 2, 3, stride=2)
    x = ember.randn(1, 3, 4, 4)
    assert tuple(m(x).shape) == (1, 2, 9, 9)
    assert tuple(m(x, output_size=[10, 10]).shape) == (1, 2, 10, 10)
    assert tuple(m(x, output_size=(1, 2, 10, 9)).shape) == (1, 2, 10, 9)
    assert tuple(m(x[0], output_size=(10, 10)).shape) == (2, 10, 10)
    with pytest.raises(ValueError, match=r"requested an output size of \[11, 11\], but valid "
                                         r"sizes range from \[9, 9\] to \[10, 10\]"):
        m(x, output_size=[11, 11])
    with pytest.raises(ValueError, match=r"ConvTranspose2D: for 4D input, output_size must "
                                         r"have 2 or 4 elements \(got 3\)"):
        m(x, output_size=[1, 10, 10])


def test_depthwise_and_grouped_conv_modules():
    m = nn.Conv2d(4, 8, 3, groups=4, padding=1)
    assert tuple(m.weight.shape) == (8, 1, 3, 3)
    x = rand(2, 4, 5, 5).astype(np.float32)
    y = m(ember.tensor(x))
    ref = conv_ref(x.astype(np.float64), m.weight.detach().numpy().astype(np.float64),
                   m.bias.detach().numpy().astype(np.float64), padding=1, groups=4)
    np.testing.assert_allclose(arr(y), ref, atol=1e-4)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv_padding_modes(mode):
    m = nn.Conv1d(1, 1, 3, padding=2, bias=False)
    m.padding_mode = mode
    m._reversed_padding_repeated_twice = (2, 2)
    x = np.array([[[1.0, 2.0, 3.0, 4.0]]], np.float32)
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    xp = np.pad(x, [(0, 0), (0, 0), (2, 2)], mode=np_mode)
    ref = conv_ref(xp.astype(np.float64), m.weight.detach().numpy().astype(np.float64))
    np.testing.assert_allclose(arr(m(ember.tensor(x))), ref, atol=1e-5)


REPRS = [
    (lambda: nn.Conv2d(16, 33, 3),
     "Conv2d(16, 33, kernel_size=(3, 3), stride=(1, 1))"),
    (lambda: nn.Conv1d(4, 8, 3, stride=2, padding=1, dilation=2, groups=2, bias=False,
                       padding_mode="reflect"),
     "Conv1d(4, 8, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), groups=2, "
     "bias=False, padding_mode=reflect)"),
    (lambda: nn.Conv3d(2, 4, (1, 2, 3), padding="same"),
     "Conv3d(2, 4, kernel_size=(1, 2, 3), stride=(1, 1, 1), padding=same)"),
    (lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1),
     "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"),
    (lambda: nn.MaxPool2d(3, 2, 1),
     "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)"),
    (lambda: nn.MaxPool1d(3),
     "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"),
    (lambda: nn.AvgPool1d(3), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"),
    (lambda: nn.AvgPool2d((2, 3), divisor_override=2),
     "AvgPool2d(kernel_size=(2, 3), stride=(2, 3), padding=0)"),
    (lambda: nn.AdaptiveAvgPool2d((None, 3)), "AdaptiveAvgPool2d(output_size=(None, 3))"),
    (lambda: nn.AdaptiveMaxPool1d(4), "AdaptiveMaxPool1d(output_size=4)"),
    (lambda: nn.MaxUnpool2d(2), "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), "
                                "padding=(0, 0))"),
    (lambda: nn.LPPool2d(2, 3), "LPPool2d(norm_type=2, kernel_size=3, stride=None, "
                                "ceil_mode=False)"),
    (lambda: nn.Fold((4, 5), 2), "Fold(output_size=(4, 5), kernel_size=2, dilation=1, "
                                 "padding=0, stride=1)"),
    (lambda: nn.Unfold(2, stride=2), "Unfold(kernel_size=2, dilation=1, padding=0, stride=2)"),
]


@pytest.mark.parametrize("make,text", REPRS)
def test_repr(make, text):
    assert repr(make()) == text


def test_state_dict_keys_and_shapes():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.MaxPool2d(2), nn.ConvTranspose2d(4, 2, 2, groups=2),
                      nn.Conv1d(2, 2, 1, bias=False))
    sd = m.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias", "3.weight"]
    assert tuple(sd["2.weight"].shape) == (4, 1, 2, 2)
    assert tuple(sd["2.bias"].shape) == (2,)


def test_default_init_bounds():
    m = nn.Conv2d(8, 16, 3)
    bound = 1 / math.sqrt(8 * 9)  # kaiming_uniform(a=sqrt(5)) is U(-1/sqrt(fan_in), ...)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(b).max() <= bound
    m = nn.ConvTranspose2d(8, 16, 3, groups=2)
    fan_in = 8 * 9  # weight (8, 8, 3, 3): fan_in = size(1) * receptive field
    assert np.abs(m.weight.detach().numpy()).max() <= 1 / math.sqrt(fan_in)


# ---------------------------------------------------------------------------------------
# errors (messages as PyTorch 2.13's)

def _z(*shape, dtype=None):
    return ember.zeros(*shape, dtype=dtype)


ERRORS = [
    (lambda: F.conv2d(_z(1, 3, 5, 5), _z(4, 2, 3, 3)), RuntimeError,
     r"Given groups=1, weight of size \[4, 2, 3, 3\], expected input\[1, 3, 5, 5\] to have 2 "
     r"channels, but got 3 channels instead"),
    (lambda: F.conv2d(_z(1, 1, 3, 5, 5), _z(4, 3, 3, 3)), RuntimeError,
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of size: "
     r"\[1, 1, 3, 5, 5\]"),
    (lambda: F.conv2d(_z(1, 3, 5, 5), _z(4, 3, 3)), RuntimeError,
     r"expected stride to be a single integer value or a list of 1 values to match the "
     r"convolution dimensions, but got stride=\[1, 1\]"),
    (lambda: F.conv1d(_z(1, 3, 5), _z(4, 3, 3, 3)), RuntimeError,
     r"Expected 4-dimensional input for 4-dimensional weight \[4, 3, 3, 3\], but got "
     r"3-dimensional input of size \[1, 3, 5\] instead"),
    (lambda: F.conv2d(_z(1, 3, 2, 2), _z(4, 3, 3, 3)), RuntimeError,
     r"Calculated padded input size per channel: \(2 x 2\). Kernel size: \(3 x 3\). Kernel "
     r"size can't be greater than actual input size"),
    (lambda: F.conv2d(_z(1, 3, 5, 5), _z(4, 3, 3, 3), _z(3)), RuntimeError,
     r"Given weight of size \[4, 3, 3, 3\], expected bias to be 1-dimensional with 4 "
     r"elements, but got bias of size \[3\] instead"),
    (lambda: F.conv2d(_z(1, 4, 5, 5), _z(3, 2, 3, 3), groups=2), RuntimeError,
     r"Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight "
     r"of size \[\[3, 2, 3, 3\]\] instead"),
    (lambda: F.conv2d(_z(1, 3, 5, 5), _z(4, 3, 3, 3), stride=0), RuntimeError,
     "non-positive stride is not supported"),
    (lambda: F.conv2d(_z(1, 3, 5, 5), _z(4, 3, 3, 3), padding=-1), RuntimeError,
     "negative padding is not supported"),
    (lambda: F.conv2d(_z(1, 3, 5, 5), _z(4, 3, 3, 3), groups=0), RuntimeError,
     "non-positive groups is not supported"),
    (lambda: F.conv2d(_z(1, 3, 5, 5), _z(4, 3, 3, 3), stride=2, padding="same"), RuntimeError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(_z(1, 3, 5, 5), _z(4, 3, 3, 3), padding="foo"), RuntimeError,
     "Invalid padding string: 'foo'"),
    (lambda: F.conv2d(_z(1, 3, 5, 5), _z(4, 3, 3, 3, dtype=ember.float64)), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: F.conv_transpose2d(_z(1, 3, 5, 5), _z(4, 2, 3, 3)), RuntimeError,
     r"Given transposed=1, weight of size \[4, 2, 3, 3\], expected input\[1, 3, 5, 5\] to "
     r"have 4 channels, but got 3 channels instead"),
    (lambda: F.conv_transpose2d(_z(1, 4, 5, 5), _z(4, 2, 3, 3), stride=2, output_padding=2),
     RuntimeError, "output padding must be smaller than either stride or dilation, but got "
     "output_padding_height: 2 output_padding_width: 2 stride_height: 2 stride_width: 2 "
     "dilation_height: 1 dilation_width: 1"),
    (lambda: F.conv_transpose2d(_z(1, 4, 1, 1), _z(4, 2, 1, 1), padding=1), RuntimeError,
     r"Given input size per channel: \(1 x 1\). Calculated output size per channel: "
     r"\(-1 x -1\). Output size is too small"),
    (lambda: F.max_pool2d(_z(1, 1, 5, 5), 2, 1, 2, 4), RuntimeError,
     "pad should be smaller than or equal to half of kernel size, but got padW = 2, "
     "padH = 2, kW = 2, kH = 2"),
    (lambda: F.max_pool3d(_z(1, 1, 5, 5, 5), 2, 1, 2, 4), RuntimeError,
     "pad should be smaller than or equal to half of kernel size, but got kT: 2 kW: 2 kH: 2 "
     "padT: 2 padW: 2 padH: 2"),
    (lambda: F.max_pool1d(_z(1, 1, 5), 2, 1, 2, 4), RuntimeError,
     "max_pool1d\\(\\) padding should be at most half of kernel size, but got padding=2 and "
     "kernel_size=2"),
    (lambda: F.max_pool1d(_z(1, 1, 5), 0), RuntimeError,
     r"max_pool1d\(\) kernel_size must be greater than zero, but got 0"),
    (lambda: F.max_pool2d(_z(1, 1, 5, 5), 3, 1, 2), RuntimeError,
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and "
     "dilation=1"),
    (lambda: F.max_pool2d(_z(1, 1, 5, 5), 0), RuntimeError, "stride should not be zero"),
    (lambda: F.max_pool2d(_z(1, 1, 5, 5), 2, -1), RuntimeError,
     "stride should be greater than zero, but got dH: -1 dW: -1"),
    (lambda: F.avg_pool1d(_z(1, 1, 5), 0, 1), RuntimeError,
     "kernel size should be greater than zero, but got kH: 1 kW: 0"),
    (lambda: F.max_pool2d(_z(1, 1, 2, 2), 3), RuntimeError,
     r"Given input size: \(1x2x2\). Calculated output size: \(1x0x0\). Output size is too "
     r"small"),
    (lambda: F.max_pool2d(_z(1, 0, 5, 5), 2), RuntimeError,
     r"Expected 3D or 4D \(batch mode\) tensor with optional 0 dim batch size for input, but "
     r"got:\[1, 0, 5, 5\]"),
    (lambda: F.max_pool2d(_z(5, 5), 2), RuntimeError,
     r"non-empty 3D or 4D \(batch mode\) tensor expected for input"),
    (lambda: F.avg_pool3d(_z(1, 1, 1, 5, 5), 2), RuntimeError,
     r"input image \(T: 1 H: 5 W: 5\) smaller than kernel size \(kT: 2 kH: 2 kW: 2\)"),
    (lambda: F.avg_pool2d(_z(1, 1, 4, 4), 2, divisor_override=0), RuntimeError,
     "divisor must be not zero"),
    (lambda: F.adaptive_avg_pool2d(_z(4, 4), 2), RuntimeError,
     r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, but got \[4, 4\]"),
    (lambda: F.adaptive_max_pool2d(_z(1, 0, 5, 5), 2), RuntimeError,
     r"adaptive_max_pool2d\(\): Expected input to have non-zero size for non-batch "
     r"dimensions, but input has sizes \[1, 0, 5, 5\] with dimension 1 being empty"),
    (lambda: F.adaptive_avg_pool2d(_z(1, 1, 4, 4), (1, 2, 3)), RuntimeError,
     "adaptive_avg_pool2d: output_size must be 2"),
    (lambda: F.adaptive_avg_pool1d(_z(1, 1, 4), (1, 2)), RuntimeError,
     r"adaptive_avg_pool1d\(\) argument 'output_size' should contain one int \(got 2\)"),
    (lambda: F.adaptive_avg_pool2d(_z(1, 1, 4, 4), -1), RuntimeError,
     r"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
     r"received \{-1, -1\}"),
    (lambda: F.max_unpool2d(_z(1, 1, 2, 2), ember.full((1, 1, 2, 2), 99, dtype=ember.int64),
                            2), RuntimeError,
     r"Found an invalid max index: 99 \(output volumes are of size 4x4\)"),
    (lambda: F.max_unpool2d(_z(1, 1, 2, 2), _z(1, 1, 2, 3, dtype=ember.int64), 2),
     RuntimeError, r"Expected shape of indices to be same as that of the input tensor"),
    (lambda: F.max_unpool2d(_z(1, 1, 2, 2), _z(1, 1, 2, 2, dtype=ember.int32), 2),
     RuntimeError, "elements in indices should be type int64 but got: Int"),
    (lambda: F.max_unpool2d(_z(1, 1, 2, 2), _z(1, 1, 2, 2, dtype=ember.int64), 2,
                            output_size=(9, 9)), ValueError,
     r'invalid output_size "\(9, 9\)" \(dim 0 must be between 2 and 6\)'),
    (lambda: F.unfold(_z(1, 3, 2, 2), 3), RuntimeError,
     r"Given input with spatial size \(2, 2\), kernel_size=\(3, 3\), dilation=\(1, 1\), "
     r"padding=\(0, 0\), calculated shape of the array of sliding blocks as \(0, 0\), but "
     r"its components must be at least one."),
    (lambda: F.unfold(_z(3, 5), 2), IndexError,
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    (lambda: F.unfold(_z(1, 0, 5, 5), 2), RuntimeError,
     r"Expected 3D or 4D \(batch mode\) tensor with possibly 0 batch size and other non-zero "
     r"dimensions for input, but got: \[1, 0, 5, 5\]"),
    (lambda: F.fold(_z(1, 12, 7), (4, 5), 2), RuntimeError,
     r"Given output_size=\(4, 5\), kernel_size=\(2, 2\), dilation=\(1, 1\), padding=\(0, 0\), "
     r"stride=\(1, 1\), expected size of input's dimension 2 to match the calculated number "
     r"of sliding blocks 3 \* 4 = 12, but got input.size\(2\)=7."),
    (lambda: F.fold(_z(1, 10, 12), (4, 5), 2), RuntimeError,
     r"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
     r"but got input.size\(1\)=10 and kernel_size=\(2, 2\)."),
    (lambda: F.max_pool1d(_z(1, 1, 4, dtype=ember.int64), 2), NotImplementedError,
     "\"max_pool1d_impl\" not implemented for 'Long'"),
    (lambda: F.max_pool2d(_z(1, 1, 4, 4, dtype=ember.bool), 2), NotImplementedError,
     "\"max_pool2d\" not implemented for 'Bool'"),
    (lambda: F.adaptive_avg_pool1d(_z(1, 1, 4, dtype=ember.int32), 2), NotImplementedError,
     "\"adaptive_avg_pool2d\" not implemented for 'Int'"),
    (lambda: F.adaptive_max_pool2d(_z(1, 1, 4, 4, dtype=ember.int64), 2), NotImplementedError,
     "\"adaptive_max_pool2d\" not implemented for 'Long'"),
    (lambda: F.max_unpool2d(_z(1, 1, 2, 2, dtype=ember.int64),
                            _z(1, 1, 2, 2, dtype=ember.int64), 2), NotImplementedError,
     "\"max_unpool2d\" not implemented for 'Long'"),
    (lambda: F.unfold(_z(1, 1, 4, 4, dtype=ember.int64), 2), NotImplementedError,
     "\"im2col_out_cpu\" not implemented for 'Long'"),
    (lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError, "in_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 3, 3, groups=2), ValueError,
     "out_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 4, 3, groups=0), ValueError, "groups must be a positive integer"),
    (lambda: nn.Conv2d(4, 4, 3, padding="foo"), ValueError, "Invalid padding string 'foo'"),
    (lambda: nn.Conv2d(4, 4, 3, stride=2, padding="same"), ValueError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: nn.Conv2d(4, 4, 3, padding_mode="zero"), ValueError,
     "padding_mode must be one of"),
    (lambda: nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"), ValueError,
     'Only "zeros" padding mode is supported for ConvTranspose2d'),
]


@pytest.mark.parametrize("fn,exc,msg", ERRORS)
def test_errors(fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn()


def test_non_contiguous_inputs():
    x = ember.randn(2, 5, 6, 3).permute(0, 3, 1, 2)
    assert not x.is_contiguous()
    xc = x.contiguous()
    w = ember.randn(4, 3, 2, 2)
    for f in (lambda t: F.conv2d(t, w, padding=1), lambda t: F.max_pool2d(t, 2, 1),
              lambda t: F.avg_pool2d(t, 3, 2, 1), lambda t: F.adaptive_max_pool2d(t, 2),
              lambda t: F.unfold(t, 2), lambda t: F.conv_transpose2d(t, w.transpose(0, 1))):
        np.testing.assert_array_equal(arr(f(x)), arr(f(xc)))


def test_factory_kwargs_and_dtype_conversion():
    m = nn.Conv2d(2, 3, 3, dtype=ember.float64)
    assert m.weight.dtype == ember.float64 and m.bias.dtype == ember.float64
    m = nn.ConvTranspose1d(2, 3, 3).double()
    assert m(ember.randn(1, 2, 4, dtype=ember.float64)).dtype == ember.float64


def test_empty_batches():
    assert tuple(F.max_pool2d(_z(0, 2, 4, 4), 2).shape) == (0, 2, 2, 2)
    assert tuple(F.avg_pool2d(_z(0, 2, 4, 4), 2).shape) == (0, 2, 2, 2)
    assert tuple(F.unfold(_z(0, 3, 5, 5), 2).shape) == (0, 12, 16)
    assert tuple(F.fold(_z(0, 12, 12), (4, 5), 2).shape) == (0, 3, 4, 5)
    assert tuple(F.max_unpool2d(_z(0, 1, 2, 2), _z(0, 1, 2, 2, dtype=ember.int64), 2).shape) \
        == (0, 1, 4, 4)
    assert tuple(F.adaptive_avg_pool2d(_z(1, 0, 4, 4), 2).shape) == (1, 0, 2, 2)
    assert tuple(F.conv_transpose2d(_z(0, 2, 3, 3), _z(2, 1, 2, 2)).shape) == (0, 1, 4, 4)
