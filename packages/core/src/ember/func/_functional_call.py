"""Calling a module with other parameters: ``functional_call``, ``stack_module_state`` and
``replace_all_batch_norm_modules_``."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from ember._C._core import TensorBase

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]

_MISSING = object()


def _untie(module, values: dict) -> dict:
    """``values`` completed with the names tied to a given name (the same tensor under
    several names in the module), raising if tied names were given different tensors."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    by_tensor: dict[int, set] = {}
    for name, t in named.items():
        by_tensor.setdefault(id(t), set()).add(name)
    tied = {n: names for names in by_tensor.values() if len(names) > 1 for n in names}
    given = {n for n in values if n in tied}
    for n in given:
        names = tied[n]
        if len(names & given) > 1 and len({id(values[m]) for m in names & given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    out = dict(values)
    for n in given:
        for m in tied[n]:
            out[m] = values[n]
    return out


def _swap(module, name: str, value):
    """Put ``value`` at dotted path ``name`` of ``module``; return what was there."""
    prefix, _, attr = name.rpartition(".")
    mod = module.get_submodule(prefix) if prefix else module
    if value is not _MISSING and value is not None and not isinstance(value, TensorBase):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    d = mod.__dict__
    for store in ("_parameters", "_buffers"):
        if attr in d[store]:
            orig = d[store][attr]
            if value is _MISSING:
                del d[store][attr]
            else:
                d[store][attr] = value
            return orig
    orig = getattr(mod, attr) if hasattr(mod, attr) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, TensorBase):
        raise TypeError(f"attribute `{attr}`: {orig} is not an instance of torch.Tensor")
    if value is not _MISSING:
        object.__setattr__(mod, attr, value)
    elif attr in d:
        del d[attr]
    return orig


@contextlib.contextmanager
def _reparametrize(module, values: dict, tie_weights: bool, strict: bool):
    if tie_weights:
        values = _untie(module, values)
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(valid - set(values))
        unexpected = sorted(set(values) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    originals = []
    try:
        for name, value in values.items():
            originals.append((name, _swap(module, name, value)))
        yield
    finally:
        for name, orig in reversed(originals):
            _swap(module, name, orig)


def _merge_dicts(parameter_and_buffer_dicts) -> dict:
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if isinstance(parameter_and_buffer_dicts, Sequence) and not isinstance(
            parameter_and_buffer_dicts, str):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, c in counts.items() if c > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        return {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                     f"dicts, but got {type(parameter_and_buffer_dicts)}")


def _call(module, values, args, kwargs, tie_weights, strict):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, values, tie_weights, strict):
        return module(*args, **kwargs)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    r"""Call ``module`` with its parameters and buffers replaced by the given tensors.

    The module is changed only for the duration of the call (its own parameters are put
    back afterwards, also when the call raises), so ``functional_call`` composes with the
    transforms: ``grad(lambda p, x: loss(functional_call(model, p, x)))(params, x)``.

    Args:
        module (nn.Module): the module to call.
        parameter_and_buffer_dicts (dict or sequence of dicts): the tensors to use, by
            ``state_dict``-style name (``"layer1.weight"``); several dicts must have distinct
            keys. Names the module lacks are set as attributes for the call.
        args (Any or tuple): the positional arguments (a non-tuple is one argument).
        kwargs (dict): the keyword arguments.
        tie_weights (bool): names that share one tensor in the module (tied weights) all
            take the value given for any of them; different values for tied names raise.
            Default: True.
        strict (bool): raise unless the names are exactly the module's parameters and
            buffers. Default: False.

    Returns:
        What ``module(*args, **kwargs)`` returns.

    Examples::

        >>> model = ember.nn.Linear(2, 1)
        >>> params = {"weight": ember.ones(1, 2), "bias": ember.zeros(1)}
        >>> ember.func.functional_call(model, params, (ember.tensor([[1.0, 2.0]]),))
        tensor([[3.]])
    """
    values = _merge_dicts(parameter_and_buffer_dicts)
    return _call(module, values, args, kwargs, tie_weights, strict)


def stack_module_state(models):
    r"""Stack the parameters and buffers of ``M`` modules of one class, for ensembling
    with :func:`vmap` and :func:`functional_call`.

    Args:
        models (sequence of nn.Module): modules of the same class, all in training or all
            in eval mode.

    Returns:
        ``(params, buffers)``: dicts from names to tensors with a leading dimension of
        size ``M``. The stacked parameters are new leaves (they require grad if the
        originals do) unrelated to the originals, ready for an optimizer.

    Examples::

        >>> models = [ember.nn.Linear(3, 2) for _ in range(4)]
        >>> params, buffers = ember.func.stack_module_state(models)
        >>> params["weight"].shape
        ember.Size([4, 2, 3])
    """
    from ember._ops.join import stack

    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode.")
    typ = type(models[0])
    if not all(type(m) is typ for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tensors, name):
        all_grad = all(t.requires_grad for t in tensors)
        if not all_grad and any(t.requires_grad for t in tensors):
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               ".requires_grad")
        out = stack([t.detach() for t in tensors])
        return out.requires_grad_() if all_grad else out

    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: stacked([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: stacked([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    r"""Make every batch-norm module under ``root`` stop tracking running statistics
    (in place: ``running_mean``, ``running_var`` and ``num_batches_tracked`` become None
    and ``track_running_stats`` False), so that it normalizes with batch statistics, as
    :func:`vmap` over a model needs. Returns ``root``.

    Args:
        root (nn.Module): the module to change.
    """
    from ember.nn.modules.batchnorm import _BatchNorm

    for m in root.modules():
        if isinstance(m, _BatchNorm):
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
