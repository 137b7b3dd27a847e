"""ember.linalg, part 1: linear systems and the factorizations behind them (inv, det,
slogdet, solve, solve_triangular, cholesky, LU, lstsq), with their ``_ex`` forms.

NOTE [ LAPACK through the array module ]
Every op works on the whole batch at once: ``xp.linalg`` (NumPy's LAPACK wrappers,
or CuPy's cuSOLVER ones) loops over the batch in compiled code. NumPy has no LU
factorization and no triangular solve; the LU here is partial pivoting written as
``min(m, n)`` rank-1 updates of the whole batch (LAPACK's getf2 order, so that the
pivots are LAPACK's), and a triangular solve goes to ``xp.linalg.solve`` (gesv of a
triangular matrix needs no row swaps) or, for an exactly singular one, to a batched
substitution that gives inf/nan as trsm does. NumPy reports a singular or non
positive-definite batch as a whole; the failing batch element and LAPACK's ``info``
are then found by the batched unblocked LU/Cholesky (only on that error path).

Gradients are PyTorch's formulas (``torch/csrc/autograd/FunctionsManual.cpp``),
written with ember ops so that they can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._C._core import Node
from ember._ops._util import TensorBase, apply, type_name, with_out, wrap, xp_of
from ember._ops.reduction import return_type

__all__ = [
    "LinAlgError", "inv", "inv_ex", "det", "slogdet", "solve", "solve_ex", "solve_triangular",
    "cholesky", "cholesky_ex", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "lu_unpack",
    "cholesky_solve", "cholesky_inverse", "lstsq", "logdet",
]


class LinAlgError(RuntimeError):
    """Raised when a linear-algebra routine fails on its input (a singular matrix, one
    that is not positive-definite, ...); a ``RuntimeError`` as in PyTorch."""


LinAlgError.__module__ = "ember.linalg"

_SlogdetResult = return_type("linalg_slogdet", ("sign", "logabsdet"))
_InvExResult = return_type("linalg_inv_ex", ("inverse", "info"))
_SolveExResult = return_type("linalg_solve_ex", ("result", "info"))
_CholeskyExResult = return_type("linalg_cholesky_ex", ("L", "info"))
_LUResult = return_type("linalg_lu", ("P", "L", "U"))
_LUFactorResult = return_type("linalg_lu_factor", ("LU", "pivots"))
_LUFactorExResult = return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LUUnpackResult = return_type("lu_unpack", ("P", "L", "U"))
_LstsqResult = return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


# ---------------------------------------------------------------------------
# checks shared by the linalg ops

def check_tensor(fn, name, x):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def check_float(fn, A, name="A"):
    """PyTorch's error for an integer, bool or half input to a LAPACK routine."""
    dt = A._data.dtype
    if dt.kind not in "fc" or dt == np.float16:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {type_name(dt)}")


def check_matrix(fn, A, name="A"):
    check_tensor(fn, name, A)
    if A._data.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
    check_float(fn, A, name)


def check_square(fn, A, name="A"):
    check_matrix(fn, A, name)
    m, n = A._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are "
                           f"{m} by {n} matrices")


def check_same_dtype(fn, A, B, na="A", nb="B"):
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"{fn}: Expected {na} and {nb} to have the same dtype, but found "
                           f"{na} of type {type_name(A._data.dtype)} and {nb} of type "
                           f"{type_name(B._data.dtype)} instead")


def batch_prefix(info_shape, flat_index):
    """``(Batch element i): `` for a batched input, nothing for a single matrix."""
    if not info_shape:
        return ""
    return f"(Batch element {flat_index}): "


