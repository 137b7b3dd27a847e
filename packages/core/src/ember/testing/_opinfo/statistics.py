"""OpInfos for ``ember._ops.statistics``: cov, corrcoef, histogram, histogramdd, isin."""

from __future__ import annotations

import warnings

import numpy as np

import ember
from ember.testing._opinfo.core import FLOATING, OpInfo, SampleInput, arr


def _t(name):
    return lambda torch: getattr(torch, name)


def _cov_samples(dtype, rng):
    for shape in [(3, 5), (5,), (1, 4), (2, 3)]:
        yield SampleInput(arr(rng, shape, dtype))
    x = arr(rng, (3, 5), dtype)
    yield SampleInput(x, kwargs={"correction": 0}, name="correction 0")
    yield SampleInput(x, kwargs={"correction": 2}, name="correction 2")
    fw = rng.integers(0, 4, 5)
    fw[0] = 1
    aw = rng.uniform(0.1, 2.0, 5).astype(dtype if np.dtype(dtype).kind == "f" else np.float32)
    yield SampleInput(x, kwargs={"fweights": fw}, name="fweights")
    yield SampleInput(x, kwargs={"aweights": aw}, name="aweights")
    yield SampleInput(x, kwargs={"fweights": fw, "aweights": aw, "correction": 3},
                      name="both weights")
    yield SampleInput(arr(rng, (0, 3), dtype), name="no variables")


def _ref_cov(x, correction=1, fweights=None, aweights=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = np.cov(x.astype(np.float64) if x.dtype.kind in "iu" else x, ddof=correction,
                   fweights=fweights, aweights=aweights)
    return np.asarray(r).reshape([n for n in np.shape(r) if n != 1])


def _corrcoef_samples(dtype, rng):
    for shape in [(3, 5), (2, 4), (4, 3)]:
        yield SampleInput(arr(rng, shape, dtype))


def _hist_samples(dtype, rng):
    x = arr(rng, (3, 7), dtype, -2, 2)
    yield SampleInput(x, (5,))
    yield SampleInput(x, (4,), {"range": (-1.0, 1.5)}, name="range")
    yield SampleInput(x, (3,), {"density": True}, name="density")
    yield SampleInput(x, (3,), {"weight": arr(rng, (3, 7), dtype, 0, 2)}, name="weight")
    yield SampleInput(x, (np.array([-2.0, -0.5, 0.0, 2.5], dtype),), name="edges")
    yield SampleInput(arr(rng, (0,), dtype), (3,), name="empty")
    yield SampleInput(np.full(4, 1.5, dtype), (2,), name="one value")


def _ref_histogram(x, bins, range=None, weight=None, density=False):
    hist, edges = np.histogram(x.reshape(-1), bins=bins, range=range,
                               weights=None if weight is None else weight.reshape(-1),
                               density=density)
    return hist.astype(x.dtype), edges.astype(x.dtype)


def _histdd_samples(dtype, rng):
    x = arr(rng, (6, 2), dtype, -2, 2)
    yield SampleInput(x, (3,))
    yield SampleInput(x, ([2, 4],), {"range": [-1.0, 1.0, -2.0, 2.0]}, name="range")
    yield SampleInput(arr(rng, (2, 5, 3), dtype), ([2, 3, 2],),
                      {"weight": arr(rng, (2, 5), dtype, 0, 1), "density": True},
                      name="weights, density")
    yield SampleInput(x, ([np.array([-3.0, 0.0, 3.0], dtype), np.array([-2.0, 2.0], dtype)],),
                      name="edges")


def _ref_histogramdd(x, bins, range=None, weight=None, density=False):
    n = x.shape[-1]
    pts = x.reshape(-1, n)
    rng = None if range is None else [(range[2 * d], range[2 * d + 1]) for d in np.arange(n)]
    hist, edges = np.histogramdd(pts, bins=bins, range=rng, density=density,
                                 weights=None if weight is None else weight.reshape(-1))
    return (hist.astype(x.dtype),) + tuple(e.astype(x.dtype) for e in edges)


def _flat_hist(r):
    """(hist, bin_edges) with the edges as a tuple, as a flat tuple of arrays."""
    if isinstance(r, tuple) and len(r) == 2 and isinstance(r[1], (tuple, list)):
        return (r[0],) + tuple(r[1])
    return tuple(r)


def _isin_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype, -5, 5)
    yield SampleInput(x, (arr(rng, (6,), dtype, -5, 5),))
    yield SampleInput(x, (arr(rng, (2, 2), dtype, -5, 5),), {"invert": True}, name="invert")
    yield SampleInput(x, (3,), name="number")
    yield SampleInput(np.unique(arr(rng, (8,), dtype, -9, 9)),
                      (np.unique(arr(rng, (5,), dtype, -9, 9)),), {"assume_unique": True},
                      name="unique")
    yield SampleInput(arr(rng, (0, 2), dtype), (x,), name="empty")


OPS = [
    OpInfo("cov", ember.cov, _cov_samples, ref=_ref_cov, dtypes=FLOATING + (np.int64,),
           torch_op=_t("cov"), method="cov"),
    OpInfo("corrcoef", ember.corrcoef, _corrcoef_samples, ref=np.corrcoef,
           torch_op=_t("corrcoef"), method="corrcoef"),
    OpInfo("histogram", ember.histogram, _hist_samples, ref=_ref_histogram,
           differentiable=False, torch_op=_t("histogram"), method="histogram"),
    OpInfo("histogramdd", ember.histogramdd, _histdd_samples, ref=_ref_histogramdd,
           differentiable=False, torch_op=_t("histogramdd"), output_process=_flat_hist),
    OpInfo("isin", ember.isin, _isin_samples, ref=np.isin, dtypes=FLOATING + (np.int64,),
           differentiable=False, torch_op=_t("isin")),
]
