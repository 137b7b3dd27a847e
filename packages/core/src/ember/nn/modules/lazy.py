"""``LazyModuleMixin``: modules whose parameters take their shapes from the first input."""

from __future__ import annotations

import itertools
import warnings

from ember.autograd.grad_mode import no_grad
from ember.nn.parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    r"""A mixin for modules that infer the shapes of their parameters from their first input.

    Until then the parameters are :class:`~ember.nn.parameter.UninitializedParameter`
    (and the buffers :class:`~ember.nn.parameter.UninitializedBuffer`). A forward
    pre-hook calls :meth:`initialize_parameters` with the first call's arguments, which
    materializes them and runs ``reset_parameters``; the hook then removes itself and, when
    ``cls_to_become`` is set, the module becomes that class (``LazyLinear`` becomes
    ``Linear``). Optimizers may be given the parameters before the first call (they keep
    the same objects), but a step before it has nothing to update.

    A ``state_dict`` loaded before the first call materializes the parameters with the
    checkpoint's shapes (the module stays lazy until its first call, which then only
    removes the hook).

    Examples::

        >>> class LazyMLP(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc1 = nn.LazyLinear(10)
        ...         self.fc2 = nn.LazyLinear(1)
        ...     def forward(self, x):
        ...         return self.fc2(self.fc1(x).relu())
        >>> m = LazyMLP()
        >>> m(ember.ones(10, 10)).shape
        ember.Size([10, 1])
        >>> m.fc1
        Linear(in_features=10, out_features=10, bias=True)
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(_lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters,
                                                               with_kwargs=True)
        warnings.warn("Lazy modules are a new feature under heavy development so changes to "
                      "the API or functionality can happen at any moment.", stacklevel=2)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # uninitialized ones go in as they are (detach would make them plain tensors)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars \
                    else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars \
                    else buf.detach()

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the parameters from the arguments of the first call (each lazy
        class defines it)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer is still uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


def _lazy_load_hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
                    unexpected_keys, error_msgs):
    """Give the uninitialized parameters and buffers the checkpoint's shapes, so that the
    ordinary loading copies into them."""
    for name, param in itertools.chain(module._parameters.items(), module._buffers.items()):
        key = prefix + name
        if key in state_dict and param is not None and is_lazy(param):
            value = state_dict[key]
            if not is_lazy(value):
                with no_grad():
                    param.materialize(tuple(value.shape))


def _infer_parameters(module, args, kwargs=None):
    """The forward pre-hook: initialize from the first call's arguments, then become the
    regular class."""
    module.initialize_parameters(*args, **(kwargs or {}))
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    del module._initialize_hook
    del module._load_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become