def raise_for_info(fn, info, kind):
    """PyTorch's LinAlgError for the first nonzero entry of ``info`` (host ints)."""
    info = np.asarray(info)
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    if not bad.size:
        return
    i = int(bad[0])
    k = int(flat[i])
    pre = f"{fn}: " + batch_prefix(info.shape, i)
    if kind == "singular":
        raise LinAlgError(pre + "The solver failed because the input matrix is singular.")
    if kind == "inv":
        raise LinAlgError(pre + f"The diagonal element {k} is zero, the inversion could not "
                          "be completed because the input matrix is singular.")
    if kind == "gels":
        raise LinAlgError(pre + "The least squares solution could not be computed because the "
                          f"input matrix does not have full rank (error code: {k}).")
    if kind == "chol":
        raise LinAlgError(pre + "The factorization could not be completed because the input "
                          f"is not positive-definite (the leading minor of order {k} is not "
                          "positive-definite).")
    raise RuntimeError(pre + f"U[{k},{k}] is zero and using it on lu_solve would result in a "
                      "division by zero. If you still want to perform the factorization, "
                      "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def to_host(a):
    """A small array (info, ranks) on the host, for error checks."""
    return np.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a.get()


def eye_like(A, n=None):
    """The identity matrix of A's dtype and device, n x n (A's last size by default)."""
    from ember._ops.creation import eye

    n = A.shape[-1] if n is None else n
    return eye(n, dtype=A.dtype, device=A.device)


def int_tensor(arr):
    return wrap(arr)


# ---------------------------------------------------------------------------
# the batched unblocked LU and Cholesky (LAPACK's pivots and info; see the NOTE)

def lu_arrays(xp, a):
    """(LU, pivots, info) of the batch ``a`` (..., m, n) by partial pivoting: LU packed
    as LAPACK's getrf returns it, pivots 1-based int32, info int32 (the 1-based index of
    the first exactly zero pivot, 0 if none)."""
    *batch, m, n = a.shape
    k = min(m, n)
    b = a.reshape(-1, m, n).copy()
    nb = b.shape[0]
    piv = xp.empty((nb, k), dtype=np.int32)
    info = xp.zeros(nb, dtype=np.int32)
    rows = xp.arange(nb)
    cplx = b.dtype.kind == "c"
    with np.errstate(all="ignore"):
        for j in range(k):
            c = b[:, j:, j]  # LAPACK's pivot: the largest |re| + |im| (izamax's cabs1)
            p = xp.argmax(xp.abs(c.real) + xp.abs(c.imag) if cplx else xp.abs(c), axis=1) + j
            piv[:, j] = p + 1
            top = b[rows, j, :].copy()
            b[rows, j, :] = b[rows, p, :]
            b[rows, p, :] = top
            d = b[:, j, j]
            zero = d == 0
            info = xp.where((info == 0) & zero, j + 1, info).astype(np.int32)
            col = b[:, j + 1:, j] / xp.where(zero, 1, d)[:, None]
            b[:, j + 1:, j] = col
            b[:, j + 1:, j + 1:] -= col[:, :, None] * b[:, j, None, j + 1:]
    return (b.reshape(*batch, m, n), piv.reshape(*batch, k), info.reshape(batch))


def cholesky_info(xp, a):
    """LAPACK potrf's info for each matrix of the batch ``a`` (lower triangle read):
    the order of the first leading minor that is not positive-definite, 0 if none."""
    *batch, n, _ = a.shape
    b = a.reshape(-1, n, n)
    L = xp.zeros_like(b)
    info = xp.zeros(b.shape[0], dtype=np.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            row = L[:, j, :j]
            d = (b[:, j, j] - (row * row.conj()).sum(-1)).real
            bad = ~(d > 0)
            info = xp.where((info == 0) & bad, j + 1, info).astype(np.int32)
            ljj = xp.sqrt(xp.where(bad, 1, d))
            L[:, j, j] = ljj
            L[:, j + 1:, j] = (b[:, j + 1:, j] - (L[:, j + 1:, :j] * row.conj()[:, None, :])
                               .sum(-1)) / ljj[:, None]
    return info.reshape(batch)


def _safe_batch(xp, a, bad):
    """``a`` with the matrices flagged in ``bad`` replaced by the identity (so that a
    batched LAPACK call does not fail on them; their results are then meaningless, as
    PyTorch's are)."""
    if not bad.any():
        return a
    n = a.shape[-1]
    eye = xp.eye(n, dtype=a.dtype)
    return xp.where(bad[..., None, None], eye, a)


# ---------------------------------------------------------------------------
# inv

class Inv(Node):
    saves_output = True

    def forward(self, A, check):
        xp = xp_of(A)
        try:
            out = xp.linalg.inv(A)
            info = xp.zeros(A.shape[:-2], dtype=np.int32)
        except np.linalg.LinAlgError:
            info = lu_arrays(xp, A)[2]
            if check:
                raise_for_info("linalg.inv", to_host(info), "inv")
            out = xp.linalg.inv(_safe_batch(xp, A, info != 0))
        return out, info

    def backward(self, g, _ginfo=None):
        (Ainv,) = self.saved_tensors
        AinvH = Ainv.mH
        return -(AinvH @ g @ AinvH)


def inv_ex(A, *, check_errors=False, out=None):
    """inv_ex(A, *, check_errors=False, out=None) -> (Tensor, Tensor)

    The inverse of a square matrix (batched) and LAPACK's ``info``: 0 where the
    inverse exists, ``i`` where the ``i``-th diagonal element of U in ``A = PLU`` is
    zero. Raises only with ``check_errors=True``.

    Returns:
        A named tuple ``(inverse, info)``.
    """
    check_square("linalg.inv", A)
    inverse, info = apply(Inv, A, bool(check_errors))
    return _InvExResult((with_out(inverse, out), info))


def inv(A, *, out=None):
    """inv(A, *, out=None) -> Tensor

    The inverse of a square matrix, or of each matrix in a batch.

    Args:
        A (Tensor): tensor of shape ``(*, n, n)``, float or complex.

    Raises:
        LinAlgError: if a matrix is singular (names the batch element).

    Examples::

        >>> A = ember.tensor([[2., 0.], [0., 4.]])
        >>> ember.linalg.inv(A)
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    check_square("linalg.inv", A)
    return with_out(apply(Inv, A, True)[0], out)


# ---------------------------------------------------------------------------
# det, slogdet

def _exclusive_prod(S):
    """``prod_{j != i} S_j`` along the last dim, without dividing (zeros allowed)."""
    from ember._ops.creation import ones_like
    from ember._ops.join import cat

    one = ones_like(S[..., :1])
    left = cat([one, S[..., :-1]], -1).cumprod(-1)
    right = cat([one, S.flip(-1)[..., :-1]], -1).cumprod(-1).flip(-1)
    return left * right


class Det(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, A):
        with np.errstate(all="ignore"):  # nan and inf pass silently, as in PyTorch
            return xp_of(A).linalg.det(A)

    def backward(self, g):
        from ember._ops._linalg_decomp import svd

        A, d = self.saved_tensors
        if A.shape[-1] == 0:
            return g[..., None, None] * A
        nonsingular = bool((d._data != 0).all())
        if nonsingular:
            return (g * d.conj())[..., None, None] * inv(A).mH
        # at a singular matrix the cofactor matrix, from the SVD: A = U S Vh gives
        # adj(A)^H = conj(det U det Vh) U diag(prod_{j != i} S_j) Vh
        U, S, Vh = svd(A)
        alpha = (det(U) * det(Vh)).conj()
        p = _exclusive_prod(S).to(A.dtype)
        return (g * alpha)[..., None, None] * ((U * p[..., None, :]) @ Vh)


def det(A, *, out=None):
    """det(A, *, out=None) -> Tensor

    The determinant of a square matrix (batched). Its gradient at a singular matrix is
    the cofactor matrix, computed from the SVD, as in PyTorch.

    Examples::

        >>> ember.linalg.det(ember.tensor([[1., 2.], [3., 4.]]))
        tensor(-2.)
    """
    check_square("linalg.det", A)
    return with_out(apply(Det, A), out)


class Slogdet(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, A):
        with np.errstate(all="ignore"):
            sign, logabs = xp_of(A).linalg.slogdet(A)
        return sign, logabs

    def backward(self, gsign, glog):
        A, sign = self.saved_tensors
        if glog is None:
            if not A.is_complex():
                return None
            from ember._ops.creation import zeros_like

            glog = zeros_like(sign.real)
        z = glog
        if A.is_complex():
            im = (gsign.conj() * sign).imag if gsign is not None else glog * 0
            from ember._ops.creation import complex as _complex

            z = _complex(glog, im)
        return z.conj()[..., None, None] * inv(A).mH


def slogdet(A, *, out=None):
    """slogdet(A, *, out=None) -> (Tensor, Tensor)

    The sign (a unit complex number for complex input) and the natural log of the
    absolute value of the determinant: ``det(A) = sign * exp(logabsdet)``. A singular
    matrix gives ``(0, -inf)``.

    Returns:
        A named tuple ``(sign, logabsdet)``.
    """
    check_square("linalg.slogdet", A)
    sign, logabs = apply(Slogdet, A)
    if out is not None:
        with_out(sign, out[0])
        with_out(logabs, out[1])
        return _SlogdetResult(out)
    return _SlogdetResult((sign, logabs))


def logdet(input):
    """logdet(input) -> Tensor

    The log of the determinant of a square matrix (batched): nan where a real
    determinant is negative, -inf where it is zero.
    """
    check_square("logdet", input)
    sign, logabs = slogdet(input)
    if input.is_complex():
        return sign.log() + logabs
    from ember._ops.elementwise import where

    nan = logabs.new_full((), float("nan"))
    return where(sign < 0, nan, logabs)


# ---------------------------------------------------------------------------
# solve

def is_vector_rhs(A, B):
    """PyTorch's rule: B is a (batch of) vector(s) when it is 1-d or has A's batch
    shape with one dim less."""
    nb = B._data.ndim
    return nb == 1 or (nb == A._data.ndim - 1 and tuple(B._data.shape) == tuple(A._data.shape[:-1]))


class Solve(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, A, B, check):
        xp = xp_of(A)
        batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
        try:
            out = xp.linalg.solve(A, B)
            info = xp.zeros(batch, dtype=np.int32)
        except np.linalg.LinAlgError:
            info = xp.broadcast_to(lu_arrays(xp, A)[2], batch).copy()
            if check:
                raise_for_info("torch.linalg.solve", to_host(info), "singular")
            Ab = xp.broadcast_to(A, batch + A.shape[-2:])
            out = xp.linalg.solve(_safe_batch(xp, Ab, info != 0), B)
        return out, info

    def backward(self, g, _ginfo=None):
        A, X = self.saved_tensors
        gB = solve(A.mH, g)
        gA = -(gB @ X.mH) if self.needs_input_grad[0] else None
        return gA, gB


def _solve(fn, A, B, left, check):
    check_square(fn, A)
    check_tensor(fn, "B", B)
    check_float(fn, B, "B")
    check_same_dtype(fn, A, B)
    vector = is_vector_rhs(A, B)
    if not left:
        if vector:
            raise RuntimeError(f"{fn}: Vector broadcasting of the left hand side is not "
                               "supported for left=False. In this case linalg.solve is "
                               "equivalent to B / A.squeeze(-1)")
        X, info = _solve(fn, A.mT, B.mT, True, check)
        return X.mT, info
    B2 = B.unsqueeze(-1) if vector else B
    n = A._data.shape[-1]
    if B2._data.shape[-2] != n:
        raise RuntimeError(
            f"{fn}: Incompatible shapes of A and B for the equation AX = B "
            f"({n}x{n} and {B2._data.shape[-2]}x{B2._data.shape[-1]})")
    try:
        np.broadcast_shapes(A._data.shape[:-2], B2._data.shape[:-2])
    except ValueError:
        raise RuntimeError(f"{fn}: The size of tensor a must match the size of tensor b "
                           f"(batch shapes {list(A._data.shape[:-2])} and "
                           f"{list(B2._data.shape[:-2])})") from None
    X, info = apply(Solve, A, B2, check)
    return (X.squeeze(-1) if vector else X), info


def solve(A, B, *, left=True, out=None):
    """solve(A, B, *, left=True, out=None) -> Tensor

    The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``) for a square,
    invertible ``A``; batch dims broadcast, and ``B`` may be a (batch of) vector(s).

    Args:
        A (Tensor): ``(*, n, n)``.
        B (Tensor): ``(*, n, k)``, or ``(n,)`` / ``(*, n)`` for vectors.

    Raises:
        LinAlgError: if ``A`` is singular.

    Examples::

        >>> A = ember.tensor([[3., 1.], [1., 2.]])
        >>> ember.linalg.solve(A, ember.tensor([9., 8.]))
        tensor([2., 3.])
    """
    return with_out(_solve("linalg.solve", A, B, left, True)[0], out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """solve_ex(A, B, *, left=True, check_errors=False, out=None) -> (Tensor, Tensor)

    :func:`solve` that reports LAPACK's ``info`` (0, or ``i`` where ``U[i, i]`` of the
    LU factorization is zero) instead of raising, unless ``check_errors=True``.

    Returns:
        A named tuple ``(result, info)``.
    """
    X, info = _solve("linalg.solve", A, B, left, check_errors)
    return _SolveExResult((with_out(X, out), info))


# ---------------------------------------------------------------------------
# triangular systems

def _substitute(xp, T, B, upper):
    """X with T X = B for triangular T by substitution, batched (trsm's inf/nan at a
    zero diagonal)."""
    n = T.shape[-1]
    batch = np.broadcast_shapes(T.shape[:-2], B.shape[:-2])
    T = xp.broadcast_to(T, batch + T.shape[-2:])
    X = xp.array(xp.broadcast_to(B, batch + B.shape[-2:]), dtype=np.result_type(T, B))
    order = range(n - 1, -1, -1) if upper else range(n)
    done = []
    with np.errstate(all="ignore"):
        for i in order:
            if done:
                idx = xp.asarray(done)
                X[..., i, :] -= (T[..., i, idx][..., :, None] * X[..., idx, :]).sum(-2)
            X[..., i, :] /= T[..., i, i][..., None]
            done.append(i)
    return X


def triangular_solve_array(xp, T, B, upper):
    try:
        return xp.linalg.solve(T, B)
    except np.linalg.LinAlgError:
        return _substitute(xp, T, B, upper)


class SolveTriangular(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, A, B, upper, left, unitriangular):
        self.flags = (upper, left, unitriangular)
        xp = xp_of(A)
        T = xp.triu(A) if upper else xp.tril(A)
        if unitriangular:
            T = T.copy()
            idx = xp.arange(T.shape[-1])
            T[..., idx, idx] = 1
        if left:
            return triangular_solve_array(xp, T, B, upper)
        Tt, Bt = xp.swapaxes(T, -1, -2), xp.swapaxes(B, -1, -2)
        return xp.swapaxes(triangular_solve_array(xp, Tt, Bt, not upper), -1, -2)

    def backward(self, g):
        A, X = self.saved_tensors
        upper, left, unit = self.flags
        gB = solve_triangular(A.mH, g, upper=not upper, left=left, unitriangular=unit)
        gA = None
        if self.needs_input_grad[0]:
            gA = -(gB @ X.mH) if left else -(X.mH @ gB)
            gA = gA.triu(int(unit)) if upper else gA.tril(-int(unit))
        return gA, gB


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None) -> Tensor

    The solution of ``A X = B`` (``X A = B`` with ``left=False``) for a triangular
    ``A``: only its upper (``upper=True``) or lower triangle is read, and with
    ``unitriangular=True`` its diagonal is taken as ones. Batch dims broadcast. A zero on
    the diagonal gives inf/nan (no error), as in PyTorch.

    Args:
        A (Tensor): ``(*, n, n)``.
        B (Tensor): ``(*, n, k)`` (``(*, k, n)`` with ``left=False``).
    """
    fn = "linalg.solve_triangular"
    check_square(fn, A)
    check_tensor(fn, "B", B)
    if B._data.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    check_same_dtype(fn, A, B)
    n = A._data.shape[-1]
    k = B._data.shape[-2] if left else B._data.shape[-1]
    if k != n:
        r, c = B._data.shape[-2:]
        raise RuntimeError(
            f"{fn}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {r}x{c})")
    return with_out(apply(SolveTriangular, A, B, bool(upper), bool(left), bool(unitriangular)),
                    out)


