"""Memory formats: which order a tensor's dims have in memory.

NOTE [ Memory formats ]
A tensor's array has strides, so the channels-last layouts that PyTorch programs ask for
(``x.to(memory_format=torch.channels_last)``, ``model.to(memory_format=...)``) are real:
the array is an NHWC (NDHWC) buffer seen as NCHW (NCDHW) through a transpose, its values
and shape unchanged, and ``is_contiguous(memory_format=...)``, ``stride()`` and
``contiguous(memory_format=...)`` answer as PyTorch's. NumPy's elementwise ufuncs keep
their input's layout, so a channels-last tensor stays channels-last through them; ops
built on other kernels (convolution, pooling) return row-major results where PyTorch's
would keep channels-last: the values are the same, the strides are not.
``preserve_format`` (the default of ``clone`` and the ``*_like`` constructors) keeps a
channels-last layout and otherwise makes a row-major copy; PyTorch also keeps any other
dense layout (a transposed matrix's clone is transposed there, row-major here). NumPy
gives empty arrays zero strides, so an empty tensor is contiguous in every format of its
rank, and NumPy's ufuncs may give a dim of size 1 another stride than PyTorch's (no element
is reached through it; the is_contiguous answers agree).
"""

from __future__ import annotations

from ember._misc import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)

# per format: its rank, the dims from innermost to outermost, and the permutation from
# the logical order (N, C, spatial...) to the buffer's order (N, spatial..., C)
_LAST = {
    channels_last: (4, (1, 3, 2, 0), (0, 2, 3, 1)),
    channels_last_3d: (5, (1, 4, 3, 2, 0), (0, 2, 3, 4, 1)),
}


def check_format(fmt, fn: str):
    """``fmt`` if it is a memory format (None: contiguous_format), else PyTorch's error."""
    if fmt is None:
        return contiguous_format
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(fmt).__name__}")
    return fmt


def _element_strides(a):
    item = a.dtype.itemsize
    return tuple(s // item for s in a.strides)


def is_contiguous_as(a, fmt) -> bool:
    """Whether array ``a`` is contiguous in memory format ``fmt`` (PyTorch's rule: dims of
    size 1 may have any stride)."""
    if fmt is contiguous_format or fmt is preserve_format:  # preserve: as PyTorch's
        return bool(a.flags.c_contiguous)
    rank, inner_to_outer, _ = _LAST[fmt]
    if a.ndim != rank:
        return False
    if a.size == 0:  # NumPy gives empty arrays zero strides: dense in every order
        return True
    strides = _element_strides(a)
    expected = 1
    for d in inner_to_outer:
        if a.shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= a.shape[d]
    return True


def _strides_say_last(shape, strides, inner_to_outer) -> bool:
    """PyTorch's reading of channels-last from strides (``is_channels_last_strides_2d``):
    the strides grow along C, then the spatial dims from the last, then N; where dims of
    size 1 make the order ambiguous, the row-major reading wins."""
    if strides[1] == 0:
        return False
    low = 0
    for d in inner_to_outer:
        if shape[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:
            return False  # N111-like: row-major
        low = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return True


def suggested_format(a):
    """The format PyTorch reads from ``a``'s strides (``suggest_memory_format``):
    channels-last where they say so, else row-major; what ``preserve_format`` copies take
    and what ``to(memory_format=...)`` compares with (NOTE [ Memory formats ])."""
    for fmt, (rank, inner_to_outer, _) in _LAST.items():
        if a.ndim == rank and a.size and _strides_say_last(a.shape, _element_strides(a),
                                                          inner_to_outer):
            return fmt
    return contiguous_format


def copy_as(xp, a, fmt):
    """A new array with ``a``'s values laid out in format ``fmt``."""
    if fmt is preserve_format:
        fmt = suggested_format(a)
    if fmt is contiguous_format:
        return a.copy()
    out = empty_as(xp, a.shape, a.dtype, fmt)
    out[...] = a
    return out


def empty_as(xp, shape, dtype, fmt):
    """An uninitialized array of ``shape`` in format ``fmt`` (not preserve_format)."""
    if fmt is contiguous_format:
        return xp.empty(shape, dtype)
    rank, _, perm = _LAST[fmt]
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    inverse = tuple(perm.index(i) for i in range(rank))
    return xp.empty(tuple(shape[p] for p in perm), dtype).transpose(inverse)


def relaid(t, fmt, like=None):
    """``t``, a new tensor, with its array laid out in ``fmt`` (``preserve_format``: the
    layout ``like``'s array suggests); the constructors' ``memory_format``."""
    if fmt is preserve_format:
        fmt = suggested_format(like._data) if like is not None else contiguous_format
    if fmt is not contiguous_format:
        from ember._backend import backend_of

        t._data = copy_as(backend_of(t._data).xp, t._data, fmt)
    return t
