"""Fused optimizer updates: one pass over a parameter and its state, no temporaries.

Each public function takes 1-d C-contiguous arrays of one dtype, float32 or float64:
the parameter, its gradient and the optimizer's state buffers, the parameter and the
buffers updated in place; the hyper-parameters come as Python numbers and are rounded
to the arrays' dtype, as PyTorch's CPU kernels round their scalars. ``ember.optim``
flattens the tensors (complex ones as their real view) and decides which arrays come
here; these functions check the dtypes and lengths again before they release the GIL,
so a mismatch is a Python exception, never an out-of-bounds access.

The arithmetic follows PyTorch's single-tensor (``foreach=False``) implementations
operation by operation (lerp with PyTorch's two-branch formula, ``addcdiv`` as
``x + value * a / b``), so the trajectories agree to rounding.

NOTE [ Loops the compiler vectorizes ]
A parameter that fits in the caches is updated at the speed of the arithmetic, so the
loops are written for the C compiler's vectorizer: every value is computed without
branches and options only choose between computed values (``_select``, a blend), and
where an option decides which arrays are written (AMSGrad's maximum, a momentum buffer)
each combination has its own loop. GCC vectorizes them all when the module is compiled
with ``-fno-math-errno -fno-trapping-math`` (nothing here reads ``errno`` or the
floating-point exception flags, and neither flag changes a result); without those flags
the loops with square roots or divisions run one element at a time.
"""

cimport cython
from cython.parallel cimport prange
from libc.math cimport fabs, fabsf, sqrt, sqrtf

import numpy as np

cimport numpy as cnp

cnp.import_array()


ctypedef fused floating_t:
    float
    double

include "_parallel.pxi"

# Below this many elements a parameter is updated on one thread: starting the
# OpenMP team costs more than it saves (see NOTE [ OpenMP on few cores ]).
cdef Py_ssize_t PARALLEL_MIN = parallel_min(32768)


cdef inline floating_t _sqrt(floating_t x) noexcept nogil:
    if floating_t is float:
        return sqrtf(x)
    else:
        return sqrt(x)


cdef inline floating_t _abs(floating_t x) noexcept nogil:
    if floating_t is float:
        return fabsf(x)
    else:
        return fabs(x)


cdef inline floating_t _select(bint condition, floating_t a, floating_t b) noexcept nogil:
    # both values are already computed: a blend, not a branch
    return a if condition else b


cdef inline floating_t _direction(floating_t g, floating_t x, bint maximize, bint decay,
                                  floating_t weight_decay) noexcept nogil:
    # the gradient, negated to maximize, plus the L2 weight decay term
    cdef floating_t d = _select(maximize, -g, g)
    return _select(decay, d + weight_decay * x, d)


cdef inline floating_t _lerp(floating_t start, floating_t end, floating_t weight,
                             bint small_weight) noexcept nogil:
    # PyTorch's lerp: exact at weight 0 and at weight 1 (small_weight = |weight| < 0.5)
    return _select(small_weight, start + weight * (end - start),
                   end - (end - start) * (1 - weight))


cdef inline floating_t _max(floating_t a, floating_t b) noexcept nogil:
    # NaN-propagating, as torch.maximum
    return _select((a > b) | (a != a), a, b)


# ---------------------------------------------------------------------------
# argument checks (with the GIL)

cdef object _FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


cdef Py_ssize_t _check(str fn, object param, object grad, tuple buffers) except -1:
    """Check dtypes, dimensions and lengths; return the length."""
    if not isinstance(param, np.ndarray) or param.dtype not in _FLOAT_DTYPES:
        raise TypeError(f"{fn}: expected a float32 or float64 NumPy array as the parameter, "
                        f"got {getattr(param, 'dtype', type(param).__name__)}")
    cdef Py_ssize_t n = param.shape[0] if param.ndim == 1 else -1
    if n < 0:
        raise ValueError(f"{fn}: expected 1-d arrays, got a {param.ndim}-d parameter")
    for name, a in (("param", param), ("grad", grad)) + buffers:
        if a is None:
            continue
        if not isinstance(a, np.ndarray) or a.dtype != param.dtype:
            raise TypeError(f"{fn}: {name} has dtype "
                            f"{getattr(a, 'dtype', type(a).__name__)}, the parameter "
                            f"{param.dtype}")
        if a.ndim != 1 or a.shape[0] != n:
            raise ValueError(f"{fn}: {name} has shape {a.shape}, the parameter ({n},)")
        if not a.flags.c_contiguous:
            raise ValueError(f"{fn}: {name} is not contiguous")
        if name != "grad" and not a.flags.writeable:
            raise ValueError(f"{fn}: {name} is read-only")
    return n


