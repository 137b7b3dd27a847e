"""ember.linalg, part 2: decompositions (QR, SVD, eigh, eig), the functions built on
them (pinv, matrix_rank, the matrix norms, cond), matrix functions (matrix_power,
matrix_exp) and the small helpers (vecdot, multi_dot, householder_product,
tensorinv, tensorsolve, vander). See NOTE [ LAPACK through the array module ] in
``_linalg_solve``.
"""

from __future__ import annotations

import math

import numpy as np

from ember import _dtype
from ember._C._core import Node, is_grad_enabled
from ember._ops._linalg_solve import (
    check_float,
    check_matrix,
    check_square,
    check_tensor,
    eye_like,
    inv,
    inv_ex,
    solve,
    solve_triangular,
)
from ember._ops._util import TensorBase, apply, with_out, wrap, wrap_dim, xp_of
from ember._ops.reduction import return_type

__all__ = [
    "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "pinv", "matrix_rank",
    "matrix_norm", "norm", "cond", "matrix_power", "matrix_exp", "vecdot", "multi_dot",
    "householder_product", "ormqr", "tensorinv", "tensorsolve", "vander",
]

_QRResult = return_type("linalg_qr", ("Q", "R"))
_SVDResult = return_type("linalg_svd", ("U", "S", "Vh"))
_EighResult = return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
_EigResult = return_type("linalg_eig", ("eigenvalues", "eigenvectors"))


def _svd_array(xp, a, **kw):
    """``xp.linalg.svd`` with PyTorch's error for a matrix that does not converge (one
    with inf or nan entries)."""
    try:
        return xp.linalg.svd(a, **kw)
    except np.linalg.LinAlgError:
        from ember._ops._linalg_solve import LinAlgError, batch_prefix, to_host

        bad = ~xp.isfinite(a).all(axis=(-2, -1))
        flat = np.flatnonzero(to_host(bad).reshape(-1))
        i = int(flat[0]) if flat.size else 0
        raise LinAlgError("linalg.svd: " + batch_prefix(a.shape[:-2], i) +
                          "The algorithm failed to converge because the input matrix "
                          "contained non-finite values.") from None


def _needs_grad(*tensors):
    return is_grad_enabled() and any(t.requires_grad for t in tensors)


def _real_dtype(A):
    dt = _dtype.from_numpy(A._data.dtype)
    return dt.to_real() if A.is_complex() else dt


def _diag_embed(v):
    from ember._ops.shape import diag_embed

    return diag_embed(v)


def _out(result, out, cls):
    if out is None:
        return cls(result)
    for o, r in zip(out, result, strict=True):
        with_out(r, o)
    return cls(out)


# ---------------------------------------------------------------------------
# QR

# NOTE [ Double backward of decompositions ]
# A node saves its inputs and its first output as tensors with history; the other
# outputs are kept as arrays. First-order backward uses those arrays. Under
# create_graph (grad mode on inside backward) the other outputs are recomputed from the
# saved ones with ember ops (R = triu(Q^H A), S and Vh from U^H A, the eigenvalues from
# the eigenvectors), so that the backward is differentiable in A once more.

class QR(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, A, mode):
        self.mode, self.shape = mode, A.shape
        xp = xp_of(A)
        m, n = A.shape[-2:]
        if mode == "r":
            R = xp.linalg.qr(A, mode="r") if A.size else xp.zeros(A.shape[:-2] + (min(m, n), n),
                                                                  A.dtype)
            self.R = R
            return xp.empty((0,), A.dtype), R
        if A.size == 0:
            k = m if mode == "complete" else min(m, n)
            Q = xp.broadcast_to(xp.eye(m, k, dtype=A.dtype), A.shape[:-2] + (m, k)).copy()
            self.R = xp.zeros(A.shape[:-2] + (k, n), A.dtype)
            return Q, self.R
        Q, R = xp.linalg.qr(A, mode=mode)
        self.R = R
        return Q, R

    def backward(self, gQ, gR):
        m, n = self.shape[-2:]
        if self.mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when "
                "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                "differentiate through linalg.qr.")
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        A, Q = self.saved_tensors
        R = (Q.mH @ A).triu() if is_grad_enabled() else wrap(self.R)
        return qr_backward(gQ, gR, Q, R)


