"""Statistics of a sample and counts of values: ``cov``, ``corrcoef``, ``histogram``,
``histogramdd`` and ``isin``.

``cov`` and ``corrcoef`` are compositions of recorded ops (as in PyTorch), so their
gradients come from autograd. Histograms and membership tests count values: they have no
gradient, and compute on the arrays.
"""

from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np

from ember import _dtype
from ember._C._core import dispatched
from ember._ops._util import TensorBase, not_implemented, scalar_value, type_name, wrap, xp_of
from ember._ops._util import with_out as _out
from ember._ops.reduction import return_type

__all__ = ["cov", "corrcoef", "histogram", "histogramdd", "isin"]

_range = builtins.range


# ---------------------------------------------------------------------------
# cov, corrcoef

def _need_tensor(name, x, pos=1, arg="input"):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _check_weights(name, w, n, kinds, what):
    if w._data.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w._data.ndim} dimensions")
    if w._data.dtype.kind not in kinds:
        raise RuntimeError(f"cov(): expected {name} to have {what} dtype but got {name} with "
                           f"{type_name(w._data.dtype)} dtype")
    if w._data.size != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w._data.size} != {n}")
    if n and bool((w._data < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """cov(input, *, correction=1, fweights=None, aweights=None) -> Tensor

    The covariance matrix of the variables in the rows of ``input`` (observations in its
    columns; a 1-D input is one variable). ``correction`` is subtracted from the number
    of observations (1: Bessel's correction); ``fweights`` (integers) are frequencies and
    ``aweights`` (floats) importances of the observations. With ``<= 0`` degrees of
    freedom the result is inf or nan, with a warning, as in PyTorch.

    Examples::

        >>> ember.cov(ember.tensor([[0., 1., 2.], [2., 1., 0.]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    from ember._ops.linalg import mm

    _need_tensor("cov", input)
    if input._data.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got "
                           f"an input with {input._data.ndim} dimensions")
    if input._data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input._data.ndim < 2 else input
    n = x._data.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, "iu", "integral")
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, "f", "floating point")
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = n
        avg = x.sum(1) / n
    else:
        w_sum = w.sum()
        if not bool(w_sum._data != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        avg = (x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if bool(norm <= 0 if not isinstance(norm, TensorBase) else (norm._data <= 0)):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    x = x - avg.unsqueeze(1)
    c = mm(x, (x if w is None else x * w).t().conj())
    return (c / norm).squeeze()


def corrcoef(input):
    """corrcoef(input) -> Tensor

    The Pearson correlation coefficients of the variables in the rows of ``input``:
    ``cov(input)`` normalized by the standard deviations, clipped to ``[-1, 1]`` (real and
    imaginary parts separately for complex inputs).

    Examples::

        >>> ember.corrcoef(ember.tensor([[0., 1., 2.], [2., 1., 0.]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    _need_tensor("corrcoef", input)
    if input._data.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {input._data.ndim} dimensions")
    c = cov(input)
    if c._data.ndim == 0:
        return c / c  # nan for a variance of 0, inf or nan; else 1
    d = c.diagonal()
    std = (d.real if d.is_complex() else d).sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    if c.is_complex():
        from ember._ops.creation import complex as _complex

        return _complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# ---------------------------------------------------------------------------
# histogram, histogramdd

def _check_float(x):
    if x.dtype.kind != "f" or x.dtype == np.float16:
        raise not_implemented("histogramdd", x.dtype)


def _outer_edges(x, n_dims, range):
    """(leftmost, rightmost) edges per dim: ``range``, or the data's extent."""
    if range is not None:
        range = [float(scalar_value(v)) for v in range]
        if len(range) != 2 * n_dims:
            raise RuntimeError(f"torch.histogramdd: for a {n_dims}-dimensional histogram range "
                               f"should have {2 * n_dims} elements, but got {len(range)}")
        lo, hi = range[0::2], range[1::2]
    elif x.shape[0]:
        lo = [float(v) for v in x.min(axis=0)]
        hi = [float(v) for v in x.max(axis=0)]
    else:
        lo, hi = [0.0] * n_dims, [1.0] * n_dims
    for d in _range(n_dims):
        if not (np.isfinite(lo[d]) and np.isfinite(hi[d])):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{lo[d]:g}, "
                               f"{hi[d]:g}] is not finite")
        if lo[d] > hi[d]:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{lo[d]:g} max {hi[d]:g} for dimension {d}")
        if lo[d] == hi[d]:  # NumPy's rule: an empty range becomes a unit one
            lo[d] -= 0.5
            hi[d] += 0.5
    return lo, hi


def _bin_edges(x, bins, range, input):
    """The bin edges of each of the ``x.shape[1]`` dims, as tensors of input's dtype."""
    from ember._ops.creation import linspace

    n_dims = x.shape[1]
    if isinstance(bins, TensorBase):
        bins = [bins]
    elif isinstance(bins, numbers.Integral):
        bins = [int(bins)] * n_dims
    bins = list(bins)
    if len(bins) != n_dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if bins and isinstance(bins[0], TensorBase):
        if range is not None:
            raise TypeError("histogramdd(): range cannot be given with bin edges as tensors")
        for d, b in enumerate(bins):
            if not isinstance(b, TensorBase):
                raise TypeError(f"expected Tensor as element {d} in argument 1, but got "
                                f"{type(b).__name__}")
            if b._data.dtype != x.dtype:
                from ember._ops._util import cpp_type_name

                raise RuntimeError(
                    "torch.histogramdd: input tensor and bins tensors should have the same "
                    f"dtype, but got input with dtype {cpp_type_name(x.dtype)} and bins for "
                    f"dimension {d} with dtype {cpp_type_name(b._data.dtype)}")
            if b._data.ndim != 1:
                raise RuntimeError(
                    "torch.histogramdd: bins tensor should have one dimension, but got "
                    f"{b._data.ndim} dimensions in the bins tensor for dimension {d}")
            if b._data.size == 0:
                raise RuntimeError(
                    "torch.histogramdd: bins tensor should have at least 1 element, but got "
                    f"0 elements in the bins tensor for dimension {d}")
            if b._data.size == 1:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got 0 for "
                                   f"dimension {d}")
        return [b.detach().clone() for b in bins]
    for d, b in enumerate(bins):
        if isinstance(b, bool) or not isinstance(b, numbers.Integral):
            raise TypeError(f"histogramdd(): bins must be an int, a sequence of ints or a "
                            f"sequence of tensors, but got {type(b).__name__}")
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for "
                               f"dimension {d}")
    lo, hi = _outer_edges(x, n_dims, range)
    dt = _dtype.from_numpy(x.dtype)
    return [linspace(lo[d], hi[d], int(bins[d]) + 1, dtype=dt, device=input.device)
            for d in _range(n_dims)]


def _histogramdd(input, bins, range, weight, density):
    """(hist array, edge tensors) for ``input`` of shape (..., N)."""
    x = input._data
    _check_float(x)
    if x.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    xp = xp_of(x)
    n_dims = x.shape[-1]
    x = x.reshape(-1, n_dims)
    if weight is not None:
        w = weight._data
        if w.shape != input._data.shape[:-1]:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with "
                f"shape {list(input._data.shape)} and weight with shape {list(w.shape)}")
        if w.dtype != x.dtype:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight "
                f"tensor should have the same dtype, but got input({_c_name(x.dtype)}), and "
                f"weight({_c_name(w.dtype)})")
        w = w.reshape(-1)
    edges = _bin_edges(x, bins, range, input)
    shape = tuple(e._data.size - 1 for e in edges)
    keep = xp.ones(x.shape[0], dtype=bool)
    flat = xp.zeros(x.shape[0], dtype=np.int64)
    for d, e in enumerate(edges):
        ed, col = e._data, x[:, d]
        keep &= (col >= ed[0]) & (col <= ed[-1])
        # the bin whose half-open interval holds the value; the last edge closes the last bin
        pos = xp.searchsorted(ed, col, side="right") - 1
        pos = xp.clip(pos, 0, shape[d] - 1)
        flat = flat * shape[d] + pos
    size = int(np.prod(shape)) if shape else 1
    hist = xp.zeros(size, dtype=x.dtype)
    if weight is None:
        xp.add.at(hist, flat[keep], 1)
    else:
        xp.add.at(hist, flat[keep], w[keep])
    hist = hist.reshape(shape)
    if density:
        with np.errstate(all="ignore"):
            hist = hist / hist.sum()
            for d, e in enumerate(edges):
                lengths = xp.diff(e._data)
                hist = hist / lengths.reshape([-1 if k == d else 1 for k in _range(n_dims)])
        hist = hist.astype(x.dtype, copy=False)
    return hist, edges


