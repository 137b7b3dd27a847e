"""OpInfos for elementwise ops: arithmetic, unary math, rounding, clamp/where/lerp,
comparisons, logical and bitwise ops, closeness tests."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

import ember
from ember.testing._opinfo.core import ALL_REAL, FLOATING, OpInfo, SampleInput, arr

_INTS = (np.uint8, np.int8, np.int16, np.int32, np.int64)
_BOOL_INTS = (np.bool_,) + _INTS
_NUMERIC = ALL_REAL[1:]  # without bool
_FLOAT_AND_INT = FLOATING + (np.int64,)
_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3,)), ((5,), ()),
           ((0, 3), (3,))]


def quiet(fn):
    """A NumPy reference without RuntimeWarnings (log(0), 0/0, ...)."""
    @functools.wraps(fn)
    def ref(*args, **kwargs):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn(*args, **kwargs)
    return ref


def _t(name):
    return lambda torch: getattr(torch, name)


def _binary_samples(low=-3, high=3, other_low=None, other_high=None, scalars=True,
                    float_scalar=True):
    """Broadcasting pairs, a 0-dim tensor operand, an empty tensor and Python numbers."""
    olo = low if other_low is None else other_low
    ohi = high if other_high is None else other_high

    def samples(dtype, rng):
        for sa, sb in _SHAPES:
            yield SampleInput(arr(rng, sa, dtype, low, high), (arr(rng, sb, dtype, olo, ohi),))
        if scalars:
            kind = np.dtype(dtype).kind
            # a number inside the other operand's range, of the tensor's kind
            n = max(int(olo), 1) if olo >= 0 else 2
            yield SampleInput(arr(rng, (3, 2), dtype, low, high), (n,), name="int scalar")
            if float_scalar and kind == "f":
                yield SampleInput(arr(rng, (3, 2), dtype, low, high),
                                  (float(max(olo, 0.5) + 1.0),), name="float scalar")
    return samples


def _unary_samples(low=-3, high=3, shapes=((3, 4), (), (2, 0), (2, 3, 2))):
    def samples(dtype, rng):
        for shape in shapes:
            yield SampleInput(arr(rng, shape, dtype, low, high))
    return samples


def _fixed_samples(*values):
    """Samples of given values (cast to the dtype), e.g. special points."""
    def samples(dtype, rng):
        for v in values:
            yield SampleInput(np.asarray(v).astype(dtype), grad=False)
    return samples


def _chain(*gens):
    def samples(dtype, rng):
        for g in gens:
            yield from g(dtype, rng)
    return samples


def _unary(name, ref, low=-3, high=3, dtypes=FLOATING + (np.int64,), method=True,
           extra=None, **kw):
    gen = _unary_samples(low, high)
    if extra is not None:
        gen = _chain(gen, extra)
    return OpInfo(name, getattr(ember, name), gen, ref=quiet(ref), dtypes=dtypes,
                  torch_op=_t(name), method=name if method else None, **kw)


def _binary(name, ref, dtypes, samples=None, method=True, **kw):
    return OpInfo(name, getattr(ember, name), samples or _binary_samples(), ref=quiet(ref),
                  dtypes=dtypes, torch_op=_t(name), method=name if method else None, **kw)


# ---------------------------------------------------------------------------
# references NumPy lacks

_v_erf = np.vectorize(math.erf, otypes=[np.float64])
_v_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _lgamma_scalar(v):
    try:
        return math.lgamma(v)
    except ValueError:
        return math.inf


_v_lgamma = np.vectorize(_lgamma_scalar, otypes=[np.float64])


def _erfinv_scalar(y):
    """erfinv by bisection on math.erf (slow, but independent of ember's algorithm)."""
    if not -1 < y < 1:
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    lo, hi = -6.0, 6.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if math.erf(mid) < y:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


_v_erfinv = np.vectorize(_erfinv_scalar, otypes=[np.float64])


def _as_float(x):
    """Integer inputs of float-only ops compute in the default float dtype."""
    return x.astype(np.float32) if x.dtype.kind in "biu" else x


def _float_ref(fn):
    return lambda x: fn(_as_float(x)).astype(_as_float(x).dtype)


def _ref_round(x, decimals=0):
    # PyTorch rounds float16 in float32
    return np.round(x.astype(np.float32) if x.dtype == np.float16 else x,
                    decimals).astype(x.dtype)


def _ref_isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """PyTorch's isclose: integer differences are measured in the default float dtype."""
    if a.dtype.kind in "biu":
        close = a == b
        if rtol == 0 and atol == 0:
            return close
        fa, fb = a.astype(np.float32), b.astype(np.float32)
        return close | (np.abs(fa - fb) <= atol + np.abs(rtol * fb))
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _ref_logit(x, eps=None):
    x = _as_float(x)
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


def _ref_sigmoid(x):
    x = _as_float(x)
    return 1 / (1 + np.exp(-x))


def _ref_clamp(x, min=None, max=None):
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def _ref_lerp(a, b, w):
    return a + w * (b - a)


def _ref_shift_left(a, b):
    return np.left_shift(a, b)


def _ref_remainder(a, b):
    return np.remainder(a, b)


def _ref_nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _ref_isreal(x):
    return np.isreal(x)


def _ref_signbit(x):
    return np.signbit(x) if x.dtype.kind != "b" else np.zeros(x.shape, bool)


def _ref_where(c, a, b):
    return np.where(c, a, b)


# ---------------------------------------------------------------------------
# sample generators of the ops with several kinds of arguments

def _special_values(dtype, rng):
    """Values with nan, +-inf and -0.0 in them (float dtypes), for the tests of values."""
    if np.dtype(dtype).kind != "f":
        yield SampleInput(arr(rng, (3, 4), dtype))
        return
    v = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.5, 3.0], dtype=dtype)
    yield SampleInput(v, grad=False)
    yield SampleInput(arr(rng, (2, 3), dtype))