# ---------------------------------------------------------------------------
# cholesky

class Cholesky(Node):
    saves_output = True

    def forward(self, A, upper, check):
        self.upper = upper
        xp = xp_of(A)
        try:
            L = xp.linalg.cholesky(A)
            info = xp.zeros(A.shape[:-2], dtype=np.int32)
        except np.linalg.LinAlgError:
            info = cholesky_info(xp, A)
            if check:
                raise_for_info("linalg.cholesky", to_host(info), "chol")
            L = xp.linalg.cholesky(_safe_batch(xp, A, info != 0))
        if upper:
            L = xp.swapaxes(L, -1, -2).conj()
        return L, info

    def backward(self, gL, _ginfo=None):
        (L,) = self.saved_tensors
        if self.upper:
            L, gL = L.mH, gL.mH
        gA = (L.mH @ gL).tril()
        gA = 0.5 * (gA + gA.tril(-1).mH)
        gA = solve_triangular(L.mH, gA, upper=True, left=True)
        return solve_triangular(L, gA, upper=False, left=False)


def cholesky(A, *, upper=False, out=None):
    """cholesky(A, *, upper=False, out=None) -> Tensor

    The Cholesky factor ``L`` (lower triangular, ``A = L L^H``) of a Hermitian
    positive-definite matrix (batched); ``U = L^H`` with ``upper=True``. Only the lower
    triangle of ``A`` is read.

    Raises:
        LinAlgError: if a matrix is not positive-definite (names the leading minor).

    Examples::

        >>> ember.linalg.cholesky(ember.tensor([[4., 2.], [2., 2.]]))
        tensor([[2., 0.],
                [1., 1.]])
    """
    check_square("linalg.cholesky", A)
    return with_out(apply(Cholesky, A, bool(upper), True)[0], out)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """cholesky_ex(A, *, upper=False, check_errors=False, out=None) -> (Tensor, Tensor)

    :func:`cholesky` that reports LAPACK's ``info`` (the order of the leading minor
    that is not positive-definite, 0 on success) instead of raising.

    Returns:
        A named tuple ``(L, info)``.
    """
    check_square("linalg.cholesky", A)
    L, info = apply(Cholesky, A, bool(upper), bool(check_errors))
    return _CholeskyExResult((with_out(L, out), info))