def _c_name(np_dtype):
    return {"float32": "float", "float64": "double", "int32": "int", "int64": "long int",
            "float16": "c10::Half"}.get(np.dtype(np_dtype).name, np.dtype(np_dtype).name)


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """histogram(input, bins, *, range=None, weight=None, density=False, out=None)

    -> (Tensor, Tensor)

    A histogram of the values of ``input`` (float32 or float64). ``bins`` is the number
    of equal-width bins between ``range`` (default: the data's min and max), or a 1-D
    tensor of increasing bin edges. Values outside the edges are not counted; the last
    bin includes its right edge. ``weight`` (input's shape) weighs each value;
    ``density=True`` normalizes the histogram to integrate to 1.

    Returns:
        ``(hist, bin_edges)``, a named tuple.

    Examples::

        >>> ember.histogram(ember.tensor([1., 2, 1]), bins=4, range=(0., 3.))
        ember.return_types.histogram(
        hist=tensor([0., 2., 1., 0.]),
        bin_edges=tensor([0.0000, 0.7500, 1.5000, 2.2500, 3.0000]))
    """
    if isinstance(bins, TensorBase):
        if range is not None:
            raise TypeError("histogram() received an invalid combination of arguments - got "
                            "(Tensor, Tensor, range=...): range cannot be given with bin "
                            "edges as a tensor")
    elif isinstance(bins, bool) or not isinstance(bins, numbers.Integral):
        raise TypeError(f"histogram(): argument 'bins' must be int or Tensor, not "
                        f"{type(bins).__name__}")
    if range is not None and len(range) != 2:
        raise RuntimeError(f"torch.histogramdd: for a 1-dimensional histogram range should "
                           f"have 2 elements, but got {len(range)}")
    _need_tensor("histogram", input)
    _check_float(input._data)
    x = input.reshape(-1, 1)
    if weight is not None and weight._data.shape != input._data.shape:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"{list(x._data.shape)} and weight with shape {list(weight._data.shape)}")
    hist, edges = _histogramdd(x, bins, range, None if weight is None else
                               weight.reshape(-1), density)
    result = return_type("histogram", ("hist", "bin_edges"))((wrap(hist), edges[0]))
    if out is not None:
        return return_type("histogram", ("hist", "bin_edges"))(
            (_out(result[0], out[0]), _out(result[1], out[1])))
    return result


