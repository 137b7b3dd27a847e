"""Array kernels for the Bessel and Airy functions of ``ember.special``.

Like ``_special``, they work on any array module ``xp`` with whole-array operations,
compute in float64 and return float64.

NOTE [ Bessel kernels ]
The modified functions I0 and I1 sum their power series (all terms positive, no
cancellation) up to |x| = 20 and use Hankel's asymptotic series beyond (its smallest
term there is about exp(-2|x|) < 1e-17). K0 and K1 sum their series (with the
logarithm) below 1 and, above, integrate ``K_v(x) = int_0^inf exp(-x cosh t) cosh(v t) dt``
with the trapezoidal rule, which converges geometrically for this entire, rapidly
decaying integrand (step 0.1: errors far below 1e-16).

J_v and Y_v (v = 0, 1 and +-1/3 for Airy's function) use Bessel's integrals for
``x <= 25``:
``J_v(x) = 1/pi int_0^pi cos(v t - x sin t) dt - sin(v pi)/pi int_0^inf exp(-x sinh t - v t) dt``
and ``Y_v(x) = 1/pi int_0^pi sin(x sin t - v t) dt
- 1/pi int_0^inf (exp(v t) + exp(-v t) cos(v pi)) exp(-x sinh t) dt``, by Gauss-Legendre
quadrature (96 nodes on [0, pi], 64 on the truncated tail range); Y0 and Y1 sum their
series below 2, where the tail integral decays slowly. Beyond 25 Hankel's asymptotic
expansions are used. The absolute error is a few times 1e-16 (relative, away from the
zeros of J and Y).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["i0", "i0e", "i1", "i1e", "k0", "k0e", "k1", "k1e", "j0", "j1", "y0", "y1",
           "airy_ai", "spherical_j0"]

_EULER = 0.5772156649015329
_SERIES_MAX = 20.0


def _f64(xp, x):
    return xp.asarray(x, dtype="float64")


def _i_series(xp, x, nu):
    """I_nu(x) for nu in (0, 1) by its power series (|x| <= 20)."""
    h = (x / 2.0) ** 2
    term = xp.ones_like(x) if nu == 0 else x / 2.0
    total = term
    for k in range(1, 64):
        term = term * h / (k * (k + nu))
        total = total + term
    return total


def _hankel_i_scaled(xp, ax, nu):
    """exp(-x) I_nu(x) for large x > 0, by Hankel's asymptotic series."""
    mu = 4.0 * nu * nu
    term = xp.ones_like(ax)
    total = term
    for k in range(1, 40):
        term = term * -(mu - (2 * k - 1) ** 2) / (k * 8.0 * ax)
        total = total + term
    return total / xp.sqrt(2.0 * math.pi * ax)


def _i_scaled(xp, x, nu):
    """exp(-|x|) I_nu(x) for nu in (0, 1)."""
    x = _f64(xp, x)
    ax = xp.abs(x)
    small = ax <= _SERIES_MAX
    xs = xp.where(small, x, 0.0)
    ser = _i_series(xp, xs, nu) * xp.exp(-xp.abs(xs))
    big = _hankel_i_scaled(xp, xp.where(small, _SERIES_MAX, ax), nu)
    if nu == 1:
        big = xp.where(x < 0, -big, big)
    out = xp.where(small, ser, big)
    return xp.where(xp.isnan(x), x, out)


def i0e(xp, x):
    """The exponentially scaled modified Bessel function ``exp(-|x|) I0(x)``."""
    return _i_scaled(xp, x, 0)


def i1e(xp, x):
    """The exponentially scaled modified Bessel function ``exp(-|x|) I1(x)``."""
    return _i_scaled(xp, x, 1)


def i0(xp, x):
    """The modified Bessel function of the first kind of order 0 (inf beyond ~713)."""
    x = _f64(xp, x)
    ax = xp.abs(x)
    s = i0e(xp, x)
    # exp(|x|) would overflow before I0 does: multiply in two halves
    half = xp.exp(ax / 2.0)
    return s * half * half


def i1(xp, x):
    """The modified Bessel function of the first kind of order 1."""
    x = _f64(xp, x)
    half = xp.exp(xp.abs(x) / 2.0)
    return i1e(xp, x) * half * half


