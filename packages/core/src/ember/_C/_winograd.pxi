# The Winograd F(2x2, 3x3) transforms of _conv.pyx (`include`d at its end; they use its
# fused `floating_t`, `i64` and checks).

# --- Winograd F(2x2, 3x3) transforms -------------------------------------------------------
#
# NOTE [ Winograd convolution ]
# A 3x3 stride-1 convolution computes each 2x2 block of outputs from a 4x4 input tile d as
# Y = A^T [ (G g G^T) * (B^T d B) ] A, 16 multiplies per channel pair instead of 36, where
#   B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
#   G   = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
#   A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]
# The transformed tiles of a chunk of the batch are laid out as V (16, C, N, T) (T = TH*TW
# tiles per plane, transform position k = 4*i + j), so the channel sum is one GEMM per
# position: M[k] (Cout, N*T) = U[k] (Cout, C) @ V[k] (C, N*T). The backward passes are the
# adjoints of the same three steps: dM = A dY A^T (winograd_output_adjoint), then
# dU[k] = dM[k] @ V[k]^T and dV[k] = U[k]^T @ dM[k], and dx = B dV B^T added back over the
# overlapping tiles (winograd_input_adjoint). The weight transforms (G g G^T and its
# adjoint) are one small GEMM in Python. Tile (th, tw) reads the input rows
# 2*th - ph .. 2*th - ph + 3 (and columns likewise); whatever falls outside the input is
# zero, so any padding works, and outputs past (OH, OW) in the last tiles are dropped.
# The loops are serial over planes (see NOTE [ OpenMP on few cores ]); each plane goes
# through one row of tiles at a time, the row part of the transform as whole-row vector
# operations.

