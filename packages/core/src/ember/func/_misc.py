"""The smaller names of ``ember.func``: functionalize, debug_unwrap and rearrange."""

from __future__ import annotations

import functools
import re

from ember._C._core import TensorBase
from ember.func._pytree import tree_map

__all__ = ["functionalize", "debug_unwrap", "rearrange"]


def functionalize(func, *, remove="mutations"):
    r"""Return ``func`` with the mutations of its tensor inputs deferred to its end.

    ember runs programs eagerly and has no graph to rewrite, so this is what the
    transform means for a running program: ``func`` runs on copies of its tensor
    inputs; when it returns, the inputs it changed in place get the new values copied
    back (as PyTorch's functionalize "fixes up" input mutations), so callers see the same
    results as with ``func`` itself, but nothing ``func`` does in between can be seen
    through the inputs. With ``remove="mutations_and_views"`` the outputs are also never
    views of anything (views are copied).

    Args:
        func (Callable): the function.
        remove (str): ``"mutations"`` (default) or ``"mutations_and_views"``.

    Examples::

        >>> def f(x):
        ...     y = x.clone()
        ...     y.add_(1)
        ...     return y
        >>> ember.func.functionalize(f)(ember.zeros(2))
        tensor([1., 1.])
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove="
            f"{remove}. Valid options are:\n     remove='mutations': all inplace and out= "
            "operators will be removed from the program, and replaced with their out-of-place "
            "equivalents.\n     remove='mutations_and_views': In addition to the above, all "
            "aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        copies = []

        def copy(x):
            if not isinstance(x, TensorBase):
                return x
            c = x.clone()
            copies.append((x, c, c._version))
            return c

        out = func(*tree_map(copy, args), **tree_map(copy, kwargs))
        from ember.autograd.grad_mode import no_grad

        for orig, c, version in copies:
            if c._version != version:
                if orig.requires_grad:
                    orig.copy_(c)
                else:
                    with no_grad():
                        orig.copy_(c)
        if remove == "mutations_and_views":
            out = tree_map(lambda t: t.clone() if isinstance(t, TensorBase)
                           and t._base is not None else t, out)
        return out

    return wrapped


def debug_unwrap(tensor, *, recurse=True):
    r"""The plain tensor inside a transform's wrapper, for debugging.

    ember's transforms do not wrap tensors (see NOTE [ Function transforms on a tape ] in
    ``ember/func/_transforms.py``): inside ``grad`` or ``vmap`` a tensor already is the
    plain tensor, so it is returned as it is.

    Args:
        tensor (Tensor): the tensor.
        recurse (bool): unwrap all levels (there is only one). Default: True.
    """
    return tensor


# ----------------------------------------------------------------------------
# rearrange

_ELLIPSIS = "\u2026"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _parse_side(text: str):
    """The groups of one side of a pattern, each a sequence of axis names (``"1"`` and
    the ellipsis included): ``(a b)`` is the tuple ``("a", "b")``, a bare name the list
    ``[name]``."""
    text = text.replace("...", f" {_ELLIPSIS} ")
    groups, current = [], None
    for tok in re.findall(r"\(|\)|[^\s()]+", text):
        if tok == "(":
            if current is not None:
                raise ValueError("Axis composition is one-level (brackets inside brackets "
                                 "not allowed)")
            current = []
        elif tok == ")":
            if current is None:
                raise ValueError("Brackets are not balanced")
            groups.append(tuple(current))     # a bracketed group: a tuple
            current = None
        else:
            if tok != _ELLIPSIS and tok != "1" and not _IDENT.match(tok):
                if tok.isdigit():
                    raise ValueError("rearrange only supports unnamed axes of size 1")
                raise ValueError(f"Invalid axis identifier: {tok}")
            if current is not None:
                current.append(tok)
            else:
                groups.append([tok])
    if current is not None:
        raise ValueError(f"Imbalanced parentheses in expression: '{text}'")
    names = [n for g in groups for n in g if n != "1"]
    if len(names) != len(set(names)):
        raise ValueError(f"Indexing expression contains duplicate dimension: {text}")
    return groups


def rearrange(tensor, pattern, **axes_lengths):
    r"""Reorder, merge and split the dimensions of ``tensor`` by an einops-style pattern.

    Args:
        tensor (Tensor or sequence of Tensors): the input (a list or tuple of tensors is
            stacked first, along a new leading dimension).
        pattern (str): ``"left -> right"``: each side names the dimensions, ``(a b)``
            groups dimensions into one, ``...`` stands for any number of dimensions and
            ``1`` or ``()`` for a dimension of size 1.
        **axes_lengths: sizes of the dimensions that splitting a group needs.

    Examples::

        >>> x = ember.arange(24).reshape(2, 3, 4)
        >>> ember.func.rearrange(x, "b c w -> b w c").shape
        ember.Size([2, 4, 3])
        >>> ember.func.rearrange(x, "b c w -> b (c w)").shape
        ember.Size([2, 12])
        >>> ember.func.rearrange(x, "b (h1 h2) w -> b h1 h2 w", h1=3).shape
        ember.Size([2, 3, 1, 4])
    """
    if isinstance(tensor, (list, tuple)):
        from ember._ops.join import stack

        tensor = stack(list(tensor))
    try:
        left_s, right_s = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    if _ELLIPSIS in axes_lengths:
        raise ValueError(f"'{_ELLIPSIS}' is not an allowed axis identifier")
    for v in axes_lengths.values():
        if type(v) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(v)}")
    left, right = _parse_side(left_s), _parse_side(right_s)
    left_has = any(_ELLIPSIS in g for g in left)
    right_has = any(_ELLIPSIS in g for g in right)
    if right_has and not left_has:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern "
                         f"{pattern}")
    if any(isinstance(g, tuple) and _ELLIPSIS in g for g in left):
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    lnames = {n for g in left for n in g if n not in ("1", _ELLIPSIS)}
    rnames = {n for g in right for n in g if n not in ("1", _ELLIPSIS)}
    if lnames ^ rnames:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {lnames ^ rnames}")
    if set(axes_lengths) - lnames:
        raise ValueError(f"Identifiers not found in rearrange expression: "
                         f"{set(axes_lengths) - lnames}")

    shape = tuple(tensor.shape)
    n_fixed = len(left) - (1 if left_has else 0)
    if (left_has and len(shape) < n_fixed) or (not left_has and len(shape) != n_fixed):
        raise ValueError(f"rearrange: the pattern {pattern!r} expects "
                         f"{'at least ' if left_has else ''}{n_fixed} dimensions, the tensor "
                         f"has {len(shape)}")
    n_ell = len(shape) - n_fixed
    ell_names = [f"{_ELLIPSIS}{i}" for i in range(n_ell)]
    sizes, elementary = {}, []
    dim = 0
    for g in left:
        if g == [_ELLIPSIS]:
            for name in ell_names:
                sizes[name] = shape[dim]
                elementary.append(name)
                dim += 1
            continue
        size = shape[dim]
        dim += 1
        known, unknown = 1, [n for n in g if n != "1" and n not in axes_lengths]
        for n in g:
            if n in axes_lengths:
                known *= axes_lengths[n]
        if len(unknown) > 1:
            raise ValueError(f"Could not infer sizes for {set(unknown)}")
        if unknown:
            if known == 0 or size % known:
                raise ValueError(f"Shape mismatch, can't divide axis of length {size} in chunks "
                                 f"of {known}")
            sizes[unknown[0]] = size // known
        elif known != size:
            raise ValueError(f"Shape mismatch, {known} != {size}")
        for n in g:
            if n != "1":
                sizes.setdefault(n, axes_lengths.get(n))
                elementary.append(n)
    x = tensor.reshape(tuple(sizes[n] for n in elementary))
    order = [e for g in right for n in g if n != "1"
             for e in (ell_names if n == _ELLIPSIS else [n])]
    x = x.permute(*[elementary.index(n) for n in order])
    out_shape = []
    for g in right:
        if g == [_ELLIPSIS]:
            out_shape.extend(sizes[n] for n in ell_names)
            continue
        size = 1
        for n in g:
            if n == _ELLIPSIS:
                for e in ell_names:
                    size *= sizes[e]
            elif n != "1":
                size *= sizes[n]
        out_shape.append(size)
    return x.reshape(tuple(out_shape))
