# Included by _core.pyx (one compiled module): TensorBase, the compiled part of ember.Tensor: data,
# autograd fields, the arithmetic operators and the hottest unary methods.

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
    cdef public bint _inference        # made in inference mode (or a view of such a tensor)
    cdef object __weakref__

    def is_inference(self):
        """True if the tensor was made in ``ember.inference_mode`` (an inference tensor)."""
        return self._inference

    def register_post_accumulate_grad_hook(self, hook):
        """Register ``hook(tensor)`` to run after a backward pass has accumulated this
        leaf's gradient into ``.grad`` (optimizer-in-backward code steps from it). The hook
        returns None. Returns a handle whose ``remove()`` removes it."""
        if not self.requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
        cdef AccumulateGrad acc = <AccumulateGrad>accumulator_of(self)
        if acc._post_hooks is None:
            acc._post_hooks = []
        acc._post_hooks.append(hook)
        return _RemovableHandle(acc._post_hooks, hook)

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
        return dunder_op(self, other, OP_ADD, False)

    def __radd__(self, other):
        return dunder_op(self, other, OP_ADD, True)

    def __sub__(self, other):
        return dunder_op(self, other, OP_SUB, False)

    def __rsub__(self, other):
        return dunder_op(self, other, OP_SUB, True)

    def __mul__(self, other):
        return dunder_op(self, other, OP_MUL, False)

    def __rmul__(self, other):
        return dunder_op(self, other, OP_MUL, True)

    def __truediv__(self, other):
        return dunder_op(self, other, OP_DIV, False)

    def __rtruediv__(self, other):
        return dunder_op(self, other, OP_DIV, True)

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
