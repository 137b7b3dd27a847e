"""Array kernels for the special functions NumPy lacks: erf, erfc, erfinv, lgamma,
digamma and trigamma.

They work on any array module ``xp`` (NumPy or CuPy) with whole-array operations only
(no Python loop over elements), compute in float64 and return float64; the callers
cast back to the input's dtype.

NOTE [ Accuracy ]
erf and erfc are W. J. Cody's rational Chebyshev approximations (SPECFUN's CALERF,
relative error below 1e-16 in float64). erfinv is PyTorch's own algorithm (a rational
first guess refined by two Newton steps on erf), so the two agree to the last bits.
lgamma is Cephes' lgam (the recurrence to [2, 3) and a rational approximation there,
exact 0 at 1 and 2; Stirling's series from 13 on). digamma and trigamma shift the
argument up to 10 with the recurrence and use their asymptotic series there. All three
reflect negative arguments. Errors are a few ulps (below 1e-14 absolute), relative too
away from the root of digamma (1.46) and near the poles of the reflected range.
"""

from __future__ import annotations

import math

__all__ = ["erf", "erfc", "erfinv", "lgamma", "digamma", "trigamma"]

# Cody's coefficients: |x| <= 0.46875 (A, B), 0.46875 < |x| <= 4 (C, D), |x| > 4 (P, Q).
_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
      3.20937758913846947e03, 1.85777706184603153e-1)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
      2.84423683343917062e03)
_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
      2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
      2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
      1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
      3.43936767414372164e03, 1.23033935480374942e03)
_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
      1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
      6.05183413124413191e-2, 2.33520497626869185e-3)
_THRESH = 0.46875
_SQRPI = 5.6418958354775628695e-1  # 1 / sqrt(pi)


def _horner(coeffs, t):
    """The polynomial ``coeffs[0] * t**n + ... + coeffs[n]`` at ``t``, by Horner's rule."""
    value = coeffs[0]
    for c in coeffs[1:]:
        value = value * t + c
    return value


def _cody_terms(num_coeffs, den_coeffs, t):
    """The numerator and denominator of the rational functions of W. J. Cody's erf
    approximations at ``t``: ``n + 2`` numerator and ``n + 1`` denominator coefficients
    (the denominator is monic), evaluated in Cody's order."""
    n = len(den_coeffs) - 1
    num = num_coeffs[n + 1] * t
    den = t
    for i in range(n):
        num = (num + num_coeffs[i]) * t
        den = (den + den_coeffs[i]) * t
    return num + num_coeffs[n], den + den_coeffs[n]


def _erf_parts(xp, x):
    """(x as float64, |x|, erf(x) on |x| <= 0.46875, erfc(|x|) elsewhere, small mask)."""
    x = xp.asarray(x, dtype="float64")
    y = xp.abs(x)
    small = y <= _THRESH
    # |x| <= 0.46875: erf(x) = x * R(x^2)
    num, den = _cody_terms(_A, _B, y * y)
    erf_small = x * num / den
    # 0.46875 < |x| <= 4: erfc(|x|) = exp(-x^2) * R(|x|)
    num, den = _cody_terms(_C, _D, xp.minimum(y, 4.0))
    mid = num / den
    # |x| > 4: erfc(|x|) = exp(-x^2) / |x| * (1/sqrt(pi) + R(1/x^2) / x^2)
    with_big = xp.clip(y, 4.0, 30.0)  # erfc underflows to 0 before 28; no inf - inf
    z = 1.0 / (with_big * with_big)
    num, den = _cody_terms(_P, _Q, z)
    big = (_SQRPI - z * num / den) / with_big
    r = xp.where(y <= 4.0, mid, big)
    # exp(-y^2) as exp(-ysq16^2) * exp(-(y - ysq16)(y + ysq16)) keeps its precision
    yc = xp.minimum(y, 30.0)
    y16 = xp.trunc(yc * 16.0) / 16.0
    erfc_abs = xp.exp(-y16 * y16) * xp.exp(-(yc - y16) * (yc + y16)) * r
    erfc_abs = xp.where(xp.isnan(y), y, erfc_abs)
    return x, erf_small, erfc_abs, small


