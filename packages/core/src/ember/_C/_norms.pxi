# Included by _loss_norm.pyx: the batch, layer and group norm kernels (forward and backward),
# built on the row helpers and argument checks defined there.

# ---------------------------------------------------------------------------
# batch norm: statistics per channel of (N, C, S)

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _batch_norm_fwd(const floating_t[:, :, ::1] x, const floating_t[::1] weight,
                          bint has_weight, const floating_t[::1] bias, bint has_bias,
                          const floating_t[::1] mean_in, const floating_t[::1] var_in,
                          bint training, double eps, floating_t[:, :, ::1] y,
                          floating_t[::1] mean_out, double[::1] var_out,
                          floating_t[::1] invstd_out) noexcept nogil:
    # Training: two passes over a channel (its mean, then the squared deviations, both
    # summed in double: as exact as PyTorch's), then the normalization while the channel
    # is in cache. The variance stays in double for the running statistics' update (one
    # rounding to the buffer's dtype, as PyTorch).
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], S = x.shape[2]
    cdef Py_ssize_t n, c
    cdef double acc, mean, var, invstd, scale, shift
    cdef double count = <double>(N * S)
    for c in prange(C, schedule="static", use_threads_if=N * S * C >= PARALLEL_MIN):
        if training:
            acc = 0.0
            for n in range(N):
                acc = acc + _sum(&x[n, c, 0], S)
            mean = acc / count
            acc = 0.0
            for n in range(N):
                acc = acc + _sqdev(&x[n, c, 0], S, <floating_t>mean)
            var = acc / count
            mean_out[c] = <floating_t>mean
            var_out[c] = var
        else:
            mean = mean_in[c]
            var = var_in[c]
        invstd = 1.0 / sqrt(var + eps)
        invstd_out[c] = <floating_t>invstd
        scale = invstd * weight[c] if has_weight else invstd
        shift = (bias[c] if has_bias else 0.0) - mean * scale
        for n in range(N):
            _affine(&x[n, c, 0], &y[n, c, 0], S, <floating_t>scale, <floating_t>shift)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _batch_norm_fwd_rows(const floating_t[:, ::1] x, const floating_t[::1] weight,
                               bint has_weight, const floating_t[::1] bias, bint has_bias,
                               const floating_t[::1] mean_in, const floating_t[::1] var_in,
                               bint training, double eps, floating_t[:, ::1] y,
                               floating_t[::1] mean_out, double[::1] var_out,
                               floating_t[::1] invstd_out, floating_t[::1] scale,
                               floating_t[::1] shift, double[::1] tmp) noexcept nogil:
    # (N, C) input: column statistics over tiles of TILE columns, each summed down the
    # rows with its accumulators in registers; the tiles go to the threads.
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1]
    cdef Py_ssize_t ntiles = C // TILE
    cdef Py_ssize_t t, i, j, c
    cdef double acc, mean, var, invstd, sc, d
    cdef bint par = N * C >= PARALLEL_MIN
    if training:
        for t in prange(ntiles, schedule="static", use_threads_if=par):
            _tsum(&x[0, t * TILE], N, C, &tmp[t * TILE])
            for j in range(t * TILE, (t + 1) * TILE):
                mean_out[j] = <floating_t>(tmp[j] / N)
            _tsqdev(&x[0, t * TILE], N, C, &mean_out[t * TILE], &tmp[t * TILE])
            for j in range(t * TILE, (t + 1) * TILE):
                var_out[j] = tmp[j] / N
        for c in range(ntiles * TILE, C):
            acc = 0.0
            for i in range(N):
                acc = acc + x[i, c]
            mean_out[c] = <floating_t>(acc / N)
            acc = 0.0
            for i in range(N):
                d = x[i, c] - mean_out[c]
                acc = acc + d * d
            var_out[c] = acc / N
    for c in range(C):
        mean = mean_out[c] if training else mean_in[c]
        var = var_out[c] if training else var_in[c]
        invstd = 1.0 / sqrt(var + eps)
        invstd_out[c] = <floating_t>invstd
        sc = invstd * weight[c] if has_weight else invstd
        scale[c] = <floating_t>sc
        shift[c] = <floating_t>((bias[c] if has_bias else 0.0) - mean * sc)
    for i in prange(N, schedule="static", use_threads_if=par):
        _rowaffine(&x[i, 0], &y[i, 0], C, &scale[0], &shift[0])


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _batch_norm_bwd(const floating_t[:, :, ::1] dy, const floating_t[:, :, ::1] x,
                          const floating_t[::1] mean_in, const floating_t[::1] invstd_in,
                          const floating_t[::1] weight, bint has_weight, bint training,
                          bint need_dx, bint need_sums, floating_t[:, :, ::1] dx,
                          floating_t[::1] dweight, floating_t[::1] dbias) noexcept nogil:
    cdef Py_ssize_t N = dy.shape[0], C = dy.shape[1], S = dy.shape[2]
    cdef Py_ssize_t n, c
    cdef double sum_dy, sum_dy_xmu, mean, invstd, w, k, a
    cdef double count = <double>(N * S)
    for c in prange(C, schedule="static", use_threads_if=N * S * C >= PARALLEL_MIN):
        mean = mean_in[c]
        invstd = invstd_in[c]
        w = weight[c] if has_weight else 1.0
        sum_dy = 0.0
        sum_dy_xmu = 0.0
        if need_sums or training:
            for n in range(N):
                _sum2(&dy[n, c, 0], &x[n, c, 0], S, <floating_t>mean, &sum_dy, &sum_dy_xmu)
            dweight[c] = <floating_t>(sum_dy_xmu * invstd)
            dbias[c] = <floating_t>sum_dy
        if need_dx:
            # dx = (dy - mean(dy) - xhat * mean(dy * xhat)) * invstd * w
            a = invstd * w
            k = sum_dy_xmu * invstd * invstd / count if training else 0.0
            for n in range(N):
                _bn_dx(&dy[n, c, 0], &x[n, c, 0], &dx[n, c, 0], S, <floating_t>mean,
                       <floating_t>(sum_dy / count if training else 0.0), <floating_t>k,
                       <floating_t>a)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _batch_norm_bwd_rows(const floating_t[:, ::1] dy, const floating_t[:, ::1] x,
                               const floating_t[::1] mean_in, const floating_t[::1] invstd_in,
                               const floating_t[::1] weight, bint has_weight, bint training,
                               bint need_dx, bint need_sums, floating_t[:, ::1] dx,
                               floating_t[::1] dweight, floating_t[::1] dbias,
                               floating_t[::1] mean_dy, floating_t[::1] k, floating_t[::1] a,
                               double[::1] s_dy, double[::1] s_dyx) noexcept nogil:
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1]
    cdef Py_ssize_t ntiles = C // TILE
    cdef Py_ssize_t t, i, c
    cdef double s1, s2, invstd
    cdef bint par = N * C >= PARALLEL_MIN
    if need_sums or training:
        for t in prange(ntiles, schedule="static", use_threads_if=par):
            _tsum2(&dy[0, t * TILE], &x[0, t * TILE], N, C, &mean_in[t * TILE],
                   &s_dy[t * TILE], &s_dyx[t * TILE])
        for c in range(ntiles * TILE, C):
            s1 = 0.0
            s2 = 0.0
            for i in range(N):
                s1 = s1 + dy[i, c]
                s2 = s2 + dy[i, c] * (x[i, c] - mean_in[c])
            s_dy[c] = s1
            s_dyx[c] = s2
    for c in range(C):
        s1 = s_dy[c]
        s2 = s_dyx[c]
        invstd = invstd_in[c]
        dweight[c] = <floating_t>(s2 * invstd)
        dbias[c] = <floating_t>s1
        mean_dy[c] = <floating_t>(s1 / N if training else 0.0)
        k[c] = <floating_t>(s2 * invstd * invstd / N if training else 0.0)
        a[c] = <floating_t>(invstd * weight[c] if has_weight else invstd)
    if need_dx:
        for i in prange(N, schedule="static", use_threads_if=par):
            _rowbn_dx(&dy[i, 0], &x[i, 0], &dx[i, 0], C, &mean_in[0], &mean_dy[0], &k[0],
                      &a[0])


