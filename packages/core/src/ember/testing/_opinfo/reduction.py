"""OpInfos for reductions: sum, mean, prod, extrema, var/std, norms, cumulative ops."""

from __future__ import annotations

import functools
import warnings

import numpy as np

import ember
from ember.testing._opinfo.core import ALL_REAL, FLOATING, OpInfo, SampleInput, arr

_INTS = (np.int32, np.int64)

# (shape, dim, keepdim): int, negative, tuple and None dims, 0-d and empty inputs
_DIM_CASES = [
    ((3, 4), None, False), ((3, 4), 0, False), ((3, 4), -1, True), ((2, 3, 4), (0, 2), False),
    ((2, 3, 4), (-1, 1), True), ((2, 3, 4), None, True), ((), None, False), ((), 0, True),
    ((5,), 0, False), ((0, 3), 0, False), ((0, 3), 1, True),
]
# the same, for ops with a single int dim
_ONE_DIM_CASES = [
    ((3, 4), 0, False), ((3, 4), -1, True), ((2, 3, 4), 1, False), ((), 0, False),
    ((5,), -1, True), ((0, 3), 1, False),
]


def _axis(dim, ndim=1):
    if ndim == 0:
        return None
    return tuple(dim) if isinstance(dim, list) else dim


def _dim_samples(cases=_DIM_CASES, low=-3, high=3, nonempty=False, **kwargs):
    def samples(dtype, rng):
        for shape, dim, keepdim in cases:
            if nonempty and 0 in shape:
                continue
            yield SampleInput(arr(rng, shape, dtype, low, high), (dim, keepdim), dict(kwargs))
    return samples


def quiet(fn):
    """A NumPy reference without RuntimeWarnings (empty slices, log(0), all-NaN slices)."""
    @functools.wraps(fn)
    def ref(*args, **kwargs):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn(*args, **kwargs)
    return ref


def _np_reduce(fn):
    @quiet
    def ref(x, dim=None, keepdim=False, **kwargs):
        return np.asarray(fn(x, axis=_axis(dim, x.ndim), keepdims=keepdim, **kwargs))
    return ref


def _t(name):
    return lambda torch: getattr(torch, name)


def _with_nans(dtype, rng, shape):
    a = arr(rng, shape, dtype)
    a.reshape(-1)[::3] = np.nan
    return a


def _nan_samples(dtype, rng):
    for shape, dim, keepdim in [((3, 4), None, False), ((3, 4), 0, True), ((2, 3, 4), (0, 2),
                                                                        False), ((4,), 0, False)]:
        yield SampleInput(_with_nans(dtype, rng, shape), (dim, keepdim))


def _prod_samples(dtype, rng):
    for shape, dim, keepdim in [((3, 4), None, False), ((3, 4), 0, False), ((3, 4), -1, True),
                                ((), None, False), ((0, 3), 1, False)]:
        args = () if dim is None else (dim, keepdim)
        yield SampleInput(arr(rng, shape, dtype, 0.5, 2), args)
    if np.dtype(dtype).kind == "f":
        one_zero = arr(rng, (3, 4), dtype, 0.5, 2)
        one_zero[1, 2] = 0
        two_zeros = one_zero.copy()
        two_zeros[1, 0] = 0
        yield SampleInput(one_zero, (), name="one zero")
        yield SampleInput(one_zero, (1,), name="one zero in a row")
        yield SampleInput(two_zeros, (1, True), name="two zeros in a row")
        yield SampleInput(two_zeros, (0,), name="zeros in different columns")


def _prod_ref(x, dim=None, keepdim=False):
    return np.asarray(np.prod(x, axis=dim, keepdims=keepdim))