cdef inline bint _is_float(object param):
    return param.dtype == np.float32


# ---------------------------------------------------------------------------
# SGD

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _sgd(floating_t[::1] p, const floating_t[::1] g, floating_t[::1] buf,
               floating_t lr, floating_t weight_decay, floating_t momentum,
               floating_t dampening, bint nesterov, bint maximize,
               bint init_buf) noexcept nogil:
    cdef Py_ssize_t i, n = p.shape[0]
    cdef floating_t d, b, x
    cdef floating_t keep = 1 - dampening
    cdef bint decay = weight_decay != 0
    cdef bint threads = n >= PARALLEL_MIN
    if momentum == 0:
        for i in prange(n, schedule="static", use_threads_if=threads):
            x = p[i]
            p[i] = x + (-lr) * _direction(g[i], x, maximize, decay, weight_decay)
    elif init_buf:
        # PyTorch's first step: the buffer starts at the gradient
        for i in prange(n, schedule="static", use_threads_if=threads):
            x = p[i]
            d = _direction(g[i], x, maximize, decay, weight_decay)
            buf[i] = d
            p[i] = x + (-lr) * _select(nesterov, d + momentum * d, d)
    else:
        for i in prange(n, schedule="static", use_threads_if=threads):
            x = p[i]
            d = _direction(g[i], x, maximize, decay, weight_decay)
            b = buf[i] * momentum + keep * d
            buf[i] = b
            p[i] = x + (-lr) * _select(nesterov, d + momentum * b, b)


def sgd(param, grad, momentum_buffer, double lr, double weight_decay, double momentum,
        double dampening, bint nesterov, bint maximize, bint init_buffer):
    """SGD: ``momentum_buffer`` is used when ``momentum != 0`` (set to the gradient when
    ``init_buffer``, PyTorch's first step)."""
    _check("sgd", param, grad, (("momentum_buffer", momentum_buffer),))
    if momentum != 0 and momentum_buffer is None:
        raise ValueError("sgd: momentum != 0 needs a momentum_buffer")
    buf = param[:0] if momentum_buffer is None else momentum_buffer
    if _is_float(param):
        _sgd[float](param, grad, buf, lr, weight_decay, momentum, dampening, nesterov,
                    maximize, init_buffer)
    else:
        _sgd[double](param, grad, buf, lr, weight_decay, momentum, dampening, nesterov,
                     maximize, init_buffer)


# ---------------------------------------------------------------------------
# Adam, AdamW (decoupled weight decay), AMSGrad

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _adam(floating_t[::1] p, const floating_t[::1] g, floating_t[::1] m,
                floating_t[::1] v, floating_t[::1] vmax, bint amsgrad,
                double beta1_d, double beta2_d, floating_t eps,
                floating_t weight_decay, floating_t decay_factor, bint decoupled,
                floating_t step_size, floating_t bias_correction2_sqrt,
                bint maximize) noexcept nogil:
    cdef Py_ssize_t i, n = p.shape[0]
    cdef floating_t d, mi, vi, x
    # the averaging weights as PyTorch forms them: 1 - beta in double, then rounded (1 - a
    # float32 beta loses the weight's digits: 1 - 0.999f is 1.0000467e-3)
    cdef floating_t beta2 = <floating_t>beta2_d
    cdef floating_t w1 = <floating_t>(1 - beta1_d), w2 = <floating_t>(1 - beta2_d)
    cdef bint small = _abs(w1) < 0.5
    cdef bint l2 = weight_decay != 0 and not decoupled
    cdef bint scale = weight_decay != 0 and decoupled
    cdef bint threads = n >= PARALLEL_MIN
    if amsgrad:
        for i in prange(n, schedule="static", use_threads_if=threads):
            x = p[i]
            d = _direction(g[i], x, maximize, l2, weight_decay)
            x = _select(scale, x * decay_factor, x)
            mi = _lerp(m[i], d, w1, small)
            vi = v[i] * beta2 + w2 * d * d
            m[i] = mi
            v[i] = vi
            vi = _max(vmax[i], vi)
            vmax[i] = vi
            p[i] = x + (-step_size) * mi / (_sqrt(vi) / bias_correction2_sqrt + eps)
    else:
        for i in prange(n, schedule="static", use_threads_if=threads):
            x = p[i]
            d = _direction(g[i], x, maximize, l2, weight_decay)
            x = _select(scale, x * decay_factor, x)
            mi = _lerp(m[i], d, w1, small)
            vi = v[i] * beta2 + w2 * d * d
            m[i] = mi
            v[i] = vi
            p[i] = x + (-step_size) * mi / (_sqrt(vi) / bias_correction2_sqrt + eps)


def adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, double beta1, double beta2,
         double eps, double weight_decay, double lr, bint decoupled_weight_decay,
         double step_size, double bias_correction2_sqrt, bint maximize):
    """Adam (AdamW with ``decoupled_weight_decay``; AMSGrad when ``max_exp_avg_sq`` is
    given). ``step_size = lr / (1 - beta1**step)``."""
    _check("adam", param, grad, (("exp_avg", exp_avg), ("exp_avg_sq", exp_avg_sq),
                                 ("max_exp_avg_sq", max_exp_avg_sq)))
    if exp_avg is None or exp_avg_sq is None:
        raise ValueError("adam: exp_avg and exp_avg_sq are required")
    cdef bint amsgrad = max_exp_avg_sq is not None
    vmax = max_exp_avg_sq if amsgrad else param[:0]
    cdef double decay_factor = 1 - lr * weight_decay
    if _is_float(param):
        _adam[float](param, grad, exp_avg, exp_avg_sq, vmax, amsgrad, beta1, beta2, eps,
                     weight_decay, decay_factor, decoupled_weight_decay, step_size,
                     bias_correction2_sqrt, maximize)
    else:
        _adam[double](param, grad, exp_avg, exp_avg_sq, vmax, amsgrad, beta1, beta2, eps,
                      weight_decay, decay_factor, decoupled_weight_decay, step_size,
                      bias_correction2_sqrt, maximize)


# ---------------------------------------------------------------------------
# Adamax

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _adamax(floating_t[::1] p, const floating_t[::1] g, floating_t[::1] m,
                  floating_t[::1] u, double beta1_d, double beta2_d, floating_t eps,
                  floating_t weight_decay, floating_t clr, bint maximize) noexcept nogil:
    cdef Py_ssize_t i, n = p.shape[0]
    cdef floating_t d, mi, ui, x
    # the averaging weights as PyTorch forms them: 1 - beta in double, then rounded (1 - a
    # float32 beta loses the weight's digits: 1 - 0.999f is 1.0000467e-3)
    cdef floating_t beta2 = <floating_t>beta2_d
    cdef floating_t w1 = <floating_t>(1 - beta1_d)
    cdef bint small = _abs(w1) < 0.5
    cdef bint decay = weight_decay != 0
    for i in prange(n, schedule="static", use_threads_if=n >= PARALLEL_MIN):
        x = p[i]
        d = _direction(g[i], x, maximize, decay, weight_decay)
        mi = _lerp(m[i], d, w1, small)
        m[i] = mi
        ui = _max(u[i] * beta2, _abs(d) + eps)
        u[i] = ui
        p[i] = x + (-clr) * mi / ui


def adamax(param, grad, exp_avg, exp_inf, double beta1, double beta2, double eps,
           double weight_decay, double clr, bint maximize):
    """Adamax; ``clr = lr / (1 - beta1**step)``."""
    _check("adamax", param, grad, (("exp_avg", exp_avg), ("exp_inf", exp_inf)))
    if exp_avg is None or exp_inf is None:
        raise ValueError("adamax: exp_avg and exp_inf are required")
    if _is_float(param):
        _adamax[float](param, grad, exp_avg, exp_inf, beta1, beta2, eps, weight_decay, clr,
                       maximize)
    else:
        _adamax[double](param, grad, exp_avg, exp_inf, beta1, beta2, eps, weight_decay, clr,
                        maximize)


