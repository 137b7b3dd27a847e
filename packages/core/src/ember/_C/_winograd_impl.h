/* The Winograd F(2x2, 3x3) transforms for one element type WT, WF(name) naming its
   functions; included by _winograd.h once per type (no include guard on purpose).

   Rows are handled split into their even and odd columns ("split rows": the even columns
   of a row of width 2n, then its odd ones), so that every loop below runs over
   contiguous memory and GCC vectorizes it: tile tw covers the columns 2tw .. 2tw+3 of
   its rows, that is even[tw], odd[tw], even[tw+1], odd[tw+1]. A value written by one loop
   is not read back by the next one at another alignment (the processor cannot forward a
   store to a load that spans two stores, and such loads cost more than the arithmetic):
   each transform computes straight from its source, through one plane-sized buffer at
   most. The pointers a helper takes address disjoint memory (restrict). Multiplying by a
   sign s = +-1 is exact, so x + s*y is x - y or x + y to the bit. */

/* --- split rows ------------------------------------------------------------------------------ */

/* the columns [lo, hi) of a padded row (column j holds xr[j - pw]) into the split row
   e, o (n each); the other columns zero */
EMBER_INLINE void WF(wino_load_row)(const WT *restrict xr, wi_t pw, wi_t lo, wi_t hi,
                                    WT *restrict e, WT *restrict o, wi_t n) {
    memset(e, 0, n * sizeof(WT));
    memset(o, 0, n * sizeof(WT));
    wi_t j = lo;
    if (j < hi && (j & 1)) {
        o[j >> 1] = xr[j - pw];
        j++;
    }
    const WT *src = xr + (j - pw);
    WT *de = e + (j >> 1), *dod = o + (j >> 1);
    wi_t pairs = (hi - j) >> 1;
    for (wi_t k = 0; k < pairs; k++) {
        de[k] = src[2 * k];
        dod[k] = src[2 * k + 1];
    }
    j += 2 * pairs;
    if (j < hi)
        e[j >> 1] = xr[j - pw];
}

/* --- B^T d B: the input transform ------------------------------------------------------------ */

/* Positions v0..v3 of one row of tiles: the row a + sb*b of B^T d (a, b: split padded
   input rows of TW + 1 even and TW + 1 odd columns) times B. */
EMBER_INLINE void WF(wino_in_cols)(const WT *restrict a, const WT *restrict b, WT sb,
                                   WT *restrict v0, WT *restrict v1, WT *restrict v2,
                                   WT *restrict v3, wi_t TW) {
    const wi_t n = TW + 1;
    for (wi_t tw = 0; tw < TW; tw++) {
        WT e0 = a[tw] + sb * b[tw], e1 = a[tw + 1] + sb * b[tw + 1];
        WT o0 = a[n + tw] + sb * b[n + tw], o1 = a[n + tw + 1] + sb * b[n + tw + 1];
        v0[tw] = e0 - e1;
        v1[tw] = o0 + e1;
        v2[tw] = e1 - o0;
        v3[tw] = o0 - o1;
    }
}

/* buf: the padded plane, 2*TH + 2 split rows of WP = 2*TW + 2 */
EMBER_INLINE void WF(wino_in_plane)(const WT *restrict x, WT *restrict v, wi_t H, wi_t W,
                                    wi_t ph, wi_t pw, wi_t TH, wi_t TW, wi_t sk,
                                    WT *restrict buf) {
    const wi_t WP = 2 * TW + 2, n = TW + 1;
    const wi_t lo = wino_clip(pw, 0, WP), hi = wino_clip(W + pw, lo, WP);
    for (wi_t pr = 0; pr < 2 * TH + 2; pr++) {
        wi_t r = pr - ph;
        WT *row = buf + pr * WP;
        if (r < 0 || r >= H)
            memset(row, 0, WP * sizeof(WT));
        else
            WF(wino_load_row)(x + r * W, pw, lo, hi, row, row + n, n);
    }
    for (wi_t th = 0; th < TH; th++) {
        const WT *d = buf + 2 * th * WP;
        WT *o = v + th * TW;
        /* the rows of B^T d: d0 - d2, d1 + d2, d2 - d1, d1 - d3 */
        WF(wino_in_cols)(d, d + 2 * WP, -1, o, o + sk, o + 2 * sk, o + 3 * sk, TW);
        o += 4 * sk;
        WF(wino_in_cols)(d + WP, d + 2 * WP, 1, o, o + sk, o + 2 * sk, o + 3 * sk, TW);
        o += 4 * sk;
        WF(wino_in_cols)(d + 2 * WP, d + WP, -1, o, o + sk, o + 2 * sk, o + 3 * sk, TW);
        o += 4 * sk;
        WF(wino_in_cols)(d + WP, d + 3 * WP, -1, o, o + sk, o + 2 * sk, o + 3 * sk, TW);
    }
}