def _clamp_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype, -3, 3)
    kind = np.dtype(dtype).kind
    lo, hi = (-1, 2) if kind in "iu" else (-1.25, 1.5)
    if kind == "u":
        lo = 1
    yield SampleInput(x, (lo, hi), name="both")
    yield SampleInput(x, (lo,), name="min only")
    yield SampleInput(x, (), {"max": hi}, name="max only")
    yield SampleInput(x, (hi, lo), name="min > max")
    # tensor bounds, broadcast
    yield SampleInput(x, (arr(rng, (4,), dtype, -2, 0), arr(rng, (3, 1), dtype, 1, 3)),
                      name="tensor bounds")
    yield SampleInput(x, (arr(rng, (3, 4), dtype, -1, 1),), name="tensor min")
    yield SampleInput(x, (), {"max": arr(rng, (), dtype, 0, 2)}, name="0-dim tensor max")
    yield SampleInput(x, (arr(rng, (3, 4), dtype, 0, 3), arr(rng, (3, 4), dtype, -3, 0)),
                      name="tensor min > max")


def _where_samples(dtype, rng):
    c = arr(rng, (3, 4), np.bool_)
    yield SampleInput(c, (arr(rng, (3, 4), dtype), arr(rng, (3, 4), dtype)))
    yield SampleInput(arr(rng, (2, 1, 4), np.bool_), (arr(rng, (3, 1), dtype),
                                                      arr(rng, (4,), dtype)), name="broadcast")
    yield SampleInput(c, (arr(rng, (3, 4), dtype), 2), name="scalar other")
    yield SampleInput(c, (1, arr(rng, (4,), dtype)), name="scalar input")
    yield SampleInput(arr(rng, (), np.bool_), (arr(rng, (), dtype), arr(rng, (2,), dtype)),
                      name="0-dim")


def _lerp_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype), 0.3), name="w < .5")
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (4,), dtype), 0.8), name="w > .5")
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype),
                                                arr(rng, (3, 4), dtype, -0.5, 1.5)),
                      name="tensor weight")
    yield SampleInput(arr(rng, (3, 1), dtype), (arr(rng, (4,), dtype),
                                                arr(rng, (2, 1, 1), dtype, 0, 1)),
                      name="broadcast")


