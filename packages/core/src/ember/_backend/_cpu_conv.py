"""The CPU's convolution tuning, and its Winograd F(2x2, 3x3) kernel for 3x3 stride-1
convolutions (see NOTE [ Winograd convolution ] in ``ember._C._conv``).

Winograd computes a 3x3 convolution as 16 GEMMs of (Cout, C) @ (C, tiles) instead of one of
(Cout, 9C) @ (9C, 4 tiles): 2.25x fewer multiplies, and the same for both gradients. It is
written for NumPy arrays and the compiled tile transforms of ``ember._C._conv``, and is
registered for the CPU only (float32/float64), as ``conv2d_winograd_forward`` and
``conv2d_winograd_backward``; the convolution op (``ember.nn._functional.conv``) takes it
for the convolutions it computes where :data:`TUNING` says it pays.

Every number here was measured on the CPU (2 cores; see the comments): it is the CPU
backend's ``tuning`` (``ember.cpu``'s :attr:`~ember._backend.Backend.tuning`), and tests
change it there.
"""

from __future__ import annotations

import math

import numpy as np

from ember._backend._base import Tuning, batch_chunks

__all__ = ["TUNING", "winograd_pays", "winograd_forward", "winograd_backward", "batch_ranges",
           "run_parts"]


def winograd_pays(c, cout, out_sp):
    """Whether Winograd beats im2col for ``c`` -> ``cout`` channels at output size
    ``out_sp`` (H, W)."""
    # Measured on 2 cores (batch 32, float32, forward + both gradients): 10-25% faster than
    # im2col at 64@32x32, 128@16x16, 256@8x8 and 512@4x4. The transforms are per-plane
    # loops whose cost does not shrink with the channel count, so the 16 GEMMs must be
    # big enough to pay for them: not for the 3-channel first layer or 1-4 outputs.
    return min(c, cout) >= 16 and out_sp[0] * out_sp[1] >= 16


TUNING = Tuning(
    # The batch goes through im2col in chunks whose patch matrix is about this size, so
    # that the patches are written and read back by the GEMM in cache rather than in main
    # memory (a quarter less time on ResNet's first layers; NOTE [ Convolution layout ] in
    # ember.nn._functional._kernels).
    conv_chunk_bytes=8 << 20,
    # A forward whose patch matrix is one chunk of at most this size keeps it for the weight
    # gradient (LeNet-sized networks, where building it again cost as much as the GEMMs),
    # all of them together at most conv_keep_total_bytes.
    conv_keep_bytes=8 << 20,
    conv_keep_total_bytes=64 << 20,
    # Winograd on/off (tests switch it off to compare against im2col), its rule, and the
    # chunk of the batch whose transformed tiles (16, C, chunk, tiles) are about this size.
    winograd=True,
    winograd_pays=winograd_pays,
    winograd_chunk_bytes=4 << 20,
)

# kron(G, G) (16, 9): U[4i + j] = sum_ab G[i, a] G[j, b] g[a, b] for a 3x3 kernel g.
_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
_GG = {np.dtype(t): np.kron(_G, _G).astype(t) for t in (np.float32, np.float64)}

# Each of the 16 transform positions of a tile array starts this many elements after the
# end of the previous one. Without the gap the positions lie a power-of-two apart, and the
# transforms, which write (or read) all 16 of them in one pass, kept evicting their own
# cache lines (measured: the output-adjoint transform of 128@16x16, batch 32, took 4.8 ms
# with contiguous positions, 1.1 ms with the gap).
_GAP = 16


def _transforms():
    from ember._C import _conv  # loaded on the first Winograd convolution

    return _conv


def _workspace(shape, dtype, slot):
    from ember._backend._cpu_kernels import workspace

    return workspace(shape, dtype, slot)


def _tiles(out_sp):
    return (out_sp[0] + 1) // 2, (out_sp[1] + 1) // 2


def _tile_array(shape, cd, slot):
    """A (16, C, N, T) workspace tile array whose positions are _GAP elements apart."""
    size = math.prod(shape[1:])
    buf = _workspace((16, size + _GAP), cd, slot)
    return buf[:, :size].reshape(shape)


