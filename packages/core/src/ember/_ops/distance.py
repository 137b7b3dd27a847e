"""Distances and norms between tensors: ``cdist``, ``dist`` and ``renorm``.

``cdist`` is an op of its own (the pairwise differences would be a large intermediate for
autograd to keep): PyTorch's two algorithms, the direct one and, for the Euclidean
distance of many points, the one through a matrix product, each with its backward.
``dist`` and ``renorm`` are compositions of norms and arithmetic, as in PyTorch.
``torch.pdist`` is ``ember.nn.functional.pdist``, re-exported by ``ember``.
"""

from __future__ import annotations

import math

import numpy as np

from ember import _dtype
from ember._C._core import Node
from ember._ops._util import TensorBase, apply, scalar_value, type_name, wrap_dim, xp_of
from ember._ops._util import with_out as _out

__all__ = ["cdist", "dist", "renorm"]

_COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}


def _need_tensor(name, x, arg, pos):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


# ---------------------------------------------------------------------------
# cdist

class EuclideanDist(Node):
    """Euclidean distances through one matrix product, as PyTorch's ``_euclidean_dist``:
    ``sqrt(max(|a|^2 + |b|^2 - 2 a.b, 0))``; the gradient is 0 where the distance is 0."""

    saves_inputs = (0, 1)
    saves_output = True

    def forward(self, x1, x2):
        xp = xp_of(x1)
        n1 = (x1 * x1).sum(-1, keepdims=True)
        n2 = (x2 * x2).sum(-1, keepdims=True)
        a = xp.concatenate([x1 * -2, n1, xp.ones_like(n1)], axis=-1)
        b = xp.concatenate([x2, xp.ones_like(n2), n2], axis=-1)
        r = xp.matmul(a, xp.swapaxes(b, -1, -2))
        return xp.sqrt(xp.maximum(r, 0))

    def backward(self, g):
        x1, x2, res = self.saved_tensors
        ratio = (g / res).masked_fill(res == 0, 0)
        need = self.needs_input_grad
        g1 = x1 * ratio.sum(-1, keepdim=True) - ratio.matmul(x2) if need[0] else None
        g2 = x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT.matmul(x1) if need[1] else None
        return g1, g2


class Cdist(Node):
    """The ``p``-norm distances ``||x1[i] - x2[j]||_p`` of all pairs of rows, directly."""

    saves_inputs = (0, 1)
    saves_output = True

    def forward(self, x1, x2, p):
        xp = xp_of(x1)
        self.p = p
        with np.errstate(all="ignore"):
            d = x1[..., :, None, :] - x2[..., None, :, :]
            if d.shape[-1] == 0:
                return xp.zeros(d.shape[:-1], dtype=x1.dtype)
            a = xp.abs(d)
            if p == 0:  # PyTorch's min(ceil(|d|), 1): nan stays nan
                return xp.minimum(xp.ceil(a), 1).sum(-1)
            if p == 1:
                return a.sum(-1)
            if p == 2:
                return xp.sqrt((d * d).sum(-1))
            if math.isinf(p):  # PyTorch's running max from 0 passes over nan
                return xp.where(xp.isnan(a), 0, a).max(-1)
            return (a ** p).sum(-1) ** (1.0 / p)

    def backward(self, g):
        # PyTorch's _cdist_backward, in recorded ops (so that it can be differentiated too)
        from ember._ops.creation import zeros_like
        from ember._ops.elementwise import where

        x1, x2, res = self.saved_tensors
        need = self.needs_input_grad
        d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        gg, rr, p = g.unsqueeze(-1), res.unsqueeze(-1), self.p
        if p == 0 or d._data.shape[-1] == 0:
            w = zeros_like(d)
        elif p == 1:
            w = gg * d.sign()
        elif p == 2:
            w = where(rr == 0, 0, gg * d / rr)
        elif math.isinf(p):
            w = gg * d.sign() * (d.abs() == rr)
        elif p < 2:
            w = where(rr == 0, 0, d.sign() * d.abs() ** (p - 1) * gg / rr ** (p - 1))
            if p < 1:
                w = where(d == 0, 0, w)
        else:
            w = where(rr == 0, 0, d * d.abs() ** (p - 2) * gg / rr ** (p - 1))
        return (w.sum(-2) if need[0] else None), (-w.sum(-3) if need[1] else None)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """cdist(x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary') -> Tensor

    The ``p``-norm distance between each row of ``x1`` (``(B..., P, M)``) and each row
    of ``x2`` (``(B..., R, M)``), shape ``(B..., P, R)`` (batch dims broadcast).
    ``compute_mode`` chooses, for ``p == 2``, between the direct computation and a faster
    one through a matrix product (used by default when ``P > 25`` or ``R > 25``), as in
    PyTorch.

    Examples::

        >>> ember.cdist(ember.tensor([[0., 0.], [1., 1.]]), ember.tensor([[3., 4.]]))
        tensor([[5.0000],
                [3.6056]])
    """
    _need_tensor("cdist", x1, "x1", 1)
    _need_tensor("cdist", x2, "x2", 2)
    mode = _COMPUTE_MODES.get(compute_mode)
    if mode is None:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, t in (("X1", x1), ("X2", x2)):
        if t._data.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{t._data.ndim}D")
        if t._data.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{type_name(t._data.dtype)}")
    c1, c2 = x1._data.shape[-1], x2._data.shape[-1]
    if c1 != c2:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}")
    if x1._data.dtype != x2._data.dtype:
        raise RuntimeError(f"expected scalar type {type_name(x1._data.dtype)} but found "
                           f"{type_name(x2._data.dtype)}")
    p = float(scalar_value(p))
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = np.broadcast_shapes(x1._data.shape[:-2], x2._data.shape[:-2])
    r1, r2 = x1._data.shape[-2], x2._data.shape[-2]
    x1 = x1.expand(*batch, r1, c1) if x1._data.shape[:-2] != batch else x1
    x2 = x2.expand(*batch, r2, c2) if x2._data.shape[:-2] != batch else x2
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))) and r1 and r2 and c1:
        return apply(EuclideanDist, x1, x2)
    return apply(Cdist, x1, x2, p)


