"""Cumulative ops: cumsum, cumprod, cummax, cummin, logcumsumexp (and cumsum_, cumprod_).

Each runs along one dim; a 0-d input is treated as 1-d. cummax and cummin pick
elements of their input and take them with ``reduction.take_along_dim`` (see
NOTE [ Value-selecting ops ] in reduction.py).
"""

from __future__ import annotations

import numpy as np

from ember._C._core import Node, apply_inplace, is_grad_enabled
from ember._ops._util import apply, cpp_type_name, not_implemented, with_out, wrap, wrap_dim, xp_of
from ember._ops._util import conj as _conj
from ember._ops.reduction import (
    _acc_dtype,
    _cast,
    _const,
    _np_dtype,
    accumulate,
    int_dim,
    masked_fill_const,
    not_implemented_for,
    return_type,
    take_along_dim,
)
from ember._ops.shape import Flip

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]

_CummaxResult = return_type("cummax")
_CumminResult = return_type("cummin")


def _running(fn, x, dim, dtype):
    """``fn(x, axis=dim)`` for xp.cumsum or xp.cumprod: integers and bools in int64
    (unless ``dtype`` is given); floats narrower than float64 (and complex64) accumulate in
    double precision and are rounded once per output, as PyTorch's CPU kernels do (a float32
    running sum would drift from PyTorch's by many ulps over long dims)."""
    dtype = _acc_dtype(x, dtype)
    out_dtype = np.dtype(dtype or x.dtype)
    if x.ndim == 0:
        return x.astype(out_dtype)
    wide = _wide_accumulator(out_dtype)
    if wide is not None:
        return fn(x.astype(wide, copy=False), axis=dim).astype(out_dtype, copy=False)
    return fn(x, axis=dim, dtype=dtype)


def _wide_accumulator(dtype):
    """float64 for float16, bfloat16 (ml_dtypes' kind "V") and float32; complex128 for
    complex64; None otherwise."""
    if dtype.kind in "fV" and dtype.itemsize < 8:
        return np.float64
    return np.complex128 if dtype == np.complex64 else None


class CumSum(Node):
    def forward(self, x, dim, dtype=None):
        self.dim = dim
        return _running(xp_of(x).cumsum, x, dim, dtype)

    def backward(self, g):
        return apply(ReverseCumSum, g, self.dim)


class ReverseCumSum(Node):
    """The sums from each position to the end along ``dim``: the adjoint of cumsum."""

    def forward(self, x, dim):
        self.dim = dim
        if x.ndim == 0:
            return x.copy()
        xp = xp_of(x)
        return xp.ascontiguousarray(xp.flip(_running(xp.cumsum, xp.flip(x, dim), dim, None),
                                            dim))

    def backward(self, g):
        return apply(CumSum, g, self.dim)


class CumProd(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, x, dim, dtype=None):
        self.dim = dim
        return _running(xp_of(x).cumprod, x, dim, dtype)

    def backward(self, g):
        x, y = self.saved_tensors
        return cumprod_backward(g, x, y, self.dim)


def cumprod_backward(g, x, y, dim):
    """d cumprod / d x, correct where ``x`` has zeros.

    Before a slice's first zero the gradient is ``revcumsum(g * y) / x``. At the first
    zero it is ``revcumsum(g * y1)`` with y1 the cumprod of x with that zero set to 1;
    after it, zero. That formula's own derivative is wrong (its masks are constants),
    so under ``create_graph`` the O(n^2) form of PyTorch is used instead.
    """
    if x._data.ndim == 0:
        return g
    xd = x._data
    xp = xp_of(xd)
    zero = xd == 0
    if not zero.any():
        return apply(ReverseCumSum, g * _conj(y), dim) / _conj(x)
    if is_grad_enabled():
        return _cumprod_backward_differentiable(g, x, dim)
    seen = xp.cumsum(zero, axis=dim)
    first = (zero & (seen == 1)).astype(xd.dtype)
    before = (seen == 0).astype(xd.dtype)
    x_safe = x + _const(zero.astype(xd.dtype))
    y1 = apply(CumProd, x + _const(first), dim)
    head = apply(ReverseCumSum, g * _conj(y), dim) / _conj(x_safe)
    at_zero = apply(ReverseCumSum, g * _conj(y1), dim)
    return head * _const(before) + at_zero * _const(first)


def _cumprod_backward_differentiable(g, x, dim):
    """sum_{j >= k} g_j prod_{i <= j, i != k} x_i, for all k at once: the cumprods of
    n copies of x, copy k with x_k replaced by 1, stacked on a new leading dim."""
    xd = x._data
    xp = xp_of(xd)
    n = xd.shape[dim]
    shape = [1] * (xd.ndim + 1)
    shape[0] = shape[dim + 1] = n
    eye = xp.eye(n, dtype=xd.dtype).reshape(shape)
    later = xp.triu(xp.ones((n, n), dtype=xd.dtype)).reshape(shape)  # j >= k
    copies = x.unsqueeze(0) * _const(1 - eye) + _const(eye)
    terms = apply(CumProd, _conj(copies), dim + 1) * g.unsqueeze(0) * _const(later)
    summed = terms.sum(dim + 1)  # (n, *shape without dim)
    order = list(range(1, xd.ndim))
    order.insert(dim, 0)
    return summed.permute(*order)


def _cum_dim(input, dim, fn):
    return wrap_dim(int_dim(dim, fn), input._data.ndim)


def cumsum(input, dim, *, dtype=None, out=None):
    """cumsum(input, dim, *, dtype=None) -> Tensor

    The cumulative sums of ``input`` along ``dim``; integers and bools sum in int64.
    """
    d = _cum_dim(input, dim, "cumsum")
    return with_out(apply(CumSum, _cast(input, dtype), d, _np_dtype(dtype)), out)


