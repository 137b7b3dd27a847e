"""Fused CPU kernels of the normalization layers and of cross-entropy.

One call per op and direction where NumPy would take several passes: statistics,
normalization and affine transform in one forward call, the closed-form gradients in
one backward call; log-softmax and the NLL of the targets in one forward pass, and
``softmax - onehot`` in one backward pass. No temporaries the size of the input, no
GIL, OpenMP over rows or channels when the work is large enough to pay for starting
the threads.

The inner loops over contiguous memory are C helpers (``_loss_norm.h``) written so
that the compiler vectorizes them (independent partial sums, a polynomial ``expf`` for
float32), compiled for AVX-512, AVX2 and the baseline with runtime dispatch.

Layouts: the callers reshape (never copy, unless the input is not contiguous) to
- cross-entropy: logits ``(N, C, S)``, targets ``(N, S)``: class ``c`` of row
  ``(n, s)`` is at ``n*C*S + c*S + s`` (S is 1 for plain ``(N, C)`` logits, whose rows
  are contiguous; with S > 1 blocks of CE_BLOCK rows of a sample run in the vector
  lanes, one class at a time);
- batch norm: ``(N, C, S)``, statistics per channel ``c`` (with S == 1, over column
  tiles of TILE channels whose accumulators stay in registers);
- layer norm: ``(M, K)``, statistics per row;
- group norm: ``(N, C, S)`` with ``G`` groups of ``C/G`` channels, statistics per
  ``(n, g)`` over its ``C/G*S`` contiguous elements.

Every public function checks dtypes, shapes and contiguity (and the user's class
indices) with the GIL before its loops run without bounds checks; a mismatch is a
Python exception, never an out-of-bounds access. Statistics accumulate in double
(float32 data in partial float sums of a few dozen terms, added in double).
"""

cimport cython
from cython.parallel cimport prange
from libc.math cimport exp, log, sqrt

import numpy as np

cimport numpy as cnp

cnp.import_array()

ctypedef fused floating_t:
    float
    double

include "_parallel.pxi"

# Below this much work (elements touched) a kernel runs on one thread: the fork/join
# and the spin-waiting threads afterwards cost more than they save (see
# NOTE [ OpenMP on few cores ]).
cdef Py_ssize_t PARALLEL_MIN = parallel_min(1 << 18)