# ---------------------------------------------------------------------------
# dist, renorm

def dist(input, other, p=2):
    """dist(input, other, p=2) -> Tensor

    The ``p``-norm of ``input - other`` (broadcast), as a 0-dim tensor.

    Examples::

        >>> ember.dist(ember.tensor([0., 0.]), ember.tensor([3., 4.]))
        tensor(5.)
    """
    _need_tensor("dist", input, "input", 1)
    _need_tensor("dist", other, "other", 2)
    rt = _dtype.result_type(input, other).numpy
    if rt.kind not in "fc":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {type_name(rt)} instead.")
    from ember.linalg import vector_norm

    return vector_norm(input - other, scalar_value(p))


def _renorm_factor(input, p, dim, maxnorm):
    from ember.linalg import vector_norm

    for name, v in (("p", p), ("maxnorm", maxnorm)):
        if isinstance(scalar_value(v), complex):
            raise RuntimeError(f"renorm: {name} must be real-valued")
    p, maxnorm = float(scalar_value(p)), float(scalar_value(maxnorm))
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    nd = input._data.ndim
    if nd <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {nd} dimensions")
    d = wrap_dim(dim, nd)
    dims = tuple(k for k in range(nd) if k != d)
    acc = _dtype.float32 if input._data.dtype == np.float16 else None
    norm = vector_norm(input, p, dims, True, dtype=acc)
    from ember._ops.elementwise import where

    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    real = input._data.real.dtype if input._data.dtype.kind == "c" else input._data.dtype
    return factor if factor._data.dtype == real else factor.to(real)


def renorm(input, p, dim, maxnorm, *, out=None):
    """renorm(input, p, dim, maxnorm, *, out=None) -> Tensor

    ``input`` with each sub-tensor along ``dim`` (``input.select(dim, i)``) whose
    ``p``-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm``; the others unchanged.

    Examples::

        >>> ember.renorm(ember.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1)
        tensor([[0.6000, 0.8000],
                [0.3000, 0.4000]])
    """
    _need_tensor("renorm", input, "input", 1)
    return _out(input * _renorm_factor(input, p, dim, maxnorm), out)


def _renorm_(self, p, dim, maxnorm):
    from ember._C._core import is_grad_enabled

    if is_grad_enabled() and self.requires_grad:
        # the scale depends on self's old values: computed from a copy, which backward reads
        return self.copy_(renorm(self.clone(), p, dim, maxnorm))
    return self.mul_(_renorm_factor(self, p, dim, maxnorm))


METHODS = {"dist": dist, "renorm": renorm, "renorm_": _renorm_}