cdef struct WStr:
    Py_ssize_t sk, sc, sn          # element strides of V / M: per position, channel, entry


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _wino_in_plane(const floating_t* x, floating_t* v, Py_ssize_t H, Py_ssize_t W,
                         Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t TH, Py_ssize_t TW,
                         Py_ssize_t sk, floating_t* buf) noexcept nogil:
    # buf: 9 rows of 2*TW + 2: 4 row-transformed rows, 4 padded input rows, 1 of zeros
    cdef Py_ssize_t WP = 2 * TW + 2, th, tw, i, j, r, lo, hi, t
    cdef floating_t* t0 = buf
    cdef floating_t* t1 = buf + WP
    cdef floating_t* t2 = buf + 2 * WP
    cdef floating_t* t3 = buf + 3 * WP
    cdef floating_t* rows[4]
    cdef floating_t* pad = buf + 4 * WP
    cdef floating_t* zero = buf + 8 * WP
    cdef floating_t a, b, c, d
    cdef floating_t* o
    # the columns j of a padded row that hold input column j - pw
    lo = _clip(pw, 0, WP)
    hi = _clip(W + pw, lo, WP)
    for th in range(TH):
        for i in range(4):
            r = 2 * th - ph + i
            if r < 0 or r >= H:
                rows[i] = zero
            else:
                rows[i] = pad + i * WP
                for j in range(lo):
                    rows[i][j] = 0
                for j in range(lo, hi):
                    rows[i][j] = x[r * W + j - pw]
                for j in range(hi, WP):
                    rows[i][j] = 0
        for j in range(WP):
            t0[j] = rows[0][j] - rows[2][j]
            t1[j] = rows[1][j] + rows[2][j]
            t2[j] = rows[2][j] - rows[1][j]
            t3[j] = rows[1][j] - rows[3][j]
        t = th * TW
        for i in range(4):
            o = v + 4 * i * sk + t
            r = i * WP
            for tw in range(TW):
                a = buf[r + 2 * tw]
                b = buf[r + 2 * tw + 1]
                c = buf[r + 2 * tw + 2]
                d = buf[r + 2 * tw + 3]
                o[tw] = a - c
                o[sk + tw] = b + c
                o[2 * sk + tw] = c - b
                o[3 * sk + tw] = b - d


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _wino_in_adj_plane(const floating_t* v, floating_t* x, Py_ssize_t H, Py_ssize_t W,
                             Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t TH, Py_ssize_t TW,
                             Py_ssize_t sk, floating_t* buf) noexcept nogil:
    # x += B dV B^T over the tiles of the plane; buf: 4 rows of 2*TW + 2
    cdef Py_ssize_t WP = 2 * TW + 2, th, tw, i, j, r, lo, hi, t
    cdef floating_t* t0 = buf
    cdef floating_t* t1 = buf + WP
    cdef floating_t* t2 = buf + 2 * WP
    cdef floating_t* t3 = buf + 3 * WP
    cdef floating_t a, b, c, d
    cdef floating_t* row
    cdef const floating_t* s
    lo = _clip(pw, 0, WP)
    hi = _clip(W + pw, lo, WP)
    for th in range(TH):
        t = th * TW
        for i in range(4):
            s = v + 4 * i * sk + t
            row = buf + i * WP
            row[0] = 0
            row[1] = 0
            for tw in range(TW):
                a = s[tw]
                b = s[sk + tw]
                c = s[2 * sk + tw]
                d = s[3 * sk + tw]
                row[2 * tw] += a
                row[2 * tw + 1] += b - c + d
                row[2 * tw + 2] = c + b - a
                row[2 * tw + 3] = -d
        for i in range(4):
            r = 2 * th - ph + i
            if r < 0 or r >= H:
                continue
            row = x + r * W - pw
            if i == 0:
                for j in range(lo, hi):
                    row[j] += t0[j]
            elif i == 1:
                for j in range(lo, hi):
                    row[j] += t1[j] - t2[j] + t3[j]
            elif i == 2:
                for j in range(lo, hi):
                    row[j] += t1[j] + t2[j] - t0[j]
            else:
                for j in range(lo, hi):
                    row[j] -= t3[j]


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _wino_out_plane(const floating_t* m, floating_t* y, Py_ssize_t OH, Py_ssize_t OW,
                          Py_ssize_t TH, Py_ssize_t TW, Py_ssize_t sk,
                          floating_t* buf) noexcept nogil:
    # y = A^T M A over the tiles of the plane; buf: 2 rows of 2*TW
    cdef Py_ssize_t th, tw, i, j, t, r
    cdef floating_t* y0 = buf
    cdef floating_t* y1 = buf + 2 * TW
    cdef const floating_t* s
    cdef floating_t s0, s1, s2, s3, u0, u1
    for th in range(TH):
        t = th * TW
        for tw in range(TW):
            y0[2 * tw] = 0
            y0[2 * tw + 1] = 0
            y1[2 * tw] = 0
            y1[2 * tw + 1] = 0
        for i in range(4):
            s = m + 4 * i * sk + t
            for tw in range(TW):
                s0 = s[tw]
                s1 = s[sk + tw]
                s2 = s[2 * sk + tw]
                s3 = s[3 * sk + tw]
                u0 = s0 + s1 + s2
                u1 = s1 - s2 - s3
                if i == 0:
                    y0[2 * tw] += u0
                    y0[2 * tw + 1] += u1
                elif i == 3:
                    y1[2 * tw] -= u0
                    y1[2 * tw + 1] -= u1
                elif i == 1:
                    y0[2 * tw] += u0
                    y0[2 * tw + 1] += u1
                    y1[2 * tw] += u0
                    y1[2 * tw + 1] += u1
                else:
                    y0[2 * tw] += u0
                    y0[2 * tw + 1] += u1
                    y1[2 * tw] -= u0
                    y1[2 * tw + 1] -= u1
        r = 2 * th
        for j in range(OW):
            y[r * OW + j] = y0[j]
        if r + 1 < OH:
            for j in range(OW):
                y[(r + 1) * OW + j] = y1[j]


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _wino_out_adj_plane(const floating_t* g, floating_t* m, Py_ssize_t OH, Py_ssize_t OW,
                              Py_ssize_t TH, Py_ssize_t TW, Py_ssize_t sk,
                              floating_t* buf) noexcept nogil:
    # dM = A dY A^T over the tiles of the plane; buf: 2 rows of 2*TW
    cdef Py_ssize_t th, tw, i, j, r
    cdef floating_t* e0 = buf
    cdef floating_t* e1 = buf + 2 * TW
    cdef floating_t* o
    cdef floating_t a0, b0, a1, b1, p, q
    for th in range(TH):
        r = 2 * th
        for j in range(OW):
            e0[j] = g[r * OW + j]
        for j in range(OW, 2 * TW):
            e0[j] = 0
        if r + 1 < OH:
            for j in range(OW):
                e1[j] = g[(r + 1) * OW + j]
        else:
            for j in range(OW):
                e1[j] = 0
        for j in range(OW, 2 * TW):
            e1[j] = 0
        # the rows of A dY: (a0, b0), (a0 + a1, b0 + b1), (a0 - a1, b0 - b1), (-a1, -b1);
        # each row (p, q) -> (p, p + q, p - q, -q). One row i at a time: 4 output streams.
        for i in range(4):
            o = m + 4 * i * sk + th * TW
            for tw in range(TW):
                a0 = e0[2 * tw]
                b0 = e0[2 * tw + 1]
                a1 = e1[2 * tw]
                b1 = e1[2 * tw + 1]
                if i == 0:
                    p = a0
                    q = b0
                elif i == 1:
                    p = a0 + a1
                    q = b0 + b1
                elif i == 2:
                    p = a0 - a1
                    q = b0 - b1
                else:
                    p = -a1
                    q = -b1
                o[tw] = p
                o[sk + tw] = p + q
                o[2 * sk + tw] = p - q
                o[3 * sk + tw] = -q


