"""Complex tensors: the views share memory (in-place changes seen both ways, through
autograd too), the errors of view_as_complex, the conjugation flags, and gradients
in PyTorch's convention (conjugate Wirtinger: grad = dL/dRe + i dL/dIm)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.testing import assert_close


def z(values, dtype=ember.complex128, **kw):
    return ember.tensor(np.asarray(values), dtype=dtype, **kw)


def test_view_as_real_shares_memory():
    x = z([1 + 2j, 3 - 4j])
    r = ember.view_as_real(x)
    assert r.shape == (2, 2) and r.dtype == ember.float64
    r[0, 1] = 10.0
    assert x[0].item() == 1 + 10j
    x[1] = 0j
    assert r[1].tolist() == [0.0, 0.0]
    assert ember.view_as_real(z([1j], ember.complex64)).dtype == ember.float32


def test_view_as_complex_shares_memory_and_checks():
    a = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    c = ember.view_as_complex(a)
    assert c.dtype == ember.complex64 and c.tolist() == [1 + 2j, 3 + 4j]
    c[0] = 5 + 6j
    assert a[0].tolist() == [5.0, 6.0]
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        ember.view_as_complex(ember.ones(3, 3))
    with pytest.raises(RuntimeError, match="last dimension with stride 1"):
        ember.view_as_complex(ember.ones(2, 4).t())
    with pytest.raises(RuntimeError, match="stride divisible by 2"):
        ember.view_as_complex(ember.ones(3, 3)[:, :2])
    with pytest.raises(RuntimeError, match="only supported for half, float and double"):
        ember.view_as_complex(ember.ones(3, 2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        ember.view_as_real(ember.ones(2))


def test_real_imag_are_views_and_settable():
    x = z([1 + 2j, 3 + 4j])
    x.real[0] = 7.0
    x.imag.mul_(-1)
    assert x.tolist() == [7 - 2j, 3 - 4j]
    x.real = ember.tensor([0.0, 1.0], dtype=ember.float64)
    x.imag = 5.0
    assert x.tolist() == [5j, 1 + 5j]
    r = ember.ones(2)
    assert r.real is r and ember.real(r) is r
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with "
                                           "non-complex dtypes"):
        _ = r.imag


def test_gradients_through_views_follow_pytorch_convention():
    x = z([1 + 2j, -3 + 0.5j], requires_grad=True)
    loss = (x.real ** 2).sum() + (3 * x.imag).sum()
    loss.backward()
    # d/dRe = 2 Re, d/dIm = 3: grad = 2 Re + 3i
    assert_close(x.grad, z([2 + 3j, -6 + 3j]))
    y = z([1 + 1j], requires_grad=True)
    (ember.view_as_real(y) * ember.tensor([2.0, 5.0], dtype=ember.float64)).sum().backward()
    assert y.grad.tolist() == [2 + 5j]


def test_angle_and_abs_gradients():
    re = ember.tensor([1.0, -2.0, 0.5], dtype=ember.float64, requires_grad=True)
    im = ember.tensor([2.0, 0.3, -1.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: ember.angle(ember.complex(a, b)), (re, im))
    assert ember.autograd.gradcheck(lambda a, b: ember.complex(a, b).abs(), (re, im))
    w = z([0j], requires_grad=True)
    ember.angle(w).sum().backward()
    assert w.grad.tolist() == [0j]  # zero at the origin, as in PyTorch
    assert ember.angle(ember.tensor([-1, 2])).dtype == ember.float32


def test_polar_and_complex():
    out = ember.polar(ember.tensor([2.0]), ember.tensor([np.pi / 2]))
    assert abs(out.item() - 2j) < 1e-6
    with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double"):
        ember.complex(ember.ones(2, dtype=ember.int64), ember.ones(2, dtype=ember.int64))


def test_conj_flags():
    x = z([1 + 1j])
    c = x.conj()
    assert not ember.is_conj(c) and not c.is_conj()
    assert ember.resolve_conj(c) is c
    assert c.tolist() == [1 - 1j]
    assert not ember.is_neg(x) and ember.resolve_neg(x) is x
    p = ember.conj_physical(ember.ones(2))
    assert p.tolist() == [1.0, 1.0]
    x.conj_physical_()
    assert x.tolist() == [1 - 1j]
