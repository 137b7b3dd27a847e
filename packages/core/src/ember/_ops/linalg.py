"""Products: matmul and its relatives, the add-product family, einsum (in ``_einsum``),
tensordot, kron, cross and trace.

The matrix products do not promote dtypes (PyTorch requires equal dtypes there and
names both in its error); ``outer``, ``addr`` and ``kron`` promote as elementwise ops do.
Gradients of products are products again (written with ember ops, so they can be
differentiated once more).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ember._backend import _blas
from ember._C._core import Node, apply_inplace
from ember._ops._einsum import einsum
from ember._ops._operands import forward_op, reflected_op
from ember._ops._util import (
    TensorBase,
    apply,
    cpp_type_name,
    promote_all,
    type_name,
    with_out,
    wrap_dim,
    xp_of,
)
from ember._ops._util import conj as _conj

__all__ = [
    "matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv",
    "addr", "addbmm", "baddbmm", "einsum", "tensordot", "kron", "cross", "trace",
    "chain_matmul",
]

def _check_tensor(fn, name, pos, x):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _no_bool(kernel, dt):
    if dt.kind == "b":
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _scale(t, s):
    """``t * s`` for a Python number ``s`` (nothing when s == 1)."""
    if isinstance(s, complex):
        s = s.conjugate()
    return t if s == 1 else t * s


# ---------------------------------------------------------------------------
# matmul

class MatMul(Node):
    saves_inputs = (0, 1)

    def forward(self, a, b):
        return _blas.matmul(a, b)

    def backward(self, g):
        from ember._ops.reduction import sum_to

        a, b = self.saved_tensors
        need = self.needs_input_grad
        if a.ndim == 1 and b.ndim == 1:
            return (g * _conj(b) if need[0] else None), (g * _conj(a) if need[1] else None)
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1:
            g2 = g2.unsqueeze(-2)
        if b.ndim == 1:
            g2 = g2.unsqueeze(-1)
        ga = gb = None
        if need[0]:
            ga = g2 @ _conj(b2).mT
            if a.ndim == 1:
                ga = ga.squeeze(-2)
            ga = sum_to(ga, a.shape)
        if need[1]:
            if b.ndim == 2 and a2.ndim > 2:
                # batched input times one matrix (a Linear layer): fold the batch into
                # the rows, one GEMM instead of a batched product and a sum
                k = a2.shape[-1]
                gb = _conj(a2.reshape(-1, k)).mT @ g2.reshape(-1, g2.shape[-1])
            else:
                gb = _conj(a2).mT @ g2
                if b.ndim == 1:
                    gb = gb.squeeze(-1)
                gb = sum_to(gb, b.shape)
        return ga, gb


def _batch_shape(sa, sb):
    """The broadcast of two batch shapes, with PyTorch's error."""
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    out = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}")
        out.append(max(x, y) if x and y else 0)
    return tuple(out)


def _matmul_dtype_error(da, db):
    na, nb = da.ndim, db.ndim
    if na == 1 and nb == 1:
        return RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {type_name(da.dtype)} "
            f"and {type_name(db.dtype)}")
    if nb == 1:
        return RuntimeError(
            f"addmv input tensors must have the same dtype, but got {type_name(db.dtype)}, "
            f"{type_name(da.dtype)}, and {type_name(db.dtype)}")
    if nb == 2:
        return RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                            f"{cpp_type_name(da.dtype)} != {cpp_type_name(db.dtype)}")
    return RuntimeError(
        f"expected scalar type {type_name(da.dtype)} but found {type_name(db.dtype)}")


def _matmul_shape_error(sa, sb):
    na, nb = len(sa), len(sb)
    if na == 1 and nb == 1:
        return RuntimeError(
            f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the "
            f"same number of elements, but got {sa[0]} and {sb[0]} elements respectively")
    if nb == 1:
        rows = math.prod(sa[:-1])
        return RuntimeError(
            f"size mismatch, got input ({rows}), mat ({rows}x{sa[-1]}), vec ({sb[0]})")
    if na == 1 and nb > 2:  # folded as other^T @ input
        rows = math.prod(sb[:-2]) * sb[-1]
        return RuntimeError(
            f"size mismatch, got input ({rows}), mat ({rows}x{sb[-2]}), vec ({sa[0]})")
    if nb == 2:
        rows = math.prod(sa[:-1])
        return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{sa[-1]} and "
                            f"{sb[0]}x{sb[1]})")
    batch = math.prod(_batch_shape(sa[:-2], sb[:-2]))
    return RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {sa[-1]}] "
        f"but got: [{batch}, {sb[-2]}].")


