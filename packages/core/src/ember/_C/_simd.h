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

#endif
