"""The op database's building blocks: OpInfo and SampleInput.

An OpInfo names an ember op, a NumPy reference for it, and a generator of sample
inputs written in NumPy. The generic tests (tests/core/test_ops.py and
tests/interop/test_ops_torch.py) turn every NumPy array in a sample into a tensor,
call the op, and compare with the reference, with finite-difference gradients in
float64, and with PyTorch when it is installed. Adding an entry adds its tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FLOATING = (np.float32, np.float64)
INTEGRAL = (np.int32, np.int64)
ALL_REAL = (np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16,
            np.float32, np.float64)


@dataclass
class SampleInput:
    """One call of an op: ``op(input, *args, **kwargs)``.

    NumPy arrays anywhere in ``input``, ``args`` or ``kwargs`` (also inside lists and
    tuples) become tensors for the ember call and stay arrays for the reference.
    ``grad=False`` marks a sample not to gradcheck (e.g. at a non-differentiable point).
    Float arrays in ``input`` and ``args`` require grad in the gradient tests; arrays in
    ``kwargs`` never do (constants such as targets or running statistics go there), and
    integer arrays never do.
    """

    input: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    grad: bool = True
    name: str = ""


@dataclass(frozen=True)
class XFail:
    """A known failure of one generic test of one op, for ``OpInfo.xfails``.

    The test is marked ``xfail(strict=True)`` so that it fails loudly once the bug is
    fixed and the entry must go. ``test`` is the test function's name (e.g.
    ``"test_gradcheck"``, ``"test_forward_matches_torch"``); ``dtypes`` limits the mark to
    those dtypes (None: all) for the tests parametrized by dtype. ``strict=False`` is for
    a difference that depends on the reference's build or machine (the test may pass).
    """

    test: str
    reason: str
    dtypes: tuple | None = None
    strict: bool = True

    def applies(self, test: str, dtype=None) -> bool:
        if test != self.test:
            return False
        if self.dtypes is None or dtype is None:
            return True
        return np.dtype(dtype) in {np.dtype(d) for d in self.dtypes}


@dataclass
class OpInfo:
    """One op in the database.

    Attributes:
        name: the test id, usually the op's name (``"add"``, ``"sum_dim"``).
        op: the ember callable, e.g. ``ember.add`` or ``lambda x, d: x.sum(d)``.
        ref: the NumPy reference taking the same arguments as arrays; None to skip
            the forward comparison with NumPy (then ``torch_op`` should be given).
        samples: ``samples(dtype, rng) -> iterable of SampleInput`` in NumPy.
        dtypes: the dtypes the forward test runs on.
        differentiable: gradcheck the float64 samples (inputs that are float arrays
            require grad).
        torch_op: ``lambda torch: callable`` giving PyTorch's version, for interop tests.
        method: the Tensor method name, if ``input.method(*args)`` must equal ``op``.
        check_dtype: compare result dtypes with the reference's.
        rtol, atol: forward tolerances (defaults by dtype if None).
        grad_atol, grad_rtol: gradcheck tolerances.
        output_process: ``f(result) -> comparable`` applied to both results, e.g. to
            pick the values of a (values, indices) pair.
        gradgrad: also gradgradcheck the float64 samples.
        xfails: ``XFail`` entries naming known bugs (tests marked strict xfail).
    """

    name: str
    op: Callable
    samples: Callable[[Any, np.random.Generator], Iterable[SampleInput]]
    ref: Callable | None = None
    dtypes: tuple = FLOATING
    differentiable: bool = True
    torch_op: Callable | None = None
    method: str | None = None
    check_dtype: bool = True
    rtol: float | None = None
    atol: float | None = None
    grad_atol: float = 1e-5
    grad_rtol: float = 1e-3
    output_process: Callable | None = None
    gradgrad: bool = False
    xfails: tuple = ()

    def xfail_reasons(self, test: str, dtype=None) -> list:
        """The reasons of the ``xfails`` that apply to ``test`` (at ``dtype``)."""
        return [x.reason for x in self.xfails if x.applies(test, dtype)]

    def xfail_marks(self, test: str, dtype=None) -> list:
        """``pytest.mark.xfail`` marks of the ``xfails`` that apply to ``test`` (at ``dtype``)."""
        import pytest

        return [pytest.mark.xfail(reason=x.reason, strict=x.strict) for x in self.xfails
                if x.applies(test, dtype)]

    def __repr__(self) -> str:
        return f"OpInfo({self.name})"


def arr(rng, shape, dtype, low=-3.0, high=3.0):
    """A random NumPy array of ``shape`` and ``dtype`` in [low, high)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        lo = max(int(low), 0) if dtype.kind == "u" else int(low)
        return rng.integers(lo, max(int(high), lo + 1), size=shape).astype(dtype)
    a = rng.uniform(low, high, size=shape)
    if dtype.kind == "c":
        a = a + 1j * rng.uniform(low, high, size=shape)
    return np.asarray(a).astype(dtype)


def positive(rng, shape, dtype, low=0.5, high=3.0):
    return arr(rng, shape, dtype, low, high)
