"""OpInfos for the copying forms of the view ops (``t_copy``, ...), the scatters
(``diagonal_scatter``, ``select_scatter``, ``slice_scatter``, ``as_strided_scatter``) and
the other ops of ``ember._ops.view_copy``. The copy forms share the samples of their views
(one table, as the ops are derived from one table)."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import OpInfo, SampleInput, XFail, arr
from ember.testing._opinfo.shape import _narrow_ref, _np_split_sizes, _s, _split_ref, _unfold_ref

_SOME = (np.float32, np.float64, np.int64, np.bool_)


def _t(name):
    return lambda torch: getattr(torch, name)


def _as_strided_ref(x, size, stride, offset=0):
    flat = np.ascontiguousarray(x).reshape(-1)
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:], size, [s * item for s in stride])


def _slice_ref(x, dim=0, start=None, end=None, step=1):
    idx = [slice(None)] * x.ndim
    idx[dim] = slice(start, end, step)
    return x[tuple(idx)]


def _squeeze_ref(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(d % x.ndim for d in dims if x.shape[d] == 1)
    return np.squeeze(x, dims) if dims else x


def _complex_parts(o):
    if isinstance(o, ember.Tensor):
        return ember.view_as_real(o) if o.is_complex() else o
    if type(o).__module__.startswith("torch"):
        import torch

        return torch.view_as_real(o) if o.is_complex() else o
    o = np.asarray(o)
    return np.stack([o.real, o.imag], -1) if np.iscomplexobj(o) else o


# name, samples, NumPy reference, dtypes
_COPIES = [
    ("alias_copy", _s(((3, 4), ()), ((), ())), lambda x: x, _SOME),
    ("as_strided_copy", _s(((3, 4), ((2, 2), (1, 2))), ((3, 4), ((3,), (4,), 1))),
     _as_strided_ref, _SOME),
    ("diagonal_copy", _s(((3, 4), ()), ((3, 4), (1,)), ((2, 3, 4), (0, 1, 2))),
     lambda x, *a: np.diagonal(x, *a), _SOME),
    ("expand_copy", _s(((3, 1), ((3, 4),)), ((2,), ((2, 3, 2),))),
     lambda x, size: np.broadcast_to(x, size), _SOME),
    ("narrow_copy", _s(((4, 5), (0, 1, 2)), ((4, 5), (1, -3, 2))), _narrow_ref, _SOME),
    ("permute_copy", _s(((2, 3, 4), ((2, 0, 1),))), lambda x, d: np.transpose(x, d), _SOME),
    ("select_copy", _s(((3, 4), (0, 1)), ((3, 4), (1, -1))),
     lambda x, d, i: np.take(x, i, axis=d), _SOME),
    ("slice_copy", _s(((5, 4), ()), ((5, 4), (1, 1, None, 2)), ((5, 4), (0, -3, 4))),
     _slice_ref, _SOME),
    ("split_copy", _s(((5, 4), (2,)), ((5, 4), (3, 1))), _split_ref, _SOME),
    ("split_with_sizes_copy", _s(((5, 4), ([1, 4],)), ((5, 4), ([2, 2], 1))),
     lambda x, s, d=0: _np_split_sizes(x, s, d), _SOME),
    ("squeeze_copy", _s(((1, 3, 1), ()), ((1, 3, 1), (0,)), ((1, 3, 1), ((0, 2),))),
     _squeeze_ref, _SOME),
    ("t_copy", _s(((3, 4), ()), ((3,), ())), lambda x: x.T, _SOME),
    ("transpose_copy", _s(((2, 3, 4), (0, 2)),), lambda x, a, b: np.swapaxes(x, a, b), _SOME),
    ("unbind_copy", _s(((3, 4), ()), ((3, 4), (1,))),
     lambda x, d=0: tuple(np.moveaxis(x, d, 0)), _SOME),
    ("unfold_copy", _s(((2, 7), (1, 3, 2)), ((6, 2), (0, 6, 1))), _unfold_ref, _SOME),
    ("unsqueeze_copy", _s(((3, 4), (1,)), ((3, 4), (-1,))),
     lambda x, d: np.expand_dims(x, d), _SOME),
    ("view_copy", _s(((3, 4), ((4, 3),)), ((3, 4), ((2, -1),))),
     lambda x, s: x.reshape(s), _SOME),
    ("view_as_complex_copy", _s(((3, 2), ()), ((2, 4, 2), ())),
     lambda x: x[..., 0] + 1j * x[..., 1], (np.float32, np.float64)),
]


# as_strided reads the storage and view_as_complex needs a unit last stride: both run on
# contiguous values, so that the generic non-contiguous test compares like with like
_CONTIGUOUS = ("as_strided_copy", "view_as_complex_copy")


def _copy_info(name, samples, ref, dtypes):
    op, torch_op = getattr(ember, name), _t(name)
    if name in _CONTIGUOUS:
        op = _on_contiguous(op)
        torch_op = lambda torch, n=name: _on_contiguous(getattr(torch, n))  # noqa: E731
    xfails = (XFail("test_gradients_match_torch", "torch 2.13 cannot differentiate "
                    "view_as_complex_copy (complex outputs); ember's gradient is gradchecked"),
              ) if name == "view_as_complex_copy" else ()
    return OpInfo(name, op, samples, ref=ref, dtypes=dtypes, torch_op=torch_op,
                  output_process=_complex_parts if "complex" in name else None,
                  xfails=xfails)


def _on_contiguous(fn):
    return lambda x, *a: fn(x.contiguous(), *a)


def _real_samples(dtype, rng):
    for shape in [(3,), (2, 2)]:
        yield SampleInput(arr(rng, shape, dtype), (arr(rng, shape, dtype),))


def _scatter_samples(cases):
    """samples for ops ``f(input, src, *args)``: (input shape, src shape, args)."""
    def samples(dtype, rng):
        for shape, src_shape, args in cases:
            yield SampleInput(arr(rng, shape, dtype), (arr(rng, src_shape, dtype), *args))
    return samples


def _diagonal_scatter_ref(x, src, offset=0, d1=0, d2=1):
    out = x.copy()
    view = np.diagonal(out, offset, d1, d2)
    view.setflags(write=True)
    view[...] = src
    return out


def _select_scatter_ref(x, src, dim, index):
    out = x.copy()
    idx = [slice(None)] * x.ndim
    idx[dim] = index
    out[tuple(idx)] = src
    return out


def _slice_scatter_ref(x, src, dim=0, start=None, end=None, step=1):
    out = x.copy()
    idx = [slice(None)] * x.ndim
    idx[dim] = slice(start, end, step)
    out[tuple(idx)] = src
    return out


def _as_strided_scatter_ref(x, src, size, stride, offset=0):
    out = np.ascontiguousarray(x).copy()
    flat = out.reshape(-1)
    pos = np.full(size, offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride, strict=True)):
        pos += (np.arange(n) * s).reshape((n,) + (1,) * (len(size) - d - 1))
    flat[pos] = src
    return out


def _nonzero_static_ref(x, size, fill_value=-1):
    idx = np.argwhere(x)
    out = np.full((size, x.ndim), fill_value, dtype=np.int64)
    n = min(size, len(idx))
    out[:n] = idx[:n]
    return out


def _as_strided_inplace(x, size, stride, offset=None):
    y = x.clone()
    return ember.as_strided_(y, size, stride, offset)


def _detach_inplace(x):
    return ember.detach_(x.clone())


OPS = [_copy_info(*entry) for entry in _COPIES] + [
    OpInfo("view_as_real_copy", lambda re, im: ember.view_as_real_copy(ember.complex(re, im)),
           _real_samples, ref=lambda re, im: np.stack([re, im], -1),
           torch_op=lambda torch: lambda re, im: torch.view_as_real_copy(torch.complex(re, im))),
    OpInfo("detach_copy", ember.detach_copy, _s(((3, 4), ())), ref=lambda x: x,
           dtypes=_SOME, differentiable=False, torch_op=_t("detach_copy")),
    OpInfo("diagonal_scatter", ember.diagonal_scatter,
           _scatter_samples([((3, 3), (3,), ()), ((3, 4), (3,), (1,)), ((3, 4), (2,), (-1,)),
                             ((2, 3, 4), (3, 2), (0, 0, 2))]),
           ref=_diagonal_scatter_ref, dtypes=_SOME, torch_op=_t("diagonal_scatter"),
           method="diagonal_scatter", gradgrad=True),
    OpInfo("select_scatter", ember.select_scatter,
           _scatter_samples([((3, 4), (4,), (0, 1)), ((3, 4), (3,), (1, -1)),
                             ((2, 3, 2), (2, 2), (1, 2))]),
           ref=_select_scatter_ref, dtypes=_SOME, torch_op=_t("select_scatter"),
           method="select_scatter", gradgrad=True),
    OpInfo("slice_scatter", ember.slice_scatter,
           _scatter_samples([((5, 4), (5, 4), ()), ((5, 4), (5, 2), (1, 1, None, 2)),
                             ((8,), (2,), (0, -2)), ((5, 4), (2, 4), (0, 1, 3))]),
           ref=_slice_scatter_ref, dtypes=_SOME, torch_op=_t("slice_scatter"),
           method="slice_scatter", gradgrad=True),
    OpInfo("as_strided_scatter", ember.as_strided_scatter,
           _scatter_samples([((3, 4), (2, 2), ((2, 2), (1, 2))),
                             ((3, 4), (3,), ((3,), (4,), 1))]),
           ref=_as_strided_scatter_ref, dtypes=_SOME, torch_op=_t("as_strided_scatter"),
           method="as_strided_scatter",
           xfails=(XFail("test_gradients_match_torch", "torch 2.13's gradient of "
                         "as_strided_scatter for self keeps the scattered positions instead "
                         "of zeroing them; ember's is gradchecked against finite "
                         "differences"),)),
    OpInfo("unsafe_split", ember.unsafe_split, _s(((5, 4), (2,)), ((5, 4), (3, 1))),
           ref=_split_ref, dtypes=_SOME, torch_op=_t("unsafe_split"), method="unsafe_split"),
    OpInfo("unsafe_split_with_sizes", ember.unsafe_split_with_sizes,
           _s(((5, 4), ([1, 4],)), ((5, 4), ([2, 2], 1))),
           ref=lambda x, s, d=0: _np_split_sizes(x, s, d), dtypes=_SOME,
           torch_op=_t("unsafe_split_with_sizes"), method="unsafe_split_with_sizes"),
    OpInfo("unsafe_chunk", ember.unsafe_chunk, _s(((5, 4), (2,)), ((6,), (4,))),
           ref=lambda x, c, d=0: _split_ref(x, -(-x.shape[d] // c), d), dtypes=_SOME,
           torch_op=_t("unsafe_chunk"), method="unsafe_chunk"),
    # slice_inverse of a slice of x, given x's geometry: x again (a view of its storage)
    OpInfo("slice_inverse", lambda x, d, a, b: ember.slice_inverse(
               x.narrow(d, a, b - a), x, d, a, b),
           _s(((4, 5), (1, 1, 3)), ((6,), (0, 2, 6)), ((3, 4, 2), (2, 0, 2))),
           ref=lambda x, d, a, b: x, differentiable=False,  # storage aliasing: no gradcheck
           torch_op=lambda torch: lambda x, d, a, b: torch.slice_inverse(
               x.narrow(d, a, b - a), x, d, a, b)),
    OpInfo("nonzero_static", lambda x, size, fill_value=-1:
           ember.nonzero_static(x, size=size, fill_value=fill_value),
           _s(((3, 4), (5,)), ((3, 4), (20,)), ((6,), (2, 9)), ((0,), (2,))),
           ref=_nonzero_static_ref, dtypes=_SOME, differentiable=False,
           torch_op=lambda torch: lambda x, size, fill_value=-1:
           torch.nonzero_static(x, size=size, fill_value=fill_value)),
    OpInfo("as_strided_", _as_strided_inplace,
           _s(((3, 4), ((2, 2), (1, 2))), ((3, 4), ((3,), (4,), 1))), ref=_as_strided_ref,
           dtypes=_SOME, differentiable=False,
           torch_op=lambda torch: lambda x, *a: torch.as_strided_(x.clone(), *a)),
    OpInfo("detach", ember.detach, _s(((3, 4), ())), ref=lambda x: x, dtypes=_SOME,
           differentiable=False, torch_op=_t("detach")),
    OpInfo("detach_", _detach_inplace, _s(((3, 4), ())), ref=lambda x: x, dtypes=_SOME,
           differentiable=False,
           torch_op=lambda torch: lambda x: torch.detach_(x.clone())),
    OpInfo("fill", lambda x, v: ember.fill(x, v), _s(((3, 4), (2.5,)), ((0,), (1,))),
           ref=lambda x, v: np.full_like(x, v), dtypes=(np.float32, np.float64, np.int64),
           torch_op=_t("fill")),
    OpInfo("index_put__toplevel", lambda x, i, v: ember.index_put_(x.clone(), (i,), v),
           lambda dtype, rng: iter([SampleInput(arr(rng, (4, 3), dtype),
                                                (np.array([0, 2]), arr(rng, (2, 3), dtype)))]),
           ref=lambda x, i, v: _put_ref(x, i, v), dtypes=(np.float32, np.float64),
           torch_op=lambda torch: lambda x, i, v: torch.index_put_(x.clone(), (i,), v)),
]


def _put_ref(x, i, v):
    out = x.copy()
    out[i] = v
    return out
