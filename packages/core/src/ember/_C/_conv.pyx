"""CPU kernels of convolution, pooling and fold/unfold.

Every kernel works on 3-d spatial data (planes of D x H x W); 1-d and 2-d inputs come
as views with leading singleton spatial dims, so one loop nest serves all three.
Planes (one per batch entry and channel) are independent: the loops run over them with
OpenMP ``prange``, each thread writing only its own planes, so no two threads ever
write the same element.

The Python layer (``ember.nn._functional``) validates the user's sizes and indices
before calling in; the kernels trust the geometry they are given.
"""

cimport cython
from cython.parallel cimport prange
from libc.math cimport INFINITY, isnan
from libc.string cimport memset

import numpy as np
cimport numpy as cnp

cnp.import_array()

ctypedef fused floating_t:
    float
    double

ctypedef cnp.int64_t i64

include "_parallel.pxi"

# Below this much work (elements written) the loops stay on one thread: the fork/join
# costs more (see NOTE [ OpenMP on few cores ]).
cdef Py_ssize_t PARALLEL_MIN = parallel_min(1 << 18)


cdef inline Py_ssize_t _ceil_div(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    # ceil(a / b) for b > 0 and any sign of a
    if a >= 0:
        return (a + b - 1) // b
    return -((-a) // b)


cdef inline Py_ssize_t _clip(Py_ssize_t v, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    return lo if v < lo else (hi if v > hi else v)


cdef inline void _span(Py_ssize_t off, Py_ssize_t step, Py_ssize_t size, Py_ssize_t count,
                       Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    # [lo, hi): the outputs o < count whose input o*step + off lies in [0, size)
    lo[0] = _clip(_ceil_div(-off, step), 0, count)
    hi[0] = _clip(_ceil_div(size - off, step), lo[0], count)


cdef struct Geom:
    Py_ssize_t C, D, H, W          # input planes and their size
    Py_ssize_t KD, KH, KW          # kernel
    Py_ssize_t sd, sh, sw          # stride
    Py_ssize_t pd, ph, pw          # padding before (after is implied by the output size)
    Py_ssize_t dd, dh, dw          # dilation
    Py_ssize_t OD, OH, OW          # output size
    Py_ssize_t rs, ns              # element strides of cols: per row, per batch entry


cdef Geom _geom(tuple in_size, tuple k, tuple s, tuple p, tuple d, tuple o, Py_ssize_t C,
                Py_ssize_t rs, Py_ssize_t ns):
    cdef Geom g
    g.C = C
    g.D, g.H, g.W = in_size
    g.KD, g.KH, g.KW = k
    g.sd, g.sh, g.sw = s
    g.pd, g.ph, g.pw = p
    g.dd, g.dh, g.dw = d
    g.OD, g.OH, g.OW = o
    g.rs, g.ns = rs, ns
    return g


cdef extern from *:
    """
    /* The rows of one (kd, kh, kw) tap of im2col and its adjoint: `rows` output rows of OW
       columns, row r reading (or adding into) the input row src + r*srs at columns
       ow*sw for ow in [lo, hi), the other columns zero. restrict lets GCC copy short rows
       with vector moves and no run-time overlap checks (LeNet's 10-wide rows took 3x
       longer as plain Cython loops). */
    #define EMBER_TAP_ROWS(NAME, T)                                                     \
    static inline void NAME##_copy(const T* __restrict src, Py_ssize_t srs,            \
                                   T* __restrict dst, Py_ssize_t rows, Py_ssize_t OW,  \
                                   Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t sw) {      \
        for (Py_ssize_t r = 0; r < rows; ++r, src += srs, dst += OW) {                 \
            for (Py_ssize_t ow = 0; ow < lo; ++ow) dst[ow] = 0;                        \
            if (sw == 1)                                                               \
                for (Py_ssize_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow];             \
            else                                                                       \
                for (Py_ssize_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * sw];        \
            for (Py_ssize_t ow = hi; ow < OW; ++ow) dst[ow] = 0;                       \
        }                                                                              \
    }                                                                                  \
    static inline void NAME##_add(const T* __restrict cols, T* __restrict x,           \
                                  Py_ssize_t srs, Py_ssize_t rows, Py_ssize_t OW,      \
                                  Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t sw) {       \
        for (Py_ssize_t r = 0; r < rows; ++r, x += srs, cols += OW) {                  \
            if (sw == 1)                                                               \
                for (Py_ssize_t ow = lo; ow < hi; ++ow) x[ow] += cols[ow];             \
            else                                                                       \
                for (Py_ssize_t ow = lo; ow < hi; ++ow) x[ow * sw] += cols[ow];        \
        }                                                                              \
    }
    EMBER_TAP_ROWS(ember_tap_f, float)
    EMBER_TAP_ROWS(ember_tap_d, double)
    """
    void ember_tap_f_copy(const float* src, Py_ssize_t srs, float* dst, Py_ssize_t rows,
                          Py_ssize_t OW, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t sw) nogil
    void ember_tap_d_copy(const double* src, Py_ssize_t srs, double* dst, Py_ssize_t rows,
                          Py_ssize_t OW, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t sw) nogil
    void ember_tap_f_add(const float* cols, float* x, Py_ssize_t srs, Py_ssize_t rows,
                         Py_ssize_t OW, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t sw) nogil
    void ember_tap_d_add(const double* cols, double* x, Py_ssize_t srs, Py_ssize_t rows,
                         Py_ssize_t OW, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t sw) nogil


cdef inline void _tap_copy(const floating_t* src, Py_ssize_t srs, floating_t* dst,
                           Py_ssize_t rows, Py_ssize_t OW, Py_ssize_t lo, Py_ssize_t hi,
                           Py_ssize_t sw) noexcept nogil:
    if floating_t is float:
        ember_tap_f_copy(src, srs, dst, rows, OW, lo, hi, sw)
    else:
        ember_tap_d_copy(src, srs, dst, rows, OW, lo, hi, sw)


cdef inline void _tap_add(const floating_t* cols, floating_t* x, Py_ssize_t srs,
                          Py_ssize_t rows, Py_ssize_t OW, Py_ssize_t lo, Py_ssize_t hi,
                          Py_ssize_t sw) noexcept nogil:
    if floating_t is float:
        ember_tap_f_add(cols, x, srs, rows, OW, lo, hi, sw)
    else:
        ember_tap_d_add(cols, x, srs, rows, OW, lo, hi, sw)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _im2col_row(const floating_t* x, floating_t* cols, Py_ssize_t N, Py_ssize_t row,
                      const Geom* g) noexcept nogil:
    # Writes row `row` = ((c*KD + kd)*KH + kh)*KW + kw of cols for every entry n. One row at
    # a time, so that the writes run through memory in order: plane by plane they went to
    # K rows far apart, and a cols too big for the cache cost twice its size in traffic.
    cdef Py_ssize_t kd, kh, kw, c, n, od, i_d, lo, hi, off, hoff, olo, ohi, t
    cdef floating_t* dst
    cdef const floating_t* xp
    cdef Py_ssize_t OHW = g.OH * g.OW, size = g.D * g.H * g.W
    kw = row % g.KW
    t = row // g.KW
    kh = t % g.KH
    t = t // g.KH
    kd = t % g.KD
    c = t // g.KD
    off = kw * g.dw - g.pw
    hoff = kh * g.dh - g.ph
    _span(off, g.sw, g.W, g.OW, &lo, &hi)
    _span(hoff, g.sh, g.H, g.OH, &olo, &ohi)
    for n in range(N):
        dst = cols + row * g.rs + n * g.ns
        xp = x + (n * g.C + c) * size
        for od in range(g.OD):
            i_d = od * g.sd - g.pd + kd * g.dd
            if i_d < 0 or i_d >= g.D or ohi == olo:
                memset(dst, 0, OHW * sizeof(floating_t))
            else:
                if olo > 0:
                    memset(dst, 0, olo * g.OW * sizeof(floating_t))
                _tap_copy(xp + (i_d * g.H + olo * g.sh + hoff) * g.W + off, g.sh * g.W,
                          dst + olo * g.OW, ohi - olo, g.OW, lo, hi, g.sw)
                if ohi < g.OH:
                    memset(dst + ohi * g.OW, 0, (g.OH - ohi) * g.OW * sizeof(floating_t))
            dst += OHW


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _col2im_plane(const floating_t* cols, floating_t* x, Py_ssize_t n, Py_ssize_t c,
                        const Geom* g) noexcept nogil:
    # The adjoint of _im2col_row: adds the rows of entry n and channel c into x, the
    # (D, H, W) plane of (n, c). Plane by plane, so that threads never add into one plane.
    cdef Py_ssize_t kd, kh, kw, od, i_d, lo, hi, off, row, hoff, olo, ohi
    cdef const floating_t* src
    cdef Py_ssize_t OHW = g.OH * g.OW
    for kd in range(g.KD):
        for kh in range(g.KH):
            hoff = kh * g.dh - g.ph
            _span(hoff, g.sh, g.H, g.OH, &olo, &ohi)
            if ohi == olo:
                continue
            for kw in range(g.KW):
                row = ((c * g.KD + kd) * g.KH + kh) * g.KW + kw
                src = cols + row * g.rs + n * g.ns + olo * g.OW
                off = kw * g.dw - g.pw
                _span(off, g.sw, g.W, g.OW, &lo, &hi)
                for od in range(g.OD):
                    i_d = od * g.sd - g.pd + kd * g.dd
                    if i_d >= 0 and i_d < g.D:
                        _tap_add(src, x + (i_d * g.H + olo * g.sh + hoff) * g.W + off,
                                 g.sh * g.W, ohi - olo, g.OW, lo, hi, g.sw)
                    src += OHW


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _im2col(const floating_t* x, floating_t* cols, Py_ssize_t N, Geom g) noexcept nogil:
    cdef Py_ssize_t row, rows = g.C * g.KD * g.KH * g.KW
    cdef Py_ssize_t work = rows * N * g.OD * g.OH * g.OW
    if work >= PARALLEL_MIN and rows > 1:
        for row in prange(rows, schedule="static"):
            _im2col_row(x, cols, N, row, &g)
    else:
        for row in range(rows):
            _im2col_row(x, cols, N, row, &g)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _col2im(const floating_t* cols, floating_t* x, Py_ssize_t N, Geom g) noexcept nogil:
    cdef Py_ssize_t plane, planes = N * g.C, size = g.D * g.H * g.W
    cdef Py_ssize_t work = planes * g.KD * g.KH * g.KW * g.OD * g.OH * g.OW
    if work >= PARALLEL_MIN and planes > 1:
        for plane in prange(planes, schedule="static"):
            _col2im_plane(cols, x + plane * size, plane // g.C, plane % g.C, &g)
    else:
        for plane in range(planes):
            _col2im_plane(cols, x + plane * size, plane // g.C, plane % g.C, &g)


def _check_cols(x, cols, Py_ssize_t N, Py_ssize_t rows, Py_ssize_t P):
    if x.dtype != cols.dtype or x.dtype not in (np.float32, np.float64):
        raise TypeError(f"im2col/col2im: float32 or float64 arrays of one dtype expected, "
                        f"got {x.dtype} and {cols.dtype}")
    if not x.flags.c_contiguous or x.ndim != 5:
        raise ValueError("im2col/col2im: x must be a C-contiguous 5-d array")
    if cols.ndim != 3 or tuple(cols.shape) != (rows, N, P):
        raise ValueError(f"im2col/col2im: cols must have shape {(rows, N, P)}, "
                         f"got {tuple(cols.shape)}")
    st = cols.strides
    isz = cols.itemsize
    if st[2] != isz or st[0] % isz or st[1] % isz or st[0] < 0 or st[1] < 0:
        raise ValueError("im2col/col2im: cols must be contiguous along its last dim")


def im2col(x, cols, tuple kernel, tuple stride, tuple padding, tuple dilation, tuple out_size):
    """Write the patches of ``x`` (N, C, D, H, W) into ``cols``.

    ``cols`` is a 3-d (C*KD*KH*KW, N, OD*OH*OW) array (any strides on its first two
    dims, contiguous along the last): ``cols[(c, kd, kh, kw), n, (od, oh, ow)]`` is
    ``x[n, c, od*sd - pd + kd*dd, ...]``, or 0 where that falls in the padding.
    """
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1]
    cdef Py_ssize_t K = kernel[0] * kernel[1] * kernel[2]
    cdef Py_ssize_t P = out_size[0] * out_size[1] * out_size[2]
    _check_cols(x, cols, N, C * K, P)
    if cols.size == 0:
        return cols
    cdef Geom g = _geom(tuple(x.shape[2:]), kernel, stride, padding, dilation, out_size, C,
                        cols.strides[0] // cols.itemsize, cols.strides[1] // cols.itemsize)
    cdef cnp.ndarray xa = x, ca = cols
    if x.dtype == np.float32:
        with nogil:
            _im2col[float](<const float*>cnp.PyArray_DATA(xa), <float*>cnp.PyArray_DATA(ca),
                           N, g)
    else:
        with nogil:
            _im2col[double](<const double*>cnp.PyArray_DATA(xa),
                            <double*>cnp.PyArray_DATA(ca), N, g)
    return cols


def col2im(cols, x, tuple kernel, tuple stride, tuple padding, tuple dilation, tuple out_size):
    """Add the patches in ``cols`` back into ``x`` (N, C, D, H, W): the adjoint of
    :func:`im2col` (``x`` is accumulated into, so pass zeros for a plain col2im)."""
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1]
    cdef Py_ssize_t K = kernel[0] * kernel[1] * kernel[2]
    cdef Py_ssize_t P = out_size[0] * out_size[1] * out_size[2]
    _check_cols(x, cols, N, C * K, P)
    if cols.size == 0:
        return x
    cdef Geom g = _geom(tuple(x.shape[2:]), kernel, stride, padding, dilation, out_size, C,
                        cols.strides[0] // cols.itemsize, cols.strides[1] // cols.itemsize)
    cdef cnp.ndarray xa = x, ca = cols
    if x.dtype == np.float32:
        with nogil:
            _col2im[float](<const float*>cnp.PyArray_DATA(ca), <float*>cnp.PyArray_DATA(xa),
                           N, g)
    else:
        with nogil:
            _col2im[double](<const double*>cnp.PyArray_DATA(ca),
                            <double*>cnp.PyArray_DATA(xa), N, g)
    return x


# --- pooling ------------------------------------------------------------------------------
#
# A pooling window is given per spatial dim by two arrays over the outputs of that dim,
# first[o] and count[o], and one step: the window covers first + k*step for k < count,
# skipping positions outside [0, size). Max pooling (kernel, stride, padding, dilation)
# and adaptive pooling (windows [start, end)) are both of this form.

cdef struct Win:
    const i64* f0
    const i64* f1
    const i64* f2
    const i64* c0
    const i64* c1
    const i64* c2
    Py_ssize_t s0, s1, s2          # steps
    Py_ssize_t D, H, W, OD, OH, OW


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _max_plane(const floating_t* x, floating_t* out, i64* idx, const Win* w) noexcept nogil:
    cdef Py_ssize_t od, oh, ow, a, b, e, i_d, ih, iw, best, pos
    cdef floating_t m, v
    pos = 0
    for od in range(w.OD):
        for oh in range(w.OH):
            for ow in range(w.OW):
                m = -INFINITY
                best = -1
                for a in range(w.c0[od]):
                    i_d = w.f0[od] + a * w.s0
                    if i_d < 0 or i_d >= w.D:
                        continue
                    for b in range(w.c1[oh]):
                        ih = w.f1[oh] + b * w.s1
                        if ih < 0 or ih >= w.H:
                            continue
                        for e in range(w.c2[ow]):
                            iw = w.f2[ow] + e * w.s2
                            if iw < 0 or iw >= w.W:
                                continue
                            v = x[(i_d * w.H + ih) * w.W + iw]
                            # as PyTorch: NaN wins, and an all -inf window points at its first
                            if best < 0 or v > m or isnan(v):
                                m = v
                                best = (i_d * w.H + ih) * w.W + iw
                out[pos] = m
                idx[pos] = best
                pos += 1


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _max_pool(const floating_t* x, floating_t* out, i64* idx, Py_ssize_t planes,
                    Win w) noexcept nogil:
    cdef Py_ssize_t p, size = w.D * w.H * w.W, osize = w.OD * w.OH * w.OW
    if planes * osize >= PARALLEL_MIN // 4 and planes > 1:
        for p in prange(planes, schedule="static"):
            _max_plane(x + p * size, out + p * osize, idx + p * osize, &w)
    else:
        for p in range(planes):
            _max_plane(x + p * size, out + p * osize, idx + p * osize, &w)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _scatter_add_planes(const floating_t* g, const i64* idx, floating_t* gx,
                              Py_ssize_t planes, Py_ssize_t osize,
                              Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t p, o
    cdef const floating_t* gp
    cdef const i64* ip
    cdef floating_t* xp
    if planes * osize >= PARALLEL_MIN and planes > 1:
        for p in prange(planes, schedule="static"):
            gp = g + p * osize
            ip = idx + p * osize
            xp = gx + p * size
            for o in range(osize):
                xp[ip[o]] += gp[o]
    else:
        for p in range(planes):
            gp = g + p * osize
            ip = idx + p * osize
            xp = gx + p * size
            for o in range(osize):
                xp[ip[o]] += gp[o]


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _avg_plane(const floating_t* x, floating_t* out, const Win* w, const i64* v0,
                     const i64* v1, const i64* v2, Py_ssize_t override) noexcept nogil:
    # windows are clipped to the input already (steps are 1); v* give the divisors
    cdef Py_ssize_t od, oh, ow, i_d, ih, iw, pos = 0, div
    cdef floating_t s
    for od in range(w.OD):
        for oh in range(w.OH):
            for ow in range(w.OW):
                s = 0
                for i_d in range(w.f0[od], w.f0[od] + w.c0[od]):
                    for ih in range(w.f1[oh], w.f1[oh] + w.c1[oh]):
                        for iw in range(w.f2[ow], w.f2[ow] + w.c2[ow]):
                            s = s + x[(i_d * w.H + ih) * w.W + iw]
                div = override if override > 0 else v0[od] * v1[oh] * v2[ow]
                out[pos] = s / div
                pos += 1


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _avg_plane_backward(const floating_t* g, floating_t* gx, const Win* w, const i64* v0,
                              const i64* v1, const i64* v2,
                              Py_ssize_t override) noexcept nogil:
    cdef Py_ssize_t od, oh, ow, i_d, ih, iw, pos = 0, div
    cdef floating_t s
    for od in range(w.OD):
        for oh in range(w.OH):
            for ow in range(w.OW):
                div = override if override > 0 else v0[od] * v1[oh] * v2[ow]
                s = g[pos] / div
                pos += 1
                for i_d in range(w.f0[od], w.f0[od] + w.c0[od]):
                    for ih in range(w.f1[oh], w.f1[oh] + w.c1[oh]):
                        for iw in range(w.f2[ow], w.f2[ow] + w.c2[ow]):
                            gx[(i_d * w.H + ih) * w.W + iw] += s


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _avg_pool(const floating_t* x, floating_t* out, Py_ssize_t planes, Win w,
                    const i64* v0, const i64* v1, const i64* v2, Py_ssize_t override,
                    bint backward) noexcept nogil:
    cdef Py_ssize_t p, size = w.D * w.H * w.W, osize = w.OD * w.OH * w.OW
    if planes * osize >= PARALLEL_MIN // 4 and planes > 1:
        for p in prange(planes, schedule="static"):
            if backward:
                _avg_plane_backward(x + p * osize, out + p * size, &w, v0, v1, v2, override)
            else:
                _avg_plane(x + p * size, out + p * osize, &w, v0, v1, v2, override)
    else:
        for p in range(planes):
            if backward:
                _avg_plane_backward(x + p * osize, out + p * size, &w, v0, v1, v2, override)
            else:
                _avg_plane(x + p * size, out + p * osize, &w, v0, v1, v2, override)


cdef Win _win(tuple size, tuple windows, tuple steps):
    # windows: three (first, count) pairs of contiguous int64 arrays
    cdef Win w
    cdef cnp.ndarray f0 = windows[0][0], f1 = windows[1][0], f2 = windows[2][0]
    cdef cnp.ndarray c0 = windows[0][1], c1 = windows[1][1], c2 = windows[2][1]
    w.f0 = <const i64*>cnp.PyArray_DATA(f0)
    w.f1 = <const i64*>cnp.PyArray_DATA(f1)
    w.f2 = <const i64*>cnp.PyArray_DATA(f2)
    w.c0 = <const i64*>cnp.PyArray_DATA(c0)
    w.c1 = <const i64*>cnp.PyArray_DATA(c1)
    w.c2 = <const i64*>cnp.PyArray_DATA(c2)
    w.s0, w.s1, w.s2 = steps
    w.D, w.H, w.W = size
    w.OD, w.OH, w.OW = f0.shape[0], f1.shape[0], f2.shape[0]
    return w


def _check_windows(tuple windows):
    for first, count in windows:
        for a in (first, count):
            if (type(a) is not np.ndarray or a.dtype != np.int64 or a.ndim != 1
                    or not a.flags.c_contiguous):
                raise TypeError("pooling windows must be 1-d contiguous int64 arrays")
        if first.shape[0] != count.shape[0]:
            raise ValueError("pooling windows: first and count differ in length")


def _check_planes(x, str name):
    if type(x) is not np.ndarray or x.dtype not in (np.float32, np.float64):
        raise TypeError(f"{name}: a float32 or float64 NumPy array expected")
    if x.ndim != 4 or not x.flags.c_contiguous:
        raise ValueError(f"{name}: a C-contiguous (planes, D, H, W) array expected")


def max_pool(x, tuple windows, tuple steps):
    """Max pooling of ``x`` (planes, D, H, W) over the windows given per dim as
    ``(first, count)`` int64 arrays with ``steps``; returns (values, flat indices into
    each D*H*W plane)."""
    _check_planes(x, "max_pool")
    _check_windows(windows)
    cdef Win w = _win(tuple(x.shape[1:]), windows, steps)
    cdef Py_ssize_t planes = x.shape[0]
    out = np.empty((planes, w.OD, w.OH, w.OW), dtype=x.dtype)
    idx = np.empty((planes, w.OD, w.OH, w.OW), dtype=np.int64)
    cdef cnp.ndarray xa = x, oa = out, ia = idx
    if out.size == 0:
        return out, idx
    if x.dtype == np.float32:
        with nogil:
            _max_pool[float](<const float*>cnp.PyArray_DATA(xa), <float*>cnp.PyArray_DATA(oa),
                             <i64*>cnp.PyArray_DATA(ia), planes, w)
    else:
        with nogil:
            _max_pool[double](<const double*>cnp.PyArray_DATA(xa),
                              <double*>cnp.PyArray_DATA(oa), <i64*>cnp.PyArray_DATA(ia),
                              planes, w)
    return out, idx


def scatter_add_planes(g, idx, gx):
    """``gx[p, idx[p, o]] += g[p, o]`` for every plane p and output o: the backward of
    max pooling. ``g`` and ``idx`` are (planes, osize), ``gx`` (planes, size), all
    C-contiguous; the indices must be valid (in [0, size)) — they are not checked here."""
    if g.dtype != gx.dtype or g.dtype not in (np.float32, np.float64) or idx.dtype != np.int64:
        raise TypeError("scatter_add_planes: float32/float64 values and int64 indices expected")
    if not (g.flags.c_contiguous and idx.flags.c_contiguous and gx.flags.c_contiguous):
        raise ValueError("scatter_add_planes: C-contiguous arrays expected")
    if g.ndim != 2 or idx.shape != g.shape or gx.ndim != 2 or gx.shape[0] != g.shape[0]:
        raise ValueError("scatter_add_planes: shapes do not match")
    cdef Py_ssize_t planes = g.shape[0], osize = g.shape[1], size = gx.shape[1]
    cdef cnp.ndarray ga = g, ia = idx, xa = gx
    if g.size == 0:
        return gx
    if g.dtype == np.float32:
        with nogil:
            _scatter_add_planes[float](<const float*>cnp.PyArray_DATA(ga),
                                       <const i64*>cnp.PyArray_DATA(ia),
                                       <float*>cnp.PyArray_DATA(xa), planes, osize, size)
    else:
        with nogil:
            _scatter_add_planes[double](<const double*>cnp.PyArray_DATA(ga),
                                        <const i64*>cnp.PyArray_DATA(ia),
                                        <double*>cnp.PyArray_DATA(xa), planes, osize, size)
    return gx


def avg_pool(x, tuple windows, tuple divisors, Py_ssize_t divisor_override=0):
    """Average pooling of ``x`` (planes, D, H, W) over windows clipped to the input,
    given per dim as ``(first, count)`` int64 arrays (step 1); the divisor of output
    (od, oh, ow) is ``divisor_override`` if > 0, else the product of
    ``divisors[0][od] * divisors[1][oh] * divisors[2][ow]``."""
    _check_planes(x, "avg_pool")
    _check_windows(windows)
    cdef Win w = _win(tuple(x.shape[1:]), windows, (1, 1, 1))
    cdef Py_ssize_t planes = x.shape[0]
    out = np.empty((planes, w.OD, w.OH, w.OW), dtype=x.dtype)
    _avg_call(x, out, planes, w, divisors, divisor_override, False)
    return out


def avg_pool_backward(g, tuple in_size, tuple windows, tuple divisors,
                      Py_ssize_t divisor_override=0):
    """The adjoint of :func:`avg_pool`: ``g`` (planes, OD, OH, OW) spread back over the
    windows into a new (planes, *in_size) array."""
    _check_planes(g, "avg_pool_backward")
    _check_windows(windows)
    cdef Win w = _win(in_size, windows, (1, 1, 1))
    cdef Py_ssize_t planes = g.shape[0]
    if tuple(g.shape[1:]) != (w.OD, w.OH, w.OW):
        raise ValueError("avg_pool_backward: gradient shape does not match the windows")
    gx = np.zeros((planes,) + in_size, dtype=g.dtype)
    _avg_call(g, gx, planes, w, divisors, divisor_override, True)
    return gx


cdef _avg_call(src, dst, Py_ssize_t planes, Win w, tuple divisors, Py_ssize_t override,
               bint backward):
    cdef cnp.ndarray sa = src, da = dst
    cdef cnp.ndarray v0 = divisors[0], v1 = divisors[1], v2 = divisors[2]
    for v, n in zip(divisors, (w.OD, w.OH, w.OW)):
        if type(v) is not np.ndarray or v.dtype != np.int64 or v.shape != (n,) \
                or not v.flags.c_contiguous:
            raise TypeError("avg_pool: divisors must be 1-d contiguous int64 arrays")
    if src.size == 0 or dst.size == 0:
        return
    cdef const i64* p0 = <const i64*>cnp.PyArray_DATA(v0)
    cdef const i64* p1 = <const i64*>cnp.PyArray_DATA(v1)
    cdef const i64* p2 = <const i64*>cnp.PyArray_DATA(v2)
    if src.dtype == np.float32:
        with nogil:
            _avg_pool[float](<const float*>cnp.PyArray_DATA(sa), <float*>cnp.PyArray_DATA(da),
                             planes, w, p0, p1, p2, override, backward)
    else:
        with nogil:
            _avg_pool[double](<const double*>cnp.PyArray_DATA(sa),
                              <double*>cnp.PyArray_DATA(da), planes, w, p0, p1, p2, override,
                              backward)


# --- max pooling over regular windows (kernel, stride, padding, dilation) -----------------
#
# Row by row: for each output row (od, oh), every valid tap (a, b, e) is compared against
# the whole row of running maxima at once, so the innermost loop runs over the outputs
# with no per-element bounds checks. Each output still sees its taps in PyTorch's order
# (d, then h, then w), starts from -inf at its first valid position, and takes a tap when
# ``v > max or isnan(v)``: the same values and indices as PyTorch's loop.

cdef struct Reg:
    Py_ssize_t D, H, W, OD, OH, OW
    Py_ssize_t KD, KH, KW, sd, sh, sw, pd, ph, pw, dd, dh, dw


cdef extern from *:
    """
    #include <stdint.h>
    /* One tap of max pooling against a row of running maxima, branch-free so that a
       random comparison costs no misprediction (and the loop can vectorize). */
    #include <string.h>
    #define EMBER_MAX_ROW(NAME, T, U)                                                   \
    static inline void NAME(const T* __restrict row, T* __restrict o,                  \
                            int64_t* __restrict ib, Py_ssize_t lo, Py_ssize_t hi,      \
                            Py_ssize_t sw, Py_ssize_t off, int64_t rowbase) {          \
        for (Py_ssize_t ow = lo; ow < hi; ++ow) {                                      \
            Py_ssize_t iw = ow * sw + off;                                             \
            T v = row[iw];                                                             \
            T m = o[ow];                                                               \
            int take = (v > m) | (v != v);                                             \
            int64_t mask = -(int64_t)take;                                             \
            U um = (U)0 - (U)take, bv, bm;                                             \
            memcpy(&bv, &v, sizeof(T));                                                \
            memcpy(&bm, &m, sizeof(T));                                                \
            bm = (bm & ~um) | (bv & um);                                               \
            memcpy(&o[ow], &bm, sizeof(T));                                            \
            ib[ow] = (ib[ow] & ~mask) | ((int64_t)(rowbase + iw) & mask);              \
        }                                                                              \
    }
    EMBER_MAX_ROW(ember_max_row_f, float, uint32_t)
    EMBER_MAX_ROW(ember_max_row_d, double, uint64_t)
    /* A whole output row of 2x2 windows at stride 2 lying inside the rows r0, r1 (the
       common MaxPool2d(2)): the taps in PyTorch's order, the first one always taken
       (from -inf at the first position it gives the same value and index). */
    #define EMBER_TAP(T, U, V, POS)                                                    \
        take = (V > m) | (V != V);                                                     \
        um = (U)0 - (U)take;                                                           \
        memcpy(&bv, &V, sizeof(T));                                                    \
        bm = (bm & ~um) | (bv & um);                                                   \
        memcpy(&m, &bm, sizeof(T));                                                    \
        k = (k & ~-(int64_t)take) | ((int64_t)(POS) & -(int64_t)take);
    #define EMBER_MAX_ROW_2X2(NAME, T, U)                                               \
    static inline void NAME(const T* __restrict r0, const T* __restrict r1,            \
                            T* __restrict o, int64_t* __restrict ib, Py_ssize_t OW,   \
                            int64_t base, int64_t W) {                                 \
        for (Py_ssize_t ow = 0; ow < OW; ++ow) {                                       \
            Py_ssize_t i = 2 * ow;                                                     \
            T m = r0[i], v1 = r0[i + 1], v2 = r1[i], v3 = r1[i + 1];                   \
            int64_t k = base + i;                                                      \
            int take;                                                                  \
            U um, bv, bm;                                                              \
            memcpy(&bm, &m, sizeof(T));                                                \
            EMBER_TAP(T, U, v1, base + i + 1)                                          \
            EMBER_TAP(T, U, v2, base + W + i)                                          \
            EMBER_TAP(T, U, v3, base + W + i + 1)                                      \
            o[ow] = m;                                                                 \
            ib[ow] = k;                                                                \
        }                                                                              \
    }
    EMBER_MAX_ROW_2X2(ember_max_row_2x2_f, float, uint32_t)
    EMBER_MAX_ROW_2X2(ember_max_row_2x2_d, double, uint64_t)
    """
    void ember_max_row_f(const float* row, float* o, i64* ib, Py_ssize_t lo, Py_ssize_t hi,
                         Py_ssize_t sw, Py_ssize_t off, i64 rowbase) noexcept nogil
    void ember_max_row_d(const double* row, double* o, i64* ib, Py_ssize_t lo,
                         Py_ssize_t hi, Py_ssize_t sw, Py_ssize_t off,
                         i64 rowbase) noexcept nogil
    void ember_max_row_2x2_f(const float* r0, const float* r1, float* o, i64* ib,
                             Py_ssize_t OW, i64 base, i64 W) noexcept nogil
    void ember_max_row_2x2_d(const double* r0, const double* r1, double* o, i64* ib,
                             Py_ssize_t OW, i64 base, i64 W) noexcept nogil


cdef inline Py_ssize_t _first_valid(Py_ssize_t start, Py_ssize_t dil) noexcept nogil:
    # the first position start + k*dil that is >= 0 (PyTorch: while (start < 0) start += dil)
    if start < 0:
        start += _ceil_div(-start, dil) * dil
    return start


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _max_plane_regular(const floating_t* x, floating_t* out, i64* idx,
                             const Reg* r) noexcept nogil:
    cdef Py_ssize_t od, oh, ow, a, b, e, i_d, ih, d0, h0, off, lo, hi, rowbase
    cdef floating_t* o
    cdef i64* ib
    cdef const floating_t* row
    cdef i64 first
    if (r.KH == 2 and r.KW == 2 and r.sh == 2 and r.sw == 2 and r.ph == 0 and r.pw == 0
            and r.dh == 1 and r.dw == 1 and r.KD == 1 and r.pd == 0
            and (r.OD - 1) * r.sd < r.D and 2 * r.OH <= r.H and 2 * r.OW <= r.W):
        # 2x2 windows at stride 2, all inside the plane
        for od in range(r.OD):
            for oh in range(r.OH):
                rowbase = (od * r.sd * r.H + 2 * oh) * r.W
                o = out + (od * r.OH + oh) * r.OW
                ib = idx + (od * r.OH + oh) * r.OW
                if floating_t is float:
                    ember_max_row_2x2_f(x + rowbase, x + rowbase + r.W, o, ib, r.OW,
                                        rowbase, r.W)
                else:
                    ember_max_row_2x2_d(x + rowbase, x + rowbase + r.W, o, ib, r.OW,
                                        rowbase, r.W)
        return
    for od in range(r.OD):
        d0 = od * r.sd - r.pd
        for oh in range(r.OH):
            h0 = oh * r.sh - r.ph
            o = out + (od * r.OH + oh) * r.OW
            ib = idx + (od * r.OH + oh) * r.OW
            first = (_first_valid(d0, r.dd) * r.H + _first_valid(h0, r.dh)) * r.W
            for ow in range(r.OW):
                o[ow] = -INFINITY
                ib[ow] = first + _first_valid(ow * r.sw - r.pw, r.dw)
            for a in range(r.KD):
                i_d = d0 + a * r.dd
                if i_d < 0 or i_d >= r.D:
                    continue
                for b in range(r.KH):
                    ih = h0 + b * r.dh
                    if ih < 0 or ih >= r.H:
                        continue
                    rowbase = (i_d * r.H + ih) * r.W
                    row = x + rowbase
                    for e in range(r.KW):
                        off = e * r.dw - r.pw
                        _span(off, r.sw, r.W, r.OW, &lo, &hi)
                        if floating_t is float:
                            ember_max_row_f(row, o, ib, lo, hi, r.sw, off, rowbase)
                        else:
                            ember_max_row_d(row, o, ib, lo, hi, r.sw, off, rowbase)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _max_pool_regular(const floating_t* x, floating_t* out, i64* idx, Py_ssize_t planes,
                            Reg r) noexcept nogil:
    cdef Py_ssize_t p, size = r.D * r.H * r.W, osize = r.OD * r.OH * r.OW
    if planes * size >= PARALLEL_MIN // 4 and planes > 1:
        for p in prange(planes, schedule="static"):
            _max_plane_regular(x + p * size, out + p * osize, idx + p * osize, &r)
    else:
        for p in range(planes):
            _max_plane_regular(x + p * size, out + p * osize, idx + p * osize, &r)


def max_pool_regular(x, tuple kernel, tuple stride, tuple padding, tuple dilation,
                     tuple out_size):
    """Max pooling of ``x`` (planes, D, H, W) with 3-tuples of kernel, stride, padding
    (before; at most half the effective kernel) and dilation, to ``out_size`` (each
    output window must hold at least one input position, as PyTorch's output-size rule
    guarantees); returns (values, flat indices into each D*H*W plane)."""
    _check_planes(x, "max_pool_regular")
    cdef Reg r
    r.D, r.H, r.W = x.shape[1], x.shape[2], x.shape[3]
    r.OD, r.OH, r.OW = out_size
    r.KD, r.KH, r.KW = kernel
    r.sd, r.sh, r.sw = stride
    r.pd, r.ph, r.pw = padding
    r.dd, r.dh, r.dw = dilation
    if min(r.KD, r.KH, r.KW, r.sd, r.sh, r.sw, r.dd, r.dh, r.dw) <= 0 or \
            min(r.pd, r.ph, r.pw, r.OD, r.OH, r.OW) < 0:
        raise ValueError("max_pool_regular: invalid geometry")
    cdef Py_ssize_t planes = x.shape[0]
    out = np.empty((planes, r.OD, r.OH, r.OW), dtype=x.dtype)
    idx = np.empty((planes, r.OD, r.OH, r.OW), dtype=np.int64)
    cdef cnp.ndarray xa = x, oa = out, ia = idx
    if out.size == 0:
        return out, idx
    if x.dtype == np.float32:
        with nogil:
            _max_pool_regular[float](<const float*>cnp.PyArray_DATA(xa),
                                     <float*>cnp.PyArray_DATA(oa),
                                     <i64*>cnp.PyArray_DATA(ia), planes, r)
    else:
        with nogil:
            _max_pool_regular[double](<const double*>cnp.PyArray_DATA(xa),
                                      <double*>cnp.PyArray_DATA(oa),
                                      <i64*>cnp.PyArray_DATA(ia), planes, r)
    return out, idx


include "_winograd.pxi"