# ---------------------------------------------------------------------------
# NAdam

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _nadam(floating_t[::1] p, const floating_t[::1] g, floating_t[::1] m,
                 floating_t[::1] v, double beta1_d, double beta2_d, floating_t eps,
                 floating_t weight_decay, floating_t decay_factor, bint decoupled,
                 floating_t bias_correction2, floating_t grad_coef, floating_t avg_coef,
                 bint maximize) noexcept nogil:
    cdef Py_ssize_t i, n = p.shape[0]
    cdef floating_t d, mi, vi, denom, x
    # the averaging weights as PyTorch forms them: 1 - beta in double, then rounded (1 - a
    # float32 beta loses the weight's digits: 1 - 0.999f is 1.0000467e-3)
    cdef floating_t beta2 = <floating_t>beta2_d
    cdef floating_t w1 = <floating_t>(1 - beta1_d), w2 = <floating_t>(1 - beta2_d)
    cdef bint small = _abs(w1) < 0.5
    cdef bint l2 = weight_decay != 0 and not decoupled
    cdef bint scale = weight_decay != 0 and decoupled
    for i in prange(n, schedule="static", use_threads_if=n >= PARALLEL_MIN):
        x = p[i]
        d = _direction(g[i], x, maximize, l2, weight_decay)
        x = _select(scale, x * decay_factor, x)
        mi = _lerp(m[i], d, w1, small)
        vi = v[i] * beta2 + w2 * d * d
        m[i] = mi
        v[i] = vi
        denom = _sqrt(vi / bias_correction2) + eps
        x = x + grad_coef * d / denom
        p[i] = x + avg_coef * mi / denom


def nadam(param, grad, exp_avg, exp_avg_sq, double beta1, double beta2, double eps,
          double weight_decay, double lr, bint decoupled_weight_decay,
          double bias_correction2, double grad_coef, double avg_coef, bint maximize):
    """NAdam: ``p += grad_coef * g / denom + avg_coef * exp_avg / denom`` with the
    momentum-schedule coefficients computed by the caller."""
    _check("nadam", param, grad, (("exp_avg", exp_avg), ("exp_avg_sq", exp_avg_sq)))
    if exp_avg is None or exp_avg_sq is None:
        raise ValueError("nadam: exp_avg and exp_avg_sq are required")
    cdef double decay_factor = 1 - lr * weight_decay
    if _is_float(param):
        _nadam[float](param, grad, exp_avg, exp_avg_sq, beta1, beta2, eps, weight_decay,
                      decay_factor, decoupled_weight_decay, bias_correction2, grad_coef,
                      avg_coef, maximize)
    else:
        _nadam[double](param, grad, exp_avg, exp_avg_sq, beta1, beta2, eps, weight_decay,
                       decay_factor, decoupled_weight_decay, bias_correction2, grad_coef,
                       avg_coef, maximize)


# ---------------------------------------------------------------------------
# RAdam

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _radam(floating_t[::1] p, const floating_t[::1] g, floating_t[::1] m,
                 floating_t[::1] v, double beta1_d, double beta2_d, floating_t eps,
                 floating_t weight_decay, floating_t decay_factor, bint decoupled,
                 floating_t lr, floating_t bias_correction1,
                 floating_t bias_correction2_sqrt, bint rectify, floating_t rect,
                 bint maximize) noexcept nogil:
    cdef Py_ssize_t i, n = p.shape[0]
    cdef floating_t d, mi, vi, x, u
    # the averaging weights as PyTorch forms them: 1 - beta in double, then rounded (1 - a
    # float32 beta loses the weight's digits: 1 - 0.999f is 1.0000467e-3)
    cdef floating_t beta2 = <floating_t>beta2_d
    cdef floating_t w1 = <floating_t>(1 - beta1_d), w2 = <floating_t>(1 - beta2_d)
    cdef bint small = _abs(w1) < 0.5
    cdef bint l2 = weight_decay != 0 and not decoupled
    cdef bint scale = weight_decay != 0 and decoupled
    for i in prange(n, schedule="static", use_threads_if=n >= PARALLEL_MIN):
        x = p[i]
        d = _direction(g[i], x, maximize, l2, weight_decay)
        x = _select(scale, x * decay_factor, x)
        mi = _lerp(m[i], d, w1, small)
        vi = v[i] * beta2 + w2 * d * d
        m[i] = mi
        v[i] = vi
        u = mi / bias_correction1 * lr
        u = _select(rectify, u * (bias_correction2_sqrt / (_sqrt(vi) + eps)) * rect, u)
        p[i] = x - u


