"""Complex tensors: view_as_real / view_as_complex and real / imag (views sharing
memory), angle, and the conjugation flags.

NOTE [ Conjugation in ember ]
PyTorch's ``conj()`` sets a lazy conjugate bit; ember's is an honest copy (the
array libraries have no lazy conjugation). So ``is_conj()`` is always False and
``resolve_conj()`` returns its input, which is what PyTorch gives for a tensor
whose conjugation has been resolved: the values are the same everywhere, only the
memory sharing of ``conj()`` differs (in-place changes to ``x.conj()`` are not seen
in ``x``). Gradients follow PyTorch's convention for complex inputs (the conjugate
Wirtinger derivative: for a real loss, ``grad = dL/dRe + i dL/dIm``).
"""

from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._C._core import Node, apply_view
from ember._ops._util import TensorBase, apply, type_name, xp_of
from ember._ops.shape import _writable

__all__ = [
    "view_as_real", "view_as_complex", "real", "imag", "angle", "is_conj", "resolve_conj",
    "conj_physical", "conj_physical_", "is_neg", "resolve_neg", "adjoint",
]


def _check(fn, x):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


# ---------------------------------------------------------------------------
# views

class ViewAsReal(Node):
    def forward(self, z):
        real = np.finfo(z.dtype).dtype
        return _writable(z[..., None].view(real))

    def backward(self, g):
        return view_as_complex(g.contiguous())


class ViewAsComplex(Node):
    def forward(self, x):
        cdt = np.result_type(x.dtype, np.complex64)
        if x.size == 0:
            return xp_of(x).zeros(x.shape[:-1], cdt)
        return _writable(x.view(cdt)[..., 0])

    def backward(self, g):
        return view_as_real(g)


def view_as_real(input):
    """view_as_real(input) -> Tensor

    A real view of a complex tensor: a new last dim of size 2 holds the real and
    imaginary parts. Shares memory with ``input``.

    Examples::

        >>> ember.view_as_real(ember.tensor([1 + 2j]))
        tensor([[1., 2.]])
    """
    _check("view_as_real", input)
    if input._data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return apply_view(ViewAsReal, input, lambda t: view_as_real(t))


def view_as_complex(input):
    """view_as_complex(input) -> Tensor

    A complex view of a float32/float64 tensor whose last dim (of size 2, stride 1)
    holds real and imaginary parts; the other strides must be even. Shares memory.
    """
    _check("view_as_complex", input)
    x = input._data
    if x.dtype not in (np.float32, np.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, "
                           f"but got a tensor of scalar type: {type_name(x.dtype)}")
    if x.ndim == 0 or x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    item = x.itemsize
    if x.size and x.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if x.size and any((s // item) % 2 for s, n in zip(x.strides[:-1], x.shape[:-1], strict=True)
                      if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                           "dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return apply_view(ViewAsComplex, input, lambda t: view_as_complex(t))


class RealView(Node):
    def forward(self, z):
        return _writable(z.real)

    def backward(self, g):
        from ember._ops.creation import complex as _complex

        return _complex(g, g.new_zeros(()).expand_as(g))


class ImagView(Node):
    def forward(self, z):
        return _writable(z.imag)

    def backward(self, g):
        from ember._ops.creation import complex as _complex

        return _complex(g.new_zeros(()).expand_as(g), g)


def real(input):
    """real(input) -> Tensor

    The real part of a complex tensor as a view sharing its memory (``input`` itself
    for a real tensor).
    """
    _check("real", input)
    if input._data.dtype.kind != "c":
        return input
    return apply_view(RealView, input, lambda t: real(t))


def imag(input):
    """imag(input) -> Tensor

    The imaginary part of a complex tensor as a view sharing its memory.
    """
    _check("imag", input)
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply_view(ImagView, input, lambda t: imag(t))


def _set_part(part):
    def setter(self, value):
        view = real(self) if part == "real" else imag(self)
        if isinstance(value, TensorBase):
            view.copy_(value)
        else:
            view.fill_(value)
    return setter


# ---------------------------------------------------------------------------
# angle

class Angle(Node):
    saves_inputs = (0,)

    def forward(self, x):
        xp = xp_of(x)
        if x.dtype.kind == "c":
            return xp.angle(x)
        out = xp.where(x < 0, np.pi, 0).astype(x.dtype)
        return xp.where(xp.isnan(x), x, out)

    def backward(self, g):
        from ember._ops.elementwise import where

        (z,) = self.saved_tensors
        if not z.is_complex():
            return g * 0
        r2 = (z * z.conj()).real
        zero = r2 == 0
        safe = where(zero, r2.new_ones(()), r2)
        grad = (g / safe).to(z.dtype) * z * 1j
        return where(zero, grad.new_zeros(()), grad)


def angle(input, *, out=None):
    """angle(input, *, out=None) -> Tensor

    The argument (phase) of each element in radians, in ``(-pi, pi]``; for real
    tensors 0 for non-negative and pi for negative values. Integer inputs give the
    default float dtype.
    """
    from ember._ops._util import with_out

    _check("angle", input)
    if input._data.dtype.kind in "biu":
        input = input.to(_dtype.get_default_dtype())
    return with_out(apply(Angle, input), out)


# ---------------------------------------------------------------------------
# conjugation and negation flags (see the NOTE)

def is_conj(input):
    """is_conj(input) -> bool

    Whether ``input``'s conjugate bit is set: always False in ember, whose ``conj()``
    is a copy (see NOTE [ Conjugation in ember ])."""
    _check("is_conj", input)
    return False


def resolve_conj(input):
    """resolve_conj(input) -> Tensor

    ``input`` with its conjugation materialized: ``input`` itself (no lazy bit)."""
    _check("resolve_conj", input)
    return input


def conj_physical(input, *, out=None):
    """conj_physical(input, *, out=None) -> Tensor

    The elementwise conjugate, always computed (a copy for real tensors too)."""
    from ember._ops._util import with_out

    _check("conj_physical", input)
    return with_out(input.conj() if input.is_complex() else input.clone(), out)


def is_neg(input):
    """is_neg(input) -> bool

    Whether ``input``'s negative bit is set: always False in ember."""
    _check("is_neg", input)
    return False


def resolve_neg(input):
    """resolve_neg(input) -> Tensor

    ``input`` itself (ember has no lazy negation)."""
    _check("resolve_neg", input)
    return input


def adjoint(input):
    """adjoint(input) -> Tensor

    The conjugate transpose of the last two dims (``input.mT.conj()``); for a real tensor
    the transposed view itself."""
    _check("adjoint", input)
    if input.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.dim()}-D tensor.")
    t = input.transpose(-2, -1)
    return t.conj() if input.is_complex() else t


def conj_physical_(input):
    """conj_physical_(input) -> Tensor

    ``input`` conjugated in place (nothing to do for a real tensor)."""
    _check("conj_physical_", input)
    return _conj_physical_(input)


def _conj_physical_(self):
    if self.is_complex():
        from ember._C._core import apply_inplace
        from ember._ops.unary import Conj

        return apply_inplace(Conj, self)
    return self


METHODS = {
    "real": property(real, _set_part("real")), "imag": property(imag, _set_part("imag")),
    "angle": angle, "is_conj": is_conj, "resolve_conj": resolve_conj,
    "conj_physical": conj_physical, "conj_physical_": _conj_physical_, "is_neg": is_neg,
    "resolve_neg": resolve_neg, "adjoint": adjoint,
}