def _copyltu(M):
    """tril(M, -1) + tril(M, -1)^H + Re(diag(M)): the Hermitian matrix with M's lower part."""
    low = M.tril(-1)
    d = M.diagonal(0, -2, -1)
    if M.is_complex():
        d = d.real.to(M.dtype)
    return low + low.mH + _diag_embed(d)


def qr_backward(gQ, gR, Q, R):
    """The gradient of A = Q R (the reduced or square factorization)."""
    m, n = Q.shape[-2], R.shape[-1]
    if m >= n:
        M = 0
        if gR is not None:
            M = R @ gR.mH
        if gQ is not None:
            M = M - gQ.mH @ Q
        if isinstance(M, int):
            return None
        b = Q @ _copyltu(M)
        if gQ is not None:
            b = b + gQ
        return solve_triangular(R.mH, b, upper=False, left=False)
    from ember._ops.creation import zeros_like
    from ember._ops.join import cat

    # wide: A = [X | Y] with X = Q U1 and Y = Q U2
    Y = R[..., :, m:]
    U1 = R[..., :, :m]
    gU1 = gR[..., :, :m] if gR is not None else None
    gU2 = gR[..., :, m:] if gR is not None else zeros_like(Y)
    gQ_eff = Q.new_zeros(Q.shape) if gQ is None else gQ
    gQ_eff = gQ_eff + (Q @ Y) @ gU2.mH
    gX = qr_backward(gQ_eff, gU1, Q, U1)
    return cat([gX, Q @ gU2], -1)