def radam(param, grad, exp_avg, exp_avg_sq, double beta1, double beta2, double eps,
          double weight_decay, double lr, bint decoupled_weight_decay,
          double bias_correction1, double bias_correction2_sqrt, rect, bint maximize):
    """RAdam; ``rect`` is the variance rectification term, or None while the
    variance is intractable (rho_t <= 5: an SGD-with-momentum step)."""
    _check("radam", param, grad, (("exp_avg", exp_avg), ("exp_avg_sq", exp_avg_sq)))
    if exp_avg is None or exp_avg_sq is None:
        raise ValueError("radam: exp_avg and exp_avg_sq are required")
    cdef double decay_factor = 1 - lr * weight_decay
    cdef bint rectify = rect is not None
    cdef double r = rect if rectify else 0.0
    if _is_float(param):
        _radam[float](param, grad, exp_avg, exp_avg_sq, beta1, beta2, eps, weight_decay,
                      decay_factor, decoupled_weight_decay, lr, bias_correction1,
                      bias_correction2_sqrt, rectify, r, maximize)
    else:
        _radam[double](param, grad, exp_avg, exp_avg_sq, beta1, beta2, eps, weight_decay,
                       decay_factor, decoupled_weight_decay, lr, bias_correction1,
                       bias_correction2_sqrt, rectify, r, maximize)


# ---------------------------------------------------------------------------
# RMSprop

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _rmsprop(floating_t[::1] p, const floating_t[::1] g, floating_t[::1] sq,
                   floating_t[::1] gavg, bint centered, floating_t[::1] buf,
                   floating_t lr, double alpha_d, floating_t eps, floating_t weight_decay,
                   floating_t momentum, bint maximize) noexcept nogil:
    cdef Py_ssize_t i, n = p.shape[0]
    cdef floating_t d, s, a, avg, b, x
    # the averaging weights as PyTorch forms them: 1 - beta in double, then rounded (1 - a
    # float32 beta loses the weight's digits: 1 - 0.999f is 1.0000467e-3)
    cdef floating_t alpha = <floating_t>alpha_d
    cdef floating_t w = <floating_t>(1 - alpha_d)
    cdef bint small = _abs(w) < 0.5
    cdef bint decay = weight_decay != 0
    cdef bint threads = n >= PARALLEL_MIN
    # one loop per set of arrays written
    if centered and momentum > 0:
        for i in prange(n, schedule="static", use_threads_if=threads):
            x = p[i]
            d = _direction(g[i], x, maximize, decay, weight_decay)
            s = sq[i] * alpha + w * d * d
            sq[i] = s
            a = _lerp(gavg[i], d, w, small)
            gavg[i] = a
            avg = _sqrt(s + (-1) * a * a) + eps
            b = buf[i] * momentum + d / avg
            buf[i] = b
            p[i] = x + (-lr) * b
    elif centered:
        for i in prange(n, schedule="static", use_threads_if=threads):
            x = p[i]
            d = _direction(g[i], x, maximize, decay, weight_decay)
            s = sq[i] * alpha + w * d * d
            sq[i] = s
            a = _lerp(gavg[i], d, w, small)
            gavg[i] = a
            avg = _sqrt(s + (-1) * a * a) + eps
            p[i] = x + (-lr) * d / avg
    elif momentum > 0:
        for i in prange(n, schedule="static", use_threads_if=threads):
            x = p[i]
            d = _direction(g[i], x, maximize, decay, weight_decay)
            s = sq[i] * alpha + w * d * d
            sq[i] = s
            avg = _sqrt(s) + eps
            b = buf[i] * momentum + d / avg
            buf[i] = b
            p[i] = x + (-lr) * b
    else:
        for i in prange(n, schedule="static", use_threads_if=threads):
            x = p[i]
            d = _direction(g[i], x, maximize, decay, weight_decay)
            s = sq[i] * alpha + w * d * d
            sq[i] = s
            avg = _sqrt(s) + eps
            p[i] = x + (-lr) * d / avg


