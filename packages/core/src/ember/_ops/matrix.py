"""The ``torch.*`` and ``Tensor.*`` spellings of linear algebra that PyTorch still has
(det, logdet, inverse, cholesky_solve, pinverse, svd, qr, lu, triangular_solve,
matrix_exp, ...). They call the ``ember.linalg`` ops (``_linalg_solve``,
``_linalg_decomp``), with the older signatures and results where those differ.
"""

from __future__ import annotations

import warnings

from ember._C._core import dispatched
from ember._ops import _linalg_decomp as _dec
from ember._ops import _linalg_solve as _sol
from ember._ops._util import xp_of
from ember._ops.reduction import return_type

__all__ = [
    "det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse",
    "pinverse", "svd", "qr", "lu", "lu_solve", "lu_unpack", "matrix_exp", "matrix_power",
    "triangular_solve", "orgqr", "ormqr", "geqrf", "vander", "nuclear_norm", "frobenius_norm",
]

_SVDResult = return_type("svd", ("U", "S", "V"))
_QRResult = return_type("qr", ("Q", "R"))
_SlogdetResult = return_type("slogdet", ("sign", "logabsdet"))
_TriangularSolveResult = return_type("triangular_solve", ("solution", "cloned_coefficient"))
_GeqrfResult = return_type("geqrf", ("a", "tau"))

logdet = _sol.logdet
cholesky_solve = _sol.cholesky_solve
cholesky_inverse = _sol.cholesky_inverse
lu_unpack = _sol.lu_unpack
matrix_exp = _dec.matrix_exp
ormqr = _dec.ormqr


def det(input):
    """det(input) -> Tensor

    The determinant of a (batch of) square matrices: :func:`ember.linalg.det`."""
    return _sol.det(input)


def matrix_power(input, n, *, out=None):
    """matrix_power(input, n, *, out=None) -> Tensor

    ``input`` to the integer power ``n``: :func:`ember.linalg.matrix_power`."""
    return _dec.matrix_power(input, n, out=out)


def slogdet(input):
    """slogdet(input) -> (Tensor, Tensor)

    ``(sign, logabsdet)`` of the determinant, as :func:`ember.linalg.slogdet`."""
    return _SlogdetResult(tuple(_sol.slogdet(input)))


def inverse(input, *, out=None):
    """inverse(input, *, out=None) -> Tensor

    The inverse of a (batch of) square matrices: :func:`ember.linalg.inv`."""
    return _sol.inv(input, out=out)


def cholesky(input, upper=False, *, out=None):
    """cholesky(input, upper=False, *, out=None) -> Tensor

    The Cholesky factor (deprecated in PyTorch for :func:`ember.linalg.cholesky`)."""
    return _sol.cholesky(input, upper=upper, out=out)


def pinverse(input, rcond=1e-15):
    """pinverse(input, rcond=1e-15) -> Tensor

    The pseudoinverse, :func:`ember.linalg.pinv` with ``rtol=rcond``."""
    return _dec.pinv(input, rtol=rcond)


def svd(input, some=True, compute_uv=True, *, out=None):
    """svd(input, some=True, compute_uv=True, *, out=None) -> (Tensor, Tensor, Tensor)

    ``input = U diag(S) V^H`` (note: V, not Vh); ``some=False`` gives the full U and V.
    With ``compute_uv=False`` U and V are zero-filled ``m x m`` and ``n x n`` matrices.
    """
    if not compute_uv:
        from ember._ops.creation import zeros

        S = _dec.svdvals(input)
        m, n = input.shape[-2:]
        b = tuple(input.shape[:-2])
        U = zeros(*b, m, m, dtype=input.dtype, device=input.device)
        V = zeros(*b, n, n, dtype=input.dtype, device=input.device)
        return _SVDResult((U, S, V))
    U, S, Vh = _dec.svd(input, full_matrices=not some)
    return _SVDResult((U, S, Vh.mH))


def qr(input, some=True, *, out=None):
    """qr(input, some=True, *, out=None) -> (Tensor, Tensor)

    The QR decomposition: reduced (``some=True``) or complete."""
    return _QRResult(tuple(_dec.qr(input, "reduced" if some else "complete", out=out)))