def qr(A, mode="reduced", *, out=None):
    """qr(A, mode='reduced', *, out=None) -> (Tensor, Tensor)

    The QR decomposition ``A = Q R`` of a (batch of) ``m x n`` matrices: ``Q`` with
    orthonormal columns, ``R`` upper triangular. ``mode``: ``'reduced'`` (Q ``m x k``,
    R ``k x n``, ``k = min(m, n)``), ``'complete'`` (Q ``m x m``, R ``m x n``) or
    ``'r'`` (only R; Q is empty).

    Returns:
        A named tuple ``(Q, R)``.
    """
    check_matrix("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    return _out(apply(QR, A, mode), out, _QRResult)


# ---------------------------------------------------------------------------
# SVD

class SVD(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, A, full_matrices):
        self.full = full_matrices
        xp = xp_of(A)
        m, n = A.shape[-2:]
        k = min(m, n)
        if A.size == 0:
            rdt = np.finfo(A.dtype).dtype
            mu, nv = (m, n) if full_matrices else (k, k)
            U = xp.broadcast_to(xp.eye(m, mu, dtype=A.dtype), A.shape[:-2] + (m, mu)).copy()
            Vh = xp.broadcast_to(xp.eye(nv, n, dtype=A.dtype), A.shape[:-2] + (nv, n)).copy()
            S = xp.zeros(A.shape[:-2] + (k,), rdt)
        else:
            U, S, Vh = _svd_array(xp, A, full_matrices=full_matrices)
        self.S, self.Vh = S, Vh
        return U, S, Vh

    def backward(self, gU, gS, gVh):
        A, U = self.saved_tensors
        S, Vh = wrap(self.S), wrap(self.Vh)
        k = S.shape[-1]
        if is_grad_enabled():  # see NOTE [ Double backward of decompositions ]
            from ember._ops.reduction import vector_norm

            W = U[..., :, :k].mH @ A
            S = vector_norm(W, 2, (-1,))
            Vh = W / S.to(W.dtype)[..., :, None]
            if self.full and Vh.shape[-2] < self.Vh.shape[-2]:
                from ember._ops.join import cat

                Vh = cat([Vh, wrap(self.Vh[..., k:, :])], -2)
        if self.full:
            U, Vh = U[..., :, :k], Vh[..., :k, :]
            gU = gU[..., :, :k] if gU is not None else None
            gVh = gVh[..., :k, :] if gVh is not None else None
        return svd_backward(gU, gS, gVh, U, S, Vh)


def svd_backward(gU, gS, gVh, U, S, Vh):
    """PyTorch's svd_backward for the reduced SVD ``A = U diag(S) Vh``."""
    m, n = U.shape[-2], Vh.shape[-1]
    k = S.shape[-1]
    cdt = U.dtype
    if gU is None and gVh is None:
        if gS is None:
            return None
        return (U * gS.to(cdt)[..., None, :]) @ Vh
    Sc = S.to(cdt)
    UhgU = VhgV = None
    if gU is not None:
        X = U.mH @ gU
        UhgU = X - X.mH
    if gVh is not None:
        X = Vh @ gVh.mH
        VhgV = X - X.mH
    S2 = S * S
    E = S2[..., None, :] - S2[..., :, None]
    E = E + eye_like(E, k)
    E = E.to(cdt)
    if UhgU is not None and VhgV is not None:
        ret = (UhgU * Sc[..., None, :] + Sc[..., :, None] * VhgV) / E
    elif UhgU is not None:
        ret = (UhgU / E) * Sc[..., None, :]
    else:
        ret = Sc[..., :, None] * (VhgV / E)
    if gS is not None:
        ret = ret + _diag_embed(gS.to(cdt))
    if U.is_complex() and UhgU is not None:
        ret = ret + _diag_embed(UhgU.diagonal(0, -2, -1) / (2 * Sc))
    if m > k and gU is not None:
        gA = U @ ret
        gUSinv = gU / Sc[..., None, :]
        gA = (gA + gUSinv - U @ (U.mH @ gUSinv)) @ Vh
    elif n > k and gVh is not None:
        gA = ret @ Vh
        gVhSinv = gVh / Sc[..., :, None]
        gA = U @ (gA + gVhSinv - (gVhSinv @ Vh.mH) @ Vh)
    else:
        gA = U @ ret @ Vh
    return gA


def svd(A, full_matrices=True, *, driver=None, out=None):
    """svd(A, full_matrices=True, *, driver=None, out=None) -> (Tensor, Tensor, Tensor)

    The singular value decomposition ``A = U diag(S) Vh`` of a (batch of) ``m x n``
    matrices; ``S`` real, in descending order. With ``full_matrices=False`` U is
    ``m x k`` and Vh ``k x n`` (``k = min(m, n)``). ``driver`` (cuSOLVER's choice in
    PyTorch) is accepted and ignored. The gradient is PyTorch's: it is not defined
    where singular values repeat, and for complex input only for losses that do not
    depend on the phases of the singular vectors.

    Returns:
        A named tuple ``(U, S, Vh)``.

    Examples::

        >>> U, S, Vh = ember.linalg.svd(ember.tensor([[3., 0.], [0., -2.]]))
        >>> S
        tensor([3., 2.])
    """
    check_matrix("linalg.svd", A)
    return _out(apply(SVD, A, bool(full_matrices)), out, _SVDResult)


def svdvals(A, *, driver=None, out=None):
    """svdvals(A, *, driver=None, out=None) -> Tensor

    The singular values of a (batch of) matrices, in descending order (real).
    """
    check_matrix("linalg.svdvals", A)
    if _needs_grad(A):
        return with_out(svd(A, full_matrices=False)[1], out)
    xp = xp_of(A._data)
    if A._data.size == 0:
        m, n = A._data.shape[-2:]
        S = xp.zeros(A._data.shape[:-2] + (min(m, n),), np.finfo(A._data.dtype).dtype)
    else:
        S = _svd_array(xp, A._data, compute_uv=False)
    return with_out(wrap(S), out)


# ---------------------------------------------------------------------------
# eigh, eig

class Eigh(Node):
    """Outputs (eigenvectors, eigenvalues): the vectors are the saved output."""

    saves_inputs = (0,)
    saves_output = True

    def forward(self, A, uplo):
        self.uplo = uplo
        xp = xp_of(A)
        L, V = xp.linalg.eigh(A, UPLO=uplo)
        self.L = L
        return V, L

    def backward(self, gV, gL):
        A, V = self.saved_tensors
        L = wrap(self.L)
        if is_grad_enabled():  # see NOTE [ Double backward of decompositions ]
            T = A.tril() if self.uplo == "L" else A.triu()
            Ah = T + (T.tril(-1) if self.uplo == "L" else T.triu(1)).mH
            L = (V.mH @ Ah @ V).diagonal(0, -2, -1)
            L = L.real if L.is_complex() else L
        return eig_backward(gL, gV, L, V, hermitian=True)


def eig_backward(gL, gV, L, V, hermitian):
    """PyTorch's linalg_eig_backward (and eigh's, ``hermitian=True``)."""
    if gV is None:
        if hermitian:
            return (V * gL.to(V.dtype)[..., None, :]) @ V.mH
        return solve(V.mH, (V.mH * gL[..., :, None]))
    VhgV = V.mH @ gV
    if hermitian:
        VhgV = 0.5 * (VhgV - VhgV.mH)
    else:
        d = VhgV.diagonal(0, -2, -1).real.to(V.dtype)
        VhgV = VhgV - V.mH @ (V * d[..., None, :])
    E = L[..., None, :] - L[..., :, None]
    E = E + eye_like(E)
    if not hermitian:
        E = E.conj()
    ret = VhgV / E.to(VhgV.dtype)
    if gL is not None:
        n = L.shape[-1]
        mask = eye_like(ret, n)
        ret = ret * (1 - mask) + _diag_embed(gL.to(ret.dtype))
    if hermitian:
        return V @ (ret @ V.mH)
    return solve(V.mH, ret @ V.mH)


def _uplo(fn, UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


def eigh(A, UPLO="L", *, out=None):
    """eigh(A, UPLO='L', *, out=None) -> (Tensor, Tensor)

    The eigenvalues (real, ascending) and eigenvectors (as columns) of a (batch of)
    Hermitian matrices; only the ``UPLO`` triangle of ``A`` is read. The gradient is
    not defined where eigenvalues repeat.

    Returns:
        A named tuple ``(eigenvalues, eigenvectors)``.
    """
    check_square("linalg.eigh", A)
    V, L = apply(Eigh, A, _uplo("linalg.eigh", UPLO))
    return _out((L, V), out, _EighResult)


def eigvalsh(A, UPLO="L", *, out=None):
    """eigvalsh(A, UPLO='L', *, out=None) -> Tensor

    The eigenvalues (real, ascending) of a (batch of) Hermitian matrices.
    """
    check_square("linalg.eigvalsh", A)
    _uplo("linalg.eigvalsh", UPLO)
    if _needs_grad(A):
        return with_out(eigh(A, UPLO)[0], out)
    return with_out(wrap(xp_of(A._data).linalg.eigvalsh(A._data, UPLO=UPLO)), out)


def _check_finite(xp, a):
    if not bool(xp.isfinite(a).all()):
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")


def _complex_np(dt):
    return np.result_type(dt, np.complex64)


class Eig(Node):
    """Outputs (eigenvectors, eigenvalues): the vectors are the saved output."""

    saves_inputs = (0,)
    saves_output = True

    def forward(self, A):
        xp = xp_of(A)
        self.real_input = A.dtype.kind == "f"
        cdt = _complex_np(A.dtype)
        _check_finite(xp, A)
        L, V = xp.linalg.eig(A)
        self.L = L.astype(cdt, copy=False)
        return V.astype(cdt, copy=False), self.L

    def backward(self, gV, gL):
        A, V = self.saved_tensors
        L = wrap(self.L)
        if is_grad_enabled():  # see NOTE [ Double backward of decompositions ]
            L = solve(V, A.to(V.dtype) @ V).diagonal(0, -2, -1)
        gA = eig_backward(gL, gV, L, V, hermitian=False)
        return gA.real if self.real_input else gA


def eig(A, *, out=None):
    """eig(A, *, out=None) -> (Tensor, Tensor)

    The eigenvalues and eigenvectors (unit-norm columns) of a (batch of) square
    matrices, always complex. The gradient is PyTorch's: defined for losses that do not
    depend on the phases of the eigenvectors, and not where eigenvalues repeat.

    Returns:
        A named tuple ``(eigenvalues, eigenvectors)``.
    """
    check_square("linalg.eig", A)
    V, L = apply(Eig, A)
    return _out((L, V), out, _EigResult)


def eigvals(A, *, out=None):
    """eigvals(A, *, out=None) -> Tensor

    The (complex) eigenvalues of a (batch of) square matrices.
    """
    check_square("linalg.eigvals", A)
    if _needs_grad(A):
        return with_out(eig(A)[0], out)
    _check_finite(xp_of(A._data), A._data)
    L = xp_of(A._data).linalg.eigvals(A._data)
    return with_out(wrap(L.astype(_complex_np(A._data.dtype), copy=False)), out)


# ---------------------------------------------------------------------------
# pinv, matrix_rank

def _tolerances(A, atol, rtol, rcond=None):
    """PyTorch's defaults: rtol = eps * max(m, n) unless atol > 0 is given."""
    if rcond is not None:
        rtol = rcond
    if rtol is None:
        given = atol is not None and (isinstance(atol, TensorBase) or atol > 0)
        rtol = 0.0 if given else float(np.finfo(A._data.dtype).eps) * max(A._data.shape[-2:])
    return (0.0 if atol is None else atol), rtol


def _threshold(S_max, atol, rtol):
    """max(atol, rtol * S_max) as a tensor (S_max keeps a trailing dim of size 1)."""
    from ember._ops.elementwise import maximum

    t = S_max * rtol
    if isinstance(atol, TensorBase):
        return maximum(t, atol.to(t.dtype).unsqueeze(-1) if atol.ndim else atol.to(t.dtype))
    return maximum(t, t.new_full((), float(atol)))


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """pinv(A, *, atol=None, rtol=None, hermitian=False, out=None) -> Tensor

    The Moore-Penrose pseudoinverse of a (batch of) matrices, from the SVD (from eigh
    with ``hermitian=True``): singular values below ``max(atol, rtol * sigma_max)``
    count as zero (``rtol`` is eps times ``max(m, n)`` unless ``atol > 0`` is given).
    Differentiable through the decomposition. PyTorch's older form
    ``pinv(A, rcond, hermitian=False)`` (``rcond`` a relative tolerance) is accepted too.
    """
    from ember._ops.elementwise import where

    if rcond is not None and (atol is not None or rtol is not None):
        raise TypeError("linalg.pinv(): rcond cannot be given together with atol or rtol")
    check_matrix("linalg.pinv", A)
    atol, rtol = _tolerances(A, atol, rtol, rcond)
    m, n = A._data.shape[-2:]
    if A._data.size == 0:
        from ember._ops.creation import zeros

        empty = zeros(*A.shape[:-2], n, m, dtype=A.dtype, device=A.device)
        return with_out(_with_zero_grad(A.mT, empty), out)
    if hermitian:
        L, V = eigh(A)
        absL = L.abs()
        tol = _threshold(absL.amax(-1, keepdim=True), atol, rtol)
        keep = absL > tol
        Linv = where(keep, 1 / where(keep, L, L.new_ones(())), L.new_zeros(()))
        return with_out((V * Linv.to(A.dtype)[..., None, :]) @ V.mH, out)
    U, S, Vh = svd(A, full_matrices=False)
    tol = _threshold(S[..., :1], atol, rtol)
    keep = S > tol
    Sinv = where(keep, 1 / where(keep, S, S.new_ones(())), S.new_zeros(()))
    return with_out((Vh.mH * Sinv.to(A.dtype)[..., None, :]) @ U.mH, out)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None, tol=None):
    """matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None) -> Tensor

    The number of singular values (absolute eigenvalues with ``hermitian=True``) above
    ``max(atol, rtol * sigma_max)``, as int64; defaults as in :func:`pinv`.
    """
    check_matrix("linalg.matrix_rank", A)
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tolerances(A, atol, rtol)
    with _no_grad():
        S = eigvalsh(A).abs() if hermitian else svdvals(A)
        if S.shape[-1] == 0:
            from ember._ops.creation import zeros

            return with_out(zeros(tuple(A.shape[:-2]), dtype=_dtype.int64, device=A.device), out)
        thr = _threshold(S.amax(-1, keepdim=True), atol, rtol)
        return with_out((S > thr).sum(-1), out)


def _no_grad():
    from ember.autograd.grad_mode import no_grad

    return no_grad()


# ---------------------------------------------------------------------------
# norms and cond

def _matrix_dims(fn, A, dim):
    if isinstance(dim, (int, np.integer)) or len(dim) != 2:
        got = dim if isinstance(dim, (int, np.integer)) else " ".join(str(d) for d in dim)
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {got}")
    nd = A._data.ndim
    d0, d1 = wrap_dim(dim[0], nd), wrap_dim(dim[1], nd)
    if d0 == d1:
        raise RuntimeError(f"{fn}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None, out=None)

    A matrix norm over the two dims ``dim``: ``'fro'`` (Frobenius), ``'nuc'``
    (nuclear: the sum of the singular values), ``2`` / ``-2`` (the largest / smallest
    singular value), ``1`` / ``-1`` (max / min absolute column sum), ``inf`` / ``-inf``
    (max / min absolute row sum).
    """
    from ember._ops.reduction import vector_norm

    fn = "linalg.matrix_norm"
    check_tensor(fn, "A", A)
    if A._data.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if dtype is not None:
        A = A.to(dtype)
    check_float(fn, A)
    d0, d1 = _matrix_dims(fn, A, dim)
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"{fn}: Order {ord} not supported.")
        if ord == "fro":
            return with_out(vector_norm(A, 2, (d0, d1), keepdim), out)
        S = svdvals(A.movedim((d0, d1), (-2, -1)))
        r = S.sum(-1)
    else:
        if ord not in (1, -1, 2, -2, math.inf, -math.inf):
            raise RuntimeError(f"{fn}: Order {ord} not supported.")
        if abs(ord) == 2:
            S = svdvals(A.movedim((d0, d1), (-2, -1)))
            r = S.amax(-1) if ord > 0 else S.amin(-1)
        else:
            sum_dim, red_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
            s = A.abs().sum(sum_dim, keepdim=True)
            r = s.amax(red_dim, keepdim=True) if ord > 0 else s.amin(red_dim, keepdim=True)
            r = r.squeeze((d0, d1)) if not keepdim else r
            return with_out(r, out)
    if keepdim:
        r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    return with_out(r, out)


def norm(input, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """norm(input, ord=None, dim=None, keepdim=False, *, out=None, dtype=None) -> Tensor

    A vector norm (``dim`` an int, or ``input`` 1-d) or a matrix norm (``dim`` a 2-tuple,
    or ``input`` 2-d) as :func:`vector_norm` / :func:`matrix_norm` compute them. With
    ``ord=None`` the 2-norm of all elements over ``dim`` (all dims by default).
    """
    from ember._ops.reduction import vector_norm

    A = input
    check_tensor("linalg.norm", "input", A)
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    if ord is None:
        return with_out(vector_norm(A, 2, dim, keepdim, dtype=dtype), out)
    if isinstance(ord, str):
        return with_out(matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim,
                                    dtype=dtype), out)
    if dim is None:
        nd = A._data.ndim
        if nd not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {nd}D.")
        dim = tuple(range(nd))
    if len(dim) == 2:
        return with_out(matrix_norm(A, ord, dim, keepdim, dtype=dtype), out)
    return with_out(vector_norm(A, ord, dim, keepdim, dtype=dtype), out)


def cond(A, p=None, *, out=None):
    """cond(A, p=None, *, out=None) -> Tensor

    The condition number of a (batch of) matrices in the norm ``p``: for ``None``, 2
    and -2 the ratio of extreme singular values (any shape); otherwise
    ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` (square matrices; inf where ``A``
    is singular). Always real.
    """
    from ember._ops.elementwise import where

    fn = "linalg.cond"
    check_matrix(fn, A)
    if p is None or p in (2, -2):
        S = svdvals(A)
        if S.shape[-1] == 0:
            return with_out(S.sum(-1), out)
        r = S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
        return with_out(r, out)
    if not (isinstance(p, str) and p in ("fro", "nuc")) and \
            p not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    check_square(fn, A)
    if A._data.shape[-1] == 0:
        return with_out(A.abs().sum((-2, -1)) * 0, out)
    Ainv, info = inv_ex(A)
    r = matrix_norm(A, p) * matrix_norm(Ainv, p)
    return with_out(where(info != 0, r.new_full((), math.inf), r), out)


# ---------------------------------------------------------------------------
# matrix functions

def _with_zero_grad(A, value):
    """``value`` broadcast to ``A``'s shape, as a result of ``A`` with a zero gradient (as
    PyTorch's: ``matrix_power(A, 0)`` and the pseudoinverse of an empty matrix require grad
    when ``A`` does). ``where`` with an all-False mask: NaN and inf in ``A`` do not leak."""
    from ember._ops.elementwise import where

    if not _needs_grad(A):
        return value.expand_as(A).clone()
    return where(A.new_zeros(A.shape, dtype=_dtype.bool), A, value)


def matrix_power(A, n, *, out=None):
    """matrix_power(A, n, *, out=None) -> Tensor

    ``A`` to the integer power ``n`` (batched): the identity for ``n = 0``, powers of
    ``inv(A)`` for ``n < 0``; by repeated squaring.
    """
    check_tensor("linalg.matrix_power", "A", A)
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    m, k = A._data.shape[-2:]
    if m != k:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {m} by {k} matrices")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    n = int(n)
    if n == 0:
        from ember._ops.creation import eye

        return with_out(_with_zero_grad(A, eye(m, dtype=A.dtype, device=A.device)), out)
    if n < 0:
        check_float("linalg.inv", A)
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return with_out(result if result is not A else A.clone(), out)


# Pade(13) coefficients and the 1-norm bound theta_13 (Higham, 2005, "The scaling
# and squaring method for the matrix exponential revisited")
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def matrix_exp_array(xp, A):
    """exp(A) for a batch of matrices: scaling and squaring with the Pade(13)
    approximant, each matrix scaled by its own power of 2."""
    n = A.shape[-1]
    batch = A.shape[:-2]
    if A.size == 0:
        return A.copy()
    norm1 = xp.abs(A).sum(-2).max(-1)
    with np.errstate(divide="ignore"):
        s = xp.maximum(0, xp.ceil(xp.log2(norm1 / _THETA13)))
    s = xp.where(xp.isfinite(s), s, 0).astype(np.int64)
    X = A / (2.0 ** s)[..., None, None].astype(A.real.dtype)
    b = _PADE13
    eye = xp.broadcast_to(xp.eye(n, dtype=A.dtype), batch + (n, n))
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2)
             + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
    V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 \
        + b[0] * eye
    R = xp.linalg.solve(V - U, V + U)
    smax = int(s.max()) if s.size else 0
    for i in range(smax):
        sq = R @ R
        R = xp.where((i < s)[..., None, None], sq, R)
    return R


class MatrixExp(Node):
    saves_inputs = (0,)

    def forward(self, A):
        return matrix_exp_array(xp_of(A), A)

    def backward(self, g):
        from ember._ops.join import cat

        (A,) = self.saved_tensors
        n = A.shape[-1]
        AH = A.mH
        meta = cat([cat([AH, g], -1), cat([A.new_zeros(A.shape), AH], -1)], -2)
        return matrix_exp(meta)[..., :n, n:]


def matrix_exp(A):
    """matrix_exp(A) -> Tensor

    The matrix exponential ``sum_k A^k / k!`` of a (batch of) square matrices.

    Examples::

        >>> ember.linalg.matrix_exp(ember.zeros(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    check_square("linalg.matrix_exp", A)
    return apply(MatrixExp, A)


# ---------------------------------------------------------------------------
# vecdot, multi_dot, householder_product, tensorinv, tensorsolve, vander

def vecdot(x, y, *, dim=-1, out=None):
    """vecdot(x, y, *, dim=-1, out=None) -> Tensor

    The dot product ``sum(conj(x) * y)`` along ``dim``; other dims broadcast.
    """
    check_tensor("linalg.vecdot", "x", x)
    check_tensor("linalg.vecdot", "y", y)
    if x._data.dtype != y._data.dtype:
        from ember._ops._util import type_name

        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but "
                           f"found x of type {type_name(x._data.dtype)} and y of type "
                           f"{type_name(y._data.dtype)} instead")
    xc = x.conj() if x.is_complex() else x
    return with_out((xc * y).sum(dim), out)


def multi_dot(tensors, *, out=None):
    """multi_dot(tensors, *, out=None) -> Tensor

    The product of two or more matrices; the first may be a 1-d row vector and the
    last a 1-d column vector (then those dims are removed from the result).
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0].ndim, tensors[-1].ndim
    for i, t in enumerate(tensors):
        nd = t.ndim
        ok = nd == 2 or (nd == 1 and i in (0, len(tensors) - 1))
        if not ok:
            if i in (0, len(tensors) - 1):
                raise RuntimeError(f"multi_dot(): the {'first' if i == 0 else 'last'} tensor "
                                   f"must be 1D or 2D but got {nd}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {nd}D")
    mats = list(tensors)
    if first == 1:
        mats[0] = mats[0].unsqueeze(0)
    if last == 1:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(len(mats) - 1):
        a, b = mats[i], mats[i + 1]
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(a.shape)} and "
                f"{list(b.shape)} cannot be multiplied")
    r = mats[0]
    for m in mats[1:]:
        r = r @ m
    if first == 1:
        r = r.squeeze(0)
    if last == 1:
        r = r.squeeze(-1)
    return with_out(r, out)


def _householder_q(A, tau, full):
    """H_1 ... H_k (the first n columns unless ``full``), H_i = I - tau_i v_i v_i^H."""
    from ember._ops.creation import eye

    m, n = A.shape[-2:]
    k = tau.shape[-1]
    V = A[..., :, :k].tril(-1) + eye(m, k, dtype=A.dtype, device=A.device)
    Q = eye(m, dtype=A.dtype, device=A.device).expand(*np.broadcast_shapes(
        tuple(A.shape[:-2]), tuple(tau.shape[:-1])), m, m)
    for i in range(k):  # one batched rank-1 update per reflector
        v = V[..., :, i:i + 1]
        Q = Q - (Q @ v) @ (tau[..., i, None, None] * v.mH)
    return Q if full else Q[..., :, :n]


def householder_product(A, tau, *, out=None):
    """householder_product(A, tau, *, out=None) -> Tensor

    The first ``n`` columns of the product of Householder reflectors
    ``H_i = I - tau_i v_i v_i^H``, ``v_i`` stored below the diagonal of column ``i`` of
    ``A`` (``m x n``, ``m >= n``) with an implicit 1 on the diagonal, as LAPACK's
    geqrf returns them. Differentiable in ``A`` and ``tau``.
    """
    fn = "torch.linalg.householder_product"
    check_tensor(fn, "input", A)
    check_tensor(fn, "tau", tau)
    if A._data.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if n < tau._data.shape[-1]:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if A._data.ndim - tau._data.ndim != 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau._data.ndim} and input.ndim is equal "
                           f"to {A._data.ndim}")
    if A._data.dtype != tau._data.dtype:
        raise RuntimeError(f"{fn}: tau dtype does not match input dtype")
    check_float(fn, A, "input")
    return with_out(_householder_q(A, tau, False), out)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """ormqr(input, tau, other, left=True, transpose=False, *, out=None) -> Tensor

    ``Q @ other`` for the full ``m x m`` Q of Householder reflectors (as in
    :func:`householder_product`); ``other @ Q`` with ``left=False`` and ``Q^H`` in
    place of Q with ``transpose=True``.
    """
    check_tensor("ormqr", "input", input)
    check_float("ormqr", input, "input")
    Q = _householder_q(input, tau, True)
    if transpose:
        Q = Q.mH
    return with_out(Q @ other if left else other @ Q, out)


def tensorinv(A, ind=2, *, out=None):
    """tensorinv(A, ind=2, *, out=None) -> Tensor

    The inverse of ``A`` for :func:`ember.tensordot` with ``ind`` dims: ``A`` is taken
    as the matrix of shape ``(prod(A.shape[:ind]), prod(A.shape[ind:]))``; the result
    has shape ``A.shape[ind:] + A.shape[:ind]``.
    """
    check_tensor("linalg.tensorinv", "A", A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A._data.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got "
                           f"{cols} != {rows}")
    return with_out(inv(A.reshape(rows, cols)).reshape(*shape[ind:], *shape[:ind]), out)


def tensorsolve(A, B, dims=None, *, out=None):
    """tensorsolve(A, B, dims=None, *, out=None) -> Tensor

    The ``X`` with ``tensordot(A, X, X.ndim) == B``; ``dims`` are dims of ``A`` moved
    to the end first. ``X`` has shape ``A.shape[B.ndim:]``.
    """
    check_tensor("linalg.tensorsolve", "A", A)
    check_tensor("linalg.tensorsolve", "B", B)
    if dims is not None:
        nd = A._data.ndim
        src = [wrap_dim(d, nd) for d in dims]
        A = A.movedim(src, list(range(nd - len(src), nd)))
    bshape = tuple(B._data.shape)
    xshape = tuple(A._data.shape[len(bshape):])
    rows, cols = math.prod(bshape), math.prod(xshape)
    if math.prod(A._data.shape[:len(bshape)]) != rows or rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
                           f"but got {cols} != {rows}")
    X = solve(A.reshape(rows, cols), B.reshape(rows))
    return with_out(X.reshape(*xshape), out)


def vander(x, *, N=None):
    """vander(x, *, N=None) -> Tensor

    The Vandermonde matrix of the last dim of ``x``: ``result[..., i, j] = x[..., i]**j``
    for ``j < N`` (``N = x.shape[-1]`` by default), powers increasing.
    """
    from ember._ops.join import cat

    check_tensor("linalg.vander", "x", x)
    if x._data.ndim == 0:  # PyTorch's: a number is a vector of one
        x = x.reshape(1)
    if N is None:
        N = x._data.shape[-1]
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x._data.dtype.kind == "b":
        x = x.to(_dtype.int64)
    ones = x.new_ones(x.shape).unsqueeze(-1)
    powers = x.unsqueeze(-1).expand(*x.shape, N - 1).cumprod(-1)
    return cat([ones, powers], -1)