cdef extern from "_loss_norm.h":
    double ember_sum_f(const float* x, Py_ssize_t n) nogil
    double ember_sum_d(const double* x, Py_ssize_t n) nogil
    double ember_sqdev_f(const float* x, Py_ssize_t n, float mean) nogil
    double ember_sqdev_d(const double* x, Py_ssize_t n, double mean) nogil
    double ember_dot_f(const float* a, const float* b, Py_ssize_t n) nogil
    double ember_dot_d(const double* a, const double* b, Py_ssize_t n) nogil
    void ember_sum2_f(const float* dy, const float* x, Py_ssize_t n, float mean, double* s_dy,
                      double* s_dyx) nogil
    void ember_sum2_d(const double* dy, const double* x, Py_ssize_t n, double mean, double* s_dy,
                      double* s_dyx) nogil
    void ember_affine_f(const float* x, float* y, Py_ssize_t n, float scale, float shift) nogil
    void ember_affine_d(const double* x, double* y, Py_ssize_t n, double scale, double shift) nogil
    void ember_lin2_f(const float* a, const float* b, float* y, Py_ssize_t n, float ca, float cb,
                      float cc) nogil
    void ember_lin2_d(const double* a, const double* b, double* y, Py_ssize_t n, double ca,
                      double cb, double cc) nogil
    void ember_bn_dx_f(const float* dy, const float* x, float* dx, Py_ssize_t n, float mean,
                       float mean_dy, float k, float a) nogil
    void ember_bn_dx_d(const double* dy, const double* x, double* dx, Py_ssize_t n, double mean,
                       double mean_dy, double k, double a) nogil
    float ember_max_f(const float* x, Py_ssize_t n) nogil
    double ember_max_d(const double* x, Py_ssize_t n) nogil
    double ember_sumexp_f(const float* x, Py_ssize_t n, float m) nogil
    double ember_sumexp_d(const double* x, Py_ssize_t n, double m) nogil
    void ember_expscale_f(const float* x, float* y, Py_ssize_t n, float shift, float scale) nogil
    void ember_expscale_d(const double* x, double* y, Py_ssize_t n, double shift,
                          double scale) nogil
    void ember_norm_row_f(const float* x, float* y, Py_ssize_t n, float mean, float rstd,
                          const float* w, const float* b) nogil
    void ember_norm_row_d(const double* x, double* y, Py_ssize_t n, double mean, double rstd,
                          const double* w, const double* b) nogil
    void ember_ln_sums_f(const float* dy, const float* x, const float* w, Py_ssize_t n, float mean,
                         float rstd, double* c1, double* c2) nogil
    void ember_ln_sums_d(const double* dy, const double* x, const double* w, Py_ssize_t n,
                         double mean, double rstd, double* c1, double* c2) nogil
    void ember_ln_dx_f(const float* dy, const float* x, const float* w, float* dx, Py_ssize_t n,
                       float mean, float rstd, float c1, float c2) nogil
    void ember_ln_dx_d(const double* dy, const double* x, const double* w, double* dx,
                       Py_ssize_t n, double mean, double rstd, double c1, double c2) nogil
    void ember_tsum_f(const float* x, Py_ssize_t rows, Py_ssize_t ld, double* out) nogil
    void ember_tsum_d(const double* x, Py_ssize_t rows, Py_ssize_t ld, double* out) nogil
    void ember_tsqdev_f(const float* x, Py_ssize_t rows, Py_ssize_t ld, const float* mean,
                        double* out) nogil
    void ember_tsqdev_d(const double* x, Py_ssize_t rows, Py_ssize_t ld, const double* mean,
                        double* out) nogil
    void ember_tsum2_f(const float* dy, const float* x, Py_ssize_t rows, Py_ssize_t ld,
                       const float* mean, double* s_dy, double* s_dyx) nogil
    void ember_tsum2_d(const double* dy, const double* x, Py_ssize_t rows, Py_ssize_t ld,
                       const double* mean, double* s_dy, double* s_dyx) nogil
    void ember_tln_f(const float* dy, const float* x, Py_ssize_t rows, Py_ssize_t ld,
                     const float* mean, const float* rstd, double* dw, double* db) nogil
    void ember_tln_d(const double* dy, const double* x, Py_ssize_t rows, Py_ssize_t ld,
                     const double* mean, const double* rstd, double* dw, double* db) nogil
    void ember_vmax_f(const float* x, float* m, Py_ssize_t n) nogil
    void ember_vmax_d(const double* x, double* m, Py_ssize_t n) nogil
    void ember_vsumexp_f(const float* x, const float* m, float* acc, Py_ssize_t n) nogil
    void ember_vsumexp_d(const double* x, const double* m, double* acc, Py_ssize_t n) nogil
    void ember_vaxpy_f(const float* x, float a, float* y, Py_ssize_t n) nogil
    void ember_vaxpy_d(const double* x, double a, double* y, Py_ssize_t n) nogil
    void ember_vexpgrad_f(const float* x, const float* l, const float* sc, const float* g2,
                          float cw, float* y, Py_ssize_t n) nogil
    void ember_vexpgrad_d(const double* x, const double* l, const double* sc, const double* g2,
                          double cw, double* y, Py_ssize_t n) nogil
    void ember_rowaffine_f(const float* x, float* y, Py_ssize_t n, const float* scale,
                           const float* shift) nogil
    void ember_rowaffine_d(const double* x, double* y, Py_ssize_t n, const double* scale,
                           const double* shift) nogil
    void ember_rowbn_dx_f(const float* dy, const float* x, float* dx, Py_ssize_t n,
                          const float* mean, const float* mean_dy, const float* k,
                          const float* a) nogil
    void ember_rowbn_dx_d(const double* dy, const double* x, double* dx, Py_ssize_t n,
                          const double* mean, const double* mean_dy, const double* k,
                          const double* a) nogil