def matmul(input, other, *, out=None):
    """Matrix product of two tensors, with NumPy's rules for 1-d operands and batch
    dimensions that broadcast.

    - both 1-d: the dot product (a 0-d tensor);
    - both 2-d: the matrix product;
    - a 1-d operand is taken as a row (first) or column (second) vector and that
      dimension is removed from the result;
    - more than 2-d: batches of matrices, the batch dimensions broadcast.

    Both operands must have the same dtype.

    Examples::

        >>> ember.matmul(ember.ones(10, 3, 4), ember.ones(4, 5)).shape
        ember.Size([10, 3, 5])
    """
    _check_tensor("matmul", "input", 1, input)
    _check_tensor("matmul", "other", 2, other)
    da, db = input._data, other._data
    if da.ndim == 0 or db.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da.ndim}D and "
            f"{db.ndim}D")
    if da.dtype != db.dtype:
        raise _matmul_dtype_error(da, db)
    if da.shape[-1] != (db.shape[-2] if db.ndim > 1 else db.shape[0]):
        raise _matmul_shape_error(da.shape, db.shape)
    if da.ndim > 2 and db.ndim > 2:
        _batch_shape(da.shape[:-2], db.shape[:-2])
    if da.dtype.kind == "b":
        _no_bool("dot" if da.ndim == db.ndim == 1 else "addmm_impl_cpu_", da.dtype)
    return with_out(apply(MatMul, input, other), out)


def mm(input, mat2, *, out=None):
    """Product of two 2-d matrices ``(n, m) @ (m, p) -> (n, p)`` (no broadcasting)."""
    _check_tensor("mm", "input", 1, input)
    _check_tensor("mm", "mat2", 2, mat2)
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul(input, mat2, out=out)


def bmm(input, mat2, *, out=None):
    """Batched product of two 3-d tensors ``(b, n, m) @ (b, m, p) -> (b, n, p)``; the
    batch sizes must be equal (no broadcasting)."""
    _check_tensor("bmm", "input", 1, input)
    _check_tensor("bmm", "mat2", 2, mat2)
    sa, sb = input._data.shape, mat2._data.shape
    if len(sa) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(sb) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input._data.dtype)} but found "
                           f"{type_name(mat2._data.dtype)}")
    if sb[0] != sa[0] or sb[1] != sa[2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{sa[0]}, "
            f"{sa[2]}] but got: [{sb[0]}, {sb[1]}].")
    return matmul(input, mat2, out=out)


def mv(input, vec, *, out=None):
    """Matrix-vector product ``(n, m) @ (m,) -> (n,)``."""
    _check_tensor("mv", "input", 1, input)
    _check_tensor("mv", "vec", 2, vec)
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, "
                           f"{vec._data.ndim}")
    return matmul(input, vec, out=out)


def _check_vectors(input, other):
    da, db = input._data, other._data
    if da.ndim != 1 or db.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {da.ndim}D and {db.ndim}D tensors")
    if da.dtype != db.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {type_name(da.dtype)} "
            f"and {type_name(db.dtype)}")
    if da.shape[0] != db.shape[0]:
        raise _matmul_shape_error(da.shape, db.shape)


def dot(input, tensor, *, out=None):
    """Inner product of two 1-d tensors of the same size and dtype."""
    _check_tensor("dot", "input", 1, input)
    _check_tensor("dot", "tensor", 2, tensor)
    _check_vectors(input, tensor)
    return matmul(input, tensor, out=out)


def vdot(input, other, *, out=None):
    """``sum(conj(input) * other)`` for 1-d tensors (``dot`` for real ones)."""
    _check_tensor("vdot", "input", 1, input)
    _check_tensor("vdot", "other", 2, other)
    _check_vectors(input, other)
    return matmul(_conj(input), other, out=out)


def inner(input, other, *, out=None):
    """Sum of products over the last dims: ``result[i..., j...] = sum_k
    input[i..., k] * other[j..., k]``; a 0-d operand multiplies the other."""
    _check_tensor("inner", "input", 1, input)
    _check_tensor("inner", "other", 2, other)
    if input._data.ndim == 0 or other._data.ndim == 0:
        return with_out(input * other, out)
    if input._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input._data.shape)} and {list(other._data.shape)}")
    return tensordot(input, other, ([-1], [-1]), out=out)


