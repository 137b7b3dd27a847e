"""OpInfos for the pointwise ops of ``ember._ops.pointwise``: addcmul/addcdiv, copysign,
float_power, frexp, gcd/lcm, heaviside, ldexp, logaddexp/logaddexp2, nextafter,
deg2rad/rad2deg, positive and rsub."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import FLOATING, OpInfo, SampleInput, XFail, arr
from ember.testing._opinfo.elementwise import _binary_samples, _unary_samples, quiet

_FLOAT_AND_INT = FLOATING + (np.int64,)
_TRIPLES = [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((2, 1, 4), (3, 1), (4,)),
            ((), (3,), ()), ((0, 3), (3,), (1, 3))]


def _t(name):
    return lambda torch: getattr(torch, name)


def _as_float(x):
    return x.astype(np.float32) if x.dtype.kind in "biu" else x


def _addc_samples(low=-3, high=3):
    def samples(dtype, rng):
        for sa, sb, sc in _TRIPLES:
            yield SampleInput(arr(rng, sa, dtype), (arr(rng, sb, dtype),
                                                    arr(rng, sc, dtype, low, high)))
        yield SampleInput(arr(rng, (3, 2), dtype), (arr(rng, (3, 2), dtype),
                                                    arr(rng, (2,), dtype, low, high)),
                          {"value": 2}, name="int value")
        if np.dtype(dtype).kind == "f":
            yield SampleInput(arr(rng, (3, 2), dtype), (arr(rng, (3, 2), dtype),
                                                        arr(rng, (2,), dtype, low, high)),
                              {"value": -0.5}, name="float value")
    return samples


def _ref_addcmul(x, a, b, value=1):
    if x.dtype.kind in "iu":
        value = int(value)
    return x + value * a * b


def _ref_addcdiv(x, a, b, value=1):
    return x + value * a / b


def _inplace_samples(gen):
    """The samples of ``gen`` whose input has the broadcast shape (in-place forms)."""
    def samples(dtype, rng):
        for s in gen(dtype, rng):
            shapes = [np.shape(s.input)] + [np.shape(a) for a in s.args]
            if np.broadcast_shapes(*shapes) == np.shape(s.input):
                yield s
    return samples


def _copysign_samples(dtype, rng):
    yield from _binary_samples()(dtype, rng)
    if np.dtype(dtype).kind == "f":
        # signed zeros and nan signs; input 0 is where the gradient is undefined
        yield SampleInput(np.array([0.0, -0.0, 1.5, -2.0], dtype),
                          (np.array([-1.0, 1.0, -0.0, np.nan], dtype),), grad=False,
                          name="zeros")
        yield SampleInput(arr(rng, (3,), dtype), (-0.0,), name="negative zero")


def _ref_copysign(a, b):
    a = _as_float(np.asarray(a))
    return np.copysign(a, b).astype(a.dtype)


def _float_power_samples(dtype, rng):
    for sa, sb in [((3, 4), (3, 4)), ((3, 4), (4,)), ((), (3,)), ((0, 2), (2,))]:
        yield SampleInput(arr(rng, sa, dtype, 0.5, 3), (arr(rng, sb, dtype, -2, 2),))
    yield SampleInput(arr(rng, (3, 2), dtype, 0.5, 3), (2,), name="int exponent")
    yield SampleInput(arr(rng, (3, 2), dtype, 0.5, 3), (-1.5,), name="float exponent")


def _ref_float_power(a, b):
    a = np.asarray(a, dtype=np.float64)
    return np.power(a, np.asarray(b, dtype=np.float64))


def _frexp_samples(dtype, rng):
    for shape in [(3, 4), (), (0, 2)]:
        yield SampleInput(arr(rng, shape, dtype, -40, 40))
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -0.75, 1e-30], dtype)
    yield SampleInput(special, grad=False, name="special values")


def _gcd_samples(dtype, rng):
    for sa, sb in [((3, 4), (3, 4)), ((3, 4), (4,)), ((), (3,)), ((0, 3), (3,))]:
        yield SampleInput(arr(rng, sa, dtype, -30, 30), (arr(rng, sb, dtype, -30, 30),))
    yield SampleInput(np.array([0, 0, 7, 12], dtype), (np.array([0, 5, 0, 18], dtype),),
                      name="zeros")


def _heaviside_samples(dtype, rng):
    for sa, sb in [((3, 4), (3, 4)), ((3, 4), (4,)), ((), (3,)), ((0, 3), (3,))]:
        a = arr(rng, sa, dtype)
        a.reshape(-1)[::3] = 0
        yield SampleInput(a, (arr(rng, sb, dtype),))
    if np.dtype(dtype).kind == "f":
        yield SampleInput(np.array([np.nan, 0.0, -0.0, np.inf, -np.inf], dtype),
                          (np.array([0.5], dtype),), name="special values")


def _ref_heaviside(x, v):
    return np.where(x == 0, v, x > 0).astype(x.dtype)


def _ldexp_samples(low=0):
    """Integer exponents from ``low`` to 4, and float exponents."""
    def samples(dtype, rng):
        for sa, sb in [((3, 4), (3, 4)), ((3, 4), (4,)), ((3,), ()), ((0, 3), (3,))]:
            yield SampleInput(arr(rng, sa, dtype), (arr(rng, sb, np.int64, low, 5),))
        yield SampleInput(arr(rng, (3, 2), dtype), (arr(rng, (3, 2), dtype, -3, 3),),
                          name="float exponents")
    return samples


def _ref_ldexp(a, e):
    a = _as_float(a)
    return (a * np.power(2.0, e.astype(a.dtype))).astype(a.dtype)


def _logaddexp_samples(dtype, rng):
    yield from _binary_samples(scalars=False)(dtype, rng)
    yield SampleInput(arr(rng, (3,), dtype, 50, 80), (arr(rng, (3,), dtype, -80, -50),),
                      name="far apart")
    yield SampleInput(np.array([np.inf, -np.inf, np.inf, np.nan, 2.0], dtype),
                      (np.array([np.inf, -np.inf, -np.inf, 1.0, -np.inf], dtype),),
                      grad=False, name="infinities")


def _nextafter_samples(dtype, rng):
    yield from _binary_samples(scalars=False)(dtype, rng)
    yield SampleInput(np.array([0.0, 1.0, np.inf, np.nan, -0.0], dtype),
                      (np.array([1.0, 1.0, 0.0, 1.0, -1.0], dtype),), grad=False,
                      name="special values")


def _rsub_samples(dtype, rng):
    yield from _binary_samples()(dtype, rng)
    yield SampleInput(arr(rng, (3, 2), dtype), (arr(rng, (2,), dtype),), {"alpha": 2},
                      name="alpha")


OPS = [
    OpInfo("addcmul", ember.addcmul, _addc_samples(), ref=_ref_addcmul, dtypes=_FLOAT_AND_INT,
           torch_op=_t("addcmul"), method="addcmul", gradgrad=True),
    OpInfo("addcdiv", ember.addcdiv, _addc_samples(0.5, 3), ref=quiet(_ref_addcdiv),
           torch_op=_t("addcdiv"), method="addcdiv", gradgrad=True),
    OpInfo("addcmul_", lambda x, a, b, **kw: x.clone().addcmul_(a, b, **kw),
           _inplace_samples(_addc_samples()), ref=_ref_addcmul, dtypes=_FLOAT_AND_INT,
           torch_op=lambda torch: lambda x, a, b, **kw: x.clone().addcmul_(a, b, **kw)),
    OpInfo("addcdiv_", lambda x, a, b, **kw: x.clone().addcdiv_(a, b, **kw),
           _inplace_samples(_addc_samples(0.5, 3)), ref=quiet(_ref_addcdiv),
           torch_op=lambda torch: lambda x, a, b, **kw: x.clone().addcdiv_(a, b, **kw)),
    OpInfo("copysign", ember.copysign, _copysign_samples, ref=quiet(_ref_copysign),
           dtypes=_FLOAT_AND_INT, torch_op=_t("copysign"), method="copysign"),
    OpInfo("float_power", ember.float_power, _float_power_samples, ref=quiet(_ref_float_power),
           dtypes=_FLOAT_AND_INT, torch_op=_t("float_power"), method="float_power"),
    OpInfo("frexp", ember.frexp, _frexp_samples, ref=lambda x: np.frexp(x)[0],
           dtypes=FLOATING + (np.float16,), torch_op=_t("frexp"), method="frexp",
           output_process=lambda r: r[0] if isinstance(r, tuple) else r),
    OpInfo("frexp_exponent", lambda x: ember.frexp(x).exponent, _frexp_samples,
           ref=lambda x: np.frexp(x)[1].astype(np.int32), dtypes=FLOATING + (np.float16,),
           differentiable=False, torch_op=lambda torch: lambda x: torch.frexp(x).exponent),
    OpInfo("gcd", ember.gcd, _gcd_samples, ref=np.gcd, dtypes=(np.int64, np.int32, np.uint8),
           differentiable=False, torch_op=_t("gcd"), method="gcd"),
    OpInfo("lcm", ember.lcm, _gcd_samples, ref=lambda a, b: np.abs(np.lcm(a, b)),
           dtypes=(np.int64, np.int32, np.int16), differentiable=False, torch_op=_t("lcm"),
           method="lcm"),
    OpInfo("heaviside", ember.heaviside, _heaviside_samples, ref=_ref_heaviside,
           dtypes=_FLOAT_AND_INT + (np.bool_,), differentiable=False,
           torch_op=_t("heaviside"), method="heaviside"),
    OpInfo("ldexp", ember.ldexp, _ldexp_samples(), ref=_ref_ldexp, dtypes=_FLOAT_AND_INT,
           torch_op=_t("ldexp"), method="ldexp"),
    OpInfo("ldexp_negative_exponents", ember.ldexp, _ldexp_samples(-4), ref=_ref_ldexp,
           torch_op=_t("ldexp"), xfails=(XFail(
               "test_gradients_match_torch",
               "PyTorch 2.13 bug (tests/interop/TORCH_BUGS.md): the gradient of ldexp with "
               "respect to input is 0 where an integer exponent is negative (2 ** -1 "
               "computed in integers)"),)),
    OpInfo("logaddexp", ember.logaddexp, _logaddexp_samples, ref=quiet(np.logaddexp),
           torch_op=_t("logaddexp"), method="logaddexp", gradgrad=True),
    OpInfo("logaddexp2", ember.logaddexp2, _logaddexp_samples, ref=quiet(np.logaddexp2),
           torch_op=_t("logaddexp2"), method="logaddexp2", gradgrad=True),
    OpInfo("nextafter", ember.nextafter, _nextafter_samples, ref=np.nextafter,
           dtypes=FLOATING + (np.float16,), torch_op=_t("nextafter"), method="nextafter"),
    OpInfo("deg2rad", ember.deg2rad, _unary_samples(-360, 360),
           ref=lambda x: np.deg2rad(_as_float(x)), dtypes=_FLOAT_AND_INT,
           torch_op=_t("deg2rad"), method="deg2rad"),
    OpInfo("rad2deg", ember.rad2deg, _unary_samples(), ref=lambda x: np.rad2deg(_as_float(x)),
           dtypes=_FLOAT_AND_INT, torch_op=_t("rad2deg"), method="rad2deg"),
    OpInfo("positive", ember.positive, _unary_samples(), ref=np.positive,
           dtypes=_FLOAT_AND_INT + (np.complex64,), torch_op=_t("positive"), method="positive"),
    OpInfo("rsub", ember.rsub, _rsub_samples, ref=lambda a, b, alpha=1: b - alpha * a,
           dtypes=_FLOAT_AND_INT, torch_op=_t("rsub")),
]