cdef inline double _sum(const floating_t* x, Py_ssize_t n) noexcept nogil:
    if floating_t is float:
        return ember_sum_f(x, n)
    else:
        return ember_sum_d(x, n)


cdef inline double _sqdev(const floating_t* x, Py_ssize_t n, floating_t mean) noexcept nogil:
    if floating_t is float:
        return ember_sqdev_f(x, n, mean)
    else:
        return ember_sqdev_d(x, n, mean)


cdef inline double _dot(const floating_t* a, const floating_t* b, Py_ssize_t n) noexcept nogil:
    if floating_t is float:
        return ember_dot_f(a, b, n)
    else:
        return ember_dot_d(a, b, n)


cdef inline void _sum2(const floating_t* dy, const floating_t* x, Py_ssize_t n, floating_t mean,
                       double* s_dy, double* s_dyx) noexcept nogil:
    if floating_t is float:
        ember_sum2_f(dy, x, n, mean, s_dy, s_dyx)
    else:
        ember_sum2_d(dy, x, n, mean, s_dy, s_dyx)


cdef inline void _affine(const floating_t* x, floating_t* y, Py_ssize_t n, floating_t scale,
                         floating_t shift) noexcept nogil:
    if floating_t is float:
        ember_affine_f(x, y, n, scale, shift)
    else:
        ember_affine_d(x, y, n, scale, shift)


cdef inline void _lin2(const floating_t* a, const floating_t* b, floating_t* y, Py_ssize_t n,
                       floating_t ca, floating_t cb, floating_t cc) noexcept nogil:
    if floating_t is float:
        ember_lin2_f(a, b, y, n, ca, cb, cc)
    else:
        ember_lin2_d(a, b, y, n, ca, cb, cc)


cdef inline void _bn_dx(const floating_t* dy, const floating_t* x, floating_t* dx, Py_ssize_t n,
                        floating_t mean, floating_t mean_dy, floating_t k,
                        floating_t a) noexcept nogil:
    if floating_t is float:
        ember_bn_dx_f(dy, x, dx, n, mean, mean_dy, k, a)
    else:
        ember_bn_dx_d(dy, x, dx, n, mean, mean_dy, k, a)


cdef inline floating_t _max(const floating_t* x, Py_ssize_t n) noexcept nogil:
    if floating_t is float:
        return ember_max_f(x, n)
    else:
        return ember_max_d(x, n)


cdef inline double _sumexp(const floating_t* x, Py_ssize_t n, floating_t m) noexcept nogil:
    if floating_t is float:
        return ember_sumexp_f(x, n, m)
    else:
        return ember_sumexp_d(x, n, m)


cdef inline void _expscale(const floating_t* x, floating_t* y, Py_ssize_t n, floating_t shift,
                           floating_t scale) noexcept nogil:
    if floating_t is float:
        ember_expscale_f(x, y, n, shift, scale)
    else:
        ember_expscale_d(x, y, n, shift, scale)


cdef inline void _norm_row(const floating_t* x, floating_t* y, Py_ssize_t n, floating_t mean,
                           floating_t rstd, const floating_t* w,
                           const floating_t* b) noexcept nogil:
    if floating_t is float:
        ember_norm_row_f(x, y, n, mean, rstd, w, b)
    else:
        ember_norm_row_d(x, y, n, mean, rstd, w, b)


cdef inline void _ln_sums(const floating_t* dy, const floating_t* x, const floating_t* w,
                          Py_ssize_t n, floating_t mean, floating_t rstd, double* c1,
                          double* c2) noexcept nogil:
    if floating_t is float:
        ember_ln_sums_f(dy, x, w, n, mean, rstd, c1, c2)
    else:
        ember_ln_sums_d(dy, x, w, n, mean, rstd, c1, c2)


