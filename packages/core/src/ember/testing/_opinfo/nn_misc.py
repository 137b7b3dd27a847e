"""OpInfos for ember.nn.functional's attention, embeddings, interpolation, padding,
pixel/channel shuffles and sampling grids.

grid_sample's reference follows PyTorch's documented conventions: the grid's last axis
is (x, y[, z]), border and reflection padding move the coordinates before bilinear and
nearest sampling, and each bicubic tap is padded on its own.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np

import ember.nn.functional as F
from ember.testing._opinfo.core import OpInfo, SampleInput, arr, positive


def _F(name):
    return lambda torch: getattr(torch.nn.functional, name)


def _softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


# ---------------------------------------------------------------------------------------
# scaled_dot_product_attention

def _sdpa_ref(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
              enable_gqa=False):
    q64, k64, v64 = (np.asarray(a, np.float64) for a in (q, k, v))
    if enable_gqa and k.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k64, v64 = np.repeat(k64, rep, -3), np.repeat(v64, rep, -3)
    s = (q64 @ np.swapaxes(k64, -1, -2)) * (1 / math.sqrt(q.shape[-1]) if scale is None
                                             else scale)
    L, S = s.shape[-2:]
    if is_causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    if attn_mask is not None:
        s = np.where(attn_mask, s, -np.inf) if attn_mask.dtype == np.bool_ else s + attn_mask
    return (_softmax(s) @ v64).astype(q.dtype)


def _sdpa_samples(dtype, rng):
    def t(*shape):
        return arr(rng, shape, dtype, -1, 1)
    yield SampleInput(t(2, 3, 4, 5), (t(2, 3, 6, 5), t(2, 3, 6, 3)))
    yield SampleInput(t(2, 4, 5), (t(2, 4, 5), t(2, 4, 5)), {"is_causal": True},
                      name="causal")
    mask = rng.uniform(size=(4, 6)) < 0.7
    mask[:, 0] = True
    yield SampleInput(t(1, 2, 4, 3), (t(1, 2, 6, 3), t(1, 2, 6, 2), mask), name="bool mask")
    yield SampleInput(t(1, 2, 4, 3), (t(1, 2, 6, 3), t(1, 2, 6, 2)),
                      {"attn_mask": t(2, 4, 6), "scale": 0.3}, name="float mask scale")
    yield SampleInput(t(1, 4, 3, 2), (t(1, 2, 5, 2), t(1, 2, 5, 3)), {"enable_gqa": True},
                      name="gqa")
    yield SampleInput(t(3, 2), (t(4, 2), t(4, 3)), name="2-d")


# ---------------------------------------------------------------------------------------
# multi_head_attention_forward (packed in-projection, batch second), dropout off

def _mha(fn):
    def op(q, k, v, in_w, in_b, out_w, out_b, *, num_heads, key_padding_mask=None,
           attn_mask=None, need_weights=True, average_attn_weights=True, is_causal=False):
        out, w = fn(q, k, v, q.shape[-1], num_heads, in_w, in_b, None, None, False, 0.0,
                    out_w, out_b, training=False, key_padding_mask=key_padding_mask,
                    need_weights=need_weights, attn_mask=attn_mask,
                    average_attn_weights=average_attn_weights, is_causal=is_causal)
        return out if w is None else (out, w)
    return op


def _mha_ref(q, k, v, in_w, in_b, out_w, out_b, *, num_heads, key_padding_mask=None,
             attn_mask=None, need_weights=True, average_attn_weights=True, is_causal=False):
    batched = q.ndim == 3
    q64, k64, v64 = (np.asarray(a if batched else a[:, None], np.float64) for a in (q, k, v))
    L, N, E = q64.shape
    S = k64.shape[0]
    H, D = num_heads, E // num_heads
    wq, wk, wv = np.split(np.asarray(in_w, np.float64), 3)
    bq, bk, bv = np.split(np.asarray(in_b, np.float64), 3)

    def heads(x, w, b):  # (T, N, E) -> (N, H, T, D)
        y = x @ w.T + b
        return y.reshape(y.shape[0], N, H, D).transpose(1, 2, 0, 3)
    qh, kh, vh = heads(q64, wq, bq), heads(k64, wk, bk), heads(v64, wv, bv)
    s = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(D)
    if attn_mask is not None:
        m = attn_mask.reshape((N, H, L, S) if attn_mask.ndim == 3 else (L, S))
        s = np.where(m, -np.inf, s) if m.dtype == np.bool_ else s + m
    if key_padding_mask is not None:
        kpm = key_padding_mask.reshape(N, 1, 1, S)
        s = np.where(kpm, -np.inf, s) if kpm.dtype == np.bool_ else s + kpm
    p = _softmax(s)
    o = (p @ vh).transpose(2, 0, 1, 3).reshape(L, N, E) @ np.asarray(out_w, np.float64).T
    o = (o + out_b).astype(q.dtype)
    if not batched:
        o = o[:, 0]
    if not need_weights:
        return o
    w = p.mean(1) if average_attn_weights else p
    return o, (w if batched else w[0]).astype(q.dtype)


def _mha_samples(dtype, rng):
    E, H = 4, 2

    def params():
        return (arr(rng, (3 * E, E), dtype, -0.5, 0.5), arr(rng, (3 * E,), dtype, -0.5, 0.5),
                arr(rng, (E, E), dtype, -0.5, 0.5), arr(rng, (E,), dtype, -0.5, 0.5))

    def t(*shape):
        return arr(rng, shape, dtype, -1, 1)
    yield SampleInput(t(2, 2, E), (t(3, 2, E), t(3, 2, E)) + params(), {"num_heads": H})
    kpm = np.zeros((2, 4), bool)
    kpm[0, 2:] = True
    am = np.zeros((3, 4), bool)
    am[1, 0] = True
    yield SampleInput(t(3, 2, E), (t(4, 2, E), t(4, 2, E)) + params(),
                      {"num_heads": H, "key_padding_mask": kpm, "attn_mask": am,
                       "average_attn_weights": False}, name="masks")
    yield SampleInput(t(2, 1, E), (t(2, 1, E), t(2, 1, E)) + params(),
                      {"num_heads": H, "attn_mask": t(2, 2), "need_weights": False},
                      name="float mask no weights")
    yield SampleInput(t(2, E), (t(3, E), t(3, E)) + params(), {"num_heads": 1},
                      name="unbatched")


# ---------------------------------------------------------------------------------------
# embedding, embedding_bag

def _embedding_ref(idx, w, padding_idx=None, max_norm=None, norm_type=2.0,
                   scale_grad_by_freq=False, sparse=False):
    w64 = np.asarray(w, np.float64).copy()
    if max_norm is not None:
        rows = np.unique(idx)
        n = np.sum(np.abs(w64[rows]) ** norm_type, -1) ** (1 / norm_type)
        scale = np.where(n > max_norm, max_norm / (n + 1e-7), 1.0)
        w64[rows] *= scale[:, None]
    return w64[idx].astype(w.dtype)


def _embedding_samples(dtype, rng):
    yield SampleInput(rng.integers(0, 5, (2, 3)), (arr(rng, (5, 3), dtype),))
    # scale_grad_by_freq divides the gradient by the index counts on purpose: not a
    # derivative, so no gradcheck (its gradient is compared with PyTorch's in tests/nn)
    yield SampleInput(np.array([0, 3, 3, 1]), (arr(rng, (5, 2), dtype),),
                      {"scale_grad_by_freq": True}, grad=False, name="scale_grad_by_freq")
    yield SampleInput(np.array([[0, 2, 0], [1, 2, 1]]), (arr(rng, (3, 4), dtype),),
                      {"padding_idx": 2}, grad=False, name="padding_idx")
    yield SampleInput(np.array([0, 1, 3]), (arr(rng, (4, 3), dtype),),
                      {"max_norm": 1.0}, grad=False, name="max_norm")
    yield SampleInput(np.array(1), (arr(rng, (3, 2), dtype),), name="0-dim index")


def _bag_ref(idx, w, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
             mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
             padding_idx=None):
    w64 = np.asarray(w, np.float64)
    psw = per_sample_weights
    if idx.ndim == 2:
        bags = [(idx[i], None if psw is None else psw[i]) for i in range(idx.shape[0])]
    else:
        bounds = list(offsets) + ([] if include_last_offset else [len(idx)])
        bags = [(idx[a:b], None if psw is None else psw[a:b])
                for a, b in zip(bounds[:-1], bounds[1:])]
    out = np.zeros((len(bags), w.shape[1]))
    for i, (rows, ws) in enumerate(bags):
        keep = rows != padding_idx if padding_idx is not None else np.ones(len(rows), bool)
        e = w64[rows[keep]]
        if ws is not None:
            e = e * ws[keep][:, None]
        if len(e) == 0:
            continue
        out[i] = e.sum(0) if mode == "sum" else e.mean(0) if mode == "mean" else e.max(0)
    return out.astype(w.dtype)


def _bag_samples(dtype, rng):
    for mode in ("sum", "mean", "max"):
        yield SampleInput(rng.permutation(6)[:4].reshape(2, 2), (arr(rng, (6, 3), dtype),),
                          {"mode": mode}, name=f"2-d {mode}")
        yield SampleInput(np.array([0, 2, 4, 1, 3, 5]), (arr(rng, (6, 3), dtype),
                                                         np.array([0, 2, 2])),
                          {"mode": mode}, name=f"offsets {mode} (empty bag)")
    yield SampleInput(np.array([0, 2, 4, 1, 3]), (arr(rng, (6, 2), dtype),
                                                  np.array([0, 3, 5])),
                      {"mode": "sum", "include_last_offset": True,
                       "per_sample_weights": positive(rng, (5,), dtype)},
                      name="per_sample_weights include_last_offset")
    yield SampleInput(np.array([[0, 1, 2], [2, 3, 2]]), (arr(rng, (4, 2), dtype),),
                      {"mode": "mean", "padding_idx": 2}, grad=False, name="padding_idx")


# ---------------------------------------------------------------------------------------
# interpolate: one separable 1-d pass per spatial axis

def _src(out_i, n_in, n_out, align_corners, scale):
    if align_corners:
        return out_i * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    return (out_i + 0.5) * scale - 0.5


def _cubic_w(t, a=-0.75):
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    if t < 2:
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return 0.0


def _pass(x, axis, n_out, mode, align_corners, scale):
    """Resample axis ``axis`` of the float64 array ``x`` to ``n_out`` samples."""
    n_in = x.shape[axis]
    xm = np.moveaxis(x, axis, -1)
    out = np.zeros(xm.shape[:-1] + (n_out,))
    for i in range(n_out):
        if mode == "nearest":
            j = min(int(math.floor(i * scale)), n_in - 1)
            out[..., i] = xm[..., j]
        elif mode == "nearest-exact":
            j = min(int(math.floor((i + 0.5) * scale)), n_in - 1)
            out[..., i] = xm[..., j]
        elif mode == "area":
            a, b = i * n_in // n_out, -(-(i + 1) * n_in // n_out)
            out[..., i] = xm[..., a:b].mean(-1)
        elif mode == "linear":
            s = max(_src(i, n_in, n_out, align_corners, scale), 0.0)
            j0 = min(int(math.floor(s)), n_in - 1)
            j1 = min(j0 + 1, n_in - 1)
            f = s - j0
            out[..., i] = (1 - f) * xm[..., j0] + f * xm[..., j1]
        else:  # cubic
            s = _src(i, n_in, n_out, align_corners, scale)
            j = int(math.floor(s))
            f = s - j
            for m in range(-1, 3):
                out[..., i] += _cubic_w(m - f) * xm[..., min(max(j + m, 0), n_in - 1)]
    return np.moveaxis(out, -1, axis)


def _interpolate_ref(x, size=None, scale_factor=None, mode="nearest", align_corners=None,
                     recompute_scale_factor=None, antialias=False):
    nd = x.ndim - 2
    sp = x.shape[2:]
    if size is not None:
        outs = list(size) if isinstance(size, (tuple, list)) else [size] * nd
        scales = [i / o for i, o in zip(sp, outs)]
    else:
        sfs = list(scale_factor) if isinstance(scale_factor, (tuple, list)) \
            else [scale_factor] * nd
        outs = [int(math.floor(i * s)) for i, s in zip(sp, sfs)]
        scales = [i / o for i, o in zip(sp, outs)] if recompute_scale_factor \
            else [1 / s for s in sfs]
    kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    y = np.asarray(x, np.float64)
    for ax in range(nd):
        if kind == "area":
            y = _pass(y, 2 + ax, outs[ax], "area", False, 0)
        else:
            y = _pass(y, 2 + ax, outs[ax], kind, bool(align_corners), scales[ax])
    return y.astype(x.dtype)


def _interpolate_samples(dtype, rng):
    def t(*shape):
        return arr(rng, shape, dtype)
    yield SampleInput(t(2, 2, 4), kwargs={"size": 7})
    yield SampleInput(t(1, 2, 3, 4), kwargs={"scale_factor": 2})
    yield SampleInput(t(1, 2, 5, 4), kwargs={"size": (3, 6), "mode": "nearest-exact"})
    yield SampleInput(t(1, 1, 2, 3, 2), kwargs={"scale_factor": (2, 1.5, 1)})
    for ac in (False, True):
        yield SampleInput(t(2, 2, 5), kwargs={"size": 8, "mode": "linear", "align_corners": ac})
        yield SampleInput(t(1, 2, 4, 3), kwargs={"size": (3, 5), "mode": "bilinear",
                                                 "align_corners": ac})
        yield SampleInput(t(1, 1, 3, 2, 3), kwargs={"scale_factor": 2, "mode": "trilinear",
                                                    "align_corners": ac})
        yield SampleInput(t(1, 2, 4, 4), kwargs={"size": (6, 3), "mode": "bicubic",
                                                 "align_corners": ac})
    yield SampleInput(t(1, 2, 5, 3), kwargs={"scale_factor": 1.7, "mode": "bilinear",
                                             "recompute_scale_factor": True})
    yield SampleInput(t(1, 2, 7), kwargs={"size": 3, "mode": "area"})
    yield SampleInput(t(1, 2, 6, 5), kwargs={"size": (4, 2), "mode": "area"})


def _quiet(fn):
    """``fn`` without its deprecation warning (upsample and friends)."""
    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    return call


def _upsample_samples(dtype, rng):
    yield SampleInput(arr(rng, (1, 2, 3, 4), dtype), kwargs={"scale_factor": 2})
    yield SampleInput(arr(rng, (1, 2, 3), dtype), kwargs={"size": 5})


def _upsample_bilinear_ref(x, size=None, scale_factor=None):
    return _interpolate_ref(x, size, scale_factor, "bilinear", True)


def _upsample_linear_samples(dtype, rng):
    yield SampleInput(arr(rng, (1, 2, 3, 4), dtype), kwargs={"scale_factor": 2})
    yield SampleInput(arr(rng, (1, 2, 3, 2), dtype), kwargs={"size": (4, 5)})


def _upsample_torch(name, torch):
    return _quiet(getattr(torch.nn.functional, name))


# ---------------------------------------------------------------------------------------
# pad

def _pad_ref(x, pad, mode="constant", value=None):
    x64 = np.asarray(x, np.float64)
    n = len(pad) // 2
    widths = [(0, 0)] * (x.ndim - n) + [(pad[2 * i], pad[2 * i + 1])
                                        for i in reversed(range(n))]
    crop = tuple(slice(-b if b < 0 else None, a if a < 0 else None) for b, a in widths)
    x64 = x64[crop]
    widths = [(max(b, 0), max(a, 0)) for b, a in widths]
    if mode == "constant":
        y = np.pad(x64, widths, constant_values=0.0 if value is None else value)
    else:
        y = np.pad(x64, widths, mode={"reflect": "reflect", "replicate": "edge",
                                      "circular": "wrap"}[mode])
    return y.astype(x.dtype)


def _pad_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 3), dtype), ((1, 2),))
    yield SampleInput(arr(rng, (2, 3, 4), dtype), ((1, 0, 2, 1),), {"value": 1.5})
    yield SampleInput(arr(rng, (2, 3, 4), dtype), ((-1, 2, 0, -1),), name="negative crop")
    yield SampleInput(arr(rng, (1, 2, 3, 4, 2), dtype), ((1, 1, 0, 2, 1, 0),))
    for mode in ("reflect", "replicate", "circular"):
        yield SampleInput(arr(rng, (1, 2, 5), dtype), ((2, 1),), {"mode": mode})
        yield SampleInput(arr(rng, (1, 2, 4, 3), dtype), ((1, 2, 2, 1),), {"mode": mode})
        yield SampleInput(arr(rng, (1, 1, 3, 3, 4), dtype), ((1, 1, 2, 0, 0, 1),),
                          {"mode": mode})
    yield SampleInput(arr(rng, (2, 4, 3), dtype), ((1, 2),), {"mode": "reflect"},
                      name="reflect unbatched")


# ---------------------------------------------------------------------------------------
# pixel_shuffle, pixel_unshuffle, channel_shuffle

def _pixel_shuffle_ref(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def _pixel_unshuffle_ref(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return y.reshape(*lead, c * r * r, h // r, w // r)


def _channel_shuffle_ref(x, groups):
    n, c = x.shape[:2]
    return x.reshape(n, groups, c // groups, *x.shape[2:]).swapaxes(1, 2).reshape(x.shape)


def _shuffle_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 8, 2, 3), dtype), (2,))
    yield SampleInput(arr(rng, (9, 2, 2), dtype), (3,), name="unbatched")
    yield SampleInput(arr(rng, (2, 1, 4, 8, 2, 1), dtype), (2,), name="extra batch dims")


def _unshuffle_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 2, 4, 6), dtype), (2,))
    yield SampleInput(arr(rng, (1, 6, 3), dtype), (3,), name="unbatched")
    yield SampleInput(arr(rng, (2, 1, 1, 4, 2), dtype), (2,), name="extra batch dims")


def _channel_shuffle_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 6, 2, 2), dtype), (3,))
    yield SampleInput(arr(rng, (2, 4, 3), dtype), (2,))


# ---------------------------------------------------------------------------------------
# affine_grid, grid_sample

def _affine_grid_ref(theta, size, align_corners=None):
    sp = size[2:]

    def lin(n):
        if n == 1:
            return np.zeros(1)
        v = np.linspace(-1, 1, n)
        return v if align_corners else v * (n - 1) / n
    axes = [lin(n) for n in reversed(sp)]  # x (W) first
    mesh = np.meshgrid(*reversed(axes), indexing="ij")  # spatial order, each sp shaped
    base = np.stack([m for m in reversed(mesh)] + [np.ones(sp)], -1)
    out = np.einsum("...k,nck->n...c", base, np.asarray(theta, np.float64))
    return out.astype(theta.dtype)


def _affine_grid_samples(dtype, rng):
    for ac in (False, True):
        yield SampleInput(arr(rng, (2, 2, 3), dtype, -1, 1), ((2, 3, 4, 5),),
                          {"align_corners": ac})
        yield SampleInput(arr(rng, (1, 3, 4), dtype, -1, 1), ((1, 2, 3, 2, 4),),
                          {"align_corners": ac})
    yield SampleInput(arr(rng, (1, 2, 3), dtype, -1, 1), ((1, 1, 1, 3),),
                      {"align_corners": False}, name="size 1")


def _reflect(c, twice_low, twice_high):
    """PyTorch's reflection of coordinates into [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return np.zeros_like(c)
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    c = np.abs(c - lo)
    extra, flips = np.fmod(c, span), np.floor(c / span)
    return np.where(flips % 2 == 0, extra + lo, span - extra + lo)


