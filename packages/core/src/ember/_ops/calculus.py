"""Finite differences and integration of samples: ``diff``, ``gradient``, ``trapezoid``
(``trapz``) and ``cumulative_trapezoid``.

All are compositions of recorded ops (slices, arithmetic, sums), written as PyTorch writes
them so that the numbers agree to the last bit where the order of operations decides them;
their gradients come from autograd.
"""

from __future__ import annotations

import numbers

from ember._ops._util import TensorBase, scalar_value, wrap_dim

__all__ = ["diff", "gradient", "trapezoid", "trapz", "cumulative_trapezoid"]


def _slice(t, dim, start, stop=None):
    """``t[start:stop]`` along ``dim`` (negative bounds count from the end)."""
    n = t._data.shape[dim]
    start = max(start + n, 0) if start < 0 else min(start, n)
    stop = n if stop is None else (max(stop + n, 0) if stop < 0 else min(stop, n))
    return t.narrow(dim, start, max(stop - start, 0))


def _need_tensor(name, x, arg, pos=None):
    if not isinstance(x, TensorBase):
        where = f" (position {pos})" if pos is not None else ""
        raise TypeError(f"{name}(): argument '{arg}'{where} must be Tensor, not "
                        f"{type(x).__name__}")


# ---------------------------------------------------------------------------
# diff

def diff(input, n=1, dim=-1, prepend=None, append=None):
    """diff(input, n=1, dim=-1, prepend=None, append=None) -> Tensor

    The ``n``-th forward difference along ``dim``: ``out[i] = input[i + 1] - input[i]``,
    applied ``n`` times (``logical_xor`` for bool tensors). ``prepend`` and ``append``
    (tensors with input's dims, matching it except along ``dim``) are joined to ``input``
    first.

    Examples::

        >>> ember.diff(ember.tensor([1, 3, 2]))
        tensor([ 2, -1])
        >>> ember.diff(ember.tensor([1, 3, 2]), append=ember.tensor([4, 5]))
        tensor([ 2, -1,  2,  1])
    """
    from ember._ops.comparison import logical_xor
    from ember._ops.join import cat

    _need_tensor("diff", input, "input", 1)
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"diff(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input._data.ndim)
    parts = []
    for arg, t in (("prepend", prepend), ("append", append)):
        if t is None:
            continue
        _need_tensor("diff", t, arg)
        if t._data.ndim != input._data.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as "
                               "input")
        for k, (a, b) in enumerate(zip(t._data.shape, input._data.shape)):
            if k != d and a != b:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({k}) = {b}, "
                    f"but got tensor.size({k}) = {a}")
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, input, append) if t is not None]
        input = cat(parts, d)
    x = input
    for _ in range(n):
        length = x._data.shape[d]
        if length == 0:
            break
        hi, lo = x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1)
        x = logical_xor(hi, lo) if x._data.dtype.kind == "b" else hi - lo
    return x


# ---------------------------------------------------------------------------
# gradient

def _gradient_dims(input, spacing_len, dim, edge_order):
    if input._data.dtype.name == "uint8":
        raise RuntimeError("torch.gradient does not support uint8 input.")
    nd = input._data.ndim
    if dim is None:
        if spacing_len is not None and spacing_len != nd:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                f"length equal to 'self.dim() = {nd}', since dim argument was not given, but "
                f"got a list of length {spacing_len}")
        dims = list(range(nd))
    else:
        dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
        if spacing_len is not None and spacing_len != len(dims):
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                "and dim arguments to have the same length, but got a spacing argument of "
                f"length {spacing_len} and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    seen = set()
    for d in dims:
        w = wrap_dim(d, nd)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    for d in dims:
        if input._data.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    return [wrap_dim(d, nd) for d in dims]


def _gradient_uniform(x, h, d, edge_order):
    center = (_slice(x, d, 2) - _slice(x, d, 0, -2)) / h
    if edge_order == 1:
        first = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / h
        last = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / h
    else:
        first = (_slice(x, d, 0, 1) * -1.5 + _slice(x, d, 1, 2) * 2
                 - _slice(x, d, 2, 3) * 0.5) / h
        last = (_slice(x, d, -3, -2) * 0.5 + _slice(x, d, -2, -1) * -2
                + _slice(x, d, -1) * 1.5) / h
    return center / 2, first, last


