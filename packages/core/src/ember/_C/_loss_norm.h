/* Row helpers of _loss_norm: contiguous loops written so that GCC vectorizes them
   (independent lanes instead of one accumulator; no calls inside the loops; a
   polynomial expf), compiled for AVX-512, AVX2 and the baseline with runtime dispatch
   where GCC's target_clones is available (x86-64 Linux). Every function exists for
   float (suffix _f) and double (_d); the Cython declarations are in _loss_norm.pyx. */
#ifndef EMBER_LOSS_NORM_H
#define EMBER_LOSS_NORM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_simd.h"

#define EMBER_LANES 16
#define EMBER_TILE 16

static inline double ember_expd(double x) { return exp(x); }

#define EMBER_DEFINE(T, S, EXP)                                                              \
EMBER_CLONES static double ember_sum_##S(const T *x, Py_ssize_t n) {                     \
    double acc[EMBER_LANES] = {0};                                                           \
    Py_ssize_t i = 0, j;                                                                     \
    for (; i + EMBER_LANES <= n; i += EMBER_LANES)                                           \
        for (j = 0; j < EMBER_LANES; j++) acc[j] += x[i + j];                                \
    double s = 0;                                                                            \
    for (; i < n; i++) s += x[i];                                                            \
    for (j = 0; j < EMBER_LANES; j++) s += acc[j];                                           \
    return s;                                                                                \
}                                                                                            \
EMBER_CLONES static double ember_sqdev_##S(const T *x, Py_ssize_t n, T mean) {           \
    double acc[EMBER_LANES] = {0};                                                           \
    Py_ssize_t i = 0, j;                                                                     \
    for (; i + EMBER_LANES <= n; i += EMBER_LANES)                                           \
        for (j = 0; j < EMBER_LANES; j++) {                                                  \
            double d = (double)x[i + j] - (double)mean;                                      \
            acc[j] += d * d;                                                                 \
        }                                                                                    \
    double s = 0;                                                                            \
    for (; i < n; i++) { double d = x[i] - mean; s += d * d; }                              \
    for (j = 0; j < EMBER_LANES; j++) s += acc[j];                                           \
    return s;                                                                                \
}                                                                                            \
EMBER_CLONES static double ember_dot_##S(const T *a, const T *b, Py_ssize_t n) {         \
    T acc[EMBER_LANES] = {0};                                                                \
    Py_ssize_t i = 0, j;                                                                     \
    for (; i + EMBER_LANES <= n; i += EMBER_LANES)                                           \
        for (j = 0; j < EMBER_LANES; j++) acc[j] += a[i + j] * b[i + j];                     \
    double s = 0;                                                                            \
    for (; i < n; i++) s += (double)a[i] * b[i];                                             \
    for (j = 0; j < EMBER_LANES; j++) s += acc[j];                                           \
    return s;                                                                                \
}                                                                                            \
/* sum(dy) and sum(dy * (x - mean)) */                                                       \
EMBER_CLONES static void ember_sum2_##S(const T *dy, const T *x, Py_ssize_t n, T mean,   \
                                         double *s_dy, double *s_dyx) {                      \
    /* the loads first, then the updates, 32 lanes: GCC 12 makes AVX-512 code 10-30x         \
       slower of the fused form (a1[j] += dy; a2[j] += dy * (x - mean)) or of 64 lanes */    \
    T a1[32] = {0}, a2[32] = {0};                                                            \
    Py_ssize_t i = 0, j;                                                                     \
    for (; i + 32 <= n; i += 32) {                                                           \
        T t1[32], t2[32];                                                                    \
        for (j = 0; j < 32; j++) { t1[j] = dy[i + j]; t2[j] = x[i + j] - mean; }             \
        for (j = 0; j < 32; j++) { a1[j] += t1[j]; a2[j] += t1[j] * t2[j]; }                 \
    }                                                                                        \
    double s1 = 0, s2 = 0;                                                                   \
    for (; i < n; i++) { s1 += dy[i]; s2 += (double)dy[i] * (x[i] - mean); }                 \
    for (j = 0; j < 32; j++) { s1 += a1[j]; s2 += a2[j]; }                                   \
    *s_dy += s1;                                                                             \
    *s_dyx += s2;                                                                            \
}                                                                                            \
/* y = x * scale + shift */                                                                  \
EMBER_CLONES static void ember_affine_##S(const T *x, T *y, Py_ssize_t n, T scale,       \
                                           T shift) {                                        \
    for (Py_ssize_t i = 0; i < n; i++) y[i] = x[i] * scale + shift;                          \
}                                                                                            \
/* y = ca * a + cb * b + cc */                                                               \
EMBER_CLONES static void ember_lin2_##S(const T *a, const T *b, T *y, Py_ssize_t n, T ca, \
                                         T cb, T cc) {                                       \
    for (Py_ssize_t i = 0; i < n; i++) y[i] = ca * a[i] + cb * b[i] + cc;                    \
}                                                                                            \
/* batch norm's input gradient: (dy - mean_dy - (x - mean) * k) * a */                       \
EMBER_CLONES static void ember_bn_dx_##S(const T *dy, const T *x, T *dx, Py_ssize_t n,    \
                                          T mean, T mean_dy, T k, T a) {                     \
    for (Py_ssize_t i = 0; i < n; i++)                                                       \
        dx[i] = (dy[i] - mean_dy - (x[i] - mean) * k) * a;                                   \
}                                                                                            \
/* max of n >= 1 values, NaN ignored unless x[0] is NaN: the callers' sums of         \
   exp(x - max) are NaN when any x is, which is what they need */                         \
