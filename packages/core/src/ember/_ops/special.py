"""The special functions of ``ember.special`` that are not elementwise basics: erfcx,
ndtr, ndtri, log_ndtr, the Bessel and Airy functions, i0..i1e, entr, sinc, xlogy,
xlog1py, zeta, polygamma, multigammaln, the incomplete gamma functions and the
orthogonal polynomials; forward and backward side by side.

The array kernels (float64, any array module) are in ``_special_gamma``,
``_special_bessel`` and ``_special_poly``; see the NOTEs there. Gradients are PyTorch's:
the Bessel, Airy and polynomial functions have none (their outputs do not require
grad), zeta and gammainc only with respect to their second argument.

This module's ``__all__`` holds the ``torch.*`` spellings (``ember.polygamma``,
``ember.igamma``, ``ember.i0`` ...); ``ember.special`` gives the rest their
``torch.special`` names.
"""

from __future__ import annotations

import math

import numpy as np

from ember import _dtype
from ember._C._core import Node, TensorBase, apply_inplace
from ember._ops import _special_bessel as _bessel
from ember._ops import _special_gamma as _gamma
from ember._ops import _special_poly as _poly
from ember._ops._operands import cast_error, inplace_binary, operands, run, to_float
from ember._ops._util import apply, ensure_float, not_implemented, xp_of
from ember._ops._util import with_out as _out
from ember._ops.unary import _defunary, _special_fn

__all__ = ["polygamma", "mvlgamma", "i0", "sinc", "xlogy", "igamma", "igammac"]

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _where(cond, a, b):
    from ember._ops.elementwise import where

    return where(cond, a, b)


# ---------------------------------------------------------------------------
# unary functions: rows in unary's table format

def _kernel(fn):
    return _special_fn(fn)


def _entr_fw(xp, x):
    with np.errstate(all="ignore"):
        xf = xp.asarray(x, dtype="float64")
        out = xp.where(xf > 0, -xf * xp.log(xp.where(xf > 0, xf, 1.0)),
                       xp.where(xf == 0, 0.0, -xp.inf))
        return xp.where(xp.isnan(xf), xf, out).astype(x.dtype, copy=False)


def _sinc_fw(xp, x):
    with np.errstate(all="ignore"):
        px = math.pi * x
        out = xp.sin(px) / px
        return xp.where(x == 0, 1, out).astype(x.dtype, copy=False)


def _sinc_grad(g, x, y):
    px = math.pi * x
    r = (px * px.cos() - px.sin()) / (px * x)
    r = _where(x == 0, 0, r)
    return g * (r.conj() if x.is_complex() else r)


def _i1_grad(g, x, y):
    # I1'(x) = I0(x) - I1(x) / x; 1/2 at 0
    safe = _where(x == 0, 1.0, x)
    return g * _where(x == 0, 0.5, i0(x) - y / safe)


def _i1e_grad(g, x, y):
    # (e^-|x| I1)' = e^-|x| I0 - e^-|x| I1 (sign(x) + 1/x); 1/2 at 0
    safe = _where(x == 0, 1.0, x)
    return g * _where(x == 0, 0.5, i0e(x) - y * (x.sign() + 1 / safe))


erfcx = _defunary("erfcx", _kernel(_gamma.erfcx),
                  lambda g, x, y: g * (2 * x * y - _TWO_OVER_SQRT_PI), "xy",
                  kernel="erfcx_cpu", complex_ok=False,
                  doc="The scaled complementary error function ``exp(x^2) erfc(x)``.")
ndtr = _defunary("ndtr", _kernel(_gamma.ndtr),
                 lambda g, x, y: g * (-0.5 * x * x).exp() / _SQRT_2PI, "x",
                 kernel="ndtr_cpu", complex_ok=False,
                 doc="The standard normal distribution function (the area under its density "
                     "from -inf to ``input``).")
ndtri = _defunary("ndtri", _kernel(_gamma.ndtri),
                  lambda g, x, y: g * _SQRT_2PI * (0.5 * y * y).exp(), "y",
                  kernel="ndtri_cpu", complex_ok=False,
                  doc="The inverse of :func:`ndtr`: the argument whose normal distribution "
                      "function is ``input``.")
log_ndtr = _defunary("log_ndtr", _kernel(_gamma.log_ndtr),
                     lambda g, x, y: g * (-0.5 * x * x - y).exp() / _SQRT_2PI, "xy",
                     kernel="log_ndtr_cpu", complex_ok=False,
                     doc="The logarithm of :func:`ndtr`, accurate in both tails.")
i0 = _defunary("i0", _kernel(_bessel.i0), lambda g, x, y: g * i1(x), "x",
               kernel="i0_cpu", complex_ok=False,
               doc="The modified Bessel function of the first kind of order 0.")
