"""serial_blas / serial_blas_below (NOTE [ Serial BLAS ]): small GEMMs run on one OpenBLAS
thread, the count is restored after, and the results do not change."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._backend import _blas


def test_serial_blas_below_the_threshold_only():
    assert _blas.serial_blas_below(np, _blas.SERIAL_MAX_WORK - 1).on == (
        _blas._set_threads_local is not None)
    assert not _blas.serial_blas_below(np, _blas.SERIAL_MAX_WORK).on
    assert not _blas.serial_blas_below(object(), 1).on  # not NumPy: nothing to do


def test_the_thread_count_is_restored():
    if _blas._set_threads_local is None:
        pytest.skip("this NumPy's BLAS has no openblas_set_num_threads_local")
    before = _blas._set_threads_local(1)
    _blas._set_threads_local(before)
    with _blas.serial_blas_below(np, 10):
        inside = _blas._set_threads_local(1)
        _blas._set_threads_local(inside)
    after = _blas._set_threads_local(before)
    assert inside == 1 and after == before


def test_linear_gives_the_same_numbers_small_and_large():
    rng = np.random.default_rng(0)
    for rows, k, n in ((8, 16, 4), (512, 256, 128)):  # below and above the threshold
        x0 = rng.standard_normal((rows, k)).astype(np.float32)
        w0 = rng.standard_normal((n, k)).astype(np.float32)
        x = ember.tensor(x0, requires_grad=True)
        w = ember.tensor(w0, requires_grad=True)
        y = F.linear(x, w)
        y.backward(ember.ones(rows, n))
        np.testing.assert_allclose(y.detach().numpy(), x0 @ w0.T, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(x.grad.numpy(), np.ones((rows, n), np.float32) @ w0,
                                   rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(w.grad.numpy(), np.ones((n, rows), np.float32) @ x0,
                                   rtol=1e-5, atol=1e-3)
