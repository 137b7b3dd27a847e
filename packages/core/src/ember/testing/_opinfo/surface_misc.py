"""OpInfos for the rest of the math surface: ``index_reduce`` (and ``index_reduce_``),
``binomial`` at its deterministic points, and the in-place view changes of
``ember._ops.shape_inplace`` (``squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_``,
``swapaxes_``, ``swapdims_``), each run on a copy so that gradients flow to the input."""

from __future__ import annotations

import warnings

import numpy as np

import ember
from ember.testing._opinfo.core import FLOATING, OpInfo, SampleInput, arr


def _index_reduce_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype, 0.5, 2)
    for reduce in ("prod", "mean", "amax", "amin"):
        yield SampleInput(x, (0, np.array([0, 2, 0, 1, 2]), arr(rng, (5, 4), dtype, 0.5, 2),
                              reduce), name=reduce)
        yield SampleInput(x, (1, np.array([3, 0]), arr(rng, (3, 2), dtype, 0.5, 2), reduce),
                          {"include_self": False}, name=f"{reduce} without self")
    yield SampleInput(arr(rng, (2, 3, 2), dtype, 0.5, 2),
                      (-2, np.array([2, 2], np.int32), arr(rng, (2, 2, 2), dtype, 0.5, 2),
                       "prod"), name="int32 index")
    yield SampleInput(x, (0, np.zeros(0, np.int64), arr(rng, (0, 4), dtype), "mean"),
                      name="no index")


def _ref_index_reduce(x, dim, index, source, reduce, include_self=True):
    out = x.copy()
    xs, ss = np.moveaxis(out, dim, 0), np.moveaxis(source, dim, 0)
    for j in np.unique(index):
        rows = ss[index == j]
        vals = np.concatenate([xs[j][None], rows]) if include_self else rows
        xs[j] = {"prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce](
            vals, axis=0)
    return out


def _index_reduce(x, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "index_reduce() is in beta"
        return ember.index_reduce(x, *args, **kwargs)


def _torch_index_reduce(torch):
    def fn(x, *args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return torch.index_reduce(x, *args, **kwargs)
    return fn


def _binomial_samples(dtype, rng):
    count = np.array([[0.0, 3.0, 7.0], [2.5, -1.0, 12.0]], dtype)
    yield SampleInput(count, (np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]], dtype),))
    yield SampleInput(count, (np.array([1.5, 1.0, -0.5], dtype),), name="broadcast")
    yield SampleInput(np.zeros((0, 3), dtype), (np.ones(3, dtype),), name="empty")


def _ref_binomial(count, prob):
    count, prob = np.broadcast_arrays(count, prob)
    return np.where((count > 0) & (prob >= 1), count, 0.0).astype(count.dtype)


def _view_samples(*cases):
    def samples(dtype, rng):
        for shape, args in cases:
            yield SampleInput(arr(rng, shape, dtype), args)
    return samples


def _inplace(name):
    return lambda x, *a: getattr(x.clone(), name)(*a)


def _torch_inplace(name):
    return lambda torch: lambda x, *a: getattr(x.clone(), name)(*a)


def _ref_squeeze(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(d % x.ndim for d in dims if x.shape[d] == 1)
    return np.squeeze(x, dims) if dims else x


def _ref_t(x):
    return x.T if x.ndim == 2 else x


_SQUEEZE = _view_samples(((1, 3, 1), ()), ((1, 3, 1), (0,)), ((1, 3, 1), (1,)),
                         ((1, 3, 1), ((0, 2),)), ((), ()))
_UNSQUEEZE = _view_samples(((3, 4), (0,)), ((3, 4), (-1,)), ((), (0,)))
_T = _view_samples(((3, 4), ()), ((3,), ()), ((), ()))
_TRANSPOSE = _view_samples(((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, 1)), ((3,), (0, 0)))

OPS = [
    OpInfo("index_reduce", _index_reduce, _index_reduce_samples, ref=_ref_index_reduce,
           dtypes=FLOATING + (np.int64,), torch_op=_torch_index_reduce, method="index_reduce"),
    OpInfo("index_reduce_", lambda x, *a, **k: x.clone().index_reduce_(*a, **k),
           _index_reduce_samples, ref=_ref_index_reduce,
           torch_op=lambda torch: lambda x, *a, **k: x.clone().index_reduce_(*a, **k)),
    OpInfo("binomial", ember.binomial, _binomial_samples, ref=_ref_binomial,
           differentiable=False, torch_op=lambda torch: torch.binomial),
    OpInfo("squeeze_", _inplace("squeeze_"), _SQUEEZE, ref=_ref_squeeze,
           torch_op=_torch_inplace("squeeze_")),
    OpInfo("unsqueeze_", _inplace("unsqueeze_"), _UNSQUEEZE, ref=np.expand_dims,
           torch_op=_torch_inplace("unsqueeze_")),
    OpInfo("t_", _inplace("t_"), _T, ref=_ref_t, torch_op=_torch_inplace("t_")),
    OpInfo("transpose_", _inplace("transpose_"), _TRANSPOSE, ref=np.swapaxes,
           torch_op=_torch_inplace("transpose_")),
    OpInfo("swapaxes_", _inplace("swapaxes_"), _TRANSPOSE, ref=np.swapaxes,
           torch_op=_torch_inplace("swapaxes_")),
    OpInfo("swapdims_", _inplace("swapdims_"), _TRANSPOSE, ref=np.swapaxes,
           torch_op=_torch_inplace("swapdims_")),
]
