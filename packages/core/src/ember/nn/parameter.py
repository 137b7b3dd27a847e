"""``nn.Parameter`` and ``nn.Buffer``: tensors that modules register."""

from __future__ import annotations

from ember._C import _core
from ember._tensor import Tensor, _pickled_class_and_state, _set_state

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _rebuild_parameter(array, requires_grad, cls=None, state=None):
    """Unpickle a parameter: of class ``cls`` (a subclass of Parameter) and with ``state``
    (its ``__dict__``) where given."""
    p = Parameter(_core.make_tensor_from_array(array), requires_grad)
    if cls is not None:
        p.__class__ = cls
    if state:
        _set_state(p, state)
    return p


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

        return (_rebuild_parameter, (backend_of(self._data).to_numpy(self._data).copy(),
                                     bool(self.requires_grad))
                + _pickled_class_and_state(self, Parameter))

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


# ---------------------------------------------------------------------------
# uninitialized parameters and buffers (the lazy modules')

_UNINITIALIZED_USE = (
    "Attempted to use an uninitialized parameter in {what}. This error happens when you are "
    "using a `LazyModule` or explicitly manipulating `torch.nn.parameter.{cls}` objects. When "
    "using LazyModules Call `forward` with a dummy batch to initialize the parameters before "
    "calling torch functions")


class UninitializedTensorMixin:
    """What :class:`UninitializedParameter` and :class:`UninitializedBuffer` share: no
    shape until :meth:`materialize` gives one (and turns the object into its
    ``cls_to_become``, in place, so that modules and optimizers holding it stay valid)."""

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor storage of ``shape`` (uninitialized values) on its device and
        with its dtype, or the ones given, and make it a ``cls_to_become``.

        Args:
            shape (tuple): the shape of the materialized tensor.
            device (ember.device, optional): its device. Default: the current one.
            dtype (ember.dtype, optional): its dtype. Default: the current one.
        """
        from ember._ops.creation import empty

        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self._data = empty(tuple(shape), device=device, dtype=dtype)._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def dim(self):
        raise ValueError(_UNINITIALIZED_USE.format(what="Tensor.dim",
                                                   cls=type(self).__name__))

    def numel(self):
        raise ValueError(_UNINITIALIZED_USE.format(what="Tensor.numel",
                                                   cls=type(self).__name__))

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


def is_lazy(param) -> bool:
    """Whether ``param`` is an :class:`UninitializedParameter` or an
    :class:`UninitializedBuffer`."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (a lazy module's, before its first call).

    It holds no data: its shape (and what needs it) raises a RuntimeError. It can change
    dtype and device, and :meth:`materialize` makes it a :class:`Parameter` of a given
    shape in place.

    Args:
        requires_grad (bool): whether the parameter will require gradient. Default: True.
        device, dtype: the device and dtype the parameter will have when materialized.
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from ember._ops.creation import empty

        return _core.make_subclass(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy module's, before its first call).

    It holds no data; :meth:`materialize` makes it a plain :class:`~ember.Tensor` of a
    given shape in place.

    Args:
        requires_grad (bool): whether the buffer will require gradient. Default: False.
        device, dtype: the device and dtype the buffer will have when materialized.
        persistent (bool): whether it belongs to the module's ``state_dict``. Default: True.
    """

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from ember._ops.creation import empty

        t = _core.make_subclass(cls, empty(0, device=device, dtype=dtype), requires_grad)
        t.persistent = persistent
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass

    def materialize(self, shape, device=None, dtype=None) -> None:
        super().materialize(shape, device, dtype)
        # ``persistent`` served the registration; a plain tensor carries no attributes
        self.__dict__.pop("persistent", None)