def erf(xp, x):
    """The error function, in float64."""
    x, erf_small, erfc_abs, small = _erf_parts(xp, x)
    big = (0.5 - erfc_abs) + 0.5
    return xp.where(small, erf_small, xp.where(x < 0, -big, big))


def erfc(xp, x):
    """The complementary error function ``1 - erf(x)``, in float64, accurate in the tails."""
    x, erf_small, erfc_abs, small = _erf_parts(xp, x)
    return xp.where(small, 1.0 - erf_small, xp.where(x < 0, 2.0 - erfc_abs, erfc_abs))


# PyTorch's erfinv (aten/src/ATen/native/Math.h, calc_erfinv): a rational first guess
# in the centre (|y| <= 0.7) and in the tails, then two Newton steps on erf.
_EA = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_EB = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_EC = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_ED = (3.543889200, 1.637067800)


def erfinv(xp, y):
    """The inverse error function, in float64: nan outside [-1, 1], +-inf at +-1."""
    y = xp.asarray(y, dtype="float64")
    ya = xp.abs(y)
    z = y * y
    num = ((_EA[3] * z + _EA[2]) * z + _EA[1]) * z + _EA[0]
    den = (((_EB[3] * z + _EB[2]) * z + _EB[1]) * z + _EB[0]) * z + 1.0
    centre = y * num / den
    zt = xp.sqrt(-xp.log(xp.clip((1.0 - ya) / 2.0, 1e-300, None)))
    num = ((_EC[3] * zt + _EC[2]) * zt + _EC[1]) * zt + _EC[0]
    den = (_ED[1] * zt + _ED[0]) * zt + 1.0
    tail = xp.copysign(num, y) / den
    x = xp.where(ya <= 0.7, centre, tail)
    two_over_sqrt_pi = 2.0 / math.sqrt(math.pi)
    tail = ya > 0.5
    for _ in range(2):
        # erf(x) - y; in the tails as erfc, since 1 - |y| is exact there and erf is not
        resid = xp.where(tail, xp.sign(y) * ((1.0 - ya) - erfc(xp, xp.abs(x))), erf(xp, x) - y)
        x = x - resid / (two_over_sqrt_pi * xp.exp(-x * x))
    x = xp.where(ya == 1.0, xp.copysign(xp.inf, y), x)
    return xp.where(ya > 1.0, xp.nan, x)


_SHIFT_TO = 10.0
_EULER = 0.5772156649015329
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
# Stirling's series for lgamma: B_2k / (2k (2k - 1)), k = 1..8
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)
# Cephes' lgam on [2, 3): lgamma(2 + t) = t B(t) / C(t), C monic
_LG_B = (-1.37825152569120859100e3, -3.88016315134637840924e4, -3.31612992738871184744e5,
         -1.16237097492762307383e6, -1.72173700820839662146e6, -8.53555664245765465627e5)
_LG_C = (-3.51815701436523470549e2, -1.70642106651881159223e4, -2.20528590553854454839e5,
         -1.13933444367982507207e6, -2.53252307177582951285e6, -2.01889141433532773231e6)
# digamma's asymptotic series: B_2k / (2k), k = 1..7
_PSI = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
# trigamma's: B_2k, k = 1..8
_PSI1 = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _shift_up(xp, x):
    """(z, terms) with z = x + n >= 10 for x > 0 and terms the list of x + k, k < n."""
    z = x
    terms = []
    for _ in range(int(_SHIFT_TO)):
        low = z < _SHIFT_TO
        terms.append(xp.where(low, z, xp.nan))
        z = xp.where(low, z + 1.0, z)
    return z, terms


def _reduce_half(xp, x):
    """x - round(x), in [-0.5, 0.5], exactly: sin(pi x) and tan(pi x) of it keep their
    precision near the integers and for large |x|."""
    return x - xp.round(x)


def _is_nonpositive_int(xp, x):
    return (x <= 0) & (x == xp.floor(x))


