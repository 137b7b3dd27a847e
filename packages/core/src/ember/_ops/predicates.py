"""Questions about tensors answered with a Python bool: ``is_nonzero``, ``is_same_size``
and ``is_signed`` (function forms of the Tensor methods). They are not ops: nothing is
recorded and nothing is differentiated.
"""

from __future__ import annotations

from ember._ops._util import TensorBase

__all__ = ["is_nonzero", "is_same_size", "is_signed"]


def _need_tensor(name, x, arg="input", pos=1):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def is_nonzero(input) -> bool:
    """is_nonzero(input) -> bool

    Whether the single element of ``input`` is not zero (nan counts as nonzero). An error
    for a tensor with no element or several, as ``bool(input)``.

    Examples::

        >>> ember.is_nonzero(ember.tensor([0.5]))
        True
    """
    _need_tensor("is_nonzero", input)
    n = input._data.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()) != 0)


def is_same_size(input, other) -> bool:
    """is_same_size(input, other) -> bool

    Whether ``input`` and ``other`` have the same shape.
    """
    _need_tensor("is_same_size", input)
    _need_tensor("is_same_size", other, "other", 2)
    return tuple(input._data.shape) == tuple(other._data.shape)


def is_signed(input) -> bool:
    """is_signed(input) -> bool

    Whether ``input``'s dtype is a signed type (signed integers, floating and complex
    types; not bool or uint8).
    """
    _need_tensor("is_signed", input)
    return input._data.dtype.kind in "ifc"


# Tensor methods, installed by ember/__init__.py (not ops, so not from the op registry)
TENSOR_METHODS = {"is_nonzero": is_nonzero, "is_same_size": is_same_size}