def cholesky_solve(B, L, upper=False, *, out=None):
    """cholesky_solve(B, L, upper=False, *, out=None) -> Tensor

    The solution of ``A X = B`` given the Cholesky factor ``L`` of ``A`` (``A = L L^H``,
    or ``A = U^H U`` with ``upper=True``).
    """
    check_matrix("cholesky_solve", L, "L")
    check_matrix("cholesky_solve", B, "B")
    if upper:
        Y = solve_triangular(L.mH, B, upper=False)
        return with_out(solve_triangular(L, Y, upper=True), out)
    Y = solve_triangular(L, B, upper=False)
    return with_out(solve_triangular(L.mH, Y, upper=True), out)


def cholesky_inverse(L, upper=False, *, out=None):
    """cholesky_inverse(L, upper=False, *, out=None) -> Tensor

    The inverse of ``A`` from its Cholesky factor (``A = L L^H``, ``U^H U`` if upper).
    """
    check_square("cholesky_inverse", L, "input")
    return with_out(cholesky_solve(eye_like(L).expand_as(L), L, upper), out)


# ---------------------------------------------------------------------------
# LU

class LUFactor(Node):
    saves_output = True

    def forward(self, A, check):
        LU, piv, info = lu_arrays(xp_of(A), A)
        if check:
            raise_for_info("torch.linalg.lu_factor", to_host(info), "lu")
        self.piv = piv
        return LU, piv, info

    def backward(self, gLU, _gpiv=None, _ginfo=None):
        (LU,) = self.saved_tensors
        P, L, U = lu_unpack(LU, wrap(self.piv))
        return lu_backward(gLU.tril(-1)[..., :, :L.shape[-1]], gLU.triu()[..., :U.shape[-2], :],
                           P, L, U)