def _distinct(rng, shape, dtype):
    """Distinct values (no ties), so that extrema and sorts are differentiable."""
    n = int(np.prod(shape)) if shape else 1
    scale = 0.5 if np.dtype(dtype).kind == "f" else 1
    return np.asarray((rng.permutation(n).reshape(shape) - n // 2) * scale).astype(dtype)


def _extremum_samples(dtype, rng):
    for shape, dim, keepdim in _ONE_DIM_CASES:
        if 0 in shape:
            continue
        yield SampleInput(_distinct(rng, shape, dtype), (dim, keepdim))
    if np.dtype(dtype).kind == "f":
        yield SampleInput(np.array([[1.0, np.nan, 3.0], [2.0, 0.0, 1.0]], dtype), (1,),
                          grad=False, name="nan")
    yield SampleInput(np.array([[1, 3, 3], [2, 2, 0]], dtype), (1, True), grad=False,
                      name="ties: first index")
    yield SampleInput(np.zeros((0, 3), dtype), (1,), name="empty, nonempty dim")


def _extremum_dim_ref(fn, argfn):
    def ref(x, dim, keepdim=False):
        x1 = x.reshape(1) if x.ndim == 0 else x
        idx = argfn(x1, axis=dim, keepdims=True)
        values = np.take_along_axis(x1, idx, axis=dim)
        shape = list(x.shape)
        if x.ndim and not keepdim:
            shape.pop(dim)
        elif x.ndim:
            shape[dim] = 1
        return values.reshape(shape), idx.reshape(shape).astype(np.int64)
    return ref


def _full_extremum_samples(dtype, rng):
    for shape in [(3, 4), (), (2, 3, 2)]:
        yield SampleInput(_distinct(rng, shape, dtype))
    yield SampleInput(np.array([1, 3, 3, 2], dtype), name="ties share the gradient")


def _amax_samples(dtype, rng):
    for shape, dim, keepdim in _DIM_CASES:
        if 0 in shape:
            continue
        yield SampleInput(_distinct(rng, shape, dtype), (dim, keepdim))
    yield SampleInput(np.array([[1, 3, 3], [2, 2, 0]], dtype), (1,),
                      name="ties share the gradient")
    yield SampleInput(np.zeros((0, 3), dtype), (1,), name="empty, nonempty dim")


def _arg_samples(dtype, rng):
    yield SampleInput(_distinct(rng, (3, 4), dtype))
    yield SampleInput(_distinct(rng, (3, 4), dtype), (None, True))
    yield SampleInput(_distinct(rng, (3, 4), dtype), (1,))
    yield SampleInput(_distinct(rng, (2, 3, 4), dtype), (-2, True))
    yield SampleInput(np.array([[1, 3, 3], [2, 2, 0]], dtype), (1,), name="ties")
    yield SampleInput(np.array(2, dtype), (0,))


def _arg_ref(fn):
    def ref(x, dim=None, keepdim=False):
        if dim is None:
            r = fn(x.reshape(-1))
            return np.asarray(r).reshape((1,) * x.ndim if keepdim else ())
        if x.ndim == 0:
            return np.asarray(0)
        return fn(x, axis=dim, keepdims=keepdim)
    return ref


def _aminmax_samples(dtype, rng):
    yield SampleInput(_distinct(rng, (3, 4), dtype))
    yield SampleInput(_distinct(rng, (3, 4), dtype), kwargs={"dim": 1})
    yield SampleInput(_distinct(rng, (2, 3, 4), dtype), kwargs={"dim": -3, "keepdim": True})
    yield SampleInput(np.array([[1, 3, 3], [2, 2, 0]], dtype), kwargs={"dim": 1},
                      name="ties share the gradient")


def _aminmax_ref(x, dim=None, keepdim=False):
    return np.min(x, axis=dim, keepdims=keepdim), np.max(x, axis=dim, keepdims=keepdim)


def _var_samples(dtype, rng):
    for shape, dim, keepdim in _DIM_CASES:
        if 0 in shape or shape == ():
            continue
        yield SampleInput(arr(rng, shape, dtype), (dim,), {"keepdim": keepdim})
    yield SampleInput(arr(rng, (3, 4), dtype), (1,), {"correction": 0})
    yield SampleInput(arr(rng, (3, 4), dtype), (None,), {"correction": 2, "keepdim": True})
    yield SampleInput(arr(rng, (3, 4), dtype), (0,), {"unbiased": False})
    yield SampleInput(arr(rng, (3, 4), dtype), (0, False, True), name="legacy positional")
    yield SampleInput(arr(rng, (3, 4), dtype), (False,), name="var(input, unbiased)")


def _var_ref(fn):
    def ref(x, dim=None, unbiased=None, keepdim=False, correction=None):
        if isinstance(dim, bool):
            dim, unbiased = None, dim
        if correction is None:
            correction = 0 if unbiased is False else 1
        return np.asarray(fn(x, axis=_axis(dim), ddof=correction, keepdims=keepdim))
    return ref


def _std_zero_samples(dtype, rng):
    yield SampleInput(np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]], dtype), (1,),
                      name="zero std: zero gradient")


def _var_mean_ref(fn):
    def ref(x, dim=None, unbiased=None, keepdim=False, correction=None):
        d = None if isinstance(dim, bool) else _axis(dim)
        return _var_ref(fn)(x, dim, unbiased, keepdim, correction), \
            np.asarray(np.mean(x, axis=d, keepdims=keepdim))
    return ref


