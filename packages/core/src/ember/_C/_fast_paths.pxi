# Included by _core.pyx (one compiled module): the compiled fast paths of + - * / and the unary
# methods, their function forms, and wrapping arrays as tensors and views.

# ----------------------------------------------------------------------------
# the compiled fast path of + - * /

cdef enum:
    OP_ADD = 0
    OP_SUB = 1
    OP_MUL = 2
    OP_DIV = 3

# Node._fast: which compiled backward formula applies (NOTE [ Compiled backward formulas ])
cdef enum:
    FAST_NONE = 0
    FAST_ADD = 1       # FAST_ADD + OP_ADD/OP_SUB/OP_MUL/OP_DIV
    FAST_UNARY = 16    # FAST_UNARY + the op's index in UNARY_FAST_PATH

cdef object _ufuncs = (_np.add, _np.subtract, _np.multiply, _np.true_divide)
cdef list _op_classes = [None, None, None, None]   # Add, Sub, Mul, Div Node classes
cdef list _op_functions = [None, None, None, None]  # ember.add, sub, mul, div (general path)


# the operand types + - * / take; for any other type the operators return NotImplemented
# (Python then tries the other operand's reflected method, as with PyTorch's tensors)
cdef tuple _operator_types = (TensorBase, int, float, bool, complex, _np.ndarray, _np.generic)


# NOTE [ Threads for large ops ] (ember._backend._cpu_threads): a ufunc call of the fast
# paths whose NumPy operand has at least _large_min elements goes to the CPU's threaded
# call instead, which gives the same result bit for bit.
cdef Py_ssize_t _large_min = <Py_ssize_t>1 << 62
cdef object _large_call = None


def set_large_ufunc_call(fn, Py_ssize_t min_size):
    """Register ``fn(ufunc, *operands)``, the threaded ufunc call the fast paths use for
    NumPy operands of at least ``min_size`` elements (None: never)."""
    global _large_call, _large_min
    _large_call = fn
    _large_min = min_size if fn is not None else <Py_ssize_t>1 << 62


cdef inline bint is_large(object x) noexcept:
    return type(x) is _ndarray and cnp.PyArray_SIZE(<cnp.ndarray>x) >= _large_min


cpdef object ufunc1(object ufunc, object x):
    """``ufunc(x)``, on several threads for a large NumPy ``x``."""
    if is_large(x):
        return _large_call(ufunc, x)
    return ufunc(x)


cpdef object ufunc2(object ufunc, object x, object y):
    """``ufunc(x, y)``, on several threads for a large NumPy operand."""
    if is_large(x) or is_large(y):
        return _large_call(ufunc, x, y)
    return ufunc(x, y)


def set_binary_ops(add, sub, mul, div):
    """Register (Node class, Python function) for each of + - * /."""
    cdef int i
    for i, pair in enumerate((add, sub, mul, div)):
        _op_classes[i] = pair[0]
        _op_functions[i] = pair[1]


cdef object dunder_op(TensorBase self, object other, int op, bint reflected):
    """``self <op> other`` for the operators: the fast path, else NotImplemented for an
    operand type the ops do not take, else the general path."""
    if (isinstance(other, TensorBase) or type(other) is float or type(other) is int
            or isinstance(other, _operator_types)):
        return binary_op(self, other, op, reflected)
    return NotImplemented


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


cdef inline bint enter_quiet() except -1:
    """Enter _quiet_context; False where another thread is inside it."""
    try:
        PyContext_Enter(_quiet_context)
    except RuntimeError:
        return False
    return True


cdef object quiet_call1(object ufunc, object x):
    if _fp_state is None:
        return ufunc1(ufunc, x)
    if enter_quiet():
        try:
            return ufunc1(ufunc, x)
        finally:
            PyContext_Exit(_quiet_context)
    token = PyContextVar_Set(_fp_state, _fp_quiet)
    try:
        return ufunc1(ufunc, x)
    finally:
        PyContextVar_Reset(_fp_state, token)


cdef object quiet_call2(object ufunc, object x, object y):
    if _fp_state is None:
        return ufunc2(ufunc, x, y)
    if enter_quiet():
        try:
            return ufunc2(ufunc, x, y)
        finally:
            PyContext_Exit(_quiet_context)
    token = PyContextVar_Set(_fp_state, _fp_quiet)
    try:
        return ufunc2(ufunc, x, y)
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
                return wrap(ufunc2(_ufuncs[op], y, x) if reflected
                            else ufunc2(_ufuncs[op], x, y))
            return wrap(quiet_call2(_ufuncs[op], y, x) if reflected
                        else quiet_call2(_ufuncs[op], x, y))
        # the node's forward, in one ufunc call (Add.forward and Sub.forward keep alpha)
        node = Node.__new__(_op_classes[op])
        if op == OP_DIV:
            out = quiet_call2(_ufuncs[op], y, x) if reflected else quiet_call2(_ufuncs[op], x, y)
        else:
            out = ufunc2(_ufuncs[op], y, x) if reflected else ufunc2(_ufuncs[op], x, y)
            if op != OP_MUL:
                node.alpha = 1
        node._fast = FAST_ADD + op
    except (ValueError, OverflowError):
        # shapes that do not broadcast, or a number out of the dtype's range: the
        # general path gives PyTorch's error or wraps the number as PyTorch does
        fn = _op_functions[op]
        return fn(other, self) if reflected else fn(self, other)
    return record(node, (other, self) if reflected else (self, other), out)