i0e = _defunary("i0e", _kernel(_bessel.i0e), lambda g, x, y: g * (i1e(x) - x.sign() * y),
                "xy", kernel="i0e_cpu", complex_ok=False,
                doc="The exponentially scaled modified Bessel function ``exp(-|x|) I0(x)``.")
i1 = _defunary("i1", _kernel(_bessel.i1), _i1_grad, "xy", kernel="i1_cpu", complex_ok=False,
               doc="The modified Bessel function of the first kind of order 1.")
i1e = _defunary("i1e", _kernel(_bessel.i1e), _i1e_grad, "xy", kernel="i1e_cpu",
                complex_ok=False,
                doc="The exponentially scaled modified Bessel function ``exp(-|x|) I1(x)``.")
entr = _defunary("entr", _entr_fw, lambda g, x, y: g * -(1 + x.log()), "x", kernel="entr_cpu",
                 complex_ok=False, doc="The elementwise entropy ``-x log(x)`` (0 at 0, "
                                       "-inf below 0).")
sinc = _defunary("sinc", _sinc_fw, _sinc_grad, "x", kernel="sinc_cpu",
                 doc="The normalized sinc function ``sin(pi x) / (pi x)`` (1 at 0).")


def _nodiff(name, fn, doc):
    return _defunary(name, _kernel(fn), kernel=f"{name}_cpu", complex_ok=False,
                     differentiable=False, doc=doc + " Not differentiable (as in PyTorch).")


bessel_j0 = _nodiff("bessel_j0", _bessel.j0, "The Bessel function of the first kind of order 0.")
bessel_j1 = _nodiff("bessel_j1", _bessel.j1, "The Bessel function of the first kind of order 1.")
bessel_y0 = _nodiff("bessel_y0", _bessel.y0,
                    "The Bessel function of the second kind of order 0 (-inf at 0).")
bessel_y1 = _nodiff("bessel_y1", _bessel.y1,
                    "The Bessel function of the second kind of order 1 (-inf at 0).")
modified_bessel_i0 = _nodiff("modified_bessel_i0", _bessel.i0,
                             "The modified Bessel function of the first kind of order 0.")
modified_bessel_i1 = _nodiff("modified_bessel_i1", _bessel.i1,
                             "The modified Bessel function of the first kind of order 1.")
modified_bessel_k0 = _nodiff("modified_bessel_k0", _bessel.k0,
                             "The modified Bessel function of the second kind of order 0.")
modified_bessel_k1 = _nodiff("modified_bessel_k1", _bessel.k1,
                             "The modified Bessel function of the second kind of order 1.")
scaled_modified_bessel_k0 = _nodiff(
    "scaled_modified_bessel_k0", _bessel.k0e,
    "The scaled modified Bessel function of the second kind of order 0, ``exp(x) K0(x)``.")
scaled_modified_bessel_k1 = _nodiff(
    "scaled_modified_bessel_k1", _bessel.k1e,
    "The scaled modified Bessel function of the second kind of order 1, ``exp(x) K1(x)``.")
spherical_bessel_j0 = _nodiff("spherical_bessel_j0", _bessel.spherical_j0,
                              "The spherical Bessel function of the first kind of order 0.")
airy_ai = _nodiff("airy_ai", _bessel.airy_ai, "Airy's function Ai.")


# ---------------------------------------------------------------------------
# binary functions

def _pair(name, input, other, kinds="biuf"):
    """Both operands as tensors of their common floating dtype."""
    a, b = operands(input, other, name)
    dt = a._data.dtype if isinstance(a, TensorBase) else b._data.dtype
    if dt.kind not in kinds:
        raise not_implemented(f"{name}_cpu", dt)
    ref = a if isinstance(a, TensorBase) else b
    from ember._ops.creation import tensor

    if not isinstance(a, TensorBase):
        a = tensor(a, dtype=_dtype.from_numpy(dt), device=ref.device)
    if not isinstance(b, TensorBase):
        b = tensor(b, dtype=_dtype.from_numpy(dt), device=ref.device)
    return ensure_float(a), ensure_float(b)


class _Binary(Node):
    """``kernel(xp, a, b)`` in float64, cast back to the operands' dtype."""

    kernel = None
    saves_inputs = (0, 1)

    def forward(self, a, b):
        xp = xp_of(a)
        with np.errstate(all="ignore"):
            return type(self).kernel(xp, a, b).astype(a.dtype, copy=False)


def _xlogy_kernel(xp, x, y):
    x64, y64 = xp.asarray(x, dtype="float64"), xp.asarray(y, dtype="float64")
    out = x64 * xp.log(y64)
    return xp.where((x64 == 0) & ~xp.isnan(y64), 0.0, out)


