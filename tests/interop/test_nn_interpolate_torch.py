"""F.interpolate, nn.Upsample*, F.affine_grid and F.grid_sample against torch 2.13.

Outputs and the gradients w.r.t. the input (and the grid, and theta) match torch within
float32 tolerance across modes, align_corners, sizes, integer and non-integer scale
factors (given or recomputed), up- and down-sampling, in 1-d, 2-d and 3-d. Skipped as a
whole when torch is not installed.

Known torch quirks left out of the gradient comparisons (ours is the true gradient of
the forward; torch's own gradcheck fails there): 1-d/3-d ``nearest`` with a given
``scale_factor`` whose output size is the input's or twice it (torch's backward takes a
size shortcut its forward does not), and ``bicubic`` with a given ``scale_factor`` whose
output size equals the input's (torch's backward copies the gradient).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn as tnn  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

import ember  # noqa: E402
import ember.nn as enn  # noqa: E402
import ember.nn.functional as EF  # noqa: E402

RNG = np.random.default_rng(0)
ATOL = 2e-5


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _torch_grad_is_wrong(mode, nd, in_size, out_size, scale_factor, recompute):
    if scale_factor is None or recompute:
        return False
    if mode == "nearest" and nd != 2:
        return any(o in (i, 2 * i) for i, o in zip(in_size, out_size, strict=True))
    if mode == "bicubic":
        return tuple(in_size) == tuple(out_size)
    return False


def _compare(shape, dtype=np.float32, atol=ATOL, **kw):
    x = RNG.standard_normal(shape).astype(dtype)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    to = TF.interpolate(tx, **kw)
    eo = EF.interpolate(ex, **kw)
    assert tuple(eo.shape) == tuple(to.shape)
    np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-5, atol=atol)
    if to.numel() == 0:
        return
    g = RNG.standard_normal(tuple(to.shape)).astype(dtype)
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    nd = len(shape) - 2
    if not _torch_grad_is_wrong(kw.get("mode", "nearest"), nd, shape[2:], to.shape[2:],
                                kw.get("scale_factor"), kw.get("recompute_scale_factor")):
        np.testing.assert_allclose(_np(ex.grad), _np(tx.grad), rtol=1e-5, atol=atol * 5)


_MODES = {1: ["nearest", "nearest-exact", "linear", "area"],
          2: ["nearest", "nearest-exact", "bilinear", "bicubic", "area"],
          3: ["nearest", "nearest-exact", "trilinear", "area"]}
_CASES = [(nd, m, ac) for nd, ms in _MODES.items() for m in ms
          for ac in ([None] if m in ("nearest", "nearest-exact", "area") else [False, True])]
_SHAPES = {1: (2, 3, 5), 2: (2, 3, 5, 4), 3: (1, 2, 3, 4, 3)}


@pytest.mark.parametrize("nd,mode,align_corners", _CASES)
def test_interpolate_sizes(nd, mode, align_corners):
    shape = _SHAPES[nd]
    for out in (1, 2, 3, 4, 7, 10, 13):
        size = (out, out + 1, 3)[:nd]
        _compare(shape, mode=mode, align_corners=align_corners, size=size)
    _compare(shape, mode=mode, align_corners=align_corners, size=4)  # an int size


@pytest.mark.parametrize("nd,mode,align_corners", _CASES)
@pytest.mark.parametrize("recompute", [None, True])
def test_interpolate_scale_factors(nd, mode, align_corners, recompute):
    shape = _SHAPES[nd]
    for sf in (0.5, 0.7, 1.0, 1.2, 1.5, 2, 2.3, 3, 1 / 3):
        _compare(shape, mode=mode, align_corners=align_corners, scale_factor=sf,
                 recompute_scale_factor=recompute)
    _compare(shape, mode=mode, align_corners=align_corners,
             scale_factor=(1.7, 0.6, 2.0)[:nd], recompute_scale_factor=recompute)


@pytest.mark.parametrize("mode,align_corners", [
    ("bilinear", False), ("bilinear", True), ("bicubic", False), ("bicubic", True),
    ("lanczos", False),  # lanczos has no align_corners
])
def test_interpolate_antialias(mode, align_corners):
    for shape in ((2, 2, 4, 5), (1, 2, 13, 14)):
        for size in ((1, 3), (2, 4), (5, 7), (16, 18)):
            _compare(shape, mode=mode, align_corners=align_corners, size=size, antialias=True)
        for sf in (0.3, 0.5, 1.7):
            _compare(shape, mode=mode, align_corners=align_corners, scale_factor=sf,
                     antialias=True)


def test_interpolate_float64_and_float16():
    for mode in ("bilinear", "bicubic", "nearest", "area"):
        _compare((1, 2, 5, 6), np.float64, atol=1e-12, mode=mode, size=(7, 3))
    x = RNG.standard_normal((1, 2, 4, 5)).astype(np.float16)
    for mode in ("bilinear", "bicubic", "nearest"):
        t = TF.interpolate(torch.tensor(x), size=(7, 3), mode=mode)
        e = EF.interpolate(ember.tensor(x), size=(7, 3), mode=mode)
        assert e.dtype == ember.float16
        np.testing.assert_allclose(_np(e).astype(np.float32), _np(t).astype(np.float32),
                                   rtol=3e-3, atol=3e-3)


def test_interpolate_uint8_within_one():
    for mode in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        for aa in ([False, True] if mode in ("bilinear", "bicubic") else [False]):
            x = RNG.integers(0, 256, (2, 3, 6, 5)).astype(np.uint8)
            t = _np(TF.interpolate(torch.tensor(x), size=(9, 4), mode=mode, antialias=aa))
            e = _np(EF.interpolate(ember.tensor(x), size=(9, 4), mode=mode, antialias=aa))
            assert e.dtype == np.uint8
            assert np.abs(t.astype(int) - e.astype(int)).max() <= (0 if "nearest" in mode else 1)


@pytest.mark.parametrize("kw", [
    {"scale_factor": 0.1}, {"size": 0, "mode": "area"}, {"size": (2,)}, {"size": (3, 2.0)},
    {"size": 3, "align_corners": True}, {"size": 3, "antialias": True},
    {"size": 3, "mode": "linear"}, {"size": 3, "mode": "foo"}, {"size": 3, "mode": "lanczos"},
    {}, {"size": 2, "scale_factor": 2},
])
def test_interpolate_errors_match(kw):
    x = np.zeros((1, 1, 2, 2), np.float32)
    try:
        expect = TF.interpolate(torch.tensor(x), **kw)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as info:
            EF.interpolate(ember.tensor(x), **kw)
        assert str(info.value) == str(e)
    else:
        assert EF.interpolate(ember.tensor(x), **kw).shape == tuple(expect.shape)


@pytest.mark.parametrize("make", [
    lambda nn: nn.Upsample(scale_factor=2),
    lambda nn: nn.Upsample(size=(3, 7), mode="bilinear", align_corners=True),
    lambda nn: nn.Upsample(scale_factor=(1.5, 0.5), mode="bicubic",
                           recompute_scale_factor=True),
    lambda nn: nn.Upsample(size=5, mode="nearest-exact"),
    lambda nn: nn.UpsamplingNearest2d(scale_factor=3),
    lambda nn: nn.UpsamplingBilinear2d(size=(4, 6)),
])
def test_upsample_modules(make):
    tm, em = make(tnn), make(enn)
    assert repr(em) == repr(tm)
    assert list(em.state_dict().keys()) == list(tm.state_dict().keys()) == []
    em.load_state_dict(tm.state_dict(), strict=True)
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    to, eo = tm(tx), em(ex)
    np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-5, atol=ATOL)
    to.sum().backward()
    eo.sum().backward()
    np.testing.assert_allclose(_np(ex.grad), _np(tx.grad), rtol=1e-5, atol=1e-4)


# ---------------------------------------------------------------------------------------
# grid_sample and affine_grid

def _compare_grid_sample(ishape, gshape, gscale, **kw):
    x = RNG.standard_normal(ishape).astype(np.float32)
    g = RNG.uniform(-gscale, gscale, gshape).astype(np.float32)
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    ex, eg = ember.tensor(x, requires_grad=True), ember.tensor(g, requires_grad=True)
    to, eo = TF.grid_sample(tx, tg, **kw), EF.grid_sample(ex, eg, **kw)
    np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-5, atol=ATOL)
    go = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(go))
    eo.backward(ember.tensor(go))
    np.testing.assert_allclose(_np(ex.grad), _np(tx.grad), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(_np(eg.grad), _np(tg.grad), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d(mode, padding_mode, align_corners):
    for ishape, gshape in [((2, 3, 4, 5), (2, 6, 7, 2)), ((1, 2, 1, 3), (1, 3, 3, 2)),
                           ((2, 1, 5, 1), (2, 4, 2, 2))]:
        for gscale in (0.9, 1.5, 3.5):
            _compare_grid_sample(ishape, gshape, gscale, mode=mode, padding_mode=padding_mode,
                                 align_corners=align_corners)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_3d(mode, padding_mode, align_corners):
    _compare_grid_sample((2, 3, 4, 5, 3), (2, 3, 2, 4, 3), 1.5, mode=mode,
                         padding_mode=padding_mode, align_corners=align_corners)


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 1, 3), (2, 2, 6, 1), (2, 3, 4, 5, 2),
                                  (2, 1, 1, 3, 3)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_into_grid_sample(size, align_corners):
    """Gradients flow from the sampled output to theta through the grid (identity and
    perturbed transforms: the identity puts samples exactly on pixels)."""
    nd = len(size) - 2
    modes = ["bilinear", "nearest"] + (["bicubic"] if nd == 2 else [])
    for mode in modes:
        for pm in ("zeros", "border", "reflection"):
            for perturb in (0.0, 0.3):
                th = np.zeros((2, nd, nd + 1))
                th[:, :, :nd] = np.eye(nd)
                th = (th + perturb * RNG.standard_normal(th.shape)).astype(np.float32)
                x = RNG.standard_normal(size).astype(np.float32)
                tt, et = torch.tensor(th, requires_grad=True), ember.tensor(th, requires_grad=True)
                tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tg = TF.affine_grid(tt, size, align_corners=align_corners)
                    eg = EF.affine_grid(et, size, align_corners=align_corners)
                np.testing.assert_allclose(_np(eg), _np(tg), rtol=1e-6, atol=1e-6)
                to = TF.grid_sample(tx, tg, mode=mode, padding_mode=pm,
                                    align_corners=align_corners)
                eo = EF.grid_sample(ex, eg, mode=mode, padding_mode=pm,
                                    align_corners=align_corners)
                np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-5, atol=ATOL)
                go = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
                to.backward(torch.tensor(go))
                eo.backward(ember.tensor(go))
                np.testing.assert_allclose(_np(ex.grad), _np(tx.grad), rtol=1e-5, atol=1e-4)
                np.testing.assert_allclose(_np(et.grad), _np(tt.grad), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("args", [
    ((2, 3, 4, 5), (1, 6, 7, 2), {}), ((2, 3, 4, 5), (2, 6, 7, 1), {}),
    ((2, 3, 4, 5, 6), (2, 2, 2, 2, 3), {"mode": "bicubic"}), ((2, 3, 0, 5), (2, 6, 7, 2), {}),
    ((2, 3, 4, 5), (2, 6, 7, 2), {"mode": "foo"}),
    ((2, 3, 4, 5), (2, 6, 7, 2), {"padding_mode": "foo"}),
])
def test_grid_sample_errors_match(args):
    ishape, gshape, kw = args
    x, g = np.zeros(ishape, np.float32), np.zeros(gshape, np.float32)
    with pytest.raises(Exception) as expect:  # noqa: B017
        TF.grid_sample(torch.tensor(x), torch.tensor(g), align_corners=False, **kw)
    with pytest.raises(type(expect.value)) as got:
        EF.grid_sample(ember.tensor(x), ember.tensor(g), align_corners=False, **kw)
    assert str(got.value) == str(expect.value)
