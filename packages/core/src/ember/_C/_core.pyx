# cython: freethreading_compatible = False
"""ember's core, compiled: the Tensor base type, the autograd graph and its engine.

Everything that runs once per operation lives here: creating the output tensor,
checking grad mode, recording the graph node and, in backward, walking the graph
with dependency counts and accumulating gradients. The Python side (``ember._tensor``)
subclasses :class:`TensorBase` and registers that subclass with
:func:`set_tensor_class`, so tensors made here are ember ``Tensor`` objects.

NOTE [ Ops are Nodes ]
An op is a subclass of :class:`Node` with ``forward(self, *args)`` working on
arrays (NumPy or CuPy) and ``backward(self, *grads)`` working on Tensors (so that
``create_graph=True`` records the backward itself). :func:`apply` calls forward,
wraps the results and, when grad is needed, links the node into the graph. The node
object doubles as the ``ctx`` of the op: values that backward needs are either
declared (``saves_inputs``, ``saves_output``) and saved as version-checked tensors,
or kept as plain attributes set in forward.

The module is one compiled extension written in several files, included below in order:
_dispatch.pxi, _tensor_base.pxi, _fast_paths.pxi, _graph.pxi, _fast_backward.pxi, _apply.pxi,
_engine.pxi.
"""

import re as _re
import sys
import threading as _threading
import types as _types
import traceback as _traceback
import weakref as _weakref

import numpy as _np
cimport numpy as cnp
from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set

cnp.import_array()

# NumPy's floating-point error state is a context variable; the fast paths set it to
# "ignore" around the ufunc calls that can warn (division, exp, log, sqrt, sin, cos) as the
# ops' own forwards do with np.errstate (PyTorch gives nan and inf silently), at a fraction
# of errstate's cost (~20 ns: see _quiet_context below).
try:
    from numpy._core._multiarray_umath import _extobj_contextvar as _fp_state
    from numpy._core._multiarray_umath import _make_extobj
    _fp_quiet = _make_extobj(all="ignore")
except ImportError:  # pragma: no cover - a NumPy without it warns as NumPy does
    _fp_state = None
    _fp_quiet = None

# Setting the variable allocates a new context mapping (~0.2 us); entering a context in
# which it is already set swaps two pointers. _quiet_context is that context, made once:
# the fast paths enter it around the ufunc call (see quiet_call1). A context can be entered
# by one thread at a time; a thread that finds it entered (another thread is inside a ufunc
# that released the GIL) sets the variable instead.
import contextvars as _contextvars
_quiet_context = _contextvars.Context()
if _fp_state is not None:
    _quiet_context.run(_fp_state.set, _fp_quiet)

cdef extern from "Python.h":
    int PyContext_Enter(object ctx) except -1
    int PyContext_Exit(object ctx) except -1

cdef object _ndarray = _np.ndarray
cdef object _np_generic = _np.generic
cdef object _np_asarray = _np.asarray

cdef extern from *:
    """
    /* Grad mode and inference mode are per thread, as in PyTorch. */
    static __thread int ember_grad_enabled = 1;
    static __thread int ember_inference_mode = 0;
    static __thread int ember_anomaly_mode = 0;
    static __thread int ember_anomaly_check_nan = 1;
    /* How many saved-tensors hook pairs this thread has pushed (NOTE [ Saved tensors hooks ]
       in ember/autograd/graph.py): saving a tensor tests it and nothing else. */
    static __thread int ember_saved_hooks_depth = 0;
    """
    int ember_grad_enabled
    int ember_inference_mode
    int ember_anomaly_mode
    int ember_anomaly_check_nan
    int ember_saved_hooks_depth


# ----------------------------------------------------------------------------
# grad mode

cpdef bint is_grad_enabled():
    """Return True if grad mode is enabled in this thread."""
    return ember_grad_enabled != 0


cpdef set_grad_enabled_flag(bint mode):
    """Set grad mode for this thread and return the previous value."""
    global ember_grad_enabled
    cdef bint prev = ember_grad_enabled != 0
    ember_grad_enabled = 1 if mode else 0
    return prev


cpdef bint is_inference_mode_enabled():
    return ember_inference_mode != 0


cpdef set_inference_mode_flag(bint mode):
    global ember_inference_mode
    cdef bint prev = ember_inference_mode != 0
    ember_inference_mode = 1 if mode else 0
    return prev


cpdef bint is_anomaly_enabled():
    return ember_anomaly_mode != 0


cpdef bint is_anomaly_check_nan_enabled():
    return ember_anomaly_check_nan != 0


cpdef set_anomaly_check_nan_flag(bint mode):
    global ember_anomaly_check_nan
    cdef bint prev = ember_anomaly_check_nan != 0
    ember_anomaly_check_nan = 1 if mode else 0
    return prev


cpdef set_anomaly_flag(bint mode):
    global ember_anomaly_mode
    cdef bint prev = ember_anomaly_mode != 0
    ember_anomaly_mode = 1 if mode else 0
    return prev


# ----------------------------------------------------------------------------
# registration of the Python layer (the only upward flow, in one visible place)

cdef object TensorCls = None        # ember.Tensor
cdef object _sum_to = None          # (grad Tensor, shape) -> Tensor summed to shape
cdef object _is_diff_dtype = None   # numpy dtype -> bool (float or complex)
cdef dict _diff_dtypes = {}         # numpy dtype -> bool, cache of _is_diff_dtype
cdef object _zeros_like = None      # Tensor -> zeros Tensor (for undefined grads)


def set_tensor_class(cls):
    """Register the Python Tensor class (a subclass of TensorBase)."""
    global TensorCls
    if not issubclass(cls, TensorBase):
        raise TypeError("the tensor class must subclass TensorBase")
    TensorCls = cls


cdef object _device_of_arrays = None  # [arrays] -> their one Backend (raises if mixed)


def set_device_check(fn):
    """Register ``fn(arrays) -> backend``: the device of an op's arrays, raising PyTorch's
    error when they are on different devices. Called only when an op has an array that is
    not a NumPy array, so CPU ops pay nothing for it."""
    global _device_of_arrays
    _device_of_arrays = fn


def set_helpers(sum_to, is_differentiable_dtype, zeros_like):
    """Register the few Tensor-level helpers the engine needs."""
    global _sum_to, _is_diff_dtype, _zeros_like
    _sum_to = sum_to
    _is_diff_dtype = is_differentiable_dtype
    _zeros_like = zeros_like


include "_dispatch.pxi"

include "_tensor_base.pxi"

include "_fast_paths.pxi"

include "_graph.pxi"

include "_fast_backward.pxi"

include "_apply.pxi"

include "_engine.pxi"
