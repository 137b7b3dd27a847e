"""Elementwise ops beyond the op database: type promotion, in-place semantics, operators,
error messages, gradient conventions at non-differentiable points, special functions and
broadcasting (hypothesis). Every expectation here was checked against PyTorch 2.13."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember.testing import assert_close


def t(values, dtype=None, requires_grad=False):
    return ember.tensor(values, dtype=dtype, requires_grad=requires_grad)


def grad_of(fn, *values):
    """The gradients of ``fn(*tensors).sum()`` for float64 leaves made from ``values``."""
    xs = [t(v, dtype=ember.float64, requires_grad=True) for v in values]
    out = fn(*xs)
    grads = ember.autograd.grad(out.sum(), xs, allow_unused=True)
    return [None if g is None else g.numpy().tolist() for g in grads]


# ---------------------------------------------------------------------------
# type promotion

I64, I8, U8 = t([1, 2]), t([1, -2], dtype=ember.int8), t([1, 200], dtype=ember.uint8)
F32, F64, F16 = t([1.0, 2.0]), t([1.0, 2.0], dtype=ember.float64), t([1.0, 2.0],
                                                                       dtype=ember.float16)
B = t([True, False])
C64 = t([1 + 1j, 2.0])

PROMOTION = [
    ("int tensor + 2.5", lambda: I64 + 2.5, ember.float32),
    ("int tensor * 2", lambda: I64 * 2, ember.int64),
    ("float16 tensor * 2.5", lambda: F16 * 2.5, ember.float16),
    ("float16 tensor + 1e3", lambda: F16 + 1e3, ember.float16),
    ("int8 + uint8", lambda: I8 + U8, ember.int16),
    ("float32 + float64 0-dim", lambda: F32 + t(1.0, dtype=ember.float64), ember.float32),
    ("int64 + float64 0-dim", lambda: I64 + t(1.0, dtype=ember.float64), ember.float64),
    ("int8 + int64 0-dim", lambda: I8 + t(1), ember.int8),
    ("float16 + float32 1-dim", lambda: F16 + F32, ember.float32),
    ("bool + bool add", lambda: B + B, ember.bool),
    ("bool * bool", lambda: B * B, ember.bool),
    ("bool + 1", lambda: B + 1, ember.int64),
    ("bool + True", lambda: B + True, ember.bool),
    ("bool * 2.5", lambda: B * 2.5, ember.float32),
    ("float32 + 1j", lambda: F32 + 1j, ember.complex64),
    ("float64 * complex64", lambda: F64 * C64, ember.complex128),
    ("int / int", lambda: I64 / I64, ember.float32),
    ("int8 / 2", lambda: I8 / 2, ember.float32),
    ("float16 / int tensor", lambda: F16 / I64, ember.float16),
    ("int // int", lambda: I64 // t([2, 2]), ember.int64),
    ("int // 2.5", lambda: I64 // 2.5, ember.float32),
    ("int % 2.5", lambda: I64 % 2.5, ember.float32),
    ("2 ** int tensor", lambda: 2 ** I64, ember.int64),
    ("2.5 ** int tensor", lambda: 2.5 ** I64, ember.float32),
    ("int ** -1.0", lambda: I64 ** -1.0, ember.float32),
    ("bool ** 2", lambda: ember.pow(B, 2), ember.int64),
    ("exp(int)", lambda: ember.exp(I64), ember.float32),
    ("sqrt(bool)", lambda: ember.sqrt(B), ember.float32),
    ("abs(int8)", lambda: ember.abs(I8), ember.int8),
    ("abs(complex)", lambda: ember.abs(C64), ember.float32),
    ("square(bool)", lambda: ember.square(B), ember.int64),
    ("floor(int)", lambda: ember.floor(I64), ember.int64),
    ("sign(bool)", lambda: ember.sign(B), ember.bool),
    ("atan2(int, int)", lambda: ember.atan2(I64, I64), ember.float32),
    ("clamp(int, min=1.5)", lambda: ember.clamp(I64, min=1.5), ember.float32),
    ("clamp(bool, 0, 1)", lambda: ember.clamp(B, 0, 1), ember.int64),
    ("clamp(int, float tensor bounds)", lambda: ember.clamp(I64, F32, F32 + 1), ember.float32),
    ("where(c, 1, 2.5)", lambda: ember.where(B, 1, 2.5), ember.float32),
    ("where(c, 1, 2)", lambda: ember.where(B, 1, 2), ember.int64),
    ("where(c, int8, 2)", lambda: ember.where(B, I8, 2), ember.int8),
    ("where(c, float16, 2.5)", lambda: ember.where(B, F16, 2.5), ember.float16),
    ("where(c, int, 2.5)", lambda: ember.where(B, I64, 2.5), ember.float32),
    ("where(c, float16, float64 0-dim)", lambda: ember.where(B, F16, t(3.0, ember.float64)),
     ember.float16),
    ("maximum(int, float)", lambda: ember.maximum(I64, F32), ember.float32),
    ("bool & 1", lambda: B & 1, ember.int64),
    ("bool & True", lambda: B & True, ember.bool),
    ("bool << 1", lambda: B << 1, ember.int64),
    ("int8 | int64 0-dim", lambda: I8 | t(3), ember.int8),
    ("lerp(float, float, float64 0-dim)", lambda: ember.lerp(F32, F32, t(0.5, ember.float64)),
     ember.float32),
    ("nan_to_num(int)", lambda: ember.nan_to_num(I64), ember.int64),
    ("logical_and(int, float)", lambda: ember.logical_and(I64, F32), ember.bool),
]


@pytest.mark.parametrize("name,fn,dtype", PROMOTION, ids=[p[0] for p in PROMOTION])
def test_type_promotion(name, fn, dtype):
    assert fn().dtype == dtype


def test_integer_numbers_out_of_range_wrap_around():
    # PyTorch casts the number to the tensor's dtype (NumPy would raise)
    assert ember.add(I8, 300).tolist() == [45, 42]
    assert ember.sub(U8, 1).tolist() == [0, 199]
    assert ember.add(U8, -1).tolist() == [0, 199]
    assert ember.mul(I8, 1000).tolist() == [-24, 48]
    assert (U8 < 300).tolist() == [True, False]  # 300 -> 44
    assert (U8 < -1).tolist() == [True, True]  # -1 -> 255
    assert (I8 & 257).tolist() == [1, 0]
    assert ember.where(t([True, False]), I8, 300).tolist() == [1, 44]
    with pytest.raises(OverflowError, match="int too big to convert"):
        ember.add(I64, 2 ** 70)


def test_integer_numbers_out_of_range_wrap_around_with_operators():
    assert (I8 + 300).tolist() == [45, 42]


def test_broadcast_error_message_with_operators():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match"):
        F32 + t([1.0, 2.0, 3.0])


def test_python_numbers_on_both_sides():
    assert ember.mul(2, 3).item() == 6
    assert ember.add(2, I64).tolist() == [3, 4]
    assert (2 - F32).tolist() == [1.0, 0.0]
    assert (2 / F32).tolist() == [2.0, 1.0]
    assert (7 % t([2, 5])).tolist() == [1, 2]
    assert (7 // t([2, -2])).tolist() == [3, -4]
    assert (1 << I64).tolist() == [2, 4]
    assert (6 & I64).tolist() == [0, 2]


# ---------------------------------------------------------------------------
# values that NumPy computes differently from PyTorch

def test_division_and_remainders_follow_pytorch():
    a, b = t([-7, 7]), 2
    assert ember.div(a, b, rounding_mode="floor").tolist() == [-4, 3]
    assert ember.div(a, b, rounding_mode="trunc").tolist() == [-3, 3]
    assert ember.remainder(t([-3, 3]), -2).tolist() == [-1, -1]
    assert ember.fmod(t([-3, 3]), -2).tolist() == [-1, 1]
    assert ember.remainder(t([-3.0, 3.0]), 2).tolist() == [1.0, 1.0]
    f = ember.floor_divide(t([5.0, -5.0, 0.0]), t([0.0, 0.0, 0.0])).tolist()
    assert f[:2] == [math.inf, -math.inf] and math.isnan(f[2])
    assert ember.floor_divide(t([-2 ** 63, 5]), -1).tolist() == [-2 ** 63, -5]


@pytest.mark.parametrize("fn", [
    lambda x: ember.floor_divide(x, 0), lambda x: ember.remainder(x, 0),
    lambda x: ember.fmod(x, t([1, 0, 1])), lambda x: ember.div(x, 0, rounding_mode="trunc"),
    lambda x: x // 0, lambda x: x % 0,
])
def test_integer_division_by_zero_raises(fn):
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(t([1, 2, 3]))


def test_integer_powers():
    assert ember.pow(t([1, -1, 2, -1]), t([-1, -3, -1, -2])).tolist() == [1, -1, 0, 1]
    assert ember.pow(t([1, 2, 3]), t([-1, 2, 3])).tolist() == [1, 4, 27]
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        ember.pow(t([1, 2]), -1)


def test_shifts_past_the_width():
    assert (I8 << 10).tolist() == [0, 0]
    assert (t([1, 2]) << 64).tolist() == [0, 0]
    assert (t([-8, 8]) >> 64).tolist() == [-1, 0]
    assert (t([-8, 8]) >> 2).tolist() == [-2, 2]
    assert (U8 >> 9).tolist() == [0, 0]
    assert (I8 << -1).tolist() == [0, 0]


def test_rounding():
    assert ember.round(t([0.5, 1.5, 2.5, -0.5])).tolist() == [0.0, 2.0, 2.0, -0.0]
    assert_close(ember.round(t([1.25, 1.35]), decimals=1), t([1.2, 1.4]))
    assert ember.round(t([1.2345, 125.0]), decimals=-1).tolist() == [0.0, 120.0]
    assert ember.frac(t([-1.5, 2.25])).tolist() == [-0.5, 0.25]
    assert ember.trunc(t([-1.5, 2.5])).tolist() == ember.fix(t([-1.5, 2.5])).tolist()


def test_sign_of_nan_is_zero():
    assert ember.sign(t([math.nan, -2.0, 0.0])).tolist() == [0.0, -1.0, 0.0]


def test_nan_handling_of_min_max_and_clamp():
    a, b = t([math.nan, 1.0, 2.0]), t([1.0, math.nan, 3.0])
    assert np.isnan(ember.maximum(a, b).numpy()[:2]).all()
    assert ember.fmax(a, b).tolist() == [1.0, 1.0, 3.0]
    assert ember.fmin(a, b).tolist() == [1.0, 1.0, 2.0]
    assert np.isnan(ember.clamp(t([1.0, 2.0]), min=math.nan).numpy()).all()
    assert ember.clamp(t([1.0, 2.0, 3.0]), 3, 1).tolist() == [1.0, 1.0, 1.0]  # min > max


def test_nan_to_num_defaults_are_the_dtype_limits():
    x = [math.nan, math.inf, -math.inf, 1.5]
    assert ember.nan_to_num(t(x)).tolist() == [0.0, 3.4028234663852886e38,
                                               -3.4028234663852886e38, 1.5]
    assert ember.nan_to_num(t(x, dtype=ember.float16)).tolist() == [0.0, 65504.0, -65504.0,
                                                                    1.5]
    assert ember.nan_to_num(t(x), nan=1.0, posinf=2.0, neginf=-3.0).tolist() == [
        1.0, 2.0, -3.0, 1.5]


def test_isclose_allclose_equal():
    a = t([1.0, 2.0, math.nan, math.inf])
    b = t([1.0 + 1e-6, 2.1, math.nan, math.inf])
    assert ember.isclose(a, b).tolist() == [True, False, False, True]
    assert ember.isclose(a, b, equal_nan=True).tolist() == [True, False, True, True]
    assert ember.isclose(t([1, 100]), t([1, 101]), rtol=0.01).tolist() == [True, True]
    assert ember.isclose(t([1, 2], dtype=ember.uint8), t([2, 1], dtype=ember.uint8),
                         rtol=0, atol=1).tolist() == [True, True]
    assert ember.allclose(t([1.0, 2.0]), t([1.0, 2.0 + 1e-7])) is True
    assert ember.allclose(t([1.0, 2.0]), t([1.0, 2.1])) is False
    assert ember.equal(F32, F64) is True
    assert ember.equal(I64, F32) is True
    assert ember.equal(F32, F32[:1]) is False
    assert ember.equal(t([math.nan]), t([math.nan])) is False
    assert F32.equal(F32.clone()) is True


def test_where_single_argument_is_nonzero():
    (idx,) = ember.where(t([0.0, 1.0, 0.0, 2.0]))
    assert idx.tolist() == [1, 3]


def test_tensor_where_method():
    assert F32.where(B, 0.0).tolist() == [1.0, 0.0]


# ---------------------------------------------------------------------------
# operators

def test_operators_and_their_reflected_forms():
    x = t([6, 3])
    assert (x & 5).tolist() == [4, 1] and (5 & x).tolist() == [4, 1]
    assert (x | 1).tolist() == [7, 3] and (1 | x).tolist() == [7, 3]
    assert (x ^ 3).tolist() == [5, 0] and (3 ^ x).tolist() == [5, 0]
    assert (x >> 1).tolist() == [3, 1] and (24 >> x).tolist() == [0, 3]
    assert (~x).tolist() == [-7, -4]
    assert (~B).tolist() == [False, True]
    assert (x // 4).tolist() == [1, 0] and (13 // x).tolist() == [2, 4]
    assert (x % 4).tolist() == [2, 3] and (13 % x).tolist() == [1, 1]
    assert (-F32).tolist() == [-1.0, -2.0] and (+F32) is F32 and abs(t([-1])).tolist() == [1]


def test_comparison_operators():
    assert (F32 == 1.0).tolist() == [True, False]
    assert (F32 != t([1.0, 3.0])).tolist() == [False, True]
    assert (I64 >= 2).tolist() == [False, True]
    assert (F32 == None) is False  # noqa: E711 - Python's fallback, as in PyTorch
    assert (F32 == "a") is False


def test_operators_with_unsupported_types_raise_type_error():
    with pytest.raises(TypeError):
        F32 + "a"
    with pytest.raises(TypeError):
        F32 & "a"
    with pytest.raises(TypeError, match="must be Tensor, not str"):
        ember.mul(F32, "a")


def test_inplace_operators_return_the_same_tensor():
    x = t([1, 2, 3])
    y = x
    y += 1
    y -= t([1, 1, 1])
    y *= 3
    y //= 2
    y %= 4
    y <<= 1
    y >>= 1
    y |= 4
    y &= 5
    y ^= 1
    assert y is x
    assert x.tolist() == [4, 4, 5]
    f = t([1.0, 2.0])
    g = f
    g /= 2
    g **= 2
    assert g is f and f.tolist() == [0.25, 1.0]


# ---------------------------------------------------------------------------
# in-place semantics

def test_inplace_on_a_leaf_that_requires_grad_raises():
    x = t([1.0, 2.0], requires_grad=True)
    for fn in (lambda: x.add_(1), lambda: x.exp_(), lambda: x.clamp_(0, 1),
               lambda: x.lt_(1), lambda: x.__iadd__(1)):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being "
                                               "used in an in-place operation."):
            fn()


@pytest.mark.parametrize("fn,message", [
    (lambda: t([1, 2]).sqrt_(), "result type Float can't be cast to the desired output "
                                "type Long"),
    (lambda: t([1, 2]).add_(1.5), "result type Float can't be cast to the desired output "
                                  "type Long"),
    (lambda: t([1, 2]).div_(2), "result type Float can't be cast to the desired output type "
                                "Long"),
    (lambda: t([1, 2]).add_(t([1.5, 2.0])), "result type Float can't be cast"),
    (lambda: B.clone().add_(1), "result type Long can't be cast to the desired output type "
                                "Bool"),
    (lambda: t([1.0]).add_(t([1j])), "result type ComplexFloat can't be cast to the desired "
                                     "output type Float"),
    (lambda: B.clone().square_(), "result type Long can't be cast to the desired output type "
                                  "Bool"),
    (lambda: t([1, 2]).reciprocal_(), "result type Float can't be cast"),
    (lambda: t([1, 2]).pow_(2.0), "result type Float can't be cast"),
    (lambda: t([1, 2]).clamp_(0.5), "result type Float can't be cast"),
    (lambda: B.clone().div_(t([1.0], dtype=ember.float16)), "result type Half can't be cast "
                                                             "to the desired output type Bool"),
])
def test_inplace_result_that_cannot_be_cast_raises(fn, message):
    with pytest.raises(RuntimeError, match=message):
        fn()


def test_inplace_results_cast_to_the_tensor_dtype():
    x = t([1, 2], dtype=ember.int32)
    assert x.add_(t([1, 2])).tolist() == [2, 4] and x.dtype == ember.int32
    y = t([1.0, 2.0])
    y.add_(t([1.5, 2.0], dtype=ember.float64))
    assert y.dtype == ember.float32 and y.tolist() == [2.5, 4.0]
    assert t([1.0, 2.0]).lt_(t([2, 0])).tolist() == [1.0, 0.0]
    assert t([1, 2]).lt_(1.5).tolist() == [1, 0]
    assert t([1.0, 2.0]).logical_and_(t([1, 0])).tolist() == [1.0, 0.0]
    assert t([1.0, 2.0]).eq_(1).tolist() == [1.0, 0.0]
    assert t([1, 2]).div_(2, rounding_mode="floor").tolist() == [0, 1]
    assert t([1, 2], dtype=ember.int8).floor_divide_(t([300, 300])).tolist() == [0, 0]
    assert t([True, False]).add_(True).tolist() == [True, True]
    assert t([1, 2]).floor_().tolist() == [1, 2]


def test_inplace_broadcast_must_fit_the_tensor():
    with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the "
                                           r"broadcast shape \[2, 2\]"):
        t([1.0, 2.0]).add_(t([[1.0, 2.0], [3.0, 4.0]]))
    x = t([[1.0, 2.0], [3.0, 4.0]])
    x.mul_(t([10.0, 100.0]))
    assert x.tolist() == [[10.0, 200.0], [30.0, 400.0]]


def test_inplace_bumps_the_version_and_is_seen_through_views():
    x = t([1.0, 2.0, 3.0])
    v0 = x._version
    x.add_(1)
    assert x._version == v0 + 1
    view = x[1:]
    view.mul_(2)
    assert x.tolist() == [2.0, 6.0, 8.0]


def test_inplace_ops_under_autograd():
    a = t([1.0, 2.0, 3.0], requires_grad=True)
    b = t([0.5, -1.0, 2.0], requires_grad=True)
    y = a * 1
    y.mul_(b)
    y.add_(b, alpha=2)
    y.clamp_(max=4.0)
    y.sum().backward()
    # y = min(a * b + 2 b, 4): grads where not clamped
    assert a.grad.tolist() == [0.5, -1.0, 0.0]
    assert b.grad.tolist() == [3.0, 4.0, 0.0]


def test_inplace_with_a_wider_operand_under_autograd_keeps_dtypes():
    a = t([1.0, 2.0], requires_grad=True)
    b = t([3.0, 4.0], dtype=ember.float64, requires_grad=True)
    y = a * 1
    y.mul_(b)
    assert y.dtype == ember.float32
    y.sum().backward()
    assert a.grad.dtype == ember.float32 and b.grad.dtype == ember.float64
    assert a.grad.tolist() == [3.0, 4.0] and b.grad.tolist() == [1.0, 2.0]


def test_inplace_comparison_keeps_a_zero_gradient():
    a = t([1.0, 2.0], requires_grad=True)
    y = a * 1
    y.lt_(1.5)
    assert y.requires_grad and y.tolist() == [1.0, 0.0]
    (y + a).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]


def test_saved_tensor_modified_in_place_is_detected():
    a = t([1.0, 2.0], requires_grad=True)
    y = a * 1
    z = y.exp()  # saves its output
    z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


# ---------------------------------------------------------------------------
# errors

@pytest.mark.parametrize("fn,exc,message", [
    (lambda: B - B, RuntimeError, r"Subtraction, the `-` operator, with two bool tensors is "
                                  r"not supported. Use the `\^` or `logical_xor\(\)` operator"),
    (lambda: F32 - B, RuntimeError, "Subtraction, the `-` operator, with a bool tensor"),
    (lambda: 1 - B, RuntimeError, "Subtraction, the `-` operator, with a bool tensor"),
    (lambda: -B, RuntimeError, r"Negation, the `-` operator, on a bool tensor is not "
                               r"supported. If you are trying to invert a mask, use the `~` "
                               r"or `logical_not\(\)` operator instead."),
    (lambda: ember.add(I64, I64, alpha=2.5), RuntimeError, "For integral input tensors, "
                                                           "argument alpha must not be a "
                                                           "floating point number."),
    (lambda: ember.add(F32, F32, alpha=True), RuntimeError, "Boolean alpha only supported "
                                                            "for Boolean results."),
    (lambda: ember.add(F32, F32, alpha=1j), RuntimeError, "argument alpha must not be a "
                                                          "complex number"),
    (lambda: ember.add(F32, t([1.0, 2.0, 3.0])), RuntimeError, r"The size of tensor a \(2\) must "
                                                     r"match the size of tensor b \(3\) at "
                                                     r"non-singleton dimension 0"),
    (lambda: ember.maximum(t([[1.0, 2.0]]), t([[1.0], [2.0], [3.0]]).expand(3, 3)),
     RuntimeError, r"size of tensor a \(2\) must match the size of tensor b \(3\) at "
                   r"non-singleton dimension 1"),
    (lambda: ember.where(t([True, False, True]), F32, 2.0), RuntimeError,
     r"The size of tensor a \(3\) must match the size of tensor b \(2\)"),
    (lambda: ember.div(F32, F32, rounding_mode="bad"), RuntimeError,
     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'bad'"),
    (lambda: ember.abs(B), NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'"),
    (lambda: ember.floor(C64), NotImplementedError, "floor is not supported for complex"),
    (lambda: ember.frac(I64), NotImplementedError, "\"frac_cpu\" not implemented for 'Long'"),
    (lambda: ember.erf(C64), NotImplementedError, "\"erf_vml_cpu\" not implemented for "
                                                  "'ComplexFloat'"),
    (lambda: ember.sign(C64), NotImplementedError, "torch.sign is not intended to support "
                                                   "complex numbers"),
    (lambda: ember.relu(B), RuntimeError, "Boolean inputs not supported for relu"),
    (lambda: ember.round(I64, decimals=1), NotImplementedError, "\"round_cpu\" not "
                                                                "implemented for 'Long'"),
    (lambda: ember.hypot(I64, I64), NotImplementedError, "\"hypot_cpu\" not implemented for "
                                                         "'Long'"),
    (lambda: ember.hypot(F32, 2), TypeError, r"hypot\(\): argument 'other' \(position 2\) "
                                             "must be Tensor, not int"),
    (lambda: ember.minimum(F32, 2), TypeError, "must be Tensor, not int"),
    (lambda: ember.maximum(C64, C64), RuntimeError, "maximum not implemented for complex"),
    (lambda: ember.lt(C64, C64), NotImplementedError, "\"lt_cpu\" not implemented for "
                                                      "'ComplexFloat'"),
    (lambda: ember.logical_and(I64, 1), TypeError, "must be Tensor, not int"),
    (lambda: ember.bitwise_and(F32, F32), NotImplementedError, "\"bitwise_and_cpu\" not "
                                                               "implemented for 'Float'"),
    (lambda: ember.bitwise_not(F32), NotImplementedError, "bitwise_not_cpu"),
    (lambda: ~F32, TypeError, r"~ \(operator.invert\) is only implemented on integer and "
                              "Boolean-type tensors"),
    (lambda: F32 << 1, NotImplementedError, "\"lshift_cpu\" not implemented for 'Float'"),
    (lambda: B << B, NotImplementedError, "\"lshift_cpu\" not implemented for 'Bool'"),
    (lambda: ember.floor_divide(B, B), NotImplementedError, "\"div_floor_cpu\" not "
                                                            "implemented for 'Bool'"),
    (lambda: ember.pow(B, B), NotImplementedError, "\"pow\" not implemented for 'Bool'"),
    (lambda: ember.isclose(F32, F64), RuntimeError, "Float did not match Double"),
    (lambda: ember.isclose(F32, F32, rtol=-1), RuntimeError, "rtol must be greater than or "
                                                             "equal to zero, but got -1"),
    (lambda: ember.allclose(F32, t([1.0, 2.0, 3.0])), RuntimeError, "must match the size"),
    (lambda: ember.equal(F32, 1.0), TypeError, "must be Tensor, not float"),
    (lambda: ember.clamp(I64), RuntimeError, "torch.clamp: At least one of 'min' or 'max' "
                                             "must not be None"),
    (lambda: ember.clamp(F32, 0.0, t([1.0])), TypeError, "clamp"),
    (lambda: ember.clamp(C64, 0), NotImplementedError, "clamp is not supported for complex"),
    (lambda: ember.clamp(U8, -1, 300), RuntimeError, "value cannot be converted to type "
                                                     "uint8_t without overflow"),
    (lambda: ember.where(t([1, 0]), F32, F32), RuntimeError, "where expected condition to "
                                                             "be a boolean tensor, but got a "
                                                             "tensor with dtype Long"),
    (lambda: ember.lerp(F32, F64, 0.5), RuntimeError, "expected dtype float for `end` but "
                                                      "got dtype double"),
    (lambda: ember.lerp(F32, F32, t([0.5, 0.2], dtype=ember.float64)), RuntimeError,
     "expected dtype float for `weight` but got dtype double"),
    (lambda: ember.lerp(I64, I64, 0.5), NotImplementedError, "\"lerp_kernel_scalar\" not "
                                                             "implemented for 'Long'"),
    (lambda: ember.logit(C64), NotImplementedError, "logit_cpu"),
    (lambda: ember.isposinf(C64), RuntimeError, "isposinf does not support complex inputs."),
    (lambda: ember.signbit(C64), NotImplementedError, "signbit is not implemented for "
                                                      "complex tensors."),
    (lambda: C64.clone().abs_(), RuntimeError, "In-place abs is not supported for complex "
                                               "tensors."),
])
def test_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()


def test_uint8_where_condition_warns():
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        r = ember.where(t([1, 0], dtype=ember.uint8), F32, 0.0)
    assert r.tolist() == [1.0, 0.0]


# ---------------------------------------------------------------------------
# gradients at non-differentiable points: PyTorch's conventions

def test_abs_gradient_at_zero_is_zero():
    assert grad_of(ember.abs, [0.0, -1.0, 2.0]) == [[0.0, -1.0, 1.0]]


def test_clamp_passes_the_gradient_at_the_boundaries():
    assert grad_of(lambda x: ember.clamp(x, 0, 1), [0.0, 1.0, 0.5, -1.0, 2.0]) == [
        [1.0, 1.0, 1.0, 0.0, 0.0]]
    g = grad_of(lambda x, lo, hi: ember.clamp(x, lo, hi), [0.0, 1.0, 0.5, -1.0, 2.0, 0.5],
                [0.0] * 5 + [1.0], [1.0] * 5 + [0.0])
    assert g == [[1.0, 1.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0, 0.0, 0.0],
                 [0.0, 0.0, 0.0, 0.0, 1.0, 1.0]]


def test_maximum_and_minimum_split_ties():
    assert grad_of(ember.maximum, [1.0, 2.0, 3.0], [1.0, 1.0, 4.0]) == [
        [0.5, 1.0, 0.0], [0.5, 0.0, 1.0]]
    assert grad_of(ember.minimum, [1.0, 2.0, 3.0], [1.0, 1.0, 4.0]) == [
        [0.5, 0.0, 1.0], [0.5, 1.0, 0.0]]
    # fmax gives ties to input, and nan loses
    assert grad_of(ember.fmax, [1.0, math.nan, 1.0], [1.0, 1.0, math.nan]) == [
        [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]


@pytest.mark.parametrize("fn", [ember.floor, ember.ceil, ember.round, ember.trunc, ember.sign,
                                lambda x: ember.round(x, decimals=1),
                                lambda x: ember.div(x, 2.0, rounding_mode="floor")])
def test_step_functions_have_zero_gradient(fn):
    assert grad_of(fn, [1.5, -0.3, 2.0]) == [[0.0, 0.0, 0.0]]


def test_gradient_conventions_at_singular_points():
    # pow: 0 where the exponent is 0; log-term 0 where base == 0 and exponent >= 0
    assert grad_of(ember.pow, [0.0, 0.0, 2.0], [0.0, 2.0, 0.0]) == [
        [0.0, 0.0, 0.0], [0.0, 0.0, math.log(2.0)]]
    assert grad_of(lambda x: x ** 0, [0.0, 2.0]) == [[0.0, 0.0]]
    assert grad_of(ember.sqrt, [0.0]) == [[math.inf]]
    g = grad_of(ember.hypot, [0.0], [0.0])
    assert math.isnan(g[0][0]) and math.isnan(g[1][0])
    assert grad_of(ember.atan2, [0.0, 1.0], [0.0, 1.0]) == [[0.0, 0.5], [0.0, -0.5]]
    assert grad_of(ember.relu, [0.0, 1.0, -1.0]) == [[0.0, 1.0, 0.0]]
    assert grad_of(ember.nan_to_num, [math.nan, math.inf, 1.0]) == [[0.0, 0.0, 1.0]]
    (g,) = grad_of(lambda x: ember.logit(x, eps=0.2), [0.1, 0.5, 0.9, 0.2])
    assert g == pytest.approx([0.0, 4.0, 0.0, 6.25])
    assert grad_of(ember.erfinv, [1.0]) == [[math.inf]]


def test_floor_divide_has_no_derivative():
    x = t([1.5, 2.5], dtype=ember.float64, requires_grad=True)
    y = ember.floor_divide(x, 2.0)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not "
                                           "implemented"):
        y.sum().backward()


def test_where_and_lerp_gradients():
    c = t([True, False, True])
    assert grad_of(lambda a, b: ember.where(c, a, b), [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == [
        [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    g = grad_of(ember.lerp, [1.0, 2.0], [3.0, 5.0], [0.3, 0.7])
    assert np.allclose(g, [[0.7, 0.3], [0.3, 0.7], [2.0, 3.0]])


def test_broadcast_gradients_are_summed_back():
    a = t([[1.0], [2.0]], dtype=ember.float64, requires_grad=True)
    b = t([1.0, 2.0, 3.0], dtype=ember.float64, requires_grad=True)
    ember.maximum(a, b).sum().backward()
    assert a.grad.shape == (2, 1) and b.grad.shape == (3,)
    assert a.grad.tolist() == [[0.5], [1.5]] and b.grad.tolist() == [0.5, 1.5, 2.0]


def test_complex_gradients_follow_pytorch():
    # values checked against torch 2.13: d/dz of real(sum(w * f(z)))
    z = t([0.5 + 0.3j, -1.2 + 0.7j], dtype=ember.complex128, requires_grad=True)
    w = t([1 + 2j, -0.5 + 1j], dtype=ember.complex128)
    (g,) = ember.autograd.grad((ember.exp(z) * w).sum().real_part(), [z])
    expected = (w * ember.exp(z)).conj()
    assert_close(g, expected.detach())
    (g,) = ember.autograd.grad((ember.sgn(z) * w).sum().real_part(), [z])
    s = z.detach() / z.detach().abs()
    assert_close(g, (w.conj() - s * s * w) / (2 * z.detach().abs()))


# ---------------------------------------------------------------------------
# special functions

def test_special_function_values():
    x = t([0.0, 0.5, -1.0, 3.0, math.inf, -math.inf], dtype=ember.float64)
    assert_close(ember.erf(x), t([math.erf(v) for v in x.tolist()], dtype=ember.float64),
                 rtol=1e-15, atol=0)
    assert_close(ember.erfc(t([-1.0, 0.2, 5.0, 26.0], dtype=ember.float64)),
                 t([math.erfc(v) for v in (-1.0, 0.2, 5.0, 26.0)], dtype=ember.float64),
                 rtol=1e-13, atol=0)
    y = t([-1.0, -0.999, -0.5, 0.0, 0.3, 0.9999, 1.0, 1.5], dtype=ember.float64)
    inv = ember.erfinv(y).tolist()
    assert inv[0] == -math.inf and inv[6] == math.inf and math.isnan(inv[7])
    for v, r in zip(y.tolist()[1:6], inv[1:6], strict=True):
        assert math.erf(r) == pytest.approx(v, rel=1e-14, abs=1e-15)
    n = t([1.0, 2.0, 3.0, 10.0, 0.5, -0.5, -2.5, 100.0], dtype=ember.float64)
    assert_close(ember.lgamma(n), t([math.lgamma(v) for v in n.tolist()], dtype=ember.float64),
                 rtol=1e-14, atol=1e-15)
    assert ember.lgamma(t([1.0, 2.0])).tolist() == [0.0, 0.0]  # exact, as in PyTorch
    assert ember.lgamma(t([0.0, -1.0, -2.0])).tolist() == [math.inf] * 3
    euler = 0.5772156649015329
    d = ember.digamma(t([1.0, 0.5, 2.0, 0.0, -0.0, -1.0], dtype=ember.float64)).tolist()
    assert d[:3] == pytest.approx([-euler, -euler - 2 * math.log(2), 1 - euler], rel=1e-14)
    assert d[3] == -math.inf and d[4] == math.inf and math.isnan(d[5])


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 20),
                  elements=st.floats(-30, 30, allow_nan=False, allow_infinity=False)))
def test_special_functions_match_math_and_identities(x):
    e = ember.tensor(x)
    assert_close(ember.erf(e).numpy(), np.array([math.erf(v) for v in x]), rtol=1e-14,
                 atol=1e-16)
    assert_close(ember.erfc(e).numpy(), np.array([math.erfc(v) for v in x]), rtol=1e-12,
                 atol=1e-300)
    pos = np.abs(x) + 0.1
    ep = ember.tensor(pos)
    assert_close(ember.lgamma(ep).numpy(), np.array([math.lgamma(v) for v in pos]),
                 rtol=1e-13, atol=1e-14)
    # digamma(x + 1) = digamma(x) + 1 / x
    assert_close(ember.digamma(ep + 1).numpy(), ember.digamma(ep).numpy() + 1 / pos,
                 rtol=1e-12, atol=1e-12)


def test_float32_special_functions_are_computed_in_float64():
    x = t([0.1, 1.0, 2.5, 7.0])
    assert ember.erf(x).dtype == ember.float32 and ember.lgamma(x).dtype == ember.float32
    assert_close(ember.lgamma(x), t([math.lgamma(v) for v in x.tolist()]))
    assert ember.erf(t([1.0], dtype=ember.float16)).dtype == ember.float16


# ---------------------------------------------------------------------------
# broadcasting and dtypes against NumPy (hypothesis)

_BINARY = {
    "add": (ember.add, np.add), "sub": (ember.sub, np.subtract),
    "mul": (ember.mul, np.multiply), "maximum": (ember.maximum, np.maximum),
    "fmin": (ember.fmin, np.fmin), "atan2": (ember.atan2, np.arctan2),
    "hypot": (ember.hypot, np.hypot), "lt": (ember.lt, np.less),
    "eq": (ember.eq, np.equal), "logical_xor": (ember.logical_xor, np.logical_xor),
}


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(sorted(_BINARY)),
       hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4),
       st.sampled_from([np.float32, np.float64]), st.data())
def test_binary_broadcasting_matches_numpy(name, shapes, dtype, data):
    op, ref = _BINARY[name]
    elements = st.floats(-100, 100, width=32)
    a = data.draw(hnp.arrays(dtype, shapes.input_shapes[0], elements=elements))
    b = data.draw(hnp.arrays(dtype, shapes.input_shapes[1], elements=elements))
    got = op(ember.tensor(a), ember.tensor(b))
    assert tuple(got.shape) == shapes.result_shape
    assert_close(got.numpy(), np.asarray(ref(a, b)), check_dtype=False)


@settings(max_examples=40, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=4),
       st.data())
def test_where_clamp_lerp_broadcasting(shapes, data):
    s0, s1, s2 = shapes.input_shapes
    elements = st.floats(-10, 10, width=32)
    c = data.draw(hnp.arrays(np.bool_, s0))
    x = data.draw(hnp.arrays(np.float32, s1, elements=elements))
    y = data.draw(hnp.arrays(np.float32, s2, elements=elements))
    assert_close(ember.where(ember.tensor(c), ember.tensor(x), ember.tensor(y)).numpy(),
                 np.where(c, x, y))
    lo, hi = np.minimum(x, y), np.maximum(x, y)
    z = data.draw(hnp.arrays(np.float32, s0, elements=elements))
    assert_close(ember.clamp(ember.tensor(z), ember.tensor(lo), ember.tensor(hi)).numpy(),
                 np.minimum(np.maximum(z, lo), hi))
    w = data.draw(hnp.arrays(np.float32, s0, elements=st.floats(0, 1, width=32)))
    assert_close(ember.lerp(ember.tensor(x), ember.tensor(y), ember.tensor(w)).numpy(),
                 x + w * (y - x), rtol=1e-5, atol=1e-5)


_INT_DTYPES = [np.uint8, np.int8, np.int16, np.int32, np.int64]


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(_INT_DTYPES), st.sampled_from(_INT_DTYPES),
       hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=4),
       st.data())
def test_integer_arithmetic_and_bitwise_match_numpy(da, db, shapes, data):
    a = data.draw(hnp.arrays(da, shapes.input_shapes[0], elements=st.integers(0, 100)))
    b = data.draw(hnp.arrays(db, shapes.input_shapes[1], elements=st.integers(1, 100)))
    ea, eb = ember.tensor(a), ember.tensor(b)
    # PyTorch and NumPy agree on promotion between integer dtypes
    expected_dtype = np.promote_types(da, db)
    for op, ref in ((ember.add, np.add), (ember.mul, np.multiply),
                    (ember.floor_divide, np.floor_divide), (ember.remainder, np.remainder),
                    (ember.bitwise_and, np.bitwise_and), (ember.bitwise_xor, np.bitwise_xor)):
        got = op(ea, eb)
        assert got.numpy().dtype == expected_dtype
        np.testing.assert_array_equal(got.numpy(), ref(a, b))


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                  elements=st.floats(-5, 5)),
       st.sampled_from(["exp", "sin", "tanh", "sigmoid", "atan", "expm1", "asinh", "erf",
                        "floor", "abs", "square", "frac"]))
def test_unary_ops_keep_shape_and_dtype(x, name):
    got = getattr(ember, name)(ember.tensor(x))
    assert got.shape == x.shape and got.dtype == ember.float64
    x32 = x.astype(np.float32)
    got32 = getattr(ember, name)(ember.tensor(x32))
    assert got32.dtype == ember.float32
    # compare with the float64 op on the same (rounded) inputs: rounding x to float32 can
    # change results like floor(-1e-150) = -1 vs floor(-0.0) = -0
    expected = getattr(ember, name)(ember.tensor(x32.astype(np.float64))).numpy()
    assert_close(got32.numpy(), expected.astype(np.float32), rtol=1e-5, atol=1e-6)