def _gradient_coordinates(x, coords, d, edge_order):
    nd = x._data.ndim
    shape = [1] * nd
    shape[d] = -1
    dx = coords.diff(1, 0)
    dx1, dx2 = _slice(dx, 0, 0, -1), _slice(dx, 0, 1)
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _slice(x, d, 0, -2) + b * _slice(x, d, 1, -1) + c * _slice(x, d, 2)
    if edge_order == 1:
        first = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / dx[0]
        last = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / dx[-1]
    else:
        h0, h1, hm1, hm2 = dx[0], dx[1], dx[-1], dx[-2]
        a = -(2.0 * h0 + h1) / (h0 * (h0 + h1))
        b = (h0 + h1) / (h0 * h1)
        c = -h0 / (h1 * (h0 + h1))
        first = a * _slice(x, d, 0, 1) + b * _slice(x, d, 1, 2) + c * _slice(x, d, 2, 3)
        a = hm1 / (hm2 * (hm1 + hm2))
        b = -(hm1 + hm2) / (hm1 * hm2)
        c = (2 * hm1 + hm2) / (hm1 * (hm1 + hm2))
        last = a * _slice(x, d, -3, -2) + b * _slice(x, d, -2, -1) + c * _slice(x, d, -1)
    return center, first, last


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """gradient(input, *, spacing=1, dim=None, edge_order=1) -> tuple of Tensors

    Estimates the derivative of a function sampled in ``input`` along each of the dims
    ``dim`` (all by default), by second-order central differences inside and first- or
    second-order (``edge_order``) one-sided differences at the edges. ``spacing`` is the
    distance between samples: a number (for every dim), a list of numbers (one per dim),
    or a list of 1-D tensors of the sample coordinates along each dim.

    Returns:
        A tuple with one tensor (input's shape) per dim.

    Examples::

        >>> ember.gradient(ember.tensor([1., 4., 9., 16.]))
        (tensor([3., 4., 6., 7.]),)
        >>> ember.gradient(ember.tensor([1., 4., 9., 16.]), spacing=2.)
        (tensor([1.5000, 2.0000, 3.0000, 3.5000]),)
    """
    from ember._ops.join import cat

    _need_tensor("gradient", input, "input", 1)
    if spacing is None:
        spacing = 1
    if isinstance(spacing, TensorBase):
        if spacing._data.ndim:
            raise TypeError("gradient() received an invalid combination of arguments - got "
                            "(Tensor, spacing=Tensor): spacing is a number, a list of numbers "
                            "or a list of 1-D tensors")
        spacing = spacing.item()
    if isinstance(spacing, (list, tuple)):
        spacing_len = len(spacing)
        if any(isinstance(h, TensorBase) for h in spacing):
            for i, h in enumerate(spacing):
                if not isinstance(h, TensorBase):
                    raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                                    f"{type(h).__name__}")
    else:
        if scalar_value(spacing) is None:
            raise TypeError(f"gradient(): argument 'spacing' must be a number, a list of "
                            f"numbers or a list of tensors, not {type(spacing).__name__}")
        spacing_len = None
    dims = _gradient_dims(input, spacing_len, dim, edge_order)
    if spacing_len is None:
        spacing = [scalar_value(spacing)] * len(dims)
    out = []
    for d, h in zip(dims, spacing):
        if isinstance(h, TensorBase):
            if h._data.ndim != 1:
                raise RuntimeError(
                    "torch.gradient expected each element of spacing to have one dimension, "
                    f"but got an element with {h._data.ndim} dimensions!")
            center, first, last = _gradient_coordinates(input, h, d, edge_order)
        else:
            hv = scalar_value(h)
            if hv is None:
                raise TypeError(f"gradient(): each element of 'spacing' must be a number or a "
                                f"Tensor, not {type(h).__name__}")
            center, first, last = _gradient_uniform(input, hv, d, edge_order)
        out.append(cat([first, center, last], d))
    return tuple(out)


