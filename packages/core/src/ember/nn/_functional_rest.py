"""The rest of ``torch.nn.functional``'s names: ``Tensor``, the ``__torch_function__``
queries (``has_torch_function`` & co.; ember has no ``__torch_function__`` protocol yet, so
they answer False), ``assert_int_or_pair``, ``native_channel_shuffle``, ``grouped_mm``,
``scaled_mm`` and ``scaled_grouped_mm`` with their ``ScalingType`` / ``SwizzleType`` enums.
"""

from __future__ import annotations

import enum

import numpy as np

from ember._dtype import bfloat16
from ember._tensor import Tensor

__all__ = ["Tensor", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "handle_torch_function", "assert_int_or_pair",
           "native_channel_shuffle", "ScalingType", "SwizzleType", "grouped_mm", "scaled_mm",
           "scaled_grouped_mm"]


def has_torch_function(relevant_args) -> bool:
    """Whether any of ``relevant_args`` overrides ``__torch_function__``: False (ember has no
    ``__torch_function__`` protocol yet)."""
    return False


def has_torch_function_unary(obj) -> bool:
    """:func:`has_torch_function` of one argument: False."""
    return False


def has_torch_function_variadic(*args) -> bool:
    """:func:`has_torch_function` of the arguments: False."""
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Dispatch ``public_api`` to the ``__torch_function__`` of ``relevant_args``. ember has
    no ``__torch_function__`` protocol (:func:`has_torch_function` is always False, so code
    following PyTorch's pattern never gets here): this raises a ``RuntimeError``."""
    raise RuntimeError(f"handle_torch_function({getattr(public_api, '__name__', public_api)}): "
                       "ember has no __torch_function__ protocol, so there is no override to "
                       "dispatch to (has_torch_function is always False in ember)")


def assert_int_or_pair(arg, arg_name: str, message: str) -> None:
    """Raise ``AssertionError(message.format(arg_name))`` unless ``arg`` is an int or has
    two elements."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def native_channel_shuffle(input, groups: int):
    """:func:`channel_shuffle` (PyTorch's native kernel of it)."""
    from ember.nn._functional.misc import channel_shuffle

    return channel_shuffle(input, groups)


class ScalingType(enum.IntEnum):
    """How :func:`scaled_mm` applies a scale: one for the tensor, one per row, or per block."""

    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(enum.IntEnum):
    """The memory layout of block scales (:func:`scaled_mm`)."""

    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


def _offsets(offs, length, what):
    if offs is None:
        raise RuntimeError(f"grouped_mm: offs is required when {what} is 2D")
    ends = [int(v) for v in offs.tolist()]
    if any(b < a for a, b in zip([0] + ends, ends)) or (ends and ends[-1] > length):
        raise RuntimeError(f"grouped_mm: offs must be non-decreasing and at most {length}")
    return list(zip([0] + ends[:-1], ends))


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Matrix products of groups, as in Mixture-of-Experts layers.

    - ``mat_a`` 3D ``(G, M, K)``, ``mat_b`` 3D ``(G, K, N)``: ``(G, M, N)`` (``offs`` None);
    - ``mat_a`` 2D ``(T, K)``, ``mat_b`` 3D ``(G, K, N)``: rows ``offs[g-1]:offs[g]`` of
      ``mat_a`` times ``mat_b[g]``, ``(T, N)``;
    - ``mat_a`` 3D ``(G, M, K)``, ``mat_b`` 2D ``(K, T)``: ``mat_a[g]`` times columns
      ``offs[g-1]:offs[g]`` of ``mat_b``, ``(M, T)``;
    - both 2D, ``(M, T)`` and ``(T, N)``: the shared dimension split by ``offs``,
      ``(G, M, N)``.

    Rows (columns) past ``offs[-1]`` are left zero. ``bias`` is added to each group's
    result; ``out_dtype`` is the result's dtype. Differentiable.

    Args:
        mat_a (Tensor): left operand, 2D or 3D.
        mat_b (Tensor): right operand, 2D or 3D.
        offs (Tensor, optional): 1D int32 ends of the groups of a 2D operand.
        bias (Tensor, optional): added to the grouped results.
        out_dtype (ember.dtype, optional): the result's dtype.
    """
    from ember._ops.creation import zeros
    from ember._ops.join import cat, stack

    da, db = mat_a.dim(), mat_b.dim()
    if da not in (2, 3) or db not in (2, 3):
        raise RuntimeError(f"grouped_mm: mat_a and mat_b must be 2D or 3D, got {da}D and "
                           f"{db}D")
    if mat_a.shape[-1] != mat_b.shape[-2] and not (da == 2 and db == 2):
        raise RuntimeError(f"grouped_mm: contraction dimensions differ: {mat_a.shape[-1]} "
                           f"and {mat_b.shape[-2]}")
    if da == 3 and db == 3:
        if offs is not None:
            raise RuntimeError("grouped_mm: offs must be None when both operands are 3D")
        out = mat_a @ mat_b
    elif da == 2 and db == 3:
        spans = _offsets(offs, mat_a.shape[0], "mat_a")
        pieces = [mat_a[s:e] @ mat_b[g] for g, (s, e) in enumerate(spans)]
        rest = mat_a.shape[0] - (spans[-1][1] if spans else 0)
        pieces.append(zeros(rest, mat_b.shape[-1], dtype=mat_a.dtype, device=mat_a.device))
        out = cat(pieces, 0)
    elif da == 3 and db == 2:
        spans = _offsets(offs, mat_b.shape[1], "mat_b")
        pieces = [mat_a[g] @ mat_b[:, s:e] for g, (s, e) in enumerate(spans)]
        rest = mat_b.shape[1] - (spans[-1][1] if spans else 0)
        pieces.append(zeros(mat_a.shape[1], rest, dtype=mat_a.dtype, device=mat_a.device))
        out = cat(pieces, 1)
    else:
        if mat_a.shape[1] != mat_b.shape[0]:
            raise RuntimeError(f"grouped_mm: contraction dimensions differ: {mat_a.shape[1]} "
                               f"and {mat_b.shape[0]}")
        spans = _offsets(offs, mat_a.shape[1], "mat_a")
        out = stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in spans], 0)
    if bias is not None:
        out = out + bias
    return out if out_dtype is None else out.to(out_dtype)


def _scale(mat, scale, recipe, rows):
    recipe = ScalingType(recipe[0] if isinstance(recipe, (list, tuple)) else recipe)
    scale = scale[0] if isinstance(scale, (list, tuple)) else scale
    if recipe is ScalingType.TensorWise:
        if scale.numel() != 1:
            raise RuntimeError("scaled_mm: a TensorWise scale has one element")
        return scale.float().reshape(())
    if recipe is ScalingType.RowWise:
        n = mat.shape[0] if rows else mat.shape[1]
        if scale.numel() != n:
            raise RuntimeError(f"scaled_mm: a RowWise scale has {n} elements, got "
                               f"{scale.numel()}")
        return scale.float().reshape(n, 1) if rows else scale.float().reshape(1, n)
    raise RuntimeError(f"scaled_mm: ember supports the TensorWise and RowWise recipes, not "
                       f"{recipe.name} (block scales of MX/NV formats)")


def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None,
              swizzle_b=None, bias=None, output_dtype=bfloat16, contraction_dim=(),
              use_fast_accum=False):
    """``(mat_a * scale_a) @ (mat_b * scale_b) + bias`` of low-precision (float8) operands,
    computed in float32 and returned as ``output_dtype`` (bfloat16 by default).

    ember supports the ``TensorWise`` (one scale) and ``RowWise`` (a scale per row of
    ``mat_a`` and per column of ``mat_b``) recipes; block-wise recipes raise.

    Args:
        mat_a (Tensor): ``(M, K)``.
        mat_b (Tensor): ``(K, N)``.
        scale_a, scale_b (Tensor): the dequantization scales (float32).
        scale_recipe_a, scale_recipe_b (ScalingType): how each scale applies.
        swizzle_a, swizzle_b (SwizzleType, optional): layouts of block scales (unused by
            the recipes ember supports; ``NO_SWIZZLE``).
        bias (Tensor, optional): added to the result.
        output_dtype (ember.dtype): the result's dtype (default ``ember.bfloat16``).
        contraction_dim (tuple): must be empty (the last dim of ``mat_a``, first of
            ``mat_b``).
        use_fast_accum (bool): accepted; ember accumulates in float32.
    """
    if output_dtype is None:
        output_dtype = bfloat16
    if mat_a.dim() != 2 or mat_b.dim() != 2:
        raise RuntimeError("scaled_mm: mat_a and mat_b must be matrices")
    if tuple(contraction_dim) not in ((), (1, 0)):
        raise RuntimeError("scaled_mm: contraction_dim must be the last dim of mat_a and the "
                           "first of mat_b")
    if mat_a.shape[1] != mat_b.shape[0]:
        raise RuntimeError(f"scaled_mm: mat_a and mat_b shapes cannot be multiplied "
                           f"({mat_a.shape[0]}x{mat_a.shape[1]} and "
                           f"{mat_b.shape[0]}x{mat_b.shape[1]})")
    a = mat_a.float() * _scale(mat_a, scale_a, scale_recipe_a, True)
    b = mat_b.float() * _scale(mat_b, scale_b, scale_recipe_b, False)
    out = a @ b
    if bias is not None:
        out = out + bias.float()
    return out.to(output_dtype)


def _group_scale(mat, scale, recipe, side):
    recipe = ScalingType(recipe[0] if isinstance(recipe, (list, tuple)) else recipe)
    scale = scale[0] if isinstance(scale, (list, tuple)) else scale
    if recipe is ScalingType.TensorWise:
        if scale.numel() != 1:
            raise RuntimeError("scaled_grouped_mm: a TensorWise scale has one element")
        return scale.float().reshape(())
    if recipe is not ScalingType.RowWise:
        raise RuntimeError(f"scaled_grouped_mm: ember supports the TensorWise and RowWise "
                           f"recipes, not {recipe.name}")
    # RowWise: one scale per row of mat_a / per column of mat_b (per group for 3D)
    shape = mat.shape[:-1] if side == "a" else mat.shape[:-2] + mat.shape[-1:]
    if scale.numel() != int(np.prod(shape)):
        raise RuntimeError(f"scaled_grouped_mm: a RowWise scale of mat_{side} has "
                           f"{int(np.prod(shape))} elements, got {scale.numel()}")
    s = scale.float().reshape(shape)
    return s.unsqueeze(-1) if side == "a" else s.unsqueeze(-2)


def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b,
                      swizzle_a=None, swizzle_b=None, bias=None, offs=None,
                      output_dtype=bfloat16, contraction_dim=(), use_fast_accum=False):
    """:func:`grouped_mm` of scaled low-precision operands: ``grouped_mm(mat_a * scale_a,
    mat_b * scale_b, offs=offs) + bias`` in float32, returned as ``output_dtype``.

    The recipes are :func:`scaled_mm`'s ``TensorWise`` (one scale) and ``RowWise`` (a scale
    per row of ``mat_a`` and per column of ``mat_b``, per group for a 3D operand); ember
    supports those two. The other arguments are :func:`grouped_mm`'s and :func:`scaled_mm`'s.
    """
    if tuple(contraction_dim) not in ((), (1, 0), (-1, -2)):
        raise RuntimeError("scaled_grouped_mm: contraction_dim must be the last dim of mat_a "
                           "and the second to last of mat_b")
    a = mat_a.float() * _group_scale(mat_a, scale_a, scale_recipe_a, "a")
    b = mat_b.float() * _group_scale(mat_b, scale_b, scale_recipe_b, "b")
    out = grouped_mm(a, b, offs=offs, bias=None if bias is None else bias.float())
    return out.to(bfloat16 if output_dtype is None else output_dtype)