def _xlog1py_kernel(xp, x, y):
    x64, y64 = xp.asarray(x, dtype="float64"), xp.asarray(y, dtype="float64")
    out = x64 * xp.log1p(y64)
    return xp.where((x64 == 0) & ~xp.isnan(y64), 0.0, out)


class Xlogy(_Binary):
    kernel = staticmethod(_xlogy_kernel)

    def backward(self, g):
        x, y = self.saved_tensors
        need = self.needs_input_grad
        gx = g * y.log() if need[0] else None
        gy = g * x / y if need[1] else None
        return gx, gy


class Xlog1py(_Binary):
    kernel = staticmethod(_xlog1py_kernel)

    def backward(self, g):
        x, y = self.saved_tensors
        need = self.needs_input_grad
        gx = g * y.log1p() if need[0] else None
        gy = g * x / (y + 1) if need[1] else None
        return gx, gy


def _no_derivative(what):
    return NotImplementedError(f"the derivative for '{what}' is not implemented.")


class Zeta(_Binary):
    kernel = staticmethod(_gamma.zeta)

    def backward(self, g):
        x, q = self.saved_tensors
        need = self.needs_input_grad
        if need[0]:
            raise _no_derivative("zeta")
        # d/dq zeta(x, q) = -x zeta(x + 1, q)
        return None, g * -x * zeta(x + 1, q)


class Igamma(_Binary):
    kernel = staticmethod(_gamma.gammainc)
    sign = 1.0
    what = "igamma: input"

    def backward(self, g):
        a, x = self.saved_tensors
        need = self.needs_input_grad
        if need[0]:
            raise _no_derivative(type(self).what)
        # d/dx P(a, x) = x^(a-1) exp(-x) / Gamma(a)
        from ember._ops.unary import lgamma

        dens = ((a - 1) * x.log() - x - lgamma(a)).exp()
        return None, g * type(self).sign * dens


class Igammac(Igamma):
    kernel = staticmethod(_gamma.gammaincc)
    sign = -1.0
    what = "igammac: input"


def _binary_fn(cls, name, doc):
    def op(input, other, *, out=None):
        a, b = _pair(name, input, other)
        return _out(run(cls, a, b), out)

    def inplace(self, other):
        if self._data.dtype.kind in "biu":
            raise cast_error(to_float(self._data.dtype), self._data.dtype)
        _pair(name, self, other)
        if not isinstance(other, TensorBase):
            from ember._ops.creation import tensor

            other = tensor(other, dtype=_dtype.from_numpy(self._data.dtype), device=self.device)
        return inplace_binary(cls, self, ensure_float(other))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    op.inplace = inplace
    inplace.__name__ = name + "_"
    return op


xlogy = _binary_fn(Xlogy, "xlogy", """``input * log(other)``, 0 where ``input`` is 0 (unless
    ``other`` is nan). Either argument may be a number.""")
xlog1py = _binary_fn(Xlog1py, "xlog1py", """``input * log1p(other)``, 0 where ``input`` is 0
    (unless ``other`` is nan). Either argument may be a number.""")
zeta = _binary_fn(Zeta, "zeta", """Hurwitz's zeta function ``sum_k (k + other)^-input``
    (Riemann's for ``other == 1``). Differentiable only in ``other``.""")
igamma = _binary_fn(Igamma, "igamma", """The regularized lower incomplete gamma function
    ``P(input, other)`` (``torch.special.gammainc``). Differentiable only in ``other``.""")
igammac = _binary_fn(Igammac, "igammac", """The regularized upper incomplete gamma function
    ``Q(input, other) = 1 - P(input, other)``. Differentiable only in ``other``.""")
gammainc, gammaincc = igamma, igammac


# ---------------------------------------------------------------------------
# polygamma and multigammaln

class Polygamma(Node):
    saves_inputs = (0,)

    def forward(self, x, n):
        self.n = n
        with np.errstate(all="ignore"):
            return _gamma.polygamma(xp_of(x), n, x).astype(x.dtype, copy=False)

    def backward(self, g):
        (x,) = self.saved_tensors
        return g * polygamma(self.n + 1, x)


def _check_polygamma(n, t):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if t._data.dtype.kind == "c":
        raise not_implemented("polygamma", t._data.dtype)