def lu_backward(gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward: the gradient of A = P L U from those of L and U."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gR = (L.mH @ gL).tril(-1) + (gU @ U.mH).triu()
        gA = solve_triangular(L.mH, gR, upper=True, left=True, unitriangular=True)
        gA = solve_triangular(U.mH, gA, upper=False, left=False)
        return P @ gA
    from ember._ops.join import cat

    if m < n:  # wide: A = P L [U1 U2]
        U1, U2 = U[..., :, :k], U[..., :, k:]
        gU1, gU2 = gU[..., :, :k], gU[..., :, k:]
        gA2 = solve_triangular(L.mH, gU2, upper=True, left=True, unitriangular=True)
        gL_eff = gL - (gA2 @ U2.mH).tril(-1)
        gA1 = lu_backward(gL_eff, gU1, P, L, U1)
        return cat([gA1, P @ gA2], -1)
    # tall: A = P [L1; L2] U
    L1, L2 = L[..., :k, :], L[..., k:, :]
    gL1, gL2 = gL[..., :k, :], gL[..., k:, :]
    gA2 = solve_triangular(U.mH, gL2, upper=False, left=False)
    gU_eff = gU - (L2.mH @ gA2).triu()
    from ember._ops.creation import eye

    eye_k = eye(k, dtype=L.dtype, device=L.device)
    gA1 = lu_backward(gL1, gU_eff, eye_k, L1, U)
    return P @ cat([gA1, gA2], -2)


def _lu_factor(fn, A, pivot, check):
    check_matrix(fn, A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")
    LU, piv, info = apply(LUFactor, A, check)
    return LU, piv, info


def lu_factor(A, *, pivot=True, out=None):
    """lu_factor(A, *, pivot=True, out=None) -> (Tensor, Tensor)

    The LU factorization with partial pivoting in LAPACK's compact form: ``LU`` holds
    the strictly lower part of L (its diagonal is ones) and U; ``pivots`` (int32,
    1-based) says that row ``i`` was swapped with row ``pivots[i]``. Works on
    rectangular matrices and batches.

    Raises:
        LinAlgError: if a matrix is singular (U has an exact zero on its diagonal).

    Returns:
        A named tuple ``(LU, pivots)``.
    """
    LU, piv, _ = _lu_factor("torch.linalg.lu_factor", A, pivot, True)
    if out is not None:
        with_out(LU, out[0])
        with_out(piv, out[1])
        return _LUFactorResult(out)
    return _LUFactorResult((LU, piv))


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """lu_factor_ex(A, *, pivot=True, check_errors=False, out=None) -> (Tensor, Tensor, Tensor)

    :func:`lu_factor` that returns LAPACK's ``info`` (``i`` where ``U[i, i]`` is zero,
    1-based; 0 otherwise) instead of raising.

    Returns:
        A named tuple ``(LU, pivots, info)``.
    """
    LU, piv, info = _lu_factor("torch.linalg.lu_factor_ex", A, pivot, check_errors)
    return _LUFactorExResult((with_out(LU, out), piv, info))


def _perm_matrix(piv_arr, m, dtype):
    """The permutation matrix P (A = P L U) of LAPACK pivots, for the whole batch."""
    xp = xp_of(piv_arr)
    batch = piv_arr.shape[:-1]
    p = piv_arr.reshape(-1, piv_arr.shape[-1]).astype(np.int64) - 1
    nb = p.shape[0]
    perm = xp.broadcast_to(xp.arange(m), (nb, m)).copy()
    rows = xp.arange(nb)
    for i in range(p.shape[1]):
        a, b = perm[:, i].copy(), perm[rows, p[:, i]].copy()
        perm[:, i] = b
        perm[rows, p[:, i]] = a
    # (P^T A) = A[perm], so P^T = I[perm] and P[perm[j], j] = 1
    P = xp.zeros((nb, m, m), dtype=dtype)
    P[rows[:, None], perm, xp.arange(m)[None, :]] = 1
    return P.reshape(*batch, m, m)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None)

    ``P, L, U`` (with ``A = P L U``) from the compact output of :func:`lu_factor`.
    With ``unpack_data=False`` L and U are empty, with ``unpack_pivots=False`` P is.

    Returns:
        A named tuple ``(P, L, U)``.
    """
    check_tensor("lu_unpack", "LU_data", LU_data)
    m, n = LU_data._data.shape[-2:]
    k = min(m, n)
    piv = LU_pivots._data
    if piv.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    from ember._ops.creation import empty, eye

    dt, dev = LU_data.dtype, LU_data.device
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=dt, device=dev)
        U = LU_data[..., :k, :].triu()
    else:
        L = empty(0, dtype=dt, device=dev)
        U = empty(0, dtype=dt, device=dev)
    if unpack_pivots:
        if piv.shape[-1] != k:
            raise RuntimeError(f"lu_unpack: LU_pivots.size(-1) ({piv.shape[-1]}) must be "
                               f"equal to min(LU_data.size(-2), LU_data.size(-1)) ({k})")
        if piv.size and (int(piv.min()) < 1 or int(piv.max()) > m):
            raise RuntimeError("lu_unpack: LU_pivots must be in the range [1, m]")
        P = wrap(_perm_matrix(piv, m, LU_data._data.dtype))
    else:
        P = empty(0, dtype=dt, device=dev)
    if out is not None:
        for o, r in zip(out, (P, L, U), strict=True):
            with_out(r, o)
        return _LUUnpackResult(out)
    return _LUUnpackResult((P, L, U))


def lu(A, *, pivot=True, out=None):
    """lu(A, *, pivot=True, out=None) -> (Tensor, Tensor, Tensor)

    The LU factorization with partial pivoting ``A = P L U`` of a (batch of)
    ``m x n`` matrices: ``P`` a permutation matrix, ``L`` ``m x k`` unit lower
    triangular, ``U`` ``k x n`` upper triangular (``k = min(m, n)``). A singular matrix
    is factored too (no error). Differentiable.

    Returns:
        A named tuple ``(P, L, U)``.
    """
    LU, piv, _ = _lu_factor("linalg.lu", A, pivot, False)
    P, L, U = lu_unpack(LU, piv)
    if out is not None:
        for o, r in zip(out, (P, L, U), strict=True):
            with_out(r, o)
        return _LUResult(out)
    return _LUResult((P, L, U))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None) -> Tensor

    The solution of ``A X = B`` from the LU factorization of ``A`` given by
    :func:`lu_factor`; ``adjoint=True`` solves ``A^H X = B``, ``left=False`` the
    systems ``X A = B`` (``X A^H = B``). Differentiable with respect to ``LU`` and ``B``.
    """
    fn = "linalg.lu_solve"
    check_square(fn, LU, "LU")
    check_tensor(fn, "B", B)
    if B._data.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    check_same_dtype(fn, LU, B, "LU", "B")
    n = LU._data.shape[-1]
    if (B._data.shape[-2] if left else B._data.shape[-1]) != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B._data.shape[-2]}x{B._data.shape[-1]})")
    P, L, U = lu_unpack(LU, pivots)
    if left and not adjoint:  # X = U^-1 L^-1 P^T B
        Y = solve_triangular(L, P.mT @ B, upper=False, unitriangular=True)
        X = solve_triangular(U, Y, upper=True)
    elif left:  # A^H = U^H L^H P^T: X = P L^-H U^-H B
        Y = solve_triangular(U.mH, B, upper=False)
        X = P @ solve_triangular(L.mH, Y, upper=True, unitriangular=True)
    elif not adjoint:  # X P L U = B
        Y = solve_triangular(U, B, upper=True, left=False)
        X = solve_triangular(L, Y, upper=False, left=False, unitriangular=True) @ P.mT
    else:  # X U^H L^H P^T = B
        Y = B @ P
        Y = solve_triangular(L.mH, Y, upper=True, left=False, unitriangular=True)
        X = solve_triangular(U.mH, Y, upper=False, left=False)
    return with_out(X, out)