# ---------------------------------------------------------------------------
# trapezoid, cumulative_trapezoid

def _trapezoid_args(name, y, x, dx, dim):
    _need_tensor(name, y, "y", 1)
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"(Tensor, Tensor, dx={type(dx).__name__}): give either x or dx")
    if x is not None and not isinstance(x, TensorBase):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"(Tensor, {type(x).__name__}): x must be a Tensor")
    if dx is not None:
        v = scalar_value(dx)
        if name == "trapz":  # its dx is a float: a bool is a number, a complex is not
            if v is None or isinstance(v, complex):
                raise TypeError(f"trapz() received an invalid combination of arguments - got "
                                f"(Tensor, dx={type(dx).__name__}): dx must be a real number")
        elif v is None or isinstance(v, (bool, complex)):
            raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    if y._data.ndim == 0:
        if name == "cumulative_trapezoid":
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    return wrap_dim(dim, y._data.ndim)


def _spacings(name, y, x, d):
    """The differences of the sample points ``x``, shaped to broadcast along ``d``."""
    if y._data.dtype.kind == "b" or x._data.dtype.kind == "b":
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    nd = y._data.ndim
    if x._data.ndim == 1:
        if x._data.shape[0] != y._data.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * nd
        shape[d] = x._data.shape[0]
        xv = x.reshape(shape)
    elif x._data.ndim < nd:
        xv = x.reshape((1,) * (nd - x._data.ndim) + tuple(x._data.shape))
    else:
        xv = x
    return _slice(xv, d, 1) - _slice(xv, d, 0, -1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor

    The trapezoidal rule along ``dim``: the integral of the samples ``y`` at the points
    ``x`` (a tensor: 1-D along ``dim``, or broadcasting with ``y``), or spaced ``dx``
    apart (default 1). No samples integrate to 0.

    Examples::

        >>> ember.trapezoid(ember.tensor([1., 5., 10.]))
        tensor(10.5000)
        >>> ember.trapezoid(ember.tensor([1., 5., 10.]), ember.tensor([1., 3., 6.]))
        tensor(28.5000)
    """
    return _trapezoid("trapezoid", y, x, dx, dim)


def _trapezoid(name, y, x, dx, dim):
    from ember._ops.creation import zeros

    d = _trapezoid_args(name, y, x, dx, dim)
    if y._data.shape[d] == 0:
        shape = y._data.shape[:d] + y._data.shape[d + 1:]
        return zeros(shape, dtype=y.dtype, device=y.device)
    if x is not None:
        h = _spacings("trapezoid", y, x, d)
        return ((_slice(y, d, 0, -1) + _slice(y, d, 1)) * h).sum(d) / 2.0
    if y._data.dtype.kind == "b":
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not "
                           "supported")
    h = 1.0 if dx is None else float(scalar_value(dx))
    return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * h


def trapz(y, x=None, *, dx=None, dim=-1):
    """trapz(y, x=None, *, dx=None, dim=-1) -> Tensor

    Alias for :func:`trapezoid`.
    """
    return _trapezoid("trapz", y, x, dx, dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """cumulative_trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor

    The running trapezoidal rule along ``dim``: like :func:`trapezoid`, but the partial
    integrals up to each sample point after the first (``dim`` is one shorter).

    Examples::

        >>> ember.cumulative_trapezoid(ember.tensor([1., 5., 10.]))
        tensor([ 3.0000, 10.5000])
    """
    d = _trapezoid_args("cumulative_trapezoid", y, x, dx, dim)
    left, right = _slice(y, d, 0, -1), _slice(y, d, 1)
    if x is not None:
        h = _spacings("cumulative_trapezoid", y, x, d)
        return (h / 2.0 * (left + right)).cumsum(d)
    if y._data.dtype.kind == "b":
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is "
                           "not supported")
    h = 1.0 if dx is None else float(scalar_value(dx))
    return (h / 2.0 * (left + right)).cumsum(d)


METHODS = {"diff": diff}
