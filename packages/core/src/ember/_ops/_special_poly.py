"""Array kernels for the orthogonal polynomials of ``ember.special``.

``poly(xp, x, n)`` for float64 ``x`` and an integer-valued ``n`` (both arrays,
broadcast): the three-term recurrences, run for all elements at once up to the largest
degree, with PyTorch's special cases (0 for n < 0, the closed values at x = +-1, the
trigonometric forms of the Chebyshev polynomials for large n inside (-1, 1), nan for
Hermite degrees above 512). The recurrences run one vectorized step per degree, so
their time grows with the largest degree asked for (PyTorch loops per element in C).
"""

from __future__ import annotations

__all__ = ["chebyshev_t", "chebyshev_u", "chebyshev_v", "chebyshev_w", "hermite_h",
           "hermite_he", "laguerre_l", "legendre_p"]

_HERMITE_LIMIT = 512


def _degrees(xp, x, n):
    x = xp.asarray(x, dtype="float64")
    n = xp.asarray(n, dtype="float64")
    n = xp.where(xp.isfinite(n), xp.trunc(n), -1.0)
    x, n = xp.broadcast_arrays(x, n)
    return x, n


def _recur(xp, x, n, p, q, step, first=2):
    """Run ``r = step(k, p, q)`` for k = first.. while k <= n, per element; ``q`` is the
    value at degree first - 1 and the result at degree n >= first - 1."""
    r = q
    top = float(n.max()) if n.size else 0.0
    k = first
    while k <= top:
        active = (n >= k) & ~xp.isnan(q)
        if not bool(active.any()):
            break
        new = step(k, p, q)
        p = xp.where(active, q, p)
        q = xp.where(active, new, q)
        r = q
        k += 1
    return r


def _finish(xp, n, out, x, zero_value, one_value):
    out = xp.where(n == 0, zero_value, out)
    out = xp.where(n == 1, one_value, out)
    return xp.where(n < 0, 0.0, out)


def chebyshev_t(xp, x, n):
    """The Chebyshev polynomial of the first kind T_n(x)."""
    x, n = _degrees(xp, x, n)
    out = _recur(xp, x, n, xp.ones_like(x), x, lambda k, p, q: (x + x) * q - p)
    inner = (n > 6) & (xp.abs(x) < 1)
    out = xp.where(inner, xp.cos(n * xp.arccos(xp.where(inner, x, 0.0))), out)
    out = _finish(xp, n, out, x, 1.0, x)
    edge = xp.abs(x) == 1
    out = xp.where(edge, xp.where((x > 0) | (n % 2 == 0), 1.0, -1.0), out)
    return xp.where(n < 0, 0.0, out)


def chebyshev_u(xp, x, n):
    """The Chebyshev polynomial of the second kind U_n(x)."""
    x, n = _degrees(xp, x, n)
    out = _recur(xp, x, n, xp.ones_like(x), x + x, lambda k, p, q: (x + x) * q - p)
    inner = (n > 8) & (xp.abs(x) < 1)
    xi = xp.where(inner, x, 0.5)
    theta = xp.arccos(xi)
    s = xp.sin(theta)
    trig = xp.where(s != 0, xp.sin((n + 1) * theta) / xp.where(s != 0, s, 1.0),
                    (n + 1) * xp.cos((n + 1) * theta) / xi)
    out = xp.where(inner, trig, out)
    out = _finish(xp, n, out, x, 1.0, x + x)
    edge = xp.abs(x) == 1
    out = xp.where(edge, xp.where((x > 0) | (n % 2 == 0), n + 1, -(n + 1)), out)
    return xp.where(n < 0, 0.0, out)


