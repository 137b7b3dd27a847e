"""Converters of the creation ops (``zeros``, ``full``, ``arange``, ``*_like``, ``triu``)
and of indexing (``x[...]``, ``gather``, ``index_select``)."""

from __future__ import annotations

import builtins

import numpy as np

from ember.onnx._builder import Value, onnx_type
from ember.onnx._context import converts
from ember.onnx._ops_tensor import INT64_MAX, _norm_dim, _np_dtype, add

__all__: list = []


# -- creation ----------------------------------------------------------------------------------

def _creation_dtype(dtype, fill=None):
    if dtype is not None:
        return _np_dtype(dtype)
    if isinstance(fill, bool):
        return np.dtype(np.bool_)
    if isinstance(fill, int):
        return np.dtype(np.int64)
    import ember

    return ember.get_default_dtype().numpy


def _filled(ctx, shape_parts, value, dtype):
    import onnx

    target = ctx.shape_vector(shape_parts)
    tensor = onnx.helper.make_tensor("value", onnx_type(dtype), [1],
                                     [np.asarray(value, dtype=dtype).item()])
    return ctx.op("ConstantOfShape", [target], value=tensor, dtype=dtype)


def _size_parts(size):
    if builtins.len(size) == 1 and isinstance(size[0], tuple | list):
        return tuple(size[0])
    return tuple(size)


