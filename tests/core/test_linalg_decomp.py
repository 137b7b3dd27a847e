"""ember.linalg beyond the op database: errors and info of singular / non positive-
definite inputs, the _ex forms, named results, LU pieces, lstsq's fields, gradients
at special points, zero-size and batched inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember
from ember.testing import assert_close

L = ember.linalg


def t(a, **kw):
    return ember.tensor(np.asarray(a, dtype=np.float64), **kw)


def test_linalg_error_is_runtime_error():
    assert issubclass(L.LinAlgError, RuntimeError)
    assert L.LinAlgError.__module__ == "ember.linalg"


def test_inv_singular_messages():
    with pytest.raises(L.LinAlgError, match=r"^linalg.inv: The diagonal element 2 is zero"):
        L.inv(t([[1, 2], [2, 4]]))
    batch = np.stack([np.eye(2), [[1, 2], [2, 4]]])
    with pytest.raises(L.LinAlgError, match=r"\(Batch element 1\): The diagonal element 2"):
        L.inv(t(batch))


def test_inv_ex_info_per_batch_element():
    batch = np.stack([np.eye(3), np.zeros((3, 3)), np.diag([1.0, 0.0, 1.0])])
    inverse, info = L.inv_ex(t(batch))
    assert info.dtype == ember.int32
    assert info.tolist() == [0, 1, 2]
    assert_close(inverse[0], t(np.eye(3)))
    with pytest.raises(L.LinAlgError):
        L.inv_ex(t(batch), check_errors=True)


def test_solve_singular_and_shapes():
    with pytest.raises(L.LinAlgError, match="torch.linalg.solve: The solver failed because the "
                                            "input matrix is singular."):
        L.solve(t(np.zeros((2, 2))), t([1, 2]))
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation "
                                           r"AX = B \(2x2 and 3x3\)"):
        L.solve(t(np.eye(2)), t(np.ones((3, 3))))
    with pytest.raises(RuntimeError, match="Expected A and B to have the same dtype"):
        L.solve(ember.eye(2), t(np.ones((2, 2))))
    x, info = L.solve_ex(t(np.stack([np.eye(2), np.zeros((2, 2))])), t(np.ones((2, 2, 1))))
    assert info.tolist() == [0, 1]
    assert_close(x[0], t(np.ones((2, 1))))


def test_solve_broadcasts_batches_and_vectors():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 1, 3, 3)) + 3 * np.eye(3)
    B = rng.standard_normal((5, 3, 2))
    assert_close(L.solve(t(A), t(B)), t(np.linalg.solve(A, B)))
    b = rng.standard_normal((4, 1, 3))  # A's batch shape minus one dim: vectors
    assert L.solve(t(A), t(b)).shape == (4, 1, 3)


def test_cholesky_not_positive_definite():
    with pytest.raises(L.LinAlgError, match=r"the leading minor of order 2 is not "
                                            r"positive-definite"):
        L.cholesky(t([[1, 2], [2, 1]]))
    batch = np.stack([np.eye(2), [[1, 2], [2, 1]], -np.eye(2)])
    Lc, info = L.cholesky_ex(t(batch))
    assert info.tolist() == [0, 2, 1]
    assert_close(Lc[0], t(np.eye(2)))
    with pytest.raises(L.LinAlgError, match=r"\(Batch element 1\)"):
        L.cholesky(t(batch))


def test_checks_name_the_problem():
    with pytest.raises(RuntimeError, match="linalg.inv: A must be batches of square matrices, "
                                           "but they are 2 by 3 matrices"):
        L.inv(ember.zeros(2, 3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                                           "input. Got Long"):
        L.det(ember.zeros(2, 2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        L.cholesky(ember.ones(3))
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U'"):
        L.eigh(ember.eye(2), UPLO="X")
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        L.matrix_norm(ember.eye(2), 3)
    with pytest.raises(RuntimeError, match="driver"):
        L.lstsq(ember.eye(2), ember.eye(2), driver="nope")


def test_lu_factor_pivots_and_unpack():
    A = np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 10]])
    LU, piv = L.lu_factor(t(A))
    assert piv.dtype == ember.int32
    assert piv.tolist() == [3, 3, 3]  # LAPACK's getrf for this matrix
    P, Lm, U = ember.lu_unpack(LU, piv)
    assert_close(P @ Lm @ U, t(A))
    assert_close(Lm.tril(), Lm)
    assert_close(Lm.diagonal(), t(np.ones(3)))
    with pytest.raises(RuntimeError, match=r"U\[2,2\] is zero"):
        L.lu_factor(t([[1, 2], [2, 4]]))
    _, _, info = L.lu_factor_ex(t(np.zeros((2, 2))))
    assert info.item() == 1


def test_lu_rectangular_reconstructs():
    rng = np.random.default_rng(1)
    for shape in [(2, 3, 5), (5, 3)]:
        A = rng.standard_normal(shape)
        P, Lm, U = L.lu(t(A))
        k = min(shape[-2:])
        assert Lm.shape[-1] == k and U.shape[-2] == k
        assert_close(P @ Lm @ U, t(A))


def test_det_and_slogdet_of_singular():
    A = t([[1, 2], [2, 4]], requires_grad=True)
    d = L.det(A)
    assert d.item() == 0
    d.backward()
    assert_close(A.grad, t([[4, -2], [-2, 1]]))  # the cofactor matrix
    sign, logabs = L.slogdet(t(np.zeros((2, 2))))
    assert sign.item() == 0 and logabs.item() == -math.inf
    assert math.isnan(ember.logdet(t([[-1, 0], [0, 1]])).item())


def test_solve_triangular_zero_diagonal_gives_inf():
    x = L.solve_triangular(t([[0, 1], [0, 1]]), t([[1], [1]]), upper=True)
    assert not np.isfinite(x.numpy()).all()


def test_lstsq_fields_by_driver():
    rng = np.random.default_rng(2)
    A, B = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    res = L.lstsq(t(A), t(B))
    assert_close(res.solution, t(np.linalg.lstsq(A, B, rcond=None)[0]))
    assert res.residuals.numel() == 0 and res.singular_values.numel() == 0
    assert res.rank.item() == 3
    res = L.lstsq(t(A), t(B), driver="gelsd")
    assert_close(res.residuals, t(np.linalg.lstsq(A, B, rcond=None)[1]))
    assert_close(res.singular_values, t(np.linalg.svd(A, compute_uv=False)))
    assert L.lstsq(t(A), t(B), driver="gels").rank.numel() == 0


def test_lstsq_gels_refuses_an_exactly_rank_deficient_matrix():
    # PyTorch's LAPACK gels fails where the triangular factor has an exact zero on its
    # diagonal (the error code is its 1-based position); other drivers solve
    rng = np.random.default_rng(3)
    wide = rng.standard_normal((2, 3, 5))
    wide[1, 1] = 0  # a zero row of batch element 1
    B = t(rng.standard_normal((2, 3, 2)))
    with pytest.raises(L.LinAlgError, match=r"\(Batch element 1\): .*does not have full rank "
                       r"\(error code: 2\)"):
        L.lstsq(t(wide), B, driver="gels")
    assert L.lstsq(t(wide), B, driver="gelsd").solution.shape == (2, 5, 2)
    tall = rng.standard_normal((5, 3))
    tall[:, 0] = 0
    with pytest.raises(RuntimeError, match=r"error code: 1"):
        L.lstsq(t(tall), t(rng.standard_normal((5, 1))), driver="gels")
    assert L.lstsq(ember.zeros(0, 3), ember.zeros(0, 2), driver="gels").solution.shape == (3, 2)


def test_rank_deficient_pinv_and_rank():
    a = np.outer([1.0, 2, 3], [1.0, -1])
    assert L.matrix_rank(t(a)).item() == 1
    assert L.matrix_rank(t(a), hermitian=False, atol=100.0).item() == 0
    assert_close(L.pinv(t(a)), t(np.linalg.pinv(a)))
    ah = a @ a.T
    assert_close(L.pinv(t(ah), hermitian=True), t(np.linalg.pinv(ah)), atol=1e-10, rtol=1e-7)


def test_zero_size_inputs():
    e = ember.zeros(0, 0, dtype=ember.float64)
    assert L.det(e).item() == 1
    assert L.inv(e).shape == (0, 0)
    assert L.svdvals(ember.zeros(2, 0, 3)).shape == (2, 0)
    assert L.qr(ember.zeros(3, 0))[0].shape == (3, 0)
    assert L.matrix_exp(ember.zeros(2, 0, 0)).shape == (2, 0, 0)
    assert L.solve(ember.zeros(4, 2, 2) + ember.eye(2), ember.zeros(4, 2, 0)).shape == (4, 2, 0)


def test_named_results():
    A = ember.eye(3, dtype=ember.float64)
    assert L.qr(A).Q.shape == (3, 3)
    assert L.svd(A).Vh.shape == (3, 3)
    assert L.eigh(A).eigenvalues.tolist() == [1, 1, 1]
    assert L.slogdet(A).logabsdet.item() == 0
    assert ember.svd(A).V.shape == (3, 3)
    assert ember.triangular_solve(A, A).cloned_coefficient.shape == (3, 3)


def test_qr_backward_refuses_mode_r_and_complete_tall():
    A = t(np.random.default_rng(3).standard_normal((4, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        L.qr(A, mode="r")[1].sum().backward()
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        L.qr(A, mode="complete")[0].sum().backward()


def test_svd_vectors_gradcheck_gauge_invariant():
    rng = np.random.default_rng(4)
    A = t(rng.standard_normal((4, 3)), requires_grad=True)

    def f(a):
        U, S, Vh = L.svd(a, full_matrices=False)
        return U @ Vh, S  # invariant under the sign of each singular pair

    assert ember.autograd.gradcheck(f, (A,))


def test_eig_gradient_of_real_input_is_real():
    A = t(np.array([[2.0, 1, 0], [0, 3, 1], [1, 0, 4]]), requires_grad=True)
    w, V = L.eig(A)
    (w.real.sum() + (V.abs() ** 2).sum()).backward()
    assert A.grad.dtype == ember.float64
    assert ember.autograd.gradcheck(lambda a: L.eigvals(a).real, (A,))


def test_complex_gradcheck_through_parts():
    rng = np.random.default_rng(5)
    re = t(rng.standard_normal((3, 3)) + 3 * np.eye(3), requires_grad=True)
    im = t(rng.standard_normal((3, 3)), requires_grad=True)

    def f(r, i):
        z = ember.complex(r, i)
        Q, R = L.qr(z)
        return ember.view_as_real(Q @ R), L.slogdet(z)[1], ember.view_as_real(L.det(z))

    assert ember.autograd.gradcheck(f, (re, im))


def test_matrix_exp_large_norm_and_batch_scaling():
    A = np.array([[[0.0, 10.0], [-10.0, 0.0]], [[0.1, 0.0], [0.0, 0.2]]])
    got = L.matrix_exp(t(A)).numpy()
    rot = np.array([[np.cos(10), np.sin(10)], [-np.sin(10), np.cos(10)]])
    assert np.allclose(got[0], rot, atol=1e-12)
    assert np.allclose(got[1], np.diag(np.exp([0.1, 0.2])), atol=1e-14)


def test_tensor_methods_installed():
    A = t(np.eye(2) * 2)
    assert A.det().item() == 4
    assert_close(A.inverse(), t(np.eye(2) / 2))
    assert A.matrix_power(3).tolist() == [[8, 0], [0, 8]]
    assert A.logdet().item() == pytest.approx(math.log(4))
    assert A.slogdet()[1].item() == pytest.approx(math.log(4))


def test_deprecated_norm_spellings():
    a = np.random.default_rng(6).standard_normal((2, 3, 4))
    with pytest.warns(UserWarning, match="nuclear_norm is deprecated"):
        got = ember.nuclear_norm(t(a))
    assert_close(got, t(np.linalg.norm(a, "nuc", axis=(-2, -1))))
    with pytest.warns(UserWarning, match="frobenius_norm is deprecated"):
        got = ember.frobenius_norm(t(a), (0, 2), keepdim=True)
    assert_close(got, t(np.sqrt((a ** 2).sum((0, 2), keepdims=True))))


def test_non_finite_inputs():
    a = t([[1.0, float("nan")], [2.0, 3.0]])
    assert np.isnan(L.inv(a).numpy()).all()
    assert np.isnan(L.det(a).item())
    with pytest.raises(L.LinAlgError, match="linalg.svd: The algorithm failed to converge "
                                            "because the input matrix contained non-finite"):
        L.svdvals(a)
    with pytest.raises(L.LinAlgError, match=r"linalg.svd: \(Batch element 1\)"):
        L.svd(ember.stack([ember.eye(2, dtype=ember.float64), a]))
    with pytest.raises(RuntimeError, match="input tensor should not contain infs or NaNs"):
        L.eigvals(a)


def _ldl_dense(LD, piv):
    """A = U D U^T rebuilt from LAPACK's compact LDL (lower), one matrix, NumPy."""
    n = LD.shape[-1]
    M = np.eye(n, dtype=LD.dtype)
    D = np.zeros((n, n), dtype=LD.dtype)
    k = 0
    while k < n:
        p = piv[k]
        Lk = np.eye(n, dtype=LD.dtype)
        P = np.eye(n)
        if p > 0:
            P[[k, p - 1]] = P[[p - 1, k]]
            D[k, k] = LD[k, k]
            Lk[k + 1:, k] = LD[k + 1:, k]
            step = 1
        else:
            P[[k + 1, -p - 1]] = P[[-p - 1, k + 1]]
            D[k:k + 2, k:k + 2] = [[LD[k, k], LD[k + 1, k]], [LD[k + 1, k], LD[k + 1, k + 1]]]
            Lk[k + 2:, k:k + 2] = LD[k + 2:, k:k + 2]
            step = 2
        M = M @ P @ Lk
        k += step
    return M @ D @ M.T


