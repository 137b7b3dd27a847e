"""OpInfos for ember.nn.functional's convolutions, pooling and fold/unfold.

The NumPy references are written tap by tap: for each kernel offset a strided slice of
the padded input, so a reference is a few lines of slicing and einsum whatever the
dimension (1-d, 2-d, 3-d), and independent of the im2col/Winograd/pooling kernels.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

import ember
import ember.nn.functional as F
from ember.testing._opinfo.core import OpInfo, SampleInput, arr


def _F(name):
    return lambda torch: getattr(torch.nn.functional, name)


def _tup(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _taps(kernel):
    return itertools.product(*(range(k) for k in kernel))


def _window(a, start, dil, stride, out, nd):
    """The strided slice ``a[..., start_i + dil_i * t : ... : stride_i]`` of ``out`` items
    over the last ``nd`` axes."""
    idx = tuple(slice(s, s + st * (o - 1) + 1, st) if o > 0 else slice(0, 0)
                for s, st, o in zip(start, stride, out))
    return a[(Ellipsis,) + idx]


# ---------------------------------------------------------------------------------------
# convolution

def _conv_pads(padding, kernel, dilation, nd):
    if padding == "valid":
        return [(0, 0)] * nd
    if padding == "same":
        tot = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return [(t // 2, t - t // 2) for t in tot]
    return [(p, p) for p in _tup(padding, nd)]


def _conv_ref(nd):
    def ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
        x64, w64 = np.asarray(x, np.float64), np.asarray(w, np.float64)
        stride, dilation = _tup(stride, nd), _tup(dilation, nd)
        kernel = w.shape[2:]
        pads = _conv_pads(padding, kernel, dilation, nd)
        xp = np.pad(x64, [(0, 0), (0, 0)] + pads)
        out = [(xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
               for i in range(nd)]
        n, cin = x.shape[:2]
        cout = w.shape[0]
        wg = w64.reshape((groups, cout // groups) + w.shape[1:])
        y = np.zeros((n, groups, cout // groups) + tuple(out))
        for tap in _taps(kernel):
            xs = _window(xp, [t * d for t, d in zip(tap, dilation)], dilation, stride, out, nd)
            xs = xs.reshape((n, groups, cin // groups) + tuple(out))
            wt = wg[(Ellipsis,) + tap]  # (G, Cout/G, Cin/G)
            y += np.einsum("ngc...,goc->ngo...", xs, wt)
        y = y.reshape((n, cout) + tuple(out))
        if b is not None:
            y += np.asarray(b, np.float64).reshape((1, cout) + (1,) * nd)
        return y.astype(x.dtype)
    return ref


def _conv_samples(nd):
    sp = {1: (7,), 2: (5, 4), 3: (3, 3, 4)}[nd]
    k = {1: (3,), 2: (3, 2), 3: (2, 2, 3)}[nd]

    def samples(dtype, rng):
        def w(cout, cin_g, kern=k):
            return arr(rng, (cout, cin_g) + kern, dtype, -1, 1)
        n = 1 if nd == 3 else 2  # (3-d gradchecks cost the most)
        yield SampleInput(arr(rng, (n, 4) + sp, dtype), (w(3, 4), arr(rng, (3,), dtype)),
                          name="bias")
        yield SampleInput(arr(rng, (n, 4) + sp, dtype), (w(2, 4),),
                          {"stride": 2, "padding": 1}, name="stride padding")
        yield SampleInput(arr(rng, (1, 4) + sp, dtype), (w(4, 2), None),
                          {"groups": 2, "dilation": 2 if nd == 1 else (1,) * (nd - 1) + (2,),
                           "padding": (1,) * nd}, name="groups dilation")
        yield SampleInput(arr(rng, (1, 4) + sp, dtype), (w(4, 1),),
                          {"groups": 4, "padding": "same"}, name="depthwise same")
        yield SampleInput(arr(rng, (1, 2) + sp, dtype), (w(2, 2),), {"padding": "valid",
                                                                      "stride": (1,) * nd})
        if nd == 2:
            yield SampleInput(arr(rng, (2, 3, 6, 6), dtype), (w(4, 3, (3, 3)),
                                                              arr(rng, (4,), dtype)),
                              {"padding": 1}, name="3x3 (Winograd)")
            yield SampleInput(arr(rng, (1, 2, 5, 5), dtype), (w(2, 2, (2, 2)),),
                              {"padding": "same", "dilation": 2}, name="same even kernel")
        # an unbatched input (C, *spatial)
        yield SampleInput(arr(rng, (4,) + sp, dtype), (w(3, 4),), grad=nd < 3,
                          name="unbatched")
    return samples


def _unbatched(ref, nd):
    """``ref`` accepting an input without the batch dim, as PyTorch's conv and pool do."""
    def wrapped(x, *args, **kwargs):
        if x.ndim == nd + 1:
            out = ref(x[None], *args, **kwargs)
            return tuple(o[0] for o in out) if isinstance(out, tuple) else out[0]
        return ref(x, *args, **kwargs)
    return wrapped


