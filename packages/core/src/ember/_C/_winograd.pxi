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
# The loops are serial over planes (see NOTE [ OpenMP on few cores ]). They are C
# (_winograd.h, _winograd_impl.h): each plane goes through one row of tiles at a time, the
# rows split into their even and odd columns so that every inner loop is contiguous and
# vectorized, compiled for AVX-512, AVX2 and the baseline (_simd.h). In Cython the same
# loops ran scalar (GCC could not prove the rows apart): 2-4x slower.

cdef extern from "_winograd.h":
    Py_ssize_t wino_buffer_size(Py_ssize_t TH, Py_ssize_t TW) nogil
    void wino_run_f(int kind, float* planes, float* tiles, Py_ssize_t N, Py_ssize_t C,
                    Py_ssize_t H, Py_ssize_t W, Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t TH,
                    Py_ssize_t TW, Py_ssize_t sk, Py_ssize_t sc, Py_ssize_t sn,
                    float* buf) nogil
    void wino_run_d(int kind, double* planes, double* tiles, Py_ssize_t N, Py_ssize_t C,
                    Py_ssize_t H, Py_ssize_t W, Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t TH,
                    Py_ssize_t TW, Py_ssize_t sk, Py_ssize_t sc, Py_ssize_t sn,
                    double* buf) nogil
    int _WINO_IN "WINO_IN"
    int _WINO_IN_ADJ "WINO_IN_ADJ"
    int _WINO_OUT "WINO_OUT"
    int _WINO_OUT_ADJ "WINO_OUT_ADJ"


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
    isz = tiles.itemsize
    # a dim of length 1 may carry any stride (NumPy's reshape leaves some): it is never used
    st = [0 if n == 1 else d for n, d in zip(tiles.shape, tiles.strides)]
    if tiles.shape[3] == 1:
        st[3] = isz
    if (st[3] != isz or st[0] % isz or st[1] % isz or st[2] % isz or st[0] < 0 or st[1] < 0
            or st[2] < 0):
        raise ValueError("winograd: tiles must be contiguous along their last dim")
    if np.may_share_memory(planes, tiles):
        raise ValueError("winograd: the planes and the tiles must not overlap")
    out = tiles if kind == _WINO_IN or kind == _WINO_OUT_ADJ else planes
    if not out.flags.writeable:
        raise ValueError("winograd: the output array is read-only")
    if planes.size == 0 or tiles.size == 0:
        return
    cdef Py_ssize_t sk = st[0] // isz, sc = st[1] // isz, sn = st[2] // isz
    cdef cnp.ndarray pa = planes, ta = tiles
    cdef cnp.ndarray ba = np.empty(wino_buffer_size(TH, TW), planes.dtype)
    if planes.dtype == np.float32:
        with nogil:
            wino_run_f(kind, <float*>cnp.PyArray_DATA(pa), <float*>cnp.PyArray_DATA(ta),
                       N, C, H, W, ph, pw, TH, TW, sk, sc, sn, <float*>cnp.PyArray_DATA(ba))
    else:
        with nogil:
            wino_run_d(kind, <double*>cnp.PyArray_DATA(pa), <double*>cnp.PyArray_DATA(ta),
                       N, C, H, W, ph, pw, TH, TW, sk, sc, sn, <double*>cnp.PyArray_DATA(ba))


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