/* --- B dV B^T added into x: the adjoint of the input transform ------------------------------- */

/* Row i of the tiles (positions s + j*sk, j < 4) times B^T, added (times sa and sb) to
   two padded rows of the gradient, each kept as two split rows: l for the left halves of
   the tiles (columns 2tw, 2tw+1: s0 and s1 - s2 + s3) and r for the right halves (columns
   2tw+2, 2tw+3: s1 + s2 - s0 and -s3), r one pair to the right (r[0] stays zero). The
   overlap of neighbouring tiles is summed when the halves are added into x, so every
   loop here runs over all TW tiles at one alignment. */
EMBER_INLINE void WF(wino_in_adj_half)(const WT *restrict s0, const WT *restrict s1,
                                       const WT *restrict s2, const WT *restrict s3,
                                       WT *restrict lae, WT *restrict lao, WT *restrict rae,
                                       WT *restrict rao, WT sa, WT *restrict lbe,
                                       WT *restrict lbo, WT *restrict rbe, WT *restrict rbo,
                                       WT sb, wi_t TW) {
    for (wi_t tw = 0; tw < TW; tw++) {
        WT le = s0[tw], lo = s1[tw] - s2[tw] + s3[tw];
        WT re = s1[tw] + s2[tw] - s0[tw], ro = -s3[tw];
        lae[tw] += sa * le;
        lao[tw] += sa * lo;
        rae[tw] += sa * re;
        rao[tw] += sa * ro;
        lbe[tw] += sb * le;
        lbo[tw] += sb * lo;
        rbe[tw] += sb * re;
        rbo[tw] += sb * ro;
    }
}

/* (each split row's even and odd halves are passed apart: one pointer with two offsets
   would make GCC check at run time that they are a vector apart, and fall back to scalar
   code for narrow planes) */
EMBER_INLINE void WF(wino_in_adj_cols)(const WT *restrict s, wi_t sk, WT *la, WT *ra, WT sa,
                                       WT *lb, WT *rb, WT sb, wi_t TW) {
    const wi_t n = TW + 1;
    WF(wino_in_adj_half)(s, s + sk, s + 2 * sk, s + 3 * sk, la, la + n, ra + 1, ra + n + 1, sa,
                         lb, lb + n, rb + 1, rb + n + 1, sb, TW);
}

/* xr[j - pw] += column j of the split rows (le + re, lo + ro) for j in [lo, hi) */
EMBER_INLINE void WF(wino_add_rows)(WT *restrict xr, wi_t pw, wi_t lo, wi_t hi,
                                    const WT *restrict l, const WT *restrict r, wi_t n) {
    const WT *le = l, *lod = l + n, *re = r, *rod = r + n;
    wi_t j = lo;
    if (j < hi && (j & 1)) {
        xr[j - pw] += lod[j >> 1] + rod[j >> 1];
        j++;
    }
    WT *dst = xr + (j - pw);
    wi_t k0 = j >> 1, pairs = (hi - j) >> 1;
    for (wi_t k = 0; k < pairs; k++) {
        dst[2 * k] += le[k0 + k] + re[k0 + k];
        dst[2 * k + 1] += lod[k0 + k] + rod[k0 + k];
    }
    j += 2 * pairs;
    if (j < hi)
        xr[j - pw] += le[j >> 1] + re[j >> 1];
}

/* buf: the padded plane's gradient as left and right halves, 2 * (2*TH + 2) split rows of
   WP = 2*TW + 2 */
