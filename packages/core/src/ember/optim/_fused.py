"""Where an optimizer's update of one parameter runs.

NOTE [ Fused optimizer updates ]
Each optimizer's math exists twice, side by side in its file: a compiled kernel in
``ember._C._optim`` that updates a parameter and its state in one pass, without
temporaries and without the GIL, and an array-level version written with the array
module's operations (``xp``), which runs on any backend. ``update`` sends a parameter to
the kernel when the kernel can take its arrays as they are: NumPy arrays of float32 or
float64 (complex ones through their real view, which is how PyTorch updates complex
parameters), the parameter and its state C-contiguous. Everything else (CuPy arrays,
float16, a non-contiguous parameter) takes the array-level path. Both paths update the
arrays in place and bump the tensors' version counters, as PyTorch's in-place ops do.
"""

from __future__ import annotations

import numpy as np

from ember._backend import backend_of
from ember._C._core import check_inplace_overlap

# Kernel dtype for each dtype the kernels take (complex: their real view).
_KERNEL_DTYPE = {
    np.dtype(np.float32): np.dtype(np.float32),
    np.dtype(np.float64): np.dtype(np.float64),
    np.dtype(np.complex64): np.dtype(np.float32),
    np.dtype(np.complex128): np.dtype(np.float64),
}


def _flat(array, real_dtype):
    flat = array.reshape(-1)
    return flat if flat.dtype == real_dtype else flat.view(real_dtype)


def _kernel_arrays(p, g, buffers):
    """Flat real views of the arrays for the compiled kernel, or None if it cannot take
    them as they are."""
    if type(p) is not np.ndarray or type(g) is not np.ndarray:
        return None
    real = _KERNEL_DTYPE.get(p.dtype)
    if real is None or g.dtype != p.dtype or not p.flags.c_contiguous \
            or not p.flags.writeable:
        return None
    for b in buffers:
        if b is not None and (type(b) is not np.ndarray or b.dtype != p.dtype
                              or not b.flags.c_contiguous or not b.flags.writeable):
            return None
    if not g.flags.c_contiguous:
        g = np.ascontiguousarray(g)  # read only: a copy is enough
    return (_flat(p, real), _flat(g, real),
            *[None if b is None else _flat(b, real) for b in buffers])


def _real_parts(p, g, buffers):
    """The arrays once, or for complex ones their real parts and then their imaginary
    parts (views): every update treats them as independent real numbers."""
    if p.dtype.kind != "c":
        return [(p, g, *buffers)]
    return [(p.real, g.real, *[None if b is None else b.real for b in buffers]),
            (p.imag, g.imag, *[None if b is None else b.imag for b in buffers])]


def update(kernel, fallback, param, grad, buffers, *scalars) -> None:
    """Update ``param`` (a Tensor) and its state ``buffers`` (Tensors, or None for the
    ones the options leave out) in place from ``grad``.

    ``kernel(p, g, *buffers, *scalars)`` is the compiled update on flat arrays;
    ``fallback(xp, p, g, *buffers, *scalars)`` the same math on arrays of any backend.
    """
    p = param._data
    check_inplace_overlap(p, ())  # an expanded parameter: PyTorch's error
    g = grad._data
    arrays = [None if b is None else b._data for b in buffers]
    for b in arrays:
        if b is not None and b.shape != p.shape:
            raise RuntimeError(f"optimizer state of shape {tuple(b.shape)} does not match "
                               f"the parameter's shape {tuple(p.shape)}")
    if g.shape != p.shape:
        raise RuntimeError(f"the gradient's shape {tuple(g.shape)} does not match the "
                           f"parameter's shape {tuple(p.shape)}")
    flat = _kernel_arrays(p, g, arrays)
    if flat is not None:
        kernel(*flat, *scalars)
    else:
        xp = backend_of(p).xp
        for parts in _real_parts(p, g, arrays):
            fallback(xp, *parts, *scalars)
    param._bump_version()
    for b in buffers:
        if b is not None:
            b._bump_version()


def lerp_(xp, start, end, weight: float) -> None:
    """``start.lerp_(end, weight)`` on arrays, with PyTorch's formula."""
    if abs(weight) < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)