cdef inline void _ln_dx(const floating_t* dy, const floating_t* x, const floating_t* w,
                        floating_t* dx, Py_ssize_t n, floating_t mean, floating_t rstd,
                        floating_t c1, floating_t c2) noexcept nogil:
    if floating_t is float:
        ember_ln_dx_f(dy, x, w, dx, n, mean, rstd, c1, c2)
    else:
        ember_ln_dx_d(dy, x, w, dx, n, mean, rstd, c1, c2)


cdef enum:
    TILE = 16    # the columns of a tile: EMBER_TILE in _loss_norm.h


cdef inline void _tsum(const floating_t* x, Py_ssize_t rows, Py_ssize_t ld,
                       double* out) noexcept nogil:
    if floating_t is float:
        ember_tsum_f(x, rows, ld, out)
    else:
        ember_tsum_d(x, rows, ld, out)


cdef inline void _tsqdev(const floating_t* x, Py_ssize_t rows, Py_ssize_t ld,
                         const floating_t* mean, double* out) noexcept nogil:
    if floating_t is float:
        ember_tsqdev_f(x, rows, ld, mean, out)
    else:
        ember_tsqdev_d(x, rows, ld, mean, out)


cdef inline void _tsum2(const floating_t* dy, const floating_t* x, Py_ssize_t rows,
                        Py_ssize_t ld, const floating_t* mean, double* s_dy,
                        double* s_dyx) noexcept nogil:
    if floating_t is float:
        ember_tsum2_f(dy, x, rows, ld, mean, s_dy, s_dyx)
    else:
        ember_tsum2_d(dy, x, rows, ld, mean, s_dy, s_dyx)


cdef inline void _tln(const floating_t* dy, const floating_t* x, Py_ssize_t rows,
                      Py_ssize_t ld, const floating_t* mean, const floating_t* rstd, double* dw,
                      double* db) noexcept nogil:
    if floating_t is float:
        ember_tln_f(dy, x, rows, ld, mean, rstd, dw, db)
    else:
        ember_tln_d(dy, x, rows, ld, mean, rstd, dw, db)


cdef inline void _vmax(const floating_t* x, floating_t* m, Py_ssize_t n) noexcept nogil:
    if floating_t is float:
        ember_vmax_f(x, m, n)
    else:
        ember_vmax_d(x, m, n)


cdef inline void _vsumexp(const floating_t* x, const floating_t* m, floating_t* acc,
                          Py_ssize_t n) noexcept nogil:
    if floating_t is float:
        ember_vsumexp_f(x, m, acc, n)
    else:
        ember_vsumexp_d(x, m, acc, n)


cdef inline void _vaxpy(const floating_t* x, floating_t a, floating_t* y,
                        Py_ssize_t n) noexcept nogil:
    if floating_t is float:
        ember_vaxpy_f(x, a, y, n)
    else:
        ember_vaxpy_d(x, a, y, n)


cdef inline void _vexpgrad(const floating_t* x, const floating_t* l, const floating_t* sc,
                           const floating_t* g2, floating_t cw, floating_t* y,
                           Py_ssize_t n) noexcept nogil:
    if floating_t is float:
        ember_vexpgrad_f(x, l, sc, g2, cw, y, n)
    else:
        ember_vexpgrad_d(x, l, sc, g2, cw, y, n)


cdef inline void _rowaffine(const floating_t* x, floating_t* y, Py_ssize_t n,
                            const floating_t* scale, const floating_t* shift) noexcept nogil:
    if floating_t is float:
        ember_rowaffine_f(x, y, n, scale, shift)
    else:
        ember_rowaffine_d(x, y, n, scale, shift)


cdef inline void _rowbn_dx(const floating_t* dy, const floating_t* x, floating_t* dx, Py_ssize_t n,
                           const floating_t* mean, const floating_t* mean_dy, const floating_t* k,
                           const floating_t* a) noexcept nogil:
    if floating_t is float:
        ember_rowbn_dx_f(dy, x, dx, n, mean, mean_dy, k, a)
    else:
        ember_rowbn_dx_d(dy, x, dx, n, mean, mean_dy, k, a)