EMBER_CLONES static T ember_max_##S(const T *x, Py_ssize_t n) {                          \
    T m[EMBER_LANES];                                                                        \
    Py_ssize_t i = 0, j;                                                                     \
    for (j = 0; j < EMBER_LANES; j++) m[j] = x[0];                                           \
    for (; i + EMBER_LANES <= n; i += EMBER_LANES)                                           \
        for (j = 0; j < EMBER_LANES; j++) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];          \
    T r = x[0];                                                                              \
    for (; i < n; i++) r = x[i] > r ? x[i] : r;                                              \
    for (j = 0; j < EMBER_LANES; j++) r = m[j] > r ? m[j] : r;                               \
    return r;                                                                                \
}                                                                                            \
/* sum(exp(x - m)) */                                                                        \
EMBER_CLONES static double ember_sumexp_##S(const T *x, Py_ssize_t n, T m) {             \
    T acc[EMBER_LANES] = {0};                                                                \
    Py_ssize_t i = 0, j;                                                                     \
    for (; i + EMBER_LANES <= n; i += EMBER_LANES)                                           \
        for (j = 0; j < EMBER_LANES; j++) acc[j] += EXP(x[i + j] - m);                       \
    double s = 0;                                                                            \
    for (; i < n; i++) s += EXP(x[i] - m);                                                   \
    for (j = 0; j < EMBER_LANES; j++) s += acc[j];                                           \
    return s;                                                                                \
}                                                                                            \
/* y = scale * exp(x - shift) */                                                             \
EMBER_CLONES static void ember_expscale_##S(const T *x, T *y, Py_ssize_t n, T shift,     \
                                             T scale) {                                      \
    for (Py_ssize_t i = 0; i < n; i++) y[i] = scale * EXP(x[i] - shift);                     \
}                                                                                            \
/* layer norm of one row: y = (x - mean) * rstd [* w] [+ b] */                               \
EMBER_CLONES static void ember_norm_row_##S(const T *x, T *y, Py_ssize_t n, T mean,      \
                                             T rstd, const T *w, const T *b) {               \
    Py_ssize_t i;                                                                            \
    if (w && b) for (i = 0; i < n; i++) y[i] = (x[i] - mean) * rstd * w[i] + b[i];           \
    else if (w) for (i = 0; i < n; i++) y[i] = (x[i] - mean) * rstd * w[i];                  \
    else if (b) for (i = 0; i < n; i++) y[i] = (x[i] - mean) * rstd + b[i];                  \
    else for (i = 0; i < n; i++) y[i] = (x[i] - mean) * rstd;                                \
}                                                                                            \
/* layer norm backward sums of one row: c1 = sum(a * xhat), c2 = sum(a), a = dy [* w] */    \
EMBER_CLONES static void ember_ln_sums_##S(const T *dy, const T *x, const T *w,          \
                                            Py_ssize_t n, T mean, T rstd, double *c1,        \
                                            double *c2) {                                    \
    T a1[EMBER_LANES] = {0}, a2[EMBER_LANES] = {0};                                          \
    Py_ssize_t i = 0, j;                                                                     \
    for (; i + EMBER_LANES <= n; i += EMBER_LANES)                                           \
        for (j = 0; j < EMBER_LANES; j++) {                                                  \
            T a = w ? dy[i + j] * w[i + j] : dy[i + j];                                      \
            a1[j] += a * (x[i + j] - mean) * rstd;                                           \
            a2[j] += a;                                                                      \
        }                                                                                    \
    double s1 = 0, s2 = 0;                                                                   \
    for (; i < n; i++) {                                                                     \
        double a = w ? (double)dy[i] * w[i] : dy[i];                                         \
        s1 += a * (x[i] - mean) * rstd;                                                      \
        s2 += a;                                                                             \
    }                                                                                        \
    for (j = 0; j < EMBER_LANES; j++) { s1 += a1[j]; s2 += a2[j]; }                          \
    *c1 = s1;                                                                                \
    *c2 = s2;                                                                                \
}                                                                                            \
/* layer norm input gradient of one row: rstd * (a - c2 - xhat * c1) */                      \
EMBER_CLONES static void ember_ln_dx_##S(const T *dy, const T *x, const T *w, T *dx,     \
                                          Py_ssize_t n, T mean, T rstd, T c1, T c2) {        \
    Py_ssize_t i;                                                                            \
    if (w) for (i = 0; i < n; i++)                                                           \
        dx[i] = rstd * (dy[i] * w[i] - c2 - (x[i] - mean) * rstd * c1);                      \
    else for (i = 0; i < n; i++)                                                             \
        dx[i] = rstd * (dy[i] - c2 - (x[i] - mean) * rstd * c1);                             \
}                                                                                            \
/* column tiles: EMBER_TILE columns of (rows, ld) row-major data summed over the rows, \
   the accumulators in registers (no stores in the loop, so no 4K-aliasing stalls    \
   against the loads when the row length is a power of two) */                       \