def outer(input, vec2, *, out=None):
    """The outer product of two 1-d tensors: ``result[i, j] = input[i] * vec2[j]``."""
    _check_tensor("outer", "input", 1, input)
    _check_tensor("outer", "vec2", 2, vec2)
    for name, t in (("self", input), ("vec2", vec2)):
        if t._data.ndim != 1:
            raise RuntimeError(
                f"outer: Expected 1-D argument {name}, but got {t._data.ndim}-D")
    return with_out(input.unsqueeze(1) * vec2, out)


ger = outer


def chain_matmul(*matrices, out=None):
    """The product of a chain of 2-d matrices (deprecated in PyTorch)."""
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    result = matrices[0]
    for m in matrices[1:]:
        result = mm(result, m)
    return with_out(result if len(matrices) > 1 else result.clone(), out)


# ---------------------------------------------------------------------------
# beta * input + alpha * product: addmm, addmv, addr, baddbmm, addbmm

class AddProduct(Node):
    """``beta * input + alpha * P(a, b)``, P one of the products named by ``kind``."""

    saves_inputs = (1, 2)

    def forward(self, input, a, b, beta, alpha, kind):
        self.beta, self.alpha, self.kind = beta, alpha, kind
        xp = xp_of(a)
        if kind == "addr":
            p = a[:, None] * b[None, :]
        elif kind == "addbmm":
            nb, n, k = a.shape
            p = xp.matmul(a.transpose(1, 0, 2).reshape(n, nb * k), b.reshape(nb * k, -1))
        else:
            p = xp.matmul(a, b)
        if p.dtype.kind == "b":  # addr on bools: (beta and input) or (alpha and a * b)
            p = p & bool(alpha)
            return p | input if beta else p
        if alpha != 1:
            p *= alpha
        if beta != 0:
            p += input if beta == 1 else input * beta
        return p

    def backward(self, g):
        a, b = self.saved_tensors
        need = self.needs_input_grad
        kind = self.kind
        gi = ga = gb = None
        if need[0]:
            gi = _scale(g, self.beta)
        if need[1]:
            if kind == "addmv":
                ga = g.unsqueeze(1) * _conj(b)
            elif kind == "addr":
                ga = g @ _conj(b)
            elif kind == "addbmm":
                ga = g.unsqueeze(0) @ _conj(b).mT
            else:
                ga = g @ _conj(b).mT
            ga = _scale(ga, self.alpha)
        if need[2]:
            if kind == "addmv":
                gb = _conj(a).mT @ g
            elif kind == "addr":
                gb = g.mT @ _conj(a)
            elif kind == "addbmm":
                gb = _conj(a).mT @ g.unsqueeze(0)
            else:
                gb = _conj(a).mT @ g
            gb = _scale(gb, self.alpha)
        return gi, ga, gb


def _scalars(dt, beta, alpha, strict=False):
    """``beta`` and ``alpha`` as the op uses them: integer inputs truncate float scalars
    (``addr`` refuses them instead, as PyTorch does)."""
    out = []
    for name, v in (("beta", beta), ("alpha", alpha)):
        if isinstance(v, TensorBase):
            v = v.item()
        if isinstance(v, complex) and dt.kind != "c":
            raise RuntimeError(f"value cannot be converted to type {cpp_type_name(dt)} without "
                               "overflow")
        if dt.kind in "iu" and isinstance(v, float):
            if strict:
                raise RuntimeError(f"For integral input tensors, argument {name} must not be "
                                   "a floating point number.")
            v = int(v)
        out.append(v)
    return out


def _check_expand(input, target, inplace):
    """PyTorch's error if ``input`` does not broadcast to ``target`` (in place: if its
    shape is not ``target``)."""
    shape, target = tuple(input._data.shape), tuple(target)
    if inplace:
        if shape != target:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(shape)} and output "
                               f"tensor size {list(target)} should match")
        return
    if len(shape) > len(target):
        raise RuntimeError(
            f"expand(torch.{type_name(input._data.dtype)}Tensor{{{list(shape)}}}, size="
            f"{list(target)}): the number of sizes provided ({len(target)}) must be greater or "
            f"equal to the number of dimensions in the tensor ({len(shape)})")
    lead = len(target) - len(shape)
    for i, s in enumerate(shape):
        if s != 1 and s != target[lead + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[lead + i]}) must match the existing "
                f"size ({s}) at non-singleton dimension {lead + i}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(shape)}")