# ---------------------------------------------------------------------------
# lstsq

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _check_gels_full_rank(fn, a):
    """LAPACK's gels factors ``a`` (QR, or LQ when it is wide) and fails, as PyTorch reports,
    where a diagonal entry of the triangular factor is exactly zero (an exactly rank-deficient
    matrix: a zero row or column, for example); the same factorization finds them here."""
    xp = xp_of(a)
    m, n = a.shape[-2:]
    tall = a if m >= n else xp.conj(xp.swapaxes(a, -1, -2))
    r = xp.linalg.qr(tall, mode="r")
    diag = xp.diagonal(r, axis1=-2, axis2=-1)
    zero = to_host(diag == 0).reshape(*a.shape[:-2], -1)
    first = np.where(zero.any(-1), zero.argmax(-1) + 1, 0)
    raise_for_info(fn, first, "gels")


def lstsq(A, B, rcond=None, *, driver=None):
    """lstsq(A, B, rcond=None, *, driver=None) -> (Tensor, Tensor, Tensor, Tensor)

    The least-squares solution of ``A X = B`` (minimum norm where ``A`` is rank
    deficient) for ``A`` of shape ``(*, m, n)`` and ``B`` of shape ``(*, m, k)`` (or a
    batch of vectors). ``driver`` is LAPACK's name of the method (``'gelsy'`` by
    default); all are computed here from one batched SVD, and ``driver`` decides which
    of the other results are filled in, as in PyTorch: ``residuals`` (the squared
    residual norms, when ``m > n``, every matrix has full rank and the driver is not
    gelsy), ``rank`` (not for gels) and ``singular_values`` (gelsd, gelss).
    Singular values below ``rcond`` times the largest count as zero (``rcond`` is
    the dtype's eps times ``max(m, n)`` by default).

    Returns:
        A named tuple ``(solution, residuals, rank, singular_values)``.
    """
    from ember._ops._linalg_decomp import pinv, svdvals
    from ember._ops.creation import empty

    fn = "torch.linalg.lstsq"
    check_matrix(fn, A, "input")
    check_tensor(fn, "B", B)
    check_same_dtype(fn, A, B, "input", "other")
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(f"{fn}: parameter `driver` should be one of "
                           f"({', '.join(_DRIVERS)})")
    m, n = A._data.shape[-2:]
    vector = B._data.ndim == A._data.ndim - 1
    B2 = B.unsqueeze(-1) if vector else B
    if B2._data.shape[-2] != m:
        raise RuntimeError(f"{fn}: input.size(-2) should match other.size(-2)")
    real_dt = _dtype.from_numpy(A._data.dtype).to_real() if A.is_complex() else A.dtype
    if rcond is None:
        rcond = float(np.finfo(A._data.dtype).eps) * max(m, n)
    if driver == "gels" and A._data.size:
        _check_gels_full_rank(fn, A._data)
    S = svdvals(A.detach()) if A._data.size else empty((*A.shape[:-2], 0), dtype=real_dt)
    X = pinv(A, rtol=rcond) @ B2
    dev = A.device
    rank = empty(0, dtype=_dtype.int64, device=dev)
    if driver != "gels" and A._data.size:
        tol = rcond * S._data.max(axis=-1, keepdims=True) if S._data.shape[-1] else 0
        rank = wrap((S._data > tol).sum(-1).astype(np.int64))
    elif driver != "gels":
        rank = wrap(xp_of(A._data).zeros(A._data.shape[:-2], dtype=np.int64))
    residuals = empty(0, dtype=real_dt, device=dev)
    if m > n and driver != "gelsy":
        full = bool((S._data > rcond * S._data.max(axis=-1, keepdims=True)).all()) \
            if S._data.size else True
        if full:
            r = A @ X - B2
            residuals = (r * r.conj()).real.sum(-2) if r.is_complex() else (r * r).sum(-2)
    sv = S if driver in ("gelsd", "gelss") else empty(0, dtype=real_dt, device=dev)
    if vector:
        X = X.squeeze(-1)
        if residuals.ndim:
            residuals = residuals.squeeze(-1) if residuals.shape[-1:] == (1,) else residuals
    return _LstsqResult((X, residuals, rank, sv))
