"""Products: matmul and its relatives."""

from __future__ import annotations

from ember._C._core import Node
from ember._ops._util import apply, promote, xp_of

__all__ = ["matmul", "mm", "bmm", "mv", "dot"]


class MatMul(Node):
    saves_inputs = (0, 1)

    def forward(self, a, b):
        return xp_of(a).matmul(a, b)

    def backward(self, g):
        from ember._ops.reduction import sum_to

        a, b = self.saved_tensors
        need = self.needs_input_grad
        if a.ndim == 1 and b.ndim == 1:
            return (g * b.conj() if need[0] else None), (g * a.conj() if need[1] else None)
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1:
            g2 = g2.unsqueeze(-2)
        if b.ndim == 1:
            g2 = g2.unsqueeze(-1)
        ga = gb = None
        if need[0]:
            ga = g2 @ b2.mT.conj()
            if a.ndim == 1:
                ga = ga.squeeze(-2)
            ga = sum_to(ga, a.shape)
        if need[1]:
            gb = a2.mT.conj() @ g2
            if b.ndim == 1:
                gb = gb.squeeze(-1)
            gb = sum_to(gb, b.shape)
        return ga, gb


def _check_matmul(a, b):
    if a._data.ndim == 0 or b._data.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are "
            f"{a._data.ndim}D and {b._data.ndim}D")
    k_a = a._data.shape[-1]
    k_b = b._data.shape[-2] if b._data.ndim > 1 else b._data.shape[0]
    if k_a != k_b:
        sa = list(a._data.shape) if a._data.ndim > 1 else [1, k_a]
        sb = list(b._data.shape) if b._data.ndim > 1 else [k_b, 1]
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({sa[-2] if len(sa) > 1 else 1}x"
            f"{sa[-1]} and {sb[-2]}x{sb[-1]})")


def matmul(input, other, *, out=None):
    """Matrix product with NumPy's rules for 1-d and batched (broadcast) operands."""
    a, b = promote(input, other)
    _check_matmul(a, b)
    return apply(MatMul, a, b)


def mm(input, mat2, *, out=None):
    """Product of two 2-d matrices."""
    if input._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input._data.ndim}D and "
                           f"{mat2._data.ndim}D")
    return matmul(input, mat2)


def bmm(input, mat2, *, out=None):
    """Batched product of two 3-d tensors with the same batch size."""
    if input._data.ndim != 3 or mat2._data.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, got {input._data.ndim}D and "
                           f"{mat2._data.ndim}D")
    if input._data.shape[0] != mat2._data.shape[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {input._data.shape[0]} "
            f"and {mat2._data.shape[0]}")
    return matmul(input, mat2)


def mv(input, vec, *, out=None):
    """Matrix-vector product."""
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, "
                           f"{vec._data.ndim}")
    return matmul(input, vec)


def dot(input, other, *, out=None):
    """Inner product of two 1-d tensors."""
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{other._data.ndim}D tensors")
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {input.dtype} and "
            f"{other.dtype}")
    return matmul(input, other)


def _rmatmul(self, other):
    return matmul(other, self)


METHODS = {"matmul": matmul, "mm": mm, "bmm": bmm, "mv": mv, "dot": dot,
           "__matmul__": matmul, "__rmatmul__": _rmatmul}