# ---------------------------------------------------------------------------
# argument checks (with the GIL)

cdef object _FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


cdef _check_array(str fn, str name, object a, object dtype, tuple shape):
    if type(a) is not np.ndarray:
        raise TypeError(f"{fn}: {name} must be a NumPy array, got {type(a).__name__}")
    if a.dtype != dtype:
        raise TypeError(f"{fn}: {name} has dtype {a.dtype}, expected {dtype}")
    if a.shape != shape:
        raise ValueError(f"{fn}: {name} has shape {a.shape}, expected {shape}")
    if not a.flags.c_contiguous:
        raise ValueError(f"{fn}: {name} must be C-contiguous")


cdef _check_input(str fn, object x, int ndim):
    if type(x) is not np.ndarray or x.dtype not in _FLOATS:
        raise TypeError(f"{fn}: expected a float32 or float64 NumPy array, got "
                        f"{getattr(x, 'dtype', type(x).__name__)}")
    if x.ndim != ndim:
        raise ValueError(f"{fn}: expected a {ndim}-d array, got {x.ndim}-d")
    if not x.flags.c_contiguous:
        raise ValueError(f"{fn}: the input must be C-contiguous")


cdef object _optional(str fn, str name, object a, object dtype, Py_ssize_t n):
    """``a`` checked as a length-n vector, or a dummy length-1 vector when None."""
    if a is None:
        return np.zeros(1, dtype=dtype)
    _check_array(fn, name, a, dtype, (n,))
    return a


# ---------------------------------------------------------------------------
# cross-entropy: log-softmax and negative log-likelihood in one pass

@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _first_bad_target(const cnp.int64_t[:, ::1] target, Py_ssize_t C,
                                  cnp.int64_t ignore_index) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef cnp.int64_t t
    for i in range(target.shape[0]):
        for j in range(target.shape[1]):
            t = target[i, j]
            if t != ignore_index and (t < 0 or t >= C):
                return i * target.shape[1] + j
    return -1


def check_targets(target, Py_ssize_t num_classes, long long ignore_index):
    """Raise PyTorch's IndexError if a class index of the 2-d int64 array ``target``
    is neither ``ignore_index`` nor in ``[0, num_classes)``."""
    cdef Py_ssize_t bad = _first_bad_target(target, num_classes, ignore_index)
    if bad >= 0:
        raise IndexError(f"Target {int(target.reshape(-1)[bad])} is out of bounds.")


cdef inline double _sum_weights(const floating_t* weight, bint has_weight,
                                Py_ssize_t C) noexcept nogil:
    if not has_weight:
        return <double>C
    return _sum(weight, C)


cdef inline double _ce_row(const floating_t* xr, Py_ssize_t C, Py_ssize_t stride,
                           cnp.int64_t t, const floating_t* weight, bint has_weight,
                           double smoothing, double all_w, double* lse) noexcept nogil:
    """The loss of one row of logits ``xr[c * stride]``; its log-sum-exp in ``lse``."""
    cdef Py_ssize_t c
    cdef floating_t m
    cdef double v, acc = 0.0, lse_v, wx = 0.0
    if stride == 1:
        m = _max(xr, C)
        lse_v = m + log(_sumexp(xr, C, m))
        if smoothing != 0:
            wx = _dot(weight, xr, C) if has_weight else _sum(xr, C)
    else:
        m = xr[0]
        for c in range(1, C):
            if xr[c * stride] > m or xr[c * stride] != xr[c * stride]:
                m = xr[c * stride]
        for c in range(C):
            acc = acc + exp(xr[c * stride] - m)
        lse_v = m + log(acc)
        if smoothing != 0:
            for c in range(C):
                wx = wx + (weight[c] if has_weight else 1.0) * xr[c * stride]
    lse[0] = lse_v
    v = -(weight[t] if has_weight else 1.0) * (xr[t * stride] - lse_v)
    if smoothing != 0:
        # the uniform part: -sum_c w_c * log p_c = sum(w) * lse - sum_c w_c * x_c
        v = (1.0 - smoothing) * v + smoothing / C * (all_w * lse_v - wx)
    return v


