"""The optimizer base class: parameter groups, per-parameter state, state dicts and hooks.

Layout and semantics are ``torch.optim.Optimizer``'s, so that a PyTorch optimizer's
state dict (its tensors converted to ember tensors) loads into the same ember optimizer
and continues the same trajectory.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Hashable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

from ember import _dtype
from ember._ops.creation import tensor as _tensor
from ember._tensor import Tensor
from ember.autograd.grad_mode import enable_grad, set_grad_enabled

__all__ = [
    "Optimizer",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
]


class _RequiredParameter:
    """Singleton marking an optimizer option that has no default."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class _RemovableHandle:
    """A handle that removes a hook from the ordered dict it was added to."""

    _next_id = 0

    def __init__(self, hooks_dict: dict) -> None:
        self._hooks = hooks_dict
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> _RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


_global_optimizer_pre_hooks: OrderedDict[int, Any] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Any] = OrderedDict()


def register_optimizer_step_pre_hook(hook) -> _RemovableHandle:
    """Register a pre hook called before every optimizer's ``step``.

    The hook has the signature ``hook(optimizer, args, kwargs) -> None or (args, kwargs)``.
    Returns a handle whose ``remove()`` removes the hook.
    """
    handle = _RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook) -> _RemovableHandle:
    """Register a post hook called after every optimizer's ``step``:
    ``hook(optimizer, args, kwargs) -> None``."""
    handle = _RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _with_step_hooks(func):
    """Wrap an optimizer's ``step`` so that the global and per-instance hooks run around it
    (once, also when a subclass's ``step`` calls ``super().step()``)."""

    @functools.wraps(func)
    def step(self, *args, **kwargs):
        if self._in_step:
            return func(self, *args, **kwargs)
        for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                              self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{func} must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
        self._in_step = True
        try:
            out = func(self, *args, **kwargs)
        finally:
            self._in_step = False
        for post_hook in chain(self._optimizer_step_post_hooks.values(),
                               _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    step._hooked = True
    return step


def _use_grad_for_differentiable(func):
    """Run ``step`` with gradient recording off (on only for ``differentiable=True``)."""

    @functools.wraps(func)
    def step(self, *args, **kwargs):
        with set_grad_enabled(bool(self.defaults["differentiable"])):
            return func(self, *args, **kwargs)

    return step


def _evaluate_closure(closure):
    """The loss from ``closure`` (evaluated with gradient recording on), or None."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _get_scalar_dtype(is_fused=None):
    """The dtype of the ``step`` counters (and other scalar state): PyTorch's rule."""
    if is_fused:
        return _dtype.float32
    return _dtype.float64 if _dtype.get_default_dtype() == _dtype.float64 else _dtype.float32


def _step_tensor(value=0.0, is_fused=None) -> Tensor:
    """A 0-d counter tensor, as PyTorch keeps ``state["step"]``."""
    return _tensor(float(value), dtype=_get_scalar_dtype(is_fused))


def _increment(counter: Tensor) -> float:
    """``counter += 1`` in place (in its own dtype); its new value as a Python float."""
    data = counter._data
    data += 1
    counter._bump_version()
    return float(data)


def _to_scalar(x):
    """A hyper-parameter as a Python number (1-element tensors are read out)."""
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        return x.item()
    return x


def _check_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= _to_scalar(lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def _reject_differentiable(differentiable: bool) -> None:
    if differentiable:
        raise NotImplementedError(
            "ember.optim does not support differentiable=True (autograd through the "
            "optimizer step) yet")


def _tensors_to_steps(optimizer: Optimizer, keys=("step",), is_fused=None) -> None:
    """After unpickling: counters saved as Python numbers become tensors again."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            p_state = optimizer.state.get(p, {})
            for key in keys:
                if key in p_state and not isinstance(p_state[key], Tensor):
                    p_state[key] = _step_tensor(p_state[key], is_fused)


class Optimizer:
    r"""Base class for all optimizers.

    .. warning::
        Parameters need to be specified as collections that have a deterministic
        ordering that is consistent between runs (lists, not sets).

    Args:
        params (iterable): an iterable of :class:`ember.Tensor` s, of ``(name, tensor)``
            pairs, or of :class:`dict` s defining parameter groups.
        defaults (dict): default values of the optimization options (used when a
            parameter group doesn't specify them).
    """

    _in_step = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _with_step_hooks(step)

    # What __setstate__ fills in for checkpoints pickled before these existed: the param
    # group entries each group lacks, and the per-parameter counters kept as Python numbers
    # then, which become tensors again.
    _group_defaults: dict[str, Any] = {}
    _counter_keys: tuple[str, ...] = ()

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, Any] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Any] = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict[int, Any] = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict[int, Any] = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict[int, Any] = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict[int, Any] = OrderedDict()

        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable "
                            "of Tensors or dicts, but got " + _typename(params))

        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # -- pickling and printing ------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self._group_defaults.items():
                group.setdefault(key, value)
        if self._counter_keys:
            fused = self.param_groups[-1].get("fused") if self.param_groups else None
            _tensors_to_steps(self, self._counter_keys, is_fused=fused)

    def _gather(self, group, params, grads, states, init) -> bool:
        """Append the parameters of ``group`` that have a gradient to ``params``, their
        gradients to ``grads`` and, for each ``key: list`` of ``states``, their state entry
        ``key`` to the list; a parameter without state first gets ``init(p)`` (a dict, in
        the order PyTorch's state_dict shows it). Returns whether any of them is complex."""
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state.update(init(p))
            for key, out in states.items():
                out.append(state[key])
        return has_complex

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # -- hooks -----------------------------------------------------------------
    def register_step_pre_hook(self, hook) -> _RemovableHandle:
        """Register a hook ``hook(optimizer, args, kwargs) -> None or (args, kwargs)``
        called before this optimizer's ``step``."""
        handle = _RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook) -> _RemovableHandle:
        """Register a hook ``hook(optimizer, args, kwargs) -> None`` called after this
        optimizer's ``step``."""
        handle = _RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _add_hook(hooks: OrderedDict, hook, prepend: bool) -> _RemovableHandle:
        handle = _RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> _RemovableHandle:
        """Register ``hook(optimizer) -> None``, called before :meth:`state_dict`."""
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> _RemovableHandle:
        """Register ``hook(optimizer, state_dict) -> state_dict or None``, called after
        :meth:`state_dict` made its result."""
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook,
                                          prepend: bool = False) -> _RemovableHandle:
        """Register ``hook(optimizer, state_dict) -> state_dict or None``, called before
        :meth:`load_state_dict`."""
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook,
                                           prepend: bool = False) -> _RemovableHandle:
        """Register ``hook(optimizer) -> None``, called after :meth:`load_state_dict`."""
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dicts -------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        r"""The state of the optimizer as a :class:`dict` with two entries:

        * ``state``: per parameter, a dict of its optimization state (momentum buffers,
          step counters, ...), keyed by the parameter's index (parameters are numbered
          across groups in order; the tensors themselves are not saved);
        * ``param_groups``: a list with each group's options and its ``params`` as
          those indices (and ``param_names`` when the group was given names).
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}

        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param: Tensor, value: Tensor, param_id,
                                                  param_groups, key: Hashable = None):
        # Floating-point state follows the parameter's dtype and device; a ``step``
        # counter keeps its own dtype (float32 on the parameter's device when fused or
        # capturable), as in PyTorch.
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=_dtype.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the optimizer state from a dict returned by :meth:`state_dict` (this
        optimizer's, or a PyTorch optimizer's with its tensors converted to ember).

        Parameters are matched by their order in the groups; floating-point state is
        cast to each parameter's dtype and device. Load it after creating any
        learning-rate scheduler, which would otherwise overwrite the loaded rates.
        """
        state_dict = state_dict.copy()  # shallow: hooks may change it
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't "
                             "match the size of optimizer's group")

        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def _cast(param, value, param_id=None, param_groups=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, param_id=param_id, param_groups=param_groups,
                                 key=k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(_cast(param, v, param_id=param_id,
                                         param_groups=param_groups) for v in value)
            return value

        state: defaultdict[Tensor, dict] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k,
                                     param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # -- gradients and steps -------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors.

        Args:
            set_to_none (bool): set the grads to None instead of filling them with
                zeros (default: True). Optimizers skip parameters whose grad is None,
                while a zero grad still takes a step (weight decay, momentum).
        """
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): a closure that reevaluates the model and
                returns the loss (required by some optimizers, such as LBFGS).
        """
        raise NotImplementedError

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group to :attr:`param_groups`, with its own options (the
        optimizer's defaults fill in the rest): for instance to start training layers
        that were frozen.

        Args:
            param_group (dict): the ``params`` of the group and its options.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")

        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered "
                            "collections, but the ordering of tensors in sets will change "
                            "between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. "
                                 "Some param names are missing")

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params "
                                "is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        param_set: set[int] = set()
        for group in self.param_groups:
            param_set.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current} to the optimizer")
        if not param_set.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in (None, "builtins") else f"{module}.{name}"
