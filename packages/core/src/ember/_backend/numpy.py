"""The CPU backend: NumPy arrays and ember's compiled CPU kernels."""

from __future__ import annotations

import numpy as np

from ember._backend._base import Backend
from ember._C import _kernels
from ember._device import CPU


def _to_device(array, index=None):
    return np.asarray(array)


def _index_add_rows(out, index, src, alpha=1.0):
    if out.dtype in (np.float32, np.float64) and out.flags.c_contiguous:
        return _kernels.index_add_rows(out, index, src, alpha)
    _kernels.check_indices(np.asarray(index).reshape(-1), out.shape[0])
    np.add.at(out, index, alpha * src if alpha != 1 else src)
    return out


backend = Backend(
    name="cpu",
    xp=np,
    device_of=lambda array: CPU,
    to_device=_to_device,
    to_numpy=lambda array: array,
    kernels={"index_add_rows": _index_add_rows},
)