def _conv_t_ref(nd):
    def ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        x64, w64 = np.asarray(x, np.float64), np.asarray(w, np.float64)
        stride, padding = _tup(stride, nd), _tup(padding, nd)
        output_padding, dilation = _tup(output_padding, nd), _tup(dilation, nd)
        n, cin = x.shape[:2]
        ins = x.shape[2:]
        kernel = w.shape[2:]
        cout = w.shape[1] * groups
        full = [(i - 1) * s + d * (k - 1) + 1 + op
                for i, s, d, k, op in zip(ins, stride, dilation, kernel, output_padding)]
        y = np.zeros((n, groups, cout // groups) + tuple(full))
        xg = x64.reshape((n, groups, cin // groups) + ins)
        wg = w64.reshape((groups, cin // groups) + w.shape[1:])
        for tap in _taps(kernel):
            idx = tuple(slice(t * d, t * d + s * (i - 1) + 1, s)
                        for t, d, s, i in zip(tap, dilation, stride, ins))
            y[(Ellipsis,) + idx] += np.einsum("ngc...,gco->ngo...", xg,
                                              wg[(Ellipsis,) + tap])
        outs = [f - 2 * p for f, p in zip(full, padding)]
        crop = tuple(slice(p, p + o) for p, o in zip(padding, outs))
        y = y.reshape((n, cout) + tuple(full))[(Ellipsis,) + crop]
        if b is not None:
            y = y + np.asarray(b, np.float64).reshape((1, cout) + (1,) * nd)
        return y.astype(x.dtype)
    return ref


def _conv_t_samples(nd):
    sp = {1: (4,), 2: (3, 4), 3: (2, 3, 2)}[nd]
    k = {1: (3,), 2: (2, 3), 3: (2, 2, 2)}[nd]

    def samples(dtype, rng):
        def w(cin, cout_g):
            return arr(rng, (cin, cout_g) + k, dtype, -1, 1)
        yield SampleInput(arr(rng, (2, 4) + sp, dtype), (w(4, 3), arr(rng, (3,), dtype)))
        yield SampleInput(arr(rng, (2, 4) + sp, dtype), (w(4, 2),),
                          {"stride": 2, "padding": 1, "output_padding": 1})
        yield SampleInput(arr(rng, (1, 4) + sp, dtype), (w(4, 1), None),
                          {"groups": 2, "dilation": 2, "stride": (1,) * (nd - 1) + (2,)})
        yield SampleInput(arr(rng, (4,) + sp, dtype), (w(4, 2),), {"stride": 3},
                          name="unbatched")
    return samples


def _empty_batch_samples(nd, transpose, bias):
    sp = {1: (4,), 2: (3, 4), 3: (2, 3, 2)}[nd]

    def samples(dtype, rng):
        shape = (4, 2) if transpose else (2, 4)
        b = (arr(rng, (shape[transpose],), dtype),) if bias else ()
        yield SampleInput(arr(rng, (0, 4) + sp, dtype), (arr(rng, shape + (2,) * nd, dtype),)
                          + b)
    return samples


# The empty-batch entries found two bugs, fixed since (issue 16): the weight gradient was
# uninitialized memory, and conv_transpose with a bias failed to reshape.


def _conv_ops():
    ops = []
    for nd in (1, 2, 3):
        ops.append(OpInfo(f"conv{nd}d", getattr(F, f"conv{nd}d"), _conv_samples(nd),
                          ref=_unbatched(_conv_ref(nd), nd), torch_op=_F(f"conv{nd}d"),
                          rtol=1e-4, atol=1e-5))
        ops.append(OpInfo(f"conv_transpose{nd}d", getattr(F, f"conv_transpose{nd}d"),
                          _conv_t_samples(nd), ref=_unbatched(_conv_t_ref(nd), nd),
                          torch_op=_F(f"conv_transpose{nd}d"), rtol=1e-4, atol=1e-5))
        for t, name in ((False, f"conv{nd}d"), (True, f"conv_transpose{nd}d")):
            ref = _conv_t_ref(nd) if t else _conv_ref(nd)
            ops.append(OpInfo(f"{name}_empty_batch", getattr(F, name),
                              _empty_batch_samples(nd, t, not t), ref=ref,
                              torch_op=_F(name)))
    ops.append(OpInfo("conv_transpose2d_empty_batch_bias", F.conv_transpose2d,
                      _empty_batch_samples(2, True, True), ref=_conv_t_ref(2),
                      torch_op=_F("conv_transpose2d")))
    return ops


# ---------------------------------------------------------------------------------------
# pooling

def _pool_out(length, k, s, p, d, ceil_mode):
    eff = d * (k - 1) + 1
    num = length + 2 * p - eff
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= length + p:
        out -= 1
    return out


def _pool_windows(x, nd, kernel, stride, padding, dilation, ceil_mode, fill):
    """(taps (..., *out, K) of the padded input, flat input index of each tap or -1,
    count of each tap inside input+padding, count inside the input), the taps on the
    last axis."""
    kernel = _tup(kernel, nd)
    stride = kernel if stride is None or stride == [] else _tup(stride, nd)
    padding, dilation = _tup(padding, nd), _tup(dilation, nd)
    sp = x.shape[-nd:]
    out = [_pool_out(sp[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
           for i in range(nd)]
    # enough room on the right for the last (ceil-mode) window
    right = [max(0, (o - 1) * s + d * (k - 1) + 1 - (n + p))
             for o, s, d, k, n, p in zip(out, stride, dilation, kernel, sp, padding)]
    lead = [(0, 0)] * (x.ndim - nd)
    pads = lead + [(p, r) for p, r in zip(padding, right)]
    xp = np.pad(np.asarray(x, np.float64), pads, constant_values=fill)
    index = np.pad(np.arange(math.prod(sp)).reshape(sp), pads[-nd:], constant_values=-1)
    inside_pad = np.pad(np.ones(tuple(n + 2 * p for n, p in zip(sp, padding))),
                        [(0, r - p) if r >= p else (0, 0) for p, r in zip(padding, right)])
    inside_pad = inside_pad[tuple(slice(0, n) for n in index.shape)]
    vals, idxs, cpad, cin = [], [], [], []
    for tap in _taps(kernel):
        start = [t * d for t, d in zip(tap, dilation)]
        vals.append(_window(xp, start, dilation, stride, out, nd))
        ii = _window(index, start, dilation, stride, out, nd)
        idxs.append(ii)
        cpad.append(_window(inside_pad, start, dilation, stride, out, nd))
        cin.append(ii >= 0)
    return (np.stack(vals, -1), np.stack(idxs, -1), np.stack(cpad, -1).sum(-1),
            np.stack(cin, -1).sum(-1))


def _max_pool_ref(nd):
    def ref(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
            return_indices=False):
        vals, idxs, _, _ = _pool_windows(x, nd, kernel_size, stride, padding, dilation,
                                         ceil_mode, -np.inf)
        arg = np.argmax(vals, axis=-1)
        v = np.take_along_axis(vals, arg[..., None], -1)[..., 0].astype(x.dtype)
        if return_indices:
            i = np.take_along_axis(np.broadcast_to(idxs, vals.shape), arg[..., None], -1)
            return v, i[..., 0].astype(np.int64)
        return v
    return ref


def _avg_pool_ref(nd):
    def ref(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
            divisor_override=None):
        vals, _, cpad, cin = _pool_windows(x, nd, kernel_size, stride, padding, 1,
                                           ceil_mode, 0.0)
        div = divisor_override or (cpad if count_include_pad else cin)
        return (vals.sum(-1) / div).astype(x.dtype)
    return ref


def _lp_pool_ref(nd):
    def ref(x, norm_type, kernel_size, stride=None, ceil_mode=False):
        vals, _, _, _ = _pool_windows(x, nd, kernel_size, stride, 0, 1, ceil_mode, 0.0)
        return (np.sum(vals ** norm_type, -1) ** (1.0 / norm_type)).astype(x.dtype)
    return ref


def _spatial(nd, big=False):
    return {1: (8,), 2: (6, 5), 3: (4, 3, 4)}[nd] if not big else \
        {1: (9,), 2: (7, 7), 3: (5, 4, 3)}[nd]


def _distinct(rng, shape, dtype):
    """Values with no ties (so max pooling is differentiable everywhere)."""
    n = math.prod(shape)
    return (rng.permutation(n).reshape(shape) / max(n, 1) * 4 - 2).astype(dtype)


def _max_pool_samples(nd, indices=False):
    def samples(dtype, rng):
        extra = {"return_indices": True} if indices else {}
        sp = _spatial(nd)
        yield SampleInput(_distinct(rng, (2, 3) + sp, dtype), (2,), dict(extra))
        yield SampleInput(_distinct(rng, (2, 2) + _spatial(nd, True), dtype), (3,),
                          {"stride": 2, "padding": 1, **extra}, name="stride padding")
        yield SampleInput(_distinct(rng, (1, 2) + _spatial(nd, True), dtype), (2,),
                          {"stride": 2, "ceil_mode": True, **extra}, name="ceil_mode")
        yield SampleInput(_distinct(rng, (1, 2) + _spatial(nd, True), dtype),
                          ((2,) * (nd - 1) + (3,),),
                          {"stride": 1, "dilation": 2, "padding": 1, **extra},
                          name="dilation")
        yield SampleInput(_distinct(rng, (3,) + sp, dtype), (2,), dict(extra),
                          name="unbatched")
        yield SampleInput(np.zeros((1, 1) + sp, dtype), (2,), dict(extra), grad=False,
                          name="ties")
    return samples


def _avg_pool_samples(nd):
    def samples(dtype, rng):
        sp = _spatial(nd)
        big = _spatial(nd, True)
        yield SampleInput(arr(rng, (2, 3) + sp, dtype), (2,))
        yield SampleInput(arr(rng, (2, 2) + big, dtype), (3,), {"stride": 2, "padding": 1})
        yield SampleInput(arr(rng, (2, 2) + big, dtype), (3,),
                          {"stride": 2, "padding": 1, "count_include_pad": False})
        yield SampleInput(arr(rng, (1, 2) + big, dtype), (2,),
                          {"stride": 2, "ceil_mode": True}, name="ceil_mode")
        yield SampleInput(arr(rng, (1, 2) + big, dtype), (3,),
                          {"stride": 2, "padding": 1, "ceil_mode": True,
                           "count_include_pad": False}, name="ceil_mode no pad count")
        if nd > 1:
            yield SampleInput(arr(rng, (1, 2) + big, dtype), (3,),
                              {"stride": 2, "divisor_override": 5}, name="divisor_override")
        yield SampleInput(arr(rng, (3,) + sp, dtype), ((2,) * nd,), name="unbatched")
    return samples


def _lp_pool_samples(nd):
    def samples(dtype, rng):
        sp = _spatial(nd)
        yield SampleInput(arr(rng, (2, 3) + sp, dtype, 0.5, 2), (2.0, 2))
        yield SampleInput(arr(rng, (2, 2) + _spatial(nd, True), dtype, 0.5, 2), (3.0, 3),
                          {"stride": 2})
        # torch's lp_pool1d takes no tuple kernel_size
        yield SampleInput(arr(rng, (1, 2) + sp, dtype, 0.5, 2), (1.0, (2,) * nd if nd > 1
                                                                 else 2), {"stride": 1})
    return samples


def _adaptive_windows(x, nd, output_size):
    sp = x.shape[-nd:]
    out = [s if o is None else o for s, o in zip(sp, _tup(output_size, nd))]
    ranges = [[(i * n // o, -(-(i + 1) * n // o)) for i in range(o)] for n, o in zip(sp, out)]
    return sp, out, ranges


def _adaptive_avg_ref(nd):
    def ref(x, output_size):
        x64 = np.asarray(x, np.float64)
        sp, out, ranges = _adaptive_windows(x, nd, output_size)
        y = np.zeros(x.shape[:-nd] + tuple(out))
        for pos in itertools.product(*(range(o) for o in out)):
            sl = tuple(slice(*ranges[i][p]) for i, p in enumerate(pos))
            y[(Ellipsis,) + pos] = x64[(Ellipsis,) + sl].mean(axis=tuple(range(-nd, 0)))
        return y.astype(x.dtype)
    return ref


def _adaptive_max_ref(nd):
    def ref(x, output_size, return_indices=False):
        sp, out, ranges = _adaptive_windows(x, nd, output_size)
        flat_index = np.arange(math.prod(sp)).reshape(sp)
        lead = x.shape[:-nd]
        y = np.zeros(lead + tuple(out), x.dtype)
        ind = np.zeros(lead + tuple(out), np.int64)
        for pos in itertools.product(*(range(o) for o in out)):
            sl = tuple(slice(*ranges[i][p]) for i, p in enumerate(pos))
            win = x[(Ellipsis,) + sl].reshape(lead + (-1,))
            am = np.argmax(win, axis=-1)
            y[(Ellipsis,) + pos] = np.take_along_axis(win, am[..., None], -1)[..., 0]
            ind[(Ellipsis,) + pos] = flat_index[sl].reshape(-1)[am]
        return (y, ind) if return_indices else y
    return ref


def _adaptive_samples(nd, distinct=False, indices=False):
    def samples(dtype, rng):
        make = (lambda s: _distinct(rng, s, dtype)) if distinct else \
            (lambda s: arr(rng, s, dtype))
        extra = {"return_indices": True} if indices else {}
        sp = _spatial(nd)
        yield SampleInput(make((2, 3) + sp), (3,), dict(extra))
        yield SampleInput(make((1, 2) + sp), ((4,) * (nd - 1) + (2,),), dict(extra))
        yield SampleInput(make((1, 2) + sp), (1,), dict(extra), name="global")
        if nd > 1:
            yield SampleInput(make((1, 2) + sp), ((None,) + (2,) * (nd - 1),), dict(extra),
                              name="None size")
        yield SampleInput(make((2,) + sp), (5,), dict(extra), name="unbatched larger")
    return samples


def _max_unpool_ref(nd):
    def ref(x, indices, kernel_size, stride=None, padding=0, output_size=None):
        kernel = _tup(kernel_size, nd)
        stride = kernel if stride is None else _tup(stride, nd)
        padding = _tup(padding, nd)
        ins = x.shape[-nd:]
        if output_size is None:
            out = [(i - 1) * s - 2 * p + k for i, s, p, k in zip(ins, stride, padding, kernel)]
        else:
            out = list(output_size)[-nd:]
        lead = x.shape[:-nd]
        y = np.zeros(lead + (math.prod(out),), x.dtype)
        flat_x = x.reshape(lead + (-1,))
        flat_i = indices.reshape(lead + (-1,))
        for lidx in itertools.product(*(range(n) for n in lead)):
            y[lidx][flat_i[lidx]] = flat_x[lidx]
        return y.reshape(lead + tuple(out))
    return ref


def _max_unpool_samples(nd):
    pool = getattr(F, f"max_pool{nd}d")

    def samples(dtype, rng):
        # (input shape, kernel, pool options, output_size given, differentiable): windows
        # that overlap may pick one input twice, and unpooling writes it twice (no
        # derivative there)
        for shape, k, kw, size, grad in (
                ((2, 3) + (4,) * nd, 2, {}, False, True),
                ((2, 3) + _spatial(nd), 2, {}, True, True),
                ((1, 2) + _spatial(nd, True), 3, {"stride": 2, "padding": 1}, True, False),
                ((1, 2) + _spatial(nd), 2, {"stride": 1}, True, False)):
            x = _distinct(rng, shape, np.float64)
            v, i = pool(ember.tensor(x), k, return_indices=True, **kw)
            kwargs = dict(kw)
            if size:
                kwargs["output_size"] = shape[-nd:]
            yield SampleInput(v.numpy().astype(dtype), (i.numpy(), k), kwargs, grad=grad)
    return samples


def _pool_ops():
    ops = []
    for nd in (1, 2, 3):
        ops += [
            OpInfo(f"max_pool{nd}d", getattr(F, f"max_pool{nd}d"), _max_pool_samples(nd),
                   ref=_unbatched(_max_pool_ref(nd), nd), torch_op=_F(f"max_pool{nd}d")),
            OpInfo(f"max_pool{nd}d_with_indices", getattr(F, f"max_pool{nd}d_with_indices"),
                   _max_pool_samples(nd, True), ref=_unbatched(_max_pool_ref(nd), nd),
                   torch_op=_F(f"max_pool{nd}d_with_indices"),
                   output_process=lambda r: tuple(r)),
            OpInfo(f"avg_pool{nd}d", getattr(F, f"avg_pool{nd}d"), _avg_pool_samples(nd),
                   ref=_unbatched(_avg_pool_ref(nd), nd), torch_op=_F(f"avg_pool{nd}d")),
            OpInfo(f"lp_pool{nd}d", getattr(F, f"lp_pool{nd}d"), _lp_pool_samples(nd),
                   ref=_lp_pool_ref(nd), torch_op=_F(f"lp_pool{nd}d")),
            OpInfo(f"adaptive_avg_pool{nd}d", getattr(F, f"adaptive_avg_pool{nd}d"),
                   _adaptive_samples(nd), ref=_adaptive_avg_ref(nd),
                   torch_op=_F(f"adaptive_avg_pool{nd}d")),
            OpInfo(f"adaptive_max_pool{nd}d", getattr(F, f"adaptive_max_pool{nd}d"),
                   _adaptive_samples(nd, True), ref=_adaptive_max_ref(nd),
                   torch_op=_F(f"adaptive_max_pool{nd}d")),
            OpInfo(f"adaptive_max_pool{nd}d_with_indices",
                   getattr(F, f"adaptive_max_pool{nd}d_with_indices"),
                   _adaptive_samples(nd, True, True), ref=_adaptive_max_ref(nd),
                   torch_op=_F(f"adaptive_max_pool{nd}d_with_indices"),
                   output_process=lambda r: tuple(r)),
            OpInfo(f"max_unpool{nd}d", getattr(F, f"max_unpool{nd}d"),
                   _max_unpool_samples(nd), ref=_max_unpool_ref(nd),
                   torch_op=_F(f"max_unpool{nd}d")),
        ]
    return ops


# ---------------------------------------------------------------------------------------
# unfold (im2col) and fold (col2im)

def _unfold_ref(x, kernel_size, dilation=1, padding=0, stride=1):
    kernel, dilation = _tup(kernel_size, 2), _tup(dilation, 2)
    padding, stride = _tup(padding, 2), _tup(stride, 2)
    batched = x.ndim == 4
    x4 = x if batched else x[None]
    xp = np.pad(np.asarray(x4, np.float64), [(0, 0), (0, 0)] + [(p, p) for p in padding])
    out = [(xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
           for i in range(2)]
    cols = [_window(xp, [t * d for t, d in zip(tap, dilation)], dilation, stride, out, 2)
            for tap in _taps(kernel)]
    n, c = x4.shape[:2]
    y = np.stack(cols, 2).reshape(n, c * len(cols), out[0] * out[1]).astype(x.dtype)
    return y if batched else y[0]


def _fold_ref(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    kernel, dilation = _tup(kernel_size, 2), _tup(dilation, 2)
    padding, stride = _tup(padding, 2), _tup(stride, 2)
    size = _tup(output_size, 2)
    batched = x.ndim == 3
    x3 = np.asarray(x if batched else x[None], np.float64)
    n = x3.shape[0]
    k = kernel[0] * kernel[1]
    c = x3.shape[1] // k
    out = [(size[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
           for i in range(2)]
    cols = x3.reshape(n, c, k, out[0], out[1])
    y = np.zeros((n, c, size[0] + 2 * padding[0], size[1] + 2 * padding[1]))
    for j, tap in enumerate(_taps(kernel)):
        idx = tuple(slice(t * d, t * d + s * (o - 1) + 1, s)
                    for t, d, s, o in zip(tap, dilation, stride, out))
        y[(Ellipsis,) + idx] += cols[:, :, j]
    y = y[:, :, padding[0]:padding[0] + size[0], padding[1]:padding[1] + size[1]]
    y = y.astype(x.dtype)
    return y if batched else y[0]


def _unfold_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 3, 5, 4), dtype), (2,))
    yield SampleInput(arr(rng, (1, 2, 6, 5), dtype), ((3, 2),),
                      {"dilation": (1, 2), "padding": 1, "stride": (2, 1)})
    yield SampleInput(arr(rng, (2, 5, 5), dtype), (3,), {"stride": 2}, name="unbatched")


def _fold_samples(dtype, rng):
    # (C * prod(kernel), L) for output (5, 4), kernel 2: L = 4 * 3
    yield SampleInput(arr(rng, (2, 3 * 4, 12), dtype), ((5, 4), 2))
    # output (6, 5), kernel (3, 2), dilation (1, 2), padding 1, stride (2, 1): L = 3 * 5
    yield SampleInput(arr(rng, (1, 2 * 6, 15), dtype), ((6, 5), (3, 2)),
                      {"dilation": (1, 2), "padding": 1, "stride": (2, 1)})
    yield SampleInput(arr(rng, (2 * 9, 4), dtype), (5, 3), {"stride": 2}, name="unbatched")


OPS = _conv_ops() + _pool_ops() + [
    OpInfo("nn_unfold", F.unfold, _unfold_samples, ref=_unfold_ref, torch_op=_F("unfold")),
    OpInfo("fold", F.fold, _fold_samples, ref=_fold_ref, torch_op=_F("fold")),
]
