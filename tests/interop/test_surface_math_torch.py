"""The math ops of PyTorch's top-level namespace (issue 15's math part) against PyTorch 2.13:
values, dtypes and shapes on ordinary and edge-case inputs (empty, 0-dim, NaN/inf,
broadcasting, mixed dtypes), the error type PyTorch raises for bad input, the in-place
forms, and the names on ``ember`` and ``ember.Tensor``.

The op database (ember/testing/_opinfo/) already compares every op's forward and gradients
with PyTorch; the cases here are the edges and errors it does not draw.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

F32, F64, I64 = np.float32, np.float64, np.int64
INF, NAN = float("inf"), float("nan")


def a(values, dtype=F32):
    return np.array(values, dtype)


_rng = np.random.default_rng(0)
X = _rng.standard_normal((3, 5)).astype(F32)
XI = _rng.integers(-5, 5, (3, 5))
SQ = (np.arange(12.0) ** 2).reshape(3, 4).astype(F32)
AR = np.arange(12).reshape(3, 4)
P2 = a([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]])
ONES3 = np.ones(3, F32)

# (function: a name of ember/torch or a lambda of the library, args, kwargs)
CASES = [
    # addcmul / addcdiv
    ("addcmul", (AR, AR, AR), {}),
    ("addcmul", (AR, AR, AR), {"value": 0.5}),
    ("addcmul", (ONES3, a([1, 2, 3], I64), a([1, 2, 3], I64)), {"value": 2.5}),
    ("addcmul", (np.ones((2, 1), F32), ONES3, np.ones((2, 3), F32)), {}),
    ("addcmul", (np.ones(2, F32), ONES3, ONES3), {}),
    ("addcmul", (a([True]), a([True]), a([True])), {}),
    ("addcmul", (ONES3, ONES3, 2), {}),
    ("addcmul", (ONES3, ONES3, ONES3), {"value": 1 + 2j}),
    ("addcmul", (a([1.0, NAN, INF]), a([0.0, 1.0, 1.0]), a([INF, 2.0, -1.0])), {}),
    ("addcdiv", (ONES3, ONES3, a([0.0, 2.0, -0.0])), {"value": 2}),
    ("addcdiv", (AR, AR, AR), {}),
    ("addcdiv", (ONES3, a([1, 2, 3], I64), a([1, 2, 3], I64)), {}),
    ("addcdiv", (np.ones(0, F64), np.ones(0, F32), np.ones(1, F32)), {}),
    (lambda L, x, t1, t2: L.tensor(x).addcmul_(L.tensor(t1), L.tensor(t2), value=2),
     (ONES3, np.ones(3, F64), np.ones(3, F64)), {}),
    (lambda L, x, t1, t2: L.tensor(x).addcmul_(L.tensor(t1), L.tensor(t2)),
     (np.ones(3, I64), ONES3, ONES3), {}),
    (lambda L, x, t1, t2: L.tensor(x).addcdiv_(L.tensor(t1), L.tensor(t2)),
     (np.ones(2, F32), np.ones((3, 2), F32), np.ones(2, F32)), {}),
    # copysign
    ("copysign", (AR, -AR), {}),
    ("copysign", (AR, -1.0), {}),
    ("copysign", (a([1.0, 2.0, 3.0, 4.0]), a([-0.0, NAN, -NAN, 0.0])), {}),
    ("copysign", (a([1.0], np.float16), -2), {}),
    ("copysign", (a([1.0], np.float16), a([-1.0], F64)), {}),
    ("copysign", (a([True, False]), a([True, True])), {}),
    ("copysign", (a([1], np.uint8), a([1], np.uint8)), {}),
    ("copysign", (a([1 + 1j], np.complex64), ONES3[:1]), {}),
    (lambda L, x, y: L.tensor(x).copysign_(L.tensor(y)), (AR, -AR.astype(F32)), {}),
    (lambda L, x, y: L.tensor(x).copysign_(y), (X, -1), {}),
    # float_power
    ("float_power", (AR, 2), {}),
    ("float_power", (X, AR), {}),
    ("float_power", (2, X), {}),
    ("float_power", (a([1.0, -8.0, 0.0]), 1 / 3), {}),
    ("float_power", (a([1 + 1j], np.complex64), 2), {}),
    ("float_power", (X, 2j), {}),
    ("float_power", (a([True]), 2), {}),
    (lambda L, x: L.tensor(x).float_power_(2), (X,), {}),
    (lambda L, x: L.tensor(x).float_power_(2), (X.astype(F64),), {}),
    (lambda L, x, e: L.tensor(x).float_power_(L.tensor(e)), (a([1.0], F64), a([2j], np.complex128)),
     {}),
    # frexp
    ("frexp", (a([0.0, -0.0, INF, -INF, NAN, 1.0, -0.75, 1e-40, 3e38]),), {}),
    ("frexp", (a([0.5, 6.0, 1e-5], np.float16),), {}),
    ("frexp", (a([5e-324, 1e308], F64),), {}),
    ("frexp", (AR,), {}),
    ("frexp", (np.zeros((0, 2), F32),), {}),
    # gcd / lcm
    ("gcd", (a([0, -4, 6, 0], I64), a([0, 6, -4, 7], I64)), {}),
    ("lcm", (a([0, -4, 6, 0], I64), a([0, 6, -4, 7], I64)), {}),
    ("lcm", (a([2 ** 62], I64), a([3], I64)), {}),
    ("gcd", (a([-2 ** 63], I64), a([0], I64)), {}),
    ("gcd", (a([4, 6], np.int32), a([6, 9], I64)), {}),
    ("gcd", (a([4, 6], np.uint8), a([6], np.uint8)), {}),
    ("gcd", (X, X), {}),
    ("gcd", (a([True]), a([True])), {}),
    ("gcd", (AR, 2), {}),
    ("lcm", (np.zeros((0, 3), I64), a([2, 3, 4], I64)), {}),
    (lambda L, x, y: L.gcd_(L.tensor(x), L.tensor(y)), (AR, AR + 2), {}),
    (lambda L, x, y: L.tensor(x).lcm_(L.tensor(y)), (AR, AR + 2), {}),
    (lambda L, x, y: L.tensor(x).gcd_(L.tensor(y)), (a([4], np.int32), a([6], I64)), {}),
    # heaviside
    ("heaviside", (a([NAN, 0.0, -0.0, INF, -INF, -1.0, 2.0]), a([0.5])), {}),
    ("heaviside", (a([True, False]), a([True, True])), {}),
    ("heaviside", (AR - 5, AR), {}),
    ("heaviside", (X, 0.5), {}),
    ("heaviside", (X, XI), {}),
    ("heaviside", (X, np.array(0.5, F64)), {}),
    ("heaviside", (a([1j], np.complex64), a([1j], np.complex64)), {}),
    (lambda L, x, v: L.tensor(x).heaviside_(L.tensor(v)), (X, a([0.5])), {}),
    # ldexp
    ("ldexp", (X, XI), {}),
    ("ldexp", (AR, AR - 4), {}),
    ("ldexp", (X, X), {}),
    ("ldexp", (a([1.0, 2.0], np.float16), a([1, 3], I64)), {}),
    ("ldexp", (a([1 + 1j], np.complex64), a([3], I64)), {}),
    ("ldexp", (a([1.0, 1.0]), a([200, -200], I64)), {}),
    ("ldexp", (X, 2), {}),
    (lambda L, x, e: L.ldexp_(L.tensor(x), L.tensor(e)), (X, XI), {}),
    (lambda L, x, e: L.ldexp_(L.tensor(x), L.tensor(e)), (AR, AR), {}),
    # logaddexp / logaddexp2
    ("logaddexp", (a([INF, -INF, INF, NAN, 1e30, -1e30]), a([INF, -INF, -INF, 1.0, 1e30, 5.0])),
     {}),
    ("logaddexp2", (a([INF, -INF, INF, NAN, 100.0]), a([INF, -INF, -INF, 1.0, -100.0])), {}),
    ("logaddexp", (X, X.astype(F64)), {}),
    ("logaddexp", (X, X[:1]), {}),
    ("logaddexp", (AR, AR), {}),
    ("logaddexp", (X, 2.0), {}),
    ("logaddexp", (a([1 + 1j, -2 - 1j], np.complex64), a([0.5j, 3.0], np.complex64)), {}),
    ("logaddexp2", (a([1j], np.complex64), a([1j], np.complex64)), {}),
    ("logaddexp", (a([True]), a([True])), {}),
    # nextafter
    ("nextafter", (a([0.0, 1.0, INF, NAN, -0.0, 1.0]), a([1.0, 1.0, 0.0, 1.0, -1.0, NAN])), {}),
    ("nextafter", (a([1.0, 2.0], np.float16), a([2.0, 1.0], np.float16)), {}),
    ("nextafter", (X, X.astype(F64)), {}),
    ("nextafter", (AR, AR), {}),
    ("nextafter", (X, 2.0), {}),
    (lambda L, x, y: L.tensor(x).nextafter_(L.tensor(y)), (X, X.astype(F64) + 1), {}),
    # deg2rad / rad2deg / positive / rsub
    ("deg2rad", (AR,), {}),
    ("deg2rad", (a([True, False]),), {}),
    ("deg2rad", (a([180.0, INF, NAN], np.float16),), {}),
    ("deg2rad", (a([1j], np.complex64),), {}),
    ("rad2deg", (AR,), {}),
    ("rad2deg", (a([np.pi, -INF, NAN], F64),), {}),
    ("rad2deg", (a([1j], np.complex64),), {}),
    (lambda L, x: L.deg2rad_(L.tensor(x)), (X,), {}),
    (lambda L, x: L.deg2rad_(L.tensor(x)), (AR,), {}),
    (lambda L, x: L.tensor(x).rad2deg_(), (X,), {}),
    ("positive", (a([True]),), {}),
    ("positive", (a([1j], np.complex64),), {}),
    ("positive", (3,), {}),
    ("rsub", (X, 2), {}),
    ("rsub", (X, XI), {"alpha": 2}),
    ("rsub", (AR, 2.5), {}),
    ("rsub", (a([True]), a([True])), {}),
    ("rsub", (a([True]), 1), {}),
    ("rsub", (2, X), {}),
    ("rsub", (AR, AR), {"alpha": 0.5}),
    # cov / corrcoef
    ("cov", (X,), {}),
    ("cov", (XI,), {}),
    ("cov", (X[0],), {}),
    ("cov", (np.array(2.0, F32),), {}),
    ("cov", (np.zeros((0, 3), F32),), {}),
    ("cov", (X,), {"correction": 0}),
    ("cov", (X,), {"fweights": a([1, 2, 1, 1, 3], I64), "aweights": a([1, 2, 1, 1, 0.5])}),
    ("cov", (X,), {"fweights": a([1, 2, 1, 1, 3], I64), "aweights": a([1, 2, 1, 1, 0.5]),
                   "correction": 0}),
    ("cov", (X,), {"fweights": a([1, 2, 1, 1, 3])}),
    ("cov", (X,), {"aweights": a([1, 2, 1, 1, 3], I64)}),
    ("cov", (X,), {"fweights": -a([1, 2, 1, 1, 3], I64)}),
    ("cov", (X,), {"fweights": a([1, 2], I64)}),
    ("cov", (X,), {"aweights": np.ones((1, 5), F32)}),
    ("cov", (X,), {"aweights": np.zeros(5, F32)}),
    ("cov", (X > 0,), {}),
    ("cov", (np.zeros((2, 3, 4), F32),), {}),
    ("cov", ((X + 1j * X[::-1]).astype(np.complex64),), {}),
    ("corrcoef", (X,), {}),
    ("corrcoef", (XI,), {}),
    ("corrcoef", (X[0],), {}),
    ("corrcoef", (np.ones((2, 3), F32),), {}),
    ("corrcoef", ((X + 1j * X[::-1]).astype(np.complex64),), {}),
    ("corrcoef", (np.zeros((2, 3, 4), F32),), {}),
    # histogram / histogramdd
    ("histogram", (SQ, 3), {}),
    ("histogram", (SQ, a([0.0, 10.0, 200.0])), {}),
    ("histogram", (SQ, 3), {"range": (0, 50), "density": True}),
    ("histogram", (SQ, 3), {"weight": np.full((3, 4), 2.0, F32)}),
    ("histogram", (np.zeros(0, F32), 3), {}),
    ("histogram", (np.ones(3, F32), 2), {}),
    ("histogram", (np.array(3.0, F32), 2), {}),
    ("histogram", (a([1.0, 2.0]), 2), {"weight": a([1.0, NAN])}),
    ("histogram", (a([1.0, NAN]), 3), {}),
    ("histogram", (a([1.0, INF]), 3), {}),
    ("histogram", (SQ, 0), {}),
    ("histogram", (SQ, 3), {"range": (5.0, 1.0)}),
    ("histogram", (AR, 3), {}),
    ("histogram", (SQ.astype(np.float16), 3), {}),
    ("histogram", (SQ, a([[0.0, 10.0]])), {}),
    ("histogram", (SQ, a([0.0, 1.0], F64)), {}),
    ("histogram", (SQ, a([1.0])), {}),
    ("histogram", (SQ, 3), {"weight": ONES3}),
    ("histogram", (SQ, 3), {"weight": np.ones((3, 4), F64)}),
    ("histogram", (SQ, 2.5), {}),
    ("histogramdd", (P2,), {"bins": [3, 3]}),
    ("histogramdd", (P2,), {"bins": 2, "range": [0.0, 1.0, 0.0, 1.0]}),
    ("histogramdd", (P2,), {"bins": [a([0.0, 1.0, 2.0]), a([0.0, 3.0])]}),
    ("histogramdd", (P2, [2, 2]), {"weight": a([1.0, 2, 3, 4]), "density": True}),
    ("histogramdd", (P2, 2, None, a([1.0, 2, 3, 4])), {}),
    ("histogramdd", (np.zeros((3, 4, 2), F32), 2), {}),
    ("histogramdd", (np.zeros((0, 2), F32), 2), {}),
    ("histogramdd", (P2, [2, 0]), {}),
    ("histogramdd", (P2, [2, 2, 2]), {}),
    ("histogramdd", (P2, 2), {"range": [0.0, 1.0]}),
    ("histogramdd", (np.zeros(4, F32), [2]), {}),
    # isin
    ("isin", (AR, a([1, 5, 7], I64)), {}),
    ("isin", (AR, 5), {}),
    ("isin", (5, AR), {}),
    ("isin", (SQ, a([1, 4], I64)), {"invert": True}),
    ("isin", (AR, a([1.5, 4.0])), {}),
    ("isin", (a([1.0, NAN]), a([NAN])), {}),
    ("isin", (AR, np.zeros(0, F32)), {}),
    ("isin", (np.zeros(0, F32), AR), {}),
    ("isin", (a([1, 3], np.int32), a([2 ** 40], I64)), {}),
    ("isin", (AR > 3, a([True])), {}),
    ("isin", (AR.astype(np.complex64), AR), {}),
    # diff / gradient / trapezoid / cumulative_trapezoid
    ("diff", (SQ,), {}),
    ("diff", (SQ, 2, 0), {}),
    ("diff", (SQ, 0), {}),
    ("diff", (SQ, 5), {}),
    ("diff", (SQ > 20,), {}),
    ("diff", (AR,), {"prepend": np.zeros((3, 1), F32), "append": np.ones((3, 2), F64)}),
    ("diff", (SQ, -1), {}),
    ("diff", (np.array(1.0, F32),), {}),
    ("diff", (SQ,), {"prepend": np.zeros(3, F32)}),
    ("diff", (SQ,), {"prepend": np.zeros((2, 1), F32)}),
    ("diff", (SQ,), {"prepend": 2.0}),
    ("diff", (SQ,), {"dim": 2}),
    ("gradient", (SQ,), {}),
    ("gradient", (AR,), {"spacing": 2}),
    ("gradient", (SQ,), {"spacing": [2.0, 3.0], "edge_order": 2}),
    ("gradient", (SQ,), {"spacing": [a([0.0, 1, 3]), a([0.0, 1, 3, 4])], "edge_order": 2}),
    ("gradient", (SQ,), {"spacing": (a([0.0, 1, 3, 4]),), "dim": 1}),
    ("gradient", (SQ,), {"spacing": np.array(2.0, F32)}),
    ("gradient", (np.array(1.0, F32),), {}),
    ("gradient", (SQ,), {"edge_order": 3}),
    ("gradient", (np.ones((1, 4), F32),), {}),
    ("gradient", (SQ,), {"spacing": [1.0]}),
    ("gradient", (SQ,), {"spacing": [2.0, 3.0], "dim": 1}),
    ("gradient", (SQ,), {"dim": [0, 0]}),
    ("gradient", (SQ,), {"dim": 2}),
    ("gradient", (SQ,), {"spacing": (2.0, a([0.0, 1, 3, 4]))}),
    ("gradient", (SQ,), {"spacing": [np.array(2.0, F32), np.array(3.0, F32)]}),
    ("gradient", (SQ,), {"spacing": a([2.0, 3.0])}),
    ("gradient", (SQ > 3,), {}),
    ("gradient", (AR.astype(np.uint8),), {}),
    ("trapezoid", (SQ,), {}),
    ("trapezoid", (AR,), {"dx": 0.5}),
    ("trapezoid", (SQ, a([0.0, 1, 3, 4])), {}),
    ("trapezoid", (AR, a([0, 1, 3, 4], I64)), {}),
    ("trapezoid", (SQ, a([0.0, 1, 3])), {"dim": 0}),
    ("trapezoid", (SQ, np.ones((1, 4), F32)), {}),
    ("trapezoid", (np.zeros((3, 0), F32),), {}),
    ("trapezoid", (np.zeros((3, 0), I64),), {}),
    ("trapezoid", (np.ones((3, 1), F32),), {}),
    ("trapezoid", (SQ, a([0.0, 1])), {}),
    ("trapezoid", (np.array(1.0, F32),), {}),
    ("trapezoid", (SQ > 3,), {}),
    ("trapezoid", (SQ, 2.0), {}),
    ("trapezoid", (SQ, SQ), {"dx": 2}),
    ("trapezoid", (SQ,), {"dx": 1j}),
    ("trapezoid", (SQ, np.ones((4, 3), F32)), {}),
    ("trapz", (SQ,), {"dx": 2}),
    ("trapz", (SQ, a([0.0, 1, 3, 4])), {}),
    ("trapz", (SQ,), {"dx": True}),
    ("trapz", (SQ,), {"dx": 1j}),
    ("cumulative_trapezoid", (SQ,), {}),
    ("cumulative_trapezoid", (AR, a([0, 1, 3, 4], I64)), {}),
    ("cumulative_trapezoid", (SQ,), {"dx": 2, "dim": 0}),
    ("cumulative_trapezoid", (np.zeros((3, 0), F32),), {}),
    ("cumulative_trapezoid", (np.ones((3, 1), F32),), {}),
    ("cumulative_trapezoid", (np.array(1.0, F32),), {}),
    ("cumulative_trapezoid", (SQ > 3,), {}),
    # cdist / pdist / dist / renorm
    ("cdist", (X[:2, :3], X[:, :3]), {"p": 0}),
    ("cdist", (X[:2, :3], X[:, :3]), {"p": INF}),
    ("cdist", (X[:2, :3], X[:, :3]), {"p": 0.5}),
    ("cdist", (np.ones((5, 2, 3), F32), np.zeros((1, 4, 3), F32)), {}),
    ("cdist", (np.ones((0, 3), F32), X[:, :3]), {}),
    ("cdist", (np.ones((2, 0), F32), np.zeros((4, 0), F32)), {}),
    ("cdist", (_rng.standard_normal((30, 4)), _rng.standard_normal((3, 4))), {}),
    ("cdist", (X[:2], X), {"compute_mode": "use_mm_for_euclid_dist"}),
    ("cdist", (X[:2], X), {"compute_mode": "bad"}),
    ("cdist", (X[:2], X[:, :2]), {}),
    ("cdist", (X[0], X), {}),
    ("cdist", (XI, XI), {}),
    ("cdist", (X, X), {"p": -1}),
    ("cdist", (X, X.astype(F64)), {}),
    ("pdist", (X,), {"p": 3}),
    ("pdist", (np.ones((1, 2), F32),), {}),
    ("pdist", (ONES3,), {}),
    ("dist", (SQ, np.zeros(4, F32)), {}),
    ("dist", (SQ, np.zeros(4, F32), 0), {}),
    ("dist", (SQ, np.zeros(4, F32), -INF), {}),
    ("dist", (SQ, np.zeros(4, F32), -1), {}),
    ("dist", (SQ, np.zeros(4, F64), 3), {}),
    ("dist", (np.zeros(0, F32), np.zeros(0, F32)), {}),
    ("dist", (AR, AR), {}),
    ("dist", (SQ, 2), {}),
    ("renorm", (SQ, 2, 0, 5), {}),
    ("renorm", (SQ, INF, 1, 5.0), {}),
    ("renorm", ((SQ + 1j * SQ).astype(np.complex64), 2, 1, 5), {}),
    ("renorm", (np.zeros((0, 3), F32), 2, 0, 1), {}),
    ("renorm", (SQ, 0, 0, 5), {}),
    ("renorm", (SQ, 2, 0, -1), {}),
    ("renorm", (AR, 2, 0, 5), {}),
    ("renorm", (ONES3, 2, 0, 0.5), {}),
    ("renorm", (SQ, 2, 2, 5), {}),
    (lambda L, x: L.tensor(x).renorm_(1, 1, 5.0), (SQ,), {}),
    # block_diag / cartesian_prod / combinations / diagflat / rot90 / index sets
    ("block_diag", (), {}),
    ("block_diag", (np.array(1.0, F32), a([2, 3], I64), np.ones((2, 2), F32)), {}),
    ("block_diag", (np.zeros((0, 2), F32), np.ones((1, 1), F32)), {}),
    ("block_diag", (np.ones(1, np.complex64), a([True])), {}),
    ("block_diag", (np.zeros((2, 2, 2), F32),), {}),
    ("block_diag", ([1, 2],), {}),
    ("cartesian_prod", (a([1, 2], I64), a([3, 4, 5], I64)), {}),
    ("cartesian_prod", (a([1, 2], I64),), {}),
    ("cartesian_prod", (a([1.0, 2.0]), np.zeros(0, F32)), {}),
    ("cartesian_prod", (), {}),
    ("cartesian_prod", (a([1, 2], I64), a([3.0])), {}),
    ("cartesian_prod", (np.ones((2, 2), F32),), {}),
    ("combinations", (a([1, 2, 3], I64),), {}),
    ("combinations", (a([1, 2, 3], I64), 0), {}),
    ("combinations", (a([1, 2, 3], I64), 4), {}),
    ("combinations", (a([1, 2, 3], I64), 2, True), {}),
    ("combinations", (np.zeros(0, F32),), {}),
    ("combinations", (a([1, 2, 3], I64), -1), {}),
    ("combinations", (np.ones((2, 2), F32),), {}),
    ("diagflat", (np.ones((2, 2), F32), 1), {}),
    ("diagflat", (np.array(3.0, F32), -1), {}),
    ("diagflat", (np.zeros(0, F32),), {}),
    ("rot90", (SQ, -1), {}),
    ("rot90", (SQ, 5, [1, 0]), {}),
    ("rot90", (SQ, 1, (-2, -1)), {}),
    ("rot90", (np.arange(24.0).reshape(2, 3, 4), 3, [2, 0]), {}),
    ("rot90", (SQ, 1, [0, 0]), {}),
    ("rot90", (SQ, 1, [0, -2]), {}),
    ("rot90", (SQ, 1, [0]), {}),
    ("rot90", (SQ, 1, [0, 2]), {}),
    ("rot90", (ONES3, 1), {}),
    ("tril_indices", (3, 4, 1), {}),
    ("tril_indices", (3, 4, -5), {}),
    ("tril_indices", (0, 3), {}),
    ("triu_indices", (3, 4, -1), {}),
    ("triu_indices", (4, 2, 10), {}),
    ("tril_indices", (-1, 3), {}),
    ("triu_indices", (3, -1), {}),
    ("unravel_index", (np.array(5), (3, 4)), {}),
    ("unravel_index", (a([-1, 12, -13], I64), (3, 4)), {}),
    ("unravel_index", (a([1], np.int32), 5), {}),
    ("unravel_index", (a([1], I64), ()), {}),
    ("unravel_index", (a([1.0]), (3, 4)), {}),
    ("unravel_index", (np.array(True), (3, 4)), {}),
    ("unravel_index", (a([1], I64), (-1,)), {}),
    ("unravel_index", (a([0], I64), (0,)), {}),
    ("unravel_index", (a([1], I64), (2.0,)), {}),
    # index_reduce
    ("index_reduce", (SQ, 0, a([0, 0, 2], I64), np.full((3, 4), 2.0, F32), "mean"), {}),
    ("index_reduce", (AR, 0, a([0, 0, 2], I64), AR, "mean"), {}),
    ("index_reduce", (SQ, 1, a([0, 3], I64), np.ones((3, 2), F32), "amin"),
     {"include_self": False}),
    ("index_reduce", (np.array(2.0, F32), 0, a([0], I64), np.array(3.0, F32), "prod"), {}),
    ("index_reduce", (SQ, 0, a([0, 0, 2], I64), SQ, "sum"), {}),
    ("index_reduce", (SQ, 0, a([0, 0, 5], I64), SQ, "prod"), {}),
    ("index_reduce", (SQ, 0, a([0, -1, 2], I64), SQ, "prod"), {}),
    ("index_reduce", (SQ, 0, a([0, 0], I64), SQ, "prod"), {}),
    ("index_reduce", (SQ, 0, a([0.0, 0, 1]), SQ, "prod"), {}),
    ("index_reduce", (SQ, 0, a([0, 0, 1], I64), SQ.astype(F64), "prod"), {}),
    ("index_reduce", (SQ, 0, a([[0, 1, 2]], I64), SQ, "prod"), {}),
    ("index_reduce", (SQ, 0, a([0, 1], I64), np.ones((2, 3), F32), "prod"), {}),
    (lambda L, x, i, s: L.tensor(x).index_reduce_(0, L.tensor(i), L.tensor(s), "amax"),
     (SQ, a([2, 0, 2], I64), SQ[::-1].copy()), {}),
    # binomial (its deterministic cases) and the predicates
    ("binomial", (a([10.0, 5.0, -5.0, 10.5]), a([1.0, 1.5, 1.0, 1.0])), {}),
    ("binomial", (a([10.0, 5.0]), a([0.0, -1.0])), {}),
    ("binomial", (a([10, 5], I64), a([0.5, 1.0])), {}),
    ("binomial", (a([10.0]), a([0.5], F64)), {}),
    ("binomial", (a([10.0]), 0.5), {}),
    ("binomial", (a([10.0], np.float16), a([1.0], np.float16)), {}),
    ("is_nonzero", (a([1], I64),), {}),
    ("is_nonzero", (a([0.0]),), {}),
    ("is_nonzero", (a([[NAN]]),), {}),
    ("is_nonzero", (a([1, 2], I64),), {}),
    ("is_nonzero", (np.zeros(0, F32),), {}),
    ("is_nonzero", (1,), {}),
    ("is_same_size", (SQ, AR), {}),
    ("is_same_size", (SQ, SQ.T.copy()), {}),
    ("is_same_size", (SQ, 1), {}),
    ("is_signed", (AR.astype(np.uint8),), {}),
    ("is_signed", (AR > 0,), {}),
    ("is_signed", (a([1j], np.complex64),), {}),
    ("is_signed", (1,), {}),
    # the top-level in-place functions
    (lambda L, x: L.clamp_(L.tensor(x), min=0), (X,), {}),
    (lambda L, x: L.nan_to_num_(L.tensor(x), posinf=1.0), (a([NAN, INF, -INF]),), {}),
    (lambda L, x: L.logit_(L.tensor(x), 0.25), (a([0.1, 0.5, 0.9]),), {}),
    (lambda L, x, y: L.xlogy_(L.tensor(x), L.tensor(y)), (a([0.0, 2.0]), a([0.0, 3.0])), {}),
    (lambda L, v, m, w: L.addmv_(L.tensor(v), L.tensor(m), L.tensor(w), beta=2, alpha=0.5),
     (np.ones(3, F32), X[:, :4].copy(), np.ones(4, F32)), {}),
    (lambda L, x: L.sqrt_(L.tensor(x)), (AR,), {}),
    (lambda L, x: L.abs_(x), (X,), {}),
]


def _to(lib, v):
    if isinstance(v, np.ndarray):
        return lib.tensor(v) if lib is ember else torch.from_numpy(v.copy())
    if isinstance(v, list):
        return [_to(lib, x) for x in v]
    if isinstance(v, tuple):
        return tuple(_to(lib, x) for x in v)
    if isinstance(v, dict):
        return {k: _to(lib, x) for k, x in v.items()}
    return v


def _plain(r):
    if isinstance(r, (ember.Tensor, torch.Tensor)):
        return r.detach().numpy()
    if isinstance(r, (list, tuple)):
        return [_plain(x) for x in r]
    return r


def _run(lib, fn, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if callable(fn):
            return fn(lib, *args, **kwargs)  # the lambdas make their own tensors
        return getattr(lib, fn)(*_to(lib, args), **_to(lib, kwargs))


def _assert_same(e, t, where=""):
    if isinstance(t, list):
        assert isinstance(e, list) and len(e) == len(t), where
        for k, (x, y) in enumerate(zip(e, t, strict=True)):
            _assert_same(x, y, f"{where}[{k}]")
        return
    if isinstance(t, np.ndarray):
        assert isinstance(e, np.ndarray), where
        assert e.dtype == t.dtype and e.shape == t.shape, (where, e.dtype, t.dtype, e.shape,
                                                           t.shape)
        tol = 2e-3 if t.dtype == np.float16 else 1e-5 if t.dtype in (np.float32,
                                                                   np.complex64) else 1e-12
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol, equal_nan=True, err_msg=where)
        if t.dtype.kind == "f":  # signed zeros and infinities
            np.testing.assert_array_equal(np.signbit(e[t == 0]), np.signbit(t[t == 0]), where)
        return
    assert e == t, where


def _case_id(case):
    fn, args, kwargs = case
    return fn if isinstance(fn, str) else "lambda"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_matches_torch(case):
    fn, args, kwargs = case
    try:
        expected = _plain(_run(torch, fn, args, kwargs))
    except Exception as exc:  # noqa: BLE001 - any error torch raises, ember must raise too
        with pytest.raises(type(exc)):
            _run(ember, fn, args, kwargs)
        return
    _assert_same(_plain(_run(ember, fn, args, kwargs)), expected)


def test_in_place_forms_return_their_input_and_keep_its_dtype():
    for name, args in [("copysign_", (-1.0,)), ("deg2rad_", ()), ("renorm_", (2, 0, 1.0)),
                       ("t_", ()), ("unsqueeze_", (0,)), ("transpose_", (0, 1))]:
        for lib in (ember, torch):
            x = lib.tensor(SQ)
            assert getattr(x, name)(*args) is x
            assert x.dtype == lib.float32
    for name in ("sin_", "clamp_", "neg_", "gcd_", "sqrt_"):
        x = ember.tensor(AR if name == "gcd_" else X)
        args = (ember.tensor(AR),) if name == "gcd_" else ()
        kwargs = {"min": 0} if name == "clamp_" else {}
        assert getattr(ember, name)(x, *args, **kwargs) is x


def test_top_level_in_place_functions_take_the_methods_signatures():
    from ember._ops.inplace_functions import NAMES

    for name in NAMES:
        assert hasattr(torch, name), name
        sig = inspect.signature(getattr(ember, name))
        method = inspect.signature(getattr(ember.Tensor, name))
        assert list(sig.parameters)[0] == "input"
        assert list(sig.parameters)[1:] == list(method.parameters)[1:], name
    with pytest.raises(TypeError, match="must be Tensor"):
        ember.abs_([1.0])


def test_in_place_view_changes_under_autograd_match_torch():
    results = []
    for lib in (ember, torch):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            x.t_()
        y = x * 2
        y.t_()
        assert tuple(y.shape) == (3, 2) and y.grad_fn is not None
        v = y[0]  # a view, changed in place, then written through
        v.unsqueeze_(0)
        assert tuple(v.shape) == (1, 2)
        w = lib.tensor(np.arange(6.0).reshape(3, 2))
        (y * w).sum().backward()
        base = lib.tensor(np.arange(6.0).reshape(2, 3))
        row = base[1]
        row.unsqueeze_(0).mul_(10)
        results.append((x.grad.numpy(), base.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_nextafter_gradients_match_torch():
    grads = []
    for lib in (ember, torch):
        # equal operands (the middle row, and nan) are where the input's gradient is 0
        a_ = lib.tensor(np.vstack([X, a([[1.0, NAN, 0.0, 2.0, 3.0]])]).astype(F64),
                        requires_grad=True)
        b_ = lib.tensor(np.vstack([X[::-1], a([[NAN, 1.0, 0.0, 2.0, -3.0]])]).astype(F64),
                        requires_grad=True)
        lib.nextafter(a_, b_).backward(lib.tensor(np.arange(20.0).reshape(4, 5)))
        grads.append((a_.grad.numpy(), b_.grad.numpy()))
    for e, t in zip(grads[0], grads[1], strict=True):
        np.testing.assert_array_equal(e, t)
    assert not grads[0][1].any() and not grads[0][0][1].any()


def test_out_arguments_match_torch():
    outs = []
    for lib in (ember, torch):
        x = lib.tensor(a([8.0, 0.75, -3.0]))
        m, e = lib.empty(3), lib.empty(3, dtype=lib.int32)
        r = lib.frexp(x, out=(m, e))
        assert r[0] is m and r[1] is e
        h, edges = lib.empty(0), lib.empty(0)
        lib.histogram(x, 2, out=(h, edges))
        o = lib.empty(3)
        lib.addcmul(x, x, x, value=2, out=o)
        outs.append([m.numpy(), e.numpy(), h.numpy(), edges.numpy(), o.numpy()])
    _assert_same(outs[0], outs[1])


def test_warnings_match_torch():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            lib.cov(lib.ones(3, 1))


def test_binomial_samples_follow_the_distribution():
    ember.manual_seed(0)
    n, p = 20.0, 0.25
    draws = ember.binomial(ember.full((20000,), n), ember.full((20000,), p)).numpy()
    assert draws.dtype == np.float32 and set(np.unique(draws)) <= set(range(21))
    assert abs(draws.mean() - n * p) < 0.05
    assert abs(draws.var() - n * p * (1 - p)) < 0.15
    g = ember.Generator().manual_seed(3)
    one = ember.binomial(ember.full((50,), n), ember.full((50,), p), generator=g)
    g.manual_seed(3)
    two = ember.binomial(ember.full((50,), n), ember.full((50,), p), generator=g)
    np.testing.assert_array_equal(one.numpy(), two.numpy())
    c = ember.tensor([NAN, INF, 10.0])
    assert np.isnan(ember.binomial(c, ember.tensor([0.5, 0.5, NAN])).numpy()).all()


_NAMES = ("addcdiv addcmul copysign float_power frexp gcd lcm heaviside ldexp logaddexp "
          "logaddexp2 nextafter deg2rad rad2deg positive rsub cov corrcoef diff gradient "
          "histogram histogramdd isin block_diag cartesian_prod combinations cdist pdist dist "
          "renorm tril_indices triu_indices unravel_index trapezoid trapz cumulative_trapezoid "
          "diagflat rot90 index_reduce binomial is_nonzero is_same_size is_signed").split()
_INPLACE_METHODS = ("copysign_ float_power_ heaviside_ nextafter_ renorm_ lcm_ gcd_ ldexp_ "
                    "deg2rad_ rad2deg_ squeeze_ unsqueeze_ t_ transpose_ swapaxes_ swapdims_ "
                    "addcdiv_ addcmul_ index_reduce_").split()


def test_every_name_is_where_torch_has_it():
    from ember._ops.inplace_functions import NAMES

    missing = []
    for name in _NAMES + list(NAMES):
        for t_ns, e_ns in ((torch, ember), (torch.Tensor, ember.Tensor)):
            for n in (name, name + "_") if name in _NAMES else (name,):
                if hasattr(t_ns, n) and not hasattr(e_ns, n):
                    missing.append(f"{e_ns.__name__}.{n}")
                if hasattr(t_ns, n) and e_ns is ember and n not in ember.__all__:
                    missing.append(f"ember.__all__: {n}")
    missing += [f"Tensor.{n}" for n in _INPLACE_METHODS if not hasattr(ember.Tensor, n)]
    assert not missing
    assert all(hasattr(torch.Tensor, n) for n in _INPLACE_METHODS)
