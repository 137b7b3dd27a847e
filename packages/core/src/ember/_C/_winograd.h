/* The Winograd F(2x2, 3x3) transforms of _conv (see NOTE [ Winograd convolution ] in
   _winograd.pxi for the maths and the layouts). _winograd_impl.h holds them once, for an
   element type WT; it is included twice here, for float (names ending _f) and double (_d).
   The Cython declarations are in _winograd.pxi. */
#ifndef EMBER_WINOGRAD_H
#define EMBER_WINOGRAD_H

#include <stddef.h>
#include <string.h>

#include "_simd.h"

typedef ptrdiff_t wi_t;

enum { WINO_IN = 0, WINO_IN_ADJ = 1, WINO_OUT = 2, WINO_OUT_ADJ = 3 };

/* the scratch elements wino_run_f/_d need for planes of TH x TW tiles: two padded planes */
static inline wi_t wino_buffer_size(wi_t TH, wi_t TW) {
    return 2 * (2 * TH + 2) * (2 * TW + 2) + 16;
}

static inline wi_t wino_clip(wi_t v, wi_t lo, wi_t hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

#define WT float
#define WF(name) name##_f
#include "_winograd_impl.h"
#undef WT
#undef WF

#define WT double
#define WF(name) name##_d
#include "_winograd_impl.h"
#undef WT
#undef WF

#endif
