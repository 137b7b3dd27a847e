"""Interpolation and sampling in ember.nn, without PyTorch: F.interpolate (every mode),
the deprecated F.upsample*, nn.Upsample and friends, F.affine_grid and F.grid_sample.

Forward passes are checked against NumPy references and closed forms, gradients with
finite differences in float64 (gradcheck; gradgradcheck for the recorded backward), and
the error messages against PyTorch's. tests/interop/test_nn_interpolate_torch.py compares
the same functions with torch.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def t64(a, requires_grad=True):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def arr(t):
    return t.detach().numpy()


# ---------------------------------------------------------------------------------------
# NumPy references

def _linear_src(n_in, n_out, align_corners):
    o = np.arange(n_out, dtype=np.float64)
    if align_corners:
        return o * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    return np.maximum((o + 0.5) * (n_in / n_out) - 0.5, 0)


def _linear_ref(x, size, align_corners):
    """Separable linear interpolation with np.interp, along each spatial dim."""
    for d, n_out in enumerate(size):
        axis = d + 2
        n_in = x.shape[axis]
        src = _linear_src(n_in, n_out, align_corners)
        x = np.apply_along_axis(lambda v, s=src, n=n_in: np.interp(s, np.arange(n), v),
                                axis, x)
    return x


def _cubic_w(t, a=-0.75):
    t = np.abs(t)
    return np.where(t <= 1, ((a + 2) * t - (a + 3)) * t * t + 1,
                    np.where(t < 2, ((a * t - 5 * a) * t + 8 * a) * t - 4 * a, 0.0))


def _bicubic_ref(x, size, align_corners):
    (h, w), (oh, ow) = x.shape[2:], size

    def src(n_in, n_out):
        o = np.arange(n_out, dtype=np.float64)
        if align_corners:
            return o * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
        return (o + 0.5) * (n_in / n_out) - 0.5

    out = np.zeros(x.shape[:2] + (oh, ow))
    sy, sx = src(h, oh), src(w, ow)
    for i in range(oh):
        for j in range(ow):
            y0, x0 = int(np.floor(sy[i])), int(np.floor(sx[j]))
            for a in range(-1, 3):
                for b in range(-1, 3):
                    wy, wx = _cubic_w(sy[i] - (y0 + a)), _cubic_w(sx[j] - (x0 + b))
                    yy, xx = min(max(y0 + a, 0), h - 1), min(max(x0 + b, 0), w - 1)
                    out[:, :, i, j] += wy * wx * x[:, :, yy, xx]
    return out


def _area_ref(x, size):
    out = np.zeros(x.shape[:2] + tuple(size))
    nd = len(size)
    for o in np.ndindex(*size):
        sl = []
        for d in range(nd):
            n_in = x.shape[d + 2]
            start = (o[d] * n_in) // size[d]
            end = -((-(o[d] + 1) * n_in) // size[d])
            sl.append(slice(start, end))
        out[(Ellipsis,) + o] = x[(Ellipsis,) + tuple(sl)].mean(axis=tuple(range(2, 2 + nd)))
    return out


def _nearest_ref(x, size, exact=False):
    for d, n_out in enumerate(size):
        n_in = x.shape[d + 2]
        o = np.arange(n_out)
        idx = np.floor((o + 0.5) * n_in / n_out if exact else o * n_in / n_out).astype(int)
        x = np.take(x, np.minimum(idx, n_in - 1), axis=d + 2)
    return x


def _bilinear_sample_ref(x, grid, align_corners):
    """grid_sample, bilinear with zero padding, one output point at a time."""
    n, c, h, w = x.shape
    out = np.zeros((n, c) + grid.shape[1:3])
    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                gx, gy = grid[b, i, j]
                if align_corners:
                    px, py = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
                else:
                    px, py = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
                x0, y0 = int(np.floor(px)), int(np.floor(py))
                for yy in (y0, y0 + 1):
                    for xx in (x0, x0 + 1):
                        if 0 <= yy < h and 0 <= xx < w:
                            wgt = (1 - abs(px - xx)) * (1 - abs(py - yy))
                            out[b, :, i, j] += wgt * x[b, :, yy, xx]
    return out


# ---------------------------------------------------------------------------------------
# interpolate: forward

@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [1, 2, 5, 8])
def test_linear_modes_match_numpy(nd, align_corners, size):
    mode = {1: "linear", 2: "bilinear", 3: "trilinear"}[nd]
    x = RNG.standard_normal((2, 3) + (4, 3, 2)[:nd])
    sizes = (size, size + 1, 3)[:nd]
    out = F.interpolate(ember.tensor(x), size=sizes, mode=mode, align_corners=align_corners)
    np.testing.assert_allclose(arr(out), _linear_ref(x, sizes, align_corners), atol=1e-12)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(1, 1), (2, 7), (6, 9), (3, 2)])
def test_bicubic_matches_numpy(align_corners, size):
    x = RNG.standard_normal((1, 2, 4, 5))
    out = F.interpolate(ember.tensor(x), size=size, mode="bicubic", align_corners=align_corners)
    np.testing.assert_allclose(arr(out), _bicubic_ref(x, size, align_corners), atol=1e-12)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_area_matches_adaptive_average(nd, size):
    x = RNG.standard_normal((2, 2) + (5, 4, 3)[:nd])
    sizes = (size, size + 1, 2)[:nd]
    out = F.interpolate(ember.tensor(x), size=sizes, mode="area")
    np.testing.assert_allclose(arr(out), _area_ref(x, sizes), atol=1e-12)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 3, 4, 6, 11])
def test_nearest_matches_numpy(exact, nd, size):
    x = RNG.standard_normal((1, 2) + (4, 3, 2)[:nd]).astype(np.float32)
    sizes = (size, size + 2, 3)[:nd]
    mode = "nearest-exact" if exact else "nearest"
    out = F.interpolate(ember.tensor(x), size=sizes, mode=mode)
    np.testing.assert_array_equal(arr(out), _nearest_ref(x, sizes, exact))


def test_nearest_integer_scale_is_repeat():
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    out = F.interpolate(ember.tensor(x), scale_factor=(2, 3))
    np.testing.assert_array_equal(arr(out), x.repeat(2, axis=2).repeat(3, axis=3))


def test_scale_factor_given_is_used_for_the_coordinates():
    # in = 4, scale 1.6: out = 6; the coordinates use 1 / 1.6, not 4 / 6
    x = RNG.standard_normal((1, 1, 4))
    out = F.interpolate(ember.tensor(x), scale_factor=1.6, mode="linear")
    src = np.maximum((np.arange(6) + 0.5) / 1.6 - 0.5, 0)
    np.testing.assert_allclose(arr(out)[0, 0], np.interp(src, np.arange(4), x[0, 0]))
    # recompute_scale_factor=True interpolates with 4 / 6
    out = F.interpolate(ember.tensor(x), scale_factor=1.6, mode="linear",
                        recompute_scale_factor=True)
    np.testing.assert_allclose(arr(out), _linear_ref(x, (6,), False))


def test_antialias_downsample_by_two_closed_form():
    # bilinear antialiasing halving a row: a triangle filter of half-width 2,
    # weights (1, 3, 3, 1) / 8 in the interior
    x = RNG.standard_normal((1, 1, 1, 12))
    out = F.interpolate(ember.tensor(x), size=(1, 6), mode="bilinear", antialias=True)
    row = x[0, 0, 0]
    expect = [(row[2 * o - 1] + 3 * row[2 * o] + 3 * row[2 * o + 1] + row[2 * o + 2]) / 8
              for o in range(1, 5)]
    np.testing.assert_allclose(arr(out)[0, 0, 0, 1:5], expect, atol=1e-12)
    # the border renormalizes: (3, 3, 1) / 7
    np.testing.assert_allclose(arr(out)[0, 0, 0, 0], (3 * row[0] + 3 * row[1] + row[2]) / 7)


def test_antialias_upsampling_equals_plain():
    x = ember.tensor(RNG.standard_normal((1, 2, 3, 4)))
    for mode in ("bilinear", "bicubic"):
        a = F.interpolate(x, scale_factor=2, mode=mode, antialias=True)
        # upsampling with the antialias filter is the plain filter, except bicubic's a
        if mode == "bilinear":
            np.testing.assert_allclose(arr(a), arr(F.interpolate(x, scale_factor=2, mode=mode)),
                                       atol=1e-12)
        assert a.shape == (1, 2, 6, 8)


def test_constant_input_stays_constant():
    x = ember.full((1, 2, 3, 5), 2.5)
    for mode, kw in [("nearest", {}), ("bilinear", {"align_corners": True}),
                     ("bicubic", {"align_corners": False}), ("area", {}),
                     ("bicubic", {"antialias": True}), ("lanczos", {"antialias": True})]:
        out = F.interpolate(x, size=(4, 7), mode=mode, **kw)
        np.testing.assert_allclose(arr(out), 2.5, rtol=1e-6)


def test_dtypes_and_shapes():
    x = RNG.standard_normal((1, 2, 3, 3))
    for dt in (ember.float32, ember.float64, ember.float16):
        out = F.interpolate(ember.tensor(x).to(dt), scale_factor=1.5, mode="bilinear")
        assert out.dtype == dt and out.shape == (1, 2, 4, 4)
    u = ember.tensor((RNG.random((1, 2, 3, 3)) * 255).astype(np.uint8))
    out = F.interpolate(u, scale_factor=2, mode="nearest")
    assert out.dtype == ember.uint8
    np.testing.assert_array_equal(arr(out), arr(u).repeat(2, 2).repeat(2, 3))
    out = F.interpolate(u, size=(5, 5), mode="bilinear")
    assert out.dtype == ember.uint8
    ref = _linear_ref(arr(u).astype(np.float64), (5, 5), False)
    assert np.abs(arr(out).astype(float) - ref).max() <= 1
    # empty batch
    out = F.interpolate(ember.zeros(0, 2, 3, 3), scale_factor=2, mode="bicubic")
    assert out.shape == (0, 2, 6, 6)


def test_module_and_functional_agree_and_repr():
    x = ember.tensor(RNG.standard_normal((1, 2, 3, 4)))
    m = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
    np.testing.assert_array_equal(
        arr(m(x)), arr(F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=True)))
    assert repr(m) == "Upsample(scale_factor=2.0, mode='bilinear')"
    assert repr(nn.Upsample(size=(3, 4))) == "Upsample(size=(3, 4), mode='nearest')"
    assert repr(nn.Upsample(scale_factor=(2, 3))) == \
        "Upsample(scale_factor=(2.0, 3.0), mode='nearest')"
    assert repr(nn.UpsamplingNearest2d(scale_factor=2)) == \
        "UpsamplingNearest2d(scale_factor=2.0, mode='nearest')"
    b = nn.UpsamplingBilinear2d(size=5)
    assert repr(b) == "UpsamplingBilinear2d(size=5, mode='bilinear')"
    assert b.align_corners is True and b.name == "UpsamplingBilinear2d"
    np.testing.assert_array_equal(
        arr(b(x)), arr(F.interpolate(x, size=5, mode="bilinear", align_corners=True)))
    np.testing.assert_array_equal(arr(nn.UpsamplingNearest2d(size=(5, 2))(x)),
                                  arr(F.interpolate(x, size=(5, 2))))
    assert len(m.state_dict()) == 0


def test_deprecated_aliases_warn():
    x = ember.tensor(RNG.standard_normal((1, 1, 2, 3)))
    with pytest.warns(UserWarning, match="upsample_nearest` is deprecated"):
        a = F.upsample_nearest(x, scale_factor=2)
    np.testing.assert_array_equal(arr(a), arr(F.interpolate(x, scale_factor=2)))
    with pytest.warns(UserWarning, match="upsample_bilinear` is deprecated"):
        b = F.upsample_bilinear(x, size=(3, 5))
    np.testing.assert_array_equal(
        arr(b), arr(F.interpolate(x, size=(3, 5), mode="bilinear", align_corners=True)))
    with pytest.warns(UserWarning, match="`nn.functional.upsample` is deprecated"):
        c = F.upsample(x, size=4, mode="bicubic", align_corners=False)
    assert c.shape == (1, 1, 4, 4)


@settings(max_examples=30, deadline=None)
@given(h=st.integers(1, 6), w=st.integers(1, 6), oh=st.integers(1, 9), ow=st.integers(1, 9),
       align_corners=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_hypothesis_bilinear_matches_numpy(h, w, oh, ow, align_corners, seed):
    x = np.random.default_rng(seed).standard_normal((1, 2, h, w))
    out = F.interpolate(ember.tensor(x), size=(oh, ow), mode="bilinear",
                        align_corners=align_corners)
    np.testing.assert_allclose(arr(out), _linear_ref(x, (oh, ow), align_corners), atol=1e-12)


# ---------------------------------------------------------------------------------------
# interpolate: gradients

_GRAD_CASES = [
    ("nearest", 1, None, {}), ("nearest", 2, None, {}), ("nearest", 3, None, {}),
    ("nearest-exact", 2, None, {}), ("linear", 1, False, {}), ("linear", 1, True, {}),
    ("bilinear", 2, False, {}), ("bilinear", 2, True, {}), ("bicubic", 2, False, {}),
    ("bicubic", 2, True, {}), ("trilinear", 3, False, {}), ("trilinear", 3, True, {}),
    ("area", 1, None, {}), ("area", 2, None, {}), ("area", 3, None, {}),
    ("bilinear", 2, False, {"antialias": True}), ("bicubic", 2, True, {"antialias": True}),
]


@pytest.mark.parametrize("mode,nd,align_corners,kw", _GRAD_CASES)
def test_interpolate_gradcheck(mode, nd, align_corners, kw):
    x = t64(RNG.standard_normal((1, 2) + (3, 4, 2)[:nd]))
    for size in ((5, 2, 3)[:nd], (2, 7, 1)[:nd]):
        assert gradcheck(lambda x, s=size: F.interpolate(
            x, size=s, mode=mode, align_corners=align_corners, **kw), (x,))
    assert gradcheck(lambda x: F.interpolate(x, scale_factor=1.7, mode=mode,
                                             align_corners=align_corners, **kw), (x,))


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic", "area"])
def test_interpolate_gradgradcheck(mode):
    x = t64(RNG.standard_normal((1, 1, 3, 2)))
    assert gradgradcheck(lambda x: F.interpolate(x, size=(4, 3), mode=mode), (x,))


def test_nearest_gradient_is_a_scatter_add():
    x = t64(np.zeros((1, 1, 2, 2)))
    F.interpolate(x, scale_factor=3).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), np.full((1, 1, 2, 2), 9.0))


# ---------------------------------------------------------------------------------------
# interpolate: errors (PyTorch's messages)

@pytest.mark.parametrize("args,kw,exc,msg", [
    ((1, 1, 2, 2), {"size": 3, "align_corners": True}, ValueError,
     "align_corners option can only be set with the interpolating modes"),
    ((1, 1, 2, 2), {"size": 3, "scale_factor": 2}, ValueError,
     "only one of size or scale_factor should be defined"),
    ((1, 1, 2, 2), {}, ValueError, "either size or scale_factor should be defined"),
    ((1, 1, 2, 2), {"size": (2,)}, ValueError,
     r"Input and output must have the same number of spatial dimensions, but got input "
     r"with spatial dimensions of \[2, 2\] and output size of \(2,\)"),
    ((1, 1, 2, 2), {"scale_factor": (2,)}, ValueError,
     "Input and scale_factor must have the same number of spatial dimensions"),
    ((1, 1, 2, 2), {"size": (3, 2.0)}, TypeError, "expected size to be one of int"),
    ((1, 1, 2, 2), {"size": 3, "recompute_scale_factor": True}, ValueError,
     "recompute_scale_factor is not meaningful with an explicit size."),
    ((1, 1, 2, 2), {"size": 3, "antialias": True}, ValueError,
     "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes"),
    ((1, 1, 2, 2), {"size": 3, "mode": "lanczos"}, ValueError,
     "Lanczos mode requires antialias=True"),
    ((1, 1, 2, 2), {"size": 3, "mode": "linear"}, NotImplementedError,
     "Got 4D input, but linear mode needs 3D input"),
    ((1, 1, 2), {"size": 3, "mode": "bilinear"}, NotImplementedError,
     "Got 3D input, but bilinear mode needs 4D input"),
    ((1, 1, 2, 2, 2), {"size": 3, "mode": "bicubic"}, NotImplementedError,
     r"Input Error: Only 3D, 4D and 5D input Tensors supported \(got 5D\) for the modes: "
     r"nearest \| linear \| bilinear \| bicubic \| trilinear \| lanczos \| area \| "
     r"nearest-exact \(got bicubic\)"),
    ((2, 2), {"size": 3}, NotImplementedError, r"Only 3D, 4D and 5D input Tensors supported"),
    ((1, 1, 2, 2), {"size": 3, "mode": "foo"}, NotImplementedError, r"\(got foo\)"),
    ((1, 1, 2, 2), {"scale_factor": 0.1}, RuntimeError,
     r"Input and output sizes should be greater than 0, but got input \(H: 2, W: 2\) output "
     r"\(H: 0, W: 0\)"),
    ((1, 1, 2), {"size": -1, "mode": "linear"}, RuntimeError,
     r"but got input \(W: 2\) and output \(W: -1\)"),
    ((1, 0, 2, 2), {"size": 3, "mode": "bilinear"}, RuntimeError,
     r"Non-empty 4D data tensor expected but got a tensor with sizes \[1, 0, 2, 2\]"),
    ((1, 1, 0, 2), {"size": 3, "mode": "area"}, RuntimeError,
     r"adaptive_avg_pool2d\(\): Expected input to have non-zero size for non-batch "
     r"dimensions, but input has sizes \[1, 1, 0, 2\] with dimension 2 being empty"),
])
def test_interpolate_errors(args, kw, exc, msg):
    with pytest.raises(exc, match=msg):
        F.interpolate(ember.zeros(*args), **kw)


def test_interpolate_dtype_errors():
    with pytest.raises(NotImplementedError,
                       match="\"compute_indices_weights_linear\" not implemented for 'Long'"):
        F.interpolate(ember.zeros(1, 1, 2, dtype=ember.int64), size=3, mode="linear")
    with pytest.raises(NotImplementedError,
                       match="\"adaptive_avg_pool2d\" not implemented for 'Byte'"):
        F.interpolate(ember.zeros(1, 1, 2, 2, dtype=ember.uint8), size=3, mode="area")
    with pytest.raises(TypeError, match="must be Tensor"):
        F.interpolate(np.zeros((1, 1, 2)), size=3)


# ---------------------------------------------------------------------------------------
# affine_grid

@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_identity_2d_3d(align_corners):
    def base(n):
        r = np.linspace(-1, 1, n) if n > 1 else np.zeros(1)
        return r if align_corners else r * (n - 1) / n

    theta = ember.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    g = arr(F.affine_grid(theta, (2, 3, 4, 5), align_corners=align_corners))
    assert g.shape == (2, 4, 5, 2)
    yy, xx = np.meshgrid(base(4), base(5), indexing="ij")
    np.testing.assert_allclose(g[1], np.stack([xx, yy], -1), atol=1e-12)
    theta3 = ember.tensor(np.eye(3, 4)[None])
    g3 = arr(F.affine_grid(theta3, (1, 1, 2, 3, 4), align_corners=align_corners))
    zz, yy, xx = np.meshgrid(base(2), base(3), base(4), indexing="ij")
    np.testing.assert_allclose(g3[0], np.stack([xx, yy, zz], -1), atol=1e-12)


def test_affine_grid_general_and_gradcheck():
    th = RNG.standard_normal((2, 2, 3))
    g = arr(F.affine_grid(ember.tensor(th), (2, 1, 3, 4), align_corners=True))
    yy, xx = np.meshgrid(np.linspace(-1, 1, 3), np.linspace(-1, 1, 4), indexing="ij")
    base = np.stack([xx, yy, np.ones_like(xx)], -1)
    np.testing.assert_allclose(g, np.einsum("hwk,nck->nhwc", base, th), atol=1e-12)
    assert gradcheck(lambda t: F.affine_grid(t, (2, 1, 3, 4), align_corners=False),
                     (t64(th),))
    assert gradcheck(lambda t: F.affine_grid(t, (1, 1, 2, 3, 2), align_corners=True),
                     (t64(RNG.standard_normal((1, 3, 4))),))


def test_affine_grid_errors():
    th = ember.zeros(2, 2, 3)
    with pytest.raises(ValueError, match="Expected theta to have floating point type"):
        F.affine_grid(ember.zeros(2, 2, 3, dtype=ember.int64), (2, 1, 3, 4), False)
    with pytest.raises(ValueError, match="Expected a batch of 3D affine matrices of shape "
                                         r"Nx3x4 for size \(2, 1, 3, 4, 5\)"):
        F.affine_grid(th, (2, 1, 3, 4, 5), align_corners=False)
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices"):
        F.affine_grid(ember.zeros(2, 3, 4), (2, 1, 3, 4), align_corners=False)
    with pytest.raises(NotImplementedError, match="affine_grid only supports 4D and 5D sizes"):
        F.affine_grid(th, (2, 1, 3), align_corners=False)
    with pytest.raises(ValueError, match="Expected non-zero, positive output size"):
        F.affine_grid(th, (2, 1, 0, 4), align_corners=False)
    with pytest.raises(RuntimeError, match=r"batch2 tensor to be: \[3, 3\] but got: \[2, 3\]"):
        F.affine_grid(th, (3, 1, 2, 4), align_corners=False)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        F.affine_grid(th, (2, 1, 3, 4))


# ---------------------------------------------------------------------------------------
# grid_sample

@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_bilinear_matches_numpy(align_corners):
    x = RNG.standard_normal((2, 3, 4, 5))
    grid = RNG.uniform(-1.3, 1.3, (2, 3, 2, 2))
    out = F.grid_sample(ember.tensor(x), ember.tensor(grid), align_corners=align_corners)
    np.testing.assert_allclose(arr(out), _bilinear_sample_ref(x, grid, align_corners),
                               atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_identity_grid_reproduces_input(mode, padding_mode):
    x = ember.tensor(RNG.standard_normal((2, 3, 4, 5)))
    theta = ember.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    for ac in (False, True):
        grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=ac)
        out = F.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=ac)
        np.testing.assert_allclose(arr(out), arr(x), atol=1e-9)


def test_grid_sample_padding_modes_closed_forms():
    # one row [0, 1, 2, 3] sampled outside, align_corners=True: x = -1.5 (pixels)
    x = ember.tensor(np.arange(4.0).reshape(1, 1, 1, 4))

    def at(px, padding_mode, mode="bilinear"):
        g = np.array([[[[2 * px / 3 - 1, 0.0]]]])
        return arr(F.grid_sample(x, ember.tensor(g), mode=mode, padding_mode=padding_mode,
                                 align_corners=True)).item()

    assert at(-1.5, "zeros") == 0.0
    assert at(-0.5, "zeros") == pytest.approx(0.0)  # half of pixel 0, which is 0
    assert at(3.5, "zeros") == pytest.approx(1.5)  # half of pixel 3
    assert at(-1.5, "border") == 0.0
    assert at(4.25, "border") == 3.0
    assert at(-1.5, "reflection") == pytest.approx(1.5)
    assert at(4.25, "reflection") == pytest.approx(1.75)
    assert at(1.5, "zeros", "nearest") == 2.0  # rounds half to even
    assert at(2.5, "zeros", "nearest") == 2.0


def test_grid_sample_3d_trilinear_is_separable():
    x = RNG.standard_normal((1, 2, 3, 4, 5))
    # a grid that only moves along x reduces to 1-d linear interpolation
    gx = RNG.uniform(-1, 1, 6)
    grid = np.zeros((1, 3, 4, 6, 3))
    grid[..., 0] = gx
    grid[..., 1] = np.linspace(-1, 1, 4)[None, :, None]
    grid[..., 2] = np.linspace(-1, 1, 3)[:, None, None]
    out = arr(F.grid_sample(ember.tensor(x), ember.tensor(grid), align_corners=True))
    px = (gx + 1) / 2 * 4
    ref = np.apply_along_axis(lambda v: np.interp(px, np.arange(5), v), 4, x)
    np.testing.assert_allclose(out, ref, atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_gradcheck(mode, padding_mode, align_corners):
    x = t64(RNG.standard_normal((2, 2, 3, 4)))
    g = t64(RNG.uniform(-1.4, 1.4, (2, 3, 2, 2)))
    assert gradcheck(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding_mode,
                                                align_corners=align_corners), (x, g))


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "reflection"])
def test_grid_sample_3d_gradcheck(mode, padding_mode):
    x = t64(RNG.standard_normal((1, 2, 2, 3, 2)))
    g = t64(RNG.uniform(-1.2, 1.2, (1, 2, 2, 1, 3)))
    assert gradcheck(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding_mode,
                                                align_corners=False), (x, g))


def test_grid_sample_gradgradcheck():
    x = t64(RNG.standard_normal((1, 1, 3, 3)))
    g = t64(RNG.uniform(-1.1, 1.1, (1, 2, 2, 2)))
    for mode in ("bilinear", "bicubic"):
        assert gradgradcheck(lambda x, g, m=mode: F.grid_sample(
            x, g, mode=m, padding_mode="border", align_corners=False), (x, g))


def test_grid_sample_errors():
    x, g = ember.zeros(2, 3, 4, 5), ember.zeros(2, 6, 7, 2)
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or "
                                         "'bicubic', but got: 'foo'"):
        F.grid_sample(x, g, mode="foo", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or "
                                         "'reflection', but got: 'foo'"):
        F.grid_sample(x, g, padding_mode="foo", align_corners=False)
    with pytest.raises(RuntimeError, match="expected grid and input to have same batch size"):
        F.grid_sample(x, g[:1], align_corners=False)
    with pytest.raises(RuntimeError, match=r"expected grid to have size 2 in last dimension, "
                                           r"but got grid with sizes \[2, 6, 7, 1\]"):
        F.grid_sample(x, g[..., :1], align_corners=False)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        F.grid_sample(x, g.double(), align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(ember.zeros(1, 1, 2, 2, 2), ember.zeros(1, 1, 1, 1, 3), mode="bicubic",
                      align_corners=False)
    with pytest.raises(RuntimeError, match="expected input to have non-empty spatial "
                                           "dimensions"):
        F.grid_sample(ember.zeros(2, 3, 0, 5), g, align_corners=False)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.grid_sample(x.long(), g.long(), align_corners=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        F.grid_sample(x, g)
    assert any("Default grid_sample" in str(m.message) for m in w)


@pytest.mark.parametrize("ishape,gshape", [((0, 2, 3, 3), (0, 2, 2, 2)),
                                           ((2, 0, 3, 3), (2, 2, 2, 2)),
                                           ((2, 2, 3, 3), (2, 0, 2, 2))])
def test_grid_sample_empty(ishape, gshape):
    x, g = t64(np.zeros(ishape)), t64(np.zeros(gshape))
    for mode in ("bilinear", "nearest", "bicubic"):
        out = F.grid_sample(x, g, mode=mode, align_corners=False)
        assert out.shape == (ishape[0], ishape[1]) + gshape[1:3]
        out.sum().backward()
        assert x.grad.shape == x.shape and g.grad.shape == g.shape


def test_grid_sample_float16():
    x = ember.tensor(RNG.standard_normal((1, 2, 3, 4))).to(ember.float16)
    g = ember.tensor(RNG.uniform(-1, 1, (1, 2, 2, 2))).to(ember.float16)
    out = F.grid_sample(x, g, align_corners=False)
    assert out.dtype == ember.float16
    ref = F.grid_sample(x.to(ember.float32), g.to(ember.float32), align_corners=False)
    np.testing.assert_allclose(arr(out).astype(np.float32), arr(ref), atol=1e-2)