EMBER_CLONES static void ember_tsum_##S(const T *x, Py_ssize_t rows, Py_ssize_t ld,     \
                                         double *out) {                                     \
    double acc[EMBER_TILE] = {0};                                                            \
    int j;                                                                                   \
    for (Py_ssize_t r = 0; r < rows; r++) {                                                  \
        const T *p = x + r * ld;                                                             \
        for (j = 0; j < EMBER_TILE; j++) acc[j] += p[j];                                     \
    }                                                                                        \
    for (j = 0; j < EMBER_TILE; j++) out[j] = acc[j];                                        \
}                                                                                            \
EMBER_CLONES static void ember_tsqdev_##S(const T *x, Py_ssize_t rows, Py_ssize_t ld,   \
                                           const T *mean, double *out) {                     \
    double acc[EMBER_TILE] = {0};                                                            \
    T m[EMBER_TILE];                                                                         \
    int j;                                                                                   \
    for (j = 0; j < EMBER_TILE; j++) m[j] = mean[j];                                         \
    for (Py_ssize_t r = 0; r < rows; r++) {                                                  \
        const T *p = x + r * ld;                                                             \
        for (j = 0; j < EMBER_TILE; j++) { T d = p[j] - m[j]; acc[j] += (double)(d * d); }   \
    }                                                                                        \
    for (j = 0; j < EMBER_TILE; j++) out[j] = acc[j];                                        \
}                                                                                            \
EMBER_CLONES static void ember_tsum2_##S(const T *dy, const T *x, Py_ssize_t rows,      \
                                          Py_ssize_t ld, const T *mean, double *s_dy,        \
                                          double *s_dyx) {                                   \
    double a1[EMBER_TILE] = {0}, a2[EMBER_TILE] = {0};                                       \
    T m[EMBER_TILE];                                                                         \
    int j;                                                                                   \
    for (j = 0; j < EMBER_TILE; j++) m[j] = mean[j];                                         \
    for (Py_ssize_t r = 0; r < rows; r++) {                                                  \
        const T *p = dy + r * ld, *q = x + r * ld;                                           \
        for (j = 0; j < EMBER_TILE; j++) {                                                   \
            a1[j] += p[j];                                                                   \
            a2[j] += (double)(p[j] * (q[j] - m[j]));                                         \
        }                                                                                    \
    }                                                                                        \
    for (j = 0; j < EMBER_TILE; j++) { s_dy[j] = a1[j]; s_dyx[j] = a2[j]; }                  \
}                                                                                            \
/* layer norm's weight and bias gradients over a tile of EMBER_TILE columns:          \
   dw[j] = sum_r dy[r, j] * (x[r, j] - mean[r]) * rstd[r], db[j] = sum_r dy[r, j] */     \
