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
"""

import re as _re
import sys
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
# of errstate's cost (still ~0.1-0.2 us, which is why the others do not).
try:
    from numpy._core._multiarray_umath import _extobj_contextvar as _fp_state
    from numpy._core._multiarray_umath import _make_extobj
    _fp_quiet = _make_extobj(all="ignore")
except ImportError:  # pragma: no cover - a NumPy without it warns as NumPy does
    _fp_state = None
    _fp_quiet = None

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
    """
    int ember_grad_enabled
    int ember_inference_mode
    int ember_anomaly_mode
    int ember_anomaly_check_nan


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


# ----------------------------------------------------------------------------
# the dispatch point

# NOTE [ One dispatch point ]
# Every op passes through here: apply (general ops), apply_view (views), apply_inplace
# (in-place ops), the compiled fast paths of the arithmetic and unary methods, dispatch()
# (ops that build their result without a Node: creation, sampling, conversions) and, in
# backward, each node's backward. When a listener is installed (the profiler, a tracer)
# it sees each op begin and end: ``token = listener.enter(name, inputs)`` before and
# ``listener.exit(token)`` after, nested calls included. With no listener the cost is one
# test of a C flag per op.
cdef bint _listening = False
cdef object _listener = None


def set_dispatch_listener(listener):
    """Install ``listener`` at the dispatch point (None removes it); returns the previous
    one. ``listener.enter(name, inputs)`` returns a token passed to ``listener.exit``."""
    global _listening, _listener
    prev = _listener
    _listener = listener
    _listening = listener is not None
    return prev


def get_dispatch_listener():
    """The listener installed at the dispatch point, or None."""
    return _listener


cdef str op_name_of(object op_cls):
    """The registered name of an op's Node class (``op_name``), else its class name."""
    name = getattr(op_cls, "op_name", None)
    return name if name is not None else op_cls.__name__


