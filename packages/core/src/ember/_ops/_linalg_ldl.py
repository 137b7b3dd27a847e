"""ember.linalg, part 3: the LDL factorization of symmetric matrices with Bunch-Kaufman
pivoting (ldl_factor, ldl_factor_ex) and its solver (ldl_solve), in LAPACK's compact
form (sytf2/sytrs, lower triangle), as PyTorch returns it.

NumPy has no sytrf. The factorization here is LAPACK's unblocked algorithm run on the
whole batch at once: every matrix has its own position ``k`` and its own choice of a
1x1 or 2x2 pivot at each step, so the steps are masked updates of all matrices (one
vectorized step per pivot, never a loop over batch entries). ``hermitian=True`` runs
LAPACK's hetf2/hetrs for complex input (the same as sytf2 for real input). Like
PyTorch's, these functions are not differentiable.
"""

from __future__ import annotations

import math

import numpy as np

from ember._ops._linalg_solve import (
    LinAlgError,
    batch_prefix,
    check_same_dtype,
    check_square,
    check_tensor,
    to_host,
)
from ember._ops._util import wrap, xp_of
from ember._ops.reduction import return_type

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

_LDLResult = return_type("linalg_ldl_factor", ("LD", "pivots"))
_LDLExResult = return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0  # Bunch-Kaufman's threshold


def _abs1(xp, a):
    """LAPACK's pivot size: |a| for real, |Re a| + |Im a| for complex entries."""
    if a.dtype.kind == "c":
        return xp.abs(a.real) + xp.abs(a.imag)
    return xp.abs(a)


def ldl_arrays(xp, a, herm=False):
    """(LD, pivots, info) of the batch of symmetric (``herm``: Hermitian) matrices ``a``
    (lower triangle read): LAPACK's sytf2 (hetf2)."""
    *batch, n, _ = a.shape
    herm = herm and a.dtype.kind == "c"
    cj = xp.conj if herm else (lambda v: v)
    if a.size == 0:  # no matrices, or 0 x 0 ones: nothing to factor
        return (a.copy(), xp.zeros((*batch, n), dtype=np.int32),
                xp.zeros(tuple(batch), dtype=np.int32))
    A = a.reshape(-1, n, n)
    low = xp.tril(A)
    A = low + cj(xp.swapaxes(xp.tril(A, -1), -1, -2))  # the full symmetric/Hermitian matrix
    diag = xp.arange(n)
    if herm:  # hetf2 reads only the real parts of the diagonal
        A[:, diag, diag] = A[:, diag, diag].real
    nb = A.shape[0]
    rows = xp.arange(nb)
    idx = xp.arange(n)
    k = xp.zeros(nb, dtype=np.int64)
    ipiv = xp.zeros((nb, n), dtype=np.int32)
    info = xp.zeros(nb, dtype=np.int32)
    with np.errstate(all="ignore"):
        while True:
            active = k < n
            if not bool(active.any()):
                break
            kc = xp.minimum(k, n - 1)
            akk = A[rows, kc, kc]
            absakk = xp.abs(akk.real) if herm else _abs1(xp, akk)
            col = _abs1(xp, A[rows, :, kc])
            col = xp.where(idx[None, :] > kc[:, None], col, -1.0)
            imax = xp.argmax(col, axis=1)
            colmax = xp.maximum(col[rows, imax], 0.0)
            zero = active & ((xp.maximum(absakk, colmax) == 0) | xp.isnan(absakk))
            info = xp.where((info == 0) & zero, kc + 1, info).astype(np.int32)
            # the largest off-diagonal entry in row/column imax of the trailing matrix
            rowv = _abs1(xp, A[rows, imax, :])
            rowv = xp.where((idx[None, :] >= kc[:, None]) & (idx[None, :] != imax[:, None]),
                            rowv, -1.0)
            rowmax = xp.maximum(rowv.max(axis=1), 0.0)
            c1 = absakk >= _ALPHA * colmax
            c2 = absakk * rowmax >= _ALPHA * colmax * colmax
            aii = A[rows, imax, imax]
            c3 = (xp.abs(aii.real) if herm else _abs1(xp, aii)) >= _ALPHA * rowmax
            keep = zero | c1 | c2
            kp = xp.where(keep, kc, imax)
            two = active & ~keep & ~c3
            one = active & ~two
            kk = kc + two
            kp = xp.where(active, kp, kk)
            # interchange kk and kp in the trailing matrix A[k:, k:] (rows, then columns)
            tail = idx[None, :] >= kc[:, None]
            rkk, rkp = A[rows, kk, :].copy(), A[rows, kp, :].copy()
            A[rows, kk, :] = xp.where(tail, rkp, rkk)
            A[rows, kp, :] = xp.where(tail, rkk, rkp)
            ckk, ckp = A[rows, :, kk].copy(), A[rows, :, kp].copy()
            A[rows, :, kk] = xp.where(tail, ckp, ckk)
            A[rows, :, kp] = xp.where(tail, ckk, ckp)
            # 1x1 pivots: A22 -= x x^T / d, x /= d
            upd1 = one & ~zero
            d = xp.where(upd1, A[rows, kc, kc], 1)
            x = xp.where(idx[None, :] > kc[:, None], A[rows, :, kc], 0)
            x = xp.where(upd1[:, None], x, 0)
            A -= (x[:, :, None] * cj(x)[:, None, :]) / d[:, None, None]
            A[rows, :, kc] = xp.where((idx[None, :] > kc[:, None]) & upd1[:, None],
                                      x / d[:, None], A[rows, :, kc])
            # 2x2 pivots (sytf2's and hetf2's arithmetic)
            k1 = xp.minimum(kc + 1, n - 1)
            below = (idx[None, :] > k1[:, None]) & two[:, None]
            xk = xp.where(below, A[rows, :, kc], 0)
            xk1 = xp.where(below, A[rows, :, k1], 0)
            if herm:
                a21 = xp.where(two, A[rows, k1, kc], 1)
                dd = xp.abs(a21)
                d11 = A[rows, k1, k1].real / dd
                d22 = A[rows, kc, kc].real / dd
                tt = 1 / (d11 * d22 - 1)
                d21 = a21 / dd
                dd = tt / dd
                wk = dd[:, None] * (d11[:, None] * xk - d21[:, None] * xk1)
                wkp1 = dd[:, None] * (d22[:, None] * xk1 - xp.conj(d21)[:, None] * xk)
            else:
                d21 = xp.where(two, A[rows, k1, kc], 1)
                d11 = A[rows, k1, k1] / d21
                d22 = A[rows, kc, kc] / d21
                t = 1 / (d11 * d22 - 1)
                d21 = t / d21
                wk = d21[:, None] * (d11[:, None] * xk - xk1)
                wkp1 = d21[:, None] * (d22[:, None] * xk1 - xk)
            wk, wkp1 = xp.where(below, wk, 0), xp.where(below, wkp1, 0)
            A -= xk[:, :, None] * cj(wk)[:, None, :] + xk1[:, :, None] * cj(wkp1)[:, None, :]
            if herm:
                A[:, diag, diag] = A[:, diag, diag].real
            A[rows, :, kc] = xp.where(below, wk, A[rows, :, kc])
            A[rows, :, k1] = xp.where(below, wkp1, A[rows, :, k1])
            # pivots (1-based; a 2x2 block gets -kp twice) and the next position
            ipiv[rows, kc] = xp.where(active, xp.where(two, -(kp + 1), kp + 1),
                                      ipiv[rows, kc]).astype(np.int32)
            ipiv[rows, k1] = xp.where(two, -(kp + 1), ipiv[rows, k1]).astype(np.int32)
            k = k + xp.where(active, 1 + two, 0)
    LD = xp.tril(A)
    return LD.reshape(*batch, n, n), ipiv.reshape(*batch, n), info.reshape(batch)