def _nonzero_other(low=1, high=3):
    """Pairs whose divisor is away from 0, both signs."""
    def samples(dtype, rng):
        kind = np.dtype(dtype).kind
        lo = low if kind == "f" else max(1, math.ceil(low))
        for sa, sb in _SHAPES:
            b = arr(rng, sb, dtype, lo, high)
            if kind != "u":
                b = b * np.where(arr(rng, sb, np.bool_), 1, -1).astype(dtype)
            yield SampleInput(arr(rng, sa, dtype, -5, 5), (b,))
        yield SampleInput(arr(rng, (3, 2), dtype, -5, 5), (2,), name="int scalar")
        if kind == "f":
            yield SampleInput(arr(rng, (3, 2), dtype, -5, 5), (-1.5,), name="float scalar")
    return samples


def _shift_samples(dtype, rng):
    bits = np.dtype(dtype).itemsize * 8
    yield SampleInput(arr(rng, (3, 4), dtype, 0, 9), (arr(rng, (3, 4), dtype, 0, bits),))
    yield SampleInput(arr(rng, (3, 4), dtype, -9, 9), (arr(rng, (4,), dtype, 0, bits - 1),))
    yield SampleInput(arr(rng, (3, 4), dtype, -9, 9), (2,), name="scalar")


def _isclose_samples(dtype, rng):
    a = arr(rng, (3, 4), dtype, -3, 3)
    kind = np.dtype(dtype).kind
    if kind == "f":
        b = (a + rng.uniform(-2e-5, 2e-5, a.shape)).astype(dtype)
        yield SampleInput(a, (b,))
        yield SampleInput(a, (b,), {"rtol": 0.0, "atol": 1e-5})
        s = np.array([np.nan, np.inf, -np.inf, 1.0, np.nan], dtype=dtype)
        t = np.array([np.nan, np.inf, np.inf, np.nan, 1.0], dtype=dtype)
        yield SampleInput(s, (t,))
        yield SampleInput(s, (t,), {"equal_nan": True})
    else:
        b = arr(rng, (3, 4), dtype, -3, 3)
        yield SampleInput(a, (b,))
        yield SampleInput(a, (b,), {"rtol": 0.0, "atol": 1.0})
    yield SampleInput(a, (arr(rng, (4,), dtype),), name="broadcast")


def _equal_samples(dtype, rng):
    a = arr(rng, (3, 4), dtype)
    yield SampleInput(a, (a.copy(),))
    yield SampleInput(a, (arr(rng, (3, 4), dtype),))
    yield SampleInput(a, (a[:2].copy(),), name="shapes differ")


def _ref_equal(a, b):
    return a.shape == b.shape and bool((a == b).all())


def _lgamma_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype, 0.2, 6))
    yield SampleInput(np.array([-2.5, -1.3, -0.7, 0.5, 1.0, 2.0, 12.5, 30.0], dtype=dtype))


# ---------------------------------------------------------------------------