def rmsprop(param, grad, square_avg, grad_avg, momentum_buffer, double lr, double alpha,
            double eps, double weight_decay, double momentum, bint maximize):
    """RMSprop: centered when ``grad_avg`` is given; ``momentum_buffer`` is used when
    ``momentum > 0``."""
    _check("rmsprop", param, grad, (("square_avg", square_avg), ("grad_avg", grad_avg),
                                    ("momentum_buffer", momentum_buffer)))
    if square_avg is None:
        raise ValueError("rmsprop: square_avg is required")
    if momentum > 0 and momentum_buffer is None:
        raise ValueError("rmsprop: momentum > 0 needs a momentum_buffer")
    cdef bint centered = grad_avg is not None
    gavg = grad_avg if centered else param[:0]
    buf = param[:0] if momentum_buffer is None else momentum_buffer
    if _is_float(param):
        _rmsprop[float](param, grad, square_avg, gavg, centered, buf, lr, alpha, eps,
                        weight_decay, momentum, maximize)
    else:
        _rmsprop[double](param, grad, square_avg, gavg, centered, buf, lr, alpha, eps,
                         weight_decay, momentum, maximize)


# ---------------------------------------------------------------------------
# Adagrad

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _adagrad(floating_t[::1] p, const floating_t[::1] g, floating_t[::1] acc,
                   floating_t clr, floating_t eps, floating_t weight_decay,
                   bint maximize) noexcept nogil:
    cdef Py_ssize_t i, n = p.shape[0]
    cdef floating_t d, s, x
    cdef bint decay = weight_decay != 0
    for i in prange(n, schedule="static", use_threads_if=n >= PARALLEL_MIN):
        x = p[i]
        d = _direction(g[i], x, maximize, decay, weight_decay)
        s = acc[i] + d * d
        acc[i] = s
        p[i] = x + (-clr) * d / (_sqrt(s) + eps)


def adagrad(param, grad, state_sum, double clr, double eps, double weight_decay,
            bint maximize):
    """Adagrad; ``clr = lr / (1 + (step - 1) * lr_decay)``."""
    _check("adagrad", param, grad, (("state_sum", state_sum),))
    if state_sum is None:
        raise ValueError("adagrad: state_sum is required")
    if _is_float(param):
        _adagrad[float](param, grad, state_sum, clr, eps, weight_decay, maximize)
    else:
        _adagrad[double](param, grad, state_sum, clr, eps, weight_decay, maximize)


# ---------------------------------------------------------------------------
# Adadelta

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _adadelta(floating_t[::1] p, const floating_t[::1] g, floating_t[::1] sq,
                    floating_t[::1] acc, floating_t lr, double rho_d, floating_t eps,
                    floating_t weight_decay, bint maximize) noexcept nogil:
    cdef Py_ssize_t i, n = p.shape[0]
    cdef floating_t d, s, delta, x, a
    # the averaging weights as PyTorch forms them: 1 - beta in double, then rounded (1 - a
    # float32 beta loses the weight's digits: 1 - 0.999f is 1.0000467e-3)
    cdef floating_t rho = <floating_t>rho_d
    cdef floating_t w = <floating_t>(1 - rho_d)
    cdef bint decay = weight_decay != 0
    for i in prange(n, schedule="static", use_threads_if=n >= PARALLEL_MIN):
        x = p[i]
        d = _direction(g[i], x, maximize, decay, weight_decay)
        s = sq[i] * rho + w * d * d
        sq[i] = s
        a = acc[i]
        delta = _sqrt(a + eps) / _sqrt(s + eps) * d
        acc[i] = a * rho + w * delta * delta
        p[i] = x + (-lr) * delta