def _ldl(fn, A, hermitian, check):
    check_square(fn, A)
    LD, piv, info = ldl_arrays(xp_of(A._data), A._data, bool(hermitian))
    if check:
        flat = to_host(info).reshape(-1)
        bad = np.flatnonzero(flat)
        if bad.size:
            i = int(bad[0])
            raise LinAlgError(f"{fn}: " + batch_prefix(info.shape, i) + "The factorization "
                              f"could not be completed because D[{int(flat[i])}, "
                              f"{int(flat[i])}] is exactly zero.")
    return wrap(LD), wrap(piv), wrap(info)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None)

    :func:`ldl_factor` that also returns LAPACK's ``info`` (``i`` where the ``i``-th
    diagonal block of D is exactly singular, 1-based; 0 otherwise) instead of raising.

    Returns:
        A named tuple ``(LD, pivots, info)``.
    """
    LD, piv, info = _ldl("torch.linalg.ldl_factor_ex", A, hermitian, check_errors)
    return _LDLExResult((LD, piv, info))


def ldl_factor(A, *, hermitian=False, out=None):
    """ldl_factor(A, *, hermitian=False, out=None) -> (Tensor, Tensor)

    The LDL factorization ``A = L D L^T`` of a (batch of) symmetric matrices (``A = L D
    L^H`` of Hermitian ones with ``hermitian=True``) with Bunch-Kaufman pivoting, in
    LAPACK's compact form: ``LD`` holds L below the diagonal and the 1x1 / 2x2 blocks
    of D on and next to it (only the lower triangle of ``A`` is read); ``pivots``
    (int32) are LAPACK's: ``pivots[k] = p > 0`` means rows ``k`` and ``p`` were swapped
    for a 1x1 block, a pair of equal negative entries marks a 2x2 block. Not
    differentiable (as in PyTorch).

    Returns:
        A named tuple ``(LD, pivots)``.
    """
    LD, piv, _ = _ldl("torch.linalg.ldl_factor", A, hermitian, True)
    return _LDLResult((LD, piv))


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """ldl_solve(LD, pivots, B, *, hermitian=False, out=None) -> Tensor

    The solution of ``A X = B`` from the LDL factorization of :func:`ldl_factor`
    (LAPACK's sytrs), for the whole batch at once. Not differentiable.
    """
    fn = "torch.linalg.ldl_solve"
    check_square(fn, LD, "LD")
    check_tensor(fn, "B", B)
    check_same_dtype(fn, LD, B, "LD", "B")
    if B._data.ndim < 2 or B._data.shape[-2] != LD._data.shape[-1]:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation AX = B "
                           f"({LD._data.shape[-1]}x{LD._data.shape[-1]} and "
                           f"{'x'.join(str(s) for s in B._data.shape[-2:])})")
    if pivots._data.dtype != np.int32:
        raise RuntimeError(f"{fn}: Expected LD and pivots to have int32 pivots, got "
                           f"{pivots._data.dtype}")
    xp = xp_of(LD._data)
    a, p, b = LD._data, pivots._data, B._data
    herm = bool(hermitian) and a.dtype.kind == "c"
    batch = np.broadcast_shapes(a.shape[:-2], p.shape[:-1], b.shape[:-2])
    n = a.shape[-1]
    a = xp.broadcast_to(a, batch + (n, n)).reshape(-1, n, n)
    p = xp.broadcast_to(p, batch + (n,)).reshape(-1, n).astype(np.int64)
    X = xp.array(xp.broadcast_to(b, batch + b.shape[-2:]), dtype=np.result_type(a, b))
    X = X.reshape(-1, n, b.shape[-1])
    nb = a.shape[0]
    rows = xp.arange(nb)
    idx = xp.arange(n)

    def swap(i, j, on):
        j = xp.where(on, j, i)
        ri, rj = X[rows, i, :].copy(), X[rows, j, :].copy()
        X[rows, i, :] = rj
        X[rows, j, :] = ri

    with np.errstate(all="ignore"):
        # L D Y = B, forward
        k = xp.zeros(nb, dtype=np.int64)
        while bool((k < n).any()):
            active = k < n
            kc = xp.minimum(k, n - 1)
            pk = p[rows, kc]
            two = active & (pk < 0)
            one = active & ~two
            k1 = xp.minimum(kc + 1, n - 1)
            swap(kc, pk - 1, one)
            swap(k1, -pk - 1, two)
            below1 = (idx[None, :] > kc[:, None]) & one[:, None]
            X -= xp.where(below1, a[rows, :, kc], 0)[:, :, None] * X[rows, kc, :][:, None, :]
            below2 = (idx[None, :] > k1[:, None]) & two[:, None]
            X -= xp.where(below2, a[rows, :, kc], 0)[:, :, None] * X[rows, kc, :][:, None, :]
            X -= xp.where(below2, a[rows, :, k1], 0)[:, :, None] * X[rows, k1, :][:, None, :]
            d = xp.where(one, a[rows, kc, kc].real if herm else a[rows, kc, kc], 1)
            X[rows, kc, :] = X[rows, kc, :] / d[:, None]
            akm1k = xp.where(two, a[rows, k1, kc], 1)
            ck = xp.conj(akm1k) if herm else akm1k
            akm1 = a[rows, kc, kc] / ck
            ak = a[rows, k1, k1] / akm1k
            denom = xp.where(two, akm1 * ak - 1, 1)
            bkm1 = X[rows, kc, :] / ck[:, None]
            bk = X[rows, k1, :] / akm1k[:, None]
            X[rows, kc, :] = xp.where(two[:, None], (ak[:, None] * bkm1 - bk) / denom[:, None],
                                      X[rows, kc, :])
            X[rows, k1, :] = xp.where(two[:, None], (akm1[:, None] * bk - bkm1) / denom[:, None],
                                      X[rows, k1, :])
            k = k + xp.where(active, 1 + two, 0)
        # L^T X = Y, backward
        k = xp.full(nb, n - 1, dtype=np.int64)
        while bool((k >= 0).any()):
            active = k >= 0
            kc = xp.maximum(k, 0)
            pk = p[rows, kc]
            two = active & (pk < 0)
            one = active & ~two
            km1 = xp.maximum(kc - 1, 0)
            below = (idx[None, :] > kc[:, None]) & active[:, None]
            cj = xp.conj if herm else (lambda v: v)
            colk = cj(xp.where(below, a[rows, :, kc], 0))
            X[rows, kc, :] -= (colk[:, :, None] * X).sum(1)
            colkm1 = cj(xp.where(below & two[:, None], a[rows, :, km1], 0))
            X[rows, km1, :] -= (colkm1[:, :, None] * X).sum(1)
            swap(kc, pk - 1, one)
            swap(kc, -pk - 1, two)
            k = k - xp.where(active, 1 + two, 0)
    return wrap(X.reshape(batch + b.shape[-2:]))