cdef inline void _ce_row_grad(const floating_t* xr, floating_t* dxr, Py_ssize_t C,
                              Py_ssize_t stride, cnp.int64_t t, const floating_t* weight,
                              bint has_weight, double smoothing, double all_w, floating_t lse_v,
                              double g) noexcept nogil:
    # softmax - onehot, scaled; with smoothing
    # keep * wt * (p - onehot) + share * (p * sum(w) - w)
    cdef Py_ssize_t c
    cdef double wt = weight[t] if has_weight else 1.0
    cdef double keep = 1.0 - smoothing, share = smoothing / C
    cdef double pscale = g * (keep * wt + share * all_w)
    if stride == 1:
        _expscale(xr, dxr, C, lse_v, <floating_t>pscale)
        if smoothing != 0:
            if has_weight:
                _lin2(dxr, weight, dxr, C, 1, <floating_t>(-g * share), 0)
            else:
                _affine(dxr, dxr, C, 1, <floating_t>(-g * share))
    else:
        for c in range(C):
            dxr[c * stride] = <floating_t>(pscale * exp(xr[c * stride] - lse_v)
                                           - g * share * (weight[c] if has_weight else 1.0))
    dxr[t * stride] = <floating_t>(dxr[t * stride] - g * keep * wt)


cdef enum:
    CE_BLOCK = 128    # the rows of cross-entropy's blocks (S > 1)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef double _ce_block_fwd(const floating_t* xn, Py_ssize_t C, Py_ssize_t S, Py_ssize_t s0,
                          Py_ssize_t B, const cnp.int64_t* tn, const floating_t* weight,
                          bint has_weight, cnp.int64_t ignore_index, double smoothing,
                          double all_w, floating_t* loss_n, floating_t* lse_n) noexcept nogil:
    """Cross-entropy of the rows s0 .. s0+B-1 (B <= CE_BLOCK) of sample n (S > 1):
    the classes one at a time, each a contiguous run over the block's rows. Returns
    the sum of the targets' weights over the rows not ignored."""
    cdef floating_t m[CE_BLOCK]
    cdef floating_t acc[CE_BLOCK]
    cdef floating_t wx[CE_BLOCK]
    cdef Py_ssize_t c, i, s
    cdef cnp.int64_t t
    cdef double lse_v, v, wt, total = 0.0
    for i in range(B):
        m[i] = xn[s0 + i]
        acc[i] = 0
        wx[i] = 0
    for c in range(1, C):
        _vmax(xn + c * S + s0, m, B)
    for c in range(C):
        _vsumexp(xn + c * S + s0, m, acc, B)
    if smoothing != 0:
        for c in range(C):
            _vaxpy(xn + c * S + s0, <floating_t>(weight[c] if has_weight else 1.0), wx, B)
    for i in range(B):
        s = s0 + i
        t = tn[s]
        if t == ignore_index:
            loss_n[s] = 0
            lse_n[s] = 0
            continue
        lse_v = m[i] + log(<double>acc[i])
        wt = weight[t] if has_weight else 1.0
        v = -wt * (xn[t * S + s] - lse_v)
        if smoothing != 0:
            v = (1.0 - smoothing) * v + smoothing / C * (all_w * lse_v - wx[i])
        loss_n[s] = <floating_t>v
        lse_n[s] = <floating_t>lse_v
        total = total + wt
    return total


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _ce_block_bwd(const floating_t* xn, floating_t* dxn, Py_ssize_t C, Py_ssize_t S,
                        Py_ssize_t s0, Py_ssize_t B, const cnp.int64_t* tn,
                        const floating_t* weight, bint has_weight, cnp.int64_t ignore_index,
                        double smoothing, double all_w, const floating_t* lse_n,
                        const floating_t* grad_n, bint per_row, double scale) noexcept nogil:
    """The gradient of :func:`_ce_block_fwd`'s rows w.r.t. the logits."""
    cdef floating_t sc[CE_BLOCK]
    cdef floating_t g2[CE_BLOCK]
    cdef Py_ssize_t c, i, s
    cdef cnp.int64_t t
    cdef double g, wt, keep = 1.0 - smoothing, share = smoothing / C
    cdef bint any_ignored = False
    for i in range(B):
        s = s0 + i
        t = tn[s]
        if t == ignore_index:
            sc[i] = 0
            g2[i] = 0
            any_ignored = True
        else:
            g = grad_n[s] * scale if per_row else scale
            wt = weight[t] if has_weight else 1.0
            sc[i] = <floating_t>(g * (keep * wt + share * all_w))
            g2[i] = <floating_t>(g * share)
    for c in range(C):
        _vexpgrad(xn + c * S + s0, lse_n + s0, sc, g2,
                  <floating_t>(weight[c] if has_weight else 1.0), dxn + c * S + s0, B)
    for i in range(B):
        s = s0 + i
        t = tn[s]
        if t == ignore_index:
            if any_ignored:
                for c in range(C):
                    dxn[c * S + s] = 0
        else:
            g = grad_n[s] * scale if per_row else scale
            wt = weight[t] if has_weight else 1.0
            dxn[t * S + s] = <floating_t>(dxn[t * S + s] - g * keep * wt)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef double _cross_entropy_fwd(const floating_t[:, :, ::1] x, const cnp.int64_t[:, ::1] target,
                               const floating_t[::1] weight, bint has_weight,
                               cnp.int64_t ignore_index, double smoothing,
                               floating_t[:, ::1] loss, floating_t[:, ::1] lse) noexcept nogil:
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], S = x.shape[2]
    cdef Py_ssize_t r, n, s
    cdef cnp.int64_t t
    cdef double lse_v = 0.0, total = 0.0
    cdef double all_w = _sum_weights(&weight[0], has_weight, C)
    cdef Py_ssize_t nb = (S + CE_BLOCK - 1) // CE_BLOCK, b0
    if S > 1:
        for r in prange(N * nb, schedule="static", use_threads_if=N * S * C >= PARALLEL_MIN):
            n = r // nb
            b0 = (r - n * nb) * CE_BLOCK
            total += _ce_block_fwd(&x[n, 0, 0], C, S, b0, min(CE_BLOCK, S - b0), &target[n, 0],
                                   &weight[0], has_weight, ignore_index, smoothing, all_w,
                                   &loss[n, 0], &lse[n, 0])
        return total
    for r in prange(N * S, schedule="static", use_threads_if=N * S * C >= PARALLEL_MIN):
        n = r // S
        s = r - n * S
        t = target[n, s]
        lse_v = 0.0
        if t == ignore_index:
            loss[n, s] = 0
            lse[n, s] = 0
        else:
            loss[n, s] = <floating_t>_ce_row(&x[n, 0, s], C, S, t, &weight[0], has_weight,
                                             smoothing, all_w, &lse_v)
            lse[n, s] = <floating_t>lse_v
            total += weight[t] if has_weight else 1.0
    return total


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _cross_entropy_bwd(const floating_t[:, :, ::1] x, const cnp.int64_t[:, ::1] target,
                             const floating_t[::1] weight, bint has_weight,
                             cnp.int64_t ignore_index, double smoothing,
                             const floating_t[:, ::1] lse, const floating_t[:, ::1] grad,
                             bint per_row, double scale,
                             floating_t[:, :, ::1] dx) noexcept nogil:
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], S = x.shape[2]
    cdef Py_ssize_t r, n, s, c
    cdef cnp.int64_t t
    cdef double g
    cdef double all_w = _sum_weights(&weight[0], has_weight, C)
    cdef Py_ssize_t nb = (S + CE_BLOCK - 1) // CE_BLOCK, b0
    if S > 1:
        for r in prange(N * nb, schedule="static", use_threads_if=N * S * C >= PARALLEL_MIN):
            n = r // nb
            b0 = (r - n * nb) * CE_BLOCK
            _ce_block_bwd(&x[n, 0, 0], &dx[n, 0, 0], C, S, b0, min(CE_BLOCK, S - b0),
                          &target[n, 0], &weight[0], has_weight, ignore_index, smoothing, all_w,
                          &lse[n, 0], &grad[n, 0], per_row, scale)
        return
    for r in prange(N * S, schedule="static", use_threads_if=N * S * C >= PARALLEL_MIN):
        n = r // S
        s = r - n * S
        t = target[n, s]
        if t == ignore_index:
            for c in range(C):
                dx[n, c, s] = 0
        else:
            g = grad[n, s] * scale if per_row else scale
            _ce_row_grad(&x[n, 0, s], &dx[n, 0, s], C, S, t, &weight[0], has_weight,
                         smoothing, all_w, lse[n, s], g)