def adadelta(param, grad, square_avg, acc_delta, double lr, double rho, double eps,
             double weight_decay, bint maximize):
    """Adadelta."""
    _check("adadelta", param, grad, (("square_avg", square_avg), ("acc_delta", acc_delta)))
    if square_avg is None or acc_delta is None:
        raise ValueError("adadelta: square_avg and acc_delta are required")
    if _is_float(param):
        _adadelta[float](param, grad, square_avg, acc_delta, lr, rho, eps, weight_decay,
                         maximize)
    else:
        _adadelta[double](param, grad, square_avg, acc_delta, lr, rho, eps, weight_decay,
                          maximize)


# ---------------------------------------------------------------------------
# Rprop

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _rprop(floating_t[::1] p, const floating_t[::1] g, floating_t[::1] prev,
                 floating_t[::1] step_size, floating_t etaminus, floating_t etaplus,
                 floating_t step_size_min, floating_t step_size_max,
                 bint maximize) noexcept nogil:
    cdef Py_ssize_t i, n = p.shape[0]
    cdef floating_t d, s, factor, size, sgn
    for i in prange(n, schedule="static", use_threads_if=n >= PARALLEL_MIN):
        d = g[i]
        d = _select(maximize, -d, d)
        s = d * prev[i]
        # the sign of s as a factor; a NaN stays, as in PyTorch
        factor = _select(s > 0, etaplus, _select(s < 0, etaminus, _select(s == 0, 1, s)))
        # clamp_(min, max) as PyTorch: the lower bound first (a NaN stays)
        size = step_size[i] * factor
        size = _select(size < step_size_min, step_size_min, size)
        size = _select(size > step_size_max, step_size_max, size)
        step_size[i] = size
        d = _select(factor == etaminus, 0, d)
        sgn = _select(d > 0, 1, _select(d < 0, -1, _select(d == 0, 0, d)))
        p[i] = p[i] + (-sgn) * size
        prev[i] = d


def rprop(param, grad, prev, step_size, double etaminus, double etaplus,
          double step_size_min, double step_size_max, bint maximize):
    """Rprop."""
    _check("rprop", param, grad, (("prev", prev), ("step_size", step_size)))
    if prev is None or step_size is None:
        raise ValueError("rprop: prev and step_size are required")
    if _is_float(param):
        _rprop[float](param, grad, prev, step_size, etaminus, etaplus, step_size_min,
                      step_size_max, maximize)
    else:
        _rprop[double](param, grad, prev, step_size, etaminus, etaplus, step_size_min,
                       step_size_max, maximize)


# ---------------------------------------------------------------------------
# ASGD

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _asgd(floating_t[::1] p, const floating_t[::1] g, floating_t[::1] ax,
                floating_t decay_factor, floating_t eta, floating_t mu,
                floating_t weight_decay, bint maximize) noexcept nogil:
    cdef Py_ssize_t i, n = p.shape[0]
    cdef floating_t d, x, a
    cdef bint average = mu != 1
    cdef bint decay = weight_decay != 0
    for i in prange(n, schedule="static", use_threads_if=n >= PARALLEL_MIN):
        x = p[i]
        d = _direction(g[i], x, maximize, decay, weight_decay)
        x = x * decay_factor
        x = x + (-eta) * d
        p[i] = x
        a = ax[i]
        ax[i] = _select(average, a + (x - a) * mu, x)


def asgd(param, grad, ax, double eta, double lambd, double mu, double weight_decay,
         bint maximize):
    """ASGD: ``eta`` and ``mu`` are the step's values (stored rounded, as PyTorch's)."""
    _check("asgd", param, grad, (("ax", ax),))
    if ax is None:
        raise ValueError("asgd: ax is required")
    cdef double decay_factor = 1 - lambd * eta
    if _is_float(param):
        _asgd[float](param, grad, ax, decay_factor, eta, mu, weight_decay, maximize)
    else:
        _asgd[double](param, grad, ax, decay_factor, eta, mu, weight_decay, maximize)