# K0, K1: the trapezoidal rule on the scaled integrand exp(-x (cosh t - 1)) cosh(v t),
# with a step that follows the integrand's width (about 1 / sqrt(x) for large x)
_K_COUNT = 80


def _k_scaled_integral(xp, x, nu):
    """exp(x) K_nu(x) for x >= 0.9 by the trapezoidal rule."""
    shape = x.shape
    xf = x.reshape(-1, 1)
    step = xp.minimum(0.1, 0.3 / xp.sqrt(xf))
    t = xp.arange(_K_COUNT, dtype="float64") * step
    f = xp.exp(-xf * (xp.cosh(t) - 1.0))
    if nu:
        f = f * xp.cosh(nu * t)
    total = (f.sum(-1) - 0.5 * f[:, 0]) * step[:, 0]
    return total.reshape(shape)


def _k_series(xp, x, nu):
    """K_nu(x), nu in (0, 1), for 0 < x <= 1, by the series with the logarithm."""
    h = (x / 2.0) ** 2
    lg = xp.log(x / 2.0)
    if nu == 0:
        # K0 = -(log(x/2) + gamma) I0 + sum_k H_k h^k / k!^2
        term = xp.ones_like(x)
        i0s = term
        total = xp.zeros_like(x)
        harmonic = 0.0
        for k in range(1, 30):
            term = term * h / (k * k)
            harmonic += 1.0 / k
            i0s = i0s + term
            total = total + harmonic * term
        return -(lg + _EULER) * i0s + total
    # K1 = 1/x + log(x/2) I1 - x/4 sum_k (psi(k+1) + psi(k+2)) h^k / (k! (k+1)!)
    term = x / 2.0
    i1s = term
    psi_sum = -2.0 * _EULER + 1.0  # psi(1) + psi(2)
    total = psi_sum * xp.ones_like(x)
    coef = xp.ones_like(x)
    for k in range(1, 30):
        term = term * h / (k * (k + 1))
        i1s = i1s + term
        coef = coef * h / (k * (k + 1))
        psi_sum += 1.0 / k + 1.0 / (k + 1)
        total = total + psi_sum * coef
    return 1.0 / x + lg * i1s - x / 4.0 * total


def _k_scaled(xp, x, nu):
    """exp(x) K_nu(x): inf at 0, nan below 0."""
    x = _f64(xp, x)
    small = x <= 1.0
    xs = xp.where(small & (x > 0), x, 1.0)
    ser = _k_series(xp, xs, nu) * xp.exp(xs)
    xb = xp.where(small, 1.0, xp.where(xp.isfinite(x), x, 1.0))
    big = _k_scaled_integral(xp, xb, nu)
    big = xp.where(xp.isinf(x) & (x > 0), 0.0, big)
    out = xp.where(small, ser, big)
    out = xp.where(x == 0, xp.inf, out)
    out = xp.where(x < 0, xp.nan, out)
    return xp.where(xp.isnan(x), x, out)


def k0e(xp, x):
    """The exponentially scaled modified Bessel function of the second kind ``exp(x) K0(x)``."""
    return _k_scaled(xp, x, 0)


def k1e(xp, x):
    """The exponentially scaled modified Bessel function of the second kind ``exp(x) K1(x)``."""
    return _k_scaled(xp, x, 1)


def k0(xp, x):
    """The modified Bessel function of the second kind of order 0."""
    x = _f64(xp, x)
    return k0e(xp, x) * xp.exp(-xp.where(x > 0, x, 0.0))


def k1(xp, x):
    """The modified Bessel function of the second kind of order 1."""
    x = _f64(xp, x)
    return k1e(xp, x) * xp.exp(-xp.where(x > 0, x, 0.0))


# J and Y: Bessel's integrals by Gauss-Legendre quadrature up to x = 25, Hankel beyond
_JY_MAX = 25.0
_GL_THETA = np.polynomial.legendre.leggauss(96)
_GL_TAIL = np.polynomial.legendre.leggauss(64)


def _gl(nodes, a, b):
    """Gauss-Legendre nodes and weights mapped to [a, b] (b may be an array column)."""
    z, w = nodes
    half = (b - a) / 2.0
    return a + half * (z + 1.0), half * w


