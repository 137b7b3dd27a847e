"""The older weight normalization: ``weight_norm`` and ``remove_weight_norm`` (a forward
pre-hook recomputing ``weight`` from ``weight_g`` and ``weight_v``).

:func:`ember.nn.utils.parametrizations.weight_norm` is the newer form; this one is kept,
as in PyTorch, for models and checkpoints written with it (their ``state_dict`` keys are
``<name>_g`` and ``<name>_v``).
"""

from __future__ import annotations

import warnings

from ember.nn.parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every dim but ``dim`` (all of them for ``dim == -1``), with
    size-1 dims kept (PyTorch's ``norm_except_dim``)."""
    if dim == -1:
        return v.norm()
    dim = dim + v.dim() if dim < 0 else dim
    dims = tuple(d for d in range(v.dim()) if d != dim)
    return (v * v).sum(dims, keepdim=True).sqrt()


class WeightNorm:
    """The forward pre-hook of :func:`weight_norm`: ``name = name_v * name_g / ||name_v||``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        """``v * (g / norm_except_dim(v, dim))`` from the module's parameters."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module, name: str, dim: int) -> WeightNorm:
        """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` and register the hook."""
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. Make "
                "sure to run the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(_norm_except_dim(weight, dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        """Put back ``<name>`` as one parameter with the current weight."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int = 0):
    r"""Weight normalization of a parameter: ``w = g * v / ||v||``.

    ``module.<name>`` is replaced by two parameters, ``<name>_g`` (the magnitude) and
    ``<name>_v`` (the direction), and a forward pre-hook that recomputes ``<name>`` from
    them before every forward.

    .. warning:: Deprecated (as in PyTorch) in favour of
        :func:`ember.nn.utils.parametrizations.weight_norm`.

    Args:
        module (Module): the module holding the parameter.
        name (str, optional): the parameter's name. Default: ``"weight"``.
        dim (int, optional): the dim kept by the norm (the others are reduced); ``None``
            (or -1) for the norm of the whole tensor. Default: 0.

    Returns:
        The module, with the hook.

    Examples::

        >>> m = nn.utils.weight_norm(nn.Linear(20, 40), name="weight")
        >>> m.weight_g.size()
        ember.Size([40, 1])
        >>> m.weight_v.size()
        ember.Size([40, 20])
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Remove the weight normalization of :func:`weight_norm` from ``module``.

    Args:
        module (Module): the module.
        name (str, optional): the name of the normalized parameter. Default: ``"weight"``.

    Examples::

        >>> m = nn.utils.weight_norm(nn.Linear(20, 40))
        >>> m = nn.utils.remove_weight_norm(m)
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
