"""``Variable``: the wrapper of PyTorch before 0.4, kept for old code.

Every tensor is a Variable: ``isinstance(t, Variable)`` is True for any tensor, and
``Variable(t)`` returns a tensor sharing ``t``'s data (requiring grad when asked to).
"""

from __future__ import annotations

from ember._C import _core
from ember._C._core import TensorBase

__all__ = ["Variable"]


class _ImperativeEngine:
    """The backward engine as ``Variable._execution_engine`` (PyTorch's
    ``torch._C._ImperativeEngine``): what code that hooks into backward asks of it."""

    def queue_callback(self, callback) -> None:
        """Run ``callback()`` once the running backward call has computed all its
        gradients, before it returns. Only valid during a backward pass."""
        _core._queue_callback(callback)

    def is_checkpoint_valid(self) -> bool:
        """False inside a backward call given ``inputs`` (see ``torch.utils.checkpoint``)."""
        return _core._is_checkpoint_valid()


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, TensorBase)


class Variable(metaclass=_VariableMeta):
    r"""``Variable(data=None, requires_grad=False, volatile=False)``: a tensor sharing
    ``data``'s memory, detached from its history (an empty tensor without ``data``).

    Args:
        data (Tensor): the tensor to wrap.
        requires_grad (bool): whether the result requires grad. Default: False.
        volatile (bool): ignored, as in PyTorch (use ``ember.no_grad()``).

    Examples::

        >>> x = ember.autograd.Variable(ember.ones(2), requires_grad=True)
        >>> x.requires_grad, isinstance(x, ember.autograd.Variable)
        (True, True)
    """

    _execution_engine = _ImperativeEngine()

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            from ember._ops.creation import empty

            return empty(0, requires_grad=bool(requires_grad))
        if not isinstance(data, TensorBase):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