def batch_norm_forward(x, weight, bias, running_mean, running_var, bint training, double eps):
    """Batch normalization of ``x`` (N, C, S) over N and S, per channel.

    Training: the batch's statistics; evaluation: ``running_mean``/``running_var``
    (both (C,)). Returns ``(y, mean, var, invstd)``: in evaluation mean and var are
    the running ones given; var is the biased batch variance in training, in float64
    whatever the input's dtype (for the running statistics' update).
    """
    fn = "batch_norm_forward"
    _check_input(fn, x, 3)
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], S = x.shape[2]
    dt = x.dtype
    w = _optional(fn, "weight", weight, dt, C)
    b = _optional(fn, "bias", bias, dt, C)
    # the batch variance in double (the running update rounds it once)
    var_out = np.empty(C, dtype=np.float64)
    if training:
        mean = np.empty(C, dtype=dt)
        var = var_out
        var_in = mean  # not read in training
    else:
        _check_array(fn, "running_mean", running_mean, dt, (C,))
        _check_array(fn, "running_var", running_var, dt, (C,))
        mean, var = running_mean, running_var
        var_in = var
    invstd = np.empty(C, dtype=dt)
    y = np.empty_like(x)
    if S == 1 and N > 1:
        tmp = np.empty(C, dtype=np.float64)
        scale = np.empty(C, dtype=dt)
        shift = np.empty(C, dtype=dt)
        x2, y2 = x.reshape(N, C), y.reshape(N, C)
        if dt == np.float32:
            _batch_norm_fwd_rows[float](x2, w, weight is not None, b, bias is not None, mean,
                                        var_in, training, eps, y2, mean, var_out, invstd,
                                        scale, shift, tmp)
        else:
            _batch_norm_fwd_rows[double](x2, w, weight is not None, b, bias is not None, mean,
                                         var_in, training, eps, y2, mean, var_out, invstd,
                                         scale, shift, tmp)
    elif dt == np.float32:
        _batch_norm_fwd[float](x, w, weight is not None, b, bias is not None, mean, var_in,
                               training, eps, y, mean, var_out, invstd)
    else:
        _batch_norm_fwd[double](x, w, weight is not None, b, bias is not None, mean, var_in,
                                training, eps, y, mean, var_out, invstd)
    return y, mean, var, invstd