cdef extern from "<math.h>" nogil:
    float c_expf "expf"(float)
    double c_exp "exp"(double)


SIGMOID_LOOP_MAX = 16384  # above: NumPy's vectorized exp, four passes
cdef Py_ssize_t _SIGMOID_LOOP_MAX = SIGMOID_LOOP_MAX


def sigmoid_array(x):
    """``1 / (1 + exp(-x))`` of a float16/32/64 NumPy array (PyTorch's formula; exp
    overflowing to inf gives 0, the limit, silently): the CPU kernel "sigmoid". Small arrays
    take one compiled pass, large ones NumPy's vectorized exp in place. The result is
    C-contiguous."""
    cdef cnp.ndarray src = x
    if not cnp.PyArray_IS_C_CONTIGUOUS(src):
        src = src.copy()  # C order; ascontiguousarray would make a 0-d array 1-d
    cdef Py_ssize_t n = src.size, i
    cdef float* s32
    cdef float* o32
    cdef double* s64
    cdef double* o64
    cdef float one = 1.0
    cdef cnp.ndarray out
    if src.dtype == _np.float16:  # computed in float32, as PyTorch does
        return sigmoid_array(src.astype(_np.float32)).astype(_np.float16)
    if src.dtype != _np.float32 and src.dtype != _np.float64:
        raise TypeError(f"sigmoid_array: float16, float32 or float64 arrays, got {src.dtype}")
    if n > _SIGMOID_LOOP_MAX:
        out = _np.negative(src)
        token = PyContextVar_Set(_fp_state, _fp_quiet) if _fp_state is not None else None
        try:
            _np.exp(out, out=out)
        finally:
            if token is not None:
                PyContextVar_Reset(_fp_state, token)
        _np.add(out, 1, out=out)
        _np.true_divide(1, out, out=out)
        return out
    out = _np.empty_like(src)
    if src.dtype == _np.float32:
        s32 = <float*>cnp.PyArray_DATA(src)
        o32 = <float*>cnp.PyArray_DATA(out)
        with nogil:
            for i in range(n):
                o32[i] = one / (one + c_expf(-s32[i]))
    else:
        s64 = <double*>cnp.PyArray_DATA(src)
        o64 = <double*>cnp.PyArray_DATA(out)
        with nogil:
            for i in range(n):
                o64[i] = 1.0 / (1.0 + c_exp(-s64[i]))
    return out


UNARY_FAST_PATH = ("exp", "log", "tanh", "sigmoid", "neg", "relu", "sqrt", "abs", "sin", "cos")
cdef list _unary = [None] * len(UNARY_FAST_PATH)


cdef class UnaryEntry:
    cdef object cls        # the op's Node class
    cdef object function   # the general Python function (any dtype, device, ...)
    cdef object ufunc      # a NumPy ufunc computing the op in one call, or None
    cdef bytes kinds       # dtype kinds taken by the fast path
    cdef bint quiet        # silence NumPy's floating-point warnings, as the op's forward does
    cdef int index         # the op's index in UNARY_FAST_PATH
    cdef bint is_ufunc     # ufunc is a NumPy ufunc (else a kernel function of one array)


def set_unary_ops(dict ops):
    """Register, per name in UNARY_FAST_PATH, (Node class, Python function, ufunc or None,
    dtype kinds such as "fc", quiet) for the compiled unary methods; ``quiet``: the ufunc
    can raise NumPy floating-point warnings that the op's forward silences."""
    cdef UnaryEntry e
    for i, name in enumerate(UNARY_FAST_PATH):
        cls, fn, ufunc, kinds, quiet = ops[name]
        e = UnaryEntry.__new__(UnaryEntry)
        e.cls, e.function, e.ufunc, e.kinds, e.quiet = cls, fn, ufunc, kinds.encode(), quiet
        e.index = i
        e.is_ufunc = isinstance(ufunc, _np.ufunc)
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
            if not e.is_ufunc:  # a kernel of its own (sigmoid): it splits large work itself
                return wrap(e.ufunc(x))
            return wrap(quiet_call1(e.ufunc, x) if e.quiet else ufunc1(e.ufunc, x))
        return wrap(Node.__new__(e.cls).forward(x))
    node = Node.__new__(e.cls)
    node._fast = FAST_UNARY + e.index
    if e.ufunc is not None:  # the node's forward, in one call
        if not e.is_ufunc:
            return record(node, (self,), e.ufunc(x))
        return record(node, (self,), quiet_call1(e.ufunc, x) if e.quiet else ufunc1(e.ufunc, x))
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
    if ember_inference_mode:
        t._inference = True
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
    if base._inference:
        t._inference = True
    return t