def _jy_integrals(xp, x, nu):
    """(J_nu(x), Y_nu(x)) for 0 < x <= 25 by Bessel's integrals."""
    shape = x.shape
    xf = x.reshape(-1, 1)
    theta, wt = _gl(_GL_THETA, 0.0, math.pi)
    theta, wt = xp.asarray(theta), xp.asarray(wt)
    phase = xf * xp.sin(theta) - nu * theta
    j_main = (xp.cos(phase) @ wt) / math.pi
    y_main = (xp.sin(phase) @ wt) / math.pi
    # the tail integrals: exp(-x sinh t) is below 1e-18 beyond x sinh t = 42 + |nu| t
    top = xp.arcsinh(45.0 / xf)
    z, w = _GL_TAIL
    z, w = xp.asarray(z), xp.asarray(w)
    t = top / 2.0 * (z + 1.0)
    wt_t = top / 2.0 * w
    decay = xp.exp(-xf * xp.sinh(t))
    y_tail = ((xp.exp(nu * t) + xp.exp(-nu * t) * math.cos(nu * math.pi)) * decay * wt_t).sum(-1)
    j = j_main
    if nu != int(nu):
        j = j - math.sin(nu * math.pi) / math.pi * (xp.exp(-nu * t) * decay * wt_t).sum(-1)
    y = y_main - y_tail / math.pi
    return j.reshape(shape), y.reshape(shape)


def _jy_hankel(xp, x, nu):
    """(J_nu(x), Y_nu(x)) for large x > 0 by Hankel's asymptotic expansions."""
    mu = 4.0 * nu * nu
    p = xp.ones_like(x)
    q = xp.zeros_like(x)
    term = xp.ones_like(x)
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        if k % 2:
            q = q + (term if k % 4 == 1 else -term)
        else:
            p = p + (-term if k % 4 == 2 else term)
    # chi = x - (nu / 2 + 1/4) pi; cos and sin of x itself keep their precision
    c = (nu / 2.0 + 0.25) * math.pi
    cx, sx = xp.cos(x), xp.sin(x)
    cos_chi = cx * math.cos(c) + sx * math.sin(c)
    sin_chi = sx * math.cos(c) - cx * math.sin(c)
    amp = xp.sqrt(2.0 / (math.pi * x))
    j = amp * (p * cos_chi - q * sin_chi)
    y = amp * (p * sin_chi + q * cos_chi)
    return j, y


def _jy(xp, x, nu):
    """(J_nu(x), Y_nu(x)) for x > 0 (other values are the callers' business)."""
    big = x > _JY_MAX
    xs = xp.where(big | ~(x > 0), 1.0, x)
    js, ys = _jy_integrals(xp, xs, nu)
    xb = xp.where(big & xp.isfinite(x), x, 2.0 * _JY_MAX)
    jb, yb = _jy_hankel(xp, xb, nu)
    j = xp.where(big, jb, js)
    y = xp.where(big, yb, ys)
    inf = xp.isinf(x)  # nan at infinity, as Cephes and PyTorch
    return xp.where(inf, xp.nan, j), xp.where(inf, xp.nan, y)


def j0(xp, x):
    """The Bessel function of the first kind of order 0."""
    x = _f64(xp, x)
    ax = xp.abs(x)
    j, _ = _jy(xp, ax, 0)
    return xp.where(ax == 0, 1.0, xp.where(xp.isnan(x), x, j))


def j1(xp, x):
    """The Bessel function of the first kind of order 1 (odd)."""
    x = _f64(xp, x)
    ax = xp.abs(x)
    j, _ = _jy(xp, ax, 1)
    j = xp.where(x < 0, -j, j)
    return xp.where(ax == 0, x * 0.0, xp.where(xp.isnan(x), x, j))


def _y_series(xp, x, nu):
    """Y0 or Y1 for 0 < x <= 2 by their series with the logarithm."""
    h = (x / 2.0) ** 2
    lg = xp.log(x / 2.0)
    if nu == 0:
        term = xp.ones_like(x)
        j0s = term
        total = xp.zeros_like(x)
        harmonic = 0.0
        for k in range(1, 30):
            term = term * -h / (k * k)
            harmonic += 1.0 / k
            j0s = j0s + term
            total = total - harmonic * term
        return 2.0 / math.pi * ((lg + _EULER) * j0s + total)
    term = x / 2.0
    j1s = term
    coef = xp.ones_like(x)
    psi_sum = -2.0 * _EULER + 1.0
    total = psi_sum * coef
    for k in range(1, 30):
        term = term * -h / (k * (k + 1))
        j1s = j1s + term
        coef = coef * -h / (k * (k + 1))
        psi_sum += 1.0 / k + 1.0 / (k + 1)
        total = total + psi_sum * coef
    return 2.0 / math.pi * lg * j1s - 2.0 / (math.pi * x) - x / (2.0 * math.pi) * total


