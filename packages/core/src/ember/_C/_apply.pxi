# Included by _core.pyx (one compiled module): applying an op: apply, apply_view, apply_inplace, the
# device check, in-place ops on views (CopySlices).

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


def apply_unannounced(op_cls, *args):
    """``apply`` without telling the dispatch listener: for a node recorded inside an op
    that was announced already (autograd.Function.apply records its outputs' node inside
    its own dispatch; announcing ``<Name>Backward`` again would list it as a second op)."""
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
            # NOTE [ In-place ops write in place ]: an op that can write its result into
            # self's array says so (forward_into returns True), with no result array and
            # no copy back; otherwise the result is computed and copied in
            into = getattr(op_cls, "forward_into", None)
            if into is not None and into(node, *arrays):
                bump_version(self)
                return self
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