def batch_norm_backward(dy, x, mean, invstd, weight, bint training, bint need_dx=True,
                        bint need_sums=True):
    """Gradients of :func:`batch_norm_forward`: ``(dx, dweight, dbias)``.

    ``mean``/``invstd`` are the statistics the forward used (the batch's in
    training). ``dx`` is None unless ``need_dx``; ``dweight`` (the sum of
    ``dy * xhat``) and ``dbias`` (the sum of ``dy``) are None unless ``need_sums``.
    """
    fn = "batch_norm_backward"
    _check_input(fn, x, 3)
    dt = x.dtype
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], S = x.shape[2]
    _check_array(fn, "grad", dy, dt, x.shape)
    _check_array(fn, "mean", mean, dt, (C,))
    _check_array(fn, "invstd", invstd, dt, (C,))
    w = _optional(fn, "weight", weight, dt, C)
    dx = np.empty_like(x) if need_dx else np.empty((0, 0, 0), dtype=dt)
    dweight = np.empty(C, dtype=dt)
    dbias = np.empty(C, dtype=dt)
    if S == 1 and N > 1 and need_dx:
        sums = np.zeros((2, C), dtype=np.float64)
        coef = np.empty((3, C), dtype=dt)
        args = (dy.reshape(N, C), x.reshape(N, C), mean, invstd, w, weight is not None,
                training, need_dx, need_sums, dx.reshape(N, C), dweight, dbias,
                coef[0], coef[1], coef[2], sums[0], sums[1])
        if dt == np.float32:
            _batch_norm_bwd_rows[float](*args)
        else:
            _batch_norm_bwd_rows[double](*args)
    else:
        if S == 1 and N > 1:
            dy, x = np.ascontiguousarray(dy.reshape(N, C).T).reshape(1, C, N), \
                np.ascontiguousarray(x.reshape(N, C).T).reshape(1, C, N)
        if dt == np.float32:
            _batch_norm_bwd[float](dy, x, mean, invstd, w, weight is not None, training,
                                   need_dx, need_sums, dx, dweight, dbias)
        else:
            _batch_norm_bwd[double](dy, x, mean, invstd, w, weight is not None, training,
                                    need_dx, need_sums, dx, dweight, dbias)
    return (dx if need_dx else None, dweight if need_sums else None,
            dbias if need_sums else None)