def histogramdd(input, bins, range=None, weight=None, density=False):
    """histogramdd(input, bins, range=None, weight=None, density=False)

    -> (Tensor, Tensor[])

    A ``N``-dimensional histogram of the points in the rows of ``input`` (shape
    ``(..., N)``, float32 or float64). ``bins`` is an int (bins per dim), ``N`` ints, or
    ``N`` 1-D tensors of bin edges; ``range`` is a flat sequence ``[lo_0, hi_0, lo_1,
    hi_1, ...]`` (default: the data's extent in each dim). ``weight`` (input's shape
    without the last dim) and ``density`` are as in :func:`histogram`.

    Returns:
        ``(hist, bin_edges)``, a named tuple; ``bin_edges`` is a tuple of ``N`` tensors.

    Examples::

        >>> ember.histogramdd(ember.tensor([[0., 1.], [1., 0.], [2., 2.]]), bins=2).hist
        tensor([[0., 1.],
                [1., 1.]])
    """
    _need_tensor("histogramdd", input)
    hist, edges = _histogramdd(input, bins, range, weight, density)
    return return_type("histogramdd", ("hist", "bin_edges"))((wrap(hist), tuple(edges)))


# ---------------------------------------------------------------------------
# isin

@dispatched
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """isin(elements, test_elements, *, assume_unique=False, invert=False) -> Tensor

    A bool tensor of ``elements``' shape: True where the element is in
    ``test_elements`` (either may be a number; they are compared in their common dtype;
    nan is never found). ``invert=True`` gives the complement.

    Examples::

        >>> ember.isin(ember.tensor([[1, 2], [3, 4]]), ember.tensor([2, 3]))
        tensor([[False,  True],
                [ True, False]])
    """
    from ember._ops.creation import tensor

    if not isinstance(elements, TensorBase) and not isinstance(test_elements, TensorBase):
        raise TypeError("isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}): at "
                        "least one of elements and test_elements must be a Tensor")
    like = elements if isinstance(elements, TensorBase) else test_elements
    a = elements if isinstance(elements, TensorBase) else tensor(elements, device=like.device)
    b = test_elements if isinstance(test_elements, TensorBase) else \
        tensor(test_elements, device=like.device)
    for t in (a, b):
        if t._data.dtype.kind in "bc":
            raise RuntimeError(f"Unsupported input type encountered for isin(): "
                               f"{type_name(t._data.dtype)}")
    rt = _dtype.result_type(*[t if isinstance(v, TensorBase) or scalar_value(v) is None
                              else scalar_value(v)
                              for v, t in ((elements, a), (test_elements, b))]).numpy
    xa, xb = a._data.astype(rt, copy=False), b._data.astype(rt, copy=False)
    xp = xp_of(xa)
    found = xp.isin(xa, xb, assume_unique=bool(assume_unique), invert=bool(invert))
    return wrap(xp.asarray(found, dtype=bool))


METHODS = {"cov": cov, "corrcoef": corrcoef, "histogram": histogram}
