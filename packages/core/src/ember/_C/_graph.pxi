# Included by _core.pyx (one compiled module): saved tensors and the graph nodes (Node,
# AccumulateGrad).

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
    # saved through saved-tensors hooks (NOTE [ Saved tensors hooks ]): what pack returned,
    # the unpack hook, and the history to re-attach to what unpack gives back
    cdef object packed
    cdef object unpack_hook
    cdef object grad_fn
    cdef object accumulator
    cdef bint requires_grad

    def _unpack(self, Node node):
        """The saved tensor, for ``node``'s backward (the Python face of ``unpack``)."""
        return self.unpack(node)

    cdef object unpack(self, Node node):
        cdef TensorBase t
        cdef long long now
        if self.unpack_hook is not None:
            return self.unpack_hooked(node)
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

    cdef object unpack_hooked(self, Node node):
        r = self.unpack_hook(self.packed)
        if not isinstance(r, TensorBase):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(r).__name__}")
        cdef TensorBase t = wrap((<TensorBase>r)._data)
        t._vc = (<TensorBase>r)._vc
        if self.is_output:
            if self.requires_grad:
                t._grad_fn = node
                t._output_nr = self.output_nr
        else:
            t._grad_fn = self.grad_fn
            t._output_nr = self.output_nr
            t._requires_grad = self.requires_grad
            t._accumulator = self.accumulator
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
    if t._inference and not ember_inference_mode:
        raise RuntimeError(
            "Inference tensors cannot be saved for backward. Please do not use Tensors created "
            "in inference mode in computation tracked by autograd. To work around this, you can "
            "make a clone to get a normal tensor and use it in autograd, or use "
            "`ember.no_grad()` instead of `ember.inference_mode()`.")
    if ember_saved_hooks_depth:
        return save_hooked(t, False)
    cdef SavedTensor s = SavedTensor.__new__(SavedTensor)
    s.tensor = t
    s.version = version_of(t)
    s.output_nr = position
    return s


cdef SavedTensor save_output(TensorBase t):
    if ember_saved_hooks_depth:
        return save_hooked(t, True)
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
# saved tensors hooks (NOTE [ Saved tensors hooks ] in ember/autograd/graph.py)

cdef object _hooks_state = _threading.local()   # .stack: [(pack, unpack)], .disabled: message


cdef list hooks_stack():
    st = getattr(_hooks_state, "stack", None)
    if st is None:
        st = []
        _hooks_state.stack = st
    return st


cdef object top_hooks():
    msg = getattr(_hooks_state, "disabled", None)
    if msg is not None:
        raise RuntimeError(msg)
    return hooks_stack()[-1]


cdef SavedTensor save_hooked(TensorBase t, bint is_output):
    """``t`` saved through the top pair of hooks: only what pack returns is kept."""
    global ember_saved_hooks_depth
    pack, unpack = top_hooks()
    cdef SavedTensor s = SavedTensor.__new__(SavedTensor)
    if t._base is not None:
        refresh_if_stale(t)
    s.is_output = is_output
    s.output_nr = t._output_nr
    if is_output:
        s.requires_grad = t._grad_fn is not None
    else:
        s.grad_fn = t._grad_fn
        s.requires_grad = t._requires_grad and t._grad_fn is None
        if s.requires_grad:
            s.accumulator = accumulator_of(t)
    cdef int depth = ember_saved_hooks_depth
    ember_saved_hooks_depth = 0   # what the pack hook itself saves is not packed again
    try:
        s.packed = pack(t)
    finally:
        ember_saved_hooks_depth = depth
    s.unpack_hook = unpack
    return s


def save_for_backward_hooked(TensorBase t, bint is_output):
    """A :class:`SavedTensor` of ``t`` through the current hooks, or None when no hooks are
    set (for custom Functions' ``save_for_backward``)."""
    if not ember_saved_hooks_depth:
        return None
    return save_hooked(t, is_output)


def _push_saved_tensors_default_hooks(pack_hook, unpack_hook):
    """Push a (pack, unpack) pair for this thread (``saved_tensors_hooks.__enter__``)."""
    global ember_saved_hooks_depth
    msg = getattr(_hooks_state, "disabled", None)
    if msg is not None:
        raise RuntimeError(msg)
    hooks_stack().append((pack_hook, unpack_hook))
    ember_saved_hooks_depth += 1


def _pop_saved_tensors_default_hooks():
    """Pop this thread's top pair of hooks."""
    global ember_saved_hooks_depth
    st = hooks_stack()
    if not st:
        raise RuntimeError("no saved tensors hooks to pop")
    st.pop()
    ember_saved_hooks_depth -= 1


def _saved_tensors_hooks_disable(str message):
    """Make pushing or using saved tensors hooks raise ``RuntimeError(message)``."""
    _hooks_state.disabled = message


def _saved_tensors_hooks_enable():
    _hooks_state.disabled = None


def _saved_tensors_hooks_get_disabled_error_message():
    return getattr(_hooks_state, "disabled", None)


def _current_saved_tensors_hooks():
    """This thread's stack of (pack, unpack) pairs, innermost last."""
    return list(hooks_stack())


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
    cdef int _fast                     # a FAST_* code: the compiled backward applies (_engine.pxi)
    cdef object _metadata              # Node.metadata, made on first use
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
    def metadata(self):
        """A dict kept with the node, for the user's own annotations."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

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
        return self.summed_to_inputs(res)

    cdef tuple summed_to_inputs(self, tuple res):
        """``res`` with the gradient of each broadcast argument summed back to its shape."""
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
    cdef public object _post_hooks     # [hook(tensor)] run after .grad is accumulated

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


def grad_accumulator(TensorBase leaf):
    """The ``AccumulateGrad`` node of a leaf that requires grad (made on first use)."""
    if leaf._grad_fn is not None or not leaf._requires_grad:
        raise RuntimeError("grad_accumulator: the tensor is not a leaf that requires grad")
    return accumulator_of(leaf)


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