def chebyshev_v(xp, x, n):
    """The Chebyshev polynomial of the third kind V_n(x)."""
    x, n = _degrees(xp, x, n)
    out = _recur(xp, x, n, xp.ones_like(x), x + x - 1.0, lambda k, p, q: (x + x) * q - p)
    inner = (n > 8) & (xp.abs(x) < 1)
    theta = xp.arccos(xp.where(inner, x, 0.5))
    odd_value = xp.where(n % 2 == 0, n + n + 1, -(n + n + 1))
    half = xp.sin(theta / 2.0) != 1.0
    trig = xp.where(half, xp.cos((n + 0.5) * theta) / xp.cos(theta / 2.0), odd_value)
    out = xp.where(inner, trig, out)
    out = _finish(xp, n, out, x, 1.0, x + x - 1.0)
    edge = xp.abs(x) == 1
    out = xp.where(edge, xp.where(x > 0, 1.0, odd_value), out)
    return xp.where(n < 0, 0.0, out)


def chebyshev_w(xp, x, n):
    """The Chebyshev polynomial of the fourth kind W_n(x)."""
    x, n = _degrees(xp, x, n)
    out = _recur(xp, x, n, xp.ones_like(x), x + x + 1.0, lambda k, p, q: (x + x) * q - p)
    inner = (n > 8) & (xp.abs(x) < 1)
    theta = xp.arccos(xp.where(inner, x, 0.5))
    edge_value = xp.where(x > 0, n + n + 1, xp.where(n % 2 == 0, 1.0, -1.0))
    half = xp.cos(theta / 2.0) != 1.0
    trig = xp.where(half, xp.sin((n + 0.5) * theta) / xp.sin(theta / 2.0), edge_value)
    out = xp.where(inner, trig, out)
    out = _finish(xp, n, out, x, 1.0, x + x + 1.0)
    edge = xp.abs(x) == 1
    out = xp.where(edge, edge_value, out)
    return xp.where(n < 0, 0.0, out)


def hermite_h(xp, x, n):
    """The physicists' Hermite polynomial H_n(x) (nan above degree 512)."""
    x, n = _degrees(xp, x, n)
    nn = xp.where(n > _HERMITE_LIMIT, 0.0, n)
    out = _recur(xp, x, nn, xp.ones_like(x), x + x,
                 lambda k, p, q: (x + x) * q - 2.0 * (k - 1) * p)
    out = _finish(xp, n, out, x, 1.0, x + x)
    return xp.where(n > _HERMITE_LIMIT, xp.nan, out)


def hermite_he(xp, x, n):
    """The probabilists' Hermite polynomial He_n(x) (nan above degree 512)."""
    x, n = _degrees(xp, x, n)
    nn = xp.where(n > _HERMITE_LIMIT, 0.0, n)
    out = _recur(xp, x, nn, xp.ones_like(x), x, lambda k, p, q: x * q - (k - 1) * p)
    out = _finish(xp, n, out, x, 1.0, x)
    return xp.where(n > _HERMITE_LIMIT, xp.nan, out)


def laguerre_l(xp, x, n):
    """The Laguerre polynomial L_n(x) (1 at x = 0)."""
    x, n = _degrees(xp, x, n)
    out = _recur(xp, x, n, xp.ones_like(x), 1.0 - x,
                 lambda k, p, q: ((2 * k - 1 - x) * q - (k - 1) * p) / k)
    out = _finish(xp, n, out, x, 1.0, 1.0 - x)
    out = xp.where(x == 0, 1.0, out)
    return xp.where(n < 0, 0.0, out)


def legendre_p(xp, x, n):
    """The Legendre polynomial P_n(x)."""
    x, n = _degrees(xp, x, n)
    out = _recur(xp, x, n, xp.ones_like(x), x,
                 lambda k, p, q: ((2 * k - 1) * x * q - (k - 1) * p) / k)
    out = _finish(xp, n, out, x, 1.0, x)
    edge = xp.abs(x) == 1
    out = xp.where(edge, xp.where((x > 0) | (n % 2 == 0), 1.0, -1.0), out)
    return xp.where(n < 0, 0.0, out)