def _logsumexp_samples(dtype, rng):
    for shape, dim, keepdim in _DIM_CASES:
        if dim is None:
            continue
        yield SampleInput(arr(rng, shape, dtype), (dim, keepdim))
    if np.dtype(dtype).kind == "f":
        yield SampleInput(np.array([[1000.0, 1000.5], [-1000.0, -999.0]], dtype), (1,),
                          name="large values: stable")
        yield SampleInput(np.array([[-np.inf, -np.inf], [0.0, -np.inf]], dtype), (1,),
                          grad=False, name="all -inf")


@quiet
def _logsumexp_ref(x, dim, keepdim=False):
    x = x.astype(np.float64)
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=_axis(dim), keepdims=keepdim))
    m = np.max(x, axis=_axis(dim), keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(x - m), axis=_axis(dim), keepdims=True)) + m
    return r if keepdim else np.squeeze(r, axis=_axis(dim))


def _away_from_zero(rng, shape, dtype):
    """Values of distinct magnitudes, none near zero: where every norm is smooth."""
    n = int(np.prod(shape))
    signs = rng.choice([-1.0, 1.0], size=n)
    return ((rng.permutation(n) + 1) * 0.25 * signs).reshape(shape).astype(dtype)


def _norm_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype))
    yield SampleInput(arr(rng, (3, 4), dtype), ("fro",))
    yield SampleInput(arr(rng, (3, 4), dtype), ("fro", (0, 1), True))
    for p in (2, 1, 3, 1.5, 0.5, -1, float("inf"), -float("inf")):
        yield SampleInput(_away_from_zero(rng, (3, 4), dtype), (p, 1), name=f"p={p}")
        yield SampleInput(_away_from_zero(rng, (2, 3, 2), dtype), (p, (0, 2), True),
                          name=f"p={p}")
    yield SampleInput(np.zeros((0, 3), dtype), (2, 0), name="empty")


def _norm_nonsmooth_samples(dtype, rng):
    for p in (1, 1.5, 0.5, float("inf"), -float("inf")):
        yield SampleInput(_distinct(rng, (3, 4), dtype), (p, 1), name=f"p={p} with a zero")
    yield SampleInput(np.array([[1.0, -3.0, 3.0], [2.0, 0.0, 1.0]], dtype), (float("inf"), 1),
                      name="inf: ties share the gradient")
    yield SampleInput(arr(rng, (3, 4), dtype), (0, 1), name="p=0")
    yield SampleInput(np.zeros((2, 3), dtype), (2, 1), name="zero input: zero gradient")
    yield SampleInput(np.array([[0.0, 0.0], [1.0, -2.0]], dtype), (3, 1), name="p=3 at zero")


def _norm_ref(x, p="fro", dim=None, keepdim=False):
    p = 2 if p == "fro" else p
    ax = (dim,) if isinstance(dim, int) else _axis(dim)
    a = np.abs(x).astype(np.float64)
    if p == np.inf:
        r = np.max(a, axis=ax, keepdims=keepdim)
    elif p == -np.inf:
        r = np.min(a, axis=ax, keepdims=keepdim)
    elif p == 0:
        r = np.sum(a != 0, axis=ax, keepdims=keepdim)
    else:
        r = np.sum(a ** p, axis=ax, keepdims=keepdim) ** (1.0 / p)
    return np.asarray(r)


def _some_zeros(rng, shape, dtype):
    return rng.integers(-1, 2, size=shape).astype(dtype)


def _logical_samples(dtype, rng):
    for shape, dim, keepdim in _DIM_CASES:
        yield SampleInput(_some_zeros(rng, shape, dtype), (dim, keepdim))
    yield SampleInput(np.ones((2, 3), dtype), (1,))
    yield SampleInput(np.ones((2, 3), dtype), ((),), name="dim=() reduces nothing")


def _logical_ref(fn):
    def ref(x, dim=None, keepdim=False):
        if dim == ():
            return x != 0
        return np.asarray(fn(x, axis=_axis(dim, x.ndim), keepdims=keepdim))
    return ref


def _count_nonzero_samples(dtype, rng):
    for shape, dim, _ in _DIM_CASES:
        yield SampleInput(_some_zeros(rng, shape, dtype), (dim,))


def _count_nonzero_ref(x, dim=None):
    return np.asarray(np.count_nonzero(x, axis=_axis(dim, x.ndim)))