EMBER_INLINE void WF(wino_in_adj_plane)(const WT *restrict v, WT *restrict x, wi_t H, wi_t W,
                                        wi_t ph, wi_t pw, wi_t TH, wi_t TW, wi_t sk,
                                        WT *restrict buf) {
    const wi_t WP = 2 * TW + 2, n = TW + 1, rows = 2 * TH + 2;
    const wi_t lo = wino_clip(pw, 0, WP), hi = wino_clip(W + pw, lo, WP);
    WT *left = buf, *right = buf + rows * WP;
    memset(buf, 0, 2 * rows * WP * sizeof(WT));
    for (wi_t th = 0; th < TH; th++) {
        const WT *s = v + th * TW;
        WT *l = left + 2 * th * WP, *r = right + 2 * th * WP;
        /* B applied to the rows t0..t3 of dV B^T: padded rows 0..3 of the tile get t0,
           t1 - t2 + t3, t1 + t2 - t0 and -t3 */
        WF(wino_in_adj_cols)(s, sk, l, r, 1, l + 2 * WP, r + 2 * WP, -1, TW);
        WF(wino_in_adj_cols)(s + 4 * sk, sk, l + WP, r + WP, 1, l + 2 * WP, r + 2 * WP, 1, TW);
        WF(wino_in_adj_cols)(s + 8 * sk, sk, l + WP, r + WP, -1, l + 2 * WP, r + 2 * WP, 1, TW);
        WF(wino_in_adj_cols)(s + 12 * sk, sk, l + WP, r + WP, 1, l + 3 * WP, r + 3 * WP, -1,
                             TW);
    }
    if (hi <= lo)
        return;
    for (wi_t pr = 0; pr < rows; pr++) {
        wi_t xrow = pr - ph;
        if (xrow >= 0 && xrow < H)
            WF(wino_add_rows)(x + xrow * W, pw, lo, hi, left + pr * WP, right + pr * WP, n);
    }
}

/* --- A^T M A: the output transform ------------------------------------------------------------ */

/* Output rows y0, y1 (columns 2tw, 2tw+1) of tile tw of a row of tiles whose 16
   positions are s + k*sk: u0_i = s_i0 + s_i1 + s_i2, u1_i = s_i1 - s_i2 - s_i3 (M A), then
   y0 = u_0 + u_1 + u_2, y1 = u_1 - u_2 - u_3 (A^T). */
#define WINO_OUT_TILE(s, sk, tw, y00, y01, y10, y11)                                       \
    do {                                                                                   \
        WT u00 = s[(tw)] + s[(sk) + (tw)] + s[2 * (sk) + (tw)];                            \
        WT u10 = s[(sk) + (tw)] - s[2 * (sk) + (tw)] - s[3 * (sk) + (tw)];                 \
        WT u01 = s[4 * (sk) + (tw)] + s[5 * (sk) + (tw)] + s[6 * (sk) + (tw)];             \
        WT u11 = s[5 * (sk) + (tw)] - s[6 * (sk) + (tw)] - s[7 * (sk) + (tw)];             \
        WT u02 = s[8 * (sk) + (tw)] + s[9 * (sk) + (tw)] + s[10 * (sk) + (tw)];            \
        WT u12 = s[9 * (sk) + (tw)] - s[10 * (sk) + (tw)] - s[11 * (sk) + (tw)];           \
        WT u03 = s[12 * (sk) + (tw)] + s[13 * (sk) + (tw)] + s[14 * (sk) + (tw)];          \
        WT u13 = s[13 * (sk) + (tw)] - s[14 * (sk) + (tw)] - s[15 * (sk) + (tw)];          \
        y00 = u00 + u01 + u02;                                                             \
        y01 = u10 + u11 + u12;                                                             \
        y10 = u01 - u02 - u03;                                                             \
        y11 = u11 - u12 - u13;                                                             \
    } while (0)

EMBER_INLINE void WF(wino_out_cols)(const WT *restrict s, wi_t sk, WT *restrict y0,
                                    WT *restrict y1, wi_t pairs) {
    for (wi_t tw = 0; tw < pairs; tw++)
        WINO_OUT_TILE(s, sk, tw, y0[2 * tw], y0[2 * tw + 1], y1[2 * tw], y1[2 * tw + 1]);
}

/* buf: one spare output row (OW + 1), the target of row 2*th + 1 past the bottom edge */
EMBER_INLINE void WF(wino_out_plane)(const WT *restrict m, WT *restrict y, wi_t OH, wi_t OW,
                                     wi_t TH, wi_t TW, wi_t sk, WT *restrict buf) {
    const wi_t pairs = OW / 2;
    for (wi_t th = 0; th < TH; th++) {
        const WT *s = m + th * TW;
        WT *y0 = y + 2 * th * OW;
        WT *y1 = 2 * th + 1 < OH ? y0 + OW : buf;
        WF(wino_out_cols)(s, sk, y0, y1, pairs);
        if (OW & 1) {
            WT a, b, c, d;
            WINO_OUT_TILE(s, sk, TW - 1, a, b, c, d);
            (void)b;
            (void)d;
            y0[OW - 1] = a;
            y1[OW - 1] = c;
        }
    }
}

/* --- A dY A^T: the adjoint of the output transform ------------------------------------------- */

/* Positions v0..v3 of one row of tiles from the row (p, q) of A dY: (p, p + q, p - q, -q),
   where (p, q) = columns (2tw, 2tw+1) of a + sb*b (b NULL: of sa*a) for tw < pairs. */