cdef int _WINO_IN = 0
cdef int _WINO_IN_ADJ = 1
cdef int _WINO_OUT = 2
cdef int _WINO_OUT_ADJ = 3


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _wino_run(int kind, floating_t* planes, floating_t* tiles, Py_ssize_t N,
                    Py_ssize_t C, Py_ssize_t H, Py_ssize_t W, Py_ssize_t ph, Py_ssize_t pw,
                    Py_ssize_t TH, Py_ssize_t TW, WStr s, floating_t* buf) noexcept nogil:
    cdef Py_ssize_t n, c, size = H * W
    cdef floating_t* p
    cdef floating_t* t
    for n in range(N):
        for c in range(C):
            p = planes + (n * C + c) * size
            t = tiles + c * s.sc + n * s.sn
            if kind == _WINO_IN:
                _wino_in_plane(p, t, H, W, ph, pw, TH, TW, s.sk, buf)
            elif kind == _WINO_IN_ADJ:
                _wino_in_adj_plane(t, p, H, W, ph, pw, TH, TW, s.sk, buf)
            elif kind == _WINO_OUT:
                _wino_out_plane(t, p, H, W, TH, TW, s.sk, buf)
            else:
                _wino_out_adj_plane(p, t, H, W, TH, TW, s.sk, buf)


cdef _wino_call(int kind, planes, tiles, Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t TH,
                Py_ssize_t TW):
    if planes.dtype != tiles.dtype or planes.dtype not in (np.float32, np.float64):
        raise TypeError(f"winograd: float32 or float64 arrays of one dtype expected, "
                        f"got {planes.dtype} and {tiles.dtype}")
    if not planes.flags.c_contiguous or planes.ndim != 4:
        raise ValueError("winograd: the planes must be a C-contiguous 4-d array")
    cdef Py_ssize_t N = planes.shape[0], C = planes.shape[1]
    cdef Py_ssize_t H = planes.shape[2], W = planes.shape[3]
    if tiles.ndim != 4 or tuple(tiles.shape) != (16, C, N, TH * TW):
        raise ValueError(f"winograd: tiles must have shape {(16, C, N, TH * TW)}, "
                         f"got {tuple(tiles.shape)}")
    if (kind == _WINO_OUT or kind == _WINO_OUT_ADJ) and (
            (H + 1) // 2 != TH or (W + 1) // 2 != TW):
        raise ValueError(f"winograd: {TH}x{TW} tiles do not cover outputs of size {H}x{W}")
    if kind == _WINO_IN or kind == _WINO_IN_ADJ:
        if TH < 0 or TW < 0 or ph < 0 or pw < 0:
            raise ValueError("winograd: negative tile count or padding")
    st = tiles.strides
    isz = tiles.itemsize
    if (st[3] != isz or st[0] % isz or st[1] % isz or st[2] % isz or st[0] < 0 or st[1] < 0
            or st[2] < 0):
        raise ValueError("winograd: tiles must be contiguous along their last dim")
    if planes.size == 0 or tiles.size == 0:
        return
    cdef WStr s
    s.sk, s.sc, s.sn = st[0] // isz, st[1] // isz, st[2] // isz
    cdef Py_ssize_t nbuf = 9 * (2 * TW + 2) + 8
    cdef cnp.ndarray pa = planes, ta = tiles
    cdef cnp.ndarray ba = np.zeros(nbuf, planes.dtype)
    if planes.dtype == np.float32:
        with nogil:
            _wino_run[float](kind, <float*>cnp.PyArray_DATA(pa), <float*>cnp.PyArray_DATA(ta),
                             N, C, H, W, ph, pw, TH, TW, s, <float*>cnp.PyArray_DATA(ba))
    else:
        with nogil:
            _wino_run[double](kind, <double*>cnp.PyArray_DATA(pa),
                              <double*>cnp.PyArray_DATA(ta), N, C, H, W, ph, pw, TH, TW, s,
                              <double*>cnp.PyArray_DATA(ba))


def winograd_input(x, v, Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t TH, Py_ssize_t TW):
    """Write the transformed 4x4 input tiles B^T d B of ``x`` (N, C, H, W) into ``v``
    (16, C, N, TH*TW), tile (th, tw) starting at input row 2*th - ph and column 2*tw - pw
    (zero outside the input). See NOTE [ Winograd convolution ]."""
    _wino_call(_WINO_IN, x, v, ph, pw, TH, TW)
    return v


def winograd_input_adjoint(v, x, Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t TH, Py_ssize_t TW):
    """Add B dV B^T of the tiles ``v`` (16, C, N, TH*TW) back into ``x`` (N, C, H, W): the
    adjoint of :func:`winograd_input` (``x`` is accumulated into)."""
    _wino_call(_WINO_IN_ADJ, x, v, ph, pw, TH, TW)
    return x


def winograd_output(m, y):
    """Write A^T M A of the tiles ``m`` (16, C, N, TH*TW) into ``y`` (N, C, OH, OW),
    TH = ceil(OH / 2) and TW = ceil(OW / 2); outputs past the edge are dropped."""
    _wino_call(_WINO_OUT, y, m, 0, 0, (y.shape[2] + 1) // 2, (y.shape[3] + 1) // 2)
    return y


def winograd_output_adjoint(g, m):
    """Write A dY A^T of ``g`` (N, C, OH, OW) into the tiles ``m`` (16, C, N, TH*TW): the
    adjoint of :func:`winograd_output`."""
    _wino_call(_WINO_OUT_ADJ, g, m, 0, 0, (g.shape[2] + 1) // 2, (g.shape[3] + 1) // 2)
    return m
