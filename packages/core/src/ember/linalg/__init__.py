"""ember.linalg: PyTorch's ``torch.linalg`` on LAPACK through NumPy (cuSOLVER through
CuPy), batched over leading dimensions and differentiable.

The ops live in ``ember._ops._linalg_solve`` (linear systems, inverse, determinants,
Cholesky, LU, lstsq), ``ember._ops._linalg_ldl`` (LDL with Bunch-Kaufman pivoting) and
``ember._ops._linalg_decomp`` (QR, SVD, eigendecompositions, pseudoinverse, norms,
matrix functions); this module is their public face.
"""

from ember._ops._linalg_decomp import (
    cond,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    householder_product,
    matrix_exp,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    qr,
    svd,
    svdvals,
    tensorinv,
    tensorsolve,
    vander,
    vecdot,
)
from ember._ops._linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve
from ember._ops._linalg_solve import (
    LinAlgError,
    cholesky,
    cholesky_ex,
    det,
    inv,
    inv_ex,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
)
from ember._ops.linalg import matmul
from ember._ops.reduction import vector_norm as _vector_norm
from ember._ops.shape import diagonal as _diagonal

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
    "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
    "ldl_factor_ex", "ldl_solve", "lstsq", "lu",
    "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm",
    "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
    "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander",
    "vecdot", "vector_norm",
]


def cross(input, other, *, dim=-1, out=None):
    """cross(input, other, *, dim=-1, out=None) -> Tensor

    The cross product of 3-vectors along ``dim``; other dims broadcast."""
    from ember._ops.linalg import cross as _cross

    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    return _cross(input, other, dim, out=out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """diagonal(A, *, offset=0, dim1=-2, dim2=-1) -> Tensor

    The diagonal of the matrices of ``A`` (a view), as :func:`ember.diagonal` with
    the last two dims by default."""
    return _diagonal(A, offset, dim1, dim2)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None) -> Tensor

    The vector ``ord``-norm of ``x`` over ``dim`` (all elements by default): ``2``,
    ``1``, ``inf``, ``-inf``, ``0`` (the number of nonzeros) or any other number. The
    gradient of the 2-norm at zero is zero.
    """
    from ember._ops._util import with_out

    return with_out(_vector_norm(x, ord, dim, keepdim, dtype=dtype), out)