def test_ldl_factor_reconstructs_and_solves():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 5, 5))
    a[:2, np.arange(5), np.arange(5)] = 0  # zero diagonals force 2x2 pivots
    sym = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    LD, piv = L.ldl_factor(t(a))
    assert piv.dtype == ember.int32 and (piv.numpy() < 0).any()
    assert np.allclose(np.triu(LD.numpy(), 1), 0)
    for i in range(4):
        assert np.allclose(_ldl_dense(LD.numpy()[i], piv.numpy()[i]), sym[i], atol=1e-10)
    b = rng.standard_normal((4, 5, 3))
    assert_close(L.ldl_solve(LD, piv, t(b)), t(np.linalg.solve(sym, b)))


def test_ldl_singular_and_errors():
    _, _, info = L.ldl_factor_ex(t(np.zeros((2, 3, 3))))
    assert info.tolist() == [1, 1]
    with pytest.raises(L.LinAlgError, match="could not be completed"):
        L.ldl_factor(t(np.zeros((2, 2))))
    LD, piv = L.ldl_factor(t(np.eye(3)))
    assert L.ldl_factor(t(np.eye(3)), hermitian=True).LD.tolist() == LD.tolist()
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        L.ldl_solve(LD, piv, t(np.ones((2, 1))))


def test_ldl_hermitian_complex():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 4, 4)) + 1j * rng.standard_normal((3, 4, 4))
    a[0, np.arange(4), np.arange(4)] = 0
    herm = np.tril(a) + np.conj(np.swapaxes(np.tril(a, -1), -1, -2))
    herm[..., np.arange(4), np.arange(4)] = herm[..., np.arange(4), np.arange(4)].real
    sym = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    b = rng.standard_normal((3, 4, 2)) + 0j
    for hermitian, full in ((True, herm), (False, sym)):
        LD, piv = L.ldl_factor(ember.tensor(a), hermitian=hermitian)
        x = L.ldl_solve(LD, piv, ember.tensor(b), hermitian=hermitian)
        assert np.allclose(x.numpy(), np.linalg.solve(full, b), atol=1e-10)


def test_double_backward_of_decompositions():
    rng = np.random.default_rng(9)
    R = t(rng.standard_normal((4, 3)), requires_grad=True)
    A = t(rng.standard_normal((3, 3)), requires_grad=True)

    def svd_parts(a):
        U, S, Vh = L.svd(a, full_matrices=False)
        return U @ Vh, S

    def eig_vectors(a):
        V = L.eigh(a + a.mT)[1]
        return V * V[..., :1, :]

    assert ember.autograd.gradgradcheck(svd_parts, (R,))
    assert ember.autograd.gradgradcheck(eig_vectors, (A,))
    assert ember.autograd.gradgradcheck(
        lambda a: L.eigvals(a @ a.mT + 3 * ember.eye(3, dtype=a.dtype)).real, (A,))
