/* Loops of _activation: GELU forward and backward over contiguous arrays, written so that
   GCC vectorizes them (no calls and no branches inside the float loop), compiled for
   AVX-512, AVX2 and the baseline with runtime dispatch (_simd.h).

   erf is W. J. Cody's rational approximation in three ranges (the same as ember's array
   path, ember/_ops/_special.py), evaluated branch-free: every range is computed and the
   right one selected. For float32 the arithmetic is float (a few ulps), with exp(-z^2)
   split as exp(-zr^2) * exp(-(z - zr)(z + zr)) (zr = z rounded down to 1/16, so zr^2 is
   exact) to keep its relative precision; float64 calls libm's erf and exp. */
#ifndef EMBER_ACTIVATION_H
#define EMBER_ACTIVATION_H

#include <math.h>
#include <stdint.h>

#include "_simd.h"

#define EMBER_SQRT1_2 0.70710678118654752440
#define EMBER_INV_SQRT_2PI 0.39894228040143267794
#define EMBER_SQRPI 0.56418958354775628695 /* 1 / sqrt(pi) */

/* ember_expf (_simd.h), and 0 below -87 (where the exact value is 1.6e-38 or less: the
   callers' products of it are far below the float results they add it to, or 0 in torch
   too) instead of exp(-87). */
EMBER_INLINE float ember_act_expf(float x) {
    return x < -87.0f ? 0.0f : ember_expf(x);
}

/* Phi(x) = (1 + erf(x / sqrt(2))) / 2 and, in *pdf, phi(x) = exp(-x^2 / 2) / sqrt(2 pi),
   for float x; NaN gives NaN. Each range's rational function is kept as a numerator and
   a denominator, and the lane's pair is divided once at the end. */
EMBER_INLINE float ember_phi_f(float x, float *pdf) {
    float z = x * (float)EMBER_SQRT1_2;
    float y = fabsf(z);
    float yc = y < 30.0f ? y : 30.0f; /* erfc(30) is 0 in float; no inf - inf below */
    /* exp(-z^2), precisely */
    float yr = truncf(yc * 16.0f) * 0.0625f;
    float e = ember_act_expf(-yr * yr) * ember_act_expf(-(yc - yr) * (yc + yr));
    /* |z| <= 0.46875: erf(z) = z * A(z^2) / B(z^2) */
    float t = z * z;
    float an = 1.85777706184603153e-1f * t, ad = t;
    an = (an + 3.16112374387056560e00f) * t;
    ad = (ad + 2.36012909523441209e01f) * t;
    an = (an + 1.13864154151050156e02f) * t;
    ad = (ad + 2.44024637934444173e02f) * t;
    an = (an + 3.77485237685302021e02f) * t;
    ad = (ad + 1.28261652607737228e03f) * t;
    an = an + 3.20937758913846947e03f;
    ad = ad + 2.84423683343917062e03f;
    /* 0.46875 < |z| <= 4: erfc(|z|) = exp(-z^2) * C(|z|) / D(|z|) */
    float ym = y < 4.0f ? y : 4.0f;
    float cn = 2.15311535474403846e-8f * ym, cd = ym;
    cn = (cn + 5.64188496988670089e-1f) * ym;
    cd = (cd + 1.57449261107098347e01f) * ym;
    cn = (cn + 8.88314979438837594e00f) * ym;
    cd = (cd + 1.17693950891312499e02f) * ym;
    cn = (cn + 6.61191906371416295e01f) * ym;
    cd = (cd + 5.37181101862009858e02f) * ym;
    cn = (cn + 2.98635138197400131e02f) * ym;
    cd = (cd + 1.62138957456669019e03f) * ym;
    cn = (cn + 8.81952221241769090e02f) * ym;
    cd = (cd + 3.29079923573345963e03f) * ym;
    cn = (cn + 1.71204761263407058e03f) * ym;
    cd = (cd + 4.36261909014324716e03f) * ym;
    cn = (cn + 2.05107837782607147e03f) * ym;
    cd = (cd + 3.43936767414372164e03f) * ym;
    cn = cn + 1.23033935479799725e03f;
    cd = cd + 1.23033935480374942e03f;
    /* |z| > 4: erfc(|z|) = exp(-z^2) / |z| * (1/sqrt(pi) - w P(w) / Q(w)), w = 1/z^2; with
       P and Q multiplied by z^10 (their coefficients reversed, polynomials in s = z^2):
       erfc(|z|) = exp(-z^2) * (s Q'(s) / sqrt(pi) - P'(s)) / (|z| s Q'(s)) */
    float yb = y < 4.0f ? 4.0f : yc;
    float u = yb * yb;
    float pn = 6.58749161529837803e-4f * u, qd = 2.33520497626869185e-3f * u;
    pn = (pn + 1.60837851487422766e-2f) * u;
    qd = (qd + 6.05183413124413191e-2f) * u;
    pn = (pn + 1.25781726111229246e-1f) * u;
    qd = (qd + 5.27905102951428412e-1f) * u;
    pn = (pn + 3.60344899949804439e-1f) * u;
    qd = (qd + 1.87295284992346725e00f) * u;
    pn = (pn + 3.05326634961232344e-1f) * u;
    qd = (qd + 2.56852019228982242e00f) * u;
    pn = pn + 1.63153871373020978e-2f;
    qd = (qd + 1.0f) * u;
    float bn = (float)EMBER_SQRPI * qd - pn, bd = yb * qd;
    /* Phi = (1 + erf(z)) / 2: (B + z A) / 2B in the small range; else erfc(|z|) / 2 below
       0 and 1 - erfc(|z|) / 2 above, with erfc(|z|) = e * N / D */
    float en = e * (y <= 4.0f ? cn : bn);
    float ed = 2.0f * (y <= 4.0f ? cd : bd);
    float num = z < 0.0f ? en : ed - en;
    int small = y <= 0.46875f;
    num = small ? ad + z * an : num;
    float den = small ? 2.0f * ad : ed;
    *pdf = e * (float)EMBER_INV_SQRT_2PI;
    return z != z ? z : num / den;
}

/* y = x * Phi(x) */
EMBER_CLONES static void ember_gelu_f(const float *restrict x, float *restrict y,
                                      Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        float pdf;
        y[i] = x[i] * ember_phi_f(x[i], &pdf);
    }
}

/* dx = g * (Phi(x) + x * phi(x)) */
EMBER_CLONES static void ember_gelu_backward_f(const float *restrict g, const float *restrict x,
                                               float *restrict dx, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        float pdf;
        float cdf = ember_phi_f(x[i], &pdf);
        dx[i] = g[i] * (cdf + x[i] * pdf);
    }
}

static void ember_gelu_d(const double *restrict x, double *restrict y, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        y[i] = x[i] * 0.5 * (1.0 + erf(x[i] * EMBER_SQRT1_2));
}

static void ember_gelu_backward_d(const double *restrict g, const double *restrict x,
                                  double *restrict dx, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        double cdf = 0.5 * (1.0 + erf(x[i] * EMBER_SQRT1_2));
        double pdf = exp(-0.5 * x[i] * x[i]) * EMBER_INV_SQRT_2PI;
        dx[i] = g[i] * (cdf + x[i] * pdf);
    }
}

#endif /* EMBER_ACTIVATION_H */