EMBER_INLINE void WF(wino_out_adj_cols)(const WT *restrict a, WT sa, const WT *restrict b,
                                        WT sb, WT *restrict v0, WT *restrict v1,
                                        WT *restrict v2, WT *restrict v3, wi_t pairs) {
    if (b == NULL) {
        for (wi_t tw = 0; tw < pairs; tw++) {
            WT p = sa * a[2 * tw], q = sa * a[2 * tw + 1];
            v0[tw] = p;
            v1[tw] = p + q;
            v2[tw] = p - q;
            v3[tw] = -q;
        }
    } else {
        for (wi_t tw = 0; tw < pairs; tw++) {
            WT p = a[2 * tw] + sb * b[2 * tw], q = a[2 * tw + 1] + sb * b[2 * tw + 1];
            v0[tw] = p;
            v1[tw] = p + q;
            v2[tw] = p - q;
            v3[tw] = -q;
        }
    }
}

/* buf: two rows of 2*TW: the output-gradient rows of a row of tiles, padded with zeros to
   whole tiles (used only when OW is odd or the last row is missing) */
EMBER_INLINE void WF(wino_out_adj_plane)(const WT *restrict g, WT *restrict m, wi_t OH,
                                         wi_t OW, wi_t TH, wi_t TW, wi_t sk,
                                         WT *restrict buf) {
    const wi_t pairs = OW / 2;
    for (wi_t th = 0; th < TH; th++) {
        const WT *g0 = g + 2 * th * OW;
        const WT *g1 = 2 * th + 1 < OH ? g0 + OW : NULL;
        wi_t full = pairs;
        if (OW & 1) {
            /* the padded rows, read by the plain loops below for all TW tiles */
            WT *r0 = buf, *r1 = buf + 2 * TW;
            memcpy(r0, g0, OW * sizeof(WT));
            r0[OW] = 0;
            if (g1 != NULL) {
                memcpy(r1, g1, OW * sizeof(WT));
                r1[OW] = 0;
                g1 = r1;
            }
            g0 = r0;
            full = TW;
        }
        WT *o = m + th * TW;
        /* the rows of A dY: (a0, b0), (a0 + a1, b0 + b1), (a0 - a1, b0 - b1), -(a1, b1) */
        WF(wino_out_adj_cols)(g0, 1, NULL, 0, o, o + sk, o + 2 * sk, o + 3 * sk, full);
        o += 4 * sk;
        WF(wino_out_adj_cols)(g0, 1, g1, 1, o, o + sk, o + 2 * sk, o + 3 * sk, full);
        o += 4 * sk;
        WF(wino_out_adj_cols)(g0, 1, g1, -1, o, o + sk, o + 2 * sk, o + 3 * sk, full);
        o += 4 * sk;
        if (g1 != NULL) {
            WF(wino_out_adj_cols)(g1, -1, NULL, 0, o, o + sk, o + 2 * sk, o + 3 * sk, full);
        } else {
            for (int j = 0; j < 4; j++)
                memset(o + j * sk, 0, full * sizeof(WT));
        }
    }
}

/* --- the planes of a batch ----------------------------------------------------------------- */

/* Runs transform `kind` over the N*C planes (N, C, H, W) (C-contiguous) and the tiles
   (16, C, N, TH*TW) with element strides sk, sc, sn; buf holds wino_buffer_size(TH, TW)
   elements. For the output transforms H, W are the output's size. */
EMBER_CLONES static void WF(wino_run)(int kind, WT *planes, WT *tiles, wi_t N, wi_t C, wi_t H,
                                      wi_t W, wi_t ph, wi_t pw, wi_t TH, wi_t TW, wi_t sk,
                                      wi_t sc, wi_t sn, WT *buf) {
    for (wi_t n = 0; n < N; n++) {
        for (wi_t c = 0; c < C; c++) {
            WT *p = planes + (n * C + c) * H * W;
            WT *t = tiles + c * sc + n * sn;
            if (kind == WINO_IN)
                WF(wino_in_plane)(p, t, H, W, ph, pw, TH, TW, sk, buf);
            else if (kind == WINO_IN_ADJ)
                WF(wino_in_adj_plane)(t, p, H, W, ph, pw, TH, TW, sk, buf);
            else if (kind == WINO_OUT)
                WF(wino_out_plane)(t, p, H, W, TH, TW, sk, buf);
            else
                WF(wino_out_adj_plane)(p, t, H, W, TH, TW, sk, buf);
        }
    }
}

#undef WINO_OUT_TILE