# ---------------------------------------------------------------------------
# layer norm: statistics per row of (M, K), affine per column

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _layer_norm_fwd(const floating_t[:, ::1] x, const floating_t* weight,
                          const floating_t* bias, double eps, floating_t[:, ::1] y,
                          floating_t[::1] mean_out, floating_t[::1] rstd_out) noexcept nogil:
    cdef Py_ssize_t M = x.shape[0], K = x.shape[1]
    cdef Py_ssize_t i
    cdef double mean, rstd
    for i in prange(M, schedule="static", use_threads_if=M * K >= PARALLEL_MIN):
        mean = _sum(&x[i, 0], K) / K
        rstd = 1.0 / sqrt(_sqdev(&x[i, 0], K, <floating_t>mean) / K + eps)
        mean_out[i] = <floating_t>mean
        rstd_out[i] = <floating_t>rstd
        _norm_row(&x[i, 0], &y[i, 0], K, <floating_t>mean, <floating_t>rstd, weight, bias)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _layer_norm_dx(const floating_t[:, ::1] dy, const floating_t[:, ::1] x,
                         const floating_t[::1] mean_in, const floating_t[::1] rstd_in,
                         const floating_t* weight, floating_t[:, ::1] dx) noexcept nogil:
    # dx = rstd * (a - mean(a) - xhat * mean(a * xhat)), a = dy * w, row by row
    cdef Py_ssize_t M = x.shape[0], K = x.shape[1]
    cdef Py_ssize_t i
    cdef double c1 = 0.0, c2 = 0.0
    for i in prange(M, schedule="static", use_threads_if=M * K >= PARALLEL_MIN):
        c1 = 0.0
        c2 = 0.0
        _ln_sums(&dy[i, 0], &x[i, 0], weight, K, mean_in[i], rstd_in[i], &c1, &c2)
        _ln_dx(&dy[i, 0], &x[i, 0], weight, &dx[i, 0], K, mean_in[i], rstd_in[i],
               <floating_t>(c1 / K), <floating_t>(c2 / K))


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _layer_norm_wsums(const floating_t[:, ::1] dy, const floating_t[:, ::1] x,
                            const floating_t[::1] mean, const floating_t[::1] rstd,
                            double[::1] dw, double[::1] db) noexcept nogil:
    # column sums over tiles of TILE columns (accumulators in registers), one tile per
    # task; the last K % TILE columns one by one
    cdef Py_ssize_t M = x.shape[0], K = x.shape[1]
    cdef Py_ssize_t ntiles = K // TILE
    cdef Py_ssize_t t, i, c
    cdef double s1, s2
    for t in prange(ntiles, schedule="static", use_threads_if=M * K >= PARALLEL_MIN):
        _tln(&dy[0, t * TILE], &x[0, t * TILE], M, K, &mean[0], &rstd[0], &dw[t * TILE],
             &db[t * TILE])
    for c in range(ntiles * TILE, K):
        s1 = 0.0
        s2 = 0.0
        for i in range(M):
            s1 = s1 + dy[i, c] * ((x[i, c] - mean[i]) * rstd[i])
            s2 = s2 + dy[i, c]
        dw[c] = s1
        db[c] = s2


def layer_norm_forward(x, weight, bias, double eps):
    """Layer normalization of every row of ``x`` (M, K); ``weight``/``bias`` (K,) or
    None. Returns ``(y, mean, rstd)`` with the rows' means and 1/std, (M,) each."""
    fn = "layer_norm_forward"
    _check_input(fn, x, 2)
    cdef Py_ssize_t M = x.shape[0], K = x.shape[1]
    dt = x.dtype
    w = _optional(fn, "weight", weight, dt, K)
    b = _optional(fn, "bias", bias, dt, K)
    y = np.empty_like(x)
    mean = np.empty(M, dtype=dt)
    rstd = np.empty(M, dtype=dt)
    if K == 0:
        return y, np.full(M, np.nan, dtype=dt), np.full(M, np.nan, dtype=dt)
    cdef float[::1] wf, bf
    cdef double[::1] wd, bd
    if dt == np.float32:
        wf, bf = w, b
        _layer_norm_fwd[float](x, &wf[0] if weight is not None else NULL,
                               &bf[0] if bias is not None else NULL, eps, y, mean, rstd)
    else:
        wd, bd = w, b
        _layer_norm_fwd[double](x, &wd[0] if weight is not None else NULL,
                                &bd[0] if bias is not None else NULL, eps, y, mean, rstd)
    return y, mean, rstd