EMBER_CLONES static void ember_tln_##S(const T *dy, const T *x, Py_ssize_t rows,        \
                                        Py_ssize_t ld, const T *mean, const T *rstd,         \
                                        double *dw, double *db) {                            \
    double a1[EMBER_TILE] = {0}, a2[EMBER_TILE] = {0};                                       \
    int j;                                                                                   \
    for (Py_ssize_t r = 0; r < rows; r++) {                                                  \
        const T *p = dy + r * ld, *q = x + r * ld;                                           \
        T m = mean[r], s = rstd[r];                                                          \
        for (j = 0; j < EMBER_TILE; j++) {                                                   \
            a1[j] += (double)(p[j] * ((q[j] - m) * s));                                      \
            a2[j] += p[j];                                                                   \
        }                                                                                    \
    }                                                                                        \
    for (j = 0; j < EMBER_TILE; j++) { dw[j] = a1[j]; db[j] = a2[j]; }                       \
}                                                                                            \
/* cross-entropy over (N, C, S) logits, S > 1: the rows of a block of s run in the   \
   lanes; one class c at a time is a contiguous run of x[n, c, s0:s0+n] */             \
EMBER_CLONES static void ember_vmax_##S(const T *x, T *m, Py_ssize_t n) {               \
    for (Py_ssize_t i = 0; i < n; i++) m[i] = (x[i] > m[i] || x[i] != x[i]) ? x[i] : m[i]; \
}                                                                                            \
EMBER_CLONES static void ember_vsumexp_##S(const T *x, const T *m, T *acc, Py_ssize_t n) { \
    for (Py_ssize_t i = 0; i < n; i++) acc[i] += EXP(x[i] - m[i]);                           \
}                                                                                            \
EMBER_CLONES static void ember_vaxpy_##S(const T *x, T a, T *y, Py_ssize_t n) {         \
    for (Py_ssize_t i = 0; i < n; i++) y[i] += a * x[i];                                     \
}                                                                                            \
/* y = sc * exp(x - l) - cw * g2 */                                                          \
EMBER_CLONES static void ember_vexpgrad_##S(const T *x, const T *l, const T *sc,        \
                                             const T *g2, T cw, T *y, Py_ssize_t n) {        \
    for (Py_ssize_t i = 0; i < n; i++) y[i] = sc[i] * EXP(x[i] - l[i]) - cw * g2[i];         \
}                                                                                            \
/* y = x * scale + shift with per-column scale and shift */                                  \
EMBER_CLONES static void ember_rowaffine_##S(const T *x, T *y, Py_ssize_t n,             \
                                              const T *scale, const T *shift) {              \
    for (Py_ssize_t i = 0; i < n; i++) y[i] = x[i] * scale[i] + shift[i];                    \
}                                                                                            \
/* batch norm's input gradient of one (N, C) row, per-column coefficients */                \
EMBER_CLONES static void ember_rowbn_dx_##S(const T *dy, const T *x, T *dx, Py_ssize_t n, \
                                             const T *mean, const T *mean_dy, const T *k,    \
                                             const T *a) {                                   \
    for (Py_ssize_t i = 0; i < n; i++)                                                       \
        dx[i] = (dy[i] - mean_dy[i] - (x[i] - mean[i]) * k[i]) * a[i];                       \
}

EMBER_DEFINE(float, f, ember_expf)
EMBER_DEFINE(double, d, ember_expd)

#endif  /* EMBER_LOSS_NORM_H */
