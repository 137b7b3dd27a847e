"""``nn.Parameter`` and ``nn.Buffer``: tensors that modules register."""

from __future__ import annotations

from ember._C import _core
from ember._tensor import Tensor

__all__ = ["Parameter", "Buffer"]


def _rebuild_parameter(array, requires_grad):
    return Parameter(_core.make_tensor_from_array(array), requires_grad)


class Parameter(Tensor):
    """A Tensor that a Module registers as a parameter when assigned as an attribute.

    Args:
        data: the tensor whose storage the parameter shares (an empty tensor if None).
        requires_grad: whether the parameter requires gradient. Default: True.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ember._ops.creation import empty

            data = empty(0)
        if not isinstance(data, _core.TensorBase):
            raise TypeError(
                f"Parameter data must be a Tensor, got {type(data).__name__}")
        return _core.make_subclass(cls, data.detach(), requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        from ember._backend import backend_of

        return (_rebuild_parameter,
                (backend_of(self._data).to_numpy(self._data).copy(), bool(self.requires_grad)))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self.requires_grad)
        if self._grad is not None:
            result._grad = self._grad.detach().clone()
        result.__dict__.update(
            {k: __import__("copy").deepcopy(v, memo) for k, v in self.__dict__.items()})
        memo[id(self)] = result
        return result


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute.

    ``module.x = nn.Buffer(t, persistent=False)`` is ``module.register_buffer("x", t,
    persistent=False)``; the module stores ``t`` itself (a plain Tensor).
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ember._ops.creation import empty

            data = empty(0)
        t = _core.make_subclass(cls, data.detach(), False)
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass
