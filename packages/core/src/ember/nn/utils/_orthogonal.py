"""``nn.utils.parametrizations.orthogonal``: a weight kept orthogonal (unitary) by
parametrizing it through the matrix exponential, the Cayley map or Householder
reflections, as ``torch.nn.utils.parametrizations.orthogonal``.

NOTE [ How orthogonal parametrizes ]
With ``use_trivialization=True`` (the default) the module keeps an orthogonal ``base``
(a buffer) and an unconstrained ``original``, and the weight is ``base @ map(original)``.
Registering sets ``base`` to the orthogonal Q factor of the initial weight (the QR
decomposition with a non-negative diagonal of R; an orthogonal weight is kept as it is)
and ``original`` to ``-I``, which every map sends to the identity, so the parametrized
weight starts as that Q factor: the numbers PyTorch starts from. A wide matrix is handled
as its transpose; a tall one through the first ``k`` columns of an ``n x n`` map.
"""

from __future__ import annotations

import enum

from ember.autograd.grad_mode import no_grad
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize

__all__ = ["orthogonal"]


class _OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


def _mT(x):
    return x.transpose(-2, -1)


def _mH(x):
    return _mT(x).conj() if x.is_complex() else _mT(x)


def _q_factor(a):
    """The Q of ``a = QR`` (``a`` tall) with the diagonal of R made real non-negative."""
    from ember import linalg

    q, r = linalg.qr(a)
    d = r.diagonal(dim1=-2, dim2=-1)
    sign = d.sgn() if d.is_complex() else d.sign()
    sign = sign + (sign == 0).to(sign.dtype)  # a zero on the diagonal keeps its column
    return q * sign.unsqueeze(-2)


def _is_orthogonal(q) -> bool:
    from ember._dtype import finfo
    from ember._ops.creation import eye

    n, k = q.shape[-2], q.shape[-1]
    eps = 10.0 * n * finfo(q.dtype).eps
    return bool(((_mH(q) @ q) - eye(k, dtype=q.dtype, device=q.device)).abs().max() <= eps) \
        if q.numel() else True


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map is _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        from ember._ops.creation import eye, zeros
        from ember._ops.join import cat

        n, k = X.shape[-2], X.shape[-1]
        wide = n < k
        if wide:
            X, n, k = _mT(X), k, n
        if self.orthogonal_map is _OrthMaps.householder:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            from ember import linalg

            Q = linalg.householder_product(A, tau)
            # X's diagonal, truncated to integers as PyTorch does (+-1 at the start, where it
            # flips columns), scales the columns; not differentiated
            from ember import int32

            diag = X.diagonal(dim1=-2, dim2=-1).detach().to(int32).to(Q.dtype)
            Q = Q * diag.unsqueeze(-2)
        else:
            L = X.tril()
            if n != k:
                pad = zeros(*L.shape[:-1], n - k, dtype=L.dtype, device=L.device)
                L = cat([L, pad], -1)
            A = L - _mH(L)  # skew-symmetric (skew-Hermitian)
            if self.orthogonal_map is _OrthMaps.matrix_exp:
                from ember import linalg

                Q = linalg.matrix_exp(A)
            else:  # Cayley: (I - A/2)^-1 (I + A/2)
                from ember import linalg

                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        if getattr(self, "base", None) is not None:
            Q = self.base @ Q
        return _mT(Q) if wide else Q

    def right_inverse(self, Q):
        from ember import randn, zeros_like
        from ember._ops.join import cat

        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape "
                                 f"{self.shape}. Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            wide = n < k
            if wide:
                Q, n, k = _mT(Q), k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map is not _OrthMaps.householder:
                    raise ValueError("It is not possible to assign to the matrix exponential "
                                     "or the Cayley parametrizations when "
                                     "use_trivialization=False.")
                # Householder without a base: the reflectors of Q's QR, with +-1 on the
                # diagonal carrying R's signs
                from ember import bool as bool_
                from ember import geqrf, where

                A, tau = geqrf(Q)
                d = A.diagonal(dim1=-2, dim2=-1)
                sign = d.sign()
                sign = sign - 2 * (tau == 0).to(sign.dtype) * sign
                from ember._ops.creation import eye

                on_diag = eye(n, k, dtype=bool_, device=A.device)
                A = where(on_diag, sign.unsqueeze(-2).expand_as(A), A)
                return _mT(A) if wide else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _q_factor(Q)
            else:  # complete Q to an n x n orthogonal matrix
                extra = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
                Q = _q_factor(cat([Q, extra], -1))
            self.base = Q
            neg_id = zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    r"""Apply an orthogonal or unitary parametrization to a matrix or a batch of matrices.

    The weight becomes :math:`Q` with :math:`Q^{H}Q = I` (tall or square) or
    :math:`QQ^{H} = I` (wide), computed from an unconstrained tensor by ``orthogonal_map``:
    ``"matrix_exp"`` (the exponential of a skew-symmetric matrix), ``"cayley"``
    (:math:`(I - A/2)^{-1}(I + A/2)`) or ``"householder"`` (a product of Householder
    reflectors). The default is ``"matrix_exp"`` for square or complex matrices and
    ``"householder"`` otherwise. See NOTE [ How orthogonal parametrizes ] for where the
    weight starts.

    Args:
        module (nn.Module): module on which to register the parametrization.
        name (str, optional): name of the tensor to make orthogonal. Default: ``"weight"``.
        orthogonal_map (str, optional): ``"matrix_exp"``, ``"cayley"`` or
            ``"householder"``.
        use_trivialization (bool, optional): keep an orthogonal ``base`` and parametrize
            around it (the default), so that assigning an orthogonal matrix works for every
            map.

    Returns:
        The original module with an orthogonal parametrization on ``name``.

    Examples::

        >>> orth_linear = orthogonal(nn.Linear(20, 40))
        >>> Q = orth_linear.weight
        >>> ember.dist(Q.T @ Q, ember.eye(20))
        tensor(4.0e-07)
    """
    from ember._tensor import Tensor

    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) \
        else None
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
