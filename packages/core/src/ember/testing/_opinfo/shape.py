"""OpInfos for shape ops and views: view, reshape, permute, expand, split, cat, flip, ..."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import ALL_REAL, OpInfo, SampleInput, arr

_SOME = (np.float32, np.float64, np.int64, np.bool_)


def _s(*cases):
    """samples(dtype, rng) for ``cases`` of (shape, args) or (shape, args, kwargs)."""
    def samples(dtype, rng):
        for case in cases:
            shape, args = case[0], case[1]
            kwargs = case[2] if len(case) > 2 else {}
            yield SampleInput(arr(rng, shape, dtype), args, dict(kwargs))
    return samples


def _t(name):
    return lambda torch: getattr(torch, name)


def _m(name):
    """The Tensor method ``name`` as a function of (self, *args, **kwargs)."""
    return lambda x, *a, **k: getattr(x, name)(*a, **k)


def _tm(name):
    return lambda torch: _m(name)


def _np_split_sizes(x, sizes, dim):
    bounds = np.cumsum([0] + list(sizes))
    return [np.take(x, np.arange(a, b), axis=dim) for a, b in zip(bounds[:-1], bounds[1:],
                                                                   strict=True)]


def _split_ref(x, size_or_sizes, dim=0):
    n = x.shape[dim]
    if isinstance(size_or_sizes, (list, tuple)):
        return _np_split_sizes(x, size_or_sizes, dim)
    sizes = [min(size_or_sizes, n - s) for s in range(0, n, size_or_sizes)]
    return _np_split_sizes(x, sizes, dim)


def _chunk_ref(x, chunks, dim=0):
    step = -(-x.shape[dim] // chunks)
    return _split_ref(x, step, dim)


def _tensor_split_ref(x, arg, dim=0):
    return np.array_split(x, arg, axis=dim) if isinstance(arg, int) else \
        np.split(x, list(arg), axis=dim)


def _unsqueeze_ref(x, d):
    return np.expand_dims(x, d)


def _squeeze_ref(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = (dim,) if isinstance(dim, int) else dim
    dims = tuple(d for d in dims if x.ndim and x.shape[d] == 1)
    return np.squeeze(x, dims) if dims else x


def _flatten_ref(x, start=0, end=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start % x.ndim, end % x.ndim
    return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:])


def _unflatten_ref(x, dim, sizes):
    d = dim % x.ndim
    return x.reshape(x.shape[:d] + tuple(sizes) + x.shape[d + 1:])


def _t_ref(x):
    return x.T


def _expand_ref(x, *sizes):
    if isinstance(sizes[0], tuple):
        sizes = sizes[0]
    lead = len(sizes) - x.ndim
    return np.broadcast_to(x, tuple(x.shape[i - lead] if v == -1 else v
                                    for i, v in enumerate(sizes)))


def _repeat_ref(x, *sizes):
    return np.tile(x, sizes)


def _tile_ref(x, dims):
    return np.tile(x, dims)


def _narrow_ref(x, dim, start, length):
    start = start % x.shape[dim] if start < 0 else start
    return np.take(x, np.arange(start, start + length), axis=dim)


def _select_ref(x, dim, index):
    return np.take(x, index, axis=dim)


def _diag_ref(x, k=0):
    return np.diag(x, k)


def _diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    n = x.ndim + 1
    d1, d2 = dim1 % n, dim2 % n
    m = x.shape[-1] + abs(offset)
    shape = list(x.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, m)
    out = np.zeros(shape, x.dtype)
    view = np.diagonal(out, offset, d1, d2)
    view.flags.writeable = True
    view[...] = x
    return out


def _unfold_ref(x, dim, size, step):
    dim %= x.ndim
    w = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim)
    return np.take(w, np.arange(0, w.shape[dim], step), axis=dim)


def _roll_ref(x, shifts, dims=None):
    return np.roll(x, shifts, axis=dims)


def _column_stack_ref(ts):
    return np.column_stack(ts)


def _atleast_ref(fn):
    def ref(*xs):
        r = fn(*xs)
        if isinstance(r, list):
            return tuple(r)
        return r
    return ref


def _atleast_samples(dtype, rng):
    for shape in [(), (3,), (2, 3), (2, 3, 2)]:
        yield SampleInput(arr(rng, shape, dtype))
    yield SampleInput(arr(rng, (), dtype), (arr(rng, (3,), dtype), arr(rng, (2, 2), dtype)),
                      name="several")


def _cat_samples(dtype, rng):
    a = arr(rng, (2, 3), dtype)
    yield SampleInput([a, arr(rng, (4, 3), dtype)])
    yield SampleInput([a, arr(rng, (2, 1), dtype), arr(rng, (2, 2), dtype)], (1,))
    yield SampleInput([a, arr(rng, (2, 5), dtype)], (-1,))
    yield SampleInput([arr(rng, (2, 3, 2), dtype)], (2,), name="one tensor")
    yield SampleInput([a, np.zeros((0,), dtype)], name="legacy empty 1-d skipped")
    yield SampleInput([a, np.zeros((0, 3), dtype)], name="empty")


def _stack_samples(dtype, rng):
    yield SampleInput([arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype)])
    yield SampleInput([arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype)], (2,))
    yield SampleInput([arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype)], (-2,))
    yield SampleInput([arr(rng, (), dtype), arr(rng, (), dtype)], name="0-d")


def _xstack_samples(dtype, rng):
    yield SampleInput([arr(rng, (3,), dtype), arr(rng, (3,), dtype)], name="1-d")
    yield SampleInput([arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype)], name="2-d")
    yield SampleInput([arr(rng, (2, 3, 2), dtype), arr(rng, (2, 3, 2), dtype)], name="3-d")


def _column_stack_samples(dtype, rng):
    yield SampleInput([arr(rng, (3,), dtype), arr(rng, (3, 2), dtype)])
    yield SampleInput([arr(rng, (), dtype), arr(rng, (1,), dtype)])


def _broadcast_tensors_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 1), dtype), (arr(rng, (4,), dtype),))
    yield SampleInput(arr(rng, (), dtype), (arr(rng, (2, 3), dtype), arr(rng, (1, 3), dtype)))


OPS = [
    # view and reshape
    OpInfo("view", _m("view"), _s(((3, 4), (12,)), ((3, 4), (2, -1)), ((3, 4), ((4, 3),)),
                                  ((), (1,)), ((2, 0), (0, 5)), ((3, 4), (3, 2, 2))),
           ref=lambda x, *s: x.reshape(*s), dtypes=_SOME, torch_op=_tm("view")),
    OpInfo("view_as", _m("view_as"),
           lambda d, r: [SampleInput(arr(r, (3, 4), d), (np.zeros((2, 6), np.int64),))],
           ref=lambda x, o: x.reshape(o.shape), torch_op=_tm("view_as")),
    OpInfo("reshape", ember.reshape, _s(((3, 4), ((12,),)), ((3, 4), ((2, -1),)),
                                        ((2, 3, 2), ((-1,),)), ((), ((1, 1),)),
                                        ((0, 3), ((3, 0),))),
           ref=lambda x, s: x.reshape(s), dtypes=_SOME, torch_op=_t("reshape"),
           method="reshape"),
    OpInfo("reshape_as", _m("reshape_as"),
           lambda d, r: [SampleInput(arr(r, (3, 4), d), (np.zeros((6, 2), np.int64),))],
           ref=lambda x, o: x.reshape(o.shape), torch_op=_tm("reshape_as")),
    OpInfo("flatten", ember.flatten, _s(((2, 3, 4), ()), ((2, 3, 4), (1,)), ((2, 3, 4), (0, 1)),
                                        ((2, 3, 4), (-2, -1)), ((), ()), ((3,), ()),
                                        ((2, 3), (1, 1))),
           ref=_flatten_ref, dtypes=_SOME, torch_op=_t("flatten"), method="flatten"),
    OpInfo("unflatten", ember.unflatten, _s(((2, 6), (1, (2, 3))), ((2, 6), (-1, (3, -1))),
                                            ((6,), (0, (1, 6, 1)))),
           ref=_unflatten_ref, torch_op=_t("unflatten"), method="unflatten"),
    OpInfo("ravel", ember.ravel, _s(((2, 3), ()), ((), ()), ((2, 3, 2), ())),
           ref=np.ravel, torch_op=_t("ravel"), method="ravel"),
    OpInfo("squeeze", ember.squeeze, _s(((1, 3, 1), ()), ((1, 3, 1), (0,)), ((1, 3, 1), (1,)),
                                        ((1, 3, 1), (-1,)), ((1, 3, 1), ((0, 2),)), ((), ()),
                                        ((), (0,)), ((2, 1, 1), ((-1, -2),))),
           ref=_squeeze_ref, dtypes=_SOME, torch_op=_t("squeeze"), method="squeeze"),
    OpInfo("unsqueeze", ember.unsqueeze, _s(((3, 4), (0,)), ((3, 4), (2,)), ((3, 4), (-1,)),
                                            ((3, 4), (-3,)), ((), (0,))),
           ref=_unsqueeze_ref, dtypes=_SOME, torch_op=_t("unsqueeze"), method="unsqueeze"),
    OpInfo("atleast_1d", ember.atleast_1d, _atleast_samples, ref=_atleast_ref(np.atleast_1d),
           torch_op=_t("atleast_1d")),
    OpInfo("atleast_2d", ember.atleast_2d, _atleast_samples, ref=_atleast_ref(np.atleast_2d),
           torch_op=_t("atleast_2d")),
    OpInfo("atleast_3d", ember.atleast_3d, _atleast_samples, ref=_atleast_ref(np.atleast_3d),
           torch_op=_t("atleast_3d")),
    # permutations
    OpInfo("permute", ember.permute, _s(((2, 3, 4), ((2, 0, 1),)), ((2, 3, 4), ((-1, 0, 1),)),
                                        ((), ((),)), ((3, 4), ((1, 0),))),
           ref=lambda x, d: np.transpose(x, d), dtypes=_SOME, torch_op=_t("permute"),
           method="permute"),
    OpInfo("permute_varargs", _m("permute"), _s(((2, 3, 4), (2, 0, 1))),
           ref=lambda x, *d: np.transpose(x, d), torch_op=_tm("permute")),
    OpInfo("transpose", ember.transpose, _s(((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, 1)),
                                            ((3,), (0, 0)), ((), (0, -1))),
           ref=lambda x, a, b: np.swapaxes(x, a, b) if x.ndim else x, dtypes=_SOME,
           torch_op=_t("transpose"), method="transpose"),
    OpInfo("swapaxes", ember.swapaxes, _s(((2, 3, 4), (0, 2))), ref=np.swapaxes,
           torch_op=_t("swapaxes"), method="swapaxes"),
    OpInfo("swapdims", ember.swapdims, _s(((2, 3, 4), (1, 2))), ref=np.swapaxes,
           torch_op=_t("swapdims"), method="swapdims"),
    OpInfo("t", ember.t, _s(((3, 4), ()), ((3,), ()), ((), ())), ref=_t_ref, dtypes=_SOME,
           torch_op=_t("t"), method="t"),
    OpInfo("movedim", ember.movedim, _s(((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, 0)),
                                        ((2, 3, 4), ((0, 1), (2, 0))),
                                        ((2, 3, 4, 5), ((3, 0), (1, 2)))),
           ref=np.moveaxis, torch_op=_t("movedim"), method="movedim"),
    OpInfo("moveaxis", ember.moveaxis, _s(((2, 3, 4), (0, -1))), ref=np.moveaxis,
           torch_op=_t("moveaxis"), method="moveaxis"),
    # broadcasting
    OpInfo("expand", _m("expand"), _s(((3, 1), (3, 4)), ((3, 1), (2, 3, 4)), ((3, 1), (-1, 5)),
                                      ((), (2, 2)), ((3, 1), ((2, 3, 1),)), ((4,), (0, 4))),
           ref=_expand_ref,
           dtypes=_SOME, torch_op=_tm("expand")),
    OpInfo("expand_as", _m("expand_as"),
           lambda d, r: [SampleInput(arr(r, (3, 1), d), (np.zeros((2, 3, 4), np.int64),))],
           ref=lambda x, o: np.broadcast_to(x, o.shape), torch_op=_tm("expand_as")),
    OpInfo("broadcast_to", ember.broadcast_to, _s(((3, 1), ((3, 4),)), ((), ((2,),)),
                                                  ((1, 2), ((3, -1),))),
           ref=lambda x, s: np.broadcast_to(x, tuple(2 if v == -1 else v for v in s)),
           torch_op=_t("broadcast_to"), method="broadcast_to"),
    OpInfo("broadcast_tensors", ember.broadcast_tensors, _broadcast_tensors_samples,
           ref=lambda *xs: tuple(np.broadcast_arrays(*xs)), torch_op=_t("broadcast_tensors")),
    OpInfo("repeat", _m("repeat"), _s(((2, 3), (2, 1)), ((2, 3), (1, 2, 3)), ((3,), (2,)),
                                      ((), (3, 2)), ((2, 3), ((2, 2),)), ((2, 3), (0, 1))),
           ref=lambda x, *s: np.tile(x, s[0] if isinstance(s[0], tuple) else s), dtypes=_SOME,
           torch_op=_tm("repeat")),
    OpInfo("tile", ember.tile, _s(((2, 3), ((2,),)), ((2, 3), ((2, 1, 2),)), ((), ((3,),))),
           ref=_tile_ref, torch_op=_t("tile"), method="tile"),
    # slicing
    OpInfo("narrow", ember.narrow, _s(((4, 5), (0, 1, 2)), ((4, 5), (1, -3, 2)),
                                      ((4, 5), (-1, 0, 5)), ((4, 5), (0, 4, 0))),
           ref=_narrow_ref, dtypes=_SOME, torch_op=_t("narrow"), method="narrow"),
    OpInfo("select", ember.select, _s(((4, 5), (0, 1)), ((4, 5), (1, -1)), ((3,), (0, 2))),
           ref=_select_ref, dtypes=_SOME, torch_op=_t("select"), method="select"),
    OpInfo("unbind", ember.unbind, _s(((3, 4), ()), ((3, 4), (1,)), ((2, 3, 2), (-1,))),
           ref=lambda x, d=0: tuple(np.moveaxis(x, d, 0)), dtypes=_SOME,
           torch_op=_t("unbind"), method="unbind"),
    OpInfo("split", ember.split, _s(((5, 4), (2,)), ((5, 4), (3, 1)), ((5, 4), ([1, 4, 0],)),
                                    ((5, 4), ([2, 2], -1)), ((5, 4), (5,)), ((5, 4), (7,))),
           ref=_split_ref, dtypes=_SOME, torch_op=_t("split"), method="split"),
    OpInfo("split_with_sizes", _m("split_with_sizes"), _s(((5, 4), ([1, 4],)),
                                                          ((5, 4), ([2, 2], 1))),
           ref=lambda x, s, d=0: _np_split_sizes(x, s, d), torch_op=_tm("split_with_sizes")),
    OpInfo("chunk", ember.chunk, _s(((5, 4), (2,)), ((5, 4), (3, 1)), ((6,), (4,)),
                                    ((5, 4), (9,))),
           ref=_chunk_ref, dtypes=_SOME, torch_op=_t("chunk"), method="chunk"),
    OpInfo("tensor_split", ember.tensor_split, _s(((7, 4), (3,)), ((7, 4), (3, 1)),
                                                  ((7, 4), ([1, 5],)), ((7, 4), ([1, 5], -1)),
                                                  ((7,), ([2, 2, 9],))),
           ref=_tensor_split_ref, torch_op=_t("tensor_split"), method="tensor_split"),
    OpInfo("tensor_split_overlapping", ember.tensor_split, _s(((6, 2), ([4, 2],))),
           ref=lambda x, a: [x[:4], x[4:2], x[2:]], torch_op=_t("tensor_split")),
    OpInfo("hsplit", ember.hsplit, _s(((4, 6), (3,)), ((4, 6), ([1, 4],)), ((6,), (2,))),
           ref=np.hsplit, torch_op=_t("hsplit"), method="hsplit"),
    OpInfo("vsplit", ember.vsplit, _s(((4, 6), (2,)), ((4, 6), ([1],))), ref=np.vsplit,
           torch_op=_t("vsplit"), method="vsplit"),
    OpInfo("dsplit", ember.dsplit, _s(((2, 3, 4), (2,))), ref=np.dsplit, torch_op=_t("dsplit"),
           method="dsplit"),
    # joining
    OpInfo("cat", ember.cat, _cat_samples,
           ref=lambda ts, d=0: np.concatenate([t for t in ts if t.shape != (0,)], d),
           dtypes=ALL_REAL, torch_op=_t("cat")),
    OpInfo("concat", ember.concat, _cat_samples,
           ref=lambda ts, d=0: np.concatenate([t for t in ts if t.shape != (0,)], d),
           torch_op=_t("concat")),
    OpInfo("concatenate", ember.concatenate, _cat_samples,
           ref=lambda ts, d=0: np.concatenate([t for t in ts if t.shape != (0,)], d),
           torch_op=_t("concatenate")),
    OpInfo("stack", ember.stack, _stack_samples, ref=lambda ts, d=0: np.stack(ts, d),
           dtypes=_SOME, torch_op=_t("stack")),
    OpInfo("hstack", ember.hstack, _xstack_samples, ref=np.hstack, torch_op=_t("hstack")),
    OpInfo("vstack", ember.vstack, _xstack_samples, ref=np.vstack, torch_op=_t("vstack")),
    OpInfo("row_stack", ember.row_stack, _xstack_samples, ref=np.vstack,
           torch_op=_t("vstack")),
    OpInfo("dstack", ember.dstack, _xstack_samples, ref=np.dstack, torch_op=_t("dstack")),
    OpInfo("column_stack", ember.column_stack, _column_stack_samples, ref=_column_stack_ref,
           torch_op=_t("column_stack")),
    # reordering copies
    OpInfo("flip", ember.flip, _s(((3, 4), ((0,),)), ((3, 4), ((0, 1),)), ((2, 3, 4), ((-1,),)),
                                  ((), ((),)), ((3, 4), ([],))),
           ref=lambda x, d: np.flip(x, tuple(d)) if len(d) else x, dtypes=_SOME,
           torch_op=_t("flip"), method="flip"),
    OpInfo("fliplr", ember.fliplr, _s(((3, 4), ()), ((2, 3, 4), ())), ref=np.fliplr,
           torch_op=_t("fliplr"), method="fliplr"),
    OpInfo("flipud", ember.flipud, _s(((3, 4), ()), ((3,), ())), ref=np.flipud,
           torch_op=_t("flipud"), method="flipud"),
    OpInfo("roll", ember.roll, _s(((3, 4), (1,)), ((3, 4), (-2, 1)), ((3, 4), ((1, 2), (0, 1))),
                                  ((3, 4), (5, -1)), ((), (1,))),
           ref=_roll_ref, dtypes=_SOME, torch_op=_t("roll"), method="roll"),
    # diagonals and triangles
    OpInfo("diagonal", ember.diagonal, _s(((3, 4), ()), ((3, 4), (1,)), ((3, 4), (-2,)),
                                          ((2, 3, 4), (0, 1, 2)), ((2, 3, 4), (1, -1, 0)),
                                          ((3, 4), (5,))),
           ref=lambda x, *a: np.diagonal(x, *a), dtypes=_SOME, torch_op=_t("diagonal"),
           method="diagonal"),
    OpInfo("diag", ember.diag, _s(((3,), ()), ((3,), (1,)), ((3,), (-2,)), ((3, 4), ()),
                                  ((3, 4), (2,)), ((3, 4), (-1,))),
           ref=_diag_ref, dtypes=_SOME, torch_op=_t("diag"), method="diag"),
    OpInfo("diag_embed", ember.diag_embed, _s(((2, 3), ()), ((2, 3), (1,)), ((2, 3), (-1, 0, 2)),
                                              ((3,), (0, 1, 0)), ((2, 3), (0, 2, 0))),
           ref=_diag_embed_ref, torch_op=_t("diag_embed"), method="diag_embed"),
    OpInfo("tril", ember.tril, _s(((3, 4), ()), ((3, 4), (1,)), ((2, 3, 4), (-1,)),
                                  ((0, 3), ())),
           ref=np.tril, dtypes=_SOME, torch_op=_t("tril"), method="tril"),
    OpInfo("triu", ember.triu, _s(((3, 4), ()), ((3, 4), (2,)), ((2, 3, 4), (-1,))),
           ref=np.triu, dtypes=_SOME, torch_op=_t("triu"), method="triu"),
    OpInfo("tril_", lambda x, *a: x.clone().tril_(*a), _s(((3, 4), ()), ((3, 4), (-1,))),
           ref=np.tril, torch_op=lambda torch: lambda x, *a: x.clone().tril_(*a)),
    OpInfo("triu_", lambda x, *a: x.clone().triu_(*a), _s(((3, 4), ()), ((3, 4), (1,))),
           ref=np.triu, torch_op=lambda torch: lambda x, *a: x.clone().triu_(*a)),
    # strided windows
    OpInfo("unfold", _m("unfold"), _s(((2, 7), (1, 3, 1)), ((2, 7), (1, 3, 2)),
                                      ((2, 7), (-1, 2, 3)), ((6, 2), (0, 6, 1)),
                                      ((5, 3), (0, 1, 1)), ((4, 3), (0, 0, 1))),
           ref=_unfold_ref, dtypes=_SOME, torch_op=_tm("unfold")),
]