def _y(xp, x, nu):
    x = _f64(xp, x)
    small = (x > 0) & (x <= 2.0)
    _, y = _jy(xp, xp.where(small, 3.0, x), nu)
    ys = _y_series(xp, xp.where(small, x, 1.0), nu)
    out = xp.where(small, ys, y)
    out = xp.where(x == 0, -xp.inf, out)
    out = xp.where(x < 0, xp.nan, out)
    return xp.where(xp.isnan(x), x, out)


def y0(xp, x):
    """The Bessel function of the second kind of order 0: -inf at 0, nan below."""
    return _y(xp, x, 0)


def y1(xp, x):
    """The Bessel function of the second kind of order 1: -inf at 0, nan below."""
    return _y(xp, x, 1)


# Airy's Ai: its Maclaurin series for |x| <= 2, K_{1/3} above, J_{+-1/3} below
_AI0 = 0.355028053887817239  # Ai(0) = 1 / (3^(2/3) Gamma(2/3))
_AI1 = 0.258819403792806798  # -Ai'(0) = 1 / (3^(1/3) Gamma(1/3))


def _airy_series(xp, x):
    x3 = x ** 3
    f = xp.ones_like(x)
    g = x.copy()
    tf, tg = f, g
    for k in range(1, 40):
        tf = tf * x3 / ((3 * k - 1) * (3 * k))
        tg = tg * x3 / ((3 * k) * (3 * k + 1))
        f = f + tf
        g = g + tg
    return _AI0 * f - _AI1 * g


def _k_third_scaled(xp, z):
    """exp(z) K_{1/3}(z) for z >= 0.9 by the trapezoidal rule."""
    return _k_scaled_integral(xp, z, 1.0 / 3.0)


def airy_ai(xp, x):
    """Airy's function Ai."""
    x = _f64(xp, x)
    mid = xp.abs(x) <= 2.0
    ser = _airy_series(xp, xp.where(mid, x, 0.0))
    # x > 2: Ai(x) = sqrt(x / 3) / pi K_{1/3}(zeta), zeta = 2/3 x^(3/2)
    xp_ = xp.where((x > 2.0) & xp.isfinite(x), x, 3.0)
    zeta = 2.0 / 3.0 * xp_ ** 1.5
    pos = xp.sqrt(xp_ / 3.0) / math.pi * _k_third_scaled(xp, zeta) * xp.exp(-zeta)
    # x < -2: Ai(x) = sqrt(|x|) / 2 (J_{1/3}(zeta) - Y_{1/3}(zeta) / sqrt 3)
    xn = xp.where((x < -2.0) & xp.isfinite(x), -x, 3.0)
    zn = 2.0 / 3.0 * xn ** 1.5
    jn, yn = _jy(xp, zn, 1.0 / 3.0)
    neg = xp.sqrt(xn) / 2.0 * (jn - yn / math.sqrt(3.0))
    out = xp.where(mid, ser, xp.where(x > 0, pos, neg))
    out = xp.where(xp.isinf(x), xp.nan, out)  # as Cephes and PyTorch
    return xp.where(xp.isnan(x), x, out)


def spherical_j0(xp, x):
    """The spherical Bessel function of the first kind of order 0, ``sin(x) / x``."""
    x = _f64(xp, x)
    small = xp.abs(x) < 0.5
    xs = xp.where(small, 1.0, x)
    big = xp.sin(xs) / xs
    x2 = x * x
    # sin(x)/x = 1 - x^2/6 + x^4/120 - ... for small |x|
    ser = 1.0 - x2 / 6.0 * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0 * (1.0 - x2 / 72.0 * (
        1.0 - x2 / 110.0 * (1.0 - x2 / 156.0)))))
    out = xp.where(small, ser, big)
    out = xp.where(xp.isinf(x), 0.0, out)
    return xp.where(xp.isnan(x), x, out)