OPS = [
    # arithmetic
    OpInfo("add", ember.add, _binary_samples(), ref=np.add, dtypes=ALL_REAL[1:],
           torch_op=_t("add"), method="add", gradgrad=True),
    OpInfo("add_bool", ember.add, _binary_samples(scalars=False), ref=np.logical_or,
           dtypes=(np.bool_,), differentiable=False, torch_op=_t("add")),
    OpInfo("add_alpha", lambda a, b: ember.add(a, b, alpha=2), _binary_samples(),
           ref=lambda a, b: a + 2 * b, dtypes=_NUMERIC,
           torch_op=lambda torch: lambda a, b: torch.add(a, b, alpha=2)),
    OpInfo("add_alpha_float", lambda a, b: ember.add(a, b, alpha=0.5), _binary_samples(),
           ref=lambda a, b: a + 0.5 * b,
           torch_op=lambda torch: lambda a, b: torch.add(a, b, alpha=0.5)),
    OpInfo("sub", ember.sub, _binary_samples(), ref=np.subtract, dtypes=ALL_REAL[1:],
           torch_op=_t("sub"), method="sub"),
    OpInfo("sub_alpha", lambda a, b: ember.sub(a, b, alpha=3), _binary_samples(),
           ref=lambda a, b: a - 3 * b, dtypes=_FLOAT_AND_INT,
           torch_op=lambda torch: lambda a, b: torch.sub(a, b, alpha=3)),
    OpInfo("rsub_operator", lambda a, b: b - a, _binary_samples(),
           ref=lambda a, b: np.subtract(b, a), dtypes=_FLOAT_AND_INT,
           torch_op=lambda torch: lambda a, b: b - a),
    OpInfo("mul", ember.mul, _binary_samples(), ref=np.multiply, dtypes=ALL_REAL,
           torch_op=_t("mul"), method="mul", gradgrad=True),
    OpInfo("div", ember.div, _nonzero_other(0.5, 3), ref=quiet(np.true_divide),
           dtypes=FLOATING + (np.float16, np.int32, np.int64), torch_op=_t("div"),
           method="div", gradgrad=True),
    OpInfo("div_trunc", lambda a, b: ember.div(a, b, rounding_mode="trunc"),
           _nonzero_other(), ref=quiet(lambda a, b: np.trunc(np.true_divide(a, b)).astype(
               np.result_type(a, b)) if np.result_type(a, b).kind == "f" else np.fix(
               np.true_divide(a, b)).astype(np.result_type(a, b))),
           dtypes=FLOATING + _INTS,
           torch_op=lambda torch: lambda a, b: torch.div(a, b, rounding_mode="trunc")),
    OpInfo("div_floor", lambda a, b: ember.div(a, b, rounding_mode="floor"),
           _nonzero_other(), ref=quiet(np.floor_divide), dtypes=FLOATING + _INTS,
           torch_op=lambda torch: lambda a, b: torch.div(a, b, rounding_mode="floor")),
    OpInfo("floor_divide", ember.floor_divide, _nonzero_other(), ref=quiet(np.floor_divide),
           dtypes=FLOATING + _INTS, differentiable=False, torch_op=_t("floor_divide"),
           method="floor_divide"),
    OpInfo("floordiv_operator", lambda a, b: a // b, _nonzero_other(),
           ref=quiet(np.floor_divide), dtypes=(np.float32, np.int64), differentiable=False,
           torch_op=lambda torch: lambda a, b: a // b),
    _binary("remainder", _ref_remainder, FLOATING + _INTS, _nonzero_other(0.5, 3)),
    OpInfo("mod_operator", lambda a, b: a % b, _nonzero_other(), ref=quiet(np.remainder),
           dtypes=(np.float64, np.int64), torch_op=lambda torch: lambda a, b: a % b),
    _binary("fmod", np.fmod, FLOATING + _INTS, _nonzero_other(0.5, 3)),
    OpInfo("pow", ember.pow, _binary_samples(low=0.5, high=2, other_low=-2, other_high=2),
           ref=quiet(np.power), torch_op=_t("pow"), method="pow", gradgrad=True),
    OpInfo("pow_int", ember.pow, _binary_samples(low=-3, high=4, other_low=0, other_high=4),
           ref=np.power, dtypes=_INTS, differentiable=False, torch_op=_t("pow")),
    OpInfo("pow_scalar_base", lambda x: ember.pow(2.5, x), _unary_samples(-2, 2),
           ref=lambda x: np.power(2.5, _as_float(x)).astype(_as_float(x).dtype),
           dtypes=_FLOAT_AND_INT, torch_op=lambda torch: lambda x: torch.pow(2.5, x)),
    OpInfo("rpow_operator", lambda x: 2 ** x, _unary_samples(0, 5),
           ref=lambda x: np.power(x.dtype.type(2), x), dtypes=FLOATING + (np.int64,),
           torch_op=lambda torch: lambda x: 2 ** x),
    _binary("atan2", np.arctan2, FLOATING + (np.int64,),
            _binary_samples(scalars=False), gradgrad=True),
    _binary("hypot", np.hypot, FLOATING + (np.float16,), _binary_samples(scalars=False),
            gradgrad=True),

    # min and max
    _binary("maximum", np.maximum, ALL_REAL, _binary_samples(scalars=False), gradgrad=True),
    _binary("minimum", np.minimum, ALL_REAL, _binary_samples(scalars=False)),
    _binary("fmax", np.fmax, _NUMERIC, _binary_samples(scalars=False)),
    _binary("fmin", np.fmin, _NUMERIC, _binary_samples(scalars=False)),
    OpInfo("maximum_nan", ember.maximum, lambda d, r: [SampleInput(
        np.array([np.nan, 1.0, np.nan, 2.0], d), (np.array([1.0, np.nan, np.nan, 2.0], d),),
        grad=False)], ref=np.maximum, torch_op=_t("maximum")),
    OpInfo("fmin_nan", ember.fmin, lambda d, r: [SampleInput(
        np.array([np.nan, 1.0, np.nan, 2.0], d), (np.array([1.0, np.nan, np.nan, 2.0], d),),
        grad=False)], ref=np.fmin, torch_op=_t("fmin")),

    # clamp, where, lerp
    OpInfo("clamp", ember.clamp, _clamp_samples, ref=_ref_clamp, dtypes=_NUMERIC,
           torch_op=_t("clamp"), method="clamp", gradgrad=True),
    OpInfo("clip", ember.clip, _clamp_samples, ref=_ref_clamp, dtypes=(np.float64,),
           torch_op=_t("clip"), method="clip"),
    OpInfo("clamp_min", ember.clamp_min, lambda d, r: [
        SampleInput(arr(r, (3, 4), d), (0.5,)), SampleInput(arr(r, (3, 4), d),
                                                           (arr(r, (4,), d),))],
           ref=np.maximum, torch_op=_t("clamp_min"), method="clamp_min"),
    OpInfo("clamp_max", ember.clamp_max, lambda d, r: [
        SampleInput(arr(r, (3, 4), d), (0.5,)), SampleInput(arr(r, (3, 4), d),
                                                           (arr(r, (4,), d),))],
           ref=np.minimum, torch_op=_t("clamp_max"), method="clamp_max"),
    OpInfo("where", ember.where, _where_samples, ref=_ref_where, dtypes=ALL_REAL,
           torch_op=_t("where"), gradgrad=True),
    OpInfo("lerp", ember.lerp, _lerp_samples, ref=_ref_lerp, dtypes=FLOATING + (np.float16,),
           torch_op=_t("lerp"), method="lerp", gradgrad=True),

    # unary math
    _unary("neg", np.negative, dtypes=_NUMERIC),
    _unary("abs", np.abs, dtypes=_NUMERIC),
    _unary("sign", np.sign, dtypes=_NUMERIC),
    # (+ 0 * x: torch's zero gradient of sgn is a ZeroTensor, which has no numpy())
    OpInfo("sgn", ember.sgn, _unary_samples(), ref=np.sign, dtypes=FLOATING + (np.int64,),
           torch_op=lambda torch: lambda x: torch.sgn(x) + 0 * x, method="sgn"),
    _unary("square", np.square, dtypes=_NUMERIC),
    _unary("reciprocal", _float_ref(np.reciprocal), low=0.5, high=3),
    _unary("sqrt", _float_ref(np.sqrt), low=0.2, high=4, gradgrad=True),
    _unary("rsqrt", _float_ref(lambda x: 1 / np.sqrt(x)), low=0.2, high=4),
    _unary("exp", _float_ref(np.exp), dtypes=FLOATING + (np.int64, np.float16), gradgrad=True),
    _unary("exp2", _float_ref(np.exp2)),
    _unary("expm1", _float_ref(np.expm1)),
    _unary("log", _float_ref(np.log), low=0.2, high=4, dtypes=FLOATING + (np.float16,)),
    _unary("log1p", _float_ref(np.log1p), low=-0.5, high=3),
    _unary("log2", _float_ref(np.log2), low=0.2, high=4),
    _unary("log10", _float_ref(np.log10), low=0.2, high=4),
    _unary("sin", _float_ref(np.sin)),
    _unary("cos", _float_ref(np.cos)),
    _unary("tan", _float_ref(np.tan), low=-1.2, high=1.2),
    _unary("asin", _float_ref(np.arcsin), low=-0.9, high=0.9, dtypes=FLOATING),
    _unary("acos", _float_ref(np.arccos), low=-0.9, high=0.9, dtypes=FLOATING),
    _unary("atan", _float_ref(np.arctan)),
    _unary("sinh", _float_ref(np.sinh)),
    _unary("cosh", _float_ref(np.cosh)),
    _unary("tanh", _float_ref(np.tanh), gradgrad=True),
    _unary("asinh", _float_ref(np.arcsinh)),
    _unary("acosh", _float_ref(np.arccosh), low=1.2, high=4, dtypes=FLOATING),
    _unary("atanh", _float_ref(np.arctanh), low=-0.9, high=0.9, dtypes=FLOATING),
    _unary("sigmoid", _ref_sigmoid, low=-10, high=10, gradgrad=True),
    OpInfo("arcsin", ember.arcsin, _unary_samples(-0.9, 0.9), ref=np.arcsin,
           torch_op=_t("arcsin"), method="arcsin"),
    OpInfo("arctan2", ember.arctan2, _binary_samples(scalars=False), ref=np.arctan2,
           torch_op=_t("arctan2"), method="arctan2"),
    OpInfo("logit", ember.logit, _unary_samples(0.05, 0.95), ref=quiet(_ref_logit),
           dtypes=_FLOAT_AND_INT[:2], torch_op=_t("logit"), method="logit"),
    OpInfo("logit_eps", lambda x: ember.logit(x, eps=0.2), _unary_samples(0.05, 0.95),
           ref=quiet(lambda x: _ref_logit(x, 0.2)), dtypes=FLOATING,
           torch_op=lambda torch: lambda x: torch.logit(x, eps=0.2)),

    # special functions
    _unary("erf", _float_ref(_v_erf), gradgrad=True),
    _unary("erfc", _float_ref(_v_erfc)),
    _unary("erfinv", _float_ref(_v_erfinv), low=-0.95, high=0.95,
           extra=_fixed_samples([-1.0, 1.0, 0.0, 1.5, -0.9999])),
    OpInfo("lgamma", ember.lgamma, _chain(_lgamma_samples, _fixed_samples([0.0, -1.0, -2.0])),
           ref=_float_ref(_v_lgamma), dtypes=FLOATING + (np.int64,), torch_op=_t("lgamma"),
           method="lgamma", gradgrad=True),
    OpInfo("digamma", ember.digamma, _lgamma_samples, ref=None, dtypes=FLOATING,
           torch_op=_t("digamma"), method="digamma"),

    # rounding
    _unary("floor", np.floor, dtypes=_NUMERIC),
    _unary("ceil", np.ceil, dtypes=_NUMERIC),
    _unary("trunc", np.trunc, dtypes=_NUMERIC),
    OpInfo("fix", ember.fix, _unary_samples(), ref=np.trunc, torch_op=_t("fix"),
           method="fix"),
    OpInfo("round", ember.round, _chain(_unary_samples(-5, 5), _fixed_samples(
        [0.5, 1.5, 2.5, -0.5, -1.5])), ref=np.round, dtypes=_NUMERIC, torch_op=_t("round"),
        method="round"),
    OpInfo("round_decimals", lambda x, d: ember.round(x, decimals=d), lambda d, r: [
        SampleInput(arr(r, (3, 4), d, -50, 50), (2,)), SampleInput(arr(r, (3, 4), d, -500, 500),
                                                                  (-1,)),
        SampleInput(np.array([1.25, 1.35, 125.0, -0.05], d), (1,), grad=False)],
        ref=_ref_round, dtypes=FLOATING + (np.float16,),
        torch_op=lambda torch: lambda x, d: torch.round(x, decimals=d)),
    _unary("frac", lambda x: x - np.trunc(x), dtypes=FLOATING + (np.float16,)),
    _unary("relu", lambda x: np.maximum(x, 0), dtypes=_NUMERIC),
    OpInfo("nan_to_num", ember.nan_to_num, _special_values, ref=_ref_nan_to_num,
           dtypes=ALL_REAL, torch_op=_t("nan_to_num"), method="nan_to_num"),
    OpInfo("nan_to_num_values", lambda x: ember.nan_to_num(x, nan=1.0, posinf=2.0,
                                                           neginf=-3.0),
           _special_values, ref=lambda x: _ref_nan_to_num(x, 1.0, 2.0, -3.0),
           dtypes=FLOATING + (np.float16,),
           torch_op=lambda torch: lambda x: torch.nan_to_num(x, nan=1.0, posinf=2.0,
                                                             neginf=-3.0)),

    # tests of values
    _unary("isnan", np.isnan, dtypes=ALL_REAL, extra=_special_values, differentiable=False),
    _unary("isinf", np.isinf, dtypes=ALL_REAL, extra=_special_values, differentiable=False),
    _unary("isposinf", np.isposinf, dtypes=ALL_REAL, extra=_special_values,
           differentiable=False),
    _unary("isneginf", np.isneginf, dtypes=ALL_REAL, extra=_special_values,
           differentiable=False),
    _unary("isfinite", np.isfinite, dtypes=ALL_REAL, extra=_special_values,
           differentiable=False),
    _unary("isreal", _ref_isreal, dtypes=ALL_REAL, differentiable=False),
    _unary("signbit", _ref_signbit, dtypes=ALL_REAL, extra=_special_values,
           differentiable=False),
    _unary("logical_not", np.logical_not, dtypes=ALL_REAL, differentiable=False),
    _unary("bitwise_not", np.invert, dtypes=_BOOL_INTS, differentiable=False),
    OpInfo("invert_operator", lambda x: ~x, _unary_samples(), ref=np.invert,
           dtypes=_BOOL_INTS, differentiable=False,
           torch_op=lambda torch: lambda x: ~x),

    # comparisons
    _binary("eq", np.equal, ALL_REAL, differentiable=False),
    _binary("ne", np.not_equal, ALL_REAL, differentiable=False),
    _binary("lt", np.less, ALL_REAL, differentiable=False),
    _binary("le", np.less_equal, ALL_REAL, differentiable=False),
    _binary("gt", np.greater, ALL_REAL, differentiable=False),
    _binary("ge", np.greater_equal, ALL_REAL, differentiable=False),
    _binary("greater_equal", np.greater_equal, (np.float32,), differentiable=False),
    _binary("less", np.less, (np.int64,), differentiable=False),
    OpInfo("lt_operator", lambda a, b: a < b, _binary_samples(), ref=np.less,
           dtypes=(np.float32, np.int64), differentiable=False,
           torch_op=lambda torch: lambda a, b: a < b),
    OpInfo("eq_operator", lambda a, b: a == b, _binary_samples(), ref=np.equal,
           dtypes=(np.float32, np.int64), differentiable=False,
           torch_op=lambda torch: lambda a, b: a == b),

    # logical and bitwise
    _binary("logical_and", np.logical_and, ALL_REAL, _binary_samples(scalars=False),
            differentiable=False),
    _binary("logical_or", np.logical_or, ALL_REAL, _binary_samples(scalars=False),
            differentiable=False),
    _binary("logical_xor", np.logical_xor, ALL_REAL, _binary_samples(scalars=False),
            differentiable=False),
    _binary("bitwise_and", np.bitwise_and, _BOOL_INTS, differentiable=False),
    _binary("bitwise_or", np.bitwise_or, _BOOL_INTS, differentiable=False),
    _binary("bitwise_xor", np.bitwise_xor, _BOOL_INTS, differentiable=False),
    OpInfo("and_operator", lambda a, b: a & b, _binary_samples(scalars=False),
           ref=np.bitwise_and, dtypes=_BOOL_INTS, differentiable=False,
           torch_op=lambda torch: lambda a, b: a & b),
    _binary("bitwise_left_shift", _ref_shift_left, _INTS, _shift_samples,
            differentiable=False),
    _binary("bitwise_right_shift", np.right_shift, _INTS, _shift_samples,
            differentiable=False),
    OpInfo("lshift_operator", lambda a, b: a << b, _shift_samples, ref=np.left_shift,
           dtypes=(np.int64,), differentiable=False,
           torch_op=lambda torch: lambda a, b: a << b),

    # closeness
    OpInfo("isclose", ember.isclose, _isclose_samples, ref=quiet(_ref_isclose), dtypes=ALL_REAL[1:],
           differentiable=False, torch_op=_t("isclose"), method="isclose"),
    OpInfo("allclose", ember.allclose, _isclose_samples, ref=np.allclose,
           dtypes=FLOATING + (np.int64,), differentiable=False, torch_op=_t("allclose"),
           method="allclose"),
    OpInfo("equal", ember.equal, _equal_samples, ref=_ref_equal, dtypes=ALL_REAL,
           differentiable=False, torch_op=_t("equal"), method="equal"),
]