def _pad_coord(c, size, padding_mode, align_corners):
    if padding_mode == "border":
        return np.clip(c, 0, size - 1)
    if padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        return np.clip(c, 0, size - 1)
    return c


def _grid_sample_ref(x, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    x64, g64 = np.asarray(x, np.float64), np.asarray(grid, np.float64)
    nd = x.ndim - 2
    sp = x.shape[2:]
    y = np.zeros(x.shape[:2] + grid.shape[1:-1])

    def gather(xn, idx):
        valid = np.ones(idx[0].shape, bool)
        for i, n in zip(idx, sp):
            valid &= (i >= 0) & (i < n)
        safe = tuple(np.clip(i, 0, n - 1).astype(np.int64) for i, n in zip(idx, sp))
        return xn[(slice(None),) + safe] * valid

    for n in range(x.shape[0]):
        # grid's last axis is (x, y[, z]): the last spatial axis first
        coords = []
        for a in range(nd):
            c, size = g64[n, ..., nd - 1 - a], sp[a]
            coords.append(((c + 1) / 2) * (size - 1) if align_corners
                          else ((c + 1) * size - 1) / 2)
        if mode != "bicubic":
            coords = [_pad_coord(c, size, padding_mode, align_corners)
                      for c, size in zip(coords, sp)]
        if mode == "nearest":
            y[n] = gather(x64[n], [np.rint(c) for c in coords])
        elif mode == "bilinear":
            base = [np.floor(c) for c in coords]
            for corner in itertools.product((0, 1), repeat=nd):
                w = 1.0
                for c, b, k in zip(coords, base, corner):
                    w = w * ((c - b) if k else (1 - (c - b)))
                y[n] += w * gather(x64[n], [b + k for b, k in zip(base, corner)])
        else:  # bicubic (2-d): each of the 4 x 4 taps is padded on its own
            base = [np.floor(c) for c in coords]
            cubic = np.vectorize(_cubic_w)
            for taps in itertools.product(range(-1, 3), repeat=2):
                w = 1.0
                idx = []
                for c, b, t, size in zip(coords, base, taps, sp):
                    w = w * cubic(t - (c - b))
                    idx.append(_pad_coord(b + t, size, padding_mode, align_corners))
                y[n] += w * gather(x64[n], idx)
    return y.astype(x.dtype)


def _grid_sample_samples(dtype, rng):
    for mode, pm, ac in itertools.product(("bilinear", "nearest", "bicubic"),
                                          ("zeros", "border", "reflection"), (False, True)):
        # grid points also outside [-1, 1], where the padding modes differ; gradcheck on
        # half of the cases (each mode and padding once), to keep the time down
        g = arr(rng, (1, 2, 2, 2), dtype, -1.3, 1.3)
        yield SampleInput(arr(rng, (1, 2, 3, 4), dtype), (g,),
                          {"mode": mode, "padding_mode": pm, "align_corners": ac},
                          grad=ac == (pm == "border"), name=f"{mode} {pm} {ac}")
    for mode, pm in (("bilinear", "zeros"), ("nearest", "border"), ("bilinear", "reflection")):
        g = arr(rng, (1, 2, 2, 1, 3), dtype, -1.2, 1.2)
        yield SampleInput(arr(rng, (1, 2, 3, 2, 2), dtype), (g,),
                          {"mode": mode, "padding_mode": pm, "align_corners": False},
                          name=f"5-d {mode} {pm}")


OPS = [
    OpInfo("scaled_dot_product_attention", F.scaled_dot_product_attention, _sdpa_samples,
           ref=_sdpa_ref, torch_op=_F("scaled_dot_product_attention"), rtol=1e-5, atol=1e-6),
    OpInfo("multi_head_attention_forward", _mha(F.multi_head_attention_forward),
           _mha_samples, ref=_mha_ref, rtol=1e-5, atol=1e-6,
           torch_op=lambda torch: _mha(torch.nn.functional.multi_head_attention_forward),
           output_process=lambda r: tuple(r) if isinstance(r, (tuple, list)) else r),
    OpInfo("embedding", F.embedding, _embedding_samples, ref=_embedding_ref,
           torch_op=_F("embedding")),
    OpInfo("embedding_bag", F.embedding_bag, _bag_samples, ref=_bag_ref,
           torch_op=_F("embedding_bag")),
    OpInfo("interpolate", F.interpolate, _interpolate_samples, ref=_interpolate_ref,
           torch_op=_F("interpolate"), rtol=1e-5, atol=1e-6),
    OpInfo("upsample", _quiet(F.upsample), _upsample_samples,
           ref=lambda x, **kw: _interpolate_ref(x, **kw),
           torch_op=lambda torch: _upsample_torch("upsample", torch)),
    OpInfo("upsample_nearest", _quiet(F.upsample_nearest), _upsample_samples,
           ref=lambda x, **kw: _interpolate_ref(x, **kw),
           torch_op=lambda torch: _upsample_torch("upsample_nearest", torch)),
    OpInfo("upsample_bilinear", _quiet(F.upsample_bilinear), _upsample_linear_samples,
           ref=_upsample_bilinear_ref,
           torch_op=lambda torch: _upsample_torch("upsample_bilinear", torch)),
    OpInfo("pad", F.pad, _pad_samples, ref=_pad_ref, torch_op=_F("pad")),
    OpInfo("pixel_shuffle", F.pixel_shuffle, _shuffle_samples, ref=_pixel_shuffle_ref,
           torch_op=_F("pixel_shuffle")),
    OpInfo("pixel_unshuffle", F.pixel_unshuffle, _unshuffle_samples,
           ref=_pixel_unshuffle_ref, torch_op=_F("pixel_unshuffle")),
    OpInfo("channel_shuffle", F.channel_shuffle, _channel_shuffle_samples,
           ref=_channel_shuffle_ref, torch_op=_F("channel_shuffle")),
    OpInfo("affine_grid", F.affine_grid, _affine_grid_samples, ref=_affine_grid_ref,
           torch_op=_F("affine_grid")),
    OpInfo("grid_sample", F.grid_sample, _grid_sample_samples, ref=_grid_sample_ref,
           torch_op=_F("grid_sample"), rtol=1e-4, atol=1e-5),
]