def layer_norm_backward(dy, x, mean, rstd, weight, bint need_dx=True, bint need_sums=True):
    """Gradients of :func:`layer_norm_forward`: ``(dx, dweight, dbias)``; dweight and
    dbias (the column sums of ``dy * xhat`` and ``dy``) are None unless ``need_sums``."""
    fn = "layer_norm_backward"
    _check_input(fn, x, 2)
    dt = x.dtype
    cdef Py_ssize_t M = x.shape[0], K = x.shape[1]
    _check_array(fn, "grad", dy, dt, x.shape)
    _check_array(fn, "mean", mean, dt, (M,))
    _check_array(fn, "rstd", rstd, dt, (M,))
    w = _optional(fn, "weight", weight, dt, K)
    if M == 0 or K == 0:
        z = np.zeros(K, dtype=dt)
        return (np.zeros_like(x) if need_dx else None,
                z if need_sums else None, z.copy() if need_sums else None)
    dx = np.empty_like(x) if need_dx else None
    dws = np.empty(K if need_sums else 0, dtype=np.float64)
    dbs = np.empty(K if need_sums else 0, dtype=np.float64)
    cdef float[::1] wf
    cdef double[::1] wd
    if dt == np.float32:
        wf = w
        if need_dx:
            _layer_norm_dx[float](dy, x, mean, rstd, &wf[0] if weight is not None else NULL, dx)
        if need_sums:
            _layer_norm_wsums[float](dy, x, mean, rstd, dws, dbs)
    else:
        wd = w
        if need_dx:
            _layer_norm_dx[double](dy, x, mean, rstd, &wd[0] if weight is not None else NULL,
                                   dx)
        if need_sums:
            _layer_norm_wsums[double](dy, x, mean, rstd, dws, dbs)
    if need_sums:
        return (dx if need_dx else None, dws.astype(dt), dbs.astype(dt))
    return dx if need_dx else None, None, None


# ---------------------------------------------------------------------------
# group norm: statistics per (sample, group) of (N, C, S), affine per channel

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _group_norm_fwd(const floating_t[:, :, ::1] x, Py_ssize_t G,
                          const floating_t[::1] weight, bint has_weight,
                          const floating_t[::1] bias, bint has_bias, double eps,
                          floating_t[:, :, ::1] y, floating_t[:, ::1] mean_out,
                          floating_t[:, ::1] var_out, floating_t[:, ::1] rstd_out) noexcept nogil:
    # The channels of a group are contiguous: one segment of Cg * S elements.
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], S = x.shape[2]
    cdef Py_ssize_t Cg = C // G
    cdef Py_ssize_t r, n, g, c
    cdef double mean, var, rstd, scale, shift
    cdef double count = <double>(Cg * S)
    for r in prange(N * G, schedule="static", use_threads_if=N * C * S >= PARALLEL_MIN):
        n = r // G
        g = r - n * G
        mean = _sum(&x[n, g * Cg, 0], Cg * S) / count
        var = _sqdev(&x[n, g * Cg, 0], Cg * S, <floating_t>mean) / count
        rstd = 1.0 / sqrt(var + eps)
        mean_out[n, g] = <floating_t>mean
        var_out[n, g] = <floating_t>var
        rstd_out[n, g] = <floating_t>rstd
        for c in range(g * Cg, (g + 1) * Cg):
            scale = rstd * weight[c] if has_weight else rstd
            shift = (bias[c] if has_bias else 0.0) - mean * scale
            _affine(&x[n, c, 0], &y[n, c, 0], S, <floating_t>scale, <floating_t>shift)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _group_norm_bwd(const floating_t[:, :, ::1] dy, const floating_t[:, :, ::1] x,
                          Py_ssize_t G, const floating_t[:, ::1] mean_in,
                          const floating_t[:, ::1] rstd_in, const floating_t[::1] weight,
                          bint has_weight, bint need_dx, floating_t[:, :, ::1] dx,
                          double[:, ::1] ds, double[:, ::1] db) noexcept nogil:
    # ds[n, c] = sum_s dy * x, db[n, c] = sum_s dy; then per (n, g)
    # dx = rstd * w * dy + c2 * x + c3 (PyTorch's closed form).
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], S = x.shape[2]
    cdef Py_ssize_t Cg = C // G
    cdef Py_ssize_t r, n, g, c
    cdef double ds_g, db_g, mean, rstd, w, c2, c3
    cdef double inv_count = 1.0 / <double>(Cg * S)
    for r in prange(N * G, schedule="static", use_threads_if=N * C * S >= PARALLEL_MIN):
        n = r // G
        g = r - n * G
        mean = mean_in[n, g]
        rstd = rstd_in[n, g]
        ds_g = 0.0
        db_g = 0.0
        for c in range(g * Cg, (g + 1) * Cg):
            ds[n, c] = 0
            db[n, c] = 0
            _sum2(&dy[n, c, 0], &x[n, c, 0], S, 0, &db[n, c], &ds[n, c])
            w = weight[c] if has_weight else 1.0
            ds_g = ds_g + ds[n, c] * w
            db_g = db_g + db[n, c] * w
        if need_dx:
            c2 = (db_g * mean - ds_g) * rstd * rstd * rstd * inv_count
            c3 = -c2 * mean - db_g * rstd * inv_count
            for c in range(g * Cg, (g + 1) * Cg):
                w = weight[c] if has_weight else 1.0
                _lin2(&dy[n, c, 0], &x[n, c, 0], &dx[n, c, 0], S, <floating_t>(rstd * w),
                      <floating_t>c2, <floating_t>c3)