def lu(A, pivot=True, get_infos=False, out=None):
    """lu(A, pivot=True, get_infos=False, out=None) -> (Tensor, Tensor[, Tensor])

    The compact LU factorization ``(LU, pivots)`` of :func:`ember.linalg.lu_factor_ex`,
    and LAPACK's ``info`` with ``get_infos=True``."""
    LU, piv, info = _sol.lu_factor_ex(A, pivot=pivot)
    return (LU, piv, info) if get_infos else (LU, piv)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """lu_solve(b, LU_data, LU_pivots, *, out=None) -> Tensor

    The solution of ``A x = b`` from :func:`ember.linalg.lu_factor`'s output (the older
    argument order of :func:`ember.linalg.lu_solve`)."""
    return _sol.lu_solve(LU_data, LU_pivots, b, out=out)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """triangular_solve(b, A, upper=True, transpose=False, unitriangular=False)

    The solution of ``A X = b`` (``A^T X = b`` with ``transpose=True``) for a
    triangular ``A``, and a copy of ``A``.

    Returns:
        A named tuple ``(solution, cloned_coefficient)``.
    """
    T = A.mT if transpose else A
    X = _sol.solve_triangular(T, b, upper=upper != transpose, unitriangular=unitriangular)
    return _TriangularSolveResult((X, A.clone()))


def orgqr(input, tau):
    """orgqr(input, tau) -> Tensor

    :func:`ember.linalg.householder_product`."""
    return _dec.householder_product(input, tau)


@dispatched
def geqrf(input, *, out=None):
    """geqrf(input, *, out=None) -> (Tensor, Tensor)

    LAPACK's geqrf: the QR decomposition as Householder reflectors below the diagonal
    of ``a`` (R on and above it) and their scales ``tau``. Not differentiable.
    """
    from ember._ops._util import wrap

    _sol.check_matrix("geqrf", input, "input")
    x = input._data
    xp = xp_of(x)
    h, tau = xp.linalg.qr(x, mode="raw")
    return _GeqrfResult((wrap(xp.ascontiguousarray(xp.swapaxes(h, -1, -2))), wrap(tau)))


def vander(x, N=None, increasing=False):
    """vander(x, N=None, increasing=False) -> Tensor

    The Vandermonde matrix of a 1-d ``x``: columns ``x**(N-1), ..., x, 1`` (in the
    other order with ``increasing=True``)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is None:
        N = x.shape[0]
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    from ember._ops.join import cat

    if x.dtype.is_floating_point or x.dtype.is_complex:
        y = x
    else:
        from ember import _dtype

        y = x.to(_dtype.int64)
    ones = y.new_ones((y.shape[0], min(N, 1)))
    if N > 1:
        ones = cat([ones, y.unsqueeze(-1).expand(y.shape[0], N - 1).cumprod(-1)], -1)
    return ones if increasing else ones.flip(-1)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """nuclear_norm(input, dim=None, keepdim=False, *, out=None) -> Tensor

    The nuclear norm over ``dim`` (the last two dims by default); deprecated in PyTorch
    for ``ember.linalg.matrix_norm(A, 'nuc', dim, keepdim)``."""
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. "
                  "It will be removed in a future PyTorch release. Please use "
                  "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    return _dec.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, out=out)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """frobenius_norm(input, dim, keepdim=False, *, out=None) -> Tensor

    The 2-norm of the elements over at most two dims; deprecated in PyTorch for
    ``ember.linalg.vector_norm(A, 2., dim, keepdim)``."""
    from ember._ops._util import with_out
    from ember._ops.reduction import vector_norm

    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT "
                  "compatibility. It will be removed in a future PyTorch release. Please use "
                  "`linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    return with_out(vector_norm(input, 2, dims, keepdim), out)


def _lu_method(self, pivot=True, get_infos=False):
    """Tensor.lu(pivot=True, get_infos=False): :func:`ember.lu` (the method has no ``out``)."""
    return lu(self, pivot, get_infos)


_lu_method.__op__ = "lu"

METHODS = {
    "det": det, "logdet": logdet, "slogdet": slogdet, "inverse": inverse,
    "cholesky": cholesky, "cholesky_solve": cholesky_solve,
    "cholesky_inverse": cholesky_inverse, "pinverse": pinverse, "svd": svd, "qr": qr,
    "lu": _lu_method, "lu_solve": lu_solve, "matrix_exp": matrix_exp, "matrix_power": matrix_power,
    "triangular_solve": triangular_solve, "orgqr": orgqr, "ormqr": ormqr, "geqrf": geqrf,
}
