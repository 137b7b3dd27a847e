"""Reductions: sums, means, products, extrema, norms and statistics.

A reduction runs over one dim, several dims or all of them (``dim=None``); with
``keepdim=True`` the reduced dims stay as size 1.

NOTE [ Value-selecting ops ]
max/min with a dim (and cummax/cummin in cumulative.py; sort, topk, kthvalue, median,
mode in sort.py) pick elements of their input. They compute the indices on arrays and take the
values with :class:`TakeAlongDim`, whose backward puts the gradient back at those
indices (:class:`PutAlongDim`, adding where an index repeats). One pair of nodes
serves them all, and each is the other's backward, so higher-order gradients work.
Reductions whose value has no index (``max()``, ``amax``, ``median()``) share the
gradient evenly among the tied elements, as PyTorch does.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ember import _dtype
from ember._backend import bulk_kernel
from ember._C._core import Node
from ember._ops._util import (
    TensorBase,
    apply,
    ensure_float,
    not_implemented,
    type_name,
    with_out,
    wrap,
    wrap_dim,
    wrap_dims,
    xp_of,
)
from ember._ops._util import conj as _conj
from ember._ops.shape import Flip

__all__ = [
    "sum", "mean", "nansum", "nanmean", "prod", "max", "min", "amax", "amin", "argmax",
    "argmin", "aminmax", "var", "std", "var_mean", "std_mean", "logsumexp", "norm", "all",
    "any", "count_nonzero", "sum_to", "return_types",
]

_max = builtins.max  # the module defines its own max, min, sum, all, any


# ---------------------------------------------------------------------------
# named results, as torch.return_types

class _ReturnTypes:
    """The named tuple types of ops with several results (``ember.return_types.max``)."""


return_types = _ReturnTypes()


class _ReturnType(tuple):
    """A tuple with named fields, built like ``torch.return_types.*`` from one sequence:
    ``values, indices = x.max(0)`` and ``x.max(0).values`` both work."""

    __slots__ = ()
    _fields: tuple = ()

    def __new__(cls, seq):
        seq = tuple(seq)
        if len(seq) != len(cls._fields):
            raise TypeError(f"{cls.__qualname__} takes a sequence of length "
                            f"{len(cls._fields)} ({len(seq)} given)")
        return tuple.__new__(cls, seq)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self, strict=True))
        return f"ember.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return type(self), (tuple(self),)


def return_type(name, fields=("values", "indices")):
    """The named tuple type ``ember.return_types.<name>`` with ``fields``."""
    cls = getattr(return_types, name, None)
    if cls is None:
        ns = {"__slots__": (), "_fields": tuple(fields), "__module__": __name__}
        for i, f in enumerate(fields):
            ns[f] = property(operator.itemgetter(i))
        cls = type(name, (_ReturnType,), ns)
        cls.__qualname__ = f"return_types.{name}"
        setattr(return_types, name, cls)
    return cls


_MaxResult = return_type("max")
_MinResult = return_type("min")
_AminmaxResult = return_type("aminmax", ("min", "max"))


# ---------------------------------------------------------------------------
# helpers

def expand_reduced(g, shape, dims, keepdim):
    """The gradient ``g`` of a reduction over ``dims`` broadcast back to ``shape``."""
    return keep_reduced(g, shape, dims, keepdim).expand(shape)


def keep_reduced(g, shape, dims, keepdim):
    """``g`` (a reduction's result over ``dims``) reshaped with the reduced dims as 1."""
    if keepdim or not len(shape):
        return g
    kept = list(shape)
    for d in (dims if dims is not None else range(len(shape))):
        kept[d] = 1
    return g.reshape(kept)


def _keep_array(a, ndim, dims, keepdim):
    """Array counterpart of :func:`keep_reduced`."""
    if keepdim or not ndim:
        return a
    return a.reshape(_kept_shape(a.shape, ndim, dims))


def _kept_shape(out_shape, ndim, dims):
    dims = range(ndim) if dims is None else dims
    it = iter(out_shape)
    return tuple(1 if d in dims else next(it) for d in range(ndim))


def reduced_shape(shape, dims, keepdim):
    dims = range(len(shape)) if dims is None else dims
    if keepdim:
        return tuple(1 if d in dims else s for d, s in enumerate(shape))
    return tuple(s for d, s in enumerate(shape) if d not in dims)


def _count(shape, dims):
    n = 1
    for d in (range(len(shape)) if dims is None else dims):
        n *= shape[d]
    return n


def _dims_arg(input, dim):
    """``dim`` (None, an int, or a sequence; an empty one means all) as sorted dims."""
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        return None
    dims = wrap_dims(dim, input._data.ndim)
    return None if input._data.ndim == 0 else dims


def int_dim(dim, fn):
    if isinstance(dim, (list, tuple)) or isinstance(dim, bool) or \
            not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'dim' must be int, not {type(dim).__name__}")
    return int(dim)


def _cast(input, dtype):
    """``input`` cast to ``dtype`` (a recorded cast) for ops with a ``dtype`` argument."""
    if dtype is None:
        return input
    return input.to(_dtype.as_dtype(dtype))


def _np_dtype(dtype):
    return None if dtype is None else _dtype.to_numpy(dtype)


def _acc_dtype(x, dtype=None):
    """The dtype a sum-like op accumulates in: int64 for integers and bools."""
    if dtype is not None:
        return dtype
    return np.dtype(np.int64) if x.dtype.kind in "biu" else None


def _const(array):
    """A constant tensor (no history) for masks and weights in backward formulas."""
    return wrap(array)


def check_nonempty_dims(x, dims, fn, dim_given=True, sep="(): "):
    """PyTorch's IndexError for a reduction without identity over an empty dim."""
    if x.size:
        return
    if not dim_given or x.ndim == 0:
        raise RuntimeError(
            f"{fn}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument.")
    for d in (range(x.ndim) if dims is None else dims):
        if x.shape[d] == 0:
            raise IndexError(f"{fn}{sep}Expected reduction dim {d} to have non-zero size.")


def accumulate(xp, ufunc_name, a, axis):
    """``xp.<ufunc_name>.accumulate(a, axis)``, or, where the array library lacks it
    (CuPy accumulates only add and multiply), the same scan in log2(n) vectorized
    steps: each step combines every element with the one ``shift`` places before.
    Only for associative and commutative ufuncs (maximum, minimum, logaddexp)."""
    ufunc = getattr(xp, ufunc_name)
    try:
        return ufunc.accumulate(a, axis=axis)
    except NotImplementedError:
        return scan(ufunc, a, axis)


def scan(ufunc, a, axis):
    """Inclusive scan of ``a`` along ``axis`` with the binary ``ufunc`` (Hillis-Steele)."""
    out = a.copy()
    n = out.shape[axis]
    lead = (slice(None),) * axis
    shift = 1
    while shift < n:
        # the right-hand side is computed from the previous step before it is written
        out[lead + (slice(shift, None),)] = ufunc(out[lead + (slice(shift, None),)],
                                                  out[lead + (slice(None, n - shift),)])
        shift *= 2
    return out


class MaskedFill(Node):
    """``x`` with ``value`` where the constant array ``mask`` is true."""

    def forward(self, x, mask, value):
        self.mask = mask
        return xp_of(x).where(mask, x.dtype.type(value), x)

    def backward(self, g):
        return apply(MaskedFill, g, self.mask, 0)


def masked_fill_const(t, mask, value=0):
    return apply(MaskedFill, t, mask, value)


# ---------------------------------------------------------------------------
# gathering along a dim and its adjoint (see NOTE [ Value-selecting ops ])

def _index_tuple(xp, index, dim):
    """The fancy-index tuple that addresses ``index`` (positions along ``dim``)."""
    idx = []
    for d, n in enumerate(index.shape):
        if d == dim:
            idx.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            idx.append(xp.arange(n).reshape(shape))
    return tuple(idx)


class TakeAlongDim(Node):
    """``x``'s values at ``index`` along ``dim``, reshaped to ``shape``.

    ``index`` is a constant int64 array with x's number of dims; ``unique`` says
    that no position repeats along ``dim`` (so backward may put instead of add);
    ``values``, if given, are those values, already computed.
    """

    def forward(self, x, index, dim, shape, unique=True, values=None):
        self.in_shape, self.index, self.dim, self.unique = x.shape, index, dim, unique
        if values is not None:  # the caller has them already (cummax)
            return values.reshape(shape)
        if x.ndim == 0:
            x = x.reshape(1)
        return xp_of(x).take_along_axis(x, index, axis=dim).reshape(shape)

    def backward(self, g):
        return apply(PutAlongDim, g, self.index, self.dim, self.in_shape, self.unique)


class PutAlongDim(Node):
    """Zeros of ``shape`` with ``g`` put (added, unless ``unique``) at ``index`` along
    ``dim``: the adjoint of :class:`TakeAlongDim`."""

    def forward(self, g, index, dim, shape, unique=True):
        self.g_shape, self.index, self.dim = g.shape, index, dim
        xp = xp_of(g)
        out = xp.zeros(shape if len(shape) else (1,), dtype=g.dtype)
        g = g.reshape(index.shape)
        if unique:
            out[_index_tuple(xp, index, dim)] = g
        else:
            xp.add.at(out, _index_tuple(xp, index, dim), g)
        return out.reshape(shape)

    def backward(self, gg):
        return apply(TakeAlongDim, gg, self.index, self.dim, self.g_shape)


def take_along_dim(input, index, dim, shape, unique=True, values=None):
    """``input``'s values at the index array ``index`` along ``dim``, differentiably."""
    return apply(TakeAlongDim, input, index, dim, tuple(shape), unique, values)


# ---------------------------------------------------------------------------
# sum, mean, nansum, nanmean, prod

def _sum_array(x, dims, keepdim, dtype=None):
    """``x.sum(axis=dims, keepdims=keepdim, dtype=dtype)``, through the device's bulk
    kernel for a large ``x`` (on the CPU: on several threads)."""
    kernel = bulk_kernel("reduce", x)
    if kernel is None:
        return x.sum(axis=dims, keepdims=keepdim, dtype=dtype)
    return kernel(np.add, x, dims, keepdim, dtype)


class Sum(Node):
    def forward(self, x, dims, keepdim, dtype):
        self.shape, self.dims, self.keepdim = x.shape, dims, keepdim
        out_dtype = _acc_dtype(x, dtype)
        if x.dtype == np.float16 and out_dtype is None:
            return _sum_array(x, dims, keepdim, np.float32).astype(np.float16)
        return _sum_array(x, dims, keepdim, out_dtype)

    def backward(self, g):
        return expand_reduced(g, self.shape, self.dims, self.keepdim)


class Mean(Node):
    def forward(self, x, dims, keepdim, dtype):
        self.shape, self.dims, self.keepdim = x.shape, dims, keepdim
        if dtype is not None:
            x = x.astype(_dtype.to_numpy(dtype))
        if x.dtype.kind in "biu":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {type_name(x.dtype)}")
        self.count = _count(x.shape, dims)
        with np.errstate(invalid="ignore", divide="ignore"):
            if x.dtype == np.float16:
                return x.mean(axis=dims, keepdims=keepdim, dtype=np.float32).astype(np.float16)
            if x.size == 0:
                return x.sum(axis=dims, keepdims=keepdim) / x.dtype.type(0)
            if bulk_kernel("reduce", x) is not None:
                return _mean_of_sum(_sum_array(x, dims, keepdim), self.count)
            return x.mean(axis=dims, keepdims=keepdim)

    def backward(self, g):
        scale = 1.0 / self.count if self.count else math.nan
        return expand_reduced(g, self.shape, self.dims, self.keepdim) * scale


def _mean_of_sum(total, count):
    """The mean from the sum, divided as NumPy's ``mean`` divides (by an intp count, cast
    back to the sum's dtype), so that it is NumPy's mean bit for bit."""
    count = np.intp(count)
    if hasattr(total, "shape") and total.shape:
        return xp_of(total).true_divide(total, count, out=total, casting="unsafe")
    return total.dtype.type(total / count)


class NanSum(Node):
    saves_inputs = (0,)

    def forward(self, x, dims, keepdim, dtype):
        self.shape, self.dims, self.keepdim = x.shape, dims, keepdim
        xp = xp_of(x)
        out_dtype = _acc_dtype(x, dtype)
        if x.dtype == np.float16:
            return xp.nansum(x, axis=dims, keepdims=keepdim, dtype=np.float32).astype(x.dtype)
        return xp.nansum(x, axis=dims, keepdims=keepdim, dtype=out_dtype)

    def backward(self, g):
        x, = self.saved_tensors
        mask = ~xp_of(x._data).isnan(x._data)
        return expand_reduced(g, self.shape, self.dims, self.keepdim) * _const(mask)


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A001
    """sum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The sum of ``input`` over ``dim`` (an int, a tuple of ints, or None for all dims).
    Integer and bool inputs sum to int64, as in PyTorch.
    """
    return with_out(apply(Sum, _cast(input, dtype), _dims_arg(input, dim), keepdim,
                      _np_dtype(dtype)), out)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """mean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The mean of ``input`` over ``dim``; floating and complex inputs only.
    """
    return with_out(apply(Mean, _cast(input, dtype), _dims_arg(input, dim), keepdim, None), out)


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The sum of ``input`` over ``dim``, treating NaN as zero."""
    if input._data.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    return with_out(apply(NanSum, _cast(input, dtype), _dims_arg(input, dim), keepdim,
                      _np_dtype(dtype)), out)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The mean of the non-NaN elements of ``input`` over ``dim``."""
    input = _cast(input, dtype)
    x = input._data
    if x.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if x.dtype.kind not in "fc":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {type_name(x.dtype)}")
    dims = _dims_arg(input, dim)
    xp = xp_of(x)
    count = (~xp.isnan(x)).sum(axis=dims, keepdims=keepdim).astype(x.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):  # all NaN: 0 / 0 is NaN
        return with_out(nansum(input, dims, keepdim) / _const(count), out)


class Prod(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, x, dims, keepdim, dtype):
        self.shape, self.dims, self.keepdim = x.shape, dims, keepdim
        out_dtype = _acc_dtype(x, dtype)
        if x.dtype == np.float16:
            return x.prod(axis=dims, keepdims=keepdim, dtype=np.float32).astype(np.float16)
        return x.prod(axis=dims, keepdims=keepdim, dtype=out_dtype)

    def backward(self, g):
        x, out = self.saved_tensors
        return prod_backward(g, x, out, self.dims, self.keepdim)


def prod_backward(g, x, out, dims, keepdim):
    """d prod / d x: ``out / x`` without zeros, else the product of the other elements,
    made of cumulative products from both ends (so it is differentiable again)."""
    shape = x._data.shape
    g = keep_reduced(g, shape, dims, keepdim)
    if not (x._data == 0).any():
        return g * _conj(keep_reduced(out, shape, dims, keepdim) / x)
    from ember._ops.cumulative import CumProd

    flat = x.reshape(-1) if dims is None else x
    d = 0 if dims is None else dims[0]
    before = apply(CumProd, apply(Shift, flat, d, 1, 1), d)
    after = apply(Flip, apply(CumProd, apply(Shift, apply(Flip, flat, (d,)), d, 1, 1), d), (d,))
    return g * _conj((before * after).reshape(shape))


class Shift(Node):
    """``x`` moved ``step`` (1 or -1) places along ``dim``; the vacated place is ``fill``."""

    def forward(self, x, dim, step, fill):
        self.dim, self.step = dim, step
        out = xp_of(x).empty_like(x)
        lead = (slice(None),) * dim
        src, dst, edge = (slice(None, -1), slice(1, None), slice(None, 1)) if step > 0 else \
            (slice(1, None), slice(None, -1), slice(-1, None))
        out[lead + (dst,)] = x[lead + (src,)]
        out[lead + (edge,)] = fill
        return out

    def backward(self, g):
        return apply(Shift, g, self.dim, -self.step, 0)


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """prod(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The product of ``input``'s elements (over the single dim ``dim`` if given).
    """
    dims = None if dim is None else (wrap_dim(int_dim(dim, "prod"), input._data.ndim),)
    return with_out(apply(Prod, _cast(input, dtype), dims, keepdim, _np_dtype(dtype)), out)


# ---------------------------------------------------------------------------
# extrema

def _nan_aware_eq(xp, x, value):
    eq = x == value
    if x.dtype.kind in "fc":
        eq |= xp.isnan(x) & xp.isnan(value)
    return eq


class Extremum(Node):
    """A reduction whose value is one of its input's values but whose position is not
    returned (``max()``, ``amax``, ``median()``): the gradient is shared evenly by all
    elements equal to the result."""

    saves_inputs = (0,)
    saves_output = True

    def forward(self, x, dims, keepdim, fn):
        self.shape, self.dims, self.keepdim = x.shape, dims, keepdim
        return fn(xp_of(x), x, dims, keepdim)

    def backward(self, g):
        x, out = self.saved_tensors
        xp = xp_of(x._data)
        value = _keep_array(out._data, x._data.ndim, self.dims, self.keepdim)
        mask = _nan_aware_eq(xp, x._data, value)
        weights = mask / mask.sum(axis=self.dims, keepdims=True)
        return keep_reduced(g, self.shape, self.dims, self.keepdim) * \
            _const(weights.astype(x._data.dtype))


def _amax_fn(xp, x, dims, keepdim):
    kernel = bulk_kernel("reduce", x)
    if kernel is not None:
        return kernel(np.maximum, x, dims, keepdim)
    return xp.max(x, axis=dims, keepdims=keepdim)


def _amin_fn(xp, x, dims, keepdim):
    kernel = bulk_kernel("reduce", x)
    if kernel is not None:
        return kernel(np.minimum, x, dims, keepdim)
    return xp.min(x, axis=dims, keepdims=keepdim)


def not_implemented_for(x, kernel, kinds="c"):
    """PyTorch's NotImplementedError for a dtype its kernel ``kernel`` lacks."""
    if x.dtype.kind in kinds:
        raise not_implemented(kernel, x.dtype)


def _no_complex(x, fn):
    if x.dtype.kind == "c":
        raise RuntimeError(f"{fn}(): does not support complex input")


def _extremum_dim(input, dim, keepdim, fn, arg_fn, result_cls):
    x = input._data
    d = wrap_dim(int_dim(dim, fn), x.ndim)
    _no_complex(x, fn)
    check_nonempty_dims(x, (d,) if x.ndim else None, fn)
    x1 = x.reshape(1) if x.ndim == 0 else x
    index = getattr(xp_of(x), arg_fn)(x1, axis=d, keepdims=True)
    shape = reduced_shape(x.shape, (d,) if x.ndim else None, keepdim)
    values = take_along_dim(input, index, d, shape)
    return result_cls((values, wrap(index.reshape(shape).astype(np.int64, copy=False))))


def _extremum(name, fn, arg_name, result_cls, binary_name):
    def op(input, dim=None, keepdim=False, *, other=None, out=None):
        if isinstance(dim, TensorBase) or other is not None:  # max(input, other)
            from ember._ops import elementwise

            return getattr(elementwise, binary_name)(input, dim if other is None else other,
                                                      out=out)
        if dim is None:
            x = input._data
            not_implemented_for(x, f"{name}_all")
            if x.size == 0:
                raise RuntimeError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                    "Specify the reduction dim with the 'dim' argument.")
            return with_out(apply(Extremum, input, None, False, fn), out)
        return _extremum_dim(input, dim, keepdim, name, arg_name, result_cls)

    op.__name__ = name
    op.__doc__ = f"""{name}(input) -> Tensor; {name}(input, dim, keepdim=False) -> (values, indices)

    The {'largest' if name == 'max' else 'smallest'} element of ``input``; with ``dim``, a
    ``(values, indices)`` named tuple along that dim (the first position among ties);
    ``{name}(input, other)`` is ``ember.{binary_name}``.
    """
    return op