def group_norm_forward(x, Py_ssize_t num_groups, weight, bias, double eps):
    """Group normalization of ``x`` (N, C, S); ``weight``/``bias`` (C,) or None.
    Returns ``(y, mean, var, rstd)``, the statistics (N, G) each (var biased)."""
    fn = "group_norm_forward"
    _check_input(fn, x, 3)
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1]
    if num_groups <= 0 or C % num_groups:
        raise ValueError(f"{fn}: {C} channels are not divisible into {num_groups} groups")
    dt = x.dtype
    w = _optional(fn, "weight", weight, dt, C)
    b = _optional(fn, "bias", bias, dt, C)
    y = np.empty_like(x)
    mean = np.empty((N, num_groups), dtype=dt)
    var = np.empty((N, num_groups), dtype=dt)
    rstd = np.empty((N, num_groups), dtype=dt)
    if dt == np.float32:
        _group_norm_fwd[float](x, num_groups, w, weight is not None, b, bias is not None, eps,
                               y, mean, var, rstd)
    else:
        _group_norm_fwd[double](x, num_groups, w, weight is not None, b, bias is not None, eps,
                                y, mean, var, rstd)
    return y, mean, var, rstd


def group_norm_backward(dy, x, Py_ssize_t num_groups, mean, rstd, weight, bint need_dx=True):
    """Gradients of :func:`group_norm_forward`: ``(dx or None, dweight, dbias)``."""
    fn = "group_norm_backward"
    _check_input(fn, x, 3)
    dt = x.dtype
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1]
    if num_groups <= 0 or C % num_groups:
        raise ValueError(f"{fn}: {C} channels are not divisible into {num_groups} groups")
    _check_array(fn, "grad", dy, dt, x.shape)
    _check_array(fn, "mean", mean, dt, (N, num_groups))
    _check_array(fn, "rstd", rstd, dt, (N, num_groups))
    w = _optional(fn, "weight", weight, dt, C)
    dx = np.empty_like(x) if need_dx else np.empty((0, 0, 0), dtype=dt)
    ds = np.empty((N, C), dtype=np.float64)
    db = np.empty((N, C), dtype=np.float64)
    if dt == np.float32:
        _group_norm_bwd[float](dy, x, num_groups, mean, rstd, w, weight is not None, need_dx,
                               dx, ds, db)
    else:
        _group_norm_bwd[double](dy, x, num_groups, mean, rstd, w, weight is not None, need_dx,
                                dx, ds, db)
    # dweight[c] = sum_n (ds - db * mean) * rstd, dbias[c] = sum_n db
    Cg = C // num_groups
    m = np.repeat(mean.astype(np.float64), Cg, axis=1)
    r = np.repeat(rstd.astype(np.float64), Cg, axis=1)
    dweight = ((ds - db * m) * r).sum(0).astype(dt)
    dbias = db.sum(0).astype(dt)
    return dx if need_dx else None, dweight, dbias
