"""``pad``: constant, reflect, replicate and circular padding.

``pad`` is PyTorch's: pairs ``(left, right)`` starting from the last dimension, negative
amounts crop. Constant padding is one node whose backward is the same op with the
amounts negated. The other modes gather along each padded dim with an index array
(one ``take`` per dim); their backward scatter-adds the gradient back with the
backend's ``index_add_rows`` kernel.
"""

from __future__ import annotations

import numbers

import numpy as np

from ember._backend import backend_of
from ember._C._core import Node, is_grad_enabled
from ember._ops._util import TensorBase, apply, wrap, xp_of

__all__ = ["pad"]


def _pairs(pad, ndim):
    """[(dim, before, after)] from PyTorch's flat pad list (last dim first)."""
    return [(ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


def _constant_pad_array(xp, x, pairs, value):
    # crop the negative amounts, then place the result in a block filled with value
    crop = [slice(None)] * x.ndim
    for d, lo, hi in pairs:
        crop[d] = slice(max(-lo, 0), x.shape[d] - max(-hi, 0))
    x = x[tuple(crop)]
    shape = list(x.shape)
    place = [slice(None)] * x.ndim
    for d, lo, hi in pairs:
        lo, hi = max(lo, 0), max(hi, 0)
        shape[d] += lo + hi
        place[d] = slice(lo, lo + x.shape[d])
    if all(p == slice(None) for p in place):
        return x.copy()
    out = xp.empty(tuple(shape), dtype=x.dtype)
    out.fill(value)
    out[tuple(place)] = x
    return out


class ConstantPad(Node):
    """Constant padding (negative amounts crop); its backward is itself, negated."""

    def forward(self, x, pairs, value):
        self.pairs = pairs
        return _constant_pad_array(xp_of(x), x, pairs, value)

    def backward(self, g):
        inverse = [(d, -lo, -hi) for d, lo, hi in self.pairs]
        if is_grad_enabled():
            return apply(ConstantPad, g, inverse, 0)
        ga = g._data
        return wrap(_constant_pad_array(xp_of(ga), ga, inverse, 0))


class GatherPad(Node):
    """Padding by index arrays, one per padded dim: ``x.take(index, axis=dim)``."""

    def forward(self, x, plan):
        self.plan = plan  # [(dim, index array, size of that dim before)]
        xp = xp_of(x)
        for d, idx, _ in plan:
            x = xp.take(x, idx, axis=d)
        return x

    def backward(self, g):
        if is_grad_enabled():
            from ember._ops.creation import zeros

            for d, idx, n in reversed(self.plan):
                shape = list(g.shape)
                shape[d] = n
                g = zeros(shape, dtype=g.dtype, device=g.device).index_add(d, wrap(idx), g)
            return g
        ga = g._data
        xp = xp_of(ga)
        add_rows = backend_of(ga).kernel("index_add_rows")
        for d, idx, n in reversed(self.plan):
            moved = xp.moveaxis(ga, d, 0)
            rest = moved.shape[1:]
            src = xp.ascontiguousarray(moved).reshape(moved.shape[0], -1)
            out = xp.zeros((n, src.shape[1]), dtype=ga.dtype)
            add_rows(out, idx, src)
            ga = xp.moveaxis(out.reshape((n,) + rest), 0, d)
        return wrap(xp.ascontiguousarray(ga))


_MODES = ("constant", "reflect", "replicate", "circular")
_SUPPORTED = (
    "\nSupported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _index_plan(xp, shape, pairs, mode):
    plan = []
    for k, (d, lo, hi) in enumerate(pairs):
        n = shape[d]
        if mode == "reflect":
            if lo >= n or hi >= n:
                raise RuntimeError(
                    f"Argument #{4 + 2 * k}: Padding size should be less than the "
                    f"corresponding input dimension, but got: padding ({lo}, {hi}) at "
                    f"dimension {d} of input {list(shape)}")
            i = np.abs(np.arange(-lo, n + hi))
            idx = (n - 1) - np.abs((n - 1) - i)
        elif mode == "replicate":
            idx = np.clip(np.arange(-lo, n + hi), 0, n - 1)
        else:  # circular: crop the negative amounts, then wrap around what is left
            if lo > n or hi > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            start, stop = max(-lo, 0), n - max(-hi, 0)
            m = stop - start
            if m <= 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension.")
            lo, hi = max(lo, 0), max(hi, 0)
            idx = start + np.arange(-lo, m + hi) % m
        if idx.shape[0] == n and bool((idx == np.arange(n)).all()):
            continue
        plan.append((d, xp.asarray(idx.astype(np.int64)), n))
    return plan


def pad(input, pad, mode="constant", value=None):
    """Pad ``input``.

    Args:
        input: the tensor to pad.
        pad: ``(left, right)`` amounts, starting from the last dimension and going
            backwards: ``(l_last, r_last, l_2nd_last, r_2nd_last, ...)``; negative
            amounts crop. At most ``2 * input.dim()`` entries; non-constant modes pad
            the last 1, 2 or 3 dims of a 2-3, 3-4 or 4-5 dimensional input.
        mode: ``'constant'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.
        value: the fill value of constant padding. Default: 0.

    Examples::

        >>> F.pad(ember.ones(1, 2), (1, 2), value=5.0)
        tensor([[5., 1., 1., 5., 5.]])
    """
    if not isinstance(input, TensorBase):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    pad = tuple(pad)
    for i, p in enumerate(pad):
        if isinstance(p, bool) or not isinstance(p, numbers.Integral):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(p).__name__} at pos {i}")
    pad = tuple(int(p) for p in pad)
    x = input._data
    ndim = x.ndim
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * ndim:
        raise RuntimeError(
            f"Padding length should be less than or equal to two times the input dimension "
            f"but got padding length {len(pad)} and input of dimension {ndim}")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pairs = _pairs(pad, ndim)
    if mode == "constant":
        for d, lo, hi in pairs:
            if x.shape[d] + min(lo, 0) + min(hi, 0) < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        return apply(ConstantPad, input, pairs, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor." + _SUPPORTED)
    if mode != "circular" and any(x.shape[d] == 0 for d in range(ndim - k - 1, ndim)):
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size "
            f"and other non-zero dimensions for input, but got: {list(x.shape)}")
    plan = _index_plan(xp_of(x), x.shape, pairs, mode)
    if not plan:
        return input.clone()
    return apply(GatherPad, input, plan)