max = _extremum("max", _amax_fn, "argmax", _MaxResult, "maximum")  # noqa: A001
min = _extremum("min", _amin_fn, "argmin", _MinResult, "minimum")  # noqa: A001


def _amax_like(name, fn):
    def op(input, dim=(), keepdim=False, *, out=None):
        x = input._data
        not_implemented_for(x, f"{name[1:]}_values_cpu")
        dims = _dims_arg(input, dim)
        if x.size == 0:
            check_nonempty_dims(x, dims, name, dim_given=dims is not None)
        return with_out(apply(Extremum, input, dims, keepdim, fn), out)

    op.__name__ = name
    op.__doc__ = f"""{name}(input, dim=(), keepdim=False) -> Tensor

    The {'largest' if name == 'amax' else 'smallest'} values of ``input`` over ``dim``
    (all dims by default); the gradient is shared evenly among tied elements.
    """
    return op


amax = _amax_like("amax", _amax_fn)
amin = _amax_like("amin", _amin_fn)


class NoGrad(Node):
    """Runs ``fn`` on the arrays of its arguments; the results never require grad."""

    differentiable = False

    def forward(self, fn, *args):
        return fn(*args)


def _arg_extremum(name, arg_name):
    def op(input, dim=None, keepdim=False, *, out=None):
        x = input._data
        _no_complex(x, name)
        if dim is None:
            if x.size == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   "input.numel() == 0.")
            shape = (1,) * x.ndim if keepdim else ()

            def fn(a):
                return getattr(xp_of(a), arg_name)(a.reshape(-1)).reshape(shape).astype(np.int64)
        else:
            d = wrap_dim(int_dim(dim, name), x.ndim)
            check_nonempty_dims(x, (d,) if x.ndim else None, name)

            def fn(a):
                if a.ndim == 0:
                    return xp_of(a).zeros((), dtype=np.int64)
                return getattr(xp_of(a), arg_name)(a, axis=d, keepdims=keepdim).astype(np.int64)
        return with_out(apply(NoGrad, fn, input), out)

    op.__name__ = name
    op.__doc__ = f"""{name}(input, dim=None, keepdim=False) -> LongTensor

    The index of the {'largest' if name == 'argmax' else 'smallest'} value of ``input``
    (of the flattened input when ``dim`` is None); the first one among ties.
    """
    return op