def cumprod(input, dim, *, dtype=None, out=None):
    """cumprod(input, dim, *, dtype=None) -> Tensor

    The cumulative products of ``input`` along ``dim``; the gradient is right where
    ``input`` has zeros.
    """
    d = _cum_dim(input, dim, "cumprod")
    return with_out(apply(CumProd, _cast(input, dtype), d, _np_dtype(dtype)), out)


def _cum_extremum(name, acc_name, result_cls):
    def op(input, dim, *, out=None):
        d = _cum_dim(input, dim, name)
        x = input._data
        not_implemented_for(x, f"{name}_cpu")
        xp = xp_of(x)
        x1 = x.reshape(1) if x.ndim == 0 else x
        # the latest position whose value equals the running extremum (or is NaN)
        running = accumulate(xp, acc_name, x1, d)
        hit = x1 == running
        if x.dtype.kind == "f":
            hit |= xp.isnan(x1)
        shape = [1] * x1.ndim
        shape[d] = x1.shape[d]
        pos = xp.arange(x1.shape[d], dtype=np.int64).reshape(shape)
        index = accumulate(xp, "maximum", xp.where(hit, pos, 0), d) if x1.size else \
            xp.zeros(x1.shape, dtype=np.int64)
        values = take_along_dim(input, index, d, x.shape, unique=False, values=running)
        return result_cls((values, wrap(index.reshape(x.shape))))

    op.__name__ = name
    op.__doc__ = f"""{name}(input, dim) -> (values, indices)

    The running {'maximum' if name == 'cummax' else 'minimum'} of ``input`` along ``dim``
    and where it was found (the latest position among ties; NaN propagates).
    """
    return op


cummax = _cum_extremum("cummax", "maximum", _CummaxResult)
cummin = _cum_extremum("cummin", "minimum", _CumminResult)


class LogCumSumExp(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, x, dim):
        self.dim = dim
        if x.ndim == 0:
            return x.copy()
        with np.errstate(invalid="ignore"):
            return accumulate(xp_of(x), "logaddexp", x, dim)

    def backward(self, g):
        x, out = self.saved_tensors
        if x._data.ndim == 0:
            return g
        # PyTorch's stable form: positive and negative parts of g in log space
        gd = g._data
        lowest = np.finfo(gd.dtype).min
        log_abs = (g.abs() + _const((gd == 0).astype(gd.dtype))).log()
        d = self.dim

        def reverse_lcse(t):
            return apply(Flip, apply(LogCumSumExp, apply(Flip, t, (d,)), d), (d,))

        pos = masked_fill_const(log_abs, ~(gd > 0), lowest)
        neg = masked_fill_const(log_abs, ~(gd < 0), lowest)
        with np.errstate(over="ignore"):  # lowest + lowest = -inf, whose exp is 0 anyway
            return (reverse_lcse(pos - out) + x).exp() - (reverse_lcse(neg - out) + x).exp()


def logcumsumexp(input, dim, *, out=None):
    """logcumsumexp(input, dim) -> Tensor

    ``log(cumsum(exp(input), dim))``, computed stably; floating inputs only.
    """
    x = input._data
    if x.dtype.kind == "c":
        return with_out(_logcumsumexp_complex(input, _cum_dim(input, dim, "logcumsumexp")),
                        out)
    if x.dtype.kind not in "f":
        raise not_implemented("logcumsumexp_out_cpu", x.dtype)
    return with_out(apply(LogCumSumExp, input, _cum_dim(input, dim, "logcumsumexp")), out)


def _logaddexp_complex(a, b):
    """``log(exp(a) + exp(b))`` for complex tensors as PyTorch's scan computes it:
    ``hi + log1p(exp(lo - hi))``, ``hi`` the operand with the larger real part (so the
    imaginary part follows ``hi``'s, not the principal branch); two equal infinite real
    parts give ``hi``."""
    from ember._ops.elementwise import where

    first = (a.real >= b.real).detach()
    hi, lo = where(first, a, b), where(first, b, a)
    same_inf = ((hi.real == lo.real) & ~hi.real.isfinite()).detach()
    with np.errstate(invalid="ignore"):  # -inf - -inf, replaced just below
        d = where(same_inf, hi.new_zeros(()), lo - hi)
    return where(same_inf, hi, hi + d.exp().log1p())


def _logcumsumexp_complex(input, d):
    """Complex logcumsumexp as PyTorch computes it: a running log-add-exp along ``d``
    (one step of ember ops per position, vectorised over the other dims; differentiable
    through those ops, under PyTorch's conjugate convention)."""
    from ember._ops.join import stack

    if input._data.size == 0 or input._data.ndim == 0:
        return input.clone()
    acc, *rest = input.unbind(d)
    outs = [acc]
    for z in rest:
        acc = _logaddexp_complex(acc, z)
        outs.append(acc)
    return stack(outs, d)


def _inplace_cum(op_cls, name):
    def method(self, dim, *, dtype=None):
        if dtype is not None and _np_dtype(dtype) != self._data.dtype:
            raise RuntimeError(
                f"Bad in-place call: input tensor dtype {cpp_type_name(self._data.dtype)} and "
                f"output tensor dtype {cpp_type_name(_np_dtype(dtype))} should match")
        return apply_inplace(op_cls, self, _cum_dim(self, dim, name), None)
    return method


METHODS = {
    "cumsum": cumsum, "cumprod": cumprod, "cummax": cummax, "cummin": cummin,
    "logcumsumexp": logcumsumexp, "cumsum_": _inplace_cum(CumSum, "cumsum"),
    "cumprod_": _inplace_cum(CumProd, "cumprod"),
}
