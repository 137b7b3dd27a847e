"""``functional_call`` (deprecated here in favour of ``ember.func.functional_call``) and the
reparametrization it uses: a module's parameters and buffers swapped for given tensors
for the length of a call."""

from __future__ import annotations

import contextlib
import warnings

__all__ = ["functional_call"]


def _tied_names(module) -> dict[str, list[str]]:
    """Every parameter or buffer name -> all the names of the same tensor."""
    by_id: dict[int, list[str]] = {}
    for name, t in (*module.named_parameters(remove_duplicate=False),
                    *module.named_buffers(remove_duplicate=False)):
        by_id.setdefault(id(t), []).append(name)
    return {n: names for names in by_id.values() for n in names}


def _untie(module, tensors: dict) -> dict:
    tied = _tied_names(module)
    out = dict(tensors)
    for name, value in tensors.items():
        for other in tied.get(name, ()):
            if other in tensors and tensors[other] is not value:
                raise ValueError(
                    f"functional_call got multiple values for keys {sorted(tied[name])}, "
                    "which are tied. Consider using tie_weights=False")
            out.setdefault(other, value)
    return out


def _owner(module, dotted: str):
    *path, leaf = dotted.split(".")
    for p in path:
        module = getattr(module, p)
    return module, leaf


_MISSING = object()


def _swap(module, dotted: str, value):
    """Put ``value`` at ``dotted`` (a parameter, a buffer or a plain attribute; ``_MISSING``
    removes it); returns what was there (``_MISSING`` if nothing)."""
    owner, leaf = _owner(module, dotted)
    for store in (owner._parameters, owner._buffers):
        if leaf in store:
            old = store[leaf]
            if value is _MISSING:
                del store[leaf]
            else:
                store[leaf] = value
            return old
    old = owner.__dict__.get(leaf, _MISSING)
    if value is _MISSING:
        owner.__dict__.pop(leaf, None)
    else:
        owner.__dict__[leaf] = value
    return old


def _current(module, dotted: str):
    owner, leaf = _owner(module, dotted)
    for store in (owner._parameters, owner._buffers, owner.__dict__):
        if leaf in store:
            return store[leaf]
    return None


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers: dict, tie_weights: bool = False,
                          strict: bool = False, stack_weights: bool = False):
    """Swap ``module``'s tensors named in ``parameters_and_buffers`` for the given ones,
    and back on exit (changes the module made in place to the swapped-in dicts are written
    back into ``parameters_and_buffers``)."""
    tensors = _untie(module, parameters_and_buffers) if tie_weights \
        else dict(parameters_and_buffers)
    if strict:
        known = set(_tied_names(module))
        missing = sorted(known - set(tensors))
        unexpected = sorted(set(tensors) - known)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    originals: dict = {}
    try:
        for name, value in tensors.items():
            originals[name] = _swap(module, name, value)
        yield
    finally:
        items = reversed(originals.items()) if stack_weights else originals.items()
        current = {}
        for name, old in items:
            current[name] = _current(module, name)
            _swap(module, name, old)
        for k in parameters_and_buffers:
            if k in current and current[k] is not None:
                parameters_and_buffers[k] = current[k]


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    if isinstance(parameters_and_buffers, (list, tuple)):
        merged = {}
        for d in parameters_and_buffers:
            dup = set(merged) & set(d)
            if dup:
                raise ValueError(f"{sorted(dup)} appeared in multiple dictionaries; behavior "
                                 "of functional call is ambiguous")
            merged.update(d)
        parameters_and_buffers = merged
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    r"""Call ``module(*args, **kwargs)`` with its parameters and buffers replaced by the
    tensors of ``parameters_and_buffers`` (by dotted name) for that call only.

    .. warning:: Deprecated as in PyTorch 2.0: use ``ember.func.functional_call``.

    Args:
        module (nn.Module): the module.
        parameters_and_buffers (dict of str to Tensor): the tensors to use.
        args (Any or tuple): the positional arguments (one non-tuple value is one
            argument).
        kwargs (dict): the keyword arguments.
        tie_weights (bool): a tensor given for one of tied names (the same tensor
            registered twice) is used for all of them. Default: True.
        strict (bool): the names given must be exactly the module's. Default: False.

    Returns:
        What the module returns.

    Examples::

        >>> m = nn.Linear(3, 1)
        >>> w = {"weight": ember.ones(1, 3), "bias": ember.zeros(1)}
        >>> nn.utils.stateless.functional_call(m, w, ember.ones(2, 3))
        tensor([[3.],
                [3.]])
    """
    warnings.warn(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will "
        "be removed in a future version of PyTorch. Please use `torch.func.functional_call` "
        "instead which is a drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
