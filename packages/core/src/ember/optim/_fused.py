"""Where an optimizer's update of one parameter runs.

NOTE [ Fused optimizer updates ]
Each optimizer's math exists twice, side by side in its file: a compiled kernel in
``ember._C._optim`` that updates a parameter and its state in one pass, without
temporaries and without the GIL, and an array-level version written with the array
module's operations (``xp``), which runs on any backend. Both are kernels by name
(``adam_step``, ...): the optimizer registers its array-level one here (:func:`register`),
the CPU backend the compiled one (``ember._backend._cpu_kernels``), which takes the arrays
as they are: NumPy arrays of float32 or float64 (complex ones through their real view,
which is how PyTorch updates complex parameters), the parameter and its state
C-contiguous. Everything else (CuPy arrays, float16, a non-contiguous parameter) takes the
array-level kernel. Both paths update the
arrays in place and bump the tensors' version counters, as PyTorch's in-place ops do.
"""

from __future__ import annotations

from ember._backend import backend_of, register_kernel
from ember._C._core import check_inplace_overlap

__all__ = ["update", "register", "lerp_"]


def _real_parts(p, g, buffers):
    """The arrays once, or for complex ones their real parts and then their imaginary
    parts (views): every update treats them as independent real numbers."""
    if p.dtype.kind != "c":
        return [(p, g, *buffers)]
    return [(p.real, g.real, *[None if b is None else b.real for b in buffers]),
            (p.imag, g.imag, *[None if b is None else b.imag for b in buffers])]


def register(name: str, math) -> None:
    """Register an optimizer's array-level update ``math(xp, p, g, *buffers, *scalars)`` as
    kernel ``{name}_step`` for any device; the CPU backend registers the compiled one."""
    def step(p, g, buffers, *scalars):
        xp = backend_of(p).xp
        for parts in _real_parts(p, g, buffers):
            math(xp, *parts, *scalars)

    step.__name__ = f"{name}_step"
    register_kernel(f"{name}_step", "any", step)


def update(name, param, grad, buffers, *scalars) -> None:
    """Update ``param`` (a Tensor) and its state ``buffers`` (Tensors, or None for the
    ones the options leave out) in place from ``grad``, with kernel ``{name}_step`` of
    the parameter's device: ``kernel(p, g, buffers, *scalars)`` on arrays.
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
    backend_of(p).kernel(f"{name}_step", p)(p, g, arrays, *scalars)
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
