"""``svd_lowrank``, ``pca_lowrank`` (randomized range finding, Halko, Martinsson and Tropp
2011) and ``lobpcg`` (Knyazev's locally optimal block preconditioned conjugate gradient),
on ember's linear algebra, with ``torch``'s signatures."""

from __future__ import annotations

__all__ = ["svd_lowrank", "pca_lowrank", "lobpcg"]


def _mH(x):
    t = x.transpose(-2, -1)
    return t.conj() if t.is_complex() else t


def _range_basis(A, q, niter, M=None):
    """An orthonormal ``(..., m, q)`` basis of (approximately) the range of ``A - M``,
    from a Gaussian sketch and ``niter`` subspace (power) iterations."""
    from ember import linalg, randn

    R = randn(*A.shape[:-2], A.shape[-1], q, dtype=A.dtype, device=A.device)

    def apply(X):
        return A @ X if M is None else A @ X - M @ X

    def apply_h(X):
        return _mH(A) @ X if M is None else _mH(A) @ X - _mH(M) @ X

    Q = linalg.qr(apply(R)).Q
    for _ in range(niter):
        Q = linalg.qr(apply_h(Q)).Q
        Q = linalg.qr(apply(Q)).Q
    return Q


def svd_lowrank(A, q: int | None = 6, niter: int | None = 2, M=None):
    r"""An approximate truncated SVD ``(U, S, V)`` of ``A - M`` (``A \approx U diag(S)
    V^H``) of rank ``q``, by randomized range finding.

    Args:
        A (Tensor): the input, of shape ``(*, m, n)``.
        q (int, optional): the rank of the approximation (default 6); a little more than
            the rank wanted gives better accuracy.
        niter (int, optional): the number of subspace iterations (default 2).
        M (Tensor, optional): subtracted from ``A`` (for example its column means).

    Returns:
        ``U`` ``(*, m, q)``, ``S`` ``(*, q)``, ``V`` ``(*, n, q)``. The result is random
        (the sketch draws from the global generator): seed it to reproduce one.
    """
    from ember import linalg

    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:  # work on the tall transpose
        U, S, V = svd_lowrank(_mH(A), q, niter, None if M is None else _mH(M))
        return V, S, U
    Q = _range_basis(A, q, niter, M)
    B = _mH(Q) @ (A if M is None else A - M)
    Ub, S, Vh = linalg.svd(B, full_matrices=False)
    return Q @ Ub, S, _mH(Vh)


def pca_lowrank(A, q: int | None = None, center: bool = True, niter: int = 2):
    r"""Principal component analysis of the rows of ``A`` by :func:`svd_lowrank`:
    ``(U, S, V)`` with the principal directions in the columns of ``V`` and
    ``S**2 / (m - 1)`` the variances along them.

    Args:
        A (Tensor): the data, ``(*, m, n)``: ``m`` samples of ``n`` features.
        q (int, optional): the rank (default ``min(6, m, n)``).
        center (bool, optional): subtract the column means first (default True).
        niter (int, optional): the number of subspace iterations (default 2).
    """
    m, n = A.shape[-2], A.shape[-1]
    q = min(6, m, n) if q is None else q
    if not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A, q, niter=niter, M=A.mean(-2, keepdim=True))


def _b_orthonormal_basis(S, B):
    """Columns spanning ``S``'s range, orthonormal in the ``B`` inner product (directions
    of near-zero ``B``-norm dropped)."""
    from ember import linalg
    from ember._dtype import finfo

    G = _mH(S) @ (S if B is None else B @ S)
    G = (G + _mH(G)) / 2
    w, V = linalg.eigh(G)
    keep = w > w.max().clamp_min(0) * finfo(S.dtype).eps * S.shape[-1] * 10
    w, V = w[keep], V[:, keep]
    return S @ (V / w.sqrt().unsqueeze(0))


def _rayleigh_ritz(A, B, S, n, largest):
    from ember import linalg

    Q = _b_orthonormal_basis(S, B)
    H = _mH(Q) @ (A @ Q)
    H = (H + _mH(H)) / 2
    e, C = linalg.eigh(H)
    if largest:
        e, C = e.flip(0), C.flip(1)
    return e[:n], Q, C[:, :n]