def _cum_samples(low=-3, high=3, zeros=False, empty=True):
    def samples(dtype, rng):
        for shape, dim, _ in _ONE_DIM_CASES:
            if 0 in shape and not empty:
                continue
            yield SampleInput(arr(rng, shape, dtype, low, high), (dim,))
        if zeros and np.dtype(dtype).kind == "f":
            a = arr(rng, (3, 5), dtype, low, high)
            a[0, 1] = a[1, 3] = a[2, 0] = 0
            a[2, 3] = 0
            yield SampleInput(a, (1,), name="zeros: first, later, two in a row")
            yield SampleInput(a, (0,), name="zeros along dim 0")
    return samples


def _cum_ref(fn):
    def ref(x, dim, dtype=None):
        if x.ndim == 0:
            return x.copy()
        return fn(x, axis=dim)
    return ref


def _cum_extremum_samples(dtype, rng):
    for shape, dim, _ in _ONE_DIM_CASES:
        yield SampleInput(_distinct(rng, shape, dtype) if 0 not in shape else
                          np.zeros(shape, dtype), (dim,))
    yield SampleInput(np.array([[1, 3, 3, 2, 3], [2, 2, 0, 5, 5]], dtype), (1,), grad=False,
                      name="ties: latest index")
    if np.dtype(dtype).kind == "f":
        yield SampleInput(np.array([1, np.nan, 3, np.nan, 5], dtype), (0,), grad=False,
                          name="nan propagates")


def _cum_extremum_ref(ufunc):
    def ref(x, dim):
        x1 = x.reshape(1) if x.ndim == 0 else x
        values = ufunc.accumulate(x1, axis=dim) if x1.size else x1.copy()
        hit = (x1 == values) | (np.isnan(x1) if x1.dtype.kind == "f" else False)
        shape = [1] * x1.ndim
        shape[dim] = x1.shape[dim]
        pos = np.arange(x1.shape[dim]).reshape(shape)
        idx = np.maximum.accumulate(np.where(hit, pos, 0), axis=dim) if x1.size else \
            np.zeros(x1.shape, np.int64)
        return values.reshape(x.shape), idx.reshape(x.shape)
    return ref


def _logcumsumexp_ref(x, dim):
    if x.ndim == 0:
        return x.copy()
    return np.logaddexp.accumulate(x.astype(np.float64), axis=dim)