def _group_dot(a, b, out):
    # one BLAS GEMM per position (dot, not matmul: see ember.nn._functional.conv._group_dot)
    for i in range(a.shape[0]):
        np.dot(a[i], b[i], out=out[i])
    return out


def _serial():
    from ember._backend._blas import serial_blas

    return serial_blas(np)


def _weight(w, cd):
    """(16, Cout, C) = G w G^T of w (Cout, C, 3, 3)."""
    cout, c = w.shape[:2]
    w2 = np.ascontiguousarray(w, dtype=cd).reshape(cout * c, 9)
    with _serial():  # a skinny product: OpenBLAS's threads only cost (NOTE below)
        return np.dot(_GG[np.dtype(cd)], w2.T).reshape(16, cout, c)


# NOTE [ Convolutions on several threads ]
# OpenBLAS's own threads gain little on two cores for a convolution's GEMMs: Winograd's 16
# per-position GEMMs per chunk are too small to split well (64 channels at 56x56, batch 8:
# 12.6 ms on 2 threads, 9.1 on one), and the im2col GEMMs only just gain. The compiled
# im2col/col2im and tile-transform loops are serial (NOTE [ OpenMP on few cores ]), so a
# convolution ran at about one thread's speed. A batch with enough work is cut into one
# contiguous range of samples per thread instead (:func:`batch_ranges`); each range runs the
# whole chunked computation on ember's pool (:func:`run_parts`; the compiled loops release
# the GIL), with OpenBLAS on one thread (NOTE [ Serial BLAS is process-wide ] in _blas) and
# its own workspaces (they are per thread). The output and the input gradient of a range are
# its own rows; the weight gradient is summed per range, then over the ranges in order, so a
# result depends only on the thread count. (It equals the one-thread result to rounding, not
# bit for bit: OpenBLAS rounds a GEMM's columns by where they fall in its blocks, and a
# range's GEMMs are shorter.) The op code asks for both as the kernels "batch_ranges" and
# "run_parts" (one range, run here, on devices without them), for Winograd, im2col and the
# per-sample 1x1 convolutions (NOTE [ Pointwise convolutions ] in ember.nn._functional.conv)
# alike.

# Multiply-adds of a convolution's GEMMs, and channels, from which its batch is split over
# the threads. Measured on a quiet 2-core machine (float32, forward + both gradients, 3x3
# Winograd, the threaded time over the one-thread time): 32 channels at 16x16, batch 32 (34M
# multiply-adds) 0.72; 32@32x32 batch 16 (67M) 0.66; 64@16x16 batch 32 (134M) 0.64; but 16
# channels at 32x32, batch 32 (34M) 1.14: with few channels the transforms, which read and
# write every tile once per GEMM, outweigh the GEMMs, and two threads share one memory bus.
_THREADED_MIN_WORK = 1 << 25
_THREADED_MIN_CHANNELS = 32


