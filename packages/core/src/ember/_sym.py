"""``torch.sym_*``: the size arithmetic that ``torch.compile`` traces symbolically. ember
has no symbolic sizes, so they work on plain numbers (and one-element tensors), with
PyTorch's results for them: ``sym_int`` truncates toward zero, ``sym_max``/``sym_min``
return a float when either argument is one, ``sym_sqrt`` a float."""

from __future__ import annotations

import builtins
import math

__all__ = ["sym_float", "sym_int", "sym_ite", "sym_max", "sym_min", "sym_not", "sym_sqrt",
           "sym_sum"]


def sym_float(a):
    """``float(a)``."""
    return builtins.float(a)


def sym_int(a):
    """``a`` as an int, truncated toward zero (``sym_int(-2.7) == -2``)."""
    if isinstance(a, builtins.float):
        return math.trunc(a)
    return builtins.int(a)


def sym_ite(b, t, f):
    """``t if b else f``."""
    return t if b else f


def _promote(r, a, b):
    return builtins.float(r) if isinstance(a, builtins.float) or \
        isinstance(b, builtins.float) else r


def sym_max(a, b):
    """The larger of ``a`` and ``b`` (a float if either is a float)."""
    return _promote(builtins.max(a, b), a, b)


def sym_min(a, b):
    """The smaller of ``a`` and ``b`` (a float if either is a float)."""
    return _promote(builtins.min(a, b), a, b)


def sym_not(a):
    """``not a``."""
    return not a


def sym_sqrt(a):
    """``math.sqrt(a)``."""
    return math.sqrt(a)


def sym_sum(*args):
    """The sum of the numbers given (one iterable of them, or several)."""
    if len(args) == 1 and not isinstance(args[0], (builtins.int, builtins.float)):
        args = tuple(args[0])
    return builtins.sum(args)
