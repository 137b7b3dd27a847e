"""Argument normalization (as ``torch.fx.operator_schemas``): bind a node's arguments to its
target's signature, defaults filled in.

A graph records arguments as the traced program passed them (``F.max_pool2d(x, 2)``);
passes that convert nodes (ONNX export, compilers) want every parameter by name.
:func:`normalize_function` and :func:`normalize_module` give that, and
``Node.normalized_arguments`` applies the right one to a node.
"""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple

__all__ = ["ArgsKwargsPair", "normalize_function", "normalize_module", "type_matches"]


class ArgsKwargsPair(NamedTuple):
    """Normalized arguments: ``args`` (positional) and ``kwargs`` (by name)."""

    args: tuple
    kwargs: dict


_SUPPORTED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _normalize(sig: inspect.Signature, args: tuple, kwargs: dict,
               normalize_to_only_use_kwargs: bool) -> ArgsKwargsPair | None:
    if any(p.kind not in _SUPPORTED for p in sig.parameters.values()):
        return None
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    new_args, new_kwargs = [], {}
    for i, name in enumerate(sig.parameters):
        if not normalize_to_only_use_kwargs and i < len(args):
            new_args.append(bound.arguments[name])
        else:
            new_kwargs[name] = bound.arguments[name]
    return ArgsKwargsPair(tuple(new_args), new_kwargs)


def type_matches(signature_type: Any, argument_type: Any) -> bool:
    """Whether a value of ``argument_type`` fits a parameter annotated ``signature_type``
    (``Any`` and unannotated parameters take anything)."""
    if signature_type is Any or signature_type is inspect.Parameter.empty:
        return True
    if isinstance(signature_type, type) and isinstance(argument_type, type):
        return issubclass(argument_type, signature_type)
    return signature_type == argument_type


def normalize_function(target, args: tuple, kwargs: dict | None = None,
                       arg_types: tuple | None = None, kwarg_types: dict | None = None,
                       normalize_to_only_use_kwargs: bool = False) -> ArgsKwargsPair | None:
    """``target``'s arguments bound to its signature with defaults applied, or None where
    they cannot be (no signature, ``*args``/``**kwargs`` or positional-only parameters,
    arguments that do not bind).

    Args:
        target: the callable (an ember op, any Python function).
        args, kwargs: the arguments as called.
        arg_types, kwarg_types: kept for torch's signature (its overload resolution for
            builtins); ember's ops have one signature each.
        normalize_to_only_use_kwargs: return every argument by name.

    Examples::

        >>> normalize_function(ember.nn.functional.max_pool2d, (x, 2))  # doctest: +SKIP
        ArgsKwargsPair(args=(x, 2), kwargs={'stride': None, 'padding': 0, ...})
    """
    try:
        sig = inspect.signature(inspect.unwrap(target))
    except (TypeError, ValueError):
        return None
    return _normalize(sig, tuple(args), dict(kwargs or {}), normalize_to_only_use_kwargs)


def normalize_module(root, target: str, args: tuple, kwargs: dict | None = None,
                     normalize_to_only_use_kwargs: bool = False) -> ArgsKwargsPair | None:
    """The arguments of a call of submodule ``target`` of ``root``, bound to its
    ``forward``'s signature (for ember.nn's own modules), or None."""
    import ember.nn as nn

    try:
        submod = root.get_submodule(target)
    except AttributeError as e:
        raise RuntimeError(f"Tried to normalize node with target {target} but root did not "
                           "have that target!") from e
    if getattr(nn, type(submod).__name__, None) is not type(submod):
        return None
    sig = inspect.signature(inspect.unwrap(submod.forward))
    return _normalize(sig, tuple(args), dict(kwargs or {}), normalize_to_only_use_kwargs)