def batch_ranges(n, work, channels):
    """[(start, stop)]: one range of a batch of ``n`` samples per thread (NOTE [ Convolutions
    on several threads ]) for a convolution of ``work`` multiply-adds whose smallest GEMM
    dimension other than the batch's is ``channels``; or one range for all of it."""
    from ember._backend import _cpu_threads

    threads = min(_cpu_threads.available_threads(), n)
    if threads < 2 or work < _THREADED_MIN_WORK or channels < _THREADED_MIN_CHANNELS:
        return [(0, n)]
    return [(n * i // threads, n * (i + 1) // threads) for i in range(threads)]


def _batch_ranges(n, c, cout, t):
    return batch_ranges(n, 16 * c * cout * t * n, min(c, cout))


def run_parts(fn, parts) -> None:
    """``fn(*args)`` for each ``args`` of ``parts``: here for one, on the pool for several,
    with OpenBLAS on one thread either way. (Measured: a convolution that is too small to
    split ran its GEMMs faster on one OpenBLAS thread than on two, and OpenBLAS's two
    threads, which spin for a while after each call, slowed the pool's next kernels:
    the ResNet-18 CIFAR step of tools/bench took 1.8-2.0 s with them, 1.5 s without.)"""
    if len(parts) == 1:
        with _serial():
            fn(*parts[0])
        return
    from ember._backend import _cpu_threads

    _cpu_threads.run_tasks([lambda args=args: fn(*args) for args in parts], serial_blas=True)


def winograd_forward(x, w, b, padding, out_sp):
    """y (N, Cout, OH, OW) = conv2d(x, w, stride 1, ``padding`` (ph, pw)) + b, in x's dtype."""
    conv = _transforms()
    cd = x.dtype
    x = np.ascontiguousarray(x)
    n, c = x.shape[:2]
    cout = w.shape[0]
    tiles = _tiles(out_sp)
    t = tiles[0] * tiles[1]
    ph, pw = padding
    u = _weight(w, cd)
    y = np.empty((n, cout) + tuple(out_sp), dtype=cd)

    def part(lo, hi):
        for s, e in batch_chunks(hi - lo, 16 * max(c, cout) * t * x.itemsize,
                                 TUNING.winograd_chunk_bytes):
            s, e, m = lo + s, lo + e, e - s
            v = conv.winograd_input(x[s:e], _tile_array((16, c, m, t), cd, 0), ph, pw, *tiles)
            mm = _group_dot(u, v.reshape(16, c, m * t),
                            _tile_array((16, cout, m * t), cd, 1))
            conv.winograd_output(mm.reshape(16, cout, m, t), y[s:e])

    run_parts(part, _batch_ranges(n, c, cout, t))
    if b is not None:
        y += b.astype(cd, copy=False).reshape(cout, 1, 1)
    return y


def winograd_backward(x, g, w, padding, in_sp, need_input, need_weight):
    """(gx, gw): the input and weight gradients of :func:`winograd_forward` for the output
    gradient ``g`` (either skipped as None), in g's dtype."""
    conv = _transforms()
    cd = g.dtype
    g = np.ascontiguousarray(g)
    n, cout = g.shape[:2]
    tiles = _tiles(g.shape[2:])
    t = tiles[0] * tiles[1]
    ph, pw = padding
    if need_weight:
        x = np.ascontiguousarray(x, dtype=cd)
        c = x.shape[1]
    if need_input:
        c = w.shape[1]
        ut = _weight(w, cd).transpose(0, 2, 1)
        gx = np.zeros((n, c) + tuple(in_sp), dtype=cd)
    else:
        gx = None
    ranges = _batch_ranges(n, c, cout, t)
    # one weight-gradient sum per range; zeros, not empty: an empty batch runs no chunk and
    # must give a zero gradient
    dus = [(np.zeros if n == 0 else np.empty)((16, cout, c), dtype=cd) if need_weight
           else None for _ in ranges]

    def part(index, lo, hi):
        du = dus[index]
        first = True
        for s, e in batch_chunks(hi - lo, 16 * max(c, cout) * t * g.itemsize,
                                 TUNING.winograd_chunk_bytes):
            s, e, m = lo + s, lo + e, e - s
            dm = conv.winograd_output_adjoint(g[s:e], _tile_array((16, cout, m, t), cd, 1))
            dm = dm.reshape(16, cout, m * t)
            if need_weight:
                v = conv.winograd_input(x[s:e], _tile_array((16, c, m, t), cd, 0), ph, pw,
                                        *tiles)
                vt = v.reshape(16, c, m * t).transpose(0, 2, 1)
                if first:
                    _group_dot(dm, vt, du)
                else:
                    du += _group_dot(dm, vt, _workspace(du.shape, cd, 2))
            if need_input:
                dv = _group_dot(ut, dm, _tile_array((16, c, m * t), cd, 0))
                conv.winograd_input_adjoint(dv.reshape(16, c, m, t), gx[s:e], ph, pw, *tiles)
            first = False

    run_parts(part, [(i, lo, hi) for i, (lo, hi) in enumerate(ranges)])
    gw = None
    if need_weight:
        du = dus[0]
        for other in dus[1:]:
            du += other
        # the adjoint of _weight: G^T dU G
        with _serial():
            gw = np.dot(du.reshape(16, cout * c).T, _GG[np.dtype(cd)]).reshape(cout, c, 3, 3)
    return gx, gw