def _add_product(kind, input, a, b, beta, alpha, out, inplace):
    if inplace:
        return apply_inplace(AddProduct, input, a, b, beta, alpha, kind)
    return with_out(apply(AddProduct, input, a, b, beta, alpha, kind), out)


def _tensors(fn, **named):
    for pos, (name, t) in enumerate(named.items(), 1):
        _check_tensor(fn, name, pos, t)


def _addmm(input, mat1, mat2, beta, alpha, out=None, inplace=False):
    _tensors("addmm", input=input, mat1=mat1, mat2=mat2)
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t._data.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t._data.ndim}-D tensor")
    di, d1, d2 = input._data.dtype, mat1._data.dtype, mat2._data.dtype
    if di != d2:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{type_name(di)} and {type_name(d2)}")
    if d1 != d2:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{type_name(d1)} and {type_name(d2)}")
    s1, s2 = mat1._data.shape, mat2._data.shape
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and "
                           f"{s2[0]}x{s2[1]})")
    _no_bool("addmm_impl_cpu_", di)
    beta, alpha = _scalars(di, beta, alpha)
    _check_expand(input, (s1[0], s2[1]), inplace)
    return _add_product("addmm", input, mat1, mat2, beta, alpha, out, inplace)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-d ``mat1`` and ``mat2``; ``input``
    broadcasts to the result. With ``beta=0`` the values of ``input`` are ignored (nan
    and inf in it do not propagate)."""
    return _addmm(input, mat1, mat2, beta, alpha, out)


def _addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    return _addmm(self, mat1, mat2, beta, alpha, inplace=True)


def _addmv(input, mat, vec, beta, alpha, out=None, inplace=False):
    _tensors("addmv", input=input, mat=mat, vec=vec)
    ni, nm, nv = input._data.ndim, mat._data.ndim, vec._data.ndim
    if nm != 2 or nv != 1 or ni > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {ni}, {nm}, {nv}")
    di, dm, dv = input._data.dtype, mat._data.dtype, vec._data.dtype
    if not di == dm == dv:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{type_name(di)}, {type_name(dm)}, and {type_name(dv)}")
    sm = mat._data.shape
    rows = input._data.shape[0] if ni == 1 else 1
    if sm[1] != vec._data.shape[0] or (rows != sm[0] and (rows != 1 or inplace)):
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({sm[0]}x{sm[1]}), vec "
                           f"({vec._data.shape[0]})")
    _no_bool("addmv_impl_cpu", di)
    beta, alpha = _scalars(di, beta, alpha)
    _check_expand(input, (sm[0],), inplace)
    return _add_product("addmv", input, mat, vec, beta, alpha, out, inplace)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)`` for a 2-d ``mat`` and a 1-d ``vec``."""
    return _addmv(input, mat, vec, beta, alpha, out)


def _addmv_(self, mat, vec, *, beta=1, alpha=1):
    return _addmv(self, mat, vec, beta, alpha, inplace=True)


def _addr(input, vec1, vec2, beta, alpha, out=None, inplace=False):
    _tensors("addr", input=input, vec1=vec1, vec2=vec2)
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if t._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t._data.ndim}-D")
    if inplace:
        vec1, vec2 = (v if v._data.dtype == input._data.dtype else v.to(input.dtype)
                      for v in (vec1, vec2))
    else:
        input, vec1, vec2 = promote_all([input, vec1, vec2])
    dt = input._data.dtype
    if dt.kind != "b":
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, (bool, np.bool_)):
                raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        beta, alpha = _scalars(dt, beta, alpha, strict=True)
    elif isinstance(beta, float) or isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument "
                           f"{'beta' if isinstance(beta, float) else 'alpha'} must not be a "
                           "floating point number.")
    _check_expand(input, (vec1._data.shape[0], vec2._data.shape[0]), inplace)
    return _add_product("addr", input, vec1, vec2, beta, alpha, out, inplace)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``; dtypes promote. For bool tensors
    the result is ``(beta and input) or (alpha and outer(vec1, vec2))``."""
    return _addr(input, vec1, vec2, beta, alpha, out)


def _addr_(self, vec1, vec2, *, beta=1, alpha=1):
    return _addr(self, vec1, vec2, beta, alpha, inplace=True)


def _check_batches(fn, input, b1, b2):
    _tensors(fn, input=input, batch1=b1, batch2=b2)
    for name, t in (("batch1", b1), ("batch2", b2)):
        if t._data.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")


def _baddbmm(input, batch1, batch2, beta, alpha, out=None, inplace=False):
    _check_batches("baddbmm", input, batch1, batch2)
    di, d1, d2 = input._data.dtype, batch1._data.dtype, batch2._data.dtype
    if di != d1 or di != d2:
        if d1 != d2 and di == d1:
            raise RuntimeError(
                f"expected scalar type {type_name(d1)} but found {type_name(d2)}")
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {cpp_type_name(di)}, batch1: "
            f"{cpp_type_name(d1)}, batch2: {cpp_type_name(d2)}")
    s1, s2 = batch1._data.shape, batch2._data.shape
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{s1[0]}, "
            f"{s1[2]}] but got: [{s2[0]}, {s2[1]}].")
    _no_bool("baddbmm", di)
    beta, alpha = _scalars(di, beta, alpha)
    _check_expand(input, (s1[0], s1[1], s2[2]), inplace)
    return _add_product("baddbmm", input, batch1, batch2, beta, alpha, out, inplace)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``; ``input`` broadcasts to
    ``(b, n, p)``."""
    return _baddbmm(input, batch1, batch2, beta, alpha, out)


