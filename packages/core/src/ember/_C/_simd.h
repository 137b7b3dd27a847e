/* What the C helpers of the kernel modules share: EMBER_CLONES compiles a function for
   AVX-512, AVX2 and the baseline, with the choice made once at load time by the dynamic
   linker (GCC's target_clones, where it is available: x86-64 Linux); elsewhere it is the
   baseline only. The helpers are written so that GCC vectorizes their loops at -O3
   (restrict pointers, contiguous loops, no calls inside). */
#ifndef EMBER_SIMD_H
#define EMBER_SIMD_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define EMBER_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define EMBER_CLONES
#endif

/* inlined into every clone of its caller, so compiled for the caller's target */
#define EMBER_INLINE static inline __attribute__((always_inline))

#include <stdint.h>

/* exp for float: Cody-Waite reduction and Cephes' polynomial (about 1 ulp) on
   [-87, 88]; below -87 it returns exp(-87) ~ 1.6e-38 (the callers use it for
   softmax, where that is 0 for all purposes). NaN stays NaN. */
static inline float ember_expf(float x) {
    x = x > 88.0f ? 88.0f : x;
    x = x < -87.0f ? -87.0f : x;
    float fx = x * 1.44269504088896341f;
    fx = (fx + 12582912.0f) - 12582912.0f;  /* round to nearest */
    float r = x - fx * 0.693359375f;
    r = r - fx * -2.12194440e-4f;
    float r2 = r * r;
    float y = 1.9875691500E-4f;
    y = y * r + 1.3981999507E-3f;
    y = y * r + 8.3334519073E-3f;
    y = y * r + 4.1665795894E-2f;
    y = y * r + 1.6666665459E-1f;
    y = y * r + 5.0000001201E-1f;
    y = y * r2 + r + 1.0f;
    int32_t k = (int32_t)fx;
    union { int32_t i; float f; } u;
    u.i = (k + 127) << 23;
    return y * u.f;
}

#endif
