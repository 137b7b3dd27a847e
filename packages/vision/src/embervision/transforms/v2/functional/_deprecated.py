"""Functionals kept from v1 for compatibility."""

from __future__ import annotations

import warnings

from embervision.transforms._functional_conversion import to_tensor as _to_tensor
from embervision.transforms.v2.functional._meta import get_size

__all__ = ["get_image_size", "to_tensor"]


def to_tensor(inpt):
    """Deprecated: use ``v2.functional.to_image`` and ``v2.functional.to_dtype`` instead."""
    warnings.warn("The function `to_tensor(...)` is deprecated and will be removed in a future "
                  "release. Instead, please use `to_image(...)` followed by "
                  "`to_dtype(..., dtype=torch.float32, scale=True)`.", stacklevel=2)
    return _to_tensor(inpt)


def get_image_size(inpt) -> list:
    """Deprecated: ``[width, height]``; use ``get_size`` (``[height, width]``) instead."""
    warnings.warn("The function `get_image_size(...)` is deprecated and will be removed in a "
                  "future release. Instead, please use `get_size(...)` which returns "
                  "`[h, w]` instead of `[w, h]`.", stacklevel=2)
    h, w = get_size(inpt)
    return [w, h]