def dispatch(str name, fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` as op ``name`` through the dispatch point: for ops that
    make their result without a graph node (creation, sampling, conversion)."""
    if not _listening:
        return fn(*args, **kwargs)
    token = _listener.enter(name, args)
    try:
        return fn(*args, **kwargs)
    finally:
        _listener.exit(token)


cdef class DispatchedFunction:
    """A public function made to pass the dispatch point as op ``op_name``: the ops that
    make their result without a graph node (creation, sampling) are wrapped in it. It calls
    the function directly when no listener is installed. ``__wrapped__``, ``__name__``,
    ``__doc__`` ... are the function's (``inspect.signature`` and pickling see through it).
    """

    cdef readonly str op_name
    cdef object fn
    cdef dict __dict__

    def __init__(self, str name, fn):
        self.op_name = name
        self.fn = fn
        for attr in ("__name__", "__qualname__", "__module__", "__doc__"):
            setattr(self, attr, getattr(fn, attr))
        setattr(self, "__wrapped__", fn)

    def __call__(self, *args, **kwargs):
        if not _listening:
            return self.fn(*args, **kwargs)
        token = _listener.enter(self.op_name, args)
        try:
            return self.fn(*args, **kwargs)
        finally:
            _listener.exit(token)

    def __get__(self, obj, cls):
        # installed as a Tensor method: bind like a plain function
        return self if obj is None else _types.MethodType(self, obj)

    def __repr__(self):
        return f"<function {getattr(self, '__qualname__')}>"

    def __reduce__(self):
        return getattr(self, "__qualname__")


def dispatched(fn):
    """Decorator: pass ``fn`` through the dispatch point as op ``fn.__name__``."""
    return DispatchedFunction(fn.__name__, fn)


cdef inline bint is_diff_dtype(object dt):
    cdef object r = _diff_dtypes.get(dt)
    if r is None:
        r = bool(_is_diff_dtype(dt))
        _diff_dtypes[dt] = r
    return r is True


# ----------------------------------------------------------------------------
# Tensor

cdef class VersionCounter:
    """Counts in-place changes of a storage; views share their base's counter."""
    cdef public long long value


cdef class TensorBase:
    """The compiled part of ``ember.Tensor``: the data and the autograd fields."""

    cdef public object _data           # numpy.ndarray or cupy.ndarray
    cdef public bint _requires_grad    # meaningful for leaves only
    cdef public object _grad
    cdef public Node _grad_fn
    cdef public int _output_nr
    cdef public VersionCounter _vc     # created lazily: None means version 0, no views
    cdef public object _base           # the tensor this one is a view of, or None
    cdef public object _view_fn        # for views: re-creates this view from the base
    cdef public long long _view_version  # for views: the version their grad_fn was made at
    cdef public object _hooks          # list of hooks on a leaf's grad, or None
    cdef public bint _retains_grad
    cdef public object _accumulator    # a leaf's AccumulateGrad node, made on first use
    cdef object __weakref__

    @property
    def requires_grad(self):
        return self._requires_grad or self._grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, bint value):
        if self._grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want "
                    "to use a computed variable in a subgraph that doesn't require "
                    "differentiation use var_no_grad = var.detach().")
            return
        if value and not is_diff_dtype(self._data.dtype):
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = value

    @property
    def grad_fn(self):
        if self._base is not None:
            refresh_if_stale(self)
        return self._grad_fn

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def _version(self):
        return 0 if self._vc is None else self._vc.value

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}")
            if (<TensorBase>value)._data.shape != self._data.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: grad shape "
                    f"{tuple((<TensorBase>value)._data.shape)}, tensor shape "
                    f"{tuple(self._data.shape)}")
            if (<TensorBase>value)._data.dtype != self._data.dtype:
                raise RuntimeError(
                    "assigned grad has data of a different type: "
                    f"{(<TensorBase>value)._data.dtype} "
                    f"vs {self._data.dtype}")
        self._grad = value

    def _bump_version(self):
        bump_version(self)

    # Arithmetic operators: a compiled fast path for the common case (NumPy arrays of
    # one dtype, or an array and a Python number that cannot change its dtype); every
    # other case goes to the Python op functions registered with set_binary_ops.
    def __add__(self, other):
        return binary_op(self, other, OP_ADD, False)

    def __radd__(self, other):
        return binary_op(self, other, OP_ADD, True)

    def __sub__(self, other):
        return binary_op(self, other, OP_SUB, False)

    def __rsub__(self, other):
        return binary_op(self, other, OP_SUB, True)

    def __mul__(self, other):
        return binary_op(self, other, OP_MUL, False)

    def __rmul__(self, other):
        return binary_op(self, other, OP_MUL, True)

    def __truediv__(self, other):
        return binary_op(self, other, OP_DIV, False)

    def __rtruediv__(self, other):
        return binary_op(self, other, OP_DIV, True)

    def add(self, other, *, alpha=1, out=None):
        if type(alpha) is int and alpha == 1 and out is None:
            return binary_op(self, other, OP_ADD, False)
        return _op_functions[OP_ADD](self, other, alpha=alpha, out=out)

    def sub(self, other, *, alpha=1, out=None):
        if type(alpha) is int and alpha == 1 and out is None:
            return binary_op(self, other, OP_SUB, False)
        return _op_functions[OP_SUB](self, other, alpha=alpha, out=out)

    def mul(self, other, *, out=None):
        if out is None:
            return binary_op(self, other, OP_MUL, False)
        return _op_functions[OP_MUL](self, other, out=out)

    def div(self, other, *, rounding_mode=None, out=None):
        if rounding_mode is None and out is None:
            return binary_op(self, other, OP_DIV, False)
        return _op_functions[OP_DIV](self, other, rounding_mode=rounding_mode, out=out)

    # The most used unary ops, compiled the same way (see set_unary_ops).
    def exp(self):
        return unary_op(self, 0)

    def log(self):
        return unary_op(self, 1)

    def tanh(self):
        return unary_op(self, 2)

    def sigmoid(self):
        return unary_op(self, 3)

    def neg(self):
        return unary_op(self, 4)

    def __neg__(self):
        return unary_op(self, 4)

    def relu(self):
        return unary_op(self, 5)

    def sqrt(self):
        return unary_op(self, 6)

    def abs(self):
        return unary_op(self, 7)

    def __abs__(self):
        return unary_op(self, 7)

    def sin(self):
        return unary_op(self, 8)

    def cos(self):
        return unary_op(self, 9)


# ----------------------------------------------------------------------------
# the compiled fast path of + - * /

cdef enum:
    OP_ADD = 0
    OP_SUB = 1
    OP_MUL = 2
    OP_DIV = 3

cdef object _ufuncs = (_np.add, _np.subtract, _np.multiply, _np.true_divide)
cdef list _op_classes = [None, None, None, None]   # Add, Sub, Mul, Div Node classes
cdef list _op_functions = [None, None, None, None]  # ember.add, sub, mul, div (general path)


def set_binary_ops(add, sub, mul, div):
    """Register (Node class, Python function) for each of + - * /."""
    cdef int i
    for i, pair in enumerate((add, sub, mul, div)):
        _op_classes[i] = pair[0]
        _op_functions[i] = pair[1]


cdef inline bint kind_ok(char kind, int op, bint scalar_is_float):
    # bool - bool is an error and int / int is float: both take the general path
    if kind == b'f' or kind == b'c':
        return True
    if scalar_is_float or op == OP_DIV:
        return False
    if kind == b'b':
        return op != OP_SUB
    return kind == b'i' or kind == b'u'


cdef inline bint same_descr(object x, object y):
    return <void*>cnp.PyArray_DESCR(<cnp.ndarray>x) == <void*>cnp.PyArray_DESCR(<cnp.ndarray>y)


cdef object binary_op(TensorBase self, object other, int op, bint reflected):
    cdef object x = self._data
    cdef object y
    cdef char kind
    cdef bint grad
    cdef TensorBase t
    if type(x) is _ndarray:
        kind = (<cnp.dtype>cnp.PyArray_DESCR(<cnp.ndarray>x)).kind
        if isinstance(other, TensorBase):
            t = <TensorBase>other
            y = t._data
            if (type(y) is _ndarray
                    and same_descr(x, y)
                    and kind_ok(kind, op, False)):
                grad = ember_grad_enabled and (self._requires_grad or self._grad_fn is not None
                                               or t._requires_grad or t._grad_fn is not None)
                return fast_binary(self, other, x, y, op, reflected, grad)
        elif type(other) is float or type(other) is int:
            if kind_ok(kind, op, type(other) is float):
                grad = ember_grad_enabled and (self._requires_grad or self._grad_fn is not None)
                return fast_binary(self, other, x, other, op, reflected, grad)
    fn = _op_functions[op]
    if fn is None:
        return NotImplemented
    return fn(other, self) if reflected else fn(self, other)


cdef object quiet_call1(object ufunc, object x):
    if _fp_state is None:
        return ufunc(x)
    token = PyContextVar_Set(_fp_state, _fp_quiet)
    try:
        return ufunc(x)
    finally:
        PyContextVar_Reset(_fp_state, token)


cdef object quiet_call2(object ufunc, object x, object y):
    if _fp_state is None:
        return ufunc(x, y)
    token = PyContextVar_Set(_fp_state, _fp_quiet)
    try:
        return ufunc(x, y)
    finally:
        PyContextVar_Reset(_fp_state, token)


cdef object fast_binary(TensorBase self, object other, object x, object y, int op,
                        bint reflected, bint grad):
    if _listening:
        token = _listener.enter(op_name_of(_op_classes[op]),
                                (other, self) if reflected else (self, other))
        try:
            return fast_binary_impl(self, other, x, y, op, reflected, grad)
        finally:
            _listener.exit(token)
    return fast_binary_impl(self, other, x, y, op, reflected, grad)


cdef object fast_binary_impl(TensorBase self, object other, object x, object y, int op,
                             bint reflected, bint grad):
    cdef Node node
    try:
        if not grad:
            if op != OP_DIV:  # as the ops' forwards: only division silences NumPy
                return wrap(_ufuncs[op](y, x) if reflected else _ufuncs[op](x, y))
            return wrap(quiet_call2(_ufuncs[op], y, x) if reflected
                        else quiet_call2(_ufuncs[op], x, y))
        node = Node.__new__(_op_classes[op])
        if reflected:
            out = node.forward(y, x)
        else:
            out = node.forward(x, y)
    except (ValueError, OverflowError):
        # shapes that do not broadcast, or a number out of the dtype's range: the
        # general path gives PyTorch's error or wraps the number as PyTorch does
        fn = _op_functions[op]
        return fn(other, self) if reflected else fn(self, other)
    return record(node, (other, self) if reflected else (self, other), out)


UNARY_FAST_PATH = ("exp", "log", "tanh", "sigmoid", "neg", "relu", "sqrt", "abs", "sin", "cos")
cdef list _unary = [None] * len(UNARY_FAST_PATH)


cdef class UnaryEntry:
    cdef object cls        # the op's Node class
    cdef object function   # the general Python function (any dtype, device, ...)
    cdef object ufunc      # a NumPy ufunc computing the op in one call, or None
    cdef bytes kinds       # dtype kinds taken by the fast path
    cdef bint quiet        # silence NumPy's floating-point warnings, as the op's forward does


def set_unary_ops(dict ops):
    """Register, per name in UNARY_FAST_PATH, (Node class, Python function, ufunc or None,
    dtype kinds such as "fc", quiet) for the compiled unary methods; ``quiet``: the ufunc
    can raise NumPy floating-point warnings that the op's forward silences."""
    cdef UnaryEntry e
    for i, name in enumerate(UNARY_FAST_PATH):
        cls, fn, ufunc, kinds, quiet = ops[name]
        e = UnaryEntry.__new__(UnaryEntry)
        e.cls, e.function, e.ufunc, e.kinds, e.quiet = cls, fn, ufunc, kinds.encode(), quiet
        _unary[i] = e


cdef object unary_op(TensorBase self, int which):
    cdef UnaryEntry e = _unary[which]
    cdef object x = self._data
    cdef char kind
    cdef Node node
    if e is None:
        raise RuntimeError("ember's unary ops are not registered (import ember first)")
    if type(x) is _ndarray:
        kind = (<cnp.dtype>cnp.PyArray_DESCR(<cnp.ndarray>x)).kind
        if kind in e.kinds:
            if _listening:
                token = _listener.enter(op_name_of(e.cls), (self,))
                try:
                    return fast_unary(self, e, x)
                finally:
                    _listener.exit(token)
            return fast_unary(self, e, x)
    return e.function(self)


cdef object fast_unary(TensorBase self, UnaryEntry e, object x):
    cdef Node node
    if not (ember_grad_enabled and (self._requires_grad or self._grad_fn is not None)):
        if e.ufunc is not None:
            return wrap(quiet_call1(e.ufunc, x) if e.quiet else e.ufunc(x))
        return wrap(Node.__new__(e.cls).forward(x))
    node = Node.__new__(e.cls)
    return record(node, (self,), node.forward(x))


# The function forms (ember.add, ember.exp, ...) of the compiled ops: the fast path
# when it applies, else the general Python function registered for the op.

def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``, broadcasting, with PyTorch's type promotion."""
    if type(alpha) is int and alpha == 1 and out is None and isinstance(input, TensorBase):
        return binary_op(<TensorBase>input, other, OP_ADD, False)
    return _op_functions[OP_ADD](input, other, alpha=alpha, out=out)


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    if type(alpha) is int and alpha == 1 and out is None and isinstance(input, TensorBase):
        return binary_op(<TensorBase>input, other, OP_SUB, False)
    return _op_functions[OP_SUB](input, other, alpha=alpha, out=out)


def mul(input, other, *, out=None):
    """``input * other``."""
    if out is None and isinstance(input, TensorBase):
        return binary_op(<TensorBase>input, other, OP_MUL, False)
    return _op_functions[OP_MUL](input, other, out=out)


def div(input, other, *, rounding_mode=None, out=None):
    """``input / other``; with ``rounding_mode`` 'trunc' or 'floor' the rounded quotient."""
    if rounding_mode is None and out is None and isinstance(input, TensorBase):
        return binary_op(<TensorBase>input, other, OP_DIV, False)
    return _op_functions[OP_DIV](input, other, rounding_mode=rounding_mode, out=out)


cdef object unary_function(object input, object out, int which):
    if out is None and isinstance(input, TensorBase):
        return unary_op(<TensorBase>input, which)
    return (<UnaryEntry>_unary[which]).function(input, out=out)


def exp(input, *, out=None):
    """The elementwise exponential of ``input``."""
    return unary_function(input, out, 0)


def log(input, *, out=None):
    """The elementwise natural logarithm of ``input``."""
    return unary_function(input, out, 1)


def tanh(input, *, out=None):
    """The elementwise hyperbolic tangent of ``input``."""
    return unary_function(input, out, 2)


def sigmoid(input, *, out=None):
    """The elementwise logistic sigmoid ``1 / (1 + exp(-input))``."""
    return unary_function(input, out, 3)


def neg(input, *, out=None):
    """``-input``."""
    return unary_function(input, out, 4)


def relu(input):
    """``max(input, 0)``, elementwise."""
    return unary_function(input, None, 5)


def sqrt(input, *, out=None):
    """The elementwise square root of ``input``."""
    return unary_function(input, out, 6)


def abs(input, *, out=None):
    """The elementwise absolute value of ``input``."""
    return unary_function(input, out, 7)


def sin(input, *, out=None):
    """The elementwise sine of ``input``."""
    return unary_function(input, out, 8)


def cos(input, *, out=None):
    """The elementwise cosine of ``input``."""
    return unary_function(input, out, 9)


cdef inline void bump_version(TensorBase t):
    if t._vc is None:
        t._vc = VersionCounter()
    t._vc.value += 1


cdef inline long long version_of(TensorBase t):
    return 0 if t._vc is None else t._vc.value


cdef inline TensorBase wrap(object data):
    """A new leaf Tensor holding ``data`` (an array; NumPy scalars become 0-d arrays)."""
    cdef TensorBase t = TensorBase.__new__(TensorCls)
    if type(data) is not _ndarray and (isinstance(data, _np_generic)
                                       or not hasattr(data, "dtype")):
        data = _np_asarray(data)
    t._data = data
    return t


def make_tensor_from_array(data, bint requires_grad=False):
    """Wrap an array in a Tensor without copying (the array is not checked)."""
    cdef TensorBase t = wrap(data)
    if requires_grad:
        t.requires_grad = True
    return t


cpdef Py_ssize_t wrap_dim(object dim, Py_ssize_t ndim) except? -1:
    """``dim`` in range(ndim), negative counting from the end, with PyTorch's IndexError."""
    cdef Py_ssize_t n = ndim if ndim > 0 else 1
    cdef Py_ssize_t d
    if type(dim) is not int:
        if isinstance(dim, bool) or not isinstance(dim, (int, _np.integer)):
            raise TypeError(f"dim must be an int, got {type(dim).__name__}")
        dim = int(dim)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
            f"{dim})")
    d = dim
    return d + n if d < 0 else d


def _compose(outer_fn, inner_fn):
    def view_fn(x):
        return inner_fn(outer_fn(x))
    return view_fn


def make_subclass(cls, TensorBase data, bint requires_grad=False):
    """A leaf instance of Tensor subclass ``cls`` sharing ``data``'s array and version
    counter (``nn.Parameter`` is made this way)."""
    if not issubclass(cls, TensorBase):
        raise TypeError(f"{cls.__name__} is not a Tensor subclass")
    cdef TensorBase t = TensorBase.__new__(cls)
    t._data = data._data
    if data._vc is None:
        data._vc = VersionCounter()
    t._vc = data._vc
    if requires_grad:
        t.requires_grad = True
    return t


def make_view(TensorBase base, data, view_fn):
    """Wrap ``data``, a view of ``base``'s array, as a view tensor of ``base``.

    The view shares ``base``'s version counter; ``view_fn(tensor)`` re-creates the
    view from a tensor shaped like base (used to replay it for in-place autograd).
    """
    return view_of(base, data, view_fn)


cdef TensorBase view_of(TensorBase base, object data, object view_fn):
    cdef TensorBase t = wrap(data)
    cdef TensorBase root = base
    if base._vc is None:
        base._vc = VersionCounter()
    t._vc = base._vc
    if base._base is not None:
        root = base._base
        outer_fn = base._view_fn
        if outer_fn is not None and view_fn is not None:
            view_fn = _compose(outer_fn, view_fn)
        else:
            view_fn = None
    t._base = root
    t._view_fn = view_fn
    t._view_version = base._vc.value
    return t


# ----------------------------------------------------------------------------
# saved tensors

cdef class SavedTensor:
    """A tensor kept for backward, with the version it had when it was saved.

    An op's own output is kept as its data only (keeping the Tensor would make a
    reference cycle output -> grad_fn -> output); it is rebuilt on unpacking with
    the node as its grad_fn, so higher-order gradients still flow through it.
    """
    cdef object tensor        # the saved input Tensor (None for an output)
    cdef object data          # the output's array
    cdef VersionCounter vc    # the output's version counter
    cdef long long version
    cdef int output_nr
    cdef bint is_output

    cdef object unpack(self, Node node):
        cdef TensorBase t
        cdef long long now
        if self.is_output:
            now = 0 if self.vc is None else self.vc.value
        else:
            now = version_of(<TensorBase>self.tensor)
        if now != self.version:
            raise RuntimeError(self.modified_message(node, now))
        if not self.is_output:
            return self.tensor
        t = wrap(self.data)
        t._vc = self.vc
        t._grad_fn = node
        t._output_nr = self.output_nr
        return t

    cdef str modified_message(self, Node node, long long now):
        # PyTorch's message, naming the op whose output the tensor is
        cdef TensorBase t
        if self.is_output:
            t = wrap(self.data)
            which = f", which is output {self.output_nr} of {_strip_backward(node.name())},"
        else:
            t = <TensorBase>self.tensor
            which = ("" if t._grad_fn is None else
                     f", which is output {t._output_nr} of {_strip_backward(t._grad_fn.name())},")
        if ember_anomaly_mode:
            hint = (" Hint: the backtrace further above shows the operation that failed to "
                    "compute its gradient. The variable in question was changed in there or "
                    "anywhere later. Good luck!")
        else:
            hint = (" Hint: enable anomaly detection to find the operation that failed to "
                    "compute its gradient, with ember.autograd.set_detect_anomaly(True, "
                    "check_nan=False).")
        return ("one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{t.type()} {list(t._data.shape)}]{which} is at "
                f"version {now}; expected version {self.version} instead." + hint)


def _strip_backward(str name):
    return _re.sub(r"Backward\d*$", "", name)


cdef SavedTensor save_input(TensorBase t, int position):
    cdef SavedTensor s = SavedTensor.__new__(SavedTensor)
    s.tensor = t
    s.version = version_of(t)
    s.output_nr = position
    return s


cdef SavedTensor save_output(TensorBase t):
    cdef SavedTensor s = SavedTensor.__new__(SavedTensor)
    if t._vc is None:
        t._vc = VersionCounter()
    s.data = t._data
    s.vc = t._vc
    s.version = t._vc.value
    s.output_nr = t._output_nr
    s.is_output = True
    return s


# ----------------------------------------------------------------------------
# graph nodes

cdef class Node:
    """A node of the autograd graph: one recorded operation (``grad_fn``).

    Subclasses define ``forward(self, *args)`` on arrays and ``backward(self, *grads)``
    on Tensors, returning one gradient per forward argument (None where there is
    none; trailing Nones may be left out).
    """

    cdef public tuple _next            # per forward argument: the Node its grad goes to, or None
    cdef public tuple _next_nr         # per forward argument: the output number in that Node
    cdef public tuple needs_input_grad
    cdef public tuple _saved           # SavedTensor or a plain value, per saved slot
    cdef public tuple _in_shapes       # argument shapes when forward broadcast them, else None
    cdef public int _num_outputs
    cdef public object _pre_hooks      # {output_nr: [hook(grad)]} from Tensor.register_hook
    cdef public object _retain         # {output_nr: weakref to a tensor that retains grad}
    cdef public object _hooks          # [hook(grad_inputs, grad_outputs)] from Node.register_hook
    cdef public object _node_pre_hooks  # [hook(grad_outputs)]
    cdef public object _trace          # forward traceback, in anomaly mode
    cdef public bint _released
    cdef public bint materialize_grads
    cdef public unsigned long long _tensor_args  # bit i set: forward argument i was a Tensor
    cdef dict __dict__
    cdef object __weakref__

    # Declarations an op may override.
    saves_inputs = ()       # indices of forward arguments to keep for backward
    saves_output = False    # keep the (first) output for backward
    differentiable = True   # False: outputs never require grad (argmax, comparisons, ...)

    def __init__(self):
        pass

    def name(self):
        return type(self).__name__ + "Backward0"

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} has no forward")

    def backward(self, *grads):
        raise NotImplementedError(f"{type(self).__name__} has no backward")

    @property
    def next_functions(self):
        """((node, output_nr), ...) for each Tensor argument of forward, as in PyTorch;
        node is None for an argument that needs no gradient."""
        if self._next is None:
            return ()
        return tuple((n, nr) for i, (n, nr) in enumerate(zip(self._next, self._next_nr))
                     if i >= 64 or (self._tensor_args >> i) & 1)

    @property
    def saved_tensors(self):
        """The saved values, in the order: saved inputs, then the output."""
        if self._released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access "
                "saved tensors after they have already been freed). Saved intermediate "
                "values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward "
                "through the graph a second time or if you need to access saved tensors "
                "after calling backward.")
        if self._saved is None:
            return ()
        cdef list out = []
        for s in self._saved:
            if isinstance(s, SavedTensor):
                out.append((<SavedTensor>s).unpack(self))
            else:
                out.append(s)
        return tuple(out)

    def register_hook(self, hook):
        """Register ``hook(grad_inputs, grad_outputs)`` to run after this node's backward."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _RemovableHandle(self._hooks, hook)

    def register_prehook(self, hook):
        """Register ``hook(grad_outputs)`` to run before this node's backward."""
        if self._node_pre_hooks is None:
            self._node_pre_hooks = []
        self._node_pre_hooks.append(hook)
        return _RemovableHandle(self._node_pre_hooks, hook)

    def _register_tensor_hook(self, int output_nr, hook):
        if self._pre_hooks is None:
            self._pre_hooks = {}
        lst = self._pre_hooks.setdefault(output_nr, [])
        lst.append(hook)
        return _RemovableHandle(lst, hook)

    def _register_retain(self, int output_nr, tensor):
        if self._retain is None:
            self._retain = {}
        self._retain[output_nr] = _weakref.ref(tensor)

    def _release(self):
        self._saved = None
        self._released = True

    cdef tuple call_backward(self, list grads):
        """Run backward on the gradients of the outputs; one gradient per argument."""
        cdef object res
        cdef Py_ssize_t n = len(self._next), i
        if self.materialize_grads:
            for i in range(len(grads)):
                if grads[i] is None:
                    grads[i] = self._undefined_grad(i)
        res = self.backward(*grads)
        if not isinstance(res, tuple):
            res = (res,)
        if len(res) < n:
            res = res + (None,) * (n - len(res))
        elif len(res) > n:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {n}, got {len(res)})")
        if self._in_shapes is not None:
            res = tuple(
                _sum_to(g, shape) if g is not None and shape is not None
                and tuple((<TensorBase>g)._data.shape) != shape else g
                for g, shape in zip(res, self._in_shapes))
        return res

    def _undefined_grad(self, int i):
        raise RuntimeError(f"{self.name()}: gradient of output {i} is undefined")


class _RemovableHandle:
    """Returned by register_hook; ``remove()`` takes the hook out again."""

    def __init__(self, lst, hook):
        self._list = _weakref.ref(lst) if not isinstance(lst, list) else lst
        self._hook = hook

    def remove(self):
        lst = self._list
        try:
            lst.remove(self._hook)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()


cdef class AccumulateGrad(Node):
    """The node that ends every path to a leaf: adds the gradient into ``.grad``."""

    cdef object _variable_ref

    @property
    def variable(self):
        return self._variable_ref()

    def name(self):
        return "AccumulateGrad"

    def backward(self, *grads):
        return ()


cdef Node accumulator_of(TensorBase leaf):
    cdef AccumulateGrad acc = leaf._accumulator
    if acc is None:
        acc = AccumulateGrad.__new__(AccumulateGrad)
        acc._next = ()
        acc._next_nr = ()
        acc._num_outputs = 1
        acc._variable_ref = _weakref.ref(leaf)
        leaf._accumulator = acc
    return acc


cdef inline void refresh_if_stale(TensorBase view):
    # A view whose base (or a sibling view) changed in place since the view's history was
    # recorded takes a new history: the view op replayed on the base's current one.
    cdef TensorBase base
    if view._view_fn is None or view._vc is None or view._vc.value == view._view_version:
        return
    base = <TensorBase>view._base
    if base._grad_fn is not None or base._requires_grad:
        refresh_view_history(view)
    else:
        view._view_version = view._vc.value


cdef inline object edge_node(TensorBase t):
    """The node a gradient for ``t`` goes to, or None if ``t`` needs no gradient."""
    if t._base is not None:
        refresh_if_stale(t)
    if t._grad_fn is not None:
        return t._grad_fn
    if t._requires_grad:
        return accumulator_of(t)
    return None


# ----------------------------------------------------------------------------
# applying an op

cdef tuple _empty = ()


cdef inline bint is_tensor(object x):
    return isinstance(x, TensorBase)


def apply(op_cls, *args):
    """Run op ``op_cls`` on ``args`` (Tensors and plain values); return Tensor(s).

    Tensor arguments reach ``forward`` as their arrays. When grad mode is on and an
    argument requires grad, the op's node is linked into the graph and its outputs
    of floating or complex dtype require grad.
    """
    if _listening:
        token = _listener.enter(op_name_of(op_cls), args)
        try:
            return apply_impl(op_cls, args)
        finally:
            _listener.exit(token)
    return apply_impl(op_cls, args)


cdef object apply_impl(object op_cls, tuple args):
    cdef Node node = Node.__new__(op_cls)
    cdef Py_ssize_t n = len(args), i
    cdef list arrays = list(args)
    cdef bint any_grad = False
    cdef TensorBase t
    cdef object a
    cdef bint on_host = True
    for i in range(n):
        a = args[i]
        if isinstance(a, TensorBase):
            t = <TensorBase>a
            arrays[i] = t._data
            if type(t._data) is not _ndarray:
                on_host = False
            if t._requires_grad or t._grad_fn is not None:
                any_grad = True
    if on_host:
        out = node.forward(*arrays)
    else:
        out = forward_on_device(node, arrays)
    if not (any_grad and ember_grad_enabled and node.differentiable):
        if type(out) is tuple:
            return tuple([wrap(o) if o is not None else None for o in out])
        return wrap(out)
    return record(node, args, out)


cdef object forward_on_device(Node node, list arrays):
    """``node.forward`` for arrays of a device (not all NumPy): the arrays must share one
    device, and the forward runs under that device's context, so its allocations land
    there (NOTE [ Backends are devices ])."""
    backend = _device_of_arrays([a for a in arrays if hasattr(a, "dtype")])
    with backend.context():
        return node.forward(*arrays)


cdef list forward_trace():
    """The Python stack of the user's code that ran an op (ember's own frames left out)."""
    f = sys._getframe(0)
    while f is not None and f.f_globals.get("__name__", "").split(".", 1)[0] == "ember":
        f = f.f_back
    return _traceback.format_stack(f)


cdef void link_inputs(Node node, tuple args):
    """Point ``node``'s edges at the graph nodes of its Tensor arguments."""
    cdef Py_ssize_t n = len(args), i
    cdef list nexts = [None] * n
    cdef list nrs = [0] * n
    cdef list needs = [False] * n
    cdef TensorBase t
    cdef object nx
    for i in range(n):
        a = args[i]
        if isinstance(a, TensorBase):
            t = <TensorBase>a
            if i < 64:
                node._tensor_args |= (<unsigned long long>1) << i
            nx = edge_node(t)
            if nx is not None:
                nexts[i] = nx
                nrs[i] = t._output_nr
                needs[i] = True
    node._next = tuple(nexts)
    node._next_nr = tuple(nrs)
    node.needs_input_grad = tuple(needs)
    if ember_anomaly_mode:
        node._trace = forward_trace()


cdef void save_values(Node node, tuple args, object first_output):
    """Keep what the op declared it needs for backward (``saves_inputs``/``saves_output``)."""
    cdef list saved = []
    for i in node.saves_inputs:
        a = args[i]
        saved.append(save_input(<TensorBase>a, i) if isinstance(a, TensorBase) else a)
    if node.saves_output:
        saved.append(save_output(first_output))
    if saved:
        node._saved = tuple(saved)


cdef object record(Node node, tuple args, object out):
    """Wrap the forward's result and link ``node`` into the graph."""
    cdef Py_ssize_t n = len(args), i
    cdef bint broadcast = False
    cdef tuple outs
    cdef object out_shape
    link_inputs(node, args)
    cdef bint multi = type(out) is tuple
    outs = out if multi else (out,)
    node._num_outputs = len(outs)
    cdef list wrapped = []
    cdef TensorBase o
    for i in range(len(outs)):
        if outs[i] is None:
            wrapped.append(None)
            continue
        o = wrap(outs[i])
        if is_diff_dtype(o._data.dtype):
            o._grad_fn = node
            o._output_nr = i
        wrapped.append(o)

    # Broadcast inputs get their gradients summed back to their shapes.
    out_shape = outs[0].shape if outs[0] is not None else None
    cdef tuple needs = node.needs_input_grad
    for i in range(n):
        a = args[i]
        if needs[i] and (<TensorBase>a)._data.shape != out_shape:
            broadcast = True
            break
    if broadcast:
        node._in_shapes = tuple(
            tuple((<TensorBase>a)._data.shape) if isinstance(a, TensorBase) else None
            for a in args)
    save_values(node, args, wrapped[0])
    return tuple(wrapped) if multi else wrapped[0]


def apply_view(op_cls, TensorBase input, view_fn, *args):
    """``apply(op_cls, input, *args)`` for a view op: forward returns a view of input's
    array, and the result is a view tensor of ``input`` (see :func:`make_view`)."""
    if _listening:
        token = _listener.enter(op_name_of(op_cls), (input,) + args)
        try:
            return apply_view_impl(op_cls, input, view_fn, args)
        finally:
            _listener.exit(token)
    return apply_view_impl(op_cls, input, view_fn, args)


cdef object apply_view_impl(object op_cls, TensorBase input, object view_fn, tuple args):
    cdef Node node = Node.__new__(op_cls)
    cdef TensorBase v = view_of(input, node.forward(input._data, *args), view_fn)
    if ember_grad_enabled and (input._requires_grad or input._grad_fn is not None
                               or input._base is not None):
        if edge_node(input) is not None and is_diff_dtype(v._data.dtype):
            full = (input,) + args
            link_inputs(node, full)
            node._num_outputs = 1
            v._grad_fn = node
            save_values(node, full, v)
    return v


def check_inplace(TensorBase t):
    """Raise PyTorch's error if ``t`` may not be changed in place under autograd."""
    if not ember_grad_enabled:
        return
    if t._grad_fn is None and t._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation.")
    if t._base is not None:
        base = <TensorBase>t._base
        if base._grad_fn is None and base._requires_grad:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an "
                "in-place operation.")


cdef str _INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a "
    "single memory location. Please clone() the tensor before performing the operation.")
cdef str _PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor "
    "refer to a single memory location. Please clone() the tensor before performing the "
    "operation.")


cdef object dense_extent(object a):
    """``(first, end)`` byte addresses of array ``a`` if its elements fill that block without
    gaps or repeats (PyTorch's "non-overlapping and dense"), else None."""
    cdef Py_ssize_t lo, size
    if type(a) is _ndarray:
        lo = <Py_ssize_t>cnp.PyArray_DATA(<cnp.ndarray>a)
        if cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a):
            return lo, lo + <Py_ssize_t>cnp.PyArray_NBYTES(<cnp.ndarray>a)
    else:
        iface = getattr(a, "__cuda_array_interface__", None)
        if iface is None:
            return None
        lo = iface["data"][0]
    size = a.itemsize
    for s, n in sorted((s if s >= 0 else -s, n) for n, s in zip(a.shape, a.strides) if n != 1):
        if s != size:
            return None
        size *= n
    for n, s in zip(a.shape, a.strides):
        if s < 0 and n > 1:
            lo += (n - 1) * s
    return lo, lo + size


cpdef check_inplace_overlap(object dst, tuple args):
    """Raise PyTorch's errors where an in-place op would write into array ``dst``: if
    several of its elements share memory (an expanded tensor), or if a tensor among
    ``args`` partly overlaps it (``x[1:].add_(x[:-1])``). The same elements are fine."""
    if dst.size == 0:
        return  # nothing is written
    for n, s in zip(dst.shape, dst.strides):
        if s == 0 and n > 1:
            raise RuntimeError(_INTERNAL_OVERLAP)
    cdef object ext = None
    for a in args:
        if not isinstance(a, TensorBase):
            continue
        src = (<TensorBase>a)._data
        if src is dst or src.size == 0 or type(src) is not type(dst):
            continue
        if ext is None:
            ext = dense_extent(dst)
            if ext is None:
                return  # too hard to tell, as in PyTorch
        other = dense_extent(src)
        if other is None or other[0] >= ext[1] or ext[0] >= other[1]:
            continue
        if other == ext and src.strides == dst.strides and src.shape == dst.shape:
            continue
        raise RuntimeError(_PARTIAL_OVERLAP)


def apply_inplace(op_cls, TensorBase self, *args):
    """Run op ``op_cls`` on ``(self, *args)`` and write the result into ``self``.

    Without autograd the result is written into self's array. Under autograd, the
    op is recorded on a stand-in for self's old value and self takes the new node as
    its history; a view instead rebases its base's history (see ``_rebase_view``).
    """
    if _listening:
        token = _listener.enter(op_name_of(op_cls) + "_", (self,) + args)
        try:
            return apply_inplace_impl(op_cls, self, args)
        finally:
            _listener.exit(token)
    return apply_inplace_impl(op_cls, self, args)


cdef object apply_inplace_impl(object op_cls, TensorBase self, tuple args):
    cdef TensorBase t
    cdef bint any_grad = self._requires_grad or self._grad_fn is not None
    check_inplace_overlap(self._data, args)
    for a in args:
        if isinstance(a, TensorBase):
            t = <TensorBase>a
            if t._requires_grad or t._grad_fn is not None:
                any_grad = True
    if not (any_grad and ember_grad_enabled):
        node = Node.__new__(op_cls)
        arrays = [self._data] + [(<TensorBase>a)._data if isinstance(a, TensorBase) else a
                                 for a in args]
        if type(self._data) is _ndarray and all(
                type(a) is _ndarray or not hasattr(a, "dtype") for a in arrays):
            res = node.forward(*arrays)
        else:
            res = forward_on_device(node, arrays)
        copy_into(self._data, res)
        bump_version(self)
        return self
    check_inplace(self)
    if self._base is not None and self._view_fn is not None:
        return rebase_view(op_cls, self, args)
    old = old_value(op_cls, self)
    out = apply_impl(op_cls, (old,) + args)
    copy_into(self._data, (<TensorBase>out)._data)
    bump_version(self)
    take_history(self, <TensorBase>out)
    return self


cdef TensorBase old_value(op_cls, TensorBase self):
    """A tensor standing for ``self`` before an in-place op: same history.

    Its data is a copy when the op keeps its first input for backward, since self's
    own data is about to be overwritten.
    """
    cdef TensorBase old = wrap(self._data.copy() if 0 in op_cls.saves_inputs else self._data)
    old._grad_fn = self._grad_fn
    old._output_nr = self._output_nr
    old._requires_grad = self._requires_grad
    if self._grad_fn is None and self._requires_grad:
        old._accumulator = accumulator_of(self)
    return old


cdef void take_history(TensorBase self, TensorBase out):
    self._grad_fn = out._grad_fn
    self._output_nr = out._output_nr


cdef dict _CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


cdef object copy_into(object dst, object src):
    if dst.dtype != src.dtype:
        if _CATEGORY.get(src.dtype.kind, 0) > _CATEGORY.get(dst.dtype.kind, 0):
            raise RuntimeError(
                f"result type {src.dtype} can't be cast to the desired output type {dst.dtype}")
    if dst.shape != src.shape:
        try:
            bshape = sys.modules["numpy"].broadcast_shapes(src.shape, dst.shape)
        except ValueError:
            bshape = None
        if bshape != dst.shape:
            raise RuntimeError(
                f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                f"{list(bshape) if bshape is not None else list(src.shape)}")
    dst[...] = src


class CopySlices(Node):
    """History of a base tensor after an in-place op on one of its views.

    Inputs: the base's old value, then the in-place op's other arguments. Backward
    runs the op's backward on the view's region of the gradient and writes the
    result into that region of the base's gradient.
    """

    def name(self):
        return "CopySlices"

    def backward(self, grad):
        g = grad.clone()
        region = self.view_fn(g)
        op_grads = _call_backward_py(self.op_node, [region.clone()])
        first = op_grads[0]
        if first is None:
            region.zero_()
        else:
            region.copy_(first)
        return (g,) + tuple(op_grads[1:])


def _call_backward_py(Node node, list grads):
    return node.call_backward(grads)


cdef object rebase_view(op_cls, TensorBase view, tuple args):
    """In-place op on a view under autograd: the base takes a CopySlices history."""
    cdef TensorBase base = <TensorBase>view._base
    view_fn = view._view_fn
    # Record the op itself on a stand-in for the view's old value.
    cdef TensorBase old_view = wrap(view._data.copy() if 0 in op_cls.saves_inputs else view._data)
    old_view._grad_fn = view.grad_fn
    old_view._output_nr = view._output_nr
    old_view._requires_grad = view.requires_grad
    out = apply_impl(op_cls, (old_view,) + args)
    copy_into(view._data, (<TensorBase>out)._data)
    cdef Node op_node = (<TensorBase>out)._grad_fn
    # The base's history: CopySlices(old base, other args of the op).
    cdef TensorBase old_base = old_value(_NoSave, base)
    cs = CopySlices.__new__(CopySlices)
    cs.view_fn = view_fn
    cs.op_node = op_node
    nexts = [edge_node(old_base) if old_base.requires_grad else None]
    nrs = [old_base._output_nr]
    for a in args:
        if isinstance(a, TensorBase) and (<TensorBase>a).requires_grad:
            nexts.append(edge_node(<TensorBase>a))
            nrs.append((<TensorBase>a)._output_nr)
        else:
            nexts.append(None)
            nrs.append(0)
    (<Node>cs)._next = tuple(nexts)
    (<Node>cs)._next_nr = tuple(nrs)
    (<Node>cs).needs_input_grad = tuple(x is not None for x in nexts)
    (<Node>cs)._num_outputs = 1
    base._grad_fn = cs
    base._output_nr = 0
    bump_version(view)
    # The view's history is the view of the base's new history.
    refresh_view_history(view)
    return view


class _NoSave(Node):
    saves_inputs = ()


cdef void refresh_view_history(TensorBase view):
    """Make ``view``'s grad_fn the view op applied to its base's current history."""
    cdef TensorBase base = <TensorBase>view._base
    prev = set_grad_enabled_flag(True)
    try:
        shadow = wrap(base._data)
        shadow._grad_fn = base._grad_fn
        shadow._output_nr = base._output_nr
        shadow._requires_grad = base._requires_grad
        if base._grad_fn is None and base._requires_grad:
            shadow._accumulator = accumulator_of(base)
        replayed = <TensorBase>view._view_fn(shadow)
    finally:
        set_grad_enabled_flag(prev)
    view._grad_fn = replayed._grad_fn
    view._output_nr = replayed._output_nr
    view._view_version = view._vc.value


# ----------------------------------------------------------------------------
# the backward engine

cdef object accumulate(object acc, object g):
    """Sum two gradients (either may be None) without touching either input."""
    if acc is None:
        return g
    if g is None:
        return acc
    return acc + g


cdef object checked_hook_result(object hook, object grad, object r):
    """``r``, what ``hook`` returned for gradient ``grad``, checked as PyTorch does: a tensor
    of grad's dtype, device and shape (None keeps ``grad``)."""
    if r is None:
        return grad
    if not isinstance(r, TensorBase):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    if grad is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    name = getattr(hook, "__name__", "<unknown>")
    if ((<TensorBase>r)._data.dtype != (<TensorBase>grad)._data.dtype
            or type((<TensorBase>r)._data) is not type((<TensorBase>grad)._data)):
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.type()} "
                           f"got {r.type()})")
    if (<TensorBase>r)._data.shape != (<TensorBase>grad)._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return r


cdef object run_tensor_hooks(Node node, int nr, object grad):
    cdef object hooks
    if node._pre_hooks is not None:
        hooks = node._pre_hooks.get(nr)
        if hooks:
            for h in list(hooks):
                grad = checked_hook_result(h, grad, h(grad))
    if node._retain is not None:
        ref = node._retain.get(nr)
        if ref is not None:
            t = ref()
            if t is not None and grad is not None:
                if (<TensorBase>t)._grad is None:
                    (<TensorBase>t)._grad = (grad.detach().clone() if not ember_grad_enabled
                                             else grad)
                else:
                    (<TensorBase>t)._grad = (<TensorBase>t)._grad + grad
    return grad


cdef void accumulate_into_leaf(AccumulateGrad acc, object grad, bint create_graph):
    cdef TensorBase leaf = acc._variable_ref()
    if leaf is None or grad is None:
        return
    if leaf._hooks:
        for h in list(leaf._hooks):
            grad = checked_hook_result(h, grad, h(grad))
    cdef TensorBase g = <TensorBase>grad
    if leaf._grad is None:
        if create_graph:
            leaf._grad = g
        else:
            # A fresh, detached copy: the incoming gradient may be shared with
            # another branch of the graph or be the caller's own tensor.
            leaf._grad = wrap(g._data.copy())
    elif create_graph or ember_grad_enabled:
        leaf._grad = leaf._grad + g
    else:
        existing = (<TensorBase>leaf._grad)
        if existing._data.shape == g._data.shape and existing._data.flags.writeable:
            existing._data += g._data
            bump_version(existing)
        else:
            leaf._grad = leaf._grad + g


cdef void check_nan(Node node, tuple grads):
    for i, g in enumerate(grads):
        if g is not None:
            xp_any = (<TensorBase>g)._data
            if (xp_any != xp_any).any():
                msg = f"Function '{node.name()}' returned nan values in its {i}th output."
                if node._trace is not None:
                    msg += ("\nTraceback of forward call that caused the error:\n"
                            + "".join(node._trace))
                raise RuntimeError(msg)


def run_backward(tuple roots, tuple root_grads, bint keep_graph, bint create_graph,
                 tuple inputs=None, bint allow_unused=False, bint accumulate_grad=True):
    """Backpropagate ``root_grads`` from ``roots`` through the graph.

    With ``accumulate_grad`` (``Tensor.backward``) leaves get their ``.grad``; with
    ``inputs`` and not ``accumulate_grad`` (``autograd.grad``) the gradients of
    ``inputs`` are returned instead and no ``.grad`` is touched.
    """
    cdef dict deps = {}
    cdef dict buffers = {}
    cdef list stack = []
    cdef list ready = []
    cdef Node node, nx
    cdef TensorBase t
    cdef Py_ssize_t i, k
    cdef object g
    cdef dict captures = None     # (node, nr) -> slot index in results
    cdef list results = None

    if inputs is not None:
        results = [None] * len(inputs)
        captures = {}
        for i in range(len(inputs)):
            t = <TensorBase>inputs[i]
            if t._grad_fn is not None:
                key = (t._grad_fn, t._output_nr)
            elif t._requires_grad:
                key = (accumulator_of(t), 0)
            else:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            captures.setdefault(key, []).append(i)

    # Roots' nodes and their incoming gradients.
    root_nodes = []
    for i in range(len(roots)):
        t = <TensorBase>roots[i]
        nx = edge_node(t)
        if nx is None:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn")
        g = root_grads[i]
        buf = buffers.get(nx)
        if buf is None:
            buf = [None] * max(nx._num_outputs, 1)
            buffers[nx] = buf
        buf[t._output_nr] = accumulate(buf[t._output_nr], g)
        root_nodes.append(nx)

    # Count, for every node reachable from the roots, the edges that lead into it.
    seen = set()
    for nx in root_nodes:
        if nx not in seen:
            seen.add(nx)
            stack.append(nx)
    while stack:
        node = stack.pop()
        if node._next is None:
            continue
        for nxt in node._next:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)

    # With inputs given, run only the nodes that lead to one of them.
    needed = None
    if captures is not None:
        needed = _nodes_leading_to(root_nodes, {key[0] for key in captures})

    seen_ready = set()
    for nx in root_nodes:
        if deps.get(nx, 0) == 0 and nx not in seen_ready:
            seen_ready.add(nx)
            ready.append(nx)

    prev_mode = set_grad_enabled_flag(create_graph)
    cdef list grads
    cdef bint any_grad
    cdef tuple nexts, nrs
    # Backward formulas may meet singular points (0 * inf, x / 0): like PyTorch, they
    # produce inf/nan silently (anomaly mode is the tool that reports them).
    errstate = _np.errstate(all="ignore")
    errstate.__enter__()
    try:
        while ready:
            node = ready.pop()
            grads = buffers.pop(node)
            # tensor hooks and retain_grad of each output, then captures
            if node._pre_hooks is not None or node._retain is not None:
                for k in range(len(grads)):
                    grads[k] = run_tensor_hooks(node, k, grads[k])
            if captures is not None:
                for k in range(len(grads)):
                    slots = captures.get((node, k))
                    if slots is not None:
                        for s in slots:
                            results[s] = grads[k]
                if node not in needed:
                    continue  # nothing below this node leads to a requested input
            if type(node) is AccumulateGrad:
                if accumulate_grad and (captures is None or inputs_accumulate(node, captures)):
                    accumulate_into_leaf(<AccumulateGrad>node, grads[0], create_graph)
                continue
            if node._node_pre_hooks:
                for h in list(node._node_pre_hooks):
                    r = h(tuple(grads))
                    if r is not None:
                        r = list(r)
                        if len(r) != len(grads):
                            raise RuntimeError(
                                f"hook '{getattr(h, '__name__', '<unknown>')}' has returned an "
                                f"incorrect number of values (got {len(r)}, but expected "
                                f"{len(grads)})")
                        for k in range(len(r)):
                            if r[k] is not None and grads[k] is not None:
                                checked_hook_result(h, grads[k], r[k])
                        grads = r
            any_grad = False
            for g in grads:
                if g is not None:
                    any_grad = True
                    break
            nexts = node._next
            if any_grad:
                if _listening:
                    token = _listener.enter(node.name(), ())
                    try:
                        in_grads = node.call_backward(grads)
                    finally:
                        _listener.exit(token)
                else:
                    in_grads = node.call_backward(grads)
            else:
                in_grads = (None,) * len(nexts)
            if node._hooks:
                for h in list(node._hooks):
                    r = h(in_grads, tuple(grads))
                    if r is not None:
                        in_grads = tuple(r)
            if ember_anomaly_mode and ember_anomaly_check_nan:
                check_nan(node, in_grads)
            if not keep_graph:
                release(node)
            nrs = node._next_nr
            for i in range(len(nexts)):
                nxt = nexts[i]
                if nxt is None:
                    continue
                g = in_grads[i]
                buf = buffers.get(nxt)
                if buf is None:
                    buf = [None] * max((<Node>nxt)._num_outputs, 1)
                    buffers[nxt] = buf
                if g is not None:
                    k = nrs[i]
                    buf[k] = accumulate(buf[k], g)
                c = <Py_ssize_t>deps[nxt] - 1
                deps[nxt] = c
                if c == 0:
                    ready.append(nxt)
    finally:
        set_grad_enabled_flag(prev_mode)
        errstate.__exit__(None, None, None)

    if results is not None:
        for i in range(len(results)):
            if results[i] is None and not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.")
        return tuple(results)
    return None


cdef bint inputs_accumulate(Node node, dict captures):
    # Tensor.backward(inputs=...) accumulates only into the given leaves.
    return (node, 0) in captures


cdef inline void release(Node node):
    if node._saved is not None:
        node._saved = None
        node._released = True


cdef set _nodes_leading_to(list roots, set targets):
    """The nodes from which one of ``targets`` can be reached (targets included)."""
    cdef dict memo = {}
    cdef list stack
    cdef Node node
    # iterative post-order DFS
    for r in roots:
        if r in memo:
            continue
        stack = [(r, False)]
        while stack:
            node, done = stack.pop()
            if done:
                hit = node in targets
                if node._next is not None:
                    for nxt in node._next:
                        if nxt is not None and memo.get(nxt, False):
                            hit = True
                memo[node] = hit
                continue
            if node in memo:
                continue
            stack.append((node, True))
            if node._next is not None:
                for nxt in node._next:
                    if nxt is not None and nxt not in memo:
                        stack.append((nxt, False))
    return {n for n, hit in memo.items() if hit}