@converts("ember.zeros")
def zeros(ctx, *size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    return _filled(ctx, _size_parts(size), 0, _creation_dtype(dtype))


@converts("ember.ones")
def ones(ctx, *size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    return _filled(ctx, _size_parts(size), 1, _creation_dtype(dtype))


@converts("ember.full")
def full(ctx, size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    dtype = _creation_dtype(dtype, fill_value)
    if isinstance(fill_value, Value):
        return ctx.op("Expand", [ctx.cast(fill_value, dtype), ctx.shape_vector(tuple(size))],
                      dtype=dtype)
    return _filled(ctx, tuple(size), fill_value, dtype)


def _like(value):
    def convert(ctx, input, *, dtype=None, layout=None, device=None, requires_grad=False,
                memory_format=None):
        x = ctx.tensor(input)
        dt = _np_dtype(dtype) if dtype is not None else x.dtype
        return _filled(ctx, ctx.sizes(x), value, dt)

    return convert


converts("ember.zeros_like")(_like(0))
converts("ember.ones_like")(_like(1))


@converts("ember.full_like")
def full_like(ctx, input, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    x = ctx.tensor(input)
    dt = _np_dtype(dtype) if dtype is not None else x.dtype
    return _filled(ctx, ctx.sizes(x), fill_value, dt)


@converts(methods=("new_zeros", "new_ones"))
def new_zeros(ctx, input, *size, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    x = ctx.tensor(input)
    dt = _np_dtype(dtype) if dtype is not None else x.dtype
    fill = 1 if ctx.node is not None and ctx.node.target == "new_ones" else 0
    return _filled(ctx, _size_parts(size), fill, dt)


@converts("ember.arange")
def arange(ctx, start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any((isinstance(v, float)) or (isinstance(v, Value) and v.dtype.kind == "f")
                       for v in (start, end, step))
        dt = _creation_dtype(None, 0.0) if is_float else np.dtype(np.int64)
    else:
        dt = _np_dtype(dtype)
    vals = [ctx.b.cast(ctx.tensor(v), dt) if isinstance(v, Value) else
            ctx.b.constant(np.asarray(v, dtype=dt)) for v in (start, end, step)]
    vals = [ctx.b.squeeze(v, [0]) if v.rank == 1 else v for v in vals]
    return ctx.op("Range", vals, dtype=dt, shape=(None,))


def _trilu(upper):
    def convert(ctx, input, diagonal=0, *, out=None):
        x = ctx.tensor(input)
        k = ctx.b.cast(ctx.tensor(diagonal), np.int64)
        return ctx.op("Trilu", [x, k], upper=int(upper), dtype=x.dtype, shape=x.shape)

    return convert


converts("ember.triu", methods=("triu",))(_trilu(True))
converts("ember.tril", methods=("tril",))(_trilu(False))


# -- indexing -------------------------------------------------------------------------------

@converts("ember.gather", methods=("gather",))
def gather(ctx, input, dim, index, *, sparse_grad=False, out=None):
    x = ctx.tensor(input)
    return ctx.op("GatherElements", [x, ctx.cast(index, np.int64)], axis=_norm_dim(dim, x.rank),
                  dtype=x.dtype)


@converts("ember.index_select", methods=("index_select",))
def index_select(ctx, input, dim, index, *, out=None):
    x = ctx.tensor(input)
    return ctx.op("Gather", [x, ctx.cast(index, np.int64)], axis=_norm_dim(dim, x.rank),
                  dtype=x.dtype)


@converts("operator.getitem")
def getitem(ctx, obj, index):
    import ember

    if isinstance(obj, ember.Tensor):
        obj = ctx.tensor(obj)
    if not isinstance(obj, Value):
        if isinstance(index, Value):
            raise ctx.fail("indexing a Python sequence with a tensor")
        return obj[index]
    return _index_tensor(ctx, obj, index)


def _is_ember_tensor(x) -> bool:
    import ember

    return isinstance(x, ember.Tensor)


def _index_tensor(ctx, x, index):
    items = list(index) if isinstance(index, tuple) else [index]
    n_real = builtins.sum(1 for i in items if i is not None and i is not Ellipsis)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = [slice(None)] * (x.rank - n_real)
    items += [slice(None)] * (x.rank - builtins.sum(1 for i in items if i is not None))
    starts, ends, axes, steps = [], [], [], []
    squeeze_axes, new_axes, tensor_index = [], [], None
    in_dim, out_dim = 0, 0
    for it in items:
        if it is None:
            new_axes.append(out_dim)
            out_dim += 1
            continue
        if isinstance(it, slice):
            if not (it.start is None and it.stop is None and it.step in (None, 1)):
                step = 1 if it.step is None else it.step
                if isinstance(step, int) and step <= 0:
                    raise ValueError("step must be greater than zero")
                starts.append(0 if it.start is None else it.start)
                ends.append(INT64_MAX if it.stop is None else it.stop)
                axes.append(in_dim)
                steps.append(step)
            in_dim += 1
            out_dim += 1
        elif isinstance(it, int) or isinstance(it, Value) and it.rank == 0 and \
                it.dtype.kind in "iu":
            starts.append(it)
            if isinstance(it, int):
                ends.append(it + 1 if it != -1 else INT64_MAX)
            else:
                ends.append(add(ctx, it, 1))
            axes.append(in_dim)
            steps.append(1)
            squeeze_axes.append(in_dim)
            in_dim += 1
        elif isinstance(it, Value | list) or _is_ember_tensor(it):
            if tensor_index is not None:
                raise ctx.unsupported("indexing with more than one tensor index")
            tensor_index = (in_dim, out_dim, it)
            in_dim += 1
            out_dim += 1
        else:
            raise ctx.unsupported(f"indexing with {builtins.type(it).__name__}")
    if in_dim != x.rank:
        raise IndexError(f"too many indices for tensor of dimension {x.rank}")
    y = x
    if axes:
        y = ctx.op("Slice", [y, ctx.shape_vector(starts), ctx.shape_vector(ends),
                             ctx.b.ints(axes), ctx.b.ints(steps)], dtype=x.dtype)
    if tensor_index is not None:
        axis, _, idx = tensor_index
        iv = ctx.tensor(idx)
        if iv.dtype.kind == "b":
            raise ctx.unsupported("indexing with a boolean mask (a data-dependent shape)")
        y = ctx.op("Gather", [y, ctx.b.cast(iv, np.int64)], axis=axis, dtype=x.dtype)
        extra = (iv.rank or 1) - 1
        squeeze_axes = [a if a < axis else a + extra for a in squeeze_axes]
    if squeeze_axes:
        y = ctx.b.squeeze(y, squeeze_axes)
    if new_axes:
        y = ctx.b.unsqueeze(y, new_axes)
    return y if y is not x else ctx.op("Identity", [x])