def _baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return _baddbmm(self, batch1, batch2, beta, alpha, inplace=True)


def _addbmm(input, batch1, batch2, beta, alpha, out=None, inplace=False):
    _check_batches("addbmm", input, batch1, batch2)
    di, d1, d2 = input._data.dtype, batch1._data.dtype, batch2._data.dtype
    if di != d2:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{type_name(di)} and {type_name(d2)}")
    if d1 != d2:
        raise RuntimeError(
            f"expected scalar type {type_name(d1)} but found {type_name(d2)}")
    s1, s2 = batch1._data.shape, batch2._data.shape
    if s1[0] != s2[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{s1[0]} and {s2[0]}")
    if s1[2] != s2[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({s1[1]}x{s1[2]} and "
                           f"{s2[1]}x{s2[2]})")
    _no_bool("addbmm", di)
    beta, alpha = _scalars(di, beta, alpha)
    _check_expand(input, (s1[1], s2[2]), inplace)
    return _add_product("addbmm", input, batch1, batch2, beta, alpha, out, inplace)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_i batch1[i] @ batch2[i]`` (the batch is summed)."""
    return _addbmm(input, batch1, batch2, beta, alpha, out)


def _addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return _addbmm(self, batch1, batch2, beta, alpha, inplace=True)


# ---------------------------------------------------------------------------
# tensordot, kron, cross, trace

def _dims_list(x, name):
    if isinstance(x, TensorBase):
        x = x.tolist()
    if isinstance(x, (int, np.integer)):
        raise TypeError(f"tensordot(): argument '{name}' (position 3) must be tuple of ints, "
                        f"not int")
    return [int(d) for d in x]


def tensordot(a, b, dims=2, out=None):
    """Sum of products over the dims ``dims`` of ``a`` and ``b``: an int ``n`` pairs the
    last ``n`` dims of ``a`` with the first ``n`` of ``b``; a pair of lists names them.

    Examples::

        >>> ember.tensordot(ember.ones(3, 4, 5), ember.ones(4, 5, 6), dims=2).shape
        ember.Size([3, 6])
    """
    _check_tensor("tensordot", "a", 1, a)
    _check_tensor("tensordot", "b", 2, b)
    if isinstance(dims, TensorBase) and dims._data.ndim == 0:
        dims = dims.item()
    na, nb = a._data.ndim, b._data.ndim
    if isinstance(dims, (int, np.integer)):
        dims = int(dims)
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(na, nb):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(na - dims, na)), list(range(dims))
    else:
        if isinstance(dims, TensorBase):
            dims = dims.tolist()
        dims_a, dims_b = _dims_list(dims[0], "dims_self"), _dims_list(dims[1], "dims_other")
        if len(dims_a) != len(dims_b):
            raise RuntimeError("both dimension lists should have same length")
        dims_a = [wrap_dim(d, na) for d in dims_a]
        dims_b = [wrap_dim(d, nb) for d in dims_b]
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    sa, sb = a._data.shape, b._data.shape
    for da, db in zip(dims_a, dims_b):
        if sa[da] != sb[db] and sa[da] != 1 and sb[db] != 1:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {sa[da]} in dim "
                f"{da} and second has size {sb[db]} in dim {db}")
    free_a = [d for d in range(na) if d not in dims_a]
    free_b = [d for d in range(nb) if d not in dims_b]
    k = math.prod(max(sa[da], sb[db]) for da, db in zip(dims_a, dims_b))
    at = a if all(sa[d] == sb[e] for d, e in zip(dims_a, dims_b)) else \
        a.expand(*[max(sa[d], sb[dims_b[dims_a.index(d)]]) if d in dims_a else sa[d]
                   for d in range(na)])
    bt = b if at is a else \
        b.expand(*[max(sb[d], sa[dims_a[dims_b.index(d)]]) if d in dims_b else sb[d]
                   for d in range(nb)])
    m = math.prod(sa[d] for d in free_a)
    n = math.prod(sb[d] for d in free_b)
    order_a = free_a + dims_a
    order_b = dims_b + free_b
    a2 = (at if order_a == list(range(na)) else at.permute(*order_a)).reshape(m, k)
    b2 = (bt if order_b == list(range(nb)) else bt.permute(*order_b)).reshape(k, n)
    result = (a2 @ b2).reshape(*[sa[d] for d in free_a], *[sb[d] for d in free_b])
    return with_out(result, out)


def kron(input, other, *, out=None):
    """The Kronecker product: blocks ``input[i, j...] * other``, of shape
    ``input.shape * other.shape`` (dims aligned from the right); dtypes promote."""
    _check_tensor("kron", "input", 1, input)
    _check_tensor("kron", "other", 2, other)
    nd = max(input._data.ndim, other._data.ndim)
    sa = (1,) * (nd - input._data.ndim) + tuple(input._data.shape)
    sb = (1,) * (nd - other._data.ndim) + tuple(other._data.shape)
    a = input.reshape(*[x for s in sa for x in (s, 1)])
    b = other.reshape(*[x for s in sb for x in (1, s)])
    return with_out((a * b).reshape(*[x * y for x, y in zip(sa, sb)]), out)


class Cross(Node):
    saves_inputs = (0, 1)

    def forward(self, a, b, dim):
        self.dim = dim
        return xp_of(a).cross(a, b, axis=dim)

    def backward(self, g):
        a, b = self.saved_tensors
        need = self.needs_input_grad
        ga = apply(Cross, _conj(b), g, self.dim) if need[0] else None
        gb = apply(Cross, g, _conj(a), self.dim) if need[1] else None
        return ga, gb


def cross(input, other, dim=None, *, out=None):
    """The cross product of 3-vectors along ``dim`` (other dims broadcast). Without
    ``dim``, the first dim of size 3 (deprecated in PyTorch; pass ``dim``)."""
    _check_tensor("cross", "input", 1, input)
    _check_tensor("cross", "other", 2, other)
    sa, sb = input._data.shape, other._data.shape
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input._data.dtype)} but found "
                           f"{type_name(other._data.dtype)}")
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
            "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
            "dim will change to agree with that of linalg.cross in a future release.",
            UserWarning, stacklevel=2)
        if len(sa) != len(sb):
            raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
        dim = next((i for i, s in enumerate(sa) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if len(sa) != len(sb):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, len(sa))
    if sa[d] != 3 or sb[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got "
                           f"{sa[d]} and {sb[d]}")
    _batch_shape(sa, sb)
    return with_out(apply(Cross, input, other, d), out)


class Trace(Node):
    def forward(self, x):
        self.shape = x.shape
        dt = np.int64 if x.dtype.kind in "biu" else None
        return xp_of(x).asarray(x.trace(dtype=dt))

    def backward(self, g):
        from ember._ops.creation import eye

        n, m = self.shape
        return g * eye(n, m, dtype=g.dtype, device=g.device)


def trace(input):
    """The sum of the main diagonal of a 2-d tensor (int64 for integer inputs)."""
    _check_tensor("trace", "input", 1, input)
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    _no_bool("trace", input._data.dtype)
    return apply(Trace, input)


METHODS = {
    "matmul": matmul, "mm": mm, "bmm": bmm, "mv": mv, "dot": dot, "vdot": vdot,
    "inner": inner, "outer": outer, "ger": outer, "addmm": addmm, "addmm_": _addmm_,
    "addmv": addmv, "addmv_": _addmv_, "addr": addr, "addr_": _addr_, "addbmm": addbmm,
    "addbmm_": _addbmm_, "baddbmm": baddbmm, "baddbmm_": _baddbmm_, "kron": kron,
    "cross": cross, "trace": trace, "__matmul__": forward_op(matmul),
    "__rmatmul__": reflected_op(matmul),
}