def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of the digamma function at ``input`` (n >= 0).

    Args:
        n (int): the order of the derivative.
        input (Tensor): the argument.

    Examples::

        >>> ember.special.polygamma(1, ember.tensor([1.0, 0.5]))
        tensor([1.6449, 4.9348])
    """
    _check_polygamma(n, input)
    return _out(apply(Polygamma, ensure_float(input), int(n)), out)


def _polygamma_method(self, n):
    return polygamma(n, self)


def _polygamma_(self, n):
    _check_polygamma(n, self)
    if self._data.dtype.kind in "biu":
        raise cast_error(to_float(self._data.dtype), self._data.dtype)
    return apply_inplace(Polygamma, self, int(n))


def _check_mvlgamma(p):
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not "
                        f"{type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``:
    ``p (p - 1) / 4 log(pi) + sum_{i<p} lgamma(input - i / 2)``.

    As in PyTorch 2.13, the domain ``input > (p - 1) / 2`` is not checked: outside it the
    sum of lgamma values is returned (inf at the poles). Integer inputs compute in the
    default float dtype.

    Args:
        input (Tensor): the argument.
        p (int): the number of dimensions.
    """
    _check_mvlgamma(p)
    if input._data.dtype.kind == "c":
        raise not_implemented("mvlgamma", input._data.dtype)
    from ember._ops.unary import lgamma

    input = ensure_float(input)
    total = lgamma(input)
    for i in range(1, int(p)):
        total = total + lgamma(input - i / 2)
    return _out(total + p * (p - 1) / 4 * math.log(math.pi), out)


def _mvlgamma_(self, p):
    if self._data.dtype.kind in "biu":
        raise cast_error(to_float(self._data.dtype), self._data.dtype)
    result = mvlgamma(self, p)
    with _no_grad():
        self._data[...] = result._data
    self._bump_version()
    return self


def _no_grad():
    from ember.autograd.grad_mode import no_grad

    return no_grad()


multigammaln = mvlgamma


# ---------------------------------------------------------------------------
# orthogonal polynomials: (input, n), not differentiable

class _Polynomial(Node):
    differentiable = False
    kernel = None

    def forward(self, x, n):
        with np.errstate(all="ignore"):
            return type(self).kernel(xp_of(x), x, n).astype(x.dtype, copy=False)


def _shifted(fn):
    return lambda xp, x, n: fn(xp, xp.asarray(x, dtype="float64") * 2.0 - 1.0, n)


def _polynomial(name, kernel, doc):
    cls = type("".join(p.capitalize() for p in name.split("_")), (_Polynomial,),
               {"kernel": staticmethod(kernel)})

    def op(input, n, *, out=None):
        a, b = _pair(name, input, n)
        return _out(run(cls, a, b), out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc + """

    Args:
        input (Tensor or Number): the argument ``x``.
        n (Tensor or Number): the degree (truncated to an integer; 0 for n < 0).

    Not differentiable (as in PyTorch)."""
    return op


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", _poly.chebyshev_t,
                                     "The Chebyshev polynomial of the first kind T_n(x).")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", _poly.chebyshev_u,
                                     "The Chebyshev polynomial of the second kind U_n(x).")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", _poly.chebyshev_v,
                                     "The Chebyshev polynomial of the third kind V_n(x).")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", _poly.chebyshev_w,
                                     "The Chebyshev polynomial of the fourth kind W_n(x).")
shifted_chebyshev_polynomial_t = _polynomial(
    "shifted_chebyshev_polynomial_t", _shifted(_poly.chebyshev_t),
    "The shifted Chebyshev polynomial of the first kind T*_n(x) = T_n(2x - 1).")
shifted_chebyshev_polynomial_u = _polynomial(
    "shifted_chebyshev_polynomial_u", _shifted(_poly.chebyshev_u),
    "The shifted Chebyshev polynomial of the second kind U*_n(x) = U_n(2x - 1).")
shifted_chebyshev_polynomial_v = _polynomial(
    "shifted_chebyshev_polynomial_v", _shifted(_poly.chebyshev_v),
    "The shifted Chebyshev polynomial of the third kind V*_n(x) = V_n(2x - 1).")
shifted_chebyshev_polynomial_w = _polynomial(
    "shifted_chebyshev_polynomial_w", _shifted(_poly.chebyshev_w),
    "The shifted Chebyshev polynomial of the fourth kind W*_n(x) = W_n(2x - 1).")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", _poly.hermite_h,
                                   "The physicists' Hermite polynomial H_n(x).")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", _poly.hermite_he,
                                    "The probabilists' Hermite polynomial He_n(x).")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", _poly.laguerre_l,
                                    "The Laguerre polynomial L_n(x).")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", _poly.legendre_p,
                                    "The Legendre polynomial P_n(x).")


# ---------------------------------------------------------------------------
# Tensor methods

METHODS = {
    "polygamma": _polygamma_method, "polygamma_": _polygamma_,
    "mvlgamma": mvlgamma, "mvlgamma_": _mvlgamma_,
    "i0": i0, "i0_": i0.inplace, "sinc": sinc, "sinc_": sinc.inplace,
    "xlogy": xlogy, "xlogy_": xlogy.inplace,
    "igamma": igamma, "igamma_": igamma.inplace, "igammac": igammac, "igammac_": igammac.inplace,
}