OPS = [
    OpInfo("sum", ember.sum, _dim_samples(), ref=_np_reduce(np.sum), dtypes=ALL_REAL,
           torch_op=_t("sum"), method="sum", gradgrad=True),
    OpInfo("sum_dtype", lambda x, d=None: ember.sum(x, d, dtype=ember.float64),
           lambda dt, rng: (SampleInput(arr(rng, (3, 4), dt)), SampleInput(arr(rng, (3, 4), dt),
                                                                              (1,))),
           ref=lambda x, d=None: np.sum(x, axis=d, dtype=np.float64), dtypes=(np.float32,
                                                                              np.int32),
           torch_op=lambda torch: lambda x, d=None: torch.sum(x, d, dtype=torch.float64)),
    OpInfo("mean", ember.mean, _dim_samples(), ref=_np_reduce(np.mean), torch_op=_t("mean"),
           method="mean", gradgrad=True),
    OpInfo("nansum", ember.nansum, _nan_samples, ref=_np_reduce(np.nansum),
           torch_op=_t("nansum"), method="nansum"),
    OpInfo("nanmean", ember.nanmean, _nan_samples, ref=_np_reduce(np.nanmean),
           torch_op=_t("nanmean"), method="nanmean"),
    OpInfo("prod", ember.prod, _prod_samples, ref=_prod_ref, dtypes=FLOATING + _INTS,
           torch_op=_t("prod"), method="prod", gradgrad=True),
    OpInfo("max", ember.max, _full_extremum_samples, ref=lambda x: np.asarray(np.max(x)),
           dtypes=FLOATING + _INTS, torch_op=_t("max"), method="max"),
    OpInfo("min", ember.min, _full_extremum_samples, ref=lambda x: np.asarray(np.min(x)),
           dtypes=FLOATING + _INTS, torch_op=_t("min"), method="min"),
    OpInfo("max_dim", ember.max, _extremum_samples, ref=_extremum_dim_ref(np.max, np.argmax),
           dtypes=FLOATING + _INTS + (np.bool_,), torch_op=_t("max"), method="max",
           gradgrad=True),
    OpInfo("min_dim", ember.min, _extremum_samples, ref=_extremum_dim_ref(np.min, np.argmin),
           dtypes=FLOATING + _INTS, torch_op=_t("min"), method="min"),
    OpInfo("amax", ember.amax, _amax_samples, ref=_np_reduce(np.max), dtypes=FLOATING + _INTS,
           torch_op=_t("amax"), method="amax"),
    OpInfo("amin", ember.amin, _amax_samples, ref=_np_reduce(np.min), dtypes=FLOATING + _INTS,
           torch_op=_t("amin"), method="amin"),
    OpInfo("argmax", ember.argmax, _arg_samples, ref=_arg_ref(np.argmax),
           dtypes=FLOATING + _INTS, differentiable=False, torch_op=_t("argmax"),
           method="argmax"),
    OpInfo("argmin", ember.argmin, _arg_samples, ref=_arg_ref(np.argmin),
           dtypes=FLOATING + _INTS, differentiable=False, torch_op=_t("argmin"),
           method="argmin"),
    OpInfo("aminmax", ember.aminmax, _aminmax_samples, ref=_aminmax_ref,
           dtypes=FLOATING + _INTS, torch_op=_t("aminmax"), method="aminmax"),
    OpInfo("var", ember.var, _var_samples, ref=_var_ref(np.var), torch_op=_t("var"),
           method="var", gradgrad=True),
    OpInfo("std", ember.std, _var_samples, ref=_var_ref(np.std), torch_op=_t("std"),
           method="std", gradgrad=True),
    OpInfo("std_zero", ember.std, _std_zero_samples, ref=_var_ref(np.std), torch_op=_t("std")),
    OpInfo("var_mean", ember.var_mean, _var_samples, ref=_var_mean_ref(np.var),
           torch_op=_t("var_mean")),
    OpInfo("std_mean", ember.std_mean, _var_samples, ref=_var_mean_ref(np.std),
           torch_op=_t("std_mean")),
    OpInfo("logsumexp", ember.logsumexp, _logsumexp_samples, ref=_logsumexp_ref,
           torch_op=_t("logsumexp"), method="logsumexp", gradgrad=True),
    OpInfo("logsumexp_int", ember.logsumexp,
           lambda dt, rng: (SampleInput(arr(rng, (3, 4), dt), (1,)),),
           ref=_logsumexp_ref, dtypes=_INTS, differentiable=False, torch_op=_t("logsumexp")),
    OpInfo("norm", ember.norm, _norm_samples, ref=_norm_ref, torch_op=_t("norm"),
           method="norm", gradgrad=True),
    OpInfo("norm_nonsmooth", ember.norm, _norm_nonsmooth_samples, ref=_norm_ref,
           torch_op=_t("norm")),
    OpInfo("all", ember.all, _logical_samples, ref=_logical_ref(np.all), dtypes=ALL_REAL,
           differentiable=False, torch_op=_t("all"), method="all"),
    OpInfo("any", ember.any, _logical_samples, ref=_logical_ref(np.any), dtypes=ALL_REAL,
           differentiable=False, torch_op=_t("any"), method="any"),
    OpInfo("count_nonzero", ember.count_nonzero, _count_nonzero_samples,
           ref=_count_nonzero_ref, dtypes=ALL_REAL, differentiable=False,
           torch_op=_t("count_nonzero"), method="count_nonzero"),
    OpInfo("cumsum", ember.cumsum, _cum_samples(), ref=_cum_ref(np.cumsum),
           dtypes=ALL_REAL, torch_op=_t("cumsum"), method="cumsum", gradgrad=True),
    OpInfo("cumprod", ember.cumprod, _cum_samples(0.5, 2, zeros=True),
           ref=_cum_ref(np.cumprod), dtypes=FLOATING + _INTS, torch_op=_t("cumprod"),
           method="cumprod", gradgrad=True),
    OpInfo("cummax", ember.cummax, _cum_extremum_samples,
           ref=_cum_extremum_ref(np.maximum), dtypes=FLOATING + _INTS, torch_op=_t("cummax"),
           method="cummax", gradgrad=True),
    OpInfo("cummin", ember.cummin, _cum_extremum_samples,
           ref=_cum_extremum_ref(np.minimum), dtypes=FLOATING + _INTS, torch_op=_t("cummin"),
           method="cummin"),
    OpInfo("logcumsumexp", ember.logcumsumexp, _cum_samples(empty=True),
           ref=_logcumsumexp_ref, torch_op=_t("logcumsumexp"), method="logcumsumexp",
           gradgrad=True),
]
