"""OpInfos for ``ember._ops.calculus``: diff, gradient, trapezoid, trapz and
cumulative_trapezoid."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import FLOATING, OpInfo, SampleInput, arr

_FLOAT_AND_INT = FLOATING + (np.int64,)


def _t(name):
    return lambda torch: getattr(torch, name)


def _diff_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 5), dtype))
    yield SampleInput(arr(rng, (3, 5), dtype), (2, 0))
    yield SampleInput(arr(rng, (4, 3), dtype), (3, -1))
    yield SampleInput(arr(rng, (4,), dtype), (0,), name="n=0")
    yield SampleInput(arr(rng, (4,), dtype), (6,), name="n > size")
    yield SampleInput(arr(rng, (3, 4), dtype), (1, 1),
                      {"prepend": arr(rng, (3, 2), dtype), "append": arr(rng, (3, 1), dtype)},
                      name="prepend, append")
    yield SampleInput(arr(rng, (0, 3), dtype), (1, 0), name="empty")


def _ref_diff(x, n=1, dim=-1, prepend=None, append=None):
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(x, n=n, axis=dim, **kw) if n else x


def _gradient_samples(dtype, rng):
    x = arr(rng, (4, 5), dtype)
    yield SampleInput(x)
    yield SampleInput(x, kwargs={"spacing": 2.0, "dim": 1}, name="spacing")
    yield SampleInput(x, kwargs={"spacing": [0.5, 3.0], "edge_order": 2}, name="edge order 2")
    coords = [np.sort(rng.uniform(0, 4, 4)).astype(dtype),
              np.sort(rng.uniform(0, 4, 5)).astype(dtype)]
    coords[0][1:] += np.arange(1, 4).astype(dtype)  # keep the points apart
    coords[1][1:] += np.arange(1, 5).astype(dtype)
    yield SampleInput(x, kwargs={"spacing": coords}, name="coordinates")
    yield SampleInput(x, kwargs={"spacing": coords, "edge_order": 2},
                      name="coordinates, edge order 2")
    yield SampleInput(arr(rng, (2, 3, 4), dtype), kwargs={"dim": (0, 2)}, name="dims")


def _ref_gradient(x, spacing=1, dim=None, edge_order=1):
    axis = tuple(range(x.ndim)) if dim is None else dim
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    h = spacing if isinstance(spacing, (list, tuple)) else [spacing] * len(axis)
    x = x.astype(np.float32) if x.dtype.kind in "iu" else x
    r = np.gradient(x, *h, axis=axis, edge_order=edge_order)
    return tuple(r) if isinstance(r, (list, tuple)) else (r,)


def _trapz_samples(dtype, rng):
    y = arr(rng, (3, 5), dtype)
    yield SampleInput(y)
    yield SampleInput(y, kwargs={"dx": 0.5}, name="dx")
    yield SampleInput(y, kwargs={"dim": 0}, name="dim 0")
    yield SampleInput(y, (np.sort(arr(rng, (5,), dtype, 0, 9)),), name="x")
    yield SampleInput(y, (np.sort(arr(rng, (3, 1), dtype, 0, 9), axis=0),), {"dim": 0},
                      name="x broadcast")
    yield SampleInput(arr(rng, (3, 1), dtype), name="one sample")


def _ref_trapezoid(y, x=None, dx=None, dim=-1):
    if y.dtype.kind in "iu":
        y = y.astype(np.float32)
    return np.trapezoid(y, x=x, dx=1.0 if dx is None else dx, axis=dim)


def _ref_cumulative_trapezoid(y, x=None, dx=None, dim=-1):
    if y.dtype.kind in "iu":
        y = y.astype(np.float32)
    left = np.take(y, range(y.shape[dim] - 1), axis=dim)
    right = np.take(y, range(1, y.shape[dim]), axis=dim)
    h = 1.0 if dx is None else dx
    if x is not None:
        if x.ndim == 1:
            shape = [1] * y.ndim
            shape[dim] = -1
            x = x.reshape(shape)
        h = np.diff(x, axis=dim)
    return np.cumsum(h / 2.0 * (left + right), axis=dim)


OPS = [
    OpInfo("diff", ember.diff, _diff_samples, ref=_ref_diff, dtypes=_FLOAT_AND_INT,
           torch_op=_t("diff"), method="diff"),
    OpInfo("gradient", ember.gradient, _gradient_samples, ref=_ref_gradient,
           dtypes=_FLOAT_AND_INT, torch_op=_t("gradient"), check_dtype=True),
    OpInfo("trapezoid", ember.trapezoid, _trapz_samples, ref=_ref_trapezoid,
           dtypes=_FLOAT_AND_INT, torch_op=_t("trapezoid")),
    OpInfo("trapz", ember.trapz, _trapz_samples, ref=_ref_trapezoid, dtypes=FLOATING,
           torch_op=_t("trapz")),
    OpInfo("cumulative_trapezoid", ember.cumulative_trapezoid, _trapz_samples,
           ref=_ref_cumulative_trapezoid, dtypes=_FLOAT_AND_INT,
           torch_op=_t("cumulative_trapezoid")),
]
