"""Array kernels for the gamma-function family and the normal distribution's functions
of ``ember.special``: Hurwitz's zeta, polygamma, the regularized incomplete gamma
functions, erfcx, ndtr, ndtri and log_ndtr.

As in ``_special``, they take an array module ``xp``, use whole-array operations and
compute in float64.

NOTE [ Gamma kernels ]
zeta(x, q) sums ``(q + k)^-x`` until ``q + k >= max(9, x / 2 + 12)`` and adds the
Euler-Maclaurin tail with 12 Bernoulli terms (relative errors of a few 1e-15);
polygamma(n, x) is ``(-1)^(n+1) n! zeta(n + 1, x)``. gammainc(a, x) sums the series of P(a, x) for
``x < a + 1`` and evaluates the continued fraction of Q(a, x) (modified Lentz) above,
each until every element has converged; the prefactor ``x^a exp(-x) / Gamma(a)`` is
computed in logarithms. erfcx uses W. J. Cody's rational functions of ``_special``
without their ``exp(-x^2)`` factor. ndtri refines ``sqrt(2) erfinv(2p - 1)`` (or an
asymptotic guess in the far tails) by Newton steps on log ndtr, where log ndtr is
accurate in the tails.
"""

from __future__ import annotations

import math

from ember._ops import _special

__all__ = ["zeta", "polygamma", "gammainc", "gammaincc", "erfcx", "ndtr", "ndtri",
           "log_ndtr"]

# B_2j / (2j)!, j = 1..12
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)
_EM_COEF = tuple(b / math.factorial(2 * j) for j, b in enumerate(_BERNOULLI, start=1))
_EM_SHIFT = 9.0


def _f64(xp, x):
    return xp.asarray(x, dtype="float64")


def zeta(xp, x, q):
    """Hurwitz's zeta function ``sum_k (k + q)^-x``, with Cephes' conventions: inf at
    x == 1 and at the non-positive integers q, nan for x < 1 and for q < 0 with a
    non-integer x."""
    x, q = xp.broadcast_arrays(_f64(xp, x), _f64(xp, q))
    bad = (x < 1) | ((q < 0) & (x != xp.floor(x)))
    pole = (x == 1) | ((q <= 0) & (q == xp.floor(q)))
    ok = ~(bad | pole | xp.isnan(x) | xp.isnan(q))
    xs = xp.where(ok, x, 2.0)
    qs = xp.where(ok & xp.isfinite(q), q, 1.0)
    total = xp.zeros_like(xs)
    a = qs
    # the tail's terms shrink like ((x + 2j) / (2 pi a))^2: shift further for large x
    # (capped: for x > 1000 the terms beyond q + 512 are far below the first one)
    target = xp.maximum(_EM_SHIFT, 0.5 * xp.minimum(xs, 1000.0) + 12.0)
    while True:
        low = a < target
        if not bool(low.any()):
            break
        total = total + xp.where(low, xp.power(xp.where(low, a, 1.0), -xs), 0.0)
        a = xp.where(low, a + 1.0, a)
    # Euler-Maclaurin: a^(1-x)/(x-1) + a^-x/2 + sum_j B_2j/(2j)! x(x+1)..(x+2j-2) a^(-x-2j+1)
    ax = xp.power(a, -xs)
    total = total + a * ax / (xs - 1.0) + 0.5 * ax
    fact = xs * ax / a  # x a^(-x-1)
    inv2 = 1.0 / (a * a)
    for j, c in enumerate(_EM_COEF):
        term = c * fact
        total = total + term
        k = 2 * j + 1
        fact = fact * (xs + k) * (xs + k + 1) * inv2
    total = xp.where(xp.isinf(q) & (q > 0), xp.nan, total)  # as Cephes and PyTorch
    # x = inf: 1 at q = 1, inf below; nan above (as Cephes and PyTorch)
    total = xp.where(xp.isinf(x) & ok, xp.where(q > 1, xp.nan, xp.where(q == 1, 1.0, xp.inf)),
                     total)
    out = xp.where(ok, total, xp.where(pole, xp.inf, xp.nan))
    return xp.where(xp.isnan(x) | xp.isnan(q), xp.nan, out)


def polygamma(xp, n, x):
    """The n-th derivative of digamma (n >= 0 an integer)."""
    x = _f64(xp, x)
    if n == 0:
        return _special.digamma(xp, x)
    if n == 1:  # nan at -inf, as PyTorch
        return xp.where(x == -xp.inf, xp.nan, _special.trigamma(xp, x))
    sign = 1.0 if n % 2 else -1.0
    return sign * math.factorial(n) * zeta(xp, float(n + 1), x)


def _log_prefactor(xp, a, x):
    """log(x^a exp(-x) / Gamma(a))."""
    return a * xp.log(x) - x - _special.lgamma(xp, a)


_MAX_ITER = 5000
_EPS = 1e-16


def _p_series(xp, a, x):
    """P(a, x) by its series (for x < a + 1)."""
    term = 1.0 / a
    total = term
    ap = a.copy()
    active = xp.ones(a.shape, dtype=bool)
    for _ in range(_MAX_ITER):
        ap = ap + 1.0
        term = xp.where(active, term * x / ap, 0.0)
        total = total + term
        active = active & (xp.abs(term) > xp.abs(total) * _EPS)
        if not bool(active.any()):
            break
    return total * xp.exp(_log_prefactor(xp, a, x))


