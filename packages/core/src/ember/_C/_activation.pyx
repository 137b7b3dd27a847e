"""Fused CPU kernels of pointwise activations NumPy has no ufunc for.

GELU (``x * Phi(x)``, the exact form) forward and backward in one pass each, where the
array path takes some thirty NumPy passes in float64 for erf alone. The loops are C
helpers (``_activation.h``) that GCC vectorizes for float32; float64 calls libm.

Every function takes C-contiguous float32/float64 NumPy arrays of one shape (checked
with the GIL; a mismatch is a Python exception) and runs its loop without the GIL.
"""

import numpy as np

cimport numpy as cnp

cnp.import_array()


cdef extern from "_activation.h":
    void ember_gelu_f(const float* x, float* y, Py_ssize_t n) nogil
    void ember_gelu_backward_f(const float* g, const float* x, float* dx, Py_ssize_t n) nogil
    void ember_gelu_d(const double* x, double* y, Py_ssize_t n) nogil
    void ember_gelu_backward_d(const double* g, const double* x, double* dx,
                               Py_ssize_t n) nogil


cdef object _FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


cdef _check(str fn, str name, object a, object like):
    if type(a) is not np.ndarray or a.dtype not in _FLOATS:
        raise TypeError(f"{fn}: {name} must be a float32 or float64 NumPy array, got "
                        f"{getattr(a, 'dtype', type(a).__name__)}")
    if not a.flags.c_contiguous:
        raise ValueError(f"{fn}: {name} must be C-contiguous")
    if like is not None and (a.dtype != like.dtype or a.shape != like.shape):
        raise ValueError(f"{fn}: {name} has dtype {a.dtype} and shape {a.shape}, expected "
                         f"{like.dtype} and {like.shape}")


def gelu_forward(x, out=None):
    """``x * Phi(x)`` (``Phi`` the standard normal CDF) as a new array, or into ``out``
    (an array of ``x``'s dtype and shape)."""
    _check("gelu_forward", "x", x, None)
    if out is None:
        y = np.empty_like(x)
    else:
        _check("gelu_forward", "out", out, x)
        y = out
    cdef Py_ssize_t n = x.size
    cdef const float[::1] xf
    cdef float[::1] yf
    cdef const double[::1] xd
    cdef double[::1] yd
    if n == 0:
        return y
    if x.dtype == np.float32:
        xf = x.reshape(-1)
        yf = y.reshape(-1)
        with nogil:
            ember_gelu_f(&xf[0], &yf[0], n)
    else:
        xd = x.reshape(-1)
        yd = y.reshape(-1)
        with nogil:
            ember_gelu_d(&xd[0], &yd[0], n)
    return y


def gelu_backward(g, x):
    """The gradient of :func:`gelu_forward`: ``g * (Phi(x) + x * phi(x))``."""
    _check("gelu_backward", "x", x, None)
    _check("gelu_backward", "g", g, x)
    dx = np.empty_like(x)
    cdef Py_ssize_t n = x.size
    cdef const float[::1] gf, xf
    cdef float[::1] df
    cdef const double[::1] gd, xd
    cdef double[::1] dd
    if n == 0:
        return dx
    if x.dtype == np.float32:
        gf = g.reshape(-1)
        xf = x.reshape(-1)
        df = dx.reshape(-1)
        with nogil:
            ember_gelu_backward_f(&gf[0], &xf[0], &df[0], n)
    else:
        gd = g.reshape(-1)
        xd = x.reshape(-1)
        dd = dx.reshape(-1)
        with nogil:
            ember_gelu_backward_d(&gd[0], &xd[0], &dd[0], n)
    return dx