argmax = _arg_extremum("argmax", "argmax")
argmin = _arg_extremum("argmin", "argmin")


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """aminmax(input, *, dim=None, keepdim=False) -> (min, max)

    The smallest and largest values of ``input`` (over ``dim`` if given).
    """
    x = input._data
    not_implemented_for(x, "aminmax_cpu")
    if dim is None:
        if x.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dims = None
    else:
        dims = (wrap_dim(int_dim(dim, "aminmax"), x.ndim),)
        if x.ndim:
            check_nonempty_dims(x, dims, "aminmax", sep=": ")
        else:
            dims = None
    return _AminmaxResult((apply(Extremum, input, dims, keepdim, _amin_fn),
                           apply(Extremum, input, dims, keepdim, _amax_fn)))


# ---------------------------------------------------------------------------
# variance and standard deviation

_VAR_ACC = {np.dtype(np.float16): np.float32, np.dtype(np.float32): np.float64,
            np.dtype(np.complex64): np.complex128}


class Var(Node):
    saves_inputs = (0,)

    def forward(self, x, dims, correction, keepdim, take_sqrt):
        self.shape, self.dims, self.keepdim = x.shape, dims, keepdim
        self.dof = _count(x.shape, dims) - correction
        work = x.astype(_VAR_ACC.get(x.dtype, x.dtype))  # PyTorch's CPU accumulates wider
        xp = xp_of(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            centered = work - work.mean(axis=dims, keepdims=True) if work.size else work
            sq = (centered * centered.conj()).real if x.dtype.kind == "c" else centered ** 2
            total = sq.sum(axis=dims, keepdims=keepdim)
            out = total / work.real.dtype.type(_max(self.dof, 0))
            if take_sqrt:
                out = xp.sqrt(out)
        return out.astype(x.real.dtype, copy=False)

    def backward(self, g):
        x = self.saved_tensors[0]
        factor = 2.0 / self.dof if self.dof else math.inf
        g = keep_reduced(g, self.shape, self.dims, self.keepdim)
        return g * factor * (x - apply(Mean, x, self.dims, True, None))


class Std(Var):
    saves_inputs = (0,)
    saves_output = True

    def backward(self, g):
        x, out = self.saved_tensors
        od = out._data
        zero = od == 0
        safe = out + _const(zero.astype(od.dtype)) if zero.any() else out
        g_var = masked_fill_const(g / (safe * 2), zero, 0) if zero.any() else g / (safe * 2)
        return Var.backward(self, g_var)


def _var_args(input, dim, unbiased, keepdim, correction, fn):
    x = input._data
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if x.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"{fn}: can't specify both unbiased and correction")
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = _dims_arg(input, dim)
    return dims, correction, keepdim


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """var(input, dim=None, *, correction=1, keepdim=False) -> Tensor

    The variance of ``input`` over ``dim``: the sum of squared deviations from the mean
    divided by ``N - correction`` (Bessel's correction by default). The legacy
    ``unbiased`` flag (``var(input, unbiased)``, ``var(input, dim, unbiased)``) is
    ``correction=1`` when true and ``correction=0`` when false.
    """
    dims, correction, keepdim = _var_args(input, dim, unbiased, keepdim, correction, "var")
    return with_out(apply(Var, input, dims, correction, keepdim, False), out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """std(input, dim=None, *, correction=1, keepdim=False) -> Tensor

    The standard deviation of ``input`` over ``dim`` (the square root of :func:`var`);
    its gradient is zero where the result is zero, as in PyTorch.
    """
    dims, correction, keepdim = _var_args(input, dim, unbiased, keepdim, correction, "std")
    return with_out(apply(Std, input, dims, correction, keepdim, True), out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """var_mean(input, dim=None, *, correction=1, keepdim=False) -> (Tensor, Tensor)

    The variance and the mean of ``input`` over ``dim``.
    """
    dims, correction, keepdim = _var_args(input, dim, unbiased, keepdim, correction, "var_mean")
    return (apply(Var, input, dims, correction, keepdim, False),
            apply(Mean, input, dims, keepdim, None))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """std_mean(input, dim=None, *, correction=1, keepdim=False) -> (Tensor, Tensor)

    The standard deviation and the mean of ``input`` over ``dim``.
    """
    dims, correction, keepdim = _var_args(input, dim, unbiased, keepdim, correction, "std_mean")
    return (apply(Std, input, dims, correction, keepdim, True),
            apply(Mean, input, dims, keepdim, None))


# ---------------------------------------------------------------------------
# logsumexp and norms

class LogSumExp(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, x, dims, keepdim):
        self.shape, self.dims, self.keepdim = x.shape, dims, keepdim
        xp = xp_of(x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if x.size == 0:
                return xp.log(xp.exp(x).sum(axis=dims, keepdims=keepdim))
            # complex: shift by the largest real part only, so that the imaginary part
            # of the result is the principal one (an imaginary shift adds multiples of 2 pi)
            m = xp.max(x.real if x.dtype.kind == "c" else x, axis=dims, keepdims=True)
            m = xp.where(xp.isfinite(m), m, 0)
            out = xp.log(xp.exp(x - m).sum(axis=dims, keepdims=True)) + m
        if not keepdim:
            out = out.reshape(reduced_shape(x.shape, dims, False))
        return out

    def backward(self, g):
        x, out = self.saved_tensors
        g = keep_reduced(g, self.shape, self.dims, self.keepdim)
        out = keep_reduced(out, self.shape, self.dims, self.keepdim)
        return g * _conj((x - out).exp())


def logsumexp(input, dim, keepdim=False, *, out=None):
    """logsumexp(input, dim, keepdim=False) -> Tensor

    ``log(sum(exp(input), dim))``, computed stably (the maximum is taken out first).
    Integer inputs are computed in the default float dtype.
    """
    input = ensure_float(input)
    return with_out(apply(LogSumExp, input, _dims_arg(input, dim), keepdim), out)


class VectorNorm(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, x, p, dims, keepdim):
        self.shape, self.dims, self.keepdim, self.p = x.shape, dims, keepdim, p
        xp = xp_of(x)
        out_dtype = x.real.dtype
        if x.dtype == np.float16:
            x = x.astype(np.float32)
        kw = {"axis": dims, "keepdims": keepdim}
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if p == 2 and x.dtype.kind == "f":  # the common case: no abs, a dot if it can
                if dims is None:
                    flat = x.reshape(-1)
                    out = xp.sqrt(xp.dot(flat, flat)).reshape(
                        reduced_shape(x.shape, None, keepdim))
                else:
                    out = xp.sqrt((x * x).sum(**kw))
                return out.astype(out_dtype, copy=False)
            a = xp.abs(x)
            if p == 2:
                out = xp.sqrt((a * a).sum(**kw))
            elif p == math.inf:
                out = a.max(**kw)
            elif p == -math.inf:
                out = a.min(**kw)
            elif p == 0:
                out = (a != 0).sum(**kw).astype(a.dtype)
            elif p == 1:
                out = a.sum(**kw)
            else:
                out = (a ** p).sum(**kw) ** (1.0 / p)
        return out.astype(out_dtype, copy=False)

    def backward(self, g):
        x, out = self.saved_tensors
        return norm_backward(g, x, out, self.p, self.dims, self.keepdim)


def norm_backward(g, x, out, p, dims, keepdim):
    """d ||x||_p / dx, following PyTorch: zero where the norm is zero."""
    shape = x._data.shape
    xp = xp_of(x._data)
    g = keep_reduced(g, shape, dims, keepdim)
    out = keep_reduced(out, shape, dims, keepdim)
    od = out._data
    if p == 0:
        from ember._ops.creation import zeros_like

        return zeros_like(x)
    if p == 1:
        return x.sgn() * g
    if abs(p) == math.inf:
        a = xp.abs(x._data)
        mask = _nan_aware_eq(xp, a, od)
        weights = (mask / mask.sum(axis=dims, keepdims=True)).astype(od.dtype)
        return x.sgn() * g * _const(weights)
    zero = od == 0
    safe = out + _const(zero.astype(od.dtype)) if zero.any() else out
    if p == 2:
        return x * masked_fill_const(g / safe, zero)
    if p < 1:
        xzero = x._data == 0
        absx = x.abs() + _const(xzero.astype(od.dtype))
        return x.sgn() * masked_fill_const(absx ** (p - 1), xzero) * g * out ** (1 - p)
    scale = masked_fill_const(g / safe ** (p - 1), zero)
    if p < 2:
        return x.sgn() * x.abs() ** (p - 1) * scale
    return x * x.abs() ** (p - 2) * scale


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ``ord``-norm of ``input`` over ``dim`` (all elements by default)."""
    if dtype is not None:
        input = _cast(input, dtype)
    x = input._data
    if x.dtype.kind not in "fc":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {type_name(x.dtype)}")
    dims = _dims_arg(input, dim)
    p = float(ord)
    if x.size == 0 and (p < 0 or p == math.inf):  # no identity
        if dims is None:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {p:g} norm on an empty tensor because "
                "the operation does not have an identity")
        for d in dims:
            if x.shape[d] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {p:g} norm on the dimension {d}"
                    "because this dimension is empty and the operation does not have an "
                    "identity")
    return apply(VectorNorm, input, p, dims, keepdim)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """norm(input, p='fro', dim=None, keepdim=False, dtype=None) -> Tensor

    The norm of ``input``: the vector ``p``-norm over ``dim`` (all elements by default)
    for a number ``p`` (``2``, ``1``, ``inf``, ``-inf``, ``0`` or any other), the
    Frobenius norm for ``'fro'`` (the 2-norm of the elements over at most 2 dims), the
    nuclear norm for ``'nuc'``. The gradient of the 2-norm at zero is zero.
    """
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return with_out(vector_norm(input, 2, dim, keepdim, dtype=dtype), out)
        dims = list(range(input._data.ndim)) if dim is None else list(dim)
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        if len(dims) != 2:
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                               + " ".join(str(d) for d in dims))
        from ember._ops._linalg_decomp import matrix_norm

        return with_out(matrix_norm(input, p, dims, keepdim, dtype=dtype), out)
    return with_out(vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype), out)


# ---------------------------------------------------------------------------
# logical reductions and counting

def _logical(name):
    def op(input, dim=None, keepdim=False, *, out=None):
        x = input._data
        out_dtype = np.uint8 if x.dtype == np.uint8 else np.bool_
        if isinstance(dim, (list, tuple)) and len(dim) == 0:
            dims = ()  # PyTorch reduces over no dim: each element as a bool
        else:
            dims = wrap_dims(dim, x.ndim) if x.ndim else None

        def fn(a):
            if dims == ():
                return (a != 0).astype(out_dtype)
            return getattr(xp_of(a), name)(a, axis=dims, keepdims=keepdim).astype(out_dtype)
        return with_out(apply(NoGrad, fn, input), out)

    op.__name__ = name
    op.__doc__ = f"""{name}(input, dim=None, keepdim=False) -> Tensor

    Whether {'all' if name == 'all' else 'any'} of ``input``'s elements (over ``dim``)
    are nonzero; a bool tensor (uint8 for a uint8 input, as in PyTorch).
    """
    return op


all = _logical("all")  # noqa: A001
any = _logical("any")  # noqa: A001


def count_nonzero(input, dim=None):
    """count_nonzero(input, dim=None) -> Tensor

    The number of nonzero elements of ``input`` (over ``dim``: an int or a tuple).
    """
    dims = _dims_arg(input, dim)

    def fn(a):
        if dims is None:
            return xp_of(a).asarray(xp_of(a).count_nonzero(a), dtype=np.int64)
        return (a != 0).sum(axis=dims, dtype=np.int64)
    return apply(NoGrad, fn, input)


# ---------------------------------------------------------------------------
# gradient helper used by the engine

class SumTo(Node):
    def forward(self, x, shape):
        self.shape = x.shape
        lead = x.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1)
        out = x.sum(axis=axes, keepdims=True) if axes else x
        return out.reshape(shape)

    def backward(self, g):
        return g.expand(self.shape)


def sum_to(grad, shape):
    """``grad`` summed over the broadcast dims so that it has ``shape``."""
    shape = tuple(shape)
    if tuple(grad._data.shape) == shape:
        return grad
    return apply(SumTo, grad, shape)


def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    """Tensor.norm(p='fro', dim=None, keepdim=False, dtype=None): :func:`ember.norm` (the
    method has no ``out``)."""
    return norm(self, p, dim, keepdim, dtype=dtype)


_norm_method.__op__ = "norm"

METHODS = {
    "sum": sum, "mean": mean, "nansum": nansum, "nanmean": nanmean, "prod": prod,
    "max": max, "min": min, "amax": amax, "amin": amin, "argmax": argmax, "argmin": argmin,
    "aminmax": aminmax, "var": var, "std": std, "logsumexp": logsumexp, "norm": _norm_method,
    "all": all, "any": any, "count_nonzero": count_nonzero,
    "sum_to_size": lambda self, *size: sum_to(
        self, size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size),
}
