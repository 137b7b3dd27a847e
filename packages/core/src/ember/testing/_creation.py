"""``make_tensor``: a tensor of a given shape and dtype filled with random values."""

from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._ops import random as _random
from ember._ops.creation import tensor


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` and ``dtype`` with values drawn uniformly from [low, high).

    Defaults: [-9, 9) for floats and signed ints, [0, 10) for uint8, {False, True} for
    bool. ``exclude_zero`` replaces zeros by a small non-zero value; ``noncontiguous``
    returns a non-contiguous view holding the same values. The values come from the
    default generator (``ember.manual_seed`` makes them reproducible).
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    d = _dtype.as_dtype(dtype)
    rng = _random.default_generator._rng
    if d is _dtype.bool:
        arr = rng.integers(0, 2, size=shape).astype(np.bool_)
    elif d.is_floating_point or d.is_complex:
        lo = -9.0 if low is None else low
        hi = 9.0 if high is None else high
        arr = rng.uniform(lo, hi, size=shape)
        if d.is_complex:
            arr = arr + 1j * rng.uniform(lo, hi, size=shape)
        if exclude_zero:
            arr[arr == 0] = np.finfo(d.to_real().numpy).tiny
        arr = arr.astype(d.numpy)
    else:
        info = np.iinfo(d.numpy)
        lo = max(info.min, -9 if low is None else int(low)) if d is not _dtype.uint8 else \
            (0 if low is None else int(low))
        hi = min(info.max, 10 if high is None else int(high))
        arr = rng.integers(lo, max(hi, lo + 1), size=shape).astype(d.numpy)
        if exclude_zero:
            arr[arr == 0] = 1
    if noncontiguous and arr.size > 1:
        big = np.repeat(arr[..., None], 2, axis=-1)
        t = tensor(big, device=device)[..., 0]
    else:
        t = tensor(arr, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t