def lgamma(xp, x):
    """log|gamma(x)|, in float64: +inf at 0 and the negative integers."""
    x = xp.asarray(x, dtype="float64")
    neg = x < 0
    # lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x) for x < 0
    w = xp.where(neg, 1.0 - x, x)
    # w < 13: Cephes' lgam, the recurrence down (or up) to u in [2, 3), then
    # lgamma(u) = (u - 2) R(u - 2): exact 0 at 1 and 2
    u = xp.where(w < 13.0, w, 2.5)
    z = xp.ones_like(u)
    for _ in range(10):
        high = u >= 3.0
        u = xp.where(high, u - 1.0, u)
        z = xp.where(high, z * u, z)
    for _ in range(2):
        low = u < 2.0
        z = xp.where(low, z / xp.where(low, u, 1.0), z)
        u = xp.where(low, u + 1.0, u)
    t = u - 2.0
    num = _horner(_LG_B, t)
    den = _horner((1.0,) + _LG_C, t)
    small = xp.log(z) + t * num / den
    # w >= 13: Stirling's series
    zs = xp.maximum(w, 13.0)
    inv = 1.0 / zs
    inv2 = inv * inv
    series = _horner(_STIRLING[::-1], inv2)
    big = (zs - 0.5) * xp.log(zs) - zs + _LOG_SQRT_2PI + series * inv
    lg = xp.where(w < 13.0, small, big)
    # tiny w: 1 / w overflows above; lgamma(w) = -log(w) - euler_gamma w + O(w^2)
    lg = xp.where(w < 1e-8, -xp.log(w) - _EULER * w, lg)
    s = xp.abs(xp.sin(math.pi * _reduce_half(xp, x)))
    refl = xp.log(math.pi / xp.where(s == 0, 1.0, s)) - lg
    out = xp.where(neg, refl, lg)
    out = xp.where(_is_nonpositive_int(xp, x) | xp.isinf(x), xp.inf, out)
    return xp.where(xp.isnan(x), x, out)


def digamma(xp, x):
    """The logarithmic derivative of gamma, in float64, with PyTorch's values at the
    poles: -inf at +0, +inf at -0, nan at the negative integers."""
    x = xp.asarray(x, dtype="float64")
    neg = x < 0
    w = xp.where(neg, 1.0 - x, x)
    z, terms = _shift_up(xp, w)
    inv2 = 1.0 / (z * z)
    series = _horner(_PSI[::-1], inv2)
    psi = xp.log(z) - 0.5 / z - series * inv2
    for t in terms:
        psi = xp.where(xp.isnan(t), psi, psi - 1.0 / t)
    # digamma(x) = digamma(1 - x) - pi / tan(pi x)
    r = _reduce_half(xp, x)
    refl = psi - math.pi / xp.tan(math.pi * xp.where(r == 0, 0.5, r))
    out = xp.where(neg, refl, psi)
    out = xp.where(_is_nonpositive_int(xp, x), xp.nan, out)
    out = xp.where(x == 0, xp.copysign(xp.inf, -x), out)
    out = xp.where(x == xp.inf, xp.inf, out)
    return xp.where(xp.isnan(x), x, out)


def trigamma(xp, x):
    """The derivative of digamma, in float64: +inf at 0 and the negative integers."""
    x = xp.asarray(x, dtype="float64")
    neg = x < 0
    w = xp.where(neg, 1.0 - x, x)
    z, terms = _shift_up(xp, w)
    inv = 1.0 / z
    inv2 = inv * inv
    series = _horner(_PSI1[::-1], inv2)
    psi1 = inv + 0.5 * inv2 + series * inv2 * inv
    for t in terms:
        psi1 = xp.where(xp.isnan(t), psi1, psi1 + 1.0 / (t * t))
    # trigamma(x) = pi^2 / sin^2(pi x) - trigamma(1 - x)
    s = xp.sin(math.pi * _reduce_half(xp, x))
    refl = (math.pi * math.pi) / xp.where(s == 0, 1.0, s * s) - psi1
    out = xp.where(neg, refl, psi1)
    out = xp.where(_is_nonpositive_int(xp, x), xp.inf, out)
    out = xp.where(x == xp.inf, 0.0, out)
    return xp.where(xp.isnan(x), x, out)