def _q_fraction(xp, a, x):
    """Q(a, x) by its continued fraction (modified Lentz; for x >= a + 1)."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = xp.full(a.shape, 1.0 / tiny)
    d = 1.0 / b
    h = d
    active = xp.ones(a.shape, dtype=bool)
    for i in range(1, _MAX_ITER):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = xp.where(xp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        delta = d * c
        h = xp.where(active, h * delta, h)
        active = active & (xp.abs(delta - 1.0) > _EPS)
        if not bool(active.any()):
            break
    return h * xp.exp(_log_prefactor(xp, a, x))


def _incomplete(xp, a, x, upper):
    a, x = xp.broadcast_arrays(_f64(xp, a), _f64(xp, x))
    bad = (a < 0) | (x < 0) | xp.isnan(a) | xp.isnan(x) | (xp.isinf(a) & xp.isinf(x))
    ok = ~bad & (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    aa = xp.where(ok, a, 1.0)
    xx = xp.where(ok, x, 1.0)
    use_series = xx < aa + 1.0
    if bool(use_series.any()):
        ser = _p_series(xp, xp.where(use_series, aa, 1.0), xp.where(use_series, xx, 0.5))
    else:
        ser = xp.zeros_like(aa)
    if bool((~use_series).any()):
        frac = _q_fraction(xp, xp.where(use_series, 1.0, aa), xp.where(use_series, 3.0, xx))
    else:
        frac = xp.zeros_like(aa)
    p = xp.where(use_series, ser, 1.0 - frac)
    q = xp.where(use_series, 1.0 - ser, frac)
    out = q if upper else p
    # the edges, as Cephes: P(0, x > 0) = 1, P(a > 0, 0) = 0, P(a, inf) = 1, P(inf, x) = 0
    one, zero = (0.0, 1.0) if upper else (1.0, 0.0)
    out = xp.where(~bad & (a == 0) & (x > 0), one, out)
    out = xp.where(~bad & (x == 0) & (a > 0), zero, out)
    out = xp.where(~bad & xp.isinf(x), one, out)
    out = xp.where(~bad & xp.isinf(a), zero, out)
    out = xp.where(~bad & (a == 0) & (x == 0), xp.nan, out)
    return xp.where(bad, xp.nan, out)


def gammainc(xp, a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return _incomplete(xp, a, x, False)


def gammaincc(xp, a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _incomplete(xp, a, x, True)


def erfcx(xp, x):
    """The scaled complementary error function ``exp(x^2) erfc(x)``."""
    x = _f64(xp, x)
    y = xp.abs(x)
    num, den = _special._cody_terms(_special._C, _special._D, xp.minimum(y, 4.0))
    mid = num / den
    yb = xp.maximum(y, 4.0)
    z = 1.0 / (yb * yb)
    num, den = _special._cody_terms(_special._P, _special._Q, z)
    big = (_special._SQRPI - z * num / den) / yb
    ys = xp.minimum(y, _special._THRESH)
    small = xp.exp(ys * ys) * (1.0 - _special.erf(xp, ys))
    pos = xp.where(y <= _special._THRESH, small, xp.where(y <= 4.0, mid, big))
    # x < 0: erfcx(x) = 2 exp(x^2) - erfcx(|x|), computed as exp(y16^2) exp((y-y16)(y+y16))
    yc = xp.minimum(y, 27.0)
    y16 = xp.trunc(yc * 16.0) / 16.0
    e2 = 2.0 * xp.exp(y16 * y16) * xp.exp((yc - y16) * (yc + y16))
    neg = xp.where(y > 26.7, xp.inf, e2 - pos)
    out = xp.where(x < 0, neg, pos)
    return xp.where(xp.isnan(x), x, out)


_SQRT_HALF = math.sqrt(0.5)


def ndtr(xp, x):
    """The standard normal distribution function."""
    x = _f64(xp, x)
    return 0.5 * _special.erfc(xp, -x * _SQRT_HALF)


def log_ndtr(xp, x):
    """The logarithm of the standard normal distribution function, accurate in both tails."""
    x = _f64(xp, x)
    neg = x < -1.0
    xn = xp.where(neg, x, -1.0)
    left = xp.log(0.5 * erfcx(xp, -xn * _SQRT_HALF)) - 0.5 * xn * xn
    xr = xp.where(neg, 0.0, x)
    right = xp.log1p(-0.5 * _special.erfc(xp, xr * _SQRT_HALF))
    out = xp.where(neg, left, right)
    return xp.where(xp.isnan(x), x, out)


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def ndtri(xp, p):
    """The inverse of the standard normal distribution function: -inf at 0, inf at 1,
    nan outside [0, 1]."""
    p = _f64(xp, p)
    upper = p > 0.5
    # work on the lower half, q = min(p, 1 - p) (exact: 1 - p is exact for p > 1/2)
    q = xp.where(upper, 1.0 - p, p)
    inside = (q > 0) & (q <= 0.5)
    qs = xp.where(inside, q, 0.25)
    guess = math.sqrt(2.0) * _special.erfinv(xp, 2.0 * qs - 1.0)
    # far tail: x ~ -sqrt(-2 log q - log(-2 log q) - log 2 pi)
    t = -2.0 * xp.log(qs)
    tail = -xp.sqrt(xp.maximum(t - xp.log(t) - math.log(2.0 * math.pi), 1.0))
    x = xp.where(qs < 1e-12, tail, guess)
    log_q = xp.log(qs)
    for _ in range(4):
        # Newton on log ndtr(x) = log q: d/dx log ndtr = phi / ndtr
        ln = log_ndtr(xp, x)
        ratio = xp.exp(-0.5 * x * x - _LOG_SQRT_2PI - ln)
        step = (ln - log_q) / ratio
        x = x - step
    x = xp.where(upper, -x, x)
    out = xp.where(inside, x, xp.nan)
    out = xp.where(p == 0, -xp.inf, out)
    out = xp.where(p == 1, xp.inf, out)
    return xp.where(xp.isnan(p), p, out)