def cross_entropy_forward(x, target, weight, long long ignore_index, double label_smoothing):
    """Per-row losses of cross-entropy with class indices, and what backward needs.

    ``x``: (N, C, S) float32/float64 logits; ``target``: (N, S) int64; ``weight``:
    (C,) of x's dtype or None. Returns ``(loss, lse, total_weight)``: ``loss`` (N, S)
    (0 where the target is ``ignore_index``), the log-sum-exp of every row (N, S) and
    the sum of the targets' weights over the rows not ignored (the divisor of 'mean').
    """
    fn = "cross_entropy_forward"
    _check_input(fn, x, 3)
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], S = x.shape[2]
    _check_array(fn, "target", target, np.dtype(np.int64), (N, S))
    w = _optional(fn, "weight", weight, x.dtype, C)
    if C == 0:
        raise ValueError(f"{fn}: no classes")
    check_targets(target, C, ignore_index)
    loss = np.empty((N, S), dtype=x.dtype)
    lse = np.empty((N, S), dtype=x.dtype)
    cdef double total
    if x.dtype == np.float32:
        total = _cross_entropy_fwd[float](x, target, w, weight is not None, ignore_index,
                                          label_smoothing, loss, lse)
    else:
        total = _cross_entropy_fwd[double](x, target, w, weight is not None, ignore_index,
                                           label_smoothing, loss, lse)
    return loss, lse, total


