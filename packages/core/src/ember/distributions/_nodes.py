"""Private differentiable ops of ember.distributions: reparameterized gamma draws and
the Cholesky factor and triangular solve that MultivariateNormal needs (ember.linalg
lives on another branch; these are NumPy's batched routines)."""

from __future__ import annotations

import numpy as np

import ember
from ember._backend import backend_of
from ember._C._core import Node
from ember._ops import _special_gamma
from ember._ops._util import apply, xp_of
from ember._ops.random import _generator


class StandardGamma(Node):
    """Gamma(alpha, 1) draws; the gradient in alpha is the implicit reparameterization
    ``dx/dalpha = -(dP(alpha, x)/dalpha) / p(x; alpha)`` (P by central differences of the
    float64 incomplete gamma kernel), computed only when a backward asks for it."""

    def forward(self, alpha, rng):
        host = backend_of(alpha).to_numpy(alpha).astype(np.float64)
        x = np.maximum(rng.standard_gamma(host), np.finfo(alpha.dtype).tiny)
        self.host_alpha, self.host_x, self.dtype = host, x, alpha.dtype
        return xp_of(alpha).asarray(x.astype(alpha.dtype))

    def backward(self, g):
        from ember._ops import _special

        a, x = self.host_alpha, self.host_x
        h = np.minimum(1e-5 * np.maximum(a, 1.0), 0.5 * a)
        with np.errstate(all="ignore"):
            dp = (_special_gamma.gammainc(np, a + h, x)
                  - _special_gamma.gammainc(np, a - h, x)) / (2 * h)
            log_pdf = (a - 1) * np.log(x) - x - _special.lgamma(np, a)
            dx = -dp / np.exp(log_pdf)
        dx = np.where(np.isfinite(dx), dx, 0.0).astype(self.dtype)
        return g * ember.tensor(dx, device=g.device), None


def standard_gamma(alpha):
    """Differentiable Gamma(alpha, 1) samples of alpha's shape."""
    rng = _generator(None, alpha.device)._rng
    return apply(StandardGamma, alpha, rng)


class Cholesky(Node):
    """The lower Cholesky factor of a batch of symmetric positive-definite matrices."""

    saves_output = True

    def forward(self, a):
        xp = xp_of(a)
        try:
            return xp.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            raise RuntimeError("cholesky: The factorization could not be completed because "
                               "the input is not positive-definite.") from None

    def backward(self, g):
        (lower,) = self.saved_tensors
        # A = L L^T: gA = L^-T Phi(L^T gL) L^-1 symmetrized, Phi: lower triangle, half diagonal
        p = lower.transpose(-2, -1) @ g
        p = p.tril() - 0.5 * p.diagonal(dim1=-2, dim2=-1).diag_embed()
        y = solve_lower(lower, p, transpose=True)                      # L^-T P
        s = solve_lower(lower, y.transpose(-2, -1), transpose=True).transpose(-2, -1)  # Y L^-1
        return 0.5 * (s + s.transpose(-2, -1))


class SolveLower(Node):
    """``X`` with ``L X = B`` (or ``L^T X = B``) for lower-triangular L (batched)."""

    saves_inputs = (0,)
    saves_output = True

    def forward(self, lower, b, transpose):
        self.transpose = transpose
        xp = xp_of(lower)
        m = xp.swapaxes(lower, -1, -2) if transpose else xp.tril(lower)
        shape = np.broadcast_shapes(m.shape[:-2], b.shape[:-2])
        m = xp.broadcast_to(m, shape + m.shape[-2:])
        rhs = xp.broadcast_to(b, shape + b.shape[-2:])
        return xp.linalg.solve(m, rhs)

    def backward(self, g):
        lower, x = self.saved_tensors
        gb = solve_lower(lower, g, transpose=not self.transpose)
        if self.transpose:  # L^T X = B: gL = -(X gB^T), lower part
            gl = -(x @ gb.transpose(-2, -1)).tril()
        else:
            gl = -(gb @ x.transpose(-2, -1)).tril()
        return gl, gb, None


def solve_lower(lower, b, transpose=False):
    """Solve ``L X = B`` (``L^T X = B`` with ``transpose``) for lower-triangular ``L``."""
    return apply(SolveLower, lower, b, bool(transpose))


def cholesky(a):
    """The lower Cholesky factor of ``a`` (batched), differentiable."""
    return apply(Cholesky, a)