def lobpcg(A, k: int | None = None, B=None, X=None, n: int | None = None, iK=None,
           niter: int | None = None, tol: float | None = None, largest: bool | None = None,
           method: str | None = None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    r"""The ``k`` largest (or smallest) eigenpairs of the symmetric (Hermitian) generalized
    problem :math:`A X = B X \Lambda` by LOBPCG: ``(E, X)``, ``E`` of shape ``(k,)`` and
    ``X`` of shape ``(m, k)`` with ``B``-orthonormal columns.

    Args:
        A (Tensor): the ``(m, m)`` symmetric input.
        k (int, optional): the number of eigenpairs wanted (default: ``X``'s columns, else 1).
        B (Tensor, optional): the ``(m, m)`` symmetric positive definite right-hand side
            (default: the identity).
        X (Tensor, optional): the ``(m, n)`` initial approximation (default: random).
        n (int, optional): the block size when ``X`` is not given (default ``k``).
        iK (Tensor, optional): the ``(m, m)`` preconditioner applied to the residuals.
        niter (int, optional): the maximum number of iterations (default 1000; -1: until
            converged).
        tol (float, optional): the relative residual that counts as converged (default:
            the square root of the dtype's eps).
        largest (bool, optional): the largest eigenvalues (default True) or the smallest.
        method (str, optional): ``"ortho"`` (default) or ``"basic"``: ember runs one method
            for both, Rayleigh-Ritz on ``[X, W, P]`` with a ``B``-orthonormal basis.
        tracker (callable, optional): called with the worker state each iteration; ember
            passes an object with ``iparams``, ``E``, ``X`` and ``tvars``.
        ortho_iparams, ortho_fparams, ortho_bparams (dict, optional): PyTorch's options of
            the "ortho" method; accepted for compatibility.

    The gradient flows through the Rayleigh-Ritz steps (ember differentiates the
    iteration); PyTorch instead uses a closed-form backward for ``B=None``.
    """
    from ember import randn
    from ember._dtype import finfo
    from ember._ops.join import cat

    if A.dim() != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix (ember's lobpcg takes no batches), got "
                         f"shape {tuple(A.shape)}")
    if method not in (None, "ortho", "basic"):
        raise ValueError(f"method must be 'ortho' or 'basic', got {method!r}")
    m = A.shape[0]
    if X is None:
        k = 1 if k is None else k
        n = k if n is None else n
        X = randn(m, n, dtype=A.dtype, device=A.device)
    else:
        k = X.shape[-1] if k is None else k
        n = X.shape[-1]
    if n < k:
        raise ValueError(f"X columns (={n}) must be greater or equal to k (={k})")
    if m < 3 * n:
        raise ValueError(f"LPBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    niter = 1000 if niter is None else niter
    tol = finfo(A.dtype).eps ** 0.5 if tol is None else tol
    largest = True if largest is None else largest

    E, Q, C = _rayleigh_ritz(A, B, X, n, largest)
    X = Q @ C
    P = None
    it = 0
    while niter < 0 or it < niter:
        BX = X if B is None else B @ X
        R = A @ X - BX * E.unsqueeze(0)
        rnorm = R.norm(dim=0)
        scale = E.abs().clamp_min(finfo(A.dtype).tiny) * BX.norm(dim=0).clamp_min(1e-30)
        if bool((rnorm[:k] / scale[:k] <= tol).all()):
            break
        W = R if iK is None else iK @ R
        blocks = [X, W] if P is None else [X, W, P]
        S = cat(blocks, 1)
        E, Q, C = _rayleigh_ritz(A, B, S, n, largest)
        X_new = Q @ C
        # P: the new iterate's component outside the old X (its B-orthogonal update)
        BXo = X if B is None else B @ X
        P = X_new - X @ (_mH(BXo) @ X_new)
        X = X_new
        it += 1
        if tracker is not None:
            tracker(_TrackerState(it, E, X))
    return E[:k], X[:, :k]


class _TrackerState:
    def __init__(self, it, E, X):
        self.iparams = {"k": E.shape[0], "n": X.shape[1], "niter": it}
        self.E, self.X = E, X
        self.tvars = {}