def cross_entropy_backward(x, target, weight, long long ignore_index, double label_smoothing,
                           lse, grad, double scale):
    """The gradient of :func:`cross_entropy_forward`'s losses w.r.t. the logits.

    ``grad`` is None when every row's loss has the same gradient ``scale`` (the
    'mean' and 'sum' reductions), else the (N, S) gradient of each row's loss, scaled
    by ``scale``.
    """
    fn = "cross_entropy_backward"
    _check_input(fn, x, 3)
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], S = x.shape[2]
    _check_array(fn, "target", target, np.dtype(np.int64), (N, S))
    w = _optional(fn, "weight", weight, x.dtype, C)
    _check_array(fn, "lse", lse, x.dtype, (N, S))
    per_row = grad is not None
    if per_row:
        _check_array(fn, "grad", grad, x.dtype, (N, S))
    else:
        grad = lse
    if C == 0:
        raise ValueError(f"{fn}: no classes")
    check_targets(target, C, ignore_index)
    dx = np.empty_like(x)
    if x.dtype == np.float32:
        _cross_entropy_bwd[float](x, target, w, weight is not None, ignore_index,
                                  label_smoothing, lse, grad, per_row, scale, dx)
    else:
        _cross_entropy_bwd[double](x, target, w, weight is not None, ignore_index,
                                   label_smoothing, lse, grad, per_row, scale, dx)
    return dx


# ---------------------------------------------------------------------------
# the norms: batch norm, layer norm, group norm

include "_norms.pxi"
