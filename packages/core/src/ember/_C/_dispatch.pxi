# Included by _core.pyx (one compiled module): the dispatch point every op passes through
# (listeners, DispatchedFunction).

# ----------------------------------------------------------------------------
# the dispatch point

# NOTE [ One dispatch point ]
# Every op passes through here: apply (general ops), apply_view (views), apply_inplace
# (in-place ops), the compiled fast paths of the arithmetic and unary methods, dispatch()
# (ops that build their result without a Node: creation, sampling, conversions) and, in
# backward, each node's backward. When a listener is installed (the profiler, a tracer)
# it sees each op begin and end: ``token = listener.enter(name, inputs)`` before and
# ``listener.exit(token)`` after, nested calls included. A node's backward in the engine
# is announced as ``token = listener.enter_backward(name)`` (the node's name,
# ``MulBackward0``), so that a listener tells the two apart without reading names; one
# without enter_backward gets ``enter(name, ())``. With no listener the cost is one test
# of a C flag per op.
cdef bint _listening = False
cdef object _listener = None
cdef object _listener_backward = None


def set_dispatch_listener(listener):
    """Install ``listener`` at the dispatch point (None removes it); returns the previous
    one. ``listener.enter(name, inputs)`` (an op) and ``listener.enter_backward(name)`` (a
    node's backward; optional) return a token passed to ``listener.exit``."""
    global _listening, _listener, _listener_backward
    prev = _listener
    _listener = listener
    _listening = listener is not None
    _listener_backward = None
    if listener is not None:
        _listener_backward = getattr(listener, "enter_backward", None)
        if _listener_backward is None:
            def enter_backward(name):
                return listener.enter(name, ())
            _listener_backward = enter_backward
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
