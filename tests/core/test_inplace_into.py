"""In-place ops that write their result straight into the tensor (NOTE [ In-place ops write
in place ] in ember._ops.elementwise): the same numbers as the out-of-place op, no result
array, the version bumped, and everything they decline left to the general path."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import ember

RNG = np.random.default_rng(0)
LARGE = 1 << 21  # above the threaded kernels' threshold


def _pair(n, dtype=np.float32):
    a = RNG.standard_normal(n).astype(dtype)
    a[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return a, RNG.standard_normal(n).astype(dtype)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", [7, LARGE])
@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "iadd", "relu_"])
def test_same_numbers_as_out_of_place(op, n, threads):
    a0, b0 = _pair(n)
    old = ember.get_num_threads()
    ember.set_num_threads(threads)
    try:
        with np.errstate(all="ignore"):
            a, b = ember.tensor(a0.copy()), ember.tensor(b0)
            v = a._version
            if op == "relu_":
                want = ember.relu(ember.tensor(a0)).numpy()
                out = a.relu_()
            elif op == "iadd":
                want = (ember.tensor(a0) + b).numpy()
                a += b
                out = a
            else:
                want = getattr(ember.tensor(a0), op[:-1])(b).numpy()
                out = getattr(a, op)(b)
    finally:
        ember.set_num_threads(old)
    assert out is a and a._version > v
    np.testing.assert_array_equal(a.numpy(), want)


def test_no_result_array_is_allocated():
    a = ember.tensor(RNG.standard_normal(LARGE).astype(np.float32))
    b = ember.tensor(RNG.standard_normal(LARGE).astype(np.float32))
    a += b  # warm up
    a.relu_()
    tracemalloc.start()
    try:
        a += b
        a.relu_()
        a.mul_(2.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < LARGE  # a result array would be 4 * LARGE bytes


def test_broadcast_scalars_and_self_operand():
    a0 = RNG.standard_normal((4, 5)).astype(np.float32)
    row = RNG.standard_normal(5).astype(np.float32)
    a = ember.tensor(a0.copy())
    a += ember.tensor(row)
    np.testing.assert_array_equal(a.numpy(), a0 + row)
    a = ember.tensor(a0.copy())
    a.mul_(3)
    a.sub_(0.5)
    np.testing.assert_array_equal(a.numpy(), a0 * np.float32(3) - np.float32(0.5))
    a = ember.tensor(a0.copy())
    a += a
    np.testing.assert_array_equal(a.numpy(), a0 + a0)


def test_non_contiguous_targets():
    a0 = RNG.standard_normal((6, 8)).astype(np.float32)
    a = ember.tensor(a0.copy())
    view = a[:, ::2]
    view.relu_()
    view += 1.0
    want = a0.copy()
    want[:, ::2] = np.maximum(want[:, ::2], 0) + 1
    np.testing.assert_array_equal(a.numpy(), want)


def test_what_is_declined_behaves_as_before():
    # an int tensor and a float operand: the general path's cast error, as PyTorch
    i = ember.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="can't be cast"):
        i += ember.tensor([0.5, 0.5, 0.5])
    i += 2
    assert i.tolist() == [3, 4, 5]
    # a wider operand is rounded into the target's dtype
    f = ember.tensor([1.0, 2.0])
    f += ember.tensor([0.1, 0.2], dtype=ember.float64)
    np.testing.assert_array_equal(f.numpy(), np.array([1.0, 2.0], np.float32)
                                  + np.array([0.1, 0.2]).astype(np.float32))
    # an operand that does not broadcast to the target's shape
    with pytest.raises(RuntimeError):
        ember.zeros(3).add_(ember.zeros(2, 3))
    # alpha takes the general path
    g = ember.tensor([1.0, 2.0])
    g.add_(ember.tensor([1.0, 1.0]), alpha=2)
    assert g.tolist() == [3.0, 4.0]
    # relu_ on an int tensor
    k = ember.tensor([-1, 2])
    k.relu_()
    assert k.tolist() == [0, 2]


def test_autograd_still_records_in_place_ops():
    x = ember.tensor([-1.0, 2.0], requires_grad=True)
    y = x * 1.0
    y.relu_()
    y += 1.0
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0]
